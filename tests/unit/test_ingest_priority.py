"""A background run yields the CPU: its process's niceness is raised to LOOM_INGEST_NICE when
its steps' resources are set up, a foreground `loom ingest` keeps its own
(loom_dagster/resources/priority.py). Each case runs in a forked child, so this test process
keeps its priority."""

from __future__ import annotations

import os
from collections.abc import Callable

import dagster as dg
import pytest

from loom_dagster.assets.specs import BATCHED
from loom_dagster.errors import SettingsError
from loom_dagster.partitions import PARTITIONS_NAME
from loom_dagster.resources.priority import (
    DEFAULT_NICE,
    NICE_ENV,
    ingest_nice,
    lower_priority,
)
from loom_dagster.runs import PROCESS_TAG


def in_child(action: Callable[[], None]) -> int:
    """The niceness a forked child has after `action`."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: report, and leave without pytest's teardown
        try:
            action()
            os.write(write, str(os.getpriority(os.PRIO_PROCESS, 0)).encode())
        finally:
            os._exit(0)
    os.close(write)
    with os.fdopen(read) as answer:
        text = answer.read()
    os.waitpid(pid, 0)
    return int(text)


def materialized(tags: dict[str, str]) -> Callable[[], None]:
    """A run through Dagster of an asset made with the pipeline's shared specs (as `original`,
    `artifact` and `published` are), tagged as its launcher tags it."""

    def action() -> None:
        @dg.asset(name="probe", **BATCHED)
        def probe() -> None:
            return None

        instance = dg.DagsterInstance.ephemeral()
        instance.add_dynamic_partitions(PARTITIONS_NAME, ["k"])
        result = dg.materialize([probe], instance=instance, partition_key="k", tags=tags)
        assert result.success

    return action


def test_the_setting_defaults_to_10_and_takes_0_to_19() -> None:
    assert ingest_nice({}) == DEFAULT_NICE == 0  # off unless a user measures a gain
    assert ingest_nice({NICE_ENV: "0"}) == 0
    assert ingest_nice({NICE_ENV: " 19 "}) == 19


@pytest.mark.parametrize("bad", ["20", "-1", "high", "1.5"])
def test_a_setting_outside_0_to_19_is_refused(bad: str) -> None:
    with pytest.raises(SettingsError, match=NICE_ENV):
        ingest_nice({NICE_ENV: bad})


def test_priority_is_only_ever_lowered() -> None:
    start = os.getpriority(os.PRIO_PROCESS, 0)
    assert in_child(lambda: lower_priority(start + 5)) == start + 5
    assert in_child(lambda: (lower_priority(start + 5), lower_priority(start + 2))) == start + 5


def test_a_background_run_lowers_its_process_priority(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(NICE_ENV, "7")
    start = os.getpriority(os.PRIO_PROCESS, 0)
    assert in_child(materialized({"dagster/sensor_name": "loom_folders"})) == max(start, 7)


def test_a_foreground_ingest_keeps_its_priority(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(NICE_ENV, "7")
    start = os.getpriority(os.PRIO_PROCESS, 0)
    assert in_child(materialized({PROCESS_TAG: "host:boot:1:2"})) == start
