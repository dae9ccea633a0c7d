"""The unseen retrieval set (bench/retrieval/unseen) is well-formed: every question's document is
there and recorded with its source, each slice the issue sets a floor for has at least 30
questions in each half, and the halves are one split, made once, that new questions never move."""

from __future__ import annotations

import json

from bench.retrieval_unseen import DOCS, FILTER_KEYS, HALVES, QUESTIONS, SLICES, holds, split

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
