"""The reference pages under docs/reference/, made from the code so they cannot drift from it.

- commands.md: `loom --help` and every subcommand's help, from the parser in loom_dagster.cli;
- settings.md: every environment variable, from loom_dagster.settings.reference.SETTINGS and
  extractor_sandbox.settings.SETTINGS;
- errors.md: every error code, from loom_dagster.errors.ERROR_CODES;
- formats.md: every format, from the extractor's registry (extractor_sandbox.registry.FORMATS)
  and the server's routing tables (loom_dagster.contract.formats).

tests/unit/test_docs.py fails when a page is not what this script makes.

    .venv/bin/python scripts/docs_reference.py           # list the pages that are stale
    .venv/bin/python scripts/docs_reference.py --write   # write them
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from extractor_sandbox import settings as extractor_settings  # noqa: E402
from extractor_sandbox.registry import FORMATS  # noqa: E402
from loom_dagster.contract.formats import EXTENSIONS, MEDIA_TYPES  # noqa: E402
from loom_dagster.errors import ERROR_CODES  # noqa: E402
from loom_dagster.settings.reference import SETTINGS  # noqa: E402

REFERENCE = ROOT / "docs" / "reference"
NOTICE = "<!-- made by scripts/docs_reference.py from the code; do not edit by hand -->"
# argparse wraps help to the terminal's width: fixed, so the page is the same on every machine.
HELP_COLUMNS = "100"


def parser() -> argparse.ArgumentParser:
    """The `loom` command's parser."""
    from loom_dagster.cli import _parser

    return _parser()


@contextlib.contextmanager
def fixed_width() -> Iterator[None]:
    """argparse wraps to COLUMNS when it formats: set for the page, then put back as it was."""
    before = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = HELP_COLUMNS
    try:
        yield
    finally:
        if before is None:
            del os.environ["COLUMNS"]
        else:
            os.environ["COLUMNS"] = before


def subcommands(command: argparse.ArgumentParser) -> Iterator[tuple[str, argparse.ArgumentParser]]:
    """Every (name, parser) below `command`, depth first, in the order `--help` lists them."""
    for action in command._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield name, sub
                for deeper, subsub in subcommands(sub):
                    yield f"{name} {deeper}", subsub


def command_names() -> list[str]:
    """Every subcommand of `loom`, as a user types it (`sources add`)."""
    return [name for name, _ in subcommands(parser())]


def commands_page() -> str:
    with fixed_width():
        return _commands_page()


def _commands_page() -> str:
    top = parser()
    parts = [
        "# Commands",
        "",
        NOTICE,
        "",
        "Every `loom` command and its options, as `--help` prints them.",
        "",
        "## loom",
        "",
        "```text",
        top.format_help().rstrip(),
        "```",
    ]
    for name, sub in subcommands(top):
        parts += ["", f"## loom {name}", "", "```text", sub.format_help().rstrip(), "```"]
    return "\n".join(parts) + "\n"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def settings_page() -> str:
    parts = [
        "# Settings",
        "",
        NOTICE,
        "",
        "Environment variables, read once and validated when the definitions load (a bad value",
        "stops the load with one line naming the variable) or when a `loom` command starts; runs",
        "and sensor ticks use those values (through the `loom` resource), never the environment",
        "they run in. An invalid value is `invalid_setting` ([error codes](errors.md)).",
        "",
        "## Loom",
        "",
        "| Variable | Type | Default | Meaning |",
        "|---|---|---|---|",
    ]
    for setting in SETTINGS:
        parts.append(
            f"| `{setting.name}` | {_cell(setting.type)} | {_cell(setting.default)} "
            f"| {_cell(setting.meaning)} |"
        )
    parts += [
        "",
        "## The reference extractor",
        "",
        "Read by the extractor service (`loom extractor serve`, or the one Loom starts) once at",
        "start; an invalid value stops it before it listens, with one line naming the variable.",
        "An empty variable counts as unset.",
        "",
        "| Variable | Type | Default | Meaning |",
        "|---|---|---|---|",
    ]
    for name, kind, default, meaning in extractor_settings.SETTINGS:
        parts.append(f"| `{name}` | {_cell(kind)} | {_cell(default)} | {_cell(meaning)} |")
    return "\n".join(parts) + "\n"


def setting_names() -> set[str]:
    """Every variable the settings pages name."""
    return {s.name for s in SETTINGS} | {row[0] for row in extractor_settings.SETTINGS}


