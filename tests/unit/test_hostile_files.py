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

    monkeypatch.setattr(sources.os, "read", counting_read)
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
