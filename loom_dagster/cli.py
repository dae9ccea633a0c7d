"""The `loom` command: thin over loom_dagster.api. A user mistake is one line, never a traceback."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from loom_dagster.errors import LoomError

EXIT_USAGE, EXIT_FAILED = 2, 1


def main(argv: Sequence[str] | None = None) -> int:
    # Dagster marks the features the assets use (backfill policies, partitioned checks) as
    # beta or preview; a user of the command cannot act on that.
    warnings.filterwarnings("ignore", message=r".*(beta|preview)", category=Warning)
    args = _parser().parse_args(argv)
    try:
        return int(args.run(args) or 0)
    except LoomError as error:
        print(f"loom: {error}", file=sys.stderr)
        return EXIT_FAILED
    except KeyboardInterrupt:
        print("loom: interrupted", file=sys.stderr)
        return 130


def _command(group: Any, name: str, help: str) -> argparse.ArgumentParser:
    # No abbreviated flags: `--token` must never be taken for `--token-file`.
    parser: argparse.ArgumentParser = group.add_parser(name, help=help, allow_abbrev=False)
    return parser


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="loom",
        description="Document folders into cited chunks, through Dagster.",
        allow_abbrev=False,
    )
    commands = parser.add_subparsers(required=True, metavar="COMMAND")

    ingest = _command(commands, "ingest", "register a folder and publish every new revision")
    ingest.add_argument("folder", type=Path)
    ingest.add_argument("--name", help="the source's name (default: the folder's name)")
    ingest.add_argument(
        "--include",
        action="append",
        metavar="GLOB",
        help="only files matching this glob (repeatable; default: every file)",
    )
    ingest.set_defaults(run=_ingest)

    search = _command(commands, "search", "search the published chunks")
    search.add_argument("text")
    search.add_argument("--limit", type=int, default=10)
    search.add_argument("--format", action="append", default=[], dest="formats")
    search.add_argument("--source", action="append", default=[], dest="sources")
    search.set_defaults(run=_search)

    formats = _command(commands, "formats", "which formats the configured extractors take")
    formats.set_defaults(run=_formats)

    sources = _command(commands, "sources", "register a folder for the sensor to watch")
    add = _command(
        sources.add_subparsers(required=True, metavar="ACTION"),
        "add",
        "register a folder (the loom_folders sensor picks it up)",
    )
    add.add_argument("folder", type=Path)
    add.add_argument("--name")
    add.add_argument("--include", action="append", metavar="GLOB")
    add.set_defaults(run=_sources_add)

    extractor = _command(commands, "extractor", "the reference extractor service")
    serve = _command(
        extractor.add_subparsers(required=True, metavar="ACTION"),
        "serve",
        "serve contract v1; the token comes from LOOM_EXTRACTOR_TOKEN or --token-file",
    )
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--port", type=int, default=8790)
    serve.add_argument("--token-file", type=Path)
    serve.set_defaults(run=_extractor_serve)

    ui = _command(commands, "ui", "start the Dagster UI on this project's instance (dagster dev)")
    ui.add_argument("--port", type=int, default=3000)
    ui.set_defaults(run=_ui)
    return parser


def _progress(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def _ingest(args: argparse.Namespace) -> int:
    from loom_dagster.api import ingest_folder
    from loom_dagster.runs import Interrupted

    try:
        report = ingest_folder(
            args.folder, name=args.name, include=args.include or ("**/*",), progress=_progress
        )
    except Interrupted as stopped:
        print(f"loom: {stopped}", file=sys.stderr)
        return stopped.exit_status
    for outcome in report.outcomes:
        where = f"  {outcome.revision}" if outcome.revision else ""
        detail = f"  {outcome.detail}" if outcome.detail else ""
        print(f"{outcome.status:<10} {outcome.path}{where}{detail}")
    for path in report.retired:
        print(f"{'retired':<10} {path}")
    print(
        f"files {report.files} = published {report.count('published')} + refused {report.count('refused')}"
        f" + unchanged {report.count('unchanged')}"
        + ("" if report.conserved else f"  (does not hold: {report.count('failed')} failed)")
    )
    return 0 if report.conserved else EXIT_FAILED


def _search(args: argparse.Namespace) -> int:
    from loom_dagster.api import search

    hits = search(args.text, limit=args.limit, formats=args.formats, sources=args.sources)
    if not hits:
        print("no hits")
    for rank, hit in enumerate(hits, start=1):
        chunk = hit.chunk
        print(
            f"{rank}. {chunk.source}:{chunk.path}  revision {chunk.revision}  score {hit.score:.2f}"
        )
        print(
            f"   {' > '.join(chunk.section_path) or '(top)'}  |  {describe_locator(chunk.locator.to_dict())}"
        )
        print(f"   {_snippet(chunk.text)}")
    return 0


def describe_locator(locator: dict[str, object]) -> str:
    parts = []
    for name, start, end in (
        ("lines", "line_start", "line_end"),
        ("chars", "char_start", "char_end"),
        ("pages", "page_start", "page_end"),
        ("rows", "row_start", "row_end"),
    ):
        if start in locator:
            parts.append(f"{name} {locator[start]}-{locator[end]}")
    if "sheet" in locator:
        parts.insert(0, f"sheet {locator['sheet']}")
    if "key_path" in locator:
        parts.append(f"key {locator['key_path']}")
    return ", ".join(parts) or "no locator"


def _snippet(text: str, limit: int = 200) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def _formats(args: argparse.Namespace) -> int:
    from loom_dagster.api import formats

    for name, availability in sorted(formats().items()):
        print(f"{name:<10} {availability}")
    return 0


def _sources_add(args: argparse.Namespace) -> int:
    from loom_dagster.api import register_source
    from loom_dagster.settings import LoomSettings

    settings = LoomSettings.from_env()
    settings.prepare()
    source = register_source(
        settings, args.folder, name=args.name, include=args.include or ("**/*",)
    )
    print(f"registered {source.name}: {source.root}")
    return 0


def _extractor_serve(args: argparse.Namespace) -> int:
    # A separate program, so the pipeline's package never imports the extractor's; as root it
    # runs from the extractor's own environment and drops to its unprivileged user.
    from loom_dagster.resources.local_extractor import service_command

    command = service_command(args.host, args.port)
    if args.token_file:
        command += ["--token-file", str(args.token_file)]
    return subprocess.call(command)


def _ui(args: argparse.Namespace) -> int:
    from loom_dagster.api import prepare_environment
    from loom_dagster.settings import LoomSettings

    prepare_environment(LoomSettings.from_env())
    workspace = Path(__file__).resolve().parent.parent / "workspace.yaml"
    return subprocess.call(
        [sys.executable, "-m", "dagster", "dev", "-w", str(workspace), "-p", str(args.port)],
        env=os.environ,
    )


if __name__ == "__main__":
    sys.exit(main())
