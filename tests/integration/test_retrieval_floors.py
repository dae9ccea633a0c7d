"""Seed 000's retrieval floors, through the real pipeline: runbooks, SQL schemas, a TOML file, CSV
and HTML tables, a PDF and plain text beside them, ingested by the API into a real Loom home
(reference extractor, Dagster runs, DuckDB catalog, tantivy index), then labelled queries in the
seed's three slices. Found first 1.00 on each slice, kept in filter 1.00.

A hit answers a label when it comes from the label's source and file and shows the label's text
in its passage or in the headings the passage sits under (an error code is often its section's
heading). Measured with the legs the `search_legs` fixture lists.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from loom_dagster import api
from loom_dagster.extractor.local import RunningExtractor
from loom_dagster.extractor.settings import ENV_TOKEN, ENV_URL
from loom_dagster.search.legs import Leg
from loom_dagster.search.lexical import LexicalIndex, LexicalLeg
from loom_dagster.search.service import SearchHit, default_legs, open_vector_leg
from loom_dagster.settings import LoomSettings
from tests.integration.loom_command import loom
from tests.integration.retrieval_corpus import (
    SALES_2023_ROWS,
    corpus,
    store_name,
    write_corpus,
)

Legs = Callable[[LexicalIndex], Sequence[Leg]]


@dataclass(frozen=True)
class Label:
    query: str
    source: str
    path: str
    text: str  # shown in the passage or in a heading above it
    formats: tuple[str, ...] = ()
    block_types: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    path_prefix: str = ""
    why: str = field(default="", compare=False)
    # A filtered label whose query, unfiltered, answers with a chunk outside the filter.
    excludes_better: bool = True


EXACT_IDENTIFIERS = [
    Label("E-DISK-042", "ops", "runbooks/disk.md", "E-DISK-042: volume full", why="error code"),
    Label("E-NET-007", "ops", "runbooks/network.md", "E-NET-007: packet loss", why="error code"),
    # Its parts are under BM25's minimum term length; the heading names it whole.
    Label("M-41", "ops", "runbooks/disk.md", "M-41: memory pressure", why="short code"),
    Label(
        "customer_accounts",
        "warehouse",
        "schema.sql",
        "CREATE TABLE customer_accounts",
        why="table",
    ),
    Label("active_customers", "warehouse", "views.sql", "CREATE VIEW active_customers", why="view"),
    Label(
        "database.pool.max_connections",
        "platform",
        "settings.toml",
        "database.pool.max_connections = 40",
        why="key path",
    ),
    Label("HW-77", "finance", "forms.pdf", "Form HW-77: hours worked", why="form number"),
]

# A row in each block of the long CSV (its row blocks hold twelve rows here: 6 + 12k is in the
# k-th), a row of the other CSV with the same columns, a row of each HTML table.
_SALES_2023_LABELS = [
    Label(
        f"how many units did store {store_name(row)} sell",
        "finance",
        "sales/2023.csv",
        f"store: {store_name(row)} |",
    )
    for row in range(6, SALES_2023_ROWS, 12)
]
TABLE_QUESTIONS = [
    *_SALES_2023_LABELS,
    Label(
        f"revenue of store {store_name(125)}",
        "finance",
        "sales/2024.csv",
        f"store: {store_name(125)} |",
    ),
    Label(
        "capacity of the Oslund warehouse",
        "finance",
        "warehouses/north.html",
        "Oslund | Bergen | 1200",
    ),
    Label(
        "who manages the Ristvale warehouse",
        "finance",
        "warehouses/south.html",
        "Ristvale | York | 640 | Tom Ell",
    ),
]

# Each filter keeps competing documents, and leaves out a chunk that answers the words better.
FILTERED_RECALL = [
    Label(
        "volume full alarm",
        "ops",
        "runbooks/disk.md",
        "E-DISK-042: volume full",
        formats=("markdown",),
    ),
    Label(
        "max_connections",
        "ops",
        "runbooks/network.md",
        "raise database.pool.max_connections",
        formats=("markdown",),
        # Unfiltered, BM25 and the exact leg put the TOML key first, but the n-gram vector leg
        # puts this runbook first and fusion follows it: the filter is not what finds it.
        excludes_better=False,
    ),
    Label(
        "Quarrow capacity next year",
        "finance",
        "warehouses/south.html",
        "Quarrow | Leeds | 2500",
        block_types=("table",),
    ),
    Label(
        "customer_accounts",
        "warehouse",
        "notes.txt",
        "The customer_accounts table feeds",
        block_types=("paragraph",),
    ),
    Label("E-DISK-042 outage", "finance", "notes.txt", "E-DISK-042 outage", tags=("finance",)),
    Label(
        "database pool max_connections",
        "platform",
        "settings.toml",
        "database.pool.max_connections = 40",
        tags=("platform",),
        # The tag given after indexing; the unfiltered answer is the same chunk.
        excludes_better=False,
    ),
    Label(
        "volume full",
        "ops",
        "runbooks/disk.md",
        "E-DISK-042: volume full",
        path_prefix="runbooks/",
        # As for max_connections: the vector leg puts the runbook first even unfiltered.
        excludes_better=False,
    ),
]


@pytest.fixture
def search_legs() -> Legs:
    """The legs the floors are measured with: every leg a search runs, the vector leg over the
    seed's deterministic n-gram embedder (LOOM_EMBEDDER=ngram, set for the whole home)."""

    def legs(index: LexicalIndex) -> list[Leg]:
        vectors = open_vector_leg(index)
        assert vectors is not None, "the ingest wrote no vector index"
        return default_legs(index, vectors)

    return legs


