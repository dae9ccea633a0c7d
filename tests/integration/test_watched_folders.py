"""A watched folder under Dagster's daemon: every file gets its run, whatever the order of the
sensors' ticks and whatever state automation is in (issue 38).

The daemon runs as a real process (`dagster-daemon run` on the workspace), as `loom ui` runs it.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest
from dagster import DagsterInstance

from loom_dagster import api, catalog
from loom_dagster.partitions import PARTITIONS_NAME
from loom_dagster.resources.storage import CatalogResource
from loom_dagster.settings import LoomSettings
from loom_dagster.sources.journal import read_heartbeat
from tests.integration.daemon import (
    every_partition_done,
    last_run_ended,
    published,
    running_daemon,
    runs_per_key,
    stop_group,
    ticked_after,
    wait_for,
)
from tests.integration.loom_command import LOOM, alive_among, descendants, loom

REPO = Path(__file__).resolve().parents[2]
# From the daemon's start to every file published: its first ticks, a run process's start
# (imports, the code location) and the files' extraction, on a busy 2-core machine.
PUBLISHED_WITHIN_S = 240.0
AUTOMATION = "loom_ingest_automation"


def settled_copy(source: Path, target: Path) -> Path:
    """Copy a folder, its files written long enough ago for the sensor to take them."""
    shutil.copytree(source, target)
    past = time.time() - 120
    for path in target.rglob("*"):
        os.utime(path, (past, past))
    return target


def notes(folder: Path, count: int) -> Path:
    folder.mkdir(parents=True)
    for n in range(count):
        (folder / f"note-{n:02}.md").write_text(
            f"# Note {n}\n\nThe lighthouse keeper wrote entry {n} of the watch log.\n"
        )
    past = time.time() - 120
    for path in folder.iterdir():
        os.utime(path, (past, past))
    return folder


def published_paths(settings: LoomSettings) -> dict[str, str]:
    with CatalogResource(database=str(settings.catalog_path)).connect() as con:
        return {path: key for _, _, path, key in catalog.live_documents(con)}


def test_partitions_that_exist_before_the_daemons_first_evaluation_are_all_published(
    loom_home: Path, tmp_path: Path
) -> None:
    """The race of issue 38, made certain: the revision partitions are in the instance before
    the daemon (and so automation) first evaluates anything. Nothing may wait for ever."""
    from tests.integration.test_pipeline_end_to_end import register, tick

    folder = notes(tmp_path / "docs", 5)
    register(folder)
    [add] = tick().dynamic_partitions_requests
    keys = set(add.partition_keys)
    assert len(keys) == 5
    DagsterInstance.get().add_dynamic_partitions(PARTITIONS_NAME, sorted(keys))

    log = tmp_path / "daemon.log"
    with running_daemon(log):
        wait_for("every revision published", published(keys), PUBLISHED_WITHIN_S, log)
        # Automation evaluates again after the runs ended, and asks for nothing of theirs.
        ended = last_run_ended()
        wait_for("automation evaluated again", ticked_after(AUTOMATION, ended), 90, log)

    live = published_paths(LoomSettings.from_env())
    assert set(live.values()) == keys
    # One run took each revision: the sensor's, and nothing automation asked for besides.
    assert runs_per_key(keys) == dict.fromkeys(keys, 1)
    [hit, *_] = api.search("lighthouse keeper entry 3")
    assert hit.chunk.path == "note-03.md"


# The newcomer's path, again and again -----------------------------------------------------------

NEWCOMER_HOMES = 10


@pytest.mark.slow
def test_a_registered_folder_is_published_under_the_daemon_on_every_fresh_home(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, loom_home: Path
) -> None:
    """`loom sources add` a copy of the examples, start the daemon, find every file published
    or refused with its code: ten fresh homes in a row (one in five published nothing before
    issue 38)."""
    for attempt in range(NEWCOMER_HOMES):
        home = tmp_path / f"home-{attempt}"
        monkeypatch.setenv("LOOM_HOME", str(home))
        monkeypatch.setenv("DAGSTER_HOME", str(home / "dagster"))
        folder = settled_copy(REPO / "examples" / "docs", tmp_path / f"docs-{attempt}")
        files = {str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file()}
        added = loom("sources", "add", str(folder))
        assert added.returncode == 0, added.stderr

        log = tmp_path / f"daemon-{attempt}.log"
        with running_daemon(log):
            wait_for(
                f"home {attempt}: every file published or refused",
                every_partition_done(len(files)),
                PUBLISHED_WITHIN_S,
                log,
            )
        settings = LoomSettings.from_env()
        with DagsterInstance.from_config(str(settings.dagster_home)) as dagster:
            keys = dagster.get_dynamic_partitions(PARTITIONS_NAME)
        with CatalogResource(database=str(settings.catalog_path)).connect() as con:
            revisions = catalog.revisions_of(con, keys)
            outcomes = catalog.outcomes_for(con, keys)
        statuses = {r.path: outcomes[key].status for key, r in revisions.items()}
        assert statuses == {
            path: catalog.REFUSED if path.startswith("legacy/") else catalog.PUBLISHED
            for path in files
        }, f"home {attempt}"


# Waiting is visible ---------------------------------------------------------------------------


def test_sources_list_says_what_waits_for_a_run_and_since_when(
    loom_home: Path, tmp_path: Path
) -> None:
    folder = notes(tmp_path / "docs", 3)
    assert loom("sources", "add", str(folder)).returncode == 0

    listed = loom("sources", "list")

    assert listed.returncode == 0, listed.stderr
    [line] = [x for x in listed.stdout.splitlines() if x.startswith("  waiting ")]
    assert re.fullmatch(
        r"  waiting   3 revisions wait for a run, the oldest note-0\d\.md for \d+ s", line
    ), line

    api.ingest_folder(folder)
    assert "  waiting   none" in loom("sources", "list").stdout.splitlines()


def test_the_folder_sensor_turns_the_waiting_check_red_naming_the_file_and_green_again(
    loom_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from dagster import AssetCheckEvaluation

    from loom_dagster import waiting
    from tests.integration.test_pipeline_end_to_end import register, tick

    folder = notes(tmp_path / "docs", 1)
    register(folder)
    monkeypatch.setattr(waiting, "WAIT_BOUND_S", -1.0)  # every waiting revision is late
    instance = DagsterInstance.get()

    [red] = tick().asset_events
    assert isinstance(red, AssetCheckEvaluation)
    assert (red.asset_key.to_user_string(), red.check_name, red.passed) == (
        "loom/original",
        "waiting",
        False,
    )
    assert red.description is not None and "docs: note-00.md has waited" in red.description
    instance.report_runless_asset_event(red)
    assert tick().asset_events == []  # said once, not at every tick

    api.ingest_folder(folder)
    [green] = tick().asset_events
    assert isinstance(green, AssetCheckEvaluation) and green.passed


# `loom watch` -----------------------------------------------------------------------------------


def test_loom_watch_publishes_a_dropped_file_and_leaves_no_process_after_sigterm(
    loom_home: Path, tmp_path: Path
) -> None:
    """`loom watch` (the daemon and the watcher, no webserver) on a home with a registered
    folder: a file written into it after the start is published (through the watcher's
    journal), and SIGTERM ends every process it started. Over 5 s: a daemon's start, a code
    server and a run on a busy machine."""
    folder = notes(tmp_path / "docs", 0)
    assert loom("sources", "add", str(folder)).returncode == 0
    log = tmp_path / "watch.log"
    with open(log, "wb") as out:
        watch = subprocess.Popen(
            [*LOOM, "watch"], stdout=out, stderr=subprocess.STDOUT, start_new_session=True
        )
    try:
        home = Path(os.environ["LOOM_HOME"])
        wait_for("the watcher watches the folder", lambda: watching(home, folder), 120, log)
        (folder / "dropped.md").write_text("# Dropped\n\nThe keeper saw a comet.\n")
        wait_for("the dropped file published", every_partition_done(1), PUBLISHED_WITHIN_S, log)
        family = [watch.pid, *descendants(watch.pid)]
        assert len(family) >= 4  # loom watch, its daemon, the watcher, a code server

        watch.send_signal(signal.SIGTERM)

        assert watch.wait(timeout=30) == 128 + signal.SIGTERM
        assert alive_among(family) == []
    finally:
        stop_group(watch)
    assert "loom watch: stopped by SIGTERM" in log.read_text(errors="replace")
    assert not (home / "watch" / "watcher.json").exists()  # the watcher ended on its own
    [hit, *_] = api.search("keeper comet")
    assert hit.chunk.path == "dropped.md"


def watching(home: Path, folder: Path) -> bool:
    beat = read_heartbeat(home)
    return beat is not None and str(folder) in beat.roots
