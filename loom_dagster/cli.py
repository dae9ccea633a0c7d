"""The `loom` command: thin over loom_dagster.api. A user mistake is one line, never a traceback.

Everything printed that a document, a path or a remote service wrote goes through
loom_dagster.display, so no file can move the cursor, clear the screen or set a window title.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from loom_dagster.lifecycle import Collected

from loom_dagster.display import one_line, printable
from loom_dagster.errors import LoomError

if TYPE_CHECKING:
    from loom_dagster.search.legs import SearchFilter
    from loom_dagster.search.service import SearchHit
    from loom_dagster.sources import OptionRule

EXIT_USAGE, EXIT_FAILED = 2, 1
# What a shell reports for a process that SIGPIPE ended (128 + 13), as `cat` would give.
EXIT_BROKEN_PIPE = 141
# An error line is one line, but a path in it may be long: cut only what no terminal shows.
_ERROR_LINE_LIMIT = 2000


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
        _fail(str(error))
        return EXIT_FAILED
    except BrokenPipeError:
        _discard_stdout()
        return EXIT_BROKEN_PIPE
    except OSError as error:
        # The machine's answer (disk full, a permission): one line; a defect still shows its
        # traceback, since it is not an OSError.
        _fail(f"io_error: {error}")
        return EXIT_FAILED
    except KeyboardInterrupt:
        _fail("interrupted")
        return 130


def _fail(message: str) -> None:
    print(f"loom: {one_line(message, _ERROR_LINE_LIMIT)}", file=sys.stderr, flush=True)


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
    _registration_arguments(ingest)
    ingest.set_defaults(run=_ingest)

    search = _command(commands, "search", "search the published chunks")
    search.add_argument("text")
    # A string, so a bad value is the command's one-line error, not argparse's usage block.
    search.add_argument("--limit", default="10", help="how many hits (1 to 1000; default 10)")
    search.add_argument("--format", action="append", default=[], dest="formats")
    search.add_argument("--source", action="append", default=[], dest="sources")
    search.add_argument(
        "--tag", action="append", default=[], dest="tags", help="only sources with this tag"
    )
    search.add_argument(
        "--block-type",
        action="append",
        default=[],
        dest="block_types",
        help="only chunks of this block type (paragraph, table, sql_statement, ...)",
    )
    search.add_argument("--path", default="", help="only files whose path starts with this")
    search.add_argument(
        "--json", action="store_true", help="every hit in full, as JSON (one document)"
    )
    search.add_argument("--explain", action="store_true", help="each leg's rank and score")
    search.set_defaults(run=_search)

    resident = _command(commands, "resident", "the home's resident searcher (`loom search`)")
    resident.add_argument("action", choices=("status", "stop"))
    resident.set_defaults(run=_resident)

    formats = _command(commands, "formats", "which formats the configured extractors take")
    formats.set_defaults(run=_formats)

    sources = _command(commands, "sources", "register a folder for the sensor to watch")
    source_actions = sources.add_subparsers(required=True, metavar="ACTION")
    add = _command(source_actions, "add", "register a folder (the loom_folders sensor picks it up)")
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
    _registration_arguments(add)
    add.set_defaults(run=_sources_add)
    remove = _command(
        source_actions, "remove", "retire a source's documents and stop watching its folder"
    )
    remove.add_argument("name")
    remove.add_argument("--yes", action="store_true", help="do it (without: say what it would do)")
    remove.add_argument(
        "--purge", action="store_true", help="also delete its partitions and stored objects"
    )
    remove.add_argument("-v", "--verbose", action="store_true", help="name what --purge deletes")
    remove.set_defaults(run=_sources_remove)

    gc = _command(
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
    listing = _command(source_actions, "list", "every registered folder, its options and counts")
    listing.set_defaults(run=_sources_list)

    show = _command(commands, "show", "every revision of one file, with its outcomes")
    show.add_argument("path", metavar="PATH", help="a file in a registered folder, or SOURCE:PATH")
    show.set_defaults(run=_show)

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

    _datasets_commands(commands)
    _query_commands(commands)

    ui = _command(commands, "ui", "start the Dagster UI on this project's instance (dagster dev)")
    ui.add_argument("--port", type=int, default=3000)
    ui.set_defaults(run=_ui)
    return parser


def _progress(line: str) -> None:
    print(printable(line), file=sys.stderr, flush=True)


def _registration_arguments(command: argparse.ArgumentParser) -> None:
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


def _option_rules(args: argparse.Namespace) -> list[OptionRule] | None:
    """The --option rules (None: keep the source's); raises _BadOption after printing the one
    line that says which is wrong."""
    from loom_dagster.errors import SourceError
    from loom_dagster.sources import parse_option

    if args.no_options or args.options:
        try:
            return [parse_option(spec) for spec in args.options or ()]
        except SourceError as error:
            print(f"loom: {error}", file=sys.stderr)
            raise _BadOption from None
    return None


class _BadOption(Exception):
    """An --option the command refused, already said on stderr (exit status 2)."""


def _ingest(args: argparse.Namespace) -> int:
    from loom_dagster.extractor.local import service_command
    from loom_dagster.quick import unchanged_ingest
    from loom_dagster.settings import LoomSettings

    settings = LoomSettings.from_env()  # every setting, once; a bad one stops here
    configured = settings.extractor
    if not (configured.default_url or configured.routes):
        # The local default cannot start without its environment (as root): say so now, in
        # one line, rather than in a run whose log the command does not print.
        service_command("127.0.0.1", 0)
    from loom_dagster.runs import Interrupted

    try:
        rules = _option_rules(args)
    except _BadOption:
        return EXIT_USAGE
    try:
        # Nothing changed: answered from the catalog and a scan, without importing Dagster.
        report = (
            None
            if args.replace
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
            from loom_dagster.api import ingest_folder

            report = ingest_folder(
                args.folder,
                settings=settings,
                name=args.name,
                include=args.include or ("**/*",),
                options=rules,
                replace=args.replace,
                progress=_progress,
                reprocess_stale=args.reprocess_stale,
            )
    except Interrupted as stopped:
        print(f"loom: {stopped}", file=sys.stderr)
        return stopped.exit_status
    for outcome in report.outcomes:
        where = f"  {printable(outcome.revision)}" if outcome.revision else ""
        detail = f"  {one_line(outcome.detail)}" if outcome.detail else ""
        print(f"{printable(outcome.status):<10} {printable(outcome.path)}{where}{detail}")
    for path in report.retired:
        print(f"{'retired':<10} {printable(path)}")
    print(
        f"files {report.files} = published {report.count('published')} + refused {report.count('refused')}"
        f" + unchanged {report.count('unchanged')}"
        + ("" if report.conserved else f"  (does not hold: {report.count('failed')} failed)")
    )
    if not report.conserved:
        return EXIT_FAILED
    if args.strict and (report.count("refused") or report.incomplete):
        _fail(f"strict: {report.count('refused')} refused, {report.incomplete} incomplete")
        return EXIT_FAILED
    return 0


def _search(args: argparse.Namespace) -> int:
    # The home's resident searcher answers when there is one (README, "Search start-up"): this
    # process then imports no search module at all.
    from loom_dagster.search.resident import SEARCH_FIELDS, ResidentClient

    client = ResidentClient()
    answer = client.search({name: getattr(args, name) for name in SEARCH_FIELDS})
    if answer is not None:
        sys.stdout.write(answer.stdout)
        if answer.stderr:
            sys.stderr.write(answer.stderr)
            sys.stderr.flush()
        return answer.status
    status = _search_here(args, _find_here)
    if status == 0:
        client.start()  # for the next call; a refused request starts nothing
    return status


def search_status(args: argparse.Namespace, find: Callable[..., list[SearchHit]]) -> int:
    """A parsed search's output and exit status as main() gives them, the hits found by `find`
    (the resident searcher's open index, resident_server.py)."""
    try:
        return _search_here(args, find)
    except LoomError as error:
        _fail(str(error))
        return EXIT_FAILED
    except OSError as error:
        _fail(f"io_error: {error}")
        return EXIT_FAILED


def _find_here(text: str, search_filter: SearchFilter, limit: int) -> list[SearchHit]:
    # Only the search modules: no Dagster, DuckDB or pyarrow on this path (README, "Search").
    from loom_dagster.search.service import default_legs, open_index, open_vector_leg, search

    index = open_index()
    return search(
        index, text, search_filter, limit=limit, legs=default_legs(index, open_vector_leg(index))
    )


def _search_here(args: argparse.Namespace, find: Callable[..., list[SearchHit]]) -> int:
    from loom_dagster.search.service import BadSearch, make_filter

    try:
        limit = _limit(args.limit)
        search_filter = make_filter(
            formats=args.formats,
            sources=args.sources,
            block_types=args.block_types,
            tags=args.tags,
            path_prefix=args.path,
        )
        hits = find(args.text, search_filter, limit)
    except BadSearch as error:
        _fail(str(error))
        return EXIT_USAGE
    if args.json:
        print(json.dumps({"query": args.text, "hits": [_hit_json(hit) for hit in hits]}))
        return 0
    if not hits:
        print("no hits")
    for rank, hit in enumerate(hits, start=1):
        chunk = hit.chunk
        where = printable(f"{chunk.source}:{chunk.path}  revision {chunk.revision}")
        print(f"{rank}. {where}  score {hit.score:.4f}")
        if hit.incomplete:
            print(f"   incomplete: {one_line(hit.incomplete)}")
        section = " > ".join(chunk.section_path) or "(top)"
        print(f"   {one_line(section)}  |  {one_line(describe_locator(chunk.locator.to_dict()))}")
        print(f"   {_snippet(chunk.text)}")
        if args.explain:
            legs = "  ".join(f"{leg.leg} #{leg.rank} ({leg.score:.3f})" for leg in hit.legs)
            print(
                f"   {printable(chunk.block_type)}  tags {printable(','.join(chunk.tags) or '-')}"
                f"  |  {legs}"
            )
            print(f"   found by: {', '.join(leg.leg for leg in hit.legs)}")
    return 0


def _resident(args: argparse.Namespace) -> int:
    from loom_dagster.search.resident import ResidentClient

    client = ResidentClient()
    if args.action == "stop":
        print("stopped" if client.stop() else "no resident searcher")
        return 0
    state = client.status()
    if state is None:
        print("no resident searcher")
        return 0
    version = "" if state.get("same_version") else "  (another version: not used)"
    print(
        f"running  pid {state.get('pid')}  {printable(str(state.get('home')))}"
        f"  answered {state.get('answered')}{version}"
    )
    return 0


def _limit(text: str) -> int:
    from loom_dagster.search.service import MAX_LIMIT, BadSearch

    try:
        return int(text)
    except ValueError:
        raise BadSearch(
            f"limit must be 1 to {MAX_LIMIT}, not {one_line(text, 40)!r}", code="bad_limit"
        ) from None


def _hit_json(hit: SearchHit) -> dict[str, object]:
    """A hit in full: its chunk's text uncut, its citation and every leg's rank and score.
    JSON escapes every control character, and ensure_ascii every format character, so the
    document is as safe on a terminal as the text lines."""
    chunk = hit.chunk
    return {
        "chunk_id": chunk.chunk_id,
        "score": hit.score,
        "source": chunk.source,
        "path": chunk.path,
        "document_id": chunk.document_id,
        "revision": chunk.revision,
        "format": chunk.format,
        "block_type": chunk.block_type,
        "section_path": list(chunk.section_path),
        "locator": chunk.locator.to_dict(),
        "keys": list(chunk.keys),
        "tags": list(chunk.tags),
        "incomplete": hit.incomplete,
        "text": chunk.text,
        "legs": [{"leg": leg.leg, "rank": leg.rank, "score": leg.score} for leg in hit.legs],
        "found_by": [leg.leg for leg in hit.legs],
    }


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
    return one_line(text, limit)


def _formats(args: argparse.Namespace) -> int:
    from loom_dagster.quick import formats  # the extractor client only: no Dagster, no DuckDB

    answer = formats()
    if answer.known:
        for name, availability in sorted(answer.states.items()):
            print(f"{name:<10} {availability}")
    for problem in answer.unreadable:
        _fail(str(problem))
    return EXIT_FAILED if answer.unreadable else 0


def _sources_add(args: argparse.Namespace) -> int:
    from loom_dagster.api import register
    from loom_dagster.settings import LoomSettings

    try:
        rules = _option_rules(args)
    except _BadOption:
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
    from loom_dagster.quick import sources  # the catalog only: no Dagster
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
    return 0


def _show(args: argparse.Namespace) -> int:
    from loom_dagster.api import show

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
    from loom_dagster.api import remove_source

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
        _print_collected(removal.purged, "deleted", verbose=args.verbose)
    return 0


def _minutes(text: str) -> float:
    try:
        minutes = float(text)
    except ValueError:
        minutes = -1.0
    if not minutes >= 0:  # also refuses nan
        raise argparse.ArgumentTypeError(f"must be a number of minutes, 0 or more, not {text!r}")
    return minutes


def _gc(args: argparse.Namespace) -> int:
    from loom_dagster.api import collect_garbage

    collected = collect_garbage(dry_run=args.dry_run, grace_s=args.grace_minutes * 60)
    _print_collected(collected, "would delete" if args.dry_run else "deleted", verbose=args.verbose)
    return 0


def _print_collected(collected: Collected, verb: str, *, verbose: bool) -> None:

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
    from loom_dagster.api import prepare_environment
    from loom_dagster.dagster_dev import run_ui
    from loom_dagster.settings import LoomSettings

    settings = LoomSettings.from_env()
    prepare_environment(settings)
    return run_ui(settings, args.port)


# Datasets --------------------------------------------------------------------------------------


def _datasets_commands(commands: Any) -> None:
    group = _command(commands, "datasets", "the typed datasets the published tables became")
    actions = group.add_subparsers(required=True, metavar="ACTION")
    listing = _command(actions, "list", "every served dataset: id, state, rows, name")
    listing.set_defaults(run=_datasets_list)
    show = _command(actions, "show", "a dataset's schema, state, questions, rejects, snapshot")
    show.add_argument("id", metavar="ID", help="a dataset's id or name")
    show.set_defaults(run=_datasets_show)
    approve = _command(actions, "approve", "approve a schema, retyping the columns named")
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


def _column_type(text: str) -> tuple[str, str]:
    column, equals, kind = text.rpartition("=")
    if not equals or not column:
        raise argparse.ArgumentTypeError(f"must be COLUMN=TYPE, not {one_line(text, 200)!r}")
    return column, kind


def _datasets_list(args: argparse.Namespace) -> int:
    from loom_dagster.api import datasets

    for found in datasets():
        complete = "" if found.complete else "  incomplete"
        print(
            f"{found.dataset_id}  {found.state.value:<19}  {found.rows_stored} rows"
            f"  {found.rows_rejected} rejected{complete}  {printable(found.name)}"
        )
    return 0


def _datasets_show(args: argparse.Namespace) -> int:
    from loom_dagster.api import dataset

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
    from loom_dagster.api import approve_dataset

    found = approve_dataset(args.id, dict(args.types), revision=args.revision)
    print(
        f"approved {found.dataset_id} at revision {found.revision}: snapshot {found.snapshot}, "
        f"{found.rows_stored} rows stored, {found.rows_rejected} rejected"
    )
    return 0


# Queries ---------------------------------------------------------------------------------------

# A cell of a printed answer: a document's text may be long; --json has every value whole.
_CELL_LIMIT = 60


def _query_commands(commands: Any) -> None:
    query = _command(commands, "query", "answer a typed query plan (JSON) over the datasets")
    query.add_argument("plan", metavar="PLAN", help="a JSON plan file, or - for stdin")
    _answer_arguments(query)
    query.set_defaults(run=_query)
    sql = _command(commands, "sql", "answer one SELECT over dataset names as tables")
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
    from loom_dagster.query.run import Ceilings

    return Ceilings(max_rows=args.max_rows, seconds=args.timeout)


def _query(args: argparse.Namespace) -> int:
    from loom_dagster.api import query

    if args.plan == "-":
        text = sys.stdin.read()
    else:
        try:
            text = Path(args.plan).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as error:
            raise LoomError(
                f"cannot read the plan {printable(args.plan)}: {error}", code="invalid_plan"
            ) from None
    return _print_answer(query(text, ceilings=_ceilings(args)), as_json=args.json)


def _sql(args: argparse.Namespace) -> int:
    from loom_dagster.api import sql

    return _print_answer(sql(args.text, ceilings=_ceilings(args)), as_json=args.json)


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
    from loom_dagster.query.plan import json_value

    if value is None:
        return "NULL"
    return one_line(str(json_value(value)), _CELL_LIMIT)


if __name__ == "__main__":
    sys.exit(main())
