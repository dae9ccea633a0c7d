"""bench/synthetic_home.py grows a home as a real publish leaves it: the folder sensor's whole
scan of the grown folder asks for no partition and no run, and search finds a grown file."""

from __future__ import annotations

import os
import time
from pathlib import Path

from dagster import DagsterInstance, SensorResult, build_sensor_context

from bench.synthetic_home import grow_folder, synthetic_path
from loom_dagster import api
from loom_dagster.definitions import build_definitions
from loom_dagster.partitions import revisions
from loom_dagster.resources.storage import CatalogResource
from loom_dagster.sensors import loom_folders
from loom_dagster.settings import LoomSettings

TEMPLATE = "old-000000.md"


def text(path: str, n: int) -> tuple[str, str]:
    word = "templateword" if n < 0 else f"grownword{n}"
    return f"# {path}\n\nThe keeper logged {word} at the lamp room.\n", word


def whole_tick() -> SensorResult:
    """One evaluation of loom_folders with no cursor: no watcher runs, so it scans every
    folder whole and does its housekeeping (waiting revisions, retention, idle partitions)."""
    settings = LoomSettings.from_env()
    resources = {
        "catalog_db": CatalogResource(database=str(settings.catalog_path)),
        "loom": build_definitions(settings).resources["loom"],
    }
    result = loom_folders(build_sensor_context(instance=DagsterInstance.get(), resources=resources))
    assert isinstance(result, SensorResult)
    return result


def test_a_grown_folder_is_taken_as_published_and_unchanged(
    loom_home: Path, tmp_path: Path
) -> None:
    """About 10 s: one real run publishes the template file, whose stored materializations
    are what the grown partitions copy."""
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / TEMPLATE).write_text(text(TEMPLATE, -1)[0])
    past = time.time() - 120
    os.utime(folder / TEMPLATE, (past, past))
    api.ingest_folder(folder)

    grow_folder(dict(os.environ), "docs", TEMPLATE, 30, text)

    result = whole_tick()
    assert result.dynamic_partitions_requests == []
    assert result.run_requests == []
    assert len(DagsterInstance.get().get_dynamic_partitions(revisions.name)) == 31
    [hit] = api.search("grownword29", limit=1)
    assert hit.chunk.path == synthetic_path(29)
