"""Markdown inline markup taken out of a block's text, as a browser shows the words.

`plain_inline` keeps what a reader sees of a run of Markdown inline text:

- a code span's content as written (`` `a *b*` `` reads "a *b*"; nothing inside it is markup);
- emphasis, strong emphasis and strikethrough without their delimiters (`***this***`, `__that__`,
  `~~gone~~`); an underscore inside a word (snake_case) is no delimiter;
- a link's text (`[text](url "title")`; `[text][ref]`, `[ref][]` and `[ref]` when the document
  defines `[ref]: url`, otherwise brackets that make no link, as written), an image's alt text,
  an autolink's address (`<https://x.org>`); a footnote reference (`[^note]`) is left out;
- backslash escapes resolved (`\\*` reads "*", and is no delimiter) and entity and numeric
  references decoded (`&amp;` reads "&").

Line endings inside the text are kept. Inline HTML tags are left as written, as are brackets
that make no link. Text with none of the characters markup starts with is returned as is.
"""

from __future__ import annotations

import html
import re
import string
from unicodedata import category

# The characters inline markup starts with; a text without any of them has none.
_MARKUP_CHARS = re.compile(r"[`*_~\[\]<\\&!]")

_ESCAPABLE = r"""!"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~"""
_ESCAPE = re.compile(rf"\\([{_ESCAPABLE}])")
# An escaped character is held as a private-use one while markup is read, so it is no delimiter.
_HELD_BASE = 0xF0000
_HELD = re.compile(f"[{chr(_HELD_BASE)}-{chr(_HELD_BASE + 127)}]")
_HELD_START = chr(_HELD_BASE)
_HELD_ANY = re.compile(f"[{chr(_HELD_BASE)}-{chr(_HELD_BASE + 128)}]")

# Spans are bounded (a code span to 2,000 characters, emphasis to 500) so that text full of
# delimiters that close nothing is read in linear time, not quadratic.
_CODE_SPAN = re.compile(r"(?<!`)(`+)(?!`)(.{1,2000}?)(?<!`)\1(?!`)", re.DOTALL)
_DESTINATION = r"""(?:<[^<>\n]*>|[^\s()]*(?:\([^\s()]*\)[^\s()]*)*)"""
_TITLE = r"""(?:\s+(?:"[^"]*"|'[^']*'|\([^()]*\)))?"""
_IMAGE = re.compile(rf"!\[([^\[\]]*)\]\(\s*{_DESTINATION}{_TITLE}\s*\)")
_LINK = re.compile(rf"\[((?:[^\[\]]|\[[^\[\]]*\])*)\]\(\s*{_DESTINATION}{_TITLE}\s*\)")
_REFERENCE = re.compile(r"(!?)\[([^\[\]^][^\[\]]*)\](?:\[([^\[\]]*)\])?")
_DEFINITION = re.compile(r"^ {0,3}\[([^\[\]^][^\[\]]*)\]:", re.MULTILINE)
_FOOTNOTE_REFERENCE = re.compile(r"\[\^[^\[\]\s]+\]")
_AUTOLINK = re.compile(r"<((?:[A-Za-z][A-Za-z0-9+.-]{1,31}:[^\s<>]*)|(?:[^\s<>@]+@[^\s<>@]+))>")
# Emphasis delimiters: runs of "*", "_" or "~", matched as CommonMark's delimiter runs are.
_DELIMITER_RUN = re.compile(r"\*+|_+|~+")
_CODE_HELD = chr(_HELD_BASE + 128)  # where a code span sits while the markup around it is read


def _hold(match: re.Match[str]) -> str:
    return chr(_HELD_BASE + ord(match.group(1)))


def _release(match: re.Match[str]) -> str:
    return chr(ord(match.group()) - _HELD_BASE)


def _is_punctuation(char: str) -> bool:
    # An escaped character or a code span held aside reads as the punctuation it stands for.
    return char in string.punctuation or char >= _HELD_START or category(char)[0] in "PS"


