"""The HTTP service of contract v1: GET /v1/capabilities and POST /v1/extract.

Every call carries Authorization: Bearer <token>, checked before anything else. An extraction's
request is checked whole (its parameters, then its declared length against max_bytes) before the
body is read. The parsing itself runs in a child process (extractor_sandbox.runner starts
extractor_sandbox.child).

The HTTP layer is the standard library's request parsing (BaseHTTPRequestHandler) under a
connection loop of this module's own (`ExtractorServer`), so that no client holds the service
by being slow, by being many, or by leaving:

- one thread accepts every connection and receives every request head, without blocking; a head
  must arrive whole within LOOM_EXTRACTOR_HEAD_TIMEOUT_S (408 past it), and a request line that
  is not HTTP/1.0 or 1.1 is refused (400) as soon as it is seen. Only a whole head gets a thread
  of its own, which answers it and gives a kept-alive connection back to the loop;
- at most LOOM_EXTRACTOR_MAX_CONNECTIONS are open at once, fitted under the open-file limit
  (settings.fit_open_files); one more takes the place of the longest waiting for a head, or,
  when every one is at work, is refused with a 503 and Retry-After, without a thread;
- the kernel holds LOOM_EXTRACTOR_BACKLOG connections before they are accepted;
- a body is read before its request waits for a slot, within LOOM_EXTRACTOR_BODY_TIMEOUT_S as
  a whole (408 past it); the bodies held at once are bounded by a budget of twice the slots'
  worth of max_bytes, taken as their bytes arrive (so a body that trickles holds what it sent);
- a wait, for room in that budget or for a slot, lasts at most LOOM_EXTRACTOR_QUEUE_WAIT_S, then
  is a 503 with Retry-After; an original of at most LOOM_EXTRACTOR_SMALL_BYTES may also take one
  slot kept for small ones, so it is not stuck behind large ones;
- a client that leaves before its answer is one line in the log.

Every answer is JSON with a Content-Length and never compressed; a refusal is the contract's error
body {"error": {"code", "message"}}: 422 for a source the service will not extract, 401 without
the token, 408 for a head or body not received in time, 503 when the service is full, and 404,
405, 411 or 400 for a request that is not one of the contract's.
"""

from __future__ import annotations

import collections
import errno
import functools
import heapq
import hmac
import itertools
import json
import os
import re
import selectors
import signal
import socket
import sys
import threading
import time
import traceback
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler
from types import FrameType
from typing import Any
from urllib.parse import parse_qsl

from extractor_sandbox.contract import CONTRACT_FORMATS, CONTRACT_OPTIONS, CONTRACT_VERSION
from extractor_sandbox.errors import ExtractError, one_line
from extractor_sandbox.registry import AVAILABLE
from extractor_sandbox.runner import (
    CallerGone,
    Limits,
    SandboxFailure,
    Template,
    kill_all_children,
    run_extraction,
    shared_template,
    stop_templates,
)
from extractor_sandbox.settings import Settings, small_slots
from extractor_sandbox.source import DECLARED_FORMATS, codec_name

EXTRACTOR = {"name": "loom-reference", "version": "1"}
CAPABILITIES_PATH = "/v1/capabilities"
EXTRACT_PATH = "/v1/extract"
SERVER_NAME = "loom-extractor/1"
_MAX_QUERY_FIELDS = 16
# After refusing a request whose body it did not read, the service reads and drops what the client
# still sends for this long before closing, so the close does not reset the connection under the
# refusal before the client has read it.
_LINGER_S = 2.0
_LINGER_BYTES = 8 * 1024 * 1024
# A request head (line and headers) is at most this long; its line at most _MAX_LINE_BYTES.
_MAX_HEAD_BYTES = 64 * 1024
_MAX_LINE_BYTES = 8 * 1024
# A kept-alive connection may wait this long for its next request; then it is closed, silently.
_IDLE_S = 60.0
# Seconds a thread may take to write one answer to a client that does not read it.
_ANSWER_TIMEOUT_S = 60.0
# What a 503 tells a client to wait: a connection refused at the cap finds room soon (heads are
# cut within seconds); a request that found the service full should wait longer.
_RETRY_AT_CAP_S = 1
_RETRY_BUSY_S = 2
# Bytes of a body received at a time, before they are counted against the budget.
_BODY_CHUNK = 256 * 1024
_REQUEST_LINE = re.compile(rb"[\x20-\x7e]*")
_HEAD_END = re.compile(rb"\r?\n\r?\n")


class HttpError(Exception):
    """A request that is not one of the contract's: a status other than 422, with an error body."""

    def __init__(
        self, status: HTTPStatus, code: str, message: str, headers: dict[str, str] | None = None
    ) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = one_line(message)
        self.headers = headers or {}


def busy(message: str) -> HttpError:
    """The service is full: a 503 the client may try again after (the contract's client does)."""
    return HttpError(
        HTTPStatus.SERVICE_UNAVAILABLE, "busy", message, {"Retry-After": str(_RETRY_BUSY_S)}
    )


class ClientLeft(Exception):
    """The client closed or reset its connection before its answer was written whole."""


