"""Issue 18.3, "done means": two workers publishing into one shared catalog at once.

Two OS processes stand for two machines: each has its own LOOM_HOME (its own search index), and
they share the object store folder and the catalog, a real PostgreSQL server on loopback
(LOOM_CATALOG_URL). Started together, each registers and publishes a folder of 500 tiny files
through the pipeline (tests/integration/shared_catalog_worker.py) against the warm reference
extractor. Then: every one of the 1,000 revisions is published exactly once (catalog rows and
object-store files), neither worker met a lock error, and search is consistent: an index built
from the catalog and the published chunk files alone (a search replica) finds each document
once, and a worker's own index, reconciled, answers the same.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from loom_dagster import catalog, pipeline
from loom_dagster.extractor.local import RunningExtractor
from loom_dagster.extractor.settings import ENV_TOKEN, ENV_URL
from loom_dagster.objectstore import ObjectStore
from loom_dagster.search.lexical import LexicalIndex
from tests.support.postgres import local_postgres, server_binaries

ROOT = Path(__file__).resolve().parents[2]
FILES = 500  # per worker
WORKERS = ("left", "right")
COMMON = "sharedcatalogword"

pytestmark = [
    pytest.mark.postgres,
    pytest.mark.skipif(server_binaries() is None, reason="no PostgreSQL server binaries"),
]


def word(n: int) -> str:
    """A word of letters only, unique per n (the analyzer keeps it whole)."""
    letters = ""
    for _ in range(4):
        n, digit = divmod(n, 26)
        letters += chr(ord("a") + digit)
    return "doc" + letters


def make_folder(root: Path, worker: int) -> Path:
    root.mkdir(parents=True)
    for i in range(FILES):
        (root / f"note{i:03d}.txt").write_text(f"{COMMON} {word(worker * FILES + i)}\n")
    return root


@pytest.fixture(scope="module")
def catalog_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with local_postgres(tmp_path_factory.mktemp("postgres")) as url:
        yield url


def test_two_workers_publish_a_thousand_revisions_into_one_catalog_at_once(
    catalog_url: str, reference_service: RunningExtractor, tmp_path: Path
) -> None:
    store_url = (tmp_path / "store").as_uri()
    go = tmp_path / "go"
    workers = []
    for n, name in enumerate(WORKERS):
        folder = make_folder(tmp_path / f"folder-{name}", n)
        env = {
            **os.environ,
            "LOOM_HOME": str(tmp_path / f"home-{name}"),
            "DAGSTER_HOME": str(tmp_path / f"home-{name}" / "dagster"),
            "LOOM_OBJECT_STORE_URL": store_url,
            "LOOM_CATALOG_URL": catalog_url,
            ENV_URL: reference_service.url,
            ENV_TOKEN: reference_service.token,
            "PYTHONPATH": str(ROOT),
        }
        command = [sys.executable, "-m", "tests.integration.shared_catalog_worker"]
        workers.append(
            subprocess.Popen(
                [*command, str(folder), name, str(go), "50"],
                env=env,
                cwd=ROOT,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
        )
    go.touch()  # both are past their imports or close to it: they meet the empty catalog at once
    results = []
    for worker in workers:
        out, err = worker.communicate(timeout=600)
        assert worker.returncode == 0, err[-3000:]
        results.append(json.loads(out.strip().splitlines()[-1]))
    print("workers:", results)
    for result in results:
        assert result["error"] is None  # no lock error, no error at all
        assert result["statuses"] == {"published": FILES}, result["refusals"]

    store = ObjectStore(store_url)
    replica_home = tmp_path / "replica"
    replica_home.mkdir()
    con = catalog.open_shared(catalog_url, replica_home)
    try:
        live = catalog.live_documents(con)
        keys = [document[3] for document in live]
        assert len(live) == 2 * FILES and len(set(keys)) == 2 * FILES
        assert {document[1] for document in live} == set(WORKERS)
        # Published exactly once: one outcome, one history row, one registration per revision.
        history = con.execute(
            "SELECT revision, count(*) FROM outcome_history WHERE status = 'published' "
            "GROUP BY revision"
        ).fetchall()
        assert sorted(history) == sorted((key, 1) for key in keys)
        assert con.execute("SELECT count(*) FROM outcome_history").fetchone() == (2 * FILES,)
        assert con.execute("SELECT count(*) FROM revisions").fetchone() == (2 * FILES,)
        outcomes = catalog.outcomes_for(con, keys)
        assert {o.status for o in outcomes.values()} == {catalog.PUBLISHED}
        # Its files in the object store: each revision's chunk file, one artifact and one
        # original per distinct content (every file here is distinct), and nothing more. The
        # replica's reconcile below reads every chunk file.
        listed = {
            prefix: [o.key for o in store.list_objects(prefix)]
            for prefix in ("revisions", "artifacts", "originals")
        }
        chunk_files = [k for k in listed["revisions"] if k.endswith(f"/{pipeline.CHUNKS}")]
        assert sorted(chunk_files) == sorted(store.revision_key(k, pipeline.CHUNKS) for k in keys)
        assert len(listed["artifacts"]) == len(listed["originals"]) == 2 * FILES
        assert catalog.counts(con) == {"live_documents": 2 * FILES, "chunks": 2 * FILES}

        # A search replica: an index made from the catalog and the chunk files alone.
        replica = LexicalIndex(replica_home / "search")
        repaired = pipeline.reconcile(con, replica, store)
        assert len(repaired) == 2 * FILES
        found = replica.search(COMMON, limit=4 * FILES)
        assert sorted(hit.chunk.document_id for hit in found) == sorted(d[0] for d in live)
        for document in live[:: FILES // 5]:
            text = pipeline.read_chunks(store, document[3])[0].text
            [hit] = replica.search(text.split()[1], limit=5)
            assert (hit.chunk.document_id, hit.chunk.path) == (document[0], document[2])
    finally:
        con.close()

    # A worker's own index holds its own 500 and what its publishes' reconciles took of the
    # other's; reconciled once more it holds all, and answers as the replica does (each home's
    # marks are its own: the other worker's never stood for this index).
    left_home = tmp_path / "home-left"
    con = catalog.open_shared(catalog_url, left_home)
    try:
        left = LexicalIndex(left_home / "search")
        held = left.count()
        assert FILES <= held <= 2 * FILES
        assert len(pipeline.reconcile(con, left, store)) == 2 * FILES - held
        assert left.count() == 2 * FILES
        answer = left.search(COMMON, limit=4 * FILES)
        assert sorted(h.chunk.document_id for h in answer) == sorted(
            h.chunk.document_id for h in found
        )
        assert catalog.unindexed(con) == []
    finally:
        con.close()


def fresh_database(url: str, name: str) -> str:
    import psycopg2

    dsn = url.replace("postgresql+psycopg2://", "postgresql://")
    admin = psycopg2.connect(dsn)
    try:
        admin.autocommit = True
        admin.cursor().execute(f"CREATE DATABASE {name}")
    finally:
        admin.close()
    return dsn.rsplit("/", 1)[0] + f"/{name}"


def test_loom_ingest_through_dagster_keeps_its_catalog_in_postgres_alone(
    catalog_url: str, loom_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from loom_dagster import api
    from loom_dagster.datasets.catalog import list_served

    url = fresh_database(catalog_url, "through_dagster")
    monkeypatch.setenv("LOOM_CATALOG_URL", url)
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "note.txt").write_text("the quarterly sharedcatalogword review\n")
    (folder / "usage.csv").write_text("host,bytes\na,1\nb,2\nb,3\n")

    report = api.ingest_folder(folder, name="docs")

    assert {o.path: o.status for o in report.outcomes} == {
        "note.txt": "published",
        "usage.csv": "published",
    }
    assert not (loom_home / "catalog.duckdb").exists()  # the setting moved the whole catalog
    con = catalog.open_shared(url, loom_home)
    try:
        assert [d[2] for d in catalog.live_documents(con)] == ["note.txt", "usage.csv"]
        [dataset] = list_served(con)
    finally:
        con.close()
    [hit] = api.search(COMMON, limit=5)
    assert hit.chunk.path == "note.txt"
    answer = api.sql(
        f'SELECT host, sum(bytes) AS total FROM "{dataset.name}" GROUP BY host ORDER BY host'
    )
    assert [list(row) for row in answer.rows] == [["a", 1], ["b", 5]]
