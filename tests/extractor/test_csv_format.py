"""CSV extraction: one test per rule of the reference extractor's CSV reader and its tables."""

from __future__ import annotations

import json
import platform
import time
from pathlib import Path
from typing import Any

import pytest

from extractor_sandbox.formats.csvfile import PARSER_VERSION, extract_csv, sniff_delimiter
from extractor_sandbox.formats.tables import column_type, float_text
from tests.extractor.server_check import validated

GOLD = Path(__file__).resolve().parent / "gold" / "csv"
CORPUS = Path(__file__).resolve().parents[3] / "shared" / "corpus" / "inputs" / "csv"
MIB = 1024 * 1024


def extract(text: str, name: str = "data.csv") -> dict[str, Any]:
    return extract_csv(text, {}, name=name)


def table(text: str, name: str = "data.csv") -> dict[str, Any]:
    return extract(text, name)["tables"][0]


def gold_fixtures() -> list[tuple[str, Path, dict[str, Any]]]:
    found = []
    for gold_path in sorted(GOLD.glob("*.gold.json")):
        stem = gold_path.name.removesuffix(".gold.json")
        source = next(GOLD.glob(f"{stem}.*sv"))
        found.append((stem, source, json.loads(gold_path.read_text(encoding="utf-8"))))
    return found


def typed(value: Any) -> tuple[str, Any]:
    return (type(value).__name__, value)


def score(gold: dict[str, Any], artifact: dict[str, Any]) -> tuple[float, float, float, float]:
    """Typed cells and headers: hits and the larger of gold's and extraction's counts."""
    cell_hits = cell_total = name_hits = name_total = 0.0
    got_tables = artifact.get("tables", [])
    for index in range(max(len(gold["tables"]), len(got_tables))):
        want = gold["tables"][index] if index < len(gold["tables"]) else {"columns": [], "rows": []}
        got = got_tables[index] if index < len(got_tables) else {"columns": [], "rows": []}
        name_total += max(len(want["columns"]), len(got["columns"]))
        name_hits += sum(1 for a, b in zip(want["columns"], got["columns"], strict=False) if a == b)
        want_cells = sum(len(row) for row in want["rows"])
        got_cells = sum(len(row) for row in got["rows"])
        cell_total += max(want_cells, got_cells)
        for want_row, got_row in zip(want["rows"], got["rows"], strict=False):
            cell_hits += sum(
                1 for a, b in zip(want_row, got_row, strict=False) if typed(a) == typed(b)
            )
    return cell_hits, cell_total, name_hits, name_total


# The envelope


def test_artifact_envelope():
    artifact = extract("a\n1\n")
    assert artifact["schema_version"] == 1
    assert artifact["format"] == "csv"
    assert artifact["parser"] == "loom-csv"
    assert artifact["parser_version"] == f"2+python{platform.python_version()}"
    assert PARSER_VERSION == artifact["parser_version"]
    assert artifact["coverage"]["unit"] == "rows"


def test_table_is_t0_named_after_the_file_with_one_header_row():
    result = table("a,b\n1,2\n3,4\n", name="sales.csv")
    assert result["id"] == "t0"
    assert result["name"] == "sales.csv"
    assert result["header_rows"] == 1
    assert result["locator"] == {"row_start": 1, "row_end": 3}


# Qualification: typed cells 1.00 and headers 1.00 over the hand-written gold


def test_gold_typed_cells_and_headers_are_one():
    cells = cells_total = names = names_total = 0.0
    for stem, source, gold in gold_fixtures():
        artifact = extract_csv(source.read_bytes().decode("utf-8"), {}, name=source.name)
        c, ct, n, nt = score(gold, artifact)
        assert (c, n) == (ct, nt), stem
        cells, cells_total, names, names_total = (
            cells + c,
            cells_total + ct,
            names + n,
            names_total + nt,
        )
    assert len(gold_fixtures()) >= 8
    assert cells / cells_total == 1.0
    assert names / names_total == 1.0


def test_score_counts_an_extra_row_as_a_miss():
    gold = {"tables": [{"columns": [{"name": "a", "type": "number"}], "rows": [[1]]}]}
    artifact = extract("a\n1\n2\n")
    assert score(gold, artifact) == (1.0, 2.0, 1.0, 1.0)


