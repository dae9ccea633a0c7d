"""The sandbox, each property shown by an attempt that fails.

Run as root (as CI runs), every process here that must be unprivileged is: the service is started
as root with `--user nobody` and drops; the probes run as nobody. Nothing is skipped as root.

Two ways to make a child do hostile things, neither a code path of the product:
- a probe: a script of this test's, beside a world-readable copy of the package, that confines
  itself with the production `sandbox.confine_child` (what `child.main` calls) and then tries;
- a taken-over parser: a copy of the package whose text parser runs its input as Python, served
  by the real service, so the whole path (service, runner, `python -P -s -m
  extractor_sandbox.child`, confinement) is the product's and only the parser is hostile.
"""

from __future__ import annotations

import json
import os
import pwd
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from extractor_sandbox import sandbox
from extractor_sandbox.child import CHILD_MODULE
from extractor_sandbox.errors import ExtractError
from extractor_sandbox.runner import child_environment, run_child
from tests.extractor.conftest import (
    AS_ROOT,
    PACKAGE,
    SERVICE_USER,
    RunningService,
    as_service_user,
    copy_package,
    serve_command,
    service_environment,
    service_python,
    world_readable_tree,
)

MACHINE = os.uname().machine

PROBE = r'''
"""A test's probe: confine itself with the production sandbox, then try what a child must not do.

    probe.py MODE PARAMETERS_JSON

PARAMETERS_JSON: port (a listener no child may reach), victim (the pid of another process of the
same user), secret (a file the user may read, outside the child's paths), scratch (a directory
the user may write, holding `existing`), places (directories to try to create names in), prefix
(of every name it tries to create).
"""

import ctypes
import errno
import json
import os
import resource
import socket
import sys
import threading

SYSCALLS = {
    "x86_64": {"ptrace": 101, "process_vm_readv": 310, "process_vm_writev": 311,
               "pidfd_getfd": 438, "io_uring_setup": 425, "socket": 41, "unshare": 272,
               "setns": 308, "mount": 165, "keyctl": 250, "add_key": 248, "request_key": 249,
               "perf_event_open": 298, "personality": 135, "bpf": 321, "userfaultfd": 323,
               "clone": 56, "clone3": 435, "openat2": 437},
    "aarch64": {"ptrace": 117, "process_vm_readv": 270, "process_vm_writev": 271,
                "pidfd_getfd": 438, "io_uring_setup": 425, "socket": 198, "unshare": 97,
                "setns": 268, "mount": 40, "keyctl": 219, "add_key": 217, "request_key": 218,
                "perf_event_open": 241, "personality": 92, "bpf": 280, "userfaultfd": 282,
                "clone": 220, "clone3": 435, "openat2": 437},
}
CLONE_NEWUSER = 0x10000000
SIGCHLD = 17
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long


def raw(name, *args):
    number = SYSCALLS[os.uname().machine][name]
    passed = [ctypes.c_char_p(a) if isinstance(a, bytes) else ctypes.c_long(a) for a in args]
    result = libc.syscall(ctypes.c_long(number), *passed)
    return "ok" if result >= 0 else errno.errorcode[ctypes.get_errno()]


def attempt(action):
    try:
        action()
    except OSError as error:
        return errno.errorcode.get(error.errno, str(error.errno))
    except Exception as error:
        return type(error).__name__
    return "ok"


def fork():
    if os.fork() == 0:
        os._exit(0)
    os.wait()


def read(path):
    with open(path, "rb") as file:
        file.read(1)


def write(path):
    with open(path, "r+b") as file:
        file.write(b"x")


def memory(pid, write):
    """Read a byte of another process's memory, and with `write`, write it back."""
    with open(f"/proc/{pid}/mem", "r+b" if write else "rb", buffering=0) as mem:
        with open(f"/proc/{pid}/maps") as maps:
            for line in maps:
                span, permissions = line.split()[:2]
                if permissions.startswith("rw" if write else "r"):
                    break
        start = int(span.split("-")[0], 16)
        mem.seek(start)
        byte = mem.read(1)
        if write:
            mem.seek(start)
            mem.write(byte)


def status():
    with open("/proc/self/status") as file:
        fields = dict(line.split(":", 1) for line in file if ":" in line)
    return {name: fields[name].strip() for name in ("NoNewPrivs", "Seccomp", "CapPrm", "Uid")}


def tasks():
    return set(os.listdir("/proc/self/task"))


def i386_socket():
    """socket(AF_INET, SOCK_STREAM, 0) through the 32-bit entry (int 0x80): i386's number 359."""
    import mmap

    code = bytes.fromhex("53" "b867010000" "bb02000000" "b901000000" "31d2" "cd80" "5b" "c3")
    memory = mmap.mmap(-1, mmap.PAGESIZE, prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)
    memory.write(code)
    address = ctypes.addressof(ctypes.c_char.from_buffer(memory))
    return ctypes.CFUNCTYPE(ctypes.c_int)(address)()


def creations(place, prefix, existing):
    """Every way to leave a name behind in `place`: each attempt's outcome."""
    name = os.path.join(place, prefix)
    return {
        "mkdir": attempt(lambda: os.mkdir(name + "-dir")),
        "symlink carrying data": attempt(lambda: os.symlink("x" * 3000, name + "-link")),
        "create a file": attempt(lambda: open(name + "-file", "xb").close()),
        "O_CREAT read-only": attempt(lambda: os.close(os.open(name + "-rdonly", os.O_CREAT | os.O_RDONLY))),
        "O_TMPFILE": attempt(lambda: os.close(os.open(place, os.O_TMPFILE | os.O_RDWR))),
        "mkfifo": attempt(lambda: os.mkfifo(name + "-fifo")),
        "mknod": attempt(lambda: os.mknod(name + "-node")),
        "hard link": attempt(lambda: os.link(existing, name + "-hard")),
        "rename": attempt(lambda: os.rename(existing, name + "-moved")),
    }


def main():
    mode, given = sys.argv[1], json.loads(sys.argv[2])
    port, victim, secret = given.get("port", 1), given.get("victim", 1), given.get("secret", "/")
    scratch = given.get("scratch", "/nonexistent")
    existing = os.path.join(scratch, "existing")
    go = threading.Event()
    from_thread = {}

    def early():  # a thread that exists before the filter is loaded
        go.wait()
        from_thread["socket"] = attempt(lambda: socket.socket().close())

    def start_early():
        threading.Thread(target=early, daemon=True).start()

    prepare = start_early
    warmed = {}
    if mode == "pyarrow":
        from extractor_sandbox.registry import SPECS

        def prepare():  # as the child warms pyarrow: once bound to its paths, before the limits
            SPECS["parquet"].prepare()
            import pyarrow, pyarrow.parquet
            sink = pyarrow.BufferOutputStream()
            pyarrow.parquet.write_table(pyarrow.table({"n": list(range(1000))}), sink)
            warmed["source"] = sink.getvalue().to_pybytes()
            warmed["read"] = lambda data: pyarrow.parquet.read_table(pyarrow.BufferReader(data))
    if mode == "pypdf":
        from extractor_sandbox.registry import SPECS
        prepare = SPECS["pdf"].prepare
    if mode == "no-landlock":
        from extractor_sandbox import sandbox
        sandbox.landlock_abi = lambda: 0  # as on a kernel without Landlock
    if mode == "threaded":
        start_early()
        from extractor_sandbox.sandbox import SandboxError, confine_child
        try:
            confine_child(cpu_s=30, memory_mb=1024)
        except SandboxError as error:
            print(json.dumps({"refused": str(error)}), flush=True)
        else:
            print(json.dumps({"refused": None}), flush=True)
        go.set()
        return
    if mode.endswith("unconfined"):
        prepare()
    else:
        from extractor_sandbox.sandbox import confine_child
        confine_child(cpu_s=30, memory_mb=1024, prepare=prepare)
    confined_tasks = tasks() if mode == "pyarrow" else set()
    go.set()
    if mode.startswith("i386"):
        print(json.dumps({"fd": i386_socket()}), flush=True)
        return
    if mode == "x32":
        result = libc.syscall(ctypes.c_long(0x40000000 | 41), 2, 1, 0)
        print(json.dumps({"result": result, "errno": ctypes.get_errno()}), flush=True)
        return
    if mode == "pyarrow":
        table = warmed["read"](warmed["source"])
        print(json.dumps({"rows": table.num_rows, "sum": sum(table.column("n").to_pylist()),
                          "threads started after confinement": sorted(tasks() - confined_tasks),
                          "a new thread": attempt(lambda: threading.Thread(target=int).start())}),
              flush=True)
        from extractor_sandbox.child import leave
        leave(0)  # as the child leaves: no finalization tearing pyarrow's pool down confined
    if mode == "pypdf":
        import pypdf
        configuration = pypdf.get_configuration()
        print(json.dumps({"jbig2dec_binary": configuration.jbig2dec_binary,
                          "zlib": configuration.zlib_maximum_output_length}), flush=True)
        return
    if mode == "hold":
        print(os.getpid(), flush=True)
        sys.stdin.readline()
        return
    for thread in threading.enumerate():
        if thread is not threading.current_thread():
            thread.join()
    pid = os.getpid()
    seen = {
        "thread started before the filter: socket": from_thread["socket"],
        "socket AF_INET": attempt(lambda: socket.socket(socket.AF_INET).close()),
        "socket AF_UNIX": attempt(lambda: socket.socket(socket.AF_UNIX).close()),
        "socket raw": raw("socket", 2, 1, 0),
        "socketpair": attempt(lambda: [end.close() for end in socket.socketpair()]),
        "connect to loopback": attempt(
            lambda: socket.create_connection(("127.0.0.1", port), timeout=2).close()
        ),
        "ptrace": raw("ptrace", 2, os.getppid(), 0, 0),  # PTRACE_PEEKTEXT of the parent
        "process_vm_readv": raw("process_vm_readv", pid, 0, 0, 0, 0, 0),
        "process_vm_writev": raw("process_vm_writev", pid, 0, 0, 0, 0, 0),
        "pidfd_getfd": raw("pidfd_getfd", -1, 0, 0),
        "io_uring_setup": raw("io_uring_setup", 1, 0),
        "setsid": attempt(os.setsid),
        "setpgid": attempt(lambda: os.setpgid(0, 0)),
        "fork": attempt(fork),
        "thread": attempt(lambda: threading.Thread(target=int).start()),
        "another process's memory: read": attempt(lambda: memory(victim, write=False)),
        "another process's memory: write": attempt(lambda: memory(victim, write=True)),
        "another process's environ: read": attempt(lambda: read(f"/proc/{victim}/environ")),
        "another process's environ: write": attempt(lambda: write(f"/proc/{victim}/environ")),
        "signal another process of its user": attempt(lambda: os.kill(victim, 0)),
        "read /etc/passwd": attempt(lambda: read("/etc/passwd")),
        "read /etc/passwd through /proc/self/root": attempt(
            lambda: read("/proc/self/root/etc/passwd")
        ),
        "read another LOOM_HOME": attempt(lambda: read(secret)),
        "list /root": attempt(lambda: os.listdir("/root")),
        "read its own package": attempt(lambda: read(os.path.join(
            os.environ["PYTHONPATH"], "extractor_sandbox", "errors.py"))),
        "read its own status": attempt(status),
        "create": {place: creations(place, given.get("prefix", "loom-probe"), existing)
                   for place in given.get("places", [])},
        "truncate a file it owns": attempt(lambda: os.truncate(existing, 0)),
        "open a file it owns to write": attempt(lambda: write(existing)),
        "remove a file it owns": attempt(lambda: os.unlink(existing)),
        "chmod a file it owns": attempt(lambda: os.chmod(existing, 0o777)),
        "setns": raw("setns", -1, 0),
        "mount": raw("mount", b"none", b"/", b"tmpfs", 0, 0),
        "keyctl": raw("keyctl", 0, -3, 0),  # KEYCTL_GET_KEYRING_ID of the session keyring
        "add_key": raw("add_key", b"user", b"loom", b"data", 4, -2),
        "request_key": raw("request_key", b"user", b"loom", 0, 0),
        "perf_event_open": raw("perf_event_open", 0, 0, -1, -1, 0),
        "bpf": raw("bpf", 0, 0, 0),
        "userfaultfd": raw("userfaultfd", 0),
        "personality: change": raw("personality", 0x0040000),  # ADDR_NO_RANDOMIZE
        "personality: query": raw("personality", 0xFFFFFFFF),
        "prctl: dumpable again": libc.prctl(4, 1, 0, 0, 0) == 0 or errno.errorcode[ctypes.get_errno()],
        "openat2": raw("openat2", -100, b"/etc/passwd", 0, 0),
        "dumpable": libc.prctl(3, 0, 0, 0, 0),
        "status": status() if mode != "no-landlock" else None,
        "limits": {name: list(resource.getrlimit(getattr(resource, name)))
                   for name in ("RLIMIT_AS", "RLIMIT_CPU", "RLIMIT_FSIZE", "RLIMIT_CORE",
                                "RLIMIT_NPROC")},
    }
    if not mode.endswith("unconfined"):
        # Each would work unconfined and change the probe itself: tried only where they fail.
        seen["clone3"] = raw("clone3", 0, 0)
        seen["clone a user namespace"] = raw("clone", CLONE_NEWUSER | SIGCHLD, 0, 0, 0, 0)
        seen["execve"] = attempt(lambda: os.execv(sys.executable, [sys.executable, "-c", "0"]))
        seen["allocate past the limit"] = attempt(lambda: bytearray(1100 * 1024 * 1024))
    seen["unshare a user namespace"] = raw("unshare", CLONE_NEWUSER)  # last: it may succeed
    print(json.dumps(seen), flush=True)


main()
'''

