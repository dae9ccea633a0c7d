"""SQL conformance: the reference extractor's SQL parser on the shared corpus's real SQL.

The corpus (../shared/corpus, not changed here) holds 75 scripts from sqlfluff's dialect fixtures
(ansi, postgres, sqlite), each with sqlfluff's parse tree (`<name>.sql.yml`) and the list of its
top-level statements (`<name>.sql.gold.json`, each statement's code tokens joined by spaces).

Two numbers, per dialect folder and overall, as the seed's metrics define them:

- statements found whole: the share of the gold statements that some sql_statement block holds
  whole, compared as the corpus scorer does (comments and whitespace removed, case folded, a
  trailing ";" dropped), each block matching one statement at most;
- names among keys: the share of the objects a statement defines or reads (sqlfluff's
  table_reference nodes; the names of its CTEs and string literals aside) found among the keys of
  the block that holds the statement, or of the blocks it was cut into when it is not found whole
  (a trigger's BEGIN ... END body is cut at its inner ";", as the seed says). A second line counts every object reference sqlfluff marks (tables, sequences,
  indexes, schemas, triggers, databases, extensions, and functions and other objects), columns
  and roles aside.

Each script is read twice: with the dialect detected (no option) and with it declared where
sqlglot has one (postgres, sqlite; sqlglot has no ANSI dialect, so ansi is detected both times).
Every artifact is checked with the server's parse_artifact. Run from the repository's root:

    .venv/bin/python bench/conformance_sql.py [--corpus ../shared/corpus] [--details]
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from extractor_sandbox.formats.sql import extract_sql  # noqa: E402
from loom_dagster.contract.validate import parse_artifact  # noqa: E402

DEFAULT_CORPUS = ROOT.parent / "shared" / "corpus"
DECLARED = {"postgres": "postgres", "sqlite": "sqlite"}
TABLE_REFERENCES = frozenset({"table_reference"})
OBJECT_REFERENCES = frozenset(
    {
        "table_reference",
        "sequence_reference",
        "index_reference",
        "schema_reference",
        "trigger_reference",
        "database_reference",
        "extension_reference",
        "object_reference",
    }
)
IDENTIFIER_LEAVES = frozenset({"naked_identifier", "quoted_identifier", "identifier"})


def strip_sql(text: str) -> str:
    """The corpus scorer's comparison form of a statement."""
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    text = re.sub(r"--[^\n]*", " ", text)
    return re.sub(r"\s+", "", text).casefold().rstrip(";")


@dataclass
class GoldStatement:
    text: str
    tables: list[str]
    objects: list[str]


@dataclass
class Tally:
    statements: int = 0
    whole: int = 0
    tables: int = 0
    tables_found: int = 0
    objects: int = 0
    objects_found: int = 0
    files: int = 0
    invalid: int = 0
    seconds: float = 0.0
    misses: list[str] = field(default_factory=list)

    def add(self, other: Tally) -> None:
        for name in (
            "statements",
            "whole",
            "tables",
            "tables_found",
            "objects",
            "objects_found",
            "files",
            "invalid",
        ):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.seconds += other.seconds
        self.misses.extend(other.misses)


def gold_statements(gold_json: Path, gold_yml: Path) -> list[GoldStatement]:
    texts = json.loads(gold_json.read_text(encoding="utf-8"))["statements"]
    tree = yaml.safe_load(gold_yml.read_text(encoding="utf-8"))
    nodes = [item["statement"] for item in _items(tree["file"]) if "statement" in item]
    if len(nodes) != len(texts):
        raise SystemExit(f"{gold_yml}: {len(nodes)} statements in the tree, {len(texts)} in gold")
    statements = []
    for text, node in zip(texts, nodes, strict=True):
        ctes = {name for kind, name in _references(node) if kind == "cte"}
        tables = [n for k, n in _references(node) if k in TABLE_REFERENCES and n not in ctes]
        objects = [n for k, n in _references(node) if k in OBJECT_REFERENCES and n not in ctes]
        statements.append(GoldStatement(text, _unique(tables), _unique(objects)))
    return statements


def _items(node: Any) -> list[dict[str, Any]]:
    if isinstance(node, dict):
        return [{key: value} for key, value in node.items()]
    return [item for item in node if isinstance(item, dict)]


def _references(node: Any) -> Iterator[tuple[str, str]]:
    """(kind, name) of every reference in a sqlfluff parse tree node, and ("cte", name) for CTEs."""
    if isinstance(node, list):
        for item in node:
            yield from _references(item)
    elif isinstance(node, dict):
        for key, value in node.items():
            if key.endswith("_reference"):
                name = ".".join(_identifiers(value))
                if name:
                    yield key, name
            elif key == "common_table_expression":
                first = _identifiers(value[0] if isinstance(value, list) else value, top=True)
                if first:
                    yield "cte", first[0]
                yield from _references(value)
            else:
                yield from _references(value)


