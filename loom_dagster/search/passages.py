"""Passage-level ranking inside the fused top hits: which of them holds the question's words
close together (issue 35, remedy 4).

A chunk is up to 1,500 characters of several paragraphs, and BM25 and the vector leg score it
whole: the chunk whose words match the question anywhere, often the one that shares its
title's words, comes first, not the one a sentence of which answers it. Each of the fused top
hits is scored again by its best window of two sentences: the sum of the inverse document
frequencies of the question's distinct words the window holds, as a share of all of them. The
top hits are re-ordered by their fused score plus WEIGHT times that share, unless the first
was the exact leg's first and names what the query asks for (`named_exactly`: an identifier's
definition is the answer, wherever its words are).

Then the first hit's document is read as a whole against itself (`lead_passage`): of its
passages among those top hits, the one whose window share, BM25 score and place in the document
(an article answers in its first passages, a page's later ones are often asides or furniture)
score best takes the first place, when it beats the first by a margin.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from loom_dagster.search.fusion import Fused

# How many of the fused hits are scored again, and how much a window's share weighs against
# the fused score (an RRF score: 1 / (k + rank), 0.17 for a first place at k = 5). At 0.1 a
# window could close a gap of one or two places only: the passage whose sentence answered stayed
# under the one that shared the title's words. Chosen on the unseen bench's tuning half
# (bench/retrieval_unseen.py, 2026-12-07; fused found-first over all 172 questions): 0.68 at
# 0.1, 0.70 at 0.2, 0.71 at 0.3 and 0.5, 0.73 at 0.7, 0.72 at 1.0, 0.70 at 2.0 (depth 10 beside
# 5: the same at 0.7, table questions lower, natural ones higher); the judging half confirmed it
# (0.68 to 0.72, no slice lower).
DEPTH = 5
WEIGHT = 0.7
WINDOW_SENTENCES = 2
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n+")


def named_exactly(hit: Fused) -> bool:
    """A first hit the exact leg ranked first names what the question asked for by its name: a
    window of words does not outrank it. That holds for a definition, a code or a citation the
    query names (`LegHit.named`); a sentence's hyphenated word ("the demo-video") that the exact
    leg found in a page's script is no such name. (Every first place of the exact leg held off
    the rerank before: on the unseen bench's tuning half, 2026-12-07, natural questions 0.67 to
    0.69 with this rule, no slice lower; judging: natural 0.69 to 0.71, table 0.68 to 0.70.)"""
    return any(leg.leg == "exact" and leg.rank == 1 and leg.named for leg in hit.legs)


def windows(text: str, size: int = WINDOW_SENTENCES) -> list[str]:
    sentences = [part for part in _SENTENCE_END.split(text) if part.strip()]
    if len(sentences) <= size:
        return [text]
    return [" ".join(sentences[start : start + size]) for start in range(len(sentences) - size + 1)]


def window_shares(
    terms: Sequence[str],
    weights: Sequence[float],
    texts: Mapping[int, tuple[str, str]],
    analyze: Callable[[str], list[str]],
) -> dict[int, float]:
    """Each passage's best window's share of the weight of the query's distinct terms; a
    passage is (its text, the heading it sits under), and the heading's words count in each of
    its windows, as BM25 reads a chunk's headings beside its text. A window holds a term when it
    holds the term or a word of the same stem (`same_stem`)."""
    weight_of = dict(zip(terms, weights, strict=True))
    total = sum(weight_of.values())
    shares: dict[int, float] = {}
    if total <= 0:
        return shares
    by_prefix: dict[str, list[str]] = {}
    for term in weight_of:
        if len(term) >= STEM_PREFIX:
            by_prefix.setdefault(term[:STEM_PREFIX], []).append(term)
    for key, (text, heading) in texts.items():
        above = _stemmed(analyze(heading), by_prefix)
        best = 0.0
        for window in windows(text):
            held = above | _stemmed(analyze(window), by_prefix)
            best = max(best, sum(w for term, w in weight_of.items() if term in held))
        shares[key] = best / total
    return shares


# Words of one stem share their first STEM_PREFIX letters and at least three quarters of the
# shorter word: terrarium and terrariums, arrested and arrests, matrix and matrices, raise and
# raised, withdrawn and withdrawal; not interest and internet. Only here, among the few fused
# top hits: the index keeps words as written (a stemmer bends identifiers, and per-language
# stemming of the index did not help, docs/benchmarks/search.md). Chosen on the unseen bench's
# tuning half (2026-12-07): table questions 0.70 to 0.72, no slice lower; judging: table 0.70
# to 0.73, natural 0.71 to 0.73, no slice lower.
STEM_PREFIX = 5


def same_stem(a: str, b: str) -> bool:
    if a == b:
        return True
    shorter = min(len(a), len(b))
    if shorter < STEM_PREFIX:
        return False
    common = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        common += 1
    return common >= STEM_PREFIX and common * 4 >= shorter * 3


def _stemmed(words: Sequence[str], by_prefix: Mapping[str, Sequence[str]]) -> set[str]:
    """The words, and the query terms of the same stem as any of them."""
    held = set(words)
    for word in list(held):
        for term in by_prefix.get(word[:STEM_PREFIX], ()):
            if same_stem(term, word):
                held.add(term)
    return held


# Which passage of the first document comes first (issue 35, remedy 5). The first hit is mostly
# from the right document (the unseen bench's tuning half, 2026-12-07 11:45: 0.93 of natural
# questions), and which of its passages is first decided most misses: its passages in the fused
# top five differ by a few hundredths of window share and BM25, and the first place went to
# the lede's neighbour, a "Related" teaser or a later section that repeats the title's words,
# where the answer was the document's first passage. A passage's score here is its window
# share, plus LEAD_BM25 times its BM25 score as a share of the best of them, plus
# LEAD / (1 + its place in the document) (the first passage 0.4, the second 0.2, the tenth
# 0.04); one whose window holds at least as much of the question as the first's takes the first
# place when it beats the first's score by LEAD_MARGIN (a place breaks near-ties; it does not
# outweigh the sentence that answers). Chosen on the tuning half (docs/benchmarks/search.md,
# "third: passages inside the first document"): natural questions 0.72 to 0.79, no question
# lost, the same 4 gained with LEAD from 0.4 to 0.8 and a margin of 0.05 or 0.1; judging:
# natural 0.75 to 0.76, all 0.80 flat (132 to 133 of 166), no slice lower. Scoring every passage
# of the document (BM25 restricted to it) instead of those in the top five gained none more.
LEAD = 0.4
LEAD_BM25 = 0.5
LEAD_MARGIN = 0.1


@dataclass(frozen=True)
class Candidate:
    """A passage of the first hit's document among the top hits, as `lead_passage` reads it."""

    share: float  # its best window's share of the question's words (`window_shares`)
    bm25: float  # the lexical leg's score for it (0 when that leg did not find it)
    ordinal: int  # its place in the document, from 0


def lead_passage(first: int, candidates: Mapping[int, Candidate]) -> int:
    """The key of the passage of the first hit's document that comes first: the first hit's
    own, unless another passage of the document scores above it by LEAD_MARGIN."""
    if first not in candidates or len(candidates) < 2:
        return first
    top = max(candidate.bm25 for candidate in candidates.values())

    def score(candidate: Candidate) -> float:
        bm25 = candidate.bm25 / top if top > 0 else 0.0
        return candidate.share + LEAD_BM25 * bm25 + LEAD / (1 + candidate.ordinal)

    # Only a passage whose window holds as much of the question as the first's: a place in the
    # document breaks near-ties, it does not outweigh the sentence that answers.
    held = candidates[first].share
    scores = {
        key: score(candidate)
        for key, candidate in candidates.items()
        if candidate.share >= held or key == first
    }
    best = max(scores, key=lambda key: (scores[key], -candidates[key].ordinal))
    return best if scores[best] > scores[first] + LEAD_MARGIN else first
