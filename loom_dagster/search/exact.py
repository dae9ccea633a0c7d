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

Identifiers are never stemmed or split: a term is the whole identifier, lowercased. Some are
written with spaces and punctuation (issue 35): a label (`Table B4`, `Figure 3`, `Form 1099-K`),
a citation (`29 C.F.R. § 1910.147`, `ISO 9001`), a verse-like range (`Genesis 3:1-5`). Those are
phrases: found in a query and in a chunk's text by their shape, each kept as one term written
one way (case folded, one space between its parts, an abbreviation's dots and the space after
a section sign dropped: `29 cfr § 1910.147` and `29 CFR §1910.147` are one term), and a query's
phrase is looked up before its single-word identifiers, so the passage that holds the whole
phrase answers before one that holds a part of it (a page that mentions "C.F.R.").

Hits from the names tier define what the query names (`LegHit.defines`), and fusion puts the
first of them first (search/fusion.py). A short query's plain words ("columns of the film
table") are looked up among the names too; its hits define it only when each of those words is
a name, since "capital city of Mexico" names a `city` table by chance.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import replace
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

# The nouns that name a numbered part of a document, a form or a law: "Table B4", "Figure 3",
# "Form 1099-K", "Appendix C". A capitalised word before a number is a label only when it is one
# of these: "In 2014" at a sentence's start is not, and a query's "in 2014" must not match it.
LABEL_NOUNS = frozenset(
    (
        "table figure fig form exhibit section sec chapter ch appendix annex attachment schedule "
        "part article art item chart box map plate equation eq rule clause paragraph para step "
        "phase unit lesson module note footnote diagram listing example exercise problem "
        "question theorem lemma definition slide volume vol title enclosure amendment tab "
        "tabelle abbildung abb anhang kapitel abschnitt formular tableau chapitre annexe "
        "formulaire tabla figura anexo capítulo capitulo formulario cuadro"
    ).split()
)
# What a label names: a number with letters or more numbers joined to it (3, B4, 4.2, 1099-K,
# A-1, 12(b)), or, as printed, a capital letter or a roman numeral (Appendix C, Part IV).
_LABEL_NUMBER = r"[^\W\d_]{0,3}\d[^\W_]*(?:[-.][^\W_]+)*(?:\(\w{1,4}\))*"
_LABEL = re.compile(
    rf"(?<![^\W_])([^\W\d_]+)\.?[ \t]+(?:§[ \t]*)?(?:({_LABEL_NUMBER})|([A-Z]|[IVXLC]{{2,6}}))(?![^\W_]|[-.][^\W_])"
)
# A citation: an optional title number, an abbreviation in capitals (C.F.R., U.S.C., CFR, ISO,
# RFC) and a number, with or without a section sign between: `29 C.F.R. § 1910.147`, `RFC 2616`.
_CITATION = re.compile(
    r"(?<![\w.])(?:(\d{1,4})[ \t]+)?((?:[A-Z]\.[ \t]?){2,6}|[A-Z]{2,6}\b)[ \t]*(§§?)?[ \t]*"
    r"(\d[\w]*(?:[-.:]\w+)*(?:\(\w{1,4}\))*)(?![\w])"
)
# A section sign and the number it names: `§ 1910.147`, `§§ 12-14`.
_SECTION = re.compile(r"§§?[ \t]*(\d[\w]*(?:[-.:]\w+)*(?:\(\w{1,4}\))*)")
# A book, a chapter and verses: `Genesis 3:1-5`, `1 John 4:8`, `Ps. 23:1`.
_VERSE = re.compile(
    r"(?<![\w.])((?:[1-3][ \t]+)?[A-Z][^\W\d_]+)\.?[ \t]+(\d{1,3}:\d{1,3}(?:[-\u2013]\d{1,3})?)(?![\w:])"
)
# A query is typed in any case: there a verse's book needs only to be a word, not a stop word.
_QUERY_VERSE = re.compile(
    r"(?<![\w.])((?:[1-3][ \t]+)?[^\W\d_]{2,})\.?[ \t]+(\d{1,3}:\d{1,3}(?:[-\u2013]\d{1,3})?)(?![\w:])"
)
# What a phrase pattern cannot match without (each is a scan of every chunk of a document, and a
# 100,000-row table has thousands of chunks with none of them): two capitals or a capital and a
# period (a citation), a digit, a colon and a digit (a verse range).
_MAY_CITE = re.compile(r"[A-Z][A-Z.]")
_MAY_VERSE = re.compile(r"\d:\d")
_NOT_BOOKS = frozenset(
    "at on in by from to until till before after about around since and or".split()
)
MAX_CHUNK_PHRASES = 500
# A short question may name a defined object by a plain word ("columns of the film table", "how
# are staff stored"): when nothing else of the query is a name anywhere, its words are looked up
# among the names chunks define (a created table, a TOML table), never among the keys a chunk
# merely reads. Only a short query: a longer one is a sentence, whose words are BM25's.
MAX_NAME_WORDS_QUERY = 6
_NAME_WORD = re.compile(r"[^\W\d_]{3,}")
_QUESTION_WORDS = frozenset(
    (
        "the and for are was were what which who whom whose how why when where does did has "
        "have had with from into about that this these those its their there defined define "
        "definition columns column table tables schema stored store list show find"
    ).split()
)


