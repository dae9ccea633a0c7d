"""The local default: a reference extractor service on loopback with a fresh token.

It is started as a separate process (`python -m extractor_sandbox serve`) and spoken to over
HTTP like any other extractor; this module never imports the extractor package.
"""

from __future__ import annotations

import os
import secrets
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import IO

from loom_dagster.errors import ExtractorUnavailable

READY_PREFIX = "loom-extractor listening on "
START_TIMEOUT_S = 30.0


@dataclass(frozen=True)
class RunningExtractor:
    url: str
    token: str


@contextmanager
def reference_extractor(host: str = "127.0.0.1") -> Iterator[RunningExtractor]:
    """Start the reference service on a free port; stop it (and its children) on exit."""
    token = secrets.token_urlsafe(32)
    env = {**os.environ, "LOOM_EXTRACTOR_TOKEN": token}
    # The service logs every request on stderr: a file, not a pipe nobody drains.
    log = tempfile.TemporaryFile(mode="w+")
    process = subprocess.Popen(
        [sys.executable, "-m", "extractor_sandbox", "serve", "--host", host, "--port", "0"],
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=log,
        text=True,
        start_new_session=True,
    )
    try:
        url = _wait_until_ready(process, log)
        yield RunningExtractor(url=url, token=token)
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        log.close()


def _wait_until_ready(process: subprocess.Popen[str], log: IO[str]) -> str:
    found: list[str] = []

    def read_stdout() -> None:
        assert process.stdout is not None
        found.append(process.stdout.readline())
        for _ in process.stdout:  # keep the pipe drained for the service's life
            pass

    reader = threading.Thread(target=read_stdout, daemon=True)
    reader.start()
    deadline = time.monotonic() + START_TIMEOUT_S
    while not found and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    line = found[0].strip() if found else ""
    if not line.startswith(READY_PREFIX):
        process.kill()
        process.wait()
        log.seek(0)
        why = log.read().strip().splitlines()[-1:] or ["no answer"]
        raise ExtractorUnavailable(f"the reference extractor did not start: {why[0]}")
    return line.removeprefix(READY_PREFIX)
