"""Parquet extraction: one test per rule of the reference extractor's Parquet reader."""

from __future__ import annotations

import json
import struct
import subprocess
import sys
import time
import uuid
from datetime import date, datetime, timedelta
from datetime import time as clock
from decimal import Decimal
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import httpx
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from extractor_sandbox.errors import ExtractError
from extractor_sandbox.formats import parquet as reader
from extractor_sandbox.formats import tables
from extractor_sandbox.formats.parquet import PARSER_VERSION, extract_parquet
from extractor_sandbox.runner import Limits, run_extraction
from extractor_sandbox.settings import Settings
from extractor_sandbox.source import extract as extract_source
from tests.extractor import gates
from tests.extractor.conftest import Service
from tests.extractor.server_check import validated

GOLD = Path(__file__).resolve().parent / "gold" / "parquet"
DEFAULTS = Settings()
CHILD_LIMITS = Limits(
    timeout_s=60, max_output_bytes=DEFAULTS.max_output_bytes, cpu_s=60, memory_mb=DEFAULTS.memory_mb
)


def parquet_bytes(table: pa.Table, **options: Any) -> bytes:
    sink = pa.BufferOutputStream()
    pq.write_table(table, sink, **options)
    return bytes(sink.getvalue().to_pybytes())


def extract(data: bytes, name: str = "data.parquet") -> dict[str, Any]:
    return extract_parquet(data, {}, name=name)


def read(columns: dict[str, pa.Array], **options: Any) -> dict[str, Any]:
    data = parquet_bytes(pa.table(columns), **options)
    return validated(extract(data), data)


def values(array: pa.Array) -> tuple[list[Any], str]:
    """A one-column file's values and its column's type."""
    table = read({"c": array})["tables"][0]
    return [row[0] for row in table["rows"]], table["columns"][0]["type"]


def failed(artifact: dict[str, Any]) -> list[dict[str, str]]:
    return list(artifact["coverage"]["failed"])


# -- a Parquet footer, rewritten (Thrift's compact protocol, as much as a footer needs) -----------

_STOP, _TRUE, _FALSE, _BYTE, _I16, _I32, _I64, _DOUBLE, _BINARY, _LIST, _SET, _MAP, _STRUCT = range(
    13
)


class _Thrift:
    def __init__(self, data: bytes) -> None:
        self.data, self.pos = data, 0

    def byte(self) -> int:
        self.pos += 1
        return self.data[self.pos - 1]

    def varint(self) -> int:
        shift = result = 0
        while True:
            part = self.byte()
            result |= (part & 0x7F) << shift
            shift += 7
            if not part & 0x80:
                return result

    def zigzag(self) -> int:
        n = self.varint()
        return (n >> 1) ^ -(n & 1)

    def value(self, kind: int) -> Any:
        if kind in (_TRUE, _FALSE):
            return kind == _TRUE
        if kind == _BYTE:
            return self.byte()
        if kind in (_I16, _I32, _I64):
            return self.zigzag()
        if kind in (_DOUBLE, _BINARY):
            size = 8 if kind == _DOUBLE else self.varint()
            self.pos += size
            return self.data[self.pos - size : self.pos]
        if kind in (_LIST, _SET):
            head = self.byte()
            size, element = head >> 4, head & 0x0F
            size = self.varint() if size == 15 else size
            if element in (_TRUE, _FALSE):
                return element, [self.byte() == _TRUE for _ in range(size)]
            return element, [self.value(element) for _ in range(size)]
        if kind == _MAP:
            size = self.varint()
            kinds = self.byte() if size else 0
            pairs = [(self.value(kinds >> 4), self.value(kinds & 0x0F)) for _ in range(size)]
            return kinds, pairs
        assert kind == _STRUCT, kind
        return self.struct()

    def struct(self) -> list[list[Any]]:
        fields: list[list[Any]] = []
        last = 0
        while (head := self.byte()) & 0x0F != _STOP:
            fid = last + (head >> 4) if head >> 4 else self.zigzag()
            last = fid
            fields.append([fid, head & 0x0F, self.value(head & 0x0F)])
        return fields


def _varint(n: int) -> bytes:
    out = bytearray()
    while n >= 0x80:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    return bytes(out + bytes([n]))


