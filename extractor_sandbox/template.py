"""The template process: the child's interpreter and readers, loaded once, forked per extraction.

`python -P -s -m extractor_sandbox.child --cpu-s=N --memory-mb=M` started with a Unix socket as
its stdin (the service's control socket, runner.Template) is the template; with a pipe it is one
extraction (a fresh child). The template has the command line, environment, directory and
non-dumpable flag a fresh child has, and runs only this package's own code:

- it warms what needs no request (`warm_template`): the readers' modules (but those whose import
  starts a thread or maps much memory: `FormatSpec.template` False), the codecs, the socket
  filter's library, and freezes what it loaded out of the collector's reach, so its forks share
  those pages instead of copying them;
- it never reads a request's bytes: the service sends it, per extraction, the three pipe ends the
  extraction will use (SCM_RIGHTS), and nothing else; it never confines itself, and it starts no
  thread, so a fork of it is a whole copy;
- each extraction is a fork of it, made before anything of that request is read, which puts the
  pipes on its stdin, stdout and stderr, closes every other descriptor (the control socket, what
  the template held) and then runs exactly what a fresh child runs (`child.extract_one`): it reads
  the request's line, warms that format (its `prepare`, before the limits), confines itself with
  `sandbox.confine_child`, and only then reads the source.

Which process is the extraction. The service reaps, times and kills each extraction as its own
child, as it does a fresh one; so the service is a child subreaper, and:
- when the template is the service's child, it becomes the extraction itself after forking its
  successor (a fresh copy of the template, which takes over the control socket, leaves the
  extraction's process group with setsid, and is adopted by the service when the extraction
  ends). The extraction's CPU limit is counted from the CPU time the template had used
  (`cpu_base`, whole seconds the service is told of);
- otherwise (its parent is a running extraction: a second one at once), it forks an extraction
  through a middle process that exits at once, so the extraction is adopted by the service.
Either way the service gets one message back: the extraction's pid, its CPU base, and, when the
template handed over, its successor's pid and pidfd; and only once every process the template forked
for it has a session of its own, out of the template's process group, which dies with the
extraction the template becomes.

The first template (the one the service starts) warms up, forks the template proper and exits,
so that no template carries the CPU time of the warm-up into an extraction.
"""

from __future__ import annotations

import codecs
import errno
import gc
import importlib
import json
import os
import resource
import signal
import socket
import stat
import sys
from collections.abc import Sequence

from extractor_sandbox.sandbox import SandboxError, landlock_abi, prepare_for_forks

GO = b"go"  # the service's one request: three descriptors, stdin, stdout, stderr, come with it
MAX_MESSAGE_BYTES = 4096
_PIPES = 3


def is_template(fd: int = 0) -> bool:
    """Whether this child was started as the template: its stdin is the service's Unix socket."""
    return stat.S_ISSOCK(os.fstat(fd).st_mode)


def warm_template(warm_codecs: Sequence[str], late_standard_modules: Sequence[str]) -> None:
    """Load what every extraction needs and no request decides: the package's readers."""
    from extractor_sandbox.registry import AVAILABLE

    importlib.import_module("extractor_sandbox.source")
    for name in warm_codecs:
        codecs.lookup(name)
    opens_nothing = landlock_abi() == 0
    if opens_nothing:
        for name in late_standard_modules:
            importlib.import_module(name)
    for spec in AVAILABLE.values():
        if not spec.template:
            continue
        try:
            module = importlib.import_module(spec.module)
            if opens_nothing and spec.late_imports is not None:
                spec.late_imports(module, {})
        except ImportError:
            pass  # the reader finds its library missing and says so
    prepare_for_forks()
    threads = len(os.listdir("/proc/self/task"))
    if threads != 1:
        raise SandboxError(f"the template started {threads - 1} thread(s) while warming up")
    # Objects made so far stay out of the collector's passes: a fork shares their pages rather
    # than copying each one a collection would touch.
    gc.freeze()


def run(warm_codecs: Sequence[str], late_standard_modules: Sequence[str]) -> int:
    """The template's whole life: warm up, then serve. Returns only in a forked extraction, with
    its stdio in place and nothing else open: the CPU base its limit counts from."""
    control = socket.socket(fileno=0)
    try:
        warm_template(warm_codecs, late_standard_modules)
    except (SandboxError, OSError) as error:
        print(f"loom-extractor template: {error}", file=sys.stderr, flush=True)
        os._exit(4)
    return _serve(control)