@pytest.mark.parametrize("source", sorted(GOLD.glob("*.*sv")), ids=lambda p: p.name)
def test_every_gold_artifact_passes_the_contract(source: Path):
    raw = source.read_bytes()
    validated(extract_csv(raw.decode("utf-8"), {}, name=source.name), raw)


@pytest.mark.skipif(not CORPUS.is_dir(), reason="shared corpus not present")
def test_every_corpus_csv_passes_the_contract_and_reads_every_row():
    files = sorted(CORPUS.glob("*.csv"))
    assert files
    for path in files:
        raw = path.read_bytes()
        text = raw.decode("utf-8-sig")
        artifact = extract_csv(text, {}, name=path.name)
        validated(artifact, raw)
        assert artifact["coverage"]["complete"], path.name


# The delimiter


def test_tsv_name_is_tab_without_quoting():
    result = table('a\t"b\n"x, y"\t2\n', name="data.tsv")
    assert [c["name"] for c in result["columns"]] == ["a", '"b']
    assert result["rows"] == [['"x, y"', 2]]


@pytest.mark.parametrize("delimiter", [",", ";", "\t", "|"])
def test_delimiter_sniffed_from_quoted_fields(delimiter: str):
    other = "," if delimiter != "," else ";"
    text = f'a{delimiter}b\n"x{other}y"{delimiter}"z"\n'
    assert sniff_delimiter(text) == delimiter


@pytest.mark.parametrize("delimiter", [",", ";", "\t", "|"])
def test_delimiter_sniffed_from_counts(delimiter: str):
    text = f"a{delimiter}b{delimiter}c\n1{delimiter}2{delimiter}3\n"
    assert sniff_delimiter(text) == delimiter


def test_quoted_fields_outweigh_counts_in_the_first_4_kib():
    text = 'a;b\n"1,2,3";"4,5"\n'
    assert sniff_delimiter(text) == ";"


def test_count_sample_ignores_a_cut_last_line():
    text = "a;b\n" + "x;y\n" * 10 + "," * 70_000
    assert sniff_delimiter(text) == ";"


def test_one_column_defaults_to_comma():
    assert sniff_delimiter("name\nalice\nbob\n") == ","


# RFC 4180


def test_rfc4180_quoted_comma_newline_doubled_quote_crlf_utf8():
    result = table('h1,h2\r\n"a,b","say ""x"""\r\n"l1\r\nl2",ü☕\r\n')
    assert result["rows"] == [["a,b", 'say "x"'], ["l1\r\nl2", "ü☕"]]


def test_rfc4180_empty_fields_are_null():
    assert table("a,b,c\n,,1\n")["rows"] == [[None, None, 1]]


def test_rfc4180_last_line_without_ending():
    assert table("a,b\n1,2")["rows"] == [[1, 2]]


# Values


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("42", 42),
        ("-7", -7),
        ("+3", 3),
        ("2.5", 2.5),
        ("1.50", 1.5),
        (".5", 0.5),
        ("1e3", 1000.0),
        ("9223372036854775807", 9223372036854775807),
        ("9223372036854775808", "9223372036854775808"),
        ("0.1000000000000000000001", "0.1000000000000000000001"),
    ],
)
def test_plain_numbers_are_numbers(field: str, value: Any):
    result = table(f"n\n{field}\n")
    assert result["columns"][0]["type"] == "number"
    assert typed(result["rows"][0][0]) == typed(value)


@pytest.mark.parametrize("field", ["1,5", "1.2.3", "0x10", "1e999", "NaN", "inf", "12 kg", " 12"])
def test_anything_else_is_text(field: str):
    result = table(f'n\n"{field}"\n')
    assert result["rows"] == [[field]]
    assert result["columns"][0]["type"] == "string"


@pytest.mark.parametrize("field", ["06427", "007", "00", "-01", "+012", "01.5", "00.25", "01e3"])
def test_a_number_written_with_a_leading_zero_is_text_as_written(field: str):
    # A postal code, a padded id or an official code (Argentina's department 06427): as a number
    # it would lose its zeros, and a search for it as written would find nothing.
    result = table(f"code,name\n{field},La Matanza\n")
    assert result["rows"] == [[field, "La Matanza"]]
    assert result["columns"][0]["type"] == "string"


