"""The parsing bench's scorer (tests/support/docparse_score.py): it agrees with the reference scorer
(shared/tools/docparse_score.py) on every metric both compute, and each damage lowers its metric."""

from __future__ import annotations

import copy
import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from tests.support import docparse_score as score

ROOT = Path(__file__).resolve().parents[2]
SHARED = ROOT.parent / "shared"
REFERENCE = SHARED / "tools" / "docparse_score.py"
CORPUS_GOLD = SHARED / "corpus" / "gold"
BENCH = ROOT / "bench" / "docparse"

# Metrics both scorers compute: ours -> the reference's name.
SHARED_METRICS = {
    "text recall": "text_recall",
    "reading order": "reading_order",
    "heading F1": "heading_f1",
    "heading level": "heading_level",
    "table cell F1": "table_cell_f1",
    "locator": "page_locator",
}


def _load(name: str, path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


reference = _load("docparse_score_reference", REFERENCE) if REFERENCE.is_file() else None
needs_reference = pytest.mark.skipif(
    reference is None, reason=f"no shared reference scorer at {REFERENCE}"
)
needs_corpus = pytest.mark.skipif(
    not CORPUS_GOLD.is_dir(), reason=f"no shared corpus at {CORPUS_GOLD.parent}"
)

CORPUS_DOCS = [
    "docx/unit_test_headers.docx.json",
    "docx/word_tables.docx.json",
    "docx/lorem_ipsum.docx.json",
    "docx/word_sample.docx.json",
    "pptx/powerpoint_sample.pptx.json",
    "pptx/pptx_chart.pptx.json",
]


def synthesized(gold_path: Path) -> dict[str, Any]:
    """The reference's own artifact reproducing a gold."""
    assert reference is not None
    return reference.synthesize_artifact(reference.load_gold(str(gold_path)))


def damaged(artifact: dict[str, Any]) -> dict[str, Any]:
    assert reference is not None
    return reference.damage_artifact(copy.deepcopy(artifact))


def assert_agree(gold_path: Path, artifact: dict[str, Any]) -> None:
    assert reference is not None
    theirs = reference.score(reference.load_gold(str(gold_path)), reference.load_artifact(artifact))
    ours = score.score_document(score.load_gold(gold_path), artifact)
    for metric, their_name in SHARED_METRICS.items():
        mine = ours[metric][0] / ours[metric][1] if metric in ours else None
        assert (mine is None) == (theirs[their_name] is None), (metric, mine, theirs[their_name])
        if mine is not None:
            assert abs(mine - theirs[their_name]) <= 0.01, (gold_path.name, metric, mine, theirs)


@needs_reference
@needs_corpus
@pytest.mark.parametrize("doc", CORPUS_DOCS)
def test_agrees_with_the_reference_on_a_corpus_gold_and_its_damaged_copy(doc: str) -> None:
    gold_path = CORPUS_GOLD / doc
    artifact = synthesized(gold_path)
    assert_agree(gold_path, artifact)
    assert_agree(gold_path, damaged(artifact))


@needs_reference
@pytest.mark.parametrize("gold_path", sorted(BENCH.glob("*/*.gold.json")), ids=lambda p: p.name)
def test_agrees_with_the_reference_on_our_readers_over_the_generated_documents(
    gold_path: Path,
) -> None:
    from extractor_sandbox.source import extract

    source = gold_path.with_name(gold_path.name.removesuffix(".gold.json"))
    fmt = source.suffix.lstrip(".")
    artifact = extract(source.read_bytes(), fmt, source.name, {})
    assert_agree(gold_path, artifact)


CORPUS_INPUTS = SHARED / "corpus" / "inputs"
READ_CORPUS_DOCS = [
    "docx/word_sample.docx",
    "docx/unit_test_headers_numbered.docx",
    "docx/docx_rich_cells.docx",
    "docx/drawingml.docx",
    "pptx/powerpoint_sample.pptx",
    "pptx/pptx_chart.pptx",
]


@needs_reference
@needs_corpus
@pytest.mark.parametrize("doc", READ_CORPUS_DOCS)
def test_agrees_with_the_reference_on_our_readers_over_corpus_documents(doc: str) -> None:
    from extractor_sandbox.source import extract

    source = CORPUS_INPUTS / doc
    fmt = source.suffix.lstrip(".")
    artifact = extract(source.read_bytes(), fmt, source.name, {})
    assert_agree(CORPUS_GOLD / f"{doc}.json", artifact)


def a_gold() -> Any:
    return score.gold_from_docparse(
        {
            "gold_schema": "docparse-gold/1",
            "blocks": [
                {"type": "heading", "text": "Quarterly report", "level": 1, "page": 1},
                {"type": "paragraph", "text": "Revenue grew in every region.", "page": 1},
                {"type": "heading", "text": "Costs", "level": 2, "page": 2},
                {"type": "paragraph", "text": "Costs fell by a tenth overall.", "page": 2},
            ],
            "tables": [{"rows": [["Region", "Sales"], ["North", "12"]], "page": 2}],
            "notes": [{"text": "Mention the north first.", "page": 2}],
            "images": [{"text": "a chart of sales", "page": 2}],
        }
    )


def a_perfect_artifact() -> dict[str, Any]:
    def block(kind: str, text: str, page: int, **extra: Any) -> dict[str, Any]:
        loc = {"page_start": page, "page_end": page}
        return {"type": kind, "text": text, "locator": loc, **extra}

    return {
        "blocks": [
            block("heading", "Quarterly report", 1, depth=1),
            block("paragraph", "Revenue grew in every region.", 1),
            block("heading", "Costs", 2, depth=2, attrs={"images_unread": 1}),
            block("paragraph", "Costs fell by a tenth overall.", 2),
            block(
                "table", "Region | Sales\nNorth | 12", 2, attrs={"table": {"rows": 2, "columns": 2}}
            ),
            block("paragraph", "Mention the north first.", 2, attrs={"notes": True}),
        ],
        "coverage": {"failed": []},
    }


def shares(artifact: dict[str, Any]) -> dict[str, float]:
    return score.score_slice([(a_gold(), artifact)])


def test_a_perfect_artifact_scores_one_on_every_metric_it_defines() -> None:
    got = shares(a_perfect_artifact())
    # Speaker notes are not the gold's body text (as in docling's gold), so they cost precision.
    del got["text precision"]
    assert set(got) == {
        "text recall",
        "reading order",
        "heading F1",
        "heading level",
        "table cell F1",
        "locator",
        "notes",
        "announced loss",
    }
    assert all(value == 1.0 for value in got.values()), got


def test_dropping_a_block_lowers_text_recall() -> None:
    artifact = a_perfect_artifact()
    del artifact["blocks"][3]
    assert shares(artifact)["text recall"] < 1.0


def test_reordering_blocks_lowers_reading_order() -> None:
    artifact = a_perfect_artifact()
    artifact["blocks"].reverse()
    assert shares(artifact)["reading order"] < 1.0


def test_a_wrong_level_lowers_heading_level() -> None:
    artifact = a_perfect_artifact()
    artifact["blocks"][2]["depth"] = 1
    assert shares(artifact)["heading level"] < 1.0


def test_a_heading_read_as_a_paragraph_lowers_heading_f1() -> None:
    artifact = a_perfect_artifact()
    artifact["blocks"][2]["type"] = "paragraph"
    assert shares(artifact)["heading F1"] < 1.0


def test_a_wrong_page_lowers_the_locator() -> None:
    artifact = a_perfect_artifact()
    artifact["blocks"][3]["locator"] = {"page_start": 1, "page_end": 1}
    assert shares(artifact)["locator"] < 1.0


def test_a_lost_cell_lowers_table_cell_f1() -> None:
    artifact = a_perfect_artifact()
    artifact["blocks"][4]["text"] = "Region | Sales\nNorth |"
    assert shares(artifact)["table cell F1"] < 1.0


def test_notes_read_as_body_text_are_not_notes() -> None:
    artifact = a_perfect_artifact()
    del artifact["blocks"][5]["attrs"]
    assert shares(artifact)["notes"] == 0.0


def test_notes_on_another_slide_are_not_held() -> None:
    artifact = a_perfect_artifact()
    artifact["blocks"][5]["locator"] = {"page_start": 1, "page_end": 1}
    assert shares(artifact)["notes"] == 0.0


def test_an_image_not_named_is_loss_not_announced() -> None:
    artifact = a_perfect_artifact()
    del artifact["blocks"][2]["attrs"]
    assert shares(artifact)["announced loss"] == 0.0


def test_a_failed_slide_announces_its_images() -> None:
    artifact = a_perfect_artifact()
    del artifact["blocks"][2]["attrs"]
    artifact["coverage"]["failed"] = [{"unit": "slide 2", "reason": "needs OCR"}]
    assert shares(artifact)["announced loss"] == 1.0


def test_a_slice_sums_hits_and_totals_rather_than_averaging() -> None:
    long_gold = score.gold_from_docparse(
        {"gold_schema": "docparse-gold/1", "blocks": [{"type": "paragraph", "text": "a b c d"}]}
    )
    short_gold = score.gold_from_docparse(
        {"gold_schema": "docparse-gold/1", "blocks": [{"type": "paragraph", "text": "e f"}]}
    )
    full = {"blocks": [{"type": "paragraph", "text": "a b c d"}]}
    empty: dict[str, Any] = {"blocks": []}
    got = score.score_slice([(long_gold, full), (short_gold, empty)])
    assert got["text recall"] == pytest.approx(4 / 6)


def test_the_command_line_scores_a_directory(tmp_path: Path, capsys: Any) -> None:
    gold_dir, art_dir = tmp_path / "gold" / "pptx", tmp_path / "art" / "pptx"
    gold_dir.mkdir(parents=True)
    art_dir.mkdir(parents=True)
    (gold_dir / "deck.pptx.gold.json").write_text(
        json.dumps(
            {"gold_schema": "docparse-gold/1", "blocks": [{"type": "paragraph", "text": "hi"}]}
        )
    )
    (art_dir / "deck.pptx.json").write_text(
        json.dumps({"blocks": [{"type": "paragraph", "text": "hi"}]})
    )
    assert score.main(["--dir", str(tmp_path / "art"), "--gold-dir", str(tmp_path / "gold")]) == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert lines[0] == {"doc": "pptx/deck.pptx", "text recall": 1.0, "text precision": 1.0}
    assert lines[-1]["documents"] == 1


@needs_corpus
def test_docling_gold_reads_a_decks_notes_and_pictures() -> None:
    gold = score.load_gold(CORPUS_GOLD / "pptx" / "powerpoint_sample.pptx.json")
    assert [(n["page"], n["text"][:10]) for n in gold.notes] == [
        (2, "Some notes"),
        (3, "Final note"),
    ]
    chart = score.load_gold(CORPUS_GOLD / "pptx" / "pptx_chart.pptx.json")
    assert [image["page"] for image in chart.images] == [1, 2]


def test_failed_units_count_scanned_pages_read_with_ocr_or_named_failed() -> None:
    gold = score.gold_from_docparse(
        {"gold_schema": "docparse-gold/1", "blocks": [], "scanned_pages": [1, 2, 3]}
    )
    artifact = {
        "blocks": [],
        "attrs": {"ocr_pages": [1]},
        "coverage": {"failed": [{"unit": "page 2", "reason": "needs OCR"}]},
    }
    assert score.score_document(gold, artifact)["failed units"] == (2, 3)


REALWORLD_PDF = Path(__file__).resolve().parents[2] / "bench" / "realworld" / "pdf" / "icdar2013"


@needs_reference
def test_agrees_with_the_reference_on_two_listed_tables_with_the_same_cells() -> None:
    # eu-011's tables: the reader lists two tables of equal cells and no table block holds
    # them; both scorers count both (they disagreed here once).
    from extractor_sandbox.source import extract

    source = REALWORLD_PDF / "eu-011.pdf"
    artifact = extract(source.read_bytes(), "pdf", source.name, {})
    gold_path = REALWORLD_PDF / "eu-011.pdf.gold.json"
    assert reference is not None
    theirs = reference.score(reference.load_gold(str(gold_path)), reference.load_artifact(artifact))
    ours = score.score_document(score.load_gold(gold_path), artifact)
    hits, total = ours["table cell F1"]
    assert abs(hits / total - theirs["table_cell_f1"]) <= 0.01, (hits / total, theirs)