# A parser a hostile file has taken over: it runs the file as Python. It stands in for the text
# parser in a copy of the package made for these tests, never in the product.
TAKEN_OVER_PARSER = """
def extract_text(text, *_options, **_more):
    scope = {}
    exec(compile(text, "<the uploaded file>", "exec"), scope)
    # Shaped like an artifact, so the service's own bounding step passes it through; the
    # server side's validator is what refuses it.
    return {
        "observed": scope.get("observed"),
        "parser": "taken-over",
        "parser_version": "0",
        "warnings": [],
        "blocks": [],
        "coverage": {"unit": "line", "total": 0, "extracted": 0, "failed": [], "lost": []},
    }
"""

SURVEY = r"""
import ctypes, errno, os, resource, socket, sys, threading

def attempt(action):
    try:
        action()
    except OSError as error:
        return errno.errorcode.get(error.errno, str(error.errno))
    except Exception as error:
        return type(error).__name__
    return "ok"

def read(path):
    with open(path, "rb") as file:
        return file.read(1)

def fork():
    if os.fork() == 0:
        os._exit(0)

def write(path):
    with open(path, "wb") as file:
        file.write(b"x")
        file.flush()

def unshare_user_namespace():
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.unshare(0x10000000) != 0:  # CLONE_NEWUSER
        raise OSError(ctypes.get_errno(), "unshare")

service = os.getppid()
with open("/proc/self/cmdline", "rb") as file:
    cmdline = file.read().decode().split("\0")
with open("/proc/self/status") as file:
    status = dict(line.split(":", 1) for line in file if ":" in line)
observed = {
    "uid": os.getuid(), "euid": os.geteuid(), "groups": os.getgroups(),
    "env": dict(os.environ), "cmdline": cmdline,
    "cwd": os.getcwd(), "sys.path": sys.path,
    "dumpable": ctypes.CDLL(None).prctl(3, 0, 0, 0, 0),
    "NoNewPrivs": status["NoNewPrivs"].strip(), "Seccomp": status["Seccomp"].strip(),
    "CapPrm": status["CapPrm"].strip(),
    "the service's environ": attempt(lambda: read(f"/proc/{service}/environ")),
    "the service's memory": attempt(lambda: read(f"/proc/{service}/mem")),
    "socket": attempt(lambda: socket.socket().close()),
    "socketpair": attempt(lambda: [end.close() for end in socket.socketpair()]),
    "connect to loopback": attempt(
        lambda: socket.create_connection(("127.0.0.1", PORT), timeout=2).close()
    ),
    "fork": attempt(fork),
    "thread": attempt(lambda: threading.Thread(target=int).start()),
    "write a file": attempt(lambda: write(os.path.join(SCRATCH, "left-behind"))),
    "write in its directory": attempt(lambda: write("left-behind")),
    "make a directory": attempt(lambda: os.mkdir(os.path.join(SCRATCH, "left-behind-dir"))),
    "setsid": attempt(os.setsid),
    "read /etc/passwd": attempt(lambda: read("/etc/passwd")),
    "unshare a user namespace": attempt(unshare_user_namespace),
}
"""