class ByteBudget:
    """Bytes of bodies held at once, counted as they are received: a body that trickles holds what
    it sent, not what it declared. Taking more waits, within a bound, until there is room."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._used = 0
        self._room = threading.Condition()

    def take(self, size: int, timeout_s: float) -> bool:
        """Count `size` more bytes, waiting up to `timeout_s` for room; False if there was none."""
        with self._room:
            if not self._room.wait_for(lambda: self._used + size <= self.limit, timeout_s):
                return False
            self._used += size
            return True

    def give(self, size: int) -> None:
        with self._room:
            self._used -= size
            self._room.notify_all()

    @property
    def used(self) -> int:
        with self._room:
            return self._used

    @contextmanager
    def held(self) -> Iterator[Held]:
        """A body's share: what it takes is given back when the request is done with it."""
        held = Held(self)
        try:
            yield held
        finally:
            self.give(held.size)


class Held:
    """One body's bytes in a ByteBudget."""

    def __init__(self, budget: ByteBudget) -> None:
        self.budget = budget
        self.size = 0

    def take(self, size: int, timeout_s: float) -> bool:
        if not self.budget.take(size, timeout_s):
            return False
        self.size += size
        return True


class Slots:
    """Extractions at once: LOOM_EXTRACTOR_CONCURRENCY slots any original takes, and `small` more
    (one, or none) that only an original of at most `small_bytes` takes, so a small file is not
    stuck behind large ones. A small one takes its own kind of slot first, leaving the others to
    the large. A wait lasts at most the timeout given."""

    def __init__(self, general: int, small: int, small_bytes: int) -> None:
        self._free = {"general": general, "small": small}
        self.small_bytes = small_bytes
        self._changed = threading.Condition()

    def _lane(self, size: int) -> str | None:
        if size <= self.small_bytes and self._free["small"] > 0:
            return "small"
        return "general" if self._free["general"] > 0 else None

    @contextmanager
    def taken(self, size: int, timeout_s: float) -> Iterator[None]:
        """A slot for an original of `size` bytes; raises the 503 `busy` when none came in time."""
        with self._changed:
            if not self._changed.wait_for(lambda: self._lane(size) is not None, timeout_s):
                raise busy(
                    f"no extraction slot was free within {timeout_s:g} s"
                    " (LOOM_EXTRACTOR_QUEUE_WAIT_S); try again later"
                )
            lane = self._lane(size)
            assert lane is not None
            self._free[lane] -= 1
        try:
            yield
        finally:
            with self._changed:
                self._free[lane] += 1
                self._changed.notify_all()


class Connection:
    """A client's connection, and what has been received of its next request head."""

    __slots__ = (
        "sock",
        "address",
        "received",
        "deadline",
        "idle",
        "scanned",
        "line_read",
        "closed",
    )

    def __init__(self, sock: socket.socket, address: Any, deadline: float) -> None:
        self.sock = sock
        self.address = address
        self.received = bytearray()
        self.deadline = deadline
        self.idle = False  # kept alive after an answer, no byte of the next request yet
        self.closed = False
        self.new_request()

    def new_request(self) -> None:
        """What is received from now on is read from its start, as a new head."""
        self.scanned = 0  # bytes of `received` known to hold no end of the head
        self.line_read = False  # the request line is whole and was found good


def _canned(status: HTTPStatus, code: str, message: str, retry_after_s: int | None) -> bytes:
    """A whole answer, written without a thread by the connection loop."""
    body = json.dumps({"error": {"code": code, "message": message}}).encode("utf-8")
    retry = f"Retry-After: {retry_after_s}\r\n" if retry_after_s is not None else ""
    return (
        f"HTTP/1.1 {status.value} {status.phrase}\r\nServer: {SERVER_NAME}\r\n"
        f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n{retry}"
        "Connection: close\r\n\r\n"
    ).encode("ascii") + body


