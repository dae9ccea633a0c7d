"""Scanning a registered folder: the walk (every skipped thing with its reason, an unreadable
folder an error that keeps its documents), the settle window, and the scan's result."""

from __future__ import annotations

import errno
import os
import stat as stat_module
import time
from collections.abc import Collection, Iterable, Mapping
from pathlib import Path
from stat import S_ISREG

from loom_dagster.display import printable
from loom_dagster.errors import SourceError
from loom_dagster.sources.keys import document_id, revision_key
from loom_dagster.sources.model import (
    FileState,
    KnownFiles,
    Refusal,
    Revision,
    ScanResult,
    Skipped,
    Source,
)
from loom_dagster.sources.options import _included, options_json
from loom_dagster.sources.reading import open_checked, sha256_as_scanned, too_large_message
from loom_dagster.sources.settling import Settle

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
    source: Source, under: str | None = None
) -> tuple[list[tuple[str, os.stat_result]], list[Refusal], list[Skipped]]:
    """Every regular file under the root matching an include glob, in path order, refusals,
    and what was skipped with its reason.

    Path order (not the walk's order) is what lets a capped scan resume after a path. A name
    that is not UTF-8 is refused (`invalid_name`) on its own: nothing downstream can key,
    store or show it, and it must not stop its neighbours. Symbolic links (to files or
    folders, loops included), FIFOs, sockets and devices, folders that cannot be read and
    paths past the system's limit are skipped, each with a `Skipped` saying why; a root that
    cannot be read is an error for the whole folder (`unreadable_folder`). With `under` (a
    folder's path relative to the root, reached through no link), only that subtree is walked.
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

    # Paths are cut from os.walk's strings, not made as Path objects: a folder of a million
    # files makes a million of them, and Path's joins and relative_to were most of a scan.
    top = str(root)
    cut = len(top) if top.endswith("/") else len(top) + 1
    everything = _includes_everything(source.include)
    for directory, subdirs, files in os.walk(root / under if under else root, onerror=folder_error):
        prefix = directory[cut:] + "/" if len(directory) > len(top) else ""
        here = directory if directory.endswith("/") else directory + "/"
        kept = []
        for name in subdirs:
            if name.startswith("."):
                continue
            full = here + name
            try:
                stat = os.lstat(full)
            except OSError as error:
                skipped.append(_unreadable(prefix + name, error))
                continue
            if stat_module.S_ISLNK(stat.st_mode):  # os.walk lists a link to a folder here
                skipped.append(Skipped(prefix + name, "symlink", "a symbolic link: not followed"))
                continue
            kept.append(name)
        subdirs[:] = kept
        for name in files:
            if name.startswith("."):
                continue
            relative = prefix + name
            if not everything and not _included(relative, source.include):
                continue
            # _take_at, inline for the common case (a regular file, its name UTF-8): a call
            # per file is a second per million.
            try:
                stat = os.lstat(here + name)
                relative.encode("utf-8")
            except (OSError, UnicodeEncodeError):
                _take_at(here + name, relative, found, refused, skipped)
                continue
            if S_ISREG(stat.st_mode):
                found.append((relative, stat))
            else:
                _take_at(here + name, relative, found, refused, skipped)
    found.sort(key=_first)
    refused.sort(key=lambda item: item.path)
    skipped.sort(key=lambda item: item.path)
    return found, refused, skipped


def _first(item: tuple[str, os.stat_result]) -> str:
    return item[0]


def _includes_everything(include: Collection[str]) -> bool:
    """Whether the include globs take every path (`**/*` and `*` do: fnmatch's `*` crosses
    folders), so a scan need not match each path against them."""
    return any(glob in ("*", "**/*") for glob in include)


def _take(
    source: Source,
    full: Path,
    found: list[tuple[str, os.stat_result]],
    refused: list[Refusal],
    skipped: list[Skipped],
) -> None:
    """Put the entry at `full` (not a folder) where it belongs: found, refused or skipped; or
    nowhere (hidden, not included, gone)."""
    relative = full.relative_to(source.root).as_posix()
    if full.name.startswith(".") or not _included(relative, source.include):
        return
    _take_at(str(full), relative, found, refused, skipped)


def _take_at(
    full: str,
    relative: str,
    found: list[tuple[str, os.stat_result]],
    refused: list[Refusal],
    skipped: list[Skipped],
) -> None:
    """`_take` of an entry neither hidden nor left out by the include globs, at `full`."""
    try:
        relative.encode("utf-8")
    except UnicodeEncodeError:
        refused.append(Refusal(relative, "invalid_name", "the file's name is not UTF-8; rename it"))
        return
    try:
        stat = os.lstat(full)
    except FileNotFoundError:
        return
    except OSError as error:
        skipped.append(
            Skipped(
                relative, "path_too_long", "its path is longer than the system allows: not read"
            )
            if error.errno == errno.ENAMETOOLONG
            else Skipped(relative, "unreadable", f"cannot be read ({error.strerror})")
        )
        return
    why = _not_taken(relative, stat)
    if why is None:
        found.append((relative, stat))
    else:
        skipped.append(why)


def walk_paths(
    source: Source, relatives: Collection[str]
) -> tuple[list[tuple[str, os.stat_result]], list[Refusal], list[Skipped]]:
    """What `walk` would find at these paths (relative to the root) and under them: a path that
    is a folder is walked, a file is taken as `walk` takes it; a path gone, hidden (a component
    starting with a dot) or reached through a symbolic link finds nothing, as in `walk`. The cost
    is that of the paths given, not of the folder."""
    root = Path(source.root)
    if not root.is_dir():
        raise SourceError(
            f"folder {source.root} does not exist or is not a folder", code="missing_folder"
        )
    found: list[tuple[str, os.stat_result]] = []
    refused: list[Refusal] = []
    skipped: list[Skipped] = []
    for relative in _outermost(relatives):
        parts = relative.split("/")
        if any(not part or part.startswith(".") or part == ".." for part in parts):
            continue
        if not _through_folders(root, parts[:-1]):
            continue
        full = root / relative
        try:
            stat = full.stat(follow_symlinks=False)
        except OSError:
            continue
        if stat_module.S_ISDIR(stat.st_mode):
            more_found, more_refused, more_skipped = walk(source, relative)
            found += more_found
            refused += more_refused
            skipped += more_skipped
        else:
            _take(source, full, found, refused, skipped)
    found.sort(key=lambda item: item[0])
    refused.sort(key=lambda item: item.path)
    skipped.sort(key=lambda item: item.path)
    return found, refused, skipped


def _outermost(relatives: Collection[str]) -> list[str]:
    """The paths, without those under another of them (walked with it)."""
    kept: set[str] = set()
    for relative in sorted(set(relatives), key=lambda path: path.count("/")):
        if not covered(relative, kept):
            kept.add(relative)
    return sorted(kept)


def _through_folders(root: Path, parts: list[str]) -> bool:
    """Whether each of these components under root is a real folder (no link), as `walk`
    descends."""
    here = root
    for part in parts:
        here = here / part
        try:
            if not stat_module.S_ISDIR(here.stat(follow_symlinks=False).st_mode):
                return False
        except OSError:
            return False
    return True


def covered(path: str, relatives: Collection[str]) -> bool:
    """Whether `path` is one of `relatives` or under one of them."""
    if path in relatives:
        return True
    parts = path.split("/")
    return any("/".join(parts[:n]) in relatives for n in range(1, len(parts)))


def scan(
    source: Source,
    known: Mapping[str, FileState] | KnownFiles,
    *,
    settle_s: float = 0.0,
    max_hashed: int | None = None,
    resume_after: str | None = None,
    now: float | None = None,
    max_bytes: int | None = None,
    only: Collection[str] | None = None,
    settle: Settle | None = None,
) -> ScanResult:
    """Stat every file, hash only what changed, and report new revisions and deleted paths.

    `known` is the latest registered state per path, or the registry that compares the found
    files with it in bulk (`KnownFiles`: the same answer). A file modified within `settle_s` is
    left for a later scan (it may be half-written). With `max_hashed`, the scan stops after
    hashing that many files and says where to resume; deletions are reported only by a scan
    that reached the end, since an early stop has not seen every path. A file whose options
    changed is a new revision with the bytes it had. A file swapped (for a symlink, another
    file) between its stat and its hash is refused for this scan, not registered. A file
    larger than `max_bytes` (the extractor's input limit) is refused `too_large` from its
    size: not a byte of it is read, hashed or stored.

    With `only` (paths relative to the root, from a change journal), only those paths and what
    is under them are looked at, and only known files among them can be deleted. With `settle`,
    its rule decides which changed files are ready (instead of `settle_s`): see settling.py.
    """
    now = time.time() if now is None else now
    new: list[Revision] = []
    moved: list[Revision] = []
    unchanged: list[str] = []
    unsettled: list[str] = []
    files, refused, skipped = walk(source) if only is None else walk_paths(source, only)
    # A folder with no option rules gives every file the same options: made once, not per file.
    no_options = options_json(source, "") if not source.options else None
    differing: Mapping[str, FileState | None] | None = None
    if isinstance(known, Mapping):
        states: Mapping[str, FileState | None] = known
        candidates: Iterable[str] = known
    else:
        # The registry compares: only the files that are not unchanged come back, with the
        # known paths not found (deleted, unless seen below).
        differing, candidates = known.compare(
            [(p, st.st_size, st.st_mtime_ns, st.st_dev, st.st_ino) for p, st in files],
            no_options
            if no_options is not None
            else [options_json(source, path) for path, _ in files],
        )
        states = differing
    seen: set[str] = {r.path for r in refused}
    # A folder that cannot be read (or a path past the limit) hides its files, it does not
    # delete them: what the catalog knows under it is kept as seen, so it stays live.
    hidden = [
        s.path for s in skipped if s.code in ("unreadable_folder", "path_too_long", "unreadable")
    ]
    if hidden:
        seen |= {
            path
            for path in candidates
            if any(path == h or path.startswith(h + "/") for h in hidden)
        }
    refused = [r for r in refused if resume_after is None or r.path > resume_after]
    hashed = 0
    last_done = resume_after
    gone_now: set[str] = set()  # found by the walk, gone before its hash

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
        if differing is not None and relative not in differing:
            unchanged.append(relative)  # the registry found it as it was
            continue
        previous = states.get(relative)
        options = no_options if no_options is not None else options_json(source, relative)
        same_file = previous is not None and (
            previous.size == stat.st_size
            and previous.mtime_ns == stat.st_mtime_ns
            and previous.inode in (0, stat.st_ino)
            and previous.device in (0, stat.st_dev)
        )
        if previous and same_file and previous.options == options:
            unchanged.append(relative)
            continue
        if (
            not settle.ready(relative, stat.st_size, stat.st_mtime_ns, now)
            if settle is not None
            else now - stat.st_mtime_ns / 1e9 < settle_s
        ):
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
                gone_now.add(relative)
                continue
            refused.append(Refusal(relative, error.code, error.message))
            continue
        hashed += 1
        same_bytes = previous is not None and previous.sha256 == sha and previous.options == options
        revision = Revision(
            # The same bytes keep the key they were registered under, whatever form it has.
            key=(previous.key if same_bytes and previous and previous.key else None)
            or revision_key(source.name, relative, sha, options),
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
        if same_bytes:
            unchanged.append(relative)
            moved.append(revision)
            continue
        new.append(revision)
    refused.sort(key=lambda r: r.path)
    if differing is None:
        gone = (states.keys() - {path for path, _ in files} - seen) | (gone_now & states.keys())
    else:
        gone = (set(candidates) - seen) | {path for path in gone_now if differing.get(path)}
    if only is not None:
        wanted = set(only)
        gone = {path for path in gone if covered(path, wanted)}
    return done(None, tuple(sorted(gone)))
