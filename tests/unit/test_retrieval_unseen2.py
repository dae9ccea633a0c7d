"""The second tuning set (bench/retrieval/unseen2) is well-formed and the unseen bench runs it:
every question's document is under its docs/ and recorded with its source and licence, every
question is a tuning question (the set is never judged on), none of its documents is one of the
first set's, and `--docs` points the bench at its folder (the first set's when not given)."""

from __future__ import annotations

import json
from pathlib import Path

from bench.retrieval_unseen import DOCS, SLICES, parse_args

UNSEEN2 = DOCS.parent.parent / "unseen2"
SPEC = json.loads((UNSEEN2 / "questions.json").read_text())
SOURCES = json.loads((UNSEEN2 / "sources.json").read_text())["documents"]


def test_every_question_names_a_recorded_document_of_its_folder() -> None:
    recorded = {entry["path"] for entry in SOURCES}
    present = {str(p.relative_to(UNSEEN2 / "docs")) for p in (UNSEEN2 / "docs").rglob("*.*")}
    assert recorded == present
    assert {q["document"] for q in SPEC["questions"]} <= present
    assert all(
        entry["repository"] and len(entry["commit"]) == 40 and entry["licence"] for entry in SOURCES
    )


def test_every_question_is_a_tuning_question_the_bench_can_read() -> None:
    ids = [q["id"] for q in SPEC["questions"]]
    assert len(ids) == len(set(ids))
    for q in SPEC["questions"]:
        assert q["half"] == "tuning", q["id"]
        assert q["slice"] in SLICES and q["question"].strip() and q["answer"], q["id"]
        assert isinstance(q["locator"], dict), q["id"]


def test_no_document_is_one_of_the_first_sets() -> None:
    first = json.loads((DOCS.parent / "sources.json").read_text())["documents"]
    assert not {e["sha256"] for e in first} & {e["sha256"] for e in SOURCES}


def test_docs_names_the_folder_questions_are_resolved_against() -> None:
    assert parse_args([]).docs == DOCS
    chosen = parse_args(["--docs", str(UNSEEN2 / "docs")]).docs
    assert chosen == UNSEEN2 / "docs" and isinstance(chosen, Path)
