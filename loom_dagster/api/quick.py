"""The `loom` commands that answer without Dagster: what they need and nothing more.

A command that has nothing to run should not pay for Dagster, httpx, pyarrow, the search
index and the embedder (about 1.5 s of imports) before it knows so. Here:

- `unchanged_ingest`: `loom ingest` of a folder where nothing changed since the last complete
  ingest, decided from the catalog (DuckDB), a scan of the folder and a small record the last
  complete ingest left (`$LOOM_HOME/ingest-state.json`); anything else (a new, changed or
  deleted file, a pending revision, an index or vector index that moved since, a revision
  retention would now prune, a registration that would change) is left to the full ingest
  (api.ingest_folder), which does everything it always did.
- `sources` (`loom sources list`) and `formats` (`loom formats`): the catalog alone, and the
  extractor client alone.

What the unchanged path does not do that the full one does: end the runs a killed ingest left
STARTED (runs.reap_dead_runs needs Dagster's instance). It need not: the full ingest removes
the record when it starts and writes it only when it completes, so after a killed ingest the
next one is a full ingest, which ends them.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from operator import attrgetter
from pathlib import Path
from typing import TYPE_CHECKING

from loom_dagster.errors import ExtractorUnavailable, SourceError
from loom_dagster.settings import LoomSettings

if TYPE_CHECKING:
    import duckdb

    from loom_dagster.api.reports import IngestReport
    from loom_dagster.catalog import SourceSummary
    from loom_dagster.sources import OptionRule

# Each command imports what it uses inside its function: `loom formats` reads no catalog, so
# DuckDB is not loaded for it.

Progress = Callable[[str], None]
STATE = "ingest-state.json"


def _stat(path: Path) -> list[int] | None:
    try:
        found = os.stat(path)
    except FileNotFoundError:
        return None
    return [found.st_dev, found.st_ino, found.st_size, found.st_mtime_ns]


def _digest(value: object) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True).encode()).hexdigest()


def state_of(
    settings: LoomSettings, con: duckdb.DuckDBPyConnection, pruned: Sequence[str]
) -> dict[str, object]:
    """What the next ingest compares to know that nothing outside a folder's scan moved: the
    live documents (a publish, retirement or tag change elsewhere), the partitions retention
    prunes, and the search and vector indexes' own files (a commit, a folder removed, another
    embedder)."""
    from loom_dagster import catalog
    from loom_dagster.search.vector_files import MANIFEST as VECTOR_MANIFEST

    return {
        "live": catalog.live_digest(con),
        "pruned": _digest(sorted(pruned)),
        "index": _stat(settings.search_dir / "meta.json"),
        "vectors": _stat(settings.vectors_dir / VECTOR_MANIFEST),
        "embedder": repr(settings.embedder),
        "store": settings.object_store_url,
    }


def pruned_now(settings: LoomSettings, con: duckdb.DuckDBPyConnection) -> tuple[str, ...]:
    from loom_dagster import lifecycle

    return lifecycle.pruned_revisions(con, settings.retention)


def remember(settings: LoomSettings, con: duckdb.DuckDBPyConnection, pruned: Sequence[str]) -> None:
    """Record, at the end of a complete ingest, the state it left (`pruned`: the keys whose
    partitions it pruned, or found pruned). Written whole (a rename), or not at all."""
    path = settings.home / STATE
    partial = path.with_name(f".{STATE}.{os.getpid()}")
    partial.write_text(json.dumps(state_of(settings, con, pruned), sort_keys=True))
    os.replace(partial, path)


def forget(settings: LoomSettings) -> None:
    """The next ingest takes the full path (the record is gone)."""
    (settings.home / STATE).unlink(missing_ok=True)


def unchanged_ingest(
    settings: LoomSettings,
    folder: Path,
    *,
    name: str | None = None,
    include: Sequence[str] = ("**/*",),
    options: Sequence[OptionRule] | None = None,
    tags: Sequence[str] | None = None,
    reprocess_stale: bool = False,
    progress: Progress = lambda _: None,
) -> IngestReport | None:
    """The report of `loom ingest FOLDER` when it has nothing to do, or None: then the full
    ingest (api.ingest_folder) must run. Writes only the source's last scan time."""
    import duckdb

    from loom_dagster import catalog, runs
    from loom_dagster.api.reports import FileOutcome, IngestReport
    from loom_dagster.sources import check_option, scan, validate_source_name, validate_tag

    if reprocess_stale or not folder.is_dir():
        return None  # the full path says why a folder is missing, in its own words
    from loom_dagster.catalog import catalog_url

    if catalog_url() is not None:
        return None  # a shared catalog: the full path, which opens it (this reads the file)
    try:
        recorded = json.loads((settings.home / STATE).read_text())
    except (OSError, ValueError):
        return None
    root = str(folder.resolve())
    # The registration's own checks, so a mistake is the same error on either path.
    given = None if options is None else tuple(check_option(rule) for rule in options)
    given_tags = None if tags is None else tuple(dict.fromkeys(validate_tag(t) for t in tags))
    if name is not None:
        validate_source_name(name)
    settings.prepare()
    with runs.stopped_by_signals(), runs.ingest_lock(settings.home, folder, progress):
        try:
            con = duckdb.connect(str(settings.catalog_path))
        except duckdb.IOException:
            return None  # held by another process: the full path waits for it
        try:
            catalog.ensure_schema(con)
            source = catalog.source_at(con, root)
            if (
                source is None
                or (name is not None and name != source.name)
                or source.include != tuple(include)
                or (given is not None and given != source.options)
                or (given_tags is not None and given_tags != source.tags)
                or state_of(settings, con, pruned_now(settings, con)) != recorded
                or catalog.unindexed(con)
                or catalog.pending_revisions(con, source.name)
            ):
                return None
            try:
                found = scan(
                    source,
                    catalog.known_files_in(con, source.name),
                    max_bytes=settings.limits.max_bytes,
                )
            except SourceError:  # the full path says it, in its one line
                return None
            if found.new or found.moved or found.deleted:
                return None
            catalog.mark_synced(con, source.name)
        finally:
            con.close()
    report = IngestReport(source.name)
    report.outcomes.extend(FileOutcome("unchanged", path) for path in found.unchanged)
    report.outcomes.extend(
        FileOutcome("refused", r.path, None, f"{r.code}: {r.message}") for r in found.refused
    )
    report.outcomes.extend(
        FileOutcome("skipped", s.path, None, f"{s.code}: {s.message}") for s in found.skipped
    )
    report.outcomes.sort(key=attrgetter("path"))
    progress(f"{source.name}: 0 to process, {len(found.unchanged)} unchanged, 0 deleted")
    return report


