"""Runs that spread: the ingest job's runs queued by Dagster and launched across worker homes.

With LOOM_WORKERS=N (N > 1; the catalog and Dagster's instance both on PostgreSQL), the
instance's dagster.yaml (settings.dagster_yaml) names:

- the queued run coordinator's limits (`concurrency: runs:`): at most N runs at once, at most
  LOOM_RUNS_PER_SOURCE at once per value of the `loom/source` tag, at most
  LOOM_RUNS_PER_EXTRACTOR per value of `loom/extractor`;
- this module's `WorkerRunLauncher`: the daemon's run queue hands it each run it releases, and it
  starts the run as its own process (`dagster api execute_run`, as a Kubernetes run launcher
  does in a pod) in one of N worker homes, `$LOOM_HOME/workers/<n>`. A worker home is a LOOM_HOME
  of its own (its own search index, whose tantivy writer takes one process), sharing the
  catalog, the object store and the instance. The run's process holds its home's lock file
  (`locks/worker.lock`, an flock the kernel frees when the process ends, however it ends) for its
  whole life, so one home never runs two runs at once, whatever the queue says.

Nothing is published twice: each run is a disjoint key range of one source (queue_ingest_runs),
the queue launches a run once, and the catalog's per-document advisory locks order any two
publishes of one document (docs/scale.md, "Runs that spread").
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import IO, Any, Self

from dagster import DagsterInstance, DagsterRunStatus
from dagster._core.launcher import LaunchRunContext, RunLauncher
from dagster._core.launcher.base import CheckRunHealthResult, WorkerStatus
from dagster._core.storage.dagster_run import DagsterRun
from dagster._grpc.types import ExecuteRunArgs
from dagster._serdes import ConfigurableClass, ConfigurableClassData, serialize_value

from loom_dagster import runs
from loom_dagster.errors import LoomError
from loom_dagster.partitions import RANGE_END_TAG, RANGE_START_TAG
from loom_dagster.settings import LoomSettings

SOURCE_TAG = "loom/source"
EXTRACTOR_TAG = "loom/extractor"
WORKER_TAG = "loom/worker"  # the worker home a run was launched in (its number)
WORKERS_DIR = "workers"
POOL = "loom_catalog"  # the publishing step's pool (assets/published.py, jobs.py)
LOCATION = "loom"  # workspace.yaml's code location
REPOSITORY = "__repository__"  # Dagster's name for the repository a Definitions object makes
# Seconds launch_run waits for a worker home to come free: the queue counts a run done when its
# last event is stored, a moment before its process has exited and let go of its home.
FREE_WAIT_S = 60.0


class NoWorkerFree(LoomError):
    """Every worker home stayed held by a run process: the daemon fails the run before it
    starts, and its revisions stay pending for the next run over them."""

    code = "no_worker_free"


def worker_home(workers_dir: Path, number: int) -> Path:
    return workers_dir / str(number)


def extractor_tag(settings: LoomSettings) -> str:
    """Which extractor a run calls, as a tag value: a short digest of the service URLs (never a
    token), or `local` for the extractor a run starts itself."""
    extractor = settings.extractor
    urls = " ".join([extractor.default_url or "", *sorted(extractor.routes.values())]).strip()
    if not urls:
        return "local"
    return "service-" + hashlib.sha256(urls.encode()).hexdigest()[:12]


def run_tags(settings: LoomSettings, source: str, keys: Sequence[str]) -> dict[str, str]:
    """The tags of an ingest run over `keys` (neighbouring partitions of one source): its key
    range, and the tags the queue's limits read."""
    return {
        RANGE_START_TAG: keys[0],
        RANGE_END_TAG: keys[-1],
        SOURCE_TAG: source,
        EXTRACTOR_TAG: extractor_tag(settings),
    }


