"""The workbook part and its relationships: the sheets in order, the date system, and the parts
that hold the shared strings and the styles.

The workbook's relationships are read whole, from a part of at most 4 MiB: without them no sheet
can be found, so a file whose relationships are missing, larger, or not XML is refused as
corrupt. A Strict Open XML workbook (its root in the purl.oclc.org namespace) is refused as
unsupported_format. The first 10,000 sheets are listed; the rest are counted.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from extractor_sandbox.errors import ExtractError
from extractor_sandbox.formats.package import (
    OFFICE_REL_NS,
    SPREADSHEETML_NS,
    START,
    Package,
    PartError,
    Relationship,
    XmlBounds,
    is_strict,
    relationships_part,
)

MAIN_NS = SPREADSHEETML_NS
DEFAULT_WORKBOOK = "xl/workbook.xml"
MAX_RELATIONSHIPS_BYTES = 4 * 1024 * 1024
MAX_SHEETS = 10_000

_WORKBOOK = f"{{{MAIN_NS}}}workbook"
_SHEET = f"{{{MAIN_NS}}}sheet"
_WORKBOOK_PR = f"{{{MAIN_NS}}}workbookPr"
_REL_ID = f"{{{OFFICE_REL_NS}}}id"


@dataclass(frozen=True)
class SheetEntry:
    name: str
    hidden: bool
    kind: str  # the relationship's type: worksheet, chartsheet, dialogsheet, xlMacrosheet, ...
    part: str  # "" when its relationship names no part


@dataclass
class Workbook:
    part: str
    sheets: list[SheetEntry] = field(default_factory=list)
    sheets_past_bound: int = 0
    date1904: bool = False
    shared_strings: str | None = None
    styles: str | None = None
    elements: int = 0


def read_workbook(package: Package, bounds: XmlBounds) -> Workbook:
    """The workbook's sheets and parts; ExtractError when no sheet can be found."""
    workbook = Workbook(part=package.main_part(DEFAULT_WORKBOOK, present=True))
    listed: list[dict[str, str]] = []
    try:
        for kind, name, attrs in package.events(workbook.part, bounds):
            if kind != START:
                continue
            workbook.elements += 1
            if workbook.elements == 1:
                _check_root(name)
            elif name == _SHEET:
                if len(listed) >= MAX_SHEETS:
                    workbook.sheets_past_bound += 1
                else:
                    listed.append(attrs)
            elif name == _WORKBOOK_PR:
                workbook.date1904 = attrs.get("date1904", "").strip().lower() in ("1", "true")
    except PartError as error:
        raise ExtractError("corrupt", f"the workbook cannot be read: {error}") from None
    relationships = _workbook_relationships(package, workbook.part)
    by_id = {rel.id: rel for rel in relationships}
    for rel in relationships:
        if rel.type == "sharedStrings" and rel.target and package.has(rel.target):
            workbook.shared_strings = rel.target
        elif rel.type == "styles" and rel.target and package.has(rel.target):
            workbook.styles = rel.target
    workbook.sheets = [_sheet_entry(attrs, by_id, package) for attrs in listed]
    return workbook


def _workbook_relationships(package: Package, part: str) -> list[Relationship]:
    rels = relationships_part(part)
    if not package.has(rels):
        raise ExtractError("corrupt", f"the workbook's relationships ({rels}) are missing")
    if package.declared_size(rels) > MAX_RELATIONSHIPS_BYTES:
        raise ExtractError("corrupt", f"the workbook's relationships ({rels}) are over 4 MiB")
    try:
        return package.relationships(part)
    except PartError as error:
        raise ExtractError(
            "corrupt", f"the workbook's relationships cannot be read: {error}"
        ) from None


def _check_root(name: str) -> None:
    if is_strict(name):
        raise ExtractError("unsupported_format", "Strict Open XML workbooks are not supported")
    if name != _WORKBOOK:
        raise ExtractError("corrupt", f"the workbook's root is {name}, not a workbook")


def _sheet_entry(
    attrs: dict[str, str], by_id: dict[str, Relationship], package: Package
) -> SheetEntry:
    rel = by_id.get(attrs.get(_REL_ID, ""))
    part = rel.target if rel is not None and rel.target and package.has(rel.target) else ""
    return SheetEntry(
        name=attrs.get("name", ""),
        hidden=attrs.get("state", "visible") in ("hidden", "veryHidden"),
        kind=rel.type if rel is not None else "",
        part=part,
    )