def errors_page() -> str:
    parts = [
        "# Error codes",
        "",
        NOTICE,
        "",
        "Every failure Loom shows has a code and a one-line message (`code: message`). A file the",
        "extractor refuses ends as an outcome with its code, shown by `loom ingest`, `loom show`",
        "and the Dagster UI, never as a crash; a mistake on the command line is one line on stderr",
        "and exit status 1 (2 for a bad argument).",
        "",
        "**Retried** says whether Loom tries again by itself (with backoff, `LOOM_RETRY_ATTEMPTS`).",
        "",
        "## Extraction failed",
        "",
        "There is no code `extraction_failed` itself: a file whose extraction failed",
        "(`ExtractionFailed` in the code) is `refused` with the contract's code, which says why:",
        "`unsupported_format`, `format_unavailable`, `format_mismatch`, `encoding`,",
        "`corrupt`, `invalid_option`, `too_large`, `timeout`, `resource_limit`, or",
        "`invalid_artifact` when the extractor's answer broke the contract. The earlier revision of",
        "the file, if any, keeps serving; fix what the table says and ingest again (a new revision,",
        "or the same one with new options, is extracted again).",
        "",
        "## Every code",
        "",
        "| Code | Meaning | Retried | What to do |",
        "|---|---|---|---|",
    ]
    for code, error in ERROR_CODES.items():
        retried = "yes" if error.retryable else "no"
        parts.append(f"| `{code}` | {_cell(error.meaning)} | {retried} | {_cell(error.action)} |")
    return "\n".join(parts) + "\n"


def formats_page() -> str:
    parts = [
        "# Formats (reference)",
        "",
        NOTICE,
        "",
        "Every format the reference extractor reads, from its registry; how a file is routed to",
        "one (a declared format, else its extension, else its media type, else text); the",
        "options it takes; how its bytes are recognised; and the library it needs (without it,",
        "the format is `unavailable` in `loom formats` and a file is refused `format_unavailable`).",
        "What each format keeps and loses: [Formats](../formats.md).",
        "",
        "| Format | Extensions | Media types | Options | Read as | Recognised by | Needs |",
        "|---|---|---|---|---|---|---|",
    ]
    for spec in FORMATS:
        extensions = ", ".join(f"`{e}`" for e, f in EXTENSIONS.items() if f == spec.name)
        media = ", ".join(f"`{m}`" for m, f in MEDIA_TYPES.items() if f == spec.name)
        options = ", ".join(f"`{o}`" for o in spec.options) or "none"
        if spec.magic is not None:
            recognised = f"starts with `{spec.magic.decode('ascii')}`"
            if spec.trailer is not None:
                recognised += f", ends with `{spec.trailer.decode('ascii')}`"
        elif spec.zip_part is not None:
            recognised = f"a zip holding `{spec.zip_part}`"
        else:
            recognised = "its name; strictly decoded text"
        kind = "bytes" if spec.binary else "text"
        needs = f"`{spec.library}`" if spec.library else "nothing more"
        parts.append(
            f"| `{spec.name}` | {extensions} | {media} | {options} | {kind} | {recognised} "
            f"| {needs} |"
        )
    parts += [
        "",
        "A legacy Office file (`.doc`, `.xls`, `.ppt`) is refused `unsupported_format` before any",
        "call. `--option 'GLOB:format=FORMAT'` sends a file as a declared format instead of",
        "routing it by its name.",
    ]
    return "\n".join(parts) + "\n"


PAGES = {
    "commands.md": commands_page,
    "settings.md": settings_page,
    "errors.md": errors_page,
    "formats.md": formats_page,
}


def stale() -> list[str]:
    """The pages whose file is not what this script makes."""
    found = []
    for name, make in PAGES.items():
        path = REFERENCE / name
        if not path.is_file() or path.read_text(encoding="utf-8") != make():
            found.append(name)
    return found


def write() -> None:
    REFERENCE.mkdir(parents=True, exist_ok=True)
    for name, make in PAGES.items():
        (REFERENCE / name).write_text(make(), encoding="utf-8")


if __name__ == "__main__":
    if sys.argv[1:] == ["--write"]:
        write()
    else:
        old = stale()
        for name in old:
            print(f"docs/reference/{name} is stale: run scripts/docs_reference.py --write")
        sys.exit(1 if old else 0)
