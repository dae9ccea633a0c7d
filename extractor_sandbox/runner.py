"""The parent's side of an extraction: each one in a child process of its own.

`run_extraction` gets that child from this process's template for the limits (`Template`,
`shared_template`: `python -P -s -m extractor_sandbox.child ...` started once on a Unix socket,
warmed, and forked per extraction; see extractor_sandbox/template.py), and supervises it exactly as
a fresh one. Without `warm` (LOOM_EXTRACTOR_WARM=off), or on a kernel without pidfds, it and
`run_child` start a fresh interpreter,

    python -P -s -m extractor_sandbox.child --cpu-s=N --memory-mb=M

in / with an environment of PYTHONPATH, PATH, LC_ALL and ARROW_DEFAULT_MEMORY_POOL alone (so the service's token is not in
it) and in a process group of its own. The request comes on stdin, so the command line shows no
file name: one JSON line {"format", "name", "options", "max_artifact_bytes"} (the artifact's
bound for this original's size, which the child cuts it to: output_size.py), then the original's bytes to the end. The
child (extractor_sandbox.child) writes the artifact JSON on stdout and exits 0, or writes
{"error": {"code", "message"}} and exits EXIT_REFUSED.

The parent writes stdin and reads stdout (and a bounded tail of stderr) together, against the wall
clock. It kills the whole process group (the child and anything it started) at the timeout, when
the output passes its bound, or when the caller disconnects, and returns only once the child is
reaped and no process of its group is left. A child killed by its CPU limit is a `timeout`; one
that ran out of address space is a `resource_limit`; one that dies otherwise without an error body
is `corrupt`, with its exit status, except that a warm fork killed by SIGKILL below its CPU limit
(by nothing of its file's: so from outside) is run once more, in the time left, first.

The limits come on the child's command line, so they are applied there, after exec, where no
thread of the service can be holding a lock the child would need (which is why there is no
preexec_fn).
"""

from __future__ import annotations

import functools
import json
import os
import selectors
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from typing import IO, Any, NamedTuple, Protocol

from extractor_sandbox import sandbox
from extractor_sandbox.child import CHILD_MODULE, EXIT_SANDBOX
from extractor_sandbox.errors import CONTRACT_CODES, ExtractError
from extractor_sandbox.ocr_settings import ocr_environment
from extractor_sandbox.output_size import DEFAULT_PER_INPUT_BYTE, artifact_byte_bound
from extractor_sandbox.settings import Settings
from extractor_sandbox.template import GO, MAX_MESSAGE_BYTES

MAX_ERROR_BODY_BYTES = 64 * 1024
_CHUNK = 64 * 1024
_STDERR_TAIL_BYTES = 4 * 1024  # what is kept of a child's stderr, to tell how it died
_POLL_S = 0.05  # how often a runner without pidfd support looks for the child's exit
_GROUP_GONE_S = 5.0  # how long the runner waits for a killed process group to be gone
TEMPLATE_START_S = 60.0  # how long the template may take to warm up and answer
_STRAYS_S = 10.0  # how long after a template died its unknown forks are looked for

# The directory that holds the extractor_sandbox package: the child's only import root besides the
# interpreter's own (-P keeps the current and script directories off sys.path, -s the user's site).
PACKAGE_ROOT = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))

# What a child that ran out of address space may leave on its stderr when it could not answer.
_OUT_OF_MEMORY_MARKS = (b"MemoryError", b"Cannot allocate memory", b"bad_alloc", b"out of memory")


class Limits(NamedTuple):
    """What bounds one child: the parent enforces the first two, the child applies the rest."""

    timeout_s: float
    max_output_bytes: int
    cpu_s: int
    memory_mb: int
    # artifact bytes per byte of the original, past ARTIFACT_BYTES_FLOOR: the child cuts to it
    per_input_byte: int = DEFAULT_PER_INPUT_BYTE

    @classmethod
    def of(cls, settings: Settings) -> Limits:
        """The limits the service's settings give each child."""
        return cls(
            timeout_s=settings.timeout_s,
            max_output_bytes=settings.max_output_bytes,
            cpu_s=settings.cpu_s,
            memory_mb=settings.memory_mb,
            per_input_byte=settings.max_output_per_input_byte,
        )


