"""Issue 15 part 3: the catalog written and read a batch at a time, on a real DuckDB file.

A batch registers whole or not at all: a bad row in its middle, or the process killed between
its statements (held at the `registering` point, loom_dagster/hold.py, and killed there), leaves
the catalog as it was before the batch. Batched reads answer what one-by-one reads answered.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import duckdb
import pytest

from loom_dagster import catalog, hold
from loom_dagster.catalog import PostgresCatalog
from loom_dagster.chunking import Chunk
from loom_dagster.contract.artifact import Locator
from loom_dagster.sources import Revision, Source, document_id, revision_key
from tests.unit.catalog_backends import BACKENDS, open_catalog

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def path(tmp_path: Path) -> Path:
    return tmp_path / "catalog.duckdb"


@pytest.fixture(params=BACKENDS)
def con(
    request: pytest.FixtureRequest, path: Path, tmp_path: Path
) -> Iterator[duckdb.DuckDBPyConnection]:
    if request.param == "duckdb":
        connection = duckdb.connect(str(path))
        catalog.ensure_schema(connection)
    else:
        connection = open_catalog(request.param, tmp_path)
    catalog.upsert_source(connection, Source("docs", "/data/docs"))
    yield connection
    connection.close()


def revision(name: str, sha: str, *, size: int = 3, source: str = "docs") -> Revision:
    digest = sha * 64
    return Revision(
        revision_key(source, name, digest),
        document_id(source, name),
        source,
        name,
        size,
        1,
        digest,
        device=5,
        inode=7,
    )


def chunk(rev: Revision) -> Chunk:
    return Chunk(
        0, "text", ("b0",), "paragraph", (), Locator(line_start=1, line_end=1), (), rev.key, "text"
    )


def rows(con: duckdb.DuckDBPyConnection) -> list[tuple[object, ...]]:
    return con.execute(
        "SELECT key, seq, size, mtime_ns, device, inode FROM revisions ORDER BY key"
    ).fetchall()


def test_a_bad_row_in_the_middle_of_a_batch_registers_nothing_of_it(
    con: duckdb.DuckDBPyConnection,
) -> None:
    gone = revision("gone.md", "1")
    catalog.register_revisions(con, [gone])
    catalog.retire_paths(con, "docs", ["gone.md"])
    before = rows(con)
    back = revision("gone.md", "1")  # written again: its document would be revived
    bad = revision("b.md", "2", size=2**64)  # past BIGINT: the insert fails
    with pytest.raises((duckdb.Error, catalog.CatalogError)):
        catalog.register_revisions(con, [revision("a.md", "1"), back, bad, revision("c.md", "3")])
    assert rows(con) == before
    status = con.execute(
        "SELECT status FROM documents WHERE document_id = ?", [gone.document_id]
    ).fetchone()
    assert status == ("retired",)


KILLED = """
import json, sys
from pathlib import Path
import duckdb
from loom_dagster import catalog
from loom_dagster.sources import Revision
target = sys.argv[1]
if target.startswith("postgresql://"):
    con = catalog.open_shared(target, Path(sys.argv[3]))
else:
    con = duckdb.connect(target)
