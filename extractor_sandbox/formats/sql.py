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
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import sqlglot
from sqlglot import exp
from sqlglot.dialects import DIALECT_MODULE_NAMES
from sqlglot.dialects.dialect import Dialect
from sqlglot.errors import ErrorLevel, TokenError
from sqlglot.parser import Parser
from sqlglot.tokens import Token, Tokenizer, TokenType

from extractor_sandbox.artifact import BlockBuilder, Line, build_artifact, coverage
from extractor_sandbox.errors import ExtractError

PARSER = "loom-sql"
PARSER_VERSION = f"1+sqlglot{sqlglot.__version__}"

# The dialects detection tries, in the order that breaks a tie.
DETECTION_ORDER = (
    "clickhouse",
    "postgres",
    "mysql",
    "sqlite",
    "tsql",
    "oracle",
    "duckdb",
    "snowflake",
    "bigquery",
    "spark",
    "trino",
    "redshift",
)
DETECTION_WINDOW_CHARS = 50_000
DETECTION_STATEMENTS = 50
DETECTION_MAX_WINDOWS = 7

WINDOW_CHARS = 262_144  # one tokenizer call of the split
WINDOW_MARGIN = 1_024  # tokens ending this close to a window's cut are read again in the next one
TOKENIZE_BUDGET_CHARS = 8_000_000  # characters the tokenizer reads, windows read again included
TOKENIZE_BUDGET_TOKENS = 2_000_000  # tokens it may yield (its time grows with them)
PARSE_BUDGET_CHARS = 1_000_000  # characters of statements the parser reads
PARSE_BUDGET_STATEMENTS = 25_000  # statements the parser reads
MAX_STATEMENT_TOKENS = 100_000
MAX_NAMES = 10_001  # one past the contract's 10,000 keys, so a longer list is marked truncated
MAX_REASON_CHARS = 300

AMBIGUOUS_WARNING = "sql_dialect_ambiguous"
LOST_STRUCTURE = "sql_structure"
UNKNOWN = "UNKNOWN"

_COMMAND_LINE = re.compile(
    r"(?:GO(?:[ \t]+[0-9]+)?|/|DELIMITER[ \t]+\S+|\\\S.*)[ \t]*", re.IGNORECASE
)
_COMMAND_LINE_FIRST = frozenset({TokenType.SLASH, TokenType.BACKSLASH})
_COMMAND_LINE_WORDS = frozenset({"GO", "DELIMITER"})
# Words after BEGIN that make it a transaction's start rather than a body's.
_TRANSACTION_WORDS = frozenset(
    {
        "TRANSACTION",
        "TRAN",
        "WORK",
        "DISTRIBUTED",
        "DEFERRED",
        "IMMEDIATE",
        "EXCLUSIVE",
        "ISOLATION",
    }
)
# Words after END that close a control statement, not a BEGIN or a CASE.
_END_CONTROL_WORDS = frozenset({"IF", "LOOP", "WHILE", "REPEAT", "FOR"})
_ROUTINE_WORDS = {
    "PROCEDURE": "PROCEDURE",
    "PROC": "PROCEDURE",
    "FUNCTION": "FUNCTION",
    "TRIGGER": "TRIGGER",
    "EVENT": "EVENT",
    "PACKAGE": "PACKAGE",
}
_NAME_TOKENS = frozenset({TokenType.VAR, TokenType.IDENTIFIER})
_COMMAND_LINE_WORD_TOKENS = frozenset({TokenType.VAR, TokenType.IDENTIFIER, TokenType.COMMAND})
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_$]*")
_LEAD = "zq "  # a name read before a window that begins in mid-statement, then dropped
_MISSING = re.compile(r"Missing (.+) from [0-9]+:[0-9]+")
_POSITION = re.compile(r"\.? *Line [0-9]+, Col: [0-9]+\.?")

# sqlglot logs a warning when it falls back to an opaque Command; that is a fact of the block.
logging.getLogger("sqlglot").setLevel(logging.ERROR)


def extract_sql(text: str, options: Mapping[str, str], *, name: str = "") -> dict[str, Any]:
    declared = options.get("sql_dialect")
    attrs: dict[str, Any] = {}
    warnings: list[str] = []
    if declared is not None:
        dialect_name = _declared_dialect(declared)
        attrs.update(dialect=dialect_name, dialect_source="declared")
        result = _Splitter(text, dialect_name).run()
    else:
        detection = _detect(text)
        attrs.update(dialect=detection.chosen, dialect_source=detection.source)
        if len(detection.candidates) > 1:
            warnings.append(AMBIGUOUS_WARNING)
            attrs["dialect_candidates"] = list(detection.candidates)
        result = _split_with_candidates(text, detection)
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


# Detection


