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
from dataclasses import dataclass, field

from loom_dagster.extractor.local import READY_PREFIX
from tests.integration.loom_command import LOOM, alive_among, children, descendants

# Long enough for a loaded machine; the wait ends as soon as the processes are gone.
GONE_WITHIN_S = 20.0

LAUNCHER = textwrap.dedent(
    """
    import time
    from loom_dagster.extractor.local import reference_extractor

    with reference_extractor() as running:
        print(running.url, flush=True)
        time.sleep(600)
    """
)


@contextmanager
def started(command: list[str], env: dict[str, str]) -> Iterator[Started]:
    process = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env
    )
    run = Started(process)
    try:
        yield run
    finally:
        process.kill()
        process.wait()
        # Only when the test failed: an orphan is no longer under the starter, so kill by pid.
        for pid in alive_among([*run.service, *descendants(process.pid)]):
            os.kill(pid, signal.SIGKILL)


@dataclass
class Started:
    process: subprocess.Popen[str]
    service: list[int] = field(default_factory=list)

    def find_service(self) -> list[int]:
        """The service process (and anything under it) the starter started."""
        [service] = children(self.process.pid)
        self.service = [service, *descendants(service)]
        return self.service


def wait_until_gone(pids: list[int]) -> list[int]:
    deadline = time.monotonic() + GONE_WITHIN_S
    while alive_among(pids) and time.monotonic() < deadline:
        time.sleep(0.1)
    return alive_among(pids)


def test_the_launched_service_ends_with_a_killed_launcher() -> None:
    with started([sys.executable, "-c", LAUNCHER], dict(os.environ)) as run:
        assert run.process.stdout is not None
        assert run.process.stdout.readline().startswith("http://127.0.0.1:")
        service = run.find_service()

        os.kill(run.process.pid, signal.SIGKILL)
        run.process.wait()

        assert wait_until_gone(service) == []


def test_loom_extractor_serve_ends_with_a_killed_loom() -> None:
    env = {**os.environ, "LOOM_EXTRACTOR_TOKEN": "t" * 32}
    with started([*LOOM, "extractor", "serve", "--port", "0"], env) as run:
        assert run.process.stdout is not None
        assert run.process.stdout.readline().startswith(READY_PREFIX)
        service = run.find_service()

        os.kill(run.process.pid, signal.SIGKILL)
        run.process.wait()

        assert wait_until_gone(service) == []
