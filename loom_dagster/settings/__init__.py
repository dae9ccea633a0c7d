"""Loom's settings, every one of them, read once from the environment where Loom starts (the
command line, or the code location when Dagster loads it) and passed down as one object."""

from __future__ import annotations

import json
import os
import pwd
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from loom_dagster.chunking import ChunkLimits
from loom_dagster.display import bounded
from loom_dagster.errors import SettingsError
from loom_dagster.extractor.settings import ExtractorSettings, ServiceLimits
from loom_dagster.lifecycle import (
    DEFAULT_PARTITION_WINDOW,
    Retention,
    RetireGuard,
    partition_window,
)
from loom_dagster.retries import RetrySettings
from loom_dagster.settings.embedder import EmbedderSpec
from loom_dagster.variables import positive_int

DEFAULT_HOME = ".loom"
STRICT_ENV = "LOOM_STRICT"
WATCHER_ENV = "LOOM_WATCHER"
POSTGRES_URL_ENV = "LOOM_DAGSTER_POSTGRES_URL"
POSTGRES_SCHEME = "postgresql+psycopg2://"
WORKERS_ENV = "LOOM_WORKERS"  # the driver dagster-postgres installs


@dataclass(frozen=True)
class LoomSettings:
    """Where Loom keeps its state (every path absolute), and how it extracts, retries and
    retains."""

    home: Path
    object_store_url: str
    extract_concurrency: int = 2
    batch_size: int = 200
    extractor: ExtractorSettings = field(default_factory=ExtractorSettings)
    limits: ServiceLimits = field(default_factory=ServiceLimits)
    retry: RetrySettings = field(default_factory=RetrySettings)
    retention: Retention = field(default_factory=Retention)
    # LOOM_PARTITION_WINDOW: past this many partitions, settled revisions' partitions leave the
    # set, first added first (lifecycle.beyond_window); 0: no window.
    partition_window: int = DEFAULT_PARTITION_WINDOW
    # LOOM_RETIRE_MAX_SHARE / LOOM_RETIRE_MIN_COUNT: when a scan's deletions are held.
    retire_guard: RetireGuard = field(default_factory=RetireGuard)
    instance_home: Path | None = None  # DAGSTER_HOME when set; else under the home
    embedder: EmbedderSpec = field(default_factory=EmbedderSpec)  # LOOM_EMBEDDER
    # LOOM_MAX_CHUNKS_PER_DOCUMENT, LOOM_MAX_CHUNKS_PER_INPUT_KIB: the most chunks one document
    # indexes to; the text past them is a failed unit (resource_limit), announced.
    chunk_limits: ChunkLimits = field(default_factory=ChunkLimits)
    # LOOM_STRICT=1: a refused or incomplete revision fails its run (CI through the Dagster
    # CLI); unset or 0: it is an outcome, shown red or as a warning.
    strict: bool = False
    # LOOM_WATCHER=0: `loom ui` and `loom watch` start no folder watcher, and the folder sensor
    # finds changes by its polling scan alone (a filesystem that gives no notification).
    watcher: bool = True
    # LOOM_DAGSTER_POSTGRES_URL: Dagster's runs, event logs and schedules in PostgreSQL; unset,
    # in SQLite under the instance's folder. Never printed: it may hold a password.
    dagster_postgres_url: str | None = None
    # LOOM_WORKERS / LOOM_RUNS_PER_SOURCE / LOOM_RUNS_PER_EXTRACTOR: runs spread across worker
    # homes by Dagster's run queue (loom_dagster/spread.py); 1 worker, the default, is today's
    # single home.
    workers: int = 1
    runs_per_source: int = 1
    runs_per_extractor: int = 1

    @property
    def dagster_home(self) -> Path:
        """The Dagster instance's folder, so the UI sees what the command line did."""
        return self.instance_home or self.home / "dagster"

    @property
    def catalog_path(self) -> Path:
        return self.home / "catalog.duckdb"

    @property
    def search_dir(self) -> Path:
        return self.home / "search"

    @property
    def vectors_dir(self) -> Path:
        # Beside the lexical index, not in it: that folder is tantivy's.
        return self.home / "vectors"

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> LoomSettings:
        env = os.environ if env is None else env
        home = Path(env.get("LOOM_HOME") or DEFAULT_HOME).expanduser().resolve()
        try:
            not_a_folder = home.exists() and not home.is_dir()
        except OSError as error:  # a parent this user cannot search
            raise SettingsError(
                f"LOOM_HOME {home} cannot be reached: {error.strerror}", code="unusable_home"
            ) from error
        if not_a_folder:
            raise SettingsError(f"LOOM_HOME {home} is not a folder")
        store = env.get("LOOM_OBJECT_STORE_URL") or (home / "store").as_uri()
        if "://" not in store:
            raise SettingsError(
                f"LOOM_OBJECT_STORE_URL must be a URL such as file:///data/loom or s3://bucket/prefix, "
                f"not {store!r}"
            )
        return cls(
            home=home,
            object_store_url=store,
            extract_concurrency=positive_int(env, "LOOM_EXTRACT_CONCURRENCY", 2),
            batch_size=positive_int(env, "LOOM_BATCH_SIZE", 200),
            extractor=ExtractorSettings.from_env(env),
            retention=Retention.from_env(env),
            partition_window=partition_window(env),
            retry=RetrySettings.from_env(env),
            limits=ServiceLimits.from_env(env),
            instance_home=Path(env["DAGSTER_HOME"]) if env.get("DAGSTER_HOME") else None,
            embedder=EmbedderSpec.parse(env.get("LOOM_EMBEDDER")),
            retire_guard=RetireGuard.from_env(env),
            chunk_limits=ChunkLimits(
                max_chunks=positive_int(
                    env, "LOOM_MAX_CHUNKS_PER_DOCUMENT", ChunkLimits.max_chunks
                ),
                chunks_per_kib=positive_int(
                    env, "LOOM_MAX_CHUNKS_PER_INPUT_KIB", ChunkLimits.chunks_per_kib
                ),
            ),
            strict=_flag(env, STRICT_ENV, default=False),
            watcher=_flag(env, WATCHER_ENV, default=True),
            dagster_postgres_url=_postgres_url(env),
            **_spread(env),
        )

    def prepare(self) -> None:
        """Create the home folders and a Dagster instance config that lives under them.

        Raises SettingsError (`unusable_home`) when the home cannot be made or is not this user's
        to read and write: found here, it is one line naming the path, not a traceback from
        whichever library opens a file in it first.
        """
        config = self.dagster_home / "dagster.yaml"
        try:
            self.home.mkdir(parents=True, exist_ok=True)  # first, so an error names the home
            _keep_private(self.home)
            self._check_usable(self.home)  # before making anything in it: it may be another's
            self.dagster_home.mkdir(mode=0o700, parents=True, exist_ok=True)
            self.search_dir.mkdir(mode=0o700, exist_ok=True)
            for path in (self.dagster_home, self.search_dir, self.catalog_path):
                self._check_usable(path)
            if _written_by_loom(config):
                wanted = self.dagster_yaml()
                if not config.exists() or config.read_text() != wanted:
                    _replace(config, wanted)
        except OSError as error:
            where = error.filename or self.home
            raise self._unusable(f"cannot create or open {where}: {error.strerror}") from error

    def check_instance_database(self) -> None:
        """With LOOM_DAGSTER_POSTGRES_URL set, raise SettingsError naming it and why its
        database cannot be opened (one line, no password), before Dagster opens its instance
        there (issue 34: Dagster retried for 14 s and printed pages of tracebacks)."""
        if not self.dagster_postgres_url:
            return
        from loom_dagster.catalog.postgres import unreachable

        problem = unreachable(self.dagster_postgres_url)
        if problem is not None:
            raise SettingsError(
                f"{POSTGRES_URL_ENV}: the Dagster instance's database cannot be opened: {problem}",
                code="dagster_instance_unavailable",
            )

    def dagster_yaml(self) -> str:
        """The instance's configuration for these settings: its storage (SQLite under the
        instance's folder, or PostgreSQL), its event log written a batch at a time
        (event_log.py), the catalog's pool and run monitoring."""
        if self.workers > 1:
            limits = SPREAD_CONCURRENCY_YAML.format(
                workers=self.workers,
                per_source=self.runs_per_source,
                per_extractor=self.runs_per_extractor,
            )
            head = DAGSTER_YAML.replace(
                "    default_limit: 1\n", f"    default_limit: {self.workers}\n" + limits
            )
            launcher = SPREAD_YAML.format(
                workers=self.workers, workers_dir=json.dumps(str(self.home / "workers"))
            )
            return LOOM_YAML_MARK + head + launcher + TICK_RETENTION_YAML + POSTGRES_STORAGE_YAML
        if self.dagster_postgres_url:
            return LOOM_YAML_MARK + DAGSTER_YAML + QUEUE_YAML + POSTGRES_STORAGE_YAML
        runs = json.dumps(str(self.dagster_home / "history" / "runs"))
        return LOOM_YAML_MARK + DAGSTER_YAML + QUEUE_YAML + SQLITE_EVENTS_YAML.format(base_dir=runs)

    def _check_usable(self, path: Path) -> None:
        if path.exists() and not os.access(path, _read_write_mode(path)):
            raise self._unusable(
                f"{path} belongs to {_owner(path)}, and user {_user()} cannot read and"
                " write it: use a LOOM_HOME of your own"
            )

    def _unusable(self, problem: str) -> SettingsError:
        return SettingsError(f"LOOM_HOME {self.home}: {problem}", code="unusable_home")


