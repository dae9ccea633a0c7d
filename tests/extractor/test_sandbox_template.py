"""The warm extractor: each extraction a fork of a template process (extractor_sandbox/template.py).

test_sandbox.py runs unchanged against these forks (they are the default). Here, what forking
adds: a fork is confined before it is given the source, and reads nothing past the request's line
before then; nothing one extraction leaves in its process (a module it changed, memory it
holds) reaches the next, one after it or one beside it; the template, never confined and never
given a request, is started again when it dies; and the service runs as many extractions at
once as the slots it declares.

As in test_sandbox.py, a child is made hostile through a copy of the package whose text parser
runs its input as Python (`hostile_package`, as test_sandbox.py's), never through a code path of the product.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

from extractor_sandbox.child import CHILD_MODULE, read_header
from tests.extractor.conftest import (
    PACKAGE,
    RunningService,
    as_service_user,
    copy_package,
    package_root,
    serve_command,
    service_environment,
    service_python,
    world_readable_tree,
)
from tests.extractor.test_sandbox import (
    TAKEN_OVER_PARSER,
    children_of,
    client,
    error_of,
    proc_stat,
    run_file,
    served,
    status_of,
    wait_for,
)

# Run by a taken-over parser: what a file leaves behind in its process, and what a process sees.
RSS = "def rss():\n    return int(open('/proc/self/status').read().split('VmRSS:')[1].split()[0])\n"
LEAVE_BEHIND = RSS + (
    "import builtins, os, sys, time\n"
    "import extractor_sandbox.source as source\n"
    "source.LEFT_BEHIND = 'by the file before'\n"
    "builtins.HOARD = b'x' * (256 << 20)\n"
    "observed = {'pid': os.getpid(), 'rss_kb': rss(),"
    " 'preloaded': 'extractor_sandbox.formats.sql' in sys.modules}\n"
    "time.sleep(SLEEP_S)\n"
)
LOOK = RSS + (
    "import builtins, ctypes, os, sys\n"
    "import extractor_sandbox.source as source\n"
    "libc = ctypes.CDLL(None, use_errno=True)\n"
    "observed = {'pid': os.getpid(), 'rss_kb': rss(),"
    " 'left behind': getattr(source, 'LEFT_BEHIND', None),"
    " 'hoard': hasattr(builtins, 'HOARD'),"
    " 'preloaded': 'extractor_sandbox.formats.sql' in sys.modules,"
    " 'become a subreaper': [libc.prctl(36, 1, 0, 0, 0), ctypes.get_errno()]}\n"
)
HOARD_KB = 256 * 1024


@pytest.fixture(scope="session")
def hostile_package() -> Path:
    """test_sandbox.py's taken-over package: its text parser runs the file as Python."""
    return copy_package(
        world_readable_tree("loom-template-hostile-"),
        replace={"formats/text.py": TAKEN_OVER_PARSER},
    )


def observed(response: httpx.Response) -> dict[str, Any]:
    assert response.status_code == 200, response.text
    seen: dict[str, Any] = response.json()["observed"]
    return seen


def descendants(pid: int) -> list[int]:
    parents = {}
    for entry in os.listdir("/proc"):
        fields = proc_stat(int(entry)) if entry.isdigit() else None
        if fields is not None and fields[0] not in ("Z", "X"):
            parents[int(entry)] = int(fields[1])
    found, frontier = [], [pid]
    while frontier:
        parent = frontier.pop()
        for child, its_parent in parents.items():
            if its_parent == parent:
                found.append(child)
                frontier.append(child)
    return found


def templates_of(service: RunningService) -> list[int]:
    """The service's template: a process under it with the child's command line, unconfined."""
    found = []
    for pid in descendants(service.process.pid):
        try:
            command = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
            status = status_of(pid)
        except (FileNotFoundError, ProcessLookupError):
            continue
        if CHILD_MODULE.encode() in command and status["Seccomp"] == "0":
            found.append(pid)
    return found