def _encode(kind: int, value: Any) -> bytes:
    if kind in (_TRUE, _FALSE):
        return b""
    if kind == _BYTE:
        return bytes([value])
    if kind in (_I16, _I32, _I64):
        return _varint((value << 1) ^ (value >> 63) if value < 0 else value << 1)
    if kind == _DOUBLE:
        return bytes(value)
    if kind == _BINARY:
        return _varint(len(value)) + value
    if kind in (_LIST, _SET):
        element, items = value
        head = bytes([(min(len(items), 15) << 4) | element])
        head += _varint(len(items)) if len(items) >= 15 else b""
        if element in (_TRUE, _FALSE):
            return head + bytes(_TRUE if item else _FALSE for item in items)
        return head + b"".join(_encode(element, item) for item in items)
    if kind == _MAP:
        kinds, pairs = value
        if not pairs:
            return b"\x00"
        body = b"".join(_encode(kinds >> 4, k) + _encode(kinds & 0x0F, v) for k, v in pairs)
        return _varint(len(pairs)) + bytes([kinds]) + body
    out = bytearray()
    last = 0
    for fid, field_kind, field_value in value:
        if field_kind in (_TRUE, _FALSE):
            field_kind = _TRUE if field_value else _FALSE
        if 0 < fid - last <= 15:
            out.append(((fid - last) << 4) | field_kind)
        else:
            out.append(field_kind)
            out += _encode(_I16, fid)
        last = fid
        out += _encode(field_kind, field_value)
    return bytes(out + bytes([_STOP]))


def _field(fields: list[list[Any]], fid: int) -> list[Any]:
    return next(entry for entry in fields if entry[0] == fid)


def with_row_counts(data: bytes, file_rows: int, group_rows: list[int]) -> bytes:
    """The file with its footer's FileMetaData.num_rows and each RowGroup.num_rows set as given."""
    length = struct.unpack("<I", data[-8:-4])[0]
    start = len(data) - 8 - length
    metadata = _Thrift(data[start : len(data) - 8]).struct()
    _field(metadata, 3)[2] = file_rows
    _, groups = _field(metadata, 4)[2]
    for group, rows in zip(groups, group_rows, strict=True):
        _field(group, 3)[2] = rows
    footer = _encode(_STRUCT, metadata)
    return data[:start] + footer + struct.pack("<I", len(footer)) + b"PAR1"


def test_the_footer_rewriter_rewrites_a_footer_to_the_same_bytes() -> None:
    data = parquet_bytes(pa.table({"a": [1, 2, 3]}))
    assert with_row_counts(data, 3, [3]) == data


# -- the envelope ------------------------------------------------------------------------------


def test_artifact_envelope_and_table() -> None:
    artifact = read({"a": pa.array([1, 2])})
    assert artifact["format"] == "parquet"
    assert artifact["parser"] == "loom-parquet"
    assert artifact["parser_version"] == PARSER_VERSION == f"1+pyarrow{pa.__version__}"
    assert artifact["coverage"] == {
        "unit": "rows",
        "total": 2,
        "extracted": 2,
        "failed": [],
        "lost": [],
        "complete": True,
    }
    [table] = artifact["tables"]
    assert table["id"] == "t0"
    assert table["name"] == "data.parquet"
    assert table["header_rows"] == 0
    assert table["locator"] == {"row_start": 1, "row_end": 2}
    assert artifact["blocks"][0]["locator"] == {"row_start": 1, "row_end": 2}


def test_parquet_is_declared_and_dispatched_with_its_name() -> None:
    from extractor_sandbox.source import DECLARED_FORMATS

    assert DECLARED_FORMATS["parquet"] == ()
    data = parquet_bytes(pa.table({"a": [1]}))
    artifact = extract_source(data, "parquet", "sales.parquet", {})
    assert artifact["tables"][0]["name"] == "sales.parquet"
    assert artifact["options"] == {}


def test_a_build_without_pyarrow_does_not_declare_parquet() -> None:
    code = (
        "import sys; sys.modules['pyarrow'] = None\n"
        "from extractor_sandbox.source import DECLARED_FORMATS\n"
        "from extractor_sandbox.registry import AVAILABLE\n"
        "from extractor_sandbox.service import capabilities\n"
        "from extractor_sandbox.settings import load_settings\n"
        "formats = [f['format'] for f in capabilities(load_settings({}))['formats']]\n"
        "print('parquet' in DECLARED_FORMATS, 'parquet' in AVAILABLE, 'parquet' in formats,"
        " 'csv' in formats)\n"
    )
    root = Path(__file__).resolve().parents[2]
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=root, capture_output=True, text=True, check=True
    )
    assert done.stdout.split() == ["False", "False", "False", "True"]


