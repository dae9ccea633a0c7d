"""The house: the domain loads no Dagster, the map on the page is the contract CI checks, every
package says what it holds, and no module grows past ~500 lines without saying why.

The import contract itself (layers, no cycles, no Dagster in the domain, no parser library) is
pyproject.toml's `[tool.importlinter]`, run by `lint-imports` in scripts/test.
"""

from __future__ import annotations

import ast
import importlib.util
import json
import pkgutil
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "loom_dagster"
LONG = 500


def _load_map() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "architecture_map", ROOT / "scripts" / "architecture_map.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


architecture_map = _load_map()
REASON = architecture_map.REASON


def domain_modules() -> list[str]:
    """Every module of the domain and the foundation, packages walked to their leaves."""
    found: list[str] = []
    for name in architecture_map.contract("domain-without-dagster")["source_modules"]:
        found.append(name)
        path = ROOT / Path(*name.split("."))
        if path.is_dir():
            found += [info.name for info in pkgutil.walk_packages([str(path)], prefix=f"{name}.")]
    return sorted(found)


def test_the_domain_contract_names_exactly_the_domain_and_foundation_layers() -> None:
    below_the_shell = [
        f"loom_dagster.{module}"
        for name, _, group in architecture_map.grouped()
        if name in ("domain", "foundation")
        for layer in group
        for module in layer
    ]
    sources = architecture_map.contract("domain-without-dagster")["source_modules"]
    assert sorted(sources) == sorted(below_the_shell)


def test_every_module_of_loom_dagster_stands_in_a_layer() -> None:
    in_layers = {module for layer in architecture_map.layers() for module in layer}
    on_disk = {
        path.stem if path.is_file() else path.name
        for path in PACKAGE.iterdir()
        if (path.suffix == ".py" and path.name != "__init__.py")
        or (path.is_dir() and (path / "__init__.py").exists())
    }
    assert on_disk == in_layers


def test_every_domain_module_imports_in_a_fresh_interpreter_without_dagster() -> None:
    modules = domain_modules()
    assert len(modules) > 40  # the walk found the packages' modules, not only their names
    program = (
        "import importlib, json, sys, warnings\n"
        "warnings.simplefilter('ignore')\n"
        "loaded = {}\n"
        "for name in json.loads(sys.argv[1]):\n"
        "    importlib.import_module(name)\n"
        "    loaded[name] = sorted(m for m in sys.modules if m.split('.')[0].startswith('dagster'))\n"
        "print(json.dumps({name: found for name, found in loaded.items() if found}))\n"
    )
    ran = subprocess.run(
        [sys.executable, "-c", program, json.dumps(modules)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert ran.returncode == 0, ran.stderr[-3000:]
    assert json.loads(ran.stdout) == {}


def test_the_page_shows_the_map_the_contract_makes() -> None:
    page = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    assert architecture_map.page_map(page) == architecture_map.the_map(), (
        "docs/architecture.md's map is not the contract's: run "
        ".venv/bin/python scripts/architecture_map.py --write"
    )
    sections = [found.start() for found in re.finditer(r"^## ", page, flags=re.M)]
    assert sections[0] < page.index(architecture_map.BEGIN) < sections[1]  # it opens the page


@pytest.mark.parametrize(
    "package",
    sorted(
        str(path.parent.relative_to(ROOT))
        for top in (PACKAGE, ROOT / "extractor_sandbox")
        for path in top.rglob("__init__.py")
    ),
)
def test_every_package_says_what_it_holds(package: str) -> None:
    source = (ROOT / package / "__init__.py").read_text(encoding="utf-8")
    assert ast.get_docstring(ast.parse(source)), f"{package}/__init__.py has no docstring"


def test_no_module_is_long_without_a_reason_at_its_top() -> None:
    long_unexplained = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        lines = path.read_text(encoding="utf-8").splitlines()
        if len(lines) > LONG and not any(line.startswith(REASON) for line in lines[:25]):
            long_unexplained[str(path.relative_to(ROOT))] = len(lines)
    assert long_unexplained == {}, f"past {LONG} lines with no '{REASON} …' line at the top"


def test_the_cycle_contract_counts_lazy_and_type_checking_imports(tmp_path: Path) -> None:
    # The contract type CI relies on, shown on a package of two modules that import each other
    # only inside a function and under TYPE_CHECKING: lint-imports must call it broken.
    package = tmp_path / "house"
    package.mkdir()
    (package / "__init__.py").write_text('"""A package."""\n')
    (package / "a.py").write_text("def f():\n    from house import b\n")
    (package / "b.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from house import a\n"
    )
    (tmp_path / ".importlinter").write_text(
        "[importlinter]\nroot_package = house\n\n"
        "[importlinter:contract:acyclic]\nname = acyclic\ntype = acyclic_siblings\n"
        "ancestors = house\n"
    )
    lint = Path(sys.executable).parent / "lint-imports"
    ran = subprocess.run(
        [str(lint), "--no-cache"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        env={"PYTHONPATH": str(tmp_path), "PATH": "/usr/bin:/bin"},
    )
    assert ran.returncode == 1, ran.stdout[-2000:] + ran.stderr[-2000:]
    assert "acyclic BROKEN" in ran.stdout
