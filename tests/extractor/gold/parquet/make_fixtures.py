"""Writes the Parquet qualification fixtures beside this script: `python make_fixtures.py`.

Each `<name>.parquet` here has a `<name>.gold.json` written by hand from the seed's rules (not by
the reader), so rebuilding the files does not rebuild what they are scored against. Together they
cover every way a column is read: integers, uint64 and decimals as exact digits, floats (float32
and float16 as their shortest decimal, NaN no value, an infinity left out), bools, dates,
timestamps with and without a zone (nanoseconds to the microsecond), times, durations, text (blank
text no value), UUIDs, other extension types, dictionaries, lists, structs and maps as JSON (bytes
as base64), bytes left out, repeated and empty names, blank rows, row groups, and no rows at all.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from datetime import UTC, date, datetime, time, timedelta
from decimal import Decimal
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

HERE = Path(__file__).resolve().parent


def numbers() -> pa.Table:
    return pa.table(
        {
            "int8": pa.array([-128, 127, None], pa.int8()),
            "int64": pa.array([-(2**63), 2**63 - 1, 0], pa.int64()),
            "uint64": pa.array([2**64 - 1, 7, None], pa.uint64()),
            "price": pa.array(
                [Decimal("12.345"), Decimal("-0.500"), Decimal("0.000")], pa.decimal128(10, 3)
            ),
            "wide": pa.array(
                [Decimal("12345678901234567890.12345678901234567890"), None, Decimal("-1")],
                pa.decimal256(40, 20),
            ),
            "double": pa.array([0.1 + 0.2, float("nan"), 1e300], pa.float64()),
            "single": pa.array([0.1, 1 / 3, None], pa.float32()),
            "half": pa.array([0.1, None, 65504.0], pa.float16()),
            "spiky": pa.array([float("inf"), 2.5, float("-inf")], pa.float64()),
        }
    )


def moments() -> pa.Table:
    paris = "Europe/Paris"
    return pa.table(
        {
            "flag": pa.array([True, False, None]),
            "day": pa.array([date(2024, 2, 29), date(1, 1, 1), date(9999, 12, 31)], pa.date32()),
            "day64": pa.array([date(2000, 1, 1), None, date(1970, 1, 1)], pa.date64()),
            "local": pa.array(
                [datetime(2024, 3, 1, 10, 30), datetime(1999, 12, 31, 23, 59, 59, 999999), None],
                pa.timestamp("us"),
            ),
            # 2024-07-01T12:00:00.123456789Z and 2024-01-01T00:00:00.000000999Z.
            "paris_ns": pa.array(
                [1_719_835_200_123_456_789, 1_704_067_200_000_000_999, None],
                pa.timestamp("ns", tz=paris),
            ),
            "utc_ms": pa.array(
                [datetime(2024, 3, 1, 8, 0, tzinfo=UTC), None, None],
                pa.timestamp("ms", tz="UTC"),
            ),
            "clock": pa.array([time(10, 30), time(23, 59, 59), None], pa.time32("s")),
            "clock_ns": pa.array([3_723_000_000_999, None, 0], pa.time64("ns")),
            "elapsed": pa.array(
                [timedelta(hours=36), timedelta(seconds=-90), None], pa.duration("s")
            ),
            "elapsed_ns": pa.array([1_500_000_999, None, 1], pa.duration("ns")),
        }
    )


def nested() -> pa.Table:
    point = pa.struct([("x", pa.int32()), ("label", pa.string())])
    stamped = pa.struct([("at", pa.timestamp("ns", tz="UTC")), ("data", pa.binary())])
    uuids = pa.ExtensionArray.from_storage(
        pa.uuid(),
        pa.array(
            [uuid.UUID(int=1).bytes, None, uuid.UUID("12345678-1234-5678-1234-567812345678").bytes],
            pa.binary(16),
        ),
    )
    return pa.table(
        {
            "numbers": pa.array([[1, 2, 3], [], None], pa.list_(pa.int64())),
            "point": pa.array([{"x": 1, "label": "a"}, {"x": None, "label": "é"}, None], point),
            "tags": pa.array(
                [[("k", 1), ("k", 2)], None, [("z", None)]], pa.map_(pa.string(), pa.int32())
            ),
            "blobs": pa.array([[b"\x00\xff", None], None, [b"hi"]], pa.list_(pa.binary())),
            "stamped": pa.array(
                [{"at": 1_704_067_200_000_001_999, "data": b"ab"}, None, None], stamped
            ),
            "id": uuids,
            "ok": pa.ExtensionArray.from_storage(pa.bool8(), pa.array([1, 0, None], pa.int8())),
            "doc": pa.ExtensionArray.from_storage(
                pa.json_(), pa.array(['{"a": 1}', None, "[]"], pa.string())
            ),
            "kind": pa.array(["red", "blue", "red"]).dictionary_encode(),
            "pair": pa.array([[1.5, 2.0], None, [None, 3.0]], pa.list_(pa.float64(), 2)),
        }
    )


def text() -> pa.Table:
    columns = [
        pa.array(["alpha", "  ", None, "ünïcødé ☕", None, "line one\nline two"]),
        pa.array(["x1", None, None, "x4", None, "x6"]),
        pa.array([1.5, float("nan"), None, 4.0, None, None]),
        pa.array([b"bytes", None, None, b"are", None, b"no text"]),
        pa.array(["", None, "   ", "e", None, None], pa.large_string()),
    ]
    return pa.Table.from_arrays(columns, names=["name", "x", "x", "raw", ""])


def groups() -> pa.Table:
    return pa.table(
        {
            "n": pa.array(list(range(1, 13)), pa.int32()),
            "even": pa.array([n % 2 == 0 for n in range(1, 13)]),
            "word": pa.array([None if n in (5, 6) else f"w{n}" for n in range(1, 13)]),
        }
    )


def empty() -> pa.Table:
    return pa.table({"name": pa.array([], pa.string()), "count": pa.array([], pa.int64())})


FIXTURES: dict[str, tuple[Callable[[], pa.Table], int | None]] = {
    "numbers": (numbers, None),
    "moments": (moments, None),
    "nested": (nested, None),
    "text": (text, None),
    "groups": (groups, 5),
    "empty": (empty, None),
}


def main() -> None:
    for name, (build, row_group_size) in FIXTURES.items():
        pq.write_table(build(), HERE / f"{name}.parquet", row_group_size=row_group_size)


if __name__ == "__main__":
    main()