def _serve(control: socket.socket) -> int:
    service = os.getppid()  # the first template's parent
    if os.fork():
        os._exit(0)  # the warm-up's CPU time stays with the first template
    os.setsid()  # out of the first template's process group
    own = os.pidfd_open(os.getpid())
    _send(control, {"template": os.getpid()}, [own])
    os.close(own)
    while True:
        try:
            message, fds, _flags, _address = socket.recv_fds(control, MAX_MESSAGE_BYTES, _PIPES)
        except InterruptedError:
            continue
        if not message:
            os._exit(0)  # the service is gone
        if message != GO or len(fds) != _PIPES:
            _close(fds)
            _send(control, {"error": "a request the template does not know"})
            continue
        try:
            if os.getppid() == service:
                base = _hand_over(control, fds)
            else:
                base = _fork_adopted(control, fds)
        except OSError as error:
            _close(fds)
            _send(control, {"error": f"cannot fork an extraction: {error.strerror}"})
            continue
        if base is not None:
            return base


def _hand_over(control: socket.socket, fds: list[int]) -> int | None:
    """Fork the next template; this process becomes the extraction. None in the successor."""
    reading, writing = os.pipe()
    successor = os.fork()
    if successor == 0:
        _close([*fds, reading])
        os.setsid()  # the extraction's process group is killed when it ends; not this one
        _left_the_group(writing)
        return None
    os.close(writing)
    try:
        if not _has_left_the_group(reading):
            raise OSError(errno.ECHILD, "the next template died as it started")
        pidfd = os.pidfd_open(successor)
    except OSError:
        os.kill(successor, signal.SIGKILL)  # one template at a time on the control socket
        os.waitpid(successor, 0)
        raise
    base = int(_cpu_seconds())
    _send(control, {"child": os.getpid(), "cpu_base": base, "template": successor}, [pidfd])
    os.close(pidfd)
    _become_extraction(control, fds)
    return base


def _fork_adopted(control: socket.socket, fds: list[int]) -> int | None:
    """Fork an extraction through a middle process, so the service adopts it. None here."""
    reading, writing = os.pipe()
    middle = os.fork()
    if middle == 0:
        child = -1
        try:
            os.close(reading)
            child = os.fork()
        finally:
            if child:
                os._exit(0)  # the middle: its exit hands the extraction to the service
        os.setsid()
        # Its pid is announced only now, out of this template's group (see _has_left_the_group).
        os.write(writing, os.getpid().to_bytes(8, "little"))
        os.close(writing)
        _become_extraction(control, fds)
        return 0
    os.close(writing)
    try:
        announced = os.read(reading, 8)
    finally:
        os.close(reading)
        os.waitpid(middle, 0)  # once the middle is gone, the extraction is the service's child
        _close(fds)
    if len(announced) != 8:
        _send(control, {"error": "the extraction's fork failed"})
        return None
    _send(control, {"child": int.from_bytes(announced, "little"), "cpu_base": 0})
    return None


def _left_the_group(writing: int) -> None:
    """In a fork, once it has its own session: tell the template (see _has_left_the_group)."""
    os.write(writing, b"1")
    os.close(writing)


def _has_left_the_group(reading: int) -> bool:
    """Wait until the fork that holds the other end has left this process's group (setsid).

    Until then it is a member of this template's process group, and a template becomes an
    extraction, whose whole group the service kills when it ends: a fork not yet scheduled when
    that happened (a loaded machine) was killed with it. So the service hears of a fork only once
    it is in a group of its own. False: the fork died before it got there."""
    try:
        return os.read(reading, 1) == b"1"
    finally:
        os.close(reading)


def _become_extraction(control: socket.socket, fds: list[int]) -> None:
    """The pipes on 0, 1 and 2; every other descriptor, the control socket's first, closed."""
    control.detach()  # fd 0 is replaced below; the socket object must not close the new one
    for target, fd in enumerate(fds):
        os.dup2(fd, target)
    os.closerange(3, _max_fd())


def _cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _max_fd() -> int:
    soft, _hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    return soft if soft != resource.RLIM_INFINITY else 1 << 20


def _send(control: socket.socket, body: dict[str, object], fds: Sequence[int] = ()) -> None:
    socket.send_fds(control, [json.dumps(body).encode("ascii")], list(fds))


def _close(fds: Sequence[int]) -> None:
    for fd in fds:
        try:
            os.close(fd)
        except OSError:
            pass
