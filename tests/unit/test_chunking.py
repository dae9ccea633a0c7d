"""Structural chunks: each rule of the contract's "Structural chunks" section, one test or more."""

from __future__ import annotations

import pytest

from loom_dagster.chunking import (
    CAPTION_LIMIT,
    DEFAULT_CHUNK_SIZE,
    DEFAULT_CHUNK_STRIDE,
    Chunk,
    chunk_artifact,
    merge_locators,
    window_bounds,
)
from loom_dagster.contract.artifact import Artifact, Block, Coverage, Locator


def artifact(*blocks: Block, format: str = "markdown") -> Artifact:
    return Artifact(
        schema_version=1,
        format=format,
        parser="test",
        parser_version="1",
        options={},
        attrs={},
        warnings=(),
        coverage=Coverage(unit="lines", total=1, extracted=1),
        blocks=tuple(blocks),
    )


def spanned(source: str, text: str, *, markup: str = "") -> Locator:
    """The line and char span of `markup + text` in `source` (its first occurrence)."""
    start = source.index(markup + text)
    end = start + len(markup) + len(text)
    return Locator(
        line_start=source.count("\n", 0, start) + 1,
        line_end=source.count("\n", 0, end - 1) + 1,
        char_start=start,
        char_end=end,
    )


def under(
    parent: str,
    section: tuple[str, ...],
    block_id: str,
    text: str,
    *,
    type: str = "paragraph",
    keys: tuple[str, ...] = (),
    locator: Locator | None = None,
) -> Block:
    """A block in the section a heading opens."""
    return Block(block_id, type, text, section, keys, locator or Locator(), parent=parent)


def chunks_of(*blocks: Block, **options: int) -> list[Chunk]:
    return chunk_artifact(artifact(*blocks), revision="doc@r1", **options)


# -- packing -----------------------------------------------------------------------------------


def test_consecutive_blocks_under_one_parent_pack_up_to_the_chunk_size() -> None:
    source = "# Guide\n\none one one\n\ntwo two two\n\nthree three three\n"
    heading = Block("b0", "heading", "Guide", depth=1, locator=spanned(source, "# Guide"))
    guide = ("b0", ("Guide",))
    first = under(*guide, "b1", "one one one", locator=spanned(source, "one one one"))
    second = under(*guide, "b2", "two two two", locator=spanned(source, "two two two"))
    third = under(*guide, "b3", "three three three", locator=spanned(source, "three three three"))

    # 11 + 2 + 11 = 24 characters fit; the third block would make 43.
    chunks = chunks_of(heading, first, second, third, chunk_size=30, stride=20)

    assert [chunk.text for chunk in chunks] == ["one one one\n\ntwo two two", "three three three"]
    assert [chunk.block_ids for chunk in chunks] == [("b1", "b2"), ("b3",)]
    assert chunks[0].section_path == ("Guide",)
    assert chunks[0].locator == Locator(
        line_start=3, line_end=5, char_start=source.index("one"), char_end=source.index("\n\nthree")
    )
    assert source[chunks[0].locator.char_start : chunks[0].locator.char_end] == chunks[0].text


def test_a_block_of_another_parent_starts_a_new_chunk() -> None:
    blocks = (
        Block("b0", "heading", "A", depth=1),
        Block("b1", "paragraph", "under a", parent="b0", section_path=("A",)),
        Block("b2", "heading", "B", depth=1),
        Block("b3", "paragraph", "under b", parent="b2", section_path=("B",)),
    )

    chunks = chunks_of(*blocks)

    assert [(chunk.text, chunk.section_path) for chunk in chunks] == [
        ("under a", ("A",)),
        ("under b", ("B",)),
    ]


def test_a_toml_table_packs_with_its_keys_and_the_next_table_starts_a_new_chunk() -> None:
    blocks = (
        Block(
            "b0", "toml_table", "[server]", ("server",), ("server",),
            Locator(1, 1, key_path="server"),
        ),
        Block(
            "b1", "toml_key", "server.port = 7777", ("server",), ("server.port",),
            Locator(2, 2, key_path="server.port"), parent="b0",
        ),
        Block("b2", "toml_table", "[db]", ("db",), ("db",), Locator(4, 4, key_path="db")),
        Block(
            "b3", "toml_key", 'db.url = "x"', ("db",), ("db.url",),
            Locator(5, 5, key_path="db.url"), parent="b2",
        ),
    )  # fmt: skip

    chunks = chunk_artifact(artifact(*blocks, format="toml"), revision="cfg@r1")

    assert [chunk.block_ids for chunk in chunks] == [("b0", "b1"), ("b2", "b3")]
    assert chunks[0].text == "[server]\n\nserver.port = 7777"
    assert chunks[0].keys == ("server", "server.port")
    assert chunks[0].block_type == "mixed"
    # The table and its key name different paths, so the merged span names none.
    assert chunks[0].locator == Locator(line_start=1, line_end=2)
    assert chunks[0].format == "toml"


