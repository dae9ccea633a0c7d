"""Plain text: one paragraph block per run of non-blank lines.

A paragraph's text is its lines exactly as written (line endings between them kept, the last one
left out), and its locator spans those lines and characters. Nothing is markup: a line that
begins with "#" is text, not a heading. A blank line is empty or holds only spaces and tabs.
Coverage counts non-blank lines, from the blocks' spans.
"""

from __future__ import annotations

import platform
from collections.abc import Mapping

from extractor_sandbox.artifact import (
    BlockBuilder,
    Line,
    build_artifact,
    line_coverage,
    source_slice,
    split_lines,
)
from extractor_sandbox.contract import Artifact

PARSER = "loom-text"
PARSER_VERSION = f"1+python{platform.python_version()}"


def extract_text(
    text: str, options: Mapping[str, str] | None = None, *, name: str = ""
) -> Artifact:
    lines = split_lines(text)
    builder = BlockBuilder()
    for first, last in _paragraph_runs(lines):
        builder.add("paragraph", source_slice(text, first, last), first, last)
    return build_artifact(
        "text", PARSER, PARSER_VERSION, builder.blocks, line_coverage(lines, builder.blocks)
    )


def _paragraph_runs(lines: list[Line]) -> list[tuple[Line, Line]]:
    runs: list[tuple[Line, Line]] = []
    first: Line | None = None
    previous: Line | None = None
    for line in lines:
        if line.is_blank:
            if first is not None and previous is not None:
                runs.append((first, previous))
            first = None
        elif first is None:
            first = line
        previous = line
    if first is not None and previous is not None:
        runs.append((first, previous))
    return runs