# -- qualification: typed cells 1.00 and headers 1.00 over the hand-written gold ------------------


def test_gold_typed_cells_and_headers_are_one() -> None:
    fixtures = gates.fixtures("parquet")
    assert len(fixtures) >= 6

    def parse(data: bytes, name: str) -> dict[str, Any]:
        return extract_source(data, "parquet", name, {})

    assert gates.score("parquet", parse) == {"typed cells": 1.0, "headers": 1.0}


def test_the_gate_fails_a_reader_that_loses_a_type() -> None:
    def untyped(data: bytes, name: str) -> dict[str, Any]:
        artifact = extract_source(data, "parquet", name, {})
        for column in artifact["tables"][0]["columns"]:
            column["type"] = "string"
        return artifact

    assert gates.score("parquet", untyped)["typed cells"] < 1.0


@pytest.mark.parametrize("source", sorted(GOLD.glob("*.parquet")), ids=lambda p: p.name)
def test_every_gold_artifact_passes_the_contract(source: Path) -> None:
    data = source.read_bytes()
    validated(extract_source(data, "parquet", source.name, {}), data)


def test_the_fixtures_rebuild_to_the_same_bytes(tmp_path: Path) -> None:
    script = GOLD / "make_fixtures.py"
    sys.path.insert(0, str(GOLD))
    try:
        import make_fixtures
    finally:
        sys.path.remove(str(GOLD))
    for name, (build, row_group_size) in make_fixtures.FIXTURES.items():
        rebuilt = parquet_bytes(build(), row_group_size=row_group_size)
        assert rebuilt == (GOLD / f"{name}.parquet").read_bytes(), (script, name)


# -- how each type is read --------------------------------------------------------------------


def test_integers_are_numbers() -> None:
    assert values(pa.array([-(2**63), 2**63 - 1, 5], pa.int64())) == (
        [-(2**63), 2**63 - 1, 5],
        "number",
    )


def test_a_uint64_is_its_exact_digits_every_value_alike() -> None:
    assert values(pa.array([2**64 - 1, 3], pa.uint64())) == (
        ["18446744073709551615", "3"],
        "number",
    )


def test_a_decimal_is_its_exact_digits() -> None:
    array = pa.array([Decimal("0.1000000000000000000001"), Decimal("0E-22")], pa.decimal128(38, 22))
    assert values(array) == (["0.1000000000000000000001", "0.0000000000000000000000"], "number")


def test_a_float_keeps_its_value_and_shows_15_digits() -> None:
    artifact = read({"x": pa.array([0.1 + 0.2])})
    assert artifact["tables"][0]["rows"] == [[0.30000000000000004]]
    assert artifact["blocks"][0]["text"] == "x: 0.3"


def test_a_float32_is_its_shortest_decimal() -> None:
    assert values(pa.array([0.1, 1 / 3, 16777216.0], pa.float32())) == (
        [0.1, 0.33333334, 16777216.0],
        "number",
    )


def test_a_float16_is_its_shortest_decimal() -> None:
    assert values(pa.array([0.1, 65504.0, -2.5], pa.float16())) == ([0.1, 65500.0, -2.5], "number")


def test_a_nan_is_no_value_and_an_infinity_is_left_out_and_counted() -> None:
    artifact = read({"x": pa.array([float("nan"), float("inf"), 1.5, float("-inf")])})
    assert artifact["tables"][0]["rows"] == [[1.5]]
    assert artifact["tables"][0]["columns"][0]["type"] == "number"
    assert failed(artifact) == [
        {"unit": "data.parquet values", "reason": "left out over the rows read: 2 infinities"}
    ]


def test_a_bool_reads_as_a_bool() -> None:
    artifact = read({"ok": pa.array([True, False])})
    assert artifact["tables"][0]["rows"] == [[True], [False]]
    assert artifact["blocks"][0]["text"] == "ok: TRUE\nok: FALSE"


