"""The catalog's two backends for its unit tests: the embedded DuckDB file, and PostgreSQL (one
throwaway server per test process, tests/support/postgres.py; a fresh schema per test).

A test asks for `backend` through the fixtures of its module, parametrized over BACKENDS; the
PostgreSQL case is skipped only where no server is installed (scripts/setup installs one as root
with LOOM_SETUP_POSTGRES=1, which CI sets).
"""

from __future__ import annotations

import atexit
import itertools
import os
import tempfile
from contextlib import ExitStack
from pathlib import Path

import duckdb
import psycopg2
import pytest

from loom_dagster import catalog
from tests.support.postgres import local_postgres, server_binaries

BACKENDS = [
    "duckdb",
    pytest.param(
        "postgres",
        marks=pytest.mark.skipif(server_binaries() is None, reason="no PostgreSQL server"),
    ),
]

_server: str | None = None
_schemas = itertools.count()


def server_url() -> str:
    """The URL of this process's PostgreSQL server, started on first use, stopped at exit."""
    global _server
    if _server is None:
        stack = ExitStack()
        atexit.register(stack.close)
        root = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="loom-catalog-pg-")))
        _server = stack.enter_context(local_postgres(root))
    return _server


def fresh_url() -> str:
    """A URL whose connections see only a new, empty schema of the server."""
    url = server_url().replace("postgresql+psycopg2://", "postgresql://")
    name = f"t{os.getpid()}_{next(_schemas)}"
    admin = psycopg2.connect(url)
    try:
        admin.autocommit = True
        admin.cursor().execute(f"CREATE SCHEMA {name}")
    finally:
        admin.close()
    return f"{url}?options=-csearch_path%3D{name}"


def open_catalog(backend: str, tmp_path: Path) -> duckdb.DuckDBPyConnection:
    """A catalog connection with the schema in place, on `backend`."""
    if backend == "duckdb":
        con = duckdb.connect(str(tmp_path / "catalog.duckdb"))
        catalog.ensure_schema(con)
        return con
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    return catalog.open_shared(fresh_url(), home)
