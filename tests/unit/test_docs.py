"""The documentation site against the code: the reference pages are what scripts/docs_reference.py
makes; every command, setting, error code and format the code has is in them, and nothing else;
the site builds with `mkdocs build --strict`; the README stays a front door."""

from __future__ import annotations

import ast
import functools
import importlib
import importlib.util
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

from extractor_sandbox.contract import CONTRACT_CODES
from extractor_sandbox.registry import FORMATS
from loom_dagster import errors
from loom_dagster.catalog.outcomes import RETRIES_EXHAUSTED

ROOT = Path(__file__).resolve().parents[2]
REFERENCE = ROOT / "docs" / "reference"
PACKAGES = ("loom_dagster", "extractor_sandbox")
# The calls whose first string argument is an error code (the rest pass `code=`).
CODE_CALLS = {"ExtractionFailed", "ExtractError", "Refusal"}
# Environment variables the code reads that are not settings: test hooks only.
NOT_SETTINGS = re.compile(r"LOOM_TEST_")
VARIABLE = re.compile(r"""["']((?:LOOM|DAGSTER|AWS|TESSDATA)_[A-Z0-9_]*[A-Z0-9])["']""")


def _load_script() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "docs_reference", ROOT / "scripts" / "docs_reference.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


docs_reference = _load_script()


@functools.cache
def _sources() -> list[tuple[Path, str]]:
    return [
        (path, path.read_text(encoding="utf-8"))
        for package in PACKAGES
        for path in sorted((ROOT / package).rglob("*.py"))
    ]


def _codes_in_code() -> set[str]:
    """Every error code the code raises or records: a `code=` keyword, a class's `code`, the first
    string given to ExtractionFailed/ExtractError/Refusal, the contract's codes."""
    found: set[str] = set(CONTRACT_CODES) | {RETRIES_EXHAUSTED}
    for _, text in _sources():
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.keyword) and node.arg == "code":
                if isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
                    found.add(node.value.value)
            elif isinstance(node, ast.ClassDef):
                for statement in node.body:
                    targets = (
                        statement.targets
                        if isinstance(statement, ast.Assign)
                        else [statement.target]
                        if isinstance(statement, ast.AnnAssign)
                        else []
                    )
                    value = getattr(statement, "value", None)
                    if (
                        any(isinstance(t, ast.Name) and t.id == "code" for t in targets)
                        and isinstance(value, ast.Constant)
                        and isinstance(value.value, str)
                    ):
                        found.add(value.value)
            elif isinstance(node, ast.Call):
                called = node.func
                name = getattr(called, "id", None) or getattr(called, "attr", None)
                if name in CODE_CALLS:
                    for argument in node.args[:2]:
                        if (
                            isinstance(argument, ast.Constant)
                            and isinstance(argument.value, str)
                            and re.fullmatch(r"[a-z][a-z0-9_]*", argument.value)
                        ):
                            found.add(argument.value)
                            break
    return found


def _table_names(page: str) -> set[str]:
    """The first cell of every table row: `| `NAME` | ...`."""
    return set(re.findall(r"^\| `([^`]+)` \|", page, flags=re.M))


def _page(name: str) -> str:
    return (REFERENCE / name).read_text(encoding="utf-8")


def test_the_reference_pages_are_what_the_code_makes() -> None:
    assert docs_reference.stale() == [], "run .venv/bin/python scripts/docs_reference.py --write"


def test_every_command_has_its_section_and_every_section_a_command() -> None:
    sections = set(re.findall(r"^## loom (.+)$", _page("commands.md"), flags=re.M))
    assert sections == set(docs_reference.command_names())
    assert {"ingest", "search", "sources add", "serve", "ui"} <= sections


def test_every_setting_the_code_reads_is_documented_and_no_other() -> None:
    read = {
        name
        for _, text in _sources()
        for name in VARIABLE.findall(text)
        if not NOT_SETTINGS.match(name)
    }
    documented = _table_names(_page("settings.md"))
    assert read - documented == set(), "read by the code, missing from the settings table"
    assert documented - read == set(), "in the settings table, read nowhere in the code"