@pytest.mark.parametrize(
    ("array", "expected", "kind"),
    [
        (pa.array([date(2024, 2, 29)], pa.date32()), "2024-02-29", "date"),
        (pa.array([date(2024, 2, 29)], pa.date64()), "2024-02-29", "date"),
        (pa.array([datetime(2024, 3, 1, 10, 30)], pa.timestamp("s")), "2024-03-01T10:30:00", "datetime"),
        (pa.array([1_709_287_200_000_000], pa.timestamp("us", tz="UTC")), "2024-03-01T10:00:00+00:00", "datetime"),
        (pa.array([1_709_287_200_000], pa.timestamp("ms", tz="+05:30")), "2024-03-01T15:30:00+05:30", "datetime"),
        (pa.array([1_709_287_200_123_456_789], pa.timestamp("ns", tz="America/New_York")), "2024-03-01T05:00:00.123456-05:00", "datetime"),
        (pa.array([clock(10, 30)], pa.time32("s")), "10:30:00", "time"),
        (pa.array([3_723_000_250_999], pa.time64("ns")), "01:02:03.000250", "time"),
        (pa.array([timedelta(hours=36)], pa.duration("ms")), "36:00:00", "duration"),
        (pa.array([-90_000_001_999], pa.duration("ns")), "-0:01:30.000001", "duration"),
    ],
)  # fmt: skip
def test_dates_times_and_durations_read_as_the_other_readers_write_them(
    array: pa.Array, expected: str, kind: str
) -> None:
    assert values(array) == ([expected], kind)


def test_nanoseconds_nested_in_a_list_struct_or_map_are_cut_to_the_microsecond() -> None:
    instant = 1_704_067_200_000_001_999
    struct_type = pa.struct([("at", pa.timestamp("ns"))])
    map_type = pa.map_(pa.string(), pa.duration("ns"))
    artifact = read(
        {
            "list": pa.array([[instant]], pa.list_(pa.timestamp("ns"))),
            "struct": pa.array([{"at": instant}], struct_type),
            "map": pa.array([[("k", 1_999)]], map_type),
        }
    )
    assert artifact["tables"][0]["rows"] == [
        ['["2024-01-01T00:00:00.000001"]', '{"at": "2024-01-01T00:00:00.000001"}', '[["k", "0:00:00.000001"]]']
    ]  # fmt: skip


def test_text_is_text_and_blank_text_no_value() -> None:
    assert values(pa.array(["a", " \t", "", None, "b"])) == (["a", "b"], "string")


def test_a_uuid_is_its_text() -> None:
    storage = pa.array([uuid.UUID(int=255).bytes], pa.binary(16))
    array = pa.ExtensionArray.from_storage(pa.uuid(), storage)
    assert values(array) == (["00000000-0000-0000-0000-0000000000ff"], "string")


def test_a_bool8_is_a_bool_and_another_extension_type_reads_as_what_it_stores() -> None:
    bools = pa.ExtensionArray.from_storage(pa.bool8(), pa.array([1, 0], pa.int8()))
    document = pa.ExtensionArray.from_storage(pa.json_(), pa.array(['{"a": 1}', "2"]))
    artifact = read({"b": bools, "j": document})
    assert artifact["tables"][0]["rows"] == [[True, '{"a": 1}'], [False, "2"]]


def test_a_list_struct_or_map_is_its_json_with_bytes_as_base64() -> None:
    artifact = read(
        {
            "list": pa.array([[1, None]], pa.list_(pa.int64())),
            "struct": pa.array([{"a": b"\x00\x01", "d": Decimal("1.50")}],
                               pa.struct([("a", pa.binary()), ("d", pa.decimal128(5, 2))])),
            "map": pa.array([[("k", 1), ("k", 2)]], pa.map_(pa.string(), pa.int8())),
        }
    )  # fmt: skip
    assert artifact["tables"][0]["rows"] == [['[1, null]', '{"a": "AAE=", "d": "1.50"}', '[["k", 1], ["k", 2]]']]  # fmt: skip
    assert [c["type"] for c in artifact["tables"][0]["columns"]] == ["string"] * 3


def test_a_dictionary_column_reads_as_its_values() -> None:
    assert values(pa.array(["x", "y", "x"]).dictionary_encode()) == (["x", "y", "x"], "string")


def test_bytes_are_left_out_and_counted() -> None:
    artifact = read({"n": pa.array([1, 2]), "b": pa.array([b"x", None])})
    assert artifact["tables"][0]["rows"] == [[1, None], [2, None]]
    assert failed(artifact) == [
        {"unit": "data.parquet values", "reason": "left out over the rows read: 1 bytes values"}
    ]


