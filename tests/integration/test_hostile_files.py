"""Issue 40, rows 1, 3 and 9 through `loom ingest`: a sparse file of gigabytes, folders that
cannot be read or are found empty, and the things a scan skips."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from loom_dagster import api
from loom_dagster.settings import LoomSettings
from tests.integration.test_command import loom
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


def test_a_folder_found_empty_holds_its_retirement_until_confirmed(
    loom_home: Path, tmp_path: Path
) -> None:
    folder = tmp_path / "share"
    write(folder, "a.md", "# A\n\nAlpha note.\n")
    write(folder, "b.md", "# B\n\nBeta note.\n")
    assert api.ingest_folder(folder).count("published") == 2
    for name in ("a.md", "b.md"):  # an unmounted share leaves its mount point empty
        (folder / name).unlink()

    held = api.ingest_folder(folder)
    assert held.retired == []
    assert held.held == ["a.md", "b.md"]
    assert held.held_line == (
        "share: retirement held: all 2 of its documents would be retired; 2 document(s) stay "
        "live until `loom ingest --confirm-retire` (or the files come back)"
    )
    assert [h.chunk.text for h in api.search("Alpha")]  # still served

    confirmed = api.ingest_folder(folder, confirm_retire=True)
    assert confirmed.retired == ["a.md", "b.md"]


def test_an_unreadable_subfolder_keeps_its_documents_and_is_said_in_one_line(
    loom_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "docs"
    write(folder, "a.md", "# A\n\nAlpha note.\n")
    write(folder / "locked", "l.md", "# L\n\nLocked note.\n")
    assert api.ingest_folder(folder).count("published") == 2
    real_scandir = os.scandir

    def refusing(path: object = ".") -> object:  # as chmod 000 is to a user who is not root
        if Path(str(path)) == folder / "locked":
            raise PermissionError(13, "Permission denied", str(path))
        return real_scandir(path)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "scandir", refusing)
    report = api.ingest_folder(folder)
    assert report.retired == []
    [skipped] = [o for o in report.outcomes if o.status == "skipped"]
    assert (skipped.path, skipped.detail) == (
        "locked",
        "unreadable_folder: the folder cannot be read (Permission denied): "
        "its documents stay live until it can",
    )
    assert report.conserved
    assert [h.chunk.text for h in api.search("Locked")]


def test_symlinks_and_a_fifo_are_announced_and_counted_by_loom_ingest(
    loom_home: Path, tmp_path: Path
) -> None:
    folder = tmp_path / "docs"
    write(folder, "a.md", "# A\n\nAlpha note.\n")
    (folder / "shadow.txt").symlink_to("/etc/shadow")
    (folder / "loop.txt").symlink_to(folder / "loop.txt")
    os.mkfifo(folder / "pipe.txt")
    result = loom("ingest", str(folder))
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert (
        "skipped    loop.txt  symlink: a symbolic link: not followed, nothing of it read" in lines
    )
    assert "skipped    pipe.txt  not_regular: a FIFO, not a regular file: not read" in lines
    assert (
        "skipped    shadow.txt  symlink: a symbolic link: not followed, nothing of it read" in lines
    )
    assert "files 4 = published 1 + refused 0 + unchanged 0 + skipped 3" in lines
    # `loom sources list` says the same of the folder, from the scan it makes for what waits.
    listed = loom("sources", "list")
    assert listed.returncode == 0, listed.stderr
    assert [line for line in listed.stdout.splitlines() if line.startswith("  skipped")] == [
        "  skipped   loop.txt  symlink: a symbolic link: not followed, nothing of it read",
        "  skipped   pipe.txt  not_regular: a FIFO, not a regular file: not read",
        "  skipped   shadow.txt  symlink: a symbolic link: not followed, nothing of it read",
    ]


def test_the_sync_jobs_scan_holds_a_mass_retirement_too(loom_home: Path, tmp_path: Path) -> None:
    # What the `sync` job (jobs.sync_folders) runs when the folder sensor saw deleted files:
    # a folder found empty keeps its documents live there as well, and the hold is said.
    from loom_dagster import catalog, pipeline
    from loom_dagster.search.lexical import LexicalIndex

    folder = tmp_path / "share"
    write(folder, "a.md", "# A\n\nAlpha note.\n")
    write(folder, "b.md", "# B\n\nBeta note.\n")
    assert api.ingest_folder(folder).count("published") == 2
    for name in ("a.md", "b.md"):
        (folder / name).unlink()

    settings = LoomSettings.from_env()
    said: list[str] = []
    with catalog.connect(settings.catalog_path) as con:
        retired = pipeline.sync_folders(
            con,
            LexicalIndex(str(settings.search_dir)),
            catalog.list_sources(con),
            settle_s=0.0,
            say=said.append,
        )
        live = catalog.live_document_paths(con, "share")
    assert retired == []
    assert said == [
        "share: retirement held: all 2 of its documents would be retired; 2 document(s) stay "
        "live until `loom ingest --confirm-retire` (or the files come back)"
    ]
    assert sorted(live) == ["a.md", "b.md"]
    assert [h.chunk.text for h in api.search("Alpha")]  # still served
