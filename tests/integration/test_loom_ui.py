"""`loom ui` stops cleanly and is the only daemon of its home (issue 38, part 3).

`loom ui` runs as a user runs it (the console script, a process of its own) on a loopback port;
what it started is read from /proc.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from dagster import DagsterInstance, DagsterRunStatus

from tests.integration.loom_command import LOOM, alive_among, descendants, loom

# From `loom ui` to dagster dev's webserver answering, on a busy 2-core machine.
STARTED_WITHIN_S = 180.0
# The bound: no process of `loom ui` is left this long after the signal.
GONE_WITHIN_S = 10.0


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def answering(port: int) -> bool:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/server_info", timeout=2) as answer:
            return bool(answer.status == 200)
    except OSError:
        return False


def wait(what: str, probe: object, timeout: float, log: Path) -> None:
    assert callable(probe)
    deadline = time.monotonic() + timeout
    while not probe():
        if time.monotonic() > deadline:
            tail = log.read_text(errors="replace")[-3000:] if log.exists() else ""
            raise AssertionError(
                f"{what}: not within {timeout:.0f} s; loom ui's output ends:\n{tail}"
            )
        time.sleep(0.5)


@contextmanager
def loom_ui(log: Path, env: dict[str, str] | None = None) -> Iterator[subprocess.Popen[bytes]]:
    """`loom ui` started and serving; killed with everything under it if the test left it up."""
    port = free_port()
    with open(log, "wb") as out:
        ui = subprocess.Popen(
            [*LOOM, "ui", "--port", str(port)],
            stdout=out,
            stderr=subprocess.STDOUT,
            env=env or dict(os.environ),
            start_new_session=True,
        )
    try:
        wait(
            "dagster dev's webserver",
            lambda: answering(port) or ui.poll() is not None,
            STARTED_WITHIN_S,
            log,
        )
        assert ui.poll() is None, log.read_text(errors="replace")[-3000:]
        yield ui
    finally:
        family = [ui.pid, *descendants(ui.pid)]
        for pid in alive_among(family):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        ui.wait(timeout=10)


def gone_within(pids: list[int], timeout: float) -> list[int]:
    """The pids of `pids` still alive after `timeout` seconds (none, as soon as none is)."""
    deadline = time.monotonic() + timeout
    while alive_among(pids) and time.monotonic() < deadline:
        time.sleep(0.1)
    return alive_among(pids)


def settled_folder(folder: Path) -> Path:
    folder.mkdir(parents=True)
    (folder / "note.md").write_text("# Note\n\nThe lighthouse keeper logged the storm.\n")
    past = time.time() - 120
    os.utime(folder / "note.md", (past, past))
    return folder


def test_sigterm_to_loom_ui_ends_every_process_it_started_and_the_run_it_launched(
    loom_home: Path, tmp_path: Path
) -> None:
    hold = tmp_path / "hold"
    hold.mkdir()
    added = loom("sources", "add", str(settled_folder(tmp_path / "docs")))
    assert added.returncode == 0, added.stderr
    # The run the folder sensor asks for is held at the end of its first step, so `loom ui`
    # is stopped with a run going (its worker, and the extractor it may have started).
    env = {**os.environ, "LOOM_TEST_HOLD_AT": "original", "LOOM_TEST_HOLD_DIR": str(hold)}
    log = tmp_path / "ui.log"
    with loom_ui(log, env) as ui:
        wait("a run held", (hold / "original.reached").exists, STARTED_WITHIN_S, log)
        family = [ui.pid, *descendants(ui.pid)]
        assert len(family) >= 4  # loom ui, dagster dev, its webserver, daemon, code server…
        run_worker = int((hold / "original.reached").read_text())
        assert run_worker in family

        ui.send_signal(signal.SIGTERM)

        assert gone_within(family, GONE_WITHIN_S) == []
        assert ui.wait(timeout=1) == 128 + signal.SIGTERM
    # Nothing of it is left anywhere, the processes it inherited as their reaper included.
    assert gone_within([ui.pid, *descendants(ui.pid)], 0) == []
    output = log.read_text(errors="replace")
    assert "loom ui: stopped by SIGTERM" in output
    with DagsterInstance.from_config(os.environ["DAGSTER_HOME"]) as instance:
        # Ended by its worker on the signal (failed), or marked canceled by `loom ui`: never
        # left STARTED, holding the catalog's slot.
        [run] = instance.get_runs()
        assert run.status in (DagsterRunStatus.FAILURE, DagsterRunStatus.CANCELED)


def test_a_second_loom_ui_or_an_ingest_on_a_home_whose_daemon_runs_says_so_in_one_line(
    loom_home: Path, tmp_path: Path
) -> None:
    folder = settled_folder(tmp_path / "docs")
    log = tmp_path / "ui.log"
    with loom_ui(log) as first:
        family = [first.pid, *descendants(first.pid)]

        second = loom("ui", "--port", str(free_port()), timeout=60)
        ingest = loom("ingest", str(folder), timeout=60)

        for refused in (second, ingest):
            assert refused.returncode == 1
            [line] = refused.stderr.splitlines()
            assert line.startswith(f"loom: daemon_running: loom ui (pid {first.pid}) runs")
        assert "loom ingest" in ingest.stderr
        # The refused `loom ui` started nothing: the first one's processes are all there is.
        assert sorted(alive_among(family)) == sorted(family)
        first.send_signal(signal.SIGINT)
        assert gone_within(family, GONE_WITHIN_S) == []
        assert first.wait(timeout=1) == 128 + signal.SIGINT

    # Its daemon gone, the home is free again.
    assert loom("ingest", str(folder)).returncode == 0


@pytest.fixture(autouse=True)
def _linux_only() -> None:
    if not Path("/proc/self/stat").exists():
        pytest.skip("reads processes from /proc")
