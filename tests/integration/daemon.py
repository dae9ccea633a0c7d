"""Dagster's daemon as a real process on a test's home, and what it did, read from the instance.

The daemon runs the sensors (the folder sensor and automation) and launches their runs as
processes of its own, as under `loom ui`; the test reads the instance, never the catalog, while it
runs (DuckDB lets a second process in only when nobody writes).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TypeVar

from dagster import AssetKey, DagsterInstance

from loom_dagster.dagster_dev import prepare_instance
from tests.integration.loom_command import alive_among, descendants

REPO = Path(__file__).resolve().parents[2]
WORKSPACE = REPO / "workspace.yaml"
PUBLISHED = AssetKey(["loom", "published"])
ORIGINAL = AssetKey(["loom", "original"])
T = TypeVar("T")


@contextmanager
def running_daemon(log: Path) -> Iterator[subprocess.Popen[bytes]]:
    """`dagster-daemon run` on the workspace, with this process's environment (LOOM_HOME,
    DAGSTER_HOME, the extractor); ended with every process it started, whatever the test did."""
    # As `loom ui` does: the instance's tables made before the daemon and this test both would.
    prepare_instance(Path(os.environ["DAGSTER_HOME"]))
    daemon = Path(sys.executable).with_name("dagster-daemon")
    with open(log, "wb") as out:
        process = subprocess.Popen(
            [str(daemon), "run", "-w", str(WORKSPACE)],
            cwd=REPO,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            env=dict(os.environ),
        )
    try:
        yield process
    finally:
        stop_group(process)


def stop_group(process: subprocess.Popen[bytes]) -> None:
    """End a process started in its own session and every process under it, within seconds."""
    family = [process.pid, *descendants(process.pid)]
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(process.pid, sig)
        except ProcessLookupError:
            pass
        for pid in alive_among(family):
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                pass
        try:
            process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            continue
        if not alive_among(family):
            return
        time.sleep(0.5)


def wait_for(what: str, probe: Callable[[], T | None], timeout: float, log: Path) -> T:
    """Poll `probe` until it returns something truthy, or fail after `timeout` seconds with the
    end of the daemon's log."""
    deadline = time.monotonic() + timeout
    while True:
        found = probe()
        if found:
            return found
        if time.monotonic() > deadline:
            tail = log.read_text(errors="replace")[-3000:] if log.exists() else ""
            raise AssertionError(f"{what}: not within {timeout:.0f} s; daemon log ends:\n{tail}")
        time.sleep(1.0)


def instance() -> DagsterInstance:
    return DagsterInstance.from_config(os.environ["DAGSTER_HOME"])


def published(keys: set[str]) -> Callable[[], bool]:
    def probe() -> bool:
        with instance() as dagster:
            return keys <= dagster.get_materialized_partitions(PUBLISHED)

    return probe


def every_partition_done(at_least: int) -> Callable[[], bool]:
    """At least `at_least` revision partitions, each published or its refusal recorded (an
    observation on `published`): what a run leaves for every file it took."""
    from dagster import AssetRecordsFilter

    def probe() -> bool:
        with instance() as dagster:
            keys = set(dagster.get_dynamic_partitions("revisions"))
            done = dagster.get_materialized_partitions(PUBLISHED)
            observed = dagster.fetch_observations(
                AssetRecordsFilter(asset_key=PUBLISHED), limit=10000
            ).records
            done |= {r.partition_key for r in observed if r.partition_key}
        return len(keys) >= at_least and keys <= done

    return probe


def ticked_after(sensor: str, moment: float) -> Callable[[], bool]:
    """Whether `sensor` has finished an evaluation that started after `moment`."""
    from dagster._core.scheduler.instigation import InstigatorType, TickStatus

    def probe() -> bool:
        with instance() as dagster:
            for state in dagster.all_instigator_state(instigator_type=InstigatorType.SENSOR):
                if state.instigator_name != sensor:
                    continue
                ticks = dagster.get_ticks(state.instigator_origin_id, state.selector_id, limit=5)
                if any(t.timestamp > moment and t.status != TickStatus.STARTED for t in ticks):
                    return True
        return False

    return probe


def last_run_ended() -> float:
    with instance() as dagster:
        ends = [r.end_time or 0.0 for r in dagster.get_run_records()]
    return max(ends, default=0.0)


def runs_per_key(keys: set[str]) -> dict[str, int]:
    """How many runs took each key (one by name, or in a key range): Dagster's own record of a
    run planning a partition's `original`, or of planning the publishing step."""
    from dagster import AssetRecordsFilter

    counts = dict.fromkeys(keys, 0)
    with instance() as dagster:
        for asset in (ORIGINAL, PUBLISHED):
            seen: set[tuple[str, str]] = set()
            records = dagster.fetch_planned_materializations(
                AssetRecordsFilter(asset_key=asset), limit=10000
            ).records
            for record in records:
                event = record.event_log_entry.dagster_event
                partition = event.partition if event is not None else None
                if partition in counts:
                    seen.add((partition, record.run_id))
            per_key = {key: sum(1 for k, _ in seen if k == key) for key in keys}
            for key, count in per_key.items():
                counts[key] = max(counts[key], count)
    return counts