def test_a_column_of_codes_with_leading_zeros_keeps_them_in_its_rows_text():
    artifact = extract("departamento_id,departamento_nombre\n06427,La Matanza\n06434,Lanús\n")
    assert [c["type"] for c in artifact["tables"][0]["columns"]] == ["string", "string"]
    text = artifact["blocks"][0]["text"]
    assert "departamento_id: 06427 | departamento_nombre: La Matanza" in text
    assert "departamento_id: 06434" in text


@pytest.mark.parametrize(("field", "value"), [("0", 0), ("0.5", 0.5), ("-0.25", -0.25), ("10", 10)])
def test_a_zero_alone_or_before_a_point_is_still_a_number(field: str, value: Any):
    result = table(f"n\n{field}\n")
    assert result["columns"][0]["type"] == "number"
    assert typed(result["rows"][0][0]) == typed(value)


def test_iso_date_is_a_date():
    result = table("d\n2024-02-29\n")
    assert result["rows"] == [["2024-02-29"]]
    assert result["columns"][0]["type"] == "date"


def test_invalid_date_is_text():
    assert table("d\n2023-02-29\n")["columns"][0]["type"] == "string"


def test_iso_datetime_keeps_its_zone():
    result = table("t\n2024-03-01T10:30:00+02:00\n2024-03-01 08:00Z\n2024-03-01T08:00:00\n")
    assert result["rows"] == [
        ["2024-03-01T10:30:00+02:00"],
        ["2024-03-01T08:00:00+00:00"],
        ["2024-03-01T08:00:00"],
    ]
    assert result["columns"][0]["type"] == "datetime"


def test_dates_with_datetimes_are_datetime():
    assert table("t\n2024-03-01\n2024-03-01T08:00\n")["columns"][0]["type"] == "datetime"


def test_numbers_with_text_are_mixed():
    assert table("t\n1\nx\n")["columns"][0]["type"] == "mixed"


def test_whitespace_only_field_is_empty():
    result = table("a,b\n  ,1\n")
    assert result["rows"] == [[None, 1]]


def test_column_type_rules():
    assert column_type(["number", "error"]) == "number"
    assert column_type([]) == "string"
    assert column_type(["date", "datetime"]) == "datetime"
    assert column_type(["bool", "number"]) == "mixed"


# Header and rows


def test_header_is_the_first_row_with_a_value():
    artifact = extract("\n,,\n \n a,b\n1,2\n")
    result = artifact["tables"][0]
    assert [c["name"] for c in result["columns"]] == [" a", "b"]
    assert result["rows"] == [[1, 2]]
    assert artifact["blocks"][0]["locator"] == {"row_start": 2, "row_end": 2}


def test_row_holds_only_its_non_empty_fields():
    artifact = extract("a,b,c\n1,,3\n")
    assert artifact["blocks"][0]["text"] == "a: 1 | c: 3"


def test_blank_rows_are_no_rows():
    result = table("a\n1\n\n,\n2\n")
    assert result["rows"] == [[1], [2]]
    assert result["locator"] == {"row_start": 1, "row_end": 3}


def test_longer_row_adds_generated_columns_and_short_rows_pad_with_null():
    result = table("a,b\n1\n1,2,3\n")
    assert [c["name"] for c in result["columns"]] == ["a", "b", "column 3"]
    assert result["rows"] == [[1, None, None], [1, 2, 3]]


def test_repeated_names_are_numbered():
    result = table("x,x,x\n1,2,3\n")
    assert [c["name"] for c in result["columns"]] == ["x", "x (2)", "x (3)"]


def test_column_name_cut_to_500_is_a_failed_unit():
    artifact = extract("n" * 600 + "\n1\n", name="long.csv")
    assert artifact["tables"][0]["columns"][0]["name"] == "n" * 500
    assert {"unit": "long.csv header", "reason": "a column name cut to 500 characters"} in (
        artifact["coverage"]["failed"]
    )


# Row blocks


def test_row_blocks_hold_twenty_rows():
    text = "n\n" + "".join(f"{i}\n" for i in range(45))
    blocks = extract(text)["blocks"]
    assert [(b["locator"]["row_start"], b["locator"]["row_end"]) for b in blocks] == [
        (2, 21),
        (22, 41),
        (42, 46),
    ]
    assert all(b["type"] == "paragraph" and b["attrs"] == {"table_id": "t0"} for b in blocks)
    assert [b["id"] for b in blocks] == ["b0", "b1", "b2"]
    assert blocks[0]["text"].splitlines()[:2] == ["n: 0", "n: 1"]


