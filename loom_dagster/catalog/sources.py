"""The catalog's sources: a registered folder's name, root, include globs, option rules and tags,
written and read; what each holds (source_summaries) and where each is (source_root).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import duckdb

from loom_dagster.catalog.errors import CatalogError
from loom_dagster.catalog.schema import _clock
from loom_dagster.sources import OptionRule, Source

_SOURCE_COLUMNS = "name, root, include, options, tags"


def _source(row: Sequence[object]) -> Source:
    name, root, include, options, tags = row
    rules = tuple(OptionRule(*rule) for rule in json.loads(str(options or "[]")))
    return Source(
        str(name),
        str(root),
        tuple(json.loads(str(include))),
        rules,
        tuple(json.loads(str(tags or "[]"))),
    )


def upsert_source(con: duckdb.DuckDBPyConnection, source: Source) -> None:
    """Write the source under its name. Whether a name may take a root is the caller's rule
    (api.register_source): this only writes."""
    con.execute(
        "INSERT INTO sources (name, root, include, options, tags) VALUES (?, ?, ?, ?, ?) "
        "ON CONFLICT (name) DO UPDATE SET root = excluded.root, include = excluded.include, "
        "options = excluded.options, tags = excluded.tags",
        [
            source.name,
            source.root,
            json.dumps(list(source.include)),
            json.dumps([[r.glob, r.name, r.value] for r in source.options]),
            json.dumps(list(source.tags)),
        ],
    )


def list_sources(con: duckdb.DuckDBPyConnection) -> list[Source]:
    rows = con.execute(f"SELECT {_SOURCE_COLUMNS} FROM sources ORDER BY name").fetchall()
    return [_source(row) for row in rows]


def get_source(con: duckdb.DuckDBPyConnection, name: str) -> Source | None:
    row = con.execute(f"SELECT {_SOURCE_COLUMNS} FROM sources WHERE name = ?", [name]).fetchone()
    return None if row is None else _source(row)


def source_at(con: duckdb.DuckDBPyConnection, root: str) -> Source | None:
    """The source registered for this (resolved) root, if any."""
    row = con.execute(
        f"SELECT {_SOURCE_COLUMNS} FROM sources WHERE root = ? ORDER BY name LIMIT 1", [root]
    ).fetchone()
    return None if row is None else _source(row)


def mark_synced(con: duckdb.DuckDBPyConnection, name: str) -> None:
    con.execute("UPDATE sources SET last_sync = current_timestamp WHERE name = ?", [name])


@dataclass(frozen=True)
class SourceSummary:
    source: Source
    last_sync: str | None  # the catalog clock, to the second; None before a first scan
    live: int
    retired: int
    pending: int  # registered documents with no live revision yet, or refused


def source_summaries(con: duckdb.DuckDBPyConnection) -> list[SourceSummary]:
    rows = con.execute(
        f"""
        SELECT {_SOURCE_COLUMNS}, s.last_sync,
            (SELECT count(*) FROM documents d WHERE d.source = s.name AND d.status = 'live'),
            (SELECT count(*) FROM documents d WHERE d.source = s.name AND d.status = 'retired'),
            (SELECT count(DISTINCT r.document_id) FROM revisions r
             LEFT JOIN documents d ON d.document_id = r.document_id
             WHERE r.source = s.name AND d.document_id IS NULL)
        FROM sources s ORDER BY s.name
        """
    ).fetchall()
    return [
        SourceSummary(_source(row[:5]), _clock(row[5]), int(row[6]), int(row[7]), int(row[8]))
        for row in rows
    ]


def source_root(con: duckdb.DuckDBPyConnection, source: str) -> str:
    row = con.execute("SELECT root FROM sources WHERE name = ?", [source]).fetchone()
    if row is None:
        raise CatalogError(f"source {source} is not registered", code="unknown_source")
    return str(row[0])


def source_roots(con: duckdb.DuckDBPyConnection, sources: Iterable[str]) -> dict[str, str]:
    """The folder of each of `sources`, in one query; unknown_source for one not registered."""
    names = sorted(set(sources))
    if not names:
        return {}
    rows = con.execute(
        "SELECT name, root FROM sources WHERE name IN (SELECT unnest(?))", [names]
    ).fetchall()
    roots = {str(name): str(root) for name, root in rows}
    for name in names:
        if name not in roots:
            raise CatalogError(f"source {name} is not registered", code="unknown_source")
    return roots


def source_tags(
    con: duckdb.DuckDBPyConnection, sources: Iterable[str]
) -> dict[str, tuple[str, ...]]:
    """The tags of each of `sources` (a source not registered has none)."""
    names = sorted(set(sources))
    if not names:
        return {}
    rows = con.execute(
        "SELECT name, tags FROM sources WHERE name IN (SELECT unnest(?))", [names]
    ).fetchall()
    found = {str(name): tuple(json.loads(str(tags or "[]"))) for name, tags in rows}
    return {name: found.get(name, ()) for name in names}
