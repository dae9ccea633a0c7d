"""The `loom` command as a user runs it: separate processes, real services."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

from extractor_sandbox.source import DECLARED_FORMATS
from loom_dagster import api
from loom_dagster.settings import LoomSettings


def loom(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "loom_dagster.cli", *args],
        capture_output=True,
        text=True,
        timeout=120,
        env=env or dict(os.environ),
    )


def test_search_answers_while_another_process_holds_the_catalog(
    loom_home: Path, tmp_path: Path
) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "a.md").write_text("# Backups\n\nSnapshots run nightly at two.\n")
    api.ingest_folder(folder)

    # Another process (a publishing step's switch, the folder sensor's tick) holds the file's lock.
    with duckdb.connect(str(LoomSettings.from_env().catalog_path)) as writer:
        writer.execute("BEGIN TRANSACTION")
        result = loom("search", "snapshots nightly")

    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("1. ")
    assert "Backups" in result.stdout and "lines 3-3" in result.stdout


def test_formats_says_what_the_reference_extractor_declares(loom_home: Path) -> None:
    result = loom("formats")
    assert result.returncode == 0, result.stderr
    lines = dict(line.split() for line in result.stdout.splitlines())
    assert len(lines) == 11
    assert {fmt for fmt, state in lines.items() if state == "available"} == set(DECLARED_FORMATS)
    assert set(lines.values()) <= {"available", "unavailable"}


def test_a_bad_setting_is_one_line_naming_it(loom_home: Path) -> None:
    result = loom("formats", env={**os.environ, "LOOM_DOCUMENT_EXTRACTORS_JSON": "{not json"})
    assert result.returncode == 1
    assert result.stderr.startswith("loom: invalid_setting: LOOM_DOCUMENT_EXTRACTORS_JSON")
    assert len(result.stderr.strip().splitlines()) == 1


def test_extractor_serve_takes_its_token_only_from_the_environment_or_a_file(
    tmp_path: Path,
) -> None:
    env = {k: v for k, v in os.environ.items() if k != "LOOM_EXTRACTOR_TOKEN"}
    result = loom("extractor", "serve", "--port", "0", env=env)
    assert result.returncode == 2
    assert (
        result.stderr.strip()
        == "loom-extractor: LOOM_EXTRACTOR_TOKEN must be at least 16 characters"
    )
    with pytest.raises(SystemExit):
        from loom_dagster.cli import main

        main(["extractor", "serve", "--token", "x" * 20])
