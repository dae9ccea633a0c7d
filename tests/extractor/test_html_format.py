"""HTML extraction: one test per rule of the reference extractor's HTML parser (seed "HTML.",
"HTML tables."), the labelled fixtures, the corpus through parse_artifact, and hostile input."""

from __future__ import annotations

import json
import platform
import re
import time
from pathlib import Path
from typing import Any

import pytest

from extractor_sandbox.errors import ExtractError
from extractor_sandbox.formats.html import PARSER_VERSION, extract_html
from extractor_sandbox.formats.html import reader as html_format
from extractor_sandbox.formats.html import tables as html_tables
from extractor_sandbox.source import decode
from tests.extractor.server_check import validated

GOLD = Path(__file__).resolve().parent / "gold" / "html"
CORPUS = Path(__file__).resolve().parents[3] / "shared" / "corpus" / "inputs" / "html"
FIFTY_MB = 50 * 1024 * 1024


def extract(text: str) -> dict[str, Any]:
    return extract_html(text, {})


def blocks_of(text: str) -> list[dict[str, Any]]:
    return extract(text)["blocks"]


def kinds(text: str) -> list[tuple[str, str]]:
    return [(block["type"], block["text"]) for block in blocks_of(text)]


def texts(text: str) -> list[str]:
    return [block["text"] for block in blocks_of(text)]


def lines_of(block: dict[str, Any]) -> tuple[int, int]:
    return block["locator"]["line_start"], block["locator"]["line_end"]


def table_rows(block: dict[str, Any]) -> list[list[str]]:
    return [line.split(" | ") for line in block["text"].split("\n")]


def only_table(text: str) -> dict[str, Any]:
    tables = [block for block in blocks_of(text) if block["type"] == "table"]
    assert len(tables) == 1, blocks_of(text)
    return tables[0]


def coverage_of(text: str) -> dict[str, Any]:
    coverage: dict[str, Any] = extract(text)["coverage"]
    return coverage


# The envelope


def test_artifact_envelope_is_contract_v1():
    artifact = extract("<p>Hello</p>")

    assert artifact["schema_version"] == 1
    assert artifact["format"] == "html"
    assert artifact["parser"] == "loom-html"
    assert artifact["parser_version"] == f"5+python{platform.python_version()}"
    assert PARSER_VERSION == artifact["parser_version"]
    assert (artifact["options"], artifact["attrs"], artifact["warnings"]) == ({}, {}, [])
    assert artifact["blocks"] == [
        {
            "id": "b0",
            "type": "paragraph",
            "text": "Hello",
            "section_path": [],
            "keys": [],
            "locator": {"line_start": 1, "line_end": 1},
        }
    ]
    assert artifact["coverage"] == {
        "unit": "chars",
        "total": 5,
        "extracted": 5,
        "failed": [],
        "lost": [],
        "complete": True,
    }


def test_locators_carry_line_spans_and_no_char_offsets():
    for block in blocks_of("<h1>T</h1>\n<p>a</p>\n<table><tr><td>x<td>y</table>\n<pre>c</pre>"):
        assert set(block["locator"]) == {"line_start", "line_end"}


def test_an_empty_document_is_an_empty_complete_artifact():
    artifact = extract("")

    assert artifact["blocks"] == []
    assert artifact["coverage"]["complete"] is True
    assert artifact["coverage"]["total"] == 0


# Headings


def test_headings_h1_to_h6_have_their_level_as_depth():
    blocks = blocks_of("".join(f"<h{n}>Title {n}</h{n}>" for n in range(1, 7)))

    assert [(b["type"], b["depth"], b["text"]) for b in blocks] == [
        ("heading", n, f"Title {n}") for n in range(1, 7)
    ]


def test_a_heading_text_drops_inline_tags_and_collapses_whitespace():
    assert kinds("<h2>  The <em>new</em>\n   <a href='#'>reader</a> </h2>") == [
        ("heading", "The new reader")
    ]


def test_an_empty_heading_is_no_block_and_opens_no_section():
    blocks = blocks_of("<h1>Top</h1><h2> <span></span> </h2><p>body</p>")

    assert [(b["type"], b["text"], b["section_path"]) for b in blocks] == [
        ("heading", "Top", []),
        ("paragraph", "body", ["Top"]),
    ]


def test_section_paths_and_parents_follow_the_headings():
    blocks = blocks_of("<h1>A</h1><h2>B</h2><p>x</p><h2>C</h2><p>y</p><h1>D</h1><p>z</p>")

    assert [(b["id"], b["section_path"], b.get("parent")) for b in blocks] == [
        ("b0", [], None),
        ("b1", ["A"], "b0"),
        ("b2", ["A", "B"], "b1"),
        ("b3", ["A"], "b0"),
        ("b4", ["A", "C"], "b3"),
        ("b5", [], None),
        ("b6", ["D"], "b5"),
    ]


