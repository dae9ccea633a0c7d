"""Plain text: one paragraph block per run of non-blank lines.

A paragraph's text is its lines exactly as written (line endings between them kept, the last one
left out), and its locator spans those lines and characters. Nothing is markup: a line that
begins with "#" is text, not a heading. A blank line is empty or holds only spaces and tabs.
Coverage counts non-blank lines, from the blocks' spans.

What ends a paragraph (a line ending and the blank lines after it) is found by one regular
expression and the lines in between counted with str.count, so the text is never split into lines
in Python: a file of many short lines reads
close to the speed of str.splitlines (issue 15).
"""

from __future__ import annotations

import platform
import re
from collections.abc import Callable, Mapping

from extractor_sandbox.artifact import BlockBuilder, build_artifact, coverage
from extractor_sandbox.contract import Artifact

PARSER = "loom-text"
PARSER_VERSION = f"1+python{platform.python_version()}"

_ENDING = r"(?:\r\n|\r(?!\n)|\n)"  # one line ending: a "\r\n" is never read as two
# The blank lines at the start of the text, each with its ending.
_LEADING_BLANKS = re.compile(rf"(?:[ \t]*{_ENDING})*")
# Between two paragraphs: the first one's last line ending and the blank lines after it. It starts
# with a line ending, so the search stops only there, and a line that is not blank fails it at its
# first character that is no space or tab. A text with no "\r" (most) is searched for "\n" alone,
# several times faster than for a choice of endings.
_SEPARATOR = re.compile(rf"{_ENDING}(?:[ \t]*{_ENDING})+")
_NEWLINE_SEPARATOR = re.compile(r"\n(?:[ \t]*\n)+")
_BLANK_CHARS = " \t\r\n"
_TAIL_CHARS = 4096


def extract_text(
    text: str, options: Mapping[str, str] | None = None, *, name: str = ""
) -> Artifact:
    builder = BlockBuilder()
    non_blank = 0
    start = _LEADING_BLANKS.match(text).end()  # type: ignore[union-attr]
    # The end of the last non-blank line's content (trailing spaces kept): what follows is blank.
    content_end = _content_end(text)
    if content_end > start:
        ends = [
            at for at in (text.find("\r", content_end), text.find("\n", content_end)) if at >= 0
        ]
        content_end = min(ends, default=len(text))
        line = 1 + _endings(text, 0, start)  # the number of the line at `start`
        if "\r" in text:
            separators, endings = _SEPARATOR, _endings
        else:
            separators, endings = _NEWLINE_SEPARATOR, _newlines
        for separator in separators.finditer(text, start, content_end):
            end = separator.start()
            last = _paragraph(builder, text, start, end, line, endings)
            non_blank += last - line + 1
            start = separator.end()
            line = last + endings(text, end, start)
        last = _paragraph(builder, text, start, content_end, line, endings)
        non_blank += last - line + 1
    return build_artifact(
        "text", PARSER, PARSER_VERSION, builder.blocks, coverage("lines", non_blank, non_blank)
    )


def _content_end(text: str) -> int:
    """Where the text's trailing spaces, tabs and line endings start (a stripped copy of the
    whole text is not made: its tail is looked at first)."""
    tail = text[-_TAIL_CHARS:]
    kept = len(tail.rstrip(_BLANK_CHARS))
    if kept or len(tail) == len(text):
        return len(text) - len(tail) + kept
    return len(text.rstrip(_BLANK_CHARS))


def _endings(text: str, start: int, end: int) -> int:
    """How many line endings text[start:end] holds ("\\r\\n" is one)."""
    carriage_returns = text.count("\r", start, end)
    if not carriage_returns:
        return text.count("\n", start, end)
    return text.count("\n", start, end) + carriage_returns - text.count("\r\n", start, end)


def _newlines(text: str, start: int, end: int) -> int:
    """_endings for a text with no "\\r"."""
    return text.count("\n", start, end)


def _paragraph(
    builder: BlockBuilder,
    text: str,
    start: int,
    end: int,
    first_line: int,
    endings: Callable[[str, int, int], int],
) -> int:
    """A paragraph of the lines in text[start:end] (no line ending at either end); the number of
    its last line."""
    last_line = first_line + endings(text, start, end)
    builder.place(
        "paragraph",
        text[start:end],
        {"line_start": first_line, "line_end": last_line, "char_start": start, "char_end": end},
    )
    return last_line
