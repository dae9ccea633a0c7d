"""Scanning a registered folder: keys, change detection, settling, the per-tick cap, deletions."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest

from loom_dagster import sources
from loom_dagster.display import printable
from loom_dagster.errors import SourceError
from loom_dagster.sources import (
    KEY_PATTERN,
    SQL_DIALECTS,
    FileState,
    Refusal,
    Revision,
    Source,
    document_id,
    open_checked,
    options_json,
    parse_option,
    read_all,
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


def test_a_revision_key_keeps_a_readable_trace_of_its_path() -> None:
    # The file's name first: the UI cuts a long key in its middle, and shows its start and end
    # (issue 28 part 7: `runbooks__disk…d11cfbdc946383` read alike for every runbook).
    key = revision_key("docs", "runbooks/disk full.md", "ab" * 32)
    assert key.startswith("disk-full.md__runbooks~") and KEY_PATTERN.match(key)
    assert key.split("~")[1][:10] == document_id("docs", "runbooks/disk full.md").split("~")[1]
    deep = revision_key("docs", "/".join(["folder"] * 40) + "/last.md", "ab" * 32)
    assert deep.split("~")[0].startswith("last.md__folder__") and len(deep) <= 120
    assert revision_key("docs", "top.md", "ab" * 32).startswith("top.md~")


def test_a_file_scanned_again_with_its_bytes_keeps_the_key_it_was_registered_under(
    tmp_path: Path,
) -> None:
    """Keys made before issue 28 (the path in order) keep working: a file copied over with the
    same bytes (another inode) is the revision it was, under its stored key."""
    (tmp_path / "runbooks").mkdir()
    (tmp_path / "runbooks" / "a.md").write_text("# A\n")
    source = Source(name="docs", root=str(tmp_path))
    [first] = scan(source, {}, settle_s=0).new
    old_key = "runbooks__a.md~" + first.key.split("~", 1)[1]
    known = {
        "runbooks/a.md": FileState(
            first.size + 0,
            first.mtime_ns - 1,
            first.sha256,
            first.device,
            first.inode,
            first.options,
            old_key,
        )
    }

    result = scan(source, known, settle_s=0)

    assert [r.key for r in result.moved] == [old_key] and not result.new


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


# Reading a file the scan saw, and only that file (issue 12.1) ----------------------------------


def scan_identity(folder: Path, name: str) -> dict[str, int]:
    stat = os.stat(folder / name, follow_symlinks=False)
    return {"device": stat.st_dev, "inode": stat.st_ino, "size": stat.st_size}


def read_checked(folder: Path, name: str, identity: dict[str, int]) -> bytes:
    with open_checked(str(folder), name, **identity) as fd:
        return read_all(fd, identity["size"])


@pytest.fixture
def secret(tmp_path: Path) -> Path:
    outside = tmp_path / "outside"
    outside.mkdir()
    path = outside / "shadow"
    path.write_text("root:SECRET-HASH:19000\n")
    return path


def test_the_file_the_scan_saw_is_read(tmp_path: Path) -> None:
    make(tmp_path / "docs", {"sub/a.txt": "hello"})
    assert (
        read_checked(tmp_path / "docs", "sub/a.txt", scan_identity(tmp_path / "docs", "sub/a.txt"))
        == b"hello"
    )


def test_a_file_swapped_for_a_symlink_after_the_scan_is_refused(
    tmp_path: Path, secret: Path
) -> None:
    folder = tmp_path / "docs"
    make(folder, {"a.txt": "x" * len(secret.read_bytes())})
    identity = scan_identity(folder, "a.txt")
    (folder / "a.txt").unlink()
    (folder / "a.txt").symlink_to(secret)
    with pytest.raises(SourceError) as raised:
        read_checked(folder, "a.txt", identity)
    assert raised.value.code == "source_changed"
    assert "a symlink is in its path" in raised.value.message


def test_a_parent_folder_swapped_for_a_symlink_after_the_scan_is_refused(
    tmp_path: Path, secret: Path
) -> None:
    folder = tmp_path / "docs"
    make(folder, {"sub/shadow": "y" * len(secret.read_bytes())})
    identity = scan_identity(folder, "sub/shadow")
    (folder / "sub").rename(tmp_path / "moved")
    (folder / "sub").symlink_to(secret.parent)
    with pytest.raises(SourceError) as raised:
        read_checked(folder, "sub/shadow", identity)
    assert raised.value.code == "source_changed"
    assert "a symlink is in its path" in raised.value.message


def test_another_file_of_the_same_size_at_the_path_is_refused(tmp_path: Path) -> None:
    folder = tmp_path / "docs"
    make(folder, {"a.txt": "first"})
    identity = scan_identity(folder, "a.txt")
    (folder / "new").write_text("other")
    os.replace(folder / "new", folder / "a.txt")
    with pytest.raises(SourceError) as raised:
        read_checked(folder, "a.txt", identity)
    assert raised.value.code == "source_changed"
    assert "another file is at its path" in raised.value.message


def test_a_file_gone_since_the_scan_is_source_gone(tmp_path: Path) -> None:
    folder = tmp_path / "docs"
    make(folder, {"a.txt": "first"})
    identity = scan_identity(folder, "a.txt")
    (folder / "a.txt").unlink()
    with pytest.raises(SourceError) as raised:
        read_checked(folder, "a.txt", identity)
    assert raised.value.code == "source_gone"


def test_a_file_swapped_for_a_symlink_between_stat_and_hash_is_refused_by_the_scan(
    tmp_path: Path, secret: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "docs"
    source = make(folder, {"a.txt": "x" * len(secret.read_bytes()), "b.txt": "b"})
    real_walk = sources.walk

    def walk_then_swap(src: Source) -> tuple[list[tuple[str, os.stat_result]], list[Refusal]]:
        listed = real_walk(src)
        (folder / "a.txt").unlink()
        (folder / "a.txt").symlink_to(secret)
        return listed

    monkeypatch.setattr(sources.scanning, "walk", walk_then_swap)
    result = scan(source, {})
    assert [r.path for r in result.new] == ["b.txt"]
    assert [(r.path, r.code) for r in result.refused] == [("a.txt", "source_changed")]


# Names that are not UTF-8 (issue 12.5) ---------------------------------------------------------


def test_a_name_that_is_not_utf8_is_refused_and_its_neighbours_are_scanned(tmp_path: Path) -> None:
    source = make(tmp_path, {"a.txt": "a", "z.txt": "z"})
    with open(os.path.join(os.fsencode(tmp_path), b"bad\xff.txt"), "wb") as handle:
        handle.write(b"bad")
    result = scan(source, {})
    assert [r.path for r in result.new] == ["a.txt", "z.txt"]
    [refused] = result.refused
    assert (refused.code, printable(refused.path)) == ("invalid_name", "bad\\udcff.txt")


# Extraction options per glob (issue 11.5) ------------------------------------------------------


def test_an_option_applies_to_the_files_its_glob_matches_and_a_later_one_wins() -> None:
    source = Source(
        "docs",
        "/nowhere",
        options=(
            parse_option("encoding=utf-16"),
            parse_option("legacy/*.txt:encoding=latin-1"),
            parse_option("data/*.dat:format=csv"),
        ),
    )
    assert options_json(source, "legacy/r.txt") == '{"encoding":"latin-1"}'
    assert options_json(source, "a.md") == '{"encoding":"utf-16"}'
    revision = Revision(
        "k", "d", "docs", "data/x.dat", 1, 1, "s", options=options_json(source, "data/x.dat")
    )
    assert revision.extraction_options() == ("csv", {"encoding": "utf-16"})


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        (
            "encoding",
            "option 'encoding' is not [GLOB:]NAME=VALUE (e.g. 'legacy/*.txt:encoding=latin-1')",
        ),
        ("*.txt:colour=red", "unknown option 'colour' (options: encoding, sql_dialect, format)"),
        ("*.txt:encoding=klingon", "encoding 'klingon' is not a known text codec"),
        ("*.txt:encoding=base64", "encoding 'base64' is not a known text codec"),
        ("*.sql:sql_dialect=postgres,x=1", "sql_dialect 'postgres,x=1' is not a dialect"),
        ("*.dat:format=doc", "format 'doc' is not one of markdown, html"),
        (":encoding=latin-1", "option ':encoding=latin-1' has an empty glob"),
    ],
)
def test_a_bad_option_is_refused_with_its_reason(spec: str, message: str) -> None:
    with pytest.raises(SourceError) as raised:
        parse_option(spec)
    assert raised.value.code == "invalid_option"
    assert raised.value.message.startswith(message)


def test_the_sql_dialects_are_sqlglots() -> None:
    from sqlglot.dialects import DIALECT_MODULE_NAMES

    assert SQL_DIALECTS == set(DIALECT_MODULE_NAMES)


def test_options_change_the_key_and_no_options_keep_the_old_key() -> None:
    plain = revision_key("docs", "a.txt", "ab" * 32)
    latin = revision_key("docs", "a.txt", "ab" * 32, '{"encoding":"latin-1"}')
    assert plain == revision_key("docs", "a.txt", "ab" * 32, "{}")
    assert latin.startswith(plain + "~") and KEY_PATTERN.match(latin)


def test_a_change_of_options_is_a_new_revision_of_exactly_the_files_it_applies_to(
    tmp_path: Path,
) -> None:
    source = make(tmp_path, {"legacy/r.txt": "r", "a.md": "a"})
    first = scan(source, {})
    known = {
        r.path: FileState(r.size, r.mtime_ns, r.sha256, r.device, r.inode, r.options)
        for r in first.new
    }
    optioned = Source(
        source.name, source.root, options=(parse_option("legacy/*:encoding=latin-1"),)
    )
    second = scan(optioned, known)
    assert [r.path for r in second.new] == ["legacy/r.txt"]
    assert second.unchanged == ("a.md",)
    assert second.new[0].key != first.new[1].key


def test_a_bad_option_value_is_shown_escaped_and_cut() -> None:
    with pytest.raises(SourceError) as raised:
        parse_option("*.txt:encoding=\x1b]0;pwned\x07" + "x" * 200)
    assert raised.value.message.startswith("encoding '\\x1b]0;pwned\\x07xxx")
    assert "\x1b" not in raised.value.message and len(raised.value.message) < 120


def test_a_refusal_names_the_file_with_its_controls_escaped(tmp_path: Path, secret: Path) -> None:
    folder = tmp_path / "docs"
    name = "clear\x1b[2J.txt"
    make(folder, {name: "x"})
    identity = scan_identity(folder, name)
    (folder / name).unlink()
    (folder / name).symlink_to(secret)
    with pytest.raises(SourceError) as raised:
        read_checked(folder, name, identity)
    assert raised.value.message.startswith("clear\\x1b[2J.txt changed since it was scanned")
