"""The words a passage of table rows is indexed by: each column's name once, every cell's value.

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

from loom_dagster.chunking import CELL_SEPARATOR

# Between a cell's column name and its value in a row's line.
NAME_SEPARATOR = ": "


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
