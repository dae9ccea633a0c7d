"""parse_artifact: every rule of the extractor contract v1, each refused as invalid_artifact.

Each refusal case mutates a valid artifact to break exactly one rule, so a case would pass
(and its test fail) if that rule's check were removed.
"""

from __future__ import annotations

import copy
import hashlib
import json
from collections.abc import Callable

import pytest

from loom_dagster.contract.artifact import Artifact
from loom_dagster.contract.validate import parse_artifact
from loom_dagster.errors import ExtractionFailed

ORIGINAL_SIZE = 100

Document = dict[str, object]
Mutation = Callable[[Document], None]


def base_artifact() -> Document:
    """The contract's TOML example, plus a table, with every optional part filled in."""
    return {
        "schema_version": 1,
        "format": "toml",
        "parser": "loom-toml",
        "parser_version": "1+python3.12.13",
        "options": {},
        "attrs": {},
        "warnings": [],
        "coverage": {
            "unit": "keys",
            "total": 1,
            "extracted": 1,
            "failed": [],
            "lost": [],
            "complete": True,
        },
        "blocks": [
            {
                "id": "b0",
                "type": "toml_table",
                "text": "[server]",
                "section_path": ["server"],
                "locator": {"line_start": 1, "line_end": 1, "key_path": "server"},
                "keys": ["server"],
            },
            {
                "id": "b1",
                "type": "toml_key",
                "text": "server.port = 7777",
                "parent": "b0",
                "depth": 1,
                "section_path": ["server"],
                "locator": {
                    "line_start": 2,
                    "line_end": 2,
                    "char_start": 9,
                    "char_end": 27,
                    "key_path": "server.port",
                },
                "keys": ["server.port"],
                "attrs": {"value": 7777, "value_type": "integer"},
            },
        ],
        "tables": [
            {
                "id": "t0",
                "name": "Sheet1",
                "columns": [{"name": "name", "type": "string"}, {"name": "n", "type": "number"}],
                "rows": [["a", 1], [None, {"error": "#DIV/0!"}]],
                "header_rows": 1,
                "locator": {"sheet": "Sheet1", "row_start": 1, "row_end": 3},
                "attrs": {"hidden": False},
            }
        ],
    }


def encode(document: Document) -> bytes:
    # ensure_ascii keeps a lone surrogate encodable, as a \ud800 escape a service could send.
    return json.dumps(document).encode("utf-8")


def parse(document: Document, *, size: int = ORIGINAL_SIZE) -> Artifact:
    return parse_artifact(encode(document), expected_format="toml", original_size=size)


def refusal(raw: bytes) -> ExtractionFailed:
    with pytest.raises(ExtractionFailed) as refused:
        parse_artifact(raw, expected_format="toml", original_size=ORIGINAL_SIZE)
    assert refused.value.code == "invalid_artifact"
    assert "\n" not in refused.value.message
    return refused.value


# --- mutations ----------------------------------------------------------------------------


def put(*path_and_value: object) -> Mutation:
    """Set the value at a path: put("coverage", "total", -1)."""
    *path, value = path_and_value

    def mutate(document: Document) -> None:
        target: object = document
        for key in path[:-1]:
            target = target[key]  # type: ignore[index]
        target[path[-1]] = value  # type: ignore[index]

    return mutate


def drop(*path: object) -> Mutation:
    def mutate(document: Document) -> None:
        target: object = document
        for key in path[:-1]:
            target = target[key]  # type: ignore[index]
        del target[path[-1]]  # type: ignore[attr-defined]

    return mutate


def both(*mutations: Mutation) -> Mutation:
    def mutate(document: Document) -> None:
        for mutation in mutations:
            mutation(document)

    return mutate


def nested(depth: int) -> object:
    """An object `depth` deep: {} is 1 deep, {"a": {}} is 2."""
    value: object = {}
    for _ in range(depth - 1):
        value = {"a": value}
    return value


def nested_lists(depth: int) -> object:
    """An object whose lists take it `depth` deep: {"a": []} is 2."""
    value: object = []
    for _ in range(depth - 2):
        value = [value]
    return {"a": value}


B0 = ("blocks", 0)
B1 = ("blocks", 1)
B1_LOC = (*B1, "locator")
T0 = ("tables", 0)
T0_LOC = (*T0, "locator")
ROWS = (*T0, "rows")

