"""Document structure across pages: the outline's entries as the headings, and a table that goes
on at the top of the next page in the same columns joined into one."""

from __future__ import annotations

import re
from typing import Any

from extractor_sandbox.formats.pdf.blocks import Block, _join, contents_title
from extractor_sandbox.formats.pdf.grids import Table

SEARCH_BLOCKS = 400


# a section's number before its title ("2.1 ", "A.3. "), which an outline's entry may leave out
SECTION_NUMBER = re.compile(r"^(?:\d{1,3}|[A-Z](?=\.\d))(?:\.\d{1,3})*\.?\s+(?=\S)")


def _key(text: str) -> str:
    return " ".join(re.findall(r"\w+", text.casefold()))


def _names(text: str, key: str) -> bool:
    """Whether a line or a block reads as an outline entry's title (its key), or as that title
    after a section number the entry leaves out ("2.1 Scope" for "Scope")."""
    if not key:
        return False
    found = _key(text)
    if found == key:
        return True
    # the number's words and the title's: only then is the number taken off and looked at
    return found.endswith(" " + key) and (
        _key(SECTION_NUMBER.sub("", text.strip(), count=1)) == key
    )


def apply_outline(blocks: list[Block], outline: list[tuple[str, int, int]]) -> list[Block]:
    """The outline's entries are the headings: each takes the first line after the previous
    heading's that holds its title (its paragraph split around it), or stands right after that
    heading; a heading set larger than every outlined one stays above them. A line that reads
    the title after a section number the entry leaves out ("1 Introduction" for "Introduction",
    as hyperref writes an outline) is the heading, its number kept; a contents page's title,
    which no outline lists, stays a heading at the outline's first level."""
    styled = [b for b in blocks if b.kind == "heading"]
    for block in blocks:
        if block.kind == "heading" and not contents_title(block):
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
                if block.kind == "paragraph" and _names(block.text, key):
                    hit = (k, None)
                    break
                continue
            if page and block.page < page:
                continue
            if _names(block.text, key):
                hit = (k, None)
                break
            line_hit = next(
                (i for i, line in enumerate(block.lines) if _names(line.text, key)), None
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
            # the line's own text when it adds the section number the entry leaves out
            text = title if _key(line.text) == key else line.text
            heading = Block("heading", block.page, [line], text=text, size=line.size)
            parts.append(heading)
            if after:
                parts.append(_rebuilt(block, after))
            out[k : k + 1] = parts
            k += len(parts) - (2 if after else 1)
            block = heading
        block.kind = "heading"
        block.text = block.text if _names(block.text, key) else title
        block.depth = level
        found_sizes.append(block.size)
        placed.append(block)
        cursor = k + 1
    # a heading set larger than every outlined one (a title the outline leaves out) stays above
    top = max(found_sizes, default=0.0)
    titles = [b for b in styled if b.kind == "paragraph" and b.size > top * 1.05 and top]
    # a contents page's title ranks with the outline's first level
    contents = [b for b in styled if b.kind == "heading" and contents_title(b)]
    for block in contents:
        block.depth = 1
    if titles:
        for block in titles:
            block.kind = "heading"
            block.depth = 1
        for block in placed + contents:
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
            heading = prev.table.header_rows  # a header of several rows repeats them all
            if rows and _keys(rows[:heading]) == _keys(prev.table.rows[:heading]):
                rows, pages = rows[heading:], pages[heading:]
            prev.table.rows.extend(rows)
            prev.table.row_pages.extend(pages)
            prev.last_page = block.page
            continue
        out.append(block)
    return out


def _keys(rows: list[list[str]]) -> list[list[str]]:
    return [[_key(c) for c in row] for row in rows]


def _same_columns(a: Table, b: Table) -> bool:
    if len(a.columns) != len(b.columns):
        return False
    slack = 0.05 * max(a.x1 - a.x0, 1.0) + 6
    return all(abs(x - y) <= slack for x, y in zip(a.columns, b.columns, strict=True))
