"""A passage of table rows is indexed with each column's name once (search/rows.py): its
values decide where it ranks, not how many rows repeat the names of its columns."""

from __future__ import annotations

from pathlib import Path

from loom_dagster.chunking import Chunk
from loom_dagster.contract.artifact import Locator
from loom_dagster.search.lexical import IndexedChunk, LexicalIndex
from loom_dagster.search.rows import names_once

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
