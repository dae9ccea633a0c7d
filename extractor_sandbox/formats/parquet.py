"""Parquet: one typed table (tables[0], id t0, named after the file) and its rows as row blocks.

pyarrow reads the file from the bytes in memory (no file system, no pre-buffering, no threads,
the system memory pool). The columns are the schema's, the first 16,384 kept by position (a name
may repeat; the rest are a failed unit, <name> columns); the names are no row of the file, so the
table has no header row (header_rows 0) and its rows count from 1, numbered by the footer.

Rows are read a row group at a time, in batches of at most 1,024 rows and no more values than the
cell budget holds (counted by leaf columns). How a column is read is decided once from its type:

- an integer is a number; a uint64 and a decimal are their exact digits, as text ("12.345");
- a float is a number, a top-level float32 or float16 its shortest decimal in its own type; a NaN
  is no value, as a null is; an infinity is left out (so a float column stays a number);
- a bool, a date, a timestamp (its zone kept), a time of day and a duration read as the other
  readers write them (tables.py), a nanosecond unit to the microsecond (nested ones too);
- text is text (blank text no value), a UUID its text, a list, struct or map its JSON (a map as
  [key, value] pairs, bytes in it as base64); another extension type reads as what it stores;
- bytes, a value over 1,048,576 characters and a value Python cannot hold (a date past year 9999)
  are left out and counted (<name> values). A batch with a value Python cannot hold is split in
  halves until each part converts; past 16 of them in a column the rest of it is left out unread.

A row of nulls, NaNs or blank text is no row. A row group of no rows is passed over; a row count
below zero is none; row groups declaring 2^63 rows or more are refused (corrupt). Before a batch
is read into Python it is charged against four million values and 256 MiB decoded (and 100,000
row groups read): past them, or past the table budget (tables.Budget), or at a row group that does
not decode or holds fewer rows than its footer declares, the rows from there are one failed unit
(<name> rows N-), counted from the footer and never decoded.
"""

from __future__ import annotations

import base64
import json
import math
import struct
import uuid
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime, time, timedelta
from decimal import Decimal
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from extractor_sandbox.artifact import build_artifact, coverage
from extractor_sandbox.contract import Artifact, Coverage
from extractor_sandbox.errors import ExtractError
from extractor_sandbox.formats.tables import (
    MAX_BLOCK_TEXT_CHARS,
    MAX_CELLS,
    Budget,
    Cell,
    date_cell,
    datetime_cell,
    duration_cell,
    duration_text,
    exact_number_cell,
    fit_names,
    layout_rows,
    number_cell,
    row_line,
    row_text_spend,
    string_cell,
    table_entry,
    unique_names,
)

PARSER = "loom-parquet"
PARSER_VERSION = f"1+pyarrow{pa.__version__}"

MAX_COLUMNS = 16_384
MAX_BATCH_ROWS = 1_024
MAX_VALUE_CHARS = 1_048_576
MAX_UNHOLDABLE = 16  # values Python cannot hold, a column, before the rest of it is left unread
MAX_DECODED_VALUES = 4_000_000
MAX_DECODED_BYTES = 256 * 1024 * 1024
MAX_ROW_GROUPS = 100_000
MAX_DECLARED_ROWS = 2**63

# Why a value is left out, as the failed unit <name> values counts it.
BYTES = "bytes values"
INFINITY = "infinities"
TOO_LONG = "values over 1,048,576 characters"
UNHOLDABLE = "values Python cannot hold"
UNREAD = "values left unread past 16 Python cannot hold in their column"
UNREADABLE = "values no rule reads"
CAUSES = (BYTES, INFINITY, TOO_LONG, UNHOLDABLE, UNREAD, UNREADABLE)

# A converted value, or why it is left out.
Converted = Cell | str | None
# A batch of a column's Python values read as cells, what is left out counted by its cause.
Convert = Callable[[list[Any], Counter[str]], list[Cell | None]]