@pytest.fixture(scope="session")
def probe_root() -> Path:
    return copy_package(world_readable_tree("loom-sandbox-probe-"), extra={"probe.py": PROBE})


@pytest.fixture(scope="session")
def taken_over_package() -> Path:
    return copy_package(
        world_readable_tree("loom-sandbox-hostile-"),
        replace={"formats/text.py": TAKEN_OVER_PARSER},
    )


@pytest.fixture
def listener() -> Iterator[socket.socket]:
    """A listener on loopback that no child may reach."""
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        server.settimeout(0.5)
        yield server


@pytest.fixture
def make_scratch() -> Callable[[], Path]:
    """Directories the service's user may write, whatever /tmp allows, each holding a file of
    that user's (`existing`, b"keep")."""

    def make() -> Path:
        directory = world_readable_tree("loom-sandbox-scratch-") / "scratch"
        directory.mkdir()
        (directory / "existing").write_bytes(b"keep")
        if AS_ROOT:
            user = pwd.getpwnam(SERVICE_USER)
            for path in (directory, directory / "existing"):
                os.chown(path, user.pw_uid, user.pw_gid)
        return directory

    return make


@pytest.fixture
def scratch(make_scratch: Callable[[], Path]) -> Path:
    return make_scratch()


@pytest.fixture
def victim() -> Iterator[int]:
    """Another process of the service's user, one that did not make itself non-dumpable: its pid."""
    process = subprocess.Popen(
        [service_python(), "-c", "import sys; sys.stdin.readline()"],
        stdin=subprocess.PIPE,
        cwd="/",
        **as_service_user(),
    )
    yield process.pid
    assert process.stdin is not None
    process.stdin.close()
    process.wait(timeout=10)


@pytest.fixture(scope="session")
def other_loom_home() -> Path:
    """A file of another LOOM_HOME: one the service's user may read, outside the child's paths."""
    secret = world_readable_tree("loom-sandbox-home-") / "catalog.duckdb"
    secret.write_bytes(b"another deployment's catalog")
    secret.chmod(0o644)
    return secret


def child_env(root: Path) -> dict[str, str]:
    """The environment the service gives a child, with the package at `root`."""
    return {**child_environment(), "PYTHONPATH": str(root)}


