"""Registered folders: what files they hold, which changed, and the revision keys they get.
Over 500 lines: one idea, reading a registered folder safely (walk, scan, the checked open, keys).

A revision key is `<path trace>~<10 hex>@<first 16 hex of the sha256>`, followed by `~<10 hex>`
when extraction options apply to the file (see `revision_key`), made only of `[A-Za-z0-9._~@-]`
so the Dagster UI can select and backfill it and its partition filter finds a file by folder and
name (`runbooks__disk-full.md~…`). The document id is a readable slug of the file name and the
same hash of (source, path), so two files called README.md differ.

Anyone who can write into a watched folder can swap a file for a symlink between the scan and
the read. Every read of a file therefore goes through `open_checked`: each component is opened
from the root's descriptor without following symlinks, and the descriptor's device, inode, size
(and mtime where known) must be what the scan saw; the bytes are hashed and stored from it.
"""

from __future__ import annotations

import codecs
import errno
import fnmatch
import hashlib
import json
import os
import re
import stat as stat_module
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from stat import S_ISREG

from loom_dagster.contract.formats import FORMATS
from loom_dagster.display import bounded, printable
from loom_dagster.errors import SourceError

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")
KEY_PATTERN = re.compile(r"^[A-Za-z0-9._~@-]+$")
HASH_CHUNK = 1 << 20


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


@dataclass(frozen=True)
class FileState:
    """What the registry remembers of a path: enough to skip hashing an unchanged file."""

    size: int
    mtime_ns: int
    sha256: str
    device: int = 0
    inode: int = 0
    options: str = "{}"  # the options its revision was extracted with, as `options_json`


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


def source_name_for(folder: Path) -> str:
    """A default source name: the folder's own name, made key-safe."""
    return _UNSAFE.sub("-", folder.name).strip("-") or "source"


def validate_source_name(name: str) -> str:
    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}", name):
        raise SourceError(
            f"source name {name!r} must be 1-64 letters, digits, '.', '_' or '-'",
            code="invalid_source",
        )
    return name


_TAG = re.compile(r"[a-z0-9][a-z0-9._-]{0,63}")


def validate_tag(tag: str) -> str:
    """A tag as stored and matched: lowercase, so `--tag Finance` and `--tag finance` agree."""
    folded = tag.strip().lower()
    if not _TAG.fullmatch(folded):
        raise SourceError(
            f"tag {printable(tag)!r} must be 1-64 letters, digits, '.', '_' or '-', "
            "starting with a letter or digit",
            code="invalid_tag",
        )
    return folded


def document_id(source: str, path: str) -> str:
    digest = hashlib.sha256(f"{source}\0{path}".encode()).hexdigest()[:10]
    slug = _UNSAFE.sub("-", posixpath_name(path)).strip("-")[:40] or "file"
    return f"{slug}~{digest}"


# The readable part of a revision key: the path's end, so the UI's partition filter finds a file
# by its folder and name; the digest after it tells apart two paths that read the same here.
PATH_TRACE_CHARS = 80


def path_trace(path: str) -> str:
    """`runbooks/disk full.md` -> `runbooks__disk-full.md`: the path, key-safe, its end kept."""
    trace = "__".join(_UNSAFE.sub("-", part).strip("-") or "-" for part in path.split("/"))
    return trace[-PATH_TRACE_CHARS:].lstrip("_-.") or "file"


def posixpath_name(path: str) -> str:
    return path.rsplit("/", 1)[-1]


def revision_key(source: str, path: str, sha256: str, options: str = "{}") -> str:
    """`<path trace>~<10 hex of (source, path)>@<16 hex of the sha256>`, then `~<10 hex of the
    options>` if any apply.

    The options are part of the key because a revision is what was extracted: the same bytes
    read with another encoding or as another format are another artifact, so a change of
    the options that apply to a file makes a new revision (and a new partition) of it, and a
    file no option applies to keeps the key it always had.
    """
    digest = document_id(source, path).rsplit("~", 1)[1]
    key = f"{path_trace(path)}~{digest}@{sha256[:16]}"
    if options != "{}":
        key += "~" + hashlib.sha256(options.encode()).hexdigest()[:10]
    assert KEY_PATTERN.match(key), key
    return key