class ExtractorServer:
    """The listening service: its settings, its token, its extraction slots and the connection
    loop (`serve_forever`) that receives request heads and hands each whole one to a thread."""

    def __init__(self, address: tuple[str, int], token: str, settings: Settings) -> None:
        family = socket.AF_INET6 if ":" in address[0] else socket.AF_INET
        self.token = token.encode("ascii")
        self.settings = settings
        self.slots = Slots(settings.concurrency, small_slots(settings), settings.small_bytes)
        self.bodies = ByteBudget(2 * settings.concurrency * settings.max_bytes)
        # Each extraction a fork of one warm template (LOOM_EXTRACTOR_WARM, on where the kernel
        # has pidfds), else a fresh interpreter.
        self.template: Template | None = (
            shared_template(Limits.of(settings)) if settings.warm else None
        )
        self.socket = socket.socket(family, socket.SOCK_STREAM)
        try:
            self.socket.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            self.socket.bind(address)
            self.socket.listen(settings.backlog)
            self.socket.setblocking(False)
        except OSError:
            self.socket.close()
            raise
        # No reverse DNS lookup of the host (http.server's getfqdn can stall a start for seconds).
        self.server_name = address[0]
        self.server_port = int(self.socket.getsockname()[1])
        self._selector = selectors.DefaultSelector()
        self._wake_read, self._wake_write = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
        self._selector.register(self.socket, selectors.EVENT_READ, "listener")
        self._selector.register(self._wake_read, selectors.EVENT_READ, "wake")
        self._listen_again_at: float | None = None  # accepting paused (out of descriptors)
        self._open = 0  # connections open, waiting here or at work in a thread (this loop's count)
        self._waiting: dict[int, Connection] = {}  # by descriptor, the longest waiting first
        self._deadlines: list[tuple[float, int, Connection]] = []
        self._order = itertools.count()
        self._returned: collections.deque[tuple[Connection, bool]] = collections.deque()
        self._stop = threading.Event()
        self._stopped = threading.Event()
        self._notes: collections.Counter[str] = collections.Counter()
        self._texts: dict[str, str] = {}
        self._notes_at = time.monotonic()

    @property
    def url(self) -> str:
        host = f"[{self.server_name}]" if ":" in self.server_name else self.server_name
        return f"http://{host}:{self.server_port}"

    # -- the loop ---------------------------------------------------------------------------

    def serve_forever(self) -> None:
        """Accept, receive heads and hand them to threads until shutdown()."""
        try:
            while not self._stop.is_set():
                for key, _events in self._selector.select(self._until_next_deadline()):
                    if key.data == "listener":
                        self._accept()
                    elif key.data == "wake":
                        self._drain_wake()
                    else:
                        self._receive(key.data)
                self._take_back()
                self._expire()
                self._write_notes()
        finally:
            self._stopped.set()

    def shutdown(self) -> None:
        """Stop serve_forever (from another thread) and wait until it has."""
        self._stop.set()
        self._wake()
        self._stopped.wait()

    def server_close(self) -> None:
        for connection in list(self._waiting.values()):
            self._close(connection)
        self._selector.close()
        self.socket.close()
        os.close(self._wake_read)
        os.close(self._wake_write)

    def _until_next_deadline(self) -> float:
        if self._listen_again_at is not None:
            return min(1.0, max(0.0, self._listen_again_at - time.monotonic()))
        while self._deadlines:
            deadline, _order, connection = self._deadlines[0]
            if connection.deadline == deadline and self._is_waiting(connection):
                return min(1.0, max(0.0, deadline - time.monotonic()))
            heapq.heappop(self._deadlines)  # superseded: the head came, or a later deadline
        return 1.0

    def _accept(self) -> None:
        for _ in range(64):  # then the loop turns, so heads already here are not kept waiting
            try:
                sock, address = self.socket.accept()
            except (BlockingIOError, InterruptedError):
                return
            except OSError as error:
                if error.errno in (errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM):
                    # Out of descriptors or memory despite the cap: stop accepting for a moment
                    # rather than turn on a listener that stays readable.
                    self._note("paused", f"accepting paused: {os.strerror(error.errno)}")
                    self._selector.unregister(self.socket)
                    self._listen_again_at = time.monotonic() + 0.1
                return  # another error (ECONNABORTED): the next turn accepts what remains
            if self._open >= self.settings.max_connections:
                if not self._waiting:
                    self._note("refused", "")
                    self._refuse(sock, self._at_cap())
                    continue
                # The connection waiting longest for a head (the idle first, as they are
                # older) makes room: a slow sender cannot keep a new client out. An idle one is
                # closed as any kept-alive connection may be; one in the middle of a head is
                # told why.
                self._note("evicted", "")
                longest = next(iter(self._waiting.values()))
                self._close(longest, b"" if longest.idle else self._at_cap())
            sock.setblocking(False)
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            self._open += 1
            connection = Connection(sock, address, time.monotonic() + self.settings.head_timeout_s)
            self._wait(connection)

    def _at_cap(self) -> bytes:
        return _canned(
            HTTPStatus.SERVICE_UNAVAILABLE,
            "busy",
            f"the service has {self.settings.max_connections} connections open"
            " (LOOM_EXTRACTOR_MAX_CONNECTIONS); try again later",
            _RETRY_AT_CAP_S,
        )

    def _wait(self, connection: Connection) -> None:
        """Watch the connection for its next head."""
        self._waiting[connection.sock.fileno()] = connection
        self._selector.register(connection.sock, selectors.EVENT_READ, connection)
        heapq.heappush(self._deadlines, (connection.deadline, next(self._order), connection))

    def _is_waiting(self, connection: Connection) -> bool:
        return self._waiting.get(connection.sock.fileno()) is connection

    def _unwait(self, connection: Connection) -> None:
        self._selector.unregister(connection.sock)
        del self._waiting[connection.sock.fileno()]

    def _receive(self, connection: Connection) -> None:
        if connection.closed:
            return  # closed earlier in this turn (made room for a new one), its event stale
        try:
            data = connection.sock.recv(65536)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            data = b""  # reset: like a close, before any request of it was taken
        if not data:
            self._close(connection)
            return
        if connection.idle:  # the first byte of a kept-alive connection's next request
            connection.idle = False
            connection.deadline = time.monotonic() + self.settings.head_timeout_s
            heapq.heappush(self._deadlines, (connection.deadline, next(self._order), connection))
        connection.received += data
        self._examine(connection)

    def _examine(self, connection: Connection) -> None:
        """Hand the connection to a thread once its head is whole, or known to be bad."""
        received = connection.received
        if not connection.line_read:
            while received[:2] == b"\r\n" or received[:1] == b"\n":
                del received[: 2 if received[:1] == b"\r" else 1]  # empty lines before a request
            if not received:
                return
            line_end = received.find(b"\n", 0, _MAX_LINE_BYTES + 2)
            line = received[: _MAX_LINE_BYTES + 2] if line_end < 0 else received[:line_end]
            bad = _bad_request_line(line, line_end >= 0)
            if bad is not None:
                self._hand_over(connection, bad)
                return
            connection.line_read = line_end >= 0
            if not connection.line_read:
                return
        # Each byte is looked at once, however the head trickles in: from where the last look
        # ended, less the three bytes an end split across two receipts may have begun with.
        start = max(0, connection.scanned - 3)
        if _HEAD_END.search(received, start) is not None:
            self._hand_over(connection, None)
            return
        connection.scanned = len(received)
        if len(received) > _MAX_HEAD_BYTES:
            self._hand_over(
                connection,
                (
                    HTTPStatus.REQUEST_HEADER_FIELDS_TOO_LARGE,
                    f"the request head is over {_MAX_HEAD_BYTES} bytes",
                ),
            )

    def _hand_over(self, connection: Connection, refusal: tuple[HTTPStatus, str] | None) -> None:
        self._unwait(connection)
        connection.sock.setblocking(True)
        worker = threading.Thread(
            target=self._answer, args=(connection, refusal), name="request", daemon=True
        )
        try:
            worker.start()
        except RuntimeError:  # no thread can be started now
            self._note("threads", "a request was dropped: no thread could be started")
            self._close(connection)

    def _answer(self, connection: Connection, refusal: tuple[HTTPStatus, str] | None) -> None:
        """A thread's work: answer the one request whose head came, then give the connection
        back to the loop, to wait for its next request or be closed."""
        keep = False
        try:
            connection.sock.settimeout(_ANSWER_TIMEOUT_S)
            handler = ExtractorHandler(connection, self, refusal)
            keep = not handler.close_connection
        except OSError as error:  # the client's connection failed outside a request's answer
            self.log(f"{connection.address[0]} connection failed: {error.strerror or error}")
        except Exception:  # a defect: the one place a traceback is logged
            self.log(f"{connection.address[0]} internal error:\n{traceback.format_exc()}")
        finally:
            self._returned.append((connection, keep))
            self._wake()

    def _take_back(self) -> None:
        while self._returned:
            connection, keep = self._returned.popleft()
            if not keep or self._stop.is_set():
                self._close(connection)
                continue
            connection.sock.setblocking(False)
            connection.new_request()
            connection.idle = not connection.received
            connection.deadline = time.monotonic() + (
                _IDLE_S if connection.idle else self.settings.head_timeout_s
            )
            self._wait(connection)
            if connection.received:  # a pipelined request came with the last one
                self._examine(connection)

    def _expire(self) -> None:
        now = time.monotonic()
        while self._deadlines and self._deadlines[0][0] <= now:
            deadline, _order, connection = heapq.heappop(self._deadlines)
            if connection.deadline != deadline or not self._is_waiting(connection):
                continue
            if connection.idle:
                self._close(connection)  # an idle kept-alive connection ends without a word
                continue
            self._note("head", "")
            seconds = self.settings.head_timeout_s
            self._close(
                connection,
                _canned(
                    HTTPStatus.REQUEST_TIMEOUT,
                    "request_timeout",
                    f"the request head was not received within {seconds:g} s"
                    " (LOOM_EXTRACTOR_HEAD_TIMEOUT_S)",
                    None,
                ),
            )
        if self._listen_again_at is not None and now >= self._listen_again_at:
            self._listen_again_at = None  # paused when descriptors ran out: try again
            self._selector.register(self.socket, selectors.EVENT_READ, "listener")

    def _close(self, connection: Connection, answer: bytes = b"") -> None:
        """Close a connection of this loop's count, after `answer` if it fits without waiting."""
        if connection.closed:
            return
        connection.closed = True
        if self._is_waiting(connection):
            self._unwait(connection)
        self._open -= 1
        self._refuse(connection.sock, answer)

    @staticmethod
    def _refuse(sock: socket.socket, answer: bytes) -> None:
        try:
            if answer:
                sock.setblocking(False)
                sock.send(answer)  # a few hundred bytes: the socket's buffer takes them now
        except OSError:
            pass  # the client is gone, or not reading: it is closed all the same
        finally:
            sock.close()

    def _wake(self) -> None:
        if self._stopped.is_set():
            return  # the pipe is closed, or about to be: a thread ending late has nothing to say
        try:
            os.write(self._wake_write, b"x")
        except (BlockingIOError, OSError):
            pass  # the pipe is full (the loop is awake already) or closed (stopped)

    def _drain_wake(self) -> None:
        try:
            while os.read(self._wake_read, 4096):
                pass
        except (BlockingIOError, OSError):
            pass

    # -- the log ----------------------------------------------------------------------------

    def log(self, line: str) -> None:
        sys.stderr.write(f"loom-extractor: {line}\n")

    def _note(self, kind: str, text: str) -> None:
        """Connections refused, evicted or cut come in floods: counted, then one line a second."""
        self._notes[kind] += 1
        if text:
            self._texts[kind] = text

    def _write_notes(self) -> None:
        now = time.monotonic()
        if not self._notes or now - self._notes_at < 1.0:
            return
        settings = self.settings
        words = {
            "refused": f"refused at the cap of {settings.max_connections} connections"
            " (LOOM_EXTRACTOR_MAX_CONNECTIONS), all at work",
            "evicted": f"closed at the cap of {settings.max_connections} connections"
            " (LOOM_EXTRACTOR_MAX_CONNECTIONS), the longest waiting for a request head",
            "head": f"closed without a whole request head within {settings.head_timeout_s:g} s"
            " (LOOM_EXTRACTOR_HEAD_TIMEOUT_S)",
        }
        for kind, count in sorted(self._notes.items()):
            if kind in words:
                self.log(f"{count} connection{'s' * (count != 1)} {words[kind]}")
            else:
                self.log(f"{self._texts.get(kind, kind)} ({count}x)")
        self._notes.clear()
        self._notes_at = now


