"""Contract v1's facts, as the extractor holds them: the one place on this side they are written.

The server (loom_dagster) holds its own copy, as the two packages may not import each other
(DESIGN.md); tests/unit/test_contract_agreement.py and test_contract_bounds.py read both and fail
when they differ. Everything else in extractor_sandbox takes these from here.
"""

from __future__ import annotations

from typing import Any, NotRequired, TypedDict

CONTRACT_VERSION = 1
SCHEMA_VERSION = 1

# Every format contract v1 names, in its order.
CONTRACT_FORMATS: tuple[str, ...] = (
    "markdown",
    "html",
    "text",
    "sql",
    "toml",
    "pdf",
    "docx",
    "pptx",
    "xlsx",
    "csv",
    "parquet",
)

# The codes contract v1 defines for a source the service cannot extract (a 422 error body).
CONTRACT_CODES = frozenset(
    {
        "unsupported_format",
        "format_unavailable",
        "format_mismatch",
        "encoding",
        "corrupt",
        "invalid_option",
        "too_large",
        "timeout",
        "resource_limit",
    }
)

# Every option the contract names; a query parameter that is none of these, format or name is
# refused.
CONTRACT_OPTIONS: tuple[str, ...] = ("encoding", "sql_dialect")

MAX_KEYS = 10_000
MAX_KEY_CHARS = 1_024  # a key, and a locator's key_path (the same name)
MAX_SECTION_ENTRIES = 64
MAX_SECTION_CHARS = 500

# Output bounds: the server (loom_dagster/contract/validate.py) refuses an artifact past them. An
# artifact holds at most BLOCKS_BASE blocks plus one per BYTES_PER_BLOCK bytes of the original, and
# never more than MAX_BLOCKS: each block costs the server a chunk's work and ~200 bytes of JSON,
# so a file of many tiny blocks ("a\n\n" a million times) would cost 60 times its size without it.
MAX_BLOCKS = 50_000
BLOCKS_BASE = 10_000
BYTES_PER_BLOCK = 16
# Free strings that are no document text travel into logs and Dagster's event storage.
MAX_LABEL_CHARS = 200  # parser, parser_version, coverage.unit, a lost capability, an id, an option
MAX_MESSAGE_CHARS = 1_000  # a warning, a failed unit's unit and reason, a table's name
MAX_WARNINGS = 1_000
MAX_FAILED_UNITS = 10_000
MAX_LOST = 64


def block_bound(source_bytes: int) -> int:
    """The most blocks an artifact may hold for an original of `source_bytes` bytes."""
    return min(MAX_BLOCKS, BLOCKS_BASE + source_bytes // BYTES_PER_BLOCK)


# The artifact's shape at the reader boundary: what every reader returns (build_artifact makes
# it) and what source.extract hands the child to serialize, so mypy checks each reader's envelope.
# A block stays a plain dict: artifact.BlockBuilder is the one place one is made.


class FailedUnit(TypedDict):
    unit: str
    reason: str


class Coverage(TypedDict):
    unit: str
    total: int
    extracted: int
    failed: list[FailedUnit]
    lost: list[str]
    complete: bool


class Artifact(TypedDict):
    schema_version: int
    format: str
    parser: str
    parser_version: str
    options: dict[str, Any]
    attrs: dict[str, Any]
    warnings: list[str]
    coverage: Coverage
    blocks: list[dict[str, Any]]
    tables: NotRequired[list[dict[str, Any]]]