REFUSALS: list[tuple[str, Mutation, str]] = [
    # top level
    ("schema_version missing", drop("schema_version"), "schema_version: missing"),
    ("schema_version 2", put("schema_version", 2), "schema_version: 2 is not 1"),
    ("schema_version true", put("schema_version", True), "schema_version: must be an integer"),
    ("schema_version string", put("schema_version", "1"), "schema_version: must be an integer"),
    ("schema_version float", put("schema_version", 1.0), "schema_version: must be an integer"),
    ("format other", put("format", "markdown"), "format: 'markdown' is not the format asked for"),
    ("format missing", drop("format"), "format: missing"),
    ("parser empty", put("parser", ""), "parser: must not be empty"),
    ("parser not string", put("parser", 1), "parser: must be a string"),
    ("parser missing", drop("parser"), "parser: missing"),
    ("parser_version empty", put("parser_version", ""), "parser_version: must not be empty"),
    ("parser_version null", put("parser_version", None), "parser_version: must be a string"),
    ("options list", put("options", []), "options: must be an object"),
    ("options missing", drop("options"), "options: missing"),
    ("options 17 deep", put("options", nested(17)), "options: nested more than 16 deep"),
    ("options lists 17 deep", put("options", nested_lists(17)), "options: nested more than 16"),
    ("attrs string", put("attrs", "x"), "attrs: must be an object"),
    ("attrs missing", drop("attrs"), "attrs: missing"),
    ("attrs 17 deep", put("attrs", nested(17)), "attrs: nested more than 16 deep"),
    ("warnings not list", put("warnings", "x"), "warnings: must be a list"),
    ("warnings entry", put("warnings", ["ok", 2]), "warnings[1]: must be a string"),
    ("warnings missing", drop("warnings"), "warnings: missing"),
    # coverage
    ("coverage missing", drop("coverage"), "coverage: missing"),
    ("coverage list", put("coverage", []), "coverage: must be an object"),
    ("unit missing", drop("coverage", "unit"), "coverage.unit: missing"),
    ("unit empty", put("coverage", "unit", ""), "coverage.unit: must not be empty"),
    ("total missing", drop("coverage", "total"), "coverage.total: missing"),
    ("total negative", put("coverage", "total", -1), "coverage.total: -1 is below 0"),
    ("total true", put("coverage", "total", True), "coverage.total: must be an integer"),
    ("total float", put("coverage", "total", 1.0), "coverage.total: must be an integer"),
    ("extracted missing", drop("coverage", "extracted"), "coverage.extracted: missing"),
    (
        "extracted negative",
        both(put("coverage", "extracted", -1), drop("coverage", "complete")),
        "coverage.extracted: -1 is below 0",
    ),
    ("extracted over total", put("coverage", "extracted", 2), "coverage.extracted: 2 is over"),
    ("extracted true", put("coverage", "extracted", True), "coverage.extracted: must be an int"),
    ("failed missing", drop("coverage", "failed"), "coverage.failed: missing"),
    ("failed not list", put("coverage", "failed", {}), "coverage.failed: must be a list"),
    ("failed entry", put("coverage", "failed", ["x"]), "coverage.failed[0]: must be an object"),
    (
        "failed reason missing",
        put("coverage", "failed", [{"unit": "a"}]),
        "coverage.failed[0].reason: missing",
    ),
    (
        "failed unit not string",
        put("coverage", "failed", [{"unit": 3, "reason": "bad"}]),
        "coverage.failed[0].unit: must be a string",
    ),
    ("lost missing", drop("coverage", "lost"), "coverage.lost: missing"),
    ("lost entry", put("coverage", "lost", [None]), "coverage.lost[0]: must be a string"),
    ("complete not bool", put("coverage", "complete", 1), "coverage.complete: must be a boolean"),
    ("complete false", put("coverage", "complete", False), "coverage.complete: false disagrees"),
    (
        "complete with extracted short",
        both(put("coverage", "total", 2)),
        "coverage.complete: true disagrees",
    ),
    (
        "complete with a failure",
        put("coverage", "failed", [{"unit": "server.host", "reason": "bad value"}]),
        "coverage.complete: true disagrees",
    ),
    (
        "complete with a loss",
        put("coverage", "lost", ["exact_keys"]),
        "coverage.complete: true disagrees",
    ),
    # blocks
    ("blocks missing", drop("blocks"), "blocks: missing"),
    ("blocks object", put("blocks", {}), "blocks: must be a list"),
    ("block not object", put("blocks", [[]]), "blocks[0]: must be an object"),
    ("id missing", drop(*B0, "id"), "blocks[0].id: missing"),
    ("id empty", put(*B0, "id", ""), "blocks[0].id: must not be empty"),
    ("id number", put(*B0, "id", 0), "blocks[0].id: must be a string"),
    (
        "id duplicate",
        both(put(*B1, "id", "b0"), drop(*B1, "parent")),
        "blocks[1].id: 'b0' is not unique (also blocks[0])",
    ),
    ("type missing", drop(*B0, "type"), "blocks[0].type: missing"),
    ("type unknown", put(*B0, "type", "image"), "blocks[0].type: 'image' is not a block type"),
    ("text missing", drop(*B0, "text"), "blocks[0].text: missing"),
    ("text null", put(*B0, "text", None), "blocks[0].text: must be a string"),
    ("parent unknown", put(*B1, "parent", "b7"), "blocks[1].parent: 'b7' is not an earlier block"),
    ("parent itself", put(*B1, "parent", "b1"), "blocks[1].parent: 'b1' is not an earlier block"),
    ("parent later", put(*B0, "parent", "b1"), "blocks[0].parent: 'b1' is not an earlier block"),
    ("parent number", put(*B1, "parent", 0), "blocks[1].parent: must be a string"),
    ("parent null", put(*B1, "parent", None), "blocks[1].parent: must be a string"),
    ("depth negative", put(*B1, "depth", -1), "blocks[1].depth: -1 is below 0"),
    ("depth true", put(*B1, "depth", True), "blocks[1].depth: must be an integer"),
    ("depth float", put(*B1, "depth", 1.5), "blocks[1].depth: must be an integer"),
    ("section_path not list", put(*B0, "section_path", "s"), "blocks[0].section_path: must be"),
    (
        "section_path 65 entries",
        put(*B0, "section_path", ["s"] * 65),
        "blocks[0].section_path: 65 entries, over 64",
    ),
    (
        "section entry 501 chars",
        put(*B0, "section_path", ["s" * 501]),
        "blocks[0].section_path[0]: 501 characters, over 500",
    ),
    ("section entry number", put(*B0, "section_path", [1]), "blocks[0].section_path[0]: must be"),
    ("keys not list", put(*B0, "keys", {}), "blocks[0].keys: must be a list"),
    (
        "keys 10,001",
        put(*B0, "keys", [str(n) for n in range(10_001)]),
        "blocks[0].keys: 10001 entries, over 10000",
    ),
    (
        "key 1,025 chars",
        put(*B0, "keys", ["ok", "k" * 1025]),
        "blocks[0].keys[1]: 1025 characters, over 1024",
    ),
    ("key number", put(*B0, "keys", [7]), "blocks[0].keys[0]: must be a string"),
    ("block attrs list", put(*B1, "attrs", []), "blocks[1].attrs: must be an object"),
    ("block attrs 17 deep", put(*B1, "attrs", nested(17)), "blocks[1].attrs: nested more than"),
    # a block's locator
    ("locator list", put(*B1, "locator", []), "blocks[1].locator: must be an object"),
    (
        "line_start alone",
        drop(*B1_LOC, "line_end"),
        "blocks[1].locator.line: line_start and line_end must be given together",
    ),
    ("line_end alone", drop(*B1_LOC, "line_start"), "locator.line: line_start and line_end must"),
    ("line 0..1", put(*B1_LOC, "line_start", 0), "blocks[1].locator.line: (0, 2) is not a range"),
    ("line 3..2", put(*B1_LOC, "line_start", 3), "locator.line: (3, 2) is not a range"),
    (
        "line -1..-1",
        both(put(*B1_LOC, "line_start", -1), put(*B1_LOC, "line_end", -1)),
        "locator.line: (-1, -1) is not a range",
    ),
    ("line_start true", put(*B1_LOC, "line_start", True), "locator.line_start: must be an int"),
    ("line_end string", put(*B1_LOC, "line_end", "2"), "locator.line_end: must be an integer"),
    ("char_start alone", drop(*B1_LOC, "char_end"), "locator.char: char_start and char_end must"),
    ("char_end alone", drop(*B1_LOC, "char_start"), "locator.char: char_start and char_end must"),
    ("char -1..27", put(*B1_LOC, "char_start", -1), "locator.char: (-1, 27) is not a range"),
    ("char 28..27", put(*B1_LOC, "char_start", 28), "locator.char: (28, 27) is not a range"),
    (
        "char -2..-2",
        both(put(*B1_LOC, "char_start", -2), put(*B1_LOC, "char_end", -2)),
        "locator.char: (-2, -2) is not a range",
    ),
    ("page_start alone", put(*B1_LOC, "page_start", 1), "locator.page: page_start and page_end"),
    ("page_end alone", put(*B1_LOC, "page_end", 1), "locator.page: page_start and page_end"),
    (
        "page 0..3",
        both(put(*B1_LOC, "page_start", 0), put(*B1_LOC, "page_end", 3)),
        "locator.page: (0, 3) is not a range",
    ),
    (
        "page 3..2",
        both(put(*B1_LOC, "page_start", 3), put(*B1_LOC, "page_end", 2)),
        "locator.page: (3, 2) is not a range",
    ),
    ("row_start alone", put(*B1_LOC, "row_start", 1), "locator.row: row_start and row_end"),
    ("row_end alone", put(*B1_LOC, "row_end", 1), "locator.row: row_start and row_end"),
    (
        "row 2..1",
        both(put(*B1_LOC, "row_start", 2), put(*B1_LOC, "row_end", 1)),
        "locator.row: (2, 1) is not a range",
    ),
    ("key_path number", put(*B1_LOC, "key_path", 1), "locator.key_path: must be a string"),
    ("sheet number", put(*B1_LOC, "sheet", 1), "locator.sheet: must be a string"),
    (
        "sheet 501 chars",
        put(*B1_LOC, "sheet", "s" * 501),
        "blocks[1].locator.sheet: 501 characters, over 500",
    ),
    (
        "char_end past the original",
        put(*B1_LOC, "char_end", ORIGINAL_SIZE + 1),
        "blocks[1].locator.char_end: 101 is past the original's 100 bytes",
    ),
    (
        "line_end past the original plus one",
        put(*B1_LOC, "line_end", ORIGINAL_SIZE + 2),
        "blocks[1].locator.line_end: 102 is past the original's 100 bytes plus one",
    ),
    # tables
    ("tables object", put("tables", {}), "tables: must be a list"),
    ("tables null", put("tables", None), "tables: must be a list"),
    ("table not object", put("tables", [1]), "tables[0]: must be an object"),
    ("table id missing", drop(*T0, "id"), "tables[0].id: missing"),
    ("table id empty", put(*T0, "id", ""), "tables[0].id: must not be empty"),
    (
        "table id duplicate",
        lambda doc: doc["tables"].append(copy.deepcopy(doc["tables"][0])),  # type: ignore[attr-defined,index]
        "tables[1].id: 't0' is not unique (also tables[0])",
    ),
    ("table name missing", drop(*T0, "name"), "tables[0].name: missing"),
    ("table name number", put(*T0, "name", 3), "tables[0].name: must be a string"),
    ("columns missing", drop(*T0, "columns"), "tables[0].columns: missing"),
    ("columns object", put(*T0, "columns", {}), "tables[0].columns: must be a list"),
    (
        "columns 16,385",
        both(
            put(*T0, "columns", [{"name": "c", "type": "string"}] * 16_385),
            put(*T0, "rows", []),
        ),
        "tables[0].columns: 16385 entries, over 16384",
    ),
    ("column not object", put(*T0, "columns", 0, "c"), "tables[0].columns[0]: must be an object"),
    ("column name missing", drop(*T0, "columns", 0, "name"), "tables[0].columns[0].name: missing"),
    (
        "column name 501 chars",
        put(*T0, "columns", 1, "name", "n" * 501),
        "tables[0].columns[1].name: 501 characters, over 500",
    ),
    ("column type missing", drop(*T0, "columns", 1, "type"), "tables[0].columns[1].type: missing"),
    (
        "column type unknown",
        put(*T0, "columns", 1, "type", "integer"),
        "tables[0].columns[1].type: 'integer' is not a column type",
    ),
    ("rows missing", drop(*T0, "rows"), "tables[0].rows: missing"),
    ("rows object", put(*T0, "rows", {}), "tables[0].rows: must be a list"),
    ("row not list", put(*ROWS, 0, "a"), "tables[0].rows[0]: must be a list"),
    ("row short", put(*ROWS, 0, ["a"]), "tables[0].rows[0]: 1 values for 2 columns"),
    ("row long", put(*ROWS, 1, ["a", 1, 2]), "tables[0].rows[1]: 3 values for 2 columns"),
    ("cell list", put(*ROWS, 0, 1, [1]), "tables[0].rows[0][1]: must be a string, number"),
    (
        "cell object",
        put(*ROWS, 0, 1, {"value": 1}),
        'tables[0].rows[0][1]: a cell error must be {"error": <string>}',
    ),
    (
        "cell error with more",
        put(*ROWS, 1, 1, {"error": "#N/A", "detail": "x"}),
        "tables[0].rows[1][1]: a cell error must be",
    ),
    (
        "cell error not string",
        put(*ROWS, 1, 1, {"error": 7}),
        "tables[0].rows[1][1].error: must be a string",
    ),
    ("header_rows negative", put(*T0, "header_rows", -1), "tables[0].header_rows: -1 is below 0"),
    ("header_rows true", put(*T0, "header_rows", True), "tables[0].header_rows: must be an int"),
    ("table locator list", put(*T0, "locator", []), "tables[0].locator: must be an object"),
    (
        "table row_start alone",
        drop(*T0_LOC, "row_end"),
        "tables[0].locator.row: row_start and row_end must be given together",
    ),
    (
        "table rows 0..3",
        put(*T0_LOC, "row_start", 0),
        "tables[0].locator.row: (0, 3) is not a range",
    ),
    (
        "table sheet 501 chars",
        put(*T0_LOC, "sheet", "s" * 501),
        "tables[0].locator.sheet: 501 characters, over 500",
    ),
    (
        "table char_end past the original",
        both(put(*T0_LOC, "char_start", 0), put(*T0_LOC, "char_end", ORIGINAL_SIZE + 1)),
        "tables[0].locator.char_end: 101 is past",
    ),
    ("table attrs list", put(*T0, "attrs", []), "tables[0].attrs: must be an object"),
    ("table attrs 17 deep", put(*T0, "attrs", nested(17)), "tables[0].attrs: nested more than"),
    # numbers that Python reads but JSON cannot carry
    ("integer 2**63", put("attrs", {"n": 2**63}), "integer 9223372036854775808 is outside"),
    ("integer -2**63-1", put("attrs", {"n": -(2**63) - 1}), "is outside signed 64-bit"),
    ("integer in a cell", put(*ROWS, 0, 1, 2**64), "is outside signed 64-bit"),
    # strings that are not Unicode: a lone surrogate is valid JSON but no Unicode text
    ("lone surrogate text", put(*B0, "text", "\ud800"), "blocks[0].text: string is not valid"),
    ("lone surrogate key", put(*B1, "attrs", {"\udfff": 1}), "blocks[1].attrs['\\udfff']: string"),
    ("lone surrogate warning", put("warnings", ["a\udc00b"]), "warnings[0]: string is not valid"),
    ("lone surrogate cell", put(*ROWS, 0, 0, "\ud83d"), "tables[0].rows[0][0]: string is not"),
    ("lone surrogate unknown field", put("extra", "\ud800"), "extra: string is not valid Unicode"),
]

