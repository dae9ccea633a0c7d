"""The commands around the pipeline: `loom formats`, `loom gc`, `loom partitions compact`, `loom
extractor serve`, `loom ui` and `loom watch`."""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path
from typing import Any

from loom_dagster.cli.common import EXIT_FAILED, command, fail, print_collected


def add_formats(commands: Any) -> None:
    formats = command(commands, "formats", "which formats the configured extractors take")
    formats.set_defaults(run=_formats)


def add_gc(commands: Any) -> None:
    gc = command(
        commands, "gc", "prune old revisions' partitions; delete objects no kept revision needs"
    )
    gc.add_argument(
        "--dry-run", action="store_true", help="say what it would delete, delete nothing"
    )
    gc.add_argument("-v", "--verbose", action="store_true", help="name every partition and object")
    gc.add_argument(
        "--grace-minutes",
        type=_minutes,
        default=60,
        help="spare objects modified this recently (a run may be writing them; default 60)",
    )
    gc.set_defaults(run=_gc)


def add_partitions(commands: Any) -> None:
    partitions = command(commands, "partitions", "the instance's revision partitions")
    compact = command(
        partitions.add_subparsers(required=True, metavar="ACTION"),
        "compact",
        "apply retention and LOOM_PARTITION_WINDOW now (the sensor does 1,000 a tick); "
        "safe to interrupt and run again",
    )
    compact.set_defaults(run=_compact)


def add_extractor(commands: Any) -> None:
    extractor = command(commands, "extractor", "the reference extractor service")
    serve = command(
        extractor.add_subparsers(required=True, metavar="ACTION"),
        "serve",
        "serve contract v1; the token comes from LOOM_EXTRACTOR_TOKEN or --token-file",
    )
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--port", type=int, default=8790)
    serve.add_argument("--token-file", type=Path)
    serve.set_defaults(run=_extractor_serve)


def add_ui(commands: Any) -> None:
    ui = command(commands, "ui", "start the Dagster UI on this project's instance (dagster dev)")
    ui.add_argument("--port", type=int, default=3000)
    ui.add_argument(
        "--read-only",
        action="store_true",
        help="the webserver refuses every mutation (launching runs, turning sensors on or off)",
    )
    ui.set_defaults(run=_ui)


def add_watch(commands: Any) -> None:
    watch = command(
        commands,
        "watch",
        "ingest the registered folders as files change: Dagster's daemon and the folder "
        "watcher, no webserver; stops on SIGINT or SIGTERM",
    )
    watch.set_defaults(run=_watch)


def _formats(args: argparse.Namespace) -> int:
    from loom_dagster.api.quick import formats  # the extractor client only: no Dagster, no DuckDB

    answer = formats()
    if answer.known:
        for name, availability in sorted(answer.states.items()):
            print(f"{name:<10} {availability}")
    for problem in answer.unreadable:
        fail(str(problem))
    return EXIT_FAILED if answer.unreadable else 0


def _minutes(text: str) -> float:
    try:
        minutes = float(text)
    except ValueError:
        minutes = -1.0
    if not minutes >= 0:  # also refuses nan
        raise argparse.ArgumentTypeError(f"must be a number of minutes, 0 or more, not {text!r}")
    return minutes


def _gc(args: argparse.Namespace) -> int:
    from loom_dagster.api.cleanup import collect_garbage

    collected = collect_garbage(dry_run=args.dry_run, grace_s=args.grace_minutes * 60)
    print_collected(collected, "would delete" if args.dry_run else "deleted", verbose=args.verbose)
    return 0


def _compact(args: argparse.Namespace) -> int:
    from loom_dagster.api.cleanup import compact_partitions

    done = compact_partitions(progress=lambda line: print(line, file=sys.stderr, flush=True))
    window = f"the window of {done.size}" if done.size else "no window (LOOM_PARTITION_WINDOW=0)"
    print(
        f"deleted {done.retention + done.window} partitions ({done.retention} past retention, "
        f"{done.window} past {window}); {done.left} left"
    )
    return 0


def _extractor_serve(args: argparse.Namespace) -> int:
    # A separate program, so the pipeline's package never imports the extractor's; as root it
    # runs from the extractor's own environment and drops to its unprivileged user.
    from loom_dagster.extractor.local import service_command, tied_to_this_process

    command = service_command(args.host, args.port)
    if args.token_file:
        command += ["--token-file", str(args.token_file)]
    # Tied to this command, so a `kill -9` of it leaves no service listening.
    with subprocess.Popen(command, **tied_to_this_process()) as service:
        return service.wait()


def _ui(args: argparse.Namespace) -> int:
    from loom_dagster.api.home import prepare_environment
    from loom_dagster.dagster_dev import run_ui
    from loom_dagster.settings import LoomSettings

    settings = LoomSettings.from_env()
    prepare_environment(settings)
    return run_ui(settings, args.port, read_only=args.read_only)


def _watch(args: argparse.Namespace) -> int:
    from loom_dagster.api.home import prepare_environment
    from loom_dagster.dagster_dev import run_watch
    from loom_dagster.settings import LoomSettings

    settings = LoomSettings.from_env()
    prepare_environment(settings)
    return run_watch(settings)
