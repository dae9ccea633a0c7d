"""A passage of table rows is indexed with each column's name once (search/rows.py): its
values decide where it ranks, not how many rows repeat the names of its columns; and the vector
leg embeds its rows one by one, scoring it as its best row."""

from __future__ import annotations

from pathlib import Path

from loom_dagster.chunking import Chunk
from loom_dagster.contract.artifact import Locator
from loom_dagster.search.embedding import NgramEmbedder
from loom_dagster.search.legs import SearchFilter
from loom_dagster.search.lexical import IndexedChunk, LexicalIndex
from loom_dagster.search.rows import ROW_VECTORS_PER_PASSAGE, names_once, row_texts
from loom_dagster.search.vector import VectorIndex

COLUMNS = (
    "Global Code",
    "Global Name",
    "Region Code",
    "Region Name",
    "Sub-region Code",
    "Sub-region Name",
    "Country or Area",
    "M49 Code",
    "ISO-alpha3 Code",
    "Least Developed Countries (LDC)",
)


def row(country: str, sub_region: str, code: int) -> str:
    values = ("001", "World", "009", "Oceania", "057", sub_region, country, str(code), "XXX", "")
    return " | ".join(f"{name}: {value}" for name, value in zip(COLUMNS, values, strict=True))


def indexed(document_id: str, text: str, locator: Locator) -> IndexedChunk:
    cut = Chunk(
        ordinal=0,
        text=text,
        block_ids=("b0",),
        block_type="table",
        section_path=(),
        locator=locator,
        keys=(),
        revision=f"{document_id}@r1",
        format="csv",
    )
    return IndexedChunk.of(cut, document_id=document_id, source="docs", path=document_id)


def test_names_once_keeps_each_columns_name_at_its_first_cell() -> None:
    text = "Caption: the regions\nA: 1 | B: x y\nA: 2 | B: z | a plain cell"
    assert names_once(text) == "Caption: the regions\nA: 1 | B: x y\n2 | z | a plain cell"


def test_a_row_is_ranked_by_its_values_not_by_its_columns_names(tmp_path: Path) -> None:
    """The row naming Tuvalu and its sub-region ranks over a page that names both once in 75
    words: with its ten columns' names in each of its four rows, the rows' passage read as
    longer than the page and lost to it, though its values are a quarter of that."""
    index = LexicalIndex(tmp_path / "index")
    rows = "\n".join(
        [
            row("Tuvalu", "Polynesia", 798),
            row("Nauru", "Micronesia", 520),
            row("Palau", "Micronesia", 585),
            row("Kiribati", "Micronesia", 296),
        ]
    )
    page = (
        "Our second week took us north by boat from Fiji, past reefs and atolls whose names we "
        "had only read in old books, to Tuvalu, where a family put us up for three nights and "
        "taught us to fish at dawn. From there the captain talked of sailing on across "
        "Polynesia before the storms, and of the long way home, which none of us wanted to "
        "think about yet, not with the sea so calm."
    )
    others = [
        f"The {topic} of the islands is described in the annual report, with its figures."
        for topic in ("economy", "climate", "history", "transport")
    ]
    index.publish_many(
        {
            "unsd.csv": [indexed("unsd.csv", rows, Locator(row_start=2, row_end=5))],
            "travel.html": [indexed("travel.html", page, Locator(line_start=3, line_end=4))],
            **{
                f"report{n}": [indexed(f"report{n}", text, Locator(line_start=1, line_end=1))]
                for n, text in enumerate(others)
            },
        }
    )

    hits = index.search("is Tuvalu in Polynesia", limit=3)
    assert [hit.chunk.document_id for hit in hits[:2]] == ["unsd.csv", "travel.html"]
    # What a hit shows and cites is the passage as cut: every cell with its column's name.
    assert hits[0].chunk.text == rows


def test_row_texts_are_a_passages_rows_each_under_its_opening_lines() -> None:
    caption_and_header = "Table 2: Offences\nOffence | 2009 | 2010"
    text = f"{caption_and_header}\nRobbery | 12 | 14\nArson | 3 | 4"
    page = Locator(page_start=1, page_end=1, row_start=5, row_end=6)
    assert row_texts(text, page, "pdf") == [
        f"{caption_and_header}\nRobbery | 12 | 14",
        f"{caption_and_header}\nArson | 3 | 4",
    ]
    # A file's passage packs its reader's row blocks, a blank line between two: no row of it
    # opens the others.
    csv_rows = "A: 1 | B: x\nA: 2 | B: y\n\nA: 3 | B: z"
    assert row_texts(csv_rows, Locator(row_start=2, row_end=4), "csv") == [
        "A: 1 | B: x",
        "A: 2 | B: y",
        "A: 3 | B: z",
    ]
    # One row, a passage that is no table's rows, or rows a line break joins: embedded whole.
    assert row_texts("A: 1 | B: x", Locator(row_start=2, row_end=2), "csv") is None
    assert row_texts("A: 1\nA: 2", Locator(line_start=1, line_end=2), "markdown") is None
    assert row_texts("Caption\nA | B", Locator(row_start=2, row_end=4), "html") is None


def test_a_passage_of_many_rows_is_embedded_as_at_most_the_row_vector_budget() -> None:
    """A narrow table packs dozens of rows into a passage; one vector each would grow the
    vector index by as many times over its chunks, so consecutive rows share a vector past the
    budget, every row in exactly one of them, in order."""
    rows = [f"id: {number} | v: {number * 7}" for number in range(2, 42)]
    texts = row_texts("\n".join(rows), Locator(row_start=2, row_end=41), "csv")
    assert texts is not None
    assert 1 < len(texts) <= ROW_VECTORS_PER_PASSAGE
    assert "\n".join(texts).split("\n") == rows
    caption_and_header = "Table 9: Counts\nid | v"
    document_rows = "\n".join([caption_and_header, *rows])
    texts = row_texts(
        document_rows, Locator(page_start=1, page_end=1, row_start=2, row_end=41), "pdf"
    )
    assert texts is not None
    assert 1 < len(texts) <= ROW_VECTORS_PER_PASSAGE
    assert all(text.startswith(caption_and_header + "\n") for text in texts)


def test_the_vector_leg_scores_a_passage_of_rows_by_its_best_row(tmp_path: Path) -> None:
    """The row naming Kroger and the date it was added ranks over a sentence that says Kroger
    added something: embedded whole, the passage's four companies averaged into none of them
    and it came second."""
    names = ("Symbol", "Security", "Sector", "Headquarters", "Date added")
    companies = [
        ("KR", "Kroger", "Consumer Staples", "Cincinnati, Ohio", "1957-03-04"),
        ("LHX", "L3Harris", "Industrials", "Melbourne, Florida", "2008-09-22"),
        ("LH", "Labcorp", "Health Care", "Burlington, North Carolina", "2004-11-01"),
        ("LRCX", "Lam Research", "Information Technology", "Fremont, California", "2012-06-29"),
    ]
    table = "\n".join(
        " | ".join(f"{name}: {value}" for name, value in zip(names, values, strict=True))
        for values in companies
    )
    prose = "Kroger added organic brands to its shelves this year."
    vectors = VectorIndex(tmp_path / "vectors", NgramEmbedder())
    vectors.publish_many(
        {
            "sp500.csv": [indexed("sp500.csv", table, Locator(row_start=2, row_end=5))],
            "news.html": [indexed("news.html", prose, Locator(line_start=3, line_end=3))],
        }
    )

    hits = vectors.rank("Kroger date added", SearchFilter(), 2)

    assert [hit.chunk_id for hit in hits] == ["sp500.csv@r1#0", "news.html@r1#0"]
