"""The sandbox: what the service checks before it serves, and what confines each child.

The service (`__main__`) calls, in this order: `check_architecture`, `drop_privileges` when it was
started as root, `check_privileges`, `check_runnable`, `confine_service`. Each refusal raises
SandboxError, whose message is the one line the service prints before it exits.

The child (`child.main`) calls `set_non_dumpable` first thing, then `confine_child` before it
reads the source; `confine_child` is the whole confinement, in one call, so a process forked from
a warm template can make it too:

| The child | How |
|---|---|
| non-dumpable | PR_SET_DUMPABLE 0 (it does not survive execve, so each child sets its own) |
| no privilege on exec | PR_SET_NO_NEW_PRIVS |
| reads only its code | Landlock, where the kernel has it: read-only access beneath the interpreter's
  library, the import path, the directories of the loaded shared libraries and a few files
  (READABLE_FILES), its own /proc/<pid>; nothing written, created, removed or run anywhere; no
  TCP bind or connect; and (ABI 6) no signal or abstract socket out of its domain. Landlock binds
  the calling thread only, so the process must be single-threaded here: threads start after it |
| warmed | `prepare`, run now, imports and warms what the parser needs and may start threads |
| bounded | RLIMIT_AS, RLIMIT_CPU (SIGXCPU at the limit, SIGKILL a second later), RLIMIT_FSIZE 0, RLIMIT_CORE 0 |
| starts no process | RLIMIT_NPROC 0 (threads count too; ignored for root, which the service refuses to be) |
| makes no system call it must not | a seccomp filter (libseccomp, through ctypes) on every thread
  (TSYNC): `DENIED_SYSCALLS` fail with EPERM, `UNFILTERABLE_SYSCALLS` with ENOSYS (libc falls
  back to a call whose arguments the filter sees), `argument_rules` refuse namespace flags on
  clone, personality changes, PR_SET_DUMPABLE 1, PR_SET_CHILD_SUBREAPER and an open that could
  write or create; a call of
  another architecture (i386's `int 0x80`, x32) kills the process. Without Landlock every open
  fails too: the child opens nothing once confined |

After loading the filter the child checks it: a socket() that succeeds stops the child.

A template process (template.py), never confined itself, calls `prepare_for_forks` once: the
paths and the filter it computes are what each of its forks' `confine_child` would compute, so a
fork only applies them.
"""

from __future__ import annotations

import ctypes
import errno
import os
import pwd
import resource
import socket
import sys
import sysconfig
from collections.abc import Callable, Iterable, Sequence
from typing import NamedTuple

SUPPORTED_MACHINES = ("x86_64", "aarch64")
DEFAULT_USER = "nobody"

# Each fails with EPERM in a child. socket/socketpair/io_uring_setup: no network, no socket to the
# service or a sibling, no io_uring (which could open one past the filter). ptrace,
# process_vm_readv/writev and pidfd_getfd: no reading or writing another process, or taking its
# descriptors. setsid/setpgid: a descendant cannot leave the process group the service kills.
# unshare, setns and the mount calls: no namespace (a user namespace would hand the child every
# capability inside it) and no mount. The key calls, perf_event_open, bpf and userfaultfd: kernel
# surfaces a parser never uses and exploits often do. execve/execveat: no other program. The rest
# create, remove, rename or change a name or its metadata, which RLIMIT_FSIZE does not stop:
# nothing the child does outlives it.
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
    "unshare",
    "setns",
    "mount",
    "umount2",
    "pivot_root",
    "chroot",
    "fsopen",
    "fsconfig",
    "fsmount",
    "fspick",
    "move_mount",
    "open_tree",
    "open_tree_attr",
    "mount_setattr",
    "keyctl",
    "add_key",
    "request_key",
    "perf_event_open",
    "bpf",
    "userfaultfd",
    "execve",
    "execveat",
    "creat",
    "mkdir",
    "mkdirat",
    "mknod",
    "mknodat",
    "symlink",
    "symlinkat",
    "link",
    "linkat",
    "rename",
    "renameat",
    "renameat2",
    "unlink",
    "unlinkat",
    "rmdir",
    "truncate",
    "chmod",
    "fchmod",
    "fchmodat",
    "fchmodat2",
    "chown",
    "fchown",
    "lchown",
    "fchownat",
    "utime",
    "utimes",
    "futimesat",
    "utimensat",
    "setxattr",
    "lsetxattr",
    "fsetxattr",
    "setxattrat",
    "removexattr",
    "lremovexattr",
    "fremovexattr",
    "removexattrat",
    "name_to_handle_at",
    "open_by_handle_at",
)
# Whose arguments sit in memory, where a filter cannot read them: ENOSYS, so libc falls back to
# clone and openat, whose flags the filter checks.
UNFILTERABLE_SYSCALLS = ("clone3", "openat2")
# Without Landlock nothing tells one path from another: the child then opens no file at all.
OPEN_SYSCALLS = ("open", "openat")

