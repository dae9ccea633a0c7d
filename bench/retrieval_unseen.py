"""Retrieval on documents nobody here tuned to: issue 35's labelled questions, split once into a
tuning half (remedies are chosen on it) and a judging half (they are reported on it).

The documents of bench/retrieval/unseen/docs (public files of many kinds; sources.json names each
one's repository, commit and licence) are ingested through the real pipeline by
bench/retrieval.py's `ingest`; each question of bench/retrieval/unseen/questions.json is asked of
BM25 alone and of the fusion `loom search` runs (exact, lexical and vector legs), with the
question's filter when it has one. Per half, per slice and overall it prints: n, the right
document first, the right passage first (found-first: the first hit is from the document and its
passage or headings hold the answer's words), hit@5, MRR over the first 10, and the share of
questions whose first hit's locator names the expected page, slide, lines, key path or sheet row
(over the questions that name one).

    .venv/bin/python bench/retrieval_unseen.py                    # both halves
    .venv/bin/python bench/retrieval_unseen.py --half tuning      # choose remedies on this one
    .venv/bin/python bench/retrieval_unseen.py --json-out r.json  # the figures, and per question
    .venv/bin/python bench/retrieval_unseen.py --dump chunks.txt  # the chunks with locators
    .venv/bin/python bench/retrieval_unseen.py --split            # halves for new questions only
    .venv/bin/python bench/retrieval_unseen.py --docs bench/retrieval/unseen2/docs \
        --questions bench/retrieval/unseen2/questions.json --half tuning   # another set

`--docs` names the folder the questions' documents are resolved against (default docs/ here);
bench/retrieval/unseen2 is a second tuning set on other documents.

The split is written into questions.json (`half`) and never redrawn: `--split` gives a half only
to questions that have none, balancing each stratum (slice and language) by a fixed seed.
"""

from __future__ import annotations

import argparse
import hashlib
import html
import json
import os
import platform
import re
import shutil
import sys
import tempfile
import time
import warnings
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.retrieval import DEPTH, answers, ids_of, ingest, normalise  # noqa: E402

UNSEEN = ROOT / "bench" / "retrieval" / "unseen"
DOCS = UNSEEN / "docs"
QUESTIONS = UNSEEN / "questions.json"
SLICES = ("exact", "table", "filtered", "natural")
HALVES = ("tuning", "judging")
SEED = "loom-issue-35"
# A question's filter: the names `loom search` takes (--format, --block-type, --path).
FILTER_KEYS = ("format", "block_type", "path")


def stratum(question: Mapping[str, object]) -> tuple[str, str]:
    return str(question["slice"]), str(question.get("language", "en"))


def split(questions: list[dict[str, object]]) -> int:
    """Gives a half to each question without one; returns how many. Within a stratum the new
    questions are ordered by a hash of the seed and their id, and each goes to the half that
    has fewer of the stratum so far (tuning on a tie): deterministic, balanced, and the halves
    already written never move."""
    counts: dict[tuple[str, str], dict[str, int]] = defaultdict(lambda: dict.fromkeys(HALVES, 0))
    for question in questions:
        if question.get("half") in HALVES:
            counts[stratum(question)][str(question["half"])] += 1
    new = [q for q in questions if q.get("half") not in HALVES]
    new.sort(key=lambda q: (stratum(q), hashlib.sha256(f"{SEED}:{q['id']}".encode()).hexdigest()))
    for question in new:
        have = counts[stratum(question)]
        half = min(HALVES, key=lambda h: (have[h], HALVES.index(h)))
        question["half"] = half
        have[half] += 1
    return len(new)


def locator_names(expected: Mapping[str, object], got: Mapping[str, object]) -> bool:
    """The hit's locator names the expected place: the page, slide or line inside its range,
    the key path equal (or one holding the other), the sheet equal and the row inside its
    range."""
    if not expected:
        return False

    def within(value: object, start: str, end: str) -> bool:
        if start not in got:
            return False
        low, high = got[start], got.get(end, got[start])
        return low <= value <= high  # type: ignore[operator]

    for name in expected:
        value = expected[name]
        if name == "page" and not within(value, "page_start", "page_end"):
            return False
        if name == "line" and not within(value, "line_start", "line_end"):
            return False
        if name == "row" and not within(value, "row_start", "row_end"):
            return False
        if name == "slide" and got.get("slide") != value:
            return False
        if name == "sheet" and got.get("sheet") != value:
            return False
        if name == "key_path":
            have = str(got.get("key_path", ""))
            want = str(value)
            if not have or not (
                have == want or want.startswith(have + ".") or have.startswith(want + ".")
            ):
                return False
    return True