# Extraction options ---------------------------------------------------------------------------


def parse_option(spec: str) -> OptionRule:
    """`[GLOB:]NAME=VALUE` as a rule; no glob means every file. Raises invalid_option."""
    target, equals, value = spec.partition("=")
    glob, colon, name = target.rpartition(":")
    if not equals or not name:
        raise SourceError(
            f"option {_shown(spec)} is not [GLOB:]NAME=VALUE (e.g. 'legacy/*.txt:encoding=latin-1')",
            code="invalid_option",
        )
    return check_option(OptionRule(glob if colon else "**/*", name.strip(), value.strip()))


def check_option(rule: OptionRule) -> OptionRule:
    """The rule, if the contract defines its option and takes its value; else invalid_option."""
    name, value = rule.name, rule.value
    if not rule.glob:
        raise SourceError(f"option {_shown(rule.spec())} has an empty glob", code="invalid_option")
    if name == "encoding":
        try:
            # A bytes-to-bytes codec (base64, zlib) or `undefined` decodes no text.
            b"a".decode(codecs.lookup(value).name, "ignore")
        except (LookupError, UnicodeError):
            raise SourceError(
                f"encoding {_shown(value)} is not a known text codec", code="invalid_option"
            ) from None
    elif name == "sql_dialect":
        if value not in SQL_DIALECTS:
            raise SourceError(
                f"sql_dialect {_shown(value)} is not a dialect (one of {', '.join(sorted(SQL_DIALECTS))})",
                code="invalid_option",
            )
    elif name == "format":
        if value not in FORMATS:
            raise SourceError(
                f"format {_shown(value)} is not one of {', '.join(FORMATS)}", code="invalid_option"
            )
    else:
        raise SourceError(
            f"unknown option {_shown(name)} (options: {', '.join(OPTION_NAMES)})",
            code="invalid_option",
        )
    return rule


def _shown(text: str) -> str:
    # The user's own input, quoted, with controls escaped and a long value cut.
    return bounded(repr(text), 80)


def options_json(source: Source, relative: str) -> str:
    """The options that apply to `relative`, as canonical JSON: a later rule wins over an earlier."""
    chosen: dict[str, str] = {}
    for rule in source.options:
        if _included(relative, (rule.glob,)):
            chosen[rule.name] = rule.value
    return json.dumps(chosen, sort_keys=True, separators=(",", ":"))


# Reading a file of a watched folder -----------------------------------------------------------


def _changed(relative: str, why: str) -> SourceError:
    return SourceError(
        f"{printable(relative)} changed since it was scanned ({why}); the next scan registers it again",
        code="source_changed",
    )


@contextmanager
def open_checked(
    root: str,
    relative: str,
    *,
    device: int,
    inode: int,
    size: int,
    mtime_ns: int | None = None,
) -> Iterator[int]:
    """A descriptor of `root/relative` that is the file the scan saw, or SourceError.

    Each directory is opened from its parent's descriptor with O_NOFOLLOW|O_DIRECTORY and the
    file with O_NOFOLLOW, so no symlink, in the name or in a parent swapped since the scan, is
    followed; the descriptor must be a regular file with the scan's device, inode and size
    (and mtime, when given). `source_gone` when the path no longer exists, else
    `source_changed`. A device or inode of 0 is not compared (a record from before both were kept).
    """
    parts = relative.split("/")
    if any(part in ("", ".", "..") for part in parts):
        raise _changed(relative, "not a plain relative path")
    nofollow = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC
    opened: list[int] = []
    try:
        try:
            opened.append(os.open(root, nofollow | os.O_DIRECTORY))
            for part in parts[:-1]:
                opened.append(os.open(part, nofollow | os.O_DIRECTORY, dir_fd=opened[-1]))
            # O_NONBLOCK: a FIFO swapped in must not hang the open; a regular file ignores it.
            fd = os.open(parts[-1], nofollow | os.O_NONBLOCK, dir_fd=opened[-1])
        except FileNotFoundError:
            raise SourceError(
                f"{printable(relative)} is gone from {printable(root)}", code="source_gone"
            ) from None
        except OSError as error:
            if error.errno in (errno.ELOOP, errno.ENOTDIR):
                raise _changed(relative, "a symlink is in its path") from None
            raise SourceError(f"cannot open {printable(relative)}: {error.strerror}") from None
        opened.append(fd)
        stat = os.fstat(fd)
        if not S_ISREG(stat.st_mode):
            raise _changed(relative, "not a regular file")
        if (device and stat.st_dev != device) or (inode and stat.st_ino != inode):
            raise _changed(relative, "another file is at its path")
        if stat.st_size != size:
            raise _changed(relative, f"{stat.st_size} bytes, not {size}")
        if mtime_ns is not None and stat.st_mtime_ns != mtime_ns:
            raise _changed(relative, "modified")
        yield fd
    finally:
        for descriptor in reversed(opened):
            os.close(descriptor)


