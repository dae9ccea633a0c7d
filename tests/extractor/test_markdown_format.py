"""Markdown extraction: one test per rule of the reference extractor's Markdown parser."""

from __future__ import annotations

import platform
from typing import Any

import pytest

from extractor_sandbox.artifact import line_coverage, split_lines
from extractor_sandbox.formats import markdown, tables
from extractor_sandbox.formats.markdown import PARSER_VERSION, extract_markdown


def blocks_of(text: str) -> list[dict[str, Any]]:
    return extract_markdown(text)["blocks"]


def kinds(text: str) -> list[tuple[str, str]]:
    return [(block["type"], block["text"]) for block in blocks_of(text)]


def lines_of(block: dict[str, Any]) -> tuple[int, int]:
    return block["locator"]["line_start"], block["locator"]["line_end"]


def chars_of(block: dict[str, Any]) -> tuple[int, int]:
    return block["locator"]["char_start"], block["locator"]["char_end"]


def source_of(text: str, block: dict[str, Any]) -> str:
    start, end = chars_of(block)
    return text[start:end]


def headings(text: str) -> list[tuple[int, str]]:
    return [
        (block["depth"], block["text"]) for block in blocks_of(text) if block["type"] == "heading"
    ]


def coverage_of(text: str) -> tuple[int, int, bool]:
    coverage = extract_markdown(text)["coverage"]
    return coverage["total"], coverage["extracted"], coverage["complete"]


# The envelope


def test_artifact_envelope_is_contract_v1():
    artifact = extract_markdown("# T\n")

    assert artifact["schema_version"] == 1
    assert artifact["format"] == "markdown"
    assert artifact["parser"] == "loom-markdown"
    assert artifact["parser_version"] == f"3+python{platform.python_version()}"
    assert PARSER_VERSION == artifact["parser_version"]
    assert (artifact["options"], artifact["attrs"], artifact["warnings"]) == ({}, {}, [])
    assert artifact["coverage"]["unit"] == "lines"
    assert [block["id"] for block in artifact["blocks"]] == ["b0"]
    assert artifact["blocks"][0]["keys"] == []


# ATX headings


def test_atx_heading_levels_one_to_six():
    text = "# a\n## b\n### c\n#### d\n##### e\n###### f\n"

    assert headings(text) == [(1, "a"), (2, "b"), (3, "c"), (4, "d"), (5, "e"), (6, "f")]


def test_seven_hashes_or_no_space_is_not_a_heading():
    assert kinds("####### seven\n") == [("paragraph", "####### seven")]
    assert kinds("#hashtag\n") == [("paragraph", "#hashtag")]


def test_atx_closing_sequence_is_removed_but_not_a_hash_inside_a_word():
    assert headings("## Title ##\n") == [(2, "Title")]
    assert headings("# Title #####   \n") == [(1, "Title")]
    assert headings("# C#\n") == [(1, "C#")]
    assert headings("# Title # not closing\n") == [(1, "Title # not closing")]


def test_atx_heading_indented_up_to_three_spaces_not_four():
    assert headings("   # Three\n") == [(1, "Three")]
    assert kinds("    # Four\n") == [("code", "# Four")]


def test_atx_heading_drops_inline_markup_and_html_tags():
    assert headings("## **Bold** and `code` [link](x)\n") == [(2, "Bold and code link")]
    assert headings('# <a name="top"></a> Install   now\n') == [(1, "Install now")]


def test_atx_heading_span_covers_its_markup():
    text = "intro\n\n  ### Title ###\nafter\n"
    block = blocks_of(text)[1]

    assert block["type"] == "heading"
    assert block["text"] == "Title"
    assert lines_of(block) == (3, 3)
    assert source_of(text, block) == "  ### Title ###"


def test_atx_heading_interrupts_a_paragraph():
    text = "line one\n## Head\nline two\n"

    assert kinds(text) == [
        ("paragraph", "line one"),
        ("heading", "Head"),
        ("paragraph", "line two"),
    ]


def test_empty_atx_heading_is_markup_that_ends_the_paragraph_above():
    text = "para one\n# #\npara two\n#\n"
    blocks = blocks_of(text)

    assert [(block["type"], block["text"]) for block in blocks] == [
        ("paragraph", "para one"),
        ("paragraph", "para two"),
    ]
    assert [lines_of(block) for block in blocks] == [(1, 1), (3, 3)]
    assert coverage_of(text) == (4, 4, True)


def test_heading_whose_title_cleans_to_nothing_stays_a_paragraph():
    assert kinds('# <img src="logo.svg">\n') == [("paragraph", '# <img src="logo.svg">')]
    # It does not interrupt a paragraph either: it is that paragraph's text.
    text = 'Intro\n# <img src="logo.svg">\nmore\n'
    assert kinds(text) == [("paragraph", 'Intro\n# <img src="logo.svg">\nmore')]


