"""Issue 15 part 3, crash thinking: a file that changes after the scan's checks and before its
hash ends is refused for that scan (`source_changed`), never registered with the size the scan
saw and the hash of other bytes."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from loom_dagster import sources
from loom_dagster.sources import Source, scan


def changed_once_opened(monkeypatch: pytest.MonkeyPatch, change: Callable[[], None]) -> None:
    """The scan's open (its device, inode, size and mtime checked) succeeds; then `change`."""
    real = sources.open_checked

    @contextmanager
    def open_then_change(*args: object, **kwargs: object) -> Iterator[int]:
        with real(*args, **kwargs) as fd:  # type: ignore[arg-type]
            change()
            yield fd

    monkeypatch.setattr(sources.scanning, "open_checked", open_then_change)


def folder_with(tmp_path: Path, text: str) -> tuple[Source, Path]:
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "a.txt").write_text(text)
    return Source("docs", str(folder)), folder / "a.txt"


def test_a_file_that_grows_while_it_is_hashed_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    source, path = folder_with(tmp_path, "first")

    def append() -> None:
        with open(path, "a") as handle:
            handle.write(" and more")

    changed_once_opened(monkeypatch, append)
    result = scan(source, {})
    assert result.new == ()
    assert [(r.path, r.code) for r in result.refused] == [("a.txt", "source_changed")]


def test_a_file_rewritten_in_place_while_it_is_hashed_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    source, path = folder_with(tmp_path, "first")
    before = path.stat()

    def rewrite() -> None:
        with open(path, "r+") as handle:  # same inode, same size, other bytes
            handle.write("FIRST")
        os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns + 1_000_000))

    changed_once_opened(monkeypatch, rewrite)
    result = scan(source, {})
    assert result.new == ()
    [refused] = result.refused
    assert (refused.path, refused.code) == ("a.txt", "source_changed")


def test_a_file_that_shrinks_while_it_is_hashed_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    source, path = folder_with(tmp_path, "first")
    changed_once_opened(monkeypatch, lambda: os.truncate(path, 2))
    result = scan(source, {})
    assert result.new == ()
    assert [r.code for r in result.refused] == ["source_changed"]


def test_a_file_left_alone_is_hashed_as_it_was_scanned(tmp_path: Path) -> None:
    source, path = folder_with(tmp_path, "first")
    [revision] = scan(source, {}).new
    assert (revision.size, revision.path) == (5, "a.txt")
    assert revision.sha256 == hashlib.sha256(b"first").hexdigest()