def _bad_request_line(line: bytes | bytearray, whole: bool) -> tuple[HTTPStatus, str] | None:
    """Why a request line (or its beginning, not `whole`) is not HTTP/1.0 or 1.1, or None."""
    text = bytes(line[:-1] if line.endswith(b"\r") else line)  # its \n may follow that \r
    if _REQUEST_LINE.fullmatch(text) is None:
        return HTTPStatus.BAD_REQUEST, "the request line is not HTTP/1.x text"
    if len(text) > _MAX_LINE_BYTES:
        return HTTPStatus.REQUEST_URI_TOO_LONG, f"the request line is over {_MAX_LINE_BYTES} bytes"
    if not whole:
        return None
    words = text.split()
    if len(words) != 3:
        return HTTPStatus.BAD_REQUEST, f"bad request line {one_line(text.decode('ascii'))[:100]!r}"
    if words[2] not in (b"HTTP/1.0", b"HTTP/1.1"):
        version = one_line(words[2].decode("ascii"))[:40]
        return HTTPStatus.BAD_REQUEST, f"HTTP/1.0 or HTTP/1.1 only, not {version!r}"
    return None


class _Received:
    """A request's input: the bytes the loop received first (its head, maybe more), then its
    socket. The head is whole in them, so reading it never waits on the client."""

    def __init__(self, connection: Connection) -> None:
        self._connection = connection

    def readline(self, limit: int = -1) -> bytes:
        received = self._connection.received
        end = received.find(b"\n")
        size = len(received) if end < 0 else end + 1
        if limit >= 0:
            size = min(size, limit)
        line = bytes(received[:size])
        del received[:size]
        return line

    def readinto1(self, buffer: memoryview) -> int:
        received = self._connection.received
        if received:
            size = min(len(buffer), len(received))
            buffer[:size] = received[:size]
            del received[:size]
            return size
        return self._connection.sock.recv_into(buffer)

    def close(self) -> None:
        pass