def confined_children(service: RunningService) -> list[int]:
    found = []
    for pid in children_of(service.process.pid):
        try:
            if status_of(pid)["Seccomp"] == "2":
                found.append(pid)
        except (FileNotFoundError, ProcessLookupError):
            continue
    return found


def in_background(call: Callable[[], httpx.Response]) -> tuple[threading.Thread, list[Any]]:
    answers: list[Any] = []
    thread = threading.Thread(target=lambda: answers.append(call()))
    thread.start()
    return thread, answers


# -- nothing of one extraction reaches the next ----------------------------------------------------


def test_what_one_file_leaves_in_its_process_never_reaches_the_next(
    start_extractor: Callable[..., RunningService], hostile_package: Path
) -> None:
    service = start_extractor(package=hostile_package)
    first = observed(run_file(service, LEAVE_BEHIND.replace("SLEEP_S", "0")))
    assert first["preloaded"] is True  # a fork of the warm template, not a fresh interpreter
    assert first["rss_kb"] > HOARD_KB
    then = observed(run_file(service, LOOK))
    assert then["pid"] != first["pid"]
    assert (then["left behind"], then["hoard"]) == (None, False)
    assert then["rss_kb"] < first["rss_kb"] - HOARD_KB * 3 // 4


def test_what_a_running_file_holds_never_reaches_one_beside_it(
    start_extractor: Callable[..., RunningService], hostile_package: Path
) -> None:
    # While the first runs, the template is the process it forked off as it began (the first's
    # child): the one beside it is forked from there, a copy made before the first read anything.
    service = start_extractor({"LOOM_EXTRACTOR_CONCURRENCY": "2"}, package=hostile_package)
    thread, answers = in_background(lambda: run_file(service, LEAVE_BEHIND.replace("SLEEP_S", "4")))
    try:
        [holder] = wait_for(lambda: confined_children(service))

        def holding() -> bool:
            return int(status_of(holder)["VmRSS"].split()[0]) > HOARD_KB

        wait_for(holding)
        beside = observed(run_file(service, LOOK))
    finally:
        thread.join()
    assert beside["pid"] != holder
    assert (beside["left behind"], beside["hoard"], beside["preloaded"]) == (None, False, True)
    assert observed(answers[0])["pid"] == holder


def test_a_forked_child_cannot_become_a_subreaper(
    start_extractor: Callable[..., RunningService], hostile_package: Path
) -> None:
    # It would take in the template's next fork while that runs beneath it.
    service = start_extractor(package=hostile_package)
    assert observed(run_file(service, LOOK))["become a subreaper"] == [-1, 1]  # EPERM


def test_without_warm_each_extraction_is_a_fresh_interpreter(
    start_extractor: Callable[..., RunningService], hostile_package: Path
) -> None:
    service = start_extractor({"LOOM_EXTRACTOR_WARM": "off"}, package=hostile_package)
    seen = observed(run_file(service, LOOK))
    assert seen["preloaded"] is False
    assert templates_of(service) == []


# -- confined before it is given the source ------------------------------------------------------

