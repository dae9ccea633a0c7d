"""Document structure across pages: the outline's entries as the headings, and a table that goes
on at the top of the next page in the same columns joined into one."""

from __future__ import annotations

import re
from typing import Any

from extractor_sandbox.formats.pdf.blocks import Block, _join
from extractor_sandbox.formats.pdf.grids import Table

SEARCH_BLOCKS = 400


def _key(text: str) -> str:
    return " ".join(re.findall(r"\w+", text.casefold()))


def apply_outline(blocks: list[Block], outline: list[tuple[str, int, int]]) -> list[Block]:
    """The outline's entries are the headings: each takes the first line after the previous
    heading's that holds its title (its paragraph split around it), or stands right after that
    heading; a heading set larger than every outlined one stays above them."""
    styled = [b for b in blocks if b.kind == "heading"]
    for block in blocks:
        if block.kind == "heading":
            block.kind = "paragraph"
    out = list(blocks)
    cursor = 0
    found_sizes: list[float] = []
    placed: list[Block] = []
    for title, level, page in outline:
        key = _key(title)
        hit: tuple[int, int | None] | None = None
        for k in range(cursor, len(out)):
            block = out[k]
            # the title is looked for on its page and the next (or, with no page, in the next
            # few hundred blocks), so a long outline of titles the pages lack costs little
            if (page and block.page > page + 1) or (not page and k - cursor > SEARCH_BLOCKS):
                break
            if block.kind not in ("paragraph", "list") or not block.lines:
                if block.kind == "paragraph" and _key(block.text) == key and key:
                    hit = (k, None)
                    break
                continue
            if page and block.page < page:
                continue
            if _key(block.text) == key and key:
                hit = (k, None)
                break
            line_hit = next(
                (i for i, line in enumerate(block.lines) if _key(line.text) == key and key), None
            )
            if line_hit is not None:
                hit = (k, line_hit)
                break
        if hit is None:
            heading = Block("heading", page or (out[cursor - 1].page if cursor else 1), text=title)
            heading.depth = level
            out.insert(cursor, heading)
            placed.append(heading)
            cursor += 1
            continue
        k, line_index = hit
        block = out[k]
        if line_index is not None and len(block.lines) > 1:
            before, line, after = (
                block.lines[:line_index],
                block.lines[line_index],
                block.lines[line_index + 1 :],
            )
            parts: list[Block] = []
            if before:
                parts.append(_rebuilt(block, before))
            heading = Block("heading", block.page, [line], text=title, size=line.size)
            parts.append(heading)
            if after:
                parts.append(_rebuilt(block, after))
            out[k : k + 1] = parts
            k += len(parts) - (2 if after else 1)
            block = heading
        block.kind = "heading"
        block.text = block.text if _key(block.text) == key else title
        block.depth = level
        found_sizes.append(block.size)
        placed.append(block)
        cursor = k + 1
    # a heading set larger than every outlined one (a title the outline leaves out) stays above
    top = max(found_sizes, default=0.0)
    titles = [b for b in styled if b.kind == "paragraph" and b.size > top * 1.05 and top]
    if titles:
        for block in titles:
            block.kind = "heading"
            block.depth = 1
        for block in placed:
            block.depth += 1
    return out


def _rebuilt(block: Block, lines: list[Any]) -> Block:
    return Block(block.kind, block.page, list(lines), text=_join(lines), size=block.size)


def join_tables(blocks: list[Block]) -> list[Block]:
    """A table whose rows go on at the top of the next page in the same columns is one table,
    the next page's repeat of its header row dropped."""
    out: list[Block] = []
    for block in blocks:
        if block.table is not None and not block.table.row_pages:
            block.table.row_pages = [block.page] * len(block.table.rows)
        prev = out[-1] if out else None
        if (
            block.kind == "table"
            and prev is not None
            and prev.kind == "table"
            and prev.table is not None
            and block.table is not None
            and block.page == prev.last_page + 1
            and _same_columns(prev.table, block.table)
        ):
            rows = block.table.rows
            pages = [block.page] * len(rows)
            if rows and [_key(c) for c in rows[0]] == [_key(c) for c in prev.table.rows[0]]:
                rows, pages = rows[1:], pages[1:]
            prev.table.rows.extend(rows)
            prev.table.row_pages.extend(pages)
            prev.last_page = block.page
            continue
        out.append(block)
    return out


def _same_columns(a: Table, b: Table) -> bool:
    if len(a.columns) != len(b.columns):
        return False
    slack = 0.05 * max(a.x1 - a.x0, 1.0) + 6
    return all(abs(x - y) <= slack for x, y in zip(a.columns, b.columns, strict=True))