def run_probe(
    root: Path, mode: str, cwd: Path = Path("/"), **parameters: Any
) -> subprocess.CompletedProcess[str]:
    """The probe, as the service's user, the way the service starts a child (-P -s, in /
    unless `cwd` says otherwise); `parameters` as the probe's doc names them."""
    return subprocess.run(
        [service_python(), "-P", "-s", str(root / "probe.py"), mode, json.dumps(parameters)],
        env=child_env(root),
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=60,
        **as_service_user(),
    )


def probe_report(root: Path, mode: str, **kwargs: Any) -> dict[str, Any]:
    finished = run_probe(root, mode, **kwargs)
    assert finished.returncode == 0, finished.stderr
    report: dict[str, Any] = json.loads(finished.stdout)
    return report


def accepted(server: socket.socket) -> bool:
    try:
        connection, _ = server.accept()
    except TimeoutError:
        return False
    connection.close()
    return True


def client(token: str) -> httpx.Client:
    return httpx.Client(headers={"Authorization": f"Bearer {token}"}, timeout=60)


def run_file(service: RunningService, code: str, **params: str) -> httpx.Response:
    """POST `code` as a text file to a service whose text parser is taken over."""
    with client(service.token) as session:
        return session.post(
            f"{service.url}/v1/extract", params={"format": "text", **params}, content=code.encode()
        )


def error_of(response: httpx.Response) -> tuple[int, str, str]:
    body = response.json()
    assert set(body) == {"error"}, body
    return response.status_code, body["error"]["code"], body["error"]["message"]


def served(service: RunningService) -> bool:
    """Whether the service still extracts: a harmless request answered 200."""
    return run_file(service, "observed = 'fine'").json()["observed"] == "fine"


def proc_stat(pid: int) -> list[str] | None:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (FileNotFoundError, ProcessLookupError):
        return None


def live_processes(match: Callable[[list[str]], bool]) -> list[int]:
    """The live (not zombie) processes whose /proc/<pid>/stat fields after the name match."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            fields = proc_stat(int(entry))
            if fields is not None and fields[0] not in ("Z", "X") and match(fields):
                found.append(int(entry))
    return found


def live_pids() -> list[int]:
    return live_processes(lambda fields: True)


def children_of(pid: int) -> list[int]:
    return live_processes(lambda fields: int(fields[1]) == pid)


def group_of(pgid: int) -> list[int]:
    return live_processes(lambda fields: int(fields[2]) == pgid)


def wait_for(condition: Callable[[], Any], timeout_s: float = 15) -> Any:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.02)
    raise AssertionError("timed out waiting")


def the_child(service: RunningService) -> int:
    """The service's one running extraction child."""
    pids: list[int] = wait_for(lambda: children_of(service.process.pid))
    assert len(pids) == 1
    return pids[0]


def read_as_service_user(*paths: str) -> dict[str, str]:
    """What another process of the service's user gets trying to read each of `paths`."""
    code = (
        "import errno, json, sys\n"
        "seen = {}\n"
        "for path in sys.argv[1:]:\n"
        "    try:\n"
        "        with open(path, 'rb') as file:\n"
        "            file.read(1)\n"
        "        seen[path] = 'read'\n"
        "    except OSError as error:\n"
        "        seen[path] = errno.errorcode[error.errno]\n"
        "print(json.dumps(seen))\n"
    )
    finished = subprocess.run(
        [service_python(), "-c", code, *paths],
        capture_output=True,
        text=True,
        timeout=30,
        cwd="/",
        **as_service_user(),
    )
    assert finished.returncode == 0, finished.stderr
    seen: dict[str, str] = json.loads(finished.stdout)
    return seen


def status_of(pid: int) -> dict[str, str]:
    lines = Path(f"/proc/{pid}/status").read_text().splitlines()
    return {name: value.strip() for name, value in (line.split(":", 1) for line in lines)}


# -- the service refuses to start where the sandbox cannot hold ----------------------------------


def refusal(command: list[str], env: dict[str, str]) -> tuple[int, str]:
    finished = subprocess.run(command, env=env, capture_output=True, text=True, timeout=30)
    assert finished.stdout == ""
    return finished.returncode, finished.stderr


def test_a_short_token_refuses_to_start_even_as_root() -> None:
    assert refusal(serve_command(), service_environment("x" * 15)) == (
        2,
        "loom-extractor: LOOM_EXTRACTOR_TOKEN must be at least 16 characters\n",
    )


def test_root_that_does_not_drop_refuses_to_serve() -> None:
    with pytest.raises(sandbox.SandboxError, match="refusing to serve as root"):
        sandbox.check_privileges(uid=0, status="CapPrm:\t0000000000000000\n")
    if not AS_ROOT:
        return  # the start as root below needs root; the check itself is shown above
    # Started as root and told to "drop" to root: the service refuses rather than serve as root.
    assert refusal(serve_command("--user", "root"), service_environment("x" * 20)) == (
        2,
        "loom-extractor: refusing to serve as root: it is root (uid or gid 0)\n",
    )


@pytest.mark.parametrize(
    ("mask", "named"),
    [
        (1 << sandbox.CAP_SYS_RESOURCE, "CAP_SYS_RESOURCE"),
        (1 << sandbox.CAP_SYS_ADMIN, "CAP_SYS_ADMIN"),
        (0x1FFFFFFFFFF, "CAP_SYS_ADMIN and CAP_SYS_RESOURCE"),
    ],
)
def test_a_process_with_a_limit_lifting_capability_refuses_to_serve(mask: int, named: str) -> None:
    status = f"Name:\tpython3\nCapInh:\t0000000000000000\nCapPrm:\t{mask:016x}\n"
    with pytest.raises(sandbox.SandboxError) as refused:
        sandbox.check_privileges(uid=65534, status=status)
    assert str(refused.value) == (
        f"refusing to serve with {named} permitted: the process limit would not hold for its"
        " children"
    )
    sandbox.check_privileges(uid=65534, status="CapPrm:\t0000000000000400\n")  # another one: fine