TWENTY_MB = 20 * 1024 * 1024
# The output bounds (issue 12.12): each is the exact message, so a cut or a changed number shows.
BOUND_REFUSALS: list[tuple[str, Mutation, str]] = [
    (
        "parser of 20 MB",
        put("parser", "p" * TWENTY_MB),
        "parser: 20971520 characters, over 200",
    ),
    (
        "parser_version 201",
        put("parser_version", "v" * 201),
        "parser_version: 201 characters, over 200",
    ),
    (
        "options string 201",
        put("options", {"encoding": "e" * 201}),
        "options.encoding: 201 characters, over 200",
    ),
    (
        "options nested key 201",
        put("options", {"a": [{"k" * 201: 1}]}),
        f"options.a[0].{'k' * 201}: 201 characters, over 200",
    ),
    (
        "warnings 1,001",
        put("warnings", ["w"] * 1001),
        "warnings: 1001 entries, over 1000",
    ),
    (
        "warning 1,001 chars",
        put("warnings", ["ok", "w" * 1001]),
        "warnings[1]: 1001 characters, over 1000",
    ),
    ("unit 201", put("coverage", "unit", "u" * 201), "coverage.unit: 201 characters, over 200"),
    (
        "failed 10,001",
        both(
            put("coverage", "failed", [{"unit": "u", "reason": "r"}] * 10_001),
            drop("coverage", "complete"),
        ),
        "coverage.failed: 10001 entries, over 10000",
    ),
    (
        "failed unit 1,001 chars",
        both(
            put("coverage", "failed", [{"unit": "u" * 1001, "reason": "r"}]),
            drop("coverage", "complete"),
        ),
        "coverage.failed[0].unit: 1001 characters, over 1000",
    ),
    (
        "failed reason 1,001 chars",
        both(
            put("coverage", "failed", [{"unit": "u", "reason": "r" * 1001}]),
            drop("coverage", "complete"),
        ),
        "coverage.failed[0].reason: 1001 characters, over 1000",
    ),
    (
        "lost 65",
        both(put("coverage", "lost", [f"c{n}" for n in range(65)]), drop("coverage", "complete")),
        "coverage.lost: 65 entries, over 64",
    ),
    (
        "lost 201 chars",
        both(put("coverage", "lost", ["l" * 201]), drop("coverage", "complete")),
        "coverage.lost[0]: 201 characters, over 200",
    ),
    (
        "block id 201",
        both(put(*B0, "id", "b" * 201), put(*B1, "parent", "b" * 201)),
        "blocks[0].id: 201 characters, over 200",
    ),
    (
        "key_path 1,025",
        put(*B1_LOC, "key_path", "k" * 1025),
        "blocks[1].locator.key_path: 1025 characters, over 1024",
    ),
    ("table id 201", put(*T0, "id", "t" * 201), "tables[0].id: 201 characters, over 200"),
    (
        "table name 1,001",
        put(*T0, "name", "n" * 1001),
        "tables[0].name: 1001 characters, over 1000",
    ),
    (
        "blocks past the bound for the original's size",
        lambda doc: doc["blocks"].extend(  # type: ignore[attr-defined]
            {"id": f"x{n}", "type": "paragraph", "text": "a"} for n in range(10_005)
        ),
        "blocks: 10007 blocks, over 10006: at most 10000 plus one per 16 bytes of the original"
        " (100 bytes), never over 50000",
    ),
]


