"""`loom query` (a typed plan) and `loom sql` (one SELECT): the answer as a table or JSON,
with its receipt."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from loom_dagster.cli.common import EXIT_USAGE, command, fail
from loom_dagster.display import one_line, printable
from loom_dagster.errors import LoomError

# Queries ---------------------------------------------------------------------------------------

# A cell of a printed answer: a document's text may be long; --json has every value whole.
_CELL_LIMIT = 60


def add_commands(commands: Any) -> None:
    query = command(commands, "query", "answer a typed query plan (JSON) over the datasets")
    query.add_argument("plan", metavar="PLAN", help="a JSON plan file, or - for stdin")
    _answer_arguments(query)
    query.set_defaults(run=_query)
    sql = command(commands, "sql", "answer one SELECT over dataset names as tables")
    sql.add_argument("text", metavar="SELECT")
    _answer_arguments(sql)
    sql.set_defaults(run=_sql)


def _answer_arguments(command: argparse.ArgumentParser) -> None:
    command.add_argument("--json", action="store_true", help="the answer and its receipt as JSON")
    command.add_argument(
        "--max-rows", type=int, default=10_000, help="refuse an answer past this many rows"
    )
    command.add_argument(
        "--timeout", type=float, default=30.0, metavar="SECONDS", help="stop the query past this"
    )


def _ceilings(args: argparse.Namespace) -> Any:
    """The query's ceilings, or None after saying in one line which one is invalid."""
    from loom_dagster.query.run import Ceilings

    try:
        return Ceilings(max_rows=args.max_rows, seconds=args.timeout)
    except LoomError as error:
        if error.code != "invalid_ceiling":
            raise
        fail(str(error))
        return None


def _query(args: argparse.Namespace) -> int:
    from loom_dagster.api.tables import query

    ceilings = _ceilings(args)
    if ceilings is None:
        return EXIT_USAGE

    if args.plan == "-":
        text = sys.stdin.read()
    else:
        try:
            text = Path(args.plan).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as error:
            raise LoomError(
                f"cannot read the plan {printable(args.plan)}: {error}", code="invalid_plan"
            ) from None
    return _print_answer(query(text, ceilings=ceilings), as_json=args.json)


def _sql(args: argparse.Namespace) -> int:
    from loom_dagster.api.tables import sql

    ceilings = _ceilings(args)
    if ceilings is None:
        return EXIT_USAGE
    return _print_answer(sql(args.text, ceilings=ceilings), as_json=args.json)


def _print_answer(answer: Any, *, as_json: bool) -> int:
    import json

    if as_json:
        print(json.dumps(answer.to_dict(), indent=2, sort_keys=False))
        return 0
    header = [one_line(c.label or c.name, _CELL_LIMIT) for c in answer.columns]
    rows = [[_cell(value) for value in row] for row in answer.rows]
    widths = [max([len(h)] + [len(r[i]) for r in rows]) for i, h in enumerate(header)]
    print("  ".join(h.ljust(w) for h, w in zip(header, widths, strict=True)).rstrip())
    print("  ".join("-" * w for w in widths))
    for row in rows:
        print("  ".join(v.ljust(w) for v, w in zip(row, widths, strict=True)).rstrip())
    receipt = answer.receipt
    print(f"({len(rows)} rows)")
    for read in receipt.snapshots:
        print(
            f"read {read.alias}: {read.dataset_id} snapshot {read.snapshot}  {printable(read.name)}"
        )
    if not receipt.complete:
        print("incomplete: " + one_line("; ".join(receipt.reasons), 500))
    return 0


def _cell(value: object) -> str:
    from loom_dagster.query.validated import json_value

    if value is None:
        return "NULL"
    return one_line(str(json_value(value)), _CELL_LIMIT)
