"""Each extraction in a child process of its own: the parent's runner and the child's entry point.

The parent (`run_extraction`, `run_child`) starts

    python -P -m extractor_sandbox.child --cpu-s N --memory-mb M

in / with an environment of PYTHONPATH, PATH and LC_ALL alone (so the service's token is not in
it) and in a process group of its own. The request comes on stdin, so the command line shows no
file name: one JSON line {"format", "name", "options"}, then the original's bytes to the end. The
child writes the artifact JSON on stdout and exits 0, or writes {"error": {"code", "message"}} and
exits EXIT_REFUSED.

The parent writes stdin and reads stdout together, bounded, against the wall clock. It kills the
whole process group (the child and anything it started) at the timeout, when the output passes its
bound, or when the caller disconnects; a child that dies without an error body is `corrupt`, with
its exit status.

The child limits itself in `confine` before it reads the source: the limits come on its command
line, so the sandbox's restrictions are applied there, after exec, where no thread of the service
can be holding a lock the child would need (which is why there is no preexec_fn).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import selectors
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from extractor_sandbox.errors import CONTRACT_CODES, ExtractError

CHILD_MODULE = "extractor_sandbox.child"
EXIT_REFUSED = 3
MAX_ERROR_BODY_BYTES = 64 * 1024
_CHUNK = 64 * 1024
_POLL_S = 0.05  # how often a runner without pidfd support looks for the child's exit

# The directory that holds the extractor_sandbox package: the child's only import root besides the
# interpreter's own (-P keeps the current and script directories off sys.path).
PACKAGE_ROOT = str(Path(__file__).resolve().parent.parent)


@dataclass(frozen=True)
class Limits:
    """What bounds one child: the parent enforces the first two, the child applies the rest."""

    timeout_s: float
    max_output_bytes: int
    cpu_s: int
    memory_mb: int


class CallerGone(Exception):
    """The caller closed its connection while its extraction ran; the child was killed."""


# -- the parent's side ---------------------------------------------------------------------------


def child_command(limits: Limits) -> list[str]:
    """The child's command line: the interpreter, the module, the limits; nothing of the request."""
    return [
        sys.executable,
        "-P",
        "-m",
        CHILD_MODULE,
        f"--cpu-s={limits.cpu_s}",
        f"--memory-mb={limits.memory_mb}",
    ]


def child_environment() -> dict[str, str]:
    """The child's whole environment: nothing of the service's, its token above all, passes on."""
    return {"PYTHONPATH": PACKAGE_ROOT, "PATH": os.defpath, "LC_ALL": "C.UTF-8"}


def run_extraction(
    data: bytes,
    fmt: str,
    name: str,
    options: Mapping[str, str],
    limits: Limits,
    *,
    caller: socket.socket | None = None,
) -> bytes:
    """The artifact JSON for `data`, made by a child process; raises ExtractError or CallerGone."""
    header = json.dumps({"format": fmt, "name": name, "options": dict(options)}).encode("utf-8")
    return run_child(
        child_command(limits),
        header + b"\n" + data,
        timeout_s=limits.timeout_s,
        max_output_bytes=limits.max_output_bytes,
        caller=caller,
    )


def run_child(
    command: Sequence[str],
    request: bytes,
    *,
    timeout_s: float,
    max_output_bytes: int,
    caller: socket.socket | None = None,
) -> bytes:
    """Run `command` as a child in its own process group, `request` on its stdin; its stdout back.

    Raises ExtractError: timeout past `timeout_s` of wall clock, resource_limit when stdout passes
    `max_output_bytes`, the child's own error body when it exits non-zero with one, else corrupt.
    Raises CallerGone when `caller` (the request's connection) closes first. However it ends, the
    child's process group is killed before this returns.
    """
    deadline = time.monotonic() + timeout_s
    process = subprocess.Popen(
        list(command),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        cwd="/",
        env=child_environment(),
        start_new_session=True,  # a process group of its own, to kill with everything it started
        close_fds=True,
    )
    _live_children.add(process.pid)
    try:
        output = _exchange(process, request, deadline, max_output_bytes, caller)
    except _OverDeadline:
        raise ExtractError("timeout", f"extraction took longer than {timeout_s:g} s") from None
    except _OverOutput:
        raise ExtractError(
            "resource_limit",
            "the extraction's output passed LOOM_EXTRACTOR_MAX_OUTPUT_BYTES"
            f" ({max_output_bytes} bytes)",
        ) from None
    finally:
        _live_children.end(process)
    return _interpret(process.returncode, output)