# Setext headings


def test_setext_headings_level_one_and_two():
    text = "Top\n===\n\nSub\n---\n"
    blocks = blocks_of(text)

    assert [(block["type"], block["depth"], block["text"]) for block in blocks] == [
        ("heading", 1, "Top"),
        ("heading", 2, "Sub"),
    ]
    assert [lines_of(block) for block in blocks] == [(1, 2), (4, 5)]
    assert source_of(text, blocks[0]) == "Top\n==="
    assert source_of(text, blocks[1]) == "Sub\n---"


def test_setext_title_of_several_lines_is_joined_with_a_space():
    text = "A long\n  title here\n   ---\n"
    blocks = blocks_of(text)

    assert [(block["depth"], block["text"]) for block in blocks] == [(2, "A long title here")]
    assert lines_of(blocks[0]) == (1, 3)
    assert chars_of(blocks[0]) == (0, len(text) - 1)


def test_setext_underline_indented_four_spaces_is_paragraph_text():
    assert kinds("Title\n    ---\n") == [("paragraph", "Title\n    ---")]


def test_list_item_over_dashes_is_not_a_setext_heading():
    text = "- item\n---\n"

    assert kinds(text) == [("list", "item")]
    assert coverage_of(text) == (2, 2, True)


def test_quote_over_dashes_is_not_a_setext_heading():
    assert kinds("> quoted\n---\n") == [("paragraph", "quoted")]


def test_thematic_break_over_dashes_is_not_a_setext_heading():
    text = "***\n---\n"

    assert blocks_of(text) == []
    assert coverage_of(text) == (2, 2, True)


def test_equals_line_without_a_paragraph_is_text():
    assert kinds("===\n") == [("paragraph", "===")]


def test_paragraph_that_cleans_to_nothing_over_an_underline_is_no_heading():
    assert kinds("<b></b>\n===\n") == [("paragraph", "<b></b>\n===")]


# One-line HTML headings


def test_one_line_html_heading():
    text = 'Intro\n<h2 align="center">Getting <b>started</b></h2>\nBody\n'
    blocks = blocks_of(text)

    assert [(block["type"], block["text"]) for block in blocks] == [
        ("paragraph", "Intro"),
        ("heading", "Getting started"),
        ("paragraph", "Body"),
    ]
    assert blocks[1]["depth"] == 2
    assert lines_of(blocks[1]) == (2, 2)
    assert source_of(text, blocks[1]) == '<h2 align="center">Getting <b>started</b></h2>'


def test_html_heading_that_cleans_to_nothing_is_an_html_block():
    assert kinds('<h1><img src="x.png"></h1>\n') == [("paragraph", '<h1><img src="x.png"></h1>')]


# Section paths and parents


def test_section_path_and_parent_follow_the_enclosing_headings():
    text = "pre\n\n# A\n\na text\n\n## B\n\nb text\n\n### C\n\n## D\n\nd text\n\n# E\n"
    blocks = blocks_of(text)

    summary = [
        (block["id"], block["type"], block["text"], block["section_path"], block.get("parent"))
        for block in blocks
    ]
    assert summary == [
        ("b0", "paragraph", "pre", [], None),
        ("b1", "heading", "A", [], None),
        ("b2", "paragraph", "a text", ["A"], "b1"),
        ("b3", "heading", "B", ["A"], "b1"),
        ("b4", "paragraph", "b text", ["A", "B"], "b3"),
        ("b5", "heading", "C", ["A", "B"], "b3"),
        ("b6", "heading", "D", ["A"], "b1"),
        ("b7", "paragraph", "d text", ["A", "D"], "b6"),
        ("b8", "heading", "E", [], None),
    ]


def test_skipped_levels_nest_under_the_nearest_higher_heading():
    text = "# A\n### C\nc\n## B\nb\n"
    blocks = blocks_of(text)

    assert [(block["text"], block["section_path"], block.get("parent")) for block in blocks] == [
        ("A", [], None),
        ("C", ["A"], "b0"),
        ("c", ["A", "C"], "b1"),
        ("B", ["A"], "b0"),
        ("b", ["A", "B"], "b3"),
    ]


def test_heading_title_over_500_chars_is_cut_in_section_paths_and_marked():
    title = "T" * 600
    artifact = extract_markdown(f"# {title}\n\nbody\n")
    heading, body = artifact["blocks"]

    assert heading["text"] == title
    assert heading["section_path"] == []
    assert "attrs" not in heading
    assert body["section_path"] == ["T" * 500]
    assert body["attrs"] == {"section_truncated": True}
    assert artifact["coverage"]["lost"] == ["section_path"]
    assert artifact["coverage"]["complete"] is False


# Paragraphs


