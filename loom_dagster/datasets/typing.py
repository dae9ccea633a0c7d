"""A table's rows as typed Arrow columns; a row that cannot be held is rejected whole.

Cells arrive as the artifact spells them (extractor_sandbox/formats/tables.py): None for an empty
cell, a JSON number (an integer, or a float), the exact digits of a number a double does not
hold as a string, ISO text for dates and date-times (a zone kept when it had one), `H:MM:SS[.f]`
for a duration, a boolean, and `{"error": "#DIV/0!"}` for a cell error.

A row is rejected, and counted, when any stored column's cell is an error or a value its type
cannot hold: a decimal of 10**29 or more after rounding to nine places (half to even), a number a
double cannot hold, an instant outside what a timestamp holds (0001-01-01 to 9999-12-31 in UTC:
the range of the values DuckDB and Python read back alike; a zone is turned to UTC first), or a
value that is not of the column's type at all (an approved type over text). The first 20
rejects keep their reason.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime
from decimal import Context, Decimal, InvalidOperation

import pyarrow as pa
import pyarrow.compute as pc

from loom_dagster.datasets.model import (
    DECIMAL_SCALE,
    ROW_ID,
    ColumnType,
    DatasetSchema,
    Reject,
)

MAX_REJECTS_KEPT = 20
DECIMAL_LIMIT = Decimal(10) ** (38 - DECIMAL_SCALE)
_QUANTUM = Decimal(1).scaleb(-DECIMAL_SCALE)
# Wide enough that rounding a number of any size to nine places is exact, so the limit, not
# the context, decides what is rejected.
_EXACT = Context(prec=4_400, Emax=999_999, Emin=-999_999)
_INT_LIMIT = 10 ** (38 - DECIMAL_SCALE)
_VALUE_CHARS = 60  # how much of a value a reason quotes
_NUMBER_TEXT = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")


class Unholdable(Exception):
    """A value its column's type cannot hold; the message is the reject's reason."""


@dataclass(frozen=True)
class Typed:
    table: pa.Table  # ROW_ID then each stored column, rejected rows left out
    rows_rejected: int
    rejects: tuple[Reject, ...]


def _quote(value: object) -> str:
    text = value if isinstance(value, str) else repr(value)
    return repr(text if len(text) <= _VALUE_CHARS else text[:_VALUE_CHARS] + "…")


def _not(value: object, what: str) -> Unholdable:
    return Unholdable(f"{_quote(value)} is not {what}")


def _decimal(value: object) -> Decimal:
    if isinstance(value, bool):
        raise _not(value, "a number")
    if isinstance(value, int):
        if -_INT_LIMIT < value < _INT_LIMIT:
            return Decimal(value)
        raise Unholdable(f"{_quote(value)} is past what a decimal holds (10^29)")
    if isinstance(value, float):
        exact = Decimal(repr(value))
    elif isinstance(value, str):
        # Plain decimal spelling only: Decimal() also takes "1_000", "NaN" and "Infinity".
        if not _NUMBER_TEXT.fullmatch(value.strip()):
            raise _not(value, "a number")
        exact = Decimal(value.strip())
    else:
        raise _not(value, "a number")
    rounded = exact.quantize(_QUANTUM, context=_EXACT)
    if rounded.copy_abs() >= DECIMAL_LIMIT:  # abs() would round to the default 28 digits
        raise Unholdable(f"{_quote(value)} is past what a decimal holds (10^29)")
    return rounded


def _double(value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise _not(value, "a number")
    try:
        number = float(value)
    except OverflowError:
        raise Unholdable(f"{_quote(value)} is past what a double holds") from None
    except ValueError:
        raise _not(value, "a number") from None
    if number != number or number in (float("inf"), float("-inf")):
        if isinstance(value, str) and value.strip().lower().lstrip("+-") in (
            "inf",
            "infinity",
            "nan",
        ):
            raise _not(value, "a number")
        raise Unholdable(f"{_quote(value)} is past what a double holds")
    return number


def _date(value: object) -> date:
    if not isinstance(value, str):
        raise _not(value, "a date")
    try:
        return date.fromisoformat(value)
    except ValueError:
        raise _not(value, "a date") from None


def _timestamp(value: object) -> datetime:
    if not isinstance(value, str):
        raise _not(value, "a date-time")
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        raise _not(value, "a date-time") from None
    if moment.tzinfo is None:
        return moment.replace(tzinfo=UTC)
    try:
        return moment.astimezone(UTC)
    except OverflowError:
        raise Unholdable(
            f"{_quote(value)} is outside what a timestamp holds (0001-01-01 to 9999-12-31 UTC)"
        ) from None


def _boolean(value: object) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in ("true", "false"):
        return value.strip().lower() == "true"
    raise _not(value, "a boolean")


def _duration(value: object) -> Decimal:
    """Seconds, exact: `H:MM:SS[.ffffff]` (any number of hours, a sign) or a number of seconds."""
    if isinstance(value, str) and ":" in value:
        text = value.strip()
        sign = -1 if text.startswith("-") else 1
        parts = text.lstrip("+-").split(":")
        try:
            if len(parts) != 3 or not all(p.replace(".", "", 1).isdigit() for p in parts):
                raise InvalidOperation
            hours, minutes, seconds = int(parts[0]), int(parts[1]), Decimal(parts[2])
        except (InvalidOperation, ValueError):
            raise _not(value, "a duration") from None
        if minutes > 59 or seconds >= 60 or "." in parts[0] or "." in parts[1]:
            raise _not(value, "a duration")
        return _decimal(str(sign * (hours * 3600 + minutes * 60 + seconds)))
    try:
        return _decimal(value)
    except Unholdable:
        raise _not(value, "a duration") from None


def _float_text(value: float) -> str:
    # As a sheet shows a whole number (3, not 3.0); otherwise the shortest exact spelling.
    if value.is_integer() and abs(value) < 1e15:
        return str(int(value))
    return repr(value)


def _text(value: object) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return _float_text(value)
    raise _not(value, "text")


CONVERTERS: dict[ColumnType, Callable[[object], object]] = {
    ColumnType.TEXT: _text,
    ColumnType.DECIMAL: _decimal,
    ColumnType.DOUBLE: _double,
    ColumnType.DATE: _date,
    ColumnType.TIMESTAMP: _timestamp,
    ColumnType.BOOLEAN: _boolean,
    ColumnType.DURATION: _duration,
}


def _cell_error(value: object) -> str | None:
    if isinstance(value, dict):
        error = value.get("error")
        return f"holds the error {_quote(error)}" if error is not None else "holds no value"
    return None


# Arrow's exact decimal wide enough to parse any spelling a number column holds and round it to
# nine places before the range check (46 digits before the point, 30 after).
_WIDE = pa.decimal256(76, 30)
_DURATION = r"^(?P<sign>[-+]?)(?P<h>\d{1,12}):(?P<m>[0-5]\d):(?P<s>[0-5]\d(?:\.\d{1,9})?)$"
_PARTIAL = pa.decimal128(30, DECIMAL_SCALE)
# The range a timestamp holds, in microseconds since the epoch (0001-01-01 and
# 9999-12-31T23:59:59.999999 UTC); integers, since an Arrow scalar made of a zoned datetime
# imports pandas, which every process that loads the pipeline would then pay for.
_FIRST_US = -62_135_596_800_000_000
_LAST_US = 253_402_300_799_999_999
_ARROW_REFUSED = (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError, OverflowError)


def _fast(column_type: ColumnType, values: Sequence[object]) -> pa.Array | None:
    """The column built by Arrow's own parsers and casts when every value passes them, with the
    same result the per-value path gives; None (any value Arrow refuses, or out of range) sends
    the column through the per-value path, which finds and names the rejects."""
    kinds = set(map(type, values))
    kinds.discard(type(None))
    try:
        if column_type is ColumnType.TEXT and kinds <= {str}:
            return pa.array(values, pa.string())
        if column_type is ColumnType.DECIMAL and kinds <= {int}:
            # The reference extractor's integers are within 64 bits; another's may not be.
            return pa.array(values, pa.int64()).cast(column_type.arrow)
        if column_type is ColumnType.DECIMAL and kinds <= {int, float, str}:
            # repr is a float's shortest exact spelling, as the per-value path reads it.
            texts = [v if v is None or type(v) is str else repr(v) for v in values]
            wide = pa.array(texts, pa.string()).cast(_WIDE)
            rounded = pc.round(wide, DECIMAL_SCALE, round_mode="half_to_even")
            return rounded.cast(column_type.arrow)  # refused at 10**29 or more
        if column_type is ColumnType.DOUBLE and kinds <= {float}:
            floats = pa.array(values, pa.float64())
            return None if pc.any(pc.is_inf(floats)).as_py() else floats
        if column_type is ColumnType.BOOLEAN and kinds <= {bool}:
            return pa.array(values, pa.bool_())
        if column_type is ColumnType.DATE and kinds <= {str}:
            return pa.array(values, pa.string()).cast(pa.date32())
        if column_type is ColumnType.TIMESTAMP and kinds <= {str}:
            return _fast_timestamps(pa.array(values, pa.string()))
        if column_type is ColumnType.DURATION and kinds <= {str}:
            return _fast_durations(pa.array(values, pa.string()))
    except _ARROW_REFUSED:
        return None
    return None


def _fast_timestamps(texts: pa.Array) -> pa.Array | None:
    try:  # every value with its zone
        moments = texts.cast(pa.timestamp("us", tz="UTC"))
    except pa.ArrowInvalid:  # every value without one: read as UTC, as the per-value path does
        moments = texts.cast(pa.timestamp("us")).cast(pa.timestamp("us", tz="UTC"))
    low, high = pc.min(moments), pc.max(moments)
    if low.is_valid and (low.value < _FIRST_US or high.value > _LAST_US):
        return None
    return moments


def _fast_durations(texts: pa.Array) -> pa.Array | None:
    parts = pc.extract_regex(texts, _DURATION)
    if parts.null_count != texts.null_count:
        return None
    whole = pc.add(
        pc.multiply(pc.struct_field(parts, "h").cast(pa.int64()), 3600),
        pc.multiply(pc.struct_field(parts, "m").cast(pa.int64()), 60),
    )
    seconds = pc.add(whole.cast(_PARTIAL), pc.struct_field(parts, "s").cast(_PARTIAL))
    signed = pc.if_else(pc.equal(pc.struct_field(parts, "sign"), "-"), pc.negate(seconds), seconds)
    return signed.cast(ColumnType.DURATION.arrow)


def _column(
    name: str, column_type: ColumnType, values: Sequence[object], bad: dict[int, str]
) -> list[object] | pa.Array:
    """The column's Arrow array, or its values as Python objects (None at a bad row), noting
    each bad row's reason in `bad` unless an earlier column gave it one."""
    fast = _fast(column_type, values)
    if fast is not None:
        return fast
    convert = CONVERTERS[column_type]
    out: list[object] = []
    append = out.append
    for row, value in enumerate(values):
        if value is None:
            append(None)
            continue
        try:
            if isinstance(value, dict):
                raise Unholdable(_cell_error(value) or "holds no value")
            append(convert(value))
        except Unholdable as why:
            append(None)
            bad.setdefault(row, f"column {name!r}: {why}")
    return out


