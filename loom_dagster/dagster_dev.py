"""`loom ui`: Dagster's `dagster dev` on a home, supervised, and the one daemon a home runs;
`loom watch`: the same without the webserver (`run_watch`).

`dagster dev` starts a webserver, a daemon and a code server, and the daemon's runs start more
processes (a run worker, a local extractor). Ended by a signal to it alone, or to its process
group, `dagster dev` takes its time or leaves them running: an orphaned daemon went on scanning
and ingesting the home, and a second `loom ui` then ran two daemons on one instance (issue 38).
So `loom ui`:

- holds the home's daemon lock (`$LOOM_HOME/locks/daemon.lock`, an flock the kernel releases
  when its holder dies, however it dies) for as long as it runs; a second `loom ui` (or `loom
  watch`), or a `loom ingest`, on that home says in one line that its daemon runs, and starts
  nothing;
- becomes a child subreaper, so every process `dagster dev` starts stays its descendant even
  when its parent dies first, and starts `dagster dev` in a session of its own;
- on SIGTERM, SIGINT or SIGHUP, passes SIGTERM on to that session's process group and to every
  descendant, gives them GRACE_S to end, then kills whatever is left and reaps it: within
  STOP_S of the signal no process it started is left; then marks canceled the runs its daemon
  launched that were still going (`runs.end_runs_launched_since`), and exits 128 + the signal.

Plain Python with no Dagster, but for that last step (imported when it runs).
"""

from __future__ import annotations

import ctypes
import fcntl
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from types import FrameType

from loom_dagster.display import one_line
from loom_dagster.errors import LoomError
from loom_dagster.runs import holding
from loom_dagster.settings import LoomSettings

# Seconds the processes are given to end on SIGTERM before they are killed; the whole stop,
# reaping included, fits in STOP_S.
GRACE_S = 4.0
STOP_S = 10.0
STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)
_PR_SET_CHILD_SUBREAPER = 36


class DaemonRunning(LoomError):
    """Another `loom ui` runs Dagster's daemon on this home."""

    code = "daemon_running"


# The home's one daemon ---------------------------------------------------------------------------


def lock_path(home: Path) -> Path:
    return home / "locks" / "daemon.lock"


@contextmanager
def daemon_lock(home: Path) -> Iterator[None]:
    """Hold the home's daemon lock for the block, or raise DaemonRunning naming its holder."""
    path = lock_path(home)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a+") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise DaemonRunning(_running_message(handle.fileno(), path)) from None
        with holding(handle):
            yield


def refuse_if_daemon_runs(home: Path, doing: str) -> None:
    """Raise DaemonRunning when a `loom ui` holds the home's daemon lock: `doing` would run
    beside its daemon, which ingests the registered folders itself."""
    path = lock_path(home)
    if not path.exists():
        return
    with open(path) as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            raise DaemonRunning(
                _running_message(handle.fileno(), path)
                + f"; stop it before {doing}, or let its folder sensor ingest (`loom sources add`)"
            ) from None
        fcntl.flock(handle, fcntl.LOCK_UN)


def _running_message(fd: int, path: Path) -> str:
    try:
        holder = one_line(os.pread(fd, 40, 0).decode("ascii", "replace"), 20) or "unknown"
    except OSError:
        holder = "unknown"
    return f"loom ui (pid {holder}) runs Dagster's daemon on this home ({path.parent.parent})"


# Supervising dagster dev -------------------------------------------------------------------------

WORKSPACE = Path(__file__).resolve().parent.parent / "workspace.yaml"


def prepare_instance(dagster_home: Path) -> None:
    """Make the instance's storages (their SQLite tables) once, before `dagster dev`'s webserver
    and daemon start together: on a fresh home each would create them, and the loser of that race
    (`table … already exists`) dies, the daemon with it."""
    from dagster import DagsterInstance

    with DagsterInstance.from_config(str(dagster_home)) as instance:
        instance.get_run_records(limit=1)


