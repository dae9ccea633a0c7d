"""An extractor that cannot be reached: each file is tried again, then the whole step is retried
with backoff, then the file ends `retries_exhausted`; nothing half-published is served, the
earlier revision keeps serving, and the next ingest tries the file again."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest
from dagster import DagsterEventType, DagsterInstance

from loom_dagster import api
from loom_dagster.cli import main
from loom_dagster.extractor.local import RunningExtractor
from loom_dagster.extractor.settings import ENV_URL


def a_port_nobody_listens_on() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.mark.slow
def test_an_unreachable_extractor_is_retried_then_ends_retries_exhausted_and_the_old_revision_keeps_serving(
    loom_home: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    reference_service: RunningExtractor,
) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "a.md").write_text("# Title\n\nThe first words.\n")
    first = api.ingest_folder(folder)
    [published] = first.outcomes
    (folder / "a.md").write_text("# Title\n\nThe second words.\n")

    monkeypatch.setenv(ENV_URL, f"http://127.0.0.1:{a_port_nobody_listens_on()}")
    monkeypatch.setenv("LOOM_RETRY_ATTEMPTS", "2")
    monkeypatch.setenv("LOOM_RETRY_DELAY_S", "0.05")
    assert main(["ingest", str(folder)]) == 1

    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("failed     a.md  ")
    assert "retries_exhausted: every try failed; the last: extractor_unavailable: " in out[0]
    assert (
        out[-1]
        == "files 1 = published 0 + refused 0 + unchanged 0 + skipped 0  (does not hold: 1 failed)"
    )
    [hit] = api.search("words")
    assert hit.chunk.revision == published.revision and "first" in hit.chunk.text

    run = DagsterInstance.get().get_run_records(limit=1)[0].dagster_run
    retries = (
        DagsterInstance.get()
        .get_records_for_run(run.run_id, of_type=DagsterEventType.STEP_UP_FOR_RETRY)
        .records
    )
    assert len(retries) == 2  # LOOM_RETRY_ATTEMPTS, each after a growing delay

    # Spent retries say "not now", not "never": with the service back, the file publishes.
    monkeypatch.setenv(ENV_URL, reference_service.url)
    [again] = api.ingest_folder(folder).outcomes
    assert again.status == "published"
    [hit] = api.search("words")
    assert "second" in hit.chunk.text
