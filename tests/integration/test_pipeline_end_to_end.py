"""The whole path through Dagster: a folder, a sensor tick, the runs, published chunks, search."""

from __future__ import annotations

import os
import time
from dataclasses import replace
from pathlib import Path

import pytest
from dagster import (
    AssetCheckKey,
    AssetKey,
    DagsterInstance,
    SensorResult,
    build_sensor_context,
)
from dagster._core.storage.asset_check_execution_record import AssetCheckExecutionRecordStatus
from dagster._core.storage.dagster_run import DagsterRun

from loom_dagster import api, catalog
from loom_dagster.cli import main
from loom_dagster.definitions import build_definitions
from loom_dagster.jobs import INGEST_JOB
from loom_dagster.partitions import PATHS_TAG, revisions
from loom_dagster.pipeline.watching import WatchCursor
from loom_dagster.resources.storage import CatalogResource
from loom_dagster.sensors import MAX_INGEST_RUNS_IN_FLIGHT, loom_folders
from loom_dagster.settings import LoomSettings
from loom_dagster.sources.journal import Change, Heartbeat, JournalWriter, write_heartbeat

GUIDE = """# Guide

## Install

Run the installer with the flag --quiet
to keep its output short.

## Usage

Call the tool with a folder.
"""


def write(folder: Path, name: str, data: str | bytes) -> Path:
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data.encode() if isinstance(data, str) else data)
    return path


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    docs = tmp_path / "docs"
    write(docs, "guide.md", GUIDE)
    write(docs, "notes/todo.txt", "Buy lamp oil\nand rope.\n")
    return docs


def connect() -> CatalogResource:
    return CatalogResource(database=str(LoomSettings.from_env().catalog_path))


def tick(cursor: str | None = None) -> SensorResult:
    """One evaluation of loom_folders on this test's LOOM_HOME, with the resources the code
    location gives it (building the definitions also checks the settings, as a load does)."""
    defs = build_definitions(LoomSettings.from_env())
    resources = {"catalog_db": connect(), "loom": defs.resources["loom"]}
    result = loom_folders(
        build_sensor_context(instance=DagsterInstance.get(), cursor=cursor, resources=resources)
    )
    assert isinstance(result, SensorResult)
    return result


def register(folder: Path) -> None:
    settings = LoomSettings.from_env()
    api.prepare_environment(settings)
    api.register_source(settings, folder, name="docs")


def test_a_sensor_tick_and_a_run_publish_chunks_that_search_cites(
    loom_home: Path, folder: Path
) -> None:
    register(folder)
    instance = DagsterInstance.get()
    # The sensor leaves a file modified in the last seconds for a later tick (it may be
    # half-written); these were written long enough ago.
    for path in folder.rglob("*.*"):
        os.utime(path, (time.time() - 60, time.time() - 60))

    first = tick()
    [request] = first.dynamic_partitions_requests
    assert len(request.partition_keys) == 2
    instance.add_dynamic_partitions(revisions.name, list(request.partition_keys))

    # A second tick over the same folder adds nothing: the keys exist and nothing changed.
    assert tick(cursor=first.cursor).dynamic_partitions_requests == []

    api.materialize_in_batches(
        instance, list(request.partition_keys), replace(LoomSettings.from_env(), batch_size=10)
    )

    with connect().connect() as con:
        outcomes = catalog.outcomes_for(con, request.partition_keys)
        assert {o.status for o in outcomes.values()} == {catalog.PUBLISHED}
        assert catalog.counts(con)["live_documents"] == 2

    [hit] = api.search("installer quiet", limit=1)
    assert hit.chunk.path == "guide.md" and hit.chunk.source == "docs"
    assert hit.chunk.revision in request.partition_keys
    assert hit.chunk.section_path == ("Guide", "Install")
    assert (hit.chunk.locator.line_start, hit.chunk.locator.line_end) == (5, 6)
    start, end = hit.chunk.locator.char_start, hit.chunk.locator.char_end
    assert start is not None and end is not None
    assert GUIDE[start:end] == "Run the installer with the flag --quiet\nto keep its output short."

    runs = instance.get_run_records()
    assert runs and all(r.dagster_run.job_name == INGEST_JOB for r in runs)


