"""The two processes stay apart, checked by reading every import of both packages."""

from __future__ import annotations

import ast
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


@pytest.mark.parametrize("package", ["loom_dagster", "extractor_sandbox"])
def test_the_package_has_modules_to_check(package: str) -> None:
    assert len(imported_modules(package)) > 3


# The query package builds its statements with sqlglot's expression builder and parses the
# SELECT `loom sql` is given; it never parses a document, so sqlglot is allowed there alone.
QUERY_PACKAGE = "loom_dagster/query/"


def forbidden(path: str, names: set[str]) -> set[str]:
    allowed = {"sqlglot"} if path.startswith(QUERY_PACKAGE) else set()
    return (names & PARSER_LIBRARIES) - allowed


def test_the_pipeline_imports_no_parser_library_and_not_the_extractor() -> None:
    offenders = {
        path: forbidden(path, names)
        for path, names in imported_modules("loom_dagster").items()
        if forbidden(path, names)
    }
    assert offenders == {}


def test_only_the_query_package_may_import_sqlglot() -> None:
    assert forbidden("loom_dagster/query/compile.py", {"sqlglot"}) == set()
    assert forbidden("loom_dagster/query/compile.py", {"pypdf"}) == {"pypdf"}
    assert forbidden("loom_dagster/chunking.py", {"sqlglot"}) == {"sqlglot"}


def test_the_extractor_imports_neither_the_pipeline_nor_dagster() -> None:
    offenders = {
        path: names & PIPELINE
        for path, names in imported_modules("extractor_sandbox").items()
        if names & PIPELINE
    }
    assert offenders == {}


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