FORK_PROBE = r"""
import json, os, sys, time
from extractor_sandbox.runner import Limits, Template, _live_children


def status(pid):
    with open(f"/proc/{pid}/status") as file:
        return {name: value.strip() for name, value in
                (line.split(":", 1) for line in file if ":" in line)}


def limits(pid):
    with open(f"/proc/{pid}/limits") as file:
        rows = file.read().splitlines()[1:]
    return {row[:26].strip(): row[26:].split()[:2] for row in rows}


def stat(pid):
    with open(f"/proc/{pid}/stat") as file:
        return file.read().rsplit(")", 1)[1].split()


def until_confined(pid):
    deadline = time.monotonic() + 30
    while status(pid)["Seccomp"] != "2":
        assert time.monotonic() < deadline, "never confined"
        time.sleep(0.01)


def given_the_source(child, source):
    child.stdin.write(source)
    child.stdin.close()
    output = child.stdout.read()
    _live_children.end(child)
    return json.loads(output)["blocks"][0]["text"]


template = Template(Limits(timeout_s=60, max_output_bytes=10**7, cpu_s=30, memory_mb=1024))
template.start()
seen = {"template": {name: status(template.pid)[name] for name in ("Seccomp", "Threads")}}
header = json.dumps({"format": "markdown", "name": "a.md", "options": {}}).encode() + b"\n"
forks = [template.fork(), None]
forks[0].stdin.write(header)
until_confined(forks[0].pid)
# A second while the first runs: the template is then the first's child.
forks[1] = template.fork()
forks[1].stdin.write(header)
until_confined(forks[1].pid)
for index, child in enumerate(forks):
    fields = stat(child.pid)
    seen[index] = {
        "parent is the service": int(fields[1]) == os.getpid(),
        "own process group": int(fields[2]) == child.pid,
        "status": {name: status(child.pid)[name] for name in ("NoNewPrivs", "Seccomp")},
        "limits": {name: limits(child.pid)[name] for name in
                   ("Max cpu time", "Max file size", "Max core file size", "Max processes",
                    "Max address space")},
    }
for index, child in enumerate(forks):
    seen[index]["text"] = given_the_source(child, f"# Given after, {index}\n".encode())
template.close()
print(json.dumps(seen))
"""


def test_a_fork_is_confined_before_it_is_given_the_source() -> None:
    root = package_root()
    finished = subprocess.run(
        [service_python(), "-P", "-s", "-c", FORK_PROBE],
        env={"PYTHONPATH": str(root), "PATH": os.defpath, "LC_ALL": "C.UTF-8"},
        cwd="/",
        capture_output=True,
        text=True,
        timeout=120,
        **as_service_user(),
    )
    assert finished.returncode == 0, finished.stderr
    seen = json.loads(finished.stdout)
    # The template: never confined, one thread (so a fork of it is a whole copy).
    assert seen.pop("template") == {"Seccomp": "0", "Threads": "1"}
    limits = {
        "Max cpu time": ["30", "31"],
        "Max file size": ["0", "0"],
        "Max core file size": ["0", "0"],
        "Max processes": ["0", "0"],
        "Max address space": [str(1024 << 20)] * 2,
    }
    for index in ("0", "1"):
        assert seen[index] == {
            "parent is the service": True,  # reaped, timed and killed as a fresh child is
            "own process group": True,
            "status": {"NoNewPrivs": "1", "Seccomp": "2"},
            "limits": limits,
            "text": f"Given after, {index}",
        }


def test_the_child_reads_its_request_line_and_not_a_byte_past_it() -> None:
    reading, writing = os.pipe()
    os.write(writing, b'{"format": "text"}\n' + b"the source, for after the confinement")
    os.close(writing)
    try:
        assert read_header(reading) == b'{"format": "text"}'
        assert os.read(reading, 100) == b"the source, for after the confinement"
    finally:
        os.close(reading)


# -- a fork is out of the template's process group before the service hears of it ----------------

# Each process the template forks sleeps first, before it can leave the template's process group:
# what a machine loaded far past its cores does to a fork not yet scheduled, made certain.
SLOW_FORKS_FROM = "    gc.freeze()\n"
SLOW_FORKS_TO = (
    "    gc.freeze()\n"
    "    os.register_at_fork(after_in_child=lambda: __import__('time').sleep(1.5))\n"
)