catalog.register_revisions(con, [Revision(*r) for r in json.loads(sys.argv[2])])
"""


def test_a_process_killed_between_the_statements_of_a_batch_leaves_the_catalog_as_it_was(
    con: duckdb.DuckDBPyConnection, path: Path, tmp_path: Path
) -> None:
    shared = con.url if isinstance(con, PostgresCatalog) else None
    gone = revision("gone.md", "1")
    catalog.register_revisions(con, [gone])
    catalog.retire_paths(con, "docs", ["gone.md"])
    before = rows(con)
    con.close()
    batch = [gone] + [revision(f"n{i}.md", "2") for i in range(50)]
    holds = tmp_path / "holds"
    holds.mkdir()
    env = {
        **os.environ,
        hold.ENV_AT: "registering",
        hold.ENV_DIR: str(holds),
        "PYTHONPATH": str(ROOT),
    }
    child = subprocess.Popen(
        [
            sys.executable,
            "-c",
            KILLED,
            shared or str(path),
            json.dumps([list(r.__dict__.values()) for r in batch]),
            str(tmp_path),
        ],
        env=env,
    )
    try:
        reached = holds / "registering.reached"
        for _ in range(1200):  # the child's start, on a busy machine: up to a minute
            if reached.exists() or child.poll() is not None:
                break
            time.sleep(0.05)
        assert reached.exists(), "the batch never reached its hold point"
        # Held after the revival of `gone.md`'s document was written, before the rows.
        child.send_signal(signal.SIGKILL)
    finally:
        child.kill()
        child.wait()
    after = catalog.open_shared(shared, tmp_path) if shared else duckdb.connect(str(path))
    try:
        assert rows(after) == before
        status = after.execute(
            "SELECT status FROM documents WHERE document_id = ?", [gone.document_id]
        ).fetchone()
        assert status == ("retired",)
    finally:
        after.close()


def test_a_batch_takes_its_revisions_in_order_as_one_by_one_would(
    con: duckdb.DuckDBPyConnection,
) -> None:
    first, second = revision("a.md", "1"), revision("a.md", "2")
    catalog.register_revisions(con, [first])
    # `second` is new and registered first in the batch; `first`, registered before, comes
    # after it: the file went back to its old bytes within one batch's span.
    assert catalog.register_revisions(con, [second, first]) == [first.key]
    newest = catalog.known_files(con, "docs")["a.md"]
    assert newest.sha256 == first.sha256
    seqs = dict(con.execute("SELECT key, seq FROM revisions").fetchall())
    assert seqs[first.key] > seqs[second.key]


def test_registering_a_batch_again_changes_nothing(con: duckdb.DuckDBPyConnection) -> None:
    batch = [revision(f"f{i:04d}.md", "a") for i in range(2000)]
    assert catalog.register_revisions(con, batch) == []
    before = rows(con)
    assert catalog.register_revisions(con, batch) == []
    assert rows(con) == before
    assert len(before) == 2000
    # Sequence numbers follow the batch's order.
    seqs = [seq for _, seq in con.execute("SELECT key, seq FROM revisions").fetchall()]
    by_key = dict(con.execute("SELECT key, seq FROM revisions").fetchall())
    assert [by_key[r.key] for r in batch] == sorted(seqs)


def test_a_revived_document_takes_its_file_identity_as_scanned_now(
    con: duckdb.DuckDBPyConnection,
) -> None:
    a = revision("a.md", "1")
    catalog.register_revisions(con, [a])
    catalog.publish_revision(con, a, [chunk(a)], artifact_sha256="x")
    catalog.retire_paths(con, "docs", ["a.md"])
    again = Revision(*{**a.__dict__, "inode": 99, "mtime_ns": 5}.values())
    b = revision("b.md", "2")
    # The file deleted, then written again with the same bytes: its revision runs again,
    # read from the file as it is now; a new file beside it is simply registered.
    assert catalog.register_revisions(con, [again, b]) == [a.key]
    assert catalog.get_revision(con, a.key) == again
    assert catalog.registered_keys(con, [b.key]) == {b.key}
    status = con.execute(
        "SELECT status FROM documents WHERE document_id = ?", [a.document_id]
    ).fetchone()
    assert status == ("pending",)
    assert catalog.outcomes_for(con, [a.key]) == {}


def test_refreshing_identities_in_a_batch_runs_again_only_the_refused_as_replaced(
    con: duckdb.DuckDBPyConnection,
) -> None:
    a, b, c = revision("a.md", "1"), revision("b.md", "1"), revision("c.md", "1")
    catalog.register_revisions(con, [a, b, c])
    catalog.record_outcome(con, catalog.Outcome(a.key, catalog.REFUSED, "source_changed", "x"))
    catalog.record_outcome(con, catalog.Outcome(c.key, catalog.REFUSED, "encoding", "x"))
    moved = [Revision(*{**r.__dict__, "inode": 42}.values()) for r in (c, b, a)]
    assert catalog.refresh_identity(con, moved) == [a.key]
    assert {catalog.get_revision(con, r.key).inode for r in (a, b, c)} == {42}
    assert set(catalog.outcomes_for(con, [a.key, b.key, c.key])) == {c.key}


def test_batched_lookups_answer_what_one_by_one_lookups_answer(
    con: duckdb.DuckDBPyConnection,
) -> None:
    batch = [revision(f"f{i}.md", "a") for i in range(30)]
    catalog.register_revisions(con, batch)
    keys = [r.key for r in reversed(batch)] + ["nothing~0000000000@0000000000000000"]
    found = catalog.revisions_of(con, keys)
    assert list(found) == keys[:-1]
    assert all(found[r.key] == catalog.get_revision(con, r.key) for r in batch)
    with pytest.raises(catalog.CatalogError) as refused:
        catalog.revisions_of(con, keys, strict=True)
    assert refused.value.code == "unknown_revision"
    assert catalog.source_roots(con, ["docs", "docs"]) == {"docs": "/data/docs"}
    with pytest.raises(catalog.CatalogError) as unknown:
        catalog.source_roots(con, ["docs", "elsewhere"])
    assert unknown.value.code == "unknown_source"


class Counting:
    """A connection that counts the statements it is given."""

    def __init__(self, con: duckdb.DuckDBPyConnection) -> None:
        self.con, self.statements = con, 0

    def execute(self, *args: object) -> duckdb.DuckDBPyConnection:
        self.statements += 1
        return self.con.execute(*args)  # type: ignore[arg-type]


@pytest.mark.parametrize("documents", [2, 40])
def test_reconciling_a_batch_reads_the_catalog_a_fixed_number_of_times(
    con: duckdb.DuckDBPyConnection, tmp_path: Path, documents: int
) -> None:
    from loom_dagster import pipeline
    from loom_dagster.objectstore import ObjectStore
    from loom_dagster.search.lexical import LexicalIndex

    store = ObjectStore((tmp_path / "store").as_uri())
    index = LexicalIndex(tmp_path / "search")
    batch = [revision(f"f{i}.md", "a") for i in range(documents)]
    catalog.register_revisions(con, batch)
    for rev in batch:
        chunks = [chunk(rev)]
        store.put(store.revision_key(rev.key, pipeline.CHUNKS), pipeline.chunks_to_parquet(chunks))
        catalog.publish_revision(con, rev, chunks, artifact_sha256="0" * 64)
    counting = Counting(con)
    repaired = pipeline.reconcile(counting, index, store)  # type: ignore[arg-type]
    assert len(repaired) == documents
    # unmark (empty index), unindexed, the revisions, their tags, the marks: not one a document.
    assert counting.statements == 5


# Publishing a batch ------------------------------------------------------------------------


def history(con: duckdb.DuckDBPyConnection) -> list[tuple[object, ...]]:
    return con.execute(
        "SELECT revision, status, code, chunk_count, run_id FROM outcome_history ORDER BY seq"
    ).fetchall()


def current(con: duckdb.DuckDBPyConnection) -> list[tuple[object, ...]]:
    return con.execute(
        "SELECT revision, status, code, chunk_count, artifact_sha256 FROM outcomes ORDER BY revision"
    ).fetchall()


def test_a_batch_publishes_in_order_as_one_by_one_would(con: duckdb.DuckDBPyConnection) -> None:
    old, new, other = revision("a.md", "1"), revision("a.md", "2"), revision("b.md", "1")
    refused = revision("c.md", "1")
    catalog.register_revisions(con, [old, new, other, refused])
    done = catalog.publish_batch(
        con,
        [
            catalog.Publication(old, 1, "x"),
            catalog.Publication(new, 2, "y"),
            catalog.Outcome(refused.key, catalog.REFUSED, "encoding", "bad byte"),
            catalog.Publication(old, 1, "x"),  # older than the live one now: superseded
            catalog.Publication(other, 0, "z"),
        ],
        run_id="run-1",
    )
    assert [(d.outcome.revision, d.outcome.status, d.replaced) for d in done] == [
        (old.key, catalog.PUBLISHED, None),
        (new.key, catalog.PUBLISHED, old.key),
        (refused.key, catalog.REFUSED, None),
        (old.key, catalog.SUPERSEDED, None),
        (other.key, catalog.PUBLISHED, None),
    ]
    assert sorted(d[3] for d in catalog.live_documents(con)) == sorted([new.key, other.key])
    assert history(con) == [
        (old.key, catalog.PUBLISHED, None, 1, "run-1"),
        (old.key, catalog.SUPERSEDED, None, None, "run-1"),
        (new.key, catalog.PUBLISHED, None, 2, "run-1"),
        (refused.key, catalog.REFUSED, "encoding", None, "run-1"),
        (old.key, catalog.SUPERSEDED, None, 1, "run-1"),
        (other.key, catalog.PUBLISHED, None, 0, "run-1"),
    ]
    assert current(con) == sorted(
        [
            (old.key, catalog.SUPERSEDED, None, 1, "x"),
            (new.key, catalog.PUBLISHED, None, 2, "y"),
            (refused.key, catalog.REFUSED, "encoding", None, None),
            (other.key, catalog.PUBLISHED, None, 0, "z"),
        ]
    )


def test_a_failure_in_the_middle_of_a_publish_leaves_nothing_of_its_batch(
    con: duckdb.DuckDBPyConnection, tmp_path: Path
) -> None:
    from loom_dagster import pipeline
    from loom_dagster.objectstore import ObjectStore
    from loom_dagster.search.lexical import LexicalIndex

    store = ObjectStore((tmp_path / "store").as_uri())
    index = LexicalIndex(tmp_path / "search")
    ready, unextracted = revision("a.md", "1"), revision("b.md", "1")
    catalog.register_revisions(con, [ready, unextracted])
    sha = store.put_artifact(b"{}")
    store.put_json(
        store.revision_key(ready.key, pipeline.EXTRACTION),
        {"revision": ready.key, "status": "extracted", "artifact_sha256": sha, "format": "text"},
    )
    store.put(
        store.revision_key(ready.key, pipeline.CHUNKS), pipeline.chunks_to_parquet([chunk(ready)])
    )
    # One by one, `a.md` went live before `b.md` (no extraction) failed the batch.
    with pytest.raises(catalog.LoomError) as failed:
        pipeline.publish(con, index, store, [ready, unextracted])
    assert failed.value.code == "not_extracted"
    assert catalog.live_documents(con) == [] and history(con) == []


PUBLISH_KILLED = """
import sys
from pathlib import Path
import duckdb
from loom_dagster import catalog
from tests.unit.test_catalog_batches import revision
target = sys.argv[1]
if target.startswith("postgresql://"):
    con = catalog.open_shared(target, Path(sys.argv[2]))