class _Sent:
    """A request's output: straight to its socket."""

    def __init__(self, sock: socket.socket) -> None:
        self._sock = sock
        self.closed = False

    def write(self, data: bytes) -> int:
        self._sock.sendall(data)
        return len(data)

    def flush(self) -> None:
        pass


@functools.cache
def declared_parsers() -> Mapping[str, dict[str, str]]:
    """Each declared format's parser and version, read once from the installed distributions'
    metadata, at the first capabilities request (not at import: a start that is refused, as
    from an interpreter the service's user cannot run, must say why before anything else)."""
    return {
        name: {"parser": spec.parser, "parser_version": spec.parser_version()}
        for name, spec in AVAILABLE.items()
    }


def capabilities(settings: Settings) -> dict[str, Any]:
    """The body of GET /v1/capabilities."""
    return {
        "contract_version": CONTRACT_VERSION,
        "extractor": dict(EXTRACTOR),
        "max_bytes": settings.max_bytes,
        # Extractions this service runs at once (LOOM_EXTRACTOR_CONCURRENCY), an extension of
        # contract v1's answer: a client keeps no more in flight, so none waits here against its
        # own deadline.
        "slots": settings.concurrency,
        # `parser` and `parser_version` per format extend contract v1 (a client that does not
        # know them ignores them): each reader's own, so a server sees which formats' parser
        # changed, not only that the service did.
        "formats": [
            {"format": fmt, "options": list(options), **declared_parsers()[fmt]}
            for fmt, options in sorted(DECLARED_FORMATS.items())
        ],
    }


