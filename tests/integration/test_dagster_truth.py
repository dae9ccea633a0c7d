"""What the Dagster UI is told about each revision: its own facts, never its batch's (issue 13).

A folder with a one-chunk text file, a guide, a Latin-1 file the extractor refuses and a PDF
whose image page needs OCR goes through `loom ingest`; then the instance is read the way the
UI reads it (materializations and observations per partition, check executions per partition).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from dagster import AssetCheckKey, AssetKey, DagsterEventType, DagsterInstance, EventRecordsFilter
from dagster._core.storage.asset_check_execution_record import AssetCheckExecutionRecordStatus

from loom_dagster import api
from loom_dagster.api import FileOutcome
from loom_dagster.cli import main
from loom_dagster.extractor.local import RunningExtractor
from tests.integration.conftest import home_made_once, use_home

REPO = Path(__file__).resolve().parents[2]
IMAGE_PAGE_PDF = REPO / "bench" / "docparse" / "pdf" / "image_page.pdf"
ARTIFACT = AssetKey(["loom", "artifact"])
CHUNKS = AssetKey(["loom", "chunks"])
PUBLISHED = AssetKey(["loom", "published"])
ORIGINAL = AssetKey(["loom", "original"])

GUIDE = "# Guide\n\n" + "".join(
    f"## Part {n}\n\nStep {n} of the install: run the wizard and read its log line {n}.\n\n"
    for n in range(1, 40)
)


def make_folder(root: Path) -> Path:
    root.mkdir(parents=True)
    (root / "guide.md").write_text(GUIDE)
    (root / "note.txt").write_text("Buy lamp oil and rope.\n")
    (root / "legacy.txt").write_bytes(b"caf\xe9 au lait\n")
    shutil.copyfile(IMAGE_PAGE_PDF, root / "scan.pdf")
    return root


def ingest_folder_at(root: Path) -> dict[str, FileOutcome]:
    """The example folder made under `root` and ingested; the outcomes by path."""
    report = api.ingest_folder(make_folder(root / "docs"))
    return {o.path: o for o in report.outcomes}


@pytest.fixture
def ingested(loom_home: Path, tmp_path: Path) -> dict[str, FileOutcome]:
    """The folder ingested into this test's own home: for a test that changes the folder, the
    catalog or the instance."""
    return ingest_folder_at(tmp_path)


@pytest.fixture(scope="module")
def ingested_once(
    tmp_path_factory: pytest.TempPathFactory, reference_service: RunningExtractor
) -> tuple[Path, dict[str, FileOutcome]]:
    """The folder ingested once into a home of this module's, for the tests that only read what
    the ingest told the instance (an ingest with the PDF's OCR is many seconds)."""
    return home_made_once(tmp_path_factory, reference_service, "dagster-truth", ingest_folder_at)


@pytest.fixture
def read_only(
    ingested_once: tuple[Path, dict[str, FileOutcome]],
    monkeypatch: pytest.MonkeyPatch,
    reference_service: RunningExtractor,
) -> dict[str, FileOutcome]:
    """`ingested_once`'s outcomes, this test pointed at its home. Only for tests that change
    nothing there: each such test reads the instance and the catalog as the ingest left them."""
    home, outcomes = ingested_once
    use_home(monkeypatch, home, reference_service)
    return outcomes


def events(asset: AssetKey, kind: DagsterEventType) -> dict[str, dict[str, object]]:
    """The latest event of `kind` per partition of `asset`, as its metadata's plain values."""
    records = DagsterInstance.get().get_event_records(
        EventRecordsFilter(event_type=kind, asset_key=asset), ascending=True
    )
    found: dict[str, dict[str, object]] = {}
    for record in records:
        event = record.asset_materialization or record.asset_observation
        assert event is not None and event.partition is not None
        found[event.partition] = {k: v.value for k, v in event.metadata.items()}
    return found


def check_status(name: str) -> dict[str, AssetCheckExecutionRecordStatus]:
    history = DagsterInstance.get().event_log_storage.get_asset_check_execution_history(
        AssetCheckKey(ARTIFACT, name), limit=100
    )
    return {r.partition: r.status for r in reversed(history) if r.partition}


def test_each_partition_carries_its_own_chunk_count_and_facts(
    read_only: dict[str, FileOutcome],
) -> None:
    note, guide = read_only["note.txt"], read_only["guide.md"]
    assert note.status == guide.status == "published"
    chunks = events(CHUNKS, DagsterEventType.ASSET_MATERIALIZATION)
    assert chunks[note.revision]["chunks"] == 1
    assert guide.detail == f"{chunks[guide.revision]['chunks']} chunks"
    assert chunks[guide.revision]["chunks"] != 1
    assert "lamp oil" in str(chunks[note.revision]["preview"])

    artifact = events(ARTIFACT, DagsterEventType.ASSET_MATERIALIZATION)
    assert artifact[note.revision]["format"] == "text"
    assert artifact[note.revision]["complete"] is True
    originals = events(AssetKey(["loom", "original"]), DagsterEventType.ASSET_MATERIALIZATION)
    assert str(originals[note.revision]["path"]).endswith("docs/note.txt")
    assert originals[note.revision]["size"] == len("Buy lamp oil and rope.\n")
    assert len(str(originals[note.revision]["sha256"])) == 64


def test_a_refused_revision_is_no_materialization_of_chunks_or_published(
    read_only: dict[str, FileOutcome],
) -> None:
    refused = read_only["legacy.txt"]
    assert refused.status == "refused" and refused.detail.startswith("encoding: ")
    assert refused.revision not in events(CHUNKS, DagsterEventType.ASSET_MATERIALIZATION)
    assert refused.revision not in events(PUBLISHED, DagsterEventType.ASSET_MATERIALIZATION)
    observed = events(PUBLISHED, DagsterEventType.ASSET_OBSERVATION)
    assert observed[refused.revision]["status"] == "refused"
    assert observed[refused.revision]["code"] == "encoding"
    artifact = events(ARTIFACT, DagsterEventType.ASSET_MATERIALIZATION)
    assert artifact[refused.revision]["status"] == "refused"


def test_the_checks_count_each_partition_as_it_is(read_only: dict[str, FileOutcome]) -> None:
    refused, scan, note = read_only["legacy.txt"], read_only["scan.pdf"], read_only["note.txt"]
    extracted, complete = check_status("extracted"), check_status("complete")
    assert extracted[refused.revision] == AssetCheckExecutionRecordStatus.FAILED
    assert (
        extracted[note.revision]
        == extracted[scan.revision]
        == (AssetCheckExecutionRecordStatus.SUCCEEDED)
    )
    assert complete[scan.revision] == AssetCheckExecutionRecordStatus.FAILED
    assert complete[note.revision] == AssetCheckExecutionRecordStatus.SUCCEEDED

    # Each evaluation judges the materialization this run made of its partition: the UI's
    # partition view counts it (an evaluation that names none reads "Missing").
    storage = DagsterInstance.get().event_log_storage
    infos = storage.get_asset_check_partition_info([AssetCheckKey(ARTIFACT, "extracted")])
    by_partition = {info.partition_key: info for info in infos}
    assert by_partition[note.revision].is_current
    assert by_partition[refused.revision].is_current
    assert by_partition[note.revision].latest_target_materialization_storage_id is not None


def test_the_incomplete_pdf_is_published_and_said_to_be(
    read_only: dict[str, FileOutcome], capsys: pytest.CaptureFixture[str]
) -> None:
    scan = read_only["scan.pdf"]
    assert scan.status == "published"
    assert "incomplete: " in scan.detail and "page" in scan.detail
    history = DagsterInstance.get().event_log_storage.get_asset_check_execution_history(
        AssetCheckKey(ARTIFACT, "complete"), limit=100
    )
    warned = [r for r in history if r.partition == scan.revision][0]
    evaluation = warned.event.dagster_event.event_specific_data  # type: ignore[union-attr]
    assert evaluation.severity.value == "WARN"
    assert "page" in (evaluation.description or "")
    published = events(PUBLISHED, DagsterEventType.ASSET_MATERIALIZATION)
    assert "page" in str(published[scan.revision]["incomplete"])


def test_no_run_logs_a_missing_check_output(read_only: dict[str, FileOutcome]) -> None:
    instance = DagsterInstance.get()
    runs = instance.get_runs()
    assert runs
    for run in runs:
        for entry in instance.all_logs(run.run_id):
            assert "did not yield" not in (entry.user_message or "")


def test_a_search_hit_from_the_incomplete_pdf_says_so(read_only: dict[str, FileOutcome]) -> None:
    scan, note = read_only["scan.pdf"], read_only["note.txt"]
    by_revision = {h.chunk.revision: h for h in api.search("page lamp oil rope", limit=20)}
    assert "page 2" in by_revision[scan.revision].incomplete
    assert by_revision[note.revision].incomplete == ""


def test_strict_ingest_exits_1_on_a_refused_or_incomplete_file(
    loom_home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = make_folder(tmp_path / "docs")
    assert main(["ingest", "--strict", str(folder)]) == 1
    captured = capsys.readouterr()
    assert "published  scan.pdf" in captured.out and "(incomplete: page 2: " in captured.out
    assert captured.err.splitlines()[-1] == "loom: strict: 1 refused, 1 incomplete"

    clean = tmp_path / "clean"
    clean.mkdir()
    (clean / "a.md").write_text("# A\n\nwords\n")
    assert main(["ingest", "--strict", str(clean)]) == 0
    assert main(["ingest", str(folder)]) == 0  # without --strict: outcomes, exit 0


def dagster_job(range_: tuple[str, str], **env: str) -> subprocess.CompletedProcess[str]:
    """The CI recipe's Dagster CLI step: the ingest job over a range of partitions."""
    tags = {
        "dagster/asset_partition_range_start": range_[0],
        "dagster/asset_partition_range_end": range_[1],
    }
    return subprocess.run(
        [str(Path(sys.executable).parent / "dagster"), "job", "execute"]
        + ["-m", "loom_dagster.definitions", "-j", "ingest", "--tags", json.dumps(tags)],
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=300,
        cwd=REPO,
    )


def test_the_dagster_cli_takes_a_range_and_fails_it_in_strict_mode(
    ingested: dict[str, FileOutcome],
) -> None:
    keys = DagsterInstance.get().get_dynamic_partitions("revisions")
    assert len(keys) == 4
    assert dagster_job((keys[0], keys[-1])).returncode == 0

    strict = dagster_job((keys[0], keys[-1]), LOOM_STRICT="1")
    assert strict.returncode != 0
    said = strict.stdout + strict.stderr
    # The failure names each file, not only the check (issue 28 part 8).
    assert "strict: 2 file(s) failed a blocking asset check: " in said
    assert "docs:legacy.txt (extracted: encoding: " in said, said[-3000:]
    assert "docs:scan.pdf (complete: page 2: " in said

    bad = dagster_job((keys[0], keys[-1]), LOOM_STRICT="yes")
    assert bad.returncode != 0
    assert "LOOM_STRICT must be 0 or 1, not 'yes'" in bad.stdout + bad.stderr


def live_checks() -> dict[str, tuple[bool, str | None]]:
    history = DagsterInstance.get().event_log_storage.get_asset_check_execution_history(
        AssetCheckKey(PUBLISHED, "live"), limit=100
    )
    found = {}
    for record in reversed(history):
        assert record.status != AssetCheckExecutionRecordStatus.PLANNED, record.partition
        evaluation = record.event.dagster_event.event_specific_data  # type: ignore[union-attr]
        found[record.partition] = (evaluation.passed, evaluation.description)
    return found


def test_superseded_and_retired_revisions_read_apart_from_live_ones(
    ingested: dict[str, FileOutcome], tmp_path: Path
) -> None:
    old_note, guide = ingested["note.txt"], ingested["guide.md"]
    assert live_checks()[old_note.revision] == (True, None)
    (tmp_path / "docs" / "note.txt").write_text("Buy lamp oil, rope and a map.\n")
    (tmp_path / "docs" / "guide.md").unlink()

    report = api.ingest_folder(tmp_path / "docs")

    new_note = {o.path: o for o in report.outcomes}["note.txt"]
    assert report.retired == ["guide.md"]
    checks = live_checks()
    assert checks[new_note.revision] == (True, None)
    assert checks[old_note.revision] == (False, f"superseded by {new_note.revision}")
    assert checks[guide.revision] == (False, "retired: its file was deleted")
    assert checks[ingested["legacy.txt"].revision] == (False, "refused: never published")
    # Where a user looks first, the partition's latest materialization, says so too (issue 28
    # part 3); the earlier "published" one stays in its history.
    latest = events(PUBLISHED, DagsterEventType.ASSET_MATERIALIZATION)
    assert latest[old_note.revision]["status"] == f"superseded by {new_note.revision}"
    assert latest[old_note.revision]["live"] is False
    assert latest[guide.revision]["status"] == "retired: its file was deleted"
    assert latest[new_note.revision]["status"] == "published"
    # And Overview counts only live documents: the revisions no longer served left the
    # partitions (their events above stay); a refused file's, still its latest news, did not.
    partitions = set(DagsterInstance.get().get_dynamic_partitions("revisions"))
    assert old_note.revision not in partitions and guide.revision not in partitions
    assert {new_note.revision, ingested["legacy.txt"].revision} <= partitions


def test_a_revision_retired_a_second_time_does_not_stop_the_ingest(
    ingested: dict[str, FileOutcome], tmp_path: Path
) -> None:
    """Dagster keeps one evaluation made outside a run per check and partition: the second
    retirement of the same bytes cannot record another, and the ingest still ends well."""
    guide = tmp_path / "docs" / "guide.md"
    data = guide.read_bytes()
    key = ingested["guide.md"].revision
    for _ in range(2):
        guide.unlink()
        assert api.ingest_folder(tmp_path / "docs").retired == ["guide.md"]
        assert key not in DagsterInstance.get().get_dynamic_partitions("revisions")
        guide.write_bytes(data)
        again = {o.path: o for o in api.ingest_folder(tmp_path / "docs").outcomes}
        assert again["guide.md"].status == "published"
        # The same bytes back are the same partition again.
        assert key in DagsterInstance.get().get_dynamic_partitions("revisions")
    guide.unlink()
    report = api.ingest_folder(tmp_path / "docs")
    assert report.retired == ["guide.md"]


def test_a_tick_whose_result_was_lost_strands_no_revision(loom_home: Path, tmp_path: Path) -> None:
    from tests.integration.test_pipeline_end_to_end import register, tick

    folder = make_folder(tmp_path / "docs")
    # Settled: the sensor leaves a file written in the last seconds for a later tick.
    for path in folder.iterdir():
        os.utime(path, (time.time() - 60, time.time() - 60))
    register(folder)
    lost = tick()  # a preview, or a tick that failed after it registered: nothing applied
    assert len(lost.dynamic_partitions_requests[0].partition_keys) == 4

    again = tick()

    added = again.dynamic_partitions_requests[0].partition_keys
    assert sorted(k.split("~")[0] for k in added) == [
        "guide.md",
        "legacy.txt",
        "note.txt",
        "scan.pdf",
    ]


# Issue 13.4: the sensor's evaluation writes nothing --------------------------------------------


def catalog_rows() -> dict[str, list[tuple[object, ...]]]:
    """Every row of the catalog's tables, in a fixed order."""
    from loom_dagster.resources.storage import CatalogResource
    from loom_dagster.settings import LoomSettings

    tables = ("sources", "revisions", "documents", "outcomes", "outcome_history")
    with CatalogResource(database=str(LoomSettings.from_env().catalog_path)).connect() as con:
        return {t: con.execute(f"SELECT * FROM {t} ORDER BY ALL").fetchall() for t in tables}


def settled(folder: Path) -> None:
    # The sensor leaves a file written in the last seconds for a later tick.
    for path in folder.iterdir():
        os.utime(path, (time.time() - 60, time.time() - 60))


def test_a_sensor_evaluation_leaves_the_catalog_as_it_was(
    ingested: dict[str, FileOutcome], tmp_path: Path
) -> None:
    from tests.integration.test_pipeline_end_to_end import tick

    folder = tmp_path / "docs"
    (folder / "note.txt").write_text("Buy lamp oil, rope and a map.\n")
    (folder / "new.md").write_text("# New\n\nA file the sensor sees first.\n")
    (folder / "guide.md").unlink()
    settled(folder)
    before = catalog_rows()

    result = tick()  # what `dagster sensor preview` evaluates

    assert catalog_rows() == before
    [add] = result.dynamic_partitions_requests
    assert sorted(k.split("~")[0] for k in add.partition_keys) == ["new.md", "note.txt"]
    # One run of the two new partitions (a key range: they are neighbours), asked for by the
    # tick that adds them, and the sync run that retires the deleted guide.md.
    ingest, sync = result.run_requests
    assert (ingest.job_name, sync.job_name) == ("ingest", "sync")
    assert (
        ingest.tags["dagster/asset_partition_range_start"],
        ingest.tags["dagster/asset_partition_range_end"],
    ) == (add.partition_keys[0], add.partition_keys[-1])
    assert [h.chunk.path for h in api.search("wizard log line")][:1] == ["guide.md"]


def test_a_tick_failing_midway_strands_nothing_and_the_next_one_publishes_every_file(
    loom_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from loom_dagster import sensors
    from loom_dagster.settings import LoomSettings
    from tests.integration.test_pipeline_end_to_end import register, tick

    folder = make_folder(tmp_path / "docs")
    settled(folder)
    register(folder)
    before = catalog_rows()

    def broken(*_: object, **__: object) -> None:
        raise RuntimeError("the tick dies after scanning the folders")

    with monkeypatch.context() as patch:
        patch.setattr(sensors.lifecycle, "plan_retention", broken)
        with pytest.raises(RuntimeError):
            tick()
    assert catalog_rows() == before  # nothing registered, nothing to strand

    again = tick()

    [add] = again.dynamic_partitions_requests
    keys = list(add.partition_keys)
    assert len(keys) == 4
    instance = DagsterInstance.get()
    instance.add_dynamic_partitions("revisions", keys)
    # The runs automation would start: their first step registers each revision.
    api.materialize_in_batches(instance, keys, LoomSettings.from_env())
    rows = catalog_rows()
    assert sorted(r[4] for r in rows["revisions"]) == [  # path
        "guide.md",
        "legacy.txt",
        "note.txt",
        "scan.pdf",
    ]
    statuses = {r[0].split("~")[0]: r[1] for r in rows["outcomes"]}
    assert statuses == {
        "guide.md": "published",
        "legacy.txt": "refused",
        "note.txt": "published",
        "scan.pdf": "published",
    }
    assert api.search("lamp oil rope")[0].chunk.path == "note.txt"
    assert tick().dynamic_partitions_requests == []


def test_a_deleted_file_is_retired_by_the_sync_run_the_sensor_asks_for(
    ingested: dict[str, FileOutcome], tmp_path: Path
) -> None:
    from loom_dagster.definitions import build_definitions
    from loom_dagster.settings import LoomSettings
    from tests.integration.test_pipeline_end_to_end import tick

    (tmp_path / "docs" / "guide.md").unlink()
    [sync] = tick().run_requests
    assert sync.job_name == "sync"
    assert [h.chunk.path for h in api.search("wizard log line")][:1] == ["guide.md"]

    job = build_definitions(LoomSettings.from_env()).resolve_job_def(sync.job_name)
    assert job.execute_in_process(instance=DagsterInstance.get(), tags=sync.tags).success

    assert "guide.md" not in [h.chunk.path for h in api.search("wizard log line")]
    assert live_checks()[ingested["guide.md"].revision] == (
        False,
        "retired: its file was deleted",
    )
    assert tick().run_requests == []  # retired once: nothing left to ask for


def test_a_file_changed_between_the_tick_and_its_run_leaves_no_stale_partition(
    loom_home: Path, tmp_path: Path
) -> None:
    from loom_dagster.settings import LoomSettings
    from tests.integration.test_pipeline_end_to_end import register, tick

    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "note.txt").write_text("Buy lamp oil and rope.\n")
    settled(folder)
    register(folder)
    [seen] = tick().dynamic_partitions_requests[0].partition_keys
    (folder / "note.txt").write_text("Buy lamp oil, rope and a map.\n")
    settled(folder)
    instance = DagsterInstance.get()
    instance.add_dynamic_partitions("revisions", [seen])

    api.materialize_in_batches(instance, [seen], LoomSettings.from_env())

    # The run found other bytes: it registered them (another key), not the ones the tick saw.
    assert events(ARTIFACT, DagsterEventType.ASSET_MATERIALIZATION)[seen]["status"] == (
        "unregistered"
    )
    [now] = [r[0] for r in catalog_rows()["revisions"]]
    assert now != seen
    after = tick()
    [add, delete] = after.dynamic_partitions_requests
    assert list(add.partition_keys) == [now]
    assert list(delete.partition_keys) == [seen]


# Issue 13.3: parser versions and staleness -----------------------------------------------------


def test_a_parser_upgrade_makes_exactly_its_formats_revisions_stale_and_reprocess_takes_them(
    loom_home: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    from loom_dagster.definitions import build_definitions
    from loom_dagster.extractor.settings import ENV_ROUTES
    from loom_dagster.settings import LoomSettings
    from tests.integration.misbehaving_extractor import (
        CAPABILITIES,
        EXTRACT,
        MisbehavingExtractor,
        artifact,
        json_reply,
    )

    def upgrade(service: MisbehavingExtractor, version: str) -> None:
        """Markdown's parser at `version`, declared and in the artifacts it makes."""
        service.replies[CAPABILITIES] = json_reply(
            {
                "contract_version": 1,
                "extractor": {"name": "misbehaving", "version": "1"},
                "max_bytes": 1 << 20,
                "formats": [
                    {
                        "format": "markdown",
                        "options": ["encoding"],
                        "parser": "fake-md",
                        "parser_version": version,
                    },
                ],
            }
        )
        service.replies[EXTRACT] = json_reply(
            artifact("markdown") | {"parser": "fake-md", "parser_version": version}
        )

    def code_version() -> str | None:
        defs = build_definitions(LoomSettings.from_env())
        return defs.get_assets_def(ARTIFACT).code_versions_by_key[ARTIFACT]

    folder = tmp_path / "docs"
    folder.mkdir()
    for name in ("a.md", "b.md"):  # what the fake's artifact reads: one line
        (folder / name).write_text("# Hi\n")
    (folder / "c.txt").write_text("Buy lamp oil and rope.\n")
    with MisbehavingExtractor() as markdown:
        upgrade(markdown, "1")
        monkeypatch.setenv(ENV_ROUTES, json.dumps({"markdown": markdown.url}))
        first = {o.path: o for o in api.ingest_folder(folder).outcomes}
        assert {o.status for o in first.values()} == {"published"}
        before = code_version()

        upgrade(markdown, "2")
        (folder / "d.md").write_text("# Hi\n")  # a run after the upgrade sees it
        api.ingest_folder(folder)

        current = check_status("current_parser")
        failed = AssetCheckExecutionRecordStatus.FAILED
        assert {first[p].revision for p in first if current.get(first[p].revision) == failed} == {
            first["a.md"].revision,
            first["b.md"].revision,
        }
        assert first["c.txt"].revision not in current  # never stale: nothing to say
        # Dagster's code version is per asset: a parser in it would mark every partition of
        # every format unsynced; the check above names exactly the stale ones (issue 28 part 6).
        assert code_version() == before
        capsys.readouterr()
        assert main(["show", str(folder / "a.md")]) == 0
        assert (
            "stale: made by fake-md 1, the extractor now has fake-md 2" in capsys.readouterr().out
        )
        calls = len(markdown.requests_to(EXTRACT))

        assert main(["ingest", str(folder), "--reprocess-stale"]) == 0

        out = capsys.readouterr().out
        assert len(markdown.requests_to(EXTRACT)) - calls == 2  # a.md and b.md, nothing else
        assert "(reprocessed: fake-md 1 -> fake-md 2)" in out
        assert out.splitlines()[-1] == "files 4 = published 2 + refused 0 + unchanged 2 + skipped 0"
        assert main(["show", str(folder / "a.md")]) == 0
        assert "stale" not in capsys.readouterr().out
        current = check_status("current_parser")
        assert current[first["a.md"].revision] == AssetCheckExecutionRecordStatus.SUCCEEDED


# Issue 17.5: settings read once, where the definitions load ------------------------------------


def test_runs_and_ticks_use_the_settings_read_when_the_definitions_loaded(
    loom_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from dagster import build_sensor_context

    from loom_dagster.definitions import build_definitions
    from loom_dagster.extractor.settings import ENV_ROUTES
    from loom_dagster.jobs import INGEST_JOB
    from loom_dagster.resources.storage import CatalogResource
    from loom_dagster.sensors import loom_folders
    from loom_dagster.settings import LoomSettings
    from tests.integration.misbehaving_extractor import EXTRACT, MisbehavingExtractor, Reply
    from tests.integration.test_pipeline_end_to_end import register

    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "a.md").write_text("# Hi\n")
    settled(folder)
    register(folder)
    with MisbehavingExtractor() as down:
        down.replies[EXTRACT] = Reply(status=503)
        monkeypatch.setenv(ENV_ROUTES, json.dumps({"markdown": down.url}))
        monkeypatch.setenv("LOOM_RETRY_ATTEMPTS", "0")
        monkeypatch.setenv("LOOM_RETRY_DELAY_S", "0")
        monkeypatch.setenv("LOOM_KEEP_REVISIONS", "1")
        monkeypatch.setenv("LOOM_STRICT", "1")
        settings = LoomSettings.from_env()
        defs = build_definitions(settings)  # the code location loads
        # Changed afterwards: a run or a tick that read the environment would see these.
        monkeypatch.setenv("LOOM_RETRY_ATTEMPTS", "3")
        monkeypatch.setenv("LOOM_KEEP_REVISIONS", "oops")
        monkeypatch.setenv("LOOM_STRICT", "maybe")
        monkeypatch.setenv(ENV_ROUTES, "not json")

        catalog_db = CatalogResource(database=str(settings.catalog_path))
        tick = loom_folders(
            build_sensor_context(
                instance=DagsterInstance.get(),
                resources={"catalog_db": catalog_db, "loom": defs.resources["loom"]},
            )
        )
        [key] = tick.dynamic_partitions_requests[0].partition_keys  # type: ignore[union-attr]
        instance = DagsterInstance.get()
        instance.add_dynamic_partitions("revisions", [key])
        result = defs.resolve_job_def(INGEST_JOB).execute_in_process(
            instance=instance, partition_key=key, raise_on_error=False
        )

        # One try (LOOM_RETRY_ATTEMPTS=0 at load), sent where the routes said at load.
        assert len(down.requests_to(EXTRACT)) == 1
    assert not result.success  # strict at load: the refused revision's check blocks the run
    extraction = json.loads(
        (settings.home / "store" / "revisions" / key / "extraction.json").read_text()
    )
    assert extraction["code"] == "retries_exhausted"


# Issue 28 part 5: only real partitions run ------------------------------------------------------


@pytest.mark.parametrize("key", ["made-up.txt~0123456789@0123456789abcdef", "anything at all"])
def test_a_run_for_a_key_the_catalog_does_not_hold_fails_at_once_naming_it(
    ingested: dict[str, FileOutcome], key: str
) -> None:
    """ "Add a partition" in the UI takes any string; its run must not end in Success."""
    from loom_dagster.definitions import build_definitions
    from loom_dagster.jobs import INGEST_JOB
    from loom_dagster.settings import LoomSettings

    before = catalog_rows()
    instance = DagsterInstance.get()
    instance.add_dynamic_partitions("revisions", [key])

    result = (
        build_definitions(LoomSettings.from_env())
        .resolve_job_def(INGEST_JOB)
        .execute_in_process(instance=instance, partition_key=key, raise_on_error=False)
    )

    assert not result.success
    [failure] = [e for e in result.all_events if e.is_step_failure]
    assert failure.step_key is not None and "original" in failure.step_key
    message = failure.step_failure_data.error.message  # type: ignore[union-attr]
    assert repr(key) in message and "\n" not in message.strip()
    after = catalog_rows()
    for table in ("revisions", "documents", "outcomes", "outcome_history"):
        assert after[table] == before[table], table  # nothing registered or published
    assert key not in events(ORIGINAL, DagsterEventType.ASSET_MATERIALIZATION)
    # The folder sensor's next tick deletes the made-up partition rather than asking for its
    # run again every few minutes.
    from tests.integration.test_pipeline_end_to_end import tick

    after = tick()
    deleted = [
        k
        for request in after.dynamic_partitions_requests or []
        if type(request).__name__ == "DeleteDynamicPartitionsRequest"
        for k in request.partition_keys
    ]
    assert deleted == [key]
    assert all(r.partition_key != key and key not in str(r.tags) for r in after.run_requests or [])


def test_a_published_partition_says_what_was_published_and_links_to_it(
    ingested: dict[str, FileOutcome], tmp_path: Path
) -> None:
    """Issue 28 part 4: the partition page names the file, its format, size, revision and
    time, its tables, and links to the original, the artifact and `loom show`."""
    note = ingested["note.txt"]
    facts = events(PUBLISHED, DagsterEventType.ASSET_MATERIALIZATION)[note.revision or ""]
    assert facts["status"] == "published"
    assert facts["path"] == str(tmp_path / "docs" / "note.txt")
    assert facts["format"] == "text"
    assert facts["size"] == len("Buy lamp oil and rope.\n")
    assert note.revision and note.revision.endswith("@" + str(facts["revision"]))
    assert facts["chunks"] == 1 and facts["tables"] == "no tables"
    assert str(facts["original"]).endswith(str(facts["dagster/uri"]).rsplit("/", 1)[1])
    assert "/artifacts/" in str(facts["artifact"])
    assert facts["loom show"] == "loom show docs:note.txt"
    assert isinstance(facts["modified"], float)
