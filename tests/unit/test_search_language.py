"""search/language.py: a chunk's or a question's language by the function words only it uses."""

from __future__ import annotations

import pytest

from loom_dagster.search import language


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("The report was written by the council and it is read by the mayor.", "en"),
        (
            "Das Haus wurde von der Stadt gekauft und ist heute ein Museum mit einer Bibliothek.",
            "de",
        ),
        ("La maison est dans le village et les enfants sont à l'école avec leur mère.", "fr"),
        ("Las casas del pueblo están junto al río y los niños juegan con sus amigos.", "es"),
    ],
)
def test_a_paragraph_is_of_the_language_of_its_function_words(text: str, expected: str) -> None:
    assert language.of_text(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "Haus Markt 12",  # short: too few function words
        "country: ES | region: Europe | 2014: 1,234.5",  # a row of figures
        "def read_csv(path): return open(path).read()",  # code
        # Half German, half French: mixed.
        "Das Haus ist alt und die Stadt hat es gekauft. La maison est vieille et le maire est là.",
    ],
)
def test_a_short_a_mixed_or_a_passage_without_prose_has_no_language(text: str) -> None:
    assert language.of_text(text) is None


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("Wem gehören die Häuser?", "de"),
        ("Qui habite dans les maisons ?", "fr"),
        ("¿Quién vive en las casas?", "es"),
        ("What is the export volume of wheat?", "en"),
        ("región de Europa", None),  # only words two languages share, and a name
        # A preposition or conjunction only one of them uses is enough.
        ("sous-région de Haïti", "fr"),
        ("Qui examinera le texte après l'Assemblée", "fr"),
        ("Ventas de Chile durante 2019", "es"),
        ("Preise seit 2019", "de"),
        ("read_csv HTTP2", None),
    ],
)
def test_a_question_is_of_the_language_it_holds_most_function_words_of(
    question: str, expected: str | None
) -> None:
    assert language.of_query(question) == expected


def test_a_document_is_of_the_language_most_of_its_chunks_are_in() -> None:
    assert language.of_document(["fr", None, "fr", "en", None]) == "fr"
    assert language.of_document(["fr", "en"]) is None  # no majority
    assert language.of_document([None, None]) is None
