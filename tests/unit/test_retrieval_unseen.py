"""The unseen retrieval set (bench/retrieval/unseen) is well-formed: every question's document is
there and recorded with its source, each slice the issue sets a floor for has at least 30
questions in each half, and the halves are one split, made once, that new questions never move."""

from __future__ import annotations

import json

from bench.retrieval_unseen import (
    DOCS,
    FILTER_KEYS,
    HALVES,
    QUESTIONS,
    SLICES,
    holds,
    names_the_answer,
    split,
)

UNSEEN = DOCS.parent
SPEC = json.loads(QUESTIONS.read_text())
QUESTIONS_ = SPEC["questions"]


def test_every_document_named_by_a_question_exists() -> None:
    missing = {q["document"] for q in QUESTIONS_ if not (DOCS / q["document"]).is_file()}
    assert not missing


def test_every_document_is_recorded_with_its_source_and_licence() -> None:
    sources = json.loads((UNSEEN / "sources.json").read_text())["documents"]
    recorded = {entry["path"] for entry in sources}
    present = {str(p.relative_to(DOCS)) for p in DOCS.rglob("*") if p.is_file()}
    assert recorded == present
    assert all(
        entry["repository"] and len(entry["commit"]) == 40 and entry["licence"] for entry in sources
    )
    assert len(present) >= 150


def test_every_slice_has_thirty_questions_in_each_half() -> None:
    for slice_name in SLICES:
        for half in HALVES:
            count = sum(q["slice"] == slice_name and q["half"] == half for q in QUESTIONS_)
            assert count >= 30, (slice_name, half, count)


def test_halves_do_not_overlap() -> None:
    ids = [q["id"] for q in QUESTIONS_]
    assert len(ids) == len(set(ids))
    assert all(q["half"] in HALVES for q in QUESTIONS_)
    texts = {
        half: {(q["question"], q["document"]) for q in QUESTIONS_ if q["half"] == half}
        for half in HALVES
    }
    assert not texts["tuning"] & texts["judging"]


def test_questions_carry_what_the_bench_reads() -> None:
    for q in QUESTIONS_:
        assert q["slice"] in SLICES, q["id"]
        assert q["question"].strip() and q["answer"], q["id"]
        assert isinstance(q["locator"], dict), q["id"]
        if q["slice"] == "filtered":
            assert q["filter"] and set(q["filter"]) <= set(FILTER_KEYS), q["id"]


def test_split_gives_halves_to_new_questions_only_balanced_and_the_same_each_time() -> None:
    written = [dict(q) for q in QUESTIONS_[:40]]
    new = [
        {"id": f"new{n}", "slice": "table", "language": "xx", "question": str(n)} for n in range(7)
    ]
    copy = [dict(q) for q in new]
    before = [q["half"] for q in written]
    assert split(written + new) == 7
    assert [q["half"] for q in written] == before
    assert sorted(q["half"] for q in new) == ["judging"] * 3 + ["tuning"] * 4
    split(copy)
    assert [q["half"] for q in copy] == [q["half"] for q in new]


def test_a_markdown_answer_copied_with_code_spans_is_held_by_the_passage_without_them() -> None:
    # The reader keeps a code span's words, not its backticks; answers were copied from source.
    passage = (
        "Fügen Sie pkgs.starship zu environment.systemPackages in Ihrer configuration.nix hinzu"
    )
    answer = "zu `environment.systemPackages` in Ihrer `configuration.nix` hinzu"
    assert holds(passage, answer, "md/starship-de-DE-installing.md")
    assert not holds(passage, answer, "sql/mysql-sakila-schema.sql")


PAGE = "\n".join(
    [
        "<html><head>",
        '<meta name="description" content="The Quest Pro has a resolution of 1800 x 1920 per eye.">',
        "</head><body>",
        "<h1>Hands-on</h1>",
        "<p>The <b>Quest Pro</b> has a resolution",
        "of 1800 x 1920 per eye.</p>",
        "<p>Another paragraph.</p>",
        "</body></html>",
    ]
)
SAID_TWICE = {
    "document": "html/page.html",
    "answer": "The Quest Pro has a resolution of 1800 x 1920 per eye.",
    "locator": {"line": 2},
}


def test_a_line_locator_names_the_answer_where_the_source_lines_it_cites_hold_it() -> None:
    # The label names the head's meta description (line 2), which no passage holds; the body's
    # lines, tags out, hold the same sentence, so a hit citing them names the answer's place.
    assert names_the_answer(SAID_TWICE, {"line_start": 4, "line_end": 6}, PAGE, {})
    assert names_the_answer(SAID_TWICE, {"line_start": 2, "line_end": 2}, PAGE, {})
    assert not names_the_answer(SAID_TWICE, {"line_start": 6, "line_end": 7}, PAGE, {})
    assert not names_the_answer(SAID_TWICE, {"page_start": 1, "page_end": 1}, PAGE, {})


def test_a_key_path_is_named_by_the_lines_of_a_passage_packing_its_table() -> None:
    # Seed 000 keeps a merged locator's key_path only when every block names the same one: a
    # passage of a TOML table with its keys cites lines, and those lines hold the key's.
    question = {"document": "toml/x.toml", "answer": "b = 1", "locator": {"key_path": "a.b"}}
    key_lines = {"a": (3, 3), "a.b": (5, 5)}
    assert names_the_answer(question, {"line_start": 3, "line_end": 9}, "", key_lines)
    assert not names_the_answer(question, {"line_start": 6, "line_end": 9}, "", key_lines)
    assert names_the_answer(question, {"key_path": "a.b", "line_start": 5, "line_end": 5}, "", {})
    assert not names_the_answer(
        question, {"key_path": "a.c", "line_start": 5, "line_end": 5}, "", key_lines
    )