def too_large_message(size: int, max_bytes: int) -> str:
    return (
        f"the file is {size} bytes, over the {max_bytes} the extractor takes "
        "(LOOM_EXTRACTOR_MAX_BYTES); not read"
    )


def blocks_as_scanned(fd: int, size: int) -> Iterator[bytes]:
    """The file's bytes from its descriptor, a block (HASH_CHUNK) at a time; more or fewer
    than `size` raises `source_changed` at the end."""
    remaining = size + 1  # one byte more tells a file that grew
    read = 0
    while remaining > 0 and (block := os.read(fd, min(HASH_CHUNK, remaining))):
        remaining -= len(block)
        read += len(block)
        if read > size:
            break
        yield block
    if read != size:
        raise SourceError(
            f"the file is {read}{'+' if read > size else ''} bytes now, not {size}; "
            "the next scan registers it again",
            code="source_changed",
        )


def read_all(fd: int, size: int) -> bytes:
    """The file's bytes from its descriptor; more or fewer than `size` is `source_changed`."""
    blocks: list[bytes] = []
    remaining = size + 1  # one byte more tells a file that grew
    while remaining > 0 and (block := os.read(fd, min(HASH_CHUNK, remaining))):
        blocks.append(block)
        remaining -= len(block)
    data = b"".join(blocks)
    if len(data) != size:
        raise SourceError(
            f"the file is {len(data)} bytes now, not {size}; the next scan registers it again",
            code="source_changed",
        )
    return data


def sha256_of_fd(fd: int) -> str:
    digest = hashlib.sha256()
    while block := os.read(fd, HASH_CHUNK):
        digest.update(block)
    return digest.hexdigest()


def sha256_as_scanned(fd: int, relative: str, *, size: int, mtime_ns: int) -> str:
    """The SHA-256 of exactly the `size` bytes the scan saw, or `source_changed`.

    `open_checked` compares the file before the read; a writer may still append or rewrite it
    while it is hashed. One byte more than `size`, or fewer, or a size or mtime that moved by
    the end of the read, and the hash is not of the file as scanned: registering it would pair
    the scan's size with other bytes' hash.
    """
    digest = hashlib.sha256()
    read = 0
    while read <= size and (block := os.read(fd, min(HASH_CHUNK, size + 1 - read))):
        digest.update(block)
        read += len(block)
    if read != size:
        raise _changed(relative, f"{read}{'+' if read > size else ''} bytes read, not {size}")
    after = os.fstat(fd)
    if after.st_size != size or after.st_mtime_ns != mtime_ns:
        raise _changed(relative, "modified while it was read")
    return digest.hexdigest()


# Scanning --------------------------------------------------------------------------------------


_KINDS = {
    stat_module.S_IFIFO: "a FIFO",
    stat_module.S_IFSOCK: "a socket",
    stat_module.S_IFCHR: "a character device",
    stat_module.S_IFBLK: "a block device",
}


