"""SQL: one sql_statement block per statement, split on the dialect's tokens and read by sqlglot.

Nothing is executed: sqlglot's tokenizer splits the script and its parser builds a syntax tree per
statement, from which the block's facts are read.

Dialect. A declared `sql_dialect` is used as given, by its name alone: it must be one of sqlglot's
own dialect names (clickhouse, postgres, mysql, tsql, ...), spelled exactly; an unknown name (also
"Postgres" or "postgresql"), or one with sqlglot settings after a comma ("mysql,
normalization_strategy=lowercase"), is `invalid_option`. Otherwise every dialect of
DETECTION_ORDER (ClickHouse first) reads a window of the script: the whole script when it is at
most 50,000 characters, else the prefix up to its 50th ";" character within the first 50,000
characters (the first 50,000 characters when there is none). When its tokenizer refuses the window
(a cut can land inside a quoted body), it reads shorter prefixes, each up to about half as many ";"
(25, 13, 7, 4, 2, then the first): at most seven windows per dialect. A dialect whose tokenizer
reads a longer window ranks first; then the larger share of the characters of its first 50
statements (split at its ";" tokens) that its parser turns into a syntax tree (sqlglot's opaque
Command fallback is no tree); then DETECTION_ORDER. A tie between dialects whose share is above
zero adds the warning "sql_dialect_ambiguous" and attrs.dialect_candidates (the tied dialects, in
that order), and the script is split with the first of them whose tokenizer reads it whole (the
first when none does, or when the tokenizer budget runs out before one is found). When no dialect
of the longest window parses anything, the first of them is used with dialect_source "default" and
no candidates. attrs.dialect names the dialect used; attrs.dialect_source is "declared", "detected"
or "default".

Statements. The script is split at the dialect's ";" tokens, so a ";" in a string, a quoted name or
a comment does not end a statement. A block's text is the source of its span: from its first
comment or token to its ";" (included), and a comment that starts on the line where it ends (one
after the ";" on its line belongs to that statement). Comments above a statement, back to the
statement before, belong to the statement below them (decided so: a comment above a statement
most often describes it), in its text, span and attrs.comments. Comments after the last statement,
not on its line, are one paragraph block (attrs.comments), which is no statement. An empty
statement (";;") adds its ";" to the statement before it. Locators carry 1-based line spans and
character spans (code points, end exclusive); "\\r\\n", "\\r" and "\\n" end a line.

Client command lines. A line that holds only a client's command (GO, GO 5, a lone /, DELIMITER x,
a backslash command such as \\connect db), its command word a token (not inside a string or
comment), is not SQL; the script is still split at its ";" tokens, and a statement whose span holds
such a line is kind UNKNOWN, a failed unit naming the line.

Bodies. A body the client sends whole (BEGIN ... END) is cut at its inner ";": the statement in
which a body opens (a BEGIN not followed by TRANSACTION, TRAN, WORK, ... and not alone) is cut after
that BEGIN. The head keeps the CREATE: kind "CREATE PROCEDURE" (FUNCTION, TRIGGER, EVENT, PACKAGE)
and attrs.created the name after that word, read from its tokens, keyed by that name, its last part
and every name its tokens hold; each statement of the body is a block of its own (parent: the
head) read like any other; the statement whose END closes the body (CASE ... END and nested
BEGIN ... END counted, END IF / END LOOP / END WHILE / END REPEAT / END FOR not) is the closing
fragment, kind UNKNOWN, as is any body statement that starts with END. A head that is no CREATE (an
anonymous block) is UNKNOWN. A body with no inner ";" stays one statement, parsed or not.

Facts. attrs.kind is the statement's kind ("CREATE TABLE", "CREATE MATERIALIZED VIEW" apart from
"CREATE VIEW", "CREATE INDEX", "DROP TABLE", "ALTER TABLE", "SELECT" for any query, "INSERT",
"UPDATE", "DELETE", "MERGE", "TRUNCATE", else sqlglot's expression name, e.g. "SET", "GRANT",
"COMMIT"), attrs.created the object created (or null), attrs.writes the objects written (a view's TO
table, the table an index is built on, what a DROP or TRUNCATE removes, the target of INSERT,
UPDATE, DELETE, MERGE, ALTER (and its new name), COPY ... FROM and SELECT ... INTO), attrs.reads
every other table it names (a CTE is not one; a table both read and written in a subquery is in
both), attrs.columns the columns it defines, lists or names (a routine's parameters aside), each
list in source order, attrs.comments the text of its comments without their delimiters. Names are
unquoted and qualified as written (db.`my.table` is "db.my.table"; a quoted part keeps its dots).

Keys: every object created, written and read, each qualified name also by its last part
("analytics.events" and "events"; "my.table" for db.`my.table`), then the columns. A statement
sqlglot cannot turn into a tree is kind UNKNOWN, keyed by every name its tokens hold (runs of
names joined by dots, each also by its last part; the text a client command swallows is read too),
listed in coverage.failed by its block id with the reason, and the artifact loses "sql_structure".

Coverage counts statements (heads, body statements, closing fragments and unread rests included;
comment-only blocks not); a statement is extracted when it is not UNKNOWN.

Bounds, so any script ends in bounded time and memory. The tokenizer reads the script in windows
of WINDOW_CHARS joined at token boundaries (a window's last tokens are read again by the next;
a window with nothing to keep, inside one long token, is read again twice as long), at most
TOKENIZE_BUDGET_CHARS characters and TOKENIZE_BUDGET_TOKENS tokens in all. The parser reads
statements of at most PARSE_BUDGET_CHARS characters and PARSE_BUDGET_STATEMENTS statements in all,
none over MAX_STATEMENT_TOKENS tokens; a statement past them is UNKNOWN, keyed by its tokens' names.
A script the tokenizer cannot split (an unterminated string) is split up to the statement it
refuses; from that statement to the script's end is one UNKNOWN block, as is the rest of a script
past the tokenizer's budget. A statement sqlglot nests too deep to read is UNKNOWN.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

import sqlglot
from sqlglot.dialects import DIALECT_MODULE_NAMES
from sqlglot.dialects.dialect import Dialect

from extractor_sandbox.artifact import BlockBuilder, build_artifact, coverage
from extractor_sandbox.contract import Artifact, Coverage
from extractor_sandbox.errors import ExtractError
from extractor_sandbox.formats.sql.detect import detect_dialect
from extractor_sandbox.formats.sql.split import (
    CommentSyntax,
    Result,
    Splitter,
    split_with_candidates,
)

PARSER = "loom-sql"
PARSER_VERSION = f"1+sqlglot{sqlglot.__version__}"
AMBIGUOUS_WARNING = "sql_dialect_ambiguous"
LOST_STRUCTURE = "sql_structure"

# sqlglot logs a warning when it falls back to an opaque Command; that is a fact of the block.
logging.getLogger("sqlglot").setLevel(logging.ERROR)


def extract_sql(text: str, options: Mapping[str, str], *, name: str = "") -> Artifact:
    declared = options.get("sql_dialect")
    attrs: dict[str, Any] = {}
    warnings: list[str] = []
    if declared is not None:
        dialect_name = _declared_dialect(declared)
        attrs.update(dialect=dialect_name, dialect_source="declared")
        result = Splitter(text, dialect_name).run()
    else:
        detection = detect_dialect(text)
        attrs.update(dialect=detection.chosen, dialect_source=detection.source)
        if len(detection.candidates) > 1:
            warnings.append(AMBIGUOUS_WARNING)
            attrs["dialect_candidates"] = list(detection.candidates)
        result = split_with_candidates(text, detection)
        attrs["dialect"] = result.dialect
    blocks, artifact_coverage = _blocks(text, result)
    return build_artifact(
        "sql",
        PARSER,
        PARSER_VERSION,
        blocks,
        artifact_coverage,
        attrs=attrs,
        warnings=warnings,
    )


def _declared_dialect(value: str) -> str:
    if "," in value:
        raise ExtractError(
            "invalid_option",
            f"sql_dialect {value[:100]!r} carries settings; give a dialect's name alone",
        )
    if value not in DIALECT_MODULE_NAMES:
        raise ExtractError(
            "invalid_option",
            f"sql_dialect {value[:100]!r} is not a sqlglot dialect "
            f"(one of {', '.join(sorted(DIALECT_MODULE_NAMES))})",
        )
    return value


class _LineCounter:
    """Line numbers of non-decreasing offsets, counted as they come (\\r\\n, \\r and \\n end a
    line), without holding the text's lines."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.position = 0
        self.endings = 0

    def line_of(self, offset: int) -> int:
        text = self.text
        target = offset
        if 0 < target < len(text) and text[target - 1] == "\r" and text[target] == "\n":
            target -= 1
        if target < self.position:
            self.position = self.endings = 0
        segment_start, self.position = self.position, target
        self.endings += (
            text.count("\n", segment_start, target)
            + text.count("\r", segment_start, target)
            - text.count("\r\n", segment_start, target)
        )
        return self.endings + 1