class CallerGone(Exception):
    """The caller closed its connection while its extraction ran; the child was killed."""


class SandboxFailure(RuntimeError):
    """The child could not confine itself; it read nothing. A defect of the service, not the file."""


def child_command(limits: Limits) -> list[str]:
    """The child's command line: the interpreter, the module, the limits; nothing of the request."""
    return [
        sys.executable,
        "-P",
        "-s",
        "-m",
        CHILD_MODULE,
        f"--cpu-s={limits.cpu_s}",
        f"--memory-mb={limits.memory_mb}",
    ]


def child_environment() -> dict[str, str]:
    """The child's whole environment: nothing of the service's, its token above all, passes on.

    pyarrow allocates from the system's memory pool (the seed's "Parquet."): its default,
    mimalloc, reserves about 1.5 GB of address space as it warms, most of the child's limit, and
    the pool is chosen once, when pyarrow loads, so it is set here rather than in its FormatSpec's prepare step.
    """
    environment = {
        "PYTHONPATH": PACKAGE_ROOT,
        "PATH": os.defpath,
        "LC_ALL": "C.UTF-8",
        "ARROW_DEFAULT_MEMORY_POOL": "system",
    }
    # The OCR settings, checked by the service at start (formats/ocr.py reads them in the child).
    environment.update(ocr_environment(os.environ))
    return environment


def run_extraction(
    data: bytes | bytearray,
    fmt: str,
    name: str,
    options: Mapping[str, str],
    limits: Limits,
    *,
    caller: socket.socket | None = None,
    warm: bool = True,
) -> bytes:
    """The artifact JSON for `data`, made by a child process: with `warm` (and a kernel with
    pidfds) a fork of this process's template for `limits`, else a fresh interpreter. Raises
    ExtractError, CallerGone or SandboxFailure."""
    bound = artifact_byte_bound(len(data), limits.per_input_byte, limits.max_output_bytes)
    header = json.dumps(
        {"format": fmt, "name": name, "options": dict(options), "max_artifact_bytes": bound}
    ).encode("utf-8")
    request = header + b"\n" + data
    template = shared_template(limits) if warm else None
    if template is None:
        return run_child(
            child_command(limits),
            request,
            timeout_s=limits.timeout_s,
            max_output_bytes=limits.max_output_bytes,
            cpu_s=limits.cpu_s,
            caller=caller,
        )
    deadline = time.monotonic() + limits.timeout_s

    def forked_once() -> bytes:
        forked = template.fork()
        return _supervise(
            forked,
            request,
            deadline,
            timeout_s=limits.timeout_s,
            max_output_bytes=limits.max_output_bytes,
            cpu_s=limits.cpu_s,
            caller=caller,
            cpu_base=forked.cpu_base,
        )

    try:
        return forked_once()
    except _KilledFromOutside:
        # No limit of the file's SIGKILLs it (_interpret tells its CPU limit apart): a first such
        # kill is taken for one from outside the file, and it runs again, in what time is left;
        # not when the kill was the service's own, as it stops (kill_all_children).
        if _live_children.stopping:
            raise
        return forked_once()


def run_child(
    command: Sequence[str],
    request: bytes,
    *,
    timeout_s: float,
    max_output_bytes: int,
    cpu_s: int | None = None,
    caller: socket.socket | None = None,
) -> bytes:
    """Run `command` as a child in its own process group, `request` on its stdin; its stdout back.

    Raises ExtractError: timeout past `timeout_s` of wall clock or past the child's CPU limit
    (`cpu_s`, for the message), resource_limit when stdout passes `max_output_bytes` or the child
    ran out of memory, the child's own error body when it exits non-zero with one, else corrupt.
    Raises CallerGone when `caller` (the request's connection) closes first, SandboxFailure when
    the child could not confine itself. However it ends, the child's process group is killed and
    gone, and the child reaped, before this returns.
    """
    deadline = time.monotonic() + timeout_s
    process = subprocess.Popen(
        list(command),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd="/",
        env=child_environment(),
        start_new_session=True,  # a process group of its own, to kill with everything it started
        close_fds=True,
    )
    _live_children.add(process.pid)
    return _supervise(
        process,
        request,
        deadline,
        timeout_s=timeout_s,
        max_output_bytes=max_output_bytes,
        cpu_s=cpu_s,
        caller=caller,
    )


