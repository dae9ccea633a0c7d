"""bench/load.py judges its measures by the level table of bench/load_levels.py: the seed's
service levels and issue 39's freshness."""

from __future__ import annotations

import pytest

from bench import load, load_levels
from bench.load_levels import LEVELS, Level


def row(p95: float | None, p99: float | None, errors: int = 0) -> dict[str, object]:
    return {"p50_ms": p95, "p95_ms": p95, "p99_ms": p99, "errors": errors, "refused": 0}


def test_the_table_holds_the_seeds_levels_and_the_issues_freshness() -> None:
    assert LEVELS == {
        "search": Level(150, 250),
        "query": Level(1_000, 1_500),
        "ingest small document": Level(20_000, 30_000),
        "freshness": Level(10_000, 15_000),
    }


def test_every_operation_the_bench_times_is_held_to_a_level() -> None:
    timed = set(load.DEFAULT_RATES) - {"file"}
    timed |= {"small file: write to searchable", "small file: write to published"}
    assert timed <= set(load_levels.MEASURE_LEVEL)
    assert set(load_levels.MEASURE_LEVEL.values()) <= set(LEVELS)


def test_the_bench_reads_the_table(monkeypatch: pytest.MonkeyPatch) -> None:
    """A change to the table changes the bench's verdict: it holds no copy of its own."""
    measure = "search (resident)"
    assert load.verdicts({measure: row(140, 240)}) == []
    monkeypatch.setitem(LEVELS, "search", Level(100, 300))
    past = load.verdicts({measure: row(140, 240)})
    assert past == [f"{measure}: p95_ms 140 past search's 100"]


def test_a_measure_at_its_level_holds_and_one_past_it_does_not() -> None:
    level = LEVELS["query"]
    assert load.verdicts({"sql (serve HTTP)": row(level.p95_ms, level.p99_ms)}) == []
    assert len(load.verdicts({"sql (serve HTTP)": row(level.p95_ms + 1, level.p99_ms + 1)})) == 2


def test_a_measure_without_samples_or_with_errors_is_past_its_level() -> None:
    assert load.verdicts({"search (serve HTTP)": row(None, None)})
    assert load.verdicts({"search (serve HTTP)": row(10, 10, errors=1)}) == [
        "search (serve HTTP): 1 errors"
    ]


def test_a_measure_without_a_level_is_reported_not_judged() -> None:
    assert load.verdicts({"probes": row(None, None, errors=3)}) == []