def test_paragraph_text_is_its_source_lines_without_inline_markup():
    text = "First *line*\n  second line  \n\nnext"
    blocks = blocks_of(text)

    assert [block["text"] for block in blocks] == ["First line\n  second line  ", "next"]
    assert [lines_of(block) for block in blocks] == [(1, 2), (4, 4)]
    assert source_of(text, blocks[0]) == "First *line*\n  second line  "
    assert source_of(text, blocks[1]) == "next"


def test_indented_line_inside_a_paragraph_is_its_text_not_code():
    assert kinds("para\n    still para\n") == [("paragraph", "para\n    still para")]


# Thematic breaks


def test_thematic_breaks_are_markup_that_end_a_paragraph():
    for rule in ("***", "- - -", "___", " * * * ", "_____", "-- -"):
        text = f"above\n{rule}\nbelow\n"
        assert kinds(text) == [("paragraph", "above"), ("paragraph", "below")], rule
        assert coverage_of(text) == (3, 3, True), rule


def test_dashes_after_a_blank_line_are_a_thematic_break():
    text = "above\n\n---\nbelow\n"

    assert kinds(text) == [("paragraph", "above"), ("paragraph", "below")]
    assert coverage_of(text) == (3, 3, True)


def test_thematic_break_ends_a_list():
    text = "- a\n- b\n***\n- c\n"
    blocks = blocks_of(text)

    assert [(block["type"], block["text"]) for block in blocks] == [
        ("list", "a"),
        ("list", "b"),
        ("list", "c"),
    ]
    assert [lines_of(block) for block in blocks] == [(1, 1), (2, 2), (4, 4)]


# Fenced code


def test_fenced_code_body_without_fences_span_with_them():
    text = "intro\n\n```python\nprint(1)\n\nprint(2)\n```\nafter\n"
    blocks = blocks_of(text)
    code = blocks[1]

    assert code["type"] == "code"
    assert code["text"] == "print(1)\n\nprint(2)"
    assert code["attrs"] == {"language": "python"}
    assert lines_of(code) == (3, 7)
    assert source_of(text, code) == "```python\nprint(1)\n\nprint(2)\n```"
    assert blocks[2]["text"] == "after"


def test_tilde_fence_and_info_string_after_the_language():
    text = "~~~~ js title=app.js  linenos\nlet x\n~~~~\n"
    code = blocks_of(text)[0]

    assert code["text"] == "let x"
    assert code["attrs"] == {"language": "js", "info": "title=app.js  linenos"}


def test_fence_closes_only_on_a_bare_run_of_its_char_at_least_as_long():
    text = "````\n```\n~~~~\n```` not bare\n`````\nafter\n"
    blocks = blocks_of(text)

    assert [(block["type"], block["text"]) for block in blocks] == [
        ("code", "```\n~~~~\n```` not bare"),
        ("paragraph", "after"),
    ]
    assert lines_of(blocks[0]) == (1, 5)


def test_empty_fenced_block_is_a_block_and_keeps_its_language():
    text = "```sql\n```\n"
    blocks = blocks_of(text)

    assert len(blocks) == 1
    assert blocks[0]["type"] == "code"
    assert blocks[0]["text"] == ""
    assert blocks[0]["attrs"] == {"language": "sql"}
    assert lines_of(blocks[0]) == (1, 2)
    assert coverage_of(text) == (2, 2, True)


def test_fence_without_info_has_no_attrs():
    assert "attrs" not in blocks_of("```\nx\n```\n")[0]


def test_unclosed_fence_runs_to_the_end_of_the_document():
    text = "```\n# not a heading\n\ntext"
    blocks = blocks_of(text)

    assert [(block["type"], block["text"]) for block in blocks] == [
        ("code", "# not a heading\n\ntext")
    ]
    assert lines_of(blocks[0]) == (1, 4)
    assert chars_of(blocks[0]) == (0, len(text))


def test_fence_indentation_is_removed_from_its_body():
    text = "  ```\n  two\n   three\n one\n  ```\n"

    assert kinds(text) == [("code", "two\n three\none")]


def test_fence_interrupts_a_paragraph_and_headings_inside_it_are_code():
    text = "para\n```\n# inside\n```\n"

    assert kinds(text) == [("paragraph", "para"), ("code", "# inside")]


def test_backtick_fence_whose_info_holds_a_backtick_is_not_a_fence():
    assert kinds("``` a`b\ntext\n") == [("paragraph", "``` a`b\ntext")]


def test_fence_indented_four_spaces_is_indented_code():
    assert kinds("    ```\n    x\n") == [("code", "```\nx")]


# Indented code


def test_indented_code_block():
    text = "    line 1\n\n\tline 2\n\npara\n"
    blocks = blocks_of(text)

    assert [(block["type"], block["text"]) for block in blocks] == [
        ("code", "line 1\n\nline 2"),
        ("paragraph", "para"),
    ]
    assert blocks[0]["attrs"] == {"indented": True}
    assert lines_of(blocks[0]) == (1, 3)


