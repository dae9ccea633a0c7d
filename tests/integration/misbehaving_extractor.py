"""A real HTTP server on 127.0.0.1 that answers the extractor contract's two paths however a
test tells it to: any status, headers and body, late, trickled, compressed, redirected, or not
at all. It records every request, so a test can assert what the client sent.

    with MisbehavingExtractor() as service:
        service.replies["/v1/extract"] = Reply(status=503)
        ...
        assert service.requests_to("/v1/extract")[0].headers["authorization"] == "Bearer t"
"""

from __future__ import annotations

import gzip
import http
import json
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from urllib.parse import parse_qs, urlsplit

CAPABILITIES = "/v1/capabilities"
EXTRACT = "/v1/extract"


@dataclass(frozen=True)
class Reply:
    """How the server answers one request."""

    status: int = 200
    headers: Mapping[str, str] = field(default_factory=dict)
    body: bytes = b""
    delay_s: float = 0.0  # before the status line
    stall_after_headers_s: float = 0.0  # after the headers, before the body
    trickle_s: float = 0.0  # the body one byte at a time, this long apart
    content_length: bool = True  # False: no Content-Length, the body ends when the socket closes
    close_without_answer: bool = False


@dataclass(frozen=True)
class Recorded:
    method: str
    path: str
    query: Mapping[str, list[str]]
    headers: Mapping[str, str]  # names lowercased
    body: bytes


def json_reply(document: object, status: int = 200) -> Reply:
    """A JSON answer; dataclasses.replace() it to make it late, trickled or unbounded."""
    return Reply(status, {"Content-Type": "application/json"}, json.dumps(document).encode())


def error_reply(status: int, code: object, message: object = "refused") -> Reply:
    return json_reply({"error": {"code": code, "message": message}}, status)


def redirect_reply(location: str, status: int = 302) -> Reply:
    return Reply(status, {"Location": location})


def gzip_reply(document: object, status: int = 200, encoding: str = "gzip") -> Reply:
    body = gzip.compress(json.dumps(document).encode())
    headers = {"Content-Type": "application/json", "Content-Encoding": encoding}
    return Reply(status, headers, body)


def capabilities_reply(
    formats: Mapping[str, Sequence[str]],
    *,
    max_bytes: int = 1024 * 1024,
    version: int = 1,
    slots: object = None,
) -> Reply:
    """The capabilities answer; `slots` (an extension of v1's) is left out when None."""
    document: dict[str, object] = {
        "contract_version": version,
        "extractor": {"name": "misbehaving", "version": "1"},
        "max_bytes": max_bytes,
        "formats": [
            {"format": name, "options": list(options)} for name, options in formats.items()
        ],
    }
    if slots is not None:
        document["slots"] = slots
    return json_reply(document)


DEFAULT_FORMATS: Mapping[str, Sequence[str]] = {
    "markdown": ["encoding"],
    "text": ["encoding"],
    "sql": ["encoding", "sql_dialect"],
    "pdf": [],
}