@dataclass(frozen=True)
class _Detection:
    chosen: str
    source: str  # "detected" or "default"
    candidates: tuple[str, ...]  # the tied dialects, when more than one


@dataclass(frozen=True)
class _Score:
    name: str
    window: int  # characters of the longest window its tokenizer read
    share: Fraction  # of its first statements' characters parsed into a tree


def _detect(text: str) -> _Detection:
    cuts = _window_cuts(text)
    scores = [_score(name, text, cuts) for name in DETECTION_ORDER]
    longest = max(score.window for score in scores)
    top = [score for score in scores if score.window == longest]
    best = max(score.share for score in top)
    if best == 0:
        return _Detection(top[0].name, "default", ())
    winners = tuple(score.name for score in top if score.share == best)
    return _Detection(winners[0], "detected", winners if len(winners) > 1 else ())


def _window_cuts(text: str) -> list[int]:
    """The ends of the prefixes detection reads, longest first."""
    head = text[:DETECTION_WINDOW_CHARS]
    semicolons: list[int] = []
    start = 0
    while len(semicolons) < DETECTION_STATEMENTS:
        found = head.find(";", start)
        if found < 0:
            break
        semicolons.append(found + 1)
        start = found + 1
    if len(text) <= DETECTION_WINDOW_CHARS:
        cuts = [len(text)]
    elif semicolons:
        cuts = [semicolons[-1]]
    else:
        cuts = [len(head)]
    count = len(semicolons)
    while count > 1 and len(cuts) < DETECTION_MAX_WINDOWS:
        count = (count + 1) // 2
        cut = semicolons[count - 1]
        if cut < cuts[-1]:
            cuts.append(cut)
    if semicolons and semicolons[0] < cuts[-1] and len(cuts) < DETECTION_MAX_WINDOWS:
        cuts.append(semicolons[0])
    return cuts


def _score(name: str, text: str, cuts: Sequence[int]) -> _Score:
    dialect = Dialect.get_or_raise(name)
    tokenizer = dialect.tokenizer()
    for cut in cuts:
        window = text[:cut]
        try:
            tokens = tokenizer.tokenize(window)
        except TokenError:
            continue
        return _Score(name, cut, _parsed_share(dialect, tokens, window))
    return _Score(name, 0, Fraction(0))


def _parsed_share(dialect: Dialect, tokens: list[Token], window: str) -> Fraction:
    parser = dialect.parser(error_level=ErrorLevel.IMMEDIATE)
    total = parsed = 0
    statements = 0
    piece: list[Token] = []
    for token in [*tokens, None]:
        if token is not None and token.token_type != TokenType.SEMICOLON:
            piece.append(token)
            continue
        if piece:
            length = piece[-1].end + 1 - piece[0].start
            total += length
            if _parse(parser, piece, window)[0] is not None:
                parsed += length
            statements += 1
            piece = []
            if statements == DETECTION_STATEMENTS:
                break
    return Fraction(parsed, total) if total else Fraction(0)


def _parse(parser: Parser, tokens: list[Token], sql: str) -> tuple[exp.Expr | None, str]:
    """The statement's syntax tree, or None and why there is none."""
    try:
        trees = parser.parse(tokens, sql)
    except RecursionError:
        return None, "sqlglot could not parse it: nested too deep"
    except Exception as error:  # sqlglot's ParseError, or any failure inside the parser
        return None, "sqlglot could not parse it: " + _first_line(str(error))
    tree = trees[0] if len(trees) == 1 else None
    if tree is None:
        return None, "sqlglot could not parse it"
    if isinstance(tree, exp.Command):
        return None, "sqlglot read it only as an opaque command"
    return tree, ""


def _first_line(message: str) -> str:
    """sqlglot's message on one line, without its line and column (the block's locator says
    where it is, and a token read in a later window counts lines from that window)."""
    line = _POSITION.sub("", message.split("\n", 1)[0])
    return " ".join(line.split())[:MAX_REASON_CHARS]


# The split


@dataclass
class _Unit:
    """One statement block to be: its code span (tokens and ";"), and what it holds."""

    code_start: int
    code_end: int
    kind: str = UNKNOWN
    created: str | None = None
    writes: list[str] = field(default_factory=list)
    reads: list[str] = field(default_factory=list)
    columns: list[str] = field(default_factory=list)
    keys: list[str] = field(default_factory=list)
    failure: str = ""  # why it is UNKNOWN
    parent: int | None = None  # the index of the head whose body holds it
    comments: list[tuple[int, int, str]] = field(default_factory=list)  # inside its code


@dataclass
class _Result:
    dialect: str
    units: list[_Unit]
    status: str  # "complete", "refused" (the tokenizer could not split the rest), "budget"


