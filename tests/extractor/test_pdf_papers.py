"""The PDF reader on what real papers and reports do (issue 16, the real-world PDF bench): bold
faces named by their foundry's series, numbered headings set one under another, a numbered title
in the body's own face, a bold title run on into its paragraph, a margin stamp across the page."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from extractor_sandbox.formats.pdf.blocks import numbering
from extractor_sandbox.formats.pdf.content import FACE_BOLD, MAX_RULES, Rule
from extractor_sandbox.formats.pdf.grids import cell_edges
from extractor_sandbox.formats.pdf.reader import extract_pdf
from tests.extractor.pdf_build import pdf, stream
from tests.extractor.server_check import validated

BODY = [
    "The reader takes each page as it is laid out and keeps the order of its text",
    "from the top of the page to its foot, column by column, as a person reads it,",
    "and it cites the page each block comes from so that a search can point to it.",
]


@pytest.fixture(autouse=True)
def _quiet_pypdf():
    logging.disable(logging.WARNING)
    yield
    logging.disable(logging.NOTSET)


def typeset(
    lines: list[tuple[str, float, float, float, str]], fonts: dict[str, str], extra: bytes = b""
) -> bytes:
    """A one-page PDF showing each (font, size, x, y, text), its fonts named as given (standard
    14 metrics stand in for the faces, so a font's name is all that tells its weight)."""
    names = list(fonts)
    ops = []
    for font, size, x, y, text in lines:
        escaped = text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")
        ops.append(
            b"BT /%s %g Tf 1 0 0 1 %g %g Tm (%s) Tj ET"
            % (font.encode(), size, x, y, escaped.encode("latin-1"))
        )
    font_refs = b" ".join(b"/%s %d 0 R" % (n.encode(), 5 + k) for k, n in enumerate(names))
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
        b"/Resources << /Font << " + font_refs + b" >> >> >>",
        stream(b"\n".join([*ops, extra])),
    ]
    for name in names:
        objects.append(
            b"<< /Type /Font /Subtype /Type1 /BaseFont /%s /Encoding /WinAnsiEncoding >>"
            % fonts[name].encode()
        )
    return pdf(objects)


def read(data: bytes) -> dict[str, Any]:
    return validated(extract_pdf(data, {}, name="paper.pdf"), data)


def headings(artifact: dict[str, Any]) -> list[tuple[str, int]]:
    return [(b["text"], b["depth"]) for b in artifact["blocks"] if b["type"] == "heading"]


def body(
    top: float, font: str = "R", size: float = 10
) -> list[tuple[str, float, float, float, str]]:
    return [(font, size, 72, top - 12 * k, text) for k, text in enumerate(BODY)]


URW = {"R": "NimbusRomNo9L-Regu", "B": "NimbusRomNo9L-Medi"}


@pytest.mark.parametrize(
    ("name", "bold"),
    [
        ("GCHCOS+NimbusRomNo9L-Medi", True),
        ("NimbusSanL-MediItal", True),
        ("JTSAAD+LinLibertineTB", True),
        ("LinBiolinumTBI", True),
        ("OSTBNK+SFRB1000", True),
        ("CMB10", True),
        ("NimbusRomNo9L-Regu", False),
        ("LinLibertineT", False),
        ("LinLibertineTI", False),
        ("SFRM1000", False),
        ("CMR10", False),
        ("Roboto-Medium", False),
    ],
)
def test_bold_faces_named_by_their_foundry_series(name: str, bold: bool) -> None:
    assert (FACE_BOLD.search(name.lower()) is not None) is bold


def test_a_heading_set_in_urw_medium_at_the_body_size_is_a_heading() -> None:
    lines = [*body(700), ("B", 10, 72, 650, "Related work"), *body(635)]
    artifact = read(typeset(lines, URW))
    assert headings(artifact) == [("Related work", 1)]


def test_numbered_headings_one_under_another_are_headings_not_a_table() -> None:
    lines = [
        ("B", 12, 72, 700, "2"),
        ("B", 12, 92, 700, "Related work"),
        ("B", 10, 72, 682, "2.1"),
        ("B", 10, 100, 682, "Natural language processing for legal documents"),
        *body(665),
    ]
    artifact = read(typeset(lines, URW))
    assert artifact["tables"] == []
    assert headings(artifact) == [
        ("2 Related work", 1),
        ("2.1 Natural language processing for legal documents", 2),
    ]


