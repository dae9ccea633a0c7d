"""The common rows of a worksheet, recognised by regular expressions over the inflated bytes.

sheet.read_sheet hands a run of `<row>` elements to these patterns only when every byte of the run
is in a grammar so narrow that expat cannot refuse it and would report exactly what the patterns
find: ASCII only, no entity or character reference, no CDATA, no comment, no `]` or carriage
return in text (expat splits or rewrites text there), attributes in double quotes with no
whitespace, tab or line break in their values, no namespace declaration, a cell's attributes only
`r`, `s` and `t` (each at most once), a formula and a value of at most 1,024 characters. Anything
else (inline strings, rich text, prefixes the sheet did not declare, long values) stops the run
and the rest of the part goes through expat's Python handlers as before.
"""

from __future__ import annotations

import re

# The literal start of the rows' container, searched for in the bytes (and then confirmed by
# expat's own event at that offset).
SHEET_DATA = b"<sheetData>"
# A run waits for the rest of a row cut by a read this long at most; a longer row goes to expat.
MAX_ROW_BYTES = 1024 * 1024
MAX_TEXT = 1024

_WS = rb"[ \t\r\n]*"
# An attribute value as expat hands it over unchanged: printable ASCII but `"`, `&`, `<` and `>`.
_VALUE = rb"[\x20\x21\x23-\x25\x27-\x3b\x3d\x3f-\x7e]*"
# Element text as expat hands it over in one piece: printable ASCII, tab and line feed, but `&`,
# `<` and `]` (expat holds `]` back at the end of a read, to look for `]]>`).
_TEXT = rb"[\t\n\x20-\x25\x27-\x3b\x3d-\x5c\x5e-\x7e]{0,%d}" % MAX_TEXT
_NAME = rb"[A-Za-z_][A-Za-z0-9_.-]*"
_ATTRIBUTES = rb'(?: %s(?::%s)?="%s")*' % (_NAME, _NAME, _VALUE)
_FORMULA = rb'<f(?: [A-Za-z]+="%s")*%s(?:/>|>%s</f>)' % (_VALUE, _WS, _TEXT)
_VALUE_ELEMENT = rb"<v(?:/>|>%s</v>)" % _TEXT


def _cell(group: bytes) -> bytes:
    """A cell's pattern; `group` is b"(" to capture its parts, b"(?:" not to."""
    return (
        rb'<c%s r="%s")?(?:%s s="%s")%s t="%s")?|%s t="%s")%s s="%s")?)?%s'
        rb"(?:/>|>%s(?:%s%s%s)?(?:%s%s%s)?</c>)"
        % (
            group, _VALUE,
            group, _VALUE, group, _VALUE,
            group, _VALUE, group, _VALUE,
            _WS,
            _WS, group, _FORMULA, rb")" + _WS,
            group, _VALUE_ELEMENT, rb")" + _WS,
        )
    )  # fmt: skip


# A whole row: its attributes (group 1) and, unless it closes itself, its cells (group 2).
ROW = re.compile(
    rb"%s<row(%s)%s(?:/>|>((?:%s(?>%s))*+)%s</row>)"
    % (_WS, _ATTRIBUTES, _WS, _WS, _cell(b"(?:"), _WS)
)
# A cell's parts, each with its own markup so that an absent part reads b"": r, then s and t
# in either order (s, t, t, s), the formula, the value element.
CELL = re.compile(_cell(b"("))
ROW_ATTRIBUTE = re.compile(rb'(?:(%s):)?(%s)="(%s)"' % (_NAME, _NAME, _VALUE))
FORMULA_ATTRIBUTES = re.compile(rb"<f ([^>]*?)%s/?>" % _WS)
FORMULA_ATTRIBUTE_NAME = re.compile(rb'([A-Za-z]+)="')
# The commonest row of all: every cell `<c r="B7"><v>text</v></c>` (no style, type or formula),
# read with three passes over its text. rowscan.ROW has matched the row before.
PLAIN_CELLS = re.compile(r'(?:<c r="[A-Z]{1,3}[0-9]{1,7}"><v>[^<]{1,1024}</v></c>)*')
# The same row when every value is a number as a sheet shows it (sheet._PLAIN_FLOAT, its end
# anchored at the value's end): its cells need no check one by one.
PLAIN_FLOAT_CELLS = re.compile(
    r'(?:<c r="[A-Z]{1,3}[0-9]{1,7}"><v>'
    r"-?(?=[0-9.]{1,16}</v>)(?:[1-9][0-9]*|0(?!\.0000))\.[0-9]*[1-9]</v></c>)*"
)
PLAIN_LETTERS = re.compile(r'<c r="([A-Z]+)')
PLAIN_VALUES = re.compile(r"<v>([^<]*)</v>")
# A value that is not all blanks: what the rows past the budget are checked for.
SOME_VALUE = re.compile(rb"<v>[ \t\n]*[^ \t\n<]")
# A row start that may still be complete once more bytes come: the rest of a read waits for them.
ROW_START = re.compile(rb"%s(?:<(?:r(?:o(?:w)?)?)?)?\Z|%s<row[ \t\r\n>/]" % (_WS, _WS))
ROW_CLOSED = re.compile(rb"%s<row[^>]*/>" % _WS)
_PROLOG = re.compile(
    rb"(?:\xef\xbb\xbf)?<\?xml version=[\"']1\.0[\"']"
    rb"(?: encoding=[\"'](?:[Uu][Tt][Ff]-8|[Uu][Ss]-[Aa][Ss][Cc][Ii][Ii])[\"'])?"
    rb"(?: standalone=[\"'](?:yes|no)[\"'])?[ \t\r\n]*\?>"
)


def ascii_compatible(head: bytes) -> bool:
    """Whether a part that begins with `head` is UTF-8 (or ASCII): its ASCII bytes mean ASCII."""
    if head.startswith(b"<?xml") or head.startswith(b"\xef\xbb\xbf<?xml"):
        return _PROLOG.match(head) is not None
    return head.startswith(b"<") and not head.startswith(b"<\x00")


def row_attributes(written: bytes, prefixes: frozenset[str]) -> list[str] | None:
    """A row's attributes as the start handler gets them (only `r` is read, so only `r` is
    given); None when expat might refuse them or read them otherwise: a prefix the sheet did not
    declare, a namespace declaration, or a local name twice."""
    if not written:
        return []
    found = ROW_ATTRIBUTE.findall(written)
    locals_ = [local for _, local, _ in found]
    if len(set(locals_)) != len(locals_):
        return None
    attributes: list[str] = []
    for prefix, local, value in found:
        if prefix:
            if prefix == b"xmlns" or prefix.decode() not in prefixes:
                return None
        elif local == b"xmlns":
            return None
        elif local == b"r":
            attributes = ["r", value.decode()]
    return attributes


def formulas_plain(body: bytes) -> bool:
    """Whether no formula in a row's cells names an attribute twice (which expat refuses)."""
    for written in FORMULA_ATTRIBUTES.findall(body):
        names = FORMULA_ATTRIBUTE_NAME.findall(written)
        if len(set(names)) != len(names):
            return False
    return True