def type_rows(
    schema: DatasetSchema, positions: Sequence[int], rows: Sequence[Sequence[object]]
) -> Typed:
    """Type `rows` (the artifact's, every column) into the stored columns of `schema`, the
    column i of the schema read from position positions[i] of each row."""
    width = max(positions, default=-1) + 1
    count = len(rows)
    if all(len(row) >= width for row in rows):
        columns = list(zip(*rows, strict=False)) if rows else [()] * width
    else:  # an extractor other than the reference one may send short rows
        columns = list(
            zip(*(list(row) + [None] * (width - len(row)) for row in rows), strict=False)
        )
    bad: dict[int, str] = {}
    built: list[list[object] | pa.Array] = []
    for column, position in zip(schema.columns, positions, strict=True):
        built.append(_column(column.name, column.type, columns[position] if count else (), bad))
    arrays = [
        value if isinstance(value, pa.Array) else pa.array(value, column.type.arrow)
        for value, column in zip(built, schema.columns, strict=True)
    ]
    table = pa.Table.from_arrays(
        [pa.array(range(count), pa.int64()), *arrays], schema=schema.arrow_schema()
    )
    if bad:
        keep = [True] * count
        for row in bad:
            keep[row] = False
        table = table.filter(pa.array(keep, pa.bool_()))
    rejects = tuple(Reject(row, bad[row]) for row in sorted(bad)[:MAX_REJECTS_KEPT])
    return Typed(table, len(bad), rejects)


__all__ = ["ROW_ID", "Typed", "type_rows"]
