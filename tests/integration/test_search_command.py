"""`loom search` as a process: the machine-readable answer, the per-leg explanation, the filters,
and each bad request as one line on stderr with exit 2."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from loom_dagster import api
from loom_dagster.extractor.local import RunningExtractor
from tests.integration.conftest import home_made_once, use_home
from tests.integration.loom_command import loom

RUNBOOK = (
    """\
# Disk runbook

## E-DISK-042: volume full

Free space by rotating the ingest logs, then expand the volume. This passage is long enough
that the text view cuts it: """
    + " ".join(f"word{n}" for n in range(80))
    + "\n"
)


def publish_ops(root: Path) -> Path:
    """The `ops` folder, ingested into the home this process points at."""
    folder = root / "ops"
    (folder / "runbooks").mkdir(parents=True)
    (folder / "runbooks" / "disk.md").write_text(RUNBOOK)
    (folder / "notes.txt").write_text("The volume full alarm fired twice.\n")
    report = api.ingest_folder(folder, name="ops", tags=["Ops", "oncall"])
    assert [o.status for o in report.outcomes] == ["published", "published"]
    return folder


@pytest.fixture
def published_here(loom_home: Path, tmp_path: Path) -> Path:
    """`ops` published in this test's own home: for a test that changes the source."""
    return publish_ops(tmp_path)


@pytest.fixture(scope="module")
def published_once(
    tmp_path_factory: pytest.TempPathFactory, reference_service: RunningExtractor
) -> tuple[Path, Path]:
    """`ops` published once into a home of this module's (its home, its folder), for the tests
    that only search it: an ingest is seconds, a `loom search` a fraction of one."""
    return home_made_once(tmp_path_factory, reference_service, "search-command", publish_ops)


@pytest.fixture
def published(
    published_once: tuple[Path, Path],
    monkeypatch: pytest.MonkeyPatch,
    reference_service: RunningExtractor,
) -> Path:
    """`published_once`'s folder, this test (and the `loom` it runs) pointed at its home. Only
    for tests that change nothing there: `loom search` reads the catalog and the indexes."""
    home, folder = published_once
    use_home(monkeypatch, home, reference_service)
    return folder


def usage_error(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode == 2, (result.returncode, result.stdout, result.stderr)
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    return lines[0]


def test_json_holds_every_hit_in_full_with_each_legs_rank(published: Path) -> None:
    result = loom("search", "E-DISK-042", "--json", "--tag", "ops", "--path", "runbooks/")
    assert result.returncode == 0, result.stderr

    answer = json.loads(result.stdout)
    assert answer["query"] == "E-DISK-042"
    [hit] = answer["hits"]
    assert hit["text"].endswith("word79")  # the whole chunk, not a preview
    assert (hit["source"], hit["path"], hit["format"]) == ("ops", "runbooks/disk.md", "markdown")
    assert hit["section_path"] == ["Disk runbook", "E-DISK-042: volume full"]
    assert hit["block_type"] == "paragraph"
    assert hit["tags"] == ["ops", "oncall"]
    assert hit["revision"].startswith("disk.md__runbooks~") and hit["chunk_id"].startswith(
        hit["revision"] + "#"
    )
    assert hit["locator"]["line_start"] == 5
    assert [leg["leg"] for leg in hit["legs"]] == ["exact", "lexical", "vector"]
    assert hit["found_by"] == ["exact", "lexical", "vector"]
    # The exact and lexical legs put it first; the vector leg ranks it too (a cosine, any sign).
    assert [(leg["rank"], leg["score"] > 0) for leg in hit["legs"][:2]] == [(1, True), (1, True)]
    assert hit["legs"][2]["rank"] >= 1


def test_explain_names_each_legs_rank_and_score(published: Path) -> None:
    result = loom("search", "volume full", "--explain", "--block-type", "paragraph")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].startswith("1. ops:")
    assert any(line.startswith("   paragraph  tags ops,oncall  |  lexical #1 (") for line in lines)


