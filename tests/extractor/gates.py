"""Scoring the reference extractor's text parsers against labelled fixtures.

Each fixture is a source file and `<name>.gold.json` beside it under
`tests/extractor/gold/<format>/`, written by hand from the seed's rules. The metrics are the
seed's ("The metrics"), each a share in [0, 1] over a whole slice (every fixture of a format),
so a good fixture cannot hide a bad one's misses in a mean of means.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
GOLD = Path(__file__).resolve().parent / "gold"
TABLE = ROOT / "docs" / "qualification.md"
SOURCE_SUFFIX = {
    "markdown": ".md",
    "text": ".txt",
    "html": ".html",
    "sql": ".sql",
    "toml": ".toml",
    "csv": ".csv",
    "xlsx": ".xlsx",
    "parquet": ".parquet",
}

Artifact = dict[str, Any]
Gold = dict[str, Any]


@dataclass(frozen=True)
class Floor:
    format: str
    slice: str
    metric: str
    floor: float


def floors() -> list[Floor]:
    """The qualification table, read from docs/qualification.md."""
    rows = []
    for line in TABLE.read_text(encoding="utf-8").splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) == 4 and re.fullmatch(r"\d\.\d\d", cells[3]):
            rows.append(Floor(cells[0], cells[1], cells[2], float(cells[3])))
    return rows


@dataclass(frozen=True)
class Fixture:
    file_name: str
    source: bytes
    gold: Gold

    @property
    def name(self) -> str:
        return self.file_name.rsplit(".", 1)[0]


def fixtures(fmt: str) -> list[Fixture]:
    """Each `<name>.gold.json` with the one source file of that name beside it."""
    folder = GOLD / fmt
    found = []
    for gold_path in sorted(folder.glob("*.gold.json")):
        stem = gold_path.name.removesuffix(".gold.json")
        [source] = [p for p in folder.glob(f"{stem}.*") if not p.name.endswith(".gold.json")]
        found.append(Fixture(source.name, source.read_bytes(), json.loads(gold_path.read_text())))
    return found


class Share:
    """Hits over a total, summed across a slice."""

    def __init__(self) -> None:
        self.hits = 0.0
        self.total = 0.0

    def add(self, hits: float, total: float) -> None:
        self.hits += hits
        self.total += total

    @property
    def value(self) -> float:
        return 1.0 if self.total == 0 else self.hits / self.total


def words(text: str) -> list[str]:
    return re.findall(r"\w+", text.lower())


def normalised(text: str) -> str:
    return " ".join(text.split())


def word_overlap(gold_text: Iterable[str], parse_text: Iterable[str]) -> tuple[int, int, int]:
    """(shared words, gold words, parse words) as multisets."""
    gold = Counter(w for t in gold_text for w in words(t))
    parse = Counter(w for t in parse_text for w in words(t))
    return sum((gold & parse).values()), sum(gold.values()), sum(parse.values())


def headings(blocks: Iterable[dict[str, Any]]) -> list[tuple[str, int]]:
    return [
        (normalised(b["text"]), int(b.get("depth") or 1)) for b in blocks if b["type"] == "heading"
    ]


def level_ranks(levels: Iterable[int]) -> dict[int, int]:
    return {level: rank for rank, level in enumerate(sorted(set(levels)))}


def heading_scores(gold: Gold, artifact: Artifact, f1: Share, level: Share) -> None:
    gold_heads, parse_heads = headings(gold["blocks"]), headings(artifact["blocks"])
    gold_ranks = level_ranks(d for _, d in gold_heads)
    parse_ranks = level_ranks(d for _, d in parse_heads)
    unmatched = list(parse_heads)
    matched = 0
    for text, depth in gold_heads:
        match = next((h for h in unmatched if h[0] == text), None)
        if match is None:
            continue
        unmatched.remove(match)
        matched += 1
        level.add(gold_ranks[depth] == parse_ranks[match[1]], 1)
    # F1 summed as 2 * matched over (gold + parse), across the slice.
    f1.add(2 * matched, len(gold_heads) + len(parse_heads))


def exact_span_locator(gold: Gold, artifact: Artifact, share: Share) -> None:
    spans = {
        (b["locator"].get("line_start"), b["locator"].get("line_end"), normalised(b["text"]))
        for b in artifact["blocks"]
    }
    for block in gold["blocks"]:
        key = (block["line_start"], block["line_end"], normalised(block["text"]))
        share.add(key in spans, 1)


def text_scores(gold: Gold, artifact: Artifact, recall: Share, precision: Share) -> None:
    gold_text = [_gold_block_text(b) for b in gold["blocks"]]
    shared, gold_words, parse_words = word_overlap(
        gold_text, (b["text"] for b in artifact["blocks"])
    )
    recall.add(shared, gold_words)
    precision.add(shared, parse_words)


def _gold_block_text(block: dict[str, Any]) -> str:
    if "rows" in block:
        return "\n".join(" | ".join(row) for row in block["rows"])
    return str(block["text"])


def table_rows(gold: Gold, artifact: Artifact, share: Share) -> None:
    parse_rows = [
        [normalised(cell) for cell in line.split(" | ")]
        for b in artifact["blocks"]
        if b["type"] == "table"
        for line in b["text"].splitlines()
    ]
    for block in gold["blocks"]:
        for row in block.get("rows", []):
            share.add([normalised(c) for c in row] in parse_rows, 1)


def sql_scores(
    gold: Gold, artifact: Artifact, statements: Share, locator: Share, names: Share
) -> None:
    blocks = [b for b in artifact["blocks"] if b["type"] == "sql_statement"]
    for statement in gold["statements"]:
        whole = [b for b in blocks if statement["text_contains"] in b["text"]]
        at_span = [
            b
            for b in whole
            if (b["locator"].get("line_start"), b["locator"].get("line_end"))
            == (statement["line_start"], statement["line_end"])
        ]
        statements.add(bool(whole), 1)
        locator.add(bool(at_span), 1)
        keys = set(whole[0]["keys"]) if whole else set()
        names.add(sum(name in keys for name in statement["names"]), len(statement["names"]))


def toml_scores(gold: Gold, artifact: Artifact, key_paths: Share, locator: Share) -> None:
    for key in gold["keys"]:
        holders = [b for b in artifact["blocks"] if key["path"] in b.get("keys", [])]
        key_paths.add(bool(holders), 1)
        locator.add(
            any(
                b["locator"]["line_start"] <= key["line"] <= b["locator"]["line_end"]
                for b in holders
            ),
            1,
        )


def table_scores(gold: Gold, artifact: Artifact, typed_cells: Share, headers: Share) -> None:
    """Cells read with their value and their column's type, and columns read with their names,
    each over the gold's count or the extraction's, whichever is larger (an extra row, column or
    table counts as a miss)."""
    gold_tables, our_tables = gold["tables"], artifact.get("tables", [])
    for index in range(max(len(gold_tables), len(our_tables))):
        ours = our_tables[index] if index < len(our_tables) else {"columns": [], "rows": []}
        theirs = gold_tables[index] if index < len(gold_tables) else {"columns": [], "rows": []}
        names = [c["name"] for c in theirs["columns"]], [c["name"] for c in ours["columns"]]
        headers.add(sum(a == b for a, b in zip(*names, strict=False)), max(map(len, names)))
        cells = _typed_cells(theirs), _typed_cells(ours)
        typed_cells.add(len(cells[0] & cells[1]), max(map(len, cells)))


def _typed_cells(table: dict[str, Any]) -> set[tuple[int, int, str, str]]:
    types = [column["type"] for column in table["columns"]]
    return {
        (
            row,
            column,
            json.dumps(value, sort_keys=True),
            types[column] if column < len(types) else "",
        )
        for row, values in enumerate(table["rows"])
        for column, value in enumerate(values)
        if value is not None
    }


def score(fmt: str, extract: Callable[[bytes, str], Artifact]) -> dict[str, float]:
    """Every metric of `fmt`'s qualification rows over all of its fixtures."""
    shares: dict[str, Share] = {}

    def share(metric: str) -> Share:
        return shares.setdefault(metric, Share())

    for fixture in fixtures(fmt):
        artifact = extract(fixture.source, fixture.file_name)
        gold = fixture.gold
        if fmt in ("markdown", "text", "html"):
            text_scores(gold, artifact, share("text recall"), share("text precision"))
        if fmt in ("markdown", "html"):
            heading_scores(gold, artifact, share("heading F1"), share("heading level"))
        if fmt in ("markdown", "text"):
            exact_span_locator(gold, artifact, share("locator"))
        if fmt == "html":
            table_rows(gold, artifact, share("table rows"))
        if fmt == "sql":
            sql_scores(gold, artifact, share("statements"), share("locator"), share("names"))
        if fmt == "toml":
            toml_scores(gold, artifact, share("key paths"), share("locator"))
        if fmt in ("csv", "xlsx", "parquet"):
            table_scores(gold, artifact, share("typed cells"), share("headers"))
    return {metric: s.value for metric, s in shares.items()}