def test_row_blocks_stay_within_1000_characters():
    text = "t\n" + "".join(f"{'w' * 300}\n" for _ in range(10))
    blocks = extract(text)["blocks"]
    assert all(len(b["text"]) <= 1000 for b in blocks)
    assert [(b["locator"]["row_start"], b["locator"]["row_end"]) for b in blocks] == [
        (2, 4),
        (5, 7),
        (8, 10),
        (11, 11),
    ]


def test_a_longer_row_is_a_block_alone():
    text = "t\nshort\n" + "w" * 1500 + "\nshort\n"
    blocks = extract(text)["blocks"]
    assert [(b["locator"]["row_start"], b["locator"]["row_end"]) for b in blocks] == [
        (2, 2),
        (3, 3),
        (4, 4),
    ]
    assert blocks[1]["text"] == "t: " + "w" * 1500


def test_header_without_rows_is_a_block_of_its_own():
    artifact = extract("a,b\n")
    assert artifact["blocks"] == [
        {
            "id": "b0",
            "type": "paragraph",
            "text": "a | b",
            "section_path": [],
            "keys": [],
            "locator": {"row_start": 1, "row_end": 1},
            "attrs": {"table_id": "t0"},
        }
    ]
    assert artifact["tables"][0]["rows"] == []


def test_empty_file_has_no_table_and_is_complete():
    artifact = extract("")
    assert artifact["tables"] == []
    assert artifact["blocks"] == []
    assert artifact["coverage"]["complete"]


def test_float_row_text_is_15_significant_digits_table_keeps_exact():
    assert float_text(0.1 + 0.2) == "0.3"
    result = extract("x\n0.30000000000000004\n")
    assert result["tables"][0]["rows"] == [[0.30000000000000004]]
    assert result["blocks"][0]["text"] == "x: 0.3"


# Failures and hostile input


def test_field_over_a_megabyte_fails_the_rows_from_there():
    text = 'a,b\n1,2\n"' + "y" * (2 * MIB) + '",3\n4,5\n'
    artifact = extract(text)
    assert artifact["tables"][0]["rows"] == [[1, 2]]
    assert artifact["coverage"]["failed"] == [
        {"unit": "rows 3-", "reason": "a field over a megabyte"}
    ]
    assert artifact["coverage"]["extracted"] == 2
    validated(artifact, text.encode())


def test_field_of_exactly_a_megabyte_is_read():
    text = "a\n" + "y" * MIB + "\n"
    artifact = extract(text)
    assert artifact["coverage"]["complete"]
    assert len(artifact["tables"][0]["rows"][0][0]) == MIB


def test_a_50_mb_line_fails_as_a_record_over_8_mib_quickly():
    text = "a,b\n1,2\n" + "x," * (25 * MIB) + "\n"
    started = time.monotonic()
    artifact = extract(text)
    assert time.monotonic() - started < 20
    assert artifact["coverage"]["failed"] == [{"unit": "rows 3-", "reason": "a record over 8 MiB"}]
    assert artifact["tables"][0]["rows"] == [[1, 2]]
    validated(artifact, text.encode())


def test_unclosed_quote_fails_the_rows_from_there():
    text = 'a,b\n1,2\n3,"never closed\n4,5\n'
    artifact = extract(text)
    assert artifact["tables"][0]["rows"] == [[1, 2]]
    assert artifact["coverage"]["failed"] == [
        {"unit": "rows 3-", "reason": "quoting the reader cannot close"}
    ]
    assert not artifact["coverage"]["complete"]
    validated(artifact, text.encode())


def test_closed_quote_on_the_last_line_is_no_failure():
    assert extract('a\n"x\ny"')["coverage"]["complete"]


def test_64_mib_of_blank_lines_is_an_empty_complete_artifact():
    text = "\n" * (64 * MIB)
    started = time.monotonic()
    artifact = extract(text)
    assert time.monotonic() - started < 30
    assert artifact["tables"] == []
    assert artifact["coverage"]["total"] == 0


def test_rows_past_100000_are_a_failed_unit():
    text = "n\n" + "1\n" * 100_005
    artifact = extract(text)
    assert len(artifact["tables"][0]["rows"]) == 100_000
    assert artifact["coverage"]["failed"] == [
        {"unit": "rows 100002-", "reason": "past 100,000 rows a table"}
    ]
    validated(artifact, text.encode())