# Newer than the libseccomp this runs with may know; the same number on every architecture since
# Linux 5.1 unified the new calls' numbers.
_UNIFIED_NUMBERS = {
    "fchmodat2": 452,
    "setxattrat": 463,
    "removexattrat": 466,
    "open_tree_attr": 467,
}

# clone's namespace flags (CLONE_NEWTIME is clone3's and unshare's only; in clone's flags that bit
# is part of the exit signal).
NAMESPACE_FLAGS = {
    "CLONE_NEWNS": 0x00020000,
    "CLONE_NEWCGROUP": 0x02000000,
    "CLONE_NEWUTS": 0x04000000,
    "CLONE_NEWIPC": 0x08000000,
    "CLONE_NEWUSER": 0x10000000,
    "CLONE_NEWPID": 0x20000000,
    "CLONE_NEWNET": 0x40000000,
}
# An open with any of these may write, truncate or create: refused whatever the path.
_OPEN_WRITE_FLAGS = (
    os.O_WRONLY,
    os.O_RDWR,
    os.O_CREAT,
    os.O_TRUNC,
    getattr(os, "O_TMPFILE", 0o20200000) & ~os.O_DIRECTORY,
)
_PERSONALITY_QUERY = 0xFFFFFFFF

# Files outside the readable directories that the C library or Python may open once confined.
READABLE_FILES = ("/etc/ld.so.cache", "/etc/localtime", "/dev/null", "/dev/urandom")
READABLE_DIRECTORIES = ("/usr/share/zoneinfo",)
# Tesseract's models, read by the OCR warm-up (formats/ocr.py) once the path rules hold; a
# TESSDATA_PREFIX the service was given is readable too.
OCR_MODEL_DIRECTORIES = ("/usr/share/tesseract-ocr", "/usr/share/tessdata")

# Capabilities that lift the process limit (RLIMIT_NPROC) or much more.
CAP_SYS_ADMIN = 21
CAP_SYS_RESOURCE = 24
_REFUSED_CAPABILITIES = {CAP_SYS_ADMIN: "CAP_SYS_ADMIN", CAP_SYS_RESOURCE: "CAP_SYS_RESOURCE"}

_PR_SET_DUMPABLE = 4
_PR_GET_DUMPABLE = 3
_PR_SET_NO_NEW_PRIVS = 38
_PR_SET_CHILD_SUBREAPER = 36
_PR_GET_NO_NEW_PRIVS = 39

# libseccomp (seccomp.h)
_SCMP_ACT_KILL_PROCESS = 0x80000000
_SCMP_ACT_ALLOW = 0x7FFF0000
_SCMP_ACT_ERRNO = 0x00050000
_SCMP_FLTATR_ACT_BADARCH = 2
_SCMP_FLTATR_CTL_NNP = 3
_SCMP_FLTATR_CTL_TSYNC = 4
_SCMP_CMP_NE = 1
_SCMP_CMP_EQ = 4
_SCMP_CMP_MASKED_EQ = 7
_NR_SCMP_ERROR = -1
_LIBSECCOMP = "libseccomp.so.2"

