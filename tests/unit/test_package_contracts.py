"""The two processes stay apart, checked by reading every import of both packages."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PARSER_LIBRARIES = {"sqlglot", "pypdf", "extractor_sandbox"}
PIPELINE = {"loom_dagster", "dagster", "dagster_duckdb", "dagster_webserver"}


def imported_modules(package: str, root: Path = ROOT) -> dict[str, set[str]]:
    """Top-level module names each file of `package` imports, at any depth of its code."""
    found: dict[str, set[str]] = {}
    for path in sorted((root / package).rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        names: set[str] = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names.update(alias.name.split(".")[0] for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names.add(node.module.split(".")[0])
            elif isinstance(node, ast.Call) and getattr(node.func, "id", None) == "__import__":
                if node.args and isinstance(node.args[0], ast.Constant):
                    names.add(str(node.args[0].value).split(".")[0])
        found[str(path.relative_to(root))] = names
    return found


@pytest.mark.parametrize("package", ["loom_dagster", "loom_dagster/query", "extractor_sandbox"])
def test_the_package_has_modules_to_check(package: str) -> None:
    assert len(imported_modules(package)) > 3


def offenders(package: str, forbidden: set[str]) -> dict[str, set[str]]:
    """The files of `package` that import any of `forbidden`, with what they import of it."""
    return {
        path: names & forbidden
        for path, names in imported_modules(package).items()
        if names & forbidden
    }


# The query package builds its statements with sqlglot's expression builder and parses the
# SELECT `loom sql` is given; it never parses a document. The entry points import it only inside
# the functions that answer a query, so Dagster's processes never load sqlglot.
def test_the_pipeline_imports_no_parser_library_and_not_the_extractor() -> None:
    found = offenders("loom_dagster", PARSER_LIBRARIES)
    query = {path: names - {"sqlglot"} for path, names in found.items() if "/query/" in path}
    others = {path: names for path, names in found.items() if "/query/" not in path}
    assert (others, {path: names for path, names in query.items() if names}) == ({}, {})


def test_the_query_package_imports_no_document_parser_and_no_dagster() -> None:
    forbidden = (PARSER_LIBRARIES - {"sqlglot"}) | (PIPELINE - {"loom_dagster"})
    assert offenders("loom_dagster/query", forbidden) == {}


def test_the_code_location_loads_no_parser_library() -> None:
    # Dagster's processes (the code server, each run) import the definitions: no sqlglot nor
    # pypdf may come in with them, through the query package or anything else.
    program = (
        "import sys, warnings\n"
        "warnings.simplefilter('ignore')\n"
        "import loom_dagster.definitions\n"
        "print(sorted(name for name in ('sqlglot', 'pypdf', 'extractor_sandbox', 'loom_dagster.query')"
        " if name in sys.modules))\n"
    )
    loaded = subprocess.run(
        [sys.executable, "-c", program], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert (loaded.returncode, loaded.stdout.strip()) == (0, "[]"), loaded.stderr[-2000:]


def test_the_extractor_imports_neither_the_pipeline_nor_dagster() -> None:
    assert offenders("extractor_sandbox", PIPELINE) == {}


def test_the_checker_sees_a_forbidden_import_anywhere(tmp_path: Path) -> None:
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "mod.py").write_text(
        "def f():\n    import sqlglot\n    from extractor_sandbox.source import decode\n"
        "    __import__('pypdf')\n"
    )
    assert imported_modules("pkg", tmp_path) == {
        "pkg/mod.py": {"sqlglot", "extractor_sandbox", "pypdf"}
    }