def _identifiers(node: Any, *, top: bool = False) -> list[str]:
    parts: list[str] = []
    if isinstance(node, dict):
        for key, value in node.items():
            if key in IDENTIFIER_LEAVES and isinstance(value, str) and not value.startswith("'"):
                parts.append(_unquote(value))
            elif not top:
                parts.extend(_identifiers(value))
    elif isinstance(node, list):
        for item in node:
            parts.extend(_identifiers(item, top=top))
    return parts


def _unquote(name: str) -> str:
    if len(name) >= 2 and name[0] == name[-1] and name[0] in "\"`'":
        return name[1:-1].replace(name[0] * 2, name[0])
    if len(name) >= 2 and name[0] == "[" and name[-1] == "]":
        return name[1:-1]
    return name


def _unique(items: list[str]) -> list[str]:
    return list(dict.fromkeys(items))


def score(source: Path, gold: list[GoldStatement], options: dict[str, str], label: str) -> Tally:
    original = source.read_bytes()
    text = original.decode("utf-8")
    if text.startswith("\ufeff"):
        text = text[1:]
    started = time.perf_counter()
    artifact = extract_sql(text, options)
    tally = Tally(files=1, seconds=time.perf_counter() - started)
    raw = json.dumps(artifact, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    try:
        parse_artifact(raw.encode("utf-8"), expected_format="sql", original_size=len(original))
    except Exception as error:  # the validator's refusal, reported rather than raised
        tally.invalid += 1
        tally.misses.append(f"{label}: invalid artifact: {error}")
    blocks = [block for block in artifact["blocks"] if block["type"] == "sql_statement"]
    free = Counter(strip_sql(block["text"]) for block in blocks)
    by_text: dict[str, list[dict[str, Any]]] = {}
    for block in blocks:
        by_text.setdefault(strip_sql(block["text"]), []).append(block)
    for statement in gold:
        tally.statements += 1
        wanted = strip_sql(statement.text)
        holders = by_text.get(wanted, [])
        if free[wanted] > 0:
            free[wanted] -= 1
            tally.whole += 1
        else:
            tally.misses.append(f"{label}: not found whole: {statement.text[:120]}")
            # The blocks that hold it, or the pieces it was cut into (a body cut at its ";").
            holders = [
                block
                for block in blocks
                if wanted in strip_sql(block["text"])
                or (strip_sql(block["text"]) and strip_sql(block["text"]) in wanted)
            ]
        keys = {key for block in holders for key in block["keys"]}
        for name in statement.tables:
            tally.tables += 1
            if name in keys:
                tally.tables_found += 1
            else:
                tally.misses.append(f"{label}: table {name!r} not a key of: {statement.text[:80]}")
        for name in statement.objects:
            tally.objects += 1
            tally.objects_found += name in keys
    return tally


def share(found: int, total: int) -> str:
    return f"{found / total:.4f} ({found}/{total})" if total else "n/a"


def main() -> None:
    arguments = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    arguments.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    arguments.add_argument("--details", action="store_true", help="list every miss")
    parsed = arguments.parse_args()
    inputs = parsed.corpus / "inputs" / "sql"
    golds = parsed.corpus / "gold" / "sql"
    for mode in ("detected", "declared"):
        overall = Tally()
        print(f"## dialect {mode}")
        print(
            "| folder | files | statements found whole | table names among keys | object names among keys | invalid artifacts | seconds |"
        )
        print("|---|---|---|---|---|---|---|")
        for folder in sorted(path for path in inputs.iterdir() if path.is_dir()):
            tally = Tally()
            declared = DECLARED.get(folder.name) if mode == "declared" else None
            options = {"sql_dialect": declared} if declared else {}
            for source in sorted(folder.glob("*.sql")):
                gold_dir = golds / folder.name
                gold = gold_statements(
                    gold_dir / f"{source.name}.gold.json", gold_dir / f"{source.name}.yml"
                )
                label = f"{folder.name}/{source.name}"
                tally.add(score(source, gold, options, label))
            overall.add(tally)
            print(
                f"| {folder.name}{' (' + declared + ')' if declared else ''} | {tally.files} "
                f"| {share(tally.whole, tally.statements)} "
                f"| {share(tally.tables_found, tally.tables)} "
                f"| {share(tally.objects_found, tally.objects)} | {tally.invalid} "
                f"| {tally.seconds:.1f} |"
            )
        print(
            f"| all | {overall.files} | {share(overall.whole, overall.statements)} "
            f"| {share(overall.tables_found, overall.tables)} "
            f"| {share(overall.objects_found, overall.objects)} | {overall.invalid} "
            f"| {overall.seconds:.1f} |"
        )
        if parsed.details:
            for miss in overall.misses:
                print("  -", miss)
        print()


if __name__ == "__main__":
    main()