def test_a_table_with_a_bold_first_column_is_still_a_table() -> None:
    lines = []
    for k, (a, b) in enumerate([("Region", "Tonnes"), ("North", "120"), ("South", "95")]):
        lines += [("B", 10, 72, 700 - 13 * k, a), ("R", 10, 250, 700 - 13 * k, b)]
    [table] = read(typeset([*lines, *body(640)], URW))["tables"]
    assert [c["name"] for c in table["columns"]] == ["Region", "Tonnes"]


def test_a_numbered_title_in_the_body_face_on_its_own_line_is_a_heading() -> None:
    lines = [
        *body(700),
        ("R", 10, 72, 655, "3.1 Encoding module"),
        *body(643),
        ("R", 10, 72, 595, "3.2 Graph information module."),
        *body(583),
    ]
    artifact = read(typeset(lines, URW))
    assert headings(artifact) == [
        ("3.1 Encoding module", 1),
        ("3.2 Graph information module.", 1),
    ]
    after = artifact["blocks"][2]
    assert after["type"] == "paragraph" and after["text"].startswith("The reader takes")


@pytest.mark.parametrize(
    "first",
    [
        "3.1 million people were counted in the survey of the year, and the rest",
        "2.1 Background 12",  # a contents line: its page number at its end
        "4.2 The total, as it was counted",
    ],
)
def test_a_numbered_line_that_is_no_title_stays_in_its_paragraph(first: str) -> None:
    lines = [*body(700), ("R", 10, 72, 655, first), *body(643)]
    assert headings(read(typeset(lines, URW))) == []


def test_a_bold_title_run_on_into_its_paragraph_is_no_heading() -> None:
    # a wide title: its bold letters are most of the line, so the line as a whole reads bold
    title = "Implementation and computational resources."
    lines = [
        *body(700),
        ("B", 10, 72, 655, title),
        ("R", 10, 262, 655, "For the summarizers we"),
        *[("R", 10, 72, 643 - 12 * k, t) for k, t in enumerate(BODY)],
    ]
    artifact = read(typeset(lines, URW))
    assert headings(artifact) == []
    assert any(b["text"].startswith(title) for b in artifact["blocks"])


def test_text_across_the_page_is_never_a_heading() -> None:
    lines = [("R", 10, 72, 700 - 12 * k, BODY[k % 3]) for k in range(6)]
    stamp_ops = b"BT /B 20 Tf 0 1 -1 0 30 250 Tm (arXiv:2206.10883v3 [cs.CL] 22 Jul 2022) Tj ET"
    artifact = read(typeset(lines, URW, stamp_ops))
    stamp = next(b for b in artifact["blocks"] if b["text"].startswith("arXiv"))
    assert stamp["type"] == "paragraph"
    assert stamp["attrs"]["orientation"] == 90


@pytest.mark.parametrize(
    ("text", "level"),
    [("A.1 Accessing the data", 2), ("B.2.3 Reviewing", 3), ("2.1 Scope", 2), ("A word", 1)],
)
def test_an_appendix_number_gives_its_level_as_a_section_number_does(text: str, level: int) -> None:
    assert numbering(text) == level


def statistics_table() -> list[tuple[str, float, float, float, str]]:
    """A report's borderless table: a header over two columns, group labels alone on a line."""
    rows: list[list[tuple[float, str]]] = [
        [(72, "Content"), (250, "All items in the two years")],
        [(72, "domain"), (250, "Number"), (330, "Percent")],
        [(72, "Total items"), (250, "135"), (330, "100")],
        [(72, "Purposes of reading")],
        [(72, "Literary experience"), (250, "72"), (330, "53")],
        [(72, "Acquire and use information"), (250, "63"), (330, "47")],
        [(72, "Processes of comprehension")],
        [(72, "Make straightforward inferences"), (250, "46"), (330, "34")],
        [(72, "Interpret and integrate ideas"), (250, "38"), (330, "28")],
    ]
    return [("R", 10, x, 700 - 13 * k, text) for k, row in enumerate(rows) for x, text in row]


def test_a_borderless_table_keeps_its_group_labels_and_its_columns_under_a_spanning_header() -> (
    None
):
    [table] = read(typeset([*statistics_table(), *body(560)], URW))["tables"]
    cells = [[c["name"] for c in table["columns"]], *table["rows"]]
    assert cells[1] == ["domain", "Number", "Percent"]
    assert [row[0] for row in cells[2:]] == [
        "Total items",
        "Purposes of reading",
        "Literary experience",
        "Acquire and use information",
        "Processes of comprehension",
        "Make straightforward inferences",
        "Interpret and integrate ideas",
    ]
    assert all(len(row) == 3 for row in cells)
    assert cells[5] == ["Acquire and use information", 63, 47]


