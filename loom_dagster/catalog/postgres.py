"""The catalog's tables in PostgreSQL, for several workers publishing at once (issue 18).

`LOOM_CATALOG_URL=postgresql://...` selects it; unset, the catalog is the embedded DuckDB file.
The catalog's functions (loom_dagster.catalog) are written once, in DuckDB's spelling of SQL;
`PostgresCatalog` is the small adapter that runs them on PostgreSQL: `?` placeholders, `INSERT OR
REPLACE` as `ON CONFLICT ... DO UPDATE`, empty arrays typed, the schema applied once under a lock,
row-level serialisation of a document's writers (advisory locks), and errors typed.

A catalog shared by several LOOM_HOMEs still has one search index per home: the index marks are
keyed by `index_id`, a random id kept in the home (see catalog.ensure_schema and `index_id_of`).
"""

from __future__ import annotations

import hashlib
import os
import re
import secrets
from collections.abc import Sequence
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import psycopg2
import psycopg2.errorcodes
import psycopg2.extensions

from loom_dagster.catalog.errors import CatalogError, CatalogRefused, CatalogUnavailable
from loom_dagster.display import one_line
from loom_dagster.errors import LoomError

ENV_CATALOG_URL = "LOOM_CATALOG_URL"

# The unique key of each table the catalog writes with INSERT OR REPLACE.
_KEYS = {"outcomes": ("revision",), "datasets": ("dataset_id", "revision")}
# Advisory locks of the catalog live in their own class (the first key), away from any other
# user of the server (Dagster's storage shares it).
LOCK_CLASS = 0x6C6F6F6D  # "loom"

# SQLSTATE classes that say "not now": the server is going away, starting, or out of resources.
_UNAVAILABLE_STATES = {"08", "53", "57"}
# Refused logins: wrong password, unknown role or database, no pg_hba entry. Never retried.
_REFUSED_STATES = {"28000", "28P01", "3D000"}


def catalog_url(environ: os._Environ[str] | dict[str, str] | None = None) -> str | None:
    """The PostgreSQL catalog's URL, or None for the embedded DuckDB file."""
    value = (os.environ if environ is None else environ).get(ENV_CATALOG_URL, "").strip()
    return value or None


def _dsn(url: str) -> str:
    # SQLAlchemy's spelling (the one LOOM_DAGSTER_POSTGRES_URL uses) is accepted too.
    return re.sub(r"^postgresql\+psycopg2://", "postgresql://", url)


def _redacted(url: str) -> str:
    """The URL without its password (in the authority or as a parameter), for a message."""
    url = re.sub(r"(://[^:/@]*):[^@/]*@", r"\1:***@", url)
    return re.sub(r"(?i)([?&]password=)[^&]*", r"\1***", url)


def secrets_of(url: str) -> list[str]:
    """Every spelling of the passwords a URL may hold, however malformed it is: what follows
    the user's `:` up to the authority's last `@`, and each `password=` parameter, as written
    and percent-decoded, and their pieces between delimiters; the longest first."""
    found: set[str] = set()
    rest = url.split("://", 1)[1] if "://" in url else url
    if "@" in rest:
        userinfo = rest.rsplit("@", 1)[0]
        if ":" in userinfo:
            found.add(userinfo.split(":", 1)[1])
    found.update(re.findall(r"(?i)password\s*=\s*'([^']*)'", url))
    found.update(re.findall(r"(?i)password\s*=\s*([^&\s']*)", url))
    found |= {unquote(secret) for secret in found}
    # A malformed URL is cut by the driver where it sees a delimiter: "u:se/cret@h" is read
    # as host "u", port "se"; each piece of a password is a secret too.
    found |= {piece for secret in found for piece in re.split(r"[/?#@:&=\[\]\s]", secret)}
    return sorted((secret for secret in found if secret), key=len, reverse=True)


def scrubbed(text: str, url: str) -> str:
    """`text` (a message quoting the URL, or a driver's error quoting part of it) with every
    password of `url` masked: no message shows a secret, however the URL is malformed."""
    text = text.replace(url, _redacted(url))
    for secret in secrets_of(url):
        text = text.replace(secret, "***")
    return text


def unreachable(url: str, *, timeout_s: int = 5) -> str | None:
    """Why a PostgreSQL database cannot be opened at `url` (one line, its passwords masked),
    or None when it can: asked before Dagster opens its instance there, which retries for
    seconds and then fails in pages of tracebacks."""
    try:
        psycopg2.connect(_dsn(url), connect_timeout=timeout_s).close()
    except psycopg2.Error as error:
        return one_line(scrubbed(str(error).strip() or type(error).__name__, url), 300)
    return None


def translated(error: psycopg2.Error, url: str) -> LoomError:
    """A driver error as the typed error a caller acts on: retry, fix a setting, or a bug."""
    state = error.pgcode or ""
    text = one_line(scrubbed(str(error).strip() or type(error).__name__, url), 300)
    where = scrubbed(_redacted(url), url)
    if state in _REFUSED_STATES or (
        not state and ("authentication failed" in text or "does not exist" in text)
    ):
        return CatalogRefused(f"the catalog at {where} refused the login: {text}")
    if isinstance(error, psycopg2.OperationalError | psycopg2.InterfaceError) or (
        state[:2] in _UNAVAILABLE_STATES
    ):
        return CatalogUnavailable(f"the catalog at {where} is unavailable: {text}")
    if state in (psycopg2.errorcodes.SERIALIZATION_FAILURE, psycopg2.errorcodes.DEADLOCK_DETECTED):
        return CatalogUnavailable(f"the catalog's transaction lost a race, try again: {text}")
    return CatalogError(f"the catalog at {where} failed: {text}", code="catalog")


