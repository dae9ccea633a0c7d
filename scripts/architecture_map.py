"""The map at the top of docs/architecture.md, made from the import contract in pyproject.toml.

The layers contract (`[tool.importlinter]`, checked by `lint-imports`) is the one statement of the
architecture; this script draws it (a diagram and a table of folders, each with the first line of
its docstring), so the page cannot drift from what CI checks. tests/unit/test_architecture.py
fails when the page's map is not what this script makes.

    .venv/bin/python scripts/architecture_map.py           # print the map
    .venv/bin/python scripts/architecture_map.py --write   # replace it in docs/architecture.md
"""

from __future__ import annotations

import ast
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "architecture.md"
BEGIN = "<!-- map: made by scripts/architecture_map.py from pyproject.toml; do not edit by hand -->"
END = "<!-- end of map -->"
# The line a module past ~500 lines gives under its docstring's first line (not part of the map).
REASON = "Over 500 lines:"
# Each group of layers begins at the layer named here (the contract lists them from the top).
GROUPS = (
    ("entry points", "cli", "the `loom` command and the Python API (drive Dagster)"),
    (
        "Dagster shell",
        "definitions",
        "Dagster's objects over the domain; no domain rule of its own",
    ),
    ("domain", "waiting", "plain Python: never imports Dagster"),
    (
        "foundation",
        "retries | variables | hold | ui_gate",
        "what every layer shares; never imports Dagster",
    ),
)


def contracts(root: Path = ROOT) -> list[dict[str, object]]:
    with open(root / "pyproject.toml", "rb") as file:
        found: list[dict[str, object]] = tomllib.load(file)["tool"]["importlinter"]["contracts"]
    return found


def contract(contract_id: str, root: Path = ROOT) -> dict[str, object]:
    return next(found for found in contracts(root) if found.get("id") == contract_id)


def layers(root: Path = ROOT) -> list[list[str]]:
    """The layers from the top, each the names of its modules (relative to loom_dagster)."""
    raw = contract("layers", root)["layers"]
    assert isinstance(raw, list)
    return [[name.strip() for name in layer.replace(":", "|").split("|")] for layer in raw]


def grouped(root: Path = ROOT) -> list[tuple[str, str, list[list[str]]]]:
    """(group name, what it is, its layers), from the top."""
    raw = contract("layers", root)["layers"]
    assert isinstance(raw, list)
    starts = [raw.index(first) for _, first, _ in GROUPS] + [len(raw)]
    every = layers(root)
    return [
        (name, about, every[starts[at] : starts[at + 1]])
        for at, (name, _, about) in enumerate(GROUPS)
    ]


def path_of(module: str, root: Path = ROOT) -> Path:
    package = root / "loom_dagster" / module
    return package / "__init__.py" if package.is_dir() else package.with_suffix(".py")


def holds(module: str, root: Path = ROOT) -> str:
    """The first line of the module's docstring: what it holds."""
    source = path_of(module, root).read_text(encoding="utf-8")
    docstring = ast.get_docstring(ast.parse(source)) or ""
    first = [
        line for line in docstring.split("\n\n")[0].splitlines() if not line.startswith(REASON)
    ]
    return " ".join(first).strip()


def shown(module: str, root: Path = ROOT) -> str:
    return f"`{module}/`" if (root / "loom_dagster" / module).is_dir() else f"`{module}.py`"


def the_map(root: Path = ROOT) -> str:
    lines = [BEGIN, "", "```"]
    for name, _, group in grouped(root):
        lines.append(f"{name:<15}" + "  ▶  ".join(" | ".join(layer) for layer in group))
    lines += [
        "```",
        "",
        "Read down: each layer may import the layers below it and never one above; `a | b` are "
        "siblings that do not import each other. No two modules or packages import each other, "
        "directly or round a longer loop. `lint-imports` checks all of it in CI.",
        "",
        "| Layer | Folder or module | Holds |",
        "|---|---|---|",
    ]
    for name, about, group in grouped(root):
        first = True
        for layer in group:
            for module in layer:
                label = f"**{name}**: {about}" if first else ""
                lines.append(f"| {label} | {shown(module, root)} | {holds(module, root)} |")
                first = False
    lines += ["", END]
    return "\n".join(lines)


def page_map(page: str) -> str:
    """The map as it stands on the page (empty when the page has none)."""
    if BEGIN not in page or END not in page:
        return ""
    return page[page.index(BEGIN) : page.index(END) + len(END)]


def write(root: Path = ROOT) -> None:
    page = (root / "docs" / "architecture.md").read_text(encoding="utf-8")
    old = page_map(page)
    if not old:
        raise SystemExit(f"docs/architecture.md has no map between {BEGIN!r} and {END!r}")
    (root / "docs" / "architecture.md").write_text(
        page.replace(old, the_map(root)), encoding="utf-8"
    )


if __name__ == "__main__":
    if sys.argv[1:] == ["--write"]:
        write()
    else:
        print(the_map())
