"""A background ingest yields the CPU to searches and queries (issue 39).

A run launched by Dagster's daemon (the folder sensor, automation, the UI) lowers its own
process's CPU priority to LOOM_INGEST_NICE (default 0: off) when its first step sets its
resources up; the extractor service the run starts, and that service's readers, are its children and
inherit it. On a two-core machine an extraction and an index commit otherwise take the cores
from the resident searcher and `loom serve` for as long as they run: niced, they still get
every cycle nobody interactive wants, so a burst drains as fast on an idle machine. A foreground
`loom ingest` (its runs carry `loom/process`) keeps the priority its user started it with.
It is off by default: on this project's machine under other load, nice 10 measured no gain for
searches and made queries worse (a niced publish holds the catalog longer;
docs/benchmarks/load.md), so it is for a user to measure on a dedicated machine.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

import dagster as dg

from loom_dagster.errors import SettingsError
from loom_dagster.runs import PROCESS_TAG

NICE_ENV = "LOOM_INGEST_NICE"
DEFAULT_NICE = 0
MAX_NICE = 19


def ingest_nice(env: Mapping[str, str]) -> int:
    """LOOM_INGEST_NICE: 0 (no change) to 19."""
    text = env.get(NICE_ENV, "").strip()
    if not text:
        return DEFAULT_NICE
    try:
        value = int(text)
    except ValueError:
        value = -1
    if not 0 <= value <= MAX_NICE:
        raise SettingsError(
            f"{NICE_ENV} must be an integer from 0 to {MAX_NICE}, not {text[:40]!r}"
        )
    return value


def lower_priority(nice: int) -> int:
    """This process's niceness raised to at least `nice` (never lowered: a process started
    nicer stays so, and a second call changes nothing); the niceness it has after."""
    current = os.getpriority(os.PRIO_PROCESS, 0)
    if nice > current:
        os.setpriority(os.PRIO_PROCESS, 0, nice)
    return os.getpriority(os.PRIO_PROCESS, 0)


def background(tags: Mapping[str, str]) -> bool:
    """A run no foreground `loom ingest` executes in its own process."""
    return PROCESS_TAG not in tags


class IngestPriorityResource(dg.ConfigurableResource):
    """Lowers a background run's process priority as its steps start (see the module)."""

    def setup_for_execution(self, context: dg.InitResourceContext) -> None:
        run = context.dagster_run
        if run is not None and background(run.tags):
            lower_priority(ingest_nice(os.environ))
