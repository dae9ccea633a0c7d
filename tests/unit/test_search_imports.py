"""`loom search` starts fast because it imports only what a search needs: a guard that fails
when a change brings Dagster, DuckDB, pyarrow or fsspec back onto its path (README, "Search
start-up"). Not a timing: what is imported, in a fresh interpreter."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

HEAVY = ("dagster", "duckdb", "pyarrow", "fsspec", "httpx", "loom_dagster.pipeline")

PROBE = """
import contextlib, io, json, sys
from loom_dagster import cli
with contextlib.redirect_stdout(io.StringIO()):
    status = cli.main(["search", "disk full", "--tag", "ops", "--json"])
print(json.dumps([status, sorted(name for name in sys.modules if name.split(".")[0] in %r
                                  or name == "loom_dagster.pipeline")]))
"""


def test_the_search_command_imports_no_heavy_module(tmp_path: Path) -> None:
    env = {**os.environ, "LOOM_HOME": str(tmp_path / "home")}
    env.pop("DAGSTER_HOME", None)
    done = subprocess.run(
        [sys.executable, "-c", PROBE % (HEAVY,)],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=True,
    )
    status, heavy = json.loads(done.stdout.splitlines()[-1])
    # An empty index carries no tag: the request is refused (exit 2) after the search modules
    # have all been loaded, which is what this looks at.
    assert status == 2, done.stderr
    assert heavy == []
