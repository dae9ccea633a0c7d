"""`loom sql`: one SELECT a person wrote, over dataset names as tables, held to an allowlist.

The text is parsed with sqlglot (DuckDB's dialect) and accepted only when it is a single
SELECT (or a set operation of SELECTs) every node of which is on the allowlist below: no table
function, no file or network access, no pragma, no DDL or DML, no parameter, no recursive CTE,
no function sqlglot does not know. Each table it names is a served dataset (by name or id) or a
CTE of the statement; a dataset is rewritten to `(SELECT * FROM read_parquet($sN))` under the
name it was given, and the statement run from the rewritten AST (comments dropped), under the
same ceilings and in the same locked-down connection as a plan, with the same receipt.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import sqlglot
from sqlglot import exp
from sqlglot.errors import ParseError, SqlglotError

from loom_dagster.datasets.model import Dataset, DatasetState
from loom_dagster.display import one_line
from loom_dagster.query.compile import DIALECT
from loom_dagster.query.errors import QueryError
from loom_dagster.query.plan import MAX_DATASETS, shown

# sqlglot warns on stderr when it falls back to a bare command (LOAD, EXPLAIN, CALL); the
# refusal that follows says it in one line.
logging.getLogger("sqlglot").setLevel(logging.ERROR)

MAX_SQL_CHARS = 20_000
MAX_NODES = 5_000

# Statement structure: selects, their clauses, names, literals, operators.
_STRUCTURE: set[type[exp.Expr]] = {
    exp.Select, exp.Union, exp.Except, exp.Intersect, exp.Subquery, exp.With, exp.CTE,
    exp.From, exp.Join, exp.Where, exp.Group, exp.Having, exp.Order, exp.Ordered, exp.Limit,
    exp.Offset, exp.Distinct, exp.Column, exp.Identifier, exp.Star, exp.Table, exp.TableAlias,
    exp.Alias, exp.Literal, exp.Null, exp.Boolean, exp.Paren, exp.Var, exp.DataType,
    exp.DataTypeParam, exp.Interval,
    exp.And, exp.Or, exp.Not, exp.EQ, exp.NEQ, exp.GT, exp.GTE, exp.LT, exp.LTE, exp.Is,
    exp.In, exp.Between, exp.Like, exp.ILike, exp.Add, exp.Sub, exp.Mul, exp.Div, exp.IntDiv,
    exp.Mod, exp.Neg, exp.Case, exp.If, exp.Cast, exp.TryCast,
}  # fmt: skip
# Functions: aggregates and scalar functions of values only. None reads a file, the network,
# a setting, a variable or the catalog.
_FUNCTIONS: set[type[exp.Expr]] = {
    exp.Count, exp.Sum, exp.Avg, exp.Min, exp.Max, exp.CountIf, exp.Stddev, exp.Variance,
    exp.Median, exp.Coalesce, exp.Nullif, exp.Greatest, exp.Least, exp.Abs, exp.Round,
    exp.Floor, exp.Ceil, exp.Lower, exp.Upper, exp.Length, exp.Substring, exp.Trim,
    exp.Concat, exp.DPipe, exp.DateTrunc, exp.TimestampTrunc, exp.Extract, exp.Year,
    exp.Month, exp.Day,
}  # fmt: skip
ALLOWED = frozenset(_STRUCTURE | _FUNCTIONS)
_TYPES = {
    exp.DataType.Type.BOOLEAN, exp.DataType.Type.TINYINT, exp.DataType.Type.SMALLINT,
    exp.DataType.Type.INT, exp.DataType.Type.BIGINT, exp.DataType.Type.DOUBLE,
    exp.DataType.Type.FLOAT, exp.DataType.Type.DECIMAL, exp.DataType.Type.VARCHAR,
    exp.DataType.Type.TEXT, exp.DataType.Type.DATE, exp.DataType.Type.TIMESTAMP,
    exp.DataType.Type.TIMESTAMPTZ,
}  # fmt: skip
_ROOTS = (exp.Select, exp.Union, exp.Except, exp.Intersect)


def _refused(message: str) -> QueryError:
    return QueryError(one_line(message, 300), code="sql_refused")


@dataclass(frozen=True)
class CheckedSql:
    tree: exp.Expr  # the statement, its dataset tables not yet rewritten
    tables: tuple[exp.Table, ...]  # the nodes naming datasets, in walk order
    table_datasets: tuple[int, ...]  # the dataset each of them names
    datasets: tuple[Dataset, ...]  # a dataset for each distinct name, in order of first use
    aliases: tuple[str, ...]  # each dataset's name as the statement wrote it


def check_sql(text: str, resolve: Callable[[str], Dataset | None]) -> CheckedSql:
    """Parse `text` and accept it only as one allowlisted SELECT over served datasets."""
    if len(text) > MAX_SQL_CHARS:
        raise _refused(f"the statement is longer than {MAX_SQL_CHARS} characters")
    try:
        statements = sqlglot.parse(text, dialect=DIALECT)
    except ParseError as error:
        first = error.errors[0] if error.errors else {}
        where = f" at line {first.get('line')}, column {first.get('col')}" if first else ""
        why = first.get("description") or "not SQL"
        raise _refused(f"cannot parse the statement{where}: {why}") from None
    except (SqlglotError, RecursionError, ValueError) as error:
        raise _refused(f"cannot parse the statement: {error}") from None
    # A trailing comment after the last `;` parses as an empty statement.
    present = [s for s in statements if s is not None and not isinstance(s, exp.Semicolon)]
    if len(present) != 1:
        raise _refused(f"one statement is allowed, not {len(present)}")
    tree = present[0]
    if not isinstance(tree, _ROOTS):
        what = tree.name if isinstance(tree, exp.Command) else type(tree).__name__
        raise _refused(f"only a SELECT is allowed, not {shown(what.upper(), 40)}")
    nodes = list(tree.walk())
    if len(nodes) > MAX_NODES:
        raise _refused(f"the statement has more than {MAX_NODES} parts")
    ctes: set[str] = set()
    for node in nodes:
        if type(node) not in ALLOWED:
            raise _refused(f"{_describe(node)} is not allowed")
        if isinstance(node, exp.With) and node.args.get("recursive"):
            raise _refused("a recursive CTE is not allowed")
        if isinstance(node, exp.DataType) and node.this not in _TYPES:
            raise _refused(f"the type {node.sql(dialect=DIALECT)} is not allowed")
        if isinstance(node, exp.CTE):
            ctes.add(node.alias_or_name)
    tables = []
    datasets: list[Dataset] = []
    aliases: list[str] = []
    indices: list[int] = []
    for node in nodes:
        if not isinstance(node, exp.Table):
            continue
        if (
            not isinstance(node.this, exp.Identifier)
            or node.args.get("db")
            or node.args.get("catalog")
        ):
            raise _refused(f"the table {shown(node.sql(dialect=DIALECT))} is not a dataset name")
        name = node.name
        if name in ctes:
            continue
        dataset = resolve(name)
        if dataset is None:
            raise QueryError(
                f"no dataset {shown(name)} is served (by id or name)", code="unknown_dataset"
            )
        if dataset.state is DatasetState.NEEDS_CLARIFICATION:
            raise QueryError(
                f"dataset {dataset.dataset_id} ({shown(dataset.name)}) needs clarification; "
                f"approve it first (loom datasets show {dataset.dataset_id})",
                code="needs_clarification",
            )
        tables.append(node)
        known = [d.dataset_id for d in datasets]
        if dataset.dataset_id not in known:
            datasets.append(dataset)
            aliases.append(name)
            known.append(dataset.dataset_id)
        indices.append(known.index(dataset.dataset_id))
    if not tables:
        raise _refused("the statement reads no dataset")
    if len(datasets) > MAX_DATASETS:
        raise QueryError(
            f"the statement reads {len(datasets)} datasets; a query reads at most {MAX_DATASETS}",
            code="too_many_datasets",
        )
    return CheckedSql(tree, tuple(tables), tuple(indices), tuple(datasets), tuple(aliases))


def _describe(node: exp.Expr) -> str:
    if isinstance(node, exp.Anonymous):
        return f"the function {shown(str(node.name))}"
    if isinstance(node, exp.Func):
        return f"the function {shown(node.sql_name().lower())}"
    return type(node).__name__.upper()


def rewrite(checked: CheckedSql, paths: list[str], max_rows: int) -> tuple[str, dict[str, Any]]:
    """The statement to run: each dataset table a subquery over its snapshot, under the name
    the statement gave it, the whole cut at one row past the row ceiling."""
    tree = checked.tree.copy()
    # The copy's table nodes, found again in the same walk order as the original's.
    originals = {id(node) for node in checked.tables}
    copied = [
        copy
        for node, copy in zip(checked.tree.walk(), tree.walk(), strict=True)
        if id(node) in originals
    ]
    parameters: dict[str, Any] = {}
    for node, dataset in zip(copied, checked.table_datasets, strict=True):
        parameters[f"s{dataset}"] = paths[dataset]
        read = exp.Anonymous(this="read_parquet", expressions=[exp.Placeholder(this=f"s{dataset}")])
        source = (
            exp.select(exp.Star())
            .from_(read)
            .subquery(exp.to_identifier(node.alias or node.name, quoted=True))
        )
        node.replace(source)
    parameters["n0"] = max_rows + 1
    wrapped = (
        exp.select(exp.Star())
        .from_(exp.Subquery(this=tree, alias=exp.TableAlias(this=exp.to_identifier("q"))))
        .limit(exp.Placeholder(this="n0"))
    )
    return wrapped.sql(dialect=DIALECT, comments=False), parameters