def test_words_no_document_holds_find_nothing_and_explain_says_which_legs_found_a_hit(
    published: Path,
) -> None:
    # The vector leg ranks every chunk for any query: below its embedder's floor, a chunk no
    # other leg found is not an answer.
    result = loom("search", "zebra xylophone quasar", "--json")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["hits"] == []
    assert loom("search", "zebra xylophone quasar").stdout == "no hits\n"

    lines = loom("search", "rotating ingest logs", "--explain").stdout.splitlines()
    assert lines[0].startswith("1. ops:runbooks/disk.md")
    assert "   found by: lexical, vector" in lines


def test_a_filter_with_nothing_inside_it_says_no_hits(published: Path) -> None:
    result = loom("search", "volume", "--format", "csv")
    assert (result.returncode, result.stdout) == (0, "no hits\n")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ("search", "?! --"),
            "loom: empty_query: the query '?! --' has no words to search for",
        ),
        (
            ("search", "volume", "--limit", "ten"),
            "loom: bad_limit: limit must be 1 to 1000, not 'ten'",
        ),
        (("search", "volume", "--limit", "0"), "loom: bad_limit: limit must be 1 to 1000, not 0"),
        (
            ("search", "volume", "--format", "word"),
            "loom: unknown_format: unknown format 'word'; formats are "
            "csv, docx, html, markdown, parquet, pdf, pptx, sql, text, toml, xlsx",
        ),
        (
            ("search", "volume", "--tag", "finance"),
            "loom: unknown_tag: unknown tag 'finance': no published chunk carries it "
            "(a source gets tags from `loom sources add --tag`)",
        ),
        (
            ("search", "volume", "--tag", "no good"),
            "loom: unknown_tag: tag 'no good' must be 1-64 letters, digits, '.', '_' or '-', "
            "starting with a letter or digit",
        ),
        (
            ("search", "a" * 100_000),
            "loom: query_too_long: the query is 100,000 characters long; at most 2,000 are searched",
        ),
        (
            ("search", "E-DISK-" * 2_000),
            "loom: query_too_long: the query is 14,000 characters long; at most 2,000 are searched",
        ),
        (
            ("search", "ab\udcffcd"),
            "loom: invalid_utf8: the query is not valid UTF-8 (byte 0xff at character 3)",
        ),
        (
            ("search", "volume", "--path", "runbooks/\udcc3"),
            "loom: invalid_utf8: --path is not valid UTF-8 (byte 0xc3 at character 10)",
        ),
    ],
    ids=[
        "no usable words",
        "limit not a number",
        "limit out of range",
        "format",
        "tag",
        "bad tag",
        "one long word (issue 34 row 1)",
        "a long identifier",
        "query not UTF-8 (issue 34 row 3)",
        "path not UTF-8",
    ],
)
def test_a_bad_request_is_one_line_and_exit_2(
    published: Path, args: tuple[str, ...], message: str
) -> None:
    assert usage_error(loom(*args)) == message


def test_sources_add_tag_retags_what_is_already_indexed(published_here: Path) -> None:
    tagged = loom("sources", "add", str(published_here), "--tag", "storage")
    assert tagged.returncode == 0, tagged.stderr

    # The vector leg ranks every in-filter chunk, so each hit is checked, not counted.
    hits = json.loads(loom("search", "alarm", "--json", "--tag", "storage").stdout)["hits"]
    assert hits and all(hit["tags"] == ["storage"] for hit in hits)
    assert "unknown_tag" in usage_error(loom("search", "alarm", "--tag", "oncall"))
    listed = loom("sources", "list").stdout
    assert "  tags      storage\n" in listed

    cleared = loom("sources", "add", str(published_here), "--no-tags")
    assert cleared.returncode == 0, cleared.stderr
    assert "unknown_tag" in usage_error(loom("search", "alarm", "--tag", "storage"))
    hits = json.loads(loom("search", "alarm", "--json").stdout)["hits"]
    assert hits and all(hit["tags"] == [] for hit in hits)