def _supervise(
    process: _Process,
    request: bytes,
    deadline: float,
    *,
    timeout_s: float,
    max_output_bytes: int,
    cpu_s: int | None,
    caller: socket.socket | None,
    cpu_base: int = 0,
) -> bytes:
    """Exchange with a started child (already counted live) until it has ended; its answer.

    `cpu_base`: the CPU seconds the child had used before its extraction began (a template that
    became the extraction), which its limit and the reading of its CPU time leave out."""
    stderr_tail = bytearray()
    cpu_used = 0.0
    try:
        output = _exchange(process, request, deadline, max_output_bytes, caller, stderr_tail)
    except _OverDeadline:
        raise ExtractError("timeout", f"extraction took longer than {timeout_s:g} s") from None
    except _OverOutput:
        raise ExtractError(
            "resource_limit",
            "the extraction's output passed LOOM_EXTRACTOR_MAX_OUTPUT_BYTES"
            f" ({max_output_bytes} bytes)",
        ) from None
    finally:
        cpu_used = _live_children.end(process) - cpu_base
    assert process.returncode is not None
    return _interpret(process.returncode, output, bytes(stderr_tail), cpu_used, cpu_s)


class _KilledFromOutside(ExtractError):
    """A child killed by SIGKILL below its CPU limit, with no error body: no limit of the file's
    did that, so something outside it did (a warm extraction forked on run again once)."""


class _OverDeadline(Exception):
    pass


class _OverOutput(Exception):
    pass


def _exchange(
    process: _Process,
    request: bytes,
    deadline: float,
    max_output_bytes: int,
    caller: socket.socket | None,
    stderr_tail: bytearray,
) -> bytearray:
    """Feed stdin and drain stdout together until the child has exited and its stdout is closed.

    Both at once, so neither side can stall the other on a full pipe; bounded, so a child cannot
    make the service hold more than `max_output_bytes` (and the last few KiB of its stderr).
    """
    assert process.stdin is not None and process.stdout is not None
    assert process.stderr is not None
    output = bytearray()
    pending = memoryview(request)
    exited = group_killed = False
    with selectors.DefaultSelector() as selector:
        os.set_blocking(process.stdin.fileno(), False)
        selector.register(process.stdin, selectors.EVENT_WRITE)
        selector.register(process.stdout, selectors.EVENT_READ)
        selector.register(process.stderr, selectors.EVENT_READ)
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
                        _drain(selector, process.stdout, output)
                        if len(output) > max_output_bytes:
                            raise _OverOutput
                    elif key.fileobj is process.stderr:
                        _drain(selector, process.stderr, stderr_tail)
                        del stderr_tail[:-_STDERR_TAIL_BYTES]
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
    _drain_rest(process.stderr, stderr_tail)
    return output


def _feed(selector: selectors.BaseSelector, process: _Process, pending: memoryview) -> memoryview:
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


def _drain(selector: selectors.BaseSelector, pipe: Any, into: bytearray) -> None:
    chunk = os.read(pipe.fileno(), _CHUNK)
    if chunk:
        into += chunk
    else:
        selector.unregister(pipe)
        pipe.close()


def _drain_rest(pipe: Any, tail: bytearray) -> None:
    """What the dead child's stderr still holds, without waiting for more."""
    if pipe.closed:
        return
    os.set_blocking(pipe.fileno(), False)
    try:
        while chunk := os.read(pipe.fileno(), _CHUNK):
            tail += chunk
            del tail[:-_STDERR_TAIL_BYTES]
    except BlockingIOError:
        pass
    finally:
        pipe.close()


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


def _group_members(pgid: int) -> list[int]:
    """The live (not zombie) processes whose process group is `pgid`."""
    # After the command: state, ppid, pgrp.
    return [
        pid
        for pid, fields in _processes()
        if int(fields[2]) == pgid and fields[0] not in (b"Z", b"X")
    ]


