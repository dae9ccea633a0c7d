"""The lexical leg's stems: a German, French or Spanish chunk is found by another form of its
words, its words and identifiers are still indexed as written, English is not stemmed, one
language's stems never meet another's, a chunk of no language is read in its document's, and an
index written before the stems still serves."""

from __future__ import annotations

from pathlib import Path

import pytest
import tantivy

from loom_dagster.chunking import Chunk
from loom_dagster.contract.artifact import Locator
from loom_dagster.search import language, lexical
from loom_dagster.search.fusion import Fused
from loom_dagster.search.legs import SearchFilter, chunk_key
from loom_dagster.search.lexical import IndexedChunk, LexicalIndex, LexicalLeg


def chunk(document_id: str, text: str, ordinal: int = 0) -> IndexedChunk:
    cut = Chunk(
        ordinal=ordinal,
        text=text,
        block_ids=("b0",),
        block_type="paragraph",
        section_path=(),
        locator=Locator(line_start=1, line_end=2),
        keys=(),
        revision=f"{document_id}@r1",
        format="markdown",
    )
    return IndexedChunk.of(cut, document_id=document_id, source="docs", path=f"{document_id}.md")


def first_hits(index: LexicalIndex, query: str) -> list[str]:
    return [hit.chunk.document_id for hit in index.search(query, limit=5)]


# Each: the answering chunk holds the singular, the question the plural and no other word of the
# answer; each other chunk, of the same language, holds one of the question's function words.
INFLECTED = [
    (
        "Wem gehören die Häuser?",
        "Das alte Haus wurde von der Stadt gekauft und ist heute ein Museum.",
        (
            "Die Brücke am Fluss wird im Sommer von der Verwaltung erneuert.",
            "Im Winter ist die Straße zum Bahnhof oft gesperrt.",
            "Der Markt findet jeden Samstag statt, sagt die Verwaltung.",
        ),
    ),
    (
        "Qui habite dans les maisons ?",
        "La maison du maire est sur la place et elle est ouverte au public le dimanche.",
        (
            "Le film qui passe ce soir est un documentaire sur la mer.",
            "Le maire a reçu des élus qui ont voté pour le budget.",
            "Le train qui part à midi arrive à Lyon vers quatre heures.",
        ),
    ),
    (
        "¿Quién vive en las casas?",
        "La casa del alcalde está junto a la plaza y se puede visitar con un guía.",
        (
            "Los niños juegan en el parque con sus amigos.",
            "El mercado abre en verano todos los sábados.",
            "El tren llega en dos horas a la capital.",
        ),
    ),
]


@pytest.mark.parametrize(("question", "answer", "others"), INFLECTED, ids=["de", "fr", "es"])
def test_a_chunk_is_found_by_an_inflected_form_of_its_word(
    tmp_path: Path, question: str, answer: str, others: tuple[str, ...]
) -> None:
    index = LexicalIndex(tmp_path / "index")
    documents = {f"other{n}": [chunk(f"other{n}", text)] for n, text in enumerate(others)}
    index.publish_many({"answer": [chunk("answer", answer)], **documents})

    assert first_hits(index, question)[0] == "answer"


def test_identifiers_in_a_stemmed_chunk_are_still_indexed_as_written(tmp_path: Path) -> None:
    index = LexicalIndex(tmp_path / "index")
    text = "Die Funktion read_csv liest die Dateien über HTTP2 und gibt eine Tabelle zurück."
    index.publish("code", [chunk("code", text)])

    # Its words field holds the words unstemmed: `dateien`, not the stem `datei`.
    for word in ("read", "csv", "http2", "dateien", "liest"):
        assert index.rank_terms([(lexical.TEXT_FIELD, 1.0, [word])], SearchFilter(), 5)
    assert not index.rank_terms([(lexical.TEXT_FIELD, 1.0, ["datei"])], SearchFilter(), 5)
    assert first_hits(index, "read_csv") == ["code"]
    assert first_hits(index, "HTTP2") == ["code"]
    # A stem of a German identifier-like word is marked German, so an English query's words
    # never meet it.
    assert "de:datei" in index.stems(text, language.of_text(text))


def test_an_english_chunk_is_not_stemmed(tmp_path: Path) -> None:
    index = LexicalIndex(tmp_path / "index")
    text = "The reader loads the houses table with read_csv and it is cached for the session."
    index.publish("en", [chunk("en", text)])

    # Its stem field holds its words as the words field does.
    assert index.stems(text, language.of_text(text)) == index.analyze(text)
    # So a question finds it by the words it holds, not by their stems.
    assert first_hits(index, "Which house is loaded by the readers?") == []
    assert first_hits(index, "Which houses are loaded by the reader?") == ["en"]


def test_a_question_does_not_meet_another_languages_stems(tmp_path: Path) -> None:
    index = LexicalIndex(tmp_path / "index")
    # Spanish `casas` and French `cas` are both stemmed `cas`.
    spanish = "Las casas del pueblo están junto al río y son blancas."
    index.publish("es", [chunk("es", spanish)])
    assert "es:cas" in index.stems(spanish, language.of_text(spanish))

    assert index.query_stems("Que faut-il faire en cas de panne ?") == [
        "fr:faut",
        "fr:fair",
        "fr:cas",
        "fr:pann",
    ]
    assert first_hits(index, "Que faut-il faire en cas de panne ?") == []