@dataclass
class _StreamState:
    status: str = "complete"
    offset: int = 0  # where the unread rest begins
    budget: int = field(default_factory=lambda: TOKENIZE_BUDGET_CHARS)
    tokens: int = field(default_factory=lambda: TOKENIZE_BUDGET_TOKENS)


def _split_with_candidates(text: str, detection: _Detection) -> _Result:
    result = _Splitter(text, detection.chosen).run()
    if result.status != "refused" or len(detection.candidates) < 2:
        return result
    state = _StreamState()
    for name in detection.candidates[1:]:
        tokenizer = Dialect.get_or_raise(name).tokenizer()
        for _ in _token_stream(text, tokenizer, state):
            pass
        if state.status == "budget":
            break
        if state.status == "complete":
            return _Splitter(text, name).run()
        state.status = "complete"
    return result


def _token_stream(text: str, tokenizer: Tokenizer, state: _StreamState) -> Iterator[Token]:
    """The script's tokens with offsets into `text`, read in windows joined at token boundaries.

    A window's last tokens (those ending within WINDOW_MARGIN of its cut, at least its last one)
    are read again at the start of the next, which begins after the window's last ";" when it has
    one, and never at a word sqlglot reads as a client command only at a statement's start, nor
    apart from the text such a command swallows. A window the tokenizer refuses before its end
    keeps its tokens up to its last ";" (the refusal may be the cut's). A window that yields nothing
    to keep is read again twice as long, unless the quoted body it refuses never closes. On
    return, state.status says whether the whole text was read, or from which offset it was not.
    """
    size = len(text)
    position = 0
    width = WINDOW_CHARS
    commands = tokenizer.COMMANDS
    prefixes = tokenizer.COMMAND_PREFIX_TOKENS
    at_start = True  # the window begins where a statement may (the text's start, after ";")
    while position < size:
        stop = min(size, position + width)
        if stop - position > state.budget or state.tokens <= 0:
            state.status, state.offset = "budget", position
            return
        state.budget -= stop - position
        # In mid-statement a word leads the window, so sqlglot does not read its first word as a
        # client command (it does at the start of what it is given).
        lead = "" if at_start else _LEAD
        chunk = lead + text[position:stop]
        failed = False
        missing: str | None = None
        try:
            tokens = tokenizer.tokenize(chunk)
        except TokenError as error:
            tokens = list(tokenizer.tokens)
            failed = True
            missing = _missing_delimiter(error)
        if lead:
            tokens = tokens[1:]
        offset = position - len(lead)  # from the chunk's offsets to the text's
        final = stop == size
        if failed and not final and missing is not None:
            refused_at = offset + (tokens[-1].end + 1 if tokens else len(lead))
            # A quoted body that never closes is refused by any longer window as well.
            final = _never_closed(text, refused_at, missing)
        if final:
            keep = len(tokens)
        elif failed:
            keep = _through_last_semicolon(tokens, len(tokens))
        else:
            keep = _safe_tokens(tokens, len(chunk) - WINDOW_MARGIN)
            keep = _restart_point(tokens, keep, commands, prefixes, at_start)
        if keep == 0 and not final:
            width *= 2
            continue
        state.tokens -= keep
        yield from _placed(tokens[:keep], offset, text, commands)
        if final:
            if failed:
                state.status = "refused"
                state.offset = tokens[keep - 1].end + 1 if keep else position
            return
        position = tokens[keep - 1].end + 1  # the kept tokens now hold offsets into `text`
        at_start = tokens[keep - 1].token_type in prefixes
        width = WINDOW_CHARS


def _missing_delimiter(error: TokenError) -> str | None:
    """The closing delimiter sqlglot reports missing ("Missing ' from 1:7"), if that is why."""
    match = _MISSING.fullmatch(str(error.__cause__ or ""))
    return match.group(1) if match else None


def _never_closed(text: str, position: int, delimiter: str) -> bool:
    """Whether a quoted body opening at the first non-space from `position` has no closing
    delimiter anywhere after it, so no longer window would read it."""
    opening = position
    while opening < len(text) and text[opening].isspace():
        opening += 1
    return text.find(delimiter, opening + len(delimiter)) < 0


def _safe_tokens(tokens: list[Token], limit: int) -> int:
    """How many of a window's tokens to keep: up to its last ";" before `limit`, else all before."""
    keep = max(0, len(tokens) - 1)
    while keep > 0 and tokens[keep - 1].end >= limit:
        keep -= 1
    return _through_last_semicolon(tokens, keep) or keep


def _through_last_semicolon(tokens: list[Token], keep: int) -> int:
    for index in range(keep - 1, -1, -1):
        if tokens[index].token_type == TokenType.SEMICOLON:
            return index + 1
    return 0