def _flanking(text: str, start: int, end: int) -> tuple[bool, bool]:
    """Whether the delimiter run text[start:end] is left-flanking and right-flanking."""
    before = text[start - 1] if start else " "
    after = text[end] if end < len(text) else " "
    before_space, after_space = before.isspace(), after.isspace()
    before_punct = not before_space and _is_punctuation(before)
    after_punct = not after_space and _is_punctuation(after)
    left = not after_space and (not after_punct or before_space or before_punct)
    right = not before_space and (not before_punct or after_space or after_punct)
    return left, right


def _without_emphasis(text: str) -> str:
    """The text without the delimiter runs that open and close emphasis (or strikethrough):
    one pass over the runs, a stack of openers per delimiter character, so linear in the runs."""
    openers: dict[str, list[list[int]]] = {"*": [], "_": [], "~": []}  # [start, remaining]
    cut: list[tuple[int, int]] = []
    for match in _DELIMITER_RUN.finditer(text):
        start, end = match.span()
        char = text[start]
        left, right = _flanking(text, start, end)
        if char == "_":
            can_open = left and (not right or (start > 0 and _is_punctuation(text[start - 1])))
            can_close = right and (not left or (end < len(text) and _is_punctuation(text[end])))
        else:
            can_open, can_close = left, right
        if char == "~" and end - start > 2:
            continue
        remaining = end - start
        stack = openers[char]
        while can_close and remaining and stack:
            opener = stack[-1]
            if char == "~" and opener[1] != remaining:
                break
            used = min(opener[1], remaining)
            opener[1] -= used
            cut.append((opener[0] + opener[1], opener[0] + opener[1] + used))
            cut.append((end - remaining, end - remaining + used))
            remaining -= used
            if not opener[1]:
                stack.pop()
        if can_open and remaining:
            stack.append([start, remaining])
    if not cut:
        return text
    cut.sort()
    pieces = []
    position = 0
    for first, last in cut:
        pieces.append(text[position:first])
        position = last
    pieces.append(text[position:])
    return "".join(pieces)


def reference_labels(document: str) -> frozenset[str]:
    """The labels the document's link reference definitions ("[label]: url") define, folded."""
    if "]:" not in document:
        return frozenset()
    return frozenset(_label(match.group(1)) for match in _DEFINITION.finditer(document))


def _label(text: str) -> str:
    return " ".join(text.split()).casefold()


def _outside_code(text: str, references: frozenset[str]) -> str:
    """Links, footnote references and autolinks read in text whose code spans are held aside."""
    if "[" in text:
        text = _FOOTNOTE_REFERENCE.sub("", text)
        if "](" in text:
            text = _IMAGE.sub(r"\1", text)
            text = _LINK.sub(r"\1", text)
        if references:

            def reference(match: re.Match[str]) -> str:
                # [text][label], [label][] or [label]: a link only when the label is defined.
                label = match.group(3) or match.group(2)
                return match.group(2) if _label(label) in references else match.group()

            text = _REFERENCE.sub(reference, text)
    if "<" in text:
        text = _AUTOLINK.sub(r"\1", text)
    if "*" in text or "_" in text or "~" in text:
        text = _without_emphasis(text)
    return text


def _code_content(match: re.Match[str]) -> str:
    content = match.group(2)
    # CommonMark strips one space on each side when both are there and the span is not all spaces.
    if len(content) > 2 and content[0] == " " and content[-1] == " " and content.strip(" "):
        content = content[1:-1]
    return content


def plain_inline(text: str, references: frozenset[str] = frozenset()) -> str:
    """The text without its inline markup (see the module's docstring)."""
    if _MARKUP_CHARS.search(text) is None or _HELD_ANY.search(text) is not None:
        return text  # no markup, or characters the reading holds markup in (left as written)
    held = "\\" in text
    if held:
        text = _ESCAPE.sub(_hold, text)
    if "`" in text:
        spans: list[str] = []

        def held_code(match: re.Match[str]) -> str:
            spans.append(_code_content(match))
            return _CODE_HELD

        text = _outside_code(_CODE_SPAN.sub(held_code, text), references)
        if spans:
            content = iter(spans)
            text = re.sub(_CODE_HELD, lambda _: next(content), text)
    else:
        text = _outside_code(text, references)
    if "&" in text:
        text = html.unescape(text)
    if held:
        text = _HELD.sub(_release, text)
    return text