def artifact(fmt: str = "markdown") -> dict[str, object]:
    """A valid artifact for a one-line original ('# Hi\\n')."""
    return {
        "schema_version": 1,
        "format": fmt,
        "parser": "misbehaving",
        "parser_version": "1",
        "options": {},
        "attrs": {},
        "warnings": [],
        "coverage": {"unit": "lines", "total": 1, "extracted": 1, "failed": [], "lost": []},
        "blocks": [
            {
                "id": "b0",
                "type": "paragraph",
                "text": "# Hi",
                "section_path": [],
                "keys": [],
                "locator": {"line_start": 1, "line_end": 1},
            }
        ],
    }


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False

    def __init__(self, owner: MisbehavingExtractor) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.owner = owner

    def handle_error(self, request: object, client_address: object) -> None:
        pass  # a client that gave up mid-answer is what these tests provoke


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.1"
    _answering: str | None = None  # the path of the request counted in flight

    def log_message(self, format: str, *args: object) -> None:
        pass

    def do_GET(self) -> None:
        self._answer()

    def do_POST(self) -> None:
        self._answer()

    def _answer(self) -> None:
        owner = self.server.owner
        path = urlsplit(self.path).path
        owner._enter(path)
        self._answering = path
        try:
            self._answer_recorded(owner)
        finally:
            self._done_answering()

    def _done_answering(self) -> None:
        """Count this request out before its last byte goes: once the client has that byte it
        may send its next request, which can arrive before this thread runs again."""
        path, self._answering = self._answering, None
        if path is not None:
            self.server.owner._leave(path)

    def _answer_recorded(self, owner: MisbehavingExtractor) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        parts = urlsplit(self.path)
        recorded = Recorded(
            method=self.command,
            path=parts.path,
            query=parse_qs(parts.query, keep_blank_values=True),
            headers={name.lower(): value for name, value in self.headers.items()},
            body=body,
        )
        owner._record(recorded)
        reply = owner.reply_for(recorded)
        self.close_connection = True
        if owner.stopping.wait(reply.delay_s) or reply.close_without_answer:
            return
        if not reply.body:
            self._done_answering()
        self._write_head(reply)
        if owner.stopping.wait(reply.stall_after_headers_s):
            return
        if reply.trickle_s:
            for index in range(len(reply.body)):
                if index == len(reply.body) - 1:
                    self._done_answering()
                self.wfile.write(reply.body[index : index + 1])
                self.wfile.flush()
                if owner.stopping.wait(reply.trickle_s):
                    return
        else:
            self._done_answering()
            self.wfile.write(reply.body)

    def _write_head(self, reply: Reply) -> None:
        try:
            phrase = http.HTTPStatus(reply.status).phrase
        except ValueError:
            phrase = "Misbehaving"
        lines = [f"HTTP/1.1 {reply.status} {phrase}"]
        lines += [f"{name}: {value}" for name, value in reply.headers.items()]
        if reply.content_length and "Content-Length" not in reply.headers:
            lines.append(f"Content-Length: {len(reply.body)}")
        lines.append("Connection: close")
        self.wfile.write(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1"))
        self.wfile.flush()


class MisbehavingExtractor:
    """Started on a free port as a context manager; `url` is its base URL."""

    def __init__(self, formats: Mapping[str, Sequence[str]] = DEFAULT_FORMATS) -> None:
        self.replies: dict[str, Reply] = {
            CAPABILITIES: capabilities_reply(formats),
            EXTRACT: json_reply(artifact("markdown")),
        }
        self.requests: list[Recorded] = []
        # Per path: requests being answered now, and the most there ever were at once.
        self.in_flight: dict[str, int] = {}
        self.most_in_flight: dict[str, int] = {}
        self.stopping = threading.Event()
        self._lock = threading.Lock()
        self._server = _Server(self)
        # A short poll interval: shutdown() waits for one, and every test stops a server.
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def reply_for(self, request: Recorded) -> Reply:
        """How to answer `request`: by its path; a subclass may answer per file."""
        return self.replies.get(request.path, Reply(404))

    def requests_to(self, path: str) -> list[Recorded]:
        with self._lock:
            return [request for request in self.requests if request.path == path]

    def _record(self, request: Recorded) -> None:
        with self._lock:
            self.requests.append(request)

    def _enter(self, path: str) -> None:
        with self._lock:
            now = self.in_flight[path] = self.in_flight.get(path, 0) + 1
            self.most_in_flight[path] = max(self.most_in_flight.get(path, 0), now)

    def _leave(self, path: str) -> None:
        with self._lock:
            self.in_flight[path] -= 1

    def __enter__(self) -> MisbehavingExtractor:
        self._thread.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.stopping.set()  # wakes every handler that is sleeping on purpose
        self._server.shutdown()
        self._server.server_close()
        self._thread.join()
