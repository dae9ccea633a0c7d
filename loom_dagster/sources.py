"""Registered folders: what files they hold, which changed, and the revision keys they get.

A revision key is `<document id>@<first 16 hex of the sha256>`, made only of
`[A-Za-z0-9._~@-]` so the Dagster UI can select and backfill it. The document id is a readable
slug of the file name and a hash of (source, path), so two files called README.md differ.
"""

from __future__ import annotations

import fnmatch
import hashlib
import os
import re
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from stat import S_ISREG

from loom_dagster.errors import SourceError

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")
KEY_PATTERN = re.compile(r"^[A-Za-z0-9._~@-]+$")
HASH_CHUNK = 1 << 20


@dataclass(frozen=True)
class Source:
    name: str
    root: str
    include: tuple[str, ...] = ("**/*",)


@dataclass(frozen=True)
class FileState:
    """What the registry remembers of a path: enough to skip hashing an unchanged file."""

    size: int
    mtime_ns: int
    sha256: str


@dataclass(frozen=True)
class Revision:
    key: str
    document_id: str
    source: str
    path: str
    size: int
    mtime_ns: int
    sha256: str


@dataclass(frozen=True)
class ScanResult:
    new: tuple[Revision, ...]
    unchanged: tuple[str, ...]
    deleted: tuple[str, ...]
    unsettled: tuple[str, ...]
    resume_after: str | None  # set when the per-tick cap stopped the scan early


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


def document_id(source: str, path: str) -> str:
    digest = hashlib.sha256(f"{source}\0{path}".encode()).hexdigest()[:10]
    slug = _UNSAFE.sub("-", posixpath_name(path)).strip("-")[:40] or "file"
    return f"{slug}~{digest}"


def posixpath_name(path: str) -> str:
    return path.rsplit("/", 1)[-1]


def revision_key(source: str, path: str, sha256: str) -> str:
    key = f"{document_id(source, path)}@{sha256[:16]}"
    assert KEY_PATTERN.match(key), key
    return key


def sha256_of_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while block := handle.read(HASH_CHUNK):
            digest.update(block)
    return digest.hexdigest()


def iter_files(source: Source) -> Iterator[tuple[str, os.stat_result]]:
    """Every regular file under the root matching an include glob, in path order.

    Path order (not the walk's order) is what lets a capped scan resume after a path.
    """
    root = Path(source.root)
    if not root.is_dir():
        raise SourceError(
            f"folder {source.root} does not exist or is not a folder", code="missing_folder"
        )
    found: list[tuple[str, os.stat_result]] = []
    for directory, subdirs, files in os.walk(root):
        subdirs[:] = [d for d in subdirs if not d.startswith(".")]
        for name in files:
            full = Path(directory) / name
            relative = full.relative_to(root).as_posix()
            if name.startswith(".") or not _included(relative, source.include):
                continue
            try:
                stat = full.stat(follow_symlinks=False)
            except FileNotFoundError:
                continue
            if S_ISREG(stat.st_mode):  # not a link, a device or a folder
                found.append((relative, stat))
    found.sort(key=lambda item: item[0])
    yield from found


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
) -> ScanResult:
    """Stat every file, hash only what changed, and report new revisions and deleted paths.

    `known` is the latest registered state per path. A file modified within `settle_s` is
    left for a later scan (it may be half-written). With `max_hashed`, the scan stops after
    hashing that many files and says where to resume; deletions are reported only by a scan
    that reached the end, since an early stop has not seen every path.
    """
    now = time.time() if now is None else now
    new: list[Revision] = []
    unchanged: list[str] = []
    unsettled: list[str] = []
    seen: set[str] = set()
    hashed = 0
    last_done = resume_after
    for relative, stat in iter_files(source):
        seen.add(relative)
        if resume_after is not None and relative <= resume_after:
            continue
        if max_hashed is not None and hashed >= max_hashed:
            return ScanResult(tuple(new), tuple(unchanged), (), tuple(unsettled), last_done)
        last_done = relative
        previous = known.get(relative)
        if previous and previous.size == stat.st_size and previous.mtime_ns == stat.st_mtime_ns:
            unchanged.append(relative)
            continue
        if now - stat.st_mtime_ns / 1e9 < settle_s:
            unsettled.append(relative)
            continue
        sha = sha256_of_file(Path(source.root) / relative)
        hashed += 1
        if previous and previous.sha256 == sha:
            unchanged.append(relative)
            continue
        new.append(
            Revision(
                key=revision_key(source.name, relative, sha),
                document_id=document_id(source.name, relative),
                source=source.name,
                path=relative,
                size=stat.st_size,
                mtime_ns=stat.st_mtime_ns,
                sha256=sha,
            )
        )
    deleted = tuple(sorted(set(known) - seen))
    return ScanResult(tuple(new), tuple(unchanged), deleted, tuple(unsettled), None)
