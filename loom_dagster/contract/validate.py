"""parse_artifact: turn an extractor's untrusted bytes into an Artifact, or refuse them.
Over 500 lines: one idea, every rule of contract v1 an artifact must pass, in the order the contract states them.

An extractor is a separate, possibly hostile, service, so its answer is checked against every
rule of the extractor contract v1 before anything is chunked, embedded or published. Each
refusal is ExtractionFailed("invalid_artifact", "<path>: <rule>"), one line, naming where the
artifact breaks the rule. Past the contract, it holds the output bounds below (blocks per byte
of the original and in all; the length and count of every free string that is no document text,
which would otherwise reach logs and Dagster's event storage whole). A field the contract does
not name is dropped at every level (a service may send one without a version change), and the
result is re-serialized by the server (Artifact.canonical_bytes), so dropped fields never reach
the artifact's address.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable
from typing import NoReturn, TypeVar

from loom_dagster.contract.artifact import (
    BLOCK_TYPES,
    COLUMN_TYPES,
    SCHEMA_VERSION,
    Artifact,
    Block,
    Column,
    Coverage,
    FailedUnit,
    Locator,
    Table,
    canonical_json,
)
from loom_dagster.errors import ExtractionFailed

__all__ = ["parse_artifact", "canonical_json"]

MAX_NESTING = 16
MAX_SECTION_ENTRIES = 64
MAX_SECTION_CHARS = 500
MAX_KEYS = 10_000
MAX_KEY_CHARS = 1_024
MAX_COLUMNS = 16_384
MAX_NAME_CHARS = 500  # a column's name, a sheet's name

# Output bounds this server adds to contract v1; the reference extractor fits its artifacts to
# them (extractor_sandbox/artifact.py holds the same numbers: tests/unit/test_contract_bounds.py).
# An artifact holds at most BLOCKS_BASE blocks plus one per BYTES_PER_BLOCK bytes of the original,
# and never more than MAX_BLOCKS: each block costs a chunk's work, so a file of tiny blocks would
# otherwise cost the pipeline far more than its size ("a\n\n" a million times: 65 s, 2.5 GB).
MAX_BLOCKS = 50_000
BLOCKS_BASE = 10_000
BYTES_PER_BLOCK = 16
# Free strings that are no document text end in logs and Dagster's event storage.
MAX_LABEL_CHARS = 200  # parser, parser_version, coverage.unit, a lost capability, an id, an option
MAX_MESSAGE_CHARS = 1_000  # a warning, a failed unit's unit and reason, a table's name
MAX_WARNINGS = 1_000
MAX_FAILED_UNITS = 10_000
MAX_LOST = 64

INT64_MIN = -(2**63)
INT64_MAX = 2**63 - 1

T = TypeVar("T")


def parse_artifact(raw: bytes, *, expected_format: str, original_size: int) -> Artifact:
    """Check an extractor's 200 body against the contract and build the Artifact from it.

    `expected_format` is the format the server asked for; `original_size` is the original's
    size in bytes, which bounds every char_end (and every line_end, plus one).
    """
    document = _load_json(raw)
    top = _object(document, "artifact")

    version = _int(_required(top, "schema_version", ""), "schema_version")
    if version != SCHEMA_VERSION:
        _fail("schema_version", f"{version} is not {SCHEMA_VERSION}, the version this server reads")
    artifact_format = _str(_required(top, "format", ""), "format")
    if artifact_format != expected_format:
        _fail("format", f"{_show(artifact_format)} is not the format asked for ({expected_format})")

    blocks = _blocks(_required(top, "blocks", ""), original_size)
    tables_value = top.get("tables", [])
    return Artifact(
        schema_version=version,
        format=artifact_format,
        parser=_label(_required(top, "parser", ""), "parser"),
        parser_version=_label(_required(top, "parser_version", ""), "parser_version"),
        options=_options(_required(top, "options", ""), "options"),
        attrs=_nested_object(_required(top, "attrs", ""), "attrs"),
        warnings=_str_list(
            _required(top, "warnings", ""),
            "warnings",
            max_items=MAX_WARNINGS,
            max_chars=MAX_MESSAGE_CHARS,
        ),
        coverage=_coverage(_required(top, "coverage", ""), "coverage"),
        blocks=blocks,
        tables=_tables(tables_value, "tables", original_size),
    )


# --- messages and paths -------------------------------------------------------------------


def _fail(path: str, rule: str) -> NoReturn:
    raise ExtractionFailed("invalid_artifact", f"{path or 'artifact'}: {rule}")


def _show(value: object, limit: int = 60) -> str:
    """A short, one-line repr of an untrusted value for a message."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


