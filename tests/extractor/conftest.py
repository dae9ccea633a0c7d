"""Real extractor services for the tests: `python -m extractor_sandbox serve` on 127.0.0.1.

Run as root (as CI runs), a service is started the way a deployment starts it: as root with
`--user nobody`, so it drops before it serves. The user it drops to cannot read this project's
interpreter or checkout (both under /root here), so it runs on the extractor environment that
scripts/setup builds as root, with a world-readable copy of this checkout's package, made for the
test session, ahead of that environment's own copy on PYTHONPATH: the tests test this checkout.
"""

from __future__ import annotations

import atexit
import compileall
import functools
import os
import pwd
import re
import resource
import secrets
import selectors
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any, NamedTuple

import pytest

from loom_dagster.extractor.local import extractor_environment

LISTENING = re.compile(r"loom-extractor listening on (http://127\.0\.0\.1:(\d+))\n")
START_TIMEOUT_S = 20
PACKAGE = Path(__file__).resolve().parents[2] / "extractor_sandbox"
AS_ROOT = os.geteuid() == 0
SERVICE_USER = "nobody"


def service_python() -> str:
    """The interpreter services and confined test children run on (see the module doc)."""
    if not AS_ROOT:
        return sys.executable
    python = extractor_environment() / "bin" / "python"
    if not python.exists():
        pytest.fail(
            f"no extractor environment at {extractor_environment()}: run scripts/setup as root"
        )
    return str(python)


def world_readable_tree(prefix: str) -> Path:
    """A new root-owned directory every user can read but not write, removed when the tests end."""
    root = Path(tempfile.mkdtemp(prefix=prefix))
    root.chmod(0o755)
    atexit.register(shutil.rmtree, root, True)
    return root


def copy_package(
    root: Path, replace: Mapping[str, str] | None = None, extra: Mapping[str, str] | None = None
) -> Path:
    """A copy of this checkout's package under `root`, readable by every user, not writable.

    `replace` maps a path inside the package to the text that stands in for that file.
    `extra` maps a file name to the text of a file put beside the package (a test's own script).
    """
    target = root / "extractor_sandbox"
    shutil.copytree(PACKAGE, target, ignore=shutil.ignore_patterns("__pycache__"))
    for relative, text in (replace or {}).items():
        (target / relative).write_text(text)
    for name, text in (extra or {}).items():
        (root / name).write_text(text)
    compileall.compile_dir(str(target), quiet=1)
    for path in [root, *root.rglob("*")]:
        path.chmod(0o755 if path.is_dir() else 0o644)
    return root


@functools.cache
def package_root() -> Path:
    """Where a service of this session imports the package from: this checkout's, or, as root,
    a world-readable copy of it."""
    if not AS_ROOT:
        return PACKAGE.parent
    return copy_package(world_readable_tree("loom-extractor-test-"))


def as_service_user() -> dict[str, Any]:
    """subprocess keyword arguments that run a process as the service's user, when we are root."""
    if not AS_ROOT:
        return {}
    user = pwd.getpwnam(SERVICE_USER)
    return {"user": user.pw_uid, "group": user.pw_gid, "extra_groups": []}


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
    if AS_ROOT:
        environment["PYTHONPATH"] = str(package_root())
    if token is not None:
        environment["LOOM_EXTRACTOR_TOKEN"] = token
    environment.update(overrides or {})
    return environment


def serve_command(*extra: str) -> list[str]:
    """The service's command; as root, one that drops to SERVICE_USER unless `extra` names a user."""
    user = ["--user", SERVICE_USER] if AS_ROOT and "--user" not in extra else []
    return [
        service_python(),
        "-P",
        "-s",
        "-m",
        "extractor_sandbox",
        "serve",
        "--host",
        "127.0.0.1",
        "--port",
        "0",
        *user,
        *extra,
    ]


def start_service(
    stderr_path: Path,
    *,
    token: str | None = None,
    env: Mapping[str, str] | None = None,
    extra_args: tuple[str, ...] = (),
    package: Path | None = None,
    as_user: bool = False,
    open_files: int | None = None,
) -> RunningService:
    """Start a service and wait for its listening line; its log goes to `stderr_path`.

    `package`: the directory to import the package from instead of `package_root()`.
    `as_user`: start it as SERVICE_USER already (as root would, by default, start it and drop).
    `open_files`: the service's open-file limit (RLIMIT_NOFILE, soft and hard), as `ulimit -n`.
    """
    token = token if token is not None else secrets.token_urlsafe(24)
    environment = service_environment(None if "--token-file" in extra_args else token, env)
    if package is not None:
        environment["PYTHONPATH"] = str(package)
    with stderr_path.open("w") as stderr:
        process = subprocess.Popen(
            serve_command(*extra_args),
            stdout=subprocess.PIPE,
            stderr=stderr,
            env=environment,
            text=True,
            preexec_fn=None if open_files is None else functools.partial(_limit_files, open_files),
            **(as_service_user() if as_user else {}),
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


def _limit_files(count: int) -> None:
    resource.setrlimit(resource.RLIMIT_NOFILE, (count, count))


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
        package: Path | None = None,
        as_user: bool = False,
        open_files: int | None = None,
    ) -> RunningService:
        service = start_service(
            tmp_path / f"stderr-{len(started)}.log",
            token=token,
            env=env,
            extra_args=extra_args,
            package=package,
            as_user=as_user,
            open_files=open_files,
        )
        started.append(service)
        return service

    yield start
    for service in started:
        if service.process.poll() is None:
            stop_service(service)
        elif service.process.stdout is not None:
            service.process.stdout.close()