# Inline elements run into the words around them ("<b>Vision</b>s"); any other tag parts words.
_INLINE_TAG = re.compile(
    r"</?(?:a|abbr|b|bdi|bdo|cite|code|data|dfn|em|i|kbd|mark|q|s|samp|small|span|strong|sub|"
    r"sup|time|u|var|wbr)(?:\s[^>]*)?/?>",
    re.IGNORECASE,
)
_TAG = re.compile(r"<[^>]*>")


def cited_text(source: str, got: Mapping[str, object], document: str) -> str:
    """The source lines a line locator cites, as text a reader sees: an HTML page's tags taken
    out and its entities read; "" when the locator names no lines."""
    start, end = got.get("line_start"), got.get("line_end")
    if not isinstance(start, int) or not isinstance(end, int):
        return ""
    text = "\n".join(source.split("\n")[start - 1 : end])
    if document.endswith((".html", ".htm")):
        text = html.unescape(_TAG.sub(" ", _INLINE_TAG.sub("", text)))
    return text


def names_the_answer(
    question: Mapping[str, object],
    got: Mapping[str, object],
    source: str,
    key_lines: Mapping[str, tuple[int, int]],
) -> bool:
    """The first hit's locator names a place of the answer: the labelled place
    (`locator_names`), or, where the label names one place of several, another the source shows.

    - A labelled line: the lines the hit cites hold the answer in the source. An answer a page
      says twice (its meta description or JSON-LD in the head, which no passage holds, and its
      body) is named by the body's lines as well as by the head's.
    - A labelled key path: the hit names no key path and its lines hold the key's. A passage that
      packs a TOML table with its keys cites their lines, not a key path: seed 000 keeps a merged
      locator's key_path only when every block names the same one.
    """
    expected = question.get("locator") or {}
    assert isinstance(expected, dict)
    if locator_names(expected, got):
        return True
    document = str(question["document"])
    if set(expected) == {"line"}:
        return holds(cited_text(source, got, document), question["answer"], document)
    if set(expected) == {"key_path"} and "key_path" not in got and "line_start" in got:
        lines = key_lines.get(str(expected["key_path"]))
        low, high = got["line_start"], got.get("line_end", got["line_start"])
        return lines is not None and low <= lines[0] and lines[1] <= high  # type: ignore[operator]
    return False


def read_sources(chunks: Mapping[str, object], docs: Path = DOCS) -> dict[str, Source]:
    """Each ingested document's text (its original under `docs`) and, for TOML, its key paths'
    lines, read from the artifact the pipeline stored (the home LOOM_HOME names)."""
    from loom_dagster.contract.validate import parse_artifact
    from loom_dagster.objectstore import ObjectStore
    from loom_dagster.pipeline import read_extraction
    from loom_dagster.settings import LoomSettings

    store = ObjectStore(LoomSettings.from_env().object_store_url)
    revisions = {chunk.path: chunk.chunk.revision for chunk in chunks.values()}  # type: ignore[attr-defined]
    sources: dict[str, Source] = {}
    for path, revision in revisions.items():
        original = docs / path
        key_lines: dict[str, tuple[int, int]] = {}
        extraction = read_extraction(store, revision) if path.endswith(".toml") else None
        if extraction is not None and extraction.artifact_sha256 and extraction.format:
            artifact = parse_artifact(
                store.get_artifact_bytes(extraction.artifact_sha256),
                expected_format=extraction.format,
                original_size=original.stat().st_size,
            )
            for block in artifact.blocks:
                locator = block.locator
                if locator.key_path and locator.line_start and locator.line_end:
                    key_lines[locator.key_path] = (locator.line_start, locator.line_end)
        sources[path] = Source(original.read_text(errors="replace"), key_lines)
    return sources


