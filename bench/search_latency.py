"""Hybrid search latency in-process: `search()` as `loom search` runs it (the exact, lexical and
vector legs fused by RRF, filters inside each leg, each hit's chunk and citation fetched from the
index), at 100,000 chunks (and 1,000,000 with --chunks 1000000), beside bare tantivy BM25 on the
same index; the vector leg exact (numpy), two-stage (a prefix of each vector, then the best rows
whole) and HNSW (usearch: the graph the writer keeps in the generation, mapped by the reader) at
the same size, with recall@10 against the exact scan at each HNSW width (--ef); the legs read
chunk keys from the lexical index's fast field against reading stored ids, timed in turn query
by query (`paired`); and the default embedder's chunks/s on real document text.

Synthetic chunks (60-90 words drawn from the words of the corpus's documents, 20 chunks a
document, four formats, four sources) are published through the real indexes (LexicalIndex,
VectorIndex). Chunk vectors are computed as the default model computes them (the average of its
token vectors) from precomputed word vectors, so a million chunks fit the time; each query is
embedded by the real default embedder, as a search does.

    .venv/bin/python bench/search_latency.py --chunks 100000
    # before/after: main's search() beside this checkout's, query by query in one process
    .venv/bin/python bench/search_latency.py --chunks 100000 --no-hnsw --home DIR --base main \
        --paired-only
    # a million: build once into a kept folder (outside the repo), then reuse it
    nice .venv/bin/python bench/search_latency.py --chunks 1000000 --publish-documents 10000 \
        --home /root/vectors19-bench/home-1m --ef 256,1024,2048
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import io
import itertools
import json
import os
import platform
import random
import re
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import threading
import time
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path
from types import ModuleType

import numpy as np

from loom_dagster.chunking import Chunk
from loom_dagster.contract.artifact import Locator
from loom_dagster.search.embedding import Matrix, WordLlamaEmbedder, normalized
from loom_dagster.search.hnsw import HNSW_EXPANSION_SEARCH
from loom_dagster.search.legs import SearchFilter
from loom_dagster.search.lexical import TEXT_ANALYZER, IndexedChunk, LexicalIndex, text_analyzer
from loom_dagster.search.service import default_legs, search
from loom_dagster.search.vector import VectorIndex

HERE = Path(__file__).resolve().parent
CORPUS_TEXT = HERE.parent.parent / "shared" / "corpus" / "gold"
FORMATS = ("markdown", "pdf", "html", "docx")
SOURCES = ("wiki", "runbooks", "reports", "slides")
CHUNKS_PER_DOCUMENT = 20
PUBLISH_DOCUMENTS = 500
LIMIT = 10
DEPTH = 50  # the vector leg's depth when timed alone (search() asks each leg for 30)


def corpus_text() -> str:
    parts = [p.read_text(errors="ignore") for p in sorted(CORPUS_TEXT.glob("*/*.md"))]
    return "\n".join(parts)


def vocabulary(text: str) -> list[str]:
    words = re.findall(r"[A-Za-z][A-Za-z'-]{2,}", text)
    return words or ["disk", "table", "revenue", "duck", "security", "word", "processor"]


class BagOfWordsEmbedder:
    """The default model's vectors for chunks built from a known vocabulary: the average of the
    words' vectors, computed once per word; a single text (a query) goes through the model."""

    def __init__(self, model: WordLlamaEmbedder, words: Sequence[str]) -> None:
        self.real = model
        self.model = model.model + "-bench"
        self.dimension = model.dimension
        self.words = sorted(set(words))
        self.position = {w: i for i, w in enumerate(self.words)}
        tokenizer, weights = model._load()
        encoded = tokenizer.encode_batch(self.words, add_special_tokens=False)
        self.table = np.stack(
            [
                np.asarray(weights[e.ids, : model.dimension], dtype=np.float32).sum(axis=0)
                for e in encoded
            ]
        )

    def embed(self, texts: Sequence[str]) -> Matrix:
        if len(texts) == 1:
            return self.real.embed(texts)
        rows = np.zeros((len(texts), self.dimension), dtype=np.float32)
        for n, text in enumerate(texts):
            ids = [self.position[w] for w in text.split() if w in self.position]
            if ids:
                rows[n] = self.table[ids].sum(axis=0)
        return normalized(rows)


