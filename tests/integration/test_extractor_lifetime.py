"""The local extractor service does not outlive what started it, even a `kill -9` of it (which
runs no cleanup): the service and every process under it are gone soon after."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from contextlib import contextmanager

from loom_dagster.resources.local_extractor import READY_PREFIX
from tests.integration.loom_command import LOOM, alive_among, children, descendants

# Long enough for a loaded machine; the wait ends as soon as the processes are gone.
GONE_WITHIN_S = 20.0

LAUNCHER = textwrap.dedent(
    """
    import time
    from loom_dagster.resources.local_extractor import reference_extractor

    with reference_extractor() as running:
        print(running.url, flush=True)
        time.sleep(600)
    """
)


@contextmanager
def started(command: list[str], env: dict[str, str]) -> Iterator[subprocess.Popen[str]]:
    process = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env
    )
    try:
        yield process
    finally:
        left = descendants(process.pid)
        process.kill()
        process.wait()
        for pid in alive_among(left):  # only when the test failed: leave nothing behind
            os.kill(pid, signal.SIGKILL)


def service_under(starter: subprocess.Popen[str]) -> list[int]:
    """The service process (and anything under it) `starter` started."""
    [service] = children(starter.pid)
    return [service, *descendants(service)]


def wait_until_gone(pids: list[int]) -> list[int]:
    deadline = time.monotonic() + GONE_WITHIN_S
    while alive_among(pids) and time.monotonic() < deadline:
        time.sleep(0.1)
    return alive_among(pids)


def test_the_launched_service_ends_with_a_killed_launcher() -> None:
    with started([sys.executable, "-c", LAUNCHER], dict(os.environ)) as launcher:
        assert launcher.stdout is not None
        assert launcher.stdout.readline().startswith("http://127.0.0.1:")
        service = service_under(launcher)

        os.kill(launcher.pid, signal.SIGKILL)
        launcher.wait()

        assert wait_until_gone(service) == []


def test_loom_extractor_serve_ends_with_a_killed_loom() -> None:
    env = {**os.environ, "LOOM_EXTRACTOR_TOKEN": "t" * 32}
    with started([*LOOM, "extractor", "serve", "--port", "0"], env) as command:
        assert command.stdout is not None
        assert command.stdout.readline().startswith(READY_PREFIX)
        service = service_under(command)

        os.kill(command.pid, signal.SIGKILL)
        command.wait()

        assert wait_until_gone(service) == []
