"""The third tuning set (bench/retrieval/unseen3) is well-formed: every question's document is
under its docs/ and recorded with its source and licence, every question is a tuning question
(the set is never judged on), and none of its documents is one of the first or second set's."""

from __future__ import annotations

import json

from bench.retrieval_unseen import DOCS, SLICES

RETRIEVAL = DOCS.parent.parent
UNSEEN3 = RETRIEVAL / "unseen3"
SPEC = json.loads((UNSEEN3 / "questions.json").read_text())
SOURCES = json.loads((UNSEEN3 / "sources.json").read_text())["documents"]


def test_every_question_names_a_recorded_document_of_its_folder() -> None:
    recorded = {entry["path"] for entry in SOURCES}
    present = {str(p.relative_to(UNSEEN3 / "docs")) for p in (UNSEEN3 / "docs").rglob("*.*")}
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


def test_no_document_is_one_of_the_earlier_sets() -> None:
    ours = {entry["sha256"] for entry in SOURCES}
    for earlier in ("unseen", "unseen2"):
        documents = json.loads((RETRIEVAL / earlier / "sources.json").read_text())["documents"]
        assert not ours & {entry["sha256"] for entry in documents}, earlier
        assert not {e["path"].rsplit("/", 1)[-1] for e in documents} & {
            e["path"].rsplit("/", 1)[-1] for e in SOURCES
        }, earlier