# Paragraphs, quotes and definitions


def test_p_blockquote_dd_and_dt_are_paragraphs():
    source = "<p>para</p><blockquote>quote</blockquote><dl><dt>term</dt><dd>definition</dd></dl>"

    assert kinds(source) == [
        ("paragraph", "para"),
        ("paragraph", "quote"),
        ("paragraph", "term"),
        ("paragraph", "definition"),
    ]


def test_text_in_a_container_is_a_paragraph_of_its_own_per_container():
    assert kinds("<body>loose <div>a<div>b</div>c</div><section>d</section></body>") == [
        ("paragraph", "loose"),
        ("paragraph", "a"),
        ("paragraph", "b"),
        ("paragraph", "c"),
        ("paragraph", "d"),
    ]


def test_inline_tags_join_words_and_br_hr_separate_them():
    assert texts("<p>H<sub>2</sub>O and <b>bold</b>ly<br>next<hr>line</p>") == [
        "H2O and boldly next line"
    ]


def test_a_container_inside_a_block_leaves_it_open_and_separates_words():
    assert kinds("<p>before<div>inside</div>after</p>") == [("paragraph", "before inside after")]


def test_character_references_are_decoded_and_nbsp_is_whitespace():
    assert texts("<p>Fish &amp; chips&nbsp;&nbsp;for &#163;5 &#x2014; caf&eacute;</p>") == [
        "Fish & chips for \u00a35 \u2014 caf\u00e9"
    ]


# List items


def test_each_list_item_is_a_list_block():
    assert kinds("<ul><li>one</li><li>two</li></ul><ol><li>three</li></ol>") == [
        ("list", "one"),
        ("list", "two"),
        ("list", "three"),
    ]


def test_a_p_opening_a_list_item_and_the_ps_after_it_are_the_items_text():
    source = "<ul><li><p>First</p><p>second</p></li><li>Lead <p>then</p> <p>more</p></li></ul>"

    assert kinds(source) == [("list", "First second"), ("list", "Lead then more")]


def test_a_nested_list_is_items_of_its_own_and_the_words_after_it_a_list_block_again():
    source = "<ul><li>Outer<ul><li>inner one</li><li>inner two</li></ul>tail</li></ul>"

    assert kinds(source) == [
        ("list", "Outer"),
        ("list", "inner one"),
        ("list", "inner two"),
        ("list", "tail"),
    ]


# pre


def test_pre_is_a_code_block_kept_as_written():
    source = "<pre>\n  def f():\n      return <b>1</b>\r\n\n</pre>"

    assert kinds(source) == [("code", "  def f():\n      return 1")]


def test_br_inside_pre_is_a_line_break():
    assert texts("<pre>a<br>b</pre>") == ["a\nb"]


# Dropped elements


@pytest.mark.parametrize(
    "dropped",
    [
        "<script>var x = '<p>no</p>';</script>",
        "<style>p { color: red }</style>",
        "<template><p>no</p></template>",
        "<noscript><p>no</p></noscript>",
        "<svg><text>no</text><title>no</title></svg>",
        "<title>no</title>",
        "<head><meta charset=utf-8><title>no</title></head>",
    ],
)
def test_script_style_template_noscript_svg_title_and_head_are_dropped(dropped: str):
    artifact = extract(f"<p>yes</p>{dropped}<p>also</p>")

    assert [b["text"] for b in artifact["blocks"]] == ["yes", "also"]
    assert artifact["coverage"]["total"] == 7
    assert artifact["coverage"]["complete"] is True


def test_the_title_is_the_artifacts_attrs_title():
    artifact = extract("<html><head><title>  The &amp;\n Title </title></head><p>x</p>")

    assert artifact["attrs"] == {"title": "The & Title"}


def test_the_first_title_with_text_is_the_title_and_an_svg_title_is_not():
    source = "<svg><title>icon</title></svg><title> </title><title>Page</title><title>Other</title>"

    assert extract(source)["attrs"] == {"title": "Page"}


def test_an_unclosed_head_closes_at_the_first_body_element():
    source = "<html><head><title>T</title><meta x=1><h1>Heading</h1><p>p</p>"

    assert kinds(source) == [("heading", "Heading"), ("paragraph", "p")]