@pytest.mark.parametrize(
    ("mutation", "message"),
    [pytest.param(mutation, message, id=name) for name, mutation, message in BOUND_REFUSALS],
)
def test_a_string_or_a_count_past_its_output_bound_is_refused(
    mutation: Mutation, message: str
) -> None:
    document = base_artifact()
    mutation(document)
    assert refusal(encode(document)).message == message


def test_blocks_are_bounded_per_byte_of_the_original_and_in_all() -> None:
    def with_blocks(count: int) -> Document:
        document = base_artifact()
        document["blocks"] = [
            {"id": f"b{n}", "type": "paragraph", "text": "a"} for n in range(count)
        ]
        return document

    assert len(parse(with_blocks(10_006), size=100).blocks) == 10_006
    assert len(parse(with_blocks(10_064), size=1_024).blocks) == 10_064
    assert len(parse(with_blocks(50_000), size=10**9).blocks) == 50_000
    with pytest.raises(ExtractionFailed) as refused:
        parse(with_blocks(50_001), size=10**9)
    assert refused.value.message.startswith("blocks: 50001 blocks, over 50000:")


def test_strings_at_their_output_bounds_pass() -> None:
    document = base_artifact()
    document["parser"] = "p" * 200
    document["parser_version"] = "v" * 200
    document["options"] = {"encoding": "e" * 200}
    document["warnings"] = ["w" * 1000] * 1000
    document["coverage"] = {
        "unit": "u" * 200,
        "total": 1,
        "extracted": 1,
        "failed": [{"unit": "u" * 1000, "reason": "r" * 1000}] * 10_000,
        "lost": ["l" * 200] * 64,
    }
    document["blocks"][1]["locator"]["key_path"] = "k" * 1024  # type: ignore[index]
    document["tables"][0]["name"] = "n" * 1000  # type: ignore[index]

    artifact = parse(document)

    assert (len(artifact.parser), len(artifact.warnings), len(artifact.coverage.failed)) == (
        200,
        1000,
        10_000,
    )