_PLAIN_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


def _key_path(path: str, key: str) -> str:
    """Extend a path by an object key: `coverage.total`, or `attrs['a b']` for an odd key."""
    if _PLAIN_KEY.match(key):
        return f"{path}.{key}" if path else key
    return f"{path}[{_show(key)}]"


# --- JSON, numbers and strings ------------------------------------------------------------


def _load_json(raw: bytes) -> object:
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        _fail("artifact", f"not valid UTF-8 (byte {exc.start})")
    try:
        document = json.loads(
            text,
            parse_constant=_refuse_constant,
            parse_int=_int64,
            parse_float=_finite_float,
        )
    except json.JSONDecodeError as exc:
        _fail("artifact", f"not JSON ({exc.msg} at line {exc.lineno} column {exc.colno})")
    except RecursionError:
        _fail("artifact", "nested too deep to parse")
    # A lone surrogate can only arrive as a \uD800-\uDFFF escape (the UTF-8 decode above
    # refuses an encoded one), so only a text holding such an escape needs the walk.
    if _SURROGATE_ESCAPE.search(text):
        _refuse_lone_surrogates(document)
    return document


_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


def _refuse_constant(name: str) -> NoReturn:
    _fail("artifact", f"{name} is not a JSON number")


def _int64(digits: str) -> int:
    # Checked on the digits first: int() of a very long string is slow and, past 4,300
    # digits, raises ValueError rather than a JSON error.
    if len(digits.lstrip("-")) > 19:
        _fail("artifact", f"integer {digits[:24]}... is outside signed 64-bit")
    value = int(digits)
    if not INT64_MIN <= value <= INT64_MAX:
        _fail("artifact", f"integer {digits} is outside signed 64-bit")
    return value


def _finite_float(digits: str) -> float:
    value = float(digits)
    if not math.isfinite(value):
        _fail("artifact", f"number {_show(digits, 30)} is not within a double")
    return value


def _refuse_lone_surrogates(document: object) -> None:
    """Walk every string, object keys included, without recursion (nesting is untrusted)."""
    stack: list[tuple[object, str]] = [(document, "")]
    while stack:
        value, path = stack.pop()
        if isinstance(value, str):
            _unicode(value, path)
        elif isinstance(value, dict):
            for key, item in value.items():
                item_path = _key_path(path, key)
                _unicode(key, item_path)
                stack.append((item, item_path))
        elif isinstance(value, list):
            stack.extend((item, f"{path}[{index}]") for index, item in enumerate(value))


def _unicode(text: str, path: str) -> None:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        _fail(path, "string is not valid Unicode (a lone surrogate)")