@pytest.mark.parametrize(
    ("files", "tagged"),
    [
        (["guide.md"], True),
        (["guide.md", "notes/todo.txt"], True),
        (["guide.md", "notes/todo.txt"], False),
    ],
    ids=["alone", "beside-another", "beside-another-untagged"],
)
def test_a_new_file_written_again_before_its_run_leaves_the_run_green_and_its_key_unregistered(
    loom_home: Path, folder: Path, files: list[str], tagged: bool
) -> None:
    """The sensor computed a new file's key; the file was written again before the run
    registered it. That key is no made-up one (a scan made it, from a file of a registered
    folder, which the run's tags name when short enough): the run succeeds, the key reads
    `unregistered`, and a later tick asks for the file's new bytes."""
    if files == ["guide.md"]:
        (folder / "notes" / "todo.txt").unlink()
    register(folder)
    instance = DagsterInstance.get()
    past = time.time() - 60
    for path in folder.rglob("*.*"):
        os.utime(path, (past, past))
    first = tick()
    [request] = first.dynamic_partitions_requests
    keys = sorted(request.partition_keys)
    assert len(keys) == len(files)
    instance.add_dynamic_partitions(revisions.name, keys)
    [run] = first.run_requests
    tags = run.tags if tagged else {k: v for k, v in run.tags.items() if k != PATHS_TAG}
    assert (PATHS_TAG in tags) == tagged
    # Written again just now: the run's scan leaves it for later, as it may be half-written.
    write(folder, "guide.md", GUIDE.replace("installer", "setup wizard"))

    result = (
        build_definitions(LoomSettings.from_env())
        .resolve_job_def(INGEST_JOB)
        .execute_in_process(
            instance=instance, partition_key=run.partition_key, tags=tags, raise_on_error=False
        )
    )

    assert result.success
    with connect().connect() as con:
        outcomes = catalog.outcomes_for(con, keys)
    stale = next(k for k in keys if k.startswith("guide.md"))
    assert stale not in outcomes
    assert {outcomes[k].status for k in keys if k != stale} <= {catalog.PUBLISHED}
    os.utime(folder / "guide.md", (past, past))
    added, deleted = tick().dynamic_partitions_requests  # a full scan's tick
    [new] = added.partition_keys
    assert new.startswith("guide.md") and new != stale
    assert list(deleted.partition_keys) == [stale]


def test_a_changed_file_publishes_a_new_revision_and_retires_the_old(
    loom_home: Path, folder: Path
) -> None:
    first = api.ingest_folder(folder)
    old = next(o.revision for o in first.outcomes if o.path == "guide.md")
    write(folder, "guide.md", GUIDE.replace("installer", "setup wizard"))

    second = api.ingest_folder(folder)

    new = next(o for o in second.outcomes if o.path == "guide.md")
    assert new.status == "published" and new.revision != old
    found = {h.chunk.revision for h in api.search("setup wizard") if h.chunk.path == "guide.md"}
    assert found == {new.revision}
    assert old not in [h.chunk.revision for h in api.search("installer")]
    with connect().connect() as con:
        assert catalog.outcomes_for(con, [old])[old].status == catalog.SUPERSEDED
        assert ("guide.md", new.revision) in [(d[2], d[3]) for d in catalog.live_documents(con)]


def test_a_deleted_file_is_retired(loom_home: Path, folder: Path) -> None:
    api.ingest_folder(folder)
    assert api.search("lamp oil")
    (folder / "notes" / "todo.txt").unlink()

    report = api.ingest_folder(folder)

    assert report.retired == ["notes/todo.txt"]
    assert "notes/todo.txt" not in [h.chunk.path for h in api.search("lamp oil")]
    with connect().connect() as con:
        assert [d[2] for d in catalog.live_documents(con)] == ["guide.md"]


def test_one_refused_file_is_recorded_with_its_code_while_the_rest_publish(
    loom_home: Path, folder: Path
) -> None:
    write(folder, "broken.txt", b"caf\xe9 au lait\n")

    report = api.ingest_folder(folder)

    by_path = {o.path: o for o in report.outcomes}
    assert by_path["broken.txt"].status == "refused"
    assert by_path["broken.txt"].detail.startswith("encoding: ")
    assert "offset 3" in by_path["broken.txt"].detail
    assert by_path["guide.md"].status == by_path["notes/todo.txt"].status == "published"
    assert report.conserved

    # The refusal shows as a failing asset check on that revision's partition only.
    instance = DagsterInstance.get()
    history = instance.event_log_storage.get_asset_check_execution_history(
        AssetCheckKey(AssetKey(["loom", "artifact"]), "extracted"), limit=10
    )
    by_partition = {record.partition: record.status for record in history}
    assert by_partition[by_path["broken.txt"].revision] == AssetCheckExecutionRecordStatus.FAILED
    assert by_partition[by_path["guide.md"].revision] == AssetCheckExecutionRecordStatus.SUCCEEDED


def test_the_command_prints_an_outcome_per_file_and_the_conservation_identity(
    loom_home: Path, folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["ingest", str(folder)]) == 0
    assert main(["ingest", str(folder)]) == 0

    out = capsys.readouterr().out.splitlines()
    assert out[-1] == "files 2 = published 0 + refused 0 + unchanged 2 + skipped 0"
    assert "files 2 = published 2 + refused 0 + unchanged 0 + skipped 0" in out
    assert any(line.startswith("published  guide.md") for line in out)


