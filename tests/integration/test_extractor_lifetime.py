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
from pathlib import Path

from loom_dagster.errors import ExtractorUnavailable
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


def test_the_local_service_killed_is_started_again_at_its_address_and_the_batch_goes_on(
    tmp_path: Path,
) -> None:
    """Issue 34 row 8: the extractor service killed during `loom ingest` failed the rest of the
    batch `extractor_unavailable`. Now the local service Loom started is started again on the
    same address with the same token, and the batch's retries find it."""
    from loom_dagster.extractor.client import ExtractorClient
    from loom_dagster.extractor.local import reference_extractor
    from loom_dagster.extractor.settings import ENV_TOKEN, ENV_URL, ExtractorSettings
    from loom_dagster.retries import RetrySettings

    names = [f"note-{n}.md" for n in range(4)]
    with (
        reference_extractor() as running,
        ExtractorClient(
            ExtractorSettings.from_env({ENV_URL: running.url, ENV_TOKEN: running.token})
        ) as client,
    ):
        first = running.pid()
        assert first is not None
        done: list[str] = []
        failed: list[str] = []
        retry = RetrySettings(retries=4, delay_s=1.0)
        for n, name in enumerate(names):
            if n == 1:
                os.kill(first, signal.SIGKILL)  # mid-batch
            for attempt in range(retry.retries + 1):  # as pipeline.steps.extract_batch tries
                try:
                    artifact = client.extract(f"# {name}\n\nbody {n}\n".encode(), name=name)
                except ExtractorUnavailable:
                    time.sleep(retry.delay(attempt))
                    continue
                done.append(artifact.blocks[0].text if artifact.blocks else name)
                break
            else:
                failed.append(name)
        assert failed == []
        assert len(done) == len(names)
        second = running.pid()
        assert second is not None and second != first