def search_filter(question: Mapping[str, object]) -> object:
    from loom_dagster.search.legs import SearchFilter

    wanted = question.get("filter") or {}
    assert isinstance(wanted, dict)
    return SearchFilter(
        formats=tuple(wanted.get("format", "").split(",")) if wanted.get("format") else (),
        block_types=(
            tuple(wanted.get("block_type", "").split(",")) if wanted.get("block_type") else ()
        ),
        path_prefix=wanted.get("path", ""),
    )


def holds(passage: str, answer: object, document: str = "") -> bool:
    """The passage holds the answer's words: a sentence (or, cut by a window boundary, a whole
    half of it; bench/retrieval.py's rule), or for a row every one of its listed cells.

    A Markdown answer is compared without its code spans' backticks: answers were copied from
    the source (`configuration.nix`), and the reader keeps a code span's words, not its markup."""
    if document.endswith(".md"):
        passage, answer = unmarked(passage), unmarked(answer)
    if isinstance(answer, list):
        return all(normalise(str(cell)) in normalise(passage) for cell in answer)
    return answers(passage, str(answer))


def unmarked(text: object) -> object:
    """The text without inline code's backticks (a list: each cell so)."""
    if isinstance(text, list):
        return [str(cell).replace("`", "") for cell in text]
    return str(text).replace("`", "")


@dataclass(frozen=True)
class Source:
    """What the scorer reads of a document besides its chunks: its text (a line locator is
    checked against it) and, for TOML, each key path's lines in its artifact."""

    text: str = ""
    key_lines: Mapping[str, tuple[int, int]] = field(default_factory=dict)


def judge(
    question: Mapping[str, object],
    ranked: Sequence[str],
    chunks: Mapping[str, object],
    source: Source | None = None,
) -> dict[str, object]:
    """One question's outcome for one ranking: where the answer is, and what the first hit is.
    `locator_first` is `names_the_answer`; `locator_label` the labelled place alone, the rule
    before 2026-12-07 06:30 UTC."""
    from loom_dagster.chunking import locator_json

    found = None
    for position, chunk_id in enumerate(ranked[:DEPTH]):
        chunk = chunks[chunk_id]
        passage = " ".join([*chunk.section_path, chunk.text])  # type: ignore[attr-defined]
        if chunk.path == question["document"] and holds(
            passage, question["answer"], str(question["document"])
        ):  # type: ignore[attr-defined]
            found = position
            break
    first = chunks[ranked[0]] if ranked else None
    source = source or Source()
    expected = question.get("locator") or {}
    assert isinstance(expected, dict)
    got = json.loads(locator_json(first.chunk.locator)) if first is not None else {}  # type: ignore[attr-defined]
    return {
        "found": found,
        "document_first": first is not None and first.path == question["document"],  # type: ignore[attr-defined]
        "locator_named": bool(expected),
        "locator_first": (
            bool(expected)
            and first is not None
            and first.path == question["document"]  # type: ignore[attr-defined]
            and names_the_answer(question, got, source.text, source.key_lines)
        ),
        "locator_label": (
            bool(expected)
            and first is not None
            and first.path == question["document"]  # type: ignore[attr-defined]
            and locator_names(expected, got)
        ),
        "first": f"{first.path} {json.dumps(got, ensure_ascii=False)}" if first is not None else "",  # type: ignore[attr-defined]
    }


def summarise(outcomes: Sequence[dict[str, object]]) -> dict[str, float]:
    n = len(outcomes)
    found = [o["found"] for o in outcomes]
    named = [o for o in outcomes if o["locator_named"]]
    return {
        "n": n,
        "document_first": round(sum(bool(o["document_first"]) for o in outcomes) / n, 3),
        "found_first": round(sum(f == 0 for f in found) / n, 3),
        "hit_at_5": round(sum(f is not None and f < 5 for f in found) / n, 3),  # type: ignore[operator]
        "mrr": round(sum(1 / (f + 1) for f in found if f is not None) / n, 3),  # type: ignore[operator]
        "locator_n": len(named),
        "locator_first": (
            round(sum(bool(o["locator_first"]) for o in named) / len(named), 3) if named else 0.0
        ),
        "locator_label": (
            round(sum(bool(o.get("locator_label")) for o in named) / len(named), 3)
            if named
            else 0.0
        ),
    }


