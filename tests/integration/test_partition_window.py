"""The partition window through real ingests (issue 32 part 2): LOOM_PARTITION_WINDOW=3 on a
folder of six files, the reference extractor, a DuckDB catalog file and the SQLite Dagster
instance under LOOM_HOME. A revision whose partition left the window stays live, searchable and
kept; it is superseded and retired as before, and runs again when its partition is added back;
a home made with no window shrinks to it with `loom partitions compact`, nothing re-run.

Each test ingests the six files once (a run of the ingest job, ~5-10 s here): the rules need a
home whose revisions went through Dagster."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
from dagster import (
    AddDynamicPartitionsRequest,
    AssetKey,
    AssetRecordsFilter,
    DagsterInstance,
    DeleteDynamicPartitionsRequest,
    SensorResult,
    SkipReason,
    build_sensor_context,
)

from loom_dagster import api, catalog
from loom_dagster.cli import main
from loom_dagster.definitions import build_definitions
from loom_dagster.partitions import PARTITIONS_NAME
from loom_dagster.resources.storage import CatalogResource
from loom_dagster.sensors import loom_folders
from loom_dagster.settings import LoomSettings

PUBLISHED = AssetKey(["loom", "published"])
WORDS = ["albatross", "bergamot", "cormorant", "dulcimer", "egret", "flamingo"]


def six_files(folder: Path) -> list[str]:
    """Ingest f0.md ... f5.md, each with its own word; their revision keys, in the order their
    partitions were added."""
    folder.mkdir(parents=True, exist_ok=True)
    for n, word in enumerate(WORDS):
        (folder / f"f{n}.md").write_text(f"# Note {n}\n\nThe {word} is noted here.\n")
    report = api.ingest_folder(folder, name="docs")
    assert {o.status for o in report.outcomes} == {"published"}
    keys = {o.path: o.revision for o in report.outcomes}
    return [str(keys[f"f{n}.md"]) for n in range(len(WORDS))]


def instance() -> DagsterInstance:
    return DagsterInstance.get()


def partitions() -> list[str]:
    return list(instance().get_dynamic_partitions(PARTITIONS_NAME))


def catalog_db() -> CatalogResource:
    return CatalogResource(database=str(LoomSettings.from_env().catalog_path))


def tick() -> SensorResult | SkipReason:
    defs = build_definitions(LoomSettings.from_env())
    assert defs.resources is not None
    resources = {"catalog_db": catalog_db(), "loom": defs.resources["loom"]}
    result = loom_folders(build_sensor_context(instance=instance(), resources=resources))
    assert isinstance(result, SensorResult | SkipReason)
    return result


def found(word: str) -> list[str]:
    return [hit.chunk.path for hit in api.search(word)]


def published_events(key: str) -> list[str]:
    records = instance().fetch_materializations(
        AssetRecordsFilter(asset_key=PUBLISHED, asset_partitions=[key]), limit=10
    )
    return [
        str(r.event_log_entry.asset_materialization.metadata["status"].value)
        for r in reversed(records.records)
        if r.event_log_entry.asset_materialization is not None
    ]


def recorded(states: list[catalog.RevisionState]) -> list[tuple[object, ...]]:
    """What the catalog recorded of each revision (all but its age, which grows)."""
    return sorted(
        (s.key, s.document_id, s.sha256, s.seq, s.live, s.status, s.artifact_sha256) for s in states
    )


def test_a_tick_past_the_window_takes_the_first_settled_partitions_and_asks_nothing_for_them(
    loom_home: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    keys = six_files(tmp_path / "docs")  # the default window: 50,000
    monkeypatch.setenv("LOOM_PARTITION_WINDOW", "3")

    first = tick()

    assert isinstance(first, SensorResult)
    [request] = first.dynamic_partitions_requests or []
    assert isinstance(request, DeleteDynamicPartitionsRequest)
    assert list(request.partition_keys) == keys[:3]
    assert first.run_requests == []
    for key in request.partition_keys:  # as the daemon applies the tick's request
        instance().delete_dynamic_partition(PARTITIONS_NAME, key)
    # Not idle, not pending, not an orphan: nothing asked for, nothing more to delete.
    second = tick()
    assert isinstance(second, SensorResult)
    assert second.run_requests == [] and not second.dynamic_partitions_requests
    assert partitions() == keys[3:]
    # Still live and searchable, its facts in the catalog, its objects kept by gc.
    assert [found(word)[:1] for word in WORDS] == [[f"f{n}.md"] for n in range(6)]
    with catalog_db().connect() as con:
        assert catalog.counts(con)["live_documents"] == 6
    capsys.readouterr()
    assert main(["gc", "--dry-run", "--grace-minutes", "0"]) == 0
    assert capsys.readouterr().out.startswith(
        "would delete 0 partitions; objects: 0 originals (0 bytes), 0 artifacts (0 bytes)"
    )


def test_ingest_keeps_the_window_and_a_revision_past_it_is_superseded_and_retired_as_before(
    loom_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LOOM_PARTITION_WINDOW", "3")
    folder = tmp_path / "docs"
    keys = six_files(folder)
    assert partitions() == keys[3:]

    (folder / "f0.md").write_text("# Note 0\n\nThe albatross became a gannet.\n")
    os.utime(folder / "f0.md", (time.time() - 60, time.time() - 60))  # settled
    (folder / "f1.md").unlink()
    changed = tick()  # the sensor finds both, as it does a file within the window
    assert isinstance(changed, SensorResult)
    # The new revision gets its partition, and the window another settled one's (not its).
    add, delete = changed.dynamic_partitions_requests or []
    assert isinstance(add, AddDynamicPartitionsRequest)
    [new_key] = add.partition_keys
    assert new_key.startswith("f0.md~") and new_key != keys[0]
    assert list(delete.partition_keys) == [keys[3]]
    assert {r.job_name for r in changed.run_requests or []} == {"ingest", "sync"}
    report = api.ingest_folder(folder, name="docs")

    assert {(o.path, o.status) for o in report.outcomes} >= {("f0.md", "published")}
    assert report.retired == ["f1.md"]
    assert new_key in partitions()
    assert found("gannet")[:1] == ["f0.md"] and "f1.md" not in found("bergamot")
    with catalog_db().connect() as con:
        outcomes = catalog.outcomes_for(con, [keys[0], keys[1], new_key])
        assert [outcomes[k].status for k in (keys[0], keys[1], new_key)] == [
            "superseded",
            "published",
            "published",
        ]
        assert catalog.counts(con)["live_documents"] == 5
    # Each says so on its `published` partition's history, as a revision within the window does.
    assert published_events(keys[0])[-1] == f"superseded by {new_key}"
    assert published_events(keys[1])[-1] == "retired: its file was deleted"


def test_a_revision_past_the_window_runs_again_once_its_partition_is_added_back(
    loom_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    keys = six_files(tmp_path / "docs")
    monkeypatch.setenv("LOOM_PARTITION_WINDOW", "3")
    assert main(["partitions", "compact"]) == 0
    assert partitions() == keys[3:]

    # The UI's "Add a partition" with the key `loom show` prints, then a run of it.
    instance().add_dynamic_partitions(PARTITIONS_NAME, [keys[0]])
    failed = api.materialize_in_batches(instance(), [keys[0]], LoomSettings.from_env())

    assert failed == {}
    assert published_events(keys[0]) == ["published", "published"]
    assert found("albatross")[:1] == ["f0.md"]
    with catalog_db().connect() as con:
        assert catalog.outcomes_for(con, [keys[0]])[keys[0]].status == "published"
        assert catalog.counts(con)["live_documents"] == 6
    # Added last, it is the last to leave the window: the next tick takes another.
    after = tick()
    assert isinstance(after, SensorResult)
    [request] = after.dynamic_partitions_requests or []
    assert list(request.partition_keys) == [keys[3]]
    assert after.run_requests == []


def test_compact_shrinks_a_home_made_with_no_window_and_reruns_nothing(
    loom_home: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    keys = six_files(tmp_path / "docs")  # a home as today's version makes it: 6 partitions
    with catalog_db().connect() as con:
        history = catalog.revision_states(con)
        outcomes = catalog.outcomes_for(con, keys)
    runs = instance().get_runs_count()
    capsys.readouterr()
    monkeypatch.setenv("LOOM_PARTITION_WINDOW", "3")

    assert main(["partitions", "compact"]) == 0

    out, err = capsys.readouterr()
    assert out == "deleted 3 partitions (0 past retention, 3 past the window of 3); 3 left\n"
    assert err.splitlines() == ["deleted 3 of 3 partitions"]
    assert partitions() == keys[3:]
    # Nothing ran again, every revision is published once, the catalog's history untouched.
    assert instance().get_runs_count() == runs
    assert [published_events(key) for key in keys] == [["published"]] * 6
    with catalog_db().connect() as con:
        assert recorded(catalog.revision_states(con)) == recorded(history)
        assert catalog.outcomes_for(con, keys) == outcomes
    # Run again (as after an interruption): nothing left to do.
    assert main(["partitions", "compact"]) == 0
    assert capsys.readouterr().out == (
        "deleted 0 partitions (0 past retention, 0 past the window of 3); 3 left\n"
    )
