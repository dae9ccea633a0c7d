"""The resident searcher's socket protocol, with a real server on a real Unix socket in a
thread of this process and a recording answerer in place of the search (the search itself is
tests/integration/test_search_resident.py's): who is answered, what is refused, when it exits."""

from __future__ import annotations

import json
import os
import shutil
import socket
import stat
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from loom_dagster.cli.resident_server import ResidentServer, take_lock
from loom_dagster.errors import SettingsError
from loom_dagster.search import resident
from loom_dagster.search.resident import (
    DEFAULT_IDLE_SECONDS,
    MAX_REQUEST_BYTES,
    PROTOCOL,
    Place,
    ResidentClient,
    _code_fingerprint,
    home_of,
    idle_seconds,
    key_for,
)
from loom_dagster.settings import LoomSettings

FIELDS: dict[str, Any] = {
    "text": "disk full",
    "limit": "10",
    "formats": [],
    "sources": [],
    "tags": [],
    "block_types": [],
    "path": "",
    "json": False,
    "explain": False,
}


def client_for(home: Path, **env: str) -> ResidentClient:
    return ResidentClient({"LOOM_HOME": str(home), "LOOM_SEARCH_RESIDENT": "on", **env})


def wait_for(predicate: Callable[[], bool], what: str, seconds: float = 30.0) -> None:
    deadline = time.monotonic() + seconds
    while not predicate():
        assert time.monotonic() < deadline, f"waited {seconds} s for {what}"
        time.sleep(0.02)


class Serving:
    def __init__(self, server: ResidentServer, thread: threading.Thread) -> None:
        self.server = server
        self.thread = thread
        self.asked: list[Mapping[str, Any]] = []
        self.queries: list[tuple[str, Mapping[str, Any]]] = []


@contextmanager
def serving(
    home: Path,
    *,
    key: str | None = None,
    uid: int | None = None,
    idle: float = 600.0,
    hold: threading.Event | None = None,
    defect: bool = False,
    query_hold: threading.Event | None = None,
) -> Iterator[Serving]:
    place = Place(str(home))
    assert place.make_private()

    def answer(fields: Mapping[str, Any]) -> dict[str, Any]:
        running.asked.append(fields)
        if hold is not None:
            hold.wait(60)  # a resident stuck in a search
        if defect and len(running.asked) == 1:
            raise RuntimeError("a defect in the search")
        return {"status": "ok", "exit": 0, "stdout": f"hits for {fields['text']}\n", "stderr": ""}

    def answer_query(op: str, fields: Mapping[str, Any]) -> dict[str, Any]:
        running.queries.append((op, fields))
        if query_hold is not None:
            query_hold.wait(60)  # a query that takes long
        said = fields.get("text", fields.get("plan"))
        return {"status": "ok", "exit": 0, "stdout": f"{op} rows for {said}\n", "stderr": ""}

    server = ResidentServer(
        place,
        client_for(home).key if key is None else key,
        answer,
        idle=idle,
        uid=uid,
        answer_query=answer_query,
    )
    server.bind()
    thread = threading.Thread(target=server.serve, daemon=True)
    running = Serving(server, thread)
    thread.start()
    try:
        yield running
    finally:
        server.request_stop()
        thread.join(30)
        assert not thread.is_alive()


def raw_exchange(home: Path, data: bytes) -> dict[str, Any]:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as connection:
        connection.settimeout(30)
        with Place(str(home)).socket_path() as path:
            connection.connect(path)
        connection.sendall(data)
        connection.shutdown(socket.SHUT_WR)
        parts = []
        while part := connection.recv(65536):
            parts.append(part)
    reply: dict[str, Any] = json.loads(b"".join(parts))
    return reply


def test_the_home_is_resolved_as_the_settings_resolve_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    for env in ({}, {"LOOM_HOME": "~/x/../y"}, {"LOOM_HOME": "rel/home"}):
        assert home_of(env) == str(LoomSettings.from_env(env).home)


def test_a_resident_of_this_home_answers_with_what_it_rendered(tmp_path: Path) -> None:
    with serving(tmp_path) as running:
        answer = client_for(tmp_path).search(FIELDS)
    assert answer is not None and (answer.status, answer.stdout) == (0, "hits for disk full\n")
    assert running.asked == [FIELDS]


