"""The encoding an HTML page declares in its first 1,024 bytes, found as the HTML standard's
prescan finds it (<meta charset="..."> or <meta http-equiv="Content-Type" content="...;
charset=...">), for a page that has no byte-order mark and no encoding declared by the caller.

A label is read as browsers read it: iso-8859-1, latin-1 and US-ASCII (and their aliases) are
windows-1252, a UTF-16 label in a meta is UTF-8 (a page that can be prescanned as ASCII is not
UTF-16), gb2312 is gbk. A label no codec knows is passed over, as the standard passes it over, and
the prescan goes on to the next meta. Bytes that are valid UTF-8 are read as UTF-8 whatever the meta
says (page_encoding): a page saved as UTF-8 keeps the meta it was written with more often than a
legacy page's text happens to be valid UTF-8.
"""

from __future__ import annotations

import codecs
import re

PRESCAN_BYTES = 1_024

# Labels browsers read as another encoding than their name (the Encoding standard's table).
_AS_WINDOWS_1252 = frozenset(
    """
    ansi_x3.4-1968 ascii cp1252 cp819 csisolatin1 ibm819 iso-8859-1 iso-ir-100 iso8859-1
    iso88591 iso_8859-1 iso_8859-1:1987 l1 latin1 latin-1 us-ascii windows-1252 x-cp1252
    """.split()
)
_AS_UTF8 = frozenset({"utf-16", "utf-16be", "utf-16le", "x-user-defined"})
_AS_GBK = frozenset({"gb2312", "gb_2312", "gb_2312-80", "chinese", "csgb2312", "x-gbk", "gbk"})

_RENAMED = {"windows-874": "cp874", "x-mac-cyrillic": "mac-cyrillic", "windows-31j": "cp932"}
# The Python codecs of the Encoding standard's encodings (utf-16 aside: a meta cannot declare it).
_WEB_CODECS = frozenset(
    """
    utf-8 cp866 iso8859-2 iso8859-3 iso8859-4 iso8859-5 iso8859-6 iso8859-7 iso8859-8 iso8859-10
    iso8859-13 iso8859-14 iso8859-15 iso8859-16 koi8-r koi8-u mac-roman cp874 cp1250 cp1251
    cp1252 cp1253 cp1254 cp1255 cp1256 cp1257 cp1258 mac-cyrillic gbk gb18030 big5 big5hkscs
    euc_jp iso2022_jp shift_jis cp932 euc_kr cp949
    """.split()
)

# 7-bit encodings whose text is ASCII bytes: valid UTF-8, yet another text.
_NOT_ASCII_COMPATIBLE = frozenset({"iso2022_jp"})

_SPACE = b"\t\n\x0c\r "
_ATTRIBUTE = re.compile(
    rb"""[\t\n\x0c\r /]*
    (?P<name>[^\t\n\x0c\r />][^\t\n\x0c\r /=>]*)
    (?:[\t\n\x0c\r ]*=[\t\n\x0c\r ]*
      (?:"(?P<dq>[^"]*)"|'(?P<sq>[^']*)'|(?P<bare>[^\t\n\x0c\r >]*))
    )?""",
    re.VERBOSE,
)
_CHARSET_IN_CONTENT = re.compile(
    rb"""charset[\t\n\x0c\r ]*=[\t\n\x0c\r ]*(?:"([^"]*)"|'([^']*)'|([^\t\n\x0c\r ;"']+))""",
    re.IGNORECASE,
)


class Declaration:
    """A meta declaration found: the codec it names, the label as written and its byte offset."""

    __slots__ = ("codec", "label", "offset")

    def __init__(self, codec: str, label: str, offset: int) -> None:
        self.codec = codec
        self.label = label
        self.offset = offset

    def describe(self) -> str:
        return f"declared {self.label!r} in a <meta> at byte {self.offset}"


