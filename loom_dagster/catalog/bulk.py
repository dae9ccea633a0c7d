"""Python columns handed to the embedded catalog as a table it joins: how a scan of a million
files, or a vector index's million documents, is compared with the catalog there, so that only
the rows that differ come back to Python."""

from __future__ import annotations

import contextlib
import itertools
from collections.abc import Iterator, Sequence

import duckdb

# From this many rows, the columns go to DuckDB as numpy arrays it reads in place (a million
# strings in milliseconds, where list parameters take seconds); below it, as list parameters,
# so that a small folder's quick ingest loads no numpy.
IN_ARRAYS = 10_000

_NUMPY_KINDS = {"BIGINT": "int64", "UBIGINT": "uint64", "VARCHAR": "object"}
_names = itertools.count()


@contextlib.contextmanager
def as_table(
    con: duckdb.DuckDBPyConnection, columns: Sequence[tuple[str, str, Sequence[object]]]
) -> Iterator[tuple[str, list[object]]]:
    """`columns` ((name, DuckDB type: BIGINT, UBIGINT or VARCHAR, values), all as long) as a
    table: the SQL that names it in a FROM clause, and the parameters that SQL takes."""
    rows = len(columns[0][2]) if columns else 0
    if rows < IN_ARRAYS:
        yield (
            "(SELECT "
            + ", ".join(f"unnest(?::{kind}[]) AS {name}" for name, kind, _ in columns)
            + ")",
            [list(values) for _, _, values in columns],
        )
        return
    import numpy as np

    view = f"loom_bulk_{next(_names)}"
    # DuckDB refuses to register while an earlier statement's result is unread (a fetchone
    # leaves one); a statement run to its end closes it, as any next execute would.
    con.execute("SELECT 1").fetchall()
    con.register(
        view,
        {name: np.array(values, dtype=_NUMPY_KINDS[kind]) for name, kind, values in columns},
    )
    try:
        yield view, []
    finally:
        con.unregister(view)
