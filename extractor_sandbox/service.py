"""The HTTP service of contract v1: GET /v1/capabilities and POST /v1/extract.

Every call carries Authorization: Bearer <token>, checked before anything else. An extraction's
request is checked whole (its parameters, then its declared length against max_bytes) before the
body is read. The body is read before the request waits for one of the LOOM_EXTRACTOR_CONCURRENCY
slots, so a body that trickles holds no slot, and within LOOM_EXTRACTOR_BODY_TIMEOUT_S as a whole
(408 past it); the bodies held at once, read or being read, are bounded by a budget of twice the
slots' worth of max_bytes, reserved by each body's declared length before it is read. The parsing
itself runs in a child process (extractor_sandbox.runner starts extractor_sandbox.child).

Every answer is JSON with a Content-Length and never compressed; a refusal is the contract's error
body {"error": {"code", "message"}}: 422 for a source the service will not extract, 401 without
the token, 408 for a body not received in time, and 404, 405, 411 or 400 for a request that is not
one of the contract's.
"""

from __future__ import annotations

import functools
import hmac
import json
import signal
import socket
import socketserver
import sys
import threading
import time
import traceback
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
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
from extractor_sandbox.settings import Settings
from extractor_sandbox.source import DECLARED_FORMATS, codec_name

EXTRACTOR = {"name": "loom-reference", "version": "1"}
CAPABILITIES_PATH = "/v1/capabilities"
EXTRACT_PATH = "/v1/extract"
_MAX_QUERY_FIELDS = 16
# After refusing a request whose body it did not read, the service reads and drops what the client
# still sends for this long before closing, so the close does not reset the connection under the
# refusal before the client has read it.
_LINGER_S = 2.0
_LINGER_BYTES = 8 * 1024 * 1024


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


class ByteBudget:
    """Bytes reserved before they are read: a reservation waits until the budget has room."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._used = 0
        self._room = threading.Condition()

    @contextmanager
    def reserved(self, size: int) -> Iterator[None]:
        size = min(size, self.limit)  # one body never exceeds max_bytes, nor so the budget
        with self._room:
            self._room.wait_for(lambda: self._used + size <= self.limit)
            self._used += size
        try:
            yield
        finally:
            with self._room:
                self._used -= size
                self._room.notify_all()


class ExtractorServer(ThreadingHTTPServer):
    """The listening service: its settings, its token and its extraction slots."""

    daemon_threads = True

    def __init__(self, address: tuple[str, int], token: str, settings: Settings) -> None:
        if ":" in address[0]:
            self.address_family = socket.AF_INET6
        self.requested_host = address[0]
        self.token = token.encode("ascii")
        self.settings = settings
        self.slots = threading.BoundedSemaphore(settings.concurrency)
        self.bodies = ByteBudget(2 * settings.concurrency * settings.max_bytes)
        # Each extraction a fork of one warm template (LOOM_EXTRACTOR_WARM, on where the kernel
        # has pidfds), else a fresh interpreter.
        self.template: Template | None = (
            shared_template(Limits.of(settings)) if settings.warm else None
        )
        super().__init__(address, ExtractorHandler)

    def server_bind(self) -> None:
        # HTTPServer.server_bind looks the host up with getfqdn, a reverse DNS call that can stall
        # the start for seconds; the service never uses the name.
        socketserver.TCPServer.server_bind(self)
        self.server_name = self.requested_host
        self.server_port = int(self.server_address[1])

    @property
    def url(self) -> str:
        host = f"[{self.server_name}]" if ":" in self.server_name else self.server_name
        return f"http://{host}:{self.server_port}"


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
    server: ExtractorServer
    protocol_version = "HTTP/1.1"  # keep-alive: a client sends many files over one connection
    server_version = "loom-extractor/1"
    sys_version = ""
    timeout = 60  # seconds a connection may sit idle, or stall mid-request

    def setup(self) -> None:
        super().setup()
        self._body_unread = False
        self._expects_continue = False

    # http.server calls do_<METHOD>; every method goes through the same checks, the token first.
    def do_GET(self) -> None:
        self._dispatch()

    def do_POST(self) -> None:
        self._dispatch()

    def do_PUT(self) -> None:
        self._dispatch()

    def do_DELETE(self) -> None:
        self._dispatch()

    def do_PATCH(self) -> None:
        self._dispatch()

    def _dispatch(self) -> None:
        self._body_unread = bool(
            self.headers.get("Content-Length", "0").strip() not in ("", "0")
            or "Transfer-Encoding" in self.headers
        )
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
        except CallerGone:
            self.close_connection = True  # nobody is left to answer
        except Exception:  # a defect here must still answer, and as the contract's error body
            self.log_error("internal error:\n%s", traceback.format_exc())
            self._send_error_body(
                HTTPStatus.INTERNAL_SERVER_ERROR, "internal", "the extractor failed on this call"
            )
        if self._body_unread:
            self._linger()

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
        with self.server.bodies.reserved(length):
            # Read before a slot is taken: a body that trickles holds its own thread, no slot.
            data = self._read_body(length)
            with self.server.slots:
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

    def _read_body(self, length: int) -> bytearray:
        """The body, received whole within LOOM_EXTRACTOR_BODY_TIMEOUT_S, or a 408."""
        if self._expects_continue:
            # Only now, with the request accepted and its memory reserved, is the body asked for.
            self.send_response_only(HTTPStatus.CONTINUE)
            self.end_headers()
            self.wfile.flush()
        allowed_s = self.server.settings.body_timeout_s
        deadline = time.monotonic() + allowed_s
        data = bytearray(length)
        view = memoryview(data)
        received = 0
        try:
            while received < length:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise TimeoutError
                # The socket's timeout bounds one wait; the deadline bounds them all.
                self.connection.settimeout(remaining)
                count = self.rfile.readinto1(view[received:])
                if not count:
                    raise CallerGone
                received += count
        except TimeoutError:
            raise HttpError(
                HTTPStatus.REQUEST_TIMEOUT,
                "request_timeout",
                f"the body was not received within {allowed_s:g} s"
                f" ({received} of {length} bytes; LOOM_EXTRACTOR_BODY_TIMEOUT_S)",
            ) from None
        except OSError:
            raise CallerGone from None  # reset
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
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)
        self.wfile.flush()

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
        """http.server's own refusals (a malformed request, an unknown method) as error bodies."""
        status = HTTPStatus(code)
        self.close_connection = True
        self._send_error_body(status, _code_for(status), message or status.phrase)

    def version_string(self) -> str:
        return self.server_version

    def log_request(self, code: int | str = "-", size: int | str = "-") -> None:
        # The path without its query: a file's name is the uploader's, not the log's.
        path = getattr(self, "path", "").partition("?")[0]
        self.log_message("%s %s %s", self.command, path, str(code))

    def log_message(self, format: str, *args: Any) -> None:
        sys.stderr.write(f"loom-extractor: {self.client_address[0]} {format % args}\n")


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