# Lists


def test_each_list_item_is_a_block_of_its_own_without_its_marker():
    text = "- one\n- two\n- three\n"
    blocks = blocks_of(text)

    assert [(block["type"], block["text"]) for block in blocks] == [
        ("list", "one"),
        ("list", "two"),
        ("list", "three"),
    ]
    assert [block["attrs"] for block in blocks] == [{"ordered": False, "depth": 1}] * 3
    assert [lines_of(block) for block in blocks] == [(1, 1), (2, 2), (3, 3)]
    assert [source_of(text, block) for block in blocks] == ["- one", "- two", "- three"]


def test_ordered_list_with_either_delimiter():
    assert kinds("1. one\n2. two\n10. ten\n") == [("list", "one"), ("list", "two"), ("list", "ten")]
    assert blocks_of("3) c\n4) d\n")[0]["attrs"] == {"ordered": True, "depth": 1}


def test_other_bullet_or_delimiter_starts_another_list():
    blocks = blocks_of("- a\n+ b\n1. c\n1) d\n")
    assert [(block["text"], block["attrs"]["ordered"]) for block in blocks] == [
        ("a", False),
        ("b", False),
        ("c", True),
        ("d", True),
    ]


def test_loose_item_paragraphs_code_and_nested_items_are_blocks_with_their_depth():
    text = "* first\n\n  more of first\n\n      code in item\n* second\n  - nested\n\nafter\n"
    blocks = blocks_of(text)

    assert [(block["type"], block["text"]) for block in blocks] == [
        ("list", "first"),
        ("list", "more of first"),
        ("code", "code in item"),
        ("list", "second"),
        ("list", "nested"),
        ("paragraph", "after"),
    ]
    assert [lines_of(block) for block in blocks] == [(1, 1), (3, 3), (5, 5), (6, 6), (7, 7), (9, 9)]
    assert [block.get("attrs", {}).get("depth") for block in blocks] == [1, 1, None, 1, 2, None]


def test_lazy_line_continues_a_list_item_until_a_blank_line():
    text = "- item starts\nand wraps lazily\n\nnot in the list\n"

    assert kinds(text) == [
        ("list", "item starts\nand wraps lazily"),
        ("paragraph", "not in the list"),
    ]


def test_wrapped_line_that_starts_with_a_number_stays_prose():
    text = "The project began in\n2019. was a year of growth.\n"

    assert kinds(text) == [("paragraph", "The project began in\n2019. was a year of growth.")]


def test_item_numbered_one_or_a_bullet_interrupts_a_paragraph():
    assert kinds("Steps:\n1. do this\n2. then that\n") == [
        ("paragraph", "Steps:"),
        ("list", "do this"),
        ("list", "then that"),
    ]
    assert kinds("Items:\n- a\n") == [("paragraph", "Items:"), ("list", "a")]


def test_empty_item_does_not_interrupt_a_paragraph():
    assert kinds("text\n*\nmore\n") == [("paragraph", "text\n*\nmore")]
    assert kinds("text\n1.\nmore\n") == [("paragraph", "text\n1.\nmore")]
    # A lone "-" under a paragraph is a setext underline, as in CommonMark.
    assert kinds("text\n-\n") == [("heading", "text")]


def test_ordered_list_at_block_start_may_begin_at_any_number():
    blocks = blocks_of("2019. was a year\n")

    assert [(block["type"], block["text"]) for block in blocks] == [("list", "was a year")]
    assert blocks[0]["attrs"] == {"ordered": True, "depth": 1}


def test_empty_item_over_a_blank_line_takes_no_content():
    # The marker alone is markup: no block, and its line is still covered.
    assert kinds("-\n\n  foo\n") == [("paragraph", "  foo")]
    assert coverage_of("-\n\n  foo\n") == (2, 2, True)


def test_heading_ends_a_list():
    assert kinds("- a\n# H\n") == [("list", "a"), ("heading", "H")]


# HTML blocks


def test_comment_block_ends_on_its_end_marker_line_so_a_setext_title_can_follow():
    text = "<!-- a comment\n\nstill comment -->\nTitle\n=====\n"
    blocks = blocks_of(text)

    assert [(block["type"], block["text"]) for block in blocks] == [
        ("paragraph", "<!-- a comment\n\nstill comment -->"),
        ("heading", "Title"),
    ]
    assert blocks[0]["attrs"] == {"html": True}
    assert [lines_of(block) for block in blocks] == [(1, 3), (4, 5)]


def test_raw_text_tag_block_ends_on_its_closing_tag_line():
    text = "<pre>\n# not a heading\n\n</pre>\nafter\n"

    assert kinds(text) == [
        ("paragraph", "<pre>\n# not a heading\n\n</pre>"),
        ("paragraph", "after"),
    ]


