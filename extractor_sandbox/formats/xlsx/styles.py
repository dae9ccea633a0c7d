"""The styles part: which cell styles (cellXfs) give a number a date, time or duration format, or
one that shows more than a whole number (numformats.SHOWN).

Read as it inflates. At most 65,536 number formats and 65,536 cell styles are read; past them,
or when the part cannot be read to its end, what was read stands and the artifact loses
number_formats. A cell's style is looked up by its `s` attribute as written, so an index the
workbook does not hold (a 5,000-digit one included) is no date format: the number reads as one.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from extractor_sandbox.formats.package import SPREADSHEETML_NS, START, Package, PartError, XmlBounds
from extractor_sandbox.formats.xlsx.numformats import BUILTIN_KINDS, format_kind

MAIN_NS = SPREADSHEETML_NS
MAX_STYLES = 65_536
MAX_FORMATS = 65_536

_NUM_FMT = f"{{{MAIN_NS}}}numFmt"
_CELL_XFS = f"{{{MAIN_NS}}}cellXfs"
_XF = f"{{{MAIN_NS}}}xf"


@dataclass
class Styles:
    kinds: dict[str, str] = field(default_factory=dict)  # style index as written -> kind
    lost: bool = False  # not read to its end: number formats were lost
    elements: int = 0


def read_styles(package: Package, part: str | None, bounds: XmlBounds) -> Styles:
    styles = Styles()
    if part is None:
        return styles
    custom: dict[str, str | None] = {}
    in_cell_xfs = False
    index = 0
    try:
        for kind, name, attrs in package.events(part, bounds):
            if kind != START:
                if name == _CELL_XFS:
                    in_cell_xfs = False
                continue
            styles.elements += 1
            if name == _NUM_FMT:
                if len(custom) >= MAX_FORMATS:
                    styles.lost = True
                    break
                custom[attrs.get("numFmtId", "")] = format_kind(attrs.get("formatCode", ""))
            elif name == _CELL_XFS:
                in_cell_xfs = True
            elif name == _XF and in_cell_xfs:
                if index >= MAX_STYLES:
                    styles.lost = True
                    break
                found = _format_kind(attrs.get("numFmtId", "0"), custom)
                if found is not None:
                    styles.kinds[str(index)] = found
                index += 1
    except PartError:
        styles.lost = True
    return styles


def _format_kind(format_id: str, custom: dict[str, str | None]) -> str | None:
    if format_id in custom:
        return custom[format_id]
    if format_id.isdigit() and len(format_id) <= 3:
        return BUILTIN_KINDS.get(int(format_id))
    return None
