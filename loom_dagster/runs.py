"""Runs that outlive their process, ingests that overlap, and an ingest told to stop.

`loom ingest` runs its Dagster jobs in its own process. A process killed mid-run (kill -9, a
lost machine) leaves its run STARTED for ever, holding its concurrency slots, so every later run
that needs the `loom_catalog` pool waits on a slot nobody will free. Each run this process starts
is tagged with who runs it (host, boot, pid and the pid's start time); `reap_dead_runs` marks a
STARTED run whose process is gone as failed and frees its slots, and every ingest calls it first.

Two ingests of one source at once would both extract everything: `ingest_lock` holds an advisory
lock file per source under LOOM_HOME, so the second waits, says for whom, and then finds nothing
left to do.

SIGINT and SIGTERM end an ingest (exit 130 or 143): Dagster defers both signals while a run
executes and only checks at points its pool wait never reaches, so the jobs run in a worker thread
and the main thread, which receives signals, stops that thread and marks its run canceled.
"""

from __future__ import annotations

import ctypes
import fcntl
import hashlib
import os
import signal
import socket
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import IO, TypeVar

from loom_dagster.display import one_line, printable
from loom_dagster.errors import LoomError

PROCESS_TAG = "loom/process"
# Seconds the worker is given to unwind (its extractor stopped, its files closed) after a signal.
UNWIND_S = 10.0

T = TypeVar("T")


class Interrupted(LoomError):
    """SIGINT or SIGTERM asked the command to stop; its exit status is 128 + the signal."""

    code = "interrupted"

    def __init__(self, signum: int) -> None:
        super().__init__(f"stopped by {signal.Signals(signum).name}")
        self.signum = signum

    @property
    def exit_status(self) -> int:
        return 128 + self.signum


# Who runs a run ------------------------------------------------------------------------------


@dataclass(frozen=True)
class ProcessIdentity:
    """A process as the machine knows it: a pid alone is reused, its start time is not."""

    host: str
    boot: str
    pid: int
    started: str  # clock ticks since boot (/proc/<pid>/stat field 22)

    def tag(self) -> str:
        return f"{self.host}|{self.boot}|{self.pid}|{self.started}"

    @classmethod
    def from_tag(cls, tag: str) -> ProcessIdentity | None:
        parts = tag.split("|")
        if len(parts) != 4 or not parts[2].isdigit():
            return None
        return cls(parts[0], parts[1], int(parts[2]), parts[3])

    @classmethod
    def of(cls, pid: int) -> ProcessIdentity | None:
        """The identity of a running process on this machine, or None when there is none."""
        started = _start_ticks(pid)
        if started is None:
            return None
        return cls(socket.gethostname(), _boot_id(), pid, started)

    def is_gone(self) -> bool | None:
        """True when this process no longer runs; None when this machine cannot tell (another
        host's run is left to that host)."""
        if self.host != socket.gethostname():
            return None
        if self.boot != _boot_id():
            return True
        if not self.started or not Path("/proc").is_dir():
            # No start times on this machine: a live pid is taken as the same process.
            return not _pid_exists(self.pid)
        return ProcessIdentity.of(self.pid) != self


def this_process() -> ProcessIdentity:
    identity = ProcessIdentity.of(os.getpid())
    # /proc is where start times come from; without it a pid is all there is.
    return identity or ProcessIdentity(socket.gethostname(), _boot_id(), os.getpid(), "")


def _start_ticks(pid: int) -> str | None:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # The command name (field 2) is in parentheses and may hold spaces: split after it.
    fields = stat[stat.rfind(")") + 2 :].split()
    return fields[19] if len(fields) > 19 else None


