"""Retention, `loom gc` and `loom sources remove`, through real ingests: the reference
extractor, a DuckDB catalog file, a store folder and the Dagster instance under LOOM_HOME."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
from dagster import (
    DagsterInstance,
    DeleteDynamicPartitionsRequest,
    SensorResult,
    SkipReason,
    build_sensor_context,
)

from loom_dagster import api, catalog
from loom_dagster.cli import main
from loom_dagster.definitions import build_definitions
from loom_dagster.objectstore import ObjectStore
from loom_dagster.partitions import PARTITIONS_NAME
from loom_dagster.resources.storage import CatalogResource
from loom_dagster.sensors import loom_folders
from loom_dagster.settings import LoomSettings


def write(folder: Path, name: str, text: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_text(text)


def partitions() -> set[str]:
    return set(DagsterInstance.get().get_dynamic_partitions(PARTITIONS_NAME))


def store() -> ObjectStore:
    return ObjectStore(LoomSettings.from_env().object_store_url)


def catalog_db() -> CatalogResource:
    return CatalogResource(database=str(LoomSettings.from_env().catalog_path))


def revision_of(report: api.IngestReport, path: str) -> str:
    key = next(o.revision for o in report.outcomes if o.path == path)
    assert key is not None
    return key


def sha_of(key: str) -> str:
    with catalog_db().connect() as con:
        return catalog.get_revision(con, key).sha256


def four_versions(folder: Path) -> list[str]:
    """Ingest a.md four times, changed each time; its revision keys, oldest first."""
    keys = []
    for version in range(4):
        write(folder, "a.md", f"# Notes\n\nThe lighthouse keeper logged version {version}.\n")
        keys.append(revision_of(api.ingest_folder(folder, name="docs"), "a.md"))
    return keys


def test_ingest_prunes_partitions_beyond_the_retention_and_keeps_their_records(
    loom_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LOOM_KEEP_REVISIONS", "2")
    keys = four_versions(tmp_path / "docs")

    # A superseded revision leaves the partitions at once (issue 28 part 3), whatever the
    # retention keeps of its objects.
    assert partitions() == {keys[3]}
    with catalog_db().connect() as con:
        outcomes = catalog.outcomes_for(con, keys)
    # The history stays in the catalog.
    assert [outcomes[k].status for k in keys] == ["superseded"] * 3 + ["published"]
    assert [h.chunk.revision for h in api.search("lighthouse keeper")] == [keys[3]]


def test_gc_dry_run_lists_exactly_what_gc_then_deletes_and_keeps_a_shared_original(
    loom_home: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    folder = tmp_path / "docs"
    keys = four_versions(folder)  # superseded revisions leave the partitions at once
    assert partitions() == {keys[3]}
    # A second document with the bytes of a.md's second version: its original is shared.
    write(folder, "copy.md", "# Notes\n\nThe lighthouse keeper logged version 1.\n")
    api.ingest_folder(folder, name="docs")
    capsys.readouterr()
    monkeypatch.setenv("LOOM_KEEP_REVISIONS", "1")

    assert main(["gc", "--dry-run", "-v", "--grace-minutes", "0"]) == 0
    dry = capsys.readouterr().out.splitlines()
    assert main(["gc", "-v", "--grace-minutes", "0"]) == 0
    done = capsys.readouterr().out.splitlines()

    assert dry[:-1] == done[:-1]
    assert dry[-1].startswith("would delete 0 partitions; objects: 2 originals (")
    assert done[-1].startswith("deleted 0 partitions; objects: 2 originals (")
    listed = {line.split()[1] for line in done if line.startswith("partition ")}
    assert listed == set()
    assert partitions() >= {keys[3]} and not partitions() & set(keys[:3])
    objects = {line.split()[1] for line in done if line.startswith("object ")}
    s = store()
    assert s.original_key(sha_of(keys[0])) in objects
    assert s.revision_key(keys[2], "chunks.parquet") in objects
    assert not s.exists(s.original_key(sha_of(keys[2])))
    assert s.exists(s.original_key(sha_of(keys[1])))  # copy.md's live revision holds it
    assert s.exists(s.original_key(sha_of(keys[3])))
    assert s.exists(s.revision_key(keys[3], "chunks.parquet"))
    assert [h.chunk.path for h in api.search("version 3")][:1] == ["a.md"]

    assert main(["gc", "--grace-minutes", "0"]) == 0
    assert capsys.readouterr().out.startswith(
        "deleted 0 partitions; objects: 0 originals (0 bytes)"
    )


def test_gc_spares_objects_younger_than_its_grace(
    loom_home: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    keys = four_versions(tmp_path / "docs")
    monkeypatch.setenv("LOOM_KEEP_REVISIONS", "1")

    assert main(["gc"]) == 0  # the default grace: an hour

    assert (
        capsys.readouterr()
        .out.splitlines()[-1]
        .startswith(
            "deleted 0 partitions; objects: 0 originals (0 bytes), 0 artifacts (0 bytes), 0 revision files"
        )
    )
    assert store().exists(store().original_key(sha_of(keys[0])))


def test_remove_without_yes_says_what_it_would_do_and_changes_nothing(
    loom_home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "docs"
    write(folder, "a.md", "# Boats\n\nThe ferry leaves at dawn.\n")
    write(folder, "b.txt", "Tide tables for the harbour.\n")
    api.ingest_folder(folder, name="docs")
    capsys.readouterr()

    assert main(["sources", "remove", "docs"]) == 2
    assert main(["sources", "remove", "docs", "--purge"]) == 2

    out, err = capsys.readouterr()
    assert out == ""
    assert err.splitlines() == [
        "loom: removing source docs would retire 2 documents; run again with --yes to do it",
        "loom: removing source docs would retire 2 documents, delete its partitions and stored "
        "objects; run again with --yes to do it",
    ]
    assert [h.chunk.path for h in api.search("ferry dawn")][:1] == ["a.md"]
    with catalog_db().connect() as con:
        assert [s.name for s in catalog.list_sources(con)] == ["docs"]
        assert catalog.counts(con)["live_documents"] == 2
    assert len(partitions()) == 2


def test_remove_an_unknown_source_is_one_line(
    loom_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["sources", "remove", "nothing", "--yes"]) == 1
    assert capsys.readouterr().err == "loom: unknown_source: source nothing is not registered\n"


def tick() -> SensorResult | SkipReason:
    defs = build_definitions(LoomSettings.from_env())
    assert defs.resources is not None
    resources = {"catalog_db": catalog_db(), "loom": defs.resources["loom"]}
    result = loom_folders(build_sensor_context(instance=DagsterInstance.get(), resources=resources))
    assert isinstance(result, SensorResult | SkipReason)
    return result


def test_a_sensor_tick_asks_to_delete_the_partitions_retention_no_longer_keeps(
    loom_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    keys = four_versions(tmp_path / "docs")
    monkeypatch.setenv("LOOM_KEEP_REVISIONS", "1")
    # Partitions of superseded revisions the default retention (3) kept, as a home from before
    # issue 28 part 3 still holds them (a superseded revision now leaves them at once).
    DagsterInstance.get().add_dynamic_partitions(PARTITIONS_NAME, keys[1:3])

    result = tick()

    assert isinstance(result, SensorResult)
    [request] = result.dynamic_partitions_requests or []
    assert isinstance(request, DeleteDynamicPartitionsRequest)
    assert (request.partitions_def_name, set(request.partition_keys)) == (
        PARTITIONS_NAME,
        {keys[1], keys[2]},
    )


def test_a_key_the_scan_just_saw_is_not_pruned_in_the_same_tick(
    loom_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LOOM_KEEP_REVISIONS", "1")
    folder = tmp_path / "docs"
    keys = four_versions(folder)
    assert partitions() == {keys[3]}
    # The file goes back to the bytes of a pruned revision: the scan sees that key again.
    write(folder, "a.md", "# Notes\n\nThe lighthouse keeper logged version 1.\n")
    os.utime(folder / "a.md", (time.time() - 60, time.time() - 60))
    first = tick()
    assert isinstance(first, SensorResult)
    # Added back, asked for by name (its partition held a materialization once), and not
    # deleted in the same breath.
    [add] = first.dynamic_partitions_requests or []
    assert list(add.partition_keys) == [keys[1]]
    assert [r.partition_key for r in first.run_requests or []] == [keys[1]]
    DagsterInstance.get().add_dynamic_partitions(PARTITIONS_NAME, [keys[1]])
    # The run it asked for registers the revision again (the tick wrote nothing).
    api.materialize_in_batches(DagsterInstance.get(), [keys[1]], LoomSettings.from_env())

    second = tick()

    # Registered once, by the run: the next tick has nothing to ask for, and nothing to
    # delete: the revision that run superseded left the partitions with it (issue 28 part 3).
    assert isinstance(second, SensorResult)
    assert second.run_requests == []
    assert not second.dynamic_partitions_requests
    assert partitions() == {keys[1]}


def test_remove_yes_retires_the_sources_documents_and_its_folder_is_no_longer_scanned(
    loom_home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder, other = tmp_path / "docs", tmp_path / "other"
    write(folder, "a.md", "# Boats\n\nThe ferry leaves at dawn.\n")
    write(folder, "b.txt", "Tide tables for the harbour.\n")
    write(other, "c.md", "# Boats\n\nThe ferry returns at dusk.\n")
    api.ingest_folder(folder, name="docs")
    api.ingest_folder(other, name="other")
    capsys.readouterr()

    assert main(["sources", "remove", "docs", "--yes"]) == 0

    assert capsys.readouterr().out == "removed source docs: retired 2 documents\n"
    assert {h.chunk.source for h in api.search("ferry")} == {"other"}
    assert {h.chunk.source for h in api.search("tide harbour")} <= {"other"}
    with catalog_db().connect() as con:
        assert [s.name for s in catalog.list_sources(con)] == ["other"]
        assert [d[1] for d in catalog.live_documents(con)] == ["other"]
        assert catalog.pending_revisions(con, "docs") == []
    # Without --purge its objects and partitions stay.
    assert len(partitions()) == 3

    # New files in both folders: the sensor registers only the one still registered.
    write(folder, "new.md", "A new file nobody should scan.\n")
    write(other, "new.md", "A new file in a watched folder.\n")
    for path in (folder / "new.md", other / "new.md"):
        os.utime(path, (time.time() - 60, time.time() - 60))
    result = tick()
    assert isinstance(result, SensorResult)
    [request] = result.dynamic_partitions_requests or []
    assert [k.split("~")[0] for k in request.partition_keys] == ["new.md"]
    # The tick wrote nothing: the run that takes the partition registers the revision.
    with catalog_db().connect() as con:
        assert [s.source for s in catalog.revision_states(con) if s.status is None] == []


def test_remove_purge_deletes_the_sources_objects_and_partitions(
    loom_home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder, other = tmp_path / "docs", tmp_path / "other"
    write(folder, "a.md", "# Boats\n\nThe ferry leaves at dawn.\n")
    write(folder, "shared.txt", "Both sources hold this line.\n")
    write(other, "shared.txt", "Both sources hold this line.\n")
    mine = api.ingest_folder(folder, name="docs")
    theirs = api.ingest_folder(other, name="other")
    a, shared = revision_of(mine, "a.md"), revision_of(mine, "shared.txt")
    s = store()
    assert s.exists(s.original_key(sha_of(a)))
    capsys.readouterr()

    assert main(["sources", "remove", "docs", "--yes", "--purge", "-v"]) == 0

    out = capsys.readouterr().out.splitlines()
    assert out[0] == "removed source docs: retired 2 documents"
    assert out[-1].startswith("deleted 2 partitions; objects: 1 originals (")
    assert partitions() == {revision_of(theirs, "shared.txt")}
    assert not s.exists(s.original_key(sha_of(a)))
    assert not s.exists(s.revision_key(a, "chunks.parquet"))
    assert not s.exists(s.revision_key(shared, "extraction.json"))
    # The other source's revision holds the same bytes: that original stays.
    assert s.exists(s.original_key(sha_of(shared)))
    assert {h.chunk.source for h in api.search("ferry dawn")} <= {"other"}
    assert [h.chunk.source for h in api.search("both sources")] == ["other"]


def test_remove_drops_the_partitions_of_revisions_that_never_ran(
    loom_home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "docs"
    write(folder, "a.md", "# Boats\n\nThe ferry leaves at dawn.\n")
    write(folder, "b.txt", "Tide tables for the harbour.\n")
    os.utime(folder / "a.md", (time.time() - 60, time.time() - 60))
    os.utime(folder / "b.txt", (time.time() - 60, time.time() - 60))
    settings = LoomSettings.from_env()
    api.prepare_environment(settings)
    api.register_source(settings, folder, name="docs")
    result = tick()
    assert isinstance(result, SensorResult)
    [request] = result.dynamic_partitions_requests or []
    DagsterInstance.get().add_dynamic_partitions(PARTITIONS_NAME, list(request.partition_keys))
    assert len(partitions()) == 2  # seen by the sensor, not yet registered by a run

    assert main(["sources", "remove", "docs", "--yes"]) == 0

    assert capsys.readouterr().out == "removed source docs: retired 2 documents\n"
    # Automation would otherwise keep running them, and fail on a source that is gone.
    assert partitions() == set()
