"""`loom search` answered by the home's resident searcher, as a user runs it: real `loom`
processes, a real resident process, a home published through the real pipeline.

Every test starts the resident itself and stops it (and waits for it to be gone) at the end;
the rest of the suite runs with LOOM_SEARCH_RESIDENT=off (tests/conftest.py)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

import pytest

from loom_dagster import api
from loom_dagster.search.resident import Place, ResidentClient
from tests.integration.loom_command import alive, loom

RUNBOOK = """\
# Disk runbook

## E-DISK-042: volume full

Free space by rotating the ingest logs, then expand the volume.
"""

Result = tuple[int, str, str]


def wait_for(predicate: Callable[[], Any], what: str, seconds: float = 90.0) -> Any:
    deadline = time.monotonic() + seconds
    while not (value := predicate()):
        assert time.monotonic() < deadline, f"waited {seconds} s for {what}"
        time.sleep(0.05)
    return value


def gone(pid: int) -> Callable[[], bool]:
    return lambda: not alive(pid)


class Resident:
    """The home's resident as the tests see it: started by a `loom search`, asked for its state
    over its socket, stopped and waited for."""

    def __init__(self, env: dict[str, str]) -> None:
        self.env = env
        self.client = ResidentClient(env)
        self.pids: set[int] = set()

    def state(self) -> dict[str, Any] | None:
        state = ResidentClient(self.env).status()
        if state is not None:
            self.pids.add(int(state["pid"]))
        return state

    def answered(self) -> int:
        state = self.state()
        assert state is not None, "no resident answers"
        return int(state["answered"])

    def start(self) -> int:
        """A first search (in-process), then the resident it started; its pid."""
        result = self.search("volume")
        assert result[0] == 0, result
        state = wait_for(self.state, "the resident to answer")
        return int(state["pid"])

    def search(self, *args: str, env: dict[str, str] | None = None) -> Result:
        done = loom("search", *args, env=env or self.env)
        return (done.returncode, done.stdout, done.stderr)

    def in_process(self, *args: str) -> Result:
        return self.search(*args, env={**self.env, "LOOM_SEARCH_RESIDENT": "off"})

    def stop(self) -> None:
        ResidentClient(self.env).stop()
        for pid in self.pids:
            wait_for(gone(pid), f"resident {pid} to exit", 30)


ResidentT = TypeVar("ResidentT", bound=Resident)


@pytest.fixture
def ops_folder(loom_home: Path, tmp_path: Path) -> Path:
    folder = tmp_path / "ops"
    (folder / "runbooks").mkdir(parents=True)
    (folder / "runbooks" / "disk.md").write_text(RUNBOOK)
    (folder / "notes.txt").write_text("The volume full alarm fired twice.\n")
    return folder


@pytest.fixture
def resident(loom_home: Path) -> Iterator[Resident]:
    with stopped_after(Resident(resident_env())) as running:
        yield running


def resident_env() -> dict[str, str]:
    return {**os.environ, "LOOM_SEARCH_RESIDENT": "on", "LOOM_SEARCH_RESIDENT_IDLE": "120"}


@contextmanager
def stopped_after(running: ResidentT) -> Iterator[ResidentT]:
    """`running`, its resident stopped at the end and waited for (tests/integration/
    test_query_resident.py uses it too)."""
    try:
        yield running
    finally:
        try:
            running.stop()
        finally:
            for pid in running.pids:  # only if it would not stop: never leave it behind
                if alive(pid):
                    os.kill(pid, signal.SIGKILL)


def ingest(folder: Path) -> None:
    report = api.ingest_folder(folder, name="ops", tags=["Ops", "oncall"])
    assert report.conserved


REQUESTS = [
    ("volume full",),
    ("E-DISK-042", "--json"),
    ("volume", "--explain", "--tag", "ops", "--path", "runbooks/"),
    ("volume", "--format", "markdown", "--block-type", "paragraph", "--limit", "1"),
    ("alarm", "--source", "elsewhere"),
    ("zzzqqq",),
    # refused: one line on stderr, exit 2
    ("...",),
    ("volume", "--limit", "0"),
    ("volume", "--limit", "ten"),
    ("volume", "--format", "docx2"),
    ("volume", "--tag", "nosuchtag"),
    ("volume", "--tag", "bad tag!"),
]


def test_the_resident_answers_byte_for_byte_as_the_command_in_its_own_process(
    ops_folder: Path, resident: Resident
) -> None:
    ingest(ops_folder)
    resident.start()
    expected = [resident.in_process(*request) for request in REQUESTS]
    before = resident.answered()
    served = [resident.search(*request) for request in REQUESTS]
    assert resident.answered() == before + len(REQUESTS)  # each was the resident's answer
    for request, want, got in zip(REQUESTS, expected, served, strict=True):
        assert got == want, request
    assert json.loads(served[1][1])["hits"][0]["found_by"] == ["exact", "lexical", "vector"]
    assert [status for status, _, _ in served[-6:]] == [2] * 6


def test_a_served_command_imports_no_search_module(ops_folder: Path, resident: Resident) -> None:
    ingest(ops_folder)
    resident.start()
    before = resident.answered()
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "loom_dagster.cli", "search", "volume"],
        capture_output=True,
        text=True,
        env=resident.env,
        timeout=120,
        check=True,
    )
    assert resident.answered() == before + 1
    imported = {
        line.split("|")[-1].strip()
        for line in done.stderr.splitlines()
        if line.startswith("import time:")
    }
    assert "loom_dagster.search.resident" in imported
    heavy = (
        "numpy",
        "tantivy",
        "tokenizers",
        "usearch",
        "loom_dagster.search.lexical",
        "loom_dagster.search.service",
        "loom_dagster.search.vector",
        "loom_dagster.search.embedding",
        "loom_dagster.settings",
    )
    assert sorted(name for name in imported if name.split(".")[0] in heavy or name in heavy) == []


def test_a_revision_published_or_retired_after_it_started_is_in_or_gone_from_the_next_answer(
    ops_folder: Path, resident: Resident
) -> None:
    # Started on an empty home: no lexical hit and no vector generation yet.
    assert resident.search("volume") == (0, "no hits\n", "")
    pid = wait_for(resident.state, "the resident to answer")["pid"]

    ingest(ops_folder)  # published, and the first vectors written, while it runs
    before = resident.answered()
    first = resident.search("E-DISK-042", "--json")
    assert first == resident.in_process("E-DISK-042", "--json")
    assert json.loads(first[1])["hits"][0]["found_by"] == ["exact", "lexical", "vector"]

    (ops_folder / "runbooks" / "disk.md").write_text(RUNBOOK.replace("volume", "quota"))
    ingest(ops_folder)  # a new revision of the runbook
    revised = resident.search("quota", "--json")
    assert revised == resident.in_process("quota", "--json")
    [hit] = json.loads(revised[1])["hits"]
    assert hit["revision"] != json.loads(first[1])["hits"][0]["revision"]

    (ops_folder / "runbooks" / "disk.md").unlink()
    ingest(ops_folder)  # the runbook retired
    assert resident.search("quota") == (0, "no hits\n", "")
    assert resident.answered() == before + 3
    state = resident.state()
    assert state is not None and state["pid"] == pid  # the same process all along


def test_four_clients_at_once_get_their_own_answers(ops_folder: Path, resident: Resident) -> None:
    ingest(ops_folder)
    resident.start()
    requests = [("volume", "--json"), ("alarm",), ("E-DISK-042", "--explain"), ("...",)]
    expected = [resident.in_process(*request) for request in requests]
    before = resident.answered()
    got: dict[int, Result] = {}
    threads = [
        threading.Thread(target=lambda n=n: got.__setitem__(n, resident.search(*requests[n])))
        for n in range(len(requests))
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(180)
    assert [got[n] for n in range(len(requests))] == expected
    assert resident.answered() == before + len(requests)


def test_a_killed_resident_leaves_a_stale_socket_the_next_command_clears(
    ops_folder: Path, resident: Resident
) -> None:
    ingest(ops_folder)
    pid = resident.start()
    os.kill(pid, signal.SIGKILL)
    wait_for(lambda: not alive(pid), "the resident to die", 30)
    socket_path = Place(resident.client.place.home).socket
    assert os.path.exists(socket_path)  # nobody removed it

    assert resident.search("volume full") == resident.in_process("volume full")
    successor = wait_for(resident.state, "a new resident")["pid"]
    assert successor != pid


def test_a_resident_started_with_other_settings_is_replaced(
    ops_folder: Path, resident: Resident
) -> None:
    ingest(ops_folder)
    pid = resident.start()
    other = {**resident.env, "LOOM_BATCH_SIZE": "7"}
    status = ResidentClient(other).status()
    assert status is not None and not status["same_version"]
    # Asked, it answers "mismatch": the command searches itself and replaces it.
    assert resident.search("volume", env=other) == resident.in_process("volume")
    wait_for(lambda: not alive(pid), "the outdated resident to exit", 30)
    replacement = Resident(other)
    state = wait_for(replacement.state, "the replacement")
    resident.pids.add(int(state["pid"]))
    assert state["same_version"] and state["answered"] == 0


def test_it_exits_when_idle_and_when_its_home_is_removed(
    ops_folder: Path, resident: Resident, loom_home: Path
) -> None:
    ingest(ops_folder)
    resident.env["LOOM_SEARCH_RESIDENT_IDLE"] = "1"
    pid = resident.start()
    wait_for(lambda: not alive(pid), "the idle resident to exit", 60)
    assert not os.path.exists(Place(str(loom_home)).socket)

    resident.env["LOOM_SEARCH_RESIDENT_IDLE"] = "120"
    pid = resident.start()
    shutil.rmtree(loom_home)
    wait_for(lambda: not alive(pid), "the resident of a removed home to exit", 60)


def test_off_starts_none_and_asks_none(ops_folder: Path, resident: Resident) -> None:
    ingest(ops_folder)
    off = {**resident.env, "LOOM_SEARCH_RESIDENT": "off"}
    assert resident.search("volume", env=off)[0] == 0
    assert not os.path.exists(Place(resident.client.place.home).folder)
    assert resident.state() is None

    resident.start()
    before = resident.answered()
    resident.search("volume", env=off)
    assert resident.answered() == before  # a running one is not asked either


def test_loom_resident_status_and_stop(ops_folder: Path, resident: Resident) -> None:
    ingest(ops_folder)
    assert loom("resident", "status", env=resident.env).stdout == "no resident searcher\n"
    pid = resident.start()
    status = loom("resident", "status", env=resident.env)
    assert status.stdout.startswith(f"running  pid {pid}  ")
    stopped = loom("resident", "stop", env=resident.env)
    assert (stopped.returncode, stopped.stdout) == (0, "stopped\n")
    wait_for(lambda: not alive(pid), "the stopped resident to exit", 30)
    assert not os.path.exists(Place(resident.client.place.home).socket)
    assert loom("resident", "stop", env=resident.env).stdout == "no resident searcher\n"
