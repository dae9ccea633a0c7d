"""`loom search` (asked of the home's resident searcher first, else searched here) and
`loom resident`; `search_status` renders a search for the resident too."""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from loom_dagster.cli.common import EXIT_USAGE, command, fail, status_of
from loom_dagster.display import one_line, printable

if TYPE_CHECKING:
    from loom_dagster.search.legs import SearchFilter
    from loom_dagster.search.service import SearchHit


def add_commands(commands: Any) -> None:
    search = command(commands, "search", "search the published chunks")
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

    resident = command(
        commands,
        "resident",
        "the home's resident process (`loom search`, `loom sql`, `loom query`)",
    )
    resident.add_argument("action", choices=("status", "stop"))
    resident.set_defaults(run=_resident)


def _search(args: argparse.Namespace) -> int:
    # The home's resident searcher answers when there is one (README, "Search start-up"): this
    # process then imports no search module at all.
    from loom_dagster.search.resident import SEARCH_FIELDS, ResidentClient

    client = ResidentClient()
    answer = client.search({name: getattr(args, name) for name in SEARCH_FIELDS})
    if answer is not None:
        return answer.shown()
    status = _search_here(args, _find_here)
    if status == 0:
        client.start()  # for the next call; a refused request starts nothing
    return status


def search_status(args: argparse.Namespace, find: Callable[..., list[SearchHit]]) -> int:
    """A parsed search's output and exit status as main() gives them, the hits found by `find`
    (the resident searcher's open index, resident_server.py)."""
    return status_of(lambda: _search_here(args, find))


def _find_here(text: str, search_filter: SearchFilter, limit: int) -> list[SearchHit]:
    # Only the search modules: no Dagster, DuckDB or pyarrow on this path (README, "Search").
    from loom_dagster.search.service import default_legs, open_index, open_vector_leg, search

    index = open_index()
    return search(
        index, text, search_filter, limit=limit, legs=default_legs(index, open_vector_leg(index))
    )


def _search_here(args: argparse.Namespace, find: Callable[..., list[SearchHit]]) -> int:
    from loom_dagster.search.service import BadSearch, describe_locator, make_filter

    try:
        _check_utf8(args)
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
        fail(str(error))
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


def _check_utf8(args: argparse.Namespace) -> None:
    """Raise BadSearch (`invalid_utf8`) naming the first argument that is not valid UTF-8: a
    command line's bytes arrive surrogate-escaped, and no index term or path can match them
    (issue 34: they were a traceback)."""
    from loom_dagster.search.service import BadSearch

    for name, label in [
        ("text", "the query"),
        ("path", "--path"),
        ("formats", "--format"),
        ("sources", "--source"),
        ("tags", "--tag"),
        ("block_types", "--block-type"),
    ]:
        value = getattr(args, name)
        for item in value if isinstance(value, list) else [value]:
            try:
                item.encode("utf-8")
            except UnicodeEncodeError as error:
                byte = ord(item[error.start]) - 0xDC00
                where = f"byte 0x{byte:02x}" if 0x80 <= byte <= 0xFF else "a lone surrogate"
                raise BadSearch(
                    f"{label} is not valid UTF-8 ({where} at character {error.start + 1})",
                    code="invalid_utf8",
                ) from None


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


def _snippet(text: str, limit: int = 200) -> str:
    return one_line(text, limit)