@dataclass(frozen=True)
class ColumnReader:
    """How one column is read, decided once from its type.

    `prepare` makes an Arrow array of the column ready to convert (vectorized: a dictionary
    decoded, nanoseconds cut to microseconds, a float32 written as its shortest decimal);
    `convert` reads a batch of its Python values (None for no value), counting what it leaves
    out. A bytes column is never converted (`unread_cause`).
    """

    prepare: Callable[[pa.Array], pa.Array]
    convert: Convert
    unread_cause: str | None = None


@dataclass
class ColumnState:
    """What a column has met across the file: the values Python could not hold."""

    unholdable: int = 0
    left_unread: bool = False


@dataclass
class Reading:
    """The rows read so far, what was left out, and why reading stopped (if it did)."""

    names: Sequence[str] = ()
    rows: list[list[Cell | None]] = field(default_factory=list)
    numbers: list[int] = field(default_factory=list)
    rows_read: int = 0  # rows read to the end, blank ones included, by the footer's numbering
    left_out: Counter[str] = field(default_factory=Counter)
    decoded_values: int = 0
    decoded_bytes: int = 0
    stop: tuple[int, str] | None = None  # (first row not read, why)
    text_spend: int = 0  # what laying the rows out will spend of the block text budget


def extract_parquet(data: bytes, options: Mapping[str, str], *, name: str) -> Artifact:
    # The system allocator, which the child's address-space limit allows for (the child also
    # starts pyarrow before it is confined: see child.PREPARE).
    pa.set_memory_pool(pa.system_memory_pool())
    parquet_file = open_parquet(data)
    declared = declared_rows(parquet_file.metadata)
    table_name = name or "table"
    fields, names, failed = kept_columns(parquet_file.schema_arrow, table_name)
    if not fields:  # no column: only blank rows, counted from the metadata
        artifact = parquet_artifact([], coverage("rows", sum(declared), sum(declared), failed))
        artifact["tables"] = []
        return artifact
    budget = Budget()
    reading = read_rows(parquet_file, fields, names, declared, budget)
    layout = layout_rows("t0", names, reading.rows, reading.numbers, budget, header_rows=0)
    if layout.failed:
        reading.rows_read = reading.numbers[layout.rows_laid] - 1
        reading.rows = reading.rows[: layout.rows_laid]
        reading.stop = (reading.rows_read + 1, "past the table budget (laid-out rows)")
    failed += reading_failures(reading, table_name)
    artifact = parquet_artifact(
        layout.blocks, coverage("rows", sum(declared), reading.rows_read, failed)
    )
    span = [1, reading.rows_read] if reading.rows_read else [0, 0]
    locator = {"row_start": span[0], "row_end": span[1]}
    artifact["tables"] = [
        table_entry("t0", name, names, reading.rows, header_rows=0, locator=locator)
    ]
    return artifact


def parquet_artifact(blocks: list[dict[str, Any]], covered: Coverage) -> Artifact:
    return build_artifact("parquet", PARSER, PARSER_VERSION, blocks, covered)


def kept_columns(
    schema: pa.Schema, table_name: str
) -> tuple[list[pa.Field], list[str], list[dict[str, str]]]:
    """The first 16,384 fields by position, their column names, and the failed units naming the
    rest and a name cut to 500 characters."""
    fields = [schema.field(index) for index in range(min(len(schema), MAX_COLUMNS))]
    names, failed = fit_names([column.name for column in fields], table_name)
    if len(schema) > MAX_COLUMNS:
        failed.append(
            {
                "unit": f"{table_name} columns",
                "reason": f"{len(schema) - MAX_COLUMNS:,} columns past the first 16,384",
            }
        )
    return fields, unique_names(names), failed


def reading_failures(reading: Reading, table_name: str) -> list[dict[str, str]]:
    """The values left out (<name> values) and the rows from where reading stopped."""
    failed = []
    if reading.left_out:
        failed.append({"unit": f"{table_name} values", "reason": left_out_reason(reading)})
    if reading.stop is not None:
        first, why = reading.stop
        failed.append({"unit": f"{table_name} rows {first}-", "reason": why})
    return failed