def report(
    questions: Sequence[dict[str, object]],
    outcomes: Mapping[str, Sequence[dict[str, object]]],
    halves: Sequence[str],
) -> dict[str, dict[str, dict[str, dict[str, float]]]]:
    """leg -> half -> slice (and `all`, and `natural-de` etc. per language) -> figures."""
    table: dict[str, dict[str, dict[str, dict[str, float]]]] = {}
    for leg, per_question in outcomes.items():
        table[leg] = {}
        for half in halves:
            groups: dict[str, list[dict[str, object]]] = defaultdict(list)
            for question, outcome in zip(questions, per_question, strict=True):
                if half != "both" and question["half"] != half:
                    continue
                groups[str(question["slice"])].append(outcome)
                groups["all"].append(outcome)
                if question.get("language", "en") != "en":
                    groups[f"{question['slice']}-{question['language']}"].append(outcome)
            table[leg][half] = {name: summarise(rows) for name, rows in sorted(groups.items())}
    return table


def print_table(table: Mapping[str, Mapping[str, Mapping[str, Mapping[str, float]]]]) -> None:
    print(
        f"{'leg':7} {'half':8} {'slice':12} {'n':>4} {'doc-1st':>7} {'found-1st':>9} "
        f"{'hit@5':>6} {'MRR':>5} {'locator-1st':>11} {'label-only':>10}"
    )
    for leg, halves in table.items():
        for half, slices in halves.items():
            order = [s for s in (*SLICES, "all") if s in slices] + [
                s for s in slices if s not in (*SLICES, "all")
            ]
            for name in order:
                row = slices[name]
                locator = (
                    f"{row['locator_first']:.2f} ({row['locator_n']})" if row["locator_n"] else "-"
                )
                label = f"{row['locator_label']:.2f}" if row["locator_n"] else "-"
                print(
                    f"{leg:7} {half:8} {name:12} {row['n']:4d} {row['document_first']:7.2f} "
                    f"{row['found_first']:9.2f} {row['hit_at_5']:6.2f} {row['mrr']:5.2f} "
                    f"{locator:>11} {label:>10}"
                )


def machine() -> str:
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    return (
        f"{platform.machine()}, {os.cpu_count()} cores (nproc), load {load}, "
        f"Python {platform.python_version()}"
    )


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    parser.add_argument(
        "--docs", type=Path, default=DOCS, help="the folder the questions' documents are under"
    )
    parser.add_argument("--half", choices=("tuning", "judging", "both"), default="both")
    parser.add_argument("--embedder", default="wordllama")
    parser.add_argument("--questions", type=Path, default=QUESTIONS)
    parser.add_argument("--json-out", type=Path)
    parser.add_argument("--dump", type=Path, help="write the chunks with their locators")
    parser.add_argument("--misses", action="store_true", help="print the questions fusion misses")
    parser.add_argument("--split", action="store_true", help="give new questions a half, then stop")
    return parser.parse_args(argv)


