"""The SQL reader's dialect detection: which of DETECTION_ORDER reads a script best (the
package's docstring, "Dialect.", says how)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction

from sqlglot import exp
from sqlglot.dialects.dialect import Dialect
from sqlglot.errors import ErrorLevel, TokenError
from sqlglot.parser import Parser
from sqlglot.tokens import Token, TokenType

from extractor_sandbox.formats.sql.facts import MAX_REASON_CHARS

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
MISSING = re.compile(r"Missing (.+) from [0-9]+:[0-9]+")
_POSITION = re.compile(r"\.? *Line [0-9]+, Col: [0-9]+\.?")


@dataclass(frozen=True)
class Detection:
    chosen: str
    source: str  # "detected" or "default"
    candidates: tuple[str, ...]  # the tied dialects, when more than one


@dataclass(frozen=True)
class _Score:
    name: str
    window: int  # characters of the longest window its tokenizer read
    share: Fraction  # of its first statements' characters parsed into a tree


def detect_dialect(text: str) -> Detection:
    cuts = _window_cuts(text)
    scores = [_score(name, text, cuts) for name in DETECTION_ORDER]
    longest = max(score.window for score in scores)
    top = [score for score in scores if score.window == longest]
    best = max(score.share for score in top)
    if best == 0:
        return Detection(top[0].name, "default", ())
    winners = tuple(score.name for score in top if score.share == best)
    return Detection(winners[0], "detected", winners if len(winners) > 1 else ())


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
            if parse_statement(parser, piece, window)[0] is not None:
                parsed += length
            statements += 1
            piece = []
            if statements == DETECTION_STATEMENTS:
                break
    return Fraction(parsed, total) if total else Fraction(0)


def parse_statement(parser: Parser, tokens: list[Token], sql: str) -> tuple[exp.Expr | None, str]:
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