def _processes() -> Iterator[tuple[int, list[bytes]]]:
    """Every process's id and the fields of its /proc/<pid>/stat after the command's name."""
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as file:
                fields = file.read().rsplit(b")", 1)[1].split()
        except OSError:
            continue  # gone meanwhile
        yield int(entry), fields


def _wait_until_group_gone(pgid: int) -> None:
    """Return once no live process is left in the group (its leader already killed and reaped).

    The group was sent SIGKILL while its leader was still unreaped, so its id could not have been
    reused; what is found here is what that signal has not finished off yet.
    """
    deadline = time.monotonic() + _GROUP_GONE_S
    while True:
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return  # no process of the group at all
        members = _group_members(pgid)
        if not members:
            return  # zombies only, left to whoever reaps orphans
        for pid in members:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        if time.monotonic() > deadline:
            raise RuntimeError(f"process group {pgid} survived SIGKILL for {_GROUP_GONE_S:g} s")
        time.sleep(0.01)


def _interpret(
    returncode: int, output: bytearray, stderr_tail: bytes, cpu_used: float, cpu_s: int | None
) -> bytes:
    if returncode == 0:
        if not output:
            raise ExtractError("corrupt", "the extraction process wrote no artifact")
        return bytes(output)
    refusal = _error_body(output)
    if refusal is not None:
        raise refusal
    if returncode == EXIT_SANDBOX:
        why = stderr_tail.decode("utf-8", "replace").strip().splitlines() or ["no reason given"]
        raise SandboxFailure(f"the extraction process could not confine itself: {why[-1]}")
    over_cpu = cpu_s is not None and cpu_used >= cpu_s
    if returncode == -signal.SIGXCPU or (returncode == -signal.SIGKILL and over_cpu):
        limit = f"{cpu_s} s of CPU" if cpu_s is not None else "its CPU time"
        raise ExtractError("timeout", f"extraction used more than {limit} (LOOM_EXTRACTOR_CPU_S)")
    if any(mark in stderr_tail for mark in _OUT_OF_MEMORY_MARKS):
        raise ExtractError(
            "resource_limit", "the extraction ran out of memory (LOOM_EXTRACTOR_MEMORY_MB)"
        )
    if returncode == -signal.SIGKILL:
        raise _KilledFromOutside("corrupt", "the extraction process was killed by SIGKILL")
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
    """The children running now, so a service that is shutting down can kill every one, and the
    ones not reaped yet, which nothing but their own runner may reap."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._pids: set[int] = set()
        self._owned: set[int] = set()
        self.stopping = False  # kill_all has run: the service is stopping

    def add(self, pid: int) -> None:
        with self._lock:
            self._pids.add(pid)
            self._owned.add(pid)

    def owned(self) -> set[int]:
        with self._lock:
            return set(self._owned)

    def end(self, process: _Process) -> float:
        """Kill the child's group, reap the child, wait until its group is gone; its CPU seconds.

        The group is killed while the child is still unreaped, so its id cannot have been reused.
        """
        with self._lock:
            self._pids.discard(process.pid)
            _kill_group(process.pid)
        cpu_used = 0.0
        try:
            try:
                _, status, usage = os.wait4(process.pid, 0)
            except ChildProcessError:
                process.wait()
            else:
                process.returncode = os.waitstatus_to_exitcode(status)
                cpu_used = usage.ru_utime + usage.ru_stime
        finally:
            with self._lock:
                self._owned.discard(process.pid)
            for pipe in (process.stdin, process.stdout, process.stderr):
                if pipe is not None and not pipe.closed:
                    pipe.close()
        _wait_until_group_gone(process.pid)
        return cpu_used

    def kill_all(self) -> None:
        with self._lock:
            self.stopping = True
            for pid in self._pids:
                _kill_group(pid)


_live_children = _LiveChildren()


def kill_all_children() -> None:
    """Kill every running child's process group (the service calls this as it shuts down)."""
    _live_children.kill_all()


# -- the template process -------------------------------------------------------------------------


class _Process(Protocol):
    """What the runner needs of a child: a subprocess.Popen, or a template's fork (_Forked)."""

    pid: int
    returncode: int | None

    @property
    def stdin(self) -> IO[bytes] | None: ...  # pragma: no cover

    @property
    def stdout(self) -> IO[bytes] | None: ...  # pragma: no cover

    @property
    def stderr(self) -> IO[bytes] | None: ...  # pragma: no cover

    def wait(self) -> int: ...  # pragma: no cover