# Landlock (linux/landlock.h); its three calls have the same numbers on every architecture.
_NR_LANDLOCK_CREATE_RULESET = 444
_NR_LANDLOCK_ADD_RULE = 445
_NR_LANDLOCK_RESTRICT_SELF = 446
_LANDLOCK_CREATE_RULESET_VERSION = 1
_LANDLOCK_RULE_PATH_BENEATH = 1
_FS_EXECUTE = 1 << 0
_FS_WRITE_FILE = 1 << 1
_FS_READ_FILE = 1 << 2
_FS_READ_DIR = 1 << 3
_FS_REFER = 1 << 13  # ABI 2
_FS_TRUNCATE = 1 << 14  # ABI 3
_FS_IOCTL_DEV = 1 << 15  # ABI 5
_NET_ALL = (1 << 0) | (1 << 1)  # ABI 4: bind and connect TCP
_SCOPE_ALL = (1 << 0) | (1 << 1)  # ABI 6: abstract UNIX sockets and signals


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


def become_subreaper() -> None:
    """PR_SET_CHILD_SUBREAPER: a process orphaned beneath the service (a template's fork, once the
    process that forked it is gone) becomes the service's child, to wait for and reap."""
    _prctl(_PR_SET_CHILD_SUBREAPER, 1)


# -- the child -----------------------------------------------------------------------------------


def set_non_dumpable() -> None:
    """PR_SET_DUMPABLE 0: no process of the same user reads this one's /proc/<pid>/environ or mem,
    or ptraces it. It does not survive execve: every process sets its own."""
    _prctl(_PR_SET_DUMPABLE, 0)
    if _prctl(_PR_GET_DUMPABLE, 0) != 0:
        raise SandboxError("the process is still dumpable")


class _Prepared(NamedTuple):
    """What `confine_child` would compute the same in any fork of a template: its code's paths
    and the filter, built (not loaded)."""

    abi: int
    directories: list[str]
    files: list[str]
    seccomp: _Seccomp
    context: int


_prepared: _Prepared | None = None


def prepare_for_forks() -> None:
    """In the template (which is never confined): compute once what each fork's `confine_child`
    needs and would find the same, its readable paths (but its own /proc/<pid>) and its socket
    filter, so a fork only applies them. A fork maps the same files at the same places."""
    global _prepared
    abi = landlock_abi()
    seccomp = _Seccomp.load_library()
    directories, files = _code_paths()
    context = seccomp.build_filter(*_filter_rules(abi))
    _prepared = _Prepared(abi, directories, files, seccomp, context)


def confine_child(*, cpu_s: int, memory_mb: int, prepare: Callable[[], None] | None = None) -> None:
    """Confine this process (every thread of it) before it reads the source; see the module doc.

    `prepare` runs between the path rules and the limits: it imports and warms what the parser
    needs, and may start threads (they inherit the path rules; the filter is put on them after).
    Raises SandboxError when a step fails; the child must then stop without reading the source.
    """
    set_non_dumpable()
    prepared = _prepared
    abi = landlock_abi()
    if prepared is not None and prepared.abi != abi:
        prepared = None
    # Loaded before the address-space limit, like everything it needs.
    seccomp = _Seccomp.load_library() if prepared is None else prepared.seccomp
    _prctl(_PR_SET_NO_NEW_PRIVS, 1)
    if _prctl(_PR_GET_NO_NEW_PRIVS, 0) != 1:
        raise SandboxError("no-new-privileges did not hold")
    if abi > 0:
        restrict_paths(abi, readable_paths())
    if prepare is not None:
        prepare()
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    resource.setrlimit(resource.RLIMIT_FSIZE, (0, 0))
    # SIGXCPU at the soft limit (the service answers `timeout`), SIGKILL one second later.
    resource.setrlimit(resource.RLIMIT_CPU, (cpu_s, cpu_s + 1))
    memory = memory_mb * 1024 * 1024
    resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    resource.setrlimit(resource.RLIMIT_NPROC, (0, 0))
    if prepared is None:
        seccomp.load_filter(*_filter_rules(abi))
    else:
        seccomp.load_built(prepared.context)
    _verify_filter()


