"""Issue 40, rows 1, 3 and 9 through `loom ingest`: a sparse file of gigabytes, folders that
cannot be read or are found empty, and the things a scan skips."""

from __future__ import annotations

import time
from pathlib import Path

from loom_dagster import api
from loom_dagster.settings import LoomSettings
from tests.integration.test_pipeline_end_to_end import write


def test_a_sparse_2gib_file_is_refused_too_large_unread_and_the_others_publish(
    loom_home: Path, tmp_path: Path
) -> None:
    folder = tmp_path / "docs"
    write(folder, "a.md", "# A\n\nFirst note.\n")
    write(folder, "b.md", "# B\n\nSecond note.\n")
    with open(folder / "big.csv", "wb") as handle:
        handle.truncate(2 << 30)  # `truncate -s 2G big.csv`: nothing on disk
    started = time.monotonic()
    report = api.ingest_folder(folder)
    elapsed = time.monotonic() - started

    by_path = {o.path: o for o in report.outcomes}
    assert by_path["big.csv"].status == "refused"
    assert by_path["big.csv"].detail.startswith(
        f"too_large: the file is {2 << 30} bytes, over the {64 << 20} the extractor takes"
    )
    assert by_path["a.md"].status == by_path["b.md"].status == "published"
    assert report.conserved
    store = LoomSettings.from_env().home / "store"
    assert max(p.stat().st_size for p in store.rglob("*") if p.is_file()) < 1 << 20
    assert elapsed < 60  # it was 28 s of reading 2 GiB before the refusal, on a fast disk