@pytest.mark.parametrize(
    ("mutation", "fragment"),
    [pytest.param(mutation, fragment, id=name) for name, mutation, fragment in REFUSALS],
)
def test_each_broken_rule_is_refused(mutation: Mutation, fragment: str) -> None:
    document = base_artifact()
    mutation(document)
    assert fragment in refusal(encode(document)).message


def raw_with(replacement: str) -> bytes:
    """The valid base artifact with coverage.total's value replaced by raw JSON text."""
    document = base_artifact()
    document["coverage"]["total"] = "@@"  # type: ignore[index]
    return encode(document).replace(b'"@@"', replacement.encode("utf-8"))


RAW_REFUSALS: list[tuple[str, bytes, str]] = [
    ("not UTF-8", b'{"format": "\xff"}', "artifact: not valid UTF-8 (byte 12)"),
    ("UTF-16", encode(base_artifact()).decode().encode("utf-16"), "artifact: not valid UTF-8"),
    ("not JSON", b'{"schema_version": 1', "artifact: not JSON"),
    ("trailing data", encode(base_artifact()) + b" {}", "artifact: not JSON (Extra data"),
    ("empty", b"", "artifact: not JSON"),
    ("top level list", b"[]", "artifact: must be an object, not a list"),
    ("top level null", b"null", "artifact: must be an object, not null"),
    ("NaN", raw_with("NaN"), "artifact: NaN is not a JSON number"),
    ("Infinity", raw_with("Infinity"), "artifact: Infinity is not a JSON number"),
    ("-Infinity", raw_with("-Infinity"), "artifact: -Infinity is not a JSON number"),
    ("1e999", raw_with("1e999"), "artifact: number '1e999' is not within a double"),
    ("-1e999", raw_with("-1e999"), "number '-1e999' is not within a double"),
    ("integer 2**63", raw_with(str(2**63)), "integer 9223372036854775808 is outside signed"),
    ("integer 5,000 digits", raw_with("9" * 5000), "artifact: integer 999999999999999999999999"),
    (
        "nested past the parser",
        b'{"x": ' + b"[" * 100_000 + b"]" * 100_000 + b"}",
        "artifact: nested too deep to parse",
    ),
]


