"""The shared strings part: each <si>'s text, its phonetic readings (<rPh>) dropped.

Read as it inflates, with expat's callbacks handled here (a workbook can hold millions of
strings). The strings held are at most 256 MiB, each counted at four bytes a character and the
object it takes; past it, or when the part cannot be read to its end, the strings read stand and
the artifact loses shared_strings (a cell naming one not held reads empty). A string over a
megabyte is held as TOO_LONG: the cells naming it leave it out and count it. With a TextBudget
(the artifact's bound), the strings held stop once their text passes it: the strings read stand,
and the artifact loses shared_strings (past_budget says why).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from extractor_sandbox.formats.package import (
    SPREADSHEETML_NS,
    Package,
    PartError,
    XmlBounds,
    bounded_parser,
)
from extractor_sandbox.output_size import TextBudget

MAIN = SPREADSHEETML_NS + "}"  # expat's "namespace}local"
MAX_STRINGS_BYTES = 256 * 1024 * 1024
STRING_OVERHEAD = 64  # what a str object takes beside its characters, near enough
MAX_VALUE_CHARS = 1024 * 1024
# Text arrives in pieces of at most 64 KiB: more pieces than this is more than a megabyte.
MAX_PIECES = MAX_VALUE_CHARS // (64 * 1024) + 1


class TooLong:
    """The mark of a string over a megabyte."""


TOO_LONG = TooLong()


@dataclass
class SharedStrings:
    strings: list[str | TooLong] = field(default_factory=list)
    lost: bool = False
    elements: int = 0
    past_budget: bool = False  # lost for the TextBudget, not for damage or the 256 MiB


class _Bound(Exception):
    pass


def read_shared_strings(
    package: Package, part: str | None, bounds: XmlBounds, budget: TextBudget | None = None
) -> SharedStrings:
    found = SharedStrings()
    if part is None:
        return found
    strings = found.strings
    si, t, rph = MAIN + "si", MAIN + "t", MAIN + "rPh"
    max_depth, max_elements = bounds.max_depth, bounds.max_elements
    names: set[str] = set()
    state = {"depth": 0, "elements": 0, "bytes": 0}
    pieces: list[str] = []
    capture = False
    phonetic = 0
    too_long = False

    def start(name: str, _attrs: Any) -> None:
        nonlocal capture, phonetic, too_long
        state["depth"] += 1
        state["elements"] += 1
        if state["depth"] > max_depth:
            raise PartError(part, f"nests deeper than {max_depth} elements")
        if state["elements"] > max_elements:
            raise PartError(part, f"holds more than {max_elements:,} elements")
        if name not in names:
            names.add(name)
            if len(names) > bounds.max_names:
                raise PartError(part, f"uses more than {bounds.max_names:,} distinct names")
        if name == t:
            capture = not phonetic
        elif name == si:
            pieces.clear()
            too_long = False
        elif name == rph:
            phonetic += 1

    def end(name: str) -> None:
        nonlocal capture, phonetic
        state["depth"] -= 1
        if name == t:
            capture = False
        elif name == rph:
            phonetic -= 1
        elif name == si:
            text: str | TooLong = TOO_LONG if too_long else "".join(pieces)
            if isinstance(text, str) and len(text) > MAX_VALUE_CHARS:
                text = TOO_LONG
            size = STRING_OVERHEAD + (4 * len(text) if isinstance(text, str) else 0)
            if state["bytes"] + size > MAX_STRINGS_BYTES:
                raise _Bound
            if budget is not None and isinstance(text, str):
                budget.charge(len(text))
                if budget.spent:
                    found.past_budget = True
                    raise _Bound
            state["bytes"] += size
            strings.append(text)

    def characters(data: str) -> None:
        nonlocal too_long
        if capture and not too_long:
            if len(pieces) >= MAX_PIECES:
                too_long = True
                pieces.clear()
            else:
                pieces.append(data)

    parser = bounded_parser(part)
    parser.StartElementHandler = start
    parser.EndElementHandler = end
    parser.CharacterDataHandler = characters
    try:
        package.parse(part, parser, bounds)
    except (PartError, _Bound):
        found.lost = True
    found.elements = state["elements"]
    return found
