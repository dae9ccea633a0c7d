"""The `loom` command: thin over loom_dagster.api. A user mistake is one line, never a traceback.

Everything printed that a document, a path or a remote service wrote goes through
loom_dagster.display, so no file can move the cursor, clear the screen or set a window title.

The commands live in this package by group (ingest, search, sources, datasets, query, system, serve);
this module assembles the parser from them and gives every command the same error handling.
"""

from __future__ import annotations

import argparse
import os
import sys
import warnings
from collections.abc import Sequence

from loom_dagster.cli import datasets, ingest, query, search, serve, sources, system
from loom_dagster.cli.common import EXIT_FAILED, fail
from loom_dagster.errors import LoomError

# What a shell reports for a process that SIGPIPE ended (128 + 13), as `cat` would give.
EXIT_BROKEN_PIPE = 141


def main(argv: Sequence[str] | None = None) -> int:
    # Dagster marks the features the assets use (backfill policies, partitioned checks) as
    # beta or preview; a user of the command cannot act on that.
    warnings.filterwarnings("ignore", message=r".*(beta|preview)", category=Warning)
    args = _parser().parse_args(argv)
    try:
        status = int(args.run(args) or 0)
        # Flushed here, so a reader that went away (`| head -1`) is met below, not at exit.
        sys.stdout.flush()
        return status
    except LoomError as error:
        fail(str(error))
        return EXIT_FAILED
    except BrokenPipeError:
        _discard_stdout()
        return EXIT_BROKEN_PIPE
    except OSError as error:
        # The machine's answer (disk full, a permission): one line; a defect still shows its
        # traceback, since it is not an OSError.
        fail(f"io_error: {error}")
        return EXIT_FAILED
    except KeyboardInterrupt:
        fail("interrupted")
        return 130


def _discard_stdout() -> None:
    """The reader of stdout is gone: whatever is still buffered goes nowhere, quietly.

    Python would otherwise flush the buffer again at exit and print "Exception ignored".
    SIGPIPE stays ignored (Python's default): with it on, a write to a closed extractor
    connection would kill the command instead of raising.
    """
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, sys.stdout.fileno())
    finally:
        os.close(devnull)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="loom",
        description="Document folders into cited chunks, through Dagster.",
        allow_abbrev=False,
    )
    commands = parser.add_subparsers(required=True, metavar="COMMAND")
    # In this order, as `loom --help` lists them.
    ingest.add_commands(commands)
    search.add_commands(commands)
    system.add_formats(commands)
    sources.add_commands(commands)
    system.add_gc(commands)
    system.add_partitions(commands)
    sources.add_show(commands)
    system.add_extractor(commands)
    datasets.add_commands(commands)
    query.add_commands(commands)
    system.add_ui(commands)
    system.add_watch(commands)
    serve.add_commands(commands)
    return parser