def test_processing_instruction_declaration_and_cdata_blocks():
    assert kinds("<?php\necho 1;\n?>\nx\n") == [
        ("paragraph", "<?php\necho 1;\n?>"),
        ("paragraph", "x"),
    ]
    assert kinds("<!DOCTYPE html>\nx\n") == [
        ("paragraph", "<!DOCTYPE html>"),
        ("paragraph", "x"),
    ]
    assert kinds("<![CDATA[\na\n]]>\nx\n") == [
        ("paragraph", "<![CDATA[\na\n]]>"),
        ("paragraph", "x"),
    ]


def test_block_level_tag_block_ends_at_a_blank_line():
    text = '<p align="center">\n  <img src="logo.png">\nTitle\n---\n\nafter\n'

    assert kinds(text) == [
        ("paragraph", '<p align="center">\n  <img src="logo.png">\nTitle\n---'),
        ("paragraph", "after"),
    ]


def test_html_block_interrupts_a_paragraph():
    assert kinds("para\n<div>\nx\n") == [("paragraph", "para"), ("paragraph", "<div>\nx")]


def test_tag_only_line_opens_a_block_but_is_text_inside_a_paragraph():
    assert kinds("<span>\n*hi*\n\nx\n") == [("paragraph", "<span>\n*hi*"), ("paragraph", "x")]
    assert kinds("para\n</span>\nmore\n") == [("paragraph", "para\n</span>\nmore")]


def test_html_block_is_never_a_heading_title():
    assert kinds("<div>\nTitle\n===\n") == [("paragraph", "<div>\nTitle\n===")]


# Blockquotes


def test_blockquote_is_a_paragraph_with_markers_stripped():
    text = "> first\n>second\n> > nested\nlazy line\n\nafter\n"
    blocks = blocks_of(text)

    assert [(block["type"], block["text"]) for block in blocks] == [
        ("paragraph", "first\nsecond\n> nested\nlazy line"),
        ("paragraph", "after"),
    ]
    assert blocks[0]["attrs"] == {"quote": True}
    assert lines_of(blocks[0]) == (1, 4)
    assert source_of(text, blocks[0]) == "> first\n>second\n> > nested\nlazy line"


def test_blockquote_interrupts_a_paragraph_and_a_heading_ends_it():
    assert kinds("para\n> q\n# H\n") == [
        ("paragraph", "para"),
        ("paragraph", "q"),
        ("heading", "H"),
    ]


# Front matter


def test_front_matter_is_one_block_with_its_delimiters_in_its_span():
    text = "---\ntitle: Runbook\ntags:\n  - ops\n---\n# Runbook\n"
    blocks = blocks_of(text)

    assert blocks[0]["type"] == "paragraph"
    assert blocks[0]["text"] == "title: Runbook\ntags:\n  - ops"
    assert blocks[0]["attrs"] == {"front_matter": True}
    assert lines_of(blocks[0]) == (1, 5)
    assert source_of(text, blocks[0]) == "---\ntitle: Runbook\ntags:\n  - ops\n---"
    assert (blocks[1]["type"], blocks[1]["text"], blocks[1]["section_path"]) == (
        "heading",
        "Runbook",
        [],
    )
    assert coverage_of(text) == (6, 6, True)


def test_front_matter_may_close_with_dots():
    blocks = blocks_of("---\na: 1\n...\ntext\n")

    assert blocks[0]["attrs"] == {"front_matter": True}
    assert lines_of(blocks[0]) == (1, 3)
    assert blocks[1]["text"] == "text"


def test_hash_line_between_dashes_is_a_heading_not_front_matter():
    text = "---\n# Title\nkey: value\n---\n"

    assert kinds(text) == [("heading", "Title"), ("heading", "key: value")]


def test_unclosed_or_late_dashes_are_not_front_matter():
    assert kinds("---\na: 1\n") == [("paragraph", "a: 1")]
    assert kinds("intro\n\n---\na: 1\n---\n") == [
        ("paragraph", "intro"),
        ("heading", "a: 1"),
    ]


# Coverage


def test_coverage_counts_non_blank_lines_including_markup():
    text = "---\nk: v\n---\n\n# H\n\n```\ncode\n```\n\n***\n#\n\npara\n"

    assert coverage_of(text) == (10, 10, True)


def test_coverage_counted_from_spans_reports_a_dropped_block_as_failed():
    text = "# H\n\npara one\npara two\n\n- item\n"
    blocks = blocks_of(text)
    without_paragraph = [block for block in blocks if block["type"] != "paragraph"]

    coverage = line_coverage(split_lines(text), without_paragraph)

    assert (coverage["total"], coverage["extracted"]) == (4, 2)
    assert coverage["failed"] == [{"unit": "lines 3-4", "reason": "not read into any block"}]
    assert coverage["complete"] is False


# Line endings and characters