def test_a_value_over_a_mebibyte_of_characters_is_left_out() -> None:
    long = "x" * (reader.MAX_VALUE_CHARS + 1)
    artifact = read({"n": pa.array([1, 2]), "s": pa.array([long, "x" * reader.MAX_VALUE_CHARS])})
    assert artifact["tables"][0]["rows"][0] == [1, None]
    assert len(artifact["tables"][0]["rows"][1][1]) == reader.MAX_VALUE_CHARS
    assert failed(artifact) == [
        {
            "unit": "data.parquet values",
            "reason": "left out over the rows read: 1 values over 1,048,576 characters",
        }
    ]


# -- columns and rows ---------------------------------------------------------------------------


def test_repeated_and_empty_names_are_kept_by_position() -> None:
    table = pa.Table.from_arrays([pa.array([1]), pa.array([2]), pa.array([3])], ["x", "x", ""])
    data = parquet_bytes(table)
    artifact = validated(extract(data), data)
    assert [c["name"] for c in artifact["tables"][0]["columns"]] == ["x", "x (2)", "column 3"]
    assert artifact["tables"][0]["rows"] == [[1, 2, 3]]


def test_columns_past_16384_are_a_failed_unit() -> None:
    count = reader.MAX_COLUMNS + 2
    table = pa.Table.from_arrays([pa.array([i], pa.int16()) for i in range(count)], [f"c{i}" for i in range(count)])  # fmt: skip
    artifact = extract(parquet_bytes(table), name="wide.parquet")
    [entry] = artifact["tables"]
    assert len(entry["columns"]) == reader.MAX_COLUMNS
    assert entry["rows"] == [list(range(reader.MAX_COLUMNS))]
    assert failed(artifact) == [
        {"unit": "wide.parquet columns", "reason": "2 columns past the first 16,384"}
    ]


def test_blank_rows_are_no_rows_and_rows_keep_their_numbers() -> None:
    artifact = read(
        {
            "a": pa.array([None, "x", " ", None, "y"]),
            "b": pa.array([float("nan"), None, None, None, 2.0]),
        }
    )
    assert artifact["tables"][0]["rows"] == [["x", None], ["y", 2.0]]
    assert artifact["blocks"][0]["text"] == "a: x\na: y | b: 2"
    assert artifact["blocks"][0]["locator"] == {"row_start": 2, "row_end": 5}
    assert artifact["coverage"]["extracted"] == 5


def test_rows_are_read_a_row_group_at_a_time_and_numbered_across_them() -> None:
    artifact = read({"n": pa.array(range(1, 46))}, row_group_size=7)
    blocks = artifact["blocks"]
    assert [(b["locator"]["row_start"], b["locator"]["row_end"]) for b in blocks] == [
        (1, 20),
        (21, 40),
        (41, 45),
    ]
    assert artifact["tables"][0]["rows"] == [[n] for n in range(1, 46)]


def test_batches_hold_at_most_1024_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    sizes: list[int] = []
    original = reader.read_batch

    def spy(batch: pa.RecordBatch, *args: Any) -> bool:
        sizes.append(batch.num_rows)
        return original(batch, *args)

    monkeypatch.setattr(reader, "read_batch", spy)
    artifact = read({"n": pa.array(range(3000))}, row_group_size=3000)
    assert sizes == [1024, 1024, 952]
    assert len(artifact["tables"][0]["rows"]) == 3000


def test_a_header_with_no_rows_is_a_block_of_its_own() -> None:
    artifact = read({"name": pa.array([], pa.string()), "n": pa.array([], pa.int64())})
    assert artifact["blocks"] == [
        {
            "id": "b0",
            "type": "paragraph",
            "text": "name | n",
            "section_path": [],
            "keys": [],
            "locator": {"row_start": 0, "row_end": 0},
            "attrs": {"table_id": "t0"},
        }
    ]
    assert artifact["tables"][0]["rows"] == []
    assert artifact["coverage"]["complete"]


def test_a_file_whose_every_value_is_left_out_is_its_header_block() -> None:
    artifact = read({"blob": pa.array([b"a", b"b"])})
    assert [b["text"] for b in artifact["blocks"]] == ["blob"]
    assert artifact["coverage"]["extracted"] == 2
    assert failed(artifact)[0]["unit"] == "data.parquet values"


def test_a_schema_with_no_column_has_only_blank_rows_counted_from_its_metadata() -> None:
    # pyarrow writes such a file with no rows: the footer says three.
    data = with_row_counts(parquet_bytes(pa.table({"a": [1, 2, 3]}).drop_columns(["a"])), 3, [3])
    artifact = validated(extract(data), data)
    assert artifact["tables"] == []
    assert artifact["blocks"] == []
    assert artifact["coverage"]["total"] == artifact["coverage"]["extracted"] == 3