def test_a_sql_statement_is_a_chunk_of_its_own() -> None:
    source = "SELECT 1;\nSELECT 2;\n"
    blocks = (
        Block(
            "b0", "sql_statement", "SELECT 1;", keys=("a",), locator=spanned(source, "SELECT 1;")
        ),
        Block(
            "b1", "sql_statement", "SELECT 2;", keys=("b",), locator=spanned(source, "SELECT 2;")
        ),
    )

    chunks = chunk_artifact(artifact(*blocks, format="sql"), revision="q@r1")

    assert [(chunk.text, chunk.block_ids, chunk.keys) for chunk in chunks] == [
        ("SELECT 1;", ("b0",), ("a",)),
        ("SELECT 2;", ("b1",), ("b",)),
    ]
    assert all(chunk.block_type == "sql_statement" for chunk in chunks)


def test_a_sql_statement_does_not_pack_with_the_comment_before_it() -> None:
    blocks = (
        Block("b0", "paragraph", "-- a note"),
        Block("b1", "sql_statement", "SELECT 1;"),
        Block("b2", "paragraph", "-- another"),
    )

    assert [chunk.block_ids for chunk in chunks_of(*blocks)] == [("b0",), ("b1",), ("b2",)]


# -- windows -----------------------------------------------------------------------------------


