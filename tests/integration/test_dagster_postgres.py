"""Dagster on PostgreSQL (issue 18.2): with LOOM_DAGSTER_POSTGRES_URL set, `loom ingest` keeps
its runs, event log and schedules in a real PostgreSQL server (started here on loopback from the
machine's server binaries), and the UI's per-partition facts read back from there.

Skipped only where no PostgreSQL server is installed (scripts/setup installs Debian's as root
with LOOM_SETUP_POSTGRES=1, which .ci/run sets).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import sqlalchemy as db
from dagster import DagsterEventType, DagsterInstance, DagsterRunStatus

from loom_dagster import api
from tests.integration.test_dagster_truth import CHUNKS, PUBLISHED, events, make_folder
from tests.support.postgres import local_postgres, server_binaries

pytestmark = pytest.mark.skipif(
    server_binaries() is None, reason="no PostgreSQL server binaries (LOOM_SETUP_POSTGRES=1)"
)


@pytest.fixture(scope="module")
def postgres_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with local_postgres(tmp_path_factory.mktemp("postgres")) as url:
        yield url


def test_an_ingest_stores_its_runs_and_events_in_postgres(
    postgres_url: str, loom_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LOOM_DAGSTER_POSTGRES_URL", postgres_url)

    report = api.ingest_folder(make_folder(tmp_path / "docs"))

    outcomes = {o.path: o for o in report.outcomes}
    assert outcomes["note.txt"].status == "published"
    engine = db.create_engine(postgres_url)
    try:
        with engine.connect() as conn:
            statuses = [row[0] for row in conn.execute(db.text("SELECT status FROM runs"))]
            kinds: dict[str, int] = dict(
                conn.execute(  # type: ignore[arg-type]
                    db.text(
                        "SELECT dagster_event_type, count(*) FROM event_logs "
                        "WHERE dagster_event_type IS NOT NULL GROUP BY 1"
                    )
                ).fetchall()
            )
    finally:
        engine.dispose()
    assert statuses == [DagsterRunStatus.SUCCESS.value]
    # original and artifact for the four files; chunks, published and datasets for the three
    # read (datasets says "no tables" for one without any: issue 28, every asset can be green).
    assert kinds["ASSET_MATERIALIZATION"] == 4 + 4 + 3 + 3 + 3
    assert kinds["ASSET_CHECK_EVALUATION"] == 4 * 4  # extracted, complete, live, typed
    # Nothing of the instance went to SQLite under the home.
    history = loom_home / "dagster" / "history"
    assert not (history / "runs" / "index.db").exists() and not (history / "runs.db").exists()

    # The UI's reading, from PostgreSQL: each partition its own facts.
    assert DagsterInstance.get().event_log_storage.__class__.__name__ == (
        "BatchedPostgresEventLogStorage"
    )
    note = outcomes["note.txt"].revision
    assert events(CHUNKS, DagsterEventType.ASSET_MATERIALIZATION)[note or ""]["chunks"] == 1
    refused = outcomes["legacy.txt"].revision or ""
    assert events(PUBLISHED, DagsterEventType.ASSET_OBSERVATION)[refused]["code"] == "encoding"


def test_a_batch_reaches_postgres_whole_once_the_step_moves_on(postgres_url: str) -> None:
    from dagster_postgres import PostgresEventLogStorage

    from loom_dagster.event_log import BatchedPostgresEventLogStorage
    from tests.unit.test_event_batches import engine_event, materialization, stored

    batched = BatchedPostgresEventLogStorage(postgres_url)
    reader = PostgresEventLogStorage(postgres_url)  # another process: the UI
    before = stored(reader)
    keys = [f"batch-{n:02d}" for n in range(20)]
    with batched.batched():
        for key in keys:
            batched.store_event(materialization(key))
        assert stored(reader) == before  # type: ignore[arg-type]
        batched.store_event(engine_event())
        assert stored(reader) == before + keys  # type: ignore[arg-type]


def test_partitions_are_deleted_a_chunk_at_a_time_on_postgres(postgres_url: str) -> None:
    from dagster._core.test_utils import instance_for_test

    from loom_dagster.partitions import PARTITIONS_NAME, delete_partitions

    # The event log Loom's dagster.yaml names for PostgreSQL (`loom partitions compact` deletes
    # through it).
    storage = {
        "module": "loom_dagster.event_log",
        "class": "BatchedPostgresEventLogStorage",
        "config": {"postgres_url": postgres_url},
    }
    keys = [f"window-{n:05d}" for n in range(1500)]
    told: list[int] = []
    with instance_for_test(overrides={"event_log_storage": storage}) as instance:
        assert type(instance.event_log_storage).__name__ == "BatchedPostgresEventLogStorage"
        instance.add_dynamic_partitions(PARTITIONS_NAME, keys)
        delete_partitions(instance, keys[:1200], progress=told.append)
        left = [k for k in instance.get_dynamic_partitions(PARTITIONS_NAME) if k in keys]

    assert told == [1000, 1200]
    assert left == keys[1200:]
