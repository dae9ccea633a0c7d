"""Starting the server: over stdio (the caller's own process, the scope it was started with) or
over HTTP (loopback unless told otherwise; never without a token file)."""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Sequence
from pathlib import Path

from loom_dagster.errors import SettingsError
from loom_dagster.serve import bounds
from loom_dagster.serve.tokens import EVERYTHING, Scope


def loopback(host: str) -> bool:
    """Whether every address `host` names is a loopback one."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        pass
    try:
        addresses = {str(info[4][0]) for info in socket.getaddrinfo(host, None)}
    except OSError:
        return False
    return bool(addresses) and all(
        ipaddress.ip_address(a.split("%")[0]).is_loopback for a in addresses
    )


def run_stdio(sources: Sequence[str], seconds: float = bounds.DEFAULT_SECONDS) -> None:
    from loom_dagster.serve.app import Service, build_mcp
    from loom_dagster.serve.reader import Reader

    scope = Scope("stdio", frozenset(sources)) if sources else EVERYTHING
    build_mcp(Service(Reader(), seconds), scope).run("stdio")


def check_http(host: str, token_file: Path | None) -> None:
    if token_file is None:
        where = "loopback" if loopback(host) else f"{host}, which is not loopback"
        raise SettingsError(
            f"refusing to serve HTTP on {where} without --token-file: every HTTP request needs"
            " a bearer token (`loom serve token` makes one)"
        )


def run_http(
    host: str, port: int, token_file: Path | None, seconds: float = bounds.DEFAULT_SECONDS
) -> None:
    import uvicorn

    from loom_dagster.serve.app import Service, http_app
    from loom_dagster.serve.reader import Reader
    from loom_dagster.serve.tokens import load

    check_http(host, token_file)
    assert token_file is not None
    tokens = load(token_file)
    if not len(tokens):
        raise SettingsError("the token file holds no token: `loom serve token` makes one")
    app = http_app(Service(Reader(), seconds), tokens, host)
    uvicorn.run(
        app,
        host=host,
        port=port,
        log_level="warning",
        access_log=False,  # a URL may carry a passage id or a path; tokens are never logged
        timeout_graceful_shutdown=5,
    )