class ExtractorHandler(BaseHTTPRequestHandler):
    """One request whose head the loop received: http.server parses it, this answers it. It is
    made, runs and ends in the constructor (socketserver's way), on the request's own thread."""

    server: ExtractorServer  # type: ignore[assignment]
    protocol_version = "HTTP/1.1"  # keep-alive: a client sends many files over one connection
    server_version = SERVER_NAME
    sys_version = ""
    timeout = _ANSWER_TIMEOUT_S

    def __init__(
        self,
        connection: Connection,
        server: ExtractorServer,
        refusal: tuple[HTTPStatus, str] | None,
    ) -> None:
        self._client = connection
        self._refusal = refusal
        super().__init__(connection.sock, connection.address, server)  # type: ignore[arg-type]

    def setup(self) -> None:
        self.connection = self.request
        self.rfile = _Received(self._client)  # type: ignore[assignment]
        self.wfile = _Sent(self.connection)  # type: ignore[assignment]
        self._body_unread = False
        self._expects_continue = False
        self._status: int | str | None = None
        self._left: str | None = None

    def handle(self) -> None:
        self.close_connection = True
        try:
            if self._refusal is not None:
                status, message = self._refusal
                self.command, self.path = None, ""  # type: ignore[assignment]
                self.requestline = ""
                self.send_error(status, message)
                self._linger()
            else:
                self.handle_one_request()
        except ClientLeft as error:  # from an answer of http.server's (a 400 or 414)
            self._left = str(error)
            self.close_connection = True
        if self._status is not None or self._left is not None:
            self._log_outcome()

    def finish(self) -> None:
        pass  # the loop keeps or closes the connection

    # http.server calls do_<METHOD> and answers 501 when there is none; every method, known or
    # made up (OPTIONS, HEAD, BREW), goes through the same checks instead: the token first (401),
    # then the path's own method (405 with Allow).
    def __getattr__(self, name: str) -> Callable[[], None]:
        if name.startswith("do_"):
            return self._dispatch
        raise AttributeError(name)

    def _dispatch(self) -> None:
        self._body_unread = bool(
            self.headers.get("Content-Length", "0").strip() not in ("", "0")
            or "Transfer-Encoding" in self.headers
        )
        try:
            self._answer()
        except CallerGone:
            self._left = "during its extraction, which was stopped"
        except ClientLeft as error:
            self._left = str(error)
        if self._left is not None:
            self.close_connection = True  # nobody is left to answer
        elif self._body_unread:
            self._linger()

    def _answer(self) -> None:
        try:
            self._authorize()
            path, _, query = self.path.partition("?")
            if path == CAPABILITIES_PATH:
                self._allow("GET")
                self._send_json(HTTPStatus.OK, capabilities(self.server.settings))
            elif path == EXTRACT_PATH:
                self._allow("POST")
                self._extract(query)
            else:
                raise HttpError(HTTPStatus.NOT_FOUND, "not_found", f"no such path: {path[:200]}")
        except HttpError as error:
            self._send_error_body(error.status, error.code, error.message, error.headers)
        except ExtractError as error:
            self._send_error_body(HTTPStatus.UNPROCESSABLE_ENTITY, error.code, error.message)
        except (CallerGone, ClientLeft):
            raise  # the client's doing, not the service's: no 500
        except Exception:  # a defect here must still answer, and as the contract's error body
            self.log_error("internal error:\n%s", traceback.format_exc())
            self._send_error_body(
                HTTPStatus.INTERNAL_SERVER_ERROR, "internal", "the extractor failed on this call"
            )

    def _authorize(self) -> None:
        presented = self.headers.get_all("Authorization") or []
        scheme, _, token = presented[0].partition(" ") if len(presented) == 1 else ("", "", "")
        # compare_digest: the time taken does not tell how much of a guess was right.
        if scheme.lower() != "bearer" or not hmac.compare_digest(
            token.strip().encode("latin-1", "replace"), self.server.token
        ):
            raise HttpError(
                HTTPStatus.UNAUTHORIZED,
                "unauthorized",
                "a valid bearer token is required",
                {"WWW-Authenticate": "Bearer"},
            )

    def _allow(self, method: str) -> None:
        if self.command != method:
            raise HttpError(
                HTTPStatus.METHOD_NOT_ALLOWED,
                "method_not_allowed",
                f"{self.command} is not allowed here; use {method}",
                {"Allow": method},
            )

    def _extract(self, query: str) -> None:
        fmt, name, options = _extract_parameters(query)
        length = self._content_length()
        limits = Limits.of(self.server.settings)
        settings = self.server.settings
        with self.server.bodies.held() as held:
            # Read before a slot is taken: a body that trickles holds its own thread, no slot,
            # and of the budget only the bytes it has sent.
            data = self._read_body(length, held)
            with self.server.slots.taken(length, settings.queue_wait_s):
                artifact = run_extraction(
                    data,
                    fmt,
                    name,
                    options,
                    limits,
                    caller=self.connection,
                    warm=self.server.template is not None,
                )
            del data  # the budget bounds the originals held in memory: this one is let go with it
        self._send(HTTPStatus.OK, artifact)

    def _content_length(self) -> int:
        """The body's declared length, refused before a byte of it is read."""
        if "Transfer-Encoding" in self.headers:
            raise HttpError(
                HTTPStatus.LENGTH_REQUIRED,
                "length_required",
                "send the original with a Content-Length, not a chunked body",
            )
        given = self.headers.get_all("Content-Length") or []
        if not given:
            raise HttpError(
                HTTPStatus.LENGTH_REQUIRED, "length_required", "a Content-Length is required"
            )
        if len(given) > 1:
            # Two lengths, even equal, are two readings of where this request ends.
            raise HttpError(
                HTTPStatus.BAD_REQUEST, "bad_request", "Content-Length is given more than once"
            )
        digits = given[0].strip()
        # ASCII digits only: str.isdigit() also takes "²" and "٣", which int() refuses or reads.
        if not (digits.isascii() and digits.isdigit()):
            raise HttpError(
                HTTPStatus.BAD_REQUEST,
                "bad_request",
                f"Content-Length {given[0][:40]!r} is not a size",
            )
        # Past 19 digits it is over any max_bytes; int() of thousands of digits would refuse.
        length = int(digits) if len(digits.lstrip("0")) <= 19 else sys.maxsize
        limit = self.server.settings.max_bytes
        if length > limit:
            raise ExtractError(
                "too_large", f"the original is {length} bytes, over this service's {limit}"
            )
        return length

    def _read_body(self, length: int, held: Held) -> bytearray:
        """The body, received whole within LOOM_EXTRACTOR_BODY_TIMEOUT_S (or a 408), each part
        counted in the body budget as it arrives (a 503 when there is no room for it within
        LOOM_EXTRACTOR_QUEUE_WAIT_S)."""
        if self._expects_continue:
            # Only now, with the request accepted, is the body asked for.
            self.send_response_only(HTTPStatus.CONTINUE)
            try:
                self.end_headers()
            except OSError as error:
                raise ClientLeft(f"before its body was asked for ({error.strerror})") from None
        settings = self.server.settings
        allowed_s = settings.body_timeout_s
        deadline = time.monotonic() + allowed_s
        data = bytearray()
        part = bytearray(min(length, _BODY_CHUNK))
        view = memoryview(part)
        try:
            while len(data) < length:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise TimeoutError
                # The socket's timeout bounds one wait; the deadline bounds them all.
                self.connection.settimeout(remaining)
                count = self.rfile.readinto1(view[: length - len(data)])
                if not count:
                    raise ConnectionResetError("closed")
                if not held.take(count, min(settings.queue_wait_s, remaining)):
                    raise busy(
                        f"no memory for this body within {settings.queue_wait_s:g} s"
                        f" ({len(data)} of {length} bytes received; the bodies held at once are"
                        " bounded by 2 x LOOM_EXTRACTOR_CONCURRENCY x LOOM_EXTRACTOR_MAX_BYTES,"
                        " LOOM_EXTRACTOR_QUEUE_WAIT_S); try again later"
                    )
                data += view[:count]
        except TimeoutError:
            raise HttpError(
                HTTPStatus.REQUEST_TIMEOUT,
                "request_timeout",
                f"the body was not received within {allowed_s:g} s"
                f" ({len(data)} of {length} bytes; LOOM_EXTRACTOR_BODY_TIMEOUT_S)",
            ) from None
        except OSError as error:
            reason = error.strerror or str(error)
            raise ClientLeft(
                f"before its body was sent whole ({len(data)} of {length} bytes; {reason})"
            ) from None
        finally:
            view.release()
            self.connection.settimeout(self.timeout)
        self._body_unread = False
        return data

    def handle_expect_100(self) -> bool:
        # http.server would answer 100 Continue before any check; defer it to _read_body, so a
        # refused request's body is never sent at all.
        self._expects_continue = True
        return True

    def _send_json(self, status: HTTPStatus, body: dict[str, Any]) -> None:
        self._send(status, json.dumps(body, ensure_ascii=False).encode("utf-8"))

    def _send_error_body(
        self,
        status: HTTPStatus,
        code: str,
        message: str,
        headers: dict[str, str] | None = None,
    ) -> None:
        body = {"error": {"code": code, "message": message}}
        self._send(status, json.dumps(body, ensure_ascii=False).encode("utf-8"), headers)

    def _send(self, status: HTTPStatus, body: bytes, headers: dict[str, str] | None = None) -> None:
        """The whole answer; raises ClientLeft when the client is gone before it is written."""
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        if self._body_unread:
            # The unread body would be taken for the next request: this connection ends here.
            self.close_connection = True
        if self.close_connection:
            self.send_header("Connection", "close")
        try:
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(body)
        except OSError as error:
            reason = error.strerror or type(error).__name__
            raise ClientLeft(f"before its answer was written ({reason})") from None

    def _linger(self) -> None:
        """Read and drop what the client still sends of a refused body, within a bound."""
        try:
            self.connection.shutdown(socket.SHUT_WR)
            self.connection.settimeout(_LINGER_S)
            deadline = time.monotonic() + _LINGER_S
            dropped = 0
            while dropped < _LINGER_BYTES and time.monotonic() < deadline:
                chunk = self.connection.recv(64 * 1024)
                if not chunk:
                    break
                dropped += len(chunk)
        except OSError:
            pass  # the client is gone already, which is all this waited for

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        """http.server's own refusals (a malformed request, an unknown method) as error bodies,
        always with a status line and headers: this service speaks no HTTP/0.9."""
        status = HTTPStatus(code)
        if status == HTTPStatus.HTTP_VERSION_NOT_SUPPORTED:
            status = HTTPStatus.BAD_REQUEST  # a request line this service cannot read
        self.request_version = self.protocol_version
        self.close_connection = True
        self._send_error_body(status, _code_for(status), message or status.phrase)

    def version_string(self) -> str:
        return self.server_version

    def log_request(self, code: int | str = "-", size: int | str = "-") -> None:
        # Written once the answer is, or is not: see _log_outcome.
        self._status = int(code) if isinstance(code, HTTPStatus) else code

    def _log_outcome(self) -> None:
        """One line per request: its method, path without its query (a file's name is the
        uploader's, not the log's), status, and whether the client left before its answer."""
        path = self.path.partition("?")[0] if self.command else ""
        if self.command:
            what = f"{self.command} {path}"
        elif self._refusal is not None:
            what = f"({self._refusal[1]})"  # visible ASCII only, cut to 100 characters
        else:
            what = "(no request line)"
        line = f"{what} {self._status if self._status is not None else '-'}"
        if self._left is not None:
            line += f": the client left {self._left}"
        self.log_message("%s", line)

    def log_message(self, format: str, *args: Any) -> None:
        self.server.log(f"{self.client_address[0]} {format % args}")


