"""The SQL reader's split: a script cut into statements at its dialect's ";" tokens, in
bounded windows, with its client command lines, bodies and comments (the package's docstring,
"Statements.", "Client command lines.", "Bodies." and "Bounds.")."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field

from sqlglot.dialects.dialect import Dialect
from sqlglot.errors import ErrorLevel, TokenError
from sqlglot.tokens import Token, Tokenizer, TokenType

from extractor_sandbox.formats.sql.detect import MISSING, Detection, parse_statement
from extractor_sandbox.formats.sql.facts import (
    UNKNOWN,
    Names,
    Unit,
    describe,
    is_name_part,
    qualified_keys,
    token_names,
    unique,
)

WINDOW_CHARS = 262_144  # one tokenizer call of the split
WINDOW_MARGIN = 1_024  # tokens ending this close to a window's cut are read again in the next one
TOKENIZE_BUDGET_CHARS = 8_000_000  # characters the tokenizer reads, windows read again included
TOKENIZE_BUDGET_TOKENS = 2_000_000  # tokens it may yield (its time grows with them)
PARSE_BUDGET_CHARS = 1_000_000  # characters of statements the parser reads
PARSE_BUDGET_STATEMENTS = 25_000  # statements the parser reads
MAX_STATEMENT_TOKENS = 100_000
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
_COMMAND_LINE_WORD_TOKENS = frozenset({TokenType.VAR, TokenType.IDENTIFIER, TokenType.COMMAND})
_LEAD = "zq "  # a name read before a window that begins in mid-statement, then dropped


@dataclass
class Result:
    dialect: str
    units: list[Unit]
    status: str  # "complete", "refused" (the tokenizer could not split the rest), "budget"


@dataclass
class _StreamState:
    status: str = "complete"
    offset: int = 0  # where the unread rest begins
    budget: int = field(default_factory=lambda: TOKENIZE_BUDGET_CHARS)
    tokens: int = field(default_factory=lambda: TOKENIZE_BUDGET_TOKENS)


def split_with_candidates(text: str, detection: Detection) -> Result:
    result = Splitter(text, detection.chosen).run()
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
            return Splitter(text, name).run()
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
    match = MISSING.fullmatch(str(error.__cause__ or ""))
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
    names: Names | None = None
    # The client command lines it holds: (offset of the command's token, start of its line).
    command_lines: list[tuple[int, int]] = field(default_factory=list)
    comments: list[tuple[int, int, str]] = field(default_factory=list)


class Splitter:
    def __init__(self, text: str, dialect_name: str) -> None:
        self.text = text
        self.dialect_name = dialect_name
        self.dialect = Dialect.get_or_raise(dialect_name)
        self.tokenizer = self.dialect.tokenizer()
        self.parser = self.dialect.parser(error_level=ErrorLevel.IMMEDIATE)
        self.comment_syntax = CommentSyntax(self.tokenizer)
        self.units: list[Unit] = []
        self.parse_budget = PARSE_BUDGET_CHARS
        self.parse_statements = PARSE_BUDGET_STATEMENTS
        self.depth = 0
        self.head: int | None = None
        self.piece = _Piece()

    def run(self) -> Result:
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
        return Result(self.dialect_name, self.units, state.status)

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
            piece.names = Names(self.tokenizer)
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
            unit = Unit(piece.start, code_end, parent=self._parent())
            unit.keys = piece.names.names()
            unit.failure = f"over {MAX_STATEMENT_TOKENS:,} tokens: not parsed"
            self._add_unit(unit, piece)
            return
        tokens = piece.tokens
        cut, depth_after = self._body_depth(tokens)
        if cut is not None:
            head = Unit(tokens[0].start, tokens[cut].end + 1)
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
        unit = Unit(tokens[0].start, code_end, parent=self._parent() if not closing else self.head)
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
            tree, reason = parse_statement(self.parser, tokens, self.text)
            if tree is None:
                unit.failure = f"{reason} ({self.dialect_name})"
            else:
                try:
                    describe(tree, unit)
                except RecursionError:
                    unit.failure = "sqlglot's tree is nested too deep to read"
        if unit.failure:
            unit.kind = UNKNOWN
            unit.keys = token_names(tokens, self.tokenizer)
        self._add_unit(unit, piece)

    def _command_failure(self, piece: _Piece, unit: Unit) -> str:
        for offset, line_start in piece.command_lines:
            if unit.code_start <= offset < unit.code_end:
                return f"a client command line joins it: {_line_text(self.text, line_start)!r}"
        return ""

    def _add_unit(self, unit: Unit, piece: _Piece) -> None:
        unit.comments = [
            comment
            for comment in piece.comments
            if unit.code_start <= comment[0] and comment[1] <= unit.code_end
        ]
        self.units.append(unit)

    def _read_head(self, unit: Unit, tokens: list[Token], piece: _Piece) -> None:
        kind, name = _routine_head(tokens)
        unit.failure = self._command_failure(piece, unit)
        if kind is None and not unit.failure:
            unit.failure = "the head of a body cut at its inner ';', with no CREATE"
        if kind is None or unit.failure:
            unit.keys = token_names(tokens, self.tokenizer)
            return
        unit.kind = kind
        unit.created = name
        unit.keys = unique(
            [*qualified_keys([name] if name else []), *token_names(tokens, self.tokenizer)]
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
        unit = Unit(start, end, parent=self._parent())
        if piece.overlong and piece.names is not None:
            unit.keys = piece.names.names()
        else:
            unit.keys = token_names(piece.tokens, self.tokenizer)
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
        while rest < len(tokens) and is_name_part(tokens[rest], after_dot=bool(parts)):
            parts.append(tokens[rest].text)
            if rest + 1 < len(tokens) and tokens[rest + 1].token_type == TokenType.DOT:
                rest += 2
            else:
                break
        return f"CREATE {word}", ".".join(parts) or None
    return "CREATE", None


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


class CommentSyntax:
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
