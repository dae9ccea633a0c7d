"""The partition window (issue 32 part 2): past LOOM_PARTITION_WINDOW partitions, the settled
revisions' partitions added first leave the set; pending, refused and failing ones, and what a
run holds, never do. On a real DuckDB catalog file and a real SQLite Dagster instance."""

from __future__ import annotations

import hashlib
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import duckdb
import pytest
from dagster import AssetKey, AssetMaterialization, DagsterInstance, DagsterRunStatus
from dagster._core.storage.dagster_run import DagsterRun

from loom_dagster import catalog, lifecycle, partitions
from loom_dagster.assets import ORIGINAL
from loom_dagster.cli import main
from loom_dagster.errors import SettingsError
from loom_dagster.partitions import (
    PARTITIONS_NAME,
    delete_partitions,
    materialized_among,
    prune_partitions,
)
from loom_dagster.sensors import RETRY_AFTER_S, beyond_partition_window
from loom_dagster.settings import LoomSettings
from loom_dagster.sources import Revision, Source, document_id, revision_key

ORDER = [f"k{n}" for n in range(8)]


def test_past_the_window_the_settled_keys_added_first_go() -> None:
    settled = {"k0", "k2", "k3", "k5", "k6", "k7"}

    assert lifecycle.beyond_window(ORDER, settled, 5) == ["k0", "k2", "k3"]


def test_an_unsettled_or_spared_key_stays_whatever_the_window() -> None:
    # k1 and k4 are pending, refused or failing; k0 is held by a run, k2 was just seen.
    settled = {"k0", "k2", "k3", "k5", "k6", "k7"}

    assert lifecycle.beyond_window(ORDER, settled, 2, spared={"k0", "k2"}) == [
        "k3",
        "k5",
        "k6",
        "k7",
    ]
    # Too few settled to get within the window: the set stays past it.
    assert lifecycle.beyond_window(ORDER, {"k3"}, 2) == ["k3"]


def test_within_the_window_or_with_none_nothing_goes() -> None:
    assert lifecycle.beyond_window(ORDER, set(ORDER), 8) == []
    assert lifecycle.beyond_window(ORDER, set(ORDER), 0) == []


def test_the_window_setting_defaults_to_50000_and_0_means_none() -> None:
    assert LoomSettings.from_env({}).partition_window == 50_000
    assert LoomSettings.from_env({"LOOM_PARTITION_WINDOW": "0"}).partition_window == 0
    assert LoomSettings.from_env({"LOOM_PARTITION_WINDOW": "3"}).partition_window == 3


@pytest.mark.parametrize("value", ["-1", "many", "1.5"])
def test_a_bad_window_is_one_line_naming_the_variable(value: str) -> None:
    with pytest.raises(SettingsError) as error:
        LoomSettings.from_env({"LOOM_PARTITION_WINDOW": value})
    assert (error.value.code, error.value.message) == (
        "invalid_setting",
        f"LOOM_PARTITION_WINDOW must be a whole number, 0 or more (0: no window), not {value!r}",
    )


@pytest.fixture
def con(tmp_path: Path) -> Iterator[duckdb.DuckDBPyConnection]:
    connection = duckdb.connect(str(tmp_path / "catalog.duckdb"))
    catalog.ensure_schema(connection)
    catalog.upsert_source(connection, Source("docs", "/data/docs"))
    yield connection
    connection.close()


def revision(path: str, text: str) -> Revision:
    sha = hashlib.sha256(text.encode()).hexdigest()
    key = revision_key("docs", path, sha)
    return Revision(key, document_id("docs", path), "docs", path, len(text), 1, sha)


def test_settled_is_published_and_live_only(con: duckdb.DuckDBPyConnection) -> None:
    old, live = revision("a.md", "one"), revision("a.md", "two")
    refused, pending = revision("b.md", "bad"), revision("c.md", "waiting")
    catalog.register_revisions(con, [old, live, refused, pending])
    catalog.publish_revision(con, old, [], artifact_sha256="0" * 64)
    catalog.publish_revision(con, live, [], artifact_sha256="1" * 64)
    catalog.record_outcome(con, catalog.Outcome(refused.key, catalog.REFUSED, "encoding", "no"))

    settled = {s.key for s in catalog.revision_states(con) if s.settled}

    # The superseded one left the partitions already; the refused and pending ones keep theirs.
    assert settled == {live.key}