def _restart_point(
    tokens: list[Token],
    keep: int,
    commands: set[TokenType],
    prefixes: set[TokenType],
    at_start: bool,
) -> int:
    """Move a window's cut back so a client command (SHOW, EXECUTE, T-SQL's GO, ...) that
    swallows the text up to the next ";" is read again with that text, never apart from it."""
    while 0 < keep < len(tokens) and tokens[keep - 1].token_type in commands:
        acts = at_start if keep < 2 else tokens[keep - 2].token_type in prefixes
        if not acts:
            break
        keep -= 1
    return keep


def _placed(
    tokens: list[Token], offset: int, text: str, commands: set[TokenType]
) -> Iterator[Token]:
    previous: Token | None = None
    for token in tokens:
        token.start += offset
        token.end += offset
        if (
            token.token_type == TokenType.STRING
            and previous is not None
            and previous.token_type in commands
        ):
            # The text a command swallows is one STRING whose start sqlglot leaves at its last word.
            start = previous.end + 1
            while start < token.end and text[start].isspace():
                start += 1
            token.start = start
        previous = token
        yield token


@dataclass
class _Piece:
    """The tokens between two ";" tokens, as they arrive."""

    tokens: list[Token] = field(default_factory=list)
    overlong: bool = False
    start: int = -1
    end: int = -1
    names: _Names | None = None
    # The client command lines it holds: (offset of the command's token, start of its line).
    command_lines: list[tuple[int, int]] = field(default_factory=list)
    comments: list[tuple[int, int, str]] = field(default_factory=list)


