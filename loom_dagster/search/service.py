"""Search as the command and the API ask for it: check the request, rank with the legs it is
given, fuse, and fetch each hit's chunk and citation from the index.

The legs are a parameter: the lexical and exact-key legs share the tantivy index; a vector leg
plugs in beside them, and a search with no vector leg still answers. Nothing here imports the
pipeline, DuckDB, pyarrow or Dagster, so `loom search` starts fast (README, "Search").
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from loom_dagster.contract.formats import FORMATS
from loom_dagster.display import printable
from loom_dagster.errors import LoomError, SourceError
from loom_dagster.search import vector_files
from loom_dagster.search.exact import ExactLeg, query_identifiers
from loom_dagster.search.fusion import RRF_K, LegRank, rank_all
from loom_dagster.search.legs import Leg, SearchFilter
from loom_dagster.search.lexical import IndexedChunk, LexicalIndex, LexicalLeg
from loom_dagster.sources import validate_tag

MAX_LIMIT = 1000
# The longest query searched, in characters: every leg's cost grows with the query (issue 34:
# a 100,000-character word once cost minutes), and a question, a pasted error line or a key path
# is far shorter. A longer one is refused at once (`query_too_long`, exit 2).
MAX_QUERY_CHARS = 2000


NO_FILTER = SearchFilter()


class BadSearch(LoomError):
    """A search request that cannot be answered as asked (the command exits 2)."""

    code = "bad_search"


@dataclass(frozen=True)
class SearchHit:
    chunk: IndexedChunk
    score: float  # the fused score
    legs: tuple[LegRank, ...]  # each leg's rank and score for this chunk
    # The units of the file its revision's artifact could not read ("page 2: needs_ocr"), so
    # a hit from a partly read file says so; empty when the whole file was read.
    incomplete: str = ""


def default_legs(index: LexicalIndex, vectors: Leg | None = None) -> list[Leg]:
    """The legs every search runs: exact keys first (a tie between two legs' first places goes
    to the chunk that names the identifier), then BM25, then the vector leg when there is one."""
    legs: list[Leg] = [ExactLeg(index), LexicalLeg(index)]
    return legs if vectors is None else [*legs, vectors]


def open_vector_leg(index: LexicalIndex) -> Leg | None:
    """The home's vector index as a leg, or None while nothing has been embedded. numpy and
    the embedder load only here, and only when there are vectors to search."""
    from loom_dagster.settings import LoomSettings

    settings = LoomSettings.from_env()
    if not (settings.vectors_dir / vector_files.MANIFEST).is_file():
        return None
    from loom_dagster.search.vector import open_vectors

    return open_vectors(settings, sources_tagged=index.sources_tagged)


def make_filter(
    *,
    formats: Sequence[str] = (),
    sources: Sequence[str] = (),
    block_types: Sequence[str] = (),
    tags: Sequence[str] = (),
    path_prefix: str = "",
) -> SearchFilter:
    """A filter from what a user typed; an unknown format or a malformed tag is refused."""
    unknown = [name for name in formats if name not in FORMATS]
    if unknown:
        raise BadSearch(
            f"unknown format {printable(unknown[0])!r}; formats are {', '.join(sorted(FORMATS))}",
            code="unknown_format",
        )
    try:
        folded = tuple(validate_tag(tag) for tag in tags)
    except SourceError as error:
        raise BadSearch(error.message, code="unknown_tag") from None
    return SearchFilter(
        formats=tuple(dict.fromkeys(formats)),
        sources=tuple(dict.fromkeys(sources)),
        block_types=tuple(dict.fromkeys(block_types)),
        tags=tuple(dict.fromkeys(folded)),
        path_prefix=path_prefix,
    )


def check_query_length(query: str) -> None:
    if len(query) > MAX_QUERY_CHARS:
        raise BadSearch(
            f"the query is {len(query):,} characters long; at most {MAX_QUERY_CHARS:,} are searched",
            code="query_too_long",
        )


def search(
    index: LexicalIndex,
    query: str,
    search_filter: SearchFilter = NO_FILTER,
    *,
    limit: int = 10,
    legs: Sequence[Leg] | None = None,
    k: int = RRF_K,
) -> list[SearchHit]:
    """The `limit` best chunks for `query` among those the filter keeps, fused over `legs`
    (default: exact keys and BM25), each with its chunk, citation and every leg's rank."""
    if not 1 <= limit <= MAX_LIMIT:
        raise BadSearch(f"limit must be 1 to {MAX_LIMIT}, not {limit}", code="bad_limit")
    check_query_length(query)
    if not index.query_terms(query) and not query_identifiers(query):
        raise BadSearch(
            f"the query {printable(query)!r} has no words to search for", code="empty_query"
        )
    missing = [tag for tag in search_filter.tags if not index.holds_term("tags", tag)]
    if missing:
        raise BadSearch(
            f"unknown tag {missing[0]!r}: no published chunk carries it "
            "(a source gets tags from `loom sources add --tag`)",
            code="unknown_tag",
        )
    fused = rank_all(
        default_legs(index) if legs is None else legs, query, search_filter, limit, k=k
    )
    chunks = index.fetch_keyed([hit.key for hit in fused], [hit.chunk_id for hit in fused])
    # A chunk a vector leg still remembers but the index no longer holds was retired between
    # the two reads: it is not an answer.
    return [
        SearchHit(chunks[hit.key], hit.score, hit.legs, chunks[hit.key].incomplete)
        for hit in fused
        if hit.key in chunks
    ]


def open_index() -> LexicalIndex:
    """The search index under LOOM_HOME, its home checked and made as every command does."""
    from loom_dagster.settings import LoomSettings

    settings = LoomSettings.from_env()
    settings.prepare()
    return LexicalIndex(settings.search_dir)


def describe_locator(locator: Mapping[str, object]) -> str:
    """Where a passage stands in its file, in words: what `loom search` prints and what a
    citation of `loom serve` quotes (`sheet Costs, rows 2-9`)."""
    parts = []
    for name, start, end in (
        ("lines", "line_start", "line_end"),
        ("chars", "char_start", "char_end"),
        ("pages", "page_start", "page_end"),
        ("rows", "row_start", "row_end"),
    ):
        if start in locator:
            parts.append(f"{name} {locator[start]}-{locator[end]}")
    if "slide" in locator:
        parts.insert(0, f"slide {locator['slide']}")
    if "sheet" in locator:
        parts.insert(0, f"sheet {locator['sheet']}")
    if "key_path" in locator:
        parts.append(f"key {locator['key_path']}")
    return ", ".join(parts) or "no locator"