def test_every_error_code_is_documented_and_no_other() -> None:
    documented = _table_names(_page("errors.md"))
    raised = _codes_in_code()
    assert raised - documented == set(), "raised by the code, missing from ERROR_CODES"
    assert documented - raised == set(), "in ERROR_CODES, raised nowhere in the code"
    for code, entry in errors.ERROR_CODES.items():
        assert entry.meaning and entry.action, code


def _error_classes() -> list[type[errors.LoomError]]:
    """Every LoomError subclass, from the modules that declare a class-level `code` (found by
    reading them, so the test imports only those, not Dagster's shell)."""
    for path, text in _sources():
        if "loom_dagster" in path.parts and re.search(r"^    code(: str)? = ", text, flags=re.M):
            module = ".".join(path.relative_to(ROOT).with_suffix("").parts)
            importlib.import_module(module.removesuffix(".__init__"))
    seen: list[type[errors.LoomError]] = []
    todo: list[type[errors.LoomError]] = [errors.LoomError]
    while todo:
        cls = todo.pop()
        seen.append(cls)
        todo.extend(cls.__subclasses__())
    return seen


def test_a_code_is_retried_in_the_docs_exactly_when_its_error_type_is_retryable() -> None:
    """Imports the modules that declare error types (tantivy, numpy and fsspec come with them:
    a few seconds on a loaded machine, once per worker)."""
    for cls in _error_classes():
        if "code" in cls.__dict__:
            entry = errors.ERROR_CODES[cls.code]
            assert entry.retryable == cls.retryable, f"{cls.__name__} ({cls.code})"


def test_every_format_of_the_registry_is_documented_and_no_other() -> None:
    names = {spec.name for spec in FORMATS}
    assert _table_names(_page("formats.md")) == names
    guide = (ROOT / "docs" / "formats.md").read_text(encoding="utf-8")
    assert len(re.findall(r"^## ", guide, flags=re.M)) >= len(names) - 1  # CSV and TSV: one


@pytest.mark.skipif(
    not Path(sys.executable).with_name("mkdocs").is_file(), reason="mkdocs is not installed"
)
def test_the_site_builds_strictly(tmp_path: Path) -> None:
    """mkdocs in a process of its own (its plugins load once): about 1 s of CPU, a few seconds on
    a loaded machine. --strict fails on a broken link or anchor and on a page not in the nav."""
    built = subprocess.run(
        [
            str(Path(sys.executable).with_name("mkdocs")),
            "build",
            "--strict",
            "--quiet",
            "--site-dir",
            str(tmp_path / "site"),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        env={"PATH": "/usr/bin:/bin", "NO_MKDOCS_2_WARNING": "1"},
    )
    assert built.returncode == 0, built.stderr[-3000:]
    assert (tmp_path / "site" / "reference" / "errors" / "index.html").is_file()


def test_the_readme_is_a_front_door() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= 200
    # The two commands, as .ci/run and a new user run them.
    assert "scripts/example   # set up, ingest examples/docs" in readme
    assert "scripts/test      # set up, lint" in readme
    assert "exec scripts/test" in (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    # No table lives in two places: the README's tables are its status summary and search's
    # figures on unseen documents (issue 35 asks for that one in the README; the benchmarks
    # page holds the full one, with other columns).
    assert len(re.findall(r"^\|---", readme, flags=re.M)) == 2
    for link in re.findall(r"\]\((docs/[^)#]+)", readme):
        assert (ROOT / link).is_file(), link


def test_no_table_is_in_two_places() -> None:
    """A table's row (past a short one such as `| yes | no |`) in one Markdown file only."""
    # The unseen retrieval bench's documents are data others wrote, not pages of ours.
    data = ROOT / "bench" / "retrieval" / "unseen" / "docs"
    pages = [
        path
        for path in ROOT.rglob("*.md")
        if not any(
            part.startswith(".") or part in ("site", "tests", "examples")
            for part in path.relative_to(ROOT).parts
        )
        and not path.is_relative_to(data)
    ]
    seen: dict[str, Path] = {}
    for path in pages:
        for row in path.read_text(encoding="utf-8").splitlines():
            if row.startswith("|") and not row.startswith("|---") and len(row) > 40:
                first = seen.setdefault(row, path)
                assert first == path, f"{row[:80]} is in {first} and {path}"