class _Splitter:
    def __init__(self, text: str, dialect_name: str) -> None:
        self.text = text
        self.dialect_name = dialect_name
        self.dialect = Dialect.get_or_raise(dialect_name)
        self.tokenizer = self.dialect.tokenizer()
        self.parser = self.dialect.parser(error_level=ErrorLevel.IMMEDIATE)
        self.comment_syntax = _CommentSyntax(self.tokenizer)
        self.units: list[_Unit] = []
        self.parse_budget = PARSE_BUDGET_CHARS
        self.parse_statements = PARSE_BUDGET_STATEMENTS
        self.depth = 0
        self.head: int | None = None
        self.piece = _Piece()

    def run(self) -> _Result:
        state = _StreamState()
        previous_end = -1
        for token in _token_stream(self.text, self.tokenizer, state):
            piece = self.piece
            if piece.start >= 0 and token.start > previous_end:
                self._interior_comments(piece, previous_end, token.start)
            if token.token_type == TokenType.SEMICOLON:
                self._finish_piece(token)
                previous_end = token.end + 1
                continue
            if piece.start < 0:
                piece.start = token.start
            self._add_token(piece, token)
            previous_end = token.end + 1
        if state.status == "complete":
            if self.piece.start >= 0:
                self._finish_piece(None)
        else:
            self._tail(state)
        return _Result(self.dialect_name, self.units, state.status)

    def _add_token(self, piece: _Piece, token: Token) -> None:
        piece.end = token.end + 1
        if token.token_type in _COMMAND_LINE_FIRST or (
            token.token_type in _COMMAND_LINE_WORD_TOKENS
            and token.text.upper() in _COMMAND_LINE_WORDS
        ):
            line_start = _command_line_start(self.text, token.start)
            if line_start is not None:
                piece.command_lines.append((token.start, line_start))
        if piece.overlong:
            assert piece.names is not None
            piece.names.feed(token)
            return
        piece.tokens.append(token)
        if len(piece.tokens) > MAX_STATEMENT_TOKENS:
            piece.overlong = True
            piece.names = _Names(self.tokenizer)
            for held in piece.tokens:
                piece.names.feed(held)
            piece.tokens = []

    def _interior_comments(self, piece: _Piece, start: int, end: int) -> None:
        if self.text[start:end].isspace():
            return
        comments, _ = self.comment_syntax.scan(self.text, start, end)
        piece.comments.extend(comments)

    def _finish_piece(self, semicolon: Token | None) -> None:
        piece, self.piece = self.piece, _Piece()
        if piece.start < 0:
            if semicolon is not None and self.units:
                self.units[-1].code_end = semicolon.end + 1  # ";;": the empty one joins the last
            return
        code_end = semicolon.end + 1 if semicolon is not None else piece.end
        if piece.overlong:
            assert piece.names is not None
            unit = _Unit(piece.start, code_end, parent=self._parent())
            unit.keys = piece.names.names()
            unit.failure = f"over {MAX_STATEMENT_TOKENS:,} tokens: not parsed"
            self._add_unit(unit, piece)
            return
        tokens = piece.tokens
        cut, depth_after = self._body_depth(tokens)
        if cut is not None:
            head = _Unit(tokens[0].start, tokens[cut].end + 1)
            self._read_head(head, tokens[: cut + 1], piece)
            self._add_unit(head, piece)
            self.head = len(self.units) - 1
            rest = tokens[cut + 1 :]
            self.depth = depth_after
            self._statement(rest, code_end, piece, closing=False)
            return
        was_inside = self.depth > 0
        closing = was_inside and depth_after == 0
        if was_inside:
            self.depth = depth_after
        self._statement(tokens, code_end, piece, closing=closing)
        if closing:
            self.head = None

    def _parent(self) -> int | None:
        return self.head if self.depth > 0 else None

    def _statement(
        self, tokens: list[Token], code_end: int, piece: _Piece, *, closing: bool
    ) -> None:
        unit = _Unit(tokens[0].start, code_end, parent=self._parent() if not closing else self.head)
        inside = unit.parent is not None
        command = self._command_failure(piece, unit)
        if command:
            unit.failure = command
        elif closing:
            unit.failure = "the closing fragment of a body cut at its inner ';'"
        elif inside and tokens[0].token_type == TokenType.END:
            unit.failure = "a fragment of a body cut at its inner ';'"
        elif code_end - unit.code_start > self.parse_budget or self.parse_statements <= 0:
            unit.failure = (
                f"not parsed: past the parser's budget of {PARSE_BUDGET_CHARS:,} characters"
                f" or {PARSE_BUDGET_STATEMENTS:,} statements"
            )
        else:
            self.parse_budget -= code_end - unit.code_start
            self.parse_statements -= 1
            tree, reason = _parse(self.parser, tokens, self.text)
            if tree is None:
                unit.failure = f"{reason} ({self.dialect_name})"
            else:
                try:
                    _describe(tree, unit)
                except RecursionError:
                    unit.failure = "sqlglot's tree is nested too deep to read"
        if unit.failure:
            unit.kind = UNKNOWN
            unit.keys = _token_names(tokens, self.tokenizer)
        self._add_unit(unit, piece)

    def _command_failure(self, piece: _Piece, unit: _Unit) -> str:
        for offset, line_start in piece.command_lines:
            if unit.code_start <= offset < unit.code_end:
                return f"a client command line joins it: {_line_text(self.text, line_start)!r}"
        return ""

    def _add_unit(self, unit: _Unit, piece: _Piece) -> None:
        unit.comments = [
            comment
            for comment in piece.comments
            if unit.code_start <= comment[0] and comment[1] <= unit.code_end
        ]
        self.units.append(unit)

    def _read_head(self, unit: _Unit, tokens: list[Token], piece: _Piece) -> None:
        kind, name = _routine_head(tokens)
        unit.failure = self._command_failure(piece, unit)
        if kind is None and not unit.failure:
            unit.failure = "the head of a body cut at its inner ';', with no CREATE"
        if kind is None or unit.failure:
            unit.keys = _token_names(tokens, self.tokenizer)
            return
        unit.kind = kind
        unit.created = name
        unit.keys = _unique(
            [*_qualified_keys([name] if name else []), *_token_names(tokens, self.tokenizer)]
        )

    def _body_depth(self, tokens: list[Token]) -> tuple[int | None, int]:
        """Where a body opens (the BEGIN to cut after, at depth 0) and the depth after the piece."""
        depth = self.depth
        cut: int | None = None
        opened = False
        for index, token in enumerate(tokens):
            kind = token.token_type
            if kind == TokenType.BEGIN and _opens_body(tokens, index):
                if depth == 0 and self.depth == 0 and cut is None:
                    cut = index
                depth += 1
                opened = True
            elif kind == TokenType.CASE:
                depth += 1
            elif kind == TokenType.END and _closes_block(tokens, index):
                depth = max(0, depth - 1)
        if self.depth == 0:
            if not opened or depth == 0:
                return None, 0
            if cut is None or cut == len(tokens) - 1:
                # No body opens here, or the piece ends at its BEGIN with no statement of it.
                return None, 0
        return cut, depth

    def _tail(self, state: _StreamState) -> None:
        """The rest the tokenizer did not split: one UNKNOWN block from its statement's start."""
        piece = self.piece
        if piece.start >= 0:
            start = piece.start
        else:
            _, start = self.comment_syntax.scan(self.text, state.offset, len(self.text))
        end = len(self.text)
        while end > start and self.text[end - 1].isspace():
            end -= 1
        if start >= end:
            return
        unit = _Unit(start, end, parent=self._parent())
        if piece.overlong and piece.names is not None:
            unit.keys = piece.names.names()
        else:
            unit.keys = _token_names(piece.tokens, self.tokenizer)
        if state.status == "budget":
            unit.failure = (
                f"not split: past the tokenizer's budget of {TOKENIZE_BUDGET_CHARS:,} characters"
                f" or {TOKENIZE_BUDGET_TOKENS:,} tokens"
            )
        else:
            unit.failure = (
                f"the {self.dialect_name} tokenizer cannot split it"
                " (an unterminated string or quoted name)"
            )
        self._add_unit(unit, piece)


