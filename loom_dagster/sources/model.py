"""What a registered folder is and what its scan finds: sources, option rules, file states,
revisions, refusals, skipped things and the scan's result, with the bounds they share."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import NamedTuple, Protocol

# The extraction options a source may set per glob: contract 001's query options, and the
# declared format (sent as the `format` parameter, in place of routing by the file's extension).
OPTION_NAMES = ("encoding", "sql_dialect", "format")
# sqlglot's dialect names (sqlglot.dialects.DIALECT_MODULE_NAMES); loom_dagster never imports
# a parser library, so a test keeps this list equal to the installed sqlglot's.
SQL_DIALECTS = frozenset(
    "athena bigquery clickhouse databricks dax doris dremio drill druid duckdb dune exasol "
    "fabric hive materialize mysql oracle postgres presto prql redshift risingwave singlestore "
    "snowflake solr spark spark2 sqlite starrocks tableau teradata trino tsql".split()
)


@dataclass(frozen=True)
class OptionRule:
    """An extraction option for the files matching `glob`: `legacy/*.txt:encoding=latin-1`."""

    glob: str
    name: str
    value: str

    def spec(self) -> str:
        return f"{self.glob}:{self.name}={self.value}"


@dataclass(frozen=True)
class Source:
    name: str
    root: str
    include: tuple[str, ...] = ("**/*",)
    options: tuple[OptionRule, ...] = ()
    # Labels a search can filter on (`loom search --tag`); every chunk of the source carries them.
    tags: tuple[str, ...] = ()


class FileState(NamedTuple):
    """What the registry remembers of a path: enough to skip hashing an unchanged file.

    A named tuple, not a dataclass: the catalog reads one per known file (a million on a large
    folder), and a tuple is made from its row at C speed."""

    size: int
    mtime_ns: int
    sha256: str
    device: int = 0
    inode: int = 0
    options: str = "{}"  # the options its revision was extracted with, as `options_json`
    key: str = ""  # its revision's key, as registered (a key made before keeps working)


class KnownFiles(Protocol):
    """What the registry knows of a folder's files, compared where it is kept: a scan hands it
    the files it found and gets back only those that differ, instead of a FileState per known
    file (a million of them, each made in Python, to find that nothing changed)."""

    def __len__(self) -> int:
        """How many paths are known (the retire guard's whole)."""

    def compare(
        self, found: Sequence[tuple[str, int, int, int, int]], options: str | Sequence[str]
    ) -> tuple[dict[str, FileState | None], list[str]]:
        """For `found` ((path, size, mtime_ns, device, inode) in path order) and their options
        (one JSON for all, or one each): the state of each found path that is not unchanged (its
        size, mtime, identity or options differ; None: not known), and the known paths not
        found."""


@dataclass(frozen=True)
class Revision:
    key: str
    document_id: str
    source: str
    path: str
    size: int
    mtime_ns: int
    sha256: str
    # The file as the scan saw it: a read must find this very file (0: not recorded).
    device: int = 0
    inode: int = 0
    options: str = "{}"  # `options_json` of the extraction options that apply to the path

    def extraction_options(self) -> tuple[str | None, dict[str, str]]:
        """(declared format or None, the contract's query options) for the extractor."""
        options = dict(json.loads(self.options))
        return options.pop("format", None), options


@dataclass(frozen=True)
class Refusal:
    """A file the scan will not register, with a code: `invalid_name`, `source_changed`."""

    path: str  # a name that is not UTF-8 holds its bytes as surrogates: show it with printable()
    code: str
    message: str


@dataclass(frozen=True)
class Skipped:
    """A thing in a watched folder the scan did not take, with why: a symbolic link
    (`symlink`), a FIFO, socket or device (`not_regular`), a folder it cannot read
    (`unreadable_folder`: its documents stay live), a path past the system's limit
    (`path_too_long`), an entry it cannot stat (`unreadable`)."""

    path: str  # relative to the root; show it with printable()
    code: str
    message: str


@dataclass(frozen=True)
class ScanResult:
    new: tuple[Revision, ...]
    unchanged: tuple[str, ...]
    deleted: tuple[str, ...]
    unsettled: tuple[str, ...]
    resume_after: str | None  # set when the per-tick cap stopped the scan early
    refused: tuple[Refusal, ...] = ()
    # Same bytes and options, but another inode (rewritten, copied over): its registered
    # revision takes the new identity, so reading it is not refused as changed.
    moved: tuple[Revision, ...] = field(default=())
    # Keys registered before that must run again (an edit undone, a file written again, a
    # rewritten file whose read was refused): their partitions may already hold a
    # materialization, so whoever schedules runs asks for them by name.
    rerun: tuple[str, ...] = field(default=())
    # Not taken, each with its reason (announced, and counted in the conservation identity).
    skipped: tuple[Skipped, ...] = field(default=())
    # Deleted paths whose retirement is held until confirmed (pipeline/scan.py's guard).
    held: tuple[str, ...] = field(default=())
    held_why: str = ""  # why they are held, for the one line that says so
