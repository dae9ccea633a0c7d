"""Both packages hold the same contract facts: the format list, the options, the key and section
bounds (and the chunker's section entry limit), the schema version.

The two packages may not import each other (DESIGN.md; the import contract in pyproject.toml), so each keeps
its own copy; this test reads both and fails when they differ. On the extractor's side every fact
is written once, in extractor_sandbox/contract.py, which the last test holds. The output bounds
are checked by test_contract_bounds.py.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from extractor_sandbox import contract as extractor
from extractor_sandbox import registry
from loom_dagster import chunking, sources
from loom_dagster.contract import artifact as server_artifact
from loom_dagster.contract import formats as server_formats
from loom_dagster.contract import validate as server

ROOT = Path(__file__).resolve().parents[2]

# Each fact the extractor holds, with where the server holds it.
FACTS = {
    "CONTRACT_FORMATS": lambda: server_formats.FORMATS,
    "SCHEMA_VERSION": lambda: server_artifact.SCHEMA_VERSION,
    "MAX_KEYS": lambda: server.MAX_KEYS,
    "MAX_KEY_CHARS": lambda: server.MAX_KEY_CHARS,
    "MAX_SECTION_ENTRIES": lambda: server.MAX_SECTION_ENTRIES,
    "MAX_SECTION_CHARS": lambda: server.MAX_SECTION_CHARS,
}


@pytest.mark.parametrize("name", FACTS)
def test_both_packages_hold_the_same_fact(name: str) -> None:
    assert getattr(extractor, name) == FACTS[name]()


def test_a_heading_cut_for_a_section_path_is_cut_where_the_contract_bounds_an_entry() -> None:
    assert chunking.SECTION_ENTRY_LIMIT == extractor.MAX_SECTION_CHARS


def test_the_options_a_source_may_give_are_the_contracts() -> None:
    # The server's option names hold "format" too: the routing override, not a parser option.
    assert set(sources.OPTION_NAMES) - {"format"} == set(extractor.CONTRACT_OPTIONS)


def test_the_extractor_reads_exactly_the_contracts_formats() -> None:
    assert tuple(spec.name for spec in registry.FORMATS) == server_formats.FORMATS
    assert set(server_formats.EXTENSIONS.values()) == set(extractor.CONTRACT_FORMATS)


def test_the_extractor_writes_each_contract_fact_once() -> None:
    facts = {
        name
        for name, value in vars(extractor).items()
        if name.isupper() and isinstance(value, int | tuple | frozenset)
    }
    written: dict[str, list[str]] = {}
    for path in sorted((ROOT / "extractor_sandbox").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            targets = node.targets if isinstance(node, ast.Assign) else []
            if isinstance(node, ast.AnnAssign):
                targets = [node.target]
            for target in targets:
                if isinstance(target, ast.Name) and target.id in facts:
                    written.setdefault(target.id, []).append(str(path.relative_to(ROOT)))
    assert written == {name: ["extractor_sandbox/contract.py"] for name in facts}
