"""The sandbox: what the service checks before it serves, and what confines each child.

The service (`__main__`) calls, in this order: `check_architecture`, `drop_privileges` when it was
started as root, `check_privileges`, `check_runnable`, `confine_service`. Each refusal raises
SandboxError, whose message is the one line the service prints before it exits.

The child (`child.main`) calls `set_non_dumpable` first thing, then `confine_child` before it
reads the source:

| The child | How |
|---|---|
| non-dumpable | PR_SET_DUMPABLE 0 (it does not survive execve, so each child sets its own) |
| bounded | RLIMIT_AS, RLIMIT_CPU (SIGXCPU at the limit, SIGKILL a second later), RLIMIT_FSIZE 0, RLIMIT_CORE 0 |
| starts no process | RLIMIT_NPROC 0 (threads count too; ignored for root, which the service refuses to be) |
| no privilege on exec | PR_SET_NO_NEW_PRIVS |
| opens no socket | a seccomp filter (libseccomp, through ctypes): DENIED_SYSCALLS fail with EPERM, every
  other call of the native architecture is allowed, and a call of any other architecture (i386's
  `int 0x80`, x32) kills the process; TSYNC puts it on every thread the process has |

After loading the filter the child checks it: a socket() that succeeds stops the child.
Nothing here denies reads of the file system: the container the service runs in does that.
"""

from __future__ import annotations

import ctypes
import errno
import os
import pwd
import resource
import socket
from collections.abc import Sequence

SUPPORTED_MACHINES = ("x86_64", "aarch64")
DEFAULT_USER = "nobody"

# Each fails with EPERM in a child. socket/socketpair/io_uring_setup: no network, no socket to the
# service or a sibling, no io_uring (which could open one past the filter). ptrace,
# process_vm_readv/writev and pidfd_getfd: no reading or writing another process, or taking its
# descriptors. setsid/setpgid: a descendant cannot leave the process group the service kills.
DENIED_SYSCALLS = (
    "socket",
    "socketpair",
    "io_uring_setup",
    "ptrace",
    "process_vm_readv",
    "process_vm_writev",
    "pidfd_getfd",
    "setsid",
    "setpgid",
)

# Capabilities that lift the process limit (RLIMIT_NPROC) or much more.
CAP_SYS_ADMIN = 21
CAP_SYS_RESOURCE = 24
_REFUSED_CAPABILITIES = {CAP_SYS_ADMIN: "CAP_SYS_ADMIN", CAP_SYS_RESOURCE: "CAP_SYS_RESOURCE"}

_PR_SET_DUMPABLE = 4
_PR_GET_DUMPABLE = 3
_PR_SET_NO_NEW_PRIVS = 38
_PR_GET_NO_NEW_PRIVS = 39

# libseccomp (seccomp.h)
_SCMP_ACT_KILL_PROCESS = 0x80000000
_SCMP_ACT_ALLOW = 0x7FFF0000
_SCMP_ACT_ERRNO = 0x00050000
_SCMP_FLTATR_ACT_BADARCH = 2
_SCMP_FLTATR_CTL_NNP = 3
_SCMP_FLTATR_CTL_TSYNC = 4
_NR_SCMP_ERROR = -1
_LIBSECCOMP = "libseccomp.so.2"


class SandboxError(Exception):
    """The sandbox cannot hold here; the message is one line saying why."""


# -- the service's checks ------------------------------------------------------------------------


def check_architecture(machine: str | None = None) -> None:
    """Refuse an architecture the socket filter does not cover; `machine` as os.uname() names it."""
    machine = os.uname().machine if machine is None else machine
    if machine not in SUPPORTED_MACHINES:
        raise SandboxError(
            f"the sandbox's socket filter covers only {' and '.join(SUPPORTED_MACHINES)},"
            f" not {machine}; refusing to start"
        )


def permitted_capabilities(status: str) -> int:
    """The CapPrm mask of a /proc/<pid>/status text."""
    for line in status.splitlines():
        if line.startswith("CapPrm:"):
            return int(line.split(":", 1)[1].strip(), 16)
    raise SandboxError("cannot read this process's permitted capabilities")


