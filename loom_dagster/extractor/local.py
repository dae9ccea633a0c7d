"""The local default: a reference extractor service on loopback with a fresh token.

It is started as a separate process (`python -m extractor_sandbox serve`) and spoken to over
HTTP like any other extractor; this module never imports the extractor package.

Which Python runs it depends on who starts it. An unprivileged process starts it with its own
interpreter. Root starts it from the extractor environment that `scripts/setup` builds
(LOOM_EXTRACTOR_ENV, default /opt/loom/extractor-venv: a venv on the system's Python, root-owned and
readable by every user, holding the extractor's dependencies and a copy of the package) with
`--user` (LOOM_EXTRACTOR_USER, default nobody): the service drops to that user before it serves,
and that user must be able to run the interpreter and read the package, which this project's own
environment, under /root, is not.

The service lives no longer than the process that started it, even one killed with SIGKILL (which
runs no cleanup): the child asks the kernel for SIGKILL when its parent dies (PR_SET_PDEATHSIG,
set between fork and exec), and, since the kernel forgets that request when the service drops to
its user, the service also stops when its stdin closes (`--stop-with-stdin`): its other end is a
pipe only this process holds, which the kernel closes however this process ends.
"""

from __future__ import annotations

import ctypes
import hashlib
import importlib.util
import os
import secrets
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from loom_dagster.display import one_line
from loom_dagster.errors import ExtractorUnavailable

READY_PREFIX = "loom-extractor listening on "
START_TIMEOUT_S = 30.0
ENV_EXTRACTOR_ENV = "LOOM_EXTRACTOR_ENV"
DEFAULT_EXTRACTOR_ENV = "/opt/loom/extractor-venv"
ENV_EXTRACTOR_USER = "LOOM_EXTRACTOR_USER"
DEFAULT_EXTRACTOR_USER = "nobody"
PACKAGE = "extractor_sandbox"
# What the service is given of the caller's environment: never its credentials.
_PASSED_VARIABLES = ("PATH", "LANG", "LC_ALL", "TZ")
_PASSED_PREFIX = "LOOM_EXTRACTOR_"


@dataclass(frozen=True)
class RunningExtractor:
    url: str
    token: str
    # The service's process id now (it changes when the service is started again).
    pid: Callable[[], int | None] = field(default=lambda: None, compare=False, repr=False)


def extractor_environment() -> Path:
    """The root of the extractor environment scripts/setup builds for a start as root."""
    return Path(os.environ.get(ENV_EXTRACTOR_ENV) or DEFAULT_EXTRACTOR_ENV)


def service_command(host: str, port: int) -> list[str]:
    """The command that starts the reference service as this process may: see the module doc.

    The service stops when its stdin closes: start it with a pipe there (`tied_to_this_process`).
    Raises ExtractorUnavailable when root finds no current extractor environment.
    """
    address = ["--host", host, "--port", str(port), "--stop-with-stdin"]
    if os.geteuid() != 0:
        return [sys.executable, "-m", PACKAGE, "serve", *address]
    python = extractor_environment() / "bin" / "python"
    installed = _installed_package(extractor_environment())
    if not python.exists() or installed is None:
        raise ExtractorUnavailable(
            f"started as root, the reference extractor runs from {extractor_environment()}, which"
            " is not there: run scripts/setup as root"
        )
    ours = _our_package()
    if ours is not None and _digest(ours) != _digest(installed):
        raise ExtractorUnavailable(
            f"the reference extractor in {extractor_environment()} is not this checkout's:"
            " run scripts/setup as root again"
        )
    user = os.environ.get(ENV_EXTRACTOR_USER) or DEFAULT_EXTRACTOR_USER
    # -P -s: only the environment's own packages, never a copy in the current directory.
    return [str(python), "-P", "-s", "-m", PACKAGE, "serve", *address, "--user", user]


def service_environment(token: str) -> dict[str, str]:
    """The service's environment: the token, its LOOM_EXTRACTOR_* settings, and little else."""
    environment = {
        name: value
        for name, value in os.environ.items()
        if name in _PASSED_VARIABLES or name.startswith(_PASSED_PREFIX)
    }
    environment.pop(ENV_EXTRACTOR_ENV, None)
    environment.pop(ENV_EXTRACTOR_USER, None)
    if os.geteuid() != 0 and "PYTHONPATH" in os.environ:
        environment["PYTHONPATH"] = os.environ["PYTHONPATH"]
    environment["LOOM_EXTRACTOR_TOKEN"] = token
    return environment


