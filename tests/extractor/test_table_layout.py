"""Row layout counted a chunk of rows at a time gives the blocks, spend and cut row that charging
each row alone gives (issue 15: the CSV reader's speed)."""

from __future__ import annotations

import random
from typing import Any

import pytest

from extractor_sandbox.formats.tables import (
    _JSON,
    BLOCK_JSON_OVERHEAD,
    MAX_BLOCK_CHARS,
    MAX_BLOCK_TEXT_CHARS,
    MAX_LAYOUT_BYTES,
    ROWS_PER_BLOCK,
    Budget,
    Cell,
    layout_rows,
    row_line,
    row_text_spend,
    string_cell,
    typed_cell,
)


def row_by_row(names: list[str], rows: list[list[Cell | None]], budget: Budget, sheet: str | None):
    """The layout as it was before issue 15: each row charged alone, in order."""
    lines, failed, laid = [], [], 0
    for index, row in enumerate(rows):
        line = row_line(names, row)
        spend = (
            len(_JSON.encode([None if cell is None else cell.value for cell in row]))
            + len(_JSON.encode(line))
            + BLOCK_JSON_OVERHEAD // ROWS_PER_BLOCK
            + (len(sheet) if sheet else 0)
        )
        text_spend = row_text_spend(line)
        if (
            budget.layout_bytes + spend > MAX_LAYOUT_BYTES
            or budget.block_chars + text_spend > MAX_BLOCK_TEXT_CHARS
        ):
            failed.append(f"rows {index + 2}-")
            break
        budget.layout_bytes += spend
        budget.block_chars += text_spend
        laid += 1
        lines.append(line)
    return laid, failed, budget.layout_bytes, budget.block_chars


def random_rows(rng: random.Random, count: int, width: int) -> list[list[Cell | None]]:
    values = [
        "",
        "1",
        "2.5",
        "-7",
        "2024-02-29",
        'quote " and \\',
        "tab\there",
        "é",
        "\x01",
        "x" * 900,
    ]
    rows = []
    for _ in range(count):
        rows.append([typed_cell(rng.choice(values)) for _ in range(width)])
    return rows


@pytest.mark.parametrize("sheet", [None, "Sheet 1"])
@pytest.mark.parametrize("left", [None, 1, 5_000, 333_333])
@pytest.mark.parametrize("bound", ["bytes", "chars"])
def test_chunked_spend_cuts_at_the_row_charging_each_row_cuts_at(
    sheet: str | None, left: int | None, bound: str
) -> None:
    rng = random.Random(f"{sheet}{left}{bound}")
    names = ["id", 'name "quoted"', "when", "amount"]
    rows = random_rows(rng, 2_500, len(names))
    budgets = []
    for _ in range(2):
        budget = Budget()
        if left is not None and bound == "bytes":
            budget.layout_bytes = MAX_LAYOUT_BYTES - left
        if left is not None and bound == "chars":
            budget.block_chars = MAX_BLOCK_TEXT_CHARS - left
        budgets.append(budget)
    numbers = list(range(2, len(rows) + 2))

    layout = layout_rows("t0", names, rows, numbers, budgets[0], sheet=sheet)
    laid, failed, layout_bytes, block_chars = row_by_row(names, rows, budgets[1], sheet)

    assert layout.rows_laid == laid
    assert [unit["unit"] for unit in layout.failed] == failed
    assert (budgets[0].layout_bytes, budgets[0].block_chars) == (layout_bytes, block_chars)
    assert budgets[0].spent == bool(failed)
    assert [
        (b["locator"]["row_start"], b["locator"]["row_end"], b["text"]) for b in layout.blocks
    ] == grouped(names, rows[:laid])


def grouped(names: list[str], rows: list[list[Cell | None]]) -> list[tuple[int, int, str]]:
    """Blocks as adding the rows one by one made them before issue 15."""
    blocks: list[tuple[int, int, str]] = []
    pending: list[tuple[int, str]] = []
    chars = 0

    def flush() -> None:
        if pending:
            blocks.append((pending[0][0], pending[-1][0], "\n".join(t for _, t in pending)))
            pending.clear()

    for index, row in enumerate(rows):
        line = row_line(names, row)
        if not line:
            continue
        if pending and (len(pending) >= ROWS_PER_BLOCK or chars + 1 + len(line) > MAX_BLOCK_CHARS):
            flush()
            chars = 0
        pending.append((index + 2, line))
        chars += len(line) + (1 if len(pending) > 1 else 0)
        if len(line) > MAX_BLOCK_CHARS:
            flush()
            chars = 0
    flush()
    return blocks


def test_blocks_hold_twenty_rows_and_a_long_row_alone() -> None:
    names = ["a"]
    long_text = "y" * (MAX_BLOCK_CHARS + 1)
    rows: list[list[Any]] = [[string_cell("x")] for _ in range(25)]
    rows[3] = [string_cell(long_text)]
    layout = layout_rows("t0", names, rows, list(range(2, 27)), Budget())

    spans = [(b["locator"]["row_start"], b["locator"]["row_end"]) for b in layout.blocks]
    assert spans == [(2, 4), (5, 5), (6, 25), (26, 26)]


def test_short_rows_and_empty_rows_group_as_one_by_one() -> None:
    rng = random.Random(20)
    names = ["a", "b"]
    values = ["", "1", "x", "2024-02-29", "y" * 40]
    rows = [[typed_cell(rng.choice(values)) for _ in names] for _ in range(3_000)]
    layout = layout_rows("t0", names, rows, list(range(2, 3_002)), Budget())

    assert [
        (b["locator"]["row_start"], b["locator"]["row_end"], b["text"]) for b in layout.blocks
    ] == grouped(names, rows)


def test_rows_with_every_cell_are_laid_out_as_one_by_one() -> None:
    # A chunk whose rows all have every cell builds its lines column by column.
    rng = random.Random(21)
    names = ["a", "b", "c"]
    values = ["1", "x", "2.5", "2024-02-29", "y" * 300, 'q"uote']
    rows = [[typed_cell(rng.choice(values)) for _ in names] for _ in range(2_500)]
    layout = layout_rows("t0", names, rows, list(range(2, 2_502)), Budget(), sheet="S")

    assert [
        (b["locator"]["row_start"], b["locator"]["row_end"], b["text"]) for b in layout.blocks
    ] == grouped(names, rows)
    assert layout.rows_laid == 2_500
