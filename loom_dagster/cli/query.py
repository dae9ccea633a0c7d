"""`loom query` (a typed plan) and `loom sql` (one SELECT): the answer as a table or JSON,
with its receipt; asked of the home's resident process first (issue 39), else answered here.
`answer_status` renders an answer for the resident too."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from loom_dagster.cli.common import EXIT_USAGE, command, fail, status_of
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
    # Read here, so the resident is sent the plan's text (a file or stdin it cannot read).
    plan: str | Exception
    try:
        plan = _read_plan(args.plan)
    except (LoomError, OSError, ValueError) as error:
        plan = error  # said after the ceilings are checked, as without a resident
    return _answer("query", {"plan": plan, **_ceiling_fields(args)})


def _sql(args: argparse.Namespace) -> int:
    return _answer("sql", {"text": args.text, **_ceiling_fields(args)})


def _read_plan(name: str) -> str:
    if name == "-":
        return sys.stdin.read()
    try:
        return Path(name).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise LoomError(
            f"cannot read the plan {printable(name)}: {error}", code="invalid_plan"
        ) from None


def _ceiling_fields(args: argparse.Namespace) -> dict[str, Any]:
    return {"json": args.json, "max_rows": args.max_rows, "timeout": args.timeout}


def _answer(op: str, fields: dict[str, Any]) -> int:
    """Asked of the home's resident process (docs/datasets.md), printed as it rendered it;
    else answered here and a resident started for the next call, as `loom search` does. Only
    the light client is imported on the first path (no DuckDB, Arrow, sqlglot or settings)."""
    from loom_dagster.search.resident import ResidentClient

    client = ResidentClient()
    if not isinstance(fields.get("plan"), Exception):
        answer = client.query(op, fields)
        if answer is not None:
            return answer.shown()
    status = answer_status(op, argparse.Namespace(**fields))
    if status == 0:
        client.start()  # for the next call; a refused query starts nothing
    return status


def answer_status(op: str, args: argparse.Namespace) -> int:
    """`loom sql` or `loom query` (`op`; args as resident.QUERY_OPS names them, a plan as its
    text or the error reading it gave) answered, its output printed and its exit status
    returned as main() gives them: the resident (resident_server.py) renders with this too."""
    return status_of(lambda: _answer_here(op, args))


def _answer_here(op: str, args: argparse.Namespace) -> int:
    ceilings = _ceilings(args)
    if ceilings is None:
        return EXIT_USAGE
    if op == "sql":
        from loom_dagster.api.tables import sql

        return _print_answer(sql(args.text, ceilings=ceilings), as_json=args.json)
    from loom_dagster.api.tables import query

    plan = args.plan
    if isinstance(plan, Exception):
        raise plan  # the client could not read it: said here, after the ceilings
    return _print_answer(query(plan, ceilings=ceilings), as_json=args.json)


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
