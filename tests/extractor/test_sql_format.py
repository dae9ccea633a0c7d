"""SQL extraction: one test per rule of the reference extractor's SQL parser."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
import sqlglot

from extractor_sandbox import source
from extractor_sandbox.artifact import block_bound
from extractor_sandbox.errors import ExtractError
from extractor_sandbox.formats.sql import PARSER_VERSION, extract_sql
from extractor_sandbox.formats.sql import detect as sql_detect
from extractor_sandbox.formats.sql import split as sql_split
from tests.extractor.server_check import validated

GOLD = Path(__file__).resolve().parent / "gold" / "sql"
FIFTY_MB = 50 * 1024 * 1024


def extract(text: str, **options: str) -> dict[str, Any]:
    return validated(extract_sql(text, options), text)


def statements(text: str, **options: str) -> list[dict[str, Any]]:
    return [b for b in extract(text, **options)["blocks"] if b["type"] == "sql_statement"]


def lines_of(block: dict[str, Any]) -> tuple[int, int]:
    return block["locator"]["line_start"], block["locator"]["line_end"]


def chars_of(block: dict[str, Any]) -> tuple[int, int]:
    return block["locator"]["char_start"], block["locator"]["char_end"]


def kind_of(block: dict[str, Any]) -> str:
    return block["attrs"]["kind"]


def gold_fixtures() -> list[str]:
    return sorted(path.name.removesuffix(".gold.json") for path in GOLD.glob("*.gold.json"))


# The envelope


def test_artifact_envelope_is_contract_v1():
    artifact = extract("SELECT 1;\n", sql_dialect="postgres")

    assert artifact["schema_version"] == 1
    assert artifact["format"] == "sql"
    assert artifact["parser"] == "loom-sql"
    assert artifact["parser_version"] == f"1+sqlglot{sqlglot.__version__}" == "1+sqlglot30.30.0"
    assert PARSER_VERSION == artifact["parser_version"]
    assert artifact["options"] == {}
    assert artifact["attrs"] == {"dialect": "postgres", "dialect_source": "declared"}
    assert artifact["warnings"] == []
    assert artifact["coverage"] == {
        "unit": "statements",
        "total": 1,
        "extracted": 1,
        "failed": [],
        "lost": [],
        "complete": True,
    }
    [block] = artifact["blocks"]
    assert block == {
        "id": "b0",
        "type": "sql_statement",
        "text": "SELECT 1;",
        "section_path": [],
        "keys": [],
        "locator": {"line_start": 1, "line_end": 1, "char_start": 0, "char_end": 9},
        "attrs": {
            "kind": "SELECT",
            "created": None,
            "writes": [],
            "reads": [],
            "columns": [],
            "comments": [],
        },
    }


# The labelled fixtures: every statement with its exact span and names, artifacts valid


@pytest.mark.parametrize("name", gold_fixtures())
def test_gold_fixture_statements_spans_and_names(name: str):
    text = (GOLD / f"{name}.sql").read_bytes().decode("utf-8")
    gold = json.loads((GOLD / f"{name}.gold.json").read_text(encoding="utf-8"))
    blocks = statements(text)

    assert len(blocks) == len(gold["statements"])
    for statement in gold["statements"]:
        span = (statement["line_start"], statement["line_end"])
        found = [
            b for b in blocks if statement["text_contains"] in b["text"] and lines_of(b) == span
        ]
        assert len(found) == 1, statement
        assert set(statement["names"]) <= set(found[0]["keys"]), (statement, found[0]["keys"])


@pytest.mark.parametrize("name", gold_fixtures())
def test_every_block_text_is_its_char_span(name: str):
    text = (GOLD / f"{name}.sql").read_bytes().decode("utf-8")
    for block in extract(text)["blocks"]:
        start, end = chars_of(block)
        assert text[start:end] == block["text"]


def test_there_are_at_least_eight_fixtures():
    assert len(gold_fixtures()) >= 8


# Dialects


def test_declared_dialect_is_used_as_given():
    artifact = extract("SELECT TOP 5 a FROM t;", sql_dialect="clickhouse")

    assert artifact["attrs"] == {"dialect": "clickhouse", "dialect_source": "declared"}
    assert artifact["warnings"] == []


@pytest.mark.parametrize(
    "value",
    [
        "postgresql",
        "Postgres",
        " postgres",
        "",
        "mysql, normalization_strategy=lowercase",
        "mysql,",
    ],
)
def test_unknown_dialect_or_settings_after_a_comma_is_invalid_option(value: str):
    with pytest.raises(ExtractError) as raised:
        extract_sql("SELECT 1;", {"sql_dialect": value})
    assert raised.value.code == "invalid_option"


def test_detected_dialect_without_a_tie():
    artifact = extract("SELECT count() FROM t SETTINGS max_threads = 1;")

    assert artifact["attrs"] == {"dialect": "clickhouse", "dialect_source": "detected"}
    assert artifact["warnings"] == []


def test_a_tie_is_ambiguous_with_its_candidates_in_order_and_the_first_used():
    artifact = extract("SELECT TOP 5 a FROM t;")

    assert artifact["warnings"] == ["sql_dialect_ambiguous"]
    assert artifact["attrs"] == {
        "dialect": "tsql",
        "dialect_source": "detected",
        "dialect_candidates": ["tsql", "oracle", "snowflake", "redshift"],
    }


def test_a_tie_of_every_dialect_goes_to_clickhouse_first():
    artifact = extract("SELECT a FROM t;")

    assert artifact["attrs"]["dialect"] == "clickhouse"
    assert artifact["attrs"]["dialect_candidates"] == list(sql_detect.DETECTION_ORDER)


def test_nothing_parsed_uses_the_first_dialect_as_default():
    artifact = extract("@@@ ### !!!;")

    assert artifact["attrs"] == {"dialect": "clickhouse", "dialect_source": "default"}
    assert artifact["warnings"] == []


def test_a_dialect_that_tokenizes_a_longer_window_ranks_first():
    # Backslash escapes: dialects without them read 'it\' as the string and refuse the rest.
    artifact = extract("SELECT 'it\\'s';\nSELECT 1;\n")

    candidates = artifact["attrs"]["dialect_candidates"]
    assert candidates == ["clickhouse", "mysql", "snowflake", "bigquery", "spark", "redshift"]
    assert "postgres" not in candidates


def test_the_share_parsed_wins_over_many_small_statements():
    # sqlglot's mysql, sqlite, oracle, spark and trino split the $$ body into statements, some of
    # which parse; the dialects that read the body as one string parse all of it and win.
    text = "CREATE FUNCTION f() RETURNS integer AS $$\nBEGIN\n  RETURN 1;\nEND;\n$$ LANGUAGE plpgsql;\n"
    artifact = extract(text)

    assert artifact["attrs"]["dialect_candidates"] == [
        "clickhouse",
        "postgres",
        "duckdb",
        "redshift",
    ]
    assert [kind_of(b) for b in artifact["blocks"]] == ["CREATE FUNCTION"]


def test_a_tie_splits_with_the_first_candidate_whose_tokenizer_reads_the_script_whole():
    # Past the 50,000-character window, ClickHouse reads 'a\' as an open string (backslash
    # escapes) and refuses the rest; postgres, the next tied candidate, reads it whole.
    text = "SELECT 1;\n" * 6_000 + "SELECT 'a\\';\n"
    artifact = extract(text)

    assert artifact["attrs"]["dialect"] == "postgres"
    assert artifact["attrs"]["dialect_candidates"][:2] == ["clickhouse", "postgres"]
    assert artifact["warnings"] == ["sql_dialect_ambiguous"]
    assert artifact["blocks"][-1]["text"] == "SELECT 'a\\';"
    assert artifact["coverage"]["complete"] is True


def test_detection_windows_cut_at_the_50th_semicolon_then_halve():
    text = "SELECT 1;\n" * 6_000  # 60,000 characters, over one window
    cuts = sql_detect._window_cuts(text)

    assert cuts == [499, 249, 129, 69, 39, 19, 9]


def test_detection_window_is_the_whole_script_up_to_50000_characters():
    text = "SELECT 1;\n" * 5_000
    cuts = sql_detect._window_cuts(text)

    assert cuts[0] == len(text) == 50_000
    assert len(cuts) <= sql_detect.DETECTION_MAX_WINDOWS


def test_a_long_first_statement_is_cut_at_50000_characters():
    text = "SELECT " + ", ".join(["a"] * 30_000) + ";"
    assert sql_detect._window_cuts(text) == [50_000]


# Statements


def test_a_semicolon_in_a_string_quoted_name_or_comment_does_not_split():
    text = "SELECT 'a;b' AS \"x;y\" -- c;d\nFROM t /* e;f */;\nSELECT 2;\n"
    blocks = statements(text, sql_dialect="postgres")

    assert [b["text"] for b in blocks] == [
        "SELECT 'a;b' AS \"x;y\" -- c;d\nFROM t /* e;f */;",
        "SELECT 2;",
    ]
    assert [lines_of(b) for b in blocks] == [(1, 2), (3, 3)]


def test_two_statements_on_one_line_have_their_own_char_spans():
    text = "SELECT 1; SELECT 2;\n"
    blocks = statements(text)

    assert [chars_of(b) for b in blocks] == [(0, 9), (10, 19)]
    assert [lines_of(b) for b in blocks] == [(1, 1), (1, 1)]


def test_a_comment_after_the_semicolon_on_its_line_belongs_to_that_statement():
    text = "SELECT 1; -- one\n-- two\nSELECT 2;\n"
    first, second = statements(text)

    assert first["text"] == "SELECT 1; -- one"
    assert first["attrs"]["comments"] == ["one"]
    assert second["text"] == "-- two\nSELECT 2;"
    assert second["attrs"]["comments"] == ["two"]
    assert lines_of(second) == (2, 3)


def test_comments_above_a_statement_belong_to_it_up_to_the_statement_before():
    text = "SELECT 1;\n\n/* about\n   two */\n\n-- more\nSELECT 2 /* inside */;\n"
    _, second = statements(text)

    assert second["text"] == "/* about\n   two */\n\n-- more\nSELECT 2 /* inside */;"
    assert second["attrs"]["comments"] == ["about\n   two", "more", "inside"]
    assert lines_of(second) == (3, 7)


def test_comments_after_the_last_statement_are_a_paragraph_not_a_statement():
    text = "SELECT 1;\n-- the end\n/* really */\n"
    artifact = extract(text)

    assert [b["type"] for b in artifact["blocks"]] == ["sql_statement", "paragraph"]
    tail = artifact["blocks"][1]
    assert tail["text"] == "-- the end\n/* really */"
    assert tail["attrs"] == {"comments": ["the end", "really"]}
    assert lines_of(tail) == (2, 3)
    assert artifact["coverage"]["total"] == 1


def test_a_script_of_comments_only_counts_no_statement():
    artifact = extract("-- nothing here\n")

    assert [b["type"] for b in artifact["blocks"]] == ["paragraph"]
    assert artifact["coverage"]["total"] == 0
    assert artifact["coverage"]["complete"] is True


def test_an_empty_statement_joins_the_one_before():
    blocks = statements("SELECT 1;;\nSELECT 2;\n")

    assert [b["text"] for b in blocks] == ["SELECT 1;;", "SELECT 2;"]


def test_a_last_statement_without_a_semicolon_is_a_statement():
    blocks = statements("SELECT 1;\nSELECT 2\n")

    assert [b["text"] for b in blocks] == ["SELECT 1;", "SELECT 2"]


def test_crlf_lines_and_chars():
    text = "SELECT 1;\r\n\r\nSELECT\r\n  2;\r\n"
    blocks = statements(text)

    assert [lines_of(b) for b in blocks] == [(1, 1), (3, 4)]
    assert [chars_of(b) for b in blocks] == [(0, 9), (13, 25)]
    assert blocks[1]["text"] == "SELECT\r\n  2;"


def test_lone_carriage_returns_end_lines():
    blocks = statements("SELECT 1;\rSELECT 2;\r")

    assert [lines_of(b) for b in blocks] == [(1, 1), (2, 2)]


# Client command lines


@pytest.mark.parametrize(
    ("text", "line"),
    [
        ("CREATE TABLE t (a INT)\nGO\nSELECT a FROM t;\n", "GO"),
        ("CREATE TABLE t (a INT)\ngo 5\nSELECT a FROM t;\n", "go 5"),
        ("CREATE TABLE t (a INT)\n/\nSELECT a FROM t;\n", "/"),
        ("DELIMITER $$\nCREATE TABLE t (a INT);\n", "DELIMITER $$"),
        ("\\connect db\nCREATE TABLE t (a INT);\n", "\\connect db"),
        ("  \\set ON_ERROR_STOP on\nCREATE TABLE t (a INT);\n", "\\set ON_ERROR_STOP on"),
    ],
)
def test_a_statement_a_command_line_joins_is_unknown_and_failed(text: str, line: str):
    artifact = extract(text)
    [block] = artifact["blocks"]

    assert block["text"] == text.strip()
    assert kind_of(block) == "UNKNOWN"
    assert "t" in block["keys"]
    assert artifact["coverage"]["failed"] == [
        {"unit": "b0", "reason": f"a client command line joins it: {line!r}"}
    ]
    assert artifact["coverage"]["lost"] == ["sql_structure"]
    assert artifact["coverage"]["complete"] is False


def test_a_script_with_command_lines_is_still_split_at_its_semicolons():
    blocks = statements("SELECT 1;\nGO\nSELECT 2;\nSELECT 3;\n")

    assert [b["text"] for b in blocks] == ["SELECT 1;", "GO\nSELECT 2;", "SELECT 3;"]
    assert [kind_of(b) for b in blocks] == ["SELECT", "UNKNOWN", "SELECT"]


def test_command_words_inside_strings_comments_or_lines_are_not_command_lines():
    text = "SELECT 'x\nGO\n' AS a;\n/* \nGO\n */ SELECT 2;\nSELECT 4\n/ 2;\nSELECT go FROM t;\n"
    blocks = statements(text)

    assert [kind_of(b) for b in blocks] == ["SELECT", "SELECT", "SELECT", "SELECT"]


# Bodies cut at their inner semicolons


def test_a_procedure_body_is_cut_into_head_statements_and_closing_fragment():
    text = (
        "CREATE PROCEDURE shop.add(IN c INT)\n"
        "BEGIN\n"
        "  INSERT INTO shop.orders (customer) VALUES (c);\n"
        "  UPDATE shop.customers SET n = n + 1 WHERE id = c;\n"
        "END;\n"
        "SELECT 1;\n"
    )
    artifact = extract(text, sql_dialect="mysql")
    head, insert, update, end, after = artifact["blocks"]

    assert head["text"] == "CREATE PROCEDURE shop.add(IN c INT)\nBEGIN"
    assert lines_of(head) == (1, 2)
    assert head["attrs"]["kind"] == "CREATE PROCEDURE"
    assert head["attrs"]["created"] == "shop.add"
    assert head["keys"][:2] == ["shop.add", "add"]
    assert "parent" not in head
    assert insert["text"] == "INSERT INTO shop.orders (customer) VALUES (c);"
    assert (insert["parent"], insert["attrs"]["writes"]) == ("b0", ["shop.orders"])
    assert (update["parent"], update["attrs"]["writes"]) == ("b0", ["shop.customers"])
    assert (end["text"], end["parent"], kind_of(end)) == ("END;", "b0", "UNKNOWN")
    assert "parent" not in after
    assert artifact["coverage"]["total"] == 5
    assert artifact["coverage"]["failed"] == [
        {"unit": "b3", "reason": "the closing fragment of a body cut at its inner ';'"}
    ]
    assert artifact["coverage"]["lost"] == ["sql_structure"]


def test_case_end_and_nested_blocks_do_not_close_the_body():
    text = (
        "CREATE FUNCTION f() RETURNS INT\nBEGIN\n"
        "  SELECT CASE WHEN 1 THEN 2 END INTO @x;\n"
        "  IF @x > 0 THEN SET @y = 1; END IF;\n"
        "  RETURN @x;\nEND;\nSELECT 9;\n"
    )
    blocks = statements(text, sql_dialect="mysql")

    assert [b["text"] for b in blocks] == [
        "CREATE FUNCTION f() RETURNS INT\nBEGIN",
        "SELECT CASE WHEN 1 THEN 2 END INTO @x;",
        "IF @x > 0 THEN SET @y = 1;",
        "END IF;",
        "RETURN @x;",
        "END;",
        "SELECT 9;",
    ]
    assert [b.get("parent") for b in blocks] == [None, "b0", "b0", "b0", "b0", "b0", None]
    assert kind_of(blocks[0]) == "CREATE FUNCTION"
    assert [kind_of(b) for b in blocks[3:]] == ["UNKNOWN", kind_of(blocks[4]), "UNKNOWN", "SELECT"]


@pytest.mark.parametrize("begin", ["BEGIN;", "BEGIN TRANSACTION;", "BEGIN WORK;"])
def test_a_transaction_begin_opens_no_body(begin: str):
    blocks = statements(f"{begin}\nINSERT INTO t VALUES (1);\nEND;\n", sql_dialect="postgres")

    assert [b.get("parent") for b in blocks] == [None, None, None]
    assert [kind_of(b) for b in blocks] == ["TRANSACTION", "INSERT", "COMMIT"]


def test_an_anonymous_block_has_an_unknown_head():
    artifact = extract("BEGIN\n  SELECT 1;\nEND;\n", sql_dialect="snowflake")
    head, inner, end = artifact["blocks"]

    assert (head["text"], kind_of(head)) == ("BEGIN", "UNKNOWN")
    assert (inner["parent"], kind_of(inner)) == ("b0", "SELECT")
    assert kind_of(end) == "UNKNOWN"
    assert [f["unit"] for f in artifact["coverage"]["failed"]] == ["b0", "b2"]


def test_a_body_with_no_inner_semicolon_is_one_statement():
    blocks = statements("CREATE TRIGGER trg AFTER INSERT ON t BEGIN SELECT 1 END;\n")

    assert len(blocks) == 1


# What a statement holds


@pytest.mark.parametrize(
    ("dialect", "text", "kind"),
    [
        ("postgres", "CREATE TABLE t (a int)", "CREATE TABLE"),
        ("postgres", "CREATE VIEW v AS SELECT 1", "CREATE VIEW"),
        ("postgres", "CREATE MATERIALIZED VIEW v AS SELECT a FROM t", "CREATE MATERIALIZED VIEW"),
        ("postgres", "CREATE INDEX i ON t (a)", "CREATE INDEX"),
        ("postgres", "DROP TABLE t", "DROP TABLE"),
        ("postgres", "DROP MATERIALIZED VIEW v", "DROP MATERIALIZED VIEW"),
        ("postgres", "ALTER TABLE t ADD COLUMN b int", "ALTER TABLE"),
        ("postgres", "SELECT a FROM t UNION SELECT b FROM u", "SELECT"),
        ("postgres", "INSERT INTO t VALUES (1)", "INSERT"),
        ("postgres", "UPDATE t SET a = 1", "UPDATE"),
        ("postgres", "DELETE FROM t", "DELETE"),
        ("postgres", "MERGE INTO t USING s ON t.a = s.a WHEN MATCHED THEN DELETE", "MERGE"),
        ("postgres", "TRUNCATE t", "TRUNCATE"),
        ("postgres", "SET search_path = x", "SET"),
        ("postgres", "GRANT SELECT ON t TO u", "GRANT"),
    ],
)
def test_kind(dialect: str, text: str, kind: str):
    [block] = statements(text, sql_dialect=dialect)
    assert kind_of(block) == kind


@pytest.mark.parametrize(
    ("dialect", "text", "created", "writes", "reads"),
    [
        (
            "clickhouse",
            "CREATE MATERIALIZED VIEW db.mv TO db.dst AS SELECT a FROM db.src",
            "db.mv",
            ["db.dst"],
            ["db.src"],
        ),
        ("postgres", "CREATE TABLE t2 AS SELECT * FROM t1", "t2", [], ["t1"]),
        ("postgres", "CREATE INDEX idx ON s.t (a)", "idx", ["s.t"], []),
        ("postgres", "DROP TABLE IF EXISTS a, s.b", None, ["a", "s.b"], []),
        ("postgres", "TRUNCATE TABLE a, b", None, ["a", "b"], []),
        ("postgres", "INSERT INTO t (a) SELECT x FROM s", None, ["t"], ["s"]),
        ("postgres", "UPDATE t SET a = s.a FROM s WHERE t.id = s.id", None, ["t"], ["s"]),
        ("postgres", "DELETE FROM t WHERE id IN (SELECT id FROM s)", None, ["t"], ["s"]),
        (
            "postgres",
            "MERGE INTO t USING s ON t.a = s.a WHEN MATCHED THEN DELETE",
            None,
            ["t"],
            ["s"],
        ),
        ("postgres", "ALTER TABLE t RENAME TO u", None, ["t", "u"], []),
        ("tsql", "SELECT a INTO new_t FROM s", None, ["new_t"], ["s"]),
        (
            "postgres",
            "WITH c AS (SELECT a FROM s) SELECT a FROM c JOIN u ON c.a = u.a",
            None,
            [],
            ["s", "u"],
        ),
        ("postgres", "CREATE SCHEMA analytics", "analytics", [], []),
        (
            "postgres",
            "CREATE TRIGGER trg BEFORE INSERT ON t FOR EACH ROW EXECUTE FUNCTION f()",
            "trg",
            [],
            ["t"],
        ),
    ],
)
def test_created_writes_and_reads(
    dialect: str, text: str, created: str | None, writes: list[str], reads: list[str]
):
    [block] = statements(text, sql_dialect=dialect)
    attrs = block["attrs"]

    assert (attrs["created"], attrs["writes"], attrs["reads"]) == (created, writes, reads)


def test_columns_defined_listed_and_named_but_not_a_routines_parameters():
    blocks = statements(
        "CREATE TABLE t (id int, name text, PRIMARY KEY (id));\n"
        "INSERT INTO t (id, name) VALUES (1, 'a');\n"
        "SELECT t.name, count(*) FROM t WHERE id > 1 GROUP BY t.name;\n"
        "CREATE FUNCTION f(p int) RETURNS int AS $$ SELECT 1 $$ LANGUAGE sql;\n",
        sql_dialect="postgres",
    )

    assert [b["attrs"]["columns"] for b in blocks] == [
        ["id", "name"],
        ["id", "name"],
        ["name", "id"],
        [],
    ]


def test_keys_are_qualified_names_their_last_parts_unquoted_then_columns():
    [block] = statements(
        "INSERT INTO db.`my.table` (`a.b`) SELECT x FROM cat.db.src;", sql_dialect="mysql"
    )

    assert block["keys"] == ["db.my.table", "my.table", "cat.db.src", "src", "a.b", "x"]
    assert block["attrs"]["writes"] == ["db.my.table"]


def test_quoted_postgres_names_are_unquoted_and_keep_their_case():
    [block] = statements('SELECT "Id" FROM "Sales"."Order Items";', sql_dialect="postgres")

    assert block["keys"] == ["Sales.Order Items", "Order Items", "Id"]


# What sqlglot cannot read


def test_an_unparsable_statement_is_unknown_searchable_and_failed():
    text = "SELECT 1;\nFROBNICATE db.widgets WITH extreme prejudice;\nSELECT 2;\n"
    artifact = extract(text, sql_dialect="postgres")
    _, bad, _ = artifact["blocks"]

    assert bad["text"] == "FROBNICATE db.widgets WITH extreme prejudice;"
    assert kind_of(bad) == "UNKNOWN"
    assert bad["attrs"]["created"] is None
    assert bad["keys"] == ["FROBNICATE", "db.widgets", "widgets", "extreme", "prejudice"]
    [failure] = artifact["coverage"]["failed"]
    assert failure["unit"] == "b1"
    assert failure["reason"].startswith("sqlglot could not parse it: ")
    assert failure["reason"].endswith("(postgres)")
    assert artifact["coverage"]["lost"] == ["sql_structure"]
    assert (artifact["coverage"]["total"], artifact["coverage"]["extracted"]) == (3, 2)


def test_an_opaque_command_is_unknown():
    artifact = extract("ALTER SEQUENCE app.ids INCREMENT BY 1;", sql_dialect="postgres")
    [block] = artifact["blocks"]

    assert kind_of(block) == "UNKNOWN"
    assert {"app.ids", "ids"} <= set(block["keys"])
    assert artifact["coverage"]["failed"] == [
        {"unit": "b0", "reason": "sqlglot read it only as an opaque command (postgres)"}
    ]


def test_a_command_swallowing_text_still_yields_its_names():
    [block] = statements("GO\nSELECT a FROM dbo.accounts;", sql_dialect="tsql")

    assert kind_of(block) == "UNKNOWN"
    assert {"dbo.accounts", "accounts", "a"} <= set(block["keys"])


# Hostile input: an artifact with honest coverage, in bounded time


def test_a_script_of_one_unterminated_string_is_one_unknown_block():
    text = "SELECT 'never closed; SELECT 2;\n"
    artifact = extract(text)

    [block] = artifact["blocks"]
    assert block["text"] == text.rstrip("\n")
    assert kind_of(block) == "UNKNOWN"
    assert artifact["attrs"] == {"dialect": "clickhouse", "dialect_source": "default"}
    assert artifact["coverage"] == {
        "unit": "statements",
        "total": 1,
        "extracted": 0,
        "failed": [
            {
                "unit": "b0",
                "reason": "the clickhouse tokenizer cannot split it "
                "(an unterminated string or quoted name)",
            }
        ],
        "lost": ["sql_structure"],
        "complete": False,
    }


def test_the_statements_before_an_unterminated_string_are_read():
    blocks = statements("SELECT 1;\nSELECT a FROM t WHERE b = 'open;\nSELECT 3;\n")

    assert [b["text"] for b in blocks] == [
        "SELECT 1;",
        "SELECT a FROM t WHERE b = 'open;\nSELECT 3;",
    ]
    assert [kind_of(b) for b in blocks] == ["SELECT", "UNKNOWN"]
    assert {"t", "a", "b"} <= set(blocks[1]["keys"])


def test_a_50_mb_unterminated_string_is_one_unknown_block_quickly():
    text = "SELECT '" + "x" * FIFTY_MB
    started = time.process_time()
    artifact = extract(text)

    assert time.process_time() - started < 60
    [block] = artifact["blocks"]
    assert chars_of(block) == (0, len(text))
    assert artifact["coverage"]["failed"][0]["reason"].startswith("the clickhouse tokenizer")


def test_a_50_mb_line_is_one_unknown_block_past_the_tokenizer_budget():
    text = "SELECT " + "a" * FIFTY_MB + " FROM t;"
    started = time.process_time()
    artifact = extract(text)

    assert time.process_time() - started < 60
    [block] = artifact["blocks"]
    assert chars_of(block) == (0, len(text))
    assert lines_of(block) == (1, 1)
    assert kind_of(block) == "UNKNOWN"
    assert artifact["coverage"]["failed"][0]["reason"].startswith(
        "not split: past the tokenizer's budget"
    )
    assert artifact["coverage"]["lost"] == ["sql_structure"]


@pytest.mark.slow
def test_a_50_mb_line_of_many_tokens_ends_in_bounded_time():
    text = "INSERT INTO t VALUES " + ",".join(["(1,'a')"] * (FIFTY_MB // 8)) + ";"
    started = time.process_time()
    artifact = extract(text)

    assert time.process_time() - started < 90
    [block] = artifact["blocks"]
    assert chars_of(block) == (0, len(text))
    assert kind_of(block) == "UNKNOWN"
    assert artifact["coverage"]["complete"] is False


@pytest.mark.slow
def test_100000_statements_end_in_bounded_time_past_the_parse_budget():
    text = "".join(f"INSERT INTO t VALUES ({i});\n" for i in range(100_000))
    started = time.process_time()
    # The reader's own output: a block a statement. The service fits it to the output bounds
    # (the last test of this pair), so it is not validated here.
    artifact = extract_sql(text, {})

    assert time.process_time() - started < 90
    blocks = artifact["blocks"]
    assert len(blocks) == 100_000
    assert lines_of(blocks[-1]) == (100_000, 100_000)
    assert blocks[-1]["text"] == "INSERT INTO t VALUES (99999);"
    cov = artifact["coverage"]
    assert (cov["total"], cov["extracted"]) == (100_000, sql_split.PARSE_BUDGET_STATEMENTS)
    assert cov["failed"][0] == {
        "unit": f"b{sql_split.PARSE_BUDGET_STATEMENTS}",
        "reason": "not parsed: past the parser's budget of 1,000,000 characters "
        "or 25,000 statements",
    }
    assert blocks[-1]["keys"] == ["t"]


@pytest.mark.slow
def test_100000_statements_are_served_merged_within_the_output_bounds():
    text = "".join(f"INSERT INTO t VALUES ({i});\n" for i in range(100_000))
    artifact = validated(source.extract(text.encode(), "sql", "many.sql", {}), text)

    assert len(artifact["blocks"]) == block_bound(len(text.encode()))
    assert "block_boundaries" in artifact["coverage"]["lost"]
    assert "INSERT INTO t VALUES (99999);" in artifact["blocks"][-1]["text"]


def test_parse_budget_in_characters(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(sql_split, "PARSE_BUDGET_CHARS", 20)
    blocks = statements("SELECT a FROM t;\nSELECT b FROM u;\n")

    assert [kind_of(b) for b in blocks] == ["SELECT", "UNKNOWN"]
    assert blocks[1]["keys"] == ["b", "u"]


def test_a_statement_over_the_token_bound_is_not_parsed(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(sql_split, "MAX_STATEMENT_TOKENS", 10)
    artifact = extract("SELECT a, b, c, d, e, f FROM s.t;\nSELECT 1;\n")
    long, short = artifact["blocks"]

    assert kind_of(long) == "UNKNOWN"
    assert long["keys"] == ["a", "b", "c", "d", "e", "f", "s.t", "t"]
    assert kind_of(short) == "SELECT"
    assert artifact["coverage"]["failed"] == [
        {"unit": "b0", "reason": "over 10 tokens: not parsed"}
    ]


def test_deep_nesting_is_unknown_not_a_crash():
    text = "SELECT " + "(" * 5_000 + "1" + ")" * 5_000 + ";\nSELECT 2;\n"
    blocks = statements(text, sql_dialect="postgres")

    assert [kind_of(b) for b in blocks] == ["UNKNOWN", "SELECT"]


def test_a_statement_with_more_names_than_keys_allowed_is_cut_and_marked():
    text = "FROBNICATE " + " ".join(f"n{i}" for i in range(10_050)) + ";"
    artifact = extract(text, sql_dialect="postgres")
    [block] = artifact["blocks"]

    assert len(block["keys"]) == 10_000
    assert block["attrs"]["keys_truncated"] is True
    assert artifact["coverage"]["lost"] == ["sql_structure", "exact_keys"]


# The tokenizer's windows are joined at token boundaries


def test_small_windows_split_a_script_as_one_window_does(monkeypatch: pytest.MonkeyPatch):
    text = (GOLD / "strings_and_comments.sql").read_text(encoding="utf-8") + (
        "SELECT '" + "long string; " * 20 + "' AS s;\n/* a long comment; " + "x" * 300 + " */\n"
        "SELECT 2;\n"
    )
    whole = extract(text, sql_dialect="postgres")
    monkeypatch.setattr(sql_split, "WINDOW_CHARS", 40)
    monkeypatch.setattr(sql_split, "WINDOW_MARGIN", 8)
    windowed = extract(text, sql_dialect="postgres")

    assert windowed == whole
    assert len(whole["blocks"]) == 7


def test_the_tokenizer_budget_leaves_the_rest_one_unknown_block(
    monkeypatch: pytest.MonkeyPatch,
):
    monkeypatch.setattr(sql_split, "WINDOW_CHARS", 64)
    monkeypatch.setattr(sql_split, "WINDOW_MARGIN", 8)
    monkeypatch.setattr(sql_split, "TOKENIZE_BUDGET_CHARS", 200)
    text = "".join(f"SELECT {i} FROM t{i};\n" for i in range(40))
    artifact = extract(text, sql_dialect="postgres")

    last = artifact["blocks"][-1]
    assert kind_of(last) == "UNKNOWN"
    assert last["locator"]["char_end"] == len(text) - 1
    assert artifact["coverage"]["failed"] == [
        {
            "unit": last["id"],
            "reason": "not split: past the tokenizer's budget of 200 characters "
            "or 2,000,000 tokens",
        }
    ]
    assert all(kind_of(b) == "SELECT" for b in artifact["blocks"][:-1])
    assert [b["text"] for b in artifact["blocks"][:-1]] == [
        f"SELECT {i} FROM t{i};" for i in range(len(artifact["blocks"]) - 1)
    ]


# Every script: its content lands in blocks, and small windows read it as one window does

_SCRAPS = [
    "SELECT", " a", " FROM t", ";", ";", "\n", " ", "'x;y'", "'", '"q"', "`b.c`", "-- c;\n",
    "/* d; */", "/*", "*/", "BEGIN", " END", " CASE", "GO\n", "\n/\n", "\\connect x\n",
    "DELIMITER ;;\n", "CREATE PROCEDURE p() ", "$$", "$$ ;", "INSERT INTO s.t VALUES (1)", "(",
    ")", "\r\n", "\r", "é", "[", "]", "#", "SHOW x", "EXECUTE y",
]  # fmt: skip


@pytest.mark.parametrize("seed", range(4))
def test_random_scripts_land_in_blocks_and_windows_do_not_change_them(
    seed: int, monkeypatch: pytest.MonkeyPatch
):
    import random

    rng = random.Random(seed)
    for _ in range(60):
        text = "".join(rng.choice(_SCRAPS) for _ in range(rng.randint(0, 60)))
        dialect = rng.choice([None, "postgres", "mysql", "tsql", "clickhouse", "bigquery"])
        options = {"sql_dialect": dialect} if dialect else {}
        monkeypatch.setattr(sql_split, "WINDOW_CHARS", 262_144)
        monkeypatch.setattr(sql_split, "WINDOW_MARGIN", 1_024)
        whole = extract(text, **options)
        covered = [False] * len(text)
        previous_end = 0
        for block in whole["blocks"]:
            start, end = chars_of(block)
            assert previous_end <= start < end and text[start:end] == block["text"]
            covered[start:end] = [True] * (end - start)
            previous_end = end
        outside = "".join(char for char, seen in zip(text, covered, strict=True) if not seen)
        assert not outside.replace(";", "").strip(), (text, outside)
        monkeypatch.setattr(sql_split, "WINDOW_CHARS", rng.randint(8, 64))
        monkeypatch.setattr(sql_split, "WINDOW_MARGIN", rng.randint(1, 8))
        assert extract(text, **options) == whole, text
