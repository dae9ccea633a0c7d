# ruff: noqa: E501  (one question a line)
"""The office questions, added after the first split (ids u401 on): the DOCX, PPTX and XLSX
documents of the set hold little text of their own (parser test files), so a handful, written
by hand; bench/retrieval_unseen.py --split then gave them halves without moving any other."""

import json
import sys
from pathlib import Path

QUESTIONS = Path(__file__).resolve().parents[1] / "questions.json"
PPTX = "pptx/markitdown_test.pptx"
XLSX = "xlsx/markitdown_test.xlsx"
SHEET2 = "09060124-b5e7-4717-9d07-3c046eb"
OFFICE = [
    (
        "exact",
        "1b92870d-e3b5-4e65-8153-919f4ff45592",
        PPTX,
        "1b92870d-e3b5-4e65-8153-919f4ff45592",
        {"page": 3},
        None,
    ),
    (
        "exact",
        f"sheet {SHEET2}",
        XLSX,
        ["ColA: 1 | ColB: 2 | ColC: 3 | ColD: 4"],
        {"sheet": SHEET2, "row": 2},
        None,
    ),
    (
        "natural",
        "which string should a description of the test image mention",
        PPTX,
        'mention the string "5bda1dd6"',
        {"page": 6},
        None,
    ),
    (
        "natural",
        "what does the nested shape on the slides contain",
        PPTX,
        "This is a nested shape with content in 2 shapes",
        {"page": 5},
        None,
    ),
    (
        "table",
        "in Sheet1, what is Delta where Alpha is 76",
        XLSX,
        ["Alpha: 76 | Beta: 89 | Gamma: 33 | Delta: 42"],
        {"sheet": "Sheet1", "row": 3},
        None,
    ),
    (
        "filtered",
        "table to test parsing ColA ColF",
        PPTX,
        "ColA | ColB | ColC | ColD | ColE | ColF",
        {"page": 3},
        {"format": "pptx"},
    ),
    (
        "filtered",
        "random table for docx parsing",
        "docx/markitdown_test.docx",
        "Here is a random table for .docx parsing test purposes",
        {},
        {"format": "docx", "path": "docx/markitdown_test.docx"},
    ),
    (
        "filtered",
        "Alpha Beta Gamma Delta",
        XLSX,
        ["Alpha: 89 | Beta: 82 | Gamma: 100 | Delta: 12"],
        {"sheet": "Sheet1", "row": 2},
        {"format": "xlsx"},
    ),
]


def main() -> None:
    path = Path(sys.argv[1]) if len(sys.argv) > 1 else QUESTIONS
    spec = json.loads(path.read_text())
    have = {q["id"] for q in spec["questions"]}
    for n, (slice_, question, document, answer, locator, filter_) in enumerate(OFFICE, 401):
        if f"u{n}" in have:
            continue
        entry = {
            "id": f"u{n}",
            "slice": slice_,
            "language": "en",
            "question": question,
            "document": document,
            "locator": locator,
            "answer": answer,
        }
        if filter_:
            entry["filter"] = filter_
        spec["questions"].append(entry)
    path.write_text(json.dumps(spec, indent=1, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