def _nesting(value: object) -> int:
    """How deep objects and lists nest: {} and [] are 1, {"a": {}} is 2, a scalar 0."""
    deepest = 0
    stack: list[tuple[object, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children: list[object] = list(item.values())
        elif isinstance(item, list):
            children = item
        else:
            continue
        deepest = max(deepest, depth)
        if deepest > MAX_NESTING:
            break  # past the bound; how much deeper does not matter
        stack.extend((child, depth + 1) for child in children)
    return deepest


# --- typed reads --------------------------------------------------------------------------


def _required(obj: dict[str, object], key: str, path: str) -> object:
    if key not in obj:
        _fail(_key_path(path, key), "missing")
    return obj[key]


def _object(value: object, path: str) -> dict[str, object]:
    if not isinstance(value, dict):
        _fail(path, f"must be an object, not {_json_type(value)}")
    return value


def _nested_object(value: object, path: str) -> dict[str, object]:
    obj = _object(value, path)
    depth = _nesting(obj)
    if depth > MAX_NESTING:
        _fail(path, f"nested more than {MAX_NESTING} deep")
    return obj


def _int(value: object, path: str, *, minimum: int | None = None) -> int:
    # bool is an int in Python, but true is not a count in JSON.
    if not isinstance(value, int) or isinstance(value, bool):
        _fail(path, f"must be an integer, not {_json_type(value)}")
    if minimum is not None and value < minimum:
        _fail(path, f"{value} is below {minimum}")
    return value


def _bool(value: object, path: str) -> bool:
    if not isinstance(value, bool):
        _fail(path, f"must be a boolean, not {_json_type(value)}")
    return value


def block_bound(original_size: int) -> int:
    """The most blocks an artifact may hold for an original of `original_size` bytes."""
    return min(MAX_BLOCKS, BLOCKS_BASE + original_size // BYTES_PER_BLOCK)


def _label(value: object, path: str) -> str:
    """A non-empty name such as parser or coverage.unit: at most MAX_LABEL_CHARS."""
    return _str(value, path, non_empty=True, max_chars=MAX_LABEL_CHARS)


def _options(value: object, path: str) -> dict[str, object]:
    """The options the parse ran with: each string in them at most MAX_LABEL_CHARS."""
    options = _nested_object(value, path)
    stack: list[tuple[object, str]] = [(options, path)]
    while stack:
        item, where = stack.pop()
        if isinstance(item, str):
            _str(item, where, max_chars=MAX_LABEL_CHARS)
        elif isinstance(item, dict):
            for key, inner in item.items():
                inner_path = _key_path(where, key)
                _str(key, inner_path, max_chars=MAX_LABEL_CHARS)
                stack.append((inner, inner_path))
        elif isinstance(item, list):
            stack.extend((inner, f"{where}[{index}]") for index, inner in enumerate(item))
    return options


def _str(value: object, path: str, *, non_empty: bool = False, max_chars: int | None = None) -> str:
    if not isinstance(value, str):
        _fail(path, f"must be a string, not {_json_type(value)}")
    if non_empty and not value:
        _fail(path, "must not be empty")
    if max_chars is not None and len(value) > max_chars:
        _fail(path, f"{len(value)} characters, over {max_chars}")
    return value


def _list(value: object, path: str, *, max_items: int | None = None) -> list[object]:
    if not isinstance(value, list):
        _fail(path, f"must be a list, not {_json_type(value)}")
    if max_items is not None and len(value) > max_items:
        _fail(path, f"{len(value)} entries, over {max_items}")
    return value


def _str_list(
    value: object, path: str, *, max_items: int | None = None, max_chars: int | None = None
) -> tuple[str, ...]:
    items = _list(value, path, max_items=max_items)
    return tuple(
        _str(item, f"{path}[{index}]", max_chars=max_chars) for index, item in enumerate(items)
    )


def _each(
    value: object, path: str, read: Callable[[object, str], T], *, max_items: int | None = None
) -> tuple[T, ...]:
    items = _list(value, path, max_items=max_items)
    return tuple(read(item, f"{path}[{index}]") for index, item in enumerate(items))


def _json_type(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    return "an object"


# --- the artifact's parts -----------------------------------------------------------------


def _coverage(value: object, path: str) -> Coverage:
    obj = _object(value, path)
    total = _int(_required(obj, "total", path), f"{path}.total", minimum=0)
    extracted = _int(_required(obj, "extracted", path), f"{path}.extracted", minimum=0)
    if extracted > total:
        _fail(f"{path}.extracted", f"{extracted} is over total {total}")
    coverage = Coverage(
        unit=_label(_required(obj, "unit", path), f"{path}.unit"),
        total=total,
        extracted=extracted,
        failed=_each(
            _required(obj, "failed", path),
            f"{path}.failed",
            _failed_unit,
            max_items=MAX_FAILED_UNITS,
        ),
        lost=_str_list(
            _required(obj, "lost", path),
            f"{path}.lost",
            max_items=MAX_LOST,
            max_chars=MAX_LABEL_CHARS,
        ),
    )
    # complete is the server's to compute; a service's flag is only checked against it.
    if "complete" in obj:
        sent = _bool(obj["complete"], f"{path}.complete")
        if sent != coverage.complete:
            _fail(
                f"{path}.complete",
                f"{str(sent).lower()} disagrees with the counts, failures and losses",
            )
    return coverage


def _failed_unit(value: object, path: str) -> FailedUnit:
    obj = _object(value, path)
    return FailedUnit(
        unit=_str(_required(obj, "unit", path), f"{path}.unit", max_chars=MAX_MESSAGE_CHARS),
        reason=_str(_required(obj, "reason", path), f"{path}.reason", max_chars=MAX_MESSAGE_CHARS),
    )


def _blocks(value: object, original_size: int) -> tuple[Block, ...]:
    items = _list(value, "blocks")
    bound = block_bound(original_size)
    if len(items) > bound:
        _fail(
            "blocks",
            f"{len(items)} blocks, over {bound}: at most {BLOCKS_BASE} plus one per"
            f" {BYTES_PER_BLOCK} bytes of the original ({original_size} bytes), never over"
            f" {MAX_BLOCKS}",
        )
    seen: dict[str, int] = {}  # id -> index: the ids of the blocks read so far
    blocks = []
    for index, item in enumerate(items):
        block = _block(item, f"blocks[{index}]", seen, original_size)
        seen[block.id] = index
        blocks.append(block)
    return tuple(blocks)


def _block(value: object, path: str, earlier: dict[str, int], original_size: int) -> Block:
    obj = _object(value, path)
    block_id = _label(_required(obj, "id", path), f"{path}.id")
    if block_id in earlier:
        _fail(f"{path}.id", f"{_show(block_id)} is not unique (also blocks[{earlier[block_id]}])")
    block_type = _str(_required(obj, "type", path), f"{path}.type")
    if block_type not in BLOCK_TYPES:
        _fail(f"{path}.type", f"{_show(block_type)} is not a block type")

    parent = None
    if "parent" in obj:
        parent = _str(obj["parent"], f"{path}.parent")
        if parent not in earlier:
            _fail(f"{path}.parent", f"{_show(parent)} is not an earlier block")
    depth = None
    if "depth" in obj:
        depth = _int(obj["depth"], f"{path}.depth", minimum=0)

    return Block(
        id=block_id,
        type=block_type,
        text=_str(_required(obj, "text", path), f"{path}.text"),
        section_path=_str_list(
            obj.get("section_path", []),
            f"{path}.section_path",
            max_items=MAX_SECTION_ENTRIES,
            max_chars=MAX_SECTION_CHARS,
        ),
        keys=_str_list(
            obj.get("keys", []), f"{path}.keys", max_items=MAX_KEYS, max_chars=MAX_KEY_CHARS
        ),
        locator=_locator(obj.get("locator", {}), f"{path}.locator", original_size),
        parent=parent,
        depth=depth,
        attrs=_nested_object(obj.get("attrs", {}), f"{path}.attrs"),
    )


def _locator(value: object, path: str, original_size: int) -> Locator:
    obj = _object(value, path)
    line_start, line_end = _range(obj, path, "line", unset=0, first=1)
    char_start, char_end = _range(obj, path, "char", unset=-1, first=0)
    page_start, page_end = _range(obj, path, "page", unset=0, first=1)
    row_start, row_end = _range(obj, path, "row", unset=0, first=1)
    # A character is at least one byte in any encoding, and a line at least its newline.
    if char_end is not None and char_end > original_size:
        _fail(f"{path}.char_end", f"{char_end} is past the original's {original_size} bytes")
    if line_end is not None and line_end > original_size + 1:
        _fail(
            f"{path}.line_end",
            f"{line_end} is past the original's {original_size} bytes plus one",
        )

    key_path = None
    if "key_path" in obj:
        key_path = _str(obj["key_path"], f"{path}.key_path", max_chars=MAX_KEY_CHARS)
    sheet = None
    if "sheet" in obj:
        sheet = _str(obj["sheet"], f"{path}.sheet", max_chars=MAX_NAME_CHARS)

    return Locator(
        line_start=line_start,
        line_end=line_end,
        char_start=char_start,
        char_end=char_end,
        key_path=key_path,
        page_start=page_start,
        page_end=page_end,
        sheet=sheet,
        row_start=row_start,
        row_end=row_end,
    )


def _range(
    obj: dict[str, object], path: str, name: str, *, unset: int, first: int
) -> tuple[int | None, int | None]:
    """A `<name>_start`/`<name>_end` pair: both absent, both `unset`, or first <= start <= end."""
    start_key, end_key = f"{name}_start", f"{name}_end"
    if start_key not in obj and end_key not in obj:
        return None, None
    if start_key not in obj or end_key not in obj:
        _fail(f"{path}.{name}", f"{start_key} and {end_key} must be given together")
    start = _int(obj[start_key], f"{path}.{start_key}")
    end = _int(obj[end_key], f"{path}.{end_key}")
    if not (start == end == unset or first <= start <= end):
        _fail(
            f"{path}.{name}",
            f"({start}, {end}) is not a range: both {unset}, or {first} <= start <= end",
        )
    return start, end


def _tables(value: object, path: str, original_size: int) -> tuple[Table, ...]:
    items = _list(value, path)
    seen: dict[str, int] = {}
    tables = []
    for index, item in enumerate(items):
        table = _table(item, f"{path}[{index}]", original_size)
        if table.id in seen:
            _fail(
                f"{path}[{index}].id",
                f"{_show(table.id)} is not unique (also {path}[{seen[table.id]}])",
            )
        seen[table.id] = index
        tables.append(table)
    return tuple(tables)


def _table(value: object, path: str, original_size: int) -> Table:
    obj = _object(value, path)
    columns = _each(
        _required(obj, "columns", path), f"{path}.columns", _column, max_items=MAX_COLUMNS
    )
    rows_path = f"{path}.rows"
    rows = tuple(
        _row(item, f"{rows_path}[{index}]", len(columns))
        for index, item in enumerate(_list(_required(obj, "rows", path), rows_path))
    )
    header_rows = 1
    if "header_rows" in obj:
        header_rows = _int(obj["header_rows"], f"{path}.header_rows", minimum=0)
    return Table(
        id=_label(_required(obj, "id", path), f"{path}.id"),
        name=_str(_required(obj, "name", path), f"{path}.name", max_chars=MAX_MESSAGE_CHARS),
        columns=columns,
        rows=rows,
        header_rows=header_rows,
        locator=_locator(obj.get("locator", {}), f"{path}.locator", original_size),
        attrs=_nested_object(obj.get("attrs", {}), f"{path}.attrs"),
    )


def _column(value: object, path: str) -> Column:
    obj = _object(value, path)
    column_type = _str(_required(obj, "type", path), f"{path}.type")
    if column_type not in COLUMN_TYPES:
        _fail(f"{path}.type", f"{_show(column_type)} is not a column type")
    return Column(
        name=_str(_required(obj, "name", path), f"{path}.name", max_chars=MAX_NAME_CHARS),
        type=column_type,
    )


def _row(value: object, path: str, width: int) -> tuple[object, ...]:
    cells = _list(value, path)
    if len(cells) != width:
        _fail(path, f"{len(cells)} values for {width} columns")
    return tuple(_cell(cell, f"{path}[{index}]") for index, cell in enumerate(cells))


def _cell(value: object, path: str) -> object:
    """A scalar, or a cell error {"error": "#DIV/0!"} and nothing else."""
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    if isinstance(value, dict):
        if set(value) != {"error"}:
            _fail(path, 'a cell error must be {"error": <string>} and nothing else')
        return {"error": _str(value["error"], f"{path}.error")}
    _fail(path, f"must be a string, number, boolean, null or cell error, not {_json_type(value)}")