def _opens_body(tokens: list[Token], index: int) -> bool:
    following = _word_after(tokens, index)
    if following in _TRANSACTION_WORDS:
        return False
    return not (index == 0 and following is None)


def _closes_block(tokens: list[Token], index: int) -> bool:
    return _word_after(tokens, index) not in _END_CONTROL_WORDS


def _word_after(tokens: list[Token], index: int) -> str | None:
    if index + 1 >= len(tokens):
        return None
    words = tokens[index + 1].text.split(None, 1)
    return words[0].upper() if words else ""


def _routine_head(tokens: list[Token]) -> tuple[str | None, str | None]:
    """The kind and name a body's head creates, from its tokens: CREATE ... PROCEDURE name."""
    if not tokens or tokens[0].token_type != TokenType.CREATE:
        return None, None
    for index, token in enumerate(tokens):
        word = _ROUTINE_WORDS.get(token.text.upper())
        if word is None:
            continue
        rest = index + 1
        if word == "PACKAGE" and rest < len(tokens) and tokens[rest].text.upper() == "BODY":
            rest += 1
        while rest < len(tokens) and tokens[rest].text.upper() in {"IF", "NOT", "EXISTS"}:
            rest += 1
        parts: list[str] = []
        while rest < len(tokens) and _is_name_part(tokens[rest], after_dot=bool(parts)):
            parts.append(tokens[rest].text)
            if rest + 1 < len(tokens) and tokens[rest + 1].token_type == TokenType.DOT:
                rest += 2
            else:
                break
        return f"CREATE {word}", ".".join(parts) or None
    return "CREATE", None


def _is_name_part(token: Token, *, after_dot: bool) -> bool:
    if token.token_type in _NAME_TOKENS:
        return True
    return after_dot and _WORD.fullmatch(token.text) is not None


def _command_line_start(text: str, offset: int) -> int | None:
    """The start of the line that holds only a client command beginning at `offset`, if it does."""
    line_start = max(text.rfind("\n", 0, offset), text.rfind("\r", 0, offset)) + 1
    if text[line_start:offset].strip(" \t"):
        return None
    line_end = len(text)
    for ending in ("\n", "\r"):
        found = text.find(ending, offset)
        if 0 <= found < line_end:
            line_end = found
    if _COMMAND_LINE.fullmatch(text, offset, line_end) is None:
        return None
    return line_start


def _line_text(text: str, line_start: int) -> str:
    line_end = len(text)
    for ending in ("\n", "\r"):
        found = text.find(ending, line_start)
        if 0 <= found < line_end:
            line_end = found
    return text[line_start:line_end].strip()[:100]


# Names


class _Names:
    """Every name tokens hold: runs of names joined by dots, each run also by its last part."""

    def __init__(self, tokenizer: Tokenizer) -> None:
        self.tokenizer = tokenizer
        self.found: dict[str, None] = {}
        self.run: list[str] = []
        self.after_dot = False
        self.previous: Token | None = None

    def feed(self, token: Token, *, nested: bool = False) -> None:
        previous, self.previous = self.previous, token
        kind = token.token_type
        if (
            kind == TokenType.STRING
            and not nested
            and previous is not None
            and previous.token_type in self.tokenizer.COMMANDS
        ):
            self._flush()
            self._command_text(token.text)
            return
        if kind == TokenType.DOT and self.run and not self.after_dot:
            self.after_dot = True
            return
        if _is_name_part(token, after_dot=self.after_dot and bool(self.run)):
            if not self.after_dot:
                self._flush()
            self.run.append(token.text)
            self.after_dot = False
            return
        self._flush()

    def _command_text(self, body: str) -> None:
        """The names in the text a client command swallowed, read by the same tokenizer."""
        try:
            tokens = self.tokenizer.tokenize(body)
        except TokenError:
            tokens = list(self.tokenizer.tokens)
        inner = _Names(self.tokenizer)
        for token in tokens:
            inner.feed(token, nested=True)
        for name in inner.names():
            self._add(name)

    def _flush(self) -> None:
        if self.run:
            self._add(".".join(self.run))
            self._add(self.run[-1])
        self.run = []
        self.after_dot = False

    def _add(self, name: str) -> None:
        if name and len(self.found) < MAX_NAMES:
            self.found.setdefault(name, None)

    def names(self) -> list[str]:
        self._flush()
        return list(self.found)


def _token_names(tokens: Sequence[Token], tokenizer: Tokenizer) -> list[str]:
    names = _Names(tokenizer)
    for token in tokens:
        names.feed(token)
    return names.names()