class _OverDeadline(Exception):
    pass


class _OverOutput(Exception):
    pass


def _exchange(
    process: subprocess.Popen[bytes],
    request: bytes,
    deadline: float,
    max_output_bytes: int,
    caller: socket.socket | None,
) -> bytearray:
    """Feed stdin and drain stdout together until the child has exited and its stdout is closed.

    Both at once, so neither side can stall the other on a full pipe; bounded, so a child cannot
    make the service hold more than `max_output_bytes`.
    """
    assert process.stdin is not None and process.stdout is not None
    output = bytearray()
    pending = memoryview(request)
    exited = group_killed = False
    with selectors.DefaultSelector() as selector:
        os.set_blocking(process.stdin.fileno(), False)
        selector.register(process.stdin, selectors.EVENT_WRITE)
        selector.register(process.stdout, selectors.EVENT_READ)
        exit_fd = _pidfd(process.pid)
        if exit_fd is not None:
            selector.register(exit_fd, selectors.EVENT_READ)
        if caller is not None:
            selector.register(caller, selectors.EVENT_READ)
        try:
            while not (exited and process.stdout.closed):
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise _OverDeadline
                wait = remaining if exit_fd is not None else min(remaining, _POLL_S)
                for key, _events in selector.select(wait):
                    if key.fileobj is process.stdin:
                        pending = _feed(selector, process, pending)
                    elif key.fileobj is process.stdout:
                        _drain(selector, process, output)
                        if len(output) > max_output_bytes:
                            raise _OverOutput
                    elif key.fileobj is caller:
                        assert caller is not None
                        if _closed_by_peer(caller):
                            raise CallerGone
                        selector.unregister(caller)  # a pipelined request: stop watching
                    elif key.fileobj == exit_fd:
                        selector.unregister(exit_fd)
                        exited = True
                if not exited and exit_fd is None:
                    exited = _has_exited(process.pid)
                if exited and not group_killed:
                    # Whatever the child started dies now, so no descendant holds stdout open.
                    _kill_group(process.pid)
                    group_killed = True
        finally:
            if exit_fd is not None:
                os.close(exit_fd)
    return output


def _feed(
    selector: selectors.BaseSelector, process: subprocess.Popen[bytes], pending: memoryview
) -> memoryview:
    assert process.stdin is not None
    try:
        written = os.write(process.stdin.fileno(), pending[:_CHUNK])
    except BlockingIOError:
        return pending
    except BrokenPipeError:
        written = len(pending)  # the child stopped reading; what it makes of that is its answer
    pending = pending[written:]
    if not pending:
        selector.unregister(process.stdin)
        process.stdin.close()
    return pending


def _drain(
    selector: selectors.BaseSelector, process: subprocess.Popen[bytes], output: bytearray
) -> None:
    assert process.stdout is not None
    chunk = os.read(process.stdout.fileno(), _CHUNK)
    if chunk:
        output += chunk
    else:
        selector.unregister(process.stdout)
        process.stdout.close()


def _pidfd(pid: int) -> int | None:
    """A descriptor readable once the child exits (Linux 5.3+); None: poll for the exit instead."""
    try:
        return os.pidfd_open(pid)
    except (AttributeError, OSError):
        return None


def _has_exited(pid: int) -> bool:
    # WNOWAIT leaves the child a zombie: its pid, and so its process group's id, stays reserved
    # until it is reaped, so killing the group afterwards cannot reach an unrelated process.
    return os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None


def _closed_by_peer(connection: socket.socket) -> bool:
    timeout = connection.gettimeout()
    connection.settimeout(0)  # a socket with a timeout would wait inside recv; this must not
    try:
        return connection.recv(1, socket.MSG_PEEK) == b""
    except BlockingIOError:
        return False
    except OSError:
        return True  # reset
    finally:
        connection.settimeout(timeout)