def sources(settings: LoomSettings | None = None) -> list[SourceSummary]:
    """Every registered source with its options, last scan and document counts."""
    from loom_dagster import catalog

    settings = settings or LoomSettings.from_env()
    settings.prepare()
    with catalog.connect(settings.catalog_path) as con:
        return catalog.source_summaries(con)


@dataclass(frozen=True)
class FormatsAnswer:
    """Each format's availability, and each configured extractor that could not be read."""

    states: dict[str, str]  # format -> available, unavailable or unknown
    unreadable: list[ExtractorUnavailable] = field(default_factory=list)

    @property
    def known(self) -> bool:
        """Whether any format's state was learnt (not every service was unreadable)."""
        return any(state != "unknown" for state in self.states.values())


def formats(loom: LoomSettings | None = None) -> FormatsAnswer:
    """Each format's availability, with the extractor settings read once (`loom` given by the
    command, or read here)."""
    from loom_dagster.extractor.client import ExtractorClient, configured_or_local

    configured = (loom or LoomSettings.from_env()).extractor
    with configured_or_local(configured) as settings, ExtractorClient(settings) as client:
        states = client.available_formats()
        # With no media type given, a format goes to exactly one service (url_for), so an
        # unknown format names the service that could not be read.
        unknown = {settings.url_for(fmt) for fmt, state in states.items() if state == "unknown"}
    return FormatsAnswer(
        states,
        [
            ExtractorUnavailable(
                f"the extractor at {url} cannot be read: it is unreachable, refused the token,"
                " or did not answer GET /v1/capabilities as contract v1"
            )
            for url in sorted(url for url in unknown if url is not None)
        ],
    )
