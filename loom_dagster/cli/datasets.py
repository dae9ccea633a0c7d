"""`loom datasets list|show|approve|export`: the typed datasets the published tables became."""

from __future__ import annotations

import argparse
from typing import Any

from loom_dagster.cli.common import command
from loom_dagster.display import one_line, printable

# Datasets --------------------------------------------------------------------------------------


def add_commands(commands: Any) -> None:
    group = command(commands, "datasets", "the typed datasets the published tables became")
    actions = group.add_subparsers(required=True, metavar="ACTION")
    listing = command(actions, "list", "every served dataset: id, state, rows, name")
    listing.set_defaults(run=_datasets_list)
    show = command(actions, "show", "a dataset's schema, state, questions, rejects, snapshot")
    show.add_argument("id", metavar="ID", help="a dataset's id or name")
    show.set_defaults(run=_datasets_show)
    approve = command(actions, "approve", "approve a schema, retyping the columns named")
    approve.add_argument("id", metavar="ID", help="a dataset's id or name")
    approve.add_argument(
        "--type",
        action="append",
        default=[],
        dest="types",
        metavar="COLUMN=TYPE",
        type=_column_type,
        help="retype a column (repeatable): text, decimal, double, date, timestamp, boolean, "
        "duration",
    )
    approve.add_argument(
        "--revision",
        help="the revision you read (`loom datasets show`): refused if it is no longer served",
    )
    approve.set_defaults(run=_datasets_approve)
    export = command(actions, "export", "write a dataset's live snapshot to a file or s3:// URL")
    export.add_argument("id", metavar="ID", help="a dataset's id or name")
    export.add_argument("--format", choices=("parquet", "csv"), default="parquet")
    export.add_argument(
        "--to",
        metavar="PATH_OR_URL",
        help="a file path or an object-store URL such as s3://bucket/key.parquet "
        "(default: <dataset id>.<format> here)",
    )
    export.add_argument(
        "--allow-incomplete",
        action="store_true",
        help="export a dataset that is incomplete or needs clarification anyway",
    )
    export.set_defaults(run=_datasets_export)


def _column_type(text: str) -> tuple[str, str]:
    column, equals, kind = text.rpartition("=")
    if not equals or not column:
        raise argparse.ArgumentTypeError(f"must be COLUMN=TYPE, not {one_line(text, 200)!r}")
    return column, kind


def _datasets_list(args: argparse.Namespace) -> int:
    from loom_dagster.api.tables import datasets

    for found in datasets():
        complete = "" if found.complete else "  incomplete"
        print(
            f"{found.dataset_id}  {found.state.value:<19}  {found.rows_stored} rows"
            f"  {found.rows_rejected} rejected{complete}  {printable(found.name)}"
        )
    return 0


def _datasets_show(args: argparse.Namespace) -> int:
    from loom_dagster.api.tables import dataset

    found = dataset(args.id)
    print(f"{found.dataset_id}  {printable(found.name)}")
    print(f"source    {printable(found.source)}:{printable(found.path)}  table {found.table_id}")
    print(f"revision  {found.revision}")
    print(f"snapshot  {found.snapshot}  ({printable(found.snapshot_key)})")
    print(f"state     {found.state.value}")
    print(f"rows      {found.rows_stored} stored, {found.rows_rejected} rejected")
    print(f"complete  {'yes' if found.complete else 'no'}")
    for reason in found.incomplete_reasons:
        print(f"  {one_line(reason, 300)}")
    print("columns")
    for column in found.schema.columns:
        approved = "  (approved)" if column.approved else ""
        print(f"  {one_line(column.name, 200)}: {column.type.value}{approved}")
    if found.questions:
        print("questions")
        for question in found.questions:
            print(f"  {one_line(question, 300)}")
    if found.rejects:
        print("rejects")
        for reject in found.rejects:
            print(f"  row {reject.row}: {one_line(reject.reason, 300)}")
    return 0


def _datasets_approve(args: argparse.Namespace) -> int:
    from loom_dagster.api.tables import approve_dataset

    found = approve_dataset(args.id, dict(args.types), revision=args.revision)
    print(
        f"approved {found.dataset_id} at revision {found.revision}: snapshot {found.snapshot}, "
        f"{found.rows_stored} rows stored, {found.rows_rejected} rejected"
    )
    return 0


def _datasets_export(args: argparse.Namespace) -> int:
    from loom_dagster.api.tables import dataset, export_dataset

    target = args.to or f"{dataset(args.id).dataset_id}.{args.format}"
    done = export_dataset(args.id, target, args.format, allow_incomplete=args.allow_incomplete)
    complete = "" if done.facts.complete else " (incomplete)"
    print(
        f"exported {done.facts.dataset_id} snapshot {done.facts.snapshot}: {done.rows} rows"
        f"{complete} to {printable(done.target)}"
    )
    return 0