def test_crlf_document_lines_and_chars():
    text = "# Title\r\n\r\nPara one\r\nline two\r\n\r\n```py\r\ncode\r\n```\r\n"
    blocks = blocks_of(text)

    assert [(block["type"], block["text"]) for block in blocks] == [
        ("heading", "Title"),
        ("paragraph", "Para one\r\nline two"),
        ("code", "code"),
    ]
    assert [lines_of(block) for block in blocks] == [(1, 1), (3, 4), (6, 8)]
    # Every "\r" counts: the heading is 7 chars, the paragraph starts after "# Title\r\n\r\n".
    assert [chars_of(block) for block in blocks] == [(0, 7), (11, 29), (33, 49)]
    assert source_of(text, blocks[1]) == "Para one\r\nline two"
    assert source_of(text, blocks[2]) == "```py\r\ncode\r\n```"
    assert coverage_of(text) == (6, 6, True)


def test_crlf_setext_heading():
    text = "Title\r\n---\r\nbody\r\n"
    blocks = blocks_of(text)

    assert [(block["type"], block["text"]) for block in blocks] == [
        ("heading", "Title"),
        ("paragraph", "body"),
    ]
    assert chars_of(blocks[0]) == (0, 10)
    assert chars_of(blocks[1]) == (12, 16)


def test_char_offsets_are_code_points():
    text = "# Ünïcödé 🎉\n\nnext\n"
    blocks = blocks_of(text)

    assert chars_of(blocks[0]) == (0, 11)
    assert chars_of(blocks[1]) == (13, 17)


# A realistic document


RUNBOOK = """\
---
title: Payments runbook
owner: sre
---
<!-- generated from the wiki; edit there -->
<p align="center"><img src="logo.png"></p>

# Payments runbook

The payments service settles card transactions.
It runs in two regions.

## Alerts

- `PaymentsLatencyHigh`: p99 over 2 s
- `PaymentsErrors`: 5xx over 1%
  for five minutes

### Restarting

1. Drain the node:

   ```bash
   kubectl drain node-1
   ```
2. Restart the pod.

***

Escalation
----------

> Page the on-call lead
> after 15 minutes.

| Region | Contact |
|--------|---------|
| eu     | @alice  |

```
# not a heading
```
"""


def test_realistic_document():
    artifact = extract_markdown(RUNBOOK)
    blocks = artifact["blocks"]

    summary = [
        (
            block["type"],
            block.get("depth"),
            block["section_path"],
            block.get("parent"),
            lines_of(block),
        )
        for block in blocks
    ]
    assert summary == [
        ("paragraph", None, [], None, (1, 4)),  # front matter
        ("paragraph", None, [], None, (5, 5)),  # comment
        ("paragraph", None, [], None, (6, 6)),  # <p align=center>
        ("heading", 1, [], None, (8, 8)),
        ("paragraph", None, ["Payments runbook"], "b3", (10, 11)),
        ("heading", 2, ["Payments runbook"], "b3", (13, 13)),
        ("list", None, ["Payments runbook", "Alerts"], "b5", (15, 15)),
        ("list", None, ["Payments runbook", "Alerts"], "b5", (16, 17)),
        ("heading", 3, ["Payments runbook", "Alerts"], "b5", (19, 19)),
        ("list", None, ["Payments runbook", "Alerts", "Restarting"], "b8", (21, 21)),
        ("code", None, ["Payments runbook", "Alerts", "Restarting"], "b8", (23, 25)),
        ("list", None, ["Payments runbook", "Alerts", "Restarting"], "b8", (26, 26)),
        ("heading", 2, ["Payments runbook"], "b3", (30, 31)),
        ("paragraph", None, ["Payments runbook", "Escalation"], "b12", (33, 34)),
        ("table", None, ["Payments runbook", "Escalation"], "b12", (36, 38)),
        ("code", None, ["Payments runbook", "Escalation"], "b12", (40, 42)),
    ]
    texts = [block["text"] for block in blocks]
    assert texts[0] == "title: Payments runbook\nowner: sre"
    assert texts[3] == "Payments runbook"
    assert texts[5] == "Alerts"
    assert texts[6] == "PaymentsLatencyHigh: p99 over 2 s"
    assert texts[7] == "PaymentsErrors: 5xx over 1%\nfor five minutes"
    assert texts[8] == "Restarting"
    assert texts[9] == "Drain the node:"
    assert texts[10] == "kubectl drain node-1"
    assert texts[11] == "Restart the pod."
    assert texts[12] == "Escalation"
    assert texts[13] == "Page the on-call lead\nafter 15 minutes."
    assert texts[14] == "Region | Contact\neu | @alice"
    assert texts[15] == "# not a heading"
    assert blocks[0]["attrs"] == {"front_matter": True}
    assert blocks[1]["attrs"] == {"html": True}
    assert blocks[9]["attrs"] == {"ordered": True, "depth": 1}
    assert artifact["tables"][0]["rows"] == [["eu", "@alice"]]

    # Paragraphs and HTML are cited by exactly their source, list items from their marker.
    for index in (1, 2, 4):
        assert source_of(RUNBOOK, blocks[index]) == texts[index], index
    assert source_of(RUNBOOK, blocks[3]) == "# Payments runbook"
    assert source_of(RUNBOOK, blocks[6]) == "- `PaymentsLatencyHigh`: p99 over 2 s"
    assert source_of(RUNBOOK, blocks[12]) == "Escalation\n----------"

    # Line 28 ("***") is markup; every other non-blank line is in a block.
    assert artifact["coverage"] == {
        "unit": "lines",
        "total": 30,
        "extracted": 30,
        "failed": [],
        "lost": [],
        "complete": True,
    }