def _not_taken(relative: str, stat: os.stat_result) -> Skipped | None:
    """Why an entry that is not a folder is skipped, or None for a regular file."""
    if S_ISREG(stat.st_mode):
        return None
    if stat_module.S_ISLNK(stat.st_mode):
        return Skipped(relative, "symlink", "a symbolic link: not followed, nothing of it read")
    kind = _KINDS.get(stat_module.S_IFMT(stat.st_mode), "not a regular file")
    return Skipped(relative, "not_regular", f"{kind}, not a regular file: not read")


def _unreadable(relative: str, error: OSError) -> Skipped:
    if error.errno == errno.ENAMETOOLONG:
        return Skipped(
            relative, "path_too_long", "its path is longer than the system allows: not read"
        )
    return Skipped(
        relative,
        "unreadable_folder",
        f"the folder cannot be read ({error.strerror}): its documents stay live until it can",
    )


def walk(
    source: Source,
) -> tuple[list[tuple[str, os.stat_result]], list[Refusal], list[Skipped]]:
    """Every regular file under the root matching an include glob, in path order, refusals,
    and what was skipped with its reason.

    Path order (not the walk's order) is what lets a capped scan resume after a path. A name
    that is not UTF-8 is refused (`invalid_name`) on its own: nothing downstream can key,
    store or show it, and it must not stop its neighbours. Symbolic links (to files or
    folders, loops included), FIFOs, sockets and devices, folders that cannot be read and
    paths past the system's limit are skipped, each with a `Skipped` saying why; a root that
    cannot be read is an error for the whole folder (`unreadable_folder`).
    """
    root = Path(source.root)
    if not root.is_dir():
        raise SourceError(
            f"folder {source.root} does not exist or is not a folder", code="missing_folder"
        )
    try:
        os.scandir(root).close()
    except OSError as error:
        raise SourceError(
            f"folder {printable(source.root)} cannot be read ({error.strerror}); "
            "its documents stay live until it can",
            code="unreadable_folder",
        ) from None
    found: list[tuple[str, os.stat_result]] = []
    refused: list[Refusal] = []
    skipped: list[Skipped] = []

    def relative_of(path: str | os.PathLike[str]) -> str:
        return Path(path).relative_to(root).as_posix()

    def folder_error(error: OSError) -> None:
        if error.filename is not None:
            skipped.append(_unreadable(relative_of(error.filename), error))

    for directory, subdirs, files in os.walk(root, onerror=folder_error):
        kept = []
        for name in subdirs:
            if name.startswith("."):
                continue
            full = Path(directory) / name
            try:
                stat = full.stat(follow_symlinks=False)
            except OSError as error:
                skipped.append(_unreadable(relative_of(full), error))
                continue
            if stat_module.S_ISLNK(stat.st_mode):  # os.walk lists a link to a folder here
                skipped.append(
                    Skipped(relative_of(full), "symlink", "a symbolic link: not followed")
                )
                continue
            kept.append(name)
        subdirs[:] = kept
        for name in files:
            full = Path(directory) / name
            relative = full.relative_to(root).as_posix()
            if name.startswith(".") or not _included(relative, source.include):
                continue
            try:
                relative.encode("utf-8")
            except UnicodeEncodeError:
                refused.append(
                    Refusal(relative, "invalid_name", "the file's name is not UTF-8; rename it")
                )
                continue
            try:
                stat = full.stat(follow_symlinks=False)
            except FileNotFoundError:
                continue
            except OSError as error:
                skipped.append(
                    Skipped(
                        relative,
                        "path_too_long",
                        "its path is longer than the system allows: not read",
                    )
                    if error.errno == errno.ENAMETOOLONG
                    else Skipped(relative, "unreadable", f"cannot be read ({error.strerror})")
                )
                continue
            why = _not_taken(relative, stat)
            if why is None:
                found.append((relative, stat))
            else:
                skipped.append(why)
    found.sort(key=lambda item: item[0])
    refused.sort(key=lambda item: item.path)
    skipped.sort(key=lambda item: item.path)
    return found, refused, skipped


def _included(relative: str, globs: Sequence[str]) -> bool:
    return any(
        fnmatch.fnmatch(relative, g) or fnmatch.fnmatch(relative, g.removeprefix("**/"))
        for g in globs
    )


