"""Registered folders: what files they hold, which changed, and the revision keys they get.

One module per idea: `model` (the types a scan deals in), `keys` (names, tags, document ids,
revision keys), `options` (extraction options per glob), `reading` (the checked open, hashing
and streaming from it), `scanning` (the walk and the scan).

A revision key is `<path trace>~<10 hex>@<first 16 hex of the sha256>`, followed by `~<10 hex>`
when extraction options apply to the file (see `revision_key`), made only of `[A-Za-z0-9._~@-]`
so the Dagster UI can select and backfill it and its partition filter finds a file by folder and
name; the trace starts with the file's name (`disk-full.md__runbooks~…`), which the UI keeps when
it cuts a long key in its middle. The document id is a readable slug of the file name and the
same hash of (source, path), so two files called README.md differ.

Anyone who can write into a watched folder can swap a file for a symlink between the scan and
the read. Every read of a file therefore goes through `open_checked`: each component is opened
from the root's descriptor without following symlinks, and the descriptor's device, inode, size
(and mtime where known) must be what the scan saw; the bytes are hashed and stored from it.
"""

from __future__ import annotations

from loom_dagster.sources.keys import (
    KEY_PATTERN,
    document_digest,
    document_id,
    key_document_digest,
    revision_key,
    source_name_for,
    validate_source_name,
    validate_tag,
)
from loom_dagster.sources.model import (
    OPTION_NAMES,
    SQL_DIALECTS,
    FileState,
    KnownFiles,
    OptionRule,
    Refusal,
    Revision,
    ScanResult,
    Skipped,
    Source,
)
from loom_dagster.sources.options import check_option, options_json, parse_option
from loom_dagster.sources.reading import (
    blocks_as_scanned,
    gone_from,
    open_checked,
    read_all,
    too_large_message,
)
from loom_dagster.sources.scanning import scan, walk

__all__ = [
    "FileState",
    "KnownFiles",
    "KEY_PATTERN",
    "OPTION_NAMES",
    "OptionRule",
    "Refusal",
    "Revision",
    "SQL_DIALECTS",
    "ScanResult",
    "Skipped",
    "Source",
    "blocks_as_scanned",
    "check_option",
    "document_digest",
    "document_id",
    "gone_from",
    "open_checked",
    "options_json",
    "parse_option",
    "read_all",
    "key_document_digest",
    "revision_key",
    "scan",
    "source_name_for",
    "too_large_message",
    "validate_source_name",
    "validate_tag",
    "walk",
]