def test_its_folder_is_private_and_its_socket_0600(tmp_path: Path) -> None:
    os.chmod(tmp_path, 0o755)
    with serving(tmp_path):
        place = Place(str(tmp_path))
        assert stat.S_IMODE(os.stat(place.folder).st_mode) == 0o700
        assert stat.S_IMODE(os.stat(place.socket).st_mode) == 0o600
        assert stat.S_ISSOCK(os.stat(place.socket).st_mode)


def test_another_users_process_gets_no_answer(tmp_path: Path) -> None:
    # The server expects another uid than this process's: SO_PEERCRED names ours, so this
    # connection is what another user's would be.
    with serving(tmp_path, uid=os.geteuid() + 1) as running:
        assert client_for(tmp_path).search(FIELDS) is None
    assert running.asked == []


def test_a_resident_of_another_user_is_not_sent_the_request(tmp_path: Path) -> None:
    with serving(tmp_path) as running:
        client = client_for(tmp_path)
        client.uid = os.geteuid() + 1  # SO_PEERCRED names this process's user: not the expected one
        assert client.search(FIELDS) is None
    assert running.asked == []


def test_a_folder_others_can_enter_is_not_used(tmp_path: Path) -> None:
    with serving(tmp_path) as running:
        os.chmod(Place(str(tmp_path)).folder, 0o755)
        assert client_for(tmp_path).search(FIELDS) is None
    assert running.asked == []