@pytest.mark.parametrize(
    ("raw", "fragment"),
    [pytest.param(raw, fragment, id=name) for name, raw, fragment in RAW_REFUSALS],
)
def test_bytes_that_are_no_json_artifact_are_refused(raw: bytes, fragment: str) -> None:
    assert fragment in refusal(raw).message


def test_refusal_names_the_path_and_the_rule_in_one_line():
    document = base_artifact()
    put(*B1, "parent", "b7")(document)
    assert refusal(encode(document)).message == "blocks[1].parent: 'b7' is not an earlier block"


def test_an_untrusted_value_in_a_message_is_shortened_and_one_line():
    document = base_artifact()
    put(*B0, "type", "x\n" * 500)(document)
    message = refusal(encode(document)).message
    assert "\n" not in message
    assert len(message) < 120


# --- what a valid artifact becomes --------------------------------------------------------


def test_a_valid_artifact_parses():
    artifact = parse(base_artifact())
    assert artifact.schema_version == 1
    assert artifact.format == "toml"
    assert artifact.parser == "loom-toml"
    assert artifact.coverage.complete is True
    first, second = artifact.blocks
    assert (first.id, first.type, first.text) == ("b0", "toml_table", "[server]")
    assert first.section_path == ("server",)
    assert first.keys == ("server",)
    assert first.locator.key_path == "server"
    assert (first.locator.line_start, first.locator.line_end) == (1, 1)
    assert first.parent is None and first.depth is None and dict(first.attrs) == {}
    assert second.parent == "b0"
    assert second.depth == 1
    assert (second.locator.char_start, second.locator.char_end) == (9, 27)
    assert dict(second.attrs) == {"value": 7777, "value_type": "integer"}
    (table,) = artifact.tables
    assert [(column.name, column.type) for column in table.columns] == [
        ("name", "string"),
        ("n", "number"),
    ]
    assert table.rows == (("a", 1), (None, {"error": "#DIV/0!"}))
    assert table.locator.sheet == "Sheet1"
    assert (table.locator.row_start, table.locator.row_end) == (1, 3)