def _qualified_keys(names: Sequence[str | tuple[str, str]]) -> list[str]:
    keys: dict[str, None] = {}
    for name in names:
        if isinstance(name, tuple):
            full, last = name
        else:
            full, last = name, name.rsplit(".", 1)[-1]
        keys.setdefault(full, None)
        keys.setdefault(last, None)
    return list(keys)


# Facts from the syntax tree


def _describe(tree: exp.Expr, unit: _Unit) -> None:
    """Fill the unit's kind, created, writes, reads, columns and keys from its tree."""
    nodes = _Nodes(tree)
    created_node, created_name = _created(tree)
    written_nodes = _written(tree, nodes)
    skip = {id(node) for node in written_nodes}
    if created_node is not None:
        skip.add(id(created_node))
    reads: list[exp.Table] = []
    for table in nodes.tables:
        if id(table) in skip:
            continue
        if nodes.ctes and not table.args.get("db") and table.name.lower() in nodes.ctes:
            continue
        reads.append(table)
    writes = _table_names(written_nodes)
    reads_named = _table_names(reads)
    unit.kind = _kind(tree, nodes)
    unit.created = created_name[0] if created_name else None
    unit.writes = _unique(full for full, _ in writes)
    unit.reads = _unique(full for full, _ in reads_named)
    unit.columns = nodes.columns
    names: list[tuple[str, str]] = [created_name] if created_name else []
    names.extend(writes)
    names.extend(reads_named)
    names.extend((column, column) for column in unit.columns)
    unit.keys = _qualified_keys(names)


class _Nodes:
    """What one walk of a tree finds: its tables and columns in source order (by the offsets
    sqlglot keeps on identifiers), its CTE names and the properties read."""

    def __init__(self, tree: exp.Expr) -> None:
        self.tables: list[exp.Table] = []
        self.ctes: set[str] = set()
        self.to_tables: list[exp.Expr] = []
        self.renames: list[exp.Expr] = []
        self.materialized = False
        columns: list[tuple[int, str]] = []
        for node in tree.walk(bfs=False):
            if isinstance(node, exp.Table):
                self.tables.append(node)
            elif isinstance(node, exp.Column):
                if not isinstance(node.this, exp.Star) and node.name:
                    columns.append((_position(node.this), node.name))
            elif isinstance(node, exp.ColumnDef):
                routine = isinstance(node.parent, (exp.UserDefinedFunction, exp.StoredProcedure))
                if not routine and node.name:
                    columns.append((_position(node.this), node.name))
            elif isinstance(node, exp.Schema) and isinstance(node.parent, exp.Insert):
                for column in node.expressions:
                    if isinstance(column, exp.Identifier) and column.name:
                        columns.append((_position(column), column.name))
            elif isinstance(node, exp.CTE):
                if node.alias:
                    self.ctes.add(node.alias.lower())
            elif isinstance(node, exp.ToTableProperty):
                self.to_tables.append(node.this)
            elif isinstance(node, exp.AlterRename):
                self.renames.append(node.this)
            elif isinstance(node, exp.MaterializedProperty):
                self.materialized = True
        self.tables.sort(key=lambda table: _position(table.this))
        columns.sort(key=lambda column: column[0])
        self.columns = list(dict.fromkeys(name for _, name in columns))


def _position(node: Any) -> int:
    """Where an identifier starts in the text, or past any offset when sqlglot kept none."""
    if isinstance(node, exp.Expr):
        start = node.meta.get("start")
        if isinstance(start, int):
            return start
    return 1 << 62


def _kind(tree: exp.Expr, nodes: _Nodes) -> str:
    if isinstance(tree, exp.Create):
        kind = str(tree.args.get("kind") or "").upper()
        if nodes.materialized and not kind.startswith("MATERIALIZED"):
            kind = f"MATERIALIZED {kind}"
        return f"CREATE {kind}".strip()
    if isinstance(tree, exp.Drop):
        kind = str(tree.args.get("kind") or "").upper()
        if tree.args.get("materialized"):
            kind = f"MATERIALIZED {kind}"
        return f"DROP {kind}".strip()
    if isinstance(tree, exp.Alter):
        return f"ALTER {str(tree.args.get('kind') or '').upper()}".strip()
    if isinstance(tree, exp.Query):
        return "SELECT"
    if isinstance(tree, exp.TruncateTable):
        return "TRUNCATE"
    return tree.key.upper().replace("_", " ")


def _created(tree: exp.Expr) -> tuple[exp.Expr | None, tuple[str, str] | None]:
    """The node naming the object a CREATE makes, and its qualified name and last part."""
    if not isinstance(tree, exp.Create):
        return None, None
    target = tree.this
    if isinstance(target, exp.Schema):
        target = target.this
    if isinstance(target, (exp.UserDefinedFunction, exp.StoredProcedure, exp.Index)):
        target = target.this
    if isinstance(target, exp.Table):
        return target, _table_name(target)
    if isinstance(target, exp.Identifier) and target.name:
        return target, (target.name, target.name)
    return None, None


