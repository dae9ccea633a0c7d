"""GitHub-flavoured Markdown pipe tables: the delimiter row and a row's cells.

A table is a header row, a delimiter row under it (`| --- | :-: |`: each cell dashes with an
optional colon at either end, the cells separated by pipes, at least one pipe on the row) with
as many cells as the header, then body rows. The delimiter row is markup: its colons give each
column's alignment. A row's cells are what lies between its unescaped pipes, a leading and a
trailing pipe being optional; an escaped pipe (`\\|`) and a pipe inside a code span are cell
text. Cells are stripped of the spaces around them; their inline markup is read by the reader.
"""

from __future__ import annotations

import re

_DELIMITER_CELL = re.compile(r"[ \t]*(:?)-+(:?)[ \t]*$")
# A code span in a cell is looked for this far (a row of unclosed backticks stays linear).
_MAX_CODE_SPAN = 2_000


def split_row(content: str) -> list[str]:
    """A row's cells, as written (escaped pipes unescaped), without the spaces around them."""
    text = content.strip(" \t")
    if text.startswith("|"):
        text = text[1:]
    if "\\" not in text and "`" not in text:  # no escape, no code span: the pipes split it
        split = text.split("|")
        if len(split) > 1 and not split[-1].strip(" \t"):
            split.pop()
        return [cell.strip(" \t") for cell in split]
    cells: list[str] = []
    current: list[str] = []
    index, length = 0, len(text)
    ended_on_pipe = False
    while index < length:
        char = text[index]
        if char == "\\" and index + 1 < length and text[index + 1] == "|":
            current.append("|")
            index += 2
        elif char == "|":
            cells.append("".join(current))
            current = []
            index += 1
            ended_on_pipe = not text[index:].strip(" \t")
            if ended_on_pipe:
                break
        elif char == "`":
            run_end = index
            while run_end < length and text[run_end] == "`":
                run_end += 1
            closing = _closing_run(text, run_end, run_end - index)
            if closing < 0:
                current.append(text[index:run_end])
                index = run_end
            else:
                current.append(text[index:closing])
                index = closing
        else:
            current.append(char)
            index += 1
    if not ended_on_pipe:
        cells.append("".join(current))
    return [cell.strip(" \t") for cell in cells]


def _closing_run(text: str, start: int, length: int) -> int:
    """The index just past the backtick run of exactly `length` that closes a code span opened
    before `start`, or -1 when none does."""
    run = "`" * length
    limit = min(len(text), start + _MAX_CODE_SPAN)
    position = text.find(run, start, limit)
    while position >= 0:
        end = position + length
        if end < len(text) and text[end] == "`":
            while end < len(text) and text[end] == "`":
                end += 1
            position = text.find(run, end, limit)
            continue
        return end
    return -1


def delimiter_row(content: str) -> list[str | None] | None:
    """Each column's alignment ("left", "center", "right" or None) when the line is a delimiter
    row; None when it is not one."""
    if "|" not in content or "-" not in content:
        return None
    text = content.strip(" \t")
    if text.startswith("|"):
        text = text[1:]
    if text.endswith("|"):
        text = text[:-1]
    alignments: list[str | None] = []
    for cell in text.split("|"):
        match = _DELIMITER_CELL.match(cell)
        if match is None:
            return None
        left, right = bool(match.group(1)), bool(match.group(2))
        alignments.append(
            "center" if left and right else "left" if left else "right" if right else None
        )
    return alignments
