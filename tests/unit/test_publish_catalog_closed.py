"""Publishing holds the catalog only for its statements (issue 39): the store's reads, the
datasets' typing and snapshots, and the index writes happen with the catalog closed, and what
may change in the catalog meanwhile is checked when it is opened again. A real DuckDB file,
tantivy index and store folder, no Dagster."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import asdict
from pathlib import Path

import duckdb
import pytest

from loom_dagster import catalog, pipeline
from loom_dagster.contract.artifact import Artifact, Column, Coverage, Table
from loom_dagster.datasets.catalog import referenced_snapshots, served_at
from loom_dagster.datasets.model import ColumnType, DatasetState
from loom_dagster.objectstore import ObjectStore
from loom_dagster.pipeline.approve import approve
from loom_dagster.search.lexical import IndexedChunk, LexicalIndex
from loom_dagster.sources import Revision, Source, document_id, revision_key
from tests.unit.test_catalog import chunk


class Catalog:
    """Opens the real catalog file for each use, and says whether it is open now."""

    def __init__(self, path: Path) -> None:
        self.path, self.open, self.openings = path, False, 0
        self.on_open: dict[int, object] = {}  # opening number -> a callable run before it

    @contextmanager
    def __call__(self) -> Iterator[duckdb.DuckDBPyConnection]:
        self.openings += 1
        act = self.on_open.get(self.openings)
        if callable(act):
            act()
        with catalog.connect(self.path) as con:
            self.open = True
            try:
                yield con
            finally:
                self.open = False


class WatchedStore(ObjectStore):
    """The store, noting each call and whether the catalog was open during it."""

    def __init__(self, url: str, catalog_db: Catalog) -> None:
        super().__init__(url)
        self.catalog_db = catalog_db
        self.calls: list[tuple[str, str, bool]] = []

    @contextmanager
    def _calling(self, action: str, relative: str) -> Iterator[None]:
        self.calls.append((action, relative, self.catalog_db.open))
        with super()._calling(action, relative):
            yield


class WatchedIndex(LexicalIndex):
    """The lexical index, noting whether the catalog was open for each batch written, and
    running `before` first (what another process does meanwhile)."""

    def __init__(self, directory: Path, catalog_db: Catalog) -> None:
        super().__init__(directory)
        self.catalog_db = catalog_db
        self.writes: list[bool] = []
        self.before: list[object] = []

    def publish_many(self, documents: Mapping[str, Sequence[IndexedChunk]]) -> None:
        while self.before:
            act = self.before.pop(0)
            assert callable(act)
            act()
        self.writes.append(self.catalog_db.open)
        super().publish_many(documents)


@pytest.fixture
def catalog_db(tmp_path: Path) -> Catalog:
    """The catalog file, with the source `docs` registered (its folder is `folder`)."""
    opener = Catalog(tmp_path / "catalog.duckdb")
    (tmp_path / "docs").mkdir()
    with catalog.connect(opener.path) as con:
        catalog.upsert_source(con, Source("docs", str(tmp_path / "docs")))
    return opener


@pytest.fixture
def folder(catalog_db: Catalog) -> Path:
    return catalog_db.path.parent / "docs"


@pytest.fixture
def store(tmp_path: Path, catalog_db: Catalog) -> WatchedStore:
    return WatchedStore((tmp_path / "store").as_uri(), catalog_db)


@pytest.fixture
def index(tmp_path: Path, catalog_db: Catalog) -> WatchedIndex:
    return WatchedIndex(tmp_path / "search", catalog_db)


def extracted(
    catalog_db: Catalog,
    store: ObjectStore,
    folder: Path,
    path: str,
    text: str,
    tables: Sequence[Table] = (),
) -> Revision:
    """A file registered, extracted (its artifact holding `tables`) and chunked, as a run leaves
    it before its publishing."""
    data = text.encode()
    (folder / path).write_bytes(data)
    sha = store.put_original(data)
    rev = Revision(
        revision_key("docs", path, sha), document_id("docs", path), "docs", path, len(data), 1, sha
    )
    with catalog_db() as con:
        catalog.register_revisions(con, [rev])
    fmt = "csv" if tables else "markdown"
    artifact = Artifact(1, fmt, "p", "1", {}, {}, (), Coverage("rows", 1, 1), (), tuple(tables))
    sha256 = store.put_artifact(artifact.canonical_bytes())
    record = pipeline.Extraction(rev.key, "extracted", artifact_sha256=sha256, format=fmt)
    store.put_json(store.revision_key(rev.key, pipeline.EXTRACTION), asdict(record))
    store.put(
        store.revision_key(rev.key, pipeline.CHUNKS),
        pipeline.chunks_to_parquet([chunk(rev, text)]),
    )
    return rev


def prices(*rows: tuple[str, str]) -> Table:
    return Table("t0", "prices", (Column("item", "string"), Column("code", "number")), rows)


def test_the_store_and_the_index_are_read_and_written_only_with_the_catalog_closed(
    catalog_db: Catalog, store: WatchedStore, index: WatchedIndex, folder: Path
) -> None:
    notes = extracted(catalog_db, store, folder, "notes.md", "ferry timetable capstan")
    sheet = extracted(
        catalog_db, store, folder, "prices.csv", "prices gunwale", [prices(("rope", "12"))]
    )
    store.calls.clear()
    catalog_db.openings = 0

    outcomes = pipeline.publish(catalog_db, index, store, [notes, sheet])

    assert [o.status for o in outcomes] == [catalog.PUBLISHED, catalog.PUBLISHED]
    snapshots = [call for call in store.calls if call[0] == "write"]
    assert snapshots, "the table was typed and its snapshot written"
    assert [call for call in store.calls if call[2]] == []
    assert index.writes == [False]
    # Three short openings: the reads, the switch, the mark.
    assert catalog_db.openings == 3
    with catalog_db() as con:
        [dataset] = served_at(con, "docs", "prices.csv").values()
        assert dataset.revision == sheet.key and dataset.rows_stored == 1
        assert catalog.unindexed(con) == []
    assert [hit.chunk.revision for hit in index.search("gunwale")] == [sheet.key]


def test_a_file_retired_between_the_switch_and_the_index_write_is_not_left_searchable(
    catalog_db: Catalog, store: WatchedStore, index: WatchedIndex, folder: Path, tmp_path: Path
) -> None:
    rev = extracted(catalog_db, store, folder, "ferry.md", "ferry timetable capstan")

    def a_scan_retires_it() -> None:  # the folder sensor's tick, while the catalog is free
        with catalog_db() as con:
            pipeline.retire(con, LexicalIndex(tmp_path / "search"), "docs", ["ferry.md"])

    index.before.append(a_scan_retires_it)
    [outcome] = pipeline.publish(catalog_db, index, store, [rev])

    assert outcome.status == catalog.PUBLISHED  # the switch came first
    assert index.search("capstan") == []
    with catalog_db() as con:
        [state] = catalog.document_states(con, [rev.document_id])
        assert (state.document_status, state.live_revision) == ("retired", None)
        assert catalog.unindexed(con) == []


def test_types_approved_while_a_revision_was_typed_carry_over_to_it(
    catalog_db: Catalog, store: WatchedStore, index: WatchedIndex, folder: Path
) -> None:
    first = extracted(catalog_db, store, folder, "prices.csv", "v1", [prices(("rope", "12"))])
    pipeline.publish(catalog_db, index, store, [first])
    second = extracted(catalog_db, store, folder, "prices.csv", "v2", [prices(("oar", "7"))])
    with catalog_db() as con:
        [served] = served_at(con, "docs", "prices.csv")
        assert served_at(con, "docs", "prices.csv")[served].state is DatasetState.INFERRED

    def someone_approves_code_as_text() -> None:  # `loom datasets approve`, meanwhile
        with catalog_db() as con:
            approve(con, store, served, {"code": "text"})

    catalog_db.openings = 0
    catalog_db.on_open[2] = someone_approves_code_as_text  # after the typing, before the switch
    [outcome] = pipeline.publish(catalog_db, index, store, [second])

    assert outcome.status == catalog.PUBLISHED
    with catalog_db() as con:
        [dataset] = served_at(con, "docs", "prices.csv").values()
        referenced = referenced_snapshots(con)
    assert dataset.revision == second.key
    assert dataset.state is DatasetState.APPROVED
    assert dataset.schema.column("code").type is ColumnType.TEXT  # type: ignore[union-attr]
    # The snapshot typed before the approval is gone; the one served is there.
    written = {key for action, key, _ in store.calls if action == "write" and key in referenced}
    assert dataset.snapshot_key in written
    assert store.exists(dataset.snapshot_key)
    orphans = [
        key
        for action, key, _ in store.calls
        if action == "write" and key.startswith("datasets/") and key not in referenced
    ]
    assert orphans and not any(store.exists(key) for key in orphans)


def test_served_at_is_what_the_files_document_serves_by_id(
    catalog_db: Catalog, store: WatchedStore, index: WatchedIndex, folder: Path
) -> None:
    sheet = extracted(catalog_db, store, folder, "a.csv", "a", [prices(("rope", "12"))])
    other = extracted(catalog_db, store, folder, "b.csv", "b", [prices(("oar", "7"))])
    pending = extracted(catalog_db, store, folder, "c.csv", "c", [prices(("pin", "1"))])
    pipeline.publish(catalog_db, index, store, [sheet, other])

    with catalog_db() as con:
        served = served_at(con, "docs", "a.csv")
        assert [d.revision for d in served.values()] == [sheet.key]
        assert list(served) == [d.dataset_id for d in served.values()]
        assert served_at(con, "docs", pending.path) == {}
        assert served_at(con, "elsewhere", "a.csv") == {}


def test_mark_written_marks_what_the_index_holds_and_names_what_moved_on(
    catalog_db: Catalog, store: WatchedStore, index: WatchedIndex, folder: Path
) -> None:
    kept = extracted(catalog_db, store, folder, "kept.md", "kept")
    gone = extracted(catalog_db, store, folder, "gone.md", "gone")
    pipeline.publish(catalog_db, index, store, [kept, gone])
    with catalog_db() as con:
        pipeline.retire(con, index, "docs", ["gone.md"])

        moved = catalog.mark_written(con, {kept.document_id: kept.key, gone.document_id: gone.key})

        assert moved == [gone.document_id]
        assert catalog.unindexed(con) == [(gone.document_id, None)]  # for reconcile to repair


def test_atomic_inside_a_transaction_joins_it(catalog_db: Catalog) -> None:
    with catalog_db() as con:
        con.execute("CREATE TABLE t (x INTEGER)")
        with catalog.transaction(con):
            con.execute("INSERT INTO t VALUES (1)")
            with catalog.atomic(con):
                con.execute("INSERT INTO t VALUES (2)")
        assert con.execute("SELECT count(*) FROM t").fetchone() == (2,)
        with pytest.raises(RuntimeError), catalog.transaction(con):
            with catalog.atomic(con):
                con.execute("INSERT INTO t VALUES (3)")
            raise RuntimeError("rolled back, the inner block too")
        assert con.execute("SELECT count(*) FROM t").fetchone() == (2,)


def test_a_revisions_artifact_is_parsed_once_for_its_chunks_and_its_datasets(
    catalog_db: Catalog,
    store: WatchedStore,
    index: WatchedIndex,
    folder: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The publishing step cuts the chunks and types the tables of one artifact: parsing a large
    one is seconds with the catalog's publishing slot held, so it is parsed once."""
    from loom_dagster.contract import validate
    from loom_dagster.pipeline import publishing, records

    sheet = extracted(
        catalog_db, store, folder, "prices.csv", "prices gunwale", [prices(("rope", "12"))]
    )
    parsed: list[int] = []

    def counted(raw: bytes, **named: object) -> Artifact:
        parsed.append(len(raw))
        return validate.parse_artifact(raw, **named)  # type: ignore[arg-type]

    for module in (records, publishing):
        monkeypatch.setattr(module, "parse_artifact", counted, raising=False)
    extraction = pipeline.read_extraction(store, sheet.key)
    assert extraction is not None

    pipeline.make_chunks(store, extraction, sheet)
    [outcome] = pipeline.publish(catalog_db, index, store, [sheet])

    assert outcome.status == catalog.PUBLISHED
    with catalog_db() as con:
        assert served_at(con, "docs", "prices.csv")
    assert len(parsed) == 1
