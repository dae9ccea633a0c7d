"""Intake end to end: what a watched folder may hold (symlink swaps, names that are not UTF-8),
how a folder becomes a source and stays one, per-glob extraction options, `sources list`, `show`."""

from __future__ import annotations

import os
import re
import shutil
import time
from pathlib import Path

import duckdb
import pytest
from dagster import DagsterInstance

from loom_dagster import api, catalog, pipeline, sources
from loom_dagster.resources.storage import CatalogResource
from loom_dagster.search.lexical import LexicalIndex
from loom_dagster.settings import LoomSettings
from loom_dagster.sources import Refusal, Source
from tests.integration.test_command import loom
from tests.integration.test_pipeline_end_to_end import tick, write

SECRET = "root:$6$SECRET-PASSWORD-HASH$:19000:0:99999:7:::"
LATIN1 = Path(__file__).resolve().parents[2] / "examples/docs/legacy/receipts-latin1.txt"


@pytest.fixture
def secret(tmp_path: Path) -> Path:
    """A file outside every watched folder that the folder's writer must never get published."""
    path = write(tmp_path / "outside", "shadow", SECRET + "\n")
    path.chmod(0o600)
    return path


def store_holds(text: str) -> bool:
    store = LoomSettings.from_env().home / "store"
    return any(text.encode() in path.read_bytes() for path in store.rglob("*") if path.is_file())


def assert_never_published(text: str) -> None:
    assert not store_holds(text)
    # The vector leg ranks whatever is served; no hit may hold the secret.
    assert not [h for h in api.search("SECRET-PASSWORD-HASH") if "SECRET" in h.chunk.text]


# Issue 12.1: the symlink race ---------------------------------------------------------------