def index_id_of(home: Path) -> str:
    """The id of the search index kept in `home` (made once, then read): which documents this
    home's index holds is its own state, not the shared catalog's."""
    path = home / "catalog-index-id"
    try:
        return path.read_text().strip()
    except FileNotFoundError:
        pass
    made = path.with_name(f".{path.name}.{secrets.token_hex(4)}")
    made.write_text(secrets.token_hex(16))
    try:
        os.link(made, path)  # the first of two racing processes wins; the other reads its id
    except FileExistsError:
        pass
    finally:
        made.unlink()
    return path.read_text().strip()


def _upsert(sql: str) -> str:
    """`INSERT OR REPLACE INTO t (cols) ...` as PostgreSQL's `INSERT ... ON CONFLICT DO UPDATE`."""
    match = re.match(r"\s*INSERT OR REPLACE INTO (\w+) \(([^)]*)\)", sql)
    if match is None:
        return sql
    table, columns = match.group(1), [c.strip() for c in match.group(2).split(",")]
    keys = _KEYS[table]
    updates = ", ".join(f"{c} = excluded.{c}" for c in columns if c not in keys)
    body = "INSERT INTO" + sql[match.start(1) - 1 :]
    return f"{body} ON CONFLICT ({', '.join(keys)}) DO UPDATE SET {updates}"


def _placeholders(sql: str) -> str:
    """DuckDB's `?` as psycopg2's `%s` (a literal `%` doubled), outside quoted text."""
    out: list[str] = []
    quote: str | None = None
    for char in sql:
        if quote:
            out.append("%%" if char == "%" else char)
            if char == quote:
                quote = None
        elif char in "'\"":
            quote = char
            out.append(char)
        elif char == "?":
            out.append("%s")
        elif char == "%":
            out.append("%%")
        else:
            out.append(char)
    return "".join(out)


_EMPTY_ARRAY = psycopg2.extensions.AsIs("'{}'::text[]")


def _parameter(value: object) -> object:
    # psycopg2 sends [] as an untyped '{}', which unnest() cannot resolve.
    return _EMPTY_ARRAY if isinstance(value, list | tuple) and not value else value


class PostgresCatalog:
    """A PostgreSQL connection that runs the catalog's DuckDB-spelled SQL (see the module).

    Autocommit, as DuckDB: each statement commits unless a `BEGIN TRANSACTION` opened one.
    """

    def __init__(self, url: str, *, index_id: str) -> None:
        self.url = url
        self.index_id = index_id
        try:
            self._raw = psycopg2.connect(_dsn(url), connect_timeout=10)
        except psycopg2.Error as error:
            raise translated(error, url) from None
        self._raw.autocommit = True
        self._cursor = self._raw.cursor()

    @property
    def in_transaction(self) -> bool:
        status = self._raw.info.transaction_status
        return bool(status != psycopg2.extensions.TRANSACTION_STATUS_IDLE)

    def execute(self, sql: str, parameters: Sequence[object] | None = None) -> PostgresCatalog:
        try:
            if parameters is None:  # no placeholders: the text goes as written
                self._cursor.execute(_upsert(sql))
            else:
                self._cursor.execute(
                    _placeholders(_upsert(sql)), [_parameter(p) for p in parameters]
                )
        except psycopg2.Error as error:
            raise translated(error, self.url) from None
        return self

    def fetchall(self) -> list[tuple[Any, ...]]:
        return list(self._cursor.fetchall()) if self._cursor.description else []

    def fetchone(self) -> tuple[Any, ...] | None:
        return self._cursor.fetchone() if self._cursor.description else None

    def lock(self, keys: Sequence[str]) -> None:
        """Hold a lock on each key until the transaction ends, taken in sorted order so two
        transactions locking overlapping sets never deadlock."""
        if keys:
            self.execute(
                "SELECT count(pg_advisory_xact_lock(?, hashtext(k))) FROM "
                "(SELECT DISTINCT k FROM unnest(?::text[]) k ORDER BY k) ordered",
                [LOCK_CLASS, sorted(set(keys))],
            )

    def apply_schema(self, schema: str) -> None:
        """Apply `schema` once per text of it (its digest is kept), one process at a time: its
        ALTERs take table locks that every running publish would otherwise queue behind, and
        two workers meeting an empty database would race to create the same tables."""
        version = hashlib.sha256(schema.encode()).hexdigest()[:16]
        if self.execute("SELECT to_regclass('loom_catalog_schema')").fetchone() != (None,):
            if self.execute("SELECT version FROM loom_catalog_schema").fetchone() == (version,):
                return
        self.execute("BEGIN TRANSACTION")
        try:
            self.execute("SELECT pg_advisory_xact_lock(?, 0)", [LOCK_CLASS])
            self.execute("CREATE TABLE IF NOT EXISTS loom_catalog_schema (version VARCHAR)")
            found = self.execute("SELECT version FROM loom_catalog_schema").fetchone()
            if found != (version,):  # another process may have applied it while this waited
                self.execute(schema)
                self.execute("DELETE FROM loom_catalog_schema")
                self.execute("INSERT INTO loom_catalog_schema VALUES (?)", [version])
        except BaseException:
            self.execute("ROLLBACK")
            raise
        self.execute("COMMIT")

    def close(self) -> None:
        self._raw.close()