def _filter_rules(abi: int) -> tuple[Sequence[str], Sequence[str], list[ArgumentRule]]:
    """The filter's (EPERM calls, ENOSYS calls, argument rules) on a kernel of Landlock `abi`."""
    denied = DENIED_SYSCALLS if abi > 0 else DENIED_SYSCALLS + OPEN_SYSCALLS
    return denied, UNFILTERABLE_SYSCALLS, argument_rules(opens=abi > 0)


class Comparison(NamedTuple):
    """One test of a system call's argument, as libseccomp's scmp_arg_cmp takes it."""

    argument: int
    operator: int
    datum_a: int
    datum_b: int = 0


class ArgumentRule(NamedTuple):
    """A call refused with EPERM when every comparison holds."""

    syscall: str
    comparisons: tuple[Comparison, ...]


def argument_rules(*, opens: bool) -> list[ArgumentRule]:
    """The calls refused by their arguments; with `opens`, an open that only reads is allowed."""
    rules = [
        ArgumentRule("clone", (Comparison(0, _SCMP_CMP_MASKED_EQ, flag, flag),))
        for flag in NAMESPACE_FLAGS.values()
    ]
    rules.append(ArgumentRule("personality", (Comparison(0, _SCMP_CMP_NE, _PERSONALITY_QUERY),)))
    rules.append(
        ArgumentRule(
            "prctl",
            (Comparison(0, _SCMP_CMP_EQ, _PR_SET_DUMPABLE), Comparison(1, _SCMP_CMP_NE, 0)),
        )
    )
    # A child that became a subreaper would take in the template's next fork while it runs
    # beneath it (template.py), where the service should adopt it.
    rules.append(
        ArgumentRule(
            "prctl",
            (Comparison(0, _SCMP_CMP_EQ, _PR_SET_CHILD_SUBREAPER), Comparison(1, _SCMP_CMP_NE, 0)),
        )
    )
    if opens:
        for syscall, flags_argument in (("open", 1), ("openat", 2)):
            rules.extend(
                ArgumentRule(syscall, (Comparison(flags_argument, _SCMP_CMP_MASKED_EQ, bit, bit),))
                for bit in _OPEN_WRITE_FLAGS
            )
    return rules


def _verify_filter() -> None:
    try:
        probe = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    except PermissionError:
        return
    probe.close()
    raise SandboxError("the socket filter did not hold: socket() succeeded")


# -- Landlock ------------------------------------------------------------------------------------


def landlock_abi() -> int:
    """The Landlock ABI version this kernel offers; 0 when it has none (or has it turned off)."""
    version = _syscall(_NR_LANDLOCK_CREATE_RULESET, None, 0, _LANDLOCK_CREATE_RULESET_VERSION)
    return max(version, 0)


def readable_paths() -> tuple[list[str], list[str]]:
    """(directories, files) a confined child may read: its code, its libraries, a few more.

    The interpreter's library and the import path; every file this process has mapped (the
    interpreter, locale data) and the directories of its shared libraries; READABLE_FILES and
    READABLE_DIRECTORIES; and its own /proc/<pid>.
    """
    directories, files = (
        _code_paths() if _prepared is None else (_prepared.directories, _prepared.files)
    )
    own = f"/proc/{os.getpid()}"
    return sorted([*directories, own]) if os.path.isdir(own) else list(directories), files


