"""`loom sources add|remove|list`, the registered folders, and `loom show`, one file's
revisions with their outcomes."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from loom_dagster.cli.common import (
    EXIT_USAGE,
    BadOption,
    command,
    option_rules,
    print_collected,
    registration_arguments,
)
from loom_dagster.display import one_line, printable

if TYPE_CHECKING:
    from loom_dagster.sources import Skipped


def add_commands(commands: Any) -> None:
    sources = command(commands, "sources", "register a folder for the sensor to watch")
    source_actions = sources.add_subparsers(required=True, metavar="ACTION")
    add = command(source_actions, "add", "register a folder (the loom_folders sensor picks it up)")
    add.add_argument("folder", type=Path)
    add.add_argument("--name")
    add.add_argument("--include", action="append", metavar="GLOB")
    add.add_argument(
        "--tag",
        action="append",
        dest="tags",
        metavar="TAG",
        help="a tag `loom search --tag` filters on (repeatable); replaces the source's tags "
        "(none given: they are kept)",
    )
    add.add_argument("--no-tags", action="store_true", help="clear the source's tags")
    registration_arguments(add)
    add.set_defaults(run=_sources_add)
    remove = command(
        source_actions, "remove", "retire a source's documents and stop watching its folder"
    )
    remove.add_argument("name")
    remove.add_argument("--yes", action="store_true", help="do it (without: say what it would do)")
    remove.add_argument(
        "--purge", action="store_true", help="also delete its partitions and stored objects"
    )
    remove.add_argument("-v", "--verbose", action="store_true", help="name what --purge deletes")
    remove.set_defaults(run=_sources_remove)
    listing = command(source_actions, "list", "every registered folder, its options and counts")
    listing.set_defaults(run=_sources_list)


def add_show(commands: Any) -> None:
    show = command(commands, "show", "every revision of one file, with its outcomes")
    show.add_argument("path", metavar="PATH", help="a file in a registered folder, or SOURCE:PATH")
    show.set_defaults(run=_show)


def _sources_add(args: argparse.Namespace) -> int:
    from loom_dagster.api.registration import register
    from loom_dagster.settings import LoomSettings

    try:
        rules = option_rules(args)
    except BadOption:
        return EXIT_USAGE
    settings = LoomSettings.from_env()
    settings.prepare()
    registration = register(
        settings,
        args.folder,
        name=args.name,
        include=args.include or ("**/*",),
        options=rules,
        replace=args.replace,
        tags=[] if args.no_tags else args.tags,
    )
    print(registration.describe())
    return 0


def _sources_list(args: argparse.Namespace) -> int:
    from loom_dagster.api.quick import sources  # the catalog only: no Dagster
    from loom_dagster.waiting import waiting_by_source

    summaries = sources()
    waiting = waiting_by_source()
    if not summaries:
        print("no folder is registered: run `loom ingest FOLDER` or `loom sources add FOLDER`")
    for summary in summaries:
        source = summary.source
        print(f"{source.name}  {printable(source.root)}")
        print(f"  include   {' '.join(printable(g) for g in source.include)}")
        if source.options:
            print(f"  options   {' '.join(printable(r.spec()) for r in source.options)}")
        if source.tags:
            print(f"  tags      {' '.join(source.tags)}")
        print(f"  last sync {summary.last_sync or 'never'}")
        print(
            f"  documents {summary.live} live, {summary.retired} retired"
            + (f", {summary.pending} not published" if summary.pending else "")
        )
        if source.name in waiting:
            print(f"  waiting   {waiting[source.name].describe()}")
            _print_skipped(waiting[source.name].skipped)
    return 0


# More than this many skipped things in one folder are counted, not listed one by one.
SKIPPED_SHOWN = 20


def _print_skipped(skipped: Sequence[Skipped]) -> None:
    """Each thing the folder's scan passed over, with its code and why (issue 40 row 9)."""
    for item in skipped[:SKIPPED_SHOWN]:
        print(f"  skipped   {printable(item.path)}  {item.code}: {printable(item.message)}")
    if len(skipped) > SKIPPED_SHOWN:
        print(f"  skipped   and {len(skipped) - SKIPPED_SHOWN} more")


def _show(args: argparse.Namespace) -> int:
    from loom_dagster.api.lookup import show

    found = show(args.path)
    print(f"{found.source}:{printable(found.path)}")
    for entry in found.revisions:
        revision = entry.revision
        options = "" if revision.options == "{}" else f"  options {printable(revision.options)}"
        print(
            f"{entry.status:<10} {revision.key}  registered {entry.registered_at}"
            f"  {revision.size} bytes  sha256 {revision.sha256[:16]}{options}"
        )
        if revision.key in found.stale:
            stale = found.stale[revision.key]
            print(
                f"  stale: made by {printable(stale.made_by)}, the extractor now has "
                f"{printable(stale.now)} (loom ingest --reprocess-stale)"
            )
        for outcome in entry.outcomes:
            chunks = "" if outcome.chunk_count is None else f"  {outcome.chunk_count} chunks"
            code = (
                f"  {outcome.code}: {one_line(outcome.message or '', 200)}" if outcome.code else ""
            )
            print(
                f"  {outcome.recorded_at}  {outcome.status:<10}"
                f"  run {outcome.run_id or '-'}{chunks}{code}"
            )
    return 0


def _sources_remove(args: argparse.Namespace) -> int:
    from loom_dagster.api.cleanup import remove_source

    removal = remove_source(args.name, confirmed=args.yes, purge=args.purge)
    name = printable(removal.source)
    if not removal.done:
        purge = ", delete its partitions and stored objects" if args.purge else ""
        print(
            f"loom: removing source {name} would retire {removal.documents} documents{purge}; "
            "run again with --yes to do it",
            file=sys.stderr,
        )
        return EXIT_USAGE
    print(f"removed source {name}: retired {removal.documents} documents")
    if removal.purged is not None:
        print_collected(removal.purged, "deleted", verbose=args.verbose)
    return 0