def page_encoding(data: bytes) -> Declaration | None:
    """The encoding a page's <meta> declares, unless its bytes are UTF-8: a page saved as UTF-8
    often keeps the meta it was written with (charset=gb2312, iso-8859-1), and a legacy
    encoding's non-ASCII text is practically never valid UTF-8. None: read the page as UTF-8."""
    declaration = declared_encoding(data)
    if declaration is None or declaration.codec in _NOT_ASCII_COMPATIBLE:
        return declaration
    if declaration.codec == "utf-8" or _is_utf8(data):
        return None
    return declaration


def _is_utf8(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def declared_encoding(data: bytes) -> Declaration | None:
    """The first usable encoding a <meta> declares in the page's first 1,024 bytes, else None."""
    head = data[:PRESCAN_BYTES]
    position = 0
    while True:
        start = head.find(b"<", position)
        if start < 0 or start + 1 >= len(head):
            return None
        if head.startswith(b"<!--", start):
            close = head.find(b"-->", start + 2)  # "<!-->" closes itself, as the standard reads it
            if close < 0:
                return None
            position = close + 3
            continue
        tag = head[start + 1 : start + 6].lower()
        if tag[:4] == b"meta" and len(tag) == 5 and tag[4:5] in _SPACE + b"/":
            end, declaration = _meta(head, start + 5)
            if declaration is not None:
                return declaration
            position = end
            continue
        following = head[start + 1 : start + 2]
        if following.isalpha() or (following == b"/" and head[start + 2 : start + 3].isalpha()):
            position = _skip_attributes(head, start + 1)
        elif following in (b"!", b"/", b"?"):
            close = head.find(b">", start + 1)
            if close < 0:
                return None
            position = close + 1
        else:
            position = start + 1


def _attributes(head: bytes, position: int) -> tuple[int, list[tuple[bytes, bytes]]]:
    """The attributes of a tag from `position` (just after its name) and where the tag ends."""
    found: list[tuple[bytes, bytes]] = []
    while position < len(head):
        while position < len(head) and head[position : position + 1] in _SPACE + b"/":
            position += 1
        if position >= len(head) or head[position : position + 1] == b">":
            return position + 1, found
        match = _ATTRIBUTE.match(head, position)
        if match is None or match.end() == position:
            position += 1
            continue
        value = match.group("dq")
        if value is None:
            value = match.group("sq")
        if value is None:
            value = match.group("bare") or b""
        found.append((match.group("name").lower(), value))
        position = match.end()
    return position, found


def _skip_attributes(head: bytes, position: int) -> int:
    while position < len(head) and head[position : position + 1] not in _SPACE + b">":
        position += 1  # the tag's name
    end, _ = _attributes(head, position)
    return end


def _meta(head: bytes, position: int) -> tuple[int, Declaration | None]:
    end, attributes = _attributes(head, position)
    seen: set[bytes] = set()
    http_equiv = False
    label: bytes | None = None
    from_charset = False
    for name, value in attributes:
        if name in seen:
            continue  # the first of a repeated attribute counts
        seen.add(name)
        if name == b"http-equiv":
            http_equiv = value.strip(_SPACE).lower() == b"content-type"
        elif name == b"charset":
            label, from_charset = value, True
        elif name == b"content" and label is None:
            match = _CHARSET_IN_CONTENT.search(value)
            if match is not None:
                label = next(group for group in match.groups() if group is not None)
    if label is None or not (from_charset or http_equiv):
        return end, None
    codec = codec_of_label(label.decode("ascii", "replace"))
    if codec is None:
        return end, None
    return end, Declaration(codec, label.decode("ascii", "replace").strip(), position - 5)


def codec_of_label(label: str) -> str | None:
    """The Python codec a browser reads an encoding label as, None for one no codec knows."""
    name = label.strip().lower()
    if name in _AS_WINDOWS_1252:
        return "cp1252"
    if name in _AS_UTF8:
        return "utf-8"
    if name in _AS_GBK:
        return "gbk"
    name = _RENAMED.get(name, name)
    try:
        codec = codecs.lookup(name).name
    except LookupError:
        return None
    # Only the encodings a browser reads: Python's codecs also hold transforms (unicode_escape,
    # rot13, idna) that a page must not be able to ask for.
    return codec if codec in _WEB_CODECS else None
