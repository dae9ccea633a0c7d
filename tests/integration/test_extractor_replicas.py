"""Two replicas of the reference extractor behind one setting, one stopped in the middle of a
`loom ingest`: the other takes its files, and every file is published exactly once."""

from __future__ import annotations

import json
import threading
import time
from contextlib import ExitStack
from pathlib import Path

import pytest

from loom_dagster.extractor.local import reference_extractor
from loom_dagster.extractor.settings import ENV_TOKEN, ENV_TOKENS, ENV_URL
from tests.integration.loom_command import loom

FILES = 24


def test_a_replica_stopped_mid_run_leaves_its_files_to_the_other(
    loom_home: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    for number in range(FILES):
        (docs / f"page-{number:02}.md").write_text(f"# Page {number}\n\nCode R-{number:03}.\n")
    with ExitStack() as first_stack, ExitStack() as second_stack:
        first = first_stack.enter_context(reference_extractor())
        second = second_stack.enter_context(reference_extractor())
        monkeypatch.setenv(ENV_URL, f"{first.url} {second.url}")
        monkeypatch.delenv(ENV_TOKEN)
        monkeypatch.setenv(
            ENV_TOKENS, json.dumps({first.url: first.token, second.url: second.token})
        )
        monkeypatch.setenv("LOOM_BATCH_SIZE", "6")
        artifacts = loom_home / "store" / "artifacts"
        seen_at_stop: list[int] = []

        def stop_the_second_once_files_are_extracted() -> None:
            deadline = time.monotonic() + 300
            while time.monotonic() < deadline and not (
                artifacts.is_dir() and sum(1 for _ in artifacts.rglob("*.json")) >= 3
            ):
                time.sleep(0.05)
            second_stack.close()
            seen_at_stop.append(sum(1 for _ in artifacts.rglob("*.json")))

        stopper = threading.Thread(target=stop_the_second_once_files_are_extracted)
        stopper.start()
        result = loom("ingest", str(docs), timeout=900)
        stopper.join()

    assert result.returncode == 0, result.stderr
    assert seen_at_stop and seen_at_stop[0] < FILES  # stopped while files were left to extract
    assert f"files {FILES} = published {FILES} + refused 0" in result.stdout, result.stdout
    published = [
        line.split()[1] for line in result.stdout.splitlines() if line.startswith("published")
    ]
    assert sorted(published) == sorted(p.name for p in docs.iterdir())  # each exactly once
    for number in (0, 11, 23):
        found = loom("search", "--json", f"R-{number:03}")
        assert json.loads(found.stdout)["hits"][0]["path"] == f"page-{number:02}.md"