def check_privileges(uid: int | None = None, status: str | None = None) -> None:
    """Refuse root, and a process that may raise CAP_SYS_RESOURCE or CAP_SYS_ADMIN.

    The kernel does not hold either to RLIMIT_NPROC, so their children could start processes.
    `uid` and `status` (a /proc/self/status text) default to this process's own.
    """
    if uid is None:
        uid = 0 if 0 in os.getresuid() else os.getuid()
    if uid == 0:
        raise SandboxError(
            "refusing to serve as root: start it as root only with --user NAME"
            f" (default {DEFAULT_USER}) to drop to, or as an unprivileged user"
        )
    if status is None:
        status = _own_status()
    permitted = permitted_capabilities(status)
    held = [name for bit, name in sorted(_REFUSED_CAPABILITIES.items()) if permitted >> bit & 1]
    if held:
        raise SandboxError(
            f"refusing to serve with {' and '.join(held)} permitted: the process limit would not"
            " hold for its children"
        )


def drop_privileges(user: str) -> pwd.struct_passwd:
    """From root to `user` for good: no supplementary groups, its group, its uid; then verified."""
    try:
        entry = pwd.getpwnam(user)
    except KeyError:
        raise SandboxError(f"no such user to drop to: {user}") from None
    if entry.pw_uid == 0 or entry.pw_gid == 0:
        raise SandboxError(f"refusing to serve as {user}: it is root (uid or gid 0)")
    try:
        os.setgroups([])
        os.setresgid(entry.pw_gid, entry.pw_gid, entry.pw_gid)
        os.setresuid(entry.pw_uid, entry.pw_uid, entry.pw_uid)
    except OSError as error:
        raise SandboxError(f"cannot drop to user {user}: {error.strerror}") from None
    _verify_dropped(entry)
    os.chdir("/")  # the start's directory may be one the user cannot read
    return entry


def _verify_dropped(entry: pwd.struct_passwd) -> None:
    if os.getresuid() != (entry.pw_uid,) * 3 or os.getresgid() != (entry.pw_gid,) * 3:
        raise SandboxError(f"dropping to user {entry.pw_name} left another uid or gid")
    if os.getgroups() not in ([], [entry.pw_gid]):
        raise SandboxError(f"dropping to user {entry.pw_name} left supplementary groups")
    for regain in (lambda: os.setuid(0), lambda: os.setgid(0), lambda: os.setgroups([0])):
        try:
            regain()
        except PermissionError:
            continue
        raise SandboxError(f"after dropping to user {entry.pw_name} root could be regained")
    if permitted_capabilities(_own_status()) != 0:
        raise SandboxError(f"after dropping to user {entry.pw_name} capabilities remain")


def _own_status() -> str:
    # Bytes, decoded by the built-in codec: opening it as text would look a codec up, an import
    # that may fail once the process has dropped to a user who cannot read the interpreter's files.
    with open("/proc/self/status", "rb") as file:
        return file.read().decode("utf-8", "replace")


def check_runnable(executable: str, package_root: str) -> None:
    """Refuse to serve when this user cannot run the children's interpreter or read the package.

    A start as root that dropped to a user who cannot read the environment (the machine's own
    Python under /root, say) would otherwise fail every extraction.
    """
    needed = [
        (os.path.realpath(executable), os.X_OK),
        (os.path.join(package_root, "extractor_sandbox", "child.py"), os.R_OK),
        (os.path.join(package_root, "extractor_sandbox", "sandbox.py"), os.R_OK),
        (os.path.realpath(os.__file__), os.R_OK),
    ]
    for path, mode in needed:
        if not os.access(path, mode):
            who = pwd.getpwuid(os.getuid()).pw_name
            raise SandboxError(
                f"user {who} cannot {'run' if mode == os.X_OK else 'read'} {path}: start the"
                " service from an environment that user can read (scripts/setup builds one)"
            )


def confine_service() -> None:
    """The service itself: non-dumpable (no same-user process reads its token) and no new privileges."""
    set_non_dumpable()
    _prctl(_PR_SET_NO_NEW_PRIVS, 1)


# -- the child -----------------------------------------------------------------------------------


def set_non_dumpable() -> None:
    """PR_SET_DUMPABLE 0: no process of the same user reads this one's /proc/<pid>/environ or mem,
    or ptraces it. It does not survive execve: every process sets its own."""
    _prctl(_PR_SET_DUMPABLE, 0)
    if _prctl(_PR_GET_DUMPABLE, 0) != 0:
        raise SandboxError("the process is still dumpable")