else:
    con = duckdb.connect(target)
catalog.publish_batch(con, [catalog.Publication(revision(f"n{i}.md", "2"), 1, "x")
                            for i in range(20)])
"""


def test_a_process_killed_in_the_middle_of_a_publish_leaves_nothing_of_its_batch(
    con: duckdb.DuckDBPyConnection, path: Path, tmp_path: Path
) -> None:
    # On PostgreSQL the server rolls back what the killed worker's connection left open: the
    # adapter's BEGIN must be a real transaction for that.
    shared = con.url if isinstance(con, PostgresCatalog) else None
    target = shared or str(path)
    catalog.register_revisions(con, [revision(f"n{i}.md", "2") for i in range(20)])
    con.close()
    holds = tmp_path / "holds"
    holds.mkdir()
    env = {
        **os.environ,
        hold.ENV_AT: "switching",
        hold.ENV_DIR: str(holds),
        "PYTHONPATH": str(ROOT),
    }
    command = [sys.executable, "-c", PUBLISH_KILLED, target, str(tmp_path)]
    child = subprocess.Popen(command, env=env, cwd=ROOT)
    try:
        reached = holds / "switching.reached"
        for _ in range(1200):
            if reached.exists() or child.poll() is not None:
                break
            time.sleep(0.05)
        assert reached.exists(), "the publish never reached its hold point"
        # Held after the documents were switched, before their outcomes were written.
        child.send_signal(signal.SIGKILL)
    finally:
        child.kill()
        child.wait()
    after = catalog.open_shared(shared, tmp_path) if shared else duckdb.connect(str(path))
    try:
        assert catalog.live_documents(after) == [] and history(after) == []
    finally:
        after.close()


@pytest.mark.parametrize("size", [2, 30])
def test_publishing_a_batch_writes_the_catalog_a_fixed_number_of_times(
    con: duckdb.DuckDBPyConnection, tmp_path: Path, size: int
) -> None:
    from loom_dagster import pipeline
    from loom_dagster.objectstore import ObjectStore
    from loom_dagster.search.lexical import LexicalIndex

    store = ObjectStore((tmp_path / "store").as_uri())
    index = LexicalIndex(tmp_path / "search")
    batch = [revision(f"f{i}.md", "1") for i in range(size)]
    refused = revision("refused.md", "1")
    catalog.register_revisions(con, [*batch, refused])
    sha = store.put_artifact(b"{}")
    for rev in batch:
        store.put_json(
            store.revision_key(rev.key, pipeline.EXTRACTION),
            {"revision": rev.key, "status": "extracted", "artifact_sha256": sha, "format": "text"},
        )
        store.put(
            store.revision_key(rev.key, pipeline.CHUNKS), pipeline.chunks_to_parquet([chunk(rev)])
        )
    pipeline.refuse(store, refused, "encoding", "bad byte")
    counting = Counting(con)
    outcomes = pipeline.publish(counting, index, store, [*batch, refused])  # type: ignore[arg-type]
    assert [o.status for o in outcomes] == [catalog.PUBLISHED] * size + [catalog.REFUSED]
    assert index.count() == size
    # reconcile (2), tags, the folders (is a file gone?), the plan (2), the switch (begin, 2
    # reads, documents, numbers, history, outcomes, commit), stale datasets, the marks (2: the
    # marks, then which documents moved on meanwhile): none per revision (one by one: 8 each).
    assert counting.statements == 17


HOLDER = """
import sys, time
from pathlib import Path
import duckdb
con = duckdb.connect(sys.argv[1])
Path(sys.argv[2]).write_text("held")
while not Path(sys.argv[3]).exists():
    time.sleep(0.05)
con.close()
"""


def test_a_catalog_another_process_holds_is_waited_for_then_refused_once_retries_are_spent(
    path: Path, tmp_path: Path
) -> None:
    held, release = tmp_path / "held", tmp_path / "release"
    child = subprocess.Popen([sys.executable, "-c", HOLDER, str(path), str(held), str(release)])
    try:
        for _ in range(1200):
            if held.exists() or child.poll() is not None:
                break
            time.sleep(0.05)
        assert held.exists()
        with pytest.raises(duckdb.IOException):
            with catalog.connect(path, retries=0):
                pass
        release.write_text("go")
        # Released while this waits: the connection is made, with the schema in place.
        with catalog.connect(path, retries=10) as con:
            assert catalog.list_sources(con) == []
    finally:
        release.write_text("go")
        child.wait()