def test_the_command_says_in_one_line_when_the_folder_is_missing(
    loom_home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["ingest", str(tmp_path / "nowhere")]) == 1
    err = capsys.readouterr().err.strip()
    assert (
        err
        == f"loom: missing_folder: folder {tmp_path / 'nowhere'} does not exist or is not a folder"
    )


def test_the_sensor_leaves_a_file_still_being_written_for_a_later_tick(
    loom_home: Path, folder: Path
) -> None:
    register(folder)
    # Modified "now or later", as a writer still at work leaves them, however slow this test.
    for path in folder.rglob("*.*"):
        os.utime(path, (time.time() + 30, time.time() + 30))

    assert tick().dynamic_partitions_requests == []


def test_a_file_deleted_and_written_again_with_the_same_bytes_is_published_again(
    loom_home: Path, folder: Path
) -> None:
    api.ingest_folder(folder)
    todo = folder / "notes" / "todo.txt"
    data = todo.read_bytes()
    todo.unlink()
    api.ingest_folder(folder)
    assert "notes/todo.txt" not in [h.chunk.path for h in api.search("lamp oil")]

    todo.write_bytes(data)
    report = api.ingest_folder(folder)

    [again] = [o for o in report.outcomes if o.path == "notes/todo.txt"]
    assert again.status == "published"
    assert [h.chunk.path for h in api.search("lamp oil")][:1] == ["notes/todo.txt"]


def test_the_sensor_asks_for_a_run_of_a_revision_whose_partition_already_exists(
    loom_home: Path, folder: Path
) -> None:
    first = api.ingest_folder(folder, name="docs")
    todo = folder / "notes" / "todo.txt"
    data = todo.read_bytes()
    todo.unlink()
    api.ingest_folder(folder, name="docs")
    todo.write_bytes(data)
    os.utime(todo, (time.time() - 60, time.time() - 60))
    key = next(o.revision for o in first.outcomes if o.path == "notes/todo.txt")

    # Retired, its partition left the instance (issue 28 part 3): the same bytes back are
    # added again, and run.
    result = tick()
    assert [r.partition_key for r in result.run_requests] == [key]
    [added] = result.dynamic_partitions_requests
    assert list(added.partition_keys) == [key]

    # Where the partition is still there (a home from before that), only the run is asked.
    DagsterInstance.get().add_dynamic_partitions(revisions.name, [key])
    result = tick()
    assert [r.partition_key for r in result.run_requests] == [key]
    assert result.dynamic_partitions_requests == []


def test_a_file_the_watcher_saw_while_runs_were_backlogged_is_asked_for_once_one_ends(
    loom_home: Path, folder: Path
) -> None:
    """Issue 39: while MAX_INGEST_RUNS_IN_FLIGHT ingest runs are in flight, a journal tick adds
    a new file's partition and asks for no run; the cursor carries its key, and the first tick
    after a run ends asks for it, without waiting for the next housekeeping tick."""
    register(folder)
    instance = DagsterInstance.get()
    for path in folder.rglob("*.*"):
        os.utime(path, (time.time() - 60, time.time() - 60))
    watcher = JournalWriter(loom_home, "g1")

    def watched_tick(cursor: str | None) -> SensorResult:
        write_heartbeat(loom_home, Heartbeat("g1", os.getpid(), (str(folder),), time.time()))
        result = tick(cursor)
        for request in result.dynamic_partitions_requests:
            instance.add_dynamic_partitions(revisions.name, list(request.partition_keys))
        return result

    first = watched_tick(None)  # the folder scanned whole once, its files asked for
    assert first.run_requests
    for n in range(MAX_INGEST_RUNS_IN_FLIGHT):
        instance.add_run(DagsterRun(job_name=INGEST_JOB, run_id=f"in-flight-{n}"))
    new = write(folder, "notes/new.txt", "Mend the sail\nbefore the gale.\n")
    os.utime(new, (time.time() - 60, time.time() - 60))
    watcher.append([Change(str(new), True, time.time_ns())])

    seen = watched_tick(first.cursor)
    [added] = seen.dynamic_partitions_requests
    [key] = added.partition_keys
    assert seen.run_requests == []
    assert WatchCursor.loads(seen.cursor).deferred == [key]

    waiting = watched_tick(seen.cursor)  # nothing journaled, runs still in flight
    assert waiting.run_requests == [] and WatchCursor.loads(waiting.cursor).deferred == [key]

    ended = instance.get_run_by_id("in-flight-0")
    assert ended is not None
    instance.report_run_canceled(ended)  # one run fewer in flight
    asked = watched_tick(waiting.cursor)
    assert [r.partition_key for r in asked.run_requests] == [key]
    assert WatchCursor.loads(asked.cursor).deferred == []