def main() -> None:
    args = parse_args()
    spec = json.loads(args.questions.read_text())
    questions: list[dict[str, object]] = spec["questions"]
    if args.split:
        made = split(questions)
        args.questions.write_text(json.dumps(spec, indent=1, ensure_ascii=False) + "\n")
        print(f"{made} questions given a half")
        return
    unsplit = [q["id"] for q in questions if q.get("half") not in HALVES]
    if unsplit:
        raise SystemExit(f"questions without a half (run --split): {unsplit[:5]}")
    asked = [q for q in questions if args.half == "both" or q["half"] == args.half]
    warnings.filterwarnings("ignore")

    from loom_dagster.extractor.local import reference_extractor
    from loom_dagster.extractor.settings import ENV_TOKEN, ENV_URL
    from loom_dagster.search.fusion import rank_all
    from loom_dagster.search.service import default_legs

    started_at = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    load_before = machine()
    with tempfile.TemporaryDirectory() as scratch, reference_extractor() as service:
        base = Path(scratch)
        os.environ[ENV_URL], os.environ[ENV_TOKEN] = service.url, service.token
        os.environ["LOOM_HOME"] = str(base / "home")
        os.environ["DAGSTER_HOME"] = str(base / "home" / "dagster")
        folder = base / "docs"
        shutil.copytree(args.docs, folder)
        started = time.perf_counter()
        index, vectors, chunks = ingest(folder, args.embedder, 0, False, True, 0)
        ingest_s = time.perf_counter() - started
        if args.dump:
            from loom_dagster.chunking import locator_json

            with open(args.dump, "w") as out:
                for chunk in chunks.values():
                    out.write(
                        f"=== {chunk.path} {locator_json(chunk.chunk.locator)} "  # type: ignore[attr-defined]
                        f"{chunk.block_type} {' > '.join(chunk.section_path)}\n{chunk.text}\n"  # type: ignore[attr-defined]
                    )

        # A question no chunk of its document answers is a labelling error (or a reader's
        # loss): counted as a miss, and named so it can be fixed.
        by_document: dict[str, list[str]] = defaultdict(list)
        for chunk in chunks.values():
            by_document[chunk.path].append(" ".join([*chunk.section_path, chunk.text]))  # type: ignore[attr-defined]
        unreachable = [
            str(q["id"])
            for q in asked
            if not any(
                holds(p, q["answer"], str(q["document"])) for p in by_document[str(q["document"])]
            )
        ]
        legs = default_legs(index, vectors)  # type: ignore[arg-type]

        def bm25(question: Mapping[str, object]) -> list[str]:
            hits = index.search(  # type: ignore[attr-defined]
                str(question["question"]), limit=DEPTH * 5, search_filter=search_filter(question)
            )
            return [hit.chunk.chunk_id for hit in hits]

        def fusion(question: Mapping[str, object]) -> list[str]:
            # What `loom search` runs: the exact, lexical and vector legs fused by search/fusion.py.
            hits = rank_all(legs, str(question["question"]), search_filter(question), DEPTH * 5)  # type: ignore[arg-type]
            return ids_of(hits, chunks)

        ranked: dict[str, Callable[[Mapping[str, object]], list[str]]] = {
            "bm25": bm25,
            "fusion": fusion,
        }
        started = time.perf_counter()
        sources = read_sources(chunks, args.docs)
        outcomes = {
            leg: [judge(q, rank(q), chunks, sources.get(str(q["document"]))) for q in asked]
            for leg, rank in ranked.items()
        }
        search_s = time.perf_counter() - started
    halves = ["tuning", "judging"] if args.half == "both" else [args.half]
    table = report(asked, outcomes, halves)
    print(
        f"{len(asked)} questions, {len(chunks)} chunks of {len(list(args.docs.rglob('*.*')))} documents, "
        f"embedder {vectors.embedder.model}; ingest {ingest_s:.0f} s, questions {search_s:.0f} s"  # type: ignore[attr-defined]
    )
    print(f"{started_at}; {load_before}")
    if unreachable:
        print(f"no chunk of the document holds the answer of {len(unreachable)}: {unreachable}")
    print_table(table)
    if args.misses:
        for question, outcome in zip(asked, outcomes["fusion"], strict=True):
            if outcome["found"] != 0:
                print(
                    f"MISS {question['id']} [{question['slice']}] {question['question']!r} -> {outcome['first']}"
                )
    if args.json_out:
        args.json_out.parent.mkdir(parents=True, exist_ok=True)
        args.json_out.write_text(
            json.dumps(
                {
                    "date": started_at,
                    "machine": load_before,
                    "embedder": vectors.embedder.model,  # type: ignore[attr-defined]
                    "documents": len(list(args.docs.rglob("*.*"))),
                    "chunks": len(chunks),
                    "ingest_s": round(ingest_s, 1),
                    "questions_s": round(search_s, 1),
                    "unreachable": unreachable,
                    "legs": table,
                    "per_question": {
                        leg: {str(q["id"]): o for q, o in zip(asked, rows, strict=True)}
                        for leg, rows in outcomes.items()
                    },
                },
                indent=1,
                ensure_ascii=False,
            )
            + "\n"
        )


if __name__ == "__main__":
    main()
