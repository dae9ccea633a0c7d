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
        try:
            exact = Decimal(value.strip())
        except InvalidOperation:
            raise _not(value, "a number") from None
        if not exact.is_finite():
            raise _not(value, "a number")
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


def _fast(column_type: ColumnType, values: Sequence[object]) -> pa.Array | None:
    """The column built by Arrow alone, when every value is of the one Python type that needs
    no check (the common case); None sends it through the per-value path."""
    kinds = set(map(type, values))
    kinds.discard(type(None))
    if column_type is ColumnType.TEXT and kinds <= {str}:
        return pa.array(values, pa.string())
    if column_type is ColumnType.DECIMAL and kinds <= {int}:
        try:  # the reference extractor's integers are within 64 bits; another's may not be
            return pa.array(values, pa.int64()).cast(column_type.arrow)
        except (OverflowError, pa.ArrowInvalid):
            return None
    if column_type is ColumnType.DOUBLE and kinds <= {float}:
        floats = pa.array(values, pa.float64())
        if pc.any(pc.is_inf(floats)).as_py():
            return None
        return floats
    if column_type is ColumnType.BOOLEAN and kinds <= {bool}:
        return pa.array(values, pa.bool_())
    return None


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
