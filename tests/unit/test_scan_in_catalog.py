"""A whole-folder scan compared by the embedded catalog (catalog.known_files_in, sources.KnownFiles):
the folder's files go to DuckDB as columns and only the rows that differ come back (issue 32: a
million FileStates made to find nothing changed). Each rule of the scan gives the same result as
the comparison in Python over catalog.known_files: new, edited, deleted, rewritten (another
inode, same bytes), options changed, a name refused, a folder that cannot be read, nothing
changed, a capped scan."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path

import duckdb
import pytest

from loom_dagster import catalog
from loom_dagster.catalog import bulk
from loom_dagster.sources import OptionRule, ScanResult, Source, scan

PAST = time.time() - 600


def write(root: Path, name: str, text: str) -> None:
    path = root / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    os.utime(path, (PAST, PAST))


@pytest.fixture(params=["lists", "arrays"])
def con(
    request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[duckdb.DuckDBPyConnection]:
    """The catalog, handed the scan as list parameters (a small folder) or as numpy arrays (a
    large one: the threshold set to 0 here)."""
    if request.param == "arrays":
        monkeypatch.setattr(bulk, "IN_ARRAYS", 0)
    connection = duckdb.connect(str(tmp_path / "catalog.duckdb"))
    catalog.ensure_schema(connection)
    yield connection
    connection.close()


def registered(con: duckdb.DuckDBPyConnection, source: Source, names: list[str]) -> Path:
    """The folder with `names` written, scanned and registered as a scan registers it."""
    root = Path(source.root)
    for name in names:
        write(root, name, f"# {name}\n")
    catalog.upsert_source(con, source)
    catalog.register_revisions(con, scan(source, {}).new)
    return root


def both(
    con: duckdb.DuckDBPyConnection, source: Source, max_hashed: int | None = None
) -> ScanResult:
    """The scan compared in Python and compared by the catalog: equal, or the test fails."""
    known = catalog.known_files_in(con, source.name)
    assert not isinstance(known, dict)  # the embedded catalog compares itself
    in_python = scan(
        source, catalog.known_files(con, source.name), now=PAST + 600, max_hashed=max_hashed
    )
    con.execute("SELECT 1 UNION ALL SELECT 2").fetchone()  # a result left unread
    in_catalog = scan(source, known, now=PAST + 600, max_hashed=max_hashed)
    assert in_catalog == in_python
    return in_catalog


def test_nothing_changed_is_every_file_unchanged(
    con: duckdb.DuckDBPyConnection, tmp_path: Path
) -> None:
    source = Source("docs", str(tmp_path / "docs"))
    registered(con, source, ["a.md", "sub/b.md", "sub/deeper/c.md"])
    result = both(con, source)
    assert result.unchanged == ("a.md", "sub/b.md", "sub/deeper/c.md")
    assert not (result.new or result.deleted or result.moved)


def test_new_edited_deleted_and_rewritten_files_are_found_as_in_python(
    con: duckdb.DuckDBPyConnection, tmp_path: Path
) -> None:
    source = Source("docs", str(tmp_path / "docs"))
    root = registered(con, source, ["a.md", "b.md", "c.md", "d.md", "same.md"])
    write(root, "a.md", "# a, edited\n")  # new bytes
    (root / "b.md").unlink()  # deleted
    write(root, "new.md", "# new\n")  # not known
    copy = root / "c.md.tmp"  # c.md written again: another inode, the same bytes
    copy.write_text("# c.md\n")
    os.utime(copy, (PAST, PAST))
    os.replace(copy, root / "c.md")
    os.utime(root / "d.md", (PAST - 60, PAST - 60))  # touched: its bytes hashed again
    result = both(con, source)
    assert [r.path for r in result.new] == ["a.md", "new.md"]
    assert result.deleted == ("b.md",)
    assert [r.path for r in result.moved] == ["c.md", "d.md"]
    assert result.unchanged == ("c.md", "d.md", "same.md")


def test_a_folder_whose_options_changed_is_new_revisions_as_in_python(
    con: duckdb.DuckDBPyConnection, tmp_path: Path
) -> None:
    source = Source("docs", str(tmp_path / "docs"))
    registered(con, source, ["legacy/a.txt", "b.txt"])
    changed = Source(
        "docs", source.root, options=(OptionRule("legacy/*.txt", "encoding", "latin-1"),)
    )
    result = both(con, changed)
    assert [r.path for r in result.new] == ["legacy/a.txt"]
    assert result.unchanged == ("b.txt",)


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads any folder")
def test_a_folder_that_cannot_be_read_keeps_its_files_as_in_python(
    con: duckdb.DuckDBPyConnection, tmp_path: Path
) -> None:
    source = Source("docs", str(tmp_path / "docs"))
    root = registered(con, source, ["locked/a.md", "b.md"])
    (root / "locked").chmod(0)
    try:
        result = both(con, source)
    finally:
        (root / "locked").chmod(0o755)
    assert result.deleted == ()


def test_a_name_refused_and_a_capped_scan_are_as_in_python(
    con: duckdb.DuckDBPyConnection, tmp_path: Path
) -> None:
    source = Source("docs", str(tmp_path / "docs"))
    root = registered(con, source, ["a.md", "b.md"])
    bad = os.fsencode(str(root)) + b"/bad-\xff.md"
    with open(bad, "wb") as handle:
        handle.write(b"x")
    os.utime(bad, (PAST, PAST))
    for name in ("c.md", "d.md", "e.md"):
        write(root, name, f"# {name}, new\n")
    result = both(con, source)
    assert [r.code for r in result.refused] == ["invalid_name"]
    capped = both(con, source, max_hashed=1)
    assert capped.resume_after == "c.md" and capped.deleted == ()


def test_an_empty_folder_retires_every_known_file_as_in_python(
    con: duckdb.DuckDBPyConnection, tmp_path: Path
) -> None:
    source = Source("docs", str(tmp_path / "docs"))
    root = registered(con, source, ["a.md", "sub/b.md"])
    (root / "a.md").unlink()
    (root / "sub" / "b.md").unlink()
    result = both(con, source)
    assert result.deleted == ("a.md", "sub/b.md")
    assert len(catalog.known_files_in(con, "docs")) == 2
