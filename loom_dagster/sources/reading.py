"""Reading a file of a watched folder: one open that follows no symlink and must find the
file the scan saw (device, inode, size), its bytes read, hashed and streamed from that
descriptor, and refused unread when it is over the extractor's limit."""

from __future__ import annotations

import errno
import hashlib
import os
from collections.abc import Iterator
from contextlib import contextmanager
from stat import S_ISREG

from loom_dagster.display import printable
from loom_dagster.errors import SourceError

HASH_CHUNK = 1 << 20


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


def gone_from(root: str, relative: str) -> bool:
    """Whether `relative` was deleted from `root` (a folder still there): nothing of a
    revision of it is made live. A folder that is gone or cannot be read hides its files, it
    does not delete them (as a scan says), so that is not `gone`."""
    try:
        os.lstat(os.path.join(root, relative))
    except FileNotFoundError:
        return os.path.isdir(root)
    except OSError:
        return False
    return False