def queue_ingest_runs(
    instance: DagsterInstance, settings: LoomSettings, keys_by_source: Mapping[str, Sequence[str]]
) -> list[str]:
    """Submit ingest runs over every source's keys (registered revisions), a run per batch of
    neighbouring partitions of one source (LOOM_BATCH_SIZE each), to the instance's run
    coordinator; returns the runs' ids. With the queued coordinator they wait in its queue until
    the limits let the daemon launch them."""
    from loom_dagster.definitions import build_definitions
    from loom_dagster.event_log import batched_events
    from loom_dagster.jobs import INGEST_JOB
    from loom_dagster.partitions import PARTITIONS_NAME, contiguous_batches

    # New partitions are added a source at a time, so each source's are neighbours: a run is a
    # key range, and keys of several sources interleaved would make a run per key.
    existing = set(instance.get_dynamic_partitions(PARTITIONS_NAME))
    fresh = [k for _, keys in sorted(keys_by_source.items()) for k in sorted(keys)]
    instance.add_dynamic_partitions(
        PARTITIONS_NAME, [k for k in dict.fromkeys(fresh) if k not in existing]
    )
    order = instance.get_dynamic_partitions(PARTITIONS_NAME)
    job = build_definitions(settings).resolve_job_def(INGEST_JOB)
    origin, remote = _job_origins(INGEST_JOB)
    submitted: list[str] = []
    for source, keys in sorted(keys_by_source.items()):
        for batch in contiguous_batches(order, keys, settings.batch_size):
            # The run's planned materializations (one per asset and revision) in one write.
            with batched_events(instance):
                run = instance.create_run_for_job(
                    job_def=job,
                    tags=run_tags(settings, source, batch),
                    job_code_origin=origin,
                    remote_job_origin=remote,
                    status=DagsterRunStatus.NOT_STARTED,
                )
            instance.submit_run(run.run_id, workspace=None)  # type: ignore[arg-type]
            submitted.append(run.run_id)
    return submitted


def _job_origins(job_name: str) -> tuple[Any, Any]:
    """Where a run process finds the job (Loom's definitions module, by name, in this Python),
    and the code location the UI knows it by (workspace.yaml's `loom`)."""
    from dagster._core.definitions.reconstruct import ReconstructableRepository
    from dagster._core.remote_origin import (
        ManagedGrpcPythonEnvCodeLocationOrigin,
        RemoteJobOrigin,
        RemoteRepositoryOrigin,
    )
    from dagster._core.types.loadable_target_origin import LoadableTargetOrigin

    module, attribute = "loom_dagster.definitions", "defs"
    repository = ReconstructableRepository.for_module(
        module, attribute, working_directory=os.getcwd()
    )
    location = ManagedGrpcPythonEnvCodeLocationOrigin(
        LoadableTargetOrigin(
            executable_path=sys.executable,
            module_name=module,
            working_directory=os.getcwd(),
        ),
        LOCATION,
    )
    remote = RemoteJobOrigin(RemoteRepositoryOrigin(location, REPOSITORY), job_name)
    return repository.get_reconstructable_job(job_name).get_python_origin(), remote


