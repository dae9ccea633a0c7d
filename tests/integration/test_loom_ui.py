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

from loom_dagster.dagster_dev import url_path
from tests.integration.loom_command import LOOM, alive_among, descendants, loom

# From `loom ui` to dagster dev's webserver answering, on a busy 2-core machine.
STARTED_WITHIN_S = 180.0
# The bound: no process of `loom ui` is left this long after the signal.
GONE_WITHIN_S = 10.0


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def session_token(home: Path) -> str | None:
    """The token of the `loom ui` running on `home`, from the URL it wrote (issue 34 row 5)."""
    try:
        return url_path(home).read_text().strip().split("loom_token=")[1]
    except (OSError, IndexError):
        return None


def answering(port: int, home: Path | None = None) -> bool:
    """The webserver answers through `loom ui`'s gate, given the session's token."""
    token = session_token(home or Path(os.environ["LOOM_HOME"]))
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}/server_info", headers={"Authorization": f"Bearer {token}"}
    )
    try:
        with urllib.request.urlopen(request, timeout=2) as answer:
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
def loom_ui(
    log: Path, env: dict[str, str] | None = None, *, port: int | None = None
) -> Iterator[subprocess.Popen[bytes]]:
    """`loom ui` started and serving; killed with everything under it if the test left it up."""
    port = port or free_port()
    home = Path((env or os.environ)["LOOM_HOME"])
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
            lambda: answering(port, home) or ui.poll() is not None,
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


def gate_answer(
    port: int, path: str, *, method: str = "GET", headers: dict[str, str] | None = None
) -> tuple[int, dict[str, str], bytes]:
    """Status, headers and body of one request to `loom ui`'s port; no redirect followed."""
    import http.client

    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    body = b'{"query": "{ version runsOrError { __typename } }"}' if method == "POST" else None
    connection.request(method, path, body=body, headers=headers or {})
    answer = connection.getresponse()
    got = (answer.status, {k.lower(): v for k, v in answer.getheaders()}, answer.read())
    connection.close()
    return got


def test_the_ui_answers_only_the_user_with_the_session_token(
    loom_home: Path, tmp_path: Path
) -> None:
    """Issue 34 row 5: another local user reached GraphQL on 127.0.0.1:3000 (read run tags and
    document text, paused automation). Now the webserver is on a Unix socket in a 0700 folder and
    the port is a gate that wants the token `loom ui` printed."""
    log = tmp_path / "ui.log"
    port = free_port()
    with loom_ui(log, port=port) as ui:
        url = url_path(loom_home).read_text().strip()
        assert oct(url_path(loom_home).stat().st_mode & 0o777) == "0o600"
        assert f"loom ui: open {url} " in log.read_text(errors="replace")
        token = url.split("loom_token=")[1]
        graphql = {"Content-Type": "application/json"}
        # Without the token: nothing, GraphQL (query and mutation), pages and websockets alike.
        for method, path, extra in [
            ("POST", "/graphql", graphql),
            ("GET", "/graphql?query=%7Bversion%7D", {}),
            ("GET", "/", {}),
            ("GET", "/server_info", {}),
            ("GET", "/?loom_token=wrong", {}),
            ("POST", "/graphql", {**graphql, "Cookie": f"loom_ui_{port}=wrong"}),
            ("POST", "/graphql", {**graphql, "Authorization": "Bearer wrong"}),
            (
                "GET",
                "/graphql",
                {
                    "Connection": "Upgrade",
                    "Upgrade": "websocket",
                    "Sec-WebSocket-Version": "13",
                    "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ==",
                    "Sec-WebSocket-Protocol": "graphql-ws",
                },
            ),
        ]:
            status, _, body = gate_answer(port, path, method=method, headers=extra)
            assert status == 401, (method, path, extra, body)
            assert b"version" not in body and b"data" not in body
        # The printed URL sets the session's cookie and goes on without the token in it.
        status, headers, _ = gate_answer(port, "/assets?loom_token=" + token)
        assert status == 303 and headers["location"] == "/assets"
        cookie = headers["set-cookie"]
        assert cookie.startswith(f"loom_ui_{port}={token};") and "HttpOnly" in cookie
        status, _, body = gate_answer(
            port,
            "/graphql",
            method="POST",
            headers={**graphql, "Cookie": f"loom_ui_{port}={token}"},
        )
        assert status == 200 and b'"version"' in body, body
        # The webserver listens on no TCP port: the gate is the one way in.
        family = [ui.pid, *descendants(ui.pid)]
        assert listening_tcp_ports(family) == [port]
        # Dagster's daemon runs through loom too, for its backfill passes (ui_webserver.py).
        modules = [command_line(pid)[1:4] for pid in family]
        assert ["-m", "loom_dagster.ui_webserver", "daemon"] in modules, modules
        assert not [m for m in modules if m[:2] == ["-m", "dagster._daemon"]], modules
        ui.send_signal(signal.SIGTERM)
        assert ui.wait(timeout=GONE_WITHIN_S) == 128 + signal.SIGTERM
    assert not url_path(loom_home).exists()


def command_line(pid: int) -> list[str]:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace").split("\0")
    except OSError:  # ended since it was listed
        return []


def listening_tcp_ports(pids: list[int]) -> list[int]:
    """The TCP ports the processes `pids` listen on (from /proc)."""
    inodes: set[str] = set()
    for pid in pids:
        try:
            for fd in Path(f"/proc/{pid}/fd").iterdir():
                target = os.readlink(fd)
                if target.startswith("socket:["):
                    inodes.add(target[8:-1])
        except OSError:
            continue
    ports = []
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            fields = line.split()
            if fields[3] == "0A" and fields[9] in inodes:  # LISTEN
                ports.append(int(fields[1].rsplit(":", 1)[1], 16))
    return sorted(ports)


@pytest.fixture(autouse=True)
def _linux_only() -> None:
    if not Path("/proc/self/stat").exists():
        pytest.skip("reads processes from /proc")
