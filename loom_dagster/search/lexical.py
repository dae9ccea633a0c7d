"""The lexical search leg: BM25 over chunk text and section paths, on a tantivy index directory.

Concurrency is tantivy's own and is what this module leans on:

- one IndexWriter per directory (a lock file), held only inside `publish` and `retire`; a second
  writer, in this process or another, waits a bounded time and then fails `index_busy`;
- any number of readers, in any process; a reader sees committed segments only, and a publish
  deletes a document's previous chunks and adds its new ones in one commit, so a search sees the
  old revision or the new one, never a mix and never a document with half its chunks;
- a search reloads the reader first, so it answers from the latest commit, and never waits for a
  writer.

User query text never raises: it is cut into words by the same analyzer the text was indexed
with (so `foo:bar (baz` is the words foo, bar, baz), and the query is built from terms, not parsed.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

import tantivy

from loom_dagster.chunking import Chunk, locator_from_json, locator_json
from loom_dagster.contract.artifact import Locator
from loom_dagster.errors import LoomError

# The fields a filter or a delete matches exactly: one raw token each.
EXACT_FIELDS = ("chunk_id", "document_id", "revision", "source", "format", "block_type", "path")
# Searched with BM25: the chunk's words and the words of the headings above it.
TEXT_FIELD = "text"
SECTION_FIELD = "section_path"
# Stored for citations only (JSON), never searched.
LOCATOR_FIELD = "locator"
KEYS_FIELD = "keys"

# tantivy's "default" analyzer, rebuilt here so a query is cut into the same words as the text.
# No stemming: identifiers and code are a large share of what is indexed, and a stemmer bends them.
_MAX_TOKEN_CHARS = 40
# A query pasted from a page can hold thousands of words; its first distinct ones are plenty.
MAX_QUERY_TERMS = 256

# Memory the writer buffers before it writes a segment; tantivy's floor is 15 MB per thread. One
# thread: the pipeline runs beside other work on a small machine.
WRITER_HEAP_BYTES = 50_000_000
DEFAULT_LOCK_TIMEOUT = 30.0
# A reader in another process can read meta.json just before a writer's commit removes a file
# it names; the next reload sees the new commit, so a failed reload is tried again.
_RELOAD_ATTEMPTS = 5


T = TypeVar("T")


class IndexBusy(LoomError):
    """Another writer held the index past the wait; publishing can be tried again."""

    code = "index_busy"
    retryable = True


@dataclass(frozen=True)
class IndexedChunk:
    """What the index stores per chunk: everything a hit needs to cite its passage."""

    chunk_id: str
    document_id: str
    revision: str
    source: str
    path: str
    format: str
    block_type: str
    section_path: tuple[str, ...]
    locator: Locator
    keys: tuple[str, ...]
    text: str

    @classmethod
    def of(cls, chunk: Chunk, *, document_id: str, source: str, path: str) -> IndexedChunk:
        return cls(
            chunk_id=chunk.chunk_id,
            document_id=document_id,
            revision=chunk.revision,
            source=source,
            path=path,
            format=chunk.format,
            block_type=chunk.block_type,
            section_path=chunk.section_path,
            locator=chunk.locator,
            keys=chunk.keys,
            text=chunk.text,
        )


@dataclass(frozen=True)
class Hit:
    chunk: IndexedChunk
    score: float
    # The units of the file its revision's artifact could not read ("page 2: needs OCR"), so
    # a hit from a partly read file says so; empty when the whole file was read.
    incomplete: str = ""


def _schema() -> tantivy.Schema:
    builder = tantivy.SchemaBuilder()
    builder.add_text_field(TEXT_FIELD, stored=True)
    builder.add_text_field(SECTION_FIELD, stored=True)
    for name in EXACT_FIELDS:
        builder.add_text_field(name, stored=True, tokenizer_name="raw")
    builder.add_bytes_field(LOCATOR_FIELD, stored=True, indexed=False)
    builder.add_bytes_field(KEYS_FIELD, stored=True, indexed=False)
    return builder.build()


def _analyzer() -> tantivy.TextAnalyzer:
    return (
        tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.simple())
        .filter(tantivy.Filter.remove_long(_MAX_TOKEN_CHARS))
        .filter(tantivy.Filter.lowercase())
        .build()
    )


class LexicalIndex:
    """A tantivy index directory of chunks, one document's chunks replaced per commit."""

    def __init__(
        self, directory: str | Path, *, lock_timeout: float = DEFAULT_LOCK_TIMEOUT
    ) -> None:
        self.directory = Path(directory)
        self.lock_timeout = lock_timeout
        self.directory.mkdir(parents=True, exist_ok=True)
        self._schema = _schema()
        try:
            # Opens the index when the directory holds one, creates it otherwise.
            self._index = tantivy.Index(self._schema, path=str(self.directory), reuse=True)
        except ValueError as error:
            raise LoomError(
                f"{self.directory} holds no index this version can read: {error}",
                code="index_incompatible",
            ) from error
        # Reload only when a search asks: a watcher thread per open index buys nothing here.
        self._index.config_reader(reload_policy="manual")
        self._analyzer = _analyzer()

    # -- writing ---------------------------------------------------------------------------

    def publish(self, document_id: str, chunks: Sequence[IndexedChunk]) -> None:
        """Replace every chunk of `document_id` with `chunks`, in one commit."""
        self.publish_many({document_id: chunks})

    def publish_many(self, documents: Mapping[str, Sequence[IndexedChunk]]) -> None:
        """Replace the chunks of each document with its new ones, all in one commit.

        A commit is the costly part of a write (it syncs the files), so a batch of revisions
        shares one; a reader sees all of the batch or none of it, never half a revision.
        """
        for document_id, chunks in documents.items():
            strangers = sorted({c.document_id for c in chunks if c.document_id != document_id})
            if strangers:
                raise ValueError(f"chunks of {strangers} published as document {document_id!r}")
        if not documents:
            return
        with self._writer() as writer:
            for document_id, chunks in documents.items():
                # A delete applies to what was added before it, so the adds below survive it.
                writer.delete_documents_by_term("document_id", document_id)
                for chunk in chunks:
                    writer.add_document(self._document(chunk))
            writer.commit()

    def retire(self, document_id: str) -> None:
        """Remove every chunk of `document_id`, in one commit."""
        with self._writer() as writer:
            writer.delete_documents_by_term("document_id", document_id)
            writer.commit()

    @contextmanager
    def _writer(self) -> Iterator[tantivy.IndexWriter]:
        writer = self._acquire_writer()
        try:
            yield writer
        except BaseException:
            writer.rollback()
            raise
        finally:
            # Consumes the writer: merges finish and the directory's writer lock is released.
            writer.wait_merging_threads()

    def _acquire_writer(self) -> tantivy.IndexWriter:
        deadline = time.monotonic() + self.lock_timeout
        delay = 0.02
        while True:
            try:
                return self._index.writer(heap_size=WRITER_HEAP_BYTES, num_threads=1)
            except ValueError as error:
                if "LockBusy" not in str(error):
                    raise LoomError(
                        f"{self.directory} cannot be written: {error}", code="index_unwritable"
                    ) from error
                if time.monotonic() >= deadline:
                    raise IndexBusy(
                        f"another writer held {self.directory} for {self.lock_timeout:g}s"
                    ) from error
            time.sleep(delay)
            delay = min(delay * 2, 0.5)

    def _document(self, chunk: IndexedChunk) -> tantivy.Document:
        document = tantivy.Document()
        document.add_text(TEXT_FIELD, chunk.text)
        for title in chunk.section_path:
            document.add_text(SECTION_FIELD, title)
        for name in EXACT_FIELDS:
            document.add_text(name, getattr(chunk, name))
        document.add_bytes(LOCATOR_FIELD, locator_json(chunk.locator).encode("utf-8"))
        keys = json.dumps(list(chunk.keys), ensure_ascii=False)
        document.add_bytes(KEYS_FIELD, keys.encode("utf-8"))
        return document

    # -- reading ---------------------------------------------------------------------------

    def search(
        self,
        query: str,
        *,
        limit: int = 10,
        formats: Sequence[str] = (),
        sources: Sequence[str] = (),
        block_types: Sequence[str] = (),
    ) -> list[Hit]:
        """The `limit` best chunks for `query` by BM25, among those the filters keep."""
        words = self.query_terms(query)
        if not words or limit < 1:
            return []
        tantivy_query = self._query(
            words, {"format": formats, "source": sources, "block_type": block_types}
        )

        def run(searcher: tantivy.Searcher) -> list[Hit]:
            found = searcher.search(tantivy_query, limit, count=False)
            return [
                Hit(chunk=self._indexed_chunk(searcher.doc(address)), score=score)
                for score, address in found.hits
            ]

        return self._read(run)

    def count(self) -> int:
        """How many chunks the latest commit holds."""
        return self._read(lambda searcher: searcher.num_docs)

    def query_terms(self, query: str) -> list[str]:
        """The distinct words of a query, as the index holds them, in order."""
        return list(dict.fromkeys(self._analyzer.analyze(query)))[:MAX_QUERY_TERMS]

    def _query(self, words: Sequence[str], filters: dict[str, Sequence[str]]) -> tantivy.Query:
        # Only "should" clauses: a chunk matches when it holds any word, and BM25 ranks it by
        # how many, how rare and how dense, in its text and in its headings.
        matching = tantivy.Query.boolean_query(
            [
                (tantivy.Occur.Should, tantivy.Query.term_query(self._schema, field, word))
                for word in words
                for field in (TEXT_FIELD, SECTION_FIELD)
            ]
        )
        clauses = [(tantivy.Occur.Must, matching)]
        for field, values in filters.items():
            if values:
                # Inside the query, so the k best hits are the k best that pass; scored 0 so a
                # filter never reorders what it keeps.
                kept = tantivy.Query.term_set_query(self._schema, field, list(values))
                clauses.append((tantivy.Occur.Must, tantivy.Query.const_score_query(kept, 0.0)))
        return tantivy.Query.boolean_query(clauses)

    def _read(self, read: Callable[[tantivy.Searcher], T]) -> T:
        error: ValueError | None = None
        for attempt in range(_RELOAD_ATTEMPTS):
            try:
                self._index.reload()
                return read(self._index.searcher())
            except ValueError as failure:
                error = failure
                time.sleep(0.01 * (attempt + 1))
        raise LoomError(f"{self.directory} could not be read: {error}", code="index_unreadable")

    def _indexed_chunk(self, document: tantivy.Document) -> IndexedChunk:
        def first(name: str) -> str:
            value = document.get_first(name)
            return value if isinstance(value, str) else ""

        keys = json.loads(bytes(document.get_first(KEYS_FIELD) or b"[]"))
        return IndexedChunk(
            chunk_id=first("chunk_id"),
            document_id=first("document_id"),
            revision=first("revision"),
            source=first("source"),
            path=first("path"),
            format=first("format"),
            block_type=first("block_type"),
            section_path=tuple(document.get_all(SECTION_FIELD)),
            locator=locator_from_json(bytes(document.get_first(LOCATOR_FIELD) or b"{}")),
            keys=tuple(keys),
            text=first(TEXT_FIELD),
        )
