"""The extractor client is plain Python in its own package; Dagster sees it through one thin
resource, and Loom's settings reach that resource as values, never through the environment."""

from __future__ import annotations

import ast
from pathlib import Path

# That the extractor package and the settings import no Dagster is the import contract's
# "domain-without-dagster" (pyproject.toml; lint-imports, and test_architecture.py's fresh
# interpreter).
ROOT = Path(__file__).resolve().parents[2]


def test_the_resources_read_no_environment() -> None:
    readers = []
    for path in sorted((ROOT / "loom_dagster/resources").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Attribute) and node.attr in ("environ", "getenv"):
                readers.append(f"{path.name}:{node.lineno}")
    assert readers == []


def test_the_resources_hold_nothing_but_resources() -> None:
    """A class in resources/ is a ConfigurableResource (or a dagster-duckdb one); no function
    of domain logic lives there."""
    for path in sorted((ROOT / "loom_dagster/resources").glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in tree.body:
            assert not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)), (
                f"{path.name}: {node.name}"
            )
            if isinstance(node, ast.ClassDef):
                bases = {ast.unparse(base) for base in node.bases}
                assert bases & {
                    "dg.ConfigurableResource",
                    "ConfigurableResource",
                    "DuckDBResource",
                }, f"{path.name}: {node.name}"
