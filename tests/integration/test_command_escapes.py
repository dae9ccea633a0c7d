"""Whatever a document holds, what `loom` prints holds no raw control character: a file's name,
its headings and its text cannot clear the screen, set the window title or reorder the line."""

from __future__ import annotations

from pathlib import Path

from tests.integration.loom_command import loom, raw_controls

# ESC sequences (clear the screen, set the window title), bidi overrides and isolates, C1 controls
# (CSI, OSC, NEL), a bell and a carriage return.
NAME = "report\x1b]0;owned\x07\u202egnp\x9b2J\r.md"
HEADING = "Budget \x1b[2J\x1b[H\u2066reversed\u2069 \x9d0;title\x9c"
TEXT = "The quarterly budget \x1b]0;pwned\x07 is \u202eapproved\u202c here\x85 and \x9b31m red."


def test_ingest_and_search_print_no_raw_control_character(loom_home: Path, tmp_path: Path) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / NAME).write_text(f"# {HEADING}\n\n{TEXT}\n")

    ingested = loom("ingest", str(folder))
    assert ingested.returncode == 0, ingested.stderr
    searched = loom("search", "quarterly budget")
    assert searched.returncode == 0, searched.stderr

    for printed in (ingested.stdout, ingested.stderr, searched.stdout, searched.stderr):
        assert raw_controls(printed) == [], printed
    # What was escaped is still shown, as escapes: the reader sees what the file holds.
    assert "published  report\\x1b]0;owned\\x07\\u202egnp\\x9b2J\\x0d.md  " in ingested.stdout
    lines = searched.stdout.splitlines()
    assert lines[0].startswith("1. docs:report\\x1b]0;owned\\x07\\u202egnp\\x9b2J\\x0d.md  ")
    assert lines[1].startswith(
        "   Budget \\x1b[2J\\x1b[H\\u2066reversed\\u2069 \\x9d0;title\\x9c  |"
    )
    assert "\\x1b]0;pwned\\x07 is \\u202eapproved\\u202c here and \\x9b31m red." in lines[2]


def test_an_error_quoting_a_path_prints_no_raw_control_character(
    loom_home: Path, tmp_path: Path
) -> None:
    missing = tmp_path / "gone\x1b]0;owned\x07\u202e"
    result = loom("ingest", str(missing))
    assert result.returncode == 1
    assert raw_controls(result.stderr) == [], result.stderr
    assert result.stderr.endswith(
        "gone\\x1b]0;owned\\x07\\u202e does not exist or is not a folder\n"
    )