@pytest.mark.parametrize("machine", ["i686", "armv7l", "riscv64", "ppc64le", "s390x"])
def test_an_architecture_the_filter_does_not_cover_refuses_to_start(
    machine: str, probe_root: Path
) -> None:
    message = (
        "the sandbox's socket filter covers only x86_64 and aarch64,"
        f" not {machine}; refusing to start"
    )
    with pytest.raises(sandbox.SandboxError) as refused:
        sandbox.check_architecture(machine)
    assert str(refused.value) == message
    # The whole service, on a machine that says it is `machine`.
    pretend = (
        "import os, sys\n"
        "real = os.uname()\n"
        "os.uname = lambda: os.uname_result(real[:4] + (sys.argv[1],))\n"
        "from extractor_sandbox.__main__ import main\n"
        "sys.exit(main(['serve', '--port', '0']))\n"
    )
    env = service_environment("x" * 20, {"PYTHONPATH": str(probe_root)})
    assert refusal([service_python(), "-P", "-s", "-c", pretend, machine], env) == (
        2,
        f"loom-extractor: {message}\n",
    )


@pytest.mark.parametrize("machine", ["x86_64", "aarch64"])
def test_the_covered_architectures_start(machine: str) -> None:
    sandbox.check_architecture(machine)


def test_a_root_start_serves_as_the_unprivileged_user(
    start_extractor: Callable[..., RunningService],
) -> None:
    service = start_extractor()
    status = status_of(service.process.pid)
    assert status["NoNewPrivs"] == "1"
    if AS_ROOT:
        user = pwd.getpwnam(SERVICE_USER)
        assert status["Uid"].split() == [str(user.pw_uid)] * 4
        assert status["Gid"].split() == [str(user.pw_gid)] * 4
        assert status["Groups"] == ""
        assert int(status["CapPrm"], 16) == 0 and int(status["CapEff"], 16) == 0


def test_a_root_start_refuses_an_interpreter_the_user_cannot_run(tmp_path: Path) -> None:
    if not AS_ROOT:
        pytest.skip("dropping to another user needs a start as root")
    # An interpreter in a directory only root can enter, as the machine's Python under /root is.
    hidden = tmp_path / "root-only"
    hidden.mkdir(mode=0o700)
    python = hidden / "python3"
    shutil.copy2(os.path.realpath(service_python()), python)
    command = [str(python), "-P", "-s", "-m", "extractor_sandbox", "serve", "--user", SERVICE_USER]
    code, stderr = refusal(command, service_environment("x" * 20))
    assert (code, stderr) == (
        2,
        f"loom-extractor: user {SERVICE_USER} cannot run {python}: start the service from an"
        " environment that user can read (scripts/setup builds one)\n",
    )


# -- the child, confined by the production code: what it must not do, it cannot ----------------


def test_a_confined_child_opens_no_socket_and_reaches_no_process(
    probe_root: Path, listener: socket.socket
) -> None:
    port = listener.getsockname()[1]
    # Unconfined, the same probe can: the attempts below fail because of the sandbox.
    free = probe_report(probe_root, "unconfined", port=port)
    assert free["thread started before the filter: socket"] == "ok"
    assert free["socket AF_INET"] == free["socketpair"] == free["connect to loopback"] == "ok"
    assert free["process_vm_readv"] == "ok"
    assert accepted(listener)

    seen = probe_report(probe_root, "confined", port=port)
    for attempt in (
        "thread started before the filter: socket",  # TSYNC: the filter is on every thread
        "socket AF_INET",
        "socket AF_UNIX",
        "socket raw",
        "socketpair",
        "connect to loopback",
        "ptrace",
        "process_vm_readv",
        "process_vm_writev",
        "pidfd_getfd",
        "io_uring_setup",
        "setsid",
        "setpgid",
    ):
        assert seen[attempt] == "EPERM", attempt
    assert not accepted(listener)
    assert seen["status"]["Seccomp"] == "2" and seen["status"]["NoNewPrivs"] == "1"
    assert seen["dumpable"] == 0


def test_a_confined_child_starts_no_process_and_stays_in_its_memory(probe_root: Path) -> None:
    seen = probe_report(probe_root, "confined")
    assert seen["fork"] == "EAGAIN"
    assert seen["thread"] == "RuntimeError"  # can't start new thread
    assert seen["allocate past the limit"] == "MemoryError"
    mib = 1024 * 1024
    assert seen["limits"] == {
        "RLIMIT_AS": [1024 * mib, 1024 * mib],
        "RLIMIT_CPU": [30, 31],
        "RLIMIT_FSIZE": [0, 0],
        "RLIMIT_CORE": [0, 0],
        "RLIMIT_NPROC": [0, 0],
    }
    if AS_ROOT:
        assert seen["status"]["Uid"].split()[0] == str(pwd.getpwnam(SERVICE_USER).pw_uid)


NAMESPACES_AND_KERNEL_SURFACES = {
    "unshare a user namespace": "EPERM",
    "clone a user namespace": "EPERM",
    "clone3": "ENOSYS",  # libc falls back to clone, whose flags the filter checks
    "openat2": "ENOSYS",  # and to openat
    "setns": "EPERM",
    "mount": "EPERM",
    "keyctl": "EPERM",
    "add_key": "EPERM",
    "request_key": "EPERM",
    "perf_event_open": "EPERM",
    "bpf": "EPERM",
    "userfaultfd": "EPERM",
    "personality: change": "EPERM",
    "personality: query": "ok",
    "prctl: dumpable again": "EPERM",
    "execve": "EPERM",
}


def test_a_confined_child_makes_no_namespace_and_reaches_no_kernel_surface(
    probe_root: Path,
) -> None:
    free = probe_report(probe_root, "unconfined")
    # Without the filter these get past it to the kernel: a key is made, setns looks at its fd.
    assert free["keyctl"] == free["add_key"] == "ok"
    assert free["setns"] == "EBADF" and free["prctl: dumpable again"] is True
    seen = probe_report(probe_root, "confined")
    assert {name: seen[name] for name in NAMESPACES_AND_KERNEL_SURFACES} == (
        NAMESPACES_AND_KERNEL_SURFACES
    )
    assert seen["dumpable"] == 0


def test_a_confined_child_cannot_open_another_process_of_its_user(
    probe_root: Path, victim: int
) -> None:
    attempts = [
        f"another process's {part}: {how}"
        for part in ("memory", "environ")
        for how in ("read", "write")
    ]
    free = probe_report(probe_root, "unconfined", victim=victim)
    # The attack: unconfined, a process of the same user reads and patches a dumpable one.
    assert [free[name] for name in attempts] == ["ok", "ok", "ok", "EACCES"]
    seen = probe_report(probe_root, "confined", victim=victim)
    expected = ["EACCES", "EPERM", "EACCES", "EPERM"] if sandbox.landlock_abi() else ["EPERM"] * 4
    assert [seen[name] for name in attempts] == expected
    # Without Landlock the child opens nothing at all once confined.
    bare = probe_report(probe_root, "no-landlock", victim=victim)
    assert [bare[name] for name in attempts] == ["EPERM"] * 4