def _flag(env: Mapping[str, str], name: str, *, default: bool) -> bool:
    """A setting of `0` or `1`; unset or empty, `default`."""
    value = env.get(name, "").strip()
    if value not in ("", "0", "1"):
        raise SettingsError(f"{name} must be 0 or 1, not {bounded(repr(value), 40)}")
    return default if value == "" else value == "1"


def _postgres_url(env: Mapping[str, str]) -> str | None:
    value = env.get(POSTGRES_URL_ENV, "").strip()
    if not value:
        return None
    if not value.startswith(POSTGRES_SCHEME):
        # SQLAlchemy 2.1 reads a bare postgresql:// as psycopg 3, which dagster-postgres does
        # not bring; the value is not echoed, since a URL may carry a password.
        raise SettingsError(
            f"{POSTGRES_URL_ENV} must be a URL such as {POSTGRES_SCHEME}user@host:5432/dagster"
        )
    return value


def _spread(env: Mapping[str, str]) -> dict[str, int]:
    """LOOM_WORKERS and the run queue's limits; more than one worker needs the catalog and the
    instance on PostgreSQL: each worker home would otherwise write a catalog file of its own."""
    workers = positive_int(env, WORKERS_ENV, 1)
    if workers > 1 and not (env.get("LOOM_CATALOG_URL", "").strip() and env.get(POSTGRES_URL_ENV)):
        raise SettingsError(
            f"{WORKERS_ENV}={workers} needs LOOM_CATALOG_URL and {POSTGRES_URL_ENV} set: the "
            "worker homes share the catalog and Dagster's instance on PostgreSQL",
            code="workers_need_postgres",
        )
    return {
        "workers": workers,
        "runs_per_source": positive_int(env, "LOOM_RUNS_PER_SOURCE", 1),
        "runs_per_extractor": positive_int(env, "LOOM_RUNS_PER_EXTRACTOR", workers),
    }


