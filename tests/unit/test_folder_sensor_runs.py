"""Which runs the folder sensor asks for (issue 38): every revision's first run, in key-range
batches, none for a key a run holds, and a key whose run ended only after RETRY_AFTER_S."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator

import pytest
from dagster import DagsterInstance, DagsterRunStatus
from dagster._core.storage.dagster_run import DagsterRun

from loom_dagster.partitions import MAX_REVISIONS_PER_RUN, keys_of_runs, paths_of
from loom_dagster.pipeline.watching import WatchCursor
from loom_dagster.sensors import (
    MAX_DEFERRED,
    MAX_INGEST_RUNS_IN_FLIGHT,
    MAX_RUNS_PER_TICK,
    RETRY_AFTER_S,
    run_requests,
    still_deferred,
)

RANGE_START, RANGE_END = "dagster/asset_partition_range_start", "dagster/asset_partition_range_end"
ORDER = [f"k{n:04}" for n in range(10)]


@pytest.fixture
def instance() -> Iterator[DagsterInstance]:
    with DagsterInstance.ephemeral() as ephemeral:
        yield ephemeral


def add_run(instance: DagsterInstance, status: DagsterRunStatus, **tags: str) -> None:
    instance.add_run(
        DagsterRun(job_name="ingest", run_id=str(uuid.uuid4()), tags=tags, status=status)
    )


def ranges(requests: list) -> list[tuple[str | None, ...]]:  # type: ignore[type-arg]
    return [
        (r.partition_key,) if r.partition_key else (r.tags[RANGE_START], r.tags[RANGE_END])
        for r in requests
    ]


def test_new_and_never_run_partitions_are_asked_for_in_runs_of_neighbours(
    instance: DagsterInstance,
) -> None:
    requests = run_requests(
        instance, ORDER, fresh=["k0008", "k0009"], idle=["k0001", "k0002", "k0005"]
    )

    assert ranges(requests) == [("k0001", "k0002"), ("k0005",), ("k0008", "k0009")]
    assert {r.job_name for r in requests} == {"ingest"}


def test_a_first_load_is_a_few_runs_and_a_bounded_number_per_tick(
    instance: DagsterInstance,
) -> None:
    order = [f"k{n:05}" for n in range(MAX_REVISIONS_PER_RUN * (MAX_RUNS_PER_TICK + 2))]

    requests = run_requests(instance, order, fresh=order)

    assert len(requests) == MAX_RUNS_PER_TICK
    assert ranges(requests)[0] == (order[0], order[MAX_REVISIONS_PER_RUN - 1])
    # The rest is found again by the next tick: partitions no run took.
    taken = {k for keys in keys_of_runs(order, (r.tags for r in requests)) for k in keys}
    assert len(taken) == MAX_REVISIONS_PER_RUN * MAX_RUNS_PER_TICK


def test_a_key_a_run_holds_is_left_to_it_whoever_launched_the_run(
    instance: DagsterInstance,
) -> None:
    add_run(instance, DagsterRunStatus.NOT_STARTED, **{RANGE_START: "k0001", RANGE_END: "k0003"})
    add_run(instance, DagsterRunStatus.STARTED, **{"dagster/partition": "k0007"})

    requests = run_requests(instance, ORDER, idle=ORDER[:9], again=["k0002"])

    assert ranges(requests) == [("k0000",), ("k0004", "k0006"), ("k0008",)]


def test_a_key_whose_run_failed_waits_before_it_is_asked_for_again(
    instance: DagsterInstance,
) -> None:
    add_run(instance, DagsterRunStatus.FAILURE, **{RANGE_START: "k0001", RANGE_END: "k0002"})
    add_run(instance, DagsterRunStatus.SUCCESS, **{"dagster/partition": "k0004"})

    # No hot loop: not on this tick, nor on any before the bound.
    assert run_requests(instance, ORDER, idle=["k0001", "k0002", "k0004"]) == []
    # A key to run again (a file back at earlier bytes) is not held back by a run that
    # succeeded: it ran, and what asks for it now is new.
    assert ranges(run_requests(instance, ORDER, again=["k0001", "k0004"])) == [("k0004",)]

    later = time.time() + RETRY_AFTER_S + 1
    requests = run_requests(instance, ORDER, idle=["k0001", "k0002", "k0004"], now=later)
    assert ranges(requests) == [("k0001", "k0002"), ("k0004",)]


def test_the_keys_of_a_run_are_read_from_its_tags() -> None:
    assert keys_of_runs(
        ORDER,
        [
            {"dagster/partition": "k0003"},
            {RANGE_START: "k0002", RANGE_END: "k0004"},
            {RANGE_START: "gone", RANGE_END: "k0004"},
            {"loom/sources": "docs"},
        ],
    ) == [["k0003"], ["k0002", "k0003", "k0004"], [], []]


def test_a_run_is_told_its_files_when_the_tick_saw_them_all_and_not_otherwise(
    instance: DagsterInstance,
) -> None:
    where = {"k0001": ("docs", "a.md"), "k0002": ("docs", "b.md")}

    both, partly = (
        run_requests(instance, ORDER, fresh=["k0001", "k0002"], where=where),
        (run_requests(instance, ORDER, fresh=["k0002", "k0003"], where=where)),
    )

    [run] = both
    assert paths_of(run.tags) == {"docs": ["a.md", "b.md"]}
    [run] = partly
    assert paths_of(run.tags) is None  # k0003's file unknown: its run scans the folders


def test_a_partition_a_run_not_ended_takes_is_not_pruned_under_it(
    instance: DagsterInstance,
) -> None:
    """Dagster resolves a run's partitions again at each output: a key deleted under its run
    fails the run (issue 39, a file deleted while its run is in flight)."""
    from loom_dagster.partitions import PARTITIONS_NAME, prune_partitions

    instance.add_dynamic_partitions(PARTITIONS_NAME, ORDER)
    add_run(instance, DagsterRunStatus.STARTED, **{RANGE_START: "k0001", RANGE_END: "k0002"})
    add_run(instance, DagsterRunStatus.NOT_STARTED, **{"dagster/partition": "k0005"})
    add_run(instance, DagsterRunStatus.SUCCESS, **{"dagster/partition": "k0007"})

    assert prune_partitions(instance, ["k0001", "k0002", "k0005", "k0007"]) == ["k0007"]
    assert instance.get_dynamic_partitions(PARTITIONS_NAME) == [k for k in ORDER if k != "k0007"]


def test_a_run_the_sensor_asks_for_names_the_assets_and_checks_it_updates() -> None:
    """Automation's `any_deps_updated` ignores an update made by a run whose own selection holds
    the asset; a run asked for by job name alone records no selection, and automation ran its
    partitions a second time (issue 39, nothing doubled)."""
    from loom_dagster.definitions import defs
    from loom_dagster.jobs import ingest_job
    from loom_dagster.sensors import ingest_request

    graph = defs.resolve_asset_graph()
    for batch in (["k0001"], ["k0001", "k0002"]):
        run = ingest_request(batch)
        assert set(run.asset_selection or []) == ingest_job.selection.resolve(graph)
        assert set(run.asset_check_keys or []) == ingest_job.selection.resolve_checks(graph)


def test_new_partitions_wait_while_runs_pile_up_and_share_a_run_once_one_ends(
    instance: DagsterInstance,
) -> None:
    """While MAX_INGEST_RUNS_IN_FLIGHT ingest runs are queued or running, a tick asks for no run
    of the partitions it adds (a run per tick would pile up behind the one publishing step); the
    cursor carries them, and the first tick after a run ends asks for them in one run of
    neighbours (a housekeeping tick's `idle` would too, up to POLL_S later)."""
    for n in range(MAX_INGEST_RUNS_IN_FLIGHT - 1):
        add_run(instance, DagsterRunStatus.NOT_STARTED, **{"dagster/partition": f"k000{n}"})
    assert ranges(run_requests(instance, ORDER, fresh=["k0005"])) == [("k0005",)]

    add_run(instance, DagsterRunStatus.STARTED, **{"dagster/partition": "k0004"})
    assert run_requests(instance, ORDER, fresh=["k0006"]) == []
    assert run_requests(instance, ORDER, fresh=["k0007"], deferred=["k0006"]) == []

    for record in instance.get_run_records():
        instance.report_run_canceled(record.dagster_run)  # fewer runs in flight
    assert ranges(run_requests(instance, ORDER, deferred=["k0006", "k0007"])) == [
        ("k0006", "k0007")
    ]
    # The housekeeping tick's way, as before: both are partitions no run took.
    assert ranges(run_requests(instance, ORDER, idle=["k0006", "k0007"])) == [("k0006", "k0007")]


def test_a_deferred_key_a_run_took_meanwhile_is_not_asked_for_again(
    instance: DagsterInstance,
) -> None:
    """A deferred key may have been run by then (automation, a backfill, `loom ingest`): it is
    left to that run, in flight or ended; a fresh key is new to every run."""
    add_run(instance, DagsterRunStatus.STARTED, **{"dagster/partition": "k0003"})
    add_run(instance, DagsterRunStatus.SUCCESS, **{"dagster/partition": "k0004"})

    requests = run_requests(instance, ORDER, fresh=["k0006"], deferred=["k0003", "k0004", "k0005"])

    assert ranges(requests) == [("k0005", "k0006")]


def test_the_cursor_carries_deferred_keys_while_runs_are_backlogged() -> None:
    """Kept (oldest first, at most MAX_DEFERRED) while backlogged, dropped once asked for; a
    housekeeping tick asks for the deferred ones as `idle` and keeps only its fresh ones."""
    assert still_deferred(["k1"], ["k2"], backlog=True, housekeeping=False) == ["k1", "k2"]
    assert still_deferred(["k1"], ["k2"], backlog=False, housekeeping=False) == []
    assert still_deferred(["k1"], ["k2"], backlog=True, housekeeping=True) == ["k2"]
    many = [f"k{n:05}" for n in range(MAX_DEFERRED + 5)]
    assert still_deferred(many, [], backlog=True, housekeeping=False) == many[5:]

    cursor = WatchCursor(deferred=["k1", "k2"])
    assert WatchCursor.loads(cursor.dumps()).deferred == ["k1", "k2"]
    assert WatchCursor.loads(WatchCursor().dumps()).deferred == []
