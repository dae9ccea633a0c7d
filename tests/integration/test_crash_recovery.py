"""Issue 12: a real `loom ingest` killed at each step, told to stop, or started twice.

- 12.2: a run whose process was killed stays STARTED holding the `loom_catalog` slot; the next
  ingest marks it failed and frees the slot instead of waiting on it for ever.
- 12.3: killed between the catalog's commit and the index's, the next ingest repairs the index,
  and the identity counts what search can find; the run held there has closed the catalog
  (issue 39: publishing opens it for its statements only).
- SIGTERM ends an ingest that waits for the pool: exit 143, one line, its run ended, its slot freed.
- 12.6: a second ingest of one folder waits for the first, says so, then finds nothing to do.

The moment of a kill is exact: LOOM_TEST_HOLD_AT makes the process stop at a named point and
say so in a file (loom_dagster/hold.py), and the test kills it there.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import duckdb
import pytest
from dagster import DagsterInstance, DagsterRun, DagsterRunStatus
from dagster._utils.concurrency import ConcurrencyKeyInfo

from loom_dagster import api, catalog, hold
from loom_dagster.resources.storage import CatalogResource
from loom_dagster.runs import PROCESS_TAG
from loom_dagster.search.lexical import LexicalIndex
from loom_dagster.settings import LoomSettings

POOL = "loom_catalog"
WORDS = {"guide.md": "aardvark", "notes/todo.txt": "bandicoot", "runbook.md": "capybara"}


def make_folder(root: Path, words: dict[str, str] = WORDS) -> Path:
    for name, word in words.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"# {name}\n\nThe {word} is in this file only.\n")
    return root


def loom(
    *args: str, hold_at: str | None = None, holds: Path | None = None
) -> subprocess.Popen[str]:
    env = dict(os.environ)
    if hold_at is not None:
        assert holds is not None
        env[hold.ENV_AT], env[hold.ENV_DIR] = hold_at, str(holds)
    return subprocess.Popen(
        [sys.executable, "-m", "loom_dagster.cli", *args],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def wait_until(
    done: Path | Callable[[], bool], process: subprocess.Popen[str], timeout_s: float = 180.0
) -> None:
    deadline = time.monotonic() + timeout_s
    while not (done.exists() if isinstance(done, Path) else done()):
        if process.poll() is not None:
            assert process.stderr is not None
            raise AssertionError(
                f"loom ended first ({process.returncode}): {process.stderr.read()}"
            )
        assert time.monotonic() < deadline, "timed out waiting"
        time.sleep(0.05)


def pool_info() -> ConcurrencyKeyInfo:
    return DagsterInstance.get().event_log_storage.get_concurrency_info(POOL)


def runs_of(pid: int) -> list[DagsterRun]:
    return [
        run
        for run in DagsterInstance.get().get_runs()
        if run.tags.get(PROCESS_TAG, "").split("|")[2:3] == [str(pid)]
    ]


def assert_every_file_searchable_once(words: dict[str, str] = WORDS) -> None:
    for path, word in words.items():
        hits = api.search(word, limit=10)
        # The vector leg ranks every chunk; those holding the word must be the file's, once.
        assert [hit.chunk.path for hit in hits if word in hit.chunk.text] == [path], word
    settings = LoomSettings.from_env()
    with CatalogResource(database=str(settings.catalog_path)).connect() as con:
        chunks = catalog.counts(con)["chunks"]
    assert LexicalIndex(settings.search_dir).count() == chunks


@pytest.mark.slow
@pytest.mark.parametrize("point", hold.POINTS)
def test_an_ingest_killed_at_any_step_is_finished_by_the_next_with_every_file_searchable_once(
    loom_home: Path, tmp_path: Path, point: str
) -> None:
    folder = make_folder(tmp_path / "docs")
    holds = tmp_path / "holds"
    holds.mkdir()
    first = loom("ingest", str(folder), hold_at=point, holds=holds)
    wait_until(holds / f"{point}.reached", first)
    if point in ("published", "index") and catalog.catalog_url() is None:
        # Switched, the index not (or just) written: the run has closed the catalog, so the
        # sensor, a query or another process opens it meanwhile (issue 39).
        catalog_file = LoomSettings.from_env().catalog_path
        duckdb.connect(str(catalog_file), read_only=True).close()
    first.kill()
    first.wait()
    [killed] = runs_of(first.pid)
    assert killed.status == DagsterRunStatus.STARTED
    if point in ("published", "index"):
        # The dead run still holds the catalog's one slot: without reaping, the next waits for ever.
        assert pool_info().active_run_ids == {killed.run_id}

    second = loom("ingest", str(folder))
    out, err = second.communicate(timeout=300)

    assert second.returncode == 0, err
    last = out.strip().splitlines()[-1]
    identity = re.fullmatch(
        r"files 3 = published (\d) \+ refused 0 \+ unchanged (\d) \+ skipped 0", last
    )
    assert identity and int(identity[1]) + int(identity[2]) == 3, out
    assert_every_file_searchable_once()
    run = DagsterInstance.get().get_run_by_id(killed.run_id)
    assert run is not None and run.status == DagsterRunStatus.FAILURE
    assert pool_info().active_run_ids == set()


@pytest.mark.slow
def test_sigterm_ends_an_ingest_waiting_for_the_catalog_pool(
    loom_home: Path, tmp_path: Path
) -> None:
    holds = tmp_path / "holds"
    holds.mkdir()
    holder = loom("ingest", str(make_folder(tmp_path / "one")), hold_at="slot", holds=holds)
    try:
        wait_until(holds / "slot.reached", holder)
        waiting = loom("ingest", str(make_folder(tmp_path / "two", {"other.md": "dugong"})))
        wait_until(lambda: pool_info().pending_step_count == 1, waiting)

        waiting.send_signal(signal.SIGTERM)
        out, err = waiting.communicate(timeout=60)

        assert waiting.returncode == 143
        assert err.strip().splitlines()[-1] == "loom: interrupted: stopped by SIGTERM"
        assert "Traceback" not in err
        [run] = runs_of(waiting.pid)
        assert run.status in (DagsterRunStatus.CANCELED, DagsterRunStatus.FAILURE)
        info = pool_info()
        assert run.run_id not in info.pending_run_ids | info.active_run_ids
    finally:
        holder.kill()
        holder.wait()


@pytest.mark.slow
def test_a_second_ingest_of_one_folder_waits_for_the_first_then_finds_nothing_to_do(
    loom_home: Path, tmp_path: Path
) -> None:
    folder = make_folder(tmp_path / "docs")
    holds = tmp_path / "holds"
    holds.mkdir()
    first = loom("ingest", str(folder), hold_at="original", holds=holds)
    wait_until(holds / "original.reached", first)
    second = loom("ingest", str(folder))
    said: list[str] = []

    def second_says_it_waits() -> bool:
        assert second.stderr is not None
        said.append(second.stderr.readline())
        return said[-1].startswith("waiting for another ingest of docs (pid ")

    wait_until(second_says_it_waits, second)
    assert said[-1].strip() == f"waiting for another ingest of docs (pid {first.pid})"
    (holds / "original.release").write_text("")
    first_out, _ = first.communicate(timeout=300)
    second_out, _ = second.communicate(timeout=300)

    assert first.returncode == second.returncode == 0
    assert (
        first_out.strip().splitlines()[-1]
        == "files 3 = published 3 + refused 0 + unchanged 0 + skipped 0"
    )
    assert (
        second_out.strip().splitlines()[-1]
        == "files 3 = published 0 + refused 0 + unchanged 3 + skipped 0"
    )
    assert len(DagsterInstance.get().get_runs()) == 1  # extracted once
