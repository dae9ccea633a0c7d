"""Office Open XML packages (DOCX, PPTX, XLSX): zip parts read within bounds, XML streamed safely.

Standard library only, so no third-party XML or zip code runs on a hostile file.

Parts. A part must be stored or deflated (the methods OOXML writes) and declare at most 256 MiB
uncompressed, and the parts one extraction reads at most 512 MiB in all. A part inflates only up to
the size it declares: zipfile stops a member there, so a zip bomb (a part declaring 1 KB that would
inflate to 1 GB) ends after 1 KB with a bad CRC, a `PartError` like any other damage.

XML. A part is parsed as it inflates, with expat, into a stream of events, never a tree. A part
that declares a DOCTYPE, in whatever encoding, is refused before any entity could be declared, let
alone expanded. The bounds (`XmlBounds`): elements, nesting depth, distinct names, and the bytes
between two events (a tag or a run of text of 16 MiB or more stops the part).

Text budget. A reader that gathers a part's text passes its `TextBudget` (output_size.py) to
`events` and counts what it keeps (`text_of`): once the text passes the budget, the part's events
stop after the chunk that passed it, the elements still open closed by END events as if the part
ended there, and the inflating stops; so a 250 MiB text run costs about the budget, not 250 MiB.

A `PartError` names what went wrong in one line; each reader decides what unit it fails (a slide,
the styles), or, for the document part itself, the whole file as `corrupt`.
"""

from __future__ import annotations

import io
import posixpath
import zipfile
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import IO, Any
from xml.parsers import expat

from extractor_sandbox.output_size import TextBudget

# What zipfile raises on a damaged container or member: a damaged deflate stream raises zlib's own
# error, and a member needing a feature zipfile lacks (a newer version) NotImplementedError.
_DAMAGED = (
    zipfile.BadZipFile,
    zipfile.LargeZipFile,
    OSError,
    ValueError,
    EOFError,
    NotImplementedError,
    zlib.error,
)

MAX_PART_BYTES = 256 * 1024 * 1024
MAX_PACKAGE_BYTES = 512 * 1024 * 1024
READ_CHUNK = 64 * 1024

# Events: ("start", name, attributes), ("end", name, None), ("text", text, None). Names are
# "{namespace}local", as ElementTree writes them; an attribute without a prefix has no namespace.
START, END, TEXT = "start", "end", "text"
Event = tuple[str, str, Any]

RELATIONSHIPS_NS = "http://schemas.openxmlformats.org/package/2006/relationships"
OFFICE_REL_NS = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
SPREADSHEETML_NS = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"
# Strict Open XML names its parts' vocabularies under this root instead of schemas.openxmlformats.
STRICT_NS_PREFIX = "http://purl.oclc.org/ooxml/"


class PartError(Exception):
    """A part that cannot be read: missing, over a bound, damaged, not XML, or declaring a DOCTYPE."""

    def __init__(self, part: str, reason: str) -> None:
        super().__init__(f"{part}: {reason}")
        self.part = part
        self.reason = reason


@dataclass(frozen=True)
class XmlBounds:
    max_elements: int = 25_000_000
    max_depth: int = 64
    max_names: int = 4_096
    max_bytes_between_events: int = 16 * 1024 * 1024


DEFAULT_BOUNDS = XmlBounds()


@dataclass(frozen=True)
class Relationship:
    id: str
    type: str  # its last path segment: "slide", "officeDocument", "styles", ...
    target: str  # the part it names, resolved against its source part ("" when external)
    external: bool


