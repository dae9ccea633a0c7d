"""The SQL reader's facts: what a statement creates, writes, reads and defines, from its syntax
tree or, when it has none, the names its tokens hold (the package's docstring, "Facts." and
"Keys.")."""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from sqlglot import exp
from sqlglot.errors import TokenError
from sqlglot.tokens import Token, Tokenizer, TokenType

MAX_NAMES = 10_001  # one past the contract's 10,000 keys, so a longer list is marked truncated
MAX_REASON_CHARS = 300
UNKNOWN = "UNKNOWN"
_NAME_TOKENS = frozenset({TokenType.VAR, TokenType.IDENTIFIER})
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_$]*")


@dataclass
class Unit:
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


def is_name_part(token: Token, *, after_dot: bool) -> bool:
    if token.token_type in _NAME_TOKENS:
        return True
    return after_dot and _WORD.fullmatch(token.text) is not None


class Names:
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
        if is_name_part(token, after_dot=self.after_dot and bool(self.run)):
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
        inner = Names(self.tokenizer)
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


def token_names(tokens: Sequence[Token], tokenizer: Tokenizer) -> list[str]:
    names = Names(tokenizer)
    for token in tokens:
        names.feed(token)
    return names.names()


def qualified_keys(names: Sequence[str | tuple[str, str]]) -> list[str]:
    keys: dict[str, None] = {}
    for name in names:
        if isinstance(name, tuple):
            full, last = name
        else:
            full, last = name, name.rsplit(".", 1)[-1]
        keys.setdefault(full, None)
        keys.setdefault(last, None)
    return list(keys)


def describe(tree: exp.Expr, unit: Unit) -> None:
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
    unit.writes = unique(full for full, _ in writes)
    unit.reads = unique(full for full, _ in reads_named)
    unit.columns = nodes.columns
    names: list[tuple[str, str]] = [created_name] if created_name else []
    names.extend(writes)
    names.extend(reads_named)
    names.extend((column, column) for column in unit.columns)
    unit.keys = qualified_keys(names)


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


def unique(items: Iterator[str] | Sequence[str]) -> list[str]:
    return list(dict.fromkeys(items))