def long_prose(words: int) -> str:
    lines = []
    for line in range(words // 8):
        lines.append(" ".join(f"w{line}x{word}" for word in range(8)))
    return "\n".join(lines)


def test_a_long_block_whose_text_is_the_source_slice_is_windowed_with_exact_spans() -> None:
    body = long_prose(400)
    source = "# Notes\n\n" + body + "\n"
    heading = Block("b0", "heading", "Notes", depth=1, locator=spanned(source, "# Notes"))
    paragraph = Block(
        "b1", "paragraph", body, parent="b0", section_path=("Notes",), keys=("k",),
        locator=spanned(source, body),
    )  # fmt: skip

    chunks = chunks_of(heading, paragraph, chunk_size=200, stride=160)

    assert len(chunks) > 10
    for chunk in chunks:
        start, end = chunk.locator.char_start, chunk.locator.char_end
        assert start is not None and end is not None
        assert source[start:end] == chunk.text
        assert chunk.locator.line_start == source.count("\n", 0, start) + 1
        assert chunk.locator.line_end == source.count("\n", 0, end - 1) + 1
        assert len(chunk.text) <= 200
        assert chunk.section_path == ("Notes",)
        assert chunk.block_ids == ("b1",)
        assert chunk.keys == ("k",)
        # Cut at whitespace: no window starts or ends inside a word.
        assert not chunk.text[0].isspace() and not chunk.text[-1].isspace()
        assert source[start - 1].isspace() and source[end].isspace()
    # The windows overlap and together cover the whole block.
    spans = [(chunk.locator.char_start or 0, chunk.locator.char_end or 0) for chunk in chunks]
    assert spans[0][0] == paragraph.locator.char_start
    assert spans[-1][1] == paragraph.locator.char_end
    assert all(later[0] < earlier[1] for earlier, later in zip(spans, spans[1:], strict=False))


def test_a_window_of_a_cleaned_heading_cites_the_heading_whole_span() -> None:
    title = " ".join(f"word{n}" for n in range(150))  # 1,040 characters
    source = f"## {title}\n"
    heading = Block("b0", "heading", title, depth=2, locator=spanned(source, title, markup="## "))

    chunks = chunks_of(heading, chunk_size=300, stride=240)

    assert len(chunks) > 3
    assert {chunk.locator for chunk in chunks} == {heading.locator}
    assert all(chunk.block_type == "heading" for chunk in chunks)
    # The heading opens its own section; its title is carried as the section paths carry it.
    assert {chunk.section_path for chunk in chunks} == {(title[:500],)}
    assert chunks[0].text.startswith("word0 ") and chunks[-1].text.endswith("word149")


def test_a_window_of_a_block_without_char_offsets_cites_its_whole_span() -> None:
    text = long_prose(200)
    html = Block("b0", "paragraph", text, locator=Locator(line_start=3, line_end=40))
    toml_key = Block(
        "b1",
        "toml_key",
        "big = " + text,
        locator=Locator(line_start=41, line_end=90, key_path="big"),
    )

    chunks = chunks_of(html, toml_key, chunk_size=300, stride=240)

    assert {chunk.locator for chunk in chunks if chunk.block_ids == ("b0",)} == {html.locator}
    assert {chunk.locator for chunk in chunks if chunk.block_ids == ("b1",)} == {toml_key.locator}


def test_a_window_of_a_block_whose_text_differs_from_its_span_cites_the_whole_span() -> None:
    # A fenced code block: the text leaves the fences out, the span covers them.
    code = long_prose(100)
    source = "```\n" + code + "\n```\n"
    block = Block(
        "b0", "code", code,
        locator=Locator(1, code.count("\n") + 3, char_start=0, char_end=len(source)),
    )  # fmt: skip

    chunks = chunks_of(block, chunk_size=200, stride=160)

    assert len(chunks) > 1
    assert {chunk.locator for chunk in chunks} == {block.locator}


def test_window_bounds_advance_by_the_stride_and_overlap() -> None:
    text = " ".join(["abcd"] * 1000)  # 4,999 characters, a space every fifth

    bounds = window_bounds(text, 100, 80)

    assert bounds[0][0] == 0 and bounds[-1][1] == len(text)
    for (start, end), (next_start, _) in zip(bounds, bounds[1:], strict=False):
        assert 95 <= end - start <= 100
        assert 15 <= end - next_start <= 25  # overlap of about size - stride
    assert window_bounds("short", 100, 80) == [(0, 5)]


def test_a_word_longer_than_a_window_is_cut_hard() -> None:
    bounds = window_bounds("x" * 250, 100, 80)

    assert bounds == [(0, 100), (80, 180), (160, 250)]


def test_stride_must_lie_between_one_and_the_chunk_size() -> None:
    with pytest.raises(ValueError):
        chunks_of(Block("b0", "paragraph", "x"), chunk_size=100, stride=101)
    with pytest.raises(ValueError):
        chunks_of(Block("b0", "paragraph", "x"), chunk_size=100, stride=0)
    assert 0 < DEFAULT_CHUNK_STRIDE <= DEFAULT_CHUNK_SIZE
    assert DEFAULT_CHUNK_SIZE - DEFAULT_CHUNK_STRIDE < DEFAULT_CHUNK_SIZE // 2


# -- headings ----------------------------------------------------------------------------------


def test_heading_text_is_not_repeated_in_chunk_text() -> None:
    blocks = (
        Block("b0", "heading", "Install", depth=1),
        Block("b1", "paragraph", "Run the installer.", parent="b0", section_path=("Install",)),
    )

    (chunk,) = chunks_of(*blocks)

    assert chunk.text == "Run the installer."
    assert chunk.block_ids == ("b1",)
    assert chunk.section_path == ("Install",)


def test_a_heading_with_no_text_and_no_subsection_under_it_opens_the_next_passage() -> None:
    blocks = (
        Block("b0", "heading", "Guide", depth=1, locator=Locator(1, 1)),
        Block("b1", "heading", "Empty", ("Guide",), depth=2, parent="b0", locator=Locator(3, 3)),
        Block("b2", "heading", "Full", ("Guide",), depth=2, parent="b0", locator=Locator(5, 5)),
        Block(
            "b3", "paragraph", "Some text.", ("Guide", "Full"), parent="b2", locator=Locator(6, 7)
        ),
        Block("b4", "heading", "Last", ("Guide",), depth=2, parent="b0", locator=Locator(9, 9)),
    )

    chunks = chunks_of(*blocks)

    # Guide has subsections and Full has text: neither is in a chunk's text. Empty is followed
    # by a heading of its own level: it opens the next passage, whose lines span it. Last is
    # followed by nothing: it is a chunk of its own.
    assert [(chunk.text, chunk.section_path, chunk.block_ids) for chunk in chunks] == [
        ("Empty\n\nSome text.", ("Guide", "Full"), ("b1", "b3")),
        ("Last", ("Guide", "Last"), ("b4",)),
    ]
    assert chunks[0].block_type == "paragraph"
    assert chunks[0].locator == Locator(line_start=3, line_end=7)
    assert chunks[1].block_type == "heading"
    assert chunks[1].locator == Locator(line_start=9, line_end=9)


def test_a_heading_followed_by_a_higher_one_opens_the_next_passage() -> None:
    blocks = (
        Block("b0", "heading", "Part", depth=1),
        Block("b1", "heading", "Deep", ("Part",), depth=3, parent="b0"),
        Block("b2", "heading", "Next part", depth=1),
        Block("b3", "paragraph", "text", ("Next part",), parent="b2"),
    )

    assert [chunk.text for chunk in chunks_of(*blocks)] == ["Deep\n\ntext"]


def test_a_title_page_heading_is_never_a_passage_of_its_own() -> None:
    # A report's number and title, each a heading at the top level of a PDF's first page, then
    # the first section: no passage is only the number or the title, and the pages stay exact.
    page = lambda n: Locator(page_start=n, page_end=n)  # noqa: E731
    blocks = (
        Block("b0", "heading", "Report No. 2014-17", depth=1, locator=page(1)),
        Block("b1", "heading", "Wheat exports in review", depth=1, locator=page(1)),
        Block("b2", "heading", "Summary", depth=1, locator=page(2)),
        Block("b3", "paragraph", "Exports rose.", ("Summary",), parent="b2", locator=page(2)),
        Block("b4", "table", "year | tonnes\n2014 | 5", ("Summary",), parent="b2", locator=page(3)),
    )

    chunks = chunks_of(*blocks)

    assert all(chunk.block_type != "heading" for chunk in chunks)
    assert chunks[0].text.startswith("Report No. 2014-17\n\nWheat exports in review\n\nExports")
    assert chunks[0].section_path == ("Summary",)
    assert chunks[0].locator == Locator(page_start=1, page_end=3)


def test_a_heading_before_a_long_block_opens_its_first_window() -> None:
    body = "word " * 400
    blocks = (
        Block("b0", "heading", "Title", depth=1, locator=Locator(1, 1)),
        Block("b1", "heading", "Body", depth=1, locator=Locator(3, 3)),
        Block("b2", "paragraph", body, ("Body",), parent="b1", locator=Locator(4, 40)),
    )

    chunks = chunks_of(*blocks)

    assert chunks[0].text.startswith("Title\n\nword")
    assert chunks[0].block_ids == ("b0", "b2")
    assert chunks[0].locator == Locator(line_start=1, line_end=40)
    assert all(not chunk.text.startswith("Title") for chunk in chunks[1:])


def test_a_heading_longer_than_section_paths_carry_is_a_chunk_of_its_own() -> None:
    # Section paths carry a title's first 500 characters; the chunk keeps the rest searchable.
    title = "t" * 499 + " and the rest of a very long title"
    blocks = (
        Block("b0", "heading", title, depth=1),
        Block("b1", "paragraph", "text", (title[:500],), parent="b0"),
    )

    chunks = chunks_of(*blocks)

    assert [(chunk.text, chunk.section_path) for chunk in chunks] == [
        (title, (title[:500],)),
        ("text", (title[:500],)),
    ]


# -- what a chunk carries ----------------------------------------------------------------------


def test_block_type_is_mixed_when_the_blocks_differ_and_keys_are_their_union_in_order() -> None:
    blocks = (
        Block("b0", "heading", "S", depth=1),
        under("b0", ("S",), "b1", "text", keys=("x", "y")),
        under("b0", ("S",), "b2", "code", type="code", keys=("y", "z")),
        under("b0", ("S",), "b3", "more", keys=("a", "x")),
    )

    (chunk,) = chunks_of(*blocks)

    assert chunk.block_type == "mixed"
    assert chunk.keys == ("x", "y", "z", "a")


def test_a_chunk_records_its_revision_format_and_id() -> None:
    (chunk,) = chunk_artifact(
        artifact(Block("b0", "paragraph", "x"), format="text"), revision="src:a.txt@3"
    )

    assert (chunk.revision, chunk.format, chunk.ordinal) == ("src:a.txt@3", "text", 0)
    assert chunk.chunk_id == "src:a.txt@3#0"


def test_chunking_is_deterministic() -> None:
    body = long_prose(400)
    blocks = (
        Block("b0", "heading", "T", depth=1),
        Block("b1", "paragraph", body, ("T",), ("k",), Locator(3, 52, 4, 4 + len(body)), "b0"),
        Block("b2", "sql_statement", "SELECT 1;", ("T",), parent="b0"),
        Block("b3", "heading", "U", depth=1),
    )

    first = chunks_of(*blocks, chunk_size=300, stride=240)
    second = chunks_of(*blocks, chunk_size=300, stride=240)

    assert first == second
    assert [chunk.ordinal for chunk in first] == list(range(len(first)))


def test_blank_blocks_make_no_chunk() -> None:
    chunks = chunks_of(Block("b0", "code", ""), Block("b1", "paragraph", "  \n "))

    assert chunks == []


# -- merged locators ---------------------------------------------------------------------------


def test_merged_lines_and_chars_span_the_blocks_only_when_every_block_has_them() -> None:
    both = merge_locators([Locator(3, 4, 10, 20), Locator(6, 9, 25, 40)])
    one_without_chars = merge_locators([Locator(3, 4, 10, 20), Locator(6, 9)])
    one_without_lines = merge_locators([Locator(3, 4), Locator()])

    assert both == Locator(line_start=3, line_end=9, char_start=10, char_end=40)
    assert one_without_chars == Locator(line_start=3, line_end=9)
    assert one_without_lines == Locator()


def test_merged_pages_and_rows_span_the_blocks_that_set_them() -> None:
    merged = merge_locators(
        [
            Locator(page_start=2, page_end=3, row_start=5, row_end=6),
            Locator(),
            Locator(page_start=1, page_end=2, row_start=7, row_end=9),
        ]
    )

    assert merged == Locator(page_start=1, page_end=3, row_start=5, row_end=9)


def test_key_path_and_sheet_survive_only_when_every_block_agrees() -> None:
    same = merge_locators([Locator(key_path="a.b", sheet="S"), Locator(key_path="a.b", sheet="S")])
    differ = merge_locators(
        [Locator(key_path="a.b", sheet="S"), Locator(key_path="a.c", sheet="T")]
    )
    one_unset = merge_locators([Locator(key_path="a.b", sheet="S"), Locator()])

    assert (same.key_path, same.sheet) == ("a.b", "S")
    assert (differ.key_path, differ.sheet) == (None, None)
    assert (one_unset.key_path, one_unset.sheet) == (None, None)


def test_the_contracts_unset_pairs_are_not_spans() -> None:
    merged = merge_locators(
        [
            Locator(0, 0, -1, -1, page_start=0, page_end=0),
            Locator(2, 3, 5, 9, page_start=4, page_end=4),
        ]
    )

    # Lines and chars: one block has none, so the chunk cites none. Pages: the one that has them.
    assert merged == Locator(page_start=4, page_end=4)


def test_a_packed_chunk_of_sheet_rows_keeps_its_sheet_and_spans_its_rows() -> None:
    rows = [
        Block(
            f"b{n}", "paragraph", f"name: item {n}", parent=None,
            locator=Locator(sheet="Stock", row_start=n + 2, row_end=n + 2),
        )
        for n in range(3)
    ]  # fmt: skip

    (chunk,) = chunk_artifact(artifact(*rows, format="xlsx"), revision="wb@1")

    assert chunk.locator == Locator(sheet="Stock", row_start=2, row_end=4)


def test_an_empty_sheets_name_heads_no_passage_of_the_next_sheet() -> None:
    # A workbook's "Cover" sheet holds no cells: its heading opened the "Index" sheet's first
    # passage, and that passage, on two sheets, cited none.
    blocks = [
        Block("b0", "heading", "Cover", depth=1, locator=Locator(sheet="Cover")),
        Block("b1", "heading", "Index", depth=1, locator=Locator(sheet="Index")),
        Block(
            "b2", "paragraph", "Topic: Quarterly revenue | Page: 1", ("Index",), parent="b1",
            locator=Locator(sheet="Index", row_start=3, row_end=5),
        ),
    ]  # fmt: skip

    chunks = chunk_artifact(artifact(*blocks, format="xlsx"), revision="wb@1")

    assert [(chunk.text, chunk.locator.sheet) for chunk in chunks] == [
        ("Cover", "Cover"),
        ("Topic: Quarterly revenue | Page: 1", "Index"),
    ]
    assert chunks[1].locator == Locator(sheet="Index", row_start=3, row_end=5)


def test_a_chunk_names_what_its_blocks_define_not_what_they_read() -> None:
    create = Block(
        "b0",
        "sql_statement",
        "CREATE VIEW analytics.active AS SELECT * FROM accounts",
        keys=("analytics.active", "active", "accounts"),
        attrs={"created": "analytics.active", "reads": ["accounts"]},
    )
    select = Block(
        "b1", "sql_statement", "SELECT * FROM accounts", keys=("accounts",), attrs={"created": None}
    )
    table = Block(
        "b2", "toml_table", "[server]", section_path=("server",), locator=Locator(key_path="server")
    )
    key = Block(
        "b3",
        "toml_key",
        "server.port = 1",
        section_path=("server",),
        parent="b2",
        locator=Locator(key_path="server.port"),
    )

    sql = chunk_artifact(artifact(create, select, format="sql"), revision="r")
    toml = chunk_artifact(artifact(table, key, format="toml"), revision="t")

    assert [c.names for c in sql] == [("analytics.active", "active"), ()]
    assert [c.names for c in toml] == [("server", "server.port")]
    assert Chunk.from_record(sql[0].record()) == sql[0]
    assert Chunk.from_record({**toml[0].record(), "names": None}).names == ()


# -- a document's tables: rows as passages (issue 35) ---------------------------------------------


def wheat_table(rows: int = 7, *, start: int = 2010) -> str:
    body = [
        f"{year} | {4000 + 37 * (year - 2000):,} | {900 + year % 7}"
        for year in range(start, start + rows)
    ]
    return "\n".join(["Year | Wheat exports (t) | Maize exports (t)", *body])


def test_a_document_table_is_cut_into_passages_of_rows_under_its_caption_and_header_row() -> None:
    blocks = (
        Block("b0", "heading", "Trade", depth=1, locator=Locator(1, 1)),
        under("b0", ("Trade",), "b1", "Table 3. Exports by year", locator=Locator(3, 3)),
        Block(
            "b2",
            "table",
            wheat_table(),
            ("Trade",),
            (),
            Locator(5, 13),
            parent="b0",
            attrs={"table": {"rows": 8, "columns": 3}},
        ),
    )

    chunks = chunk_artifact(artifact(*blocks, format="html"), revision="doc@r1")

    assert chunks[0].text == "Table 3. Exports by year"
    rows = chunks[1:]
    assert [(c.locator.row_start, c.locator.row_end) for c in rows] == [(2, 4), (5, 7), (8, 8)]
    # Each shows the caption (line 3) above the table (lines 5-13), and cites both; the caption
    # labels the passage, which is a table's, as a heading does.
    assert all(c.locator.line_start == 3 and c.locator.line_end == 13 for c in rows)
    assert all(c.block_ids == ("b1", "b2") for c in rows)
    assert all(c.section_path == ("Trade",) and c.block_type == "table" for c in rows)
    assert rows[1].text == (
        "Table 3. Exports by year\n"
        "Year | Wheat exports (t) | Maize exports (t)\n"
        "2013 | 4,481 | 904\n"
        "2014 | 4,518 | 905\n"
        "2015 | 4,555 | 906"
    )


def test_a_table_with_no_header_row_or_too_few_rows_stays_whole() -> None:
    infobox = "Duck\nOrder: | Anseriformes\nFamily: | Anatidae\nTribe: | Anatini\nGenus: | Anas"
    small = "Year | Wheat\n2013 | 5\n2014 | 6"
    blocks = tuple(
        Block(f"b{n}", "table", text, attrs={"table": {"rows": 3, "columns": 2}})
        for n, text in enumerate((infobox, small))
    )

    chunks = chunk_artifact(artifact(*blocks, format="html"), revision="doc@r1")

    assert [chunk.text for chunk in chunks] == [infobox + "\n\n" + small]


def test_a_pdf_tables_row_blocks_are_cut_into_rows_each_with_the_caption_and_its_page() -> None:
    def rows_block(block_id: str, first: int, lines: list[str], page: int) -> Block:
        return Block(
            block_id,
            "paragraph",
            "\n".join(lines),
            ("Trade",),
            (),
            Locator(
                page_start=page, page_end=page, row_start=first, row_end=first + len(lines) - 1
            ),
            parent="h",
            attrs={"table_id": "t0"},
        )

    blocks = (
        Block("h", "heading", "Trade", depth=1, locator=Locator(page_start=1, page_end=1)),
        Block(
            "c",
            "paragraph",
            "Table B4: Exports",
            ("Trade",),
            (),
            Locator(page_start=1, page_end=1),
            parent="h",
        ),
        rows_block("r0", 2, ["Year: 2013 | Wheat: 5", "Year: 2014 | Wheat: 6"], 1),
        rows_block("r1", 4, ["Year: 2015 | Wheat: 7"], 2),
    )

    chunks = chunk_artifact(artifact(*blocks, format="pdf"), revision="doc@r1")

    assert [(c.text, c.locator) for c in chunks[1:]] == [
        (
            "Table B4: Exports\nYear: 2013 | Wheat: 5\nYear: 2014 | Wheat: 6",
            Locator(page_start=1, page_end=1, row_start=2, row_end=3),
        ),
        (
            # The caption it shows is on page 1: the passage cites pages 1-2, not the row's alone.
            "Table B4: Exports\nYear: 2015 | Wheat: 7",
            Locator(page_start=1, page_end=2, row_start=4, row_end=4),
        ),
    ]


def test_a_file_that_is_a_table_keeps_its_packs_of_row_blocks() -> None:
    block = Block(
        "b0",
        "paragraph",
        "Year: 2013 | Wheat: 5\nYear: 2014 | Wheat: 6\nYear: 2015 | Wheat: 7\nYear: 2016 | Wheat: 8",
        locator=Locator(row_start=2, row_end=5),
        attrs={"table_id": "t0"},
    )

    (chunk,) = chunk_artifact(artifact(block, format="csv"), revision="doc@r1")

    assert chunk.text == block.text and chunk.locator == Locator(row_start=2, row_end=5)


def test_rows_share_a_passage_only_within_the_chunk_size_and_a_longer_row_is_windowed() -> None:
    # A PDF table's row block: rows that fit share a passage (up to ROWS_PER_PASSAGE), a row
    # that does not fit starts the next one, and a row longer than a chunk is windowed alone.
    long_row = "Name: Saint Vincent | " + " | ".join(f"code {n}: {n:04d}" for n in range(20))
    lines = ["Name: Grenada | Dial: 1-473", long_row, "Name: Samoa | Dial: 685", "Name: Tonga"]
    block = Block(
        "b0",
        "paragraph",
        "\n".join(lines),
        locator=Locator(page_start=4, page_end=4, row_start=2, row_end=5),
        attrs={"table_id": "t0"},
    )

    chunks = chunk_artifact(
        artifact(block, format="pdf"), revision="t@1", chunk_size=120, stride=100
    )

    rows = [(c.locator.row_start, c.locator.row_end) for c in chunks]
    assert rows[0] == (2, 2) and rows[-1] == (4, 5)
    assert len(rows) > 3 and set(rows[1:-1]) == {(3, 3)}
    assert chunks[0].text == "Name: Grenada | Dial: 1-473"
    assert chunks[-1].text == "Name: Samoa | Dial: 685\nName: Tonga"
    assert all(len(c.text) <= 120 and c.locator.page_start == 4 for c in chunks)
    assert chunks[1].text.startswith("Name: Saint Vincent") and "0019" in chunks[-2].text


def test_a_row_longer_than_a_chunk_is_cut_between_cells_each_part_opening_with_its_lead() -> None:
    # A CSV row too long to share a block: its parts cut no cell, and each after the first
    # opens with the row's first cells (within a sixth of the chunk) and a "…" cell, so the
    # part that holds the row's late cells still names its row; every part cites the row.
    cells = ["Code: VCT", "Dial: 1-784"] + [f"column {n}: value {n:03d}" for n in range(12)]
    cells.append("Name: St. Vincent & Grenadines")
    block = Block(
        "b0",
        "paragraph",
        " | ".join(cells),
        locator=Locator(row_start=193, row_end=193),
        attrs={"table_id": "t0"},
    )

    chunks = chunk_artifact(
        artifact(block, format="csv"), revision="t@1", chunk_size=150, stride=120
    )

    assert len(chunks) > 2
    assert chunks[0].text.startswith("Code: VCT | Dial: 1-784 | column 0: value 000")
    for chunk in chunks[1:]:
        assert chunk.text.startswith("Code: VCT | Dial: 1-784 | … | column ")
    assert chunks[-1].text.endswith("Name: St. Vincent & Grenadines")
    shown = [cell for c in chunks for cell in c.text.split(" | ")]
    assert set(shown) == {*cells, "…"}  # no cell is cut
    assert all(len(c.text) <= 150 for c in chunks)
    assert {(c.locator, c.block_type) for c in chunks} == {
        (Locator(row_start=193, row_end=193), "paragraph")
    }


def test_a_documents_long_table_row_is_cut_between_cells_under_its_caption() -> None:
    # A PDF table's row longer than a chunk: each part opens with the caption, then the row's
    # leading cells; a cell longer than a part is windowed, its windows parts of their own.
    row = " | ".join(
        ["Contract: C-9", *(f"item {n}: {n:02d}" for n in range(8)), "Note: " + "x" * 130]
    )
    rows = Block(
        "r0",
        "paragraph",
        row,
        locator=Locator(page_start=2, page_end=2, row_start=4, row_end=4),
        attrs={"table_id": "t0"},
    )
    caption = Block(
        "c", "paragraph", "Table 3: Contracts", locator=Locator(page_start=2, page_end=2)
    )

    # The caption is a passage of its own too (as in the test above): the row's come after it.
    chunks = chunk_artifact(
        artifact(caption, rows, format="pdf"), revision="t@1", chunk_size=120, stride=100
    )[1:]

    assert len(chunks) >= 3
    assert chunks[0].text.startswith("Table 3: Contracts\nContract: C-9 | item 0: 00")
    assert all(c.text.startswith("Table 3: Contracts\nContract: C-9 | … | ") for c in chunks[1:])
    assert "item 7: 07" in "".join(c.text for c in chunks)
    notes = [c.text for c in chunks if "xxx" in c.text]
    assert len(notes) >= 2 and all(len(c.text) <= 120 for c in chunks)
    assert {c.locator for c in chunks} == {
        Locator(page_start=2, page_end=2, row_start=4, row_end=4)
    }


def test_a_statement_that_client_command_lines_join_is_cut_at_them() -> None:
    # The reader keeps a script's text between two ";" as one UNKNOWN statement when GO or a
    # lone / joins it (the contract): each batch is still a passage that defines its object.
    source = (
        "-- the items\nCREATE TABLE [dbo].[item] (\n  id INT\n)\nGO\n"
        "ALTER TABLE item ADD CONSTRAINT pk PRIMARY KEY (id)\ngo 2\n"
        "CREATE  INDEX idx_item ON item(id)\n/\n\n"
        "CREATE OR REPLACE TYPE item_t AS OBJECT (id INT);"
    )
    joined = Block(
        "b0",
        "sql_statement",
        source,
        keys=("dbo.item", "item", "pk", "idx_item", "item_t", "id"),
        locator=spanned(source, source),
        attrs={"kind": "UNKNOWN", "created": None},
    )

    chunks = chunk_artifact(artifact(joined, format="sql"), revision="s@1")

    assert [chunk.text.splitlines()[-1] for chunk in chunks] == [
        ")",
        "ALTER TABLE item ADD CONSTRAINT pk PRIMARY KEY (id)",
        "CREATE  INDEX idx_item ON item(id)",
        "CREATE OR REPLACE TYPE item_t AS OBJECT (id INT);",
    ]
    assert [chunk.names for chunk in chunks] == [
        ("dbo.item", "item"),
        (),
        ("idx_item",),
        ("item_t",),
    ]
    assert [(c.locator.line_start, c.locator.line_end) for c in chunks] == [
        (1, 4),
        (6, 6),
        (8, 8),
        (11, 11),
    ]
    for chunk in chunks:
        start, end = chunk.locator.char_start, chunk.locator.char_end
        assert start is not None and end is not None and source[start:end] == chunk.text
    # A block's keys travel with every chunk cut from it.
    assert all(chunk.keys == joined.keys and chunk.block_ids == ("b0",) for chunk in chunks)


def test_a_tables_long_note_gives_its_rows_the_whole_sentences_that_fit_the_caption_limit() -> None:
    # A headnote over CAPTION_LIMIT (Statistical Abstract's Table 324: 445 characters) left its
    # rows without the words that say what they count ("arrests"): they show its first sentences.
    first = "Represents arrests reported by 12,910 agencies."
    rest = " Some persons may be arrested more than once during a year, so counts may repeat." * 5
    note = Block(
        "n",
        "paragraph",
        first + rest,
        ("Crime",),
        (),
        Locator(page_start=1, page_end=1),
        parent="h",
    )
    rows = Block(
        "r0",
        "paragraph",
        "Offense: Robbery | Total: 102.1",
        ("Crime",),
        (),
        Locator(page_start=2, page_end=2, row_start=2, row_end=2),
        parent="h",
        attrs={"table_id": "t0"},
    )
    heading = Block("h", "heading", "Crime", depth=1, locator=Locator(page_start=1, page_end=1))
    assert len(note.text) > CAPTION_LIMIT

    chunks = chunk_artifact(artifact(heading, note, rows, format="pdf"), revision="doc@r1")

    row_chunk = chunks[-1]
    lead = row_chunk.text.split("\n")[0]
    assert lead.startswith(first) and lead.endswith("repeat.") and len(lead) <= CAPTION_LIMIT
    assert row_chunk.text.endswith("\nOffense: Robbery | Total: 102.1")
    # The note is cited beside the row: pages 1-2.
    assert row_chunk.locator == Locator(page_start=1, page_end=2, row_start=2, row_end=2)