class UiPortTaken(LoomError):
    """`loom ui`'s port cannot be listened on."""

    code = "ui_port_unavailable"


def url_path(home: Path) -> Path:
    """Where a running `loom ui` keeps the URL with its session's token (0600)."""
    return home / "ui" / "url"


def run_ui(settings: LoomSettings, port: int, *, read_only: bool = False) -> int:
    """`dagster dev` on the home's instance, the home's daemon lock held, until it ends or a
    signal stops it (see the module's docstring), its webserver on a Unix socket of a private
    folder and reached only through the gate (`ui_gate`); returns the exit status for `loom ui`."""
    from loom_dagster.ui_gate import Gate, new_token

    with daemon_lock(settings.home):
        settings.check_instance_database()
        prepare_instance(settings.dagster_home)
        started = time.time()
        private = Path(tempfile.mkdtemp(prefix="loom-ui-"))  # 0700: the webserver's socket
        socket_path = str(private / "web.sock")
        try:
            gate = Gate("127.0.0.1", port, socket_path, new_token())
        except OSError as error:
            shutil.rmtree(private, ignore_errors=True)
            raise UiPortTaken(f"cannot listen on 127.0.0.1:{port}: {error.strerror}") from None
        command = [sys.executable, "-m", "loom_dagster.ui_webserver", "dev", socket_path]
        command += ["1" if read_only else "0", "-w", str(WORKSPACE), "-p", str(gate.port)]
        url_file = url_path(settings.home)
        _write_private(url_file, gate.url() + "\n")
        gate.start()
        print(
            f"loom ui: open {gate.url()} (the token in it is this session's; without it the UI"
            f" answers nothing; also in {url_file})" + (" [read-only]" if read_only else ""),
            flush=True,
        )

        try:
            return supervise(
                command,
                {**os.environ, "DAGSTER_HOME": str(settings.dagster_home)},
                on_stop=_on_stop(settings, started, "loom ui", "dagster dev"),
            )
        finally:
            url_file.unlink(missing_ok=True)
            shutil.rmtree(private, ignore_errors=True)


def _on_stop(settings: LoomSettings, started: float, who: str, what: str) -> Callable[[int], None]:
    """What `who` does once a signal stopped it and every process `what` started ended: mark
    canceled the runs its daemon launched that were still going, and say so."""

    def on_stop(signum: int) -> None:
        from loom_dagster import runs

        name = signal.Signals(signum).name
        ended = runs.end_runs_launched_since(
            settings.dagster_home, started, f"{who} was stopped by {name}"
        )
        print(
            f"{who}: stopped by {name}; {what} and every process it started ended"
            + (f", {len(ended)} run(s) it launched marked canceled" if ended else ""),
            file=sys.stderr,
            flush=True,
        )

    return on_stop


def run_watch(settings: LoomSettings) -> int:
    """Dagster's daemon alone (no webserver) on the home's instance, beside the watcher: the
    folder sensor and automation ingest the registered folders, as under `loom ui`. Held, run
    and stopped as `run_ui` (the home's daemon lock; a signal ends every process it started and
    marks canceled the runs still going, which the folder sensor asks for again)."""
    with daemon_lock(settings.home):
        settings.check_instance_database()
        prepare_instance(settings.dagster_home)
        started = time.time()
        command = [sys.executable, "-m", "loom_dagster.ui_webserver", "watch", "-", "0"]
        # The daemon's own lines at info are two a second (the folder sensor's ticks); runs
        # and warnings still print.
        command += ["run", "-w", str(WORKSPACE), "--log-level", "warning"]
        what = (
            "Dagster's daemon and the folder watcher run"
            if settings.watcher
            else "Dagster's daemon runs, with no folder watcher (LOOM_WATCHER=0: a polling scan"
            " every 30 s),"
        )
        print(
            f"loom watch: {what} on {settings.home} (no webserver); SIGINT or SIGTERM stops them",
            flush=True,
        )
        return supervise(
            command,
            {**os.environ, "DAGSTER_HOME": str(settings.dagster_home)},
            on_stop=_on_stop(settings, started, "loom watch", "the daemon"),
        )