GROUP_PROBE = r"""
import json, os, signal, time
from extractor_sandbox.errors import ExtractError
from extractor_sandbox.runner import Limits, Template, _supervise

template = Template(Limits(timeout_s=60, max_output_bytes=10**7, cpu_s=30, memory_mb=1024))
template.start()
request = json.dumps({"format": "text", "name": "tiny.txt", "options": {}}).encode() + b"\ntiny\n"


def own_group(pid):
    return os.getpgid(pid) == pid


def extract(child):
    try:
        artifact = _supervise(child, request, time.monotonic() + 60, timeout_s=60,
                              max_output_bytes=10**7, cpu_s=30, caller=None,
                              cpu_base=child.cpu_base)
    except ExtractError as error:
        return str(error)
    return json.loads(artifact)["blocks"][0]["text"]


seen = {}
first = template.fork()  # the template becomes it; its successor serves the next fork
seen["successor in a group of its own"] = own_group(template.pid)
beside = template.fork()  # while `first` runs: through a middle process
os.kill(beside.pid, signal.SIGSTOP)  # kept as it was when the service heard of it
seen["beside in a group of its own"] = own_group(beside.pid)
seen["first"] = extract(first)
then = template.fork()  # the successor, the service's child now, becomes it; its group dies with it
seen["then"] = extract(then)
os.kill(beside.pid, signal.SIGCONT)
seen["beside"] = extract(beside)
template.close()
print(json.dumps(seen))
"""


def test_a_fork_has_left_the_templates_process_group_before_the_service_hears_of_it() -> None:
    # A template becomes an extraction, whose whole process group the service kills when it
    # ends; a fork still in that group then (its successor, or an extraction beside it) died
    # with it: a tiny file refused as `corrupt`, "killed by SIGKILL".
    slow = (PACKAGE / "template.py").read_text().replace(SLOW_FORKS_FROM, SLOW_FORKS_TO)
    assert SLOW_FORKS_TO in slow
    root = copy_package(world_readable_tree("loom-template-slow-"), replace={"template.py": slow})
    finished = subprocess.run(
        [service_python(), "-P", "-s", "-c", GROUP_PROBE],
        env={"PYTHONPATH": str(root), "PATH": os.defpath, "LC_ALL": "C.UTF-8"},
        cwd="/",
        capture_output=True,
        text=True,
        timeout=120,
        **as_service_user(),
    )
    assert finished.returncode == 0, finished.stderr
    assert json.loads(finished.stdout) == {
        "successor in a group of its own": True,
        "beside in a group of its own": True,
        "first": "tiny",
        "then": "tiny",
        "beside": "tiny",
    }


@pytest.mark.parametrize("kills", [1, 2])
def test_a_fork_killed_from_outside_is_run_again_once(
    start_extractor: Callable[..., RunningService], hostile_package: Path, kills: int
) -> None:
    service = start_extractor(package=hostile_package)
    thread, answers = in_background(
        lambda: run_file(service, "import os, time; time.sleep(3); observed = os.getpid()")
    )
    killed: list[int] = []
    for _ in range(kills):
        [child] = wait_for(lambda: [pid for pid in confined_children(service) if pid not in killed])
        os.kill(child, signal.SIGKILL)
        killed.append(child)
    thread.join()
    if kills == 1:
        assert observed(answers[0]) not in killed  # answered by a second fork, not the killed one
    else:  # twice in a row: the file's own doing, as far as the service can tell
        assert error_of(answers[0]) == (
            422,
            "corrupt",
            "the extraction process was killed by SIGKILL",
        )
    assert served(service)


STOPPING_PROBE = r"""
import json, os, threading, time
from extractor_sandbox.errors import ExtractError
from extractor_sandbox.runner import Limits, kill_all_children, run_extraction, shared_template

limits = Limits(timeout_s=60, max_output_bytes=10**7, cpu_s=30, memory_mb=1024)
shared_template(limits).start()
outcome = []


def call():
    try:
        run_extraction(b"import time; time.sleep(30)", "text", "a.txt", {}, limits)
        outcome.append("answered")
    except ExtractError as error:
        outcome.append(str(error))


def confined_children():
    found = []
    for entry in os.listdir("/proc"):
        try:
            with open(f"/proc/{entry}/status") as file:
                status = dict(line.split(":", 1) for line in file if ":" in line)
        except (OSError, ValueError):
            continue
        if int(status["PPid"]) == os.getpid() and status["Seccomp"].strip() == "2":
            found.append(int(entry))
    return found


thread = threading.Thread(target=call)
thread.start()
while not confined_children():
    time.sleep(0.02)
kill_all_children()  # as the service does when it stops
thread.join()
print(json.dumps(outcome))
"""