def test_a_file_swapped_for_a_symlink_while_the_folder_is_scanned_is_refused(
    loom_home: Path, tmp_path: Path, secret: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "docs"
    write(folder, "notes.txt", "x" * len(secret.read_bytes()))
    write(folder, "kept.md", "# Kept\n\nStill here.\n")
    real_walk = sources.walk

    def walk_then_swap(source: Source) -> tuple[list[tuple[str, os.stat_result]], list[Refusal]]:
        listed = real_walk(source)  # the scan has stat()ed notes.txt as a regular file ...
        (folder / "notes.txt").unlink()  # ... and the folder's writer swaps it now
        (folder / "notes.txt").symlink_to(secret)
        return listed

    monkeypatch.setattr(sources.scanning, "walk", walk_then_swap)
    report = api.ingest_folder(folder)

    by_path = {o.path: o for o in report.outcomes}
    assert by_path["notes.txt"].status == "refused"
    assert by_path["notes.txt"].detail.startswith("source_changed: notes.txt changed since")
    assert by_path["kept.md"].status == "published"
    assert report.conserved
    assert_never_published("SECRET-PASSWORD-HASH")


@pytest.mark.parametrize("swap", ["file", "parent", "same_size_file"])
def test_a_file_swapped_between_registration_and_storing_is_refused(
    loom_home: Path, tmp_path: Path, secret: Path, swap: str
) -> None:
    folder = tmp_path / "docs"
    size = len(secret.read_bytes())
    write(folder, "sub/shadow", "y" * size)
    settings = LoomSettings.from_env()
    api.prepare_environment(settings)
    source = api.register_source(settings, folder)
    with CatalogResource(database=str(settings.catalog_path)).connect() as con:
        [revision] = pipeline.sync_source(con, LexicalIndex(settings.search_dir), source).new

    if swap == "file":
        (folder / "sub/shadow").unlink()
        (folder / "sub/shadow").symlink_to(secret)
    elif swap == "parent":
        (folder / "sub").rename(tmp_path / "elsewhere")
        (folder / "sub").symlink_to(secret.parent)
    else:  # another inode, same size: a hard link to the secret would do the same
        shutil.copyfile(secret, folder / "sub/copy")
        os.replace(folder / "sub/copy", folder / "sub/shadow")
    api.materialize_in_batches(DagsterInstance.get(), [revision.key], settings)

    with CatalogResource(database=str(settings.catalog_path)).connect() as con:
        outcome = catalog.outcomes_for(con, [revision.key])[revision.key]
    assert (outcome.status, outcome.code) == (catalog.REFUSED, "source_changed")
    why = "another file is at its path" if swap == "same_size_file" else "a symlink is in its path"
    assert why in (outcome.message or "")
    assert_never_published("SECRET-PASSWORD-HASH")


# Issue 12.5: a name that is not UTF-8 --------------------------------------------------------


def test_a_name_that_is_not_utf8_is_refused_and_the_rest_of_the_folder_is_published(
    loom_home: Path, tmp_path: Path
) -> None:
    folder = tmp_path / "docs"
    write(folder, "good.md", "# Good\n\nPublished beside a bad name.\n")
    write(folder, "also.txt", "Also published.\n")
    with open(os.path.join(os.fsencode(folder), b"bad\xff.txt"), "wb") as handle:
        handle.write(b"never read\n")

    result = loom("ingest", str(folder))

    assert result.returncode == 0, result.stderr  # a refusal: the identity holds
    lines = result.stdout.splitlines()
    assert (
        "refused    bad\\udcff.txt  invalid_name: the file's name is not UTF-8; rename it" in lines
    )
    assert lines[-1] == "files 3 = published 2 + refused 1 + unchanged 0 + skipped 0"
    assert "Traceback" not in result.stderr

    # The sensor scans the same folder without a crash, and registers nothing it cannot name.
    write(folder, "later.md", "# Later\n")
    os.utime(folder / "later.md", (time.time() - 60, time.time() - 60))
    added = tick().dynamic_partitions_requests
    assert [key.split("~")[0] for key in added[0].partition_keys] == ["later.md"]


# Issue 11.1: a source is its folder -----------------------------------------------------------


@pytest.fixture
def two_notes(tmp_path: Path) -> tuple[Path, Path]:
    first = write(tmp_path / "a/notes", "plan.md", "# Plan\n\nAlpha plan.\n").parent
    second = write(tmp_path / "b/other/notes", "list.md", "# List\n\nBravo list.\n").parent
    return first, second


def test_a_second_folder_of_the_same_name_is_a_second_source(
    loom_home: Path, two_notes: tuple[Path, Path]
) -> None:
    first, second = two_notes
    assert api.ingest_folder(first).source == "notes"
    assert api.ingest_folder(second).source == "notes-2"
    again = api.ingest_folder(first)  # found by its root, not by its name
    assert (again.source, again.retired) == ("notes", [])

    assert [h.chunk.source for h in api.search("alpha")][:1] == ["notes"]
    assert [h.chunk.source for h in api.search("bravo")][:1] == ["notes-2"]


def test_a_name_another_folder_has_is_refused_in_one_line_and_replace_says_what_it_retires(
    loom_home: Path, two_notes: tuple[Path, Path]
) -> None:
    first, second = two_notes
    api.ingest_folder(first)

    refused = loom("sources", "add", str(second), "--name", "notes")
    assert refused.returncode == 1
    assert refused.stderr == (
        f"loom: source_exists: source 'notes' is the folder {first.resolve()}; give another "
        "--name, or --replace to move the name here and retire its documents\n"
    )
    assert [h.chunk.source for h in api.search("alpha")] == ["notes"]

    moved = loom("sources", "add", str(second), "--name", "notes", "--replace")
    assert moved.returncode == 0, moved.stderr
    assert moved.stdout == (
        f"source notes moved from {first.resolve()} to {second.resolve()}: "
        "1 documents of the old folder retired\n"
    )
    assert not [
        h for h in api.search("alpha") if h.chunk.source == "notes" and "alpha" in h.chunk.text
    ]


def test_a_folder_registered_under_one_name_is_not_taken_by_another(
    loom_home: Path, two_notes: tuple[Path, Path]
) -> None:
    first, second = two_notes
    assert loom("sources", "add", str(first)).stdout == f"registered notes: {first.resolve()}\n"
    added = loom("sources", "add", str(second))
    assert (added.returncode, added.stdout) == (0, f"registered notes-2: {second.resolve()}\n")
    assert loom("sources", "add", str(first)).stdout == f"updated notes: {first.resolve()}\n"
    result = loom("sources", "add", str(first), "--name", "plans")
    assert result.returncode == 1
    assert result.stderr == (
        f"loom: root_registered: folder {first.resolve()} is registered as source 'notes'; "
        "use --name notes (or none)\n"
    )


def test_replace_through_the_api_moves_the_name_and_retires_the_old_documents(
    loom_home: Path, two_notes: tuple[Path, Path]
) -> None:
    first, second = two_notes
    api.ingest_folder(first)
    settings = LoomSettings.from_env()
    from loom_dagster.errors import SourceError

    with pytest.raises(SourceError) as raised:
        api.register(settings, second, name="notes")
    assert raised.value.code == "source_exists"
    registration = api.register(settings, second, name="notes", replace=True)
    assert (registration.moved_from, registration.retired) == (str(first.resolve()), 1)
    report = api.ingest_folder(second, name="notes")
    assert [(o.status, o.path) for o in report.outcomes] == [("published", "list.md")]


# Issue 11.4: sources list, show, outcome history -----------------------------------------


def test_sources_list_and_show_tell_every_revision_of_a_file_with_its_run(
    loom_home: Path, tmp_path: Path
) -> None:
    folder = tmp_path / "docs"
    write(folder, "guide.md", "# Guide\n\nFirst words.\n")
    write(folder, "gone.md", "# Gone\n")
    first = api.ingest_folder(folder, options=[sources.parse_option("*.txt:encoding=latin-1")])
    write(folder, "guide.md", "# Guide\n\nSecond words, longer.\n")
    (folder / "gone.md").unlink()
    second = api.ingest_folder(folder, options=[sources.parse_option("*.txt:encoding=latin-1")])

    listing = loom("sources", "list")
    assert listing.returncode == 0, listing.stderr
    lines = listing.stdout.splitlines()
    assert lines[0] == f"docs  {folder.resolve()}"
    assert lines[1:3] == ["  include   **/*", "  options   *.txt:encoding=latin-1"]
    assert re.fullmatch(r"  last sync \d{4}-\d\d-\d\d \d\d:\d\d:\d\d", lines[3])
    assert lines[4] == "  documents 1 live, 1 retired"

    by_path = loom("show", str(folder / "guide.md"))
    by_name = loom("show", "docs:guide.md")
    assert by_path.returncode == by_name.returncode == 0, by_path.stderr
    assert by_path.stdout == by_name.stdout
    out = by_name.stdout.splitlines()
    old = next(o.revision for o in first.outcomes if o.path == "guide.md")
    new = next(o.revision for o in second.outcomes if o.path == "guide.md")
    assert out[0] == "docs:guide.md"
    assert out[1].startswith(f"superseded {old}  registered ")
    # The superseded revision keeps the published row of the run that published it.
    assert out[2].split()[2:] == ["published", "run", out[2].split()[4], "1", "chunks"]
    assert out[3].split()[2] == "superseded"
    assert out[2].split()[4] != out[3].split()[4]  # the second run superseded it
    assert out[4].startswith(f"live       {new}  registered ")
    assert out[5].split()[2:4] == ["published", "run"]
    assert len(out) == 6

    gone = loom("show", "docs:gone.md").stdout.splitlines()
    assert gone[1].startswith("retired    gone.md~")

    unknown = loom("show", "docs:nothing.md")
    assert (unknown.returncode, unknown.stderr) == (
        1,
        "loom: unknown_file: docs:nothing.md has no registered revision\n",
    )


# Issue 11.5: per-source extraction options --------------------------------------------------


def test_a_latin1_file_is_refused_without_its_encoding_and_published_with_it(
    loom_home: Path, tmp_path: Path
) -> None:
    folder = tmp_path / "docs"
    write(folder, "legacy/receipts-latin1.txt", LATIN1.read_bytes())
    write(folder, "legacy/ascii.txt", "Plain ascii receipts.\n")
    write(folder, "readme.md", "# Readme\n\nNothing to decode.\n")

    plain = loom("ingest", str(folder))
    assert plain.returncode == 0, plain.stderr
    assert any(
        line.startswith("refused    legacy/receipts-latin1.txt") and "  encoding: " in line
        for line in plain.stdout.splitlines()
    )

    one = loom("ingest", str(folder), "--option", "legacy/receipts-*.txt:encoding=latin-1")
    assert one.returncode == 0, one.stderr
    assert (
        one.stdout.splitlines()[-1] == "files 3 = published 1 + refused 0 + unchanged 2 + skipped 0"
    )
    assert any(
        line.startswith("published  legacy/receipts-latin1.txt") for line in one.stdout.splitlines()
    )
    hit = api.search("Café")[0]
    assert hit.chunk.path == "legacy/receipts-latin1.txt" and "Café" in hit.chunk.text

    # A wider glob re-extracts exactly the file it newly applies to.
    wider = loom("ingest", str(folder), "--option", "legacy/*.txt:encoding=latin-1")
    assert (
        wider.stdout.splitlines()[-1]
        == "files 3 = published 1 + refused 0 + unchanged 2 + skipped 0"
    )
    assert any(line.startswith("published  legacy/ascii.txt") for line in wider.stdout.splitlines())

    # The options are the source's: kept when none are given, cleared on request.
    kept = loom("ingest", str(folder))
    assert (
        kept.stdout.splitlines()[-1]
        == "files 3 = published 0 + refused 0 + unchanged 3 + skipped 0"
    )
    cleared = loom("ingest", str(folder), "--no-options")
    assert (
        cleared.stdout.splitlines()[-1]
        == "files 3 = published 1 + refused 1 + unchanged 1 + skipped 0"
    )


def test_a_declared_format_and_a_dialect_reach_the_extractor(
    loom_home: Path, tmp_path: Path
) -> None:
    folder = tmp_path / "docs"
    write(folder, "data/prices.dat", "item,price\nlamp oil,3.50\nrope,2.00\n")
    write(folder, "schema.sql", "CREATE TABLE lamps (id INT);\n")
    report = api.ingest_folder(
        folder,
        options=[
            sources.parse_option("data/*.dat:format=csv"),
            sources.parse_option("*.sql:sql_dialect=postgres"),
        ],
    )
    assert [o.status for o in report.outcomes] == ["published", "published"]
    [hit] = api.search("rope", formats=["csv"])
    assert hit.chunk.path == "data/prices.dat"


@pytest.mark.parametrize(
    ("spec", "error"),
    [
        ("legacy/*.txt:encoding=klingon", "encoding 'klingon' is not a known text codec"),
        ("*.txt:colour=red", "unknown option 'colour' (options: encoding, sql_dialect, format)"),
    ],
)
def test_a_bad_option_is_one_line_at_registration_with_exit_2(
    loom_home: Path, tmp_path: Path, spec: str, error: str
) -> None:
    folder = write(tmp_path / "docs", "a.txt", "a\n").parent
    for command in (["ingest", str(folder)], ["sources", "add", str(folder)]):
        result = loom(*command, "--option", spec)
        assert (result.returncode, result.stderr) == (2, f"loom: invalid_option: {error}\n")
    assert loom("sources", "list").stdout.startswith("no folder is registered")


def test_a_revision_refused_as_swapped_runs_again_once_the_file_is_rewritten_with_its_bytes(
    tmp_path: Path,
) -> None:
    folder = write(tmp_path / "docs", "a.md", "# A\n").parent
    source = Source("docs", str(folder))
    index = LexicalIndex(tmp_path / "search")
    with duckdb.connect(str(tmp_path / "catalog.duckdb")) as con:
        catalog.ensure_schema(con)
        catalog.upsert_source(con, source)
        [first] = pipeline.sync_source(con, index, source).new
        shutil.copyfile(folder / "a.md", folder / "copy")  # an editor saving the same bytes
        os.replace(folder / "copy", folder / "a.md")
        refusal = catalog.Outcome(first.key, catalog.REFUSED, "source_changed", "swapped")
        catalog.record_outcome(con, refusal)

        [again] = pipeline.sync_source(con, index, source).new
        assert again.key == first.key and again.inode != first.inode
        assert [r.key for r in catalog.pending_revisions(con, "docs")] == [first.key]
        assert pipeline.sync_source(con, index, source).new == ()