# The file and its footer


def open_parquet(data: bytes) -> pq.ParquetFile:
    """The file read from the bytes in memory; corrupt when its footer cannot be read."""
    try:
        return pq.ParquetFile(
            pa.BufferReader(pa.py_buffer(data)),
            pre_buffer=False,
            coerce_int96_timestamp_unit="us",
            arrow_extensions_enabled=True,
        )
    except (pa.ArrowException, OSError, ValueError, TypeError, OverflowError) as error:
        raise ExtractError("corrupt", f"the Parquet footer cannot be read: {error}") from None


def declared_rows(metadata: pq.FileMetaData) -> list[int]:
    """Each row group's rows as its footer declares them (below zero is none).

    Refuses the file (corrupt) when they add up to 2^63 rows or more.
    """
    counts = [
        max(0, metadata.row_group(index).num_rows) for index in range(metadata.num_row_groups)
    ]
    if sum(counts) >= MAX_DECLARED_ROWS:
        raise ExtractError(
            "corrupt", f"the footer's row groups declare {sum(counts):,} rows, past 2^63 - 1"
        )
    return counts


def leaf_count(data_type: pa.DataType) -> int:
    """The Parquet leaf columns a field of this type is stored in (a struct's fields each one)."""
    if isinstance(data_type, pa.BaseExtensionType):
        return leaf_count(data_type.storage_type)
    if pa.types.is_struct(data_type):
        return sum(leaf_count(data_type.field(i).type) for i in range(data_type.num_fields))
    if pa.types.is_map(data_type):
        return leaf_count(data_type.key_type) + leaf_count(data_type.item_type)
    if _is_list(data_type):
        return leaf_count(data_type.value_type)
    return 1


def _is_list(data_type: pa.DataType) -> bool:
    return bool(
        pa.types.is_list(data_type)
        or pa.types.is_large_list(data_type)
        or pa.types.is_fixed_size_list(data_type)
        or pa.types.is_list_view(data_type)
        or pa.types.is_large_list_view(data_type)
    )


# Reading the rows