def test_an_unclosed_head_closes_at_the_first_text():
    source = "<html><head><title>T</title><link rel=x>Some text<p>p</p>"

    artifact = extract(source)
    assert [(b["type"], b["text"]) for b in artifact["blocks"]] == [
        ("paragraph", "Some text"),
        ("paragraph", "p"),
    ]
    assert artifact["attrs"] == {"title": "T"}


def test_an_unclosed_title_hides_the_rest_counted_as_not_read():
    artifact = extract("<p>a</p>\n<title>T\n<p>bc</p>")

    assert [b["text"] for b in artifact["blocks"]] == ["a"]
    assert artifact["attrs"] == {}
    assert artifact["coverage"]["failed"] == [
        {
            "unit": "3 chars",
            "reason": "hidden or dropped by elements left open, which hide the rest of the"
            " document: <title> at line 2",
        }
    ]


# Comments and text after the last tag


def test_a_comment_is_no_text():
    assert texts("<p>a<!-- not text -->b</p>") == ["ab"]


def test_an_unclosed_comment_is_read_as_text_up_to_the_next_gt_as_html_parser_does():
    assert texts("<p>a</p><!-- x <b>y") == ["a", "<!-- x <b>y"]


def test_text_after_the_last_tag_is_read():
    artifact = extract("<p>a</p>\ntail &amp; <b more")

    assert [(b["text"], lines_of(b)) for b in artifact["blocks"]] == [
        ("a", (1, 1)),
        ("tail & <b more", (2, 2)),
    ]


# Blocks whose end tag is left out


def test_a_paragraph_closes_at_the_next_block():
    assert kinds("<p>one<p>two<h2>three</h2>four<blockquote>five") == [
        ("paragraph", "one"),
        ("paragraph", "two"),
        ("heading", "three"),
        ("paragraph", "four"),
        ("paragraph", "five"),
    ]


def test_a_heading_closes_at_the_next_block():
    assert kinds("<h1>Title<p>body") == [("heading", "Title"), ("paragraph", "body")]


def test_a_list_item_closes_at_the_next_item_and_dt_dd_at_the_next_dt_or_dd():
    assert kinds("<ul><li>a<li>b</ul><dl><dt>t<dd>d<dd>e<dt>u</dl>") == [
        ("list", "a"),
        ("list", "b"),
        ("paragraph", "t"),
        ("paragraph", "d"),
        ("paragraph", "e"),
        ("paragraph", "u"),
    ]


def test_a_block_closes_at_its_containers_end():
    assert kinds("<div><p>inside</div>outside") == [
        ("paragraph", "inside"),
        ("paragraph", "outside"),
    ]


def test_a_block_closes_at_the_documents_end():
    artifact = extract("<h1>Open heading\n<p>open paragraph\n<ul><li>open item")

    assert [(b["type"], b["text"]) for b in artifact["blocks"]] == [
        ("heading", "Open heading"),
        ("paragraph", "open paragraph"),
        ("list", "open item"),
    ]
    assert artifact["coverage"]["complete"] is True


def test_an_end_tag_that_closes_nothing_open_is_ignored():
    assert kinds("<p>a</span></div></li>b</p>") == [("paragraph", "ab")]


# Line spans


def test_a_block_spans_from_its_first_text_line_to_its_last():
    source = "<p>\n\n   first words\n more\n   last words\n\n</p>\n<h2>\nT\n</h2>"

    assert [lines_of(b) for b in blocks_of(source)] == [(3, 5), (9, 9)]


def test_the_span_leaves_out_character_references_that_stand_for_whitespace():
    source = "<p>&nbsp;\nword\n&#160;&nbsp;\n</p>"

    assert [lines_of(b) for b in blocks_of(source)] == [(2, 2)]


def test_lines_end_at_crlf_cr_and_lf_as_split_lines_counts_them():
    source = "<p>a</p>\r\n<p>b</p>\r<p>c</p>\n<p>\r\nd\r\n</p>"

    assert [lines_of(b) for b in blocks_of(source)] == [(1, 1), (2, 2), (3, 3), (5, 5)]


def test_a_table_spans_its_cells_text_lines():
    source = "<table>\n<tr>\n<td>a</td><td>b</td>\n</tr>\n<tr><td>c</td>\n<td>d</td></tr>\n</table>"

    assert lines_of(only_table(source)) == (3, 6)


# Coverage


def test_coverage_counts_the_visible_characters_and_what_the_blocks_hold():
    assert coverage_of("<p>ab cd</p><script>xyz</script><p>e</p>") == {
        "unit": "chars",
        "total": 5,
        "extracted": 5,
        "failed": [],
        "lost": [],
        "complete": True,
    }


