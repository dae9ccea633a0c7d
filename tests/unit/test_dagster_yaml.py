"""The Dagster instance's configuration Loom writes (issue 15.2, issue 18.2): the batched SQLite
event log by default, PostgreSQL for runs, event logs and schedules with
LOOM_DAGSTER_POSTGRES_URL, an operator's own dagster.yaml left alone."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from loom_dagster.errors import SettingsError
from loom_dagster.settings import DAGSTER_YAML, LoomSettings

URL = "postgresql+psycopg2://loom:s3cret@db.internal:5432/dagster"


def settings(tmp_path: Path, **env: str) -> LoomSettings:
    return LoomSettings.from_env({"LOOM_HOME": str(tmp_path / "home"), **env})


def written(settings: LoomSettings) -> dict[str, object]:
    settings.prepare()
    loaded = yaml.safe_load((settings.dagster_home / "dagster.yaml").read_text())
    assert isinstance(loaded, dict)
    return loaded


def test_the_default_instance_keeps_its_event_log_in_sqlite_written_a_batch_at_a_time(
    tmp_path: Path,
) -> None:
    config = written(settings(tmp_path))
    assert config["event_log_storage"] == {
        "module": "loom_dagster.event_log",
        "class": "BatchedSqliteEventLogStorage",
        "config": {"base_dir": str(tmp_path / "home" / "dagster" / "history" / "runs")},
    }
    assert "run_storage" not in config and "storage" not in config  # Dagster's SQLite default
    assert config["concurrency"] == {"pools": {"default_limit": 1}}


def test_the_postgres_url_puts_runs_events_and_schedules_there_without_writing_it_down(
    tmp_path: Path,
) -> None:
    loom = settings(tmp_path, LOOM_DAGSTER_POSTGRES_URL=URL)
    config = written(loom)
    for storage in ("run_storage", "event_log_storage", "schedule_storage"):
        section = config[storage]
        assert isinstance(section, dict)
        assert section["config"] == {"postgres_url": {"env": "LOOM_DAGSTER_POSTGRES_URL"}}
    assert config["event_log_storage"]["class"] == "BatchedPostgresEventLogStorage"  # type: ignore[index]
    assert "s3cret" not in (loom.dagster_home / "dagster.yaml").read_text()

    # Unset again: back to SQLite, since Loom wrote the file.
    assert written(settings(tmp_path))["event_log_storage"]["class"] == (  # type: ignore[index]
        "BatchedSqliteEventLogStorage"
    )


def test_an_operators_own_dagster_yaml_is_left_as_it_is(tmp_path: Path) -> None:
    loom = settings(tmp_path, LOOM_DAGSTER_POSTGRES_URL=URL)
    loom.dagster_home.mkdir(parents=True)
    own = "storage:\n  postgres:\n    postgres_url:\n      env: MY_URL\n"
    (loom.dagster_home / "dagster.yaml").write_text(own)
    loom.prepare()
    assert (loom.dagster_home / "dagster.yaml").read_text() == own


def test_a_home_made_before_batching_gets_the_batched_event_log(tmp_path: Path) -> None:
    loom = settings(tmp_path)
    loom.dagster_home.mkdir(parents=True)
    (loom.dagster_home / "dagster.yaml").write_text(DAGSTER_YAML)  # what Loom wrote before
    assert written(loom)["event_log_storage"]["class"] == "BatchedSqliteEventLogStorage"  # type: ignore[index]


@pytest.mark.parametrize(
    "value",
    [
        "postgresql://loom:s3cret@db.internal/dagster",  # SQLAlchemy 2.1 reads it as psycopg 3
        "postgres://loom:s3cret@db.internal/dagster",
        "mysql://loom:s3cret@db.internal/dagster",
        "loom:s3cret@db.internal",
    ],
)
def test_a_postgres_url_without_the_driver_is_refused_at_load_and_not_echoed(value: str) -> None:
    with pytest.raises(SettingsError) as refused:
        LoomSettings.from_env({"LOOM_DAGSTER_POSTGRES_URL": value})
    assert str(refused.value) == (
        "invalid_setting: LOOM_DAGSTER_POSTGRES_URL must be a URL such as "
        "postgresql+psycopg2://user@host:5432/dagster"
    )
    assert "s3cret" not in str(refused.value)


SPREAD = {
    "LOOM_DAGSTER_POSTGRES_URL": URL,
    "LOOM_CATALOG_URL": "postgresql://loom@db.internal:5432/loom_catalog",
    "LOOM_WORKERS": "3",
}


def test_workers_put_dagsters_run_queue_and_its_limits_and_the_worker_launcher_in_the_instance(
    tmp_path: Path,
) -> None:
    from dagster._core.instance.config import dagster_instance_config

    loom = settings(tmp_path, **SPREAD, LOOM_RUNS_PER_SOURCE="2")
    config = written(loom)
    assert config["concurrency"] == {
        # Each worker home publishes into its own index: the pool no longer holds them to one.
        "pools": {"default_limit": 3},
        "runs": {
            "max_concurrent_runs": 3,
            "tag_concurrency_limits": [
                {"key": "loom/source", "value": {"applyLimitPerUniqueValue": True}, "limit": 2},
                {"key": "loom/extractor", "value": {"applyLimitPerUniqueValue": True}, "limit": 3},
            ],
        },
    }
    assert config["run_coordinator"]["class"] == "QueuedRunCoordinator"  # type: ignore[index]
    assert config["run_launcher"] == {
        "module": "loom_dagster.spread",
        "class": "WorkerRunLauncher",
        "config": {"workers_dir": str(tmp_path / "home" / "workers"), "workers": 3},
    }
    # Dagster takes the file as it is (its schema, and the launcher's own config type).
    dagster_instance_config(str(loom.dagster_home))


def test_one_worker_keeps_the_single_home_instance(tmp_path: Path) -> None:
    config = written(settings(tmp_path, **{**SPREAD, "LOOM_WORKERS": "1"}))
    assert "run_launcher" not in config  # the default one: runs in this home
    assert config["run_coordinator"]["config"] == {"dequeue_interval_seconds": 1}
    assert "tag_concurrency_limits" not in str(config)
    assert config["concurrency"] == {"pools": {"default_limit": 1}}


@pytest.mark.parametrize("missing", ["LOOM_CATALOG_URL", "LOOM_DAGSTER_POSTGRES_URL"])
def test_workers_without_both_databases_on_postgres_are_refused_at_load(missing: str) -> None:
    env = {k: v for k, v in SPREAD.items() if k != missing}
    with pytest.raises(SettingsError) as refused:
        LoomSettings.from_env({"LOOM_HOME": "/nonexistent/home", **env})
    assert refused.value.code == "workers_need_postgres"
    assert missing in refused.value.message
