"""Nothing lost or doubled while the watcher runs (issue 39, part 4): a file written again while
its first revision is in flight, deleted before its run publishes, saved by rename, moved
between two watched folders, or written in two halves.

One watcher over seven registered folders, as a real process; every case runs side by side in
it, each in its own folder, and each test reads its case's end from the catalog once the watcher
has gone quiet and stopped. Runs are held at the end of their first step and again before they
publish (hold.py's "original" and "chunks" points, set in the watcher's environment), so that
"in flight" is a fact, not a guess.
Slow: the scenario needs about eight looks of `loom watch` one after another, each followed
by a run's start: about 90 s on this 2-core machine.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest
from dagster import AssetKey, AssetRecordsFilter, DagsterRunStatus, RunsFilter

from loom_dagster import api, catalog, hold
from loom_dagster.catalog.history import RevisionHistory, file_history
from loom_dagster.extractor.local import RunningExtractor
from loom_dagster.extractor.settings import ENV_TOKEN, ENV_URL
from loom_dagster.jobs import SYNC_JOB
from loom_dagster.partitions import HOLDING
from loom_dagster.pipeline import SETTLE_S
from loom_dagster.resources.storage import CatalogResource
from loom_dagster.settings import LoomSettings
from loom_dagster.sources import revision_key
from tests.integration.daemon import (
    instance,
    last_run_ended,
    published,
    stop_group,
    ticked_after,
    wait_for,
)
from tests.integration.loom_command import LOOM

pytestmark = pytest.mark.slow

PUBLISHED = AssetKey(["loom", "published"])
# The watcher's look at the folders (the sensor's name, kept by `loom watch`).
WATCHER = "loom_folders"
# From the watcher's start to its first run held: the daemon's start, a look, a run's start.
HELD_WITHIN_S = 240.0
# A change seen and its run (or a sync's) ended: a look and a run's start, on a busy machine.
CHANGE_DONE_WITHIN_S = 240.0
FOLDERS = (
    "rewritten",
    "deleted",
    "deleted-late",
    "renamed",
    "moved-from",
    "moved-to",
    "halves",
)

V1 = "# Tide table\n\nThe harbour master posted the first tide table, word marlinspike.\n"
V2 = "# Tide table\n\nThe harbour master posted the second tide table, word gunwale.\n"
GONE = "# Ferry\n\nThe ferry timetable for the winter months, word capstan.\n"
LATE = "# Lock\n\nThe lock keeper's hours on the canal, word sternpost.\n"
SAVED = "# Chart\n\nThe chart room keeps the survey of the sandbanks, word bowsprit.\n"
MOVING = "# Buoys\n\nEvery buoy of the channel with its light, word binnacle.\n"
FIRST_HALF = "# Log\n\nThe first half of the watch log ends at the word halyard"
SECOND_HALF = ", and the second half begins with the word taffrail.\n"


@contextmanager
def running_watcher(log: Path) -> Iterator[subprocess.Popen[bytes]]:
    """The watcher as a real process, with this process's environment: `loom watch` (Dagster's
    daemon running the folder sensor, and the folder watcher beside it). The one place the tests
    start it; ended with every process it started, whatever the test did."""
    with open(log, "wb") as out:
        process = subprocess.Popen(
            [*LOOM, "watch"], stdout=out, stderr=subprocess.STDOUT, start_new_session=True
        )
    try:
        yield process
    finally:
        stop_group(process)


def sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def key_of(source: str, path: str, text: str) -> str:
    return revision_key(source, path, sha(text))


def settled(path: Path, text: str) -> Path:
    """A file written long enough ago for the watcher to take it at its first look."""
    path.write_text(text)
    past = time.time() - 120
    os.utime(path, (past, past))
    return path


def runs_in_flight() -> int:
    with instance() as dagster:
        return len(dagster.get_run_records(RunsFilter(statuses=HOLDING)))


def run_ended(job: str, after: float) -> Callable[[], bool]:
    def probe() -> bool:
        with instance() as dagster:
            runs = dagster.get_run_records(RunsFilter(job_name=job))
        return any(r.end_time is not None and r.end_time > after for r in runs)

    return probe


def quiet_after(moment: float) -> Callable[[], bool]:
    """Nothing in flight, and the watcher looked again, after `moment` and after the last run
    ended, without asking for a run: every change it will ever see is done."""
    from dagster._core.scheduler.instigation import InstigatorType, TickStatus

    def probe() -> bool:
        if runs_in_flight():
            return False
        since = max(moment, last_run_ended())
        with instance() as dagster:
            for state in dagster.all_instigator_state(instigator_type=InstigatorType.SENSOR):
                if state.instigator_name != WATCHER:
                    continue
                ticks = dagster.get_ticks(state.instigator_origin_id, state.selector_id, limit=5)
                if any(
                    t.timestamp > since and t.status != TickStatus.STARTED and not t.run_ids
                    for t in ticks
                ):
                    return runs_in_flight() == 0
        return False

    return probe


@dataclass(frozen=True)
class Ended:
    """What the catalog and the instance hold once the watcher stopped."""

    histories: dict[tuple[str, str], list[RevisionHistory]]
    live: dict[tuple[str, str], str]  # (source, path) -> live revision key
    failed_runs: list[str]
    published_events: dict[str, list[str]]  # revision key -> the `status` of each event

    def history(self, source: str, path: str) -> list[RevisionHistory]:
        return self.histories[(source, path)]


def published_outcomes(history: RevisionHistory) -> int:
    return sum(1 for o in history.outcomes if o.status == catalog.PUBLISHED)


@pytest.fixture(scope="module")
def ended(
    tmp_path_factory: pytest.TempPathFactory, reference_service: RunningExtractor
) -> Iterator[Ended]:
    root = tmp_path_factory.mktemp("watched-edits")
    holds = root / "holds"
    holds.mkdir()
    folders = {name: root / name for name in FOLDERS}
    with pytest.MonkeyPatch.context() as env:
        env.setenv("LOOM_HOME", str(root / "home"))
        env.setenv("DAGSTER_HOME", str(root / "home" / "dagster"))
        env.delenv("LOOM_OBJECT_STORE_URL", raising=False)
        env.setenv(ENV_URL, reference_service.url)
        env.setenv(ENV_TOKEN, reference_service.token)
        env.setenv("LOOM_EMBEDDER", "ngram")
        # Every run holds at the end of its first step, and again once its chunks are cut
        # (before it publishes), until that point's release file appears: the first run, with
        # every file of the first look, is in flight while the test acts.
        env.setenv(hold.ENV_AT, "original,chunks")
        env.setenv(hold.ENV_DIR, str(holds))
        settings = LoomSettings.from_env()
        api.prepare_environment(settings)
        for name, folder in folders.items():
            folder.mkdir()
            # A neighbour in each folder: a scan that would retire a folder's every document is
            # held (lifecycle.RetireGuard), which is not what these cases are about.
            settled(folder / "keep.md", f"# Keep\n\nThe {name} folder's own standing note.\n")
        settled(folders["rewritten"] / "x.md", V1)
        settled(folders["deleted-late"] / "x.md", LATE)
        settled(folders["renamed"] / "x.md", V1)
        settled(folders["moved-from"] / "buoys.md", MOVING)
        for name, folder in folders.items():
            api.register_source(settings, folder, name=name)

        log = root / "watcher.log"
        with running_watcher(log):
            reached = holds / "original.reached"
            wait_for("the first run held", reached.exists, HELD_WITHIN_S, log)
            first_run = reached.read_text()
            # (b) a file alone in its look, so alone in its run (a partition by name).
            settled(folders["deleted"] / "x.md", GONE)
            wait_for(
                "its own run held",
                lambda: reached.read_text() not in ("", first_run),
                CHANGE_DONE_WITHIN_S,
                log,
            )
            # (a) written again and (b) deleted while their first revision is in flight; (e)
            # half a file, then a pause past the settle time across one of the watcher's looks.
            (folders["rewritten"] / "x.md").write_text(V2)
            deleted_at = time.time()
            (folders["deleted"] / "x.md").unlink()
            halves = folders["halves"] / "log.md"
            halves.write_text(FIRST_HALF)
            settled_half = time.time() + SETTLE_S + 1
            # The deletion seen and its document retired before its run goes on: a run must
            # neither fail nor bring back what was retired under it.
            wait_for("a look after the changes", ticked_after(WATCHER, settled_half), 120, log)
            with halves.open("a") as rest:  # (e) the rest
                rest.write(SECOND_HALF)
            wait_for(
                "the deletion retired",
                # A sync ended after the deletion: with the watcher it may end before the half
                # has settled, so not "after settled_half".
                run_ended(SYNC_JOB, deleted_at),
                CHANGE_DONE_WITHIN_S,
                log,
            )
            (holds / "original.release").write_text("")
            # (b) again, the other order: deleted once its chunks are cut, before any run
            # publishes (every run holds at "chunks", before the catalog's switch).
            wait_for("a run about to publish", (holds / "chunks.reached").exists, 120, log)
            (folders["deleted-late"] / "x.md").unlink()
            (holds / "chunks.release").write_text("")
            first = {key_of("renamed", "x.md", V1), key_of("moved-from", "buoys.md", MOVING)}
            wait_for("the first files published", published(first), CHANGE_DONE_WITHIN_S, log)

            # (c) an editor's save: the new bytes to a temporary name, renamed over the file.
            temporary = folders["renamed"] / "x.md.tmp"
            temporary.write_text(SAVED)
            os.replace(temporary, folders["renamed"] / "x.md")
            # (d) moved from one watched folder to another.
            os.replace(folders["moved-from"] / "buoys.md", folders["moved-to"] / "buoys.md")
            last_write = time.time()
            final = {
                key_of("rewritten", "x.md", V2),
                key_of("renamed", "x.md", SAVED),
                key_of("moved-to", "buoys.md", MOVING),
                key_of("halves", "log.md", FIRST_HALF + SECOND_HALF),
            }
            wait_for("the last bytes published", published(final), CHANGE_DONE_WITHIN_S, log)
            wait_for("the watcher quiet", quiet_after(last_write + SETTLE_S), 240, log)

        with instance() as dagster:
            failed = [
                f"{r.dagster_run.job_name} {r.dagster_run.run_id}"
                for r in dagster.get_run_records(RunsFilter(statuses=[DagsterRunStatus.FAILURE]))
            ]
            records = dagster.fetch_materializations(
                AssetRecordsFilter(asset_key=PUBLISHED), limit=10000
            ).records
        events: dict[str, list[str]] = {}
        for record in sorted(records, key=lambda r: r.storage_id):
            materialization = record.asset_materialization
            if materialization is None or materialization.partition is None:
                continue
            status = materialization.metadata.get("status")
            events.setdefault(materialization.partition, []).append(
                str(getattr(status, "value", status))
            )
        paths = [
            (name, path)
            for name in FOLDERS
            for path in ("keep.md", "x.md", "x.md.tmp", "buoys.md", "log.md")
        ]
        with CatalogResource(database=str(settings.catalog_path)).connect() as con:
            histories = {(s, p): file_history(con, s, p) for s, p in paths}
            live = {(s, p): key for _, s, p, key in catalog.live_documents(con)}
        yield Ended(histories, live, failed, events)


def test_a_file_written_again_while_its_first_revision_is_in_flight_ends_with_its_last_bytes_once(
    ended: Ended,
) -> None:
    last = key_of("rewritten", "x.md", V2)
    assert ended.live[("rewritten", "x.md")] == last
    [newest] = [h for h in ended.history("rewritten", "x.md") if h.revision.key == last]
    assert published_outcomes(newest) == 1
    hits = [h for h in api.search("harbour master tide table") if h.chunk.source == "rewritten"]
    assert [(h.chunk.path, h.chunk.chunk.revision) for h in hits] == [("x.md", last)]


def test_a_file_deleted_while_its_own_run_is_in_flight_publishes_nothing_and_fails_no_run(
    ended: Ended,
) -> None:
    """Deleted once its run stored its bytes, and retired (its partition with it) before the
    run went on."""
    assert ended.failed_runs == []
    assert ("deleted", "x.md") not in ended.live
    history = ended.history("deleted", "x.md")
    assert [h.revision.key for h in history] == [key_of("deleted", "x.md", GONE)]
    assert published_outcomes(history[0]) == 0, history[0].outcomes
    assert api.search("ferry timetable capstan", sources=["deleted"]) == []


def test_a_file_deleted_after_its_chunks_are_cut_is_not_published(ended: Ended) -> None:
    """Deleted at the last moment before its run's publishing: the run records it gone
    (`source_gone`) instead of making it live for the next look to retire."""
    assert ended.failed_runs == []
    assert ("deleted-late", "x.md") not in ended.live
    [history] = ended.history("deleted-late", "x.md")
    assert history.revision.key == key_of("deleted-late", "x.md", LATE)
    assert published_outcomes(history) == 0, history.outcomes
    assert api.search("lock keeper canal sternpost", sources=["deleted-late"]) == []


def test_an_editors_save_by_rename_is_one_new_revision_of_the_file_never_a_deletion(
    ended: Ended,
) -> None:
    before, after = key_of("renamed", "x.md", V1), key_of("renamed", "x.md", SAVED)
    assert [h.revision.key for h in ended.history("renamed", "x.md")] == [before, after]
    assert ended.live[("renamed", "x.md")] == after
    # The revision it replaced was superseded, never retired as a deleted file's.
    assert ended.published_events[before][0] == catalog.PUBLISHED
    assert ended.published_events[before][1:] == [f"superseded by {after}"]
    assert [h.status for h in ended.history("renamed", "x.md")] == ["superseded", "live"]
    # The editor's temporary file never became a document.
    assert ended.history("renamed", "x.md.tmp") == []


def test_a_file_moved_between_two_watched_folders_is_retired_from_one_and_published_in_the_other(
    ended: Ended,
) -> None:
    [left] = ended.history("moved-from", "buoys.md")
    assert left.status == "retired"
    assert ("moved-from", "buoys.md") not in ended.live
    assert ended.live[("moved-to", "buoys.md")] == key_of("moved-to", "buoys.md", MOVING)
    hits = api.search("buoy channel light binnacle")
    assert [(h.chunk.source, h.chunk.path) for h in hits] == [("moved-to", "buoys.md")]


def test_a_file_written_in_two_halves_ends_published_whole(ended: Ended) -> None:
    """The watcher cannot tell a writer's pause past the settle time from a file's end: the
    half it saw may be a revision of its own (published or refused as changed under its run),
    but the whole file is the revision that ends live, and the half never outlives it."""
    whole = key_of("halves", "log.md", FIRST_HALF + SECOND_HALF)
    half = key_of("halves", "log.md", FIRST_HALF)
    history = ended.history("halves", "log.md")
    assert {h.revision.key for h in history} <= {half, whole}
    assert history[-1].revision.key == whole
    assert ended.live[("halves", "log.md")] == whole
    assert [h.status for h in history if h.revision.key == half] in (
        [],
        ["superseded"],
        ["refused"],
    )
    hits = [h for h in api.search("watch log halyard taffrail") if h.chunk.source == "halves"]
    assert [h.chunk.chunk.revision for h in hits] == [whole]