def test_every_locator_lies_within_the_text():
    for block in blocks_of(RUNBOOK):
        line_start, line_end = lines_of(block)
        char_start, char_end = chars_of(block)
        assert 1 <= line_start <= line_end <= RUNBOOK.count("\n")
        assert 0 <= char_start <= char_end <= len(RUNBOOK)


# Pipe tables (GitHub-flavoured)


def test_pipe_table_is_one_table_block_a_row_per_line_cells_joined_by_pipes():
    text = "| Name | Qty |\n|:-----|----:|\n| apple | 3 |\n| pear | 10 |\n"
    artifact = extract_markdown(text)
    [block] = artifact["blocks"]

    assert block["type"] == "table"
    assert block["text"] == "Name | Qty\napple | 3\npear | 10"
    assert block["attrs"]["table"] == {
        "rows": 3,
        "columns": 2,
        "header_rows": 1,
        "align": ["left", "right"],
        "row_lines": [1, 3, 4],
    }
    assert lines_of(block) == (1, 4)
    assert artifact["coverage"]["complete"] is True


def test_pipe_table_is_a_typed_table_of_the_artifact():
    text = "intro\n\n| Name | Qty | Due |\n| --- | --- | --- |\n| apple | 3 | 2026-01-02 |\n"
    artifact = extract_markdown(text)

    assert artifact["tables"] == [
        {
            "id": "t0",
            "name": "table 1",
            "columns": [
                {"name": "Name", "type": "string"},
                {"name": "Qty", "type": "number"},
                {"name": "Due", "type": "date"},
            ],
            "rows": [["apple", 3, "2026-01-02"]],
            "header_rows": 1,
            "locator": {"line_start": 3, "line_end": 5, "row_start": 1, "row_end": 2},
        }
    ]
    assert artifact["blocks"][1]["attrs"]["table_id"] == "t0"


def test_a_table_cell_written_with_a_leading_zero_is_text_as_a_csv_field_is():
    text = "| Code | Qty |\n| --- | --- |\n| 007 | 0 |\n| 06427 | 10 |\n"
    table = extract_markdown(text)["tables"][0]

    assert [column["type"] for column in table["columns"]] == ["string", "number"]
    assert table["rows"] == [["007", 0], ["06427", 10]]


def test_escaped_pipes_and_pipes_in_code_spans_are_cell_text():
    text = "| a | b |\n|---|---|\n| x \\| y | `p|q` |\n"
    artifact = extract_markdown(text)

    assert artifact["blocks"][0]["text"] == "a | b\nx | y | p|q"
    assert artifact["tables"][0]["rows"] == [["x | y", "p|q"]]


def test_table_cells_lose_their_inline_markup_and_rows_take_the_headers_width():
    text = "| **Bold** | *it* |\n|---|---|\n| 1 |\n| 1 | 2 | 3 |\n"
    artifact = extract_markdown(text)

    assert artifact["blocks"][0]["text"] == "Bold | it\n1 | \n1 | 2"
    assert [column["name"] for column in artifact["tables"][0]["columns"]] == ["Bold", "it"]
    assert artifact["tables"][0]["rows"] == [[1, None], [1, 2]]


def test_table_ends_at_a_blank_line_or_a_line_that_is_not_a_row():
    text = "Intro:\n| a | b |\n|---|---|\n| 1 | 2 |\nnot a row\n\n| c |\n|---|\n| 3 |\n\n| 4 |\n"
    blocks = blocks_of(text)

    assert [(block["type"], block["text"], lines_of(block)) for block in blocks] == [
        ("paragraph", "Intro:", (1, 1)),
        ("table", "a | b\n1 | 2", (2, 4)),
        ("paragraph", "not a row", (5, 5)),
        ("table", "c\n3", (7, 9)),
        ("paragraph", "| 4 |", (11, 11)),
    ]


def test_delimiter_row_of_another_cell_count_makes_no_table():
    text = "| a | b |\n|---|\n| 1 | 2 |\n"
    artifact = extract_markdown(text)

    assert [(b["type"], b["text"]) for b in artifact["blocks"]] == [("paragraph", text.strip())]
    assert "tables" not in artifact