class _Forked:
    """An extraction forked from the template: the service's child, with pipes to its stdio."""

    def __init__(self, pid: int, stdin: int, stdout: int, stderr: int, cpu_base: int) -> None:
        self.pid = pid
        self.returncode: int | None = None
        self.cpu_base = cpu_base
        self.stdin: IO[bytes] | None = open(stdin, "wb", buffering=0)  # noqa: SIM115
        self.stdout: IO[bytes] | None = open(stdout, "rb", buffering=0)  # noqa: SIM115
        self.stderr: IO[bytes] | None = open(stderr, "rb", buffering=0)  # noqa: SIM115

    def wait(self) -> int:
        # Only a child of the service can be reaped by it; the template hands over no other.
        raise SandboxFailure(f"the extraction process {self.pid} is not the service's child")


class TemplateGone(Exception):
    """The template process is dead, or does not answer: it is started again."""


class Template:
    """The service's side of its template process (extractor_sandbox.template): started with the
    command, environment and directory of a fresh child, on a Unix socket instead of a pipe; asked
    for one fork per extraction, the fork's stdio pipes passed to it (SCM_RIGHTS); started again
    when it is gone. The forks are the service's children (it is their subreaper), so `run_child`'s
    supervision, limits and kills apply to them unchanged.
    """

    def __init__(self, limits: Limits, *, start_timeout_s: float = TEMPLATE_START_S) -> None:
        self._command = child_command(limits)
        self._start_timeout_s = start_timeout_s
        self._lock = threading.Lock()
        self._control: socket.socket | None = None
        self._pidfd: int | None = None  # the template's, to kill it whatever its pid became
        self._dead: list[int] = []  # pidfds of templates killed and not reaped yet
        self._strays_until = 0.0

    @staticmethod
    @functools.cache
    def supported() -> bool:
        """Whether this kernel and Python have what the template needs (pidfds, Linux 5.4)."""
        if not hasattr(os, "pidfd_open") or not hasattr(signal, "pidfd_send_signal"):
            return False
        try:
            os.close(os.pidfd_open(os.getpid()))
        except OSError:
            return False
        return True

    @property
    def pid(self) -> int | None:
        """The template process now (for tests and logs); None when none runs."""
        with self._lock:
            return self._pid

    def start(self) -> None:
        """Start the template now, if none runs; raises SandboxFailure when it cannot start."""
        with self._lock:
            if self._control is None:
                self._start()

    def fork(self) -> _Forked:
        """A new extraction process, forked from the template (started again if it is gone)."""
        with self._lock:
            self._reap_dead()
            failure: TemplateGone | None = None
            for _attempt in range(2):
                if self._control is None:
                    self._start()
                try:
                    forked = self._go()
                except TemplateGone as gone:
                    failure = gone
                    self._discard()
                    continue
                if failure is not None:
                    self._reap_dead()  # the one just found dead, if it is the service's already
                return forked
            raise SandboxFailure(f"the template process failed: {failure}")

    def close(self) -> None:
        """Stop the template (the service is stopping)."""
        with self._lock:
            self._discard()

    # -- under the lock ---------------------------------------------------------------------------

    _pid: int | None = None

    def _start(self) -> None:
        sandbox.become_subreaper()  # before the template forks: its forks must come to the service
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            with theirs:
                first = subprocess.Popen(
                    self._command,
                    stdin=theirs.fileno(),
                    stdout=subprocess.DEVNULL,
                    cwd="/",
                    env=child_environment(),
                    start_new_session=True,
                    close_fds=True,
                )
            try:
                ours.settimeout(self._start_timeout_s)
                reply, fds = _receive(ours)
                status = first.wait(timeout=self._start_timeout_s)
            except (OSError, subprocess.TimeoutExpired) as error:
                first.kill()
                first.wait()
                raise SandboxFailure(f"the template process did not start: {error}") from None
            if not reply or status != 0 or len(fds) != 1:
                _close_all(fds)
                raise SandboxFailure(f"the template process did not start (exit status {status})")
        except BaseException:
            ours.close()
            raise
        ours.settimeout(self._start_timeout_s)  # a fork answers in milliseconds
        self._control, self._pidfd, self._pid = ours, fds[0], int(reply["template"])

    def _go(self) -> _Forked:
        assert self._control is not None
        stdin, stdout, stderr = os.pipe(), os.pipe(), os.pipe()
        theirs = [stdin[0], stdout[1], stderr[1]]
        ours = [stdin[1], stdout[0], stderr[0]]
        try:
            try:
                socket.send_fds(self._control, [GO], theirs)
                reply, fds = _receive(self._control)
            except OSError as error:
                raise TemplateGone(str(error) or type(error).__name__) from None
            finally:
                _close_all(theirs)
            if not reply:
                raise TemplateGone("it closed its socket")
            if "error" in reply:
                _close_all(fds)
                raise SandboxFailure(f"the template process could not fork: {reply['error']}")
            if "template" in reply:
                # It became this extraction; its successor serves the next one.
                if self._pidfd is not None:
                    os.close(self._pidfd)
                self._pidfd, self._pid = fds[0], int(reply["template"])
            child = int(reply["child"])
            _live_children.add(child)
            return _Forked(child, ours[0], ours[1], ours[2], cpu_base=int(reply["cpu_base"]))
        except BaseException:
            _close_all(ours)
            raise

    def _discard(self) -> None:
        """Kill the template (by pidfd: its pid may have been reaped and reused) and forget it."""
        if self._pidfd is not None:
            try:
                signal.pidfd_send_signal(self._pidfd, signal.SIGKILL)
            except ProcessLookupError:
                pass
            self._dead.append(self._pidfd)
        if self._control is not None:
            self._control.close()
        self._control, self._pidfd, self._pid = None, None, None
        # A template that died while it forked may leave a process nobody knows the pid of.
        self._strays_until = time.monotonic() + _STRAYS_S

    def _reap_dead(self) -> None:
        """Reap killed templates once they are the service's children (a template under a
        running extraction is adopted when that ends), and, for a while after one died, any
        exited child of the service that no runner owns."""
        for pidfd in list(self._dead):
            try:
                reaped = os.waitid(os.P_PIDFD, pidfd, os.WEXITED | os.WNOHANG)
            except ChildProcessError:
                continue  # not ours yet
            if reaped is not None:
                os.close(pidfd)
                self._dead.remove(pidfd)
        if time.monotonic() < self._strays_until:
            owned = _live_children.owned()
            for pid in _zombie_children(os.getpid()):
                if pid not in owned:
                    try:
                        os.waitpid(pid, os.WNOHANG)
                    except ChildProcessError:
                        pass