@pytest.fixture
def instance(tmp_path: Path) -> Iterator[DagsterInstance]:
    (tmp_path / "dagster").mkdir()
    with DagsterInstance.local_temp(str(tmp_path / "dagster")) as local:
        yield local


def add_run(instance: DagsterInstance, status: DagsterRunStatus, partition: str) -> None:
    instance.add_run(
        DagsterRun(
            job_name="ingest",
            run_id=str(uuid.uuid4()),
            tags={"dagster/partition": partition},
            status=status,
        )
    )


def test_a_key_a_run_just_failed_or_holds_stays_past_the_window(
    instance: DagsterInstance,
) -> None:
    add_run(instance, DagsterRunStatus.FAILURE, "k0")
    add_run(instance, DagsterRunStatus.SUCCESS, "k2")

    doomed = beyond_partition_window(instance, ORDER, set(ORDER), 5, spared={"k1"})

    # k0's run failed lately (its failure stays in view); k1 is spared (held, or seen).
    assert doomed == ["k2", "k3", "k4"]
    later = time.time() + RETRY_AFTER_S + 1
    assert beyond_partition_window(instance, ORDER, set(ORDER), 5, spared=set(), now=later) == [
        "k0",
        "k1",
        "k2",
    ]


def test_materialized_among_says_which_of_the_keys_asked_about_were_materialized(
    instance: DagsterInstance, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The housekeeping tick asks only about its partitions (not every key the asset ever had:
    past the window, most are no longer partitions), a chunk of keys a query."""
    monkeypatch.setattr(partitions, "MATERIALIZED_CHUNK", 2)
    for key in ("k0", "k2", "k3", "k6"):
        instance.report_runless_asset_event(AssetMaterialization(ORIGINAL, partition=key))
    instance.report_runless_asset_event(AssetMaterialization(AssetKey("other"), partition="k1"))

    assert materialized_among(instance, ORIGINAL, ["k1", "k2", "k3", "k4", "k5", "k6"]) == {
        "k2",
        "k3",
        "k6",
    }
    assert materialized_among(instance, ORIGINAL, []) == set()


def test_partitions_are_deleted_a_chunk_at_a_time_with_progress(
    instance: DagsterInstance,
) -> None:
    keys = [f"key-{n:05}" for n in range(2500)]
    instance.add_dynamic_partitions(PARTITIONS_NAME, keys)
    told: list[int] = []

    delete_partitions(instance, keys[:2100], progress=told.append)

    assert told == [1000, 2000, 2100]
    assert instance.get_dynamic_partitions(PARTITIONS_NAME) == keys[2100:]


def test_pruning_with_a_window_takes_retentions_keys_then_the_first_settled_but_held_ones(
    instance: DagsterInstance,
) -> None:
    instance.add_dynamic_partitions(PARTITIONS_NAME, ORDER)
    add_run(instance, DagsterRunStatus.STARTED, "k1")  # a run holds k1

    doomed = prune_partitions(instance, ["k7"], window=4, settled=set(ORDER) - {"k2"})

    assert doomed == ["k7", "k0", "k3", "k4"]
    assert instance.get_dynamic_partitions(PARTITIONS_NAME) == ["k1", "k2", "k5", "k6"]


def test_compact_with_a_bad_window_is_one_line_and_touches_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("LOOM_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("LOOM_PARTITION_WINDOW", "lots")

    assert main(["partitions", "compact"]) == 1

    assert capsys.readouterr().err == (
        "loom: invalid_setting: LOOM_PARTITION_WINDOW must be a whole number, 0 or more "
        "(0: no window), not 'lots'\n"
    )
    assert not (tmp_path / "home").exists()
