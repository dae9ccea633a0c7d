"""Every `loom` command the README and docs/getting-started.md show, run as written and in order,
on one home: a copy of examples/docs named `notes` stands in for the `~/notes` they use, so the
front door cannot show a command that fails.

The commands that keep running (`loom ui`, `loom watch`, `loom extractor serve`) are parsed by the `loom`
command's own parser and not started: tests/browser and tests/extractor start them. The
`scripts/...` lines are not `loom` commands (CI runs scripts/test itself)."""

from __future__ import annotations

import os
import re
import shlex
import shutil
from pathlib import Path

import pytest

from loom_dagster.cli import _parser
from loom_dagster.extractor.local import RunningExtractor
from loom_dagster.extractor.settings import ENV_TOKEN, ENV_URL
from tests.integration.loom_command import loom

ROOT = Path(__file__).resolve().parents[2]
PAGES = (ROOT / "README.md", ROOT / "docs" / "getting-started.md")
EXAMPLES = ROOT / "examples" / "docs"
LOOM_PREFIX = ".venv/bin/loom"
# Commands that serve until stopped: checked against the parser only.
KEEP_RUNNING = (("ui",), ("watch",), ("extractor", "serve"), ("serve",))
FENCE = re.compile(r"^```sh\n(.*?)^```", flags=re.M | re.S)


def shown_commands(page: Path) -> list[list[str]]:
    """The `loom` command lines of a page's ```sh blocks, as argument lists (comments dropped);
    an `export` line must set LOOM_HOME, which the test gives its own home."""
    found = []
    for block in FENCE.findall(page.read_text(encoding="utf-8")):
        for line in block.splitlines():
            words = shlex.split(line, comments=True)
            if not words or words[0].startswith("scripts/"):
                continue
            if words[0] == "export":
                assert all(word.startswith("LOOM_HOME=") for word in words[1:]), line
                continue
            assert words[0] == LOOM_PREFIX, f"{page.name}: not a loom command: {line}"
            found.append(words[1:])
    return found


def test_the_pages_show_the_commands_a_user_needs() -> None:
    readme = [words[0] for words in shown_commands(PAGES[0])]
    assert {"sources", "ingest", "search", "sql", "ui"} <= set(readme)
    assert len(shown_commands(PAGES[1])) >= 10


@pytest.mark.slow
def test_every_command_shown_runs_on_the_example(
    tmp_path: Path, reference_service: RunningExtractor
) -> None:
    """One home for both pages, in order (the README's commands first): about twenty `loom`
    processes and two ingests of the six example files: about 30 s of CPU, longer on a
    loaded machine."""
    notes = tmp_path / "notes"
    shutil.copytree(EXAMPLES, notes)
    env = {
        **os.environ,
        "LOOM_HOME": str(tmp_path / "home"),
        "DAGSTER_HOME": str(tmp_path / "home" / "dagster"),
        ENV_URL: reference_service.url,
        ENV_TOKEN: reference_service.token,
        "LOOM_EMBEDDER": "ngram",
        "LOOM_SEARCH_RESIDENT": "off",
    }
    env.pop("LOOM_OBJECT_STORE_URL", None)
    for page in PAGES:
        for words in shown_commands(page):
            args = [
                str(notes) + word[len("~/notes") :] if word.startswith("~/notes") else word
                for word in words
            ]
            shown = f"{page.name}: loom {shlex.join(words)}"
            if any(tuple(args[: len(kept)]) == kept for kept in KEEP_RUNNING):
                _parser().parse_args(args)
                continue
            done = loom(*args, env=env, timeout=300)
            assert done.returncode == 0, f"{shown}\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}"
            assert "Traceback" not in done.stderr, shown
            if args[0] in ("search", "sql"):
                assert done.stdout.strip() and "no hits" not in done.stdout, shown


@pytest.mark.parametrize("page", PAGES, ids=lambda page: page.name)
def test_a_command_line_that_is_no_loom_command_is_found(page: Path, tmp_path: Path) -> None:
    broken = tmp_path / page.name
    broken.write_text("```sh\nloom search x   # no .venv/bin prefix\n```\n", encoding="utf-8")
    with pytest.raises(AssertionError, match="not a loom command"):
        shown_commands(broken)