def _extract_parameters(query: str) -> tuple[str, str, dict[str, str]]:
    """(format, name, options) from POST /v1/extract's query, each checked against the contract."""
    try:
        pairs = parse_qsl(
            query, keep_blank_values=True, errors="strict", max_num_fields=_MAX_QUERY_FIELDS
        )
    except (ValueError, UnicodeDecodeError) as error:
        raise ExtractError("invalid_option", f"the query cannot be read: {error}") from None
    parameters: dict[str, str] = {}
    for key, value in pairs:
        if key not in ("format", "name", *CONTRACT_OPTIONS):
            raise ExtractError("invalid_option", f"unknown parameter {key[:100]!r}")
        if key in parameters:
            raise ExtractError("invalid_option", f"parameter {key!r} is given twice")
        parameters[key] = value

    fmt = parameters.pop("format", "")
    name = parameters.pop("name", "")
    if not fmt:
        raise ExtractError("invalid_option", "the format parameter is required")
    if fmt not in CONTRACT_FORMATS:
        raise ExtractError("unsupported_format", f"{fmt[:100]!r} is not a format contract v1 names")
    if fmt not in DECLARED_FORMATS:
        raise ExtractError("format_unavailable", f"this service does not extract {fmt}")
    for option in parameters:
        if option not in DECLARED_FORMATS[fmt]:
            raise ExtractError("invalid_option", f"{fmt} takes no {option} option")
    if "encoding" in parameters:
        # Recorded in the artifact by its canonical name, so UTF-16LE and utf_16_le parse alike.
        parameters["encoding"] = codec_name(parameters["encoding"])
    return fmt, name, parameters