def test_to_dict_is_the_contracts_shape():
    assert parse(base_artifact()).to_dict() == base_artifact()


def test_minimal_artifact_defaults_optional_parts():
    document = base_artifact()
    del document["tables"]
    document["blocks"] = [{"id": "b0", "type": "paragraph", "text": "hello"}]
    document["coverage"] = {"unit": "lines", "total": 1, "extracted": 1, "failed": [], "lost": []}
    artifact = parse(document)
    (block,) = artifact.blocks
    assert block.section_path == () and block.keys == () and block.locator.to_dict() == {}
    assert artifact.tables == ()
    assert block.to_dict() == {
        "id": "b0",
        "type": "paragraph",
        "text": "hello",
        "section_path": [],
        "keys": [],
        "locator": {},
    }
    assert "tables" not in artifact.to_dict()


def test_header_rows_defaults_to_one():
    document = base_artifact()
    drop(*T0, "header_rows")(document)
    assert parse(document).tables[0].header_rows == 1
    put(*T0, "header_rows", 0)(document)
    assert parse(document).tables[0].header_rows == 0


UNKNOWN_FIELDS: list[tuple[str, Mutation]] = [
    ("top level", put("extractor_note", {"deep": [1, 2]})),
    ("coverage", put("coverage", "seconds", 1.5)),
    ("failed unit", put("coverage", "failed", 0, "line", 3)),
    ("block", put(*B0, "confidence", 0.9)),
    ("locator", put(*B0, "locator", "column", 4)),
    ("table", put(*T0, "schema", "x")),
    ("column", put(*T0, "columns", 0, "nullable", True)),
]


@pytest.mark.parametrize(
    "mutation", [pytest.param(mutation, id=name) for name, mutation in UNKNOWN_FIELDS]
)
def test_unknown_fields_are_dropped_without_changing_the_address(mutation: Mutation) -> None:
    document = base_artifact()
    put("coverage", "failed", [{"unit": "a", "reason": "r"}])(document)
    put("coverage", "complete", False)(document)
    expected = parse(copy.deepcopy(document))
    mutation(document)
    artifact = parse(document)
    assert artifact.to_dict() == expected.to_dict()
    assert artifact.sha256 == expected.sha256


def test_complete_is_recomputed_when_left_out():
    document = base_artifact()
    del document["coverage"]["complete"]  # type: ignore[attr-defined]
    artifact = parse(document)
    assert artifact.coverage.complete is True
    assert artifact.to_dict()["coverage"]["complete"] is True  # type: ignore[index]

    put("coverage", "lost", ["sql_structure"])(document)
    assert parse(document).coverage.complete is False
    put("coverage", "lost", [])(document)
    put("coverage", "failed", [{"unit": "a.b", "reason": "bad"}])(document)
    assert parse(document).coverage.complete is False
    put("coverage", "failed", [])(document)
    put("coverage", "total", 3)(document)
    incomplete = parse(document)
    assert incomplete.coverage.complete is False
    assert incomplete.to_dict()["coverage"]["complete"] is False  # type: ignore[index]


def test_complete_false_is_accepted_when_it_is_false():
    document = base_artifact()
    put("coverage", "total", 2)(document)
    put("coverage", "complete", False)(document)
    assert parse(document).coverage.complete is False


def test_canonical_bytes_are_sorted_compact_utf8_and_the_address_is_their_sha256():
    document = base_artifact()
    put(*B0, "text", "größe ✓")(document)
    artifact = parse(document)
    canonical = artifact.canonical_bytes()
    assert canonical == json.dumps(
        artifact.to_dict(), sort_keys=True, separators=(",", ":"), ensure_ascii=False
    ).encode("utf-8")
    assert canonical.startswith(b'{"attrs":{},"blocks":[{"id":"b0","keys":["server"],')
    assert b", " not in canonical and b": " not in canonical
    assert "größe ✓".encode() in canonical
    assert artifact.sha256 == hashlib.sha256(canonical).hexdigest()


def test_the_address_ignores_the_services_key_order_and_whitespace():
    document = base_artifact()
    pretty = json.dumps(document, indent=4).encode("utf-8")
    reordered = json.dumps(dict(reversed(list(document.items())))).encode("utf-8")
    first = parse_artifact(pretty, expected_format="toml", original_size=ORIGINAL_SIZE)
    second = parse_artifact(reordered, expected_format="toml", original_size=ORIGINAL_SIZE)
    assert first.sha256 == second.sha256 == parse(document).sha256


# --- boundaries: the largest value each rule allows passes ---------------------------------


def test_ten_thousand_keys_of_1024_characters_pass():
    document = base_artifact()
    keys = [f"{n:05d}" + "k" * 1019 for n in range(10_000)]
    put(*B0, "keys", keys)(document)
    artifact = parse(document)
    assert len(artifact.blocks[0].keys) == 10_000
    assert {len(key) for key in artifact.blocks[0].keys} == {1024}


