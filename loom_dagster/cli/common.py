"""What the `loom` commands share: exit statuses, the one-line error, a subcommand without
abbreviated flags, the registration flags (`--option`, `--replace`) and the printed gc tally."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from loom_dagster.display import one_line, printable

if TYPE_CHECKING:
    from loom_dagster.lifecycle import Collected
    from loom_dagster.sources import OptionRule

EXIT_USAGE, EXIT_FAILED = 2, 1
# An error line is one line, but a path in it may be long: cut only what no terminal shows.
_ERROR_LINE_LIMIT = 2000


def fail(message: str) -> None:
    print(f"loom: {one_line(message, _ERROR_LINE_LIMIT)}", file=sys.stderr, flush=True)


def status_of(run: Callable[[], int]) -> int:
    """`run`'s exit status, a LoomError or OSError said in one line as main() says it: for an
    answer the resident process renders (resident_server.py) as the command would."""
    from loom_dagster.errors import LoomError

    try:
        return run()
    except LoomError as error:
        fail(str(error))
        return EXIT_FAILED
    except OSError as error:
        fail(f"io_error: {error}")
        return EXIT_FAILED


def command(group: Any, name: str, help: str) -> argparse.ArgumentParser:
    # No abbreviated flags: `--token` must never be taken for `--token-file`.
    parser: argparse.ArgumentParser = group.add_parser(name, help=help, allow_abbrev=False)
    return parser


def registration_arguments(command: argparse.ArgumentParser) -> None:
    command.add_argument(
        "--option",
        action="append",
        dest="options",
        metavar="[GLOB:]NAME=VALUE",
        help="an extraction option for the files matching GLOB (default: every file): "
        "encoding=CODEC, sql_dialect=DIALECT or format=FORMAT; repeatable, a later one wins; "
        "replaces the source's options (none given: they are kept)",
    )
    command.add_argument(
        "--no-options", action="store_true", help="clear the source's extraction options"
    )
    command.add_argument(
        "--replace",
        action="store_true",
        help="move the --name of another folder here, retiring that folder's documents",
    )


def option_rules(args: argparse.Namespace) -> list[OptionRule] | None:
    """The --option rules (None: keep the source's); raises BadOption after printing the one
    line that says which is wrong."""
    from loom_dagster.errors import SourceError
    from loom_dagster.sources import parse_option

    if args.no_options or args.options:
        try:
            return [parse_option(spec) for spec in args.options or ()]
        except SourceError as error:
            print(f"loom: {error}", file=sys.stderr)
            raise BadOption from None
    return None


class BadOption(Exception):
    """An --option the command refused, already said on stderr (exit status 2)."""


def print_collected(collected: Collected, verb: str, *, verbose: bool) -> None:

    if verbose:
        for key in collected.partitions:
            print(f"partition {printable(key)}")
        for obj in collected.objects:
            print(f"object    {printable(obj.key)}  {obj.size} bytes")
    totals = collected.totals()
    parts = ", ".join(
        f"{count} {'revision files' if kind == 'revisions' else kind} ({size} bytes)"
        for kind, (count, size) in totals.items()
    )
    print(f"{verb} {len(collected.partitions)} partitions; objects: {parts}")
    if collected.skipped:
        print(f"kept {len(collected.skipped)} objects a run used since they were listed")
