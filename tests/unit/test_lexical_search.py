"""The lexical leg on a real tantivy index in tmp_path: citations, replacement, filters, and
reads that never wait for a writer nor see half a publish."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from pathlib import Path

import pytest
import tantivy

from loom_dagster.chunking import Chunk
from loom_dagster.contract.artifact import Locator
from loom_dagster.search.lexical import IndexBusy, IndexedChunk, LexicalIndex


def chunk(
    document_id: str,
    ordinal: int,
    text: str,
    *,
    revision: str = "r1",
    source: str = "docs",
    format: str = "markdown",
) -> IndexedChunk:
    cut = Chunk(
        ordinal=ordinal,
        text=text,
        block_ids=(f"b{ordinal}",),
        block_type="paragraph",
        section_path=("Guide", "Install"),
        locator=Locator(line_start=3, line_end=5, char_start=10, char_end=52),
        keys=("analytics.events", "events"),
        revision=f"{document_id}@{revision}",
        format=format,
    )
    return IndexedChunk.of(cut, document_id=document_id, source=source, path=f"{document_id}.md")


def revisions(hits: list) -> set[str]:
    return {hit.chunk.revision for hit in hits}


def test_a_published_chunk_is_found_with_its_citation_intact(tmp_path: Path) -> None:
    index = LexicalIndex(tmp_path / "index")
    cut = Chunk(
        ordinal=4,
        text="server.tls = true",
        block_ids=("b1", "b2"),
        block_type="mixed",
        section_path=("server", "", "tls ünïcode"),
        locator=Locator(line_start=7, line_end=9, key_path="server.tls"),
        keys=("server.tls", "tls"),
        revision="cfg@r2",
        format="toml",
        names=("server.tls",),
    )
    stored = IndexedChunk.of(
        cut, document_id="cfg", source="settings", path="conf/app.toml", tags=("ops",)
    )
    index.publish("cfg", [stored, chunk("cfg", 5, "unrelated words")])

    hits = index.search("tls")

    assert [hit.chunk for hit in hits] == [stored]
    assert hits[0].score > 0
    assert index.count() == 2


def test_heading_words_in_the_section_path_match(tmp_path: Path) -> None:
    index = LexicalIndex(tmp_path / "index")
    index.publish("a", [chunk("a", 0, "run the installer")])

    assert [hit.chunk.chunk_id for hit in index.search("guide")] == ["a@r1#0"]


def test_indexed_chunk_of_a_chunk_keeps_what_a_hit_cites() -> None:
    cut = Chunk(
        ordinal=3,
        text="SELECT 1",
        block_ids=("b7",),
        block_type="sql_statement",
        section_path=(),
        locator=Locator(line_start=1, line_end=1, char_start=0, char_end=8),
        keys=("t",),
        revision="q@2",
        format="sql",
    )

    indexed = IndexedChunk.of(cut, document_id="q", source="warehouse", path="q.sql")

    assert (indexed.chunk_id, indexed.revision, indexed.format) == ("q@2#3", "q@2", "sql")
    assert (indexed.locator, indexed.keys, indexed.text) == (cut.locator, ("t",), "SELECT 1")


def test_republishing_a_document_replaces_its_previous_revision(tmp_path: Path) -> None:
    index = LexicalIndex(tmp_path / "index")
    index.publish("a", [chunk("a", n, f"old wording {n}") for n in range(3)])
    index.publish("b", [chunk("b", 0, "old wording elsewhere")])

    index.publish("a", [chunk("a", 0, "new wording", revision="r2")])

    assert revisions(index.search("old")) == {"b@r1"}
    assert revisions(index.search("new")) == {"a@r2"}
    assert index.count() == 2


def test_an_open_reader_reloads_only_when_another_writer_committed(tmp_path: Path) -> None:
    reader = LexicalIndex(tmp_path / "index")
    writer = LexicalIndex(tmp_path / "index")
    reloads = 0
    reload = reader._index.reload

    def counted() -> None:
        nonlocal reloads
        reloads += 1
        reload()

    reader._index = _Reloads(reader._index, counted)
    assert revisions(reader.search("wording")) == set()
    first = reloads
    for _ in range(3):  # nothing committed: no reload
        assert revisions(reader.search("wording")) == set()
    assert reloads == first
    for step in range(1, 4):  # each commit (a new meta.json) is seen by the next read
        writer.publish("a", [chunk("a", 0, "wording", revision=f"r{step}")])
        assert revisions(reader.search("wording")) == {f"a@r{step}"}
    writer.retire("a")
    assert revisions(reader.search("wording")) == set()


class _Reloads:
    """A tantivy index whose reload() is counted; everything else passes through."""

    def __init__(self, index: tantivy.Index, reload: object) -> None:
        self._wrapped = index
        self.reload = reload

    def __getattr__(self, name: str) -> object:
        return getattr(self._wrapped, name)


def test_publish_many_replaces_each_document_in_one_commit(tmp_path: Path) -> None:
    index = LexicalIndex(tmp_path / "index")
    index.publish_many({"a": [chunk("a", 0, "old wording")], "b": [chunk("b", 0, "old wording")]})

    index.publish_many(
        {"a": [chunk("a", 0, "new", revision="r2")], "b": [chunk("b", 0, "new", revision="r2")]}
    )

    assert revisions(index.search("old")) == set()
    assert revisions(index.search("new")) == {"a@r2", "b@r2"}


def test_retire_removes_every_chunk_of_a_document(tmp_path: Path) -> None:
    index = LexicalIndex(tmp_path / "index")
    index.publish("a", [chunk("a", n, "shared words") for n in range(4)])
    index.publish("b", [chunk("b", 0, "shared words")])

    index.retire("a")

    assert revisions(index.search("shared")) == {"b@r1"}
    assert index.count() == 1


def test_publish_refuses_another_documents_chunks(tmp_path: Path) -> None:
    index = LexicalIndex(tmp_path / "index")

    with pytest.raises(ValueError, match="published as document 'a'"):
        index.publish("a", [chunk("b", 0, "x")])
    assert index.count() == 0


def test_filters_apply_inside_the_query_and_still_return_k_hits(tmp_path: Path) -> None:
    index = LexicalIndex(tmp_path / "index")
    # Thirty strong text matches that outrank every weak one: a filter applied after the top-k
    # cut would leave nothing.
    index.publish("strong", [chunk("strong", n, "alpha alpha alpha") for n in range(30)])
    weak = "alpha " + " ".join(f"filler{n}" for n in range(40))
    index.publish("sql", [chunk("sql", n, weak, format="sql", source="wh") for n in range(8)])
    index.publish("toml", [chunk("toml", n, weak, format="toml", source="cfg") for n in range(8)])

    unfiltered = index.search("alpha", limit=5)
    by_format = index.search("alpha", limit=5, formats=["sql"])
    by_source = index.search("alpha", limit=5, sources=["cfg"])
    by_both = index.search("alpha", limit=20, formats=["sql", "toml"], sources=["wh"])

    assert {hit.chunk.format for hit in unfiltered} == {"markdown"}
    assert len(by_format) == 5 and {hit.chunk.format for hit in by_format} == {"sql"}
    assert len(by_source) == 5 and {hit.chunk.source for hit in by_source} == {"cfg"}
    assert len(by_both) == 8 and {hit.chunk.document_id for hit in by_both} == {"sql"}
    # A filter keeps BM25's scores: it does not reorder what it keeps.
    assert by_format[0].score == pytest.approx(index.search("alpha", limit=31)[30].score)


def test_bm25_ranks_the_denser_match_first(tmp_path: Path) -> None:
    index = LexicalIndex(tmp_path / "index")
    index.publish(
        "a",
        [
            chunk("a", 0, "retention policy for the events table and other tables"),
            chunk("a", 1, "retention"),
            chunk("a", 2, "nothing to see"),
        ],
    )

    hits = index.search("events retention")

    assert [hit.chunk.chunk_id for hit in hits] == ["a@r1#0", "a@r1#1"]


@pytest.mark.parametrize(
    "query",
    ["foo:bar (baz", '"unclosed', "a^", "-", "AND OR NOT", "*", "[1 TO", "title:", "\\", "", "  "],
)
def test_query_syntax_characters_never_raise(tmp_path: Path, query: str) -> None:
    index = LexicalIndex(tmp_path / "index")
    index.publish("a", [chunk("a", 0, "foo bar baz unclosed")])

    hits = index.search(query)

    assert isinstance(hits, list)


def test_a_query_with_syntax_characters_searches_its_words(tmp_path: Path) -> None:
    index = LexicalIndex(tmp_path / "index")
    index.publish("a", [chunk("a", 0, "the bar counter"), chunk("a", 1, "nothing")])

    assert [hit.chunk.chunk_id for hit in index.search("foo:bar (baz")] == ["a@r1#0"]


def test_a_second_writer_waits_then_fails_index_busy(tmp_path: Path) -> None:
    directory = tmp_path / "index"
    index = LexicalIndex(directory, lock_timeout=0.2)
    holder = tantivy.Index.open(str(directory)).writer(heap_size=15_000_000, num_threads=1)
    try:
        with pytest.raises(IndexBusy) as raised:
            index.publish("a", [chunk("a", 0, "x")])
        assert raised.value.code == "index_busy"
        assert raised.value.retryable
    finally:
        holder.wait_merging_threads()

    index.publish("a", [chunk("a", 0, "released")])
    assert index.count() == 1


SEARCH_IN_ANOTHER_PROCESS = """
import json, sys
from loom_dagster.search.lexical import LexicalIndex
hits = LexicalIndex(sys.argv[1]).search(sys.argv[2], limit=100)
print(json.dumps(sorted(hit.chunk.revision for hit in hits)))
"""


def search_in_another_process(directory: Path, query: str) -> list[str]:
    done = subprocess.run(
        [sys.executable, "-c", SEARCH_IN_ANOTHER_PROCESS, str(directory), query],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    result: list[str] = json.loads(done.stdout)
    return result


def test_another_process_searches_while_a_writer_is_mid_publish(tmp_path: Path) -> None:
    directory = tmp_path / "index"
    LexicalIndex(directory).publish("a", [chunk("a", n, "policy text") for n in range(3)])

    # This process holds the writer in the middle of a publish: old chunks deleted, new ones
    # added, nothing committed yet. Opened through LexicalIndex, which registers the analyzer
    # its text fields name (a bare tantivy open does not know it and cannot write them).
    writer = LexicalIndex(directory)._index.writer(heap_size=15_000_000, num_threads=1)
    try:
        writer.delete_documents_by_term("document_id", "a")
        for n in range(3):
            replacement = chunk("a", n, "policy text", revision="r2")
            writer.add_document(LexicalIndex(directory)._document(replacement))

        during = search_in_another_process(directory, "policy")

        writer.commit()
    finally:
        writer.wait_merging_threads()
    after = search_in_another_process(directory, "policy")

    assert during == ["a@r1"] * 3
    assert after == ["a@r2"] * 3


def test_a_reader_never_sees_half_a_publish(tmp_path: Path) -> None:
    directory = tmp_path / "index"
    writer_side = LexicalIndex(directory)
    reader_side = LexicalIndex(directory)
    seen: list[tuple[int, frozenset[str]]] = []
    stop = threading.Event()

    def read_until_stopped() -> None:
        while not stop.is_set():
            hits = reader_side.search("passage", limit=200)
            seen.append((len(hits), frozenset(revisions(hits))))

    reader = threading.Thread(target=read_until_stopped)
    reader.start()
    try:
        for revision in ("r1", "r2", "r3", "r4"):
            chunks = [chunk("a", n, f"passage {n}", revision=revision) for n in range(50)]
            writer_side.publish("a", chunks)
    finally:
        stop.set()
        reader.join()

    assert seen, "the reader never ran"
    assert {count for count, _ in seen} <= {0, 50}
    # Each read saw one revision whole: never the old chunks beside the new.
    assert all(len(revision_set) <= 1 for _, revision_set in seen)
    assert revisions(reader_side.search("passage", limit=200)) == {"a@r4"}


def test_a_leg_reads_its_hits_keys_from_the_key_column_not_their_stored_chunks(
    tmp_path: Path,
) -> None:
    from loom_dagster.search.legs import SearchFilter, chunk_key

    index = LexicalIndex(tmp_path / "index")
    index.publish_many({"a": [chunk("a", 0, "replication lag on the primary")]})
    [hit] = index.rank_bm25("replication", SearchFilter(), 5)
    # No stored document was read for it: the key came from the fast field.
    assert hit.chunk_id == "" and hit.key == chunk_key("a@r1#0")
    [found] = index.fetch_keyed([hit.identity]).values()
    assert found.chunk_id == "a@r1#0" and found.locator.char_start == 10
    assert [h.chunk.chunk_id for h in index.search("replication")] == ["a@r1#0"]


def test_an_index_written_before_chunk_keys_is_served_and_written_in_its_own_schema(
    tmp_path: Path,
) -> None:
    from loom_dagster.search import lexical
    from loom_dagster.search.service import search

    folder = tmp_path / "index"
    folder.mkdir()
    # The schema main wrote before the key column existed.
    tantivy.Index(lexical._schema(keyed=False, stemmed=False), path=str(folder), reuse=True)
    index = LexicalIndex(folder)
    assert not index.keyed
    index.publish_many({"a": [chunk("a", 0, "replication lag on the primary")]})
    reopened = LexicalIndex(folder)
    assert not reopened.keyed
    [hit] = search(reopened, "replication", limit=5)
    assert hit.chunk.chunk_id == "a@r1#0" and hit.chunk.locator.char_start == 10
    [leg_hit] = reopened.rank_bm25("replication", lexical.SearchFilter(), 5)
    assert leg_hit.chunk_id == "a@r1#0"
