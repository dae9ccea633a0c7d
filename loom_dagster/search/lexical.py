"""The lexical search leg: BM25 over chunk text and section paths, on a tantivy index directory.
Over 500 lines: one idea, one tantivy index, whose schema, writer and readers share its fields.

A chunk's words are indexed as written (case and accents folded), and, in a second field, as the
stemmer of its language bends them (German, French and Spanish; search/language.py tells the
language by function words): a question in one of these languages is searched on its words and
on its stems, so `Häuser` finds `Haus` while `read_csv` is still matched as written.

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
import math
import re
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TypeVar

import tantivy

from loom_dagster.chunking import Chunk
from loom_dagster.contract.artifact import Locator
from loom_dagster.errors import LoomError
from loom_dagster.search import exact, language, passages, rows
from loom_dagster.search.fusion import Fused
from loom_dagster.search.legs import LegHit, SearchFilter, chunk_key

# The fields a filter or a delete matches exactly: one raw token each (tags: one per tag).
EXACT_FIELDS = ("chunk_id", "document_id", "revision", "source", "format", "block_type", "path")
TAGS_FIELD = "tags"
# Searched with BM25: the chunk's words and the words of the headings above it, its file's name
# among them (file_title).
TEXT_FIELD = "text"
SECTION_FIELD = "section_path"
# The weight of a match in the headings above a chunk against one in its text (a section-title
# boost). `bench/retrieval.py --holdout` measures others on held-out questions.
SECTION_BOOST = 1.0
# Stored only: the chunk as Chunk.record() writes it (JSON), and why its file was read partly.
CHUNK_FIELD = "chunk"
INCOMPLETE_FIELD = "incomplete"
# legs.chunk_key of the chunk id, indexed (a fetch by key) and a fast field (a leg reads its
# hits' keys from the column, not from each hit's stored document). An index written before it
# is opened with its own schema and served as before (its legs read the stored ids).
KEY_FIELD = "chunk_key"

# tantivy's "default" analyzer plus ASCII folding (`cafe` finds `Café`), registered under this
# name on every open (tantivy keeps analyzers per process, the schema only names them), so a
# query is cut into the same words as the text. No stemming here: identifiers and code are a
# large share of what is indexed, and a stemmer bends them.
TEXT_ANALYZER = "loom_text"
# The chunk's words as the stemmer of its language bends them (search/language.py tells it),
# each marked with the language (`de:haus` for Häuser), so a German question's stems meet German
# chunks only; a chunk of no stemmed language holds its words as the text field does, so every
# chunk has its length here and BM25's average length is the text's. Written as words cut at
# spaces: the analysis is done before, per chunk.
STEM_FIELD = "text_stem"
STEM_ANALYZER = "loom_stems"
# A chunk with no language of its own (a table's rows, a short passage) is read in its
# document's (search/language.of_document), so a French question reaches a French CSV's rows.
# Snowball's stemmers, by search/language.py's names. English is left out: most of what is
# indexed is English, and its identifiers and code are what a stemmer bends (stemmed too, the
# unseen bench's table questions fell, tuning 0.75 to 0.62).
STEMMERS = {language.GERMAN: "german", language.FRENCH: "french", language.SPANISH: "spanish"}
# The weight of a stem's match against a word's (0.5, 1.5 and 2 tried on the tuning half: none
# better). A question of no stemmed language is searched by its words alone (with every
# language's stems, BM25 alone fell from 0.64 to 0.55 on the tuning half).
STEM_BOOST = 1.0
# A chunk of a stemmed language holds its language's mark (`language_mark`) once in its stem
# field, and a question of that language is searched on the mark with this weight, in place of
# its own function words ("qué", "les", "die", "cuánto": the language's FUNCTION_WORDS and
# Snowball's list), which leave its words and stems. Those words told a question's language
# word by word, each weighing as a rare word does in a mostly English index, so a Spanish
# question's "cuánto" and "la" raised any Spanish passage (a FAQ's "en cuanto") above the
# donors' row naming Pontoriero; left out without the mark, a sibling page in another language
# came first (docs/benchmarks/search.md, part 6). The mark weighs the language once, as BM25
# weighs a word every chunk of the language holds. Chosen on the unseen bench's tuning half
# (docs/benchmarks/search.md, "third: rows and languages"); 1 against 2 there.
LANGUAGE_BOOST = 1.0
_MAX_TOKEN_CHARS = 40
# A query pasted from a page can hold thousands of words; its first distinct ones are plenty.
MAX_QUERY_TERMS = 256
# English function words a question's BM25 terms leave out (Lucene's English stop set). Most
# chunks of tables, code and configuration hold none of them, so over a mixed index they weigh
# almost as much as a name: "when was Kroger added to the S&P 500" ranked 40 prose passages
# (each with when, was, to, the) above the CSV row that names Kroger. Only the query's terms are
# dropped (the index keeps every word), and a query of nothing but these keeps them all.
# Chosen on the unseen bench's tuning half (bench/retrieval_unseen.py, 2026-12-07; fused
# found-first, table questions 0.60 to 0.70, all 0.73 to 0.75; with question words and German,
# French and Spanish function words added, natural questions fell); judging: table 0.65 to
# 0.70, all 0.72 to 0.74, no slice lower. A German, French or Spanish question's own function
# words (Snowball's lists) are left out of its stems only: left out of its words too, BM25's
# natural questions fell again (tuning 0.66 to 0.57; docs/benchmarks/search.md, part 6).
STOP_WORDS = frozenset(
    "a an and are as at be but by for if in into is it no not of on or such that the their "
    "then there these they this to was will with".split()
)

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
    """What the index stores per chunk: the chunk itself, and where it lives, so a hit cites its
    passage (source, path, revision, section path, locator) without another read."""

    chunk: Chunk
    document_id: str
    source: str
    path: str
    tags: tuple[str, ...] = ()
    # The units its revision's artifact could not read ("page 2: needs_ocr"); empty when whole.
    incomplete: str = ""

    @classmethod
    def of(
        cls,
        chunk: Chunk,
        *,
        document_id: str,
        source: str,
        path: str,
        tags: Sequence[str] = (),
        incomplete: str = "",
    ) -> IndexedChunk:
        return cls(chunk, document_id, source, path, tuple(tags), incomplete)

    @property
    def chunk_id(self) -> str:
        return self.chunk.chunk_id

    @property
    def revision(self) -> str:
        return self.chunk.revision

    @property
    def format(self) -> str:
        return self.chunk.format

    @property
    def block_type(self) -> str:
        return self.chunk.block_type

    @property
    def section_path(self) -> tuple[str, ...]:
        return self.chunk.section_path

    @property
    def locator(self) -> Locator:
        return self.chunk.locator

    @property
    def keys(self) -> tuple[str, ...]:
        return self.chunk.keys

    @property
    def text(self) -> str:
        return self.chunk.text


@dataclass(frozen=True)
class Hit:
    chunk: IndexedChunk
    score: float
    # The units of the file its revision's artifact could not read ("page 2: needs OCR"), so
    # a hit from a partly read file says so; empty when the whole file was read.
    incomplete: str = ""


def _schema(*, keyed: bool = True, stemmed: bool = True) -> tantivy.Schema:
    builder = tantivy.SchemaBuilder()
    builder.add_text_field(TEXT_FIELD, tokenizer_name=TEXT_ANALYZER)
    if stemmed:
        builder.add_text_field(STEM_FIELD, tokenizer_name=STEM_ANALYZER)
    builder.add_text_field(SECTION_FIELD, tokenizer_name=TEXT_ANALYZER)
    for name in EXACT_FIELDS:
        builder.add_text_field(name, stored=True, tokenizer_name="raw")
    builder.add_text_field(TAGS_FIELD, stored=True, tokenizer_name="raw")
    for name in exact.TIERS:
        builder.add_text_field(name, tokenizer_name="raw", index_option="freq")
    builder.add_bytes_field(CHUNK_FIELD, stored=True, indexed=False)
    builder.add_bytes_field(INCOMPLETE_FIELD, stored=True, indexed=False)
    if keyed:
        builder.add_unsigned_field(KEY_FIELD, indexed=True, fast=True)
    return builder.build()


def file_title(path: str) -> str:
    """The words of a file's name, which head every passage of it as a title does: a CSV has no
    heading, and its name says what its rows are (`dac-recipients.csv`: "DAC recipient code for
    Viet Nam" reached the country-codes row that names Viet Nam eleven times). A part holding a
    digit (a date, a version, `q1`) is left out: it names no subject, and a question's number
    would match every passage of the file. Chosen on the unseen bench's three tuning sets
    (docs/benchmarks/search.md, "seventh"): found first up on each, no question lost."""
    stem = path.rsplit("/", 1)[-1].rsplit(".", 1)[0]
    return " ".join(
        part for part in _NAME_PARTS.split(stem) if part and not any(c.isdigit() for c in part)
    )


_NAME_PARTS = re.compile(r"[\W_]+")


def language_mark(language_code: str) -> str:
    """The term every chunk of a stemmed language holds once in its stem field: no stem is
    one, since a stem is a word's letters and digits after its language's mark."""
    return f"{language_code}:"


def text_analyzer() -> tantivy.TextAnalyzer:
    return (
        tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.simple())
        .filter(tantivy.Filter.remove_long(_MAX_TOKEN_CHARS))
        .filter(tantivy.Filter.lowercase())
        .filter(tantivy.Filter.ascii_fold())
        .build()
    )


def stem_analyzer(language_code: str, *, stop: bool = False) -> tantivy.TextAnalyzer:
    """The text analyzer with a language's stemmer before the folding: Snowball's stemmers
    read the accents (French `élection` and `élections` are both `elect`). With `stop`, the
    language's function words (Snowball's lists, as tantivy has them) are left out first."""
    builder = (
        tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.simple())
        .filter(tantivy.Filter.remove_long(_MAX_TOKEN_CHARS))
        .filter(tantivy.Filter.lowercase())
    )
    if stop:
        builder = builder.filter(tantivy.Filter.stopword(STEMMERS[language_code]))
    return (
        builder.filter(tantivy.Filter.stemmer(STEMMERS[language_code]))
        .filter(tantivy.Filter.ascii_fold())
        .build()
    )


def _stems_analyzer() -> tantivy.TextAnalyzer:
    return tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.whitespace()).build()


def filter_clauses(schema: tantivy.Schema, search_filter: SearchFilter) -> list[tantivy.Query]:
    """The filter as queries a chunk must match, each scored 0 so it never reorders what it
    keeps; inside a leg's query, so the k best hits are the k best that pass."""
    kept = []
    for field, values in (
        ("format", search_filter.formats),
        ("source", search_filter.sources),
        ("block_type", search_filter.block_types),
        (TAGS_FIELD, search_filter.tags),
    ):
        if values:
            kept.append(tantivy.Query.term_set_query(schema, field, list(values)))
    if search_filter.path_prefix:
        kept.append(
            # (?s): a path may hold a newline, and the prefix still keeps it.
            tantivy.Query.regex_query(
                schema, "path", re.escape(search_filter.path_prefix) + "(?s:.*)"
            )
        )
    return [tantivy.Query.const_score_query(query, 0.0) for query in kept]


