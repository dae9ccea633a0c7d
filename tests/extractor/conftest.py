"""Real extractor services for the tests: `python -m extractor_sandbox serve` on 127.0.0.1."""

from __future__ import annotations

import os
import re
import secrets
import selectors
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import NamedTuple

import pytest

LISTENING = re.compile(r"loom-extractor listening on (http://127\.0\.0\.1:(\d+))\n")
START_TIMEOUT_S = 20


class Service(NamedTuple):
    url: str
    token: str


class RunningService(NamedTuple):
    url: str
    token: str
    process: subprocess.Popen[str]
    stderr_path: Path


def service_environment(
    token: str | None, overrides: Mapping[str, str] | None = None
) -> dict[str, str]:
    """This test process's environment without any LOOM_EXTRACTOR_* of its own, plus `overrides`."""
    environment = {
        name: value for name, value in os.environ.items() if not name.startswith("LOOM_EXTRACTOR_")
    }
    if token is not None:
        environment["LOOM_EXTRACTOR_TOKEN"] = token
    environment.update(overrides or {})
    return environment


def serve_command(*extra: str) -> list[str]:
    return [
        sys.executable,
        "-m",
        "extractor_sandbox",
        "serve",
        "--host",
        "127.0.0.1",
        "--port",
        "0",
        *extra,
    ]


def start_service(
    stderr_path: Path,
    *,
    token: str | None = None,
    env: Mapping[str, str] | None = None,
    extra_args: tuple[str, ...] = (),
) -> RunningService:
    """Start a service and wait for its listening line; its log goes to `stderr_path`."""
    token = token if token is not None else secrets.token_urlsafe(24)
    with stderr_path.open("w") as stderr:
        process = subprocess.Popen(
            serve_command(*extra_args),
            stdout=subprocess.PIPE,
            stderr=stderr,
            env=service_environment(None if "--token-file" in extra_args else token, env),
            text=True,
        )
    line = _first_line(process, START_TIMEOUT_S)
    match = LISTENING.fullmatch(line)
    if match is None:
        process.kill()
        process.wait()
        raise AssertionError(
            f"no listening line: {line!r}; stderr: {stderr_path.read_text(errors='replace')}"
        )
    return RunningService(match.group(1), token, process, stderr_path)


def stop_service(service: RunningService) -> int:
    service.process.terminate()
    try:
        return service.process.wait(timeout=10)
    finally:
        if service.process.poll() is None:
            service.process.kill()
            service.process.wait()
        assert service.process.stdout is not None
        service.process.stdout.close()


def _first_line(process: subprocess.Popen[str], timeout_s: float) -> str:
    assert process.stdout is not None
    deadline = time.monotonic() + timeout_s
    with selectors.DefaultSelector() as selector:
        selector.register(process.stdout, selectors.EVENT_READ)
        while time.monotonic() < deadline:
            if selector.select(deadline - time.monotonic()):
                return process.stdout.readline()
    return ""


@pytest.fixture(scope="session")
def extractor(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    """One service for the session, with a fresh token: (url, token)."""
    service = start_service(tmp_path_factory.mktemp("extractor") / "stderr.log")
    yield Service(service.url, service.token)
    stop_service(service)


@pytest.fixture
def start_extractor(tmp_path: Path) -> Iterator[Callable[..., RunningService]]:
    """Start services with their own settings; each is stopped when the test ends."""
    started: list[RunningService] = []

    def start(
        env: Mapping[str, str] | None = None,
        *,
        token: str | None = None,
        extra_args: tuple[str, ...] = (),
    ) -> RunningService:
        service = start_service(
            tmp_path / f"stderr-{len(started)}.log", token=token, env=env, extra_args=extra_args
        )
        started.append(service)
        return service

    yield start
    for service in started:
        if service.process.poll() is None:
            stop_service(service)
        elif service.process.stdout is not None:
            service.process.stdout.close()
