"""`loom serve --http` for a bench: a free loopback port, a token for every source, and the
server waited for until it answers (bench/load.py, bench/serve_latency.py)."""

from __future__ import annotations

import contextlib
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx

from loom_dagster.serve.tokens import add_token

LOOM = str(Path(sys.executable).with_name("loom"))


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextlib.contextmanager
def serving(
    env: dict[str, str], base: Path, *, start_within_s: float = 120
) -> Iterator[tuple[str, str]]:
    """`loom serve --http` on the home `env` names: its URL and a bearer token for every
    source; its stderr goes to `base`/serve.log."""
    tokens = base / "tokens.json"
    tokens.unlink(missing_ok=True)
    token = add_token(tokens, "bench", ["*"])
    port = free_port()
    with open(base / "serve.log", "wb") as log:
        server = subprocess.Popen(
            [LOOM, "serve", "--http", "--port", str(port), "--token-file", str(tokens)],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=log,
        )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + start_within_s
        while True:
            try:
                httpx.get(f"{url}/v1/formats", timeout=1)
                break
            except httpx.HTTPError:
                if server.poll() is not None or time.monotonic() > deadline:
                    raise SystemExit(
                        f"loom serve did not start; see {base / 'serve.log'}"
                    ) from None
                time.sleep(0.3)
        yield url, token
    finally:
        server.terminate()
        server.wait(10)