def test_a_confined_child_signals_no_process_outside_its_domain(
    probe_root: Path, victim: int
) -> None:
    assert (
        probe_report(probe_root, "unconfined", victim=victim)["signal another process of its user"]
        == "ok"
    )
    seen = probe_report(probe_root, "confined", victim=victim)
    # Landlock's signal scope (ABI 6); before it, signals to the user's processes stay possible.
    expected = "EPERM" if sandbox.landlock_abi() >= 6 else "ok"
    assert seen["signal another process of its user"] == expected


def test_a_confined_child_reads_only_its_code(probe_root: Path, other_loom_home: Path) -> None:
    reads = (
        "read /etc/passwd",
        "read /etc/passwd through /proc/self/root",
        "read another LOOM_HOME",
        "list /root",
    )
    free = probe_report(probe_root, "unconfined", secret=str(other_loom_home))
    assert free["read /etc/passwd"] == free["read another LOOM_HOME"] == "ok"
    assert free["read /etc/passwd through /proc/self/root"] == "ok"
    seen = probe_report(probe_root, "confined", secret=str(other_loom_home))
    refused = "EACCES" if sandbox.landlock_abi() else "EPERM"
    if sandbox.landlock_abi():
        assert seen["read its own package"] == seen["read its own status"] == "ok"
    assert {name: seen[name] for name in reads} == dict.fromkeys(reads, refused)
    bare = probe_report(probe_root, "no-landlock", secret=str(other_loom_home))
    assert {name: bare[name] for name in reads} == dict.fromkeys(reads, "EPERM")
    assert bare["read its own package"] == "EPERM"


def test_nothing_a_confined_child_creates_outlives_it(
    probe_root: Path, make_scratch: Callable[[], Path]
) -> None:
    def names(place: Path, prefix: str) -> list[str]:
        return sorted(entry for entry in os.listdir(place) if entry.startswith(prefix))

    # Unconfined, the probe leaves every kind of name in a directory it may write.
    free_place = make_scratch()
    free = probe_report(
        probe_root, "unconfined", cwd=free_place, places=["."], prefix="free", scratch="."
    )
    assert set(free["create"]["."].values()) == {"ok"}
    assert len(names(free_place, "free")) == 8  # all but the O_TMPFILE, which has no name

    prefix = f"loom-probe-{os.getpid()}-{time.monotonic_ns()}"
    places = [place for place in ("/dev/shm", "/var/tmp", "/tmp") if os.path.isdir(place)]
    for mode in ("confined", "no-landlock"):
        scratch = make_scratch()
        seen = probe_report(
            probe_root, mode, cwd=scratch, places=[*places, "."], prefix=prefix, scratch="."
        )
        for place, outcomes in seen["create"].items():
            assert set(outcomes.values()) == {"EPERM"}, (mode, place, outcomes)
        for name in (
            "truncate a file it owns",
            "open a file it owns to write",
            "remove a file it owns",
            "chmod a file it owns",
        ):
            assert seen[name] == "EPERM", (mode, name)
        for place in [*map(Path, places), scratch]:
            assert names(place, prefix) == [], (mode, place)
        assert os.listdir(scratch) == ["existing"]
        assert (scratch / "existing").read_bytes() == b"keep"
        assert (scratch / "existing").stat().st_mode & 0o777 != 0o777


def test_landlock_refuses_to_bind_a_process_with_a_second_thread(probe_root: Path) -> None:
    # A thread started before the rules would stay free of them: the child confines itself first.
    expected = "Landlock binds one thread and 2 are running: confine earlier"
    assert probe_report(probe_root, "threaded") == {
        "refused": expected if sandbox.landlock_abi() else None
    }


@pytest.mark.skipif(MACHINE != "x86_64", reason="the 32-bit entry probed is x86's int 0x80")
def test_a_system_call_of_a_foreign_architecture_kills_the_child(probe_root: Path) -> None:
    # With no filter, an i386 socket() through int 0x80 succeeds here...
    assert probe_report(probe_root, "i386-unconfined")["fd"] >= 0
    # ...and under the filter it kills the process, as does an x32 one.
    for mode in ("i386", "x32"):
        confined = run_probe(probe_root, mode)
        assert confined.returncode == -signal.SIGSYS, (mode, confined.stdout, confined.stderr)


def test_another_process_of_the_user_cannot_read_a_confined_child(probe_root: Path) -> None:
    holder = subprocess.Popen(
        [service_python(), "-P", "-s", str(probe_root / "probe.py"), "hold", "{}"],
        env=child_env(probe_root),
        cwd="/",
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        **as_service_user(),
    )
    # A process of the same user that did not make itself non-dumpable, for comparison.
    plain = subprocess.Popen(
        [service_python(), "-c", "import sys; sys.stdin.readline()"],
        stdin=subprocess.PIPE,
        cwd="/",
        **as_service_user(),
    )
    try:
        assert holder.stdout is not None
        pid = int(holder.stdout.readline())
        seen = read_as_service_user(
            f"/proc/{pid}/environ", f"/proc/{pid}/mem", f"/proc/{plain.pid}/environ"
        )
        assert seen == {
            f"/proc/{pid}/environ": "EACCES",
            f"/proc/{pid}/mem": "EACCES",
            f"/proc/{plain.pid}/environ": "read",
        }
    finally:
        for process in (holder, plain):
            assert process.stdin is not None
            process.stdin.close()
            process.wait(timeout=10)
        if holder.stdout is not None:
            holder.stdout.close()


def test_a_library_that_starts_threads_is_warmed_before_the_limits(probe_root: Path) -> None:
    pytest.importorskip("pyarrow")
    # Its threads start while the child warms it, before the limits: a Parquet read still works,
    # and starts no thread (none can start once RLIMIT_NPROC is 0).
    assert probe_report(probe_root, "pyarrow") == {
        "rows": 1000,
        "sum": 499500,
        "threads started after confinement": [],
        "a new thread": "RuntimeError",
    }


