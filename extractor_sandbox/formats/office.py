"""What the DOCX and PPTX readers share: namespaces, Strict names, and what a drawing holds.

Strict Open XML. A Strict document names its vocabularies under http://purl.oclc.org/ooxml/
instead of http://schemas.openxmlformats.org/.../2006/...; the elements are the same, so a Strict
part's events are renamed to the Transitional names and read by the same code
(`transitional_events`).

Drawings. Both formats draw with DrawingML (and Word also with VML). What a drawing holds that the
readers do not read is named by kind (`UnreadKinds`): an image (a picture, a picture fill, a VML
picture), drawn text (WordArt, a locked canvas), a chart, a diagram, an embedded object. A text box,
a line or a plain shape is read for its text and is no loss.
"""

from __future__ import annotations

import platform
from collections import Counter
from collections.abc import Callable, Iterator

from extractor_sandbox.formats.package import (
    END,
    OFFICE_REL_NS,
    START,
    STRICT_NS_PREFIX,
    Event,
    is_strict,
    skip,
)

PARSER_VERSION = f"2+python{platform.python_version()}"

TRANSITIONAL_ROOT = "http://schemas.openxmlformats.org/"

W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
DRAWING = "{http://schemas.openxmlformats.org/drawingml/2006/main}"
P = "{http://schemas.openxmlformats.org/presentationml/2006/main}"
R = f"{{{OFFICE_REL_NS}}}"
MATH = "{http://schemas.openxmlformats.org/officeDocument/2006/math}"
MC = "{http://schemas.openxmlformats.org/markup-compatibility/2006}"
VML = "{urn:schemas-microsoft-com:vml}"
VML_OFFICE = "{urn:schemas-microsoft-com:office:office}"

IMAGE = "image"
DRAWN_TEXT = "drawn text"
CHART = "chart"
DIAGRAM = "diagram"
OBJECT = "embedded object"

# A graphic frame's content by its graphicData uri (the part after the last "/").
GRAPHIC_KINDS = {
    "picture": IMAGE,
    "chart": CHART,
    "chartex": CHART,
    "diagram": DIAGRAM,
    "ole": OBJECT,
    "lockedCanvas": DRAWN_TEXT,
}


def transitional_name(name: str) -> str:
    """A Strict name as its Transitional twin: .../ooxml/wordprocessingml/main ->
    .../wordprocessingml/2006/main; any other name unchanged."""
    if not name.startswith("{" + STRICT_NS_PREFIX):
        return name
    namespace, local_name = name[1:].split("}", 1)
    area, _, leaf = namespace[len(STRICT_NS_PREFIX) :].partition("/")
    return f"{{{TRANSITIONAL_ROOT}{area}/2006/{leaf}}}{local_name}"


def transitional_events(events: Iterator[Event]) -> Iterator[Event]:
    """A part's events, with Strict names renamed when its root element is Strict."""
    first = next(events, None)
    if first is None:
        return
    if not (first[0] == START and is_strict(first[1])):
        yield first
        yield from events
        return
    renamed: dict[str, str] = {}

    def rename(name: str) -> str:
        found = renamed.get(name)
        if found is None:
            found = renamed[name] = transitional_name(name)
        return found

    for kind, value, attrs in _chain(first, events):
        if kind == START:
            yield kind, rename(value), {rename(k): v for k, v in attrs.items()} if attrs else attrs
        elif kind == END:
            yield kind, rename(value), None
        else:
            yield kind, value, attrs


def _chain(first: Event, rest: Iterator[Event]) -> Iterator[Event]:
    yield first
    yield from rest


def alternate_content(
    events: Iterator[Event], choice: Callable[[], None], fallback: Callable[[bool], bool]
) -> None:
    """Walk the mc:AlternateContent just started, to its end: its first mc:Choice is read by
    `choice` (from the events at the choice's start); each mc:Fallback goes to `fallback(chosen)`
    (chosen: a choice was read before it), which reads or skips it and says whether it read it
    as the choice; anything else is skipped."""
    chosen = False
    for kind, name, _ in events:
        if kind == END:
            return
        if kind != START:
            continue
        if name == MC + "Choice" and not chosen:
            chosen = True
            choice()
        elif name == MC + "Fallback":
            chosen = fallback(chosen) or chosen
        else:
            skip(events)


def holds(events: Iterator[Event], wanted: str, *, former: bool = True) -> bool:
    """Whether the element just started holds `wanted`, read to its end. With `former` False, a
    recorded former state (an element whose name ends in PrChange) is passed over unread."""
    found = False
    depth = 1
    for kind, name, _ in events:
        if kind == START:
            if not former and name.endswith("PrChange"):
                skip(events)
                continue
            depth += 1
            found = found or name == wanted
        elif kind == END:
            depth -= 1
            if depth == 0:
                break
    return found


def graphic_kind(uri: str) -> str | None:
    """What a graphic frame holds, by its graphicData uri; None for a shape, group or table."""
    return GRAPHIC_KINDS.get(uri.rstrip("/").rsplit("/", 1)[-1])


class UnreadKinds:
    """The drawings a document or a slide holds that are not read, counted by kind."""

    def __init__(self) -> None:
        self.counts: Counter[str] = Counter()

    def add(self, kind: str) -> None:
        self.counts[kind] += 1

    def __len__(self) -> int:
        return self.counts.total()

    def describe(self) -> str:
        """E.g. "2 images, 1 chart"."""
        return ", ".join(
            f"{n} {kind if n == 1 else kind + 's'}" for kind, n in sorted(self.counts.items())
        )

    def update(self, other: UnreadKinds) -> None:
        self.counts.update(other.counts)


def table_text(rows: list[list[str]]) -> str:
    """A table as the contract writes it: a row a line, its cells joined by " | "."""
    return "\n".join(" | ".join(row) for row in rows)


def one_line(text: str) -> str:
    """Whitespace collapsed to single spaces (a heading, a table cell)."""
    return " ".join(text.split())
