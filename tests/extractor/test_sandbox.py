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
from extractor_sandbox.child import CHILD_MODULE, child_environment, run_child
from extractor_sandbox.errors import ExtractError
from tests.extractor.conftest import (
    AS_ROOT,
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
"""A test's probe: confine itself with the production sandbox, then try what a child must not do."""

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
               "pidfd_getfd": 438, "io_uring_setup": 425, "socket": 41},
    "aarch64": {"ptrace": 117, "process_vm_readv": 270, "process_vm_writev": 271,
                "pidfd_getfd": 438, "io_uring_setup": 425, "socket": 198},
}
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long


def raw(name, *args):
    number = SYSCALLS[os.uname().machine][name]
    result = libc.syscall(ctypes.c_long(number), *[ctypes.c_long(a) for a in args])
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


def write_file(path):
    with open(path, "wb") as file:
        file.write(b"data")
        file.flush()


def status():
    with open("/proc/self/status") as file:
        fields = dict(line.split(":", 1) for line in file if ":" in line)
    return {name: fields[name].strip() for name in ("NoNewPrivs", "Seccomp", "CapPrm", "Uid")}


def i386_socket():
    """socket(AF_INET, SOCK_STREAM, 0) through the 32-bit entry (int 0x80): i386's number 359."""
    import mmap

    code = bytes.fromhex("53" "b867010000" "bb02000000" "b901000000" "31d2" "cd80" "5b" "c3")
    memory = mmap.mmap(-1, mmap.PAGESIZE, prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)
    memory.write(code)
    address = ctypes.addressof(ctypes.c_char.from_buffer(memory))
    return ctypes.CFUNCTYPE(ctypes.c_int)(address)()


def main():
    mode, port, scratch = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    go = threading.Event()
    from_thread = {}

    def early():  # a thread that exists before the filter is loaded
        go.wait()
        from_thread["socket"] = attempt(lambda: socket.socket().close())

    thread = threading.Thread(target=early)
    thread.start()
    if mode == "pyarrow":
        from extractor_sandbox.child import PREPARE
        import pyarrow, pyarrow.parquet
        sink = pyarrow.BufferOutputStream()
        pyarrow.parquet.write_table(pyarrow.table({"n": list(range(1000))}), sink)
        source = sink.getvalue().to_pybytes()
        PREPARE["parquet"]()
    if mode == "pypdf":
        from extractor_sandbox.child import PREPARE
        PREPARE["pdf"]()
    if not mode.endswith("unconfined"):
        from extractor_sandbox.sandbox import confine_child
        confine_child(cpu_s=30, memory_mb=1024)
    go.set()
    thread.join()
    if mode.startswith("i386"):
        print(json.dumps({"fd": i386_socket()}), flush=True)
        return
    if mode == "x32":
        result = libc.syscall(ctypes.c_long(0x40000000 | 41), 2, 1, 0)
        print(json.dumps({"result": result, "errno": ctypes.get_errno()}), flush=True)
        return
    if mode == "pyarrow":
        table = pyarrow.parquet.read_table(pyarrow.BufferReader(source))
        print(json.dumps({"rows": table.num_rows, "sum": sum(table.column("n").to_pylist()),
                          "threads": len(os.listdir("/proc/self/task"))}), flush=True)
        return
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
        "write a file": attempt(lambda: write_file(scratch)),
        "dumpable": libc.prctl(3, 0, 0, 0, 0),
        "limits": {name: list(resource.getrlimit(getattr(resource, name)))
                   for name in ("RLIMIT_AS", "RLIMIT_CPU", "RLIMIT_FSIZE", "RLIMIT_CORE",
                                "RLIMIT_NPROC")},
        "status": status(),
    }
    if mode == "confined":
        seen["allocate past the limit"] = attempt(lambda: bytearray(1100 * 1024 * 1024))
    print(json.dumps(seen), flush=True)


main()
'''

# A parser a hostile file has taken over: it runs the file as Python. It stands in for the text
# parser in a copy of the package made for these tests, never in the product.
TAKEN_OVER_PARSER = """
def extract_text(text, *_options, **_more):
    scope = {}
    exec(compile(text, "<the uploaded file>", "exec"), scope)
    return {"observed": scope.get("observed")}
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
    "write a file": attempt(lambda: write(SCRATCH)),
    "write in its directory": attempt(lambda: write("left-behind")),
    "setsid": attempt(os.setsid),
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
def scratch() -> Iterator[Path]:
    """A path in /tmp, where every user may create a file, for a child to try to write."""
    path = Path(f"/tmp/loom-sandbox-scratch-{os.getpid()}-{time.monotonic_ns()}")
    yield path
    path.unlink(missing_ok=True)


def child_env(root: Path) -> dict[str, str]:
    """The environment the service gives a child, with the package at `root`."""
    return {**child_environment(), "PYTHONPATH": str(root)}


def run_probe(
    root: Path, mode: str, port: int = 1, scratch: Path = Path("/tmp/unused")
) -> subprocess.CompletedProcess[str]:
    """The probe, as the service's user, the way the service starts a child (in /, -P -s)."""
    return subprocess.run(
        [service_python(), "-P", "-s", str(root / "probe.py"), mode, str(port), str(scratch)],
        env=child_env(root),
        cwd="/",
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
    return run_file(service, "observed = 'fine'").json() == {"observed": "fine", "options": {}}


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
    probe_root: Path, listener: socket.socket, scratch: Path
) -> None:
    port = listener.getsockname()[1]
    # Unconfined, the same probe can: the attempts below fail because of the sandbox.
    free = probe_report(probe_root, "unconfined", port=port, scratch=scratch)
    assert free["thread started before the filter: socket"] == "ok"
    assert free["socket AF_INET"] == free["socketpair"] == free["connect to loopback"] == "ok"
    assert free["process_vm_readv"] == "ok"
    assert accepted(listener)
    scratch.unlink()

    seen = probe_report(probe_root, "confined", port=port, scratch=scratch)
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


def test_a_confined_child_starts_no_process_writes_no_file_and_stays_in_its_memory(
    probe_root: Path, scratch: Path
) -> None:
    seen = probe_report(probe_root, "confined", scratch=scratch)
    assert seen["fork"] == "EAGAIN"
    assert seen["thread"] == "RuntimeError"  # can't start new thread
    assert seen["write a file"] == "EFBIG"
    assert not scratch.exists() or scratch.stat().st_size == 0  # it may create, not write
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
        [service_python(), "-P", "-s", str(probe_root / "probe.py"), "hold", "1", "/tmp/unused"],
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
    # One CPU and one IO thread, started before RLIMIT_NPROC 0: a Parquet read still works.
    assert probe_report(probe_root, "pyarrow") == {"rows": 1000, "sum": 499500, "threads": 3}


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
    assert seen["write a file"] == "EFBIG"
    assert seen["write in its directory"] in ("EACCES", "EFBIG")
    assert seen["setsid"] == "EPERM"
    assert not Path("/left-behind").exists() or Path("/left-behind").stat().st_size == 0


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
