"""The exact-key leg: a chunk's keys and the identifiers in its text, looked up whole.

BM25's analyzer cuts `E-DISK-042` into `e`, `disk`, `042` and `daily_revenue` into two common
words, so an identifier query finds every chunk that shares a part. This leg keeps each key and
identifier as one case-folded term (raw fields of the same tantivy document as the lexical leg,
so a revision's keys publish and retire in the same commit as its text) and matches a query's
identifiers against them whole. Where the identifier stands tells how strongly a chunk answers,
and the leg answers with the chunks of the strongest place that holds it:

- names: what the chunk defines (a SQL statement's created object, a TOML table or key path)
  and the identifiers of the heading it sits under (a runbook section titled by its error code);
- keys: every object a chunk's blocks name (a SQL statement's tables and columns);
- text: identifiers written in the chunk's text.

Identifiers are never stemmed or split: a term is the whole identifier, lowercased.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Protocol

from loom_dagster.search.legs import LegHit, SearchFilter

NAMES_FIELD = "ident_name"
KEYS_FIELD = "ident_key"
TEXT_FIELD = "ident_text"
# Searched in this order; the first place that holds any of the query's identifiers is the
# leg's whole answer. Fusion reads ranks, not scores: a chunk that only mentions the code must
# not stand second in this leg behind its definition, where BM25 (which splits the code and
# counts its parts) could lift it above the definition.
TIERS = (NAMES_FIELD, KEYS_FIELD, TEXT_FIELD)

# Parts of letters and digits joined by '-', '_' or '.': E-DISK-042, HW-77, max_connections,
# analytics.daily_revenue, server.tls.cert_file. A bare word is not an identifier in text
# (BM25 finds it), but a query word may still be a key (a table called `orders`).
# A match starts only where a run of letters and digits starts: one that failed there fails at
# every later start inside the run too (the run ends at the same place), and trying each of them
# made a long run quadratic (a 1,500-letter chunk of one word took 52 ms, most of an index write).
_IDENTIFIER = re.compile(r"(?<![^\W_])[^\W_]+(?:[-_.][^\W_]+)+")
# The characters a query word may be wrapped in: quotes, brackets, trailing punctuation.
_WRAPPING = "\"'`()[]{}<>,;:!?"
MAX_TERM_CHARS = 200
MAX_QUERY_IDENTIFIERS = 64
MAX_CHUNK_IDENTIFIERS = 2000
MAX_PATH_WORDS = 4
# A key path is typed at the start of a query, or the query is not one: a pasted page's words
# past these are BM25's alone.
MAX_PATH_QUERY = 32


def fold(identifier: str) -> str:
    return identifier.casefold()


def text_identifiers(text: str) -> list[str]:
    """The identifiers written in `text`, case-folded, each once, with the shorter names a
    dotted one is also looked up by (`analytics.daily_revenue` -> `daily_revenue`)."""
    found: dict[str, None] = {}
    for match in _IDENTIFIER.finditer(text):
        identifier = match.group().strip("._-")
        if not _is_identifier(identifier):
            continue
        for name in _with_suffixes(fold(identifier)):
            found[name] = None
        if len(found) >= MAX_CHUNK_IDENTIFIERS:
            break
    return list(found)


def key_terms(keys: Iterable[str]) -> list[str]:
    """Keys as the leg matches them: whole, case-folded."""
    return list(dict.fromkeys(fold(key) for key in keys if 0 < len(key) <= MAX_TERM_CHARS))


def query_identifiers(query: str) -> list[str]:
    """What a query may name exactly: the identifiers in it, and the whole query as typed
    (stripped of wrapping punctuation and a final period), so a one-word query finds a key
    with no separator (a table called `orders`) and a quoted TOML key with spaces is whole.
    A bare word inside a longer query is BM25's: as a key it would match every column so named."""
    candidates: dict[str, None] = {}
    for identifier in text_identifiers(query):
        candidates[identifier] = None
    # A key path typed with spaces ("database pool max_connections"): runs of neighbouring
    # words joined as the dotted path they may name.
    words = [fold(word.strip(_WRAPPING).rstrip(".")) for word in query.split()[:MAX_PATH_QUERY]]
    words = [word for word in words if word]
    for size in range(2, MAX_PATH_WORDS + 1):
        for start in range(len(words) - size + 1):
            candidates[".".join(words[start : start + size])] = None
    whole = fold(query.strip().strip(_WRAPPING).rstrip(".").strip())
    if any(char.isalnum() for char in whole):
        candidates[whole] = None
    return [c for c in candidates if len(c) <= MAX_TERM_CHARS][:MAX_QUERY_IDENTIFIERS]


def _is_identifier(token: str) -> bool:
    # A number with a decimal point or a date is not a name; a name has a letter.
    return 1 < len(token) <= MAX_TERM_CHARS and any(char.isalpha() for char in token)


def _with_suffixes(identifier: str) -> list[str]:
    parts = identifier.split(".")
    return [".".join(parts[start:]) for start in range(len(parts))]


def heading_identifiers(section_path: Sequence[str]) -> list[str]:
    """The identifiers of the heading a chunk sits directly under."""
    return text_identifiers(section_path[-1]) if section_path else []


class TermIndex(Protocol):
    """What the leg asks of the index that holds the identifier fields (the lexical index,
    search/lexical.py, which imports this module for the fields' names)."""

    def rank_terms(
        self,
        fields: Sequence[tuple[str, float, Sequence[str]]],
        search_filter: SearchFilter,
        limit: int,
    ) -> Sequence[LegHit]: ...


class ExactLeg:
    """Exact, case-insensitive lookup of the query's identifiers among the chunks' keys."""

    name = "exact"

    def __init__(self, index: TermIndex) -> None:
        self.index = index

    def rank(self, query: str, search_filter: SearchFilter, limit: int) -> Sequence[LegHit]:
        identifiers = query_identifiers(query)
        if not identifiers or limit < 1:
            return []
        for field in TIERS:
            hits = self.index.rank_terms([(field, 1.0, identifiers)], search_filter, limit)
            if hits:
                return hits
        return []