def scan(
    source: Source,
    known: Mapping[str, FileState],
    *,
    settle_s: float = 0.0,
    max_hashed: int | None = None,
    resume_after: str | None = None,
    now: float | None = None,
    max_bytes: int | None = None,
) -> ScanResult:
    """Stat every file, hash only what changed, and report new revisions and deleted paths.

    `known` is the latest registered state per path. A file modified within `settle_s` is
    left for a later scan (it may be half-written). With `max_hashed`, the scan stops after
    hashing that many files and says where to resume; deletions are reported only by a scan
    that reached the end, since an early stop has not seen every path. A file whose options
    changed is a new revision with the bytes it had. A file swapped (for a symlink, another
    file) between its stat and its hash is refused for this scan, not registered. A file
    larger than `max_bytes` (the extractor's input limit) is refused `too_large` from its
    size: not a byte of it is read, hashed or stored.
    """
    now = time.time() if now is None else now
    new: list[Revision] = []
    moved: list[Revision] = []
    unchanged: list[str] = []
    unsettled: list[str] = []
    files, refused, skipped = walk(source)
    seen: set[str] = {path for path, _ in files} | {r.path for r in refused}
    # A folder that cannot be read (or a path past the limit) hides its files, it does not
    # delete them: what the catalog knows under it is kept as seen, so it stays live.
    hidden = [
        s.path for s in skipped if s.code in ("unreadable_folder", "path_too_long", "unreadable")
    ]
    seen |= {path for path in known if any(path == h or path.startswith(h + "/") for h in hidden)}
    refused = [r for r in refused if resume_after is None or r.path > resume_after]
    hashed = 0
    last_done = resume_after

    def done(resume: str | None, deleted: tuple[str, ...]) -> ScanResult:
        return ScanResult(
            tuple(new),
            tuple(unchanged),
            deleted,
            tuple(unsettled),
            resume,
            tuple(r for r in refused if resume is None or r.path <= resume),
            tuple(moved),
            skipped=tuple(skipped),
        )

    for relative, stat in files:
        if resume_after is not None and relative <= resume_after:
            continue
        if max_hashed is not None and hashed >= max_hashed:
            return done(last_done, ())
        last_done = relative
        previous = known.get(relative)
        options = options_json(source, relative)
        same_file = previous is not None and (
            previous.size == stat.st_size
            and previous.mtime_ns == stat.st_mtime_ns
            and previous.inode in (0, stat.st_ino)
            and previous.device in (0, stat.st_dev)
        )
        if previous and same_file and previous.options == options:
            unchanged.append(relative)
            continue
        if now - stat.st_mtime_ns / 1e9 < settle_s:
            unsettled.append(relative)
            continue
        if max_bytes is not None and stat.st_size > max_bytes:
            refused.append(
                Refusal(relative, "too_large", too_large_message(stat.st_size, max_bytes))
            )
            continue
        try:
            with open_checked(
                source.root,
                relative,
                device=stat.st_dev,
                inode=stat.st_ino,
                size=stat.st_size,
                mtime_ns=stat.st_mtime_ns,
            ) as fd:
                sha = sha256_as_scanned(fd, relative, size=stat.st_size, mtime_ns=stat.st_mtime_ns)
        except SourceError as error:
            if error.code == "source_gone":
                seen.discard(relative)
                continue
            refused.append(Refusal(relative, error.code, error.message))
            continue
        hashed += 1
        revision = Revision(
            key=revision_key(source.name, relative, sha, options),
            document_id=document_id(source.name, relative),
            source=source.name,
            path=relative,
            size=stat.st_size,
            mtime_ns=stat.st_mtime_ns,
            sha256=sha,
            device=stat.st_dev,
            inode=stat.st_ino,
            options=options,
        )
        if previous and previous.sha256 == sha and previous.options == options:
            unchanged.append(relative)
            moved.append(revision)
            continue
        new.append(revision)
    refused.sort(key=lambda r: r.path)
    return done(None, tuple(sorted(set(known) - seen)))
