"""Issue 40, rows 1, 3 and 9, without a service: a file over the extractor's input limit is
refused from its size, an original is stored in bounded memory, a folder that cannot be read
keeps its documents, and every thing a scan skips is said with its reason."""

from __future__ import annotations

import hashlib
import os
import tracemalloc
from pathlib import Path

import pytest

from loom_dagster import sources
from loom_dagster.errors import SourceError
from loom_dagster.objectstore import ObjectStore
from loom_dagster.pipeline import store_original
from loom_dagster.sources import Revision, Source, scan

MIB = 1 << 20


def sparse(path: Path, size: int) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "wb") as handle:
        handle.truncate(size)
    return path


# Row 1 ------------------------------------------------------------------------------------------


def test_a_file_over_the_input_limit_is_refused_too_large_from_its_size_unread(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "docs"
    sparse(folder / "big.csv", 2 << 30)  # 2 GiB, nothing on disk
    (folder / "a.md").write_text("# A\n")
    read: list[int] = []
    real_read = os.read

    def counting_read(fd: int, n: int) -> bytes:
        block = real_read(fd, n)
        read.append(len(block))
        return block

    monkeypatch.setattr(sources.reading.os, "read", counting_read)
    result = scan(Source("docs", str(folder)), {}, max_bytes=64 * MIB)

    [refusal] = result.refused
    assert (refusal.path, refusal.code) == ("big.csv", "too_large")
    assert refusal.message.startswith(f"the file is {2 << 30} bytes, over the {64 * MIB}")
    assert [r.path for r in result.new] == ["a.md"]
    assert sum(read) == len("# A\n")  # a.md's bytes only (and the one past its end)


def revision_of(folder: Path, name: str) -> Revision:
    path = folder / name
    stat = path.stat()
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while block := handle.read(MIB):
            digest.update(block)
    return Revision(
        key="k", document_id="d", source="s", path=name, size=stat.st_size,
        mtime_ns=stat.st_mtime_ns, sha256=digest.hexdigest(), device=stat.st_dev,
        inode=stat.st_ino,
    )  # fmt: skip


def test_a_revision_over_the_limit_is_refused_before_its_file_is_opened(tmp_path: Path) -> None:
    folder = tmp_path / "docs"
    sparse(folder / "big.csv", 3 * MIB)
    revision = revision_of(folder, "big.csv")
    (folder / "big.csv").unlink()  # not even opened: the recorded size is enough
    store = ObjectStore((tmp_path / "store").as_uri())
    with pytest.raises(SourceError) as raised:
        store_original(store, str(folder), revision, max_bytes=MIB)
    assert raised.value.code == "too_large"
    assert not (tmp_path / "store").exists()


def test_an_original_is_hashed_and_stored_in_bounded_memory(tmp_path: Path) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "data.bin").write_bytes(os.urandom(1024) * (24 * 1024))  # 24 MiB
    revision = revision_of(folder, "data.bin")
    store = ObjectStore((tmp_path / "store").as_uri())
    tracemalloc.start()
    try:
        store_original(store, str(folder), revision)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 4 * MIB, peak  # a block or two, not the file (nor twice it)
    stored = tmp_path / "store" / store.original_key(revision.sha256)
    assert stored.stat().st_size == 24 * MIB


def test_bytes_that_do_not_hash_to_the_revision_leave_nothing_in_the_store(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "a.txt").write_bytes(b"x" * (3 * MIB))
    revision = revision_of(folder, "a.txt")
    with open(folder / "a.txt", "r+b") as handle:  # same size and inode, other bytes
        handle.write(b"y")
    store = ObjectStore((tmp_path / "store").as_uri())
    with pytest.raises(SourceError) as raised:
        store_original(store, str(folder), revision)
    assert raised.value.code == "source_changed"
    assert [p for p in (tmp_path / "store").rglob("*") if p.is_file()] == []


# Row 9: every thing skipped is said, with its reason ------------------------------------------


def skipped_of(folder: Path) -> dict[str, tuple[str, str]]:
    result = scan(Source("docs", str(folder)), {})
    return {s.path: (s.code, s.message) for s in result.skipped}


def test_a_fifo_is_skipped_as_not_regular(tmp_path: Path) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    os.mkfifo(folder / "pipe.txt")
    assert skipped_of(folder) == {
        "pipe.txt": ("not_regular", "a FIFO, not a regular file: not read")
    }


def test_symlinks_loops_and_one_to_etc_shadow_are_skipped_unread(tmp_path: Path) -> None:
    folder = tmp_path / "docs"
    (folder / "real").mkdir(parents=True)
    (folder / "shadow.txt").symlink_to("/etc/shadow")
    (folder / "loop.txt").symlink_to(folder / "loop.txt")
    (folder / "linked").symlink_to(folder / "real")
    found = skipped_of(folder)
    assert found == {
        "linked": ("symlink", "a symbolic link: not followed"),
        "loop.txt": ("symlink", "a symbolic link: not followed, nothing of it read"),
        "shadow.txt": ("symlink", "a symbolic link: not followed, nothing of it read"),
    }


def test_a_path_past_the_systems_limit_is_skipped_as_too_long(tmp_path: Path) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    limit = os.pathconf(folder, "PC_PATH_MAX")
    deep = os.open(folder, os.O_RDONLY)
    part = "d" * 200
    depth = 0
    try:  # made from descriptors: the path as a whole is past what the system takes
        while depth * (len(part) + 1) < limit + 256:
            os.mkdir(part, dir_fd=deep)
            inner = os.open(part, os.O_RDONLY, dir_fd=deep)
            os.close(deep)
            deep = inner
            depth += 1
        os.close(os.open("note.md", os.O_WRONLY | os.O_CREAT, dir_fd=deep))
    finally:
        os.close(deep)
    found = skipped_of(folder)
    [(path, (code, message))] = found.items()
    assert code == "path_too_long"
    assert message == "its path is longer than the system allows: not read"
    assert path.startswith(part + "/")


def test_an_unreadable_subfolder_is_skipped_and_its_files_are_not_deleted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "docs"
    (folder / "locked").mkdir(parents=True)
    (folder / "locked" / "l.md").write_text("# L\n")
    (folder / "a.md").write_text("# A\n")
    first = scan(Source("docs", str(folder)), {})
    known = {
        r.path: sources.FileState(r.size, r.mtime_ns, r.sha256, r.device, r.inode)
        for r in first.new
    }
    lock_for_real = os.geteuid() != 0
    if lock_for_real:
        (folder / "locked").chmod(0)
    else:  # root reads any folder: the scan sees what a non-root user (or a dead mount) would
        real_scandir = os.scandir

        def refusing(path: object = ".") -> object:
            if Path(str(path)) == folder / "locked":
                raise PermissionError(13, "Permission denied", str(path))
            return real_scandir(path)  # type: ignore[arg-type]

        monkeypatch.setattr(os, "scandir", refusing)
    try:
        result = scan(Source("docs", str(folder)), known)
    finally:
        if lock_for_real:
            (folder / "locked").chmod(0o755)
    assert result.deleted == ()
    assert [(s.path, s.code) for s in result.skipped] == [("locked", "unreadable_folder")]
    assert result.skipped[0].message == (
        "the folder cannot be read (Permission denied): its documents stay live until it can"
    )
