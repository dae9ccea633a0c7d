"""What is published: the fused search over the chunks, and every revision of one file
(`show`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import duckdb

from loom_dagster import catalog
from loom_dagster.display import one_line, printable
from loom_dagster.errors import SourceError
from loom_dagster.objectstore import ObjectStore
from loom_dagster.pipeline import parsers
from loom_dagster.resources.storage import CatalogResource
from loom_dagster.search.legs import Leg
from loom_dagster.search.service import (
    SearchHit,
    default_legs,
    make_filter,
    open_index,
    open_vector_leg,
)
from loom_dagster.search.service import search as search_chunks
from loom_dagster.settings import LoomSettings


@dataclass(frozen=True)
class FileHistory:
    source: str
    path: str
    revisions: list[catalog.RevisionHistory]
    # Revisions whose parser is not the one the last run saw declared for their format.
    stale: dict[str, parsers.Staleness] = field(default_factory=dict)


def show(target: str) -> FileHistory:
    """Every revision of one file: `SOURCE:RELPATH`, or a path inside a registered folder."""
    settings = LoomSettings.from_env()
    settings.prepare()
    with CatalogResource(database=str(settings.catalog_path)).connect() as con:
        source, path = _locate(con, target)
        history = catalog.file_history(con, source, path)
    if not history:
        raise SourceError(
            f"{printable(source)}:{printable(path)} has no registered revision", code="unknown_file"
        )
    stale = parsers.stale_revisions(
        ObjectStore(settings.object_store_url),
        [entry.revision.key for entry in history if entry.status in ("live", catalog.SUPERSEDED)],
        parsers.read_declared(settings.home),
    )
    return FileHistory(source, path, history, stale)


def _locate(con: duckdb.DuckDBPyConnection, target: str) -> tuple[str, str]:
    prefix, colon, rest = target.partition(":")
    if colon and rest and catalog.get_source(con, prefix) is not None:
        return prefix, rest
    absolute = Path(target).absolute()
    # Resolve the folder, not the file: the file may be gone, or a symlink loom never follows.
    folder = absolute.parent.resolve()
    holding = [
        source
        for source in catalog.list_sources(con)
        if folder == Path(source.root) or Path(source.root) in folder.parents
    ]
    if holding:  # folders may nest: the innermost one holds the file
        source = max(holding, key=lambda s: len(s.root))
        return source.name, (folder / absolute.name).relative_to(source.root).as_posix()
    raise SourceError(
        f"{one_line(target)} is in no registered folder and names no SOURCE:PATH",
        code="unknown_file",
    )


def search(
    text: str,
    *,
    limit: int = 10,
    formats: Sequence[str] = (),
    sources: Sequence[str] = (),
    block_types: Sequence[str] = (),
    tags: Sequence[str] = (),
    path_prefix: str = "",
    legs: Sequence[Leg] | None = None,
) -> list[SearchHit]:
    """The fused search (exact keys and BM25, or the `legs` given) over the published chunks,
    filtered inside every leg; a bad request raises service.BadSearch."""
    search_filter = make_filter(
        formats=formats,
        sources=sources,
        block_types=block_types,
        tags=tags,
        path_prefix=path_prefix,
    )
    index = open_index()
    if legs is None:
        legs = default_legs(index, open_vector_leg(index))
    return search_chunks(index, text, search_filter, limit=limit, legs=legs)