def _written_by_loom(config: Path) -> bool:
    """A dagster.yaml Loom may rewrite: none yet, or one it wrote (an operator's own is left
    as it is, whatever storage it names)."""
    if not config.exists():
        return True
    text = config.read_text()
    return text.startswith(LOOM_YAML_MARK) or text == DAGSTER_YAML


def _replace(config: Path, text: str) -> None:
    # Whole or not at all: the UI or a run may read it at any moment.
    partial = config.with_name(config.name + ".new")
    partial.write_text(text)
    os.replace(partial, config)


def _keep_private(home: Path) -> None:
    """The home holds copies of every original: only its owner may enter it (0700).

    A home of this user's that others can enter is closed; one of another user's is left as it
    is (the access check after this names the problem).
    """
    status = home.stat()
    if status.st_uid == os.geteuid() and status.st_mode & 0o077:
        home.chmod(status.st_mode & 0o700)


def _read_write_mode(path: Path) -> int:
    return os.R_OK | os.W_OK | (os.X_OK if path.is_dir() else 0)


def _owner(path: Path) -> str:
    return _user_name(path.stat().st_uid)


def _user() -> str:
    return _user_name(os.geteuid())


def _user_name(uid: int) -> str:
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return f"uid {uid}"


# The catalog pool is 1: DuckDB takes one writing process per file. Run monitoring (the daemon,
# under `loom ui`) frees the slots a run still holds a minute after it ended, so a run the
# daemon launched and that ended badly cannot block the pool; runs of `loom ingest` are
# tagged and ended by the next ingest (loom_dagster/runs.py).
DAGSTER_YAML = """\
telemetry:
  enabled: false
concurrency:
  pools:
    default_limit: 1
run_monitoring:
  enabled: true
  free_slots_after_run_end_seconds: 60
"""

