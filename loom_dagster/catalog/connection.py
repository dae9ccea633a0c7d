"""Opening the catalog: the embedded DuckDB file (connect, which waits out another process's hold
on it) or, with LOOM_CATALOG_URL set, the shared PostgreSQL database (open_shared).
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import duckdb

from loom_dagster.catalog.postgres import PostgresCatalog, catalog_url, index_id_of
from loom_dagster.catalog.schema import ensure_schema


def open_shared(url: str, home: str | os.PathLike[str]) -> duckdb.DuckDBPyConnection:
    """A connection to the PostgreSQL catalog at `url`, for the home whose search index it
    marks, with the schema in place. It speaks the subset of DuckDB's connection the catalog's
    functions use (execute, fetchone, fetchall, close), hence the type it is given."""
    from typing import cast

    con = PostgresCatalog(url, index_id=index_id_of(Path(home)))
    try:
        ensure_schema(cast(duckdb.DuckDBPyConnection, con))
    except BaseException:
        con.close()
        raise
    return cast(duckdb.DuckDBPyConnection, con)


@contextmanager
def connect(
    path: str | os.PathLike[str], *, retries: int = 10
) -> Iterator[duckdb.DuckDBPyConnection]:
    """A connection to the catalog file with its schema in place, for a command that runs no
    Dagster (resources/storage.py's CatalogResource is the same for the code location).

    DuckDB takes one process per file: while another holds it, the connection is tried again
    after 0.1 s, 0.2 s, 0.4 s, ... up to `retries` times (as DuckDBResource does), so a short
    write elsewhere is a wait here; the last refusal is raised.

    With LOOM_CATALOG_URL set, the catalog is that PostgreSQL database instead, and `path`
    names the home whose search index the connection marks (the file is not opened).
    """
    url = catalog_url()
    if url is not None:
        shared = open_shared(url, Path(path).parent)
        try:
            yield shared
        finally:
            shared.close()
        return
    attempt = 0
    while True:
        try:
            con = duckdb.connect(str(path))
            break
        except duckdb.IOException:
            if attempt >= retries:
                raise
            time.sleep(0.1 * 2**attempt)
            attempt += 1
    try:
        ensure_schema(con)
        yield con
    finally:
        con.close()