def _code_paths() -> tuple[list[str], list[str]]:
    """readable_paths() but for the process's own /proc/<pid>."""
    directories = set()
    files = {os.path.realpath(path) for path in READABLE_FILES}
    for name in ("stdlib", "platstdlib", "purelib", "platlib"):
        directories.add(os.path.realpath(sysconfig.get_path(name)))
    directories.update(os.path.realpath(entry) for entry in sys.path if entry)
    for path in _mapped_files():
        # A shared library may load its neighbours later; the interpreter's binary and the
        # locale's files are read where they are.
        if ".so" in os.path.basename(path):
            directories.add(os.path.dirname(path))
        else:
            files.add(path)
    directories.update(READABLE_DIRECTORIES)
    directories.update(OCR_MODEL_DIRECTORIES)
    if os.environ.get("TESSDATA_PREFIX", "").strip():
        directories.add(os.path.realpath(os.environ["TESSDATA_PREFIX"].strip()))
    return sorted(path for path in directories if os.path.isdir(path)), sorted(
        path for path in files if os.path.exists(path)
    )


def _mapped_files() -> set[str]:
    """The files this process has mapped (the executable, shared libraries, locale data)."""
    with open("/proc/self/maps", "rb") as maps:
        text = maps.read().decode("utf-8", "replace")
    files = set()
    for line in text.splitlines():
        fields = line.split(maxsplit=5)
        if len(fields) == 6 and fields[5].startswith("/"):
            files.add(os.path.realpath(fields[5]))
    return files


def restrict_paths(abi: int, paths: tuple[Iterable[str], Iterable[str]]) -> None:
    """Landlock: read `paths` (directories, files) and nothing else; write, create, run nothing.

    Binds the calling thread and the threads it starts later, so it refuses to run while another
    thread exists (one started before would stay free).
    """
    threads = len(os.listdir("/proc/self/task"))
    if threads != 1:
        raise SandboxError(f"Landlock binds one thread and {threads} are running: confine earlier")
    handled = (1 << 13) - 1  # ABI 1: execute to make_sym
    for version, right in ((2, _FS_REFER), (3, _FS_TRUNCATE), (5, _FS_IOCTL_DEV)):
        if abi >= version:
            handled |= right
    fields = [handled]
    if abi >= 4:
        fields.append(_NET_ALL)
    if abi >= 6:
        fields.append(_SCOPE_ALL)
    attributes = (ctypes.c_uint64 * len(fields))(*fields)
    ruleset = _syscall(
        _NR_LANDLOCK_CREATE_RULESET, ctypes.byref(attributes), ctypes.sizeof(attributes), 0
    )
    if ruleset < 0:
        raise SandboxError(f"landlock_create_ruleset failed: {os.strerror(-ruleset)}")
    try:
        directories, files = paths
        for path in directories:
            _allow(ruleset, path, _FS_READ_FILE | _FS_READ_DIR)
        for path in files:
            _allow(ruleset, path, _FS_READ_FILE)
        result = _syscall(_NR_LANDLOCK_RESTRICT_SELF, ruleset, 0)
        if result < 0:
            raise SandboxError(f"landlock_restrict_self failed: {os.strerror(-result)}")
    finally:
        os.close(ruleset)


