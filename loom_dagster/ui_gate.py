"""The gate in front of `loom ui`'s webserver: only the user who started it gets in.

The webserver listens on a Unix socket in a folder only that user can open (`ui_webserver`);
the gate listens on loopback TCP (the port `loom ui --port` names) and passes a connection on
to that socket only when its request carries the session's token, which `loom ui` made, printed
as a URL and wrote to `$LOOM_HOME/ui/url` (0600):

- `?loom_token=<token>` in the URL: answered with a redirect to the same URL without it, which
  sets the token as a cookie (`loom_ui_<port>`, HttpOnly, SameSite=Strict), so the browser
  sends it with every later request, websockets included;
- the cookie, or `Authorization: Bearer <token>` (scripts, tests): passed on;
- anything else, GraphQL and websockets included: `401` and a line saying where the URL is.

Every request is checked: a request passed on is sent with `Connection: close`, so a connection
carries one request (a websocket's upgrade is the one request of its connection). Plain asyncio
in a thread of the `loom ui` process; no Dagster.
"""

from __future__ import annotations

import asyncio
import hmac
import secrets
import socket
import threading
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

TOKEN_PARAMETER = "loom_token"
HEAD_LIMIT = 64 * 1024
HEAD_TIMEOUT_S = 30.0
REFUSAL = b"loom ui: this needs the URL with the token that loom ui printed ($LOOM_HOME/ui/url)\n"


def new_token() -> str:
    return secrets.token_urlsafe(32)


def cookie_name(port: int) -> str:
    # Cookies are per host, not per port: two `loom ui`s on one host keep theirs apart.
    return f"loom_ui_{port}"


class Gate:
    """Listens on `host:port` (bound at once, so a port in use fails here) and, once `start`ed,
    serves from a daemon thread until the process ends."""

    def __init__(self, host: str, port: int, backend_socket: str, token: str) -> None:
        self.token = token
        self.backend_socket = backend_socket
        self.listener = socket.create_server((host, port))
        self.port = int(self.listener.getsockname()[1])
        self.cookie = cookie_name(self.port)

    def url(self, host: str = "127.0.0.1") -> str:
        return f"http://{host}:{self.port}/?{TOKEN_PARAMETER}={self.token}"

    def start(self) -> None:
        threading.Thread(target=asyncio.run, args=(self._serve(),), daemon=True).start()

    async def _serve(self) -> None:
        server = await asyncio.start_server(self._handle, sock=self.listener, limit=HEAD_LIMIT)
        async with server:
            await server.serve_forever()

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), HEAD_TIMEOUT_S)
            await self._answer(head, reader, writer)
        except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, TimeoutError, OSError):
            pass
        except ValueError:
            await _reply(writer, 400, "Bad Request", b"loom ui: a malformed request\n")
        finally:
            writer.close()

    async def _answer(
        self, head: bytes, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        request_line, *lines = head[:-4].decode("latin-1").split("\r\n")
        method, target, version = request_line.split(" ")
        headers = [tuple(part.strip() for part in line.split(":", 1)) for line in lines]
        if any(len(h) != 2 for h in headers):
            raise ValueError("header")
        named = {name.lower(): value for name, value in headers}
        parts = urlsplit(target)
        query = parse_qsl(parts.query, keep_blank_values=True)
        given = [v for k, v in query if k == TOKEN_PARAMETER]
        if given:
            if not self._is_token(given[0]):
                return await _reply(writer, 401, "Unauthorized", REFUSAL)
            rest = urlencode([(k, v) for k, v in query if k != TOKEN_PARAMETER])
            location = urlunsplit(("", "", parts.path or "/", rest, parts.fragment))
            cookie = f"{self.cookie}={self.token}; Path=/; HttpOnly; SameSite=Strict"
            return await _reply(
                writer, 303, "See Other", b"", [("Location", location), ("Set-Cookie", cookie)]
            )
        if not self._carries_token(named):
            return await _reply(writer, 401, "Unauthorized", REFUSAL)
        await self._pass_on(method, target, version, headers, named, reader, writer)

    def _is_token(self, given: str) -> bool:
        return hmac.compare_digest(given.encode(), self.token.encode())

    def _carries_token(self, named: dict[str, str]) -> bool:
        bearer = named.get("authorization", "")
        if bearer[:7].lower() == "bearer " and self._is_token(bearer[7:].strip()):
            return True
        for crumb in named.get("cookie", "").split(";"):
            name, _, value = crumb.strip().partition("=")
            if name == self.cookie and self._is_token(value):
                return True
        return False

    async def _pass_on(
        self,
        method: str,
        target: str,
        version: str,
        headers: list[tuple[str, ...]],
        named: dict[str, str],
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
    ) -> None:
        upgrade = "upgrade" in named.get("connection", "").lower()
        if not upgrade:  # one request a connection: each one is checked here
            headers = [h for h in headers if h[0].lower() not in ("connection", "keep-alive")]
            headers.append(("Connection", "close"))
        head = f"{method} {target} {version}\r\n" + "".join(f"{n}: {v}\r\n" for n, v in headers)
        try:
            back_reader, back_writer = await asyncio.open_unix_connection(self.backend_socket)
        except OSError:
            return await _reply(
                writer, 502, "Bad Gateway", b"loom ui: the Dagster webserver is not up yet\n"
            )
        back_writer.write(head.encode("latin-1") + b"\r\n")
        upstream = asyncio.ensure_future(_pipe(reader, back_writer))
        try:
            await _pipe(back_reader, writer)  # the answer ends the connection
        finally:
            upstream.cancel()
            back_writer.close()


async def _pipe(source: asyncio.StreamReader, sink: asyncio.StreamWriter) -> None:
    try:
        while chunk := await source.read(65536):
            sink.write(chunk)
            await sink.drain()
    except OSError:
        pass
    finally:
        if sink.can_write_eof():
            try:
                sink.write_eof()
            except OSError:
                pass


async def _reply(
    writer: asyncio.StreamWriter,
    status: int,
    reason: str,
    body: bytes,
    extra: list[tuple[str, str]] | None = None,
) -> None:
    lines = [f"HTTP/1.1 {status} {reason}", "Content-Type: text/plain; charset=utf-8"]
    lines += [f"{name}: {value}" for name, value in extra or []]
    lines += [f"Content-Length: {len(body)}", "Connection: close", "", ""]
    writer.write("\r\n".join(lines).encode("latin-1") + body)
    try:
        await writer.drain()
    except OSError:
        pass