def test_a_label_between_rows_set_in_other_columns_joins_no_tables() -> None:
    rows: list[list[tuple[float, str]]] = [
        [(72, "Fleet"), (250, "Ships")],
        [(72, "North"), (250, "12")],
        [(72, "Ports")],
        [(72, "Harbour"), (180, "Berths"), (300, "Cranes")],
        [(72, "East"), (180, "4"), (300, "9")],
    ]
    lines = [("R", 10, x, 700 - 13 * k, text) for k, row in enumerate(rows) for x, text in row]
    tables = read(typeset([*lines, *body(600)], URW))["tables"]
    assert [[c["name"] for c in t["columns"]] for t in tables] == [
        ["Fleet", "Ships"],
        ["Harbour", "Berths", "Cranes"],
    ]


def test_columns_of_prose_that_break_words_with_hyphens_are_no_table() -> None:
    left = [
        "the percentage needing assistance",
        "for those aged eighty and older, as",
        "age plays such an impor-",
        "tant factor in health and disabil-",
        "ity measurement, comparisons",
    ]
    right = [
        "disability rate was statisti-",
        "cally unchanged from the rate in",
        "the year before; however, the aging",
        "of the population was a contribut-",
        "ing factor in holding the rate",
    ]
    lines = [("R", 10, 72, 700 - 12 * k, t) for k, t in enumerate(left)]
    lines += [("R", 10, 300, 700 - 12 * k, t) for k, t in enumerate(right)]
    artifact = read(typeset(lines, URW))
    assert artifact["tables"] == []


@pytest.mark.parametrize(
    ("line", "heading"),
    [
        ("Jishnu Ray Chowdhury, Yong Zhuang, Shuyi Wang", False),
        ("Yuqi Xi , Jiamin Lu *, Tingting Hang , Zhongyi Wang and", False),
        ("Methods, Data and Results", True),
    ],
)
def test_a_bold_line_of_authors_names_is_no_heading(line: str, heading: bool) -> None:
    lines = [*body(700), ("B", 10, 72, 650, line), *body(635)]
    assert headings(read(typeset(lines, URW))) == ([(line, 1)] if heading else [])


def shaded_cells(rows: int, columns: list[tuple[float, float]], top: float, height: float) -> bytes:
    ops = []
    for r in range(rows):
        y = top - (r + 1) * height
        for x0, x1 in columns:
            ops.append(b"0.9 g %g %g %g %g re f" % (x0, y, x1 - x0, height))
    return b" ".join(ops) + b" 0 g"


def test_a_table_whose_cells_are_shaded_boxes_edge_to_edge_is_a_ruled_table() -> None:
    columns = [(70.0, 200.0), (200.0, 300.0), (300.0, 400.0)]
    rows = [
        ("District", "FY 2010", "FY 2011"),
        ("Charged", "259", "215"),
        ("Sentenced", "207", "208"),
    ]
    lines = [
        ("R", 10, x0 + 4, 700 - 20 * r - 14, text)
        for r, row in enumerate(rows)
        for (x0, _), text in zip(columns, row, strict=True)
    ]
    data = typeset([*lines, *body(600)], URW, shaded_cells(3, columns, 700, 20))
    [table] = read(data)["tables"]
    assert table["attrs"]["ruled"] is True
    assert [c["name"] for c in table["columns"]] == ["District", "FY 2010", "FY 2011"]
    assert table["rows"] == [["Charged", 259, 215], ["Sentenced", 207, 208]]


def test_one_shaded_panel_behind_text_is_no_table() -> None:
    panel = b"0.9 g 60 560 400 160 re f 0 g"
    lines = [("R", 10, 72, 700 - 12 * k, BODY[k % 3]) for k in range(6)]
    assert read(typeset(lines, URW, panel))["tables"] == []


@pytest.mark.parametrize(
    ("line", "heading"),
    [
        ("Does the dataset identify any subpopulations? If so, describe how", False),
        ("U.S. Policy Review", True),
        ("Results vs. Baseline Methods", True),
    ],
)
def test_a_bold_line_that_ends_one_sentence_and_begins_another_is_no_heading(
    line: str, heading: bool
) -> None:
    lines = [*body(700), ("B", 10, 72, 650, line), *body(635)]
    assert headings(read(typeset(lines, URW))) == ([(line, 1)] if heading else [])


def test_shaded_cells_past_the_rules_bound_give_no_rules() -> None:
    row = [Rule(10.0 * k, 0.0, 10.0 * (k + 1), 5.0) for k in range(MAX_RULES // 4 + 1)]
    assert cell_edges(row) == []
    assert len(cell_edges(row[:3])) == 12