def fold(identifier: str) -> str:
    return identifier.casefold()


def text_identifiers(text: str) -> list[str]:
    """The identifiers written in `text`, case-folded, each once, with the shorter names a
    dotted one is also looked up by (`analytics.daily_revenue` -> `daily_revenue`)."""
    found: dict[str, None] = dict.fromkeys(text_phrases(text))
    for match in _IDENTIFIER.finditer(text):
        identifier = match.group().strip("._-")
        if not _is_identifier(identifier):
            continue
        for name in _with_suffixes(fold(identifier)):
            found[name] = None
        if len(found) >= MAX_CHUNK_IDENTIFIERS:
            break
    return list(found)


def text_phrases(text: str, *, typed: bool = False) -> list[str]:
    """The phrase identifiers written in `text` (labels, citations, verse ranges), each as one
    term written one way, each once. `typed`: a query's, where a capital letter is not needed
    for a verse's book (a single-letter or roman label still needs its capital: "schedule a
    meeting" names no schedule)."""
    found: dict[str, None] = {}
    for match in _LABEL.finditer(text):
        noun = fold(match.group(1))
        if noun in LABEL_NOUNS:
            found[f"{noun} {fold(match.group(2) or match.group(3))}"] = None
    citations = _CITATION.finditer(text) if _MAY_CITE.search(text) else ()
    for match in citations:
        title, code, sign, number = match.groups()
        code = re.sub(r"[.\s]", "", fold(code))
        number = fold(number)
        if code in LABEL_NOUNS:
            continue
        for cited in _with_base(number):
            found[f"{code} {cited}"] = None
            if title:
                found[f"{title} {code} {cited}"] = None
    sections = _SECTION.finditer(text) if "§" in text else ()
    for match in sections:
        for cited in _with_base(fold(match.group(1))):
            found[f"§{cited}"] = None
    verses = (_QUERY_VERSE if typed else _VERSE).finditer(text) if _MAY_VERSE.search(text) else ()
    for match in verses:
        book = re.sub(r"\s+", " ", fold(match.group(1)))
        if book in _NOT_BOOKS or book in LABEL_NOUNS:
            continue
        found[f"{book} {match.group(2).replace(chr(0x2013), '-')}"] = None
        if len(found) >= MAX_CHUNK_PHRASES:
            break
    return [phrase for phrase in found if len(phrase) <= MAX_TERM_CHARS][:MAX_CHUNK_PHRASES]


def _with_base(number: str) -> list[str]:
    """A cited number, and without its paragraph when it names one: `1910.147(c)(1)` is also
    looked up as the section it is a part of, `1910.147`."""
    base = number.split("(", 1)[0]
    return [number, base] if base and base != number else [number]


def query_name_words(query: str) -> list[str]:
    """The words of a short query that may name a defined object on their own, case-folded."""
    words = query.split()
    if len(words) > MAX_NAME_WORDS_QUERY:
        return []
    found = (fold(word) for word in _NAME_WORD.findall(query))
    return list(dict.fromkeys(word for word in found if word not in _QUESTION_WORDS))


def query_phrases(query: str) -> list[str]:
    """The phrase identifiers a query names (text_phrases, as typed)."""
    return text_phrases(query[: MAX_PATH_QUERY * 40], typed=True)[:MAX_QUERY_IDENTIFIERS]


def key_terms(keys: Iterable[str]) -> list[str]:
    """Keys as the leg matches them: whole, case-folded."""
    return list(dict.fromkeys(fold(key) for key in keys if 0 < len(key) <= MAX_TERM_CHARS))


def query_identifiers(query: str) -> list[str]:
    """What a query may name exactly: the identifiers in it, and the whole query as typed
    (stripped of wrapping punctuation and a final period), so a one-word query finds a key
    with no separator (a table called `orders`) and a quoted TOML key with spaces is whole.
    A bare word inside a longer query is BM25's: as a key it would match every column so named."""
    candidates: dict[str, None] = dict.fromkeys(query_phrases(query))
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
        # A phrase the query names, wherever a chunk holds it, answers before a part of it.
        phrases = query_phrases(query)
        coded = named_as_code(query)
        for asked in (phrases, identifiers) if phrases else (identifiers,):
            for field in TIERS:
                hits = self.index.rank_terms([(field, 1.0, asked)], search_filter, limit)
                if hits:
                    defines = field == NAMES_FIELD
                    named = defines or asked is phrases or coded
                    return [replace(hit, defines=defines, named=named) for hit in hits]
        words = query_name_words(query)
        if not words:
            return []
        hits = self.index.rank_terms([(NAMES_FIELD, 1.0, words)], search_filter, limit)
        named = bool(hits) and (
            len(words) == 1
            or all(
                self.index.rank_terms([(NAMES_FIELD, 1.0, [word])], search_filter, 1)
                for word in words
            )
        )
        return [replace(hit, defines=True, named=True) for hit in hits] if named else hits


def named_as_code(query: str) -> bool:
    """Whether a query names something by an identifier, not by a word of a sentence: it is one
    word, or an identifier in it holds a digit, an underscore or a dot (E-DISK-042,
    max_connections, server.port). "Demo-Video" in a question is a hyphenated word."""
    if len(query.split()) <= 1:
        return True
    return any(
        char.isdigit() or char in "_." for found in text_identifiers(query) for char in found
    )