def test_a_request_past_the_bound_is_refused_and_the_resident_answers_the_next(
    tmp_path: Path,
) -> None:
    with serving(tmp_path) as running:
        reply = raw_exchange(tmp_path, b" " * (MAX_REQUEST_BYTES + 1))
        assert reply == {"status": "refused", "reason": "too_large"}
        # The client does not even send one: it searches in its own process.
        huge = {**FIELDS, "text": "word " * (MAX_REQUEST_BYTES // 5)}
        assert client_for(tmp_path).search(huge) is None
        assert client_for(tmp_path).search(FIELDS) is not None
    assert running.asked == [FIELDS]


@pytest.mark.parametrize(
    "request_body",
    [
        b"{not json",
        b"[1, 2]",
        json.dumps(
            {"protocol": PROTOCOL, "op": "search", "search": {**FIELDS, "limit": 10}}
        ).encode(),
        json.dumps(
            {"protocol": PROTOCOL, "op": "search", "search": {**FIELDS, "tags": [1]}}
        ).encode(),
        json.dumps(
            {"protocol": PROTOCOL, "op": "search", "search": {**FIELDS, "extra": ""}}
        ).encode(),
        json.dumps({"protocol": PROTOCOL, "op": "launch"}).encode(),
    ],
)
def test_a_malformed_request_is_refused(tmp_path: Path, request_body: bytes) -> None:
    client = client_for(tmp_path)
    with serving(tmp_path) as running:
        if b'"op": "search"' in request_body:  # with the right key, so only the shape is wrong
            request_body = request_body.replace(b'"op"', f'"key": "{client.key}", "op"'.encode())
        reply = raw_exchange(tmp_path, request_body)
    assert reply == {"status": "refused", "reason": "bad_request"}
    assert running.asked == []


def test_a_resident_of_another_checkout_version_or_setting_is_not_used(tmp_path: Path) -> None:
    with serving(tmp_path, key="another checkout's key") as running:
        client = client_for(tmp_path)
        assert client.search(FIELDS) is None
        assert client.outdated  # so the command replaces it after searching itself
        older = json.dumps({"protocol": PROTOCOL - 1, "op": "search"}).encode()
        assert raw_exchange(tmp_path, older) == {"status": "mismatch"}
    assert running.asked == []


def test_the_key_names_the_home_the_settings_and_the_code(tmp_path: Path) -> None:
    env = {"LOOM_HOME": "ignored", "LOOM_EMBEDDER": "ngram"}
    key = key_for(env, "/a")
    assert key_for(env, "/b") != key
    assert key_for({**env, "LOOM_EMBEDDER": "wordllama"}, "/a") != key
    # The resident's own switches are not the search's settings.
    assert key_for({**env, "LOOM_SEARCH_RESIDENT_IDLE": "5"}, "/a") == key
    module = tmp_path / "pkg" / "mod.py"
    module.parent.mkdir()
    module.write_text("A = 1\n")
    before = _code_fingerprint(str(tmp_path))
    module.write_text("A = 22\n")
    assert _code_fingerprint(str(tmp_path)) != before


def test_the_key_names_the_checkout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    env = {"LOOM_EMBEDDER": "ngram"}
    key = key_for(env, "/a")
    other = tmp_path / "other-checkout" / "loom_dagster"
    other.mkdir(parents=True)
    (other / "cli.py").write_text("")
    monkeypatch.setattr(resident, "_package_folder", lambda: str(other))
    assert key_for(env, "/a") != key


def test_a_slow_client_does_not_hold_the_others(tmp_path: Path) -> None:
    with serving(tmp_path) as running, socket.socket(socket.AF_UNIX) as slow:
        with Place(str(tmp_path)).socket_path() as path:
            slow.connect(path)
        slow.sendall(b'{"protocol": 2, "op"')  # and nothing more while the others ask
        for _ in range(4):
            assert client_for(tmp_path).search(FIELDS) is not None
    assert len(running.asked) == 4


def test_a_search_that_takes_long_holds_the_others_at_most_the_busy_wait(tmp_path: Path) -> None:
    """Issue 34 row 2: a normal search sent while another client's long query was answered
    waited 45 s. Now it waits at most BUSY_WAIT, is told `busy`, and its command searches in
    its own process (None here)."""
    from loom_dagster.cli.resident_server import BUSY_WAIT

    stuck = threading.Event()
    with serving(tmp_path, hold=stuck) as running:
        first = threading.Thread(target=client_for(tmp_path).search, args=(FIELDS,))
        first.start()
        wait_for(lambda: len(running.asked) == 1, "the first search to be answered")
        started = time.monotonic()
        assert client_for(tmp_path).search({**FIELDS, "text": "second"}) is None
        assert time.monotonic() - started < BUSY_WAIT + 2
        stuck.set()
        first.join(30)
        # Once the long one is done, the resident answers again.
        answer = client_for(tmp_path).search({**FIELDS, "text": "third"})
        assert answer is not None and answer.stdout == "hits for third\n"


def test_a_client_sending_a_byte_now_and_then_is_cut_off(tmp_path: Path) -> None:
    place = Place(str(tmp_path))
    assert place.make_private()
    server = ResidentServer(place, "key", lambda fields: {}, idle=600, read_timeout=0.5)
    server.bind()
    thread = threading.Thread(target=server.serve, daemon=True)
    thread.start()
    try:
        with socket.socket(socket.AF_UNIX) as trickle:
            with place.socket_path() as path:
                trickle.connect(path)
            cut_off = False
            for _ in range(300):  # 30 s of a byte every 0.1 s: far past the 0.5 s allowed
                try:
                    trickle.sendall(b" ")
                except OSError:
                    cut_off = True
                    break
                time.sleep(0.1)
            assert cut_off
    finally:
        server.request_stop()
        thread.join(30)


def test_a_stale_socket_is_removed_and_the_command_searches_itself(tmp_path: Path) -> None:
    place = Place(str(tmp_path))
    assert place.make_private()
    dead = socket.socket(socket.AF_UNIX)
    with place.socket_path() as path:
        dead.bind(path)
    dead.close()  # the socket file of a process that died
    assert client_for(tmp_path).search(FIELDS) is None
    assert not os.path.exists(place.socket)


def test_a_socket_is_kept_while_a_resident_holds_the_lock(tmp_path: Path) -> None:
    place = Place(str(tmp_path))
    assert place.make_private()
    lock = take_lock(place, 0)
    assert lock is not None
    try:
        starting = socket.socket(socket.AF_UNIX)
        with place.socket_path() as path:
            starting.bind(path)  # bound, not listening yet
        assert client_for(tmp_path).search(FIELDS) is None
        assert os.path.exists(place.socket)
        assert take_lock(place, 0) is None  # never two for one home
        assert not client_for(tmp_path).start()  # and the command starts none beside it
        starting.close()
    finally:
        os.close(lock)


def test_a_home_whose_path_is_longer_than_a_socket_address_is_served(tmp_path: Path) -> None:
    home = tmp_path / ("h" * 60) / ("o" * 60)
    home.mkdir(parents=True)
    assert len(str(Place(str(home)).socket)) > 108
    with serving(home) as running:
        assert client_for(home).search(FIELDS) is not None
    assert running.asked == [FIELDS]


def test_off_neither_asks_nor_starts(tmp_path: Path) -> None:
    with serving(tmp_path) as running:
        client = client_for(tmp_path, LOOM_SEARCH_RESIDENT="off")
        assert client.search(FIELDS) is None
        assert not client.start()
    assert running.asked == []


def test_it_exits_when_idle(tmp_path: Path) -> None:
    with serving(tmp_path, idle=0.2) as running:
        assert client_for(tmp_path).search(FIELDS) is not None
        running.thread.join(30)
        assert not running.thread.is_alive()
        assert running.server.stopped_because == "idle"
        assert not os.path.exists(Place(str(tmp_path)).socket)


@pytest.mark.parametrize("removed", ["home", "socket"])
def test_it_exits_when_its_home_or_socket_is_removed(tmp_path: Path, removed: str) -> None:
    home = tmp_path / "home"
    home.mkdir()
    with serving(home) as running:
        if removed == "home":
            shutil.rmtree(home)
        else:
            os.unlink(Place(str(home)).socket)
        running.thread.join(30)
        assert not running.thread.is_alive()
        assert running.server.stopped_because == f"its {removed} was removed"


def test_stop_and_status(tmp_path: Path) -> None:
    with serving(tmp_path) as running:
        client = client_for(tmp_path)
        client.search(FIELDS)
        state = client.status()
        assert state is not None
        assert (state["pid"], state["same_version"], state["answered"]) == (os.getpid(), True, 1)
        assert client.stop()
        running.thread.join(30)
        assert not running.thread.is_alive()
    assert client_for(tmp_path).status() is None
    assert not client_for(tmp_path).stop()


@pytest.mark.parametrize("raw", ["abc", "0", "-1", "nan", "inf"])
def test_a_bad_idle_setting_is_refused(raw: str) -> None:
    with pytest.raises(SettingsError, match="LOOM_SEARCH_RESIDENT_IDLE must be a positive"):
        idle_seconds({"LOOM_SEARCH_RESIDENT_IDLE": raw})


def test_a_bad_idle_setting_stops_the_command_before_it_asks_or_starts(tmp_path: Path) -> None:
    with serving(tmp_path) as running:
        client = client_for(tmp_path, LOOM_SEARCH_RESIDENT_IDLE="soon")
        with pytest.raises(SettingsError, match="LOOM_SEARCH_RESIDENT_IDLE"):
            client.search(FIELDS)
    assert running.asked == []


def test_the_idle_setting() -> None:
    assert idle_seconds({}) == DEFAULT_IDLE_SECONDS
    assert idle_seconds({"LOOM_SEARCH_RESIDENT_IDLE": "2.5"}) == 2.5


def test_a_home_whose_name_is_not_utf8_is_served(tmp_path: Path) -> None:
    home = Path(os.fsdecode(os.path.join(os.fsencode(tmp_path), b"home-\xff")))
    home.mkdir()
    with serving(home) as running:
        answer = client_for(home).search({**FIELDS, "text": os.fsdecode(b"disk \xfe")})
    assert answer is not None
    assert running.asked[0]["text"] == os.fsdecode(b"disk \xfe")


def test_a_resident_that_does_not_answer_in_time_is_replaced(tmp_path: Path) -> None:
    stuck = threading.Event()
    with serving(tmp_path, hold=stuck):
        client = client_for(tmp_path)
        client.answer_timeout = 0.5
        try:
            assert client.search(FIELDS) is None  # the command searches itself
            assert client.outdated  # and replaces the stuck one
        finally:
            stuck.set()


def test_a_defect_in_the_resident_makes_the_command_search_itself(tmp_path: Path) -> None:
    with serving(tmp_path, defect=True) as running:
        assert client_for(tmp_path).search(FIELDS) is None  # it shows the defect in-process
        assert client_for(tmp_path).search(FIELDS) is not None  # and the resident goes on
    assert len(running.asked) == 2