def test_an_index_written_before_the_stems_is_served_by_words(tmp_path: Path) -> None:
    folder = tmp_path / "index"
    folder.mkdir()
    # The schema main wrote before the stem field existed.
    tantivy.Index(lexical._schema(keyed=True, stemmed=False), path=str(folder), reuse=True)
    index = LexicalIndex(folder)
    assert index.keyed and not index.stemmed
    german = "Das alte Haus wurde von der Stadt gekauft und ist heute ein Museum."
    index.publish("de", [chunk("de", german)])

    reopened = LexicalIndex(folder)
    assert reopened.keyed and not reopened.stemmed
    assert reopened.query_stems("Wem gehören die Häuser?") == []
    assert first_hits(reopened, "Wem gehört das Haus?") == ["de"]


def test_a_chunk_without_a_language_of_its_own_is_stemmed_in_its_documents(
    tmp_path: Path,
) -> None:
    index = LexicalIndex(tmp_path / "index")
    report = [
        "Le rapport présente les chiffres du commerce de la région pour l'année écoulée.",
        "Les chiffres sont ceux des douanes et ils sont publiés chaque mois par le ministère.",
        "Produit: pommes | Exportations: 1 200 t",  # a row: no language of its own
    ]
    assert language.of_text(report[2]) is None
    index.publish("report", [chunk("report", text, n) for n, text in enumerate(report)])
    index.publish("other", [chunk("other", "Le marché de la ville ouvre le samedi matin.")])

    [first, *_] = index.search("Quelle quantité de pomme a été exportée ?", limit=5)
    assert first.chunk.text == report[2]


def test_a_questions_own_function_words_do_not_raise_prose_of_its_language(
    tmp_path: Path,
) -> None:
    """ "¿Cuánto ...?" asks for a figure: a Spanish passage that holds "en cuanto" and "la" is
    no nearer to it than the donors' row that names the donor (no language of its own, in a
    document of none). Each of those words weighed as a rare word in a mostly English index, so
    the passage came first; the question's language now weighs once (its mark), and its
    function words not at all."""
    index = LexicalIndex(tmp_path / "index")
    faq = (
        "Los nuevos módulos se añadirán a la barra en cuanto Starship se actualice, y la "
        "configuración se mantiene."
    )
    row = "Apellido: PONTORIERO | Nombre: MARÍA PAULA | Monto: $ 10.000,00 | Fecha: 12/09"
    english = [
        f"The {topic} report lists the figures for the year and the notes that explain them."
        for topic in ("trade", "budget", "census", "transport", "energy", "health")
    ]
    index.publish_many(
        {
            "faq": [chunk("faq", faq)],
            "donors": [chunk("donors", row)],
            **{f"en{n}": [chunk(f"en{n}", text)] for n, text in enumerate(english)},
        }
    )

    assert first_hits(index, "¿Cuánto aportó Pontoriero a la campaña?")[0] == "donors"


def test_a_chunk_of_a_stemmed_language_carries_its_mark_once(tmp_path: Path) -> None:
    """Every chunk read in a stemmed language, a row of no language of its own in a Spanish
    document among them, holds the language's mark; an English chunk holds none. A Spanish
    question ranks the Spanish table's row over an English file's row that names the country
    more often; an English question of the same words ranks by its words."""
    index = LexicalIndex(tmp_path / "index")
    spanish = [
        "Las regiones del mundo y sus países, según la división de estadística de las Naciones "
        "Unidas, con sus códigos.",
        "Region Name: Asia | Sub-region Name: Asia meridional | Country or Area: India",
        "Region Name: Asia | Sub-region Name: Asia oriental | Country or Area: China",
    ]
    english = "country: India | year: 2000 | country: India | year: 2001 | country: India"
    index.publish_many(
        {
            "unsd-es": [chunk("unsd-es", text, n) for n, text in enumerate(spanish)],
            "codes": [chunk("codes", english)],
        }
    )
    marked = index.rank_terms(
        [(lexical.STEM_FIELD, 1.0, [lexical.language_mark("es")])], SearchFilter(), 10
    )
    assert len(marked) == len(spanish)

    hits = index.search("¿A qué subregión pertenece India?", limit=5)
    assert hits[0].chunk.text == spanish[1]
    assert first_hits(index, "which subregion is India in")[0] == "codes"


def test_the_window_rerank_reads_a_questions_words_without_its_function_words(
    tmp_path: Path,
) -> None:
    """Of two passages fused level, the one whose sentence holds what a French question asks
    ("examinera", "texte") comes first, not the one that holds its "qui", "le", "après" and
    "l'" around one of its words: the rerank reads the words BM25 searches."""
    index = LexicalIndex(tmp_path / "index")
    answering = chunk("senat", "Le Sénat examinera ensuite le texte en séance publique.")
    chatter = chunk(
        "blog", "Qui a dit que le vote viendrait après la pause de l'Assemblée ce soir ?"
    )
    others = {
        f"other{n}": [chunk(f"other{n}", f"La réunion {n} a eu lieu dans la salle du conseil.")]
        for n in range(6)
    }
    index.publish_many({"senat": [answering], "blog": [chatter], **others})
    question = "Qui examinera le texte après l'Assemblée"
    assert index.question_terms(question) == ["examinera", "texte", "assemblee"]
    assert index.question_terms("sous-région de Haïti") == ["region", "haiti"]
    assert index.question_terms("read_csv HTTP2") == index.query_terms("read_csv HTTP2")

    level = [Fused(hit.chunk_id, 0.2, (), chunk_key(hit.chunk_id)) for hit in (chatter, answering)]
    reranked = LexicalLeg(index).rerank_passages(question, level)
    assert [hit.chunk_id for hit in reranked] == [answering.chunk_id, chatter.chunk_id]
