"""The language of a chunk or a question (English, German, French or Spanish, or none), told by
counting the function words only one of them uses.

Plain Python, no model: the lexical leg needs the language only to pick a stemmer, for the four
languages the documents here are written in, and a text in one of them always holds its
articles, pronouns and auxiliaries. A word two of them share ("de", "la", "en", "que", "in",
"was", "die" in English, "es" in German) counts for neither. Identifiers, numbers and code hold
few of these words, so a table of figures or a script has no language, and a word's accents are
kept (French "où" is not Spanish "o").
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence

ENGLISH = "en"
GERMAN = "de"
FRENCH = "fr"
SPANISH = "es"

# Each language's function words that none of the other three uses as a common word: articles,
# pronouns, auxiliaries, question words, and the prepositions and conjunctions only it uses
# ("sous", "après", "durante", "seit"), without which a short question such as "sous-région de
# Haïti" held only words two languages share and had none (added 2026-12-07, unseen bench's
# tuning half: BM25 alone found first 0.69 from 0.67, fused unchanged until the window rerank
# read the same words as BM25; docs/benchmarks/search.md, "third: rows and languages").
FUNCTION_WORDS: Mapping[str, frozenset[str]] = {
    ENGLISH: frozenset(
        "the and of to is are were with that this for which what how when who where from have "
        "has been not they their there its it be by does did do than into would should could "
        "can these those".split()
    ),
    GERMAN: frozenset(
        "der das und ist nicht ein eine einer eines einem einen den dem des mit auf für von zu "
        "zum zur im sind wird werden wurde wurden auch sich wie welche welcher welches welchen "
        "wer wem wen wessen wo woher wohin wann warum wieso weshalb oder aber bei nach aus über unter dass hat haben kann können noch "
        "nur vor durch um ich wir ihr bis mehr viele gibt man muss soll einen diese dieser "
        "dieses wenn ohne gegen zwischen während seit weil damit ob".split()
    ),
    FRENCH: frozenset(
        "le les des du et est une dans pour qui sur pas au aux ce cette ces avec par sont ont "
        "il elle ils nous vous mais où quel quelle quels quelles comment combien pourquoi "
        "quand quoi lequel laquelle été être était leur plus sa ses à faut peut fait ne je "
        "sous sans chez vers depuis pendant avant après selon parmi".split()
    ),
    SPANISH: frozenset(
        "el los las del y está están por para con una uno qué cuál cuáles cuánto cuánta "
        "cuántos cuántas cómo dónde cuándo quién quiénes lo al su sus fue fueron ha han pero "
        "como muy más entre sobre también hay este esta estos estas ese esa donde cuando sin "
        "desde hasta ser puede hacia tras según durante mediante aunque porque sino".split()
    ),
}
# A chunk is of a language when it holds at least this many of its function words and at least
# twice as many as of any other: a short passage, a table or a passage in two languages has none.
CHUNK_MIN_WORDS = 3
CHUNK_MARGIN = 2.0

_WORD = re.compile(r"[^\W\d_]+")


def _leaders(text: str) -> tuple[str, int, int]:
    """The language of the most function words in `text`, their count, and the runner-up's."""
    counts = dict.fromkeys(FUNCTION_WORDS, 0)
    for word in _WORD.findall(text.lower()):
        for language, words in FUNCTION_WORDS.items():
            if word in words:
                counts[language] += 1
    (language, most), (_, second) = sorted(counts.items(), key=lambda item: -item[1])[:2]
    return language, most, second


def of_text(text: str) -> str | None:
    """The language of a chunk's text, or None when it is short, mixed or holds no prose."""
    language, most, second = _leaders(text)
    if most < CHUNK_MIN_WORDS or most < CHUNK_MARGIN * second:
        return None
    return language


def of_query(query: str) -> str | None:
    """The language of a question: the one whose function words it holds most of, one at
    least; None on a tie (a question of names and figures has none)."""
    language, most, second = _leaders(query)
    if most < 1 or most == second:
        return None
    return language


def of_document(languages: Sequence[str | None]) -> str | None:
    """A document's language from its chunks': the one more than half of those that have one
    are in, or None."""
    counts = Counter(found for found in languages if found is not None)
    if not counts:
        return None
    found, most = counts.most_common(1)[0]
    return found if 2 * most > sum(counts.values()) else None
