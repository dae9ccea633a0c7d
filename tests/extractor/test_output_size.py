"""The artifact's size bound per byte of the original (extractor_sandbox/output_size.py): a small
file that inflates is cut to ARTIFACT_BYTES_FLOOR plus LOOM_EXTRACTOR_MAX_OUTPUT_PER_INPUT_BYTE
bytes per byte of it, and the cut is announced in coverage (resource_limit), never silent. The
Office readers stop gathering text once it passes that bound (TextBudget), rather than after.
"""

from __future__ import annotations

import copy
import json
from typing import Any

from extractor_sandbox.artifact import build_artifact, coverage
from extractor_sandbox.formats.package import READ_CHUNK
from extractor_sandbox.output_size import (
    ARTIFACT_BYTES_FLOOR,
    DEFAULT_PER_INPUT_BYTE,
    SETTING,
    TextBudget,
    artifact_byte_bound,
    fit_artifact_bytes,
    reading_within,
)
from extractor_sandbox.runner import Limits, run_extraction
from extractor_sandbox.settings import Settings, load_settings
from extractor_sandbox.source import artifact_json, extract
from tests.extractor import office_packages
from tests.extractor.server_check import validated
from tests.extractor.test_xlsx_format import HEAD as XLSX_HEAD
from tests.extractor.test_xlsx_format import row as xlsx_row
from tests.extractor.test_xlsx_format import text as xlsx_text
from tests.extractor.test_xlsx_format import workbook as xlsx_workbook


def inflating_docx(chars: int) -> bytes:
    """A DOCX of a few KB whose one text run is `chars` characters (deflate packs it ~1000:1)."""
    return office_packages.docx(office_packages.paragraph("A" * chars))