def test_64_section_entries_of_500_characters_pass():
    document = base_artifact()
    put(*B0, "section_path", ["s" * 500] * 64)(document)
    assert parse(document).blocks[0].section_path == ("s" * 500,) * 64


def test_nesting_16_deep_passes_everywhere_it_is_bounded():
    document = base_artifact()
    put("options", nested(16))(document)
    put("attrs", nested_lists(16))(document)
    put(*B1, "attrs", nested(16))(document)
    put(*T0, "attrs", nested(16))(document)
    artifact = parse(document)
    assert artifact.options == nested(16)
    assert artifact.attrs == nested_lists(16)


def test_signed_64_bit_extremes_and_doubles_pass():
    document = base_artifact()
    put("attrs", {"max": 2**63 - 1, "min": -(2**63), "big": 1.7976931348623157e308})(document)
    put(*ROWS, 0, 1, 2**63 - 1)(document)
    artifact = parse(document)
    assert artifact.attrs == {"max": 2**63 - 1, "min": -(2**63), "big": 1.7976931348623157e308}
    assert artifact.tables[0].rows[0][1] == 2**63 - 1


def test_char_end_at_the_original_size_and_line_end_one_past_pass():
    document = base_artifact()
    put(*B1_LOC, "char_end", ORIGINAL_SIZE)(document)
    put(*B1_LOC, "line_end", ORIGINAL_SIZE + 1)(document)
    locator = parse(document).blocks[1].locator
    assert (locator.char_end, locator.line_end) == (ORIGINAL_SIZE, ORIGINAL_SIZE + 1)


def test_an_empty_original_still_takes_line_one_and_no_characters():
    document = base_artifact()
    put(*B0, "locator", {"line_start": 1, "line_end": 1, "char_start": 0, "char_end": 0})(document)
    drop(*B1, "locator")(document)
    assert parse(document, size=0).blocks[0].locator.line_end == 1


def test_unset_ranges_pass():
    document = base_artifact()
    put(*B1, "locator", {})(document)
    for name, unset in (("line", 0), ("char", -1), ("page", 0), ("row", 0)):
        put(*B1_LOC, f"{name}_start", unset)(document)
        put(*B1_LOC, f"{name}_end", unset)(document)
    locator = parse(document).blocks[1].locator
    assert locator.to_dict() == {
        "line_start": 0, "line_end": 0, "char_start": -1, "char_end": -1,
        "page_start": 0, "page_end": 0, "row_start": 0, "row_end": 0,
    }  # fmt: skip


def test_pages_rows_and_sheet_at_their_bounds_pass():
    document = base_artifact()
    put(*B1_LOC, "page_start", 1)(document)
    put(*B1_LOC, "page_end", 1)(document)
    put(*B1_LOC, "row_start", 5)(document)
    put(*B1_LOC, "row_end", 10_000_000)(document)
    put(*B1_LOC, "sheet", "s" * 500)(document)
    assert parse(document).blocks[1].locator.sheet == "s" * 500


def test_16384_columns_named_in_500_characters_pass():
    document = base_artifact()
    put(*T0, "columns", [{"name": "n" * 500, "type": "mixed"}] * 16_384)(document)
    put(*T0, "rows", [[None] * 16_384])(document)
    assert len(parse(document).tables[0].columns) == 16_384


@pytest.mark.parametrize(
    "column_type", ["string", "number", "bool", "date", "datetime", "time", "duration", "mixed"]
)
def test_every_column_type_passes(column_type: str) -> None:
    document = base_artifact()
    put(*T0, "columns", 0, "type", column_type)(document)
    assert parse(document).tables[0].columns[0].type == column_type


@pytest.mark.parametrize("cell", ["12.345", -3, 2.5, True, False, None, {"error": "#N/A"}])
def test_every_kind_of_cell_passes(cell: object) -> None:
    document = base_artifact()
    put(*ROWS, 0, 1, cell)(document)
    assert parse(document).tables[0].rows[0][1] == cell


@pytest.mark.parametrize(
    "block_type",
    ["heading", "paragraph", "list", "code", "sql_statement", "toml_table", "toml_key", "table"],
)
def test_every_block_type_passes(block_type: str) -> None:
    document = base_artifact()
    put(*B0, "type", block_type)(document)
    assert parse(document).blocks[0].type == block_type


def test_a_table_id_may_repeat_a_block_id():
    # Block ids and table ids are separate namespaces: attrs.table_id names a table.
    document = base_artifact()
    put(*T0, "id", "b0")(document)
    assert parse(document).tables[0].id == "b0"


def test_valid_unicode_escapes_pass():
    document = base_artifact()
    put(*B0, "text", "\U0001f600 and \u00e9")(document)  # a surrogate pair on the wire
    raw = encode(document)
    assert b"\\ud83d\\ude00" in raw
    artifact = parse_artifact(raw, expected_format="toml", original_size=ORIGINAL_SIZE)
    assert artifact.blocks[0].text == "\U0001f600 and \u00e9"