_templates: dict[tuple[str, ...], Template] = {}
_templates_lock = threading.Lock()


def shared_template(limits: Limits) -> Template | None:
    """This process's template for children of `limits` (one per child command line: the limits
    its forks apply are on it), made on first use and started on the first fork; None where the
    kernel lacks what a template needs."""
    if not Template.supported():
        return None
    command = tuple(child_command(limits))
    with _templates_lock:
        template = _templates.get(command)
        if template is None:
            template = _templates[command] = Template(limits)
    return template


def stop_templates() -> None:
    """Stop every template of this process (the service calls this as it shuts down)."""
    with _templates_lock:
        templates = list(_templates.values())
        _templates.clear()
    for template in templates:
        template.close()


def _receive(control: socket.socket) -> tuple[dict[str, Any] | None, list[int]]:
    message, fds, _flags, _address = socket.recv_fds(control, MAX_MESSAGE_BYTES, 1)
    return (json.loads(message) if message else None), fds


def _close_all(fds: Sequence[int]) -> None:
    for fd in fds:
        try:
            os.close(fd)
        except OSError:
            pass


def _zombie_children(parent: int) -> list[int]:
    """The exited, unreaped children of `parent` that lead a session of their own, as every
    process a template forks does (setsid): not another part of this process's subprocesses."""
    # After the command: state, ppid, pgrp, session.
    return [
        pid
        for pid, fields in _processes()
        if fields[0] == b"Z" and int(fields[1]) == parent and int(fields[3]) == pid
    ]
