"""The service's HTTP layer under connection abuse (issue 40, rows 4 to 8).

Each test runs the real service on 127.0.0.1 with its real limits, lowered where the test needs
them (a head deadline of seconds, one slot, a small open-file limit); every loop is bounded in
count and in time, and every socket is closed when the test ends.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import re
import selectors
import signal
import socket
import struct
import threading
import time
from collections.abc import Callable, Iterator

import httpx
import pytest

from tests.extractor.conftest import RunningService

MiB = 1024 * 1024
HOST = "127.0.0.1"


def address(service: RunningService) -> tuple[str, int]:
    host, port = service.url.removeprefix("http://").rsplit(":", 1)
    assert host == HOST
    return host, int(port)


def capabilities_request(token: str, *, close: bool = False) -> bytes:
    connection = b"Connection: close\r\n" if close else b""
    return (
        b"GET /v1/capabilities HTTP/1.1\r\nHost: x\r\n"
        + f"Authorization: Bearer {token}\r\n".encode()
        + connection
        + b"\r\n"
    )


def extract_head(token: str, length: int, fmt: str = "text") -> bytes:
    return (
        f"POST /v1/extract?format={fmt} HTTP/1.1\r\nHost: x\r\n".encode()
        + f"Authorization: Bearer {token}\r\nContent-Length: {length}\r\n\r\n".encode()
    )


def read_raw_answer(connection: socket.socket) -> tuple[str, dict[str, str], bytes]:
    """One answer as it came: (status line, headers by lower-case name, body)."""
    received = b""
    while b"\r\n\r\n" not in received:
        chunk = connection.recv(65536)
        assert chunk, f"closed before a whole answer: {received[:200]!r}"
        received += chunk
    head, _, body = received.partition(b"\r\n\r\n")
    status_line, *lines = head.decode("latin-1").split("\r\n")
    headers = {name.lower(): value.strip() for name, value in (x.split(":", 1) for x in lines)}
    while len(body) < int(headers["content-length"]):
        chunk = connection.recv(65536)
        assert chunk, "closed within the body"
        body += chunk
    return status_line, headers, body


def status_of(status_line: str) -> int:
    return int(status_line.split()[1])


def post(service: RunningService, body: bytes, fmt: str, timeout_s: float) -> httpx.Response:
    with httpx.Client(headers={"Authorization": f"Bearer {service.token}"}) as session:
        return session.post(
            f"{service.url}/v1/extract",
            params={"format": fmt, "name": "f"},
            content=body,
            timeout=timeout_s,
        )


def served_within(service: RunningService, body: bytes, within_s: float) -> httpx.Response | None:
    """An authorised extraction, retried on a 503 after its Retry-After as Loom's client's retry
    would, until `within_s` has passed: its answer, or None when none came in time."""
    deadline = time.monotonic() + within_s
    while (remaining := deadline - time.monotonic()) > 0:
        try:
            response = post(service, body, "text", remaining)
        except httpx.HTTPError:
            return None
        if response.status_code != 503:
            return response
        time.sleep(min(float(response.headers["retry-after"]), max(0.0, remaining)))
    return None


def resident_mib(pid: int) -> float:
    for line in open(f"/proc/{pid}/status").read().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no VmRSS")


def slow_markdown() -> bytes:
    """Markdown that takes seconds to extract: 120,000 sections, 5 MB."""
    return b"".join(
        b"# heading %d\n\nparagraph %d of the text\n\n" % (i, i) for i in range(120_000)
    )


@contextlib.contextmanager
def sockets(count: int) -> Iterator[list[socket.socket]]:
    with contextlib.ExitStack() as stack:
        yield [stack.enter_context(socket.socket()) for _ in range(count)]


def log_of(service: RunningService) -> str:
    return service.stderr_path.read_text(errors="replace")


# -- row 4: idle connections that send a header byte now and then --------------------------------


def test_slow_headers_past_the_open_file_limit_are_cut_and_authorised_work_is_served(
    start_extractor: Callable[..., RunningService],
) -> None:
    # The 1,100 connections against 1,024 descriptors, scaled down: 200 against 128.
    service = start_extractor(
        {"LOOM_EXTRACTOR_HEAD_TIMEOUT_S": "2", "LOOM_EXTRACTOR_CONCURRENCY": "1"}, open_files=128
    )
    target = address(service)
    answer: list[httpx.Response | None] = []
    with sockets(200) as attackers, selectors.DefaultSelector() as selector:
        for attacker in attackers:
            attacker.setblocking(False)
            attacker.connect_ex(target)
            selector.register(attacker, selectors.EVENT_READ)
        # Each sends a request line, then one header byte every 0.5 s: never a whole head.
        begun: set[socket.socket] = set()
        open_ = set(attackers)
        authorised = threading.Thread(
            target=lambda: answer.append(served_within(service, b"hello", within_s=8))
        )
        started = time.monotonic()
        next_round = started
        while open_ and time.monotonic() - started < 8:
            if time.monotonic() >= next_round:
                for attacker in list(open_):
                    try:
                        attacker.send(
                            b"X" if attacker in begun else b"GET /v1/capabilities HTTP/1.1\r\n"
                        )
                        begun.add(attacker)
                    except (BlockingIOError, InterruptedError):
                        pass  # not connected yet, or its buffer is full
                    except OSError as error:
                        if error.errno != errno.ENOTCONN:
                            open_.discard(attacker)
                            selector.unregister(attacker)
                next_round += 0.5
                if not authorised.is_alive() and not answer and len(begun) > 100:
                    authorised.start()  # while the attack is on
            for key, _events in selector.select(timeout=0.1):
                attacker = key.fileobj  # type: ignore[assignment]
                try:
                    data = attacker.recv(65536)
                except (BlockingIOError, InterruptedError):
                    continue
                except OSError:
                    data = b""
                if not data:  # the service closed it (after a 503 or 408, or at once)
                    open_.discard(attacker)
                    selector.unregister(attacker)
        still_open = len(open_)
        if authorised.is_alive() or authorised.ident is not None:
            authorised.join(timeout=10)
    assert answer and answer[0] is not None, "the authorised extraction was not served"
    assert answer[0].status_code == 200, (answer[0].text, log_of(service)[-4000:])
    assert still_open == 0, f"{still_open} connections still open past the head deadline"
    assert service.process.poll() is None
    log = log_of(service)
    assert "Traceback" not in log and "Too many open files" not in log


# -- row 5: authorised bodies that trickle -------------------------------------------------------


def test_bodies_that_trickle_hold_only_the_memory_they_have_sent(
    start_extractor: Callable[..., RunningService],
) -> None:
    # One slot: a body budget of twice 64 MiB, which four bodies declaring 64 MiB took whole.
    service = start_extractor(
        {"LOOM_EXTRACTOR_CONCURRENCY": "1", "LOOM_EXTRACTOR_BODY_TIMEOUT_S": "20"}
    )
    before = resident_mib(service.process.pid)
    stop = threading.Event()
    with sockets(4) as senders:
        for sender in senders:
            sender.settimeout(10)
            sender.connect(address(service))
            sender.sendall(extract_head(service.token, 64 * MiB) + b"x")

        def trickle() -> None:
            for _ in range(40):  # a byte every 0.5 s each, for at most 20 s
                if stop.wait(0.5):
                    return
                for sender in senders:
                    with contextlib.suppress(OSError):
                        sender.send(b"x")

        trickling = threading.Thread(target=trickle)
        trickling.start()
        try:
            time.sleep(1)
            started = time.monotonic()
            response = served_within(service, b"hello", within_s=6)
            took = time.monotonic() - started
            during = resident_mib(service.process.pid)
        finally:
            stop.set()
            trickling.join()
    assert response is not None and response.status_code == 200, "held behind the slow bodies"
    assert took < 5
    assert during - before < 32, f"{during - before:.0f} MiB held for a few bytes received"


def test_a_body_that_finds_no_memory_within_the_wait_is_503_with_retry_after(
    start_extractor: Callable[..., RunningService],
) -> None:
    # 1 MiB originals, one slot: a budget of 2 MiB, which two bodies sent but for their last
    # byte hold (they did send it: that memory is theirs).
    service = start_extractor(
        {
            "LOOM_EXTRACTOR_MAX_BYTES": str(MiB),
            "LOOM_EXTRACTOR_CONCURRENCY": "1",
            "LOOM_EXTRACTOR_QUEUE_WAIT_S": "1",
            "LOOM_EXTRACTOR_BODY_TIMEOUT_S": "20",
        }
    )
    with sockets(3) as (first, second, third):
        for holder in (first, second):
            holder.settimeout(10)
            holder.connect(address(service))
            holder.sendall(extract_head(service.token, MiB) + b"x" * (MiB - 1))
        time.sleep(1)
        third.settimeout(10)
        third.connect(address(service))
        started = time.monotonic()
        third.sendall(extract_head(service.token, 65536) + b"y" * 65536)
        try:
            status_line, headers, body = read_raw_answer(third)
        except TimeoutError:
            pytest.fail("no answer while the budget was held: the wait for it is not bounded")
        took = time.monotonic() - started
    assert status_line == "HTTP/1.1 503 Service Unavailable"
    assert headers["retry-after"].isdigit() and int(headers["retry-after"]) >= 1
    assert json.loads(body)["error"]["code"] == "busy"
    assert took < 5


# -- row 6: bursts, and small requests behind large ones -----------------------------------------


def test_a_burst_of_connections_is_held_by_the_backlog_and_each_answered(
    start_extractor: Callable[..., RunningService],
) -> None:
    service = start_extractor()
    burst = 150
    with sockets(burst) as clients, selectors.DefaultSelector() as selector:
        # The service stopped, nothing is accepted: only the listen backlog holds connections.
        os.kill(service.process.pid, signal.SIGSTOP)
        try:
            for connecting in clients:
                connecting.setblocking(False)
                connecting.connect_ex(address(service))
                selector.register(connecting, selectors.EVENT_WRITE)
            held: set[socket.socket] = set()
            deadline = time.monotonic() + 0.8  # before a dropped SYN is sent again (1 s)
            while len(held) < burst and (remaining := deadline - time.monotonic()) > 0:
                for key, _events in selector.select(timeout=remaining):
                    connecting = key.fileobj  # type: ignore[assignment]
                    selector.unregister(connecting)
                    if connecting.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR) == 0:
                        held.add(connecting)
        finally:
            os.kill(service.process.pid, signal.SIGCONT)
        assert len(held) >= 128, f"the backlog held {len(held)} of a burst of {burst}"
        statuses = []
        for connecting in clients:
            connecting.settimeout(15)  # one left for a SYN sent again connects within seconds
            with contextlib.suppress(OSError):
                connecting.connect(address(service))  # EISCONN once it is
            connecting.sendall(capabilities_request(service.token, close=True))
            status_line, headers, _body = read_raw_answer(connecting)
            statuses.append(status_of(status_line))
            if statuses[-1] == 503:
                assert headers["retry-after"].isdigit()
    assert set(statuses) <= {200, 503} and statuses.count(200) >= 128


def test_a_small_original_is_not_stuck_behind_large_ones(
    start_extractor: Callable[..., RunningService],
) -> None:
    service = start_extractor({"LOOM_EXTRACTOR_CONCURRENCY": "1"})
    large = slow_markdown()
    finished: dict[str, float] = {}
    statuses: dict[str, int] = {}

    def send(label: str, body: bytes, fmt: str) -> None:
        try:
            statuses[label] = post(service, body, fmt, 60).status_code
        except httpx.HTTPError:
            statuses[label] = 0
        finished[label] = time.monotonic()

    larges = [threading.Thread(target=send, args=(f"large {n}", large, "markdown")) for n in (1, 2)]
    for thread in larges:
        thread.start()
        time.sleep(0.7)  # the first has the only slot; the second waits for it
    send("small", b"hello", "text")
    for thread in larges:
        thread.join(timeout=90)
    assert statuses["small"] == 200 and statuses["large 1"] == 200
    assert finished["small"] < finished["large 1"], "the small original waited for the large"


def test_an_extraction_that_gets_no_slot_within_the_wait_is_503_with_retry_after(
    start_extractor: Callable[..., RunningService],
) -> None:
    service = start_extractor(
        {"LOOM_EXTRACTOR_CONCURRENCY": "1", "LOOM_EXTRACTOR_QUEUE_WAIT_S": "1"}
    )
    large = slow_markdown()
    first: list[int] = []
    running = threading.Thread(
        target=lambda: first.append(post(service, large, "markdown", 90).status_code)
    )
    running.start()
    try:
        time.sleep(0.7)  # it has the only slot
        started = time.monotonic()
        response = post(service, large, "markdown", 60)
        took = time.monotonic() - started
    finally:
        running.join(timeout=90)
    assert response.status_code == 503
    assert response.headers["retry-after"].isdigit()
    assert response.json()["error"]["code"] == "busy"
    assert took < 5
    assert first == [200]


# -- row 7: clients that leave before their answer -----------------------------------------------


def reset_on_close(connection: socket.socket) -> None:
    connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))


def test_clients_that_leave_before_their_answer_are_a_line_each_and_no_500(
    start_extractor: Callable[..., RunningService],
) -> None:
    service = start_extractor()
    clients = 0
    for _ in range(5):  # the request sent, the connection reset at once
        with socket.create_connection(address(service), timeout=10) as leaving:
            leaving.sendall(capabilities_request(service.token))
            reset_on_close(leaving)
        clients += 1
    # Answers larger than any socket buffer: the client reads the first bytes, then leaves.
    body = b"".join(b"line %d of some text here\n" % i for i in range(300_000))
    for _ in range(2):
        with socket.socket() as leaving:
            leaving.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            leaving.settimeout(30)
            leaving.connect(address(service))
            leaving.sendall(extract_head(service.token, len(body)) + body)
            begun = b""
            while len(begun) < 12 and (chunk := leaving.recv(12 - len(begun))):
                begun += chunk
            assert begun == b"HTTP/1.1 200"
            reset_on_close(leaving)
        clients += 1
    with socket.create_connection(address(service), timeout=10) as after:
        after.sendall(capabilities_request(service.token, close=True))
        assert status_of(read_raw_answer(after)[0]) == 200
    time.sleep(0.5)
    log = log_of(service)
    assert "Traceback" not in log and "internal" not in log
    assert re.search(r"\b500\b", log) is None
    lines = [line for line in log.splitlines() if line.startswith(f"loom-extractor: {HOST} ")]
    assert len(lines) <= clients + 1, "\n".join(lines)  # one a request, if it was received
    left = [line for line in lines if "POST /v1/extract 200" in line]
    assert len(left) == 2 and all("client left" in line for line in left), left


# -- row 8: request lines that are not HTTP/1.x ---------------------------------------------------


@pytest.mark.parametrize(
    "request_line",
    [
        b"GARBAGE\r\n\r\n",
        b"GET /v1/capabilities HTTP/9.9\r\n\r\n",
        b"GET /v1/capabilities\r\n",  # HTTP/0.9, answered without a status line
        b"\x16\x03\x01\x00\xa5\x01\x00\x00\xa1\x03\x03" + bytes(range(32)),  # TLS, no newline
        b"\x00\xff\xfe\xfd binary \x80\x81\r\n\r\n",
    ],
    ids=["garbage", "http-9.9", "http-0.9", "tls-hello", "binary"],
)
def test_a_request_line_that_is_not_http_1_is_a_whole_400(
    start_extractor: Callable[..., RunningService], request_line: bytes
) -> None:
    service = start_extractor()
    with socket.create_connection(address(service), timeout=10) as connection:
        connection.sendall(request_line)
        try:
            status_line, headers, body = read_raw_answer(connection)
        except TimeoutError:
            pytest.fail("no answer")
    assert status_line == "HTTP/1.1 400 Bad Request"
    assert headers["content-type"] == "application/json"
    assert headers["connection"] == "close"
    assert json.loads(body)["error"]["code"] == "bad_request"
    assert "Traceback" not in log_of(service)
