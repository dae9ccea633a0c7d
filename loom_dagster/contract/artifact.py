"""The extraction artifact: what an extractor returns for one original, as typed values.

The shape is the extractor contract v1. `parse_artifact` (validate.py) builds these from a
service's untrusted bytes; the server then addresses an artifact by the SHA-256 of its own
serialization (`canonical_bytes`), never by the service's bytes, so a field the contract does
not name, key order or whitespace cannot change an address.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field

SCHEMA_VERSION = 1

BLOCK_TYPES = frozenset(
    {
        "heading",
        "paragraph",
        "list",
        "code",
        "sql_statement",
        "toml_table",
        "toml_key",
        "table",
    }
)

COLUMN_TYPES = frozenset(
    {"string", "number", "bool", "date", "datetime", "time", "duration", "mixed"}
)


def canonical_json(value: object) -> bytes:
    """Sorted, compact UTF-8 JSON: the one serialization an artifact is addressed by."""
    text = json.dumps(
        _plain(value),
        sort_keys=True,
        separators=(",", ":"),
        ensure_ascii=False,
        allow_nan=False,
    )
    return text.encode("utf-8")


def _plain(value: object) -> object:
    """Mappings to dicts and tuples to lists, so json.dumps takes any Mapping an attrs holds."""
    if isinstance(value, Mapping):
        return {key: _plain(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(item) for item in value]
    return value


@dataclass(frozen=True)
class Locator:
    """Where a block or table lies in the original; only the fields that apply are set."""

    line_start: int | None = None
    line_end: int | None = None
    char_start: int | None = None
    char_end: int | None = None
    key_path: str | None = None
    page_start: int | None = None
    page_end: int | None = None
    sheet: str | None = None
    row_start: int | None = None
    row_end: int | None = None

    def to_dict(self) -> dict[str, object]:
        """Only the fields that are set."""
        return {name: value for name, value in vars(self).items() if value is not None}


@dataclass(frozen=True)
class Block:
    id: str
    type: str
    text: str
    section_path: tuple[str, ...] = ()
    keys: tuple[str, ...] = ()
    locator: Locator = Locator()
    parent: str | None = None
    depth: int | None = None
    attrs: Mapping[str, object] = field(default_factory=dict)

    def to_dict(self) -> dict[str, object]:
        # Shaped like the contract's example: section_path, keys and locator always,
        # parent, depth and attrs only when set.
        data: dict[str, object] = {
            "id": self.id,
            "type": self.type,
            "text": self.text,
            "section_path": list(self.section_path),
            "keys": list(self.keys),
            "locator": self.locator.to_dict(),
        }
        if self.parent is not None:
            data["parent"] = self.parent
        if self.depth is not None:
            data["depth"] = self.depth
        if self.attrs:
            data["attrs"] = _plain(self.attrs)
        return data


@dataclass(frozen=True)
class FailedUnit:
    unit: str
    reason: str

    def to_dict(self) -> dict[str, object]:
        return {"unit": self.unit, "reason": self.reason}


@dataclass(frozen=True)
class Coverage:
    unit: str
    total: int
    extracted: int
    failed: tuple[FailedUnit, ...] = ()
    lost: tuple[str, ...] = ()

    @property
    def complete(self) -> bool:
        """Every unit extracted, none failed, no capability lost."""
        return self.extracted == self.total and not self.failed and not self.lost

    def to_dict(self) -> dict[str, object]:
        return {
            "unit": self.unit,
            "total": self.total,
            "extracted": self.extracted,
            "failed": [failure.to_dict() for failure in self.failed],
            "lost": list(self.lost),
            "complete": self.complete,
        }


@dataclass(frozen=True)
class Column:
    name: str
    type: str

    def to_dict(self) -> dict[str, object]:
        return {"name": self.name, "type": self.type}


@dataclass(frozen=True)
class Table:
    id: str
    name: str
    columns: tuple[Column, ...]
    rows: tuple[tuple[object, ...], ...]
    header_rows: int = 1
    locator: Locator = Locator()
    attrs: Mapping[str, object] = field(default_factory=dict)

    def to_dict(self) -> dict[str, object]:
        data: dict[str, object] = {
            "id": self.id,
            "name": self.name,
            "columns": [column.to_dict() for column in self.columns],
            "rows": [[_plain(value) for value in row] for row in self.rows],
            "header_rows": self.header_rows,
            "locator": self.locator.to_dict(),
        }
        if self.attrs:
            data["attrs"] = _plain(self.attrs)
        return data


@dataclass(frozen=True)
class Artifact:
    schema_version: int
    format: str
    parser: str
    parser_version: str
    options: Mapping[str, object]
    attrs: Mapping[str, object]
    warnings: tuple[str, ...]
    coverage: Coverage
    blocks: tuple[Block, ...]
    tables: tuple[Table, ...] = ()

    def to_dict(self) -> dict[str, object]:
        """The contract's JSON shape, coverage.complete included; tables only when there are any."""
        data: dict[str, object] = {
            "schema_version": self.schema_version,
            "format": self.format,
            "parser": self.parser,
            "parser_version": self.parser_version,
            "options": _plain(self.options),
            "attrs": _plain(self.attrs),
            "warnings": list(self.warnings),
            "coverage": self.coverage.to_dict(),
            "blocks": [block.to_dict() for block in self.blocks],
        }
        if self.tables:
            data["tables"] = [table.to_dict() for table in self.tables]
        return data

    def canonical_bytes(self) -> bytes:
        """Sorted keys, compact separators, ensure_ascii=False, UTF-8."""
        return canonical_json(self.to_dict())

    @property
    def sha256(self) -> str:
        """Hex SHA-256 of canonical_bytes(): the artifact's address."""
        return hashlib.sha256(self.canonical_bytes()).hexdigest()