def _written(tree: exp.Expr, nodes: _Nodes) -> list[exp.Table]:
    written: list[exp.Expr | None] = []
    if isinstance(tree, exp.Create):
        written.extend(nodes.to_tables)
        if isinstance(tree.this, exp.Index):
            written.append(tree.this.args.get("table"))
    elif isinstance(tree, (exp.Drop, exp.TruncateTable)):
        written.extend(nodes.tables)
    elif isinstance(tree, (exp.Insert, exp.Update, exp.Delete, exp.Merge, exp.Alter)):
        target = tree.this
        written.append(target.this if isinstance(target, exp.Schema) else target)
        if isinstance(tree, exp.Delete):
            written.extend(tree.args.get("tables") or [])
        if isinstance(tree, exp.Alter):
            written.extend(nodes.renames)
    elif isinstance(tree, exp.Copy) and tree.args.get("kind"):
        written.append(tree.this)
    if isinstance(tree, exp.Select):
        into = tree.args.get("into")
        if into is not None:
            written.append(into.this)
    return [node for node in written if isinstance(node, exp.Table)]


def _table_name(table: exp.Table) -> tuple[str, str] | None:
    parts = table.parts
    if not parts or not all(isinstance(part, exp.Identifier) and part.name for part in parts):
        return None
    names = [part.name for part in parts]
    return ".".join(names), names[-1]


def _table_names(tables: Sequence[exp.Table]) -> list[tuple[str, str]]:
    named: dict[tuple[str, str], None] = {}
    for table in tables:
        name = _table_name(table)
        if name is not None:
            named.setdefault(name, None)
    return list(named)


def _unique(items: Iterator[str] | Sequence[str]) -> list[str]:
    return list(dict.fromkeys(items))


# Comments


class _CommentSyntax:
    """The dialect's comment delimiters, to find comments between tokens (where sqlglot drops
    their offsets)."""

    def __init__(self, tokenizer: Tokenizer) -> None:
        delimiters: dict[str, str | None] = dict(tokenizer._COMMENTS)
        self.starts = sorted(delimiters, key=len, reverse=True)
        self.ends = delimiters
        self.nested = bool(tokenizer.NESTED_COMMENTS)
        self.newline_only = bool(tokenizer.COMMENTS_TERMINATE_AT_NEWLINE_ONLY)

    def scan(
        self, text: str, start: int, end: int, *, skip: str = ""
    ) -> tuple[list[tuple[int, int, str]], int]:
        """The comments in text[start:end] as (start, end, body), and where the first text that
        is neither a comment, whitespace nor a character of `skip` begins (`end` if none does)."""
        comments: list[tuple[int, int, str]] = []
        position = start
        while position < end:
            char = text[position]
            if char.isspace() or char in skip:
                position += 1
                continue
            opener = next((s for s in self.starts if text.startswith(s, position, end)), None)
            if opener is None:
                return comments, position
            closer = self.ends[opener]
            body_start = position + len(opener)
            if closer is None:
                stop = _line_end(text, body_start, end, self.newline_only)
                comments.append((position, stop, text[body_start:stop].strip()))
            else:
                stop, body_end = self._block_end(text, body_start, end, opener, closer)
                comments.append((position, stop, text[body_start:body_end].strip()))
            position = stop
        return comments, end

    def _block_end(
        self, text: str, position: int, end: int, opener: str, closer: str
    ) -> tuple[int, int]:
        depth = 1
        while position < end:
            close_at = text.find(closer, position, end)
            if close_at < 0:
                return end, end
            if self.nested:
                open_at = text.find(opener, position, close_at)
                if open_at >= 0:
                    depth += 1
                    position = open_at + len(opener)
                    continue
            depth -= 1
            if depth == 0:
                return close_at + len(closer), close_at
            position = close_at + len(closer)
        return end, end


def _line_end(text: str, position: int, end: int, newline_only: bool) -> int:
    stop = text.find("\n", position, end)
    stop = end if stop < 0 else stop
    if not newline_only:
        carriage = text.find("\r", position, stop)
        if carriage >= 0:
            stop = carriage
    return stop


# Blocks


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


def _blocks(text: str, result: _Result) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    syntax = _CommentSyntax(Dialect.get_or_raise(result.dialect).tokenizer())
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
            None if unit.parent is None else f"b{unit.parent}",
        )
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
    first_line = lines.line_of(start)
    last_line = lines.line_of(max(start, end - 1))
    # Lines standing for the span's ends, so the locator carries the statement's exact characters.
    first = Line(first_line, "", start, start, "")
    last = Line(last_line, "", end, end, "")
    return builder.add(
        block_type, text[start:end], first, last, parent=parent, attrs=attrs, keys=keys
    )