def _kill_group(pgid: int) -> None:
    try:
        os.killpg(pgid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def _interpret(returncode: int, output: bytearray) -> bytes:
    if returncode == 0:
        if not output:
            raise ExtractError("corrupt", "the extraction process wrote no artifact")
        return bytes(output)
    refusal = _error_body(output)
    if refusal is not None:
        raise refusal
    if returncode < 0:
        raise ExtractError(
            "corrupt", f"the extraction process was killed by {_signal_name(-returncode)}"
        )
    raise ExtractError("corrupt", f"the extraction process exited with status {returncode}")


def _error_body(output: bytearray) -> ExtractError | None:
    """The child's refusal, when its stdout is exactly a contract error body."""
    if len(output) > MAX_ERROR_BODY_BYTES:
        return None
    try:
        body = json.loads(output)
        code, message = body["error"]["code"], body["error"]["message"]
    except (ValueError, KeyError, TypeError):
        return None
    if code not in CONTRACT_CODES or not isinstance(message, str):
        return None
    return ExtractError(code, message)


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


class _LiveChildren:
    """The children running now, so a service that is shutting down can kill every one."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._pids: set[int] = set()

    def add(self, pid: int) -> None:
        with self._lock:
            self._pids.add(pid)

    def end(self, process: subprocess.Popen[bytes]) -> None:
        """Kill the child's group, then reap it (only then can its pid be reused)."""
        with self._lock:
            self._pids.discard(process.pid)
            _kill_group(process.pid)
        process.wait()
        for pipe in (process.stdin, process.stdout):
            if pipe is not None and not pipe.closed:
                pipe.close()

    def kill_all(self) -> None:
        with self._lock:
            for pid in self._pids:
                _kill_group(pid)


_live_children = _LiveChildren()


def kill_all_children() -> None:
    """Kill every running child's process group (the service calls this as it shuts down)."""
    _live_children.kill_all()


# -- the child's side ----------------------------------------------------------------------------


def confine(*, cpu_s: int, memory_mb: int) -> None:
    """Limit this process before it reads the source. The sandbox's restrictions are applied here.

    Now: no core dump, so a crash never writes the uploader's bytes to disk. The parent already gave
    this process an empty environment, / as its directory and a process group of its own.
    """
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def main(argv: Sequence[str] | None = None) -> int:
    arguments = argparse.ArgumentParser(prog=CHILD_MODULE)
    arguments.add_argument("--cpu-s", type=int, required=True)
    arguments.add_argument("--memory-mb", type=int, required=True)
    parsed = arguments.parse_args(argv)
    # The wall clock and the output bound are the parent's to enforce, not the child's.
    confine(cpu_s=parsed.cpu_s, memory_mb=parsed.memory_mb)

    stdin = sys.stdin.buffer
    request = json.loads(stdin.readline())
    data = stdin.read()
    try:
        body = _artifact_bytes(data, request)
    except ExtractError as error:
        return _refuse(error)
    except MemoryError:
        return _refuse(
            ExtractError(
                "resource_limit", "the extraction ran out of memory (LOOM_EXTRACTOR_MEMORY_MB)"
            )
        )
    except Exception as error:  # any parser failure on a hostile input is `corrupt`
        return _refuse(
            ExtractError(
                "corrupt", f"the {request['format']} parser failed: {type(error).__name__}: {error}"
            )
        )
    sys.stdout.buffer.write(body)
    sys.stdout.buffer.flush()
    return 0


def _artifact_bytes(data: bytes, request: Mapping[str, Any]) -> bytes:
    from extractor_sandbox.source import extract

    artifact = extract(data, request["format"], request["name"], request["options"])
    # allow_nan=False: NaN is not JSON; a string with a lone surrogate fails to encode as UTF-8.
    text = json.dumps(artifact, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    return text.encode("utf-8")


def _refuse(error: ExtractError) -> int:
    sys.stdout.buffer.write(json.dumps(error.to_body()).encode("utf-8"))
    sys.stdout.buffer.flush()
    return EXIT_REFUSED


if __name__ == "__main__":
    sys.exit(main())