# The run queue is read every second (Dagster's default: 5), so a run the folder sensor asks
# for starts within a second; the folder sensor ticks every second, and its skipped ticks (most
# of them) are kept a day (Dagster's default: 7).
TICK_RETENTION_YAML = """\
retention:
  sensor:
    purge_after_days:
      skipped: 1
"""
QUEUE_YAML = (
    """\
run_coordinator:
  module: dagster.core.run_coordinator
  class: QueuedRunCoordinator
  config:
    dequeue_interval_seconds: 1
"""
    + TICK_RETENTION_YAML
)

# Loom rewrites a dagster.yaml that starts with this line (when the settings it was written for
# change, e.g. LOOM_DAGSTER_POSTGRES_URL set or unset); remove the line to keep one's own.
LOOM_YAML_MARK = "# Written by loom for its settings; loom rewrites it while this line is here.\n"
# With LOOM_WORKERS > 1: Dagster's queued run coordinator with Loom's limits (at most one run per
# worker home at once; per source; per extractor), dequeuing every second, and the launcher that
# starts each run in a free worker home (loom_dagster/spread.py). The catalog pool's limit is the
# number of workers: each home publishes into its own index, and PostgreSQL takes concurrent
# writers.
SPREAD_YAML = """\
run_coordinator:
  module: dagster._core.run_coordinator
  class: QueuedRunCoordinator
  config:
    dequeue_interval_seconds: 1
run_launcher:
  module: loom_dagster.spread
  class: WorkerRunLauncher
  config:
    workers_dir: {workers_dir}
    workers: {workers}
"""
SPREAD_CONCURRENCY_YAML = """\
  runs:
    max_concurrent_runs: {workers}
    tag_concurrency_limits:
      - key: loom/source
        value:
          applyLimitPerUniqueValue: true
        limit: {per_source}
      - key: loom/extractor
        value:
          applyLimitPerUniqueValue: true
        limit: {per_extractor}
"""
# Dagster's SQLite event log under the instance's folder, as Dagster lays it out, written a
# batch at a time. The runs and schedules keep Dagster's default SQLite storage.
SQLITE_EVENTS_YAML = """\
event_log_storage:
  module: loom_dagster.event_log
  class: BatchedSqliteEventLogStorage
  config:
    base_dir: {base_dir}
"""
# The URL is read from the environment by Dagster when it opens the instance: never on disk.
POSTGRES_STORAGE_YAML = f"""\
run_storage:
  module: dagster_postgres.run_storage
  class: PostgresRunStorage
  config:
    postgres_url:
      env: {POSTGRES_URL_ENV}
event_log_storage:
  module: loom_dagster.event_log
  class: BatchedPostgresEventLogStorage
  config:
    postgres_url:
      env: {POSTGRES_URL_ENV}
schedule_storage:
  module: dagster_postgres.schedule_storage
  class: PostgresScheduleStorage
  config:
    postgres_url:
      env: {POSTGRES_URL_ENV}
"""
