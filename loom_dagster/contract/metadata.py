"""What loom puts into Dagster metadata from an extractor's answer: bounded, one printable line.

Dagster stores every metadata value and check description in its event storage, once per event:
a string an extractor chose (its parser's name, a warning, a refusal's message) or a document
holds (a path, a key) must not reach it whole. parse_artifact already bounds every free string
of an artifact; this is the last guard, for any value, at the place it enters Dagster.
"""

from __future__ import annotations

from collections.abc import Mapping

from loom_dagster.display import ELLIPSIS, one_line

METADATA_TEXT_CHARS = 500
PREFIX_PER_CHAR = 8  # a value's first limit * 8 characters are enough, even with its spaces folded

MetadataScalar = str | int | float | bool


def metadata_text(value: object, limit: int = METADATA_TEXT_CHARS) -> str:
    """`value` as text for a metadata value or a description: one printable line, at most
    `limit` characters (a longer one cut, ending in an ellipsis); None is the empty text."""
    if value is None:
        return ""
    text = str(value)
    # Escaping looks at each character: look at no more than a bounded prefix of a huge value.
    prefix = limit * PREFIX_PER_CHAR
    line = one_line(text[:prefix], limit)
    if len(text) > prefix and not line.endswith(ELLIPSIS):
        line = line[: limit - 1] + ELLIPSIS
    return line


def bounded_metadata(
    values: Mapping[str, object], limit: int = METADATA_TEXT_CHARS
) -> dict[str, MetadataScalar]:
    """A metadata mapping whose numbers and booleans stay as they are and everything else is
    metadata_text: `MaterializeResult(metadata=bounded_metadata({...}))`."""
    bounded: dict[str, MetadataScalar] = {}
    for name, value in values.items():
        if isinstance(value, (bool, int, float)):
            bounded[metadata_text(name, limit)] = value
        else:
            bounded[metadata_text(name, limit)] = metadata_text(value, limit)
    return bounded