def _pid_exists(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _boot_id() -> str:
    try:
        return Path("/proc/sys/kernel/random/boot_id").read_text().strip()
    except OSError:
        return ""


# Dead runs -------------------------------------------------------------------------------------


def reap_dead_runs(instance: object) -> list[str]:
    """Mark failed every unfinished run whose process is gone, freeing its concurrency slots.

    Only runs tagged by `loom ingest` are judged; a run launched by the daemon is left to
    Dagster's run monitoring. Returns the run ids marked.
    """
    from dagster import DagsterInstance, DagsterRunStatus, RunsFilter

    assert isinstance(instance, DagsterInstance)
    unfinished = instance.get_runs(
        filters=RunsFilter(
            statuses=[
                DagsterRunStatus.STARTED,
                DagsterRunStatus.STARTING,
                DagsterRunStatus.CANCELING,
            ]
        )
    )
    reaped = []
    for run in unfinished:
        owner = ProcessIdentity.from_tag(run.tags.get(PROCESS_TAG, ""))
        if owner is None or not owner.is_gone():
            continue
        instance.report_run_failed(
            run, f"the process that ran it (pid {owner.pid} on {owner.host}) is gone"
        )
        _free_slots(instance, run.run_id)
        reaped.append(run.run_id)
    return reaped


def end_own_runs(instance: object, identity: ProcessIdentity, why: str) -> list[str]:
    """Mark canceled the unfinished runs this process started (it is stopping), freeing slots."""
    from dagster import DagsterInstance, DagsterRunStatus, RunsFilter

    assert isinstance(instance, DagsterInstance)
    runs = instance.get_runs(filters=RunsFilter(tags={PROCESS_TAG: identity.tag()}))
    ended = []
    for run in runs:
        if run.status in (
            DagsterRunStatus.STARTED,
            DagsterRunStatus.STARTING,
            DagsterRunStatus.CANCELING,
            DagsterRunStatus.QUEUED,
            DagsterRunStatus.NOT_STARTED,
        ):
            instance.report_run_canceled(run, why)
            ended.append(run.run_id)
        # A run Dagster ended itself on the interrupt may still hold the slot its step claimed.
        _free_slots(instance, run.run_id)
    return ended


def end_runs_launched_since(dagster_home: Path, since: float, why: str) -> list[str]:
    """Mark canceled the unfinished runs created since `since` that no `loom ingest` runs: a
    daemon on this home launched them, and it (with their processes) has just been ended by its
    `loom ui`, which held the home's daemon lock. Their concurrency slots are freed. Returns the
    run ids marked."""
    from dagster import DagsterInstance, DagsterRunStatus, RunsFilter

    with DagsterInstance.from_config(str(dagster_home)) as instance:
        records = instance.get_run_records(
            filters=RunsFilter(
                statuses=[
                    DagsterRunStatus.STARTED,
                    DagsterRunStatus.STARTING,
                    DagsterRunStatus.CANCELING,
                    DagsterRunStatus.NOT_STARTED,
                ]
            )
        )
        ended = []
        for record in records:
            run = record.dagster_run
            if PROCESS_TAG in run.tags or record.create_timestamp.timestamp() < since:
                continue
            instance.report_run_canceled(run, why)
            _free_slots(instance, run.run_id)
            ended.append(run.run_id)
        return ended


def _free_slots(instance: object, run_id: str) -> None:
    from dagster import DagsterInstance

    assert isinstance(instance, DagsterInstance)
    storage = instance.event_log_storage
    if storage.supports_global_concurrency_limits:
        storage.free_concurrency_slots_for_run(run_id)


# One ingest of a source at a time --------------------------------------------------------------


@contextmanager
def ingest_lock(
    home: Path, folder: Path, progress: Callable[[str], None] = lambda _: None
) -> Iterator[None]:
    """Hold the folder's ingest lock for the block; say so while another process holds it.

    The lock is the folder's (its resolved path), not a source name's: which source a folder
    is, is settled by the registration, which runs inside the lock.

    An flock is released by the kernel when its holder dies, however it dies, so a killed
    ingest never leaves a stale lock.
    """
    locks = home / "locks"
    locks.mkdir(parents=True, exist_ok=True)
    resolved = folder.resolve()
    digest = hashlib.sha256(str(resolved).encode("utf-8", "surrogateescape")).hexdigest()[:16]
    with open(locks / f"ingest-{digest}.lock", "a+") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.seek(0)
            holder = one_line(handle.read(), 40) or "unknown"
            progress(f"waiting for another ingest of {printable(resolved.name)} (pid {holder})")
            fcntl.flock(handle, fcntl.LOCK_EX)
        with holding(handle):
            yield


@contextmanager
def holding(handle: IO[str]) -> Iterator[None]:
    """A lock file this process has just flocked: its pid written in it for whoever waits (so
    a message can name the holder), the file emptied and the lock released after the block."""
    handle.seek(0)
    handle.truncate()
    handle.write(str(os.getpid()))
    handle.flush()
    try:
        yield
    finally:
        handle.seek(0)
        handle.truncate()
        fcntl.flock(handle, fcntl.LOCK_UN)


# Stopping on a signal ----------------------------------------------------------------------


@contextmanager
def stopped_by_signals() -> Iterator[None]:
    """SIGINT and SIGTERM raise Interrupted in the main thread for the block's duration."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def stop(signum: int, _frame: FrameType | None) -> None:
        raise Interrupted(signum)

    previous = {s: signal.signal(s, stop) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


def run_stoppably(work: Callable[[], T], on_stop: Callable[[Interrupted], None]) -> T:
    """Run `work` in a worker thread; on Interrupted here, stop it, call `on_stop`, re-raise.

    The worker is stopped by raising KeyboardInterrupt in it, which Dagster treats as an
    interrupted run: it ends the run's steps and releases what they hold on the way out.
    """
    result: list[T] = []
    failure: list[BaseException] = []

    def target() -> None:
        try:
            result.append(work())
        except BaseException as error:  # handed to the main thread as is
            failure.append(error)

    worker = threading.Thread(target=target, name="loom-run", daemon=True)
    worker.start()
    try:
        while worker.is_alive():
            worker.join(0.2)
    except Interrupted as interrupted:
        _raise_in(worker, KeyboardInterrupt)
        worker.join(UNWIND_S)
        on_stop(interrupted)
        raise
    if failure:
        raise failure[0]
    return result[0]


def _raise_in(thread: threading.Thread, error: type[BaseException]) -> None:
    if thread.ident is None or not thread.is_alive():
        return
    ctypes.pythonapi.PyThreadState_SetAsyncExc(
        ctypes.c_ulong(thread.ident), ctypes.py_object(error)
    )


def failure_reason(instance: object, run_id: str) -> str:
    """Why a run failed, in one line: the first failed step's own message (a Failure's
    description, else its error's), for a command that must say more than "it failed"."""
    from dagster import DagsterEventType, DagsterInstance

    assert isinstance(instance, DagsterInstance)
    for entry in instance.all_logs(run_id, of_type=DagsterEventType.STEP_FAILURE):
        event = entry.dagster_event
        if event is None or event.step_failure_data is None:
            continue
        data = event.step_failure_data
        described = data.user_failure_data.description if data.user_failure_data else None
        error = data.error
        # The step's own exception sits under Dagster's wrappers (and a retry request), and
        # above whatever it was raised from: the first error that is not Dagster's.
        while error is not None and error.cause is not None and _dagster_wrapper(error.cls_name):
            error = error.cause
        text = described or (error.message if error is not None else "")
        return one_line(f"step {event.step_key}: {text}", 500)
    return "no step failed: the run itself did (see the Dagster UI)"


def _dagster_wrapper(class_name: str | None) -> bool:
    return class_name is None or class_name.startswith("Dagster") or class_name == "RetryRequested"
