"""A catalog connection's transactions (all of a block's writes, or none of them) and the locks
that serialise writers of the same documents on a shared catalog.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import contextmanager

import duckdb

from loom_dagster.catalog.errors import CatalogError
from loom_dagster.catalog.postgres import PostgresCatalog

# The connections inside a `transaction` block now: DuckDB refuses a second BEGIN and aborts
# the transaction open, so `atomic` must know without trying.
_OPEN: set[int] = set()


@contextmanager
def transaction(con: duckdb.DuckDBPyConnection) -> Iterator[None]:
    """All of the block's writes, or none of them."""
    if (isinstance(con, PostgresCatalog) and con.in_transaction) or id(con) in _OPEN:
        raise CatalogError("a transaction is already open", code="catalog")
    con.execute("BEGIN TRANSACTION")
    _OPEN.add(id(con))
    try:
        with _committed_or_rolled_back(con):
            yield
    finally:
        _OPEN.discard(id(con))


@contextmanager
def atomic(con: duckdb.DuckDBPyConnection) -> Iterator[None]:
    """All of the block's writes, or none of them: its own transaction, or the caller's when
    one is open already (DuckDB has no nested transactions)."""
    if (isinstance(con, PostgresCatalog) and con.in_transaction) or id(con) in _OPEN:
        yield  # inside the caller's `transaction`, which commits or rolls back the whole
        return
    try:
        con.execute("BEGIN TRANSACTION")
    except duckdb.TransactionException:
        yield  # inside the caller's transaction, which commits or rolls back the whole
        return
    with _committed_or_rolled_back(con):
        yield


@contextmanager
def _committed_or_rolled_back(con: duckdb.DuckDBPyConnection) -> Iterator[None]:
    try:
        yield
    except BaseException:
        con.execute("ROLLBACK")
        raise
    con.execute("COMMIT")


def _lock(con: duckdb.DuckDBPyConnection, documents: Iterable[str]) -> None:
    """Serialise writers of the same documents until the transaction ends. The embedded file
    has one writing process, so only a shared catalog takes these locks."""
    if isinstance(con, PostgresCatalog):
        con.lock(sorted(set(documents)))