def test_the_rows_admitted_before_the_cells_ran_out_are_laid_out():
    # 95,000 rows of 11 cells pass 1,000,000 cells at row 90,911 (the header is row 1): the
    # 90,909 rows before it are held and laid out, the rest are one failed unit.
    text = ",".join(f"c{i}" for i in range(11)) + "\n" + "1,2,3,4,5,6,7,8,9,0,1\n" * 95_000
    artifact = extract(text)
    assert len(artifact["tables"][0]["rows"]) == 90_909
    assert artifact["coverage"]["failed"] == [
        {"unit": "rows 90911-", "reason": "past 1,000,000 cells"}
    ]
    assert artifact["blocks"][-1]["locator"]["row_end"] == 90_910


def test_the_fast_typing_paths_give_the_cells_the_rules_give() -> None:
    # csv_cell answers the usual fields before typed_cell's regular expressions (issue 15); on any
    # field it must answer what typed_cell does, to the value's type.
    import random

    from extractor_sandbox.formats.csvfile import csv_cell
    from extractor_sandbox.formats.tables import typed_cell

    pieces = ["0", "1", "9", "-", "+", ".", "e", "E", "T", ":", " ", "\t", "Z", "a", "٣", "²", "_"]
    values = ["", " ", "2024-02-29", "2023-02-29", "2024-13-01", "0.1", "1.50", "-0.0", "1e400"]
    values += [
        "9" * 18,
        "9" * 19,
        "9" * 4001,
        "12_000",
        "٣٣",
        "2024-02-29T10:00:00+02:00",
        "0" * 30,
    ]
    values += [
        "1234-56-78",
        "+1",
        ".5",
        "5.",
        "nan",
        "inf",
        "1.7976931348623157e308",
        "0.30000000000000004",
    ]
    rng = random.Random(15)
    values += [
        "".join(rng.choice(pieces) for _ in range(rng.randint(1, 12))) for _ in range(20_000)
    ]
    for value in values:
        got, want = csv_cell(value), typed_cell(value)
        assert got == want, value
        if got is not None and want is not None:
            assert type(got.value) is type(want.value), value


def test_a_column_typed_at_once_gives_the_cells_typing_each_field_gives() -> None:
    # typed_rows types a column whose values share their first value's kind in one pass; one
    # value of another kind anywhere in it must send the column back to typing field by field.
    import random

    from extractor_sandbox.formats.csvfile import csv_cell, typed_rows

    uniform = {
        "text": ["ab", "Zeta", "x y", "é", "#1"],
        "integer": ["0", "7", "007", "9" * 18],
        "decimal": ["0.5", "12.25", "-3.75", "0.1"],
        "date": ["2024-02-29", "1999-12-31"],
    }
    intruders = ["", " ", "2023-02-29", "1.50", "9" * 19, "-0", "2024-02-29T10:00", "٣", "+1", "a"]
    rng = random.Random(15)
    for kind, values in uniform.items():
        for _ in range(200):
            rows = [[rng.choice(values), rng.choice(values)] for _ in range(rng.randint(1, 30))]
            if rng.random() < 0.7:
                rows[rng.randrange(len(rows))][rng.randrange(2)] = rng.choice(intruders)
            if rng.random() < 0.3:
                rows[rng.randrange(len(rows))] = rows[0][:1]
            want = [[csv_cell(value) for value in row] + [None] * (3 - len(row)) for row in rows]
            got = [list(row) for row in typed_rows(rows, 3)]
            assert got == want, (kind, rows)
            for got_row, want_row in zip(got, want, strict=True):
                assert [type(c.value) if c else None for c in got_row] == [
                    type(c.value) if c else None for c in want_row
                ]


def test_the_collector_is_paused_only_while_a_reader_runs() -> None:
    import gc

    from extractor_sandbox.artifact import cycle_collection_paused

    assert gc.isenabled()
    extract("a,b\n1,2\n")
    assert gc.isenabled()
    with pytest.raises(ValueError), cycle_collection_paused():
        assert not gc.isenabled()
        raise ValueError("a parse that fails")
    assert gc.isenabled()
    gc.disable()
    try:
        extract("a,b\n1,2\n")
        assert not gc.isenabled()  # a caller's own pause is left as it was
    finally:
        gc.enable()
