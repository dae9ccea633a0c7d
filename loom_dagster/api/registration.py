"""Registering a folder as a source (found by its resolved root, named, tagged, or moved
with `replace`), and listing the registered sources."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import duckdb

from loom_dagster import catalog, pipeline
from loom_dagster.api import quick
from loom_dagster.display import printable
from loom_dagster.errors import SourceError
from loom_dagster.objectstore import ObjectStore
from loom_dagster.resources.storage import CatalogResource
from loom_dagster.search.lexical import LexicalIndex
from loom_dagster.search.vector import open_vectors
from loom_dagster.settings import LoomSettings
from loom_dagster.sources import (
    OptionRule,
    Source,
    check_option,
    source_name_for,
    validate_source_name,
    validate_tag,
)


@dataclass(frozen=True)
class Registration:
    source: Source
    created: bool
    moved_from: str | None = None  # the root a `replace` took the name from
    retired: int = 0  # documents of that root retired by the move

    def describe(self) -> str:
        where = printable(self.source.root)
        if self.moved_from is not None:
            return (
                f"source {self.source.name} moved from {printable(self.moved_from)} to {where}: "
                f"{self.retired} documents of the old folder retired"
            )
        return f"{'registered' if self.created else 'updated'} {self.source.name}: {where}"


def register(
    settings: LoomSettings,
    folder: Path,
    *,
    name: str | None = None,
    include: Sequence[str] = ("**/*",),
    options: Sequence[OptionRule] | None = None,
    replace: bool = False,
    tags: Sequence[str] | None = None,
) -> Registration:
    """Register `folder`, found by its resolved root first, so no folder replaces another.

    A root registered before keeps its source (its include globs updated, its options too
    unless `options` is None); a new root is named after its folder, made unique (`notes-2`) if another root has the name. An
    explicit `name` another root has is refused (`source_exists`), unless `replace`: then the
    name moves to this root and the documents of the old one are retired, and said to be.
    A root registered under another name than the one given is refused (`root_registered`).
    `tags` replace the source's tags (None keeps them); the chunks it has in search are
    re-tagged before this returns, so a `--tag` filter finds them at once.
    """
    if not folder.is_dir():
        raise SourceError(
            f"folder {printable(str(folder))} does not exist or is not a folder",
            code="missing_folder",
        )
    root = str(folder.resolve())
    given = None if options is None else tuple(check_option(rule) for rule in options)
    given_tags = None if tags is None else tuple(dict.fromkeys(validate_tag(t) for t in tags))
    if name is not None:
        validate_source_name(name)
    with CatalogResource(database=str(settings.catalog_path)).connect() as con:
        here = catalog.source_at(con, root)
        if here is not None and name is not None and here.name != name:
            raise SourceError(
                f"folder {printable(root)} is registered as source {here.name!r}; "
                f"use --name {here.name} (or none)",
                code="root_registered",
            )
        chosen = here.name if here is not None else name or _unique_name(con, root)
        taken = catalog.get_source(con, chosen)
        moved_from, retired = None, 0
        if taken is not None and taken.root != root:
            if not replace:
                raise SourceError(
                    f"source {chosen!r} is the folder {printable(taken.root)}; give another "
                    "--name, or --replace to move the name here and retire its documents",
                    code="source_exists",
                )
            moved_from = taken.root
            paths = catalog.live_document_paths(con, chosen)
            retired = len(
                pipeline.retire(
                    con,
                    LexicalIndex(settings.search_dir),
                    chosen,
                    paths,
                    vectors=open_vectors(settings),
                )
            )
        kept = here.options if here is not None else ()
        kept_tags = taken.tags if taken is not None else ()
        source = Source(
            chosen,
            root,
            tuple(include),
            kept if given is None else given,
            kept_tags if given_tags is None else given_tags,
        )
        catalog.upsert_source(con, source)
        if taken is not None and source.tags != taken.tags:
            catalog.unmark_indexed(con, chosen)
            pipeline.reconcile(
                con, LexicalIndex(settings.search_dir), ObjectStore(settings.object_store_url)
            )
    return Registration(source, taken is None, moved_from, retired)


def _unique_name(con: duckdb.DuckDBPyConnection, root: str) -> str:
    base = validate_source_name(source_name_for(Path(root)))
    candidate, number = base, 1
    while catalog.get_source(con, candidate) is not None:
        number += 1
        candidate = f"{base[:60]}-{number}"
    return candidate


def register_source(
    settings: LoomSettings,
    folder: Path,
    *,
    name: str | None = None,
    include: Sequence[str] = ("**/*",),
    options: Sequence[OptionRule] | None = None,
    replace: bool = False,
) -> Source:
    return register(
        settings, folder, name=name, include=include, options=options, replace=replace
    ).source


def sources() -> list[catalog.SourceSummary]:
    """Every registered source with its options, last scan and document counts."""
    return quick.sources()
