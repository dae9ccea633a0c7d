"""Running a compiled statement: a locked-down in-memory DuckDB over exactly the snapshot files
of the query's datasets, under ceilings, answered with a receipt.

The connection may read the snapshot files it was given (`allowed_paths`) and nothing else:
external access is off, the configuration is locked, no extension loads, nothing spills to
disk. A timer interrupts a statement past its time; a result past the row ceiling, memory past
its limit, or a sum past what a decimal holds is a typed error, never part of an answer. After
the statement, each dataset must still be served by the snapshot read (`dataset_changed`).
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from decimal import ROUND_DOWN, ROUND_HALF_UP, Context, Decimal
from pathlib import Path
from typing import Any

import duckdb

from loom_dagster.datasets.model import Dataset
from loom_dagster.query.compile import Compiled, Output
from loom_dagster.query.errors import QueryError
from loom_dagster.query.plan import shown
from loom_dagster.query.validated import json_value

# An average is the exact sum over the count, divided at 18 places and rounded to nine.
_DIVISION = Context(prec=80, rounding=ROUND_DOWN)
_EIGHTEEN = Decimal(1).scaleb(-18)
_NINE = Decimal(1).scaleb(-9)


@dataclass(frozen=True)
class Ceilings:
    """What one query may take: rows returned, memory, threads and wall time."""

    max_rows: int = 10_000
    memory: str = "512MB"
    threads: int = 2
    seconds: float = 30.0

    def __post_init__(self) -> None:
        # Checked before anything runs (issue 34): nan ran and reported "past its time limit
        # (nan s)", inf ran unbounded, a row count past DuckDB's integers failed inside it.
        for name, value, top in (
            ("row limit", self.max_rows, MAX_ROWS_CEILING),
            ("thread count", self.threads, MAX_THREADS_CEILING),
        ):
            if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= top:
                raise QueryError(
                    f"the {name} must be a whole number from 1 to {top:,}, not {_shown(value)}",
                    code="invalid_ceiling",
                )
        seconds = self.seconds
        if (
            isinstance(seconds, bool)
            or not isinstance(seconds, int | float)
            or not 0 < seconds <= MAX_SECONDS_CEILING  # False for nan; inf is past the top
        ):
            raise QueryError(
                f"the time limit must be above 0 and at most {MAX_SECONDS_CEILING:,g} s,"
                f" not {_shown(seconds)}",
                code="invalid_ceiling",
            )


# The largest ceilings a query may ask for: past them a query is not bounded in any useful way.
MAX_ROWS_CEILING = 1_000_000
MAX_THREADS_CEILING = 64
MAX_SECONDS_CEILING = 3600.0


def _shown(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


@dataclass(frozen=True)
class SnapshotRead:
    alias: str
    dataset_id: str
    name: str
    revision: str
    snapshot: str
    snapshot_key: str
    complete: bool
    rows_stored: int
    rows_rejected: int


@dataclass(frozen=True)
class Receipt:
    snapshots: tuple[SnapshotRead, ...]
    plan: dict[str, Any] | None  # the plan as validated (None for `loom sql`)
    statement: str
    parameters: dict[str, Any]
    complete: bool
    reasons: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        return {
            "snapshots": [vars(s).copy() for s in self.snapshots],
            "plan": self.plan,
            "statement": self.statement,
            "parameters": {k: json_value(v) for k, v in self.parameters.items()},
            "complete": self.complete,
            "reasons": list(self.reasons),
        }


@dataclass(frozen=True)
class Answer:
    columns: tuple[Output, ...]
    rows: tuple[tuple[Any, ...], ...]
    receipt: Receipt = field(repr=False)

    def to_dict(self) -> dict[str, Any]:
        return {
            "columns": [vars(c).copy() for c in self.columns],
            "rows": [[json_value(v) for v in row] for row in self.rows],
            "receipt": self.receipt.to_dict(),
        }


def locked_connection(paths: Sequence[Path], ceilings: Ceilings) -> duckdb.DuckDBPyConnection:
    """An in-memory DuckDB that may read `paths` and nothing else, within `ceilings`."""
    con = duckdb.connect(
        ":memory:",
        config={
            "autoinstall_known_extensions": False,
            "autoload_known_extensions": False,
            "allow_community_extensions": False,
        },
    )
    try:
        con.execute(f"SET threads = {int(ceilings.threads)}")
        # A literal: SET takes no parameter. The value is ours, checked to be a size.
        con.execute(f"SET memory_limit = '{_size(ceilings.memory)}'")
        con.execute("SET max_temp_directory_size = '0B'")
        con.execute("SET TimeZone = 'UTC'")
        con.execute("SET allowed_paths = $paths", {"paths": [str(p) for p in paths]})
        con.execute("SET enable_external_access = false")
        con.execute("SET lock_configuration = true")
    except BaseException:
        con.close()
        raise
    return con


def _size(text: str) -> str:
    digits = text.rstrip("KMGTiBb")
    if not digits.isdigit() or text[len(digits) :] not in ("KB", "MB", "GB", "KiB", "MiB", "GiB"):
        raise QueryError(
            f"memory ceiling {shown(text)} is not a size such as 512MB", code="invalid_ceiling"
        )
    return text


def execute(
    statement: str,
    parameters: dict[str, Any],
    paths: Sequence[Path],
    ceilings: Ceilings,
) -> tuple[list[str], list[tuple[Any, ...]]]:
    """Run one statement under the ceilings: its column names and rows. More than `max_rows`
    rows is `too_many_rows`."""
    con = locked_connection(paths, ceilings)
    timed_out = threading.Event()

    def interrupt() -> None:
        timed_out.set()
        con.interrupt()

    timer = threading.Timer(ceilings.seconds, interrupt)
    timer.daemon = True
    timer.start()
    try:
        cursor = con.execute(statement, parameters)
        names = [str(column[0]) for column in cursor.description or ()]
        rows = cursor.fetchmany(ceilings.max_rows + 1)
    except duckdb.InterruptException:
        raise _time_limit(ceilings) from None
    except duckdb.OutOfMemoryException:
        raise QueryError(
            f"the query needs more memory than its ceiling ({ceilings.memory})",
            code="memory_limit",
        ) from None
    except duckdb.OutOfRangeException as error:
        text = str(error).lower()
        if "overflow" in text and ("sum" in text or "addition" in text):
            raise QueryError(
                "a sum does not fit a decimal of 38 digits (29 before the point)",
                code="sum_overflow",
            ) from None
        raise QueryError(
            f"a value does not fit its type: {_first_line(error)}", code="numeric_overflow"
        ) from None
    except duckdb.Error as error:
        if timed_out.is_set():
            raise _time_limit(ceilings) from None
        if "memory" in str(error).lower() and "temp" in str(error).lower():
            raise QueryError(
                f"the query needs more memory than its ceiling ({ceilings.memory})",
                code="memory_limit",
            ) from None
        raise QueryError(f"the query failed: {_first_line(error)}", code="query_failed") from None
    finally:
        timer.cancel()
        con.close()
    if timed_out.is_set():
        raise _time_limit(ceilings)
    if len(rows) > ceilings.max_rows:
        raise QueryError(
            f"the answer has more than {ceilings.max_rows} rows; filter or group it",
            code="too_many_rows",
        )
    return names, rows


def _time_limit(ceilings: Ceilings) -> QueryError:
    return QueryError(
        f"the query ran past its time limit ({ceilings.seconds:g} s)", code="time_limit"
    )


def _first_line(error: BaseException) -> str:
    return (str(error).splitlines() or [""])[0][:300]


def finish_rows(compiled: Compiled, rows: Sequence[tuple[Any, ...]]) -> tuple[tuple[Any, ...], ...]:
    """The rows as answered: exact averages divided, hidden counts dropped."""
    width = len(compiled.outputs)
    finished = []
    for row in rows:
        values = list(row[:width])
        for position, (sum_at, count_at) in compiled.averages.items():
            values[position] = exact_average(row[sum_at], row[count_at])
        finished.append(tuple(values))
    return tuple(finished)


def exact_average(total: Decimal | None, count: int) -> Decimal | None:
    """The sum over the count, divided at 18 places and rounded (half away from zero) to nine."""
    if total is None or not count:
        return None
    quotient = _DIVISION.divide(Decimal(total), Decimal(count)).quantize(
        _EIGHTEEN, context=_DIVISION
    )
    return quotient.quantize(_NINE, rounding=ROUND_HALF_UP, context=_DIVISION)


def snapshot_reads(aliases: Sequence[str], datasets: Sequence[Dataset]) -> tuple[SnapshotRead, ...]:
    return tuple(
        SnapshotRead(
            alias,
            d.dataset_id,
            d.name,
            d.revision,
            d.snapshot,
            d.snapshot_key,
            d.complete,
            d.rows_stored,
            d.rows_rejected,
        )
        for alias, d in zip(aliases, datasets, strict=True)
    )
