"""One HTTP call to an extractor, bounded as a whole by a deadline, and how an answer that is
not an artifact reads: a refusal with the contract's code, or a service unusable right now."""

from __future__ import annotations

import json
import re
import socket
import threading
import time
from collections.abc import Mapping
from typing import Any

import httpx

from loom_dagster.errors import ExtractorUnavailable
from loom_dagster.extractor.routing import Capabilities, NotCapabilities, parse_capabilities
from loom_dagster.extractor.settings import shown

MAX_ERROR_BODY_BYTES = 64 * 1024
# A capabilities document lists at most a few dozen formats; anything near this is not one.
MAX_CAPABILITIES_BYTES = 1024 * 1024
# Answers that mean "this service cannot be used now", not "this source is refused".
UNAVAILABLE_4XX = frozenset({401, 403, 407, 408, 429})

_ERROR_CODE = re.compile(r"[a-z_]{1,40}")


class Watchdog:
    """Shuts a call's socket down at its deadline, so no phase of the call outlives it.

    httpx's timeouts are per phase (connect, each write, each read): a service that trickles
    bytes slower than the timeout but faster than each read's limit would hold a call open
    indefinitely. The socket is learnt from httpcore's documented `trace` extension when the
    connection is made; shutting it down wakes whichever read or write is blocked on it.
    """

    def __init__(self, deadline: float) -> None:
        self._lock = threading.Lock()
        self._socket: socket.socket | None = None
        self.expired = False
        self._done = False
        self._timer = threading.Timer(max(0.0, deadline - time.monotonic()), self._expire)
        self._timer.daemon = True

    def start(self) -> None:
        self._timer.start()

    def stop(self) -> None:
        self._timer.cancel()
        with self._lock:
            self._done = True
            self._socket = None

    def trace(self, event: str, info: Mapping[str, Any]) -> None:
        if event != "connection.connect_tcp.complete":
            return
        stream = info.get("return_value")
        sock = None if stream is None else stream.get_extra_info("socket")
        with self._lock:
            if self._done:
                return
            self._socket = sock
            expired = self.expired
        if expired and sock is not None:
            _shut_down(sock)

    def _expire(self) -> None:
        with self._lock:
            if self._done:
                return
            self.expired = True
            sock = self._socket
        if sock is not None:
            _shut_down(sock)


def _shut_down(sock: socket.socket) -> None:
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass  # already closed: the call ended on its own


class Answer:
    """A service's answer whose body has not been read yet."""

    def __init__(self, url: str, response: httpx.Response, deadline: float) -> None:
        self.url = url
        self.status = response.status_code
        self.headers = response.headers
        self._response = response
        self._deadline = deadline

    def read(self, limit: int) -> bytes | None:
        """The body, or None as soon as it is longer than `limit` bytes (the rest is not read).

        The raw bytes are read, never decoded: a compressed answer is refused before this.
        """
        declared = self.headers.get("content-length", "")
        if declared.isdigit() and int(declared) > limit:
            return None
        body = bytearray()
        # iter_raw() with no chunk size yields each read as it arrives (a chunk size would
        # buffer up to it), so the deadline is checked after every read.
        for chunk in self._response.iter_raw():
            body += chunk
            if len(body) > limit:
                return None
            if time.monotonic() > self._deadline:
                raise past_deadline(self.url)
        return bytes(body)


def past_deadline(url: str) -> ExtractorUnavailable:
    return ExtractorUnavailable(f"the extractor at {url} did not answer within the timeout")


def unavailable(url: str, why: str) -> ExtractorUnavailable:
    return ExtractorUnavailable(f"the extractor at {url} {why}")


def one_line(text: str, limit: int = 300) -> str:
    """An untrusted message made safe for a log line: one line, printable, bounded."""
    cleaned = "".join(char if char.isprintable() else " " for char in text)
    cleaned = " ".join(cleaned.split())
    return cleaned if len(cleaned) <= limit else cleaned[: limit - 3] + "..."


def refuse_compressed(answer: Answer) -> None:
    encodings = answer.headers.get_list("content-encoding")
    if any(encoding.strip().lower() != "identity" for encoding in encodings):
        raise unavailable(
            answer.url,
            f"sent a compressed answer (Content-Encoding: {one_line(', '.join(encodings), 60)})",
        )


def why_unusable(status: int) -> str:
    if status in (401, 403, 407):
        return f"refused the server's token ({status})"
    if 300 <= status < 400:
        return f"answered a redirect ({status}), which is not followed"
    return f"answered {status}"


def refusal(answer: Answer) -> tuple[str, str]:
    """The code and message of a 4xx error body; `refused` when it is not the contract's shape."""
    prefix = f"the extractor at {answer.url} refused the source ({answer.status})"
    body = answer.read(MAX_ERROR_BODY_BYTES)
    if body is None:
        return "refused", f"{prefix}: its error body is over {MAX_ERROR_BODY_BYTES} bytes"
    try:
        document = json.loads(body)
    except ValueError:  # also UnicodeDecodeError
        return "refused", f"{prefix}: its error body is not JSON"
    error = document.get("error") if isinstance(document, dict) else None
    if not isinstance(error, dict) or not isinstance(error.get("message", ""), str):
        return "refused", f"{prefix}: its error body is not the contract's error shape"
    code, message = error.get("code"), one_line(error.get("message", ""))
    if not isinstance(code, str) or not _ERROR_CODE.fullmatch(code):
        return "refused", f"{prefix} with a code outside the contract: {shown(code, 60)}"
    # The service's own words are what a user needs; where it came from is in the run's log.
    return code, message or prefix


def capabilities_from(answer: Answer) -> Capabilities:
    refuse_compressed(answer)
    if answer.status != 200:
        raise unavailable(answer.url, why_unusable(answer.status) + " to /v1/capabilities")
    body = answer.read(MAX_CAPABILITIES_BYTES)
    if body is None:
        raise unavailable(answer.url, f"sent capabilities over {MAX_CAPABILITIES_BYTES} bytes")
    try:
        return parse_capabilities(body)
    except NotCapabilities as exc:
        raise unavailable(
            answer.url, f"sent capabilities that are not the contract's: {exc}"
        ) from exc