class WorkerRunLauncher(RunLauncher, ConfigurableClass):
    """Starts each run as a process of its own in a free worker home (see the module's
    docstring). Configured by Loom's dagster.yaml: `workers_dir` and `workers`."""

    def __init__(
        self,
        workers_dir: str,
        workers: int,
        inst_data: ConfigurableClassData | None = None,
    ) -> None:
        self._inst_data = inst_data
        self.workers_dir = Path(workers_dir)
        self.workers = workers
        self._children: dict[str, subprocess.Popen[bytes]] = {}
        self._pool_ready = False
        super().__init__()

    @property
    def inst_data(self) -> ConfigurableClassData | None:
        return self._inst_data

    @classmethod
    def config_type(cls) -> dict[str, Any]:
        return {"workers_dir": str, "workers": int}

    @classmethod
    def from_config_value(
        cls, inst_data: ConfigurableClassData, config_value: Mapping[str, Any]
    ) -> Self:
        return cls(inst_data=inst_data, **config_value)

    def launch_run(self, context: LaunchRunContext) -> None:
        run = context.dagster_run
        if run.job_code_origin is None:
            raise NoWorkerFree(f"run {run.run_id} has no code origin to start it from")
        self._reap()
        if not self._pool_ready:
            # Made here, one launch at a time: runs that start together and each find the pool
            # missing all insert its row, and all but one fail (a unique key violated).
            self._instance.event_log_storage.initialize_concurrency_limit_to_default(POOL)
            self._pool_ready = True
        number, lock = self._take_free_home()
        home = worker_home(self.workers_dir, number)
        args = ExecuteRunArgs(
            job_origin=run.job_code_origin,
            run_id=run.run_id,
            instance_ref=self._instance.get_ref(),
            set_exit_code_on_failure=True,
        )
        env = dict(os.environ)
        # The store is shared: a worker home must not fall back to its own folder store.
        env["LOOM_OBJECT_STORE_URL"] = LoomSettings.from_env().object_store_url
        env["LOOM_HOME"] = str(home)
        env["DAGSTER_HOME"] = str(home / "dagster")  # its settings' own; the run's instance is
        env.pop("LOOM_WORKERS", None)  # in `args`, and a worker home launches nothing itself
        try:
            child = subprocess.Popen(
                [sys.executable, "-m", "dagster", "api", "execute_run", serialize_value(args)],
                env=env,
                pass_fds=(lock.fileno(),),  # the child holds the home's lock from here on
                stdin=subprocess.DEVNULL,
            )
        finally:
            lock.close()  # ours; the child's copy keeps the lock
        self._children[run.run_id] = child
        identity = runs.ProcessIdentity.of(child.pid)
        tags = {WORKER_TAG: str(number)}
        if identity is not None:
            # As `loom ingest` tags its own: a run whose process is gone is failed and its pool
            # slots freed (by the daemon's run monitoring, and by the next `loom ingest`).
            tags[runs.PROCESS_TAG] = identity.tag()
        self._instance.add_run_tags(run.run_id, tags)

    def _take_free_home(self) -> tuple[int, IO[str]]:
        deadline = time.monotonic() + FREE_WAIT_S
        while True:
            for number in range(self.workers):
                path = worker_home(self.workers_dir, number) / "locks" / "worker.lock"
                path.parent.mkdir(parents=True, exist_ok=True)
                handle = open(path, "a+")  # noqa: SIM115 - closed by the caller or below
                try:
                    fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except BlockingIOError:
                    handle.close()
                    continue
                return number, handle
            if time.monotonic() > deadline:
                raise NoWorkerFree(
                    f"all {self.workers} worker homes under {self.workers_dir} stayed busy "
                    f"for {FREE_WAIT_S:.0f} s"
                )
            time.sleep(0.1)
            self._reap()

    def _reap(self) -> None:
        for run_id, child in list(self._children.items()):
            if child.poll() is not None:
                del self._children[run_id]

    @property
    def supports_check_run_worker_health(self) -> bool:
        return True

    def check_run_worker_health(self, run: DagsterRun) -> CheckRunHealthResult:
        identity = _process_of(run)
        if identity is None:
            return CheckRunHealthResult(WorkerStatus.UNKNOWN, "no worker process recorded")
        if identity.is_gone():
            return CheckRunHealthResult(WorkerStatus.FAILED, f"worker process {identity.pid} ended")
        return CheckRunHealthResult(WorkerStatus.RUNNING)

    def terminate(self, run_id: str) -> bool:
        run = self._instance.get_run_by_id(run_id)
        identity = _process_of(run)
        if run is None or identity is None or identity.is_gone() is not False:
            return False
        self._instance.report_run_canceling(run)
        try:
            os.kill(identity.pid, signal.SIGTERM)
        except ProcessLookupError:
            return False
        return True

    def dispose(self) -> None:
        self._reap()


def _process_of(run: DagsterRun | None) -> runs.ProcessIdentity | None:
    if run is None:
        return None
    return runs.ProcessIdentity.from_tag(run.tags.get(runs.PROCESS_TAG, ""))