def test_a_fork_killed_as_the_service_stops_is_not_run_again(hostile_package: Path) -> None:
    finished = subprocess.run(
        [service_python(), "-P", "-s", "-c", STOPPING_PROBE],
        env={"PYTHONPATH": str(hostile_package), "PATH": os.defpath, "LC_ALL": "C.UTF-8"},
        cwd="/",
        capture_output=True,
        text=True,
        timeout=120,
        **as_service_user(),
    )
    assert finished.returncode == 0, finished.stderr
    assert json.loads(finished.stdout) == ["corrupt: the extraction process was killed by SIGKILL"]


# -- the template dies: it is started again ------------------------------------------------------


@pytest.mark.parametrize("when", ["idle", "while an extraction runs"])
def test_a_dead_template_is_started_again(
    start_extractor: Callable[..., RunningService], hostile_package: Path, when: str
) -> None:
    service = start_extractor(package=hostile_package)
    thread: threading.Thread | None = None
    answers: list[httpx.Response] = []
    if when == "while an extraction runs":
        thread, answers = in_background(
            lambda: run_file(service, "import time; time.sleep(3); observed = 'finished'")
        )
        wait_for(lambda: confined_children(service))
    [template] = wait_for(lambda: templates_of(service))
    os.kill(template, signal.SIGKILL)
    if thread is not None:
        thread.join()
        assert observed(answers[0]) == "finished"  # a running extraction is not the template's
    assert served(service)
    assert proc_stat(template) is None  # reaped once the service could
    [again] = templates_of(service)
    assert again != template
    assert served(service)


# -- slots -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("slots", [1, 2])
def test_the_service_runs_as_many_extractions_at_once_as_it_declares_slots(
    start_extractor: Callable[..., RunningService], hostile_package: Path, slots: int
) -> None:
    # Without the slot kept for small originals (LOOM_EXTRACTOR_SMALL_BYTES), which these are:
    # that one runs beside the declared slots (tests/extractor/test_service_abuse.py).
    service = start_extractor(
        {"LOOM_EXTRACTOR_CONCURRENCY": str(slots), "LOOM_EXTRACTOR_SMALL_BYTES": "0"},
        package=hostile_package,
    )
    with client(service.token) as session:
        assert session.get(f"{service.url}/v1/capabilities").json()["slots"] == slots
    calls = [
        in_background(lambda: run_file(service, "import time; time.sleep(1.5); observed = 1"))
        for _ in range(3)
    ]
    most = 0
    while any(thread.is_alive() for thread, _ in calls):
        most = max(most, len(confined_children(service)))
        time.sleep(0.02)
    for thread, answers in calls:
        thread.join()
        assert observed(answers[0]) == 1
    assert most == slots


def test_a_service_whose_template_cannot_start_refuses_to_serve() -> None:
    broken = (
        (PACKAGE / "template.py")
        .read_text()
        .replace(
            '    """Load what every extraction needs and no request decides: the package\'s readers."""\n',
            '    """Load what every extraction needs and no request decides: the package\'s readers."""\n'
            '    raise SandboxError("this copy cannot warm up")\n',
        )
    )
    assert "this copy cannot warm up" in broken
    root = copy_package(
        world_readable_tree("loom-template-broken-"), replace={"template.py": broken}
    )
    finished = subprocess.run(
        serve_command(),
        env=service_environment("x" * 20, {"PYTHONPATH": str(root)}),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert (finished.returncode, finished.stdout) == (2, "")
    assert finished.stderr.splitlines() == [
        "loom-extractor template: this copy cannot warm up",
        "loom-extractor: the template process did not start (exit status 4);"
        " LOOM_EXTRACTOR_WARM=off runs without it",
    ]
