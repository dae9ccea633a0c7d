"""Text shown to a person, in a terminal or in the Dagster UI: escaped and bounded.

Chunk text, section paths and file names come from the documents, which anyone who can write into
a watched folder controls. Printed raw, a control character can clear a screen or set a window
title; stored raw in Dagster's metadata, a huge string fills its event storage. Everything loom
shows a person goes through `printable` (terminal) or `bounded` (metadata, one-line messages).
"""

from __future__ import annotations

import unicodedata

ELLIPSIS = "…"

# C0 and C1 controls, DEL, and the format characters that reorder or hide text (bidi overrides
# and isolates, zero-width joiners are kept out as well: a name must read as what it is).
_ESCAPED_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Co", "Zl", "Zp"})


def _escape(char: str) -> str:
    code = ord(char)
    if code <= 0xFF:
        return f"\\x{code:02x}"
    if code <= 0xFFFF:
        return f"\\u{code:04x}"
    return f"\\U{code:08x}"


def printable(text: str, *, keep_newlines: bool = False) -> str:
    """`text` with every control and format character written as an escape (`\\x1b`, `\\u202e`).

    A tab stays a tab; newlines stay only with `keep_newlines`. A lone surrogate (a file name
    that is not UTF-8, decoded with surrogateescape) is escaped like a control.
    """
    # str.isprintable() is false for every category escaped here (and for tab and newline), so
    # a text it passes is returned as it is: a name per file of a million-file listing costs a
    # C loop, not a category lookup per character.
    if text.isprintable():
        return text
    out = []
    for char in text:
        if char == "\t" or (keep_newlines and char == "\n"):
            out.append(char)
        elif unicodedata.category(char) in _ESCAPED_CATEGORIES:
            out.append(_escape(char))
        else:
            out.append(char)
    return "".join(out)


def bounded(text: str, limit: int) -> str:
    """`text` cut to at most `limit` characters, the cut marked with an ellipsis."""
    if limit < 1:
        raise ValueError("limit must be at least 1")
    return text if len(text) <= limit else text[: limit - 1] + ELLIPSIS


def one_line(text: str, limit: int = 300) -> str:
    """`text` as one printable line of at most `limit` characters (whitespace runs folded)."""
    return bounded(printable(" ".join(text.split())), limit)