class LexicalIndex:
    """A tantivy index directory of chunks, one document's chunks replaced per commit."""

    def __init__(
        self, directory: str | Path, *, lock_timeout: float = DEFAULT_LOCK_TIMEOUT
    ) -> None:
        self.directory = Path(directory)
        self.lock_timeout = lock_timeout
        self.directory.mkdir(parents=True, exist_ok=True)
        try:
            self._index, self._schema, self.keyed, self.stemmed = self._open()
        except ValueError as error:
            raise LoomError(
                f"{self.directory} holds no index this version can read ({error}): remove "
                "the folder, and the next `loom ingest` rebuilds it from the catalog",
                code="index_incompatible",
            ) from error
        # Reload only when a search asks: a watcher thread per open index buys nothing here.
        self._index.config_reader(reload_policy="manual")
        self._read_generation: bytes | None = None
        self._analyzer = text_analyzer()
        self._index.register_tokenizer(TEXT_ANALYZER, self._analyzer)
        self._index.register_tokenizer(STEM_ANALYZER, _stems_analyzer())
        self._stemmers = {name: stem_analyzer(name) for name in STEMMERS}
        self._query_stemmers = {name: stem_analyzer(name, stop=True) for name in STEMMERS}
        self._function_words = {name: self._own_words(name) for name in STEMMERS}

    def _open(self) -> tuple[tantivy.Index, tantivy.Schema, bool, bool]:
        """Opens the index when the directory holds one, creates it otherwise (in the newest
        schema). An index written before chunks carried keys, or before their stems, is served
        (and written) in its own schema: without keys its legs read the stored ids, without
        stems a question is searched by its words alone."""
        error: ValueError | None = None
        for keyed, stemmed in ((True, True), (True, False), (False, False)):
            schema = _schema(keyed=keyed, stemmed=stemmed)
            try:
                index = tantivy.Index(schema, path=str(self.directory), reuse=True)
            except ValueError as failure:
                if "schema does not match" not in str(failure):
                    raise
                error = failure
                continue
            return index, schema, keyed, stemmed
        assert error is not None
        raise error

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
                # A chunk of no language of its own (a table's rows, a short passage) is read
                # in its document's; an index without stems needs neither.
                languages = [
                    language.of_text(chunk.text) if self.stemmed else None for chunk in chunks
                ]
                fallback = language.of_document(languages)
                for chunk, found in zip(chunks, languages, strict=True):
                    writer.add_document(self._document(chunk, found or fallback))
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

    def _document(self, chunk: IndexedChunk, language_code: str | None = None) -> tantivy.Document:
        """The index's document of a chunk; its stems in `language_code`'s stemmer, if any."""
        document = tantivy.Document()
        # A passage of table rows is read with each column's name once (search/rows.py).
        text = rows.names_once(chunk.text) if chunk.locator.row_start is not None else chunk.text
        document.add_text(TEXT_FIELD, text)
        if self.stemmed:
            stems = self.stems(text, language_code)
            if language_code in self._stemmers:
                stems.append(language_mark(language_code))
            document.add_text(STEM_FIELD, " ".join(stems))
        for title in chunk.section_path:
            document.add_text(SECTION_FIELD, title)
        named = file_title(chunk.path)
        if named:
            document.add_text(SECTION_FIELD, named)
        for name in EXACT_FIELDS:
            document.add_text(name, getattr(chunk, name))
        for tag in chunk.tags:
            document.add_text(TAGS_FIELD, tag)
        names = exact.key_terms(chunk.chunk.names) + exact.heading_identifiers(chunk.section_path)
        for field, terms in (
            (exact.NAMES_FIELD, names),
            (exact.KEYS_FIELD, exact.key_terms(chunk.keys)),
            (exact.TEXT_FIELD, exact.text_identifiers(chunk.text)),
        ):
            for term in dict.fromkeys(terms):
                document.add_text(field, term)
        if self.keyed:
            document.add_unsigned(KEY_FIELD, chunk_key(chunk.chunk_id))
        record = json.dumps(chunk.chunk.record(), ensure_ascii=False)
        document.add_bytes(CHUNK_FIELD, record.encode("utf-8"))
        document.add_bytes(INCOMPLETE_FIELD, chunk.incomplete.encode("utf-8"))
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
        search_filter: SearchFilter | None = None,
    ) -> list[Hit]:
        """The `limit` best chunks for `query` by BM25, among those the filters keep."""
        if search_filter is None:
            search_filter = SearchFilter(
                formats=tuple(formats), sources=tuple(sources), block_types=tuple(block_types)
            )
        ranked = self.rank_bm25(query, search_filter, limit)
        found = self.fetch_keyed([hit.identity for hit in ranked], [h.chunk_id for h in ranked])
        return [
            Hit(
                chunk=found[hit.identity],
                score=hit.score,
                incomplete=found[hit.identity].incomplete,
            )
            for hit in ranked
            if hit.identity in found
        ]

    def rank_bm25(self, query: str, search_filter: SearchFilter, limit: int) -> list[LegHit]:
        """The lexical leg: BM25 over the chunk's words and its headings' words, and, when the
        question is in a stemmed language, over its stems and its language's mark in place of
        its function words (LANGUAGE_BOOST)."""
        words = self.query_terms(query)
        if not words or limit < 1:
            return []
        stems = self.query_stems(query)
        found = language.of_query(query) if stems else None
        marks: list[str] = []
        if found is not None:
            own = self._function_words[found]
            words = self._content_words(words, found)
            stems = [stem for stem in stems if stem.partition(":")[2] not in own]
            marks = [language_mark(found)]
        fields: list[tuple[str, float, Sequence[str]]] = [
            (TEXT_FIELD, 1.0, words),
            (SECTION_FIELD, SECTION_BOOST, words),
            (STEM_FIELD, LANGUAGE_BOOST, marks),
            (STEM_FIELD, STEM_BOOST, stems),
        ]
        return self.rank_terms(fields, search_filter, limit)

    def rank_terms(
        self,
        fields: Sequence[tuple[str, float, Sequence[str]]],
        search_filter: SearchFilter,
        limit: int,
    ) -> list[LegHit]:
        """The `limit` chunks, among those the filter keeps, that hold any of the terms, by the
        sum of each field's BM25 score times its boost; ties in index order."""
        if limit < 1:
            return []
        should = []
        for field, boost, terms in fields:
            for term in terms:
                query = tantivy.Query.term_query(self._schema, field, term)
                if boost != 1.0:
                    query = tantivy.Query.boost_query(query, boost)
                should.append((tantivy.Occur.Should, query))
        if not should:
            return []
        # Only "should" clauses: a chunk matches when it holds any term, and BM25 ranks it by
        # how many, how rare and how dense.
        clauses = [(tantivy.Occur.Must, tantivy.Query.boolean_query(should))]
        clauses += [
            (tantivy.Occur.Must, kept) for kept in filter_clauses(self._schema, search_filter)
        ]
        tantivy_query = tantivy.Query.boolean_query(clauses)

        def run(searcher: tantivy.Searcher) -> list[LegHit]:
            found = searcher.search(tantivy_query, limit, count=False).hits
            if self.keyed:
                keys = searcher.fast_field_values(KEY_FIELD, [address for _, address in found])
                known = [key for key in keys if isinstance(key, int)]
                if len(known) == len(found):
                    return [
                        LegHit("", float(score), key)
                        for (score, _), key in zip(found, known, strict=True)
                    ]
            hits = []
            for score, address in found:
                chunk_id = searcher.doc(address).get_first("chunk_id")
                hits.append(LegHit(chunk_id=str(chunk_id), score=float(score)))
            return hits

        return self._read(run)

    def fetch(self, chunk_ids: Sequence[str]) -> dict[str, IndexedChunk]:
        """The stored chunks of these ids (an id no longer indexed is left out), looked up
        through the chunk_id terms, not scanned."""
        wanted = list(dict.fromkeys(chunk_ids))
        if not wanted:
            return {}
        query = tantivy.Query.term_set_query(self._schema, "chunk_id", wanted)

        def run(searcher: tantivy.Searcher) -> dict[str, IndexedChunk]:
            found = searcher.search(query, len(wanted), count=False)
            chunks = (self._indexed_chunk(searcher.doc(address)) for _, address in found.hits)
            return {chunk.chunk_id: chunk for chunk in chunks}

        return self._read(run)

    def fetch_keyed(
        self, keys: Sequence[int], chunk_ids: Sequence[str] = ()
    ) -> dict[int, IndexedChunk]:
        """The stored chunks of these keys (legs.chunk_key), by key; a key no longer indexed
        is left out. An index without keys is read by `chunk_ids` (its legs read ids)."""
        if not self.keyed:
            found = self.fetch(chunk_ids)
            return {chunk_key(chunk_id): chunk for chunk_id, chunk in found.items()}
        wanted = list(dict.fromkeys(keys))
        if not wanted:
            return {}
        query = tantivy.Query.term_set_query(self._schema, KEY_FIELD, wanted)

        def run(searcher: tantivy.Searcher) -> dict[int, IndexedChunk]:
            found = searcher.search(query, len(wanted), count=False)
            chunks = (self._indexed_chunk(searcher.doc(address)) for _, address in found.hits)
            return {chunk_key(chunk.chunk_id): chunk for chunk in chunks}

        return self._read(run)

    def document_chunks(self, document_id: str, limit: int) -> list[IndexedChunk]:
        """The live chunks of one document in their order, at most `limit` of them, looked up
        through the document_id term (`loom serve`'s get_document outline)."""
        query = tantivy.Query.term_query(self._schema, "document_id", document_id)

        def run(searcher: tantivy.Searcher) -> list[IndexedChunk]:
            found = searcher.search(query, limit, count=False)
            return [self._indexed_chunk(searcher.doc(address)) for _, address in found.hits]

        return sorted(self._read(run), key=lambda chunk: chunk.chunk.ordinal)

    def holds_term(self, field: str, value: str) -> bool:
        """Whether any chunk of the latest commit holds `value` in `field` (a tag, a source)."""
        query = tantivy.Query.term_query(self._schema, field, value)
        return self._read(lambda searcher: bool(searcher.search(query, 1, count=False).hits))

    def sources_tagged(self, tags: Sequence[str]) -> list[str]:
        """The sources whose chunks carry any of `tags` (a tag belongs to a source, and every
        chunk of it carries it): one single-hit search per source found, each excluding the
        sources already found, so the cost follows the sources, not the chunks."""
        if not tags:
            return []
        carries = tantivy.Query.term_set_query(self._schema, TAGS_FIELD, list(tags))

        def run(searcher: tantivy.Searcher) -> list[str]:
            found: list[str] = []
            while True:
                clauses = [(tantivy.Occur.Must, carries)]
                if found:
                    known = tantivy.Query.term_set_query(self._schema, "source", found)
                    clauses.append((tantivy.Occur.MustNot, known))
                hits = searcher.search(tantivy.Query.boolean_query(clauses), 1, count=False).hits
                if not hits:
                    return found
                source = searcher.doc(hits[0][1]).get_first("source")
                if not isinstance(source, str) or source in found:
                    return found
                found.append(source)

        return self._read(run)

    def term_weights(self, words: Sequence[str]) -> list[float]:
        """Each word's inverse document frequency over the live chunks' text, as BM25 weighs it
        (a word no chunk holds weighs most); a word the analyzer drops weighs nothing."""

        def run(searcher: tantivy.Searcher) -> list[float]:
            total = searcher.num_docs
            weights = []
            for word in words:
                terms = self._analyzer.analyze(word)
                if not terms:
                    weights.append(0.0)
                    continue
                frequency = min(searcher.doc_freq(TEXT_FIELD, term) for term in terms)
                weights.append(math.log(1.0 + (total - frequency + 0.5) / (frequency + 0.5)))
            return weights

        return self._read(run)

    def count(self) -> int:
        """How many chunks the latest commit holds."""
        return self._read(lambda searcher: searcher.num_docs)

    def analyze(self, text: str) -> list[str]:
        """The words of a text as the index holds them."""
        return list(self._analyzer.analyze(text))

    def _content_words(self, words: Sequence[str], language_code: str) -> list[str]:
        """A question's words without its language's function words (search/language.py's
        and Snowball's), unless it has no other."""
        own, snowball = self._function_words[language_code], self._query_stemmers[language_code]
        return [word for word in words if word not in own and snowball.analyze(word)] or list(words)

    def question_terms(self, query: str) -> list[str]:
        """The words a question is matched by: `query_terms`, without its language's function
        words when it is in a stemmed language and the index holds stems."""
        words = self.query_terms(query)
        found = language.of_query(query) if self.stemmed else None
        if found is None or found not in self._stemmers:
            return words
        return self._content_words(words, found)

    def _own_words(self, language_code: str) -> frozenset[str]:
        """search/language.py's function words of a stemmed language as a question's words
        and stems are written (Snowball's own list is its query stemmer's)."""
        names = language.FUNCTION_WORDS[language_code]
        written = {word for name in names for word in self.analyze(name)}
        written |= {stem for name in names for stem in self._stemmers[language_code].analyze(name)}
        return frozenset(written)

    def stems(self, text: str, language_code: str | None) -> list[str]:
        """A text's words as the stem field holds them: marked stems when it is in a stemmed
        language, its words as written otherwise."""
        if language_code is None or language_code not in self._stemmers:
            return self.analyze(text)
        return [f"{language_code}:{stem}" for stem in self._stemmers[language_code].analyze(text)]

    def query_stems(self, query: str) -> list[str]:
        """The distinct stems of a question in a stemmed language, marked as the chunks of that
        language hold them; none for a question of another language or of none, or when the
        index holds no stems."""
        if not self.stemmed:
            return []
        found = language.of_query(query)
        if found is None or found not in self._stemmers:
            return []
        words = self._query_stemmers[found].analyze(query)
        return [f"{found}:{stem}" for stem in dict.fromkeys(words)][:MAX_QUERY_TERMS]

    def query_terms(self, query: str) -> list[str]:
        """The distinct words of a query, as the index holds them, in order, without its stop
        words unless it has no other."""
        words = list(dict.fromkeys(self._analyzer.analyze(query)))
        kept = [word for word in words if word not in STOP_WORDS]
        return (kept or words)[:MAX_QUERY_TERMS]

    def _generation(self) -> bytes | None:
        """The index's committed state, cheaply: every commit rewrites meta.json (its segments
        and opstamp), so the same bytes mean nothing was committed. Reading a few KB is ~20 µs
        where a reload is ~140 µs, and unlike a stat it cannot be fooled by a reused inode
        within one timestamp tick."""
        try:
            return (self.directory / "meta.json").read_bytes()
        except OSError:
            return None

    def _read(self, read: Callable[[tantivy.Searcher], T]) -> T:
        error: ValueError | None = None
        for attempt in range(_RELOAD_ATTEMPTS):
            try:
                # Reload (re-read meta.json, reopen new segments) only when a commit happened
                # since the last read: a search of an unchanged index skips it.
                generation = self._generation()
                if generation is None or generation != self._read_generation:
                    self._index.reload()
                    self._read_generation = generation
                return read(self._index.searcher())
            except ValueError as failure:
                error = failure
                self._read_generation = None
                time.sleep(0.01 * (attempt + 1))
        raise LoomError(f"{self.directory} could not be read: {error}", code="index_unreadable")

    def _indexed_chunk(self, document: tantivy.Document) -> IndexedChunk:
        def first(name: str) -> str:
            value = document.get_first(name)
            return value if isinstance(value, str) else ""

        record = json.loads(bytes(document.get_first(CHUNK_FIELD) or b"{}"))
        return IndexedChunk(
            chunk=Chunk.from_record(record),
            document_id=first("document_id"),
            source=first("source"),
            path=first("path"),
            tags=tuple(document.get_all(TAGS_FIELD)),
            incomplete=bytes(document.get_first(INCOMPLETE_FIELD) or b"").decode("utf-8"),
        )