class _PathBeneath(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


def _allow(ruleset: int, path: str, access: int) -> None:
    try:
        descriptor = os.open(path, os.O_PATH | os.O_CLOEXEC)
    except FileNotFoundError:
        return  # gone since it was listed: nothing to allow
    except OSError as error:
        raise SandboxError(f"cannot open {path} for a Landlock rule: {error.strerror}") from None
    try:
        rule = _PathBeneath(access, descriptor)
        result = _syscall(
            _NR_LANDLOCK_ADD_RULE, ruleset, _LANDLOCK_RULE_PATH_BENEATH, ctypes.byref(rule), 0
        )
        if result < 0:
            raise SandboxError(f"landlock_add_rule for {path} failed: {os.strerror(-result)}")
    finally:
        os.close(descriptor)


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


_libc.syscall.restype = ctypes.c_long


def _syscall(number: int, *arguments: object) -> int:
    """A raw system call: its result, or minus its errno."""
    # Every integer as a long: a variadic call would pass an int's 32 bits and leave the rest.
    passed = [ctypes.c_long(value) if isinstance(value, int) else value for value in arguments]
    result: int = _libc.syscall(ctypes.c_long(number), *passed)
    return result if result >= 0 else -ctypes.get_errno()


def _prctl(option: int, value: int) -> int:
    result: int = _libc.prctl(option, value, 0, 0, 0)
    if result < 0:
        number = ctypes.get_errno()
        raise SandboxError(f"prctl({option}) failed: {os.strerror(number)}")
    return result


class _ArgumentComparison(ctypes.Structure):
    """libseccomp's struct scmp_arg_cmp."""

    _fields_ = [
        ("arg", ctypes.c_uint),
        ("op", ctypes.c_int),
        ("datum_a", ctypes.c_uint64),
        ("datum_b", ctypes.c_uint64),
    ]


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
        library.seccomp_rule_add_array.argtypes = [
            ctypes.c_void_p,
            ctypes.c_uint32,
            ctypes.c_int,
            ctypes.c_uint,
            ctypes.POINTER(_ArgumentComparison),
        ]
        library.seccomp_rule_add_array.restype = ctypes.c_int
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

    def load_filter(
        self,
        denied: Sequence[str],
        unimplemented: Sequence[str] = (),
        by_argument: Sequence[ArgumentRule] = (),
    ) -> None:
        """Allow everything of the native architecture but `denied` (EPERM), `unimplemented`
        (ENOSYS) and the calls `by_argument` matches (EPERM); kill on any other architecture."""
        context = self.build_filter(denied, unimplemented, by_argument)
        try:
            self.load_built(context)
        finally:
            self.library.seccomp_release(context)

    def load_built(self, context: int) -> None:
        """Load a filter `build_filter` made (in this process, or before the fork that made it)."""
        self._check(self.library.seccomp_load(context), "loading the filter")

    def build_filter(
        self,
        denied: Sequence[str],
        unimplemented: Sequence[str] = (),
        by_argument: Sequence[ArgumentRule] = (),
    ) -> int:
        """load_filter's filter, built and not loaded: a libseccomp context the caller loads or
        releases."""
        library = self.library
        context: int | None = library.seccomp_init(_SCMP_ACT_ALLOW)
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
            for names, code in ((denied, errno.EPERM), (unimplemented, errno.ENOSYS)):
                for name in names:
                    self._check(
                        library.seccomp_rule_add(
                            context, _SCMP_ACT_ERRNO | code, self._number(name), 0
                        ),
                        f"denying {name}",
                    )
            for rule in by_argument:
                comparisons = (_ArgumentComparison * len(rule.comparisons))(
                    *(_ArgumentComparison(*comparison) for comparison in rule.comparisons)
                )
                self._check(
                    library.seccomp_rule_add_array(
                        context,
                        _SCMP_ACT_ERRNO | errno.EPERM,
                        self._number(rule.syscall),
                        len(rule.comparisons),
                        comparisons,
                    ),
                    f"denying {rule.syscall} by its arguments",
                )
        except BaseException:
            library.seccomp_release(context)
            raise
        return context

    def _number(self, name: str) -> int:
        number: int = self.library.seccomp_syscall_resolve_name(name.encode("ascii"))
        if number == _NR_SCMP_ERROR:
            if name not in _UNIFIED_NUMBERS:
                raise SandboxError(f"libseccomp does not know the system call {name}")
            number = _UNIFIED_NUMBERS[name]
        return number

    @staticmethod
    def _check(result: int, what: str) -> None:
        if result < 0:
            raise SandboxError(f"seccomp: {what} failed: {os.strerror(-result)}")