def test_the_pipes_joining_a_tables_cells_are_not_counted():
    coverage = coverage_of("<table><tr><td>a</td><td>b</td><td>c</td></tr></table>")

    assert (coverage["total"], coverage["extracted"]) == (3, 3)


def test_text_a_parser_change_drops_shows_in_coverage(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(html_format._Reader, "_table_block", lambda self, table: None)

    coverage = coverage_of("<p>kept</p><table><tr><td>ab</td><td>cd</td></tr></table>")

    assert (coverage["total"], coverage["extracted"], coverage["complete"]) == (8, 4, False)
    assert coverage["failed"] == [{"unit": "4 chars", "reason": "read but not held by any block"}]


# Hidden elements


@pytest.mark.parametrize(
    "hidden",
    [
        "<div hidden>not shown</div>",
        "<p hidden='until-found'>not shown</p>",
        "<p style='display:none'>not shown</p>",
        "<p style='color: red;DISPLAY : none !important'>not shown</p>",
        '<ul><li style="display: none;">not shown</li></ul>',
    ],
)
def test_a_hidden_element_is_not_read(hidden: str):
    artifact = extract(f"<p>before</p>{hidden}<p>after</p>")

    assert [b["text"] for b in artifact["blocks"]] == ["before", "after"]
    assert artifact["coverage"]["complete"] is True
    assert artifact["coverage"]["total"] == 11
    assert artifact["warnings"] == [
        "8 characters inside hidden elements (the hidden attribute, display:none) are not shown"
        " and are not read"
    ]


def test_style_without_display_none_is_shown():
    assert texts("<p style='display:block; color:none'>shown</p>") == ["shown"]


def test_a_hidden_inline_element_leaves_the_words_around_it_joined():
    assert texts("<p>vis<span hidden>HIDDEN</span>ible</p>") == ["visible"]


def test_a_hidden_element_left_open_hides_the_rest_counted_as_not_read():
    artifact = extract('<p>shown</p>\n<div class="m" hidden>\n<p>never</p>\n<p>closed</p>')

    assert [b["text"] for b in artifact["blocks"]] == ["shown"]
    assert artifact["coverage"] == {
        "unit": "chars",
        "total": 16,
        "extracted": 5,
        "failed": [
            {
                "unit": "11 chars",
                "reason": "hidden or dropped by elements left open, which hide the rest of the"
                " document: <div hidden> at line 2",
            }
        ],
        "lost": [],
        "complete": False,
    }


def test_the_failure_names_every_open_hidden_element_holding_text():
    artifact = extract("<p>a</p><section style='display:none'>bc\n<span hidden>de<b>f</b>")

    assert artifact["coverage"]["failed"] == [
        {
            "unit": "5 chars",
            "reason": "hidden or dropped by elements left open, which hide the rest of the"
            " document: <section style=display:none> at line 1, <span hidden> at line 2",
        }
    ]


def test_a_dropped_element_left_open_is_counted_the_same_way():
    artifact = extract("<p>a</p><script>var rest = 1;")

    assert artifact["coverage"]["total"] == 11
    assert artifact["coverage"]["extracted"] == 1
    assert artifact["coverage"]["failed"][0]["reason"].endswith("<script> at line 1")


def test_a_hidden_element_closed_by_its_containers_end_is_not_left_open():
    artifact = extract("<div><span hidden>gone</div><p>shown</p>")

    assert [b["text"] for b in artifact["blocks"]] == ["shown"]
    assert artifact["coverage"]["complete"] is True


# Tables


def test_a_table_is_one_block_a_row_per_line_cells_joined_by_pipes():
    block = only_table(
        "<table><tr><th>Name</th><th>Qty</th></tr><tr><td>Bolt</td><td>4</td></tr></table>"
    )

    assert block["text"] == "Name | Qty\nBolt | 4"
    assert block["attrs"] == {"table": {"rows": 2, "columns": 2}}


def test_a_cells_text_is_collapsed_and_its_inline_tags_dropped():
    block = only_table("<table><tr><td> a <b>b</b>\n c</td><td>x<br>y</td></tr></table>")

    assert table_rows(block) == [["a b c", "x y"]]


def test_rows_with_no_text_are_dropped():
    block = only_table(
        "<table><tr><td>a</td><td>b</td></tr><tr><td> </td><td>&nbsp;</td></tr>"
        "<tr></tr><tr><td>c</td><td></td></tr></table>"
    )

    assert table_rows(block) == [["a", "b"], ["c", ""]]
    assert block["attrs"]["table"] == {"rows": 2, "columns": 2}


def test_a_cell_after_a_rows_end_starts_the_next_row():
    block = only_table("<table><tr><td>a</td><td>b</td></tr><td>c</td><td>d</td></table>")

    assert table_rows(block) == [["a", "b"], ["c", "d"]]


@pytest.mark.parametrize("group", ["<thead>", "</thead>", "<tbody>", "</tbody>", "<tfoot>"])
def test_a_row_groups_start_or_end_ends_the_open_row(group: str):
    block = only_table(f"<table><tr><td>a<td>b{group}<td>c<td>d</table>")

    assert table_rows(block) == [["a", "b"], ["c", "d"]]


def test_captions_and_text_in_no_cell_are_paragraphs_before_the_table_in_order():
    source = (
        "<table><caption>The caption</caption>first loose<tr><td>a<td>b</tr>"
        "<p>a paragraph in no cell</p>second loose<tr><td>c<td>d</table>"
    )

    assert [(b["type"], b["text"]) for b in blocks_of(source)] == [
        ("paragraph", "The caption"),
        ("paragraph", "first loose"),
        ("paragraph", "a paragraph in no cell"),
        ("paragraph", "second loose"),
        ("table", "a | b\nc | d"),
    ]


def test_a_heading_list_or_table_in_a_caption_is_read_as_its_text():
    source = (
        "<table><caption><h2>Cap</h2><ul><li>one</li></ul>"
        "<table><tr><td>in</td><td>ner</td></tr></table></caption>"
        "<tr><td>a<td>b</table>"
    )

    assert kinds(source) == [("paragraph", "Cap one in ner"), ("table", "a | b")]


def test_a_caption_left_open_closes_at_the_first_row():
    assert kinds("<table><caption>Cap<tr><td>a<td>b</table>") == [
        ("paragraph", "Cap"),
        ("table", "a | b"),
    ]


def test_a_caption_left_open_holds_what_follows_in_no_cell():
    source = "<div><table><caption>Cap</div> and more<tr><td>a<td>b</table>"

    assert kinds(source) == [("paragraph", "Cap and more"), ("table", "a | b")]


def test_cells_are_placed_as_html_places_colspan_and_rowspan():
    block = only_table(
        "<table><tr><th>H1</th><th colspan=2>H2</th></tr>"
        "<tr><td rowspan=2>A</td><td>b</td><td>c</td></tr>"
        "<tr><td colspan=2>d</td></tr><tr><td>e</td><td>f</td><td>g</td></tr></table>"
    )

    assert table_rows(block) == [
        ["H1", "H2", ""],
        ["A", "b", "c"],
        ["", "d", ""],
        ["e", "f", "g"],
    ]


@pytest.mark.parametrize(
    ("value", "span"),
    [
        ("2", 2),
        (" 2", 2),
        ("+2", 2),
        ("2abc", 2),
        ("02", 2),
        ("0", 1),
        ("-2", 1),
        ("abc", 1),
        ("", 1),
        ("5000", 1000),
    ],
)
def test_colspan_is_read_as_html_reads_a_non_negative_integer(value: str, span: int):
    assert html_format._colspan([("colspan", value)]) == span


@pytest.mark.parametrize(
    ("value", "span"),
    [("3", 3), (" +3x", 3), ("0", 0), ("-1", 1), ("x", 1), ("99999", 65534)],
)
def test_rowspan_is_read_as_html_reads_a_non_negative_integer(value: str, span: int):
    assert html_format._rowspan([("rowspan", value)]) == span


def test_a_rowspan_holds_its_columns_below_as_empty_cells_until_its_row_group_ends():
    block = only_table(
        "<table><tbody><tr><td rowspan=9>A</td><td>1</td></tr><tr><td>2</td></tr></tbody>"
        "<tbody><tr><td>B</td><td>3</td></tr></tbody></table>"
    )

    assert table_rows(block) == [["A", "1"], ["", "2"], ["B", "3"]]


def test_rowspan_zero_spans_to_the_end_of_its_row_group():
    block = only_table(
        "<table><tr><td rowspan=0>A</td><td>1</td></tr><tr><td>2</td></tr>"
        "<tr><td>3</td></tr></table>"
    )

    assert table_rows(block) == [["A", "1"], ["", "2"], ["", "3"]]


def test_a_spacer_column_is_dropped():
    block = only_table(
        "<table><tr><td colspan=3>Title</td><td>n</td></tr>"
        "<tr><td>a</td><td></td><td>b</td><td>m</td></tr></table>"
    )

    assert table_rows(block) == [["Title", "", "n"], ["a", "b", "m"]]
    assert block["attrs"]["table"] == {"rows": 2, "columns": 3}


def test_a_spacer_column_a_cell_with_text_is_carried_down_into_is_kept():
    block = only_table(
        "<table><tr><td colspan=2 rowspan=2>Big</td><td>r1</td></tr>"
        "<tr><td>r2</td></tr><tr><td>p</td><td></td><td>q</td></tr></table>"
    )

    assert table_rows(block) == [["Big", "", "r1"], ["", "", "r2"], ["p", "", "q"]]


def test_a_spanning_cells_text_goes_to_the_first_kept_column_it_spans():
    block = only_table(
        "<table><tr><td></td><td>x</td><td>1</td></tr><tr><td colspan=2>wide</td><td>2</td></tr>"
        "<tr><td></td><td>y</td><td>3</td></tr></table>"
    )

    assert table_rows(block) == [["x", "1"], ["wide", "2"], ["y", "3"]]


def test_a_table_left_with_one_column_is_one_paragraph_without_attrs_table():
    blocks = blocks_of(
        "<table><tr><td colspan=2>Wrapped page</td></tr>"
        "<tr><td>second row</td><td></td></tr><tr><td>third</td></tr></table>"
    )

    assert [(b["type"], b["text"], b.get("attrs")) for b in blocks] == [
        ("paragraph", "Wrapped page\nsecond row\nthird", None)
    ]


@pytest.mark.parametrize(
    "content",
    [
        "<h3>a heading</h3>",
        "<ul><li>a list</li></ul>",
        "<pre>a pre</pre>",
        "<table><tr><td>a</td><td>table</td></tr></table>",
        "<p>one paragraph</p><p>a second paragraph</p>",
    ],
)
def test_a_cell_holding_a_heading_list_pre_table_or_second_paragraph_lays_out_a_page(
    content: str,
):
    blocks = blocks_of(
        f"<table><caption>cap</caption><tr><td>left</td><td>{content}</td></tr>"
        "text in no cell<tr><td>right</td><td>end</td></tr></table>"
    )

    assert all("left |" not in b["text"] for b in blocks)
    assert [b["text"] for b in blocks][:2] == ["cap", "left"]
    assert [b["text"] for b in blocks][-3:] == ["text in no cell", "right", "end"]


def test_a_layout_table_is_read_as_its_blocks_in_order_and_a_table_inside_is_a_table():
    source = (
        "<table><tr><td><h1>News</h1><p>Welcome</p></td></tr>"
        "<tr><td><table><tr><td>k</td><td>v</td></tr></table></td><td>side</td></tr></table>"
    )

    assert [(b["type"], b["text"]) for b in blocks_of(source)] == [
        ("heading", "News"),
        ("paragraph", "Welcome"),
        ("table", "k | v"),
        ("paragraph", "side"),
    ]


def test_text_directly_in_a_cell_beside_one_paragraph_is_the_cells_text_not_a_second_one():
    # The seed: a container's text is a paragraph of its own in no cell; in a cell it is the
    # cell's. A table of short text cells, one of them "Total <p>12</p>", stays a table.
    block = only_table(
        "<table><tr><th>Item</th><th>Count</th></tr>"
        "<tr><td>Total <b>(all)</b></td><td>sum <p>12</p> units</td></tr></table>"
    )

    assert table_rows(block) == [["Item", "Count"], ["Total (all)", "sum 12 units"]]


def test_one_paragraph_and_containers_in_a_cell_keep_the_table_a_table():
    block = only_table(
        "<table><tr><td><p>one <b>p</b></p></td><td><div>a</div><div>b</div></td></tr></table>"
    )

    assert table_rows(block) == [["one p", "a b"]]


@pytest.mark.parametrize(
    ("opener", "expected"),
    [
        ("<h2>H</h2>", ("heading", "H")),
        ("<ul><li>L</li></ul>", ("list", "L")),
        ("<li>L</li>", ("list", "L")),
        ("<dl><dt>D</dt></dl>", ("paragraph", "D")),
        ("<dd>D</dd>", ("paragraph", "D")),
        ("<pre>P</pre>", ("code", "P")),
    ],
)
def test_a_heading_list_item_definition_or_pre_in_no_cell_ends_the_table(
    opener: str, expected: tuple[str, str]
):
    source = f"<table><tr><td>a</td><td>b</td></tr>{opener}<tr><td>c</td><td>d</td></tr></table>"

    assert kinds(source) == [("table", "a | b"), expected, ("paragraph", "c d")]


def test_a_table_in_no_cell_ends_the_table():
    source = "<table><tr><td>a</td><td>b</td></tr><table><tr><td>c</td><td>d</td></tr></table>"

    assert kinds(source) == [("table", "a | b"), ("table", "c | d")]


def test_the_end_of_an_element_the_table_is_inside_is_no_end_of_it():
    source = (
        "<div><table><tr><td>a<td>b</tr></div><p>shown before</p>loose"
        "<tr><td>c<td>d</table></div><p>after</p>"
    )

    assert kinds(source) == [
        ("paragraph", "shown before"),
        ("paragraph", "loose"),
        ("table", "a | b\nc | d"),
        ("paragraph", "after"),
    ]


def test_a_cells_end_tags_are_scoped_to_the_cell():
    block = only_table("<table><tr><td><b>a</div></td><td>b</td></tr></table>")

    assert table_rows(block) == [["a", "b"]]


def test_a_hidden_cell_takes_no_column_and_a_hidden_row_no_row():
    block = only_table(
        "<table><tr><td>a</td><td hidden>h</td><td>b</td></tr>"
        "<tr style='display:none'><td>x</td><td>y</td></tr><tr><td>c</td><td>d</td></tr></table>"
    )

    assert table_rows(block) == [["a", "b"], ["c", "d"]]


def test_past_the_placing_bound_a_table_keeps_every_cell_in_source_order(
    monkeypatch: pytest.MonkeyPatch,
):
    monkeypatch.setattr(html_tables, "MAX_PLACED", 5)

    artifact = extract(
        "<table><tr><td rowspan=2>a</td><td>b</td><td>c</td></tr>"
        "<tr><td>d</td></tr><tr><td></td><td></td></tr></table>"
    )

    block = artifact["blocks"][0]
    assert table_rows(block) == [["a", "b", "c"], ["d", "", ""]]
    assert block["attrs"] == {"table": {"rows": 2, "columns": 3}}
    assert artifact["warnings"] == [
        "the table at line 1 places more than 5 cells: its cells are kept in source order,"
        " not placed in columns"
    ]
    assert artifact["coverage"]["complete"] is True


def test_a_grid_too_large_to_pad_keeps_every_cell_in_source_order(
    monkeypatch: pytest.MonkeyPatch,
):
    monkeypatch.setattr(html_tables, "MAX_PLACED", 12)

    artifact = extract(
        "<table><tr><td>a</td><td>b</td><td>c</td></tr><tr><td>d</td></tr>"
        "<tr><td>e</td></tr><tr><td colspan=3></td><td>f</td></tr></table>"
    )

    assert table_rows(artifact["blocks"][0]) == [
        ["a", "b", "c"],
        ["d", "", ""],
        ["e", "", ""],
        ["", "f", ""],
    ]
    assert len(artifact["warnings"]) == 1


# The fixtures and the corpus


FIXTURES = sorted(path.name.removesuffix(".gold.json") for path in GOLD.glob("*.gold.json"))


def gold_view(block: dict[str, Any]) -> dict[str, Any]:
    """A block as the gold states it: type, text (whitespace collapsed), depth, table rows."""
    if block["type"] == "table":
        return {"type": "table", "rows": [row for row in table_rows(block)]}
    view = {"type": block["type"], "text": " ".join(block["text"].split())}
    if block["type"] == "heading":
        view["depth"] = block["depth"]
    return view


def test_there_are_fixtures_for_every_rule_family():
    assert len(FIXTURES) >= 8


@pytest.mark.parametrize("name", FIXTURES)
def test_each_fixture_reads_as_its_gold(name: str):
    original = (GOLD / f"{name}.html").read_bytes()
    gold = json.loads((GOLD / f"{name}.gold.json").read_text(encoding="utf-8"))
    artifact = extract(decode(original, None, fmt="html"))

    expected = [
        {**block, "text": " ".join(block["text"].split())} if "text" in block else block
        for block in gold["blocks"]
    ]
    assert [gold_view(block) for block in artifact["blocks"]] == expected
    assert artifact["coverage"]["complete"] is True
    validated(artifact, original)


CORPUS_FILES = sorted(CORPUS.glob("*.html")) if CORPUS.is_dir() else []


@pytest.mark.skipif(not CORPUS_FILES, reason="the shared corpus is not here")
def test_every_corpus_artifact_passes_parse_artifact_and_is_complete():
    for path in CORPUS_FILES:
        original = path.read_bytes()
        artifact = extract(decode(original, None, fmt="html"))
        validated(artifact, original)
        assert artifact["coverage"]["complete"] is True, path.name


# Hostile input


def test_a_million_empty_cells_end_as_an_empty_complete_artifact():
    source = "<table><tr>" + "<td></td>" * 1_000_000 + "</tr></table><p>after</p>"

    artifact = extract(source)

    assert [b["text"] for b in artifact["blocks"]] == ["after"]
    assert artifact["coverage"]["complete"] is True
    validated(artifact, source.encode())


def test_huge_spans_stay_bounded():
    source = "<table>" + "<tr><td colspan=1000 rowspan=65534>x</td></tr>" * 2_000 + "</table>"

    artifact = extract(source)

    assert artifact["coverage"]["complete"] is True
    assert len(artifact["warnings"]) == 1
    validated(artifact, source.encode())


@pytest.mark.parametrize("tag", ["ul><li", "ol><li", "blockquote", "div", "dl><dd"])
def test_ten_thousand_nested_elements(tag: str):
    opener = f"<{tag}>"
    source = "".join(f"{opener}level {n} " for n in range(10_000))

    artifact = extract(source)

    assert len(artifact["blocks"]) == 10_000
    assert artifact["blocks"][-1]["text"] == "level 9999"
    assert artifact["coverage"]["complete"] is True
    validated(artifact, source.encode())


def test_ten_thousand_nested_tables():
    source = "".join(f"<table><tr><td>cell {n} " for n in range(10_000))

    artifact = extract(source)

    assert [b["text"] for b in artifact["blocks"][:2]] == ["cell 0", "cell 1"]
    assert len(artifact["blocks"]) == 10_000
    assert artifact["coverage"]["complete"] is True


def test_ten_thousand_nested_hidden_elements_left_open():
    source = "<p>shown</p>" + "<div hidden>x " * 10_000

    coverage = coverage_of(source)

    assert (coverage["total"], coverage["extracted"]) == (10_005, 5)
    assert coverage["failed"][0]["unit"] == "10000 chars"
    assert coverage["failed"][0]["reason"].endswith("<div hidden> at line 1, and 9980 more")


def test_a_50_mb_line():
    source = "<p>" + "word " * (FIFTY_MB // 5) + "</p>"

    artifact = extract(source)

    assert len(artifact["blocks"]) == 1
    assert artifact["coverage"]["complete"] is True
    assert artifact["coverage"]["total"] == 4 * (FIFTY_MB // 5)
    assert lines_of(artifact["blocks"][0]) == (1, 1)


def test_a_50_mb_heading_line_is_cut_in_section_paths():
    source = "<h1>" + "x" * FIFTY_MB + "</h1><p>under</p>"

    artifact = extract(source)

    assert artifact["blocks"][1]["section_path"] == ["x" * 500]
    assert artifact["blocks"][1]["attrs"] == {"section_truncated": True}
    assert artifact["coverage"]["lost"] == ["section_path"]


@pytest.mark.parametrize(
    "unit",
    [
        "<!--",
        "<a",
        "<a b='",
        "<a b='>",
        "<a b='>' c='",
        "<!-- <b>",
        "</a",
        "<?",
        "<!",
        "<![CDATA[",
        "<![if x]>",
        "<!DOCTYPE",
    ],
)
def test_malformed_markup_html_parser_is_quadratic_on_reads_in_linear_time(unit: str):
    # html.parser of Python 3.11 takes tens of seconds on 200 KB of most of these.
    source = "<p>start</p>" + unit * (2_000_000 // len(unit))

    started = time.monotonic()
    artifact = extract(source)

    assert time.monotonic() - started < 60
    assert artifact["blocks"][0]["text"] == "start"
    validated(artifact, source.encode())


def test_an_html_parser_failure_is_a_corrupt_error(monkeypatch: pytest.MonkeyPatch):
    def fail(self: Any, i: int) -> int:
        raise AssertionError("expected name token")

    monkeypatch.setattr(html_format._Reader, "parse_pi", fail)

    with pytest.raises(ExtractError) as raised:
        extract("<p>a</p><?x>")
    assert raised.value.code == "corrupt"


def test_whitespace_helpers_equal_the_regex_rules_for_every_code_point() -> None:
    # _non_ws counts with str.split and _collapse skips its regex on plain ASCII: both must read
    # every character as re's \s does (the rule they replaced).
    reader = html_format
    space = re.compile(r"\s+")
    chars = [chr(point) for point in range(0x110000) if not 0xD800 <= point < 0xE000]
    for char in chars:
        for text in (char, f"a{char}b", f" {char}{char} "):
            assert reader._non_ws(text) == len(space.sub("", text)), repr(text)
    for text in ["a  b", "a\tb", " a b ", "a\x1cb", "a\xa0b", "a\u3000 b", "", "  ", "x\r\ny"]:
        assert reader._collapse(text) == space.sub(" ", text).strip()