class Package:
    """An opened OOXML zip. Reading a part charges its declared size against the package bound."""

    def __init__(self, data: bytes) -> None:
        try:
            self._zip = zipfile.ZipFile(io.BytesIO(data))
            self._members = {info.filename: info for info in self._zip.infolist()}
        except _DAMAGED as error:
            raise PartError("the zip container", f"cannot be read: {error}") from None
        self._charged = 0

    def has(self, part: str) -> bool:
        return part in self._members

    def declared_size(self, part: str) -> int:
        return self._members[part].file_size

    def _readable_member(self, part: str) -> zipfile.ZipInfo:
        """The part's entry, once it is known to be one this reader can inflate."""
        info = self._members.get(part)
        if info is None:
            raise PartError(part, "the package has no such part")
        if info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
            raise PartError(
                part, f"compression method {info.compress_type} is neither stored nor deflated"
            )
        if info.flag_bits & 0x1:
            raise PartError(part, "the part is encrypted")
        return info

    def open(self, part: str) -> IO[bytes]:
        """The part as a stream that inflates as it is read; PartError before it opens."""
        info = self._readable_member(part)
        if info.file_size > MAX_PART_BYTES:
            raise PartError(part, f"declares {info.file_size:,} bytes, over 256 MiB")
        if self._charged + info.file_size > MAX_PACKAGE_BYTES:
            raise PartError(part, "the parts read would pass 512 MiB in all")
        self._charged += info.file_size
        try:
            return self._zip.open(info)
        except _DAMAGED as error:
            raise PartError(part, f"cannot be read: {error}") from None

    def read(self, part: str) -> bytes:
        """A whole part (for small parts such as relationships); PartError when it cannot be."""
        with self.open(part) as stream:
            try:
                return stream.read()
            except _DAMAGED as error:
                raise PartError(part, f"cannot be read: {error}") from None

    def read_picture(self, part: str, limit: int) -> bytes:
        """A picture part for OCR, inflated within a bound of its own (`limit` bytes, and the
        size it declares), apart from the package's parts; PartError when it cannot be."""
        info = self._readable_member(part)
        if info.file_size > limit:
            raise PartError(part, f"declares {info.file_size:,} bytes, over {limit:,}")
        try:
            with self._zip.open(info) as stream:
                return stream.read(info.file_size)
        except _DAMAGED as error:
            raise PartError(part, f"cannot be read: {error}") from None

    def events(
        self,
        part: str,
        bounds: XmlBounds = DEFAULT_BOUNDS,
        *,
        chunk: int = READ_CHUNK,
        budget: TextBudget | None = None,
    ) -> Iterator[Event]:
        """The part's XML events, parsed as it inflates, `chunk` bytes at a time (a reader that
        wants only a part's first elements asks for small chunks, and stops); with a `budget`,
        they end once it is spent (xml_events)."""
        if budget is not None and budget.spent:
            budget.stop(part)  # spent in an earlier part: this one is not opened
            return
        stream = self.open(part)
        try:
            yield from xml_events(stream, part, bounds, chunk=chunk, budget=budget)
        finally:
            stream.close()

    def parse(self, part: str, parser: Any, bounds: XmlBounds = DEFAULT_BOUNDS) -> None:
        """Feed all of `part` to `parser` (one made by `bounded_parser`), as it inflates."""
        stream = self.open(part)
        try:
            feed(parser, stream, part, bounds)
        finally:
            stream.close()

    def main_part(self, usual: str, *, present: bool = False) -> str:
        """The part the package's officeDocument relationship names, else `usual`.

        With `present`, a named part the package does not hold is passed over too. A package whose
        own relationships are damaged is read from the usual place.
        """
        try:
            for relationship in self.relationships(""):
                if relationship.type == "officeDocument" and relationship.target:
                    if not present or self.has(relationship.target):
                        return relationship.target
        except PartError:
            pass  # the package's own relationships are damaged: the usual place is tried
        return usual

    def relationships(self, part: str) -> list[Relationship]:
        """The relationships of `part` (from _rels/<name>.rels beside it); none when it has none."""
        rels = relationships_part(part)
        if not self.has(rels):
            return []
        found = []
        for kind, name, attrs in self.events(rels):
            if kind == START and name == f"{{{RELATIONSHIPS_NS}}}Relationship":
                external = attrs.get("TargetMode") == "External"
                target = attrs.get("Target", "")
                found.append(
                    Relationship(
                        id=attrs.get("Id", ""),
                        type=attrs.get("Type", "").rsplit("/", 1)[-1],
                        target="" if external else resolve_target(part, target),
                        external=external,
                    )
                )
        return found