@pytest.fixture(scope="module")
def floors_home(
    tmp_path_factory: pytest.TempPathFactory, reference_service: RunningExtractor
) -> Iterator[Path]:
    """A Loom home holding the corpus, every file published. The platform source is ingested
    untagged and tagged afterwards with `loom sources add --tag`, so its chunks carry a tag
    given after they were indexed."""
    root = tmp_path_factory.mktemp("floors")
    home = root / "loom-home"
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("LOOM_HOME", str(home))
        patch.setenv("DAGSTER_HOME", str(home / "dagster"))
        patch.setenv("LOOM_EMBEDDER", "ngram")
        patch.delenv("LOOM_OBJECT_STORE_URL", raising=False)
        patch.setenv(ENV_URL, reference_service.url)
        patch.setenv(ENV_TOKEN, reference_service.token)
        folders = write_corpus(root / "docs")
        for name, (tags, files) in corpus().items():
            report = api.ingest_folder(
                folders[name], name=name, tags=None if name == "platform" else tags
            )
            assert [o.status for o in report.outcomes] == ["published"] * len(files), report
        tagged = loom("sources", "add", str(folders["platform"]), "--tag", "platform")
        assert tagged.returncode == 0, tagged.stderr
        yield home


def ask(label: Label, legs: Legs, limit: int = 10) -> list[SearchHit]:
    index = LexicalIndex(LoomSettings.from_env().search_dir)
    return api.search(
        label.query,
        limit=limit,
        formats=label.formats,
        block_types=label.block_types,
        tags=label.tags,
        path_prefix=label.path_prefix,
        legs=legs(index),
    )


def answers(hit: SearchHit, label: Label) -> bool:
    chunk = hit.chunk
    shown = [chunk.text, *chunk.section_path]
    return (chunk.source, chunk.path) == (label.source, label.path) and any(
        label.text in " ".join(text.split()) for text in shown
    )


def found_first(labels: Sequence[Label], legs: Legs) -> tuple[float, list[str]]:
    misses = []
    for label in labels:
        hits = ask(label, legs)
        if not hits or not answers(hits[0], label):
            first = (
                f"{hits[0].chunk.path} {hits[0].chunk.section_path} {hits[0].chunk.text[:60]!r}"
                if hits
                else "no hits"
            )
            misses.append(f"{label.query!r}: first is {first}")
    return 1 - len(misses) / len(labels), misses


@pytest.mark.parametrize(
    "labels",
    [EXACT_IDENTIFIERS, TABLE_QUESTIONS, FILTERED_RECALL],
    ids=["exact identifiers", "table questions", "filtered recall"],
)
def test_found_first_is_1_on_each_slice(
    floors_home: Path, search_legs: Legs, labels: list[Label]
) -> None:
    score, misses = found_first(labels, search_legs)
    assert (score, misses) == (1.0, [])


def test_kept_in_filter_is_1(floors_home: Path, search_legs: Legs) -> None:
    tags = {name: set(source_tags) for name, (source_tags, _) in corpus().items()}
    outside = []
    for label in FILTERED_RECALL:
        for hit in ask(label, search_legs, limit=50):
            chunk = hit.chunk
            kept = (
                (not label.formats or chunk.format in label.formats)
                and (not label.block_types or chunk.block_type in label.block_types)
                and (not label.tags or bool(set(chunk.tags) & set(label.tags)))
                and chunk.path.startswith(label.path_prefix)
            )
            if not kept:
                outside.append(f"{label.query!r}: {chunk.source}:{chunk.path} {chunk.block_type}")
        # The tags a hit carries are its source's, including those given after it was indexed.
    assert outside == []
    for label in FILTERED_RECALL:
        for hit in ask(label, search_legs):
            assert set(hit.chunk.tags) == tags[hit.chunk.source]


def test_the_long_csv_labels_reach_every_one_of_its_chunks(
    floors_home: Path, search_legs: Legs
) -> None:
    """The table slice asks about a row in each block: the long CSV was cut into several chunks
    and every one of them answers a label first."""
    everything = ask(
        Label("store", "finance", "", "", path_prefix="sales/2023.csv"), search_legs, 100
    )
    chunks = {hit.chunk.chunk_id for hit in everything}
    assert len(chunks) >= 5
    assert {ask(label, search_legs)[0].chunk.chunk_id for label in _SALES_2023_LABELS} == chunks


def test_the_filters_matter(floors_home: Path, search_legs: Legs) -> None:
    """Without its filter, a filtered label's query answers with another chunk first: each
    filter excludes a chunk that scores better."""
    labels = [label for label in FILTERED_RECALL if label.excludes_better]
    assert len(labels) >= 3
    for label in labels:
        unfiltered = Label(label.query, label.source, label.path, label.text)
        [first] = ask(unfiltered, search_legs, limit=1)
        assert not answers(first, label), label.query


def test_without_the_exact_leg_the_identifier_slice_falls_short(floors_home: Path) -> None:
    """The floors measure the legs: BM25 alone splits the codes and misses some first places."""
    score, misses = found_first(EXACT_IDENTIFIERS, lambda index: [LexicalLeg(index)])
    assert score < 1.0, misses
