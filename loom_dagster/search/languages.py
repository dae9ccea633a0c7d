"""Which language a passage or a query is written in, for the lexical leg's per-language stems.

The lexical leg's words are folded but not stemmed (identifiers and code are much of what is
indexed, and a stemmer bends them), so a German question's `Kündigungsfristen` misses a passage
that says `Kündigungsfrist`. A passage written in German, French or Spanish is also indexed in
that language's stemmed field (tantivy's Snowball stemmers), and a question written in one of
them is also matched there (issue 35).

The language is told by its function words, without a model or a dependency: the share of a
text's words that are one language's common articles, pronouns and prepositions. Prose of a
language has 25-45% of them, another language's prose a few percent, and a code block, a
table or an English passage too few of any other; a text is that language only when it leads
clearly. A query is short, so one function word of a single language is enough there, and none
leaves it to the plain words alone.
"""

from __future__ import annotations

import re

# Snowball's names, as tantivy's stemmer filter takes them.
LANGUAGES = {"de": "german", "fr": "french", "es": "spanish"}

_FUNCTION_WORDS = {
    "en": "the of and to in is that for it with as was on are be by this from or which an at not",
    "de": (
        "der die das und ist nicht ein eine einen dem den des sich mit auf für von zu im auch "
        "wird werden sind wie bei nach oder aus über vom zum zur durch dass wenn kann noch"
    ),
    "fr": (
        "le la les de des une du est et en dans pour que qui pas sur au aux par avec ce cette "
        "sont ou mais être il elle nous vous leur plus été fait comme quel quelle quels"
    ),
    "es": (
        "el la los las de del y en que es por con para una un se su sus al como más pero son "
        "está lo este esta entre también fue ser hay desde cuál cuánto cuántos qué"
    ),
}
_WORDS = {language: frozenset(words.split()) for language, words in _FUNCTION_WORDS.items()}
_WORD = re.compile(r"[^\W\d_]+")
# How much of a text is read to tell its language: its first few hundred words say it.
SAMPLE_CHARS = 3000
# A passage is a language when at least this share of its words are that language's function
# words and it has at least MIN_HITS of them, twice as many as any other language's.
MIN_SHARE = 0.12
MIN_HITS = 4


def _counts(words: list[str]) -> dict[str, int]:
    return {language: sum(word in known for word in words) for language, known in _WORDS.items()}


def _leader(counts: dict[str, int]) -> tuple[str, int, int]:
    ranked = sorted(counts.items(), key=lambda item: -item[1])
    (first, hits), (_, second) = ranked[0], ranked[1]
    return first, hits, second


def passage_language(text: str) -> str | None:
    """ "de", "fr" or "es" when the passage is written in that language, else None (English,
    code, numbers, or too little to tell)."""
    words = [word.casefold() for word in _WORD.findall(text[:SAMPLE_CHARS])]
    if not words:
        return None
    language, hits, second = _leader(_counts(words))
    if language not in LANGUAGES or hits < MIN_HITS or hits < 2 * second:
        return None
    return language if hits / len(words) >= MIN_SHARE else None


def query_language(query: str) -> str | None:
    """The language of a question, by its function words: the one language that has the most
    of them, when it is German, French or Spanish; None when no word tells."""
    words = [word.casefold() for word in _WORD.findall(query[:SAMPLE_CHARS])]
    language, hits, second = _leader(_counts(words))
    if language not in LANGUAGES or hits == 0 or hits == second:
        return None
    return language