def read_rows(
    parquet_file: pq.ParquetFile,
    fields: Sequence[pa.Field],
    names: Sequence[str],
    declared: Sequence[int],
    budget: Budget,
) -> Reading:
    readers = [reader_for(column.type) for column in fields]
    states = [ColumnState() for _ in fields]
    leaves = sum(leaf_count(column.type) for column in fields)
    all_columns = len(fields) == len(parquet_file.schema_arrow)
    column_indices = None if all_columns else list(range(leaves))
    flat_leaf = first_flat_leaf(parquet_file.metadata, leaves)
    reading = Reading(names=names)
    first_row = 0  # rows before this row group, by the footer
    for group, group_rows in enumerate(declared):
        if reading.stop is not None:
            break
        if group_rows == 0:
            continue
        if group >= MAX_ROW_GROUPS:
            reading.stop = (
                first_row + 1,
                f"past what one file decodes ({MAX_ROW_GROUPS:,} row groups)",
            )
            break
        stored = stored_rows(parquet_file.metadata, group, flat_leaf)
        if stored is not None and stored > group_rows:
            reading.stop = (
                first_row + 1,
                f"the row group holds {stored:,} rows where its footer declares {group_rows:,}",
            )
            break
        batch_rows = min(MAX_BATCH_ROWS, max(1, (MAX_CELLS - budget.cells) // max(1, leaves)))
        batches = parquet_file.reader.iter_batches(
            batch_rows, [group], column_indices=column_indices, use_threads=False
        )
        got = read_row_group(batches, group_rows, first_row, readers, states, budget, reading)
        if reading.stop is None and got != group_rows:
            reading.stop = (
                first_row + got + 1,
                f"the row group holds {got:,} rows where its footer declares {group_rows:,}",
            )
        first_row += group_rows
    return reading


def first_flat_leaf(metadata: pq.FileMetaData, leaves: int) -> int | None:
    """The first leaf column read that is not repeated: its values are the row group's rows."""
    schema = metadata.schema
    for index in range(min(leaves, len(schema))):
        if schema.column(index).max_repetition_level == 0:
            return index
    return None


def stored_rows(metadata: pq.FileMetaData, group: int, flat_leaf: int | None) -> int | None:
    """The rows a row group's pages hold, by its first unrepeated column chunk (None: unknown).

    Decoding finds a row group holding fewer rows than its footer declares; this finds one
    holding more, which decoding the declared rows would not notice."""
    if flat_leaf is None:
        return None
    try:
        return int(metadata.row_group(group).column(flat_leaf).num_values)
    except (pa.ArrowException, IndexError, ValueError, OverflowError):
        return None  # a footer that cannot say: decoding will


def read_row_group(
    batches: Iterator[pa.RecordBatch],
    group_rows: int,
    first_row: int,
    readers: Sequence[ColumnReader],
    states: Sequence[ColumnState],
    budget: Budget,
    reading: Reading,
) -> int:
    """Read one row group's batches into `reading`; the rows it delivered."""
    got = 0
    while True:
        try:
            batch = next(batches)
        except StopIteration:
            return got
        except (pa.ArrowException, OSError, ValueError, OverflowError) as error:
            reading.stop = (first_row + got + 1, f"the row group does not decode: {error}")
            return got
        if got + batch.num_rows > group_rows:
            batch = batch.slice(0, group_rows - got)
        why = charge_decoded(batch, reading)
        if why is not None:
            reading.stop = (first_row + got + 1, why)
            return got
        if not read_batch(batch, first_row + got, readers, states, budget, reading):
            return got
        got += batch.num_rows
        reading.rows_read = first_row + got
        if got >= group_rows:
            return got


def charge_decoded(batch: pa.RecordBatch, reading: Reading) -> str | None:
    """Charge a decoded batch before it is read into Python; why it does not fit, or None."""
    reading.decoded_values += sum(decoded_values(column) for column in batch.columns)
    reading.decoded_bytes += batch.get_total_buffer_size()
    if reading.decoded_values > MAX_DECODED_VALUES:
        return f"past what one file decodes ({MAX_DECODED_VALUES:,} values)"
    if reading.decoded_bytes > MAX_DECODED_BYTES:
        return f"past what one file decodes ({MAX_DECODED_BYTES // 2**20:,} MiB)"
    return None


def decoded_values(array: pa.Array) -> int:
    """At least a value a row, and every element of a list, struct or map down to its leaves."""
    data_type = array.type
    if isinstance(data_type, pa.BaseExtensionType):
        return decoded_values(array.storage)
    if pa.types.is_struct(data_type):
        children = sum(decoded_values(array.field(i)) for i in range(data_type.num_fields))
        return max(len(array), children)
    if pa.types.is_map(data_type):
        return max(len(array), decoded_values(array.keys) + decoded_values(array.items))
    if _is_list(data_type) and not (
        pa.types.is_list_view(data_type) or pa.types.is_large_list_view(data_type)
    ):
        return max(len(array), decoded_values(array.flatten()))
    if _is_list(data_type):
        return max(len(array), int(pc.sum(pc.list_value_length(array)).as_py() or 0))
    return len(array)


def read_batch(
    batch: pa.RecordBatch,
    rows_before: int,
    readers: Sequence[ColumnReader],
    states: Sequence[ColumnState],
    budget: Budget,
    reading: Reading,
) -> bool:
    """Add a batch's rows with a value; False when the table budget stopped it."""
    columns = [
        column_cells(batch.column(index), readers[index], states[index], reading.left_out)
        for index in range(batch.num_columns)
    ]
    for offset, row in enumerate(zip(*columns, strict=True)):
        if all(cell is None for cell in row):
            continue
        number = rows_before + offset + 1
        why = admit(row, budget, reading)
        if why is not None:
            reading.stop = (number, why)
            reading.rows_read = number - 1
            return False
        reading.rows.append(list(row))
        reading.numbers.append(number)
    return True


def admit(row: Sequence[Cell | None], budget: Budget, reading: Reading) -> str | None:
    """Charge a row to the table budget; why it does not fit, or None.

    The block text it will spend is charged here too, so the rows are not read past the point
    laying them out would stop at (layout_rows charges it again, exactly)."""
    spend = row_text_spend(row_line(reading.names, row))
    if budget.block_chars + reading.text_spend + spend > MAX_BLOCK_TEXT_CHARS:
        return "past the table budget (laid-out rows)"
    why = budget.admit_row(row, len(reading.rows))
    if why is None:
        reading.text_spend += spend
    return why


def column_cells(
    array: pa.Array, reader: ColumnReader, state: ColumnState, left_out: Counter[str]
) -> list[Cell | None]:
    """A batch's column as cells; what is left out counted by its cause."""
    if reader.unread_cause is not None or state.left_unread:
        left_out[reader.unread_cause or UNREAD] += len(array) - array.null_count
        return [None] * len(array)
    try:
        prepared = reader.prepare(array)
    except (pa.ArrowException, ValueError, TypeError):
        prepared = array
    return reader.convert(python_values(prepared, state, left_out), left_out)


def python_values(array: pa.Array, state: ColumnState, left_out: Counter[str]) -> list[Any]:
    """The array's values in Python; a part that does not convert is split in halves until only
    the values Python cannot hold are left out, as None, and counted (past 16 in a column, the
    rest of it is left unread)."""
    if state.left_unread or state.unholdable >= MAX_UNHOLDABLE:
        state.left_unread = True
        left_out[UNREAD] += len(array) - array.null_count
        return [None] * len(array)
    try:
        return list(array.to_pylist())
    except (OverflowError, ValueError, pa.ArrowException, TypeError, KeyError):
        if len(array) == 1:
            state.unholdable += 1
            left_out[UNHOLDABLE] += 1
            return [None]
    half = len(array) // 2
    return python_values(array.slice(0, half), state, left_out) + python_values(
        array.slice(half), state, left_out
    )


def left_out_reason(reading: Reading) -> str:
    parts = [f"{reading.left_out[cause]:,} {cause}" for cause in CAUSES if reading.left_out[cause]]
    return "left out over the rows read: " + ", ".join(parts)


# How each type is read


def reader_for(data_type: pa.DataType) -> ColumnReader:
    """The reader of a top-level column of this type."""
    if pa.types.is_dictionary(data_type):
        inner = reader_for(data_type.value_type)
        return ColumnReader(_decoded_then(inner.prepare), inner.convert, inner.unread_cause)
    if isinstance(data_type, pa.BaseExtensionType):
        return extension_reader(data_type)
    for test, reader in _SCALAR_READERS:
        if test(data_type):
            return reader
    if pa.types.is_timestamp(data_type):
        return ColumnReader(iso_timestamps, each(_datetime_cell))
    if pa.types.is_time(data_type):
        return ColumnReader(time_microseconds, each(_time_cell))
    if pa.types.is_duration(data_type):
        return ColumnReader(_duration_integers, each(duration_of(data_type.unit)))
    return ColumnReader(_to_microseconds, each(json_cell))  # lists, structs, maps, unions, ...


def extension_reader(data_type: pa.BaseExtensionType) -> ColumnReader:
    """A UUID is its text and a bool8 a bool; another extension type reads as what it stores."""
    if data_type.extension_name == "arrow.uuid":
        return ColumnReader(_storage_then(_unchanged), each(_uuid_cell))
    if data_type.extension_name == "arrow.bool8":
        return ColumnReader(_unchanged, _bools)
    inner = reader_for(data_type.storage_type)
    return ColumnReader(_storage_then(inner.prepare), inner.convert, inner.unread_cause)


def each(cell: Callable[[Any], Converted]) -> Convert:
    """A batch read a value at a time by `cell`; a value it fails on is one no rule reads."""

    def convert(values: list[Any], left_out: Counter[str]) -> list[Cell | None]:
        cells: list[Cell | None] = []
        for value in values:
            if value is None:
                cells.append(None)
                continue
            try:
                converted = cell(value)
            except (ValueError, TypeError, OverflowError, RecursionError):
                converted = UNREADABLE
            if isinstance(converted, str):
                left_out[converted] += 1
                cells.append(None)
            else:
                cells.append(converted)
        return cells

    return convert


def _nothing(values: list[Any], left_out: Counter[str]) -> list[Cell | None]:
    return [None] * len(values)


def _integers(values: list[Any], left_out: Counter[str]) -> list[Cell | None]:
    """Integers of at most 64 bits, signed, or 32 unsigned: JSON numbers."""
    return [None if value is None else Cell(value, "number", str(value)) for value in values]


def _exact_integers(values: list[Any], left_out: Counter[str]) -> list[Cell | None]:
    """uint64: every value its exact digits, so the column reads alike past 2^63 and under."""
    return [None if value is None else exact_number_cell(str(value)) for value in values]


def _bools(values: list[Any], left_out: Counter[str]) -> list[Cell | None]:
    return [None if value is None else number_cell(bool(value)) for value in values]


def _dates(values: list[Any], left_out: Counter[str]) -> list[Cell | None]:
    return [None if value is None else date_cell(value) for value in values]


def _uuid_cell(value: bytes) -> Converted:
    return string_cell(str(uuid.UUID(bytes=value)))


def _unchanged(array: pa.Array) -> pa.Array:
    return array


def _decoded_then(prepare: Callable[[pa.Array], pa.Array]) -> Callable[[pa.Array], pa.Array]:
    def decoded(array: pa.Array) -> pa.Array:
        return prepare(array.dictionary_decode())

    return decoded


def _storage_then(prepare: Callable[[pa.Array], pa.Array]) -> Callable[[pa.Array], pa.Array]:
    def stored(array: pa.Array) -> pa.Array:
        return prepare(array.storage)

    return stored


def _is_bytes(data_type: pa.DataType) -> bool:
    return bool(
        pa.types.is_binary(data_type)
        or pa.types.is_large_binary(data_type)
        or pa.types.is_fixed_size_binary(data_type)
        or pa.types.is_binary_view(data_type)
    )


def _is_text(data_type: pa.DataType) -> bool:
    return bool(
        pa.types.is_string(data_type)
        or pa.types.is_large_string(data_type)
        or pa.types.is_string_view(data_type)
    )


def _decimal_cell(value: Decimal) -> Converted:
    return exact_number_cell(format(value, "f"))


def _double_cell(value: float) -> Converted:
    if math.isnan(value):
        return None
    return number_cell(value) or INFINITY


def _shortest_float32_text(array: pa.Array) -> pa.Array:
    """A float32 column as the shortest decimal of each value in its own type (Arrow's cast)."""
    return pc.cast(array, pa.string())


def _float32_cell(text: str) -> Converted:
    return _double_cell(float(text))


def _float16_cell(value: float) -> Converted:
    if math.isnan(value):
        return None
    if math.isinf(value):
        return INFINITY
    return number_cell(float(shortest_half_text(value)))


def shortest_half_text(value: float) -> str:
    """The shortest decimal that reads back as the same float16."""
    half = struct.pack("<e", value)
    for digits in range(1, 6):
        text = format(value, f".{digits}g")
        try:
            if struct.pack("<e", float(text)) == half:
                return text
        except OverflowError:  # rounded past float16's largest (65504 to 7e+04)
            continue
    return repr(value)


def _text_cell(value: str) -> Converted:
    if not value.strip():
        return None
    if len(value) > MAX_VALUE_CHARS:
        return TOO_LONG
    return string_cell(value)


def _datetime_cell(value: str | datetime) -> Converted:
    if isinstance(value, str):  # already its ISO text (iso_timestamps)
        return Cell(value, "datetime", value)
    return datetime_cell(value)


# Timestamps written by Arrow, as Python's isoformat writes them. A batch with a value Python
# cannot hold (a year outside 1-9999, in UTC or in its zone) is read value by value instead, so
# the value is left out as one Python cannot hold, as any other type's would be.

_MICROS_A_DAY = 86_400_000_000
_YEAR_FIRST, _YEAR_LAST = 1, 9999


def iso_timestamps(array: pa.Array) -> pa.Array:
    """Timestamps as ISO text to the microsecond, with their zone's offset when they have one."""
    zone = array.type.tz
    micros = pc.cast(_to_microseconds(array), pa.timestamp("us", tz=zone))  # s and ms: exact
    local = pc.local_timestamp(micros) if zone else micros
    if not (_years_held(micros) and _years_held(local)):
        return micros
    text = pc.replace_substring(
        pc.strftime(local, format="%Y-%m-%dT%H:%M:%S", locale="C"), ".000000", ""
    )
    if not zone:
        return text
    offsets = pc.subtract(local.cast(pa.int64()), micros.cast(pa.int64()))
    return pc.binary_join_element_wise(text, _offset_texts(offsets), "")


def _years_held(moments: pa.Array) -> bool:
    """Whether every year of these timestamps is one Python holds (1 to 9999)."""
    years = pc.min_max(pc.year(moments))
    low, high = years["min"].as_py(), years["max"].as_py()
    return low is None or (_YEAR_FIRST <= low and high <= _YEAR_LAST)


def _offset_texts(offsets: pa.Array) -> pa.Array:
    """Each offset (microseconds east of UTC) as isoformat writes it: +02:00, +00:09:21."""
    distinct = pc.unique(offsets)
    texts = pa.array([_offset_text(offset) for offset in distinct.to_pylist()], pa.string())
    return pc.take(texts, pc.index_in(offsets, distinct))


def _offset_text(offset: int | None) -> str | None:
    if offset is None:
        return None
    sign = "-" if offset < 0 else "+"
    seconds = abs(offset) // 1_000_000
    hours, rest = divmod(seconds, 3600)
    minutes, second = divmod(rest, 60)
    return f"{sign}{hours:02d}:{minutes:02d}" + (f":{second:02d}" if second else "")


def time_microseconds(array: pa.Array) -> pa.Array:
    """Times of day as microseconds since midnight (a nanosecond unit cut to the microsecond)."""
    return pc.cast(array, pa.time64("us"), safe=False).cast(pa.int64())


def _time_cell(micros: int) -> Converted:
    """A time of day as ISO text (10:30:00, 01:02:03.000250); one outside the day, which Arrow
    would wrap into it, is one Python cannot hold."""
    if not 0 <= micros < _MICROS_A_DAY:
        return UNHOLDABLE
    seconds, fraction = divmod(micros, 1_000_000)
    minutes, second = divmod(seconds, 60)
    hour, minute = divmod(minutes, 60)
    text = f"{hour:02d}:{minute:02d}:{second:02d}" + (f".{fraction:06d}" if fraction else "")
    return Cell(text, "time", text)


def _duration_integers(array: pa.Array) -> pa.Array:
    return array.cast(pa.int64())


_UNIT_MICROS = {"s": 1_000_000, "ms": 1_000, "us": 1, "ns": 1}


def duration_of(unit: str) -> Callable[[int], Converted]:
    """A duration's cell from its count of `unit`s, H:MM:SS (a nanosecond unit to the
    microsecond, towards zero); a count of any size is written, none is left out."""
    factor = _UNIT_MICROS[unit]

    def cell(count: int) -> Converted:
        if unit == "ns":
            return duration_cell(-(-count // 1_000) if count < 0 else count // 1_000)
        return duration_cell(count * factor)

    return cell


_SCALAR_READERS: tuple[tuple[Callable[[pa.DataType], bool], ColumnReader], ...] = (
    (pa.types.is_null, ColumnReader(_unchanged, _nothing)),
    (pa.types.is_boolean, ColumnReader(_unchanged, _bools)),
    (pa.types.is_uint64, ColumnReader(_unchanged, _exact_integers)),
    (pa.types.is_integer, ColumnReader(_unchanged, _integers)),
    (pa.types.is_float16, ColumnReader(_unchanged, each(_float16_cell))),
    (pa.types.is_float32, ColumnReader(_shortest_float32_text, each(_float32_cell))),
    (pa.types.is_float64, ColumnReader(_unchanged, each(_double_cell))),
    (pa.types.is_decimal, ColumnReader(_unchanged, each(_decimal_cell))),
    (_is_text, ColumnReader(_unchanged, each(_text_cell))),
    (_is_bytes, ColumnReader(_unchanged, _nothing, unread_cause=BYTES)),
    (pa.types.is_date, ColumnReader(_unchanged, _dates)),
)


# Nanoseconds to the microsecond


def _to_microseconds(array: pa.Array) -> pa.Array:
    """The array with every nanosecond unit in it (nested too, not in a list view) cut to
    microseconds; unchanged when it holds none."""
    target = microsecond_type(array.type)
    if target == array.type:
        return array
    return pc.cast(array, target, safe=False)


def microsecond_type(data_type: pa.DataType) -> pa.DataType:
    if pa.types.is_timestamp(data_type) and data_type.unit == "ns":
        return pa.timestamp("us", tz=data_type.tz)
    if pa.types.is_time64(data_type) and data_type.unit == "ns":
        return pa.time64("us")
    if pa.types.is_duration(data_type) and data_type.unit == "ns":
        return pa.duration("us")
    if pa.types.is_struct(data_type):
        return pa.struct(
            [
                data_type.field(i).with_type(microsecond_type(data_type.field(i).type))
                for i in range(data_type.num_fields)
            ]
        )
    if pa.types.is_map(data_type):
        return pa.map_(
            data_type.key_field.with_type(microsecond_type(data_type.key_type)),
            data_type.item_field.with_type(microsecond_type(data_type.item_type)),
            keys_sorted=data_type.keys_sorted,
        )
    if pa.types.is_list(data_type):
        return pa.list_(data_type.value_field.with_type(microsecond_type(data_type.value_type)))
    if pa.types.is_large_list(data_type):
        return pa.large_list(
            data_type.value_field.with_type(microsecond_type(data_type.value_type))
        )
    if pa.types.is_fixed_size_list(data_type):
        return pa.list_(
            data_type.value_field.with_type(microsecond_type(data_type.value_type)),
            data_type.list_size,
        )
    return data_type


# Lists, structs and maps as JSON


_JSON = json.JSONEncoder(ensure_ascii=False, allow_nan=False)


def json_cell(value: Any) -> Converted:
    text = _JSON.encode(jsonable(value))
    if len(text) > MAX_VALUE_CHARS:
        return TOO_LONG
    return string_cell(text)


def jsonable(value: Any) -> Any:
    """A nested value as JSON can hold it: bytes as base64, dates and times ISO text, a decimal
    its exact digits, a UUID its text, a map's pairs as lists, a NaN null."""
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        if math.isnan(value):
            return None
        return value if math.isfinite(value) else ("Infinity" if value > 0 else "-Infinity")
    if isinstance(value, dict):
        return {str(key): jsonable(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(item) for item in value]
    if isinstance(value, (bytes, bytearray, memoryview)):
        return base64.b64encode(bytes(value)).decode("ascii")
    if isinstance(value, (datetime, date, time)):
        return value.isoformat()
    if isinstance(value, timedelta):
        return duration_text(value // timedelta(microseconds=1))
    if isinstance(value, Decimal):
        return format(value, "f")
    if isinstance(value, uuid.UUID):
        return str(value)
    return str(value)
