"""The token file and a caller's scope.

The file is JSON, mode 0600 (or stricter) and owned by the user running the server; it holds
no token, only each token's SHA-256 and the sources it may read:

    {"tokens": [{"name": "team-a", "sha256": "<64 hex>", "sources": ["handbook", "runbooks"]}]}

`"sources": "*"` reads every source. `loom serve token` makes a token, prints it once and adds
its hash. A presented token is hashed and compared with every entry in constant time; neither
a token nor its hash is ever logged.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
import stat
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from loom_dagster.display import one_line
from loom_dagster.errors import SettingsError

ALL = "*"
_HEX = frozenset("0123456789abcdef")


@dataclass(frozen=True)
class Scope:
    """What one caller may read: the sources named, or every source (`sources` None)."""

    name: str
    sources: frozenset[str] | None

    def allows(self, source: str) -> bool:
        return self.sources is None or source in self.sources


EVERYTHING = Scope("local", None)


@dataclass(frozen=True)
class _Entry:
    digest: bytes
    scope: Scope


class Tokens:
    """The token file's entries; `scope_of` answers a presented bearer token."""

    def __init__(self, entries: Sequence[_Entry]) -> None:
        self._entries = tuple(entries)

    def __len__(self) -> int:
        return len(self._entries)

    def scope_of(self, presented: str) -> Scope | None:
        digest = hashlib.sha256(presented.encode("utf-8", "surrogateescape")).digest()
        found: Scope | None = None
        for entry in self._entries:  # every entry compared, whichever matches
            if hmac.compare_digest(digest, entry.digest):
                found = entry.scope
        return found


def _refuse(path: Path, why: str) -> SettingsError:
    return SettingsError(f"the token file {one_line(str(path), 300)} {why}")


def load(path: Path) -> Tokens:
    """The token file, checked: a regular file of this user's, closed to everyone else, every
    entry well formed. Anything else refuses to start the server."""
    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_CLOEXEC | os.O_NOFOLLOW)
    except OSError as error:
        raise _refuse(path, f"cannot be opened: {error.strerror}") from None
    try:
        status = os.fstat(descriptor)
        if not stat.S_ISREG(status.st_mode):
            raise _refuse(path, "is not a regular file")
        if status.st_uid != os.geteuid():
            raise _refuse(path, "belongs to another user")
        if status.st_mode & 0o077:
            raise _refuse(path, f"is mode {stat.S_IMODE(status.st_mode):04o}: it must be 0600")
        with os.fdopen(os.dup(descriptor), "rb") as stream:
            raw = stream.read(1024 * 1024 + 1)
    finally:
        os.close(descriptor)
    if len(raw) > 1024 * 1024:
        raise _refuse(path, "is larger than 1 MiB")
    try:
        document = json.loads(raw)
    except ValueError:
        raise _refuse(path, "is not JSON") from None
    tokens = document.get("tokens") if isinstance(document, dict) else None
    if not isinstance(tokens, list):
        raise _refuse(path, 'has no "tokens" list')
    entries = [_entry(path, index, item) for index, item in enumerate(tokens)]
    names = [entry.scope.name for entry in entries]
    if len(set(names)) != len(names):
        raise _refuse(path, "names a token twice")
    return Tokens(entries)


def _entry(path: Path, index: int, item: object) -> _Entry:
    where = f"entry {index}"
    if not isinstance(item, dict) or set(item) - {"name", "sha256", "sources"}:
        raise _refuse(path, f'{where}: must be an object of "name", "sha256" and "sources"')
    name, digest, sources = item.get("name"), item.get("sha256"), item.get("sources")
    if not isinstance(name, str) or not name or len(name) > 200:
        raise _refuse(path, f"{where}: name must be a string of 1 to 200 characters")
    if not isinstance(digest, str) or len(digest) != 64 or not set(digest) <= _HEX:
        raise _refuse(path, f"{where}: sha256 must be 64 lowercase hex digits")
    if sources == ALL:
        allowed: frozenset[str] | None = None
    elif isinstance(sources, list) and sources and all(isinstance(s, str) and s for s in sources):
        allowed = frozenset(sources)
    else:
        raise _refuse(path, f'{where}: sources must be "*" or a non-empty list of source names')
    return _Entry(bytes.fromhex(digest), Scope(name, allowed))


def add_token(path: Path, name: str, sources: Iterable[str]) -> str:
    """A new token for `sources` (or ALL), its hash added to the file (made 0600 when absent);
    the token itself is returned once and stored nowhere."""
    wanted = list(sources)
    if not wanted:
        raise SettingsError("a token needs --source NAME (repeatable) or --all-sources")
    existing: list[object] = []
    if path.exists():
        load(path)  # refuses a file of another user, of a loose mode, or malformed
        existing = json.loads(path.read_bytes())["tokens"]
        if any(isinstance(item, dict) and item.get("name") == name for item in existing):
            raise SettingsError(f"the token file already names a token {one_line(name, 200)!r}")
    token = secrets.token_urlsafe(32)
    entry = {
        "name": name,
        "sha256": hashlib.sha256(token.encode()).hexdigest(),
        "sources": ALL if wanted == [ALL] else sorted(set(wanted)),
    }
    _entry(path, len(existing), entry)
    data = json.dumps({"tokens": [*existing, entry]}, indent=2).encode() + b"\n"
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
    try:
        os.write(descriptor, data)
        os.fsync(descriptor)
    finally:
        os.close(descriptor)
    os.replace(temporary, path)
    return token