def _code_for(status: HTTPStatus) -> str:
    return {
        HTTPStatus.BAD_REQUEST: "bad_request",
        HTTPStatus.NOT_IMPLEMENTED: "method_not_allowed",
        HTTPStatus.REQUEST_URI_TOO_LONG: "bad_request",
        HTTPStatus.REQUEST_HEADER_FIELDS_TOO_LARGE: "bad_request",
        HTTPStatus.HTTP_VERSION_NOT_SUPPORTED: "bad_request",
    }.get(status, "internal" if status >= 500 else "bad_request")


def serve(host: str, port: int, token: str, settings: Settings) -> int:
    """Listen until SIGTERM or SIGINT, then stop taking calls, kill running children, return 0."""
    try:
        server = ExtractorServer((host, port), token, settings)
    except OSError as error:
        print(f"loom-extractor: cannot listen on {host}:{port}: {error}", file=sys.stderr)
        return 1

    def stop(signum: int, frame: FrameType | None) -> None:
        # shutdown() waits for serve_forever, which runs on this very thread: ask from another.
        threading.Thread(target=server.shutdown, daemon=True).start()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    try:
        if server.template is not None:
            # Warm before listening: the first call finds it ready.
            server.template.start()
    except SandboxFailure as error:
        print(f"loom-extractor: {error}; LOOM_EXTRACTOR_WARM=off runs without it", file=sys.stderr)
        server.server_close()
        return 2
    print(f"loom-extractor listening on {server.url}", flush=True)
    try:
        server.serve_forever()
    finally:
        kill_all_children()
        stop_templates()
        server.server_close()
    return 0
