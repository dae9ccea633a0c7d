# ruff: noqa: E501  (one question a line)
"""More natural questions in German, French and Spanish (ids u421 on), added after the first
split so that each language has enough questions to read per half; written by hand from the
pages, then given halves by bench/retrieval_unseen.py --split without moving any other."""

import html
import json
import re
import sys
from pathlib import Path

QUESTIONS = Path(__file__).resolve().parents[1] / "questions.json"
MORE = [
    (
        "de",
        "html/heise.html",
        "Wie viel kostet 1Password im Mac App Store",
        "1Password kostet aktuell knapp 50 Euro im Mac App Store",
    ),
    (
        "de",
        "html/heise.html",
        "Wie kommt der Startwert für die Einmal-Passwörter in die App",
        "Das geht unter anderem per QR-Code, den die App über ein neues Scanfenster selbst einlesen kann",
    ),
    (
        "de",
        "html/heise.html",
        "Kann man aus dem Passwortmanager heraus telefonieren",
        "So gibt es die Möglichkeit, FaceTime-Audio- oder Skype-Anrufe aus 1Password zu starten",
    ),
    (
        "de",
        "html/heise.html",
        "Welche Firmen setzen zeitbasierte Einmalpasswörter ein",
        "den unter anderem Firmen wie Evernote, Dropbox oder Google ei",
    ),
    (
        "de",
        "md/starship-de-DE-migrating-to-0.45.0.md",
        "Warum hat Version 0.45.0 die Konfiguration grundlegend geändert",
        "Starship v0.45.0 ist ein Release mit bahnbrechenden Änderungen in Vorbereitung auf das große v1.0.0.",
    ),
    (
        "de",
        "md/starship-de-DE-guide.md",
        "Wo finde ich die Installationsanleitung für mein Betriebssystem",
        "Wähle dein Betriebssystem aus der Liste für detaillierte Installationsanweisungen:",
    ),
    (
        "de",
        "md/starship-de-DE-guide.md",
        "Was für ein Prompt ist Starship",
        "Der minimalistische, super schnelle und unendlich anpassbare Prompt für jede Shell!",
    ),
    (
        "de",
        "md/starship-de-DE-faq.md",
        "Welche Shell wurde im Demo-Video benutzt",
        "In der Demo wurde die",
    ),
    (
        "fr",
        "html/lemonde-1.html",
        "Qui contrôlera les techniques de surveillance",
        "Le contrôle de cette surveillance sera confié à une nouvelle autorité administrative indépendante",
    ),
    (
        "fr",
        "html/lemonde-1.html",
        "L'avis de la commission de contrôle est-il obligatoire à suivre",
        "L’avis de la CNCTR ne sera pas contraignant",
    ),
    (
        "fr",
        "html/lemonde-1.html",
        "Que surveilleraient les boîtes noires installées chez les fournisseurs d'accès",
        "ne serait pas surveillé, mais uniquement les métadonnées",
    ),
    (
        "fr",
        "html/lemonde-1.html",
        "Combien de députés socialistes ont voté contre le texte",
        "Ont voté contre : 10 députés socialistes (sur 288)",
    ),
    (
        "fr",
        "html/lemonde-1.html",
        "Les mineurs peuvent-ils être inscrits au fichier des terroristes",
        "Les mineurs pourront aussi être inscrits dans ce fichier et leurs données conservées jusqu’à dix ans.",
    ),
    (
        "fr",
        "html/liberation-1.html",
        "Combien de morts a fait le tremblement de terre au Népal",
        "Le séisme a fait près de 5 500 morts et touche huit des 28 millions d’habitants du Népal.",
    ),
    (
        "fr",
        "html/liberation-1.html",
        "Combien de Français ont demandé à être rapatriés",
        "Environ 400 Français ont demandé à être rapatriés dans les vols mis en place par la France.",
    ),
    (
        "fr",
        "md/starship-fr-FR-migrating-to-0.45.0.md",
        "Que remplace la valeur format depuis la version 0.45",
        "Avant la v0.45.0, `prompt_order` acceptait un tableau de noms de modules",
    ),
    (
        "fr",
        "md/starship-fr-FR-guide.md",
        "Comment installer Starship avec un gestionnaire de paquets",
        "Installez Starship en utilisant l’un de ces gestionnaires de paquets:",
    ),
    (
        "es",
        "html/la-nacion.html",
        "Quién es Andrés Malamud",
        "Andrés Malamud es politólogo e investigador en la Universidad de Lisboa.",
    ),
    (
        "es",
        "html/la-nacion.html",
        "Qué dice la Constitución sobre los pueblos indígenas",
        "reconocer la preexistencia étnica y cultural de los pueblos indígenas argentinos",
    ),
    (
        "es",
        "html/la-nacion.html",
        "Cómo evolucionó el pensamiento de Ocalan en la cárcel",
        "Desde su arresto, Ocalan transformó su pensamiento",
    ),
    (
        "es",
        "html/la-nacion.html",
        "Cuántos habitantes tienen las provincias patagónicas",
        "Las cinco provincias patagónicas tienen una población similar a la de La Matanza.",
    ),
    (
        "es",
        "html/la-nacion.html",
        "Qué quedó en evidencia con la noticia falsa",
        "Dos hechos quedaron en evidencia: primero, que hay periodistas que no chequean la información",
    ),
    (
        "es",
        "md/starship-es-ES-migrating-to-0.45.0.md",
        "Para qué versión se preparaban los cambios de la 0.45.0",
        "Starship v0.45.0 es un lanzamiento que contiene cambios de ruptura, en preparación para la gran v1.0.0.",
    ),
    (
        "es",
        "md/starship-es-ES-guide.md",
        "Dónde están las instrucciones de instalación para mi sistema operativo",
        "Seleccione su sistema operativo de la lista de abajo para ver las instrucciones de instalación:",
    ),
]


def line_of(document: str, text: str) -> int | None:
    """The source line holding the answer's start, markup and entities aside."""
    lines = (QUESTIONS.parent / "docs" / document).read_text().splitlines()
    for n, line in enumerate(lines, 1):
        if text[:40] in line or text[:30] in html.unescape(re.sub(r"<[^>]+>", "", line)):
            return n
    return None


def main() -> None:
    path = Path(sys.argv[1]) if len(sys.argv) > 1 else QUESTIONS
    spec = json.loads(path.read_text())
    have = {q["id"] for q in spec["questions"]}
    for n, (language, document, question, answer) in enumerate(MORE, 421):
        if f"u{n}" in have:
            continue
        line = line_of(document, answer)
        spec["questions"].append(
            {
                "id": f"u{n}",
                "slice": "natural",
                "language": language,
                "question": question,
                "document": document,
                "locator": {"line": line} if line else {},
                "answer": answer,
            }
        )
    path.write_text(json.dumps(spec, indent=1, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