def _blocks(text: str, result: Result) -> tuple[list[dict[str, Any]], Coverage]:
    syntax = CommentSyntax(Dialect.get_or_raise(result.dialect).tokenizer())
    units = result.units
    spans: list[list[int]] = [[unit.code_start, unit.code_end] for unit in units]
    boundary: list[list[tuple[int, int, str]]] = [[] for _ in units]
    trailing: list[tuple[int, int, str]] = []
    previous_end = 0
    for index in range(len(units) + 1):
        gap_end = units[index].code_start if index < len(units) else len(text)
        comments, _ = syntax.scan(text, previous_end, gap_end, skip=";")
        below: list[tuple[int, int, str]] = []
        line_end = previous_end
        for comment in comments:
            same_line = index > 0 and not below and _no_line_break(text, line_end, comment[0])
            if same_line:
                boundary[index - 1].append(comment)
                spans[index - 1][1] = comment[1]
                line_end = comment[1]
            else:
                below.append(comment)
        if index < len(units):
            if below:
                spans[index][0] = below[0][0]
                boundary[index][:0] = below
            previous_end = units[index].code_end
        else:
            trailing = below

    lines = _LineCounter(text)
    builder = BlockBuilder()
    failed: list[dict[str, str]] = []
    ids: list[str] = []  # each unit's block (a unit's parent is an earlier unit)
    for index, unit in enumerate(units):
        start, end = spans[index]
        comments = sorted(boundary[index] + unit.comments)
        attrs = {
            "kind": unit.kind,
            "created": unit.created,
            "writes": unit.writes,
            "reads": unit.reads,
            "columns": unit.columns,
            "comments": [body for _, _, body in comments if body],
        }
        block_id = _add_block(
            builder,
            lines,
            "sql_statement",
            text,
            start,
            end,
            attrs,
            unit.keys,
            None if unit.parent is None else ids[unit.parent],
        )
        ids.append(block_id)
        if unit.failure:
            failed.append({"unit": block_id, "reason": unit.failure})
    if trailing:
        bodies = [body for _, _, body in trailing if body]
        _add_block(
            builder,
            lines,
            "paragraph",
            text,
            trailing[0][0],
            trailing[-1][1],
            {"comments": bodies},
            [],
            None,
        )
    total = len(units)
    artifact_coverage = coverage(
        "statements",
        total,
        total - len(failed),
        failed,
        [LOST_STRUCTURE] if failed else [],
    )
    return builder.blocks, artifact_coverage


def _no_line_break(text: str, start: int, end: int) -> bool:
    return "\n" not in text[start:end] and "\r" not in text[start:end]


def _add_block(
    builder: BlockBuilder,
    lines: _LineCounter,
    block_type: str,
    text: str,
    start: int,
    end: int,
    attrs: dict[str, Any],
    keys: list[str],
    parent: str | None,
) -> str:
    # The statement's exact characters, which need not start or end a line.
    where = {
        "line_start": lines.line_of(start),
        "line_end": lines.line_of(max(start, end - 1)),
        "char_start": start,
        "char_end": end,
    }
    return builder.place(block_type, text[start:end], where, attrs, parent=parent, keys=keys)