def relationships_part(part: str) -> str:
    """The relationships part of `part`: word/document.xml -> word/_rels/document.xml.rels."""
    folder, name = posixpath.split(part)
    return posixpath.join(folder, "_rels", f"{name}.rels")


def resolve_target(source: str, target: str) -> str:
    """A relationship's target as a part name: relative to the source's folder, or absolute."""
    if target.startswith("/"):
        return posixpath.normpath(target).lstrip("/")
    return posixpath.normpath(posixpath.join(posixpath.dirname(source), target)).lstrip("/")


def xml_events(
    stream: IO[bytes],
    part: str,
    bounds: XmlBounds = DEFAULT_BOUNDS,
    *,
    chunk: int = READ_CHUNK,
    budget: TextBudget | None = None,
) -> Iterator[Event]:
    """Events of the XML read from `stream`, in chunks; PartError on any damage or bound.

    With a `budget`, checked after each chunk's events: once spent, the elements still open are
    ended (END events, innermost first), the stop is recorded in it, and nothing more is read.
    """
    parser = bounded_parser(part)
    parser.ordered_attributes = False
    pending: list[Event] = []
    names: set[str] = set()
    open_names: list[str] = []  # the elements started and not yet ended, outermost first
    depth = 0
    elements = 0

    def refuse(reason: str) -> None:
        raise PartError(part, reason)

    def start(name: str, attributes: dict[str, str]) -> None:
        nonlocal depth, elements
        depth += 1
        elements += 1
        if depth > bounds.max_depth:
            refuse(f"nests deeper than {bounds.max_depth} elements")
        if elements > bounds.max_elements:
            refuse(f"holds more than {bounds.max_elements:,} elements")
        qualified = _qualified(name)
        if qualified not in names:
            names.add(qualified)
            if len(names) > bounds.max_names:
                refuse(f"uses more than {bounds.max_names:,} distinct names")
        if attributes:
            attributes = {_qualified(key): value for key, value in attributes.items()}
        open_names.append(qualified)
        pending.append((START, qualified, attributes))

    def end(name: str) -> None:
        nonlocal depth
        depth -= 1
        pending.append((END, open_names.pop(), None))

    def text(data: str) -> None:
        pending.append((TEXT, data, None))

    parser.StartElementHandler = start
    parser.EndElementHandler = end
    parser.CharacterDataHandler = text
    for _ in _parse_in_chunks(parser, stream, part, bounds, chunk):
        yield from pending
        pending.clear()
        if budget is not None and budget.spent:
            budget.stop(part)
            for name in reversed(open_names):
                yield (END, name, None)
            return


def _qualified(name: str) -> str:
    """expat's "namespace}local" as "{namespace}local"; a name without a namespace unchanged."""
    return "{" + name if "}" in name else name


def skip(events: Iterator[Event]) -> None:
    """Consume the rest of the element whose start was just read."""
    depth = 1
    for kind, _, _ in events:
        if kind == START:
            depth += 1
        elif kind == END:
            depth -= 1
            if depth == 0:
                return


def text_of(events: Iterator[Event], budget: TextBudget | None = None) -> str:
    """The text under the element whose start was just read, to its end; consumes the events.
    The text is taken from `budget` a piece at a time, as expat gives it, so the events of a
    part read within that budget end inside a run longer than it."""
    depth = 1
    parts: list[str] = []
    for kind, value, _ in events:
        if kind == START:
            depth += 1
        elif kind == END:
            depth -= 1
            if depth == 0:
                break
        else:
            parts.append(value)
            if budget is not None:
                budget.take(value)
    return "".join(parts)