def serialized(artifact: dict[str, Any]) -> int:
    """The artifact's bytes as the child writes them."""
    text = json.dumps(artifact, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    return len(text.encode("utf-8"))


def paragraphs(count: int, chars: int) -> dict[str, Any]:
    blocks = [
        {"id": f"b{n}", "type": "paragraph", "text": "x" * chars, "section_path": [], "keys": []}
        for n in range(count)
    ]
    return dict(build_artifact("text", "t", "1", blocks, coverage("lines", count, count)))


def test_a_docx_that_inflates_is_cut_to_its_bound_and_says_so() -> None:
    data = inflating_docx(3_000_000)  # ~3 KB of zip: its bound is ~1.3 MB, not 3 MB
    bound = artifact_byte_bound(len(data), DEFAULT_PER_INPUT_BYTE, 256 * 1024 * 1024)
    assert len(data) < 10_000 and bound < 1_500_000

    body = artifact_json(data, "docx", "bomb.docx", {})
    artifact = validated(json.loads(body), data)

    assert len(body) <= bound
    [kept] = artifact["blocks"]
    assert len(kept["text"]) > ARTIFACT_BYTES_FLOOR - 10_000
    assert kept["text"] == "A" * len(kept["text"])  # a prefix of the run
    cov = artifact["coverage"]
    assert cov["complete"] is False
    assert cov["failed"][0] == {
        "unit": f"block b0 past character {len(kept['text']):,}",
        "reason": "resource_limit",
    }
    assert SETTING in artifact["warnings"][0]


def test_an_artifact_within_its_bound_is_left_whole() -> None:
    artifact = paragraphs(100, 1_000)
    before = copy.deepcopy(artifact)

    fit_artifact_bytes(artifact, serialized(artifact) + 64, 1)

    assert artifact == before


def test_blocks_past_the_bound_are_left_out_and_counted() -> None:
    artifact = paragraphs(1_000, 10_000)  # ~10 MB of blocks

    fit_artifact_bytes(artifact, 1_000_000, 1_000)

    blocks = artifact["blocks"]
    assert serialized(artifact) <= 1_000_000
    assert all(len(b["text"]) == 10_000 for b in blocks[:-1])  # whole, up to the one cut
    last = blocks[-1]
    assert 0 < len(last["text"]) < 10_000
    assert artifact["coverage"]["failed"] == [
        {
            "unit": f"block {last['id']} past character {len(last['text']):,}",
            "reason": "resource_limit",
        },
        {
            "unit": f"{1_000 - len(blocks):,} blocks from block b{len(blocks)} on",
            "reason": "resource_limit",
        },
    ]
    assert artifact["coverage"]["complete"] is False


def test_a_tables_rows_past_half_the_bound_are_cut_and_said() -> None:
    artifact = paragraphs(10, 10)
    artifact["tables"] = [
        {
            "id": "t0",
            "name": "sheet",
            "columns": [{"name": "a", "type": "string"}],
            "rows": [["v" * 100] for _ in range(100_000)],  # ~10 MB of rows
            "locator": {},
            "attrs": {},
        }
    ]

    fit_artifact_bytes(artifact, 2_000_000, 1_000)

    rows = artifact["tables"][0]["rows"]
    assert 0 < len(rows) < 100_000
    assert serialized(artifact) <= 2_000_000
    assert len(artifact["blocks"]) == 10  # the blocks fit in what the table left
    assert artifact["coverage"]["failed"] == [
        {"unit": f"table t0 rows past {len(rows):,} of its values", "reason": "resource_limit"}
    ]


def test_the_ratio_is_a_setting_the_child_applies() -> None:
    """Two fresh children (about 1 s each): the bound travels from the service's settings to the
    child that cuts, through the request it reads."""
    assert Settings().max_output_per_input_byte == DEFAULT_PER_INPUT_BYTE
    settings = load_settings({SETTING: "1"})
    limits = Limits.of(settings)
    assert limits.per_input_byte == 1
    data = inflating_docx(1_500_000)
    roomy = limits._replace(per_input_byte=10_000)

    cut = json.loads(run_extraction(data, "docx", "bomb.docx", {}, limits, warm=False))
    whole = json.loads(run_extraction(data, "docx", "bomb.docx", {}, roomy, warm=False))

    assert serialized(cut) <= ARTIFACT_BYTES_FLOOR + len(data)
    assert cut["coverage"]["failed"][0]["reason"] == "resource_limit"
    assert len(whole["blocks"][0]["text"]) == 1_500_000
    assert whole["coverage"]["complete"] is True


# The Office readers gather text within the bound


BUDGET = 2_000_000
# A reader stops after the chunk of XML that passed its budget: at most that chunk's text more.
OVERSHOOT = READ_CHUNK


def read_within(data: bytes, fmt: str, bound: int | None = BUDGET) -> tuple[Any, TextBudget]:
    """The reader's own artifact (before any cut) of `data`, and the budget it read within."""
    with reading_within(TextBudget(bound)) as budget:
        artifact = extract(data, fmt, f"file.{fmt}", {})
    return artifact, budget


def footnote(text: str) -> str:
    return f'<w:footnote w:id="1"><w:p><w:r><w:t>{text}</w:t></w:r></w:p></w:footnote>'


def test_the_docx_reader_stops_gathering_text_once_past_its_budget() -> None:
    # A 25 KB file whose one run is 25 MB, a paragraph and a footnote after it.
    data = office_packages.docx(
        office_packages.paragraph("A" * 25_000_000) + office_packages.paragraph("after"),
        footnotes=footnote("a note"),
    )
    assert len(data) < 30_000

    artifact, budget = read_within(data, "docx")

    [kept] = artifact["blocks"]  # the paragraph after it and the note are not read
    assert BUDGET < len(kept["text"]) <= BUDGET + OVERSHOOT
    assert BUDGET < budget.used <= BUDGET + OVERSHOOT
    assert budget.stopped_in == "word/document.xml"


def test_the_pptx_reader_stops_gathering_text_once_past_its_budget() -> None:
    slides = [
        office_packages.slide_xml(office_packages.text_shape("A" * 25_000_000)),
        office_packages.slide_xml(office_packages.text_shape("the next slide")),
    ]
    data = office_packages.pptx(slides, notes={0: "notes"})

    artifact, budget = read_within(data, "pptx")

    [kept] = artifact["blocks"]  # not its notes, nor the next slide
    assert BUDGET < len(kept["text"]) <= BUDGET + OVERSHOOT
    assert budget.stopped_in == "ppt/slides/slide1.xml"


def test_a_reader_that_stopped_early_says_what_it_did_not_read() -> None:
    data = office_packages.docx(
        office_packages.paragraph("A" * 5_000_000) + office_packages.paragraph("after")
    )
    bound = artifact_byte_bound(len(data), DEFAULT_PER_INPUT_BYTE, 256 * 1024 * 1024)

    artifact = validated(json.loads(artifact_json(data, "docx", "bomb.docx", {})), data)

    [kept] = artifact["blocks"]
    failed = artifact["coverage"]["failed"]
    assert failed[0] == {
        "unit": f"block b0 past character {len(kept['text']):,}",
        "reason": "resource_limit",
    }
    assert failed[1]["reason"] == "resource_limit"
    assert failed[1]["unit"].startswith("the text past ")
    assert failed[1]["unit"].endswith(" bytes, from word/document.xml on")
    assert bound < int(failed[1]["unit"].split()[3].replace(",", "")) <= bound + OVERSHOOT
    assert SETTING in artifact["warnings"][0]


def test_an_artifact_within_its_bound_whose_reader_stopped_is_announced() -> None:
    # Text a reader gathered and dropped (spaces a paragraph's text is stripped of) passed the
    # bound, so it stopped, and the artifact it made is small: the stop is still a cut.
    artifact = paragraphs(3, 10)
    unread = {
        "unit": "the text past 10 bytes, from word/document.xml on",
        "reason": "resource_limit",
    }

    assert fit_artifact_bytes(artifact, 1_000_000, 1_000, unread=[unread])

    assert len(artifact["blocks"]) == 3
    assert artifact["coverage"]["failed"] == [unread]
    assert artifact["coverage"]["complete"] is False
    assert SETTING in artifact["warnings"][0]


def test_a_normal_docx_pptx_and_xlsx_read_within_their_bound_are_unchanged() -> None:
    document = office_packages.docx(
        office_packages.paragraph("Intro", "Heading1")
        + office_packages.paragraph("Body text, with a tab\there.")
        + "<w:tbl><w:tr><w:tc><w:p><w:r><w:t>a</w:t></w:r></w:p></w:tc>"
        "<w:tc><w:p><w:r><w:t>b</w:t></w:r></w:p></w:tc></w:tr></w:tbl>",
        footnotes=footnote("a note"),
    )
    deck = office_packages.pptx(
        [
            office_packages.slide_xml(office_packages.text_shape("Title", "title")),
            office_packages.slide_xml(office_packages.text_shape("one\ntwo")),
        ],
        notes={1: "speaker notes"},
    )
    book = xlsx_workbook(
        ("Data", XLSX_HEAD + xlsx_row(2, xlsx_text("A2", "a value"))), shared=["s"]
    )
    for data, fmt in ((document, "docx"), (deck, "pptx"), (book, "xlsx")):
        bound = artifact_byte_bound(len(data), DEFAULT_PER_INPUT_BYTE, 256 * 1024 * 1024)
        unbounded, _ = read_within(data, fmt, None)
        within, budget = read_within(data, fmt, bound)

        assert within == unbounded
        assert 0 < budget.used < 1_000 and budget.stopped_in is None
        body = json.loads(artifact_json(data, fmt, f"file.{fmt}", {}))
        assert body["coverage"]["complete"] is True


def test_the_xlsx_reader_stops_admitting_rows_once_past_its_budget() -> None:
    # 1,000 rows of 10,000 characters (10 MB, a few KB zipped), then a second sheet.
    long_rows = "".join(xlsx_row(n, xlsx_text(f"A{n}", "x" * 10_000)) for n in range(2, 1_002))
    data = xlsx_workbook(("Big", XLSX_HEAD + long_rows), ("After", XLSX_HEAD))

    artifact, budget = read_within(data, "xlsx")

    [table] = artifact["tables"]  # not the sheet after it
    # The header's one character and 200 rows pass 2,000,000: the 201st row is refused.
    assert len(table["rows"]) == BUDGET // 10_000
    assert budget.stopped_in is not None and budget.stopped_in.startswith("xl/worksheets/")
    failed = artifact["coverage"]["failed"]
    assert failed[0]["unit"].startswith("Big rows ")
    assert failed[0]["reason"].endswith(f"rows past the artifact's bound ({SETTING})")
    assert failed[1] == {"unit": "sheets 2-2", "reason": "past the artifact's bound: never read"}


def test_shared_strings_past_the_budget_are_not_held() -> None:
    shared = "".join(f"<si><t>{n} {'s' * 10_000}</t></si>" for n in range(1_000))
    sheet = XLSX_HEAD + xlsx_row(2, '<c r="A2" t="s"><v>0</v></c>')
    data = xlsx_workbook(sheet, shared=shared)

    artifact, budget = read_within(data, "xlsx")

    assert artifact["tables"][0]["rows"] == [["0 " + "s" * 10_000]]
    assert artifact["coverage"]["lost"] == ["shared_strings"]
    [cut] = budget.unread()
    assert cut["reason"] == "resource_limit"
    held = BUDGET // 10_002 + 1
    assert cut["unit"].startswith(f"xl/sharedStrings.xml past {held - 1:,} strings") or cut[
        "unit"
    ].startswith(f"xl/sharedStrings.xml past {held:,} strings")
