"""One serialization of a chunk (Chunk.record): the Parquet file's rows and what search stores
are the same values, and each reads back as the chunk it came from."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pyarrow.parquet as pq

from loom_dagster import pipeline
from loom_dagster.chunking import Chunk, locator_from_json, locator_json
from loom_dagster.contract.artifact import Locator
from loom_dagster.search.lexical import IndexedChunk, LexicalIndex

CHUNK = Chunk(
    ordinal=2,
    text="Überblick: die Tabelle «events»",
    block_ids=("b3", "b4"),
    block_type="mixed",
    section_path=("Guide", "Überblick"),
    locator=Locator(sheet="Blatt ü", row_start=2, row_end=9),
    keys=("analytics.events",),
    revision="doc@0123456789abcdef",
    format="xlsx",
)


def test_a_chunk_reads_back_from_its_record() -> None:
    assert Chunk.from_record(CHUNK.record()) == CHUNK
    assert Chunk.from_record(json.loads(json.dumps(CHUNK.record()))) == CHUNK


def test_the_parquet_rows_are_the_records() -> None:
    data = pipeline.chunks_to_parquet([CHUNK])

    assert pq.read_table(io.BytesIO(data)).to_pylist() == [CHUNK.record()]
    assert pipeline.chunks_from_parquet(data) == [CHUNK]


def test_a_locator_an_earlier_version_stored_with_ascii_escapes_still_reads() -> None:
    earlier = json.dumps(CHUNK.locator.to_dict(), sort_keys=True)  # ensure_ascii, as before

    assert locator_from_json(earlier) == locator_from_json(locator_json(CHUNK.locator))


def test_search_cites_the_locator_and_keys_of_the_record(tmp_path: Path) -> None:
    index = LexicalIndex(tmp_path / "index")
    index.publish("doc", [IndexedChunk.of(CHUNK, document_id="doc", source="docs", path="a.xlsx")])

    [hit] = index.search("tabelle")
    record = CHUNK.record()
    assert locator_json(hit.chunk.locator) == record["locator"]
    assert list(hit.chunk.keys) == record["keys"]
    assert list(hit.chunk.section_path) == record["section_path"]
    assert hit.chunk.chunk_id == CHUNK.chunk_id