@contextmanager
def reference_extractor(host: str = "127.0.0.1") -> Iterator[RunningExtractor]:
    """Start the reference service on a free port; stop it (and its children) on exit.

    While the block runs, a service that ends (killed, or crashed) is started again on the same
    address with the same token, at most MAX_RESTARTS times: the calls that failed meanwhile are
    tried again by the batch (`pipeline.steps.extract_batch`) and find it there (issue 34)."""
    token = secrets.token_urlsafe(32)
    process = _start(service_command(host, 0), token)
    url = process.url
    supervisor = _Supervisor(process, service_command(host, int(url.rsplit(":", 1)[1])), token)
    supervisor.start()
    try:
        yield RunningExtractor(url=url, token=token, pid=supervisor.pid)
    finally:
        supervisor.stop()


MAX_RESTARTS = 5
WATCH_S = 0.2


@dataclass
class _Service:
    process: subprocess.Popen[str]
    log: IO[str]
    url: str

    def stop(self) -> None:
        if self.process.stdin is not None:
            self.process.stdin.close()
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.log.close()


def _start(command: list[str], token: str) -> _Service:
    # The service logs every request on stderr: a file, not a pipe nobody drains.
    log = tempfile.TemporaryFile(mode="w+")
    try:
        process = subprocess.Popen(
            command,
            env=service_environment(token),
            stdout=subprocess.PIPE,
            stderr=log,
            text=True,
            start_new_session=True,
            **tied_to_this_process(),
        )
    except OSError as error:
        log.close()
        raise ExtractorUnavailable(
            f"the reference extractor cannot be started ({command[0]}): {error.strerror}"
        ) from error
    try:
        return _Service(process, log, _wait_until_ready(process, log))
    except BaseException:
        log.close()
        raise


class _Supervisor:
    """Watches the service from a thread of its own, starts it again when it has ended, and
    stops it at the end. The thread outlives every service it started (PR_SET_PDEATHSIG is
    bound to the starting thread): it stops the current one before it ends."""

    def __init__(self, first: _Service, command: list[str], token: str) -> None:
        self.current = first
        self.command = command
        self.token = token
        self.restarts = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)

    def pid(self) -> int | None:
        return self.current.process.pid if self.current.process.poll() is None else None

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()

    def _watch(self) -> None:
        try:
            while not self._stop.wait(WATCH_S):
                status = self.current.process.poll()
                if status is None or self.restarts >= MAX_RESTARTS:
                    continue
                self.restarts += 1
                try:
                    replacement = _start(self.command, self.token)
                except ExtractorUnavailable as error:
                    print(f"loom: the local extractor ended ({status}); {error}", file=sys.stderr)
                    continue
                self.current.log.close()
                self.current = replacement
                print(
                    f"loom: the local extractor ended ({status}); started again at"
                    f" {replacement.url} ({self.restarts} of {MAX_RESTARTS} restarts)",
                    file=sys.stderr,
                    flush=True,
                )
        finally:
            self.current.stop()


def tied_to_this_process() -> dict[str, Any]:
    """Popen arguments that end the child with this process: see the module doc.

    stdin is a pipe whose write end only this process holds (Popen's descriptors are
    close-on-exec, so no other program it starts inherits it); the caller keeps it open for the
    child's life and never writes to it.

    PR_SET_PDEATHSIG fires when the *thread* that started the child ends: start it from a thread
    that outlives it (a `with` block does).
    """
    parent = os.getpid()
    prctl = _prctl()

    def die_with_parent() -> None:
        # Between fork and exec: only async-signal-safe work (a system call, no import).
        if prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) != 0 or os.getppid() != parent:
            os._exit(1)  # the request failed, or the parent is gone already

    return {"stdin": subprocess.PIPE, "preexec_fn": die_with_parent}


_PR_SET_PDEATHSIG = 1


def _prctl() -> Any:
    # Resolved before fork, so the child only calls it.
    libc = ctypes.CDLL(None, use_errno=True)
    function = libc.prctl
    function.argtypes = [
        ctypes.c_int,
        ctypes.c_ulong,
        ctypes.c_ulong,
        ctypes.c_ulong,
        ctypes.c_ulong,
    ]
    function.restype = ctypes.c_int
    return function


def _installed_package(environment: Path) -> Path | None:
    for candidate in sorted(environment.glob(f"lib/python3*/site-packages/{PACKAGE}")):
        if (candidate / "__main__.py").is_file():
            return candidate
    return None


def _our_package() -> Path | None:
    """The extractor package installed beside this one, found without importing it."""
    spec = importlib.util.find_spec(PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


def _digest(package: Path) -> str:
    digest = hashlib.sha256()
    for path in sorted(package.rglob("*.py")):
        if "__pycache__" in path.parts:
            continue
        digest.update(str(path.relative_to(package)).encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


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
        raise ExtractorUnavailable(f"the reference extractor did not start: {one_line(why[0])}")
    return line.removeprefix(READY_PREFIX)
