"""Retrieval quality on labelled natural-language questions over documents nobody here wrote.

The documents of ../shared/corpus named in bench/retrieval/questions.json are ingested through
the real pipeline (the reference extractor service, the object store, the DuckDB catalog, the
lexical and vector indexes); each question is asked of BM25 alone, the vector leg and their
fusion. A hit counts when it comes from the question's source and its passage (or the headings
it sits under) holds the answering sentence. Printed per slice (the source's kind) and overall:
found-first (the first hit answers), hit@5 and MRR (over the first 10).

    .venv/bin/python bench/retrieval.py                       # the default embedder
    .venv/bin/python bench/retrieval.py --embedder ngram      # the seed's n-gram embedder
    .venv/bin/python bench/retrieval.py --dump chunks.txt     # the chunks, to write questions from

The remedies measured (README "Speed"): --passage-chars N, --center, --no-context, --dimension N
and --grid (RRF k and leg weights over BM25 and the vector leg). The `fusion` row is what
`loom search` runs: the exact, lexical and vector legs fused by loom_dagster/search/fusion.py.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shutil
import tempfile
import time
import warnings
from collections import defaultdict
from collections.abc import Callable, Sequence
from pathlib import Path

from loom_dagster.search.fusion import RRF_K  # what `loom search` runs

HERE = Path(__file__).resolve().parent
CORPUS = HERE.parent.parent / "shared" / "corpus" / "inputs"
QUESTIONS = HERE / "retrieval" / "questions.json"
DEPTH = 10
PASSAGE_CHARS = 0  # loom_dagster.search.vector.PASSAGE_CHARS


def normalise(text: str) -> str:
    return re.sub(r"\s+", " ", text.replace("\u00ad", "")).strip().casefold()


def answers(passage: str, sentence: str) -> bool:
    """The passage holds the sentence, or (cut by a window boundary) a whole half of it."""
    passage, sentence = normalise(passage), normalise(sentence)
    if sentence in passage:
        return True
    half = len(sentence) // 2
    return half >= 30 and (sentence[:half] in passage or sentence[half:] in passage)


def ingest(
    folder: Path,
    embedder: str,
    passage_chars: int,
    center: bool,
    context: bool,
    dimension: int,
) -> tuple[object, object, dict[str, object]]:
    """Ingest the folder through the pipeline's own steps (as bench/ingest_throughput.py's
    plain loop); returns the lexical index, the vector index and the chunks by id."""
    from loom_dagster import api, catalog, pipeline
    from loom_dagster.extractor.client import ExtractorClient
    from loom_dagster.extractor.settings import ExtractorSettings
    from loom_dagster.objectstore import ObjectStore
    from loom_dagster.resources.storage import CatalogResource
    from loom_dagster.search.lexical import IndexedChunk, LexicalIndex
    from loom_dagster.search.vector import VectorIndex, shared_embedder
    from loom_dagster.settings import LoomSettings

    os.environ["LOOM_EMBEDDER"] = embedder
    settings = LoomSettings.from_env()
    api.prepare_environment(settings)
    source = api.register_source(settings, folder, name="corpus")
    store, index = ObjectStore(settings.object_store_url), LexicalIndex(settings.search_dir)
    chosen = shared_embedder(settings.embedder)
    if dimension:
        from loom_dagster.search.embedding import WordLlamaEmbedder

        chosen = WordLlamaEmbedder(dimension)
    vectors = VectorIndex(
        settings.vectors_dir,
        chosen,
        passage_chars=passage_chars,
        center=center,
        context=context,
        floor=settings.embedder.floor,  # as `loom search` opens it
    )
    client = ExtractorClient(ExtractorSettings.from_env(os.environ))
    chunks: dict[str, object] = {}
    with CatalogResource(database=str(settings.catalog_path)).connect() as con:
        scan = pipeline.sync_source(con, index, source, vectors=vectors)
        for revision in scan.new:
            pipeline.store_original(store, source.root, revision)
            extraction = pipeline.extract(store, client, revision)
            if extraction.refused:
                print(f"refused: {revision.path}: {extraction.code}: {extraction.message}")
                continue
            pipeline.make_chunks(store, extraction, revision)
        pipeline.publish(con, index, store, list(scan.new), vectors=vectors)
        for document, source_name, path, key in catalog.live_documents(con):
            for chunk in pipeline.read_chunks(store, key):
                indexed = IndexedChunk.of(
                    chunk, document_id=document, source=source_name, path=path
                )
                chunks[indexed.chunk_id] = indexed
    client.close()
    return index, vectors, chunks


def rrf(
    rankings: Sequence[Sequence[str]], k: int = RRF_K, weights: Sequence[float] = ()
) -> list[str]:
    # Only for --grid's leg weights, which search/fusion.py does not take: BM25 and vectors.
    scores: dict[str, float] = defaultdict(float)
    for n, ranking in enumerate(rankings):
        weight = weights[n] if weights else 1.0
        for rank, chunk_id in enumerate(ranking):
            scores[chunk_id] += weight / (k + rank + 1)
    return sorted(scores, key=lambda c: -scores[c])


def ids_of(hits: Sequence[object], chunks: dict[str, object]) -> list[str]:
    """The chunk ids of leg or fused hits: the lexical and exact legs answer chunk keys
    (search/legs.py's chunk_key), resolved here against the ingested chunks."""
    from loom_dagster.search.legs import chunk_key

    by_key = {chunk_key(chunk_id): chunk_id for chunk_id in chunks}
    found = [hit.chunk_id or by_key.get(hit.key or 0, "") for hit in hits]  # type: ignore[attr-defined]
    return [chunk_id for chunk_id in found if chunk_id]


def score(
    questions: Sequence[dict[str, str]],
    rank: Callable[[str], list[str]],
    chunks: dict[str, object],
) -> dict[str, dict[str, float]]:
    per_slice: dict[str, list[int | None]] = defaultdict(list)
    for question in questions:
        found = None
        for position, chunk_id in enumerate(rank(question["question"])[:DEPTH]):
            chunk = chunks[chunk_id]
            passage = " ".join([*chunk.section_path, chunk.text])  # type: ignore[attr-defined]
            if chunk.path == question["source"] and answers(passage, question["answer"]):  # type: ignore[attr-defined]
                found = position
                break
        per_slice[question["slice"]].append(found)
        per_slice["all"].append(found)
    return {
        name: {
            "questions": len(found),
            "found_first": round(sum(f == 0 for f in found) / len(found), 3),
            "hit_at_5": round(sum(f is not None and f < 5 for f in found) / len(found), 3),
            "mrr": round(sum(1 / (f + 1) for f in found if f is not None) / len(found), 3),
        }
        for name, found in per_slice.items()
    }


# Queries of words no document of the set holds (checked: BM25 finds nothing for any of them):
# whatever the vector leg ranks first for them is not an answer.
OFF_TOPIC = (
    "zebra xylophone quasar",
    "banana smoothie blender",
    "gluon chromodynamics lattice",
    "volcanic lava eruption magma",
    "knitting yarn crochet",
    "saxophone jazz improvisation",
    "pancake syrup breakfast",
    "hockey puck goalie",
    "tarot astrology horoscope",
    "glacier penguin iceberg",
    "skateboard ollie kickflip",
    "origami crane folding",
)


def floor_report(
    questions: Sequence[dict[str, str]], index: object, vectors: object, chunks: dict[str, object]
) -> None:
    """The cosines a floor is chosen between: each question's answering chunk where the vector
    leg ranks it in its top 10, beside the best cosine of each off-topic query."""
    from loom_dagster.search.legs import SearchFilter

    answered: list[float] = []
    alone: list[float] = []  # answers BM25 does not rank in its top 50: only the vector leg's
    for question in questions:
        hits = vectors.rank(question["question"], SearchFilter(), DEPTH)  # type: ignore[attr-defined]
        lexical = {h.chunk.chunk_id for h in index.search(question["question"], limit=50)}  # type: ignore[attr-defined]
        for hit in hits:
            chunk = chunks[hit.chunk_id]
            passage = " ".join([*chunk.section_path, chunk.text])  # type: ignore[attr-defined]
            if chunk.path == question["source"] and answers(passage, question["answer"]):  # type: ignore[attr-defined]
                answered.append(hit.score)
                if hit.chunk_id not in lexical:
                    alone.append(hit.score)
                break
    off: list[float] = []
    for query in OFF_TOPIC:
        if index.search(query, limit=1):  # type: ignore[attr-defined]
            print(f"off-topic query {query!r} has a lexical hit: not counted")
            continue
        top = vectors.rank(query, SearchFilter(), 1)  # type: ignore[attr-defined]
        if top:
            off.append(top[0].score)
    answered.sort()
    alone.sort()
    off.sort()
    print(
        f"answers in the vector top 10: {len(answered)}; lowest cosines {[round(x, 3) for x in answered[:5]]}"
    )
    print(f"of them not in BM25's top 50: {len(alone)}; cosines {[round(x, 3) for x in alone]}")
    print(f"off-topic queries' best cosines: {[round(x, 3) for x in off]}")


def holdout(
    questions: Sequence[dict[str, str]],
    index: object,
    vectors: object,
    chunks: dict[str, object],
    reference: dict[str, float],
) -> None:
    """A remedy chosen without looking at the questions it is judged on: fusion's k picked by
    found-first (then MRR) on one half of the questions, then scored on the other half; both
    ways round (even-numbered choose, odd-numbered judge, and the reverse)."""
    from loom_dagster.search.fusion import rank_all
    from loom_dagster.search.legs import SearchFilter
    from loom_dagster.search.service import default_legs

    legs = default_legs(index, vectors)  # type: ignore[arg-type]

    def fused(k: int) -> Callable[[str], list[str]]:
        return lambda q: ids_of(rank_all(legs, q, SearchFilter(), DEPTH * 5, k=k), chunks)

    halves = {"even": list(questions[0::2]), "odd": list(questions[1::2])}
    table = {
        (k, half): score(asked, fused(k), chunks)["all"]
        for k in (2, 5, 10, 20, 40, 60, 100)
        for half, asked in halves.items()
    }
    for (k, half), row in sorted(table.items()):
        print(f"holdout k={k:3d} {half:4} half: {row}")
    for choose, judge in (("even", "odd"), ("odd", "even")):
        best = max(
            (k for k, half in table if half == choose),
            key=lambda k: (table[k, choose]["found_first"], table[k, choose]["mrr"]),
        )
        print(
            f"chosen on the {choose} half: k={best}; judged on the {judge} half: found-first "
            f"{table[best, judge]['found_first']:.3f} (MRR {table[best, judge]['mrr']:.3f}) against "
            f"{table[60, judge]['found_first']:.3f} ({table[60, judge]['mrr']:.3f}) at k=60"
        )
    print(f"all questions, k as loom search runs it ({RRF_K}): {reference['found_first']:.2f}")

    # The same, for a section-title boost in the lexical leg (k as `loom search` runs it).
    from loom_dagster.search import lexical

    kept = lexical.SECTION_BOOST
    boosts: dict[tuple[float, str], dict[str, float]] = {}
    try:
        for boost in (0.5, 1.0, 2.0, 3.0):
            lexical.SECTION_BOOST = boost
            for half, asked in halves.items():
                boosts[boost, half] = score(asked, fused(RRF_K), chunks)["all"]
                print(f"holdout section boost {boost} {half:4} half: {boosts[boost, half]}")
    finally:
        lexical.SECTION_BOOST = kept
    for choose, judge in (("even", "odd"), ("odd", "even")):
        best_boost = max(
            (b for b, half in boosts if half == choose),
            key=lambda b: (boosts[b, choose]["found_first"], boosts[b, choose]["mrr"], b == kept),
        )
        print(
            f"section boost chosen on the {choose} half: {best_boost}; judged on the {judge} "
            f"half: {boosts[best_boost, judge]['found_first']:.3f} against "
            f"{boosts[kept, judge]['found_first']:.3f} at {kept}"
        )


def query_modes(
    questions: Sequence[dict[str, str]],
    index: object,
    vectors: object,
    chunks: dict[str, object],
) -> None:
    """How the vector leg embeds a query (the chunks' vectors unchanged): whole, function words
    dropped, each word weighted by its inverse document frequency over the live chunks, or
    both; chosen on one half of the questions by fused found-first (then MRR), judged on the
    other half, both ways round, beside the vector leg alone."""
    from loom_dagster.search.fusion import rank_all
    from loom_dagster.search.legs import SearchFilter
    from loom_dagster.search.service import default_legs

    legs = default_legs(index, vectors)  # type: ignore[arg-type]
    modes = {
        "whole": (None, False),
        "stop-words": (None, True),
        "idf": (index.term_weights, False),  # type: ignore[attr-defined]
        "idf+stop-words": (index.term_weights, True),  # type: ignore[attr-defined]
    }
    kept = (vectors.term_weights, vectors.stop_words)  # type: ignore[attr-defined]
    halves = {"even": list(questions[0::2]), "odd": list(questions[1::2])}
    table: dict[tuple[str, str], dict[str, float]] = {}
    try:
        for mode, (weights, stop) in modes.items():
            vectors.term_weights, vectors.stop_words = weights, stop  # type: ignore[attr-defined]
            for half, asked in (("all", list(questions)), *halves.items()):
                table[mode, half] = score(
                    asked,
                    lambda q: ids_of(rank_all(legs, q, SearchFilter(), DEPTH * 5), chunks),
                    chunks,
                )["all"]
                if half == "all":
                    alone = score(
                        asked,
                        lambda q: [
                            h.chunk_id
                            for h in vectors.rank(q, SearchFilter(), DEPTH * 5)  # type: ignore[attr-defined]
                        ],
                        chunks,
                    )["all"]
                    print(f"query mode {mode:15} vector leg alone, all: {alone}")
                print(f"query mode {mode:15} fusion {half:4}: {table[mode, half]}")
    finally:
        vectors.term_weights, vectors.stop_words = kept  # type: ignore[attr-defined]
    for choose, judge in (("even", "odd"), ("odd", "even")):
        best = max(
            modes,
            key=lambda m: (table[m, choose]["found_first"], table[m, choose]["mrr"], m == "whole"),
        )
        print(
            f"query mode chosen on the {choose} half: {best}; judged on the {judge} half: "
            f"{table[best, judge]['found_first']:.3f} against {table['whole', judge]['found_first']:.3f} whole"
        )


def token_weightings(
    questions: Sequence[dict[str, str]],
    index: object,
    chunks: dict[str, object],
    scratch: Path,
    floor: float,
) -> None:
    """Chunk and query vectors pooled with a weight per token (the chunks embedded again into a
    scratch vector index per weighting): none; Zipf (log of the token's rank in the model's
    vocabulary, a corpus-free frequency proxy); IDF and SIF (a / (a + p)) over the tokens of
    the live chunks. Chosen on one half of the questions by fused found-first (then MRR),
    judged on the other, both ways round."""
    import numpy as np

    from loom_dagster.search.embedding import WordLlamaEmbedder
    from loom_dagster.search.fusion import rank_all
    from loom_dagster.search.legs import SearchFilter
    from loom_dagster.search.service import default_legs
    from loom_dagster.search.vector import VectorIndex, _embedded

    plain = WordLlamaEmbedder()
    texts = [_embedded(c, c.text, True) for c in chunks.values()]  # type: ignore[arg-type]
    vocabulary = 32000
    df = np.zeros(vocabulary, dtype=np.float64)
    counts = np.zeros(vocabulary, dtype=np.float64)
    for ids in plain.token_ids(texts):
        np.add.at(counts, ids, 1)
        df[np.unique(ids)] += 1
    total = len(texts)
    share = counts / max(counts.sum(), 1)
    weightings = {
        "none": None,
        "zipf": np.log1p(np.arange(vocabulary, dtype=np.float64)),
        "idf": np.log((total + 1) / (df + 1)) + 1.0,
        "sif": 1e-3 / (1e-3 + share),
    }
    documents: dict[str, list[object]] = defaultdict(list)
    for chunk in chunks.values():
        documents[chunk.document_id].append(chunk)  # type: ignore[attr-defined]
    halves = {"all": list(questions), "even": list(questions[0::2]), "odd": list(questions[1::2])}
    table: dict[tuple[str, str], dict[str, float]] = {}
    for name, weights in weightings.items():
        embedder = WordLlamaEmbedder(
            token_weights=None if weights is None else weights.astype(np.float32),
            weighting="" if weights is None else name,
        )
        vectors = VectorIndex(scratch / f"vectors-{name}", embedder, floor=floor)
        vectors.publish_many(documents)  # type: ignore[arg-type]
        legs = default_legs(index, vectors)  # type: ignore[arg-type]
        for half, asked in halves.items():
            table[name, half] = score(
                asked,
                lambda q, legs=legs: ids_of(rank_all(legs, q, SearchFilter(), DEPTH * 5), chunks),
                chunks,
            )["all"]
            print(f"token weights {name:5} fusion {half:4}: {table[name, half]}")
        alone = score(
            questions,
            lambda q, vectors=vectors: [
                h.chunk_id for h in vectors.rank(q, SearchFilter(), DEPTH * 5)
            ],
            chunks,
        )["all"]
        print(f"token weights {name:5} vector leg alone: {alone}")
    for choose, judge in (("even", "odd"), ("odd", "even")):
        best = max(
            weightings,
            key=lambda m: (table[m, choose]["found_first"], table[m, choose]["mrr"], m == "none"),
        )
        print(
            f"token weights chosen on the {choose} half: {best}; judged on the {judge} half: "
            f"{table[best, judge]['found_first']:.3f} against {table['none', judge]['found_first']:.3f} none"
        )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--embedder", default="wordllama")
    parser.add_argument("--questions", type=Path, default=QUESTIONS)
    parser.add_argument("--passage-chars", type=int, default=PASSAGE_CHARS)
    parser.add_argument("--rrf-k", type=int, default=RRF_K)
    parser.add_argument("--center", action="store_true", help="remove the vectors' mean")
    parser.add_argument("--grid", action="store_true", help="fusion over k and leg weights")
    parser.add_argument("--dimension", type=int, default=0, help="wordllama's first N dimensions")
    parser.add_argument("--no-context", action="store_true", help="embed chunk text alone")
    parser.add_argument("--dump", type=Path)
    parser.add_argument("--misses", action="store_true", help="print the questions fusion misses")
    parser.add_argument(
        "--floors",
        action="store_true",
        help="the vector leg's cosines of answers and of queries no document's words match",
    )
    parser.add_argument("--floor", type=float, help="the vector-only floor (default: the spec's)")
    parser.add_argument(
        "--holdout",
        action="store_true",
        help="choose fusion's k on the even-numbered questions, report it on the odd ones",
    )
    parser.add_argument(
        "--query-modes",
        action="store_true",
        help="the vector leg's query embedding: whole, without function words, IDF-weighted",
    )
    parser.add_argument(
        "--token-weights",
        action="store_true",
        help="chunks and queries pooled with token weights: none, Zipf, IDF, SIF",
    )
    parser.add_argument("--out", type=Path, default=HERE / "results" / "retrieval.json")
    args = parser.parse_args()
    warnings.filterwarnings("ignore")
    spec = json.loads(args.questions.read_text())
    questions = spec["questions"]

    from loom_dagster.extractor.local import reference_extractor
    from loom_dagster.extractor.settings import ENV_TOKEN, ENV_URL
    from loom_dagster.search.exact import ExactLeg
    from loom_dagster.search.fusion import rank_all
    from loom_dagster.search.legs import SearchFilter
    from loom_dagster.search.service import default_legs

    with tempfile.TemporaryDirectory() as scratch, reference_extractor() as service:
        base = Path(scratch)
        os.environ[ENV_URL], os.environ[ENV_TOKEN] = service.url, service.token
        os.environ["LOOM_HOME"] = str(base / "home")
        os.environ["DAGSTER_HOME"] = str(base / "home" / "dagster")
        folder = base / "corpus"
        for name in spec["documents"]:
            target = folder / name
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(CORPUS / name, target)
        started = time.perf_counter()
        index, vectors, chunks = ingest(
            folder,
            args.embedder,
            args.passage_chars,
            args.center,
            not args.no_context,
            args.dimension,
        )
        ingest_s = time.perf_counter() - started

        if args.dump:
            with open(args.dump, "w") as out:
                for chunk in chunks.values():
                    out.write(
                        f"=== {chunk.path} {chunk.chunk_id} {' > '.join(chunk.section_path)}\n{chunk.text}\n"
                    )  # type: ignore[attr-defined]

        def bm25(query: str) -> list[str]:
            return [hit.chunk.chunk_id for hit in index.search(query, limit=DEPTH * 5)]  # type: ignore[attr-defined]

        def vector(query: str) -> list[str]:
            return [hit.chunk_id for hit in vectors.rank(query, SearchFilter(), DEPTH * 5)]  # type: ignore[attr-defined]

        def exact(query: str) -> list[str]:
            return ids_of(ExactLeg(index).rank(query, SearchFilter(), DEPTH * 5), chunks)  # type: ignore[arg-type]

        if args.floor is not None:
            vectors.floor = args.floor  # type: ignore[attr-defined]

        def fusion(query: str) -> list[str]:
            # What `loom search` runs: the exact, lexical and vector legs fused by search/fusion.py.
            legs = default_legs(index, vectors)  # type: ignore[arg-type]
            return ids_of(rank_all(legs, query, SearchFilter(), DEPTH * 5, k=args.rrf_k), chunks)

        legs = {"bm25": bm25, "exact": exact, "vector": vector, "fusion": fusion}
        if args.grid:
            memo: dict[str, tuple[list[str], list[str]]] = {}

            def both(query: str) -> tuple[list[str], list[str]]:
                if query not in memo:
                    memo[query] = (bm25(query), vector(query))
                return memo[query]

            for k in (5, 10, 20, 60):
                for weight in (1.0, 1.5, 2.0):
                    row = score(
                        questions,
                        lambda q, k=k, w=weight: rrf(both(q), k, (1.0, w)),
                        chunks,
                    )["all"]
                    print(f"grid k={k} vector weight={weight}: {row}")
        results = {name: score(questions, leg, chunks) for name, leg in legs.items()}
        report = {
            "embedder": args.embedder,
            "passage_chars": args.passage_chars,
            "rrf_k": args.rrf_k,
            "model": vectors.embedder.model,  # type: ignore[attr-defined]
            "documents": len(spec["documents"]),
            "chunks": len(chunks),
            "questions": len(questions),
            "ingest_s": round(ingest_s, 1),
            "legs": results,
            "machine": f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}",
        }
        print(f"{len(questions)} questions, {len(chunks)} chunks, embedder {report['model']}")
        print(f"{'leg':8} {'slice':8} {'n':>3} {'found-first':>11} {'hit@5':>6} {'MRR':>6}")
        for name, slices in results.items():
            for slice_name, row in sorted(slices.items()):
                print(
                    f"{name:8} {slice_name:8} {row['questions']:3d} {row['found_first']:11.2f} "
                    f"{row['hit_at_5']:6.2f} {row['mrr']:6.2f}"
                )
        if args.floors:
            floor_report(questions, index, vectors, chunks)
        if args.holdout:
            holdout(questions, index, vectors, chunks, results["fusion"]["all"])
        if args.query_modes:
            query_modes(questions, index, vectors, chunks)
        if args.token_weights:
            token_weightings(questions, index, chunks, base, vectors.floor)  # type: ignore[attr-defined]
        if args.misses:
            for question in questions:
                top = fusion(question["question"])[:1]
                chunk = chunks[top[0]] if top else None
                ok = (
                    chunk is not None
                    and chunk.path == question["source"]
                    and answers(  # type: ignore[attr-defined]
                        " ".join([*chunk.section_path, chunk.text]),
                        question["answer"],  # type: ignore[attr-defined]
                    )
                )
                if not ok:
                    print(
                        f"MISS {question['question']!r} -> {chunk.path if chunk else None}: "  # type: ignore[attr-defined]
                        f"{(chunk.text[:100] if chunk else '')!r}"
                    )  # type: ignore[attr-defined]
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n")


if __name__ == "__main__":
    main()
