"""`loom ingest`: register a folder and publish every new revision, a line per file."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from loom_dagster.cli.common import (
    EXIT_FAILED,
    EXIT_USAGE,
    BadOption,
    command,
    fail,
    option_rules,
    registration_arguments,
)
from loom_dagster.display import one_line, printable

if TYPE_CHECKING:
    from loom_dagster.api.reports import FileOutcome


def add_commands(commands: Any) -> None:
    ingest = command(commands, "ingest", "register a folder and publish every new revision")
    ingest.add_argument("folder", type=Path)
    ingest.add_argument("--name", help="the source's name (default: the folder's name)")
    ingest.add_argument(
        "--include",
        action="append",
        metavar="GLOB",
        help="only files matching this glob (repeatable; default: every file)",
    )
    ingest.add_argument(
        "--strict",
        action="store_true",
        help="exit 1 when any file is refused or published incomplete (for CI)",
    )
    ingest.add_argument(
        "--reprocess-stale",
        action="store_true",
        help="also re-extract and publish the live revisions a parser upgrade left stale",
    )
    ingest.add_argument(
        "--confirm-retire",
        action="store_true",
        help="retire deleted files even when the scan would retire all of a folder's documents "
        "or more than LOOM_RETIRE_MAX_SHARE of them (held otherwise)",
    )
    registration_arguments(ingest)
    ingest.set_defaults(run=_ingest)


def _progress(line: str) -> None:
    print(printable(line), file=sys.stderr, flush=True)


def _ingest(args: argparse.Namespace) -> int:
    from loom_dagster.api.quick import unchanged_ingest
    from loom_dagster.extractor.local import service_command
    from loom_dagster.settings import LoomSettings

    settings = LoomSettings.from_env()  # every setting, once; a bad one stops here
    configured = settings.extractor
    if not (configured.default_url or configured.routes):
        # The local default cannot start without its environment (as root): say so now, in
        # one line, rather than in a run whose log the command does not print.
        service_command("127.0.0.1", 0)
    from loom_dagster.runs import Interrupted

    try:
        rules = option_rules(args)
    except BadOption:
        return EXIT_USAGE
    try:
        # Nothing changed: answered from the catalog and a scan, without importing Dagster.
        report = (
            None
            if args.replace or args.confirm_retire
            else unchanged_ingest(
                settings,
                args.folder,
                name=args.name,
                include=args.include or ("**/*",),
                options=rules,
                progress=_progress,
                reprocess_stale=args.reprocess_stale,
            )
        )
        if report is None:
            from loom_dagster.api.ingest import ingest_folder

            report = ingest_folder(
                args.folder,
                settings=settings,
                name=args.name,
                include=args.include or ("**/*",),
                options=rules,
                replace=args.replace,
                progress=_progress,
                reprocess_stale=args.reprocess_stale,
                confirm_retire=args.confirm_retire,
            )
    except Interrupted as stopped:
        print(f"loom: {stopped}", file=sys.stderr)
        return stopped.exit_status
    # One write for many lines: a folder of a million files prints a million of them.
    sys.stdout.writelines(_outcome_line(outcome) for outcome in report.outcomes)
    for path in report.retired:
        print(f"{'retired':<10} {printable(path)}")
    for path in report.held:
        print(f"{'held':<10} {printable(path)}  retirement held: --confirm-retire retires it")
    if report.held_line:
        print(printable(report.held_line))
    tally = report.tally()
    conserved = report.conserved_in(tally)
    print(
        f"files {report.files} = published {tally['published']} + refused {tally['refused']}"
        f" + unchanged {tally['unchanged']} + skipped {tally['skipped']}"
        + ("" if conserved else f"  (does not hold: {tally['failed']} failed)")
    )
    if not conserved:
        return EXIT_FAILED
    if args.strict and (tally["refused"] or report.incomplete):
        fail(f"strict: {tally['refused']} refused, {report.incomplete} incomplete")
        return EXIT_FAILED
    return 0


def _outcome_line(outcome: FileOutcome) -> str:
    where = f"  {printable(outcome.revision)}" if outcome.revision else ""
    detail = f"  {one_line(outcome.detail)}" if outcome.detail else ""
    return f"{printable(outcome.status):<10} {printable(outcome.path)}{where}{detail}\n"
