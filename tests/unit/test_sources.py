"""Scanning a registered folder: keys, change detection, settling, the per-tick cap, deletions."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest

from loom_dagster.errors import SourceError
from loom_dagster.sources import (
    KEY_PATTERN,
    FileState,
    Source,
    document_id,
    revision_key,
    scan,
    validate_source_name,
)


def make(folder: Path, files: dict[str, str]) -> Source:
    for name, text in files.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return Source("docs", str(folder))


def state_of(folder: Path, name: str) -> FileState:
    stat = (folder / name).stat()
    return FileState(
        stat.st_size, stat.st_mtime_ns, hashlib.sha256((folder / name).read_bytes()).hexdigest()
    )


def test_revision_keys_use_only_the_characters_the_ui_can_select() -> None:
    key = revision_key("my docs", "notes/Ünïcode file (1).md", "ab" * 32)
    assert KEY_PATTERN.match(key)
    assert key.endswith("@" + "ab" * 8)


def test_two_files_of_one_name_in_different_folders_are_different_documents() -> None:
    assert document_id("docs", "a/README.md") != document_id("docs", "b/README.md")
    assert document_id("docs", "a/README.md").startswith("README.md~")


def test_a_first_scan_registers_every_file_in_path_order(tmp_path: Path) -> None:
    source = make(tmp_path, {"b.md": "b", "a/c.txt": "c", ".hidden": "h"})
    result = scan(source, {})
    assert [r.path for r in result.new] == ["a/c.txt", "b.md"]
    assert result.unchanged == () and result.deleted == ()


def test_an_unchanged_file_is_not_hashed_again(tmp_path: Path) -> None:
    source = make(tmp_path, {"a.md": "a"})
    real = state_of(tmp_path, "a.md")
    known = {"a.md": FileState(real.size, real.mtime_ns, sha256="not read again")}
    assert scan(source, known).unchanged == ("a.md",)


def test_a_touched_file_with_the_same_bytes_is_unchanged(tmp_path: Path) -> None:
    source = make(tmp_path, {"a.md": "a"})
    known = {"a.md": state_of(tmp_path, "a.md")}
    os.utime(tmp_path / "a.md", ns=(1, 1))
    result = scan(source, known)
    assert result.new == () and result.unchanged == ("a.md",)


def test_a_changed_file_is_a_new_revision_of_the_same_document(tmp_path: Path) -> None:
    source = make(tmp_path, {"a.md": "a"})
    known = {"a.md": state_of(tmp_path, "a.md")}
    (tmp_path / "a.md").write_text("a, longer")
    [revision] = scan(source, known).new
    assert revision.document_id == document_id("docs", "a.md")
    assert revision.sha256 == hashlib.sha256(b"a, longer").hexdigest()


def test_a_file_still_being_written_waits_for_a_later_scan(tmp_path: Path) -> None:
    source = make(tmp_path, {"a.md": "a"})
    result = scan(source, {}, settle_s=60)
    assert result.new == () and result.unsettled == ("a.md",)


def test_a_deleted_file_is_reported(tmp_path: Path) -> None:
    source = make(tmp_path, {"a.md": "a"})
    known = {"a.md": state_of(tmp_path, "a.md"), "gone.md": FileState(1, 1, "x")}
    assert scan(source, known).deleted == ("gone.md",)


def test_the_per_tick_cap_stops_early_and_the_cursor_resumes_where_it_stopped(
    tmp_path: Path,
) -> None:
    source = make(tmp_path, {f"{n}.md": str(n) for n in range(5)})
    first = scan(source, {"gone.md": FileState(1, 1, "x")}, max_hashed=2)
    assert [r.path for r in first.new] == ["0.md", "1.md"]
    assert first.resume_after == "1.md"
    assert first.deleted == ()  # an early stop has not seen every path

    second = scan(
        source, {"gone.md": FileState(1, 1, "x")}, max_hashed=2, resume_after=first.resume_after
    )
    assert [r.path for r in second.new] == ["2.md", "3.md"]
    third = scan(
        source, {"gone.md": FileState(1, 1, "x")}, max_hashed=2, resume_after=second.resume_after
    )
    assert [r.path for r in third.new] == ["4.md"]
    assert third.resume_after is None and third.deleted == ("gone.md",)


def test_include_globs_keep_only_matching_files(tmp_path: Path) -> None:
    make(tmp_path, {"a.md": "a", "sub/b.md": "b", "c.txt": "c"})
    result = scan(Source("docs", str(tmp_path), ("**/*.md",)), {})
    assert [r.path for r in result.new] == ["a.md", "sub/b.md"]


def test_a_missing_folder_is_a_coded_error(tmp_path: Path) -> None:
    with pytest.raises(SourceError) as raised:
        scan(Source("docs", str(tmp_path / "nowhere")), {})
    assert raised.value.code == "missing_folder"


@pytest.mark.parametrize("name", ["", "has space", "a/b", "x" * 65, "-leading"])
def test_a_source_name_outside_the_safe_characters_is_refused(name: str) -> None:
    with pytest.raises(SourceError) as raised:
        validate_source_name(name)
    assert raised.value.code == "invalid_source"
