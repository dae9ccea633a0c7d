"""Reciprocal-rank fusion of any number of search legs.

Each leg ranks chunks by its own score (BM25, exact-key matches, cosine), and those scores are
not comparable; their ranks are. A chunk's fused score is the sum over the legs that found it of
1 / (k + rank), so a chunk two legs agree on beats one that only one leg ranks first, and a chunk
only one leg can find (an identifier BM25 splits, a paraphrase no word of which matches) still
comes up. k = 60 is the constant of Cormack, Clarke and Büttcher (2009); Loom uses k = 5, chosen
without tuning to the questions it is judged on (`bench/retrieval.py --holdout`: k picked on half
of the 54 natural questions, judged on the other half, both ways round, a tie going to the
smaller k). On 2026-12-02 k = 5 was picked on both halves (on the odd half tied with k = 10) and
judged 0.815 and 0.889 found-first on the other (k = 60: 0.778 and 0.815), the smaller k
trusting each leg's first places more; the seed's floors hold at 1.00 with it. (k = 10 before:
the odd half then picked it over k = 5.)

One hit stands outside the sum (`definition`): a leg's first hit that defines what the query names (the exact
leg's definitions tier: a created table, a TOML table or key path, a heading's identifier) comes
first. Chosen on the unseen bench's tuning half (bench/retrieval_unseen.py, 2026-12-07): filtered
questions 0.91 to 0.94, no slice lower; judging: filtered 0.79 to 0.91, table questions 0.70 to
0.68 (one question), the rest the same.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from loom_dagster.search.legs import Leg, LegHit, SearchFilter

RRF_K = 5


@dataclass(frozen=True)
class LegRank:
    """Where one leg put a chunk: its 1-based rank and the leg's own score (for --explain)."""

    leg: str
    rank: int
    score: float
    named: bool = False  # the query names it (LegHit.named or LegHit.defines)


@dataclass(frozen=True)
class Fused:
    chunk_id: str  # "" when every leg that found it read only its key
    score: float
    legs: tuple[LegRank, ...]  # in the order the legs were given; a leg that missed it is absent
    key: int = 0  # legs.chunk_key of the chunk id: what the index fetches it by


def fuse(
    rankings: Sequence[tuple[str, Sequence[LegHit]]],
    limit: int,
    *,
    k: int = RRF_K,
    floors: Mapping[str, float] | None = None,
) -> list[Fused]:
    """The `limit` best chunks over the legs' rankings (leg name, hits best first).

    `floors` (leg name: score): a chunk found by no other leg than such legs, and by each of
    them below its floor, is not an answer. A vector leg ranks whatever is served, so a query
    of words no document holds would otherwise still fill the limit with its nearest chunks.

    Ties (one chunk first in one leg and second in the other, another the other way round) go
    to the chunk with the larger sum of its scores as a share of each leg's best, then to the
    better best rank, then to the leg given first, so the same rankings always fuse the same
    way and a tie is settled by how far ahead each leg put its first.
    """
    scores: dict[int, float] = {}
    shares: dict[int, float] = {}
    ranks: dict[int, list[LegRank]] = {}
    best: dict[int, tuple[int, int]] = {}
    ids: dict[int, str] = {}
    for position, (leg, hits) in enumerate(rankings):
        seen: set[int] = set()
        top = max((hit.score for hit in hits), default=0.0)
        for rank, hit in enumerate(hits, start=1):
            key = hit.identity
            if key in seen:  # a leg that repeats a chunk counts it once
                continue
            seen.add(key)
            if hit.chunk_id:
                ids.setdefault(key, hit.chunk_id)
            scores[key] = scores.get(key, 0.0) + 1.0 / (k + rank)
            share = hit.score / top if top > 0 else 0.0
            shares[key] = shares.get(key, 0.0) + share
            ranks.setdefault(key, []).append(
                LegRank(leg, rank, hit.score, hit.named or hit.defines)
            )
            best[key] = min(best.get(key, (rank, position)), (rank, position))
    if floors:
        for key, found in ranks.items():
            if all(leg.leg in floors and leg.score < floors[leg.leg] for leg in found):
                del scores[key]
    ordered = sorted(scores, key=lambda key: (-scores[key], -shares[key], best[key]))
    first = definition(rankings)
    if first is not None and first in scores:
        ordered.remove(first)
        ordered.insert(0, first)
    return [
        Fused(ids.get(key, ""), scores[key], tuple(ranks[key]), key)
        for key in ordered[: max(limit, 0)]
    ]


def definition(rankings: Sequence[tuple[str, Sequence[LegHit]]]) -> int | None:
    """The key of a leg's first hit when it defines what the query names (the exact leg's
    definitions: `CREATE TABLE film` for "columns of the film table"): fusion puts it first,
    however the other legs rank it. BM25 and the vectors score a passage by its words, and a
    sibling (`film_text`, an index on film) that holds the question's words more densely
    outranked the definition in both (issue 35)."""
    return next((hits[0].identity for _, hits in rankings if hits and hits[0].defines), None)


def leg_depth(limit: int) -> int:
    """How many hits each leg is asked for: more than the answer needs, so a chunk ranked just
    below the cut by two legs can overtake one ranked just above it by one."""
    return max(limit * 3, 30)


def rank_all(
    legs: Sequence[Leg], query: str, search_filter: SearchFilter, limit: int, *, k: int = RRF_K
) -> list[Fused]:
    """Ask every leg (each applies the filter inside its own search) and fuse their answers;
    a leg with a `floor` (the vector leg) answers alone only at or above it."""
    depth = leg_depth(limit)
    floors = {leg.name: float(getattr(leg, "floor", 0.0)) for leg in legs}
    floors = {name: floor for name, floor in floors.items() if floor > 0}
    rankings = [(leg.name, leg.rank(query, search_filter, depth)) for leg in legs]
    # A leg that can read the hits' passages (the lexical leg) re-orders the top few by the
    # window of each that holds the question's words (search/passages.py). It reads them before
    # the cut to the limit, so the first hits are the same whatever the limit.
    reranker = next((leg for leg in legs if hasattr(leg, "rerank_passages")), None)
    rerank = getattr(reranker, "rerank_passages", None)
    fused = fuse(
        rankings, max(limit, int(getattr(reranker, "rerank_depth", 0))), k=k, floors=floors
    )
    return list(rerank(query, fused) if rerank else fused)[: max(limit, 0)]