def is_strict(root_name: str) -> bool:
    """Whether a part's root element is in a Strict Open XML namespace."""
    return root_name.startswith("{" + STRICT_NS_PREFIX)


# Readers with a hot loop (a worksheet's cells, a workbook's shared strings) handle expat's
# callbacks themselves rather than through `events`: a generator's tuple per event costs about
# three times the parse. They keep the same bounds, counting elements and depth in their own
# handlers; these two functions give them the same parser and the same feeding loop.


def bounded_parser(part: str) -> Any:
    """A namespace-aware expat parser that refuses a DOCTYPE, text buffered, attributes as lists.

    Names are expat's "namespace}local" (not `events`' "{namespace}local"); a start handler gets
    its attributes as [name, value, name, value, ...].
    """
    parser = expat.ParserCreate(namespace_separator="}")
    parser.buffer_text = True
    parser.buffer_size = 64 * 1024
    parser.ordered_attributes = True

    def doctype(*_: Any) -> None:
        raise PartError(part, "declares a DOCTYPE, which is refused")

    parser.StartDoctypeDeclHandler = doctype
    parser.EntityDeclHandler = doctype
    return parser


def feed(parser: Any, stream: IO[bytes], part: str, bounds: XmlBounds = DEFAULT_BOUNDS) -> None:
    """Parse all of `stream` with `parser`; PartError on damage or past a bound."""
    for _ in _parse_in_chunks(parser, stream, part, bounds):
        pass


def read_chunk(stream: IO[bytes], part: str, size: int = READ_CHUNK) -> bytes:
    """The next `size` bytes of a part's stream; PartError when the package is damaged."""
    try:
        return stream.read(size)
    except _DAMAGED as error:
        raise PartError(part, f"cannot be read: {error}") from None


def parse_chunk(parser: Any, data: bytes, final: bool, part: str) -> None:
    """Feed `data` to `parser`; PartError when it is no XML this parser can read."""
    try:
        parser.Parse(data, final)
    except expat.ExpatError as error:
        raise PartError(part, f"is not well-formed XML: {error}") from None
    except LookupError as error:  # expat asks Python for the codec its declaration names
        raise PartError(part, f"declares an encoding it cannot be read in: {error}") from None


class NoEventWatch:
    """Refuses a part once 16 MiB (`max_bytes_between_events`) are fed with no event: expat's
    CurrentByteIndex, the place of its last event, stands still inside a tag."""

    def __init__(self, parser: Any, part: str, bounds: XmlBounds) -> None:
        self.parser, self.part, self.limit = parser, part, bounds.max_bytes_between_events
        self.seen = parser.CurrentByteIndex
        self.since_event = 0

    def restart(self) -> None:
        """Count from here (bytes the parser had its events of)."""
        self.seen = self.parser.CurrentByteIndex
        self.since_event = 0

    def fed(self, length: int) -> None:
        """After `length` more bytes went to the parser: PartError when no event came since."""
        now = self.parser.CurrentByteIndex
        if now != self.seen:
            self.seen = now
            self.since_event = 0
            return
        self.since_event += length
        if self.since_event >= self.limit:
            raise PartError(self.part, "holds a tag or text of 16 MiB or more")


def _parse_in_chunks(
    parser: Any, stream: IO[bytes], part: str, bounds: XmlBounds, size: int = READ_CHUNK
) -> Iterator[None]:
    """Feed `stream` to `parser` a chunk at a time, yielding after each; PartError on damage, or
    when 16 MiB pass with no event (NoEventWatch)."""
    watch = NoEventWatch(parser, part, bounds)
    while True:
        chunk = read_chunk(stream, part, size)
        parse_chunk(parser, chunk, not chunk, part)
        watch.fed(len(chunk))
        yield
        if not chunk:
            return