class LexicalLeg:
    """BM25 over chunk text and headings, as a fusion leg."""

    name = "lexical"
    # How many fused hits rerank_passages reads.
    rerank_depth = passages.DEPTH

    def __init__(self, index: LexicalIndex) -> None:
        self.index = index

    def rank(self, query: str, search_filter: SearchFilter, limit: int) -> Sequence[LegHit]:
        return self.index.rank_bm25(query, search_filter, limit)

    def rerank_passages(self, query: str, fused: Sequence[Fused]) -> list[Fused]:
        """The fused hits, the first passages.DEPTH re-ordered by their fused score plus
        passages.WEIGHT times the share of the question's words their best window holds; then
        the first hit's document's passage that answers best among them comes first
        (passages.lead_passage)."""
        top = list(fused[: passages.DEPTH])
        if len(top) < 2 or passages.WEIGHT <= 0 or passages.named_exactly(top[0]):
            return list(fused)
        # The words BM25 searched: a French question's "qui", "le" and "après" held in a
        # window weighed as much as what it asks.
        terms = self.index.question_terms(query)
        weights = self.index.term_weights(terms)
        found = self.index.fetch_keyed([hit.key for hit in top], [hit.chunk_id for hit in top])
        texts = {
            key: (chunk.text, chunk.section_path[-1] if chunk.section_path else "")
            for key, chunk in found.items()
        }
        shares = passages.window_shares(terms, weights, texts, self.index.analyze)
        scored = [
            replace(hit, score=hit.score + passages.WEIGHT * shares.get(hit.key, 0.0))
            for hit in top
        ]
        scored.sort(key=lambda hit: -hit.score)
        first = scored[0]
        # A hit the exact leg named keeps its place, wherever the rerank put it.
        document = found[first.key].document_id if first.key in found else None
        if document is not None and not passages.named_exactly(first):
            candidates = {
                hit.key: passages.Candidate(
                    shares.get(hit.key, 0.0),
                    next((leg.score for leg in hit.legs if leg.leg == self.name), 0.0),
                    found[hit.key].chunk.ordinal,
                )
                for hit in scored
                if hit.key in found and found[hit.key].document_id == document
            }
            lead = passages.lead_passage(first.key, candidates)
            if lead != first.key:
                chosen = next(hit for hit in scored if hit.key == lead)
                scored = [chosen, *(hit for hit in scored if hit.key != lead)]
        return scored + list(fused[passages.DEPTH :])
