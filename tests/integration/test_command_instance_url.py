"""LOOM_DAGSTER_POSTGRES_URL unreachable or malformed: one line naming the setting and the
cause, at once, no password (issue 34 row 7: 63-190 lines of tracebacks after 14 s)."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from tests.integration.loom_command import loom

URLS = [
    (
        "postgresql+psycopg2://u:secretpw@127.0.0.1:1/dagster",
        'connection to server at "127.0.0.1", port 1 failed: Connection refused',
    ),
    ("postgresql+psycopg2://u:secretpw@[::1", "invalid dsn"),
    ("postgresql+psycopg2://u:se/cretpw@127.0.0.1/dagster", "invalid integer value"),
]


@pytest.mark.parametrize(("url", "cause"), URLS, ids=["unreachable", "malformed", "cut"])
@pytest.mark.parametrize("command", [["ingest"], ["gc", "--dry-run"]], ids=["ingest", "gc"])
def test_an_instance_database_that_cannot_be_opened_is_one_line(
    loom_home: Path, tmp_path: Path, url: str, cause: str, command: list[str]
) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "note.md").write_text("# Note\n\nThe lighthouse keeper logged the storm.\n")
    args = [*command, str(folder)] if command == ["ingest"] else command
    started = time.monotonic()
    result = loom(*args, env={**os.environ, "LOOM_DAGSTER_POSTGRES_URL": url}, timeout=60)
    assert time.monotonic() - started < 30
    assert result.returncode != 0
    [line] = result.stderr.splitlines()
    assert line.startswith(
        "loom: dagster_instance_unavailable: LOOM_DAGSTER_POSTGRES_URL: the Dagster instance's"
        " database cannot be opened: "
    ), line
    assert cause in line and "secret" not in line and "cretpw" not in line
