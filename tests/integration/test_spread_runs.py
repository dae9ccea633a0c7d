"""Issue 32.3, "runs that spread": Dagster's run queue launches ingest runs across three worker
homes at once, against one catalog and one object store, within its limits.

A control home (LOOM_WORKERS=3, the catalog and Dagster's instance in a real PostgreSQL server on
loopback, the object store a folder) registers three sources of 1,000 tiny files each and queues
their ingest runs (loom_dagster/spread.py, 500 revisions a run, tagged with their source).
Dagster's own daemon (`dagster-daemon run`, nothing but the run queue to serve: its workspace is
empty) releases them, at most three at once and one per source at once, to Loom's
WorkerRunLauncher, which starts each as a process of its own in a free worker home. Then: every
run succeeded; every one of the 3,000 revisions is published exactly once (one outcome and one
history row each, its chunk file in the store, nothing more); the run records show the limits
held (no two runs of one source overlapped, never more than three at once) and that the runs
did spread (all three worker homes took runs, and runs of different sources overlapped).

It takes minutes (marked slow; 667 s on 2 cores at load 15-20, 2026-12-07: registering 10 s,
queuing 200 s, the six runs 435 s): 3,000 revisions through Dagster's runs are the point, and
creating a run writes its planned events, 2,000 for 500 revisions, as `loom ingest`'s runs do.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from loom_dagster import api, catalog, pipeline, spread
from loom_dagster.extractor.local import RunningExtractor
from loom_dagster.extractor.settings import ENV_TOKEN, ENV_URL
from loom_dagster.objectstore import ObjectStore
from loom_dagster.resources.storage import CatalogResource
from loom_dagster.search.lexical import LexicalIndex
from loom_dagster.settings import LoomSettings
from tests.integration.test_shared_catalog import fresh_database
from tests.support.postgres import local_postgres, server_binaries

ROOT = Path(__file__).resolve().parents[2]
SOURCES = 3
FILES = 1000  # per source
WORKERS = 3
BATCH = 500  # revisions a run: two runs a source, six in all
WAIT_S = 1500  # for every run to end, on a loaded CI machine

pytestmark = [
    pytest.mark.postgres,
    pytest.mark.slow,
    pytest.mark.skipif(server_binaries() is None, reason="no PostgreSQL server binaries"),
]


@pytest.fixture(scope="module")
def server_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with local_postgres(tmp_path_factory.mktemp("postgres")) as url:
        yield url


def make_sources(root: Path) -> dict[str, Path]:
    folders = {}
    for s in range(SOURCES):
        folder = root / f"source{s}"
        folder.mkdir(parents=True)
        for i in range(FILES):
            (folder / f"note{i:03d}.txt").write_text(f"spreadword s{s} n{i}\n")
        folders[f"source{s}"] = folder
    return folders


def _tail(path: Path) -> str:
    return path.read_text(errors="replace")[-3000:]


def overlap(a: tuple[float, float], b: tuple[float, float]) -> bool:
    return a[0] < b[1] and b[0] < a[1]


def test_three_workers_publish_three_thousand_revisions_once_within_the_queue_limits(
    server_url: str,
    reference_service: RunningExtractor,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from dagster import DagsterRunStatus, RunsFilter

    catalog_url = fresh_database(server_url, "spread_catalog")
    dagster_url = fresh_database(server_url, "spread_dagster").replace(
        "postgresql://", "postgresql+psycopg2://"
    )
    env = {
        "LOOM_HOME": str(tmp_path / "control"),
        "LOOM_OBJECT_STORE_URL": (tmp_path / "store").as_uri(),
        "LOOM_CATALOG_URL": catalog_url,
        "LOOM_DAGSTER_POSTGRES_URL": dagster_url,
        "LOOM_WORKERS": str(WORKERS),
        "LOOM_RUNS_PER_SOURCE": "1",
        "LOOM_BATCH_SIZE": str(BATCH),
        ENV_URL: reference_service.url,
        ENV_TOKEN: reference_service.token,
    }
    monkeypatch.delenv("DAGSTER_HOME", raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    began = time.monotonic()
    settings = LoomSettings.from_env()
    api.prepare_environment(settings)
    instance = api.dagster_instance(settings)

    # Registered as the folder sensor or `loom ingest` registers them, then queued.
    keys_by_source: dict[str, list[str]] = {}
    index = LexicalIndex(settings.search_dir)
    for name, folder in make_sources(tmp_path / "folders").items():
        source = api.register_source(settings, folder, name=name)
        with CatalogResource(database=str(settings.catalog_path)).connect() as con:
            keys_by_source[name] = [r.key for r in pipeline.sync_source(con, index, source).new]
    print(f"registered {SOURCES * FILES} files in {time.monotonic() - began:.0f} s")
    run_ids = spread.queue_ingest_runs(instance, settings, keys_by_source)
    print(f"queued {len(run_ids)} runs at {time.monotonic() - began:.0f} s")
    assert len(run_ids) == SOURCES * FILES // BATCH

    workspace = tmp_path / "workspace.yaml"
    workspace.write_text("load_from: []\n")  # the queue needs no code location
    log = open(tmp_path / "daemon.log", "wb")  # noqa: SIM115 - closed after the daemon ends
    daemon = subprocess.Popen(
        [str(Path(sys.executable).parent / "dagster-daemon"), "run", "-w", str(workspace)],
        env={**os.environ, "DAGSTER_HOME": str(settings.dagster_home), "PYTHONPATH": str(ROOT)},
        cwd=ROOT,
        start_new_session=True,
        # A file, not a pipe: the run processes write to it too, and a full pipe nobody reads
        # would stop them.
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    ended = {DagsterRunStatus.SUCCESS, DagsterRunStatus.FAILURE, DagsterRunStatus.CANCELED}
    started = time.monotonic()
    try:
        while time.monotonic() - started < WAIT_S:
            records = instance.get_run_records(RunsFilter(run_ids=run_ids))
            if all(r.dagster_run.status in ended for r in records):
                break
            assert daemon.poll() is None, _tail(tmp_path / "daemon.log")
            time.sleep(1)
    finally:
        os.killpg(daemon.pid, signal.SIGTERM)
        daemon.wait(timeout=60)
        log.close()
    print(f"{len(run_ids)} runs ended in {time.monotonic() - started:.0f} s")
    records = instance.get_run_records(RunsFilter(run_ids=run_ids))
    assert {r.dagster_run.status for r in records} == {DagsterRunStatus.SUCCESS}, _tail(
        tmp_path / "daemon.log"
    )

    # The limits held, and the runs spread.
    spans = [
        (r.dagster_run.tags[spread.SOURCE_TAG], (r.start_time or 0.0, r.end_time or 0.0))
        for r in records
    ]
    for source, span in spans:
        assert span[0] < span[1]
        others = [s for name, s in spans if name == source and s is not span]
        assert not any(overlap(span, other) for other in others), source
    for _, span in spans:
        at_once = [s for _, s in spans if s[0] <= span[0] < s[1]]
        assert len(at_once) <= WORKERS
    assert any(overlap(a, b) for i, (x, a) in enumerate(spans) for y, b in spans[i + 1 :] if x != y)
    homes = {r.dagster_run.tags[spread.WORKER_TAG] for r in records}
    assert homes == {str(n) for n in range(WORKERS)}

    # Every revision published exactly once.
    keys = sorted(k for ks in keys_by_source.values() for k in ks)
    assert len(keys) == SOURCES * FILES
    con = catalog.open_shared(catalog_url, settings.home)
    try:
        live = catalog.live_documents(con)
        assert sorted(d[3] for d in live) == keys
        history = con.execute(
            "SELECT revision, count(*) FROM outcome_history WHERE status = 'published' "
            "GROUP BY revision"
        ).fetchall()
        assert sorted(history) == [(key, 1) for key in keys]
        assert con.execute("SELECT count(*) FROM outcome_history").fetchone() == (len(keys),)
        assert {o.status for o in catalog.outcomes_for(con, keys).values()} == {catalog.PUBLISHED}
    finally:
        con.close()
    store = ObjectStore(settings.object_store_url)
    chunk_files = [
        o.key for o in store.list_objects("revisions") if o.key.endswith(f"/{pipeline.CHUNKS}")
    ]
    assert sorted(chunk_files) == sorted(store.revision_key(k, pipeline.CHUNKS) for k in keys)