def test_pypdf_calls_no_program_and_has_explicit_budgets(probe_root: Path) -> None:
    pytest.importorskip("pypdf")
    assert probe_report(probe_root, "pypdf") == {"jbig2dec_binary": None, "zlib": 75_000_000}


# -- the real service, with a parser a hostile file has taken over ------------------------------


def test_a_taken_over_child_has_nothing_and_reaches_nothing(
    start_extractor: Callable[..., RunningService],
    taken_over_package: Path,
    listener: socket.socket,
    scratch: Path,
) -> None:
    service = start_extractor(package=taken_over_package)
    code = SURVEY.replace("PORT", str(listener.getsockname()[1])).replace(
        "SCRATCH", repr(str(scratch))
    )
    response = run_file(service, code, name="secret-report.txt")
    assert response.status_code == 200, response.text
    seen = response.json()["observed"]

    # no environment: the token is nowhere in it, nor anything of the service's
    assert seen["env"] == child_env(taken_over_package)
    assert set(seen["env"]) == {"PYTHONPATH", "PATH", "LC_ALL", "ARROW_DEFAULT_MEMORY_POOL"}
    assert service.token not in json.dumps(seen)
    # shows no request: its command line holds only its limits
    assert seen["cmdline"][1:] == [
        "-P",
        "-s",
        "-m",
        CHILD_MODULE,
        "--cpu-s=120",
        "--memory-mb=2048",
        "",
    ]
    assert not any("secret-report" in part for part in seen["cmdline"])
    # loads only the package: in /, with no current or script directory on sys.path
    assert seen["cwd"] == "/"
    assert "" not in seen["sys.path"] and "/" not in seen["sys.path"]
    # non-dumpable, no new privileges, filtered, and no capability
    assert (seen["dumpable"], seen["NoNewPrivs"], seen["Seccomp"]) == (0, "1", "2")
    assert int(seen["CapPrm"], 16) == 0
    if AS_ROOT:
        assert seen["uid"] == seen["euid"] == pwd.getpwnam(SERVICE_USER).pw_uid
        assert seen["groups"] == []
    # it cannot read the service that holds the token
    assert seen["the service's environ"] == seen["the service's memory"] == "EACCES"
    # it opens no socket and reaches no listener
    assert seen["socket"] == seen["socketpair"] == seen["connect to loopback"] == "EPERM"
    assert not accepted(listener)
    # it starts no process, writes no file, leaves no process group
    assert seen["fork"] == "EAGAIN" and seen["thread"] == "RuntimeError"
    # it leaves nothing behind, even where its user may write
    assert seen["write a file"] == seen["write in its directory"] == "EPERM"
    assert seen["make a directory"] == "EPERM"
    assert os.listdir(scratch) == ["existing"] and not Path("/left-behind").exists()
    assert seen["setsid"] == "EPERM"
    # it reads nothing but its code, and makes no namespace
    assert seen["read /etc/passwd"] == ("EACCES" if sandbox.landlock_abi() else "EPERM")
    assert seen["unshare a user namespace"] == "EPERM"


@pytest.mark.parametrize("start", ["as root, dropping", "as the user"])
def test_another_process_of_the_user_cannot_read_the_service_or_its_child(
    start_extractor: Callable[..., RunningService], taken_over_package: Path, start: str
) -> None:
    # Started as the user, nothing but the service's own PR_SET_DUMPABLE 0 keeps it unreadable
    # (a drop from root makes a process non-dumpable as well).
    service = start_extractor(package=taken_over_package, as_user=start == "as the user")
    answer: list[httpx.Response] = []
    caller = threading.Thread(
        target=lambda: answer.append(run_file(service, "import time; time.sleep(3)"))
    )
    caller.start()
    try:
        child = the_child(service)
        # Past its start: it is confined before it reads the source (and so before this runs).
        wait_for(lambda: status_of(child).get("Seccomp") == "2")
        paths = [
            f"/proc/{pid}/{part}"
            for pid in (service.process.pid, child)
            for part in ("environ", "mem")
        ]
        assert read_as_service_user(*paths) == dict.fromkeys(paths, "EACCES")
    finally:
        caller.join()
    assert answer[0].status_code == 200


def test_a_child_past_the_memory_limit_is_a_resource_limit(
    start_extractor: Callable[..., RunningService], taken_over_package: Path
) -> None:
    service = start_extractor({"LOOM_EXTRACTOR_MEMORY_MB": "256"}, package=taken_over_package)
    response = run_file(service, "observed = len(bytearray(512 * 1024 * 1024))")
    assert error_of(response) == (
        422,
        "resource_limit",
        "the extraction ran out of memory (LOOM_EXTRACTOR_MEMORY_MB)",
    )
    # One that dies of it without a word (its stdout gone) is a resource_limit all the same.
    response = run_file(service, "import os; os.close(1); bytearray(512 * 1024 * 1024)")
    assert error_of(response)[:2] == (422, "resource_limit")
    assert served(service)


def test_an_endless_loop_is_a_timeout_leaves_no_process_and_frees_the_slot(
    start_extractor: Callable[..., RunningService], taken_over_package: Path
) -> None:
    service = start_extractor({"LOOM_EXTRACTOR_TIMEOUT_S": "2"}, package=taken_over_package)
    answer: list[httpx.Response] = []
    caller = threading.Thread(target=lambda: answer.append(run_file(service, "while True: pass")))
    caller.start()
    child = the_child(service)
    caller.join()
    assert error_of(answer[0]) == (422, "timeout", "extraction took longer than 2 s")
    assert group_of(child) == [] and proc_stat(child) is None
    assert served(service)  # one slot (the default), free again


def test_a_child_past_its_cpu_seconds_is_a_timeout(
    start_extractor: Callable[..., RunningService], taken_over_package: Path
) -> None:
    service = start_extractor({"LOOM_EXTRACTOR_CPU_S": "1"}, package=taken_over_package)
    started = time.monotonic()
    response = run_file(service, "while True: pass")
    assert time.monotonic() - started < 30
    assert error_of(response) == (
        422,
        "timeout",
        "extraction used more than 1 s of CPU (LOOM_EXTRACTOR_CPU_S)",
    )
    # One that ignores SIGXCPU is killed a second later, and is a timeout too.
    response = run_file(
        service, "import signal; signal.signal(signal.SIGXCPU, signal.SIG_IGN)\nwhile True: pass"
    )
    assert error_of(response)[:2] == (422, "timeout")
    assert served(service)


