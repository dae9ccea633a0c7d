"""The words a passage of table rows is indexed by: each column's name once, every cell's value;
and the rows the vector leg embeds one by one.

A CSV, XLSX or Parquet file's rows and a PDF table's rows are written as lines of `name: value`
pairs (one per non-empty cell, extractor_sandbox/formats/tables.py `row_line`), so a passage of
twenty rows holds each column's name twenty times. BM25 read those names as what the passage is
about: a column name repeated in every row of every passage of the file tells its rows apart no
better than once, yet it made each passage long (a UN M49 row holds 35 words of column names
and 8 of values) and counted a question's word that names a column many times over. The index
reads each column's name once, at its first cell in the passage, and every value where it is;
the passage itself (what a hit shows and cites) is unchanged. Chosen on the unseen bench's
tuning half (bench/retrieval_unseen.py, 2026-12-07; docs/benchmarks/search.md, "third: rows and
languages").
"""

from __future__ import annotations

from loom_dagster.chunking import CELL_SEPARATOR, TABLE_FILE_FORMATS
from loom_dagster.contract.artifact import Locator

# Between a cell's column name and its value in a row's line.
NAME_SEPARATOR = ": "
# The most vectors a passage of rows is embedded as: a table file reader's block of rows
# (extractor_sandbox/formats/tables.py ROWS_PER_BLOCK). A narrow table packs up to a hundred rows
# into a passage: one vector each would grow the vector index a hundredfold over its chunks, so
# past this many, consecutive rows share a vector (at most this many times the chunks). At 16,
# a passage of 19 rows embedded two by two lost issue 35's u026 (tuning half).
ROW_VECTORS_PER_PASSAGE = 20


def names_once(text: str) -> str:
    """`text` with each `name: value` cell after the first of its name in the passage written
    as its value alone; a cell with no name (a caption, a document table's plain cell, the cut
    start of a window) is kept as it is."""
    seen: set[str] = set()
    lines = []
    for line in text.split("\n"):
        cells = []
        for cell in line.split(CELL_SEPARATOR):
            name, separator, value = cell.partition(NAME_SEPARATOR)
            cells.append(value if separator and name in seen else cell)
            if separator:
                seen.add(name)
        lines.append(CELL_SEPARATOR.join(cells))
    return "\n".join(lines)


def row_texts(text: str, locator: Locator, format: str) -> list[str] | None:
    """A passage of two or more table rows as its rows, for the vector leg to embed one by one;
    None for any other passage, so it is embedded whole. A file that is a table (CSV, XLSX,
    Parquet) packs its reader's row blocks, a blank line between two: its rows are its lines
    with text. A document's table passage opens with its caption and header row (and a title
    it follows): its rows are its last lines, as many as it cites, each embedded under those
    opening lines; one whose lines are fewer (a cell holding a line break) is embedded whole.

    The vector leg's model averages its words: a passage of four to twenty rows, each about
    another company or currency, is about none of them, and lost to a single row or a prose
    passage that names the question's subject once (issue 35: "when was Kroger added to the
    S&P 500" had a news passage naming Kroger first, "until when was the Mozambique Metical
    used" the one `country-codes.csv` row for Mozambique, not the currency file's). Each row
    is a record of its own, and the passage scores as its best row, as a chunk embedded as
    passages does (search/vector.py). BM25 still reads the passage whole. Past
    ROW_VECTORS_PER_PASSAGE rows, consecutive rows share a vector."""
    if locator.row_start is None or locator.row_end is None:
        return None
    count = locator.row_end - locator.row_start + 1
    if count < 2:
        return None
    lines = text.split("\n")
    if format in TABLE_FILE_FORMATS:
        found = _grouped([line for line in lines if line.strip()])
        return found if len(found) >= 2 else None
    if count > len(lines):
        return None
    opening, rows = lines[:-count], lines[-count:]
    grouped = _grouped([line for line in rows if line.strip()])
    return ["\n".join([*opening, line]) for line in grouped] or None


def _grouped(rows: list[str]) -> list[str]:
    """The rows as at most ROW_VECTORS_PER_PASSAGE texts: one each, or runs of consecutive rows
    of near-equal size (a run's rows joined by line breaks)."""
    if len(rows) <= ROW_VECTORS_PER_PASSAGE:
        return rows
    size = -(-len(rows) // ROW_VECTORS_PER_PASSAGE)
    return ["\n".join(rows[start : start + size]) for start in range(0, len(rows), size)]