def make_chunks(count: int, words: Sequence[str], seed: int = 11) -> dict[str, list[IndexedChunk]]:
    rng = random.Random(seed)
    # Zipf-like: a few words common, most rare, as in text.
    cumulative = list(itertools.accumulate(1.0 / (rank + 1) for rank in range(len(words))))
    documents: dict[str, list[IndexedChunk]] = {}
    for start in range(0, count, CHUNKS_PER_DOCUMENT):
        number = start // CHUNKS_PER_DOCUMENT
        # A document is about something: most of its words come from a topic of its own, so
        # vectors spread as real ones do (all-random chunks average to nearly one vector).
        topic = rng.sample(words, k=min(len(words), 150))
        doc = f"doc{number:07d}"
        revision = f"{doc}@r1"
        chunks = []
        for ordinal in range(min(CHUNKS_PER_DOCUMENT, count - start)):
            size = rng.randint(60, 90)
            drawn = rng.choices(topic, k=size * 2 // 3)
            drawn += rng.choices(words, cum_weights=cumulative, k=size - len(drawn))
            text = " ".join(drawn)
            source = SOURCES[number % len(SOURCES)]
            piece = Chunk(
                ordinal=ordinal,
                text=text,
                block_ids=(f"b{ordinal}",),
                block_type="paragraph" if ordinal % 3 else "table",
                section_path=("Guide", f"Section {ordinal}"),
                locator=Locator(line_start=ordinal * 10 + 1, line_end=ordinal * 10 + 9),
                keys=(),
                revision=revision,
                format=FORMATS[number % len(FORMATS)],
            )
            chunks.append(
                IndexedChunk.of(
                    piece, document_id=doc, source=source, path=f"{source}/{doc}.md", tags=(source,)
                )
            )
        documents[doc] = chunks
    return documents


def percentiles(samples: Sequence[float]) -> dict[str, float]:
    ordered = sorted(samples)

    def at(share: float) -> float:
        return round(ordered[min(len(ordered) - 1, int(share * len(ordered)))] * 1000, 2)

    return {"p50_ms": at(0.50), "p95_ms": at(0.95), "p99_ms": at(0.99)}


def timed(run: Callable[[str], object], queries: Sequence[str]) -> dict[str, float]:
    for query in queries[:20]:
        run(query)  # warm: first reads, caches
    samples = []
    for query in queries:
        started = time.perf_counter()
        run(query)
        samples.append(time.perf_counter() - started)
    return percentiles(samples)


def paired(
    runs: dict[str, Callable[[str], object]], queries: Sequence[str]
) -> dict[str, dict[str, float]]:
    """Each query run by every variant in turn (the order rotating), so a load that drifts
    during the run weighs on all of them alike: on a shared machine, variants timed one after
    the other differed more by when they ran than by what they did."""
    names = list(runs)
    samples: dict[str, list[float]] = {name: [] for name in names}
    for query in queries[:20]:
        for name in names:
            runs[name](query)
    for n, query in enumerate(queries):
        for name in names[n % len(names) :] + names[: n % len(names)]:
            started = time.perf_counter()
            runs[name](query)
            samples[name].append(time.perf_counter() - started)
    return {name: percentiles(taken) for name, taken in samples.items()}


def machine() -> str:
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    return (
        f"{platform.machine()}, {os.cpu_count()} cores (nproc), load {load}, "
        f"Python {platform.python_version()}"
    )


def base_package(commit: str, scratch: Path) -> dict[str, ModuleType]:
    """The search modules as `commit` has them, imported beside this checkout's as the package
    `loom_base` (its files copied from git, every `loom_dagster` in them renamed), so one
    process times both searches query by query: before and after in the same run."""
    archive = subprocess.run(
        ["git", "-C", str(HERE.parent), "archive", commit, "loom_dagster"],
        capture_output=True,
        check=True,
    ).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(scratch, filter="data")
    package = (scratch / "loom_dagster").rename(scratch / "loom_base")
    for path in package.rglob("*.py"):
        path.write_text(re.sub(r"\bloom_dagster\b", "loom_base", path.read_text()))
    sys.path.insert(0, str(scratch))
    return {
        name: importlib.import_module(f"loom_base.search.{name}")
        for name in ("legs", "lexical", "service", "vector")
    }


def base_search(
    modules: dict[str, ModuleType],
    home: Path,
    embedder: BagOfWordsEmbedder,
    filters: Sequence[SearchFilter],
    chunks: int,
) -> Callable[[str], object]:
    """`search()` as the base commit runs it over the same home, legs and filters (in the same
    rotation as `hybrid_with`), the vector leg exact."""
    index = modules["lexical"].LexicalIndex(home / "lexical")
    vectors = modules["vector"].VectorIndex(home / "vectors", embedder, hnsw_threshold=chunks + 1)
    legs = modules["service"].default_legs(index, vectors)
    kept = [
        modules["legs"].SearchFilter(
            formats=f.formats, sources=f.sources, block_types=f.block_types
        )
        for f in filters
    ]
    counter = [0]

    def run(query: str) -> object:
        counter[0] += 1
        chosen = kept[counter[0] % len(kept)]
        return modules["service"].search(index, query, chosen, limit=LIMIT, legs=legs)

    return run


def throughput(
    run: Callable[[str], object], queries: Sequence[str], clients: int, seconds: float
) -> float:
    done = [0] * clients
    stop = time.perf_counter() + seconds

    def client(n: int) -> None:
        i = n
        while time.perf_counter() < stop:
            run(queries[i % len(queries)])
            done[n] += 1
            i += clients

    threads = [threading.Thread(target=client, args=(n,)) for n in range(clients)]
    started = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return round(sum(done) / (time.perf_counter() - started), 1)


def embedder_speed(model: WordLlamaEmbedder, text: str, count: int = 5000) -> float:
    """Chunks/s of the default embedder on real document text cut into ~1,000-character chunks."""
    pieces = [text[i : i + 1000] for i in range(0, len(text) - 1000, 1000)]
    chunks = (pieces * (count // max(len(pieces), 1) + 1))[:count]
    model.embed(chunks[:64])
    started = time.perf_counter()
    model.embed(chunks)
    return round(count / (time.perf_counter() - started))


def build_indexes(
    base: Path,
    chunks: int,
    words: Sequence[str],
    embedder: BagOfWordsEmbedder,
    args: argparse.Namespace,
) -> dict[str, object]:
    """Publish `chunks` synthetic chunks into fresh indexes under `base`; returns the timings."""
    (base / "built.json").unlink(missing_ok=True)
    for name in ("lexical", "vectors"):
        shutil.rmtree(base / name, ignore_errors=True)
    base.mkdir(parents=True, exist_ok=True)
    result: dict[str, object] = {}
    started = time.perf_counter()
    documents = make_chunks(chunks, words)
    result["generate_s"] = round(time.perf_counter() - started, 1)
    lexical = LexicalIndex(base / "lexical")
    # The writer keeps the HNSW graph in each generation unless --no-hnsw.
    writer = VectorIndex(
        base / "vectors", embedder, hnsw_threshold=chunks + 1 if args.no_hnsw else 0
    )
    names = list(documents)
    batch = args.publish_documents
    started = time.perf_counter()
    for at in range(0, len(names), batch):
        lexical.publish_many({d: documents[d] for d in names[at : at + batch]})
    result["lexical_publish_s"] = round(time.perf_counter() - started, 1)
    started = time.perf_counter()
    for at in range(0, len(names), batch):
        writer.publish_many({d: documents[d] for d in names[at : at + batch]})
        print(f"published {min(at + batch, len(names))} documents", flush=True)
    result["vector_publish_s"] = round(time.perf_counter() - started, 1)
    return result


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--chunks", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--out", type=Path)
    parser.add_argument("--no-hnsw", action="store_true", help="exact vector search only")
    parser.add_argument(
        "--publish-documents",
        type=int,
        default=PUBLISH_DOCUMENTS,
        help="documents a publish batch (each batch writes a whole new vector generation)",
    )
    parser.add_argument(
        "--home",
        type=Path,
        help="a folder the indexes are built in and kept (reused when it holds this --chunks)",
    )
    parser.add_argument(
        "--ef",
        default=str(HNSW_EXPANSION_SEARCH),
        help="HNSW search widths to measure recall@10 and the vector leg's latency at (a,b,c)",
    )
    parser.add_argument(
        "--prefix-dimensions", type=int, default=64, help="the two-stage scan's first stage"
    )
    parser.add_argument("--paired-only", action="store_true", help="only the paired timings")
    parser.add_argument("--build-only", action="store_true", help="build --home and stop")
    parser.add_argument(
        "--base", help="a commit whose search() is timed beside this one's in the paired runs"
    )
    args = parser.parse_args()
    widths = [int(w) for w in args.ef.split(",") if w.strip()]
    warnings.filterwarnings("ignore")
    import tantivy

    text = corpus_text()
    words = vocabulary(text)
    real = WordLlamaEmbedder()
    result: dict[str, object] = {
        "chunks": args.chunks,
        "embedder_chunks_per_s": embedder_speed(real, text),
    }
    embedder = BagOfWordsEmbedder(real, words)
    rng = random.Random(5)
    queries = [
        " ".join(rng.choices(words[:2000], k=rng.randint(2, 6))) for _ in range(args.queries)
    ]
    filters = [
        SearchFilter(),
        SearchFilter(formats=("pdf",)),
        SearchFilter(sources=("wiki", "reports")),
    ]

    with contextlib.ExitStack() as stack:
        if args.home is None:
            base = Path(
                stack.enter_context(tempfile.TemporaryDirectory(dir=os.environ.get("BENCH_TMP")))
            )
        else:
            base = args.home
        built = base / "built.json"
        wanted = {"chunks": args.chunks, "hnsw": not args.no_hnsw}
        reused = built.is_file() and json.loads(built.read_text()).get("index") == wanted
        if reused:
            result.update(json.loads(built.read_text())["build"])
            result["reused_home"] = str(base)
        else:
            build = build_indexes(base, args.chunks, words, embedder, args)
            result.update(build)
            built.write_text(json.dumps({"index": wanted, "build": build}) + "\n")
        if args.build_only:
            print(json.dumps(result, indent=2))
            return
        lexical = LexicalIndex(base / "lexical")
        # Readers as a fresh process opens them: the generation mapped, the graph mapped.
        exact = VectorIndex(base / "vectors", embedder, hnsw_threshold=args.chunks + 1)
        # The exact scan in two stages: a prefix of each vector, then the best rows whole.
        prefixed = VectorIndex(
            base / "vectors",
            embedder,
            hnsw_threshold=args.chunks + 1,
            prefix_dimensions=args.prefix_dimensions,
        )
        vectors = VectorIndex(base / "vectors", embedder, hnsw_threshold=0)
        if args.no_hnsw:
            vectors = exact
        started = time.perf_counter()
        exact.count()
        result["vector_open_ms"] = round((time.perf_counter() - started) * 1000, 1)
        if not args.no_hnsw:
            started = time.perf_counter()
            vectors.rank("warm", SearchFilter(), 1)
            result["hnsw_open_and_first_search_ms"] = round(
                (time.perf_counter() - started) * 1000, 1
            )

        # The same index read as main read it: each leg hit's stored document fetched for its
        # chunk id (the key column ignored), to compare in the same run.
        fetching = LexicalIndex(base / "lexical")
        fetching.keyed = False

        def hybrid_with(leg: VectorIndex, index: LexicalIndex = lexical) -> Callable[[str], object]:
            counter = [0]
            legs = default_legs(index, leg)

            def run(query: str) -> object:
                # What `loom search` runs in process: three legs, fusion, chunks fetched by key.
                counter[0] += 1
                chosen = filters[counter[0] % len(filters)]
                return search(index, query, chosen, limit=LIMIT, legs=legs)

            return run

        searcher_index = tantivy.Index.open(str(base / "lexical"))
        # The index's own analyzer (case and accent folding), which a bare open does not know.
        searcher_index.register_tokenizer(TEXT_ANALYZER, text_analyzer())

        def bare(query: str) -> object:
            searcher = searcher_index.searcher()
            parsed = searcher_index.parse_query(
                re.sub(r"[^\w\s]", " ", query), ["text", "section_path"]
            )
            return searcher.search(parsed, LIMIT, count=False).hits

        # What reading keys instead of stored documents buys, paired query by query: the
        # lexical leg alone and the whole search, keyed and as main read them.
        pairs: dict[str, Callable[[str], object]] = {}
        if args.base:
            scratch = Path(stack.enter_context(tempfile.TemporaryDirectory()))
            pairs[f"hybrid_exact_keys_at_{args.base}"] = base_search(
                base_package(args.base, scratch), base, embedder, filters, args.chunks
            )
        pairs |= {
            "lexical_leg_keys": lambda q: lexical.rank_bm25(q, SearchFilter(), 30),
            "lexical_leg_stored_ids": lambda q: fetching.rank_bm25(q, SearchFilter(), 30),
            "hybrid_exact_keys": hybrid_with(exact),
            "hybrid_exact_stored_ids": hybrid_with(exact, fetching),
            "hybrid_two_stage_keys": hybrid_with(prefixed),
        }
        for name, row in paired(pairs, queries).items():
            result[f"paired_{name}"] = row
            print("paired", name, row, flush=True)
        if args.paired_only:
            result["machine"] = machine()
            print(json.dumps(result, indent=2))
            return
        for name, run in (
            ("bare_tantivy_bm25", bare),
            ("lexical_leg", lambda q: lexical.search(q, limit=DEPTH)),
            ("vector_leg_exact", lambda q: exact.rank(q, SearchFilter(), DEPTH)),
            ("vector_leg_hnsw", lambda q: vectors.rank(q, SearchFilter(), DEPTH)),
            ("query_embedding", lambda q: real.embed([q])),
            ("hybrid_exact", hybrid_with(exact)),
            ("hybrid_hnsw", hybrid_with(vectors)),
            ("hybrid_exact_stored_ids", hybrid_with(exact, fetching)),
            ("vector_leg_two_stage", lambda q: prefixed.rank(q, SearchFilter(), DEPTH)),
            ("hybrid_two_stage", hybrid_with(prefixed)),
            ("hybrid_hnsw_stored_ids", hybrid_with(vectors, fetching)),
        ):
            if "hnsw" in name and args.no_hnsw:
                continue
            result[name] = timed(run, queries)
            print(name, result[name], flush=True)
        for name, run in (
            ("hybrid_exact", hybrid_with(exact)),
            ("hybrid_hnsw", hybrid_with(vectors)),
            ("hybrid_hnsw_stored_ids", hybrid_with(vectors, fetching)),
            ("hybrid_two_stage", hybrid_with(prefixed)),
            ("bare_tantivy_bm25", bare),
        ):
            if "hnsw" in name and args.no_hnsw:
                continue
            result[f"{name}_qps_4_clients"] = throughput(run, queries, 4, args.seconds)
            print(name, "q/s with 4 clients", result[f"{name}_qps_4_clients"], flush=True)

        # Recall of the HNSW leg against exact search at each width, over the same random
        # queries (words from anywhere: every chunk about as near as the next, the hard case
        # for a graph) and over topical ones (four words of one chunk, as a question about a
        # passage is), reported apart.
        picker = random.Random(9)
        documents = args.chunks // CHUNKS_PER_DOCUMENT
        sampled = [
            f"doc{picker.randrange(documents):07d}@r1#{picker.randrange(CHUNKS_PER_DOCUMENT)}"
            for _ in range(100)
        ]
        topical = [
            " ".join(picker.sample(chunk.text.split(), k=4))
            for chunk in lexical.fetch(sampled).values()
        ]
        kinds = {"random": queries[:100], "topical": topical}
        truths = {
            kind: [{h.chunk_id for h in exact.rank(q, SearchFilter(), LIMIT)} for q in asked]
            for kind, asked in kinds.items()
        }
        for kind, asked in kinds.items():
            overlap = []
            for query, truth in zip(asked, truths[kind], strict=True):
                got = {h.chunk_id for h in prefixed.rank(query, SearchFilter(), LIMIT)}
                overlap.append(len(truth & got) / max(len(truth), 1))
            result[f"two_stage_recall_at_10_{kind}"] = round(statistics.mean(overlap), 3)
        print("two stage", result["two_stage_recall_at_10_random"], flush=True)
        for width in () if args.no_hnsw else widths:
            leg = VectorIndex(base / "vectors", embedder, hnsw_threshold=0, hnsw_expansion=width)
            for kind, asked in kinds.items():
                overlap = []
                for query, truth in zip(asked, truths[kind], strict=True):
                    got = {h.chunk_id for h in leg.rank(query, SearchFilter(), LIMIT)}
                    overlap.append(len(truth & got) / max(len(truth), 1))
                result[f"hnsw_ef{width}_recall_at_10_{kind}"] = round(statistics.mean(overlap), 3)
            result[f"vector_leg_hnsw_ef{width}"] = timed(
                lambda q, leg=leg: leg.rank(q, SearchFilter(), DEPTH), queries
            )
            print(
                f"ef {width}", {k: v for k, v in result.items() if f"ef{width}_" in k}, flush=True
            )

    result["machine"] = machine()
    out = args.out or HERE / "results" / f"search_latency_{args.chunks}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