def confine_child(*, cpu_s: int, memory_mb: int) -> None:
    """Confine this process (every thread of it) before it reads the source; see the module doc.

    Raises SandboxError when a step fails; the child must then stop without reading the source.
    """
    set_non_dumpable()
    seccomp = _Seccomp.load_library()  # before the address-space limit, like everything it needs
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    resource.setrlimit(resource.RLIMIT_FSIZE, (0, 0))
    # SIGXCPU at the soft limit (the service answers `timeout`), SIGKILL one second later.
    resource.setrlimit(resource.RLIMIT_CPU, (cpu_s, cpu_s + 1))
    memory = memory_mb * 1024 * 1024
    resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    resource.setrlimit(resource.RLIMIT_NPROC, (0, 0))
    _prctl(_PR_SET_NO_NEW_PRIVS, 1)
    if _prctl(_PR_GET_NO_NEW_PRIVS, 0) != 1:
        raise SandboxError("no-new-privileges did not hold")
    seccomp.load_filter(DENIED_SYSCALLS)
    _verify_filter()


def _verify_filter() -> None:
    try:
        probe = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    except PermissionError:
        return
    probe.close()
    raise SandboxError("the socket filter did not hold: socket() succeeded")


# -- system calls through ctypes -----------------------------------------------------------------

_libc = ctypes.CDLL(None, use_errno=True)
_libc.prctl.argtypes = [
    ctypes.c_int,
    ctypes.c_ulong,
    ctypes.c_ulong,
    ctypes.c_ulong,
    ctypes.c_ulong,
]
_libc.prctl.restype = ctypes.c_int


def _prctl(option: int, value: int) -> int:
    result: int = _libc.prctl(option, value, 0, 0, 0)
    if result < 0:
        number = ctypes.get_errno()
        raise SandboxError(f"prctl({option}) failed: {os.strerror(number)}")
    return result


class _Seccomp:
    """The few libseccomp calls the filter needs."""

    def __init__(self, library: ctypes.CDLL) -> None:
        self.library = library
        library.seccomp_init.argtypes = [ctypes.c_uint32]
        library.seccomp_init.restype = ctypes.c_void_p
        library.seccomp_attr_set.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_uint32]
        library.seccomp_attr_set.restype = ctypes.c_int
        library.seccomp_syscall_resolve_name.argtypes = [ctypes.c_char_p]
        library.seccomp_syscall_resolve_name.restype = ctypes.c_int
        library.seccomp_rule_add.argtypes = [
            ctypes.c_void_p,
            ctypes.c_uint32,
            ctypes.c_int,
            ctypes.c_uint,
        ]
        library.seccomp_rule_add.restype = ctypes.c_int
        library.seccomp_load.argtypes = [ctypes.c_void_p]
        library.seccomp_load.restype = ctypes.c_int
        library.seccomp_release.argtypes = [ctypes.c_void_p]
        library.seccomp_release.restype = None

    @classmethod
    def load_library(cls) -> _Seccomp:
        try:
            return cls(ctypes.CDLL(_LIBSECCOMP, use_errno=True))
        except OSError as error:
            raise SandboxError(f"cannot load {_LIBSECCOMP}: {error}") from None

    def load_filter(self, denied: Sequence[str]) -> None:
        """Allow everything of the native architecture but `denied` (EPERM); kill on any other."""
        library = self.library
        context = library.seccomp_init(_SCMP_ACT_ALLOW)
        if not context:
            raise SandboxError("seccomp_init failed")
        try:
            self._check(
                library.seccomp_attr_set(context, _SCMP_FLTATR_ACT_BADARCH, _SCMP_ACT_KILL_PROCESS),
                "setting the foreign-architecture action",
            )
            self._check(library.seccomp_attr_set(context, _SCMP_FLTATR_CTL_NNP, 1), "setting NNP")
            self._check(
                library.seccomp_attr_set(context, _SCMP_FLTATR_CTL_TSYNC, 1), "setting TSYNC"
            )
            for name in denied:
                number = library.seccomp_syscall_resolve_name(name.encode("ascii"))
                if number == _NR_SCMP_ERROR:
                    raise SandboxError(f"libseccomp does not know the system call {name}")
                self._check(
                    library.seccomp_rule_add(context, _SCMP_ACT_ERRNO | errno.EPERM, number, 0),
                    f"denying {name}",
                )
            self._check(library.seccomp_load(context), "loading the filter")
        finally:
            library.seccomp_release(context)

    @staticmethod
    def _check(result: int, what: str) -> None:
        if result < 0:
            raise SandboxError(f"seccomp: {what} failed: {os.strerror(-result)}")