def _write_private(path: Path, text: str) -> None:
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    os.chmod(path.parent, 0o700)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "w") as handle:
        os.fchmod(handle.fileno(), 0o600)
        handle.write(text)


def become_subreaper() -> bool:
    """Make this process the reaper of its orphaned descendants (Linux); False elsewhere."""
    if not sys.platform.startswith("linux"):
        return False
    libc = ctypes.CDLL(None, use_errno=True)
    return bool(libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0)


def supervise(
    command: Sequence[str],
    env: Mapping[str, str],
    *,
    on_stop: Callable[[int], None] = lambda _: None,
    grace_s: float = GRACE_S,
) -> int:
    """Run `command` in a session of its own until it ends or a stop signal comes; then end
    every process it started. Returns its exit status, or 128 + the signal after `on_stop`."""
    become_subreaper()
    stop: list[int] = []

    def note(signum: int, _frame: FrameType | None) -> None:
        stop.append(signum)

    previous = {s: signal.signal(s, note) for s in STOP_SIGNALS}
    try:
        process = subprocess.Popen(list(command), env=dict(env), start_new_session=True)
        while not stop:
            try:
                status = process.wait(timeout=0.2)
            except subprocess.TimeoutExpired:
                continue
            end_family(process.pid, grace_s=grace_s)  # what it left behind
            return status
        end_family(process.pid, grace_s=grace_s)
        process.wait()  # reaped by end_family; this records it
        on_stop(stop[0])
        return 128 + stop[0]
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


def end_family(group: int, *, grace_s: float = GRACE_S, stop_s: float = STOP_S) -> list[int]:
    """SIGTERM to process group `group` and every descendant of this process, SIGKILL to what is
    left after `grace_s`, every child reaped; returns the pids that had to be killed."""
    started = time.monotonic()
    _signal_all(group, signal.SIGTERM)
    while time.monotonic() - started < grace_s and _living_family(group):
        _reap()
        time.sleep(0.1)
        # A process that forked during the grace period gets the signal too.
        _signal_all(group, signal.SIGTERM)
    killed = _living_family(group)
    while time.monotonic() - started < stop_s:
        _signal_all(group, signal.SIGKILL)
        _reap()
        if not _living_family(group):
            break
        time.sleep(0.05)
    _reap()
    return killed


def _signal_all(group: int, sig: int) -> None:
    try:
        os.killpg(group, sig)
    except (ProcessLookupError, PermissionError):
        pass
    for pid in descendants(os.getpid()):
        try:
            os.kill(pid, sig)
        except (ProcessLookupError, PermissionError):
            pass


def _living_family(group: int) -> list[int]:
    return sorted(set(descendants(os.getpid())) | set(_group_members(group)))


def _reap() -> None:
    """Collect every ended child (the orphans a subreaper inherits included)."""
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


# Processes, read from /proc ----------------------------------------------------------------------


def _stat(pid: int) -> list[str] | None:
    try:
        with open(f"/proc/{pid}/stat", "rb") as file:
            return file.read().rsplit(b")", 1)[1].decode().split()
    except OSError:
        return None


def _all_living() -> Iterator[tuple[int, list[str]]]:
    try:
        entries = os.listdir("/proc")
    except OSError:
        return
    for entry in entries:
        if entry.isdigit():
            fields = _stat(int(entry))
            # A zombie runs nothing: it waits to be reaped.
            if fields is not None and fields[0] not in ("Z", "X"):
                yield int(entry), fields


def descendants(pid: int) -> list[int]:
    """Every living process under `pid` (fields: state, ppid, pgrp, session)."""
    children: dict[int, list[int]] = {}
    for child, fields in _all_living():
        children.setdefault(int(fields[1]), []).append(child)
    found: list[int] = []
    todo = [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def _group_members(group: int) -> list[int]:
    return [pid for pid, fields in _all_living() if int(fields[2]) == group]