# List items


def test_nested_items_are_blocks_with_their_depth_and_their_own_lines():
    text = "- a\n  - b\n    1. c\n- d\n"
    blocks = blocks_of(text)

    assert [(block["text"], block["attrs"], lines_of(block)) for block in blocks] == [
        ("a", {"ordered": False, "depth": 1}, (1, 1)),
        ("b", {"ordered": False, "depth": 2}, (2, 2)),
        ("c", {"ordered": True, "depth": 3}, (3, 3)),
        ("d", {"ordered": False, "depth": 1}, (4, 4)),
    ]


def test_item_text_after_its_nested_list_is_a_block_of_the_item():
    text = "- a\n  - b\n\n  more of a\n"
    blocks = blocks_of(text)

    assert [(block["text"], block["attrs"]["depth"], lines_of(block)) for block in blocks] == [
        ("a", 1, (1, 1)),
        ("b", 2, (2, 2)),
        ("more of a", 1, (4, 4)),
    ]


def test_an_item_repeated_in_two_lists_is_found_in_each_under_its_own_section():
    text = "# One\n\n- shared\n- x\n\n# Two\n\n- shared\n- y\n"
    blocks = [block for block in blocks_of(text) if block["text"] == "shared"]

    assert [(block["section_path"], lines_of(block)) for block in blocks] == [
        (["One"], (3, 3)),
        (["Two"], (8, 8)),
    ]


def test_list_nesting_is_bounded_and_deeper_markers_stay_text():
    text = "- * " * 200 + "x\n"
    artifact = extract_markdown(text)
    depths = [block["attrs"]["depth"] for block in artifact["blocks"]]

    assert max(depths) == 32
    assert artifact["blocks"][-1]["text"].endswith("x")
    assert artifact["coverage"]["complete"] is True


# Inline markup


def test_inline_markup_is_taken_out_of_paragraph_text():
    text = (
        'Foo *em* **strong** ***both*** `code *x*` [link](http://x.org "t") ![alt](i.png)'
        " <https://a.org> ~~old~~ snake_case \\*lit\\* &amp;\n"
    )

    assert kinds(text) == [
        (
            "paragraph",
            "Foo em strong both code *x* link alt https://a.org old snake_case *lit* &",
        )
    ]


def test_inline_markup_stays_in_code_and_html_blocks():
    assert kinds("```\n**x** [a](b)\n```\n") == [("code", "**x** [a](b)")]
    assert kinds("<div>\n**x**\n</div>\n") == [("paragraph", "<div>\n**x**\n</div>")]


def test_footnote_definition_is_a_paragraph_without_its_marker():
    text = "Text[^note].\n\n[^note]: The *note* text\ncontinues.\n\n    And more.\n\nafter\n"
    blocks = blocks_of(text)

    assert [(block["text"], lines_of(block), block.get("attrs")) for block in blocks] == [
        ("Text.", (1, 1), None),
        ("The note text\ncontinues.\n\nAnd more.", (3, 6), {"footnote": "note"}),
        ("after", (8, 8), None),
    ]


def test_reference_links_lose_their_brackets_only_when_their_label_is_defined():
    text = "See [the docs][docs] and [Docs] and [docs][], not [14][15].\n\n[docs]: https://x.org\n"

    assert blocks_of(text)[0]["text"] == "See the docs and Docs and docs, not [14][15]."


def test_table_rows_past_the_tables_budget_are_a_failed_unit_the_block_keeps_them(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(tables, "MAX_TABLE_ROWS", 2)
    text = "| n |\n|---|\n| 1 |\n| 2 |\n| 3 |\n"
    artifact = extract_markdown(text)

    assert artifact["blocks"][0]["text"] == "n\n1\n2\n3"
    assert artifact["tables"][0]["rows"] == [[1], [2]]
    assert artifact["tables"][0]["locator"]["row_end"] == 3
    assert artifact["coverage"]["failed"] == [
        {"unit": "t0 rows 4-", "reason": "past 2 rows a table"}
    ]
    assert (artifact["coverage"]["lost"], artifact["coverage"]["complete"]) == (["tables"], False)


def test_a_typed_table_holds_the_columns_the_contract_takes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(markdown, "MAX_TABLE_COLUMNS", 2)
    artifact = extract_markdown("| a | b | c |\n|---|---|---|\n| 1 | 2 | 3 |\n")

    assert artifact["blocks"][0]["text"] == "a | b | c\n1 | 2 | 3"
    assert [column["name"] for column in artifact["tables"][0]["columns"]] == ["a", "b"]
    assert artifact["tables"][0]["rows"] == [[1, 2]]
    assert artifact["coverage"]["failed"] == [
        {"unit": "t0 columns 3-3", "reason": "past the 2 columns a table holds"}
    ]