def test_a_caller_that_disconnects_leaves_no_child(
    start_extractor: Callable[..., RunningService], taken_over_package: Path
) -> None:
    service = start_extractor(package=taken_over_package)
    host, port = service.url.removeprefix("http://").rsplit(":", 1)
    body = b"import time; time.sleep(60)"
    connection = socket.create_connection((host, int(port)))
    connection.sendall(
        b"POST /v1/extract?format=text HTTP/1.1\r\nHost: x\r\n"
        + f"Authorization: Bearer {service.token}\r\nContent-Length: {len(body)}\r\n\r\n".encode()
        + body
    )
    child = the_child(service)
    connection.close()
    wait_for(lambda: child not in live_pids(), 10)
    assert group_of(child) == []
    assert served(service)


def test_output_past_the_bound_ends_the_child_as_a_resource_limit(
    start_extractor: Callable[..., RunningService], taken_over_package: Path
) -> None:
    service = start_extractor(
        {"LOOM_EXTRACTOR_MAX_OUTPUT_BYTES": "100000"}, package=taken_over_package
    )
    response = run_file(service, "observed = 'x' * 1_000_000")
    assert error_of(response) == (
        422,
        "resource_limit",
        "the extraction's output passed LOOM_EXTRACTOR_MAX_OUTPUT_BYTES (100000 bytes)",
    )
    assert served(service)


def test_a_parser_exception_is_corrupt_and_the_service_serves_the_next(
    start_extractor: Callable[..., RunningService], taken_over_package: Path
) -> None:
    service = start_extractor(package=taken_over_package)
    response = run_file(service, "raise ValueError('the parser broke')")
    assert error_of(response) == (
        422,
        "corrupt",
        "the text parser failed: ValueError: the parser broke",
    )
    assert "Traceback" not in response.text
    assert served(service)


# -- the runner's reading of how a child ended ---------------------------------------------------


def test_a_child_that_dies_out_of_memory_without_an_answer_is_a_resource_limit() -> None:
    code = (
        "import resource\n"
        "resource.setrlimit(resource.RLIMIT_AS, (256 << 20, 256 << 20))\n"
        "data = bytearray(512 << 20)\n"
    )
    with pytest.raises(ExtractError) as caught:
        run_child([sys.executable, "-c", code], b"", timeout_s=30, max_output_bytes=1000)
    assert caught.value.code == "resource_limit"


def test_a_child_killed_by_its_cpu_limit_is_a_timeout() -> None:
    code = "import resource\nresource.setrlimit(resource.RLIMIT_CPU, (1, 2))\nwhile True: pass\n"
    with pytest.raises(ExtractError) as caught:
        run_child([sys.executable, "-c", code], b"", timeout_s=60, max_output_bytes=1000, cpu_s=1)
    assert (caught.value.code, caught.value.message) == (
        "timeout",
        "extraction used more than 1 s of CPU (LOOM_EXTRACTOR_CPU_S)",
    )


# -- a kernel without Landlock: the child opens nothing once confined ---------------------------

TEXT_SAMPLES: dict[str, tuple[bytes, dict[str, str]]] = {
    "markdown": (b"# Title\n\nSome text under it.\n", {}),
    "text": ("\ufeffa UTF-16 file, by its mark\n".encode("utf-16-le"), {}),
    "toml": (b'[server]\nport = 7777\nname = "loom"\n', {}),
    "sql": (b"CREATE TABLE t (a INT);\nSELECT a FROM t WHERE a > 1;\n", {}),
    # Its <meta> declares the encoding: the prescan (formats/html/decoding.py) is warmed too.
    "html": (b'<meta charset="windows-1252"><h1>Caf\xe9</h1><p>A paragraph.</p>', {}),
    "csv": ("name,price\ncaf\u00e9,3\n".encode("cp1252"), {"encoding": "cp1252"}),
}


@pytest.fixture(scope="session")
def package_without_landlock() -> Path:
    """A copy of the package that finds no Landlock, as on a kernel without it."""
    text = (PACKAGE / "sandbox.py").read_text() + (
        "\n\ndef landlock_abi() -> int:\n    return 0  # as on a kernel without Landlock\n"
    )
    return copy_package(
        world_readable_tree("loom-sandbox-no-landlock-"), replace={"sandbox.py": text}
    )


def test_without_landlock_every_format_is_warmed_before_the_child_opens_nothing(
    start_extractor: Callable[..., RunningService], package_without_landlock: Path
) -> None:
    from tests.integration.test_document_formats_end_to_end import CASES

    samples = dict(TEXT_SAMPLES)
    samples.update({fmt: (build(), {}) for fmt, (_name, build, _cited) in CASES.items()})
    with_landlock = start_extractor()
    without = start_extractor(package=package_without_landlock)
    with client(with_landlock.token) as bound, client(without.token) as bare:
        declared = {
            entry["format"]
            for entry in bound.get(f"{with_landlock.url}/v1/capabilities").json()["formats"]
        }
        assert set(samples) <= declared, set(samples) - declared
        for fmt, (data, options) in samples.items():
            params = {"format": fmt, "name": f"sample.{fmt}", **options}
            expected = bound.post(f"{with_landlock.url}/v1/extract", params=params, content=data)
            assert expected.status_code == 200, (fmt, expected.text)
            # The same artifact from a child that can open no file: the warm-up loaded it all.
            answer = bare.post(f"{without.url}/v1/extract", params=params, content=data)
            assert answer.status_code == 200, (fmt, answer.text)
            assert answer.json() == expected.json(), fmt


def test_a_child_leaves_with_its_answer_flushed_and_no_finalization() -> None:
    # A confined child's native libraries may abort tearing down at the interpreter's exit what
    # the limits no longer let them manage (pyarrow's pool: SIGABRT after the answer was
    # written); the child leaves without that teardown, its answer and its status intact.
    program = (
        "import atexit, sys\n"
        "from extractor_sandbox.child import leave\n"
        "atexit.register(lambda: sys.stdout.write(' finalized'))\n"
        "sys.stdout.write('the answer')\n"
        "sys.stderr.write('a note')\n"
        "leave(3)\n"
    )
    finished = subprocess.run(
        [sys.executable, "-c", program],
        cwd=Path(__file__).resolve().parents[2],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert (finished.returncode, finished.stdout, finished.stderr) == (3, "the answer", "a note")