# -- budgets ------------------------------------------------------------------------------------


def test_rows_past_100000_are_a_failed_unit_counted_from_the_footer() -> None:
    artifact = read({"n": pa.array(range(100_005), pa.int32())})
    assert len(artifact["tables"][0]["rows"]) == 100_000
    assert artifact["coverage"]["total"] == 100_005
    assert artifact["coverage"]["extracted"] == 100_000
    assert failed(artifact) == [
        {"unit": "data.parquet rows 100001-", "reason": "past 100,000 rows a table"}
    ]


def test_rows_past_the_cell_budget_are_a_failed_unit_and_the_rows_before_are_laid_out(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(tables, "MAX_CELLS", 1_000)
    monkeypatch.setattr(reader, "MAX_CELLS", 1_000)
    artifact = read({"a": pa.array(range(600)), "b": pa.array(range(600))})
    assert len(artifact["tables"][0]["rows"]) == 500
    assert artifact["blocks"][-1]["locator"] == {"row_start": 481, "row_end": 500}
    assert artifact["coverage"]["extracted"] == 500
    assert failed(artifact) == [{"unit": "data.parquet rows 501-", "reason": "past 1,000 cells"}]


def test_rows_are_not_read_past_the_block_text_their_layout_would_stop_at(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Each row "n: 5" spends 4 + 1 + 38 + 1 = 44 characters: ten fit in 450.
    monkeypatch.setattr(tables, "MAX_BLOCK_TEXT_CHARS", 450)
    monkeypatch.setattr(reader, "MAX_BLOCK_TEXT_CHARS", 450)
    batches: list[int] = []
    original = reader.read_batch

    def spy(batch: pa.RecordBatch, *args: Any) -> bool:
        batches.append(batch.num_rows)
        return original(batch, *args)

    monkeypatch.setattr(reader, "read_batch", spy)
    artifact = read({"n": pa.array([5] * 5000)}, row_group_size=5000)
    assert artifact["tables"][0]["rows"] == [[5]] * 10
    assert artifact["coverage"]["extracted"] == 10
    assert batches == [1024]  # the batch the budget ran out in, none after it
    assert failed(artifact) == [
        {"unit": "data.parquet rows 11-", "reason": "past the table budget (laid-out rows)"}
    ]


def test_values_past_what_one_file_decodes_fail_the_rows_from_the_batch(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(reader, "MAX_DECODED_VALUES", 2_500)
    artifact = read({"n": pa.array(range(5000))}, row_group_size=5000)
    assert len(artifact["tables"][0]["rows"]) == 2048
    assert failed(artifact) == [
        {"unit": "data.parquet rows 2049-", "reason": "past what one file decodes (2,500 values)"}
    ]  # fmt: skip


def test_every_element_of_a_list_is_charged_before_it_is_read(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(reader, "MAX_DECODED_VALUES", 10_000)
    artifact = read({"l": pa.array([list(range(100))] * 200)})
    assert artifact["tables"][0]["rows"] == []
    assert failed(artifact)[0]["unit"] == "data.parquet rows 1-"


# -- hostile files ------------------------------------------------------------------------------


def test_a_footer_declaring_2_63_rows_or_more_is_refused_as_corrupt() -> None:
    data = parquet_bytes(pa.table({"a": range(100)}), row_group_size=50)
    lying = with_row_counts(data, 2**63 - 1, [2**62, 2**62])
    with pytest.raises(ExtractError) as refused:
        extract(lying)
    assert refused.value.code == "corrupt"
    assert "9,223,372,036,854,775,808 rows" in refused.value.message


def test_a_footer_declaring_more_rows_than_the_pages_hold_fails_the_rows_from_there() -> None:
    data = parquet_bytes(pa.table({"a": range(100)}), row_group_size=50)
    lying = with_row_counts(data, 130, [50, 80])
    artifact = validated(extract(lying), lying)
    assert len(artifact["tables"][0]["rows"]) == 100
    assert artifact["coverage"]["total"] == 130
    assert artifact["coverage"]["extracted"] == 100
    assert failed(artifact) == [
        {
            "unit": "data.parquet rows 101-",
            "reason": "the row group holds 50 rows where its footer declares 80",
        }
    ]


def test_a_footer_declaring_fewer_rows_than_the_pages_hold_fails_that_row_group() -> None:
    data = parquet_bytes(pa.table({"a": range(100)}), row_group_size=50)
    lying = with_row_counts(data, 80, [50, 30])
    artifact = validated(extract(lying), lying)
    assert artifact["tables"][0]["rows"] == [[n] for n in range(50)]
    assert failed(artifact) == [
        {
            "unit": "data.parquet rows 51-",
            "reason": "the row group holds 50 rows where its footer declares 30",
        }
    ]


def test_a_row_count_below_zero_is_none() -> None:
    data = parquet_bytes(pa.table({"a": range(100)}), row_group_size=50)
    lying = with_row_counts(data, 50, [-5, 50])
    artifact = validated(extract(lying), lying)
    assert artifact["tables"][0]["rows"] == [[n] for n in range(50, 100)]
    assert artifact["coverage"]["total"] == 50
    assert artifact["blocks"][0]["locator"] == {"row_start": 1, "row_end": 20}


def test_20000_values_python_cannot_hold_are_left_out_without_failing_the_file() -> None:
    count = 20_000
    table = pa.table(
        {
            "id": pa.array(range(count), pa.int32()),
            "day": pa.array([2**30 + i for i in range(count)], pa.int32()).cast(pa.date32()),
            "moment": pa.array([2**62] * count, pa.int64()).cast(pa.timestamp("us")),
            "zoned": pa.array([-(2**62)] * count, pa.int64()).cast(pa.timestamp("us", tz="UTC")),
            "clock": pa.array([10**11] * count, pa.int64()).cast(pa.time64("us")),
        }
    )
    data = parquet_bytes(table)
    started = time.monotonic()
    artifact = validated(extract(data, name="far.parquet"), data)
    assert time.monotonic() - started < 10
    assert artifact["tables"][0]["rows"][:2] == [[0, None, None, None, None], [1, None, None, None, None]]  # fmt: skip
    assert len(artifact["tables"][0]["rows"]) == count
    # 16 a column are found by halving its first batch, the rest of the column left unread; a
    # time outside the day is found on its integer, with no conversion to fail: each is counted.
    assert failed(artifact) == [
        {
            "unit": "far.parquet values",
            "reason": "left out over the rows read: 20,048 values Python cannot hold,"
            " 59,952 values left unread past 16 Python cannot hold in their column",
        }
    ]
    assert artifact["coverage"]["extracted"] == count


def test_a_duration_of_any_length_is_written() -> None:
    assert values(pa.array([2**62, -(2**62)], pa.duration("s"))) == (
        ["1281023894007607:45:04", "-1281023894007607:45:04"],
        "duration",
    )


def test_a_time_outside_the_day_is_one_python_cannot_hold() -> None:
    artifact = read({"t": pa.array([86_400_000_000, 1], pa.time64("us"))})
    assert artifact["tables"][0]["rows"] == [["00:00:00.000001"]]
    assert failed(artifact) == [
        {"unit": "data.parquet values", "reason": "left out over the rows read: 1 values Python cannot hold"}
    ]  # fmt: skip


def test_a_timestamp_past_year_9999_in_its_zone_is_one_python_cannot_hold() -> None:
    # 9999-12-31T23:30Z is in year 10000 in Paris.
    moments = pa.array([253402299000000000, 0], pa.timestamp("us", tz="Europe/Paris"))
    artifact = read({"t": moments})
    assert artifact["tables"][0]["rows"] == [["1970-01-01T01:00:00+01:00"]]
    assert failed(artifact) == [
        {"unit": "data.parquet values", "reason": "left out over the rows read: 1 values Python cannot hold"}
    ]  # fmt: skip


def test_zone_offsets_are_written_as_python_writes_them() -> None:
    # Paris kept its local mean time (+00:09:21) before 1891.
    moments = pa.array([-5_364_662_400_000_000, 1_709_287_200_000_001], pa.timestamp("us", tz="Europe/Paris"))  # fmt: skip
    assert values(moments)[0] == [
        datetime.fromtimestamp(-5_364_662_400, ZoneInfo("Europe/Paris")).isoformat(),
        "2024-03-01T11:00:00.000001+01:00",
    ]  # fmt: skip


def test_only_the_value_python_cannot_hold_is_left_out_of_its_batch() -> None:
    days = pa.array([1, 2**30, 3], pa.int32()).cast(pa.date32())
    artifact = read({"d": days})
    assert artifact["tables"][0]["rows"] == [["1970-01-02"], ["1970-01-04"]]
    assert failed(artifact) == [
        {"unit": "data.parquet values", "reason": "left out over the rows read: 1 values Python cannot hold"}
    ]  # fmt: skip


def test_a_truncated_file_is_no_parquet_and_one_cut_back_to_its_magic_is_corrupt() -> None:
    data = parquet_bytes(pa.table({"a": range(1000)}))
    truncated = data[: len(data) // 2]
    with pytest.raises(ExtractError) as refused:
        extract_source(truncated, "parquet", "cut.parquet", {})
    assert refused.value.code == "format_mismatch"
    assert refused.value.message == "the file is not parquet (no PAR1 magic at its start and end)"
    with pytest.raises(ExtractError) as refused:
        extract_source(truncated + b"PAR1", "parquet", "cut.parquet", {})
    assert refused.value.code == "corrupt"
    assert refused.value.message.startswith("the Parquet footer cannot be read:")


def test_a_file_with_par1_at_both_ends_that_is_no_parquet_is_corrupt() -> None:
    with pytest.raises(ExtractError) as refused:
        extract_source(b"PAR1" + b"not a parquet file at all" * 4 + b"PAR1", "parquet", "x.parquet", {})  # fmt: skip
    assert refused.value.code == "corrupt"
    assert refused.value.message.startswith("the Parquet footer cannot be read:")


def test_a_row_group_whose_pages_do_not_decode_fails_the_rows_from_there() -> None:
    table = pa.table({"a": pa.array([f"value {n}" for n in range(200)])})
    data = bytearray(parquet_bytes(table, row_group_size=100, compression="snappy"))
    second = pq.ParquetFile(pa.BufferReader(bytes(data))).metadata.row_group(1).column(0)
    start = second.data_page_offset
    data[start + 20 : start + 60] = b"\xff" * 40  # the second row group's page, garbled
    damaged = bytes(data)
    artifact = validated(extract(damaged), damaged)
    assert artifact["tables"][0]["rows"] == [[f"value {n}"] for n in range(100)]
    [unit] = failed(artifact)
    assert unit["unit"] == "data.parquet rows 101-"
    assert unit["reason"].startswith("the row group does not decode:")


# -- through a real confined child and a real service ----------------------------------------


def test_a_parquet_file_through_a_confined_child() -> None:
    data = parquet_bytes(
        pa.table({"n": pa.array(range(3000)), "when": pa.array([1_000_000] * 3000, pa.timestamp("ns", tz="UTC"))}),
        row_group_size=1000,
    )  # fmt: skip
    artifact = json.loads(run_extraction(data, "parquet", "child.parquet", {}, CHILD_LIMITS))
    validated(artifact, data)
    assert artifact["coverage"]["complete"]
    assert artifact["tables"][0]["rows"][2999] == [2999, "1970-01-01T00:00:00.001000+00:00"]


def test_a_hostile_parquet_file_through_a_confined_child() -> None:
    data = parquet_bytes(pa.table({"a": range(100)}), row_group_size=50)
    with pytest.raises(ExtractError) as refused:
        run_extraction(with_row_counts(data, 2**63 - 1, [2**62, 2**62]), "parquet", "x.parquet", {}, CHILD_LIMITS)  # fmt: skip
    assert refused.value.code == "corrupt"


def test_a_parquet_file_through_the_service(extractor: Service) -> None:
    data = parquet_bytes(pa.table({"city": ["Oslo", "Lima"], "pop": [709_000, 10_000_000]}))
    with httpx.Client(headers={"Authorization": f"Bearer {extractor.token}"}, timeout=60) as http:
        capabilities = http.get(f"{extractor.url}/v1/capabilities").json()
        answer = http.post(
            f"{extractor.url}/v1/extract",
            params={"format": "parquet", "name": "cities.parquet"},
            content=data,
        )
    assert {"format": "parquet", "options": []} in [
        {"format": f["format"], "options": f["options"]} for f in capabilities["formats"]
    ]
    assert answer.status_code == 200, answer.text
    artifact = validated(answer.json(), data)
    assert artifact["tables"][0]["rows"] == [["Oslo", 709_000], ["Lima", 10_000_000]]
    assert artifact["blocks"][0]["text"] == "city: Oslo | pop: 709000\ncity: Lima | pop: 10000000"
