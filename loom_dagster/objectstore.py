"""The object store: originals, artifacts and per-revision outputs, on any fsspec URL.

Originals are addressed by the SHA-256 of their bytes and artifacts by the SHA-256 of their
canonical serialization, so parallel steps write without contention and nothing is edited.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import posixpath
import uuid
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import fsspec
from fsspec.implementations.local import LocalFileSystem

from loom_dagster.errors import LoomError


class StoreError(LoomError):
    code = "object_store"
    retryable = True


@dataclass(frozen=True)
class StoredObject:
    """One object as a listing saw it."""

    key: str  # relative to the store's root, with '/'
    size: int
    modified: float  # seconds since the epoch


class ObjectStore:
    def __init__(self, url: str) -> None:
        self.url = url
        self._fs, self._root = fsspec.core.url_to_fs(url)

    def _path(self, relative: str) -> str:
        return posixpath.join(self._root, relative)

    def put(self, relative: str, data: bytes) -> None:
        """Write whole or not at all: a reader never sees half a file."""
        path = self._path(relative)
        try:
            if isinstance(self._fs, LocalFileSystem):
                _write_private(path, data)
            else:
                self._fs.pipe_file(path, data)
        except OSError as error:
            raise StoreError(f"cannot write {relative}: {error}") from error

    def get(self, relative: str) -> bytes:
        try:
            return bytes(self._fs.cat_file(self._path(relative)))
        except FileNotFoundError:
            raise StoreError(f"{relative} is not in the object store", code="not_found") from None
        except OSError as error:
            raise StoreError(f"cannot read {relative}: {error}") from error

    def exists(self, relative: str) -> bool:
        return bool(self._fs.exists(self._path(relative)))

    def _put_or_refresh(self, relative: str, data: bytes) -> None:
        """Write a content-addressed object, or mark the stored copy as just used.

        Garbage collection spares objects modified within its grace period, so a step that
        reuses an object gc has seen unreferenced keeps it alive by refreshing its time.
        """
        if isinstance(self._fs, LocalFileSystem):
            try:
                os.utime(self._path(relative))
                return
            except FileNotFoundError:
                pass
            except OSError as error:
                raise StoreError(f"cannot refresh {relative}: {error}") from error
        # Elsewhere a write is the only way to refresh; the bytes are the same.
        self.put(relative, data)

    # Listing and deleting (garbage collection) -------------------------------------------------

    def list_objects(self, prefix: str) -> list[StoredObject]:
        """Every object under `prefix` (a folder such as "originals"), with size and time."""
        base = self._path(prefix)
        try:
            found = self._fs.find(base, detail=True)
        except FileNotFoundError:
            return []
        except OSError as error:
            raise StoreError(f"cannot list {prefix}: {error}") from error
        root = self._root.rstrip("/") + "/"
        objects = []
        for path, info in sorted(found.items()):
            if info.get("type") != "file":
                continue
            objects.append(
                StoredObject(path.removeprefix(root), int(info.get("size") or 0), _modified(info))
            )
        return objects

    def modified(self, relative: str) -> float | None:
        """The object's modification time, or None when it is gone."""
        try:
            return _modified(self._fs.info(self._path(relative)))
        except FileNotFoundError:
            return None
        except OSError as error:
            raise StoreError(f"cannot stat {relative}: {error}") from error

    def delete(self, relative: str) -> None:
        """Delete one object; one already gone is not an error."""
        try:
            self._fs.rm_file(self._path(relative))
        except FileNotFoundError:
            pass
        except OSError as error:
            raise StoreError(f"cannot delete {relative}: {error}") from error

    def put_json(self, relative: str, value: Any) -> None:
        self.put(relative, json.dumps(value, sort_keys=True).encode("utf-8"))

    def get_json(self, relative: str) -> Any:
        return json.loads(self.get(relative))

    # Content-addressed originals -------------------------------------------------------------

    @staticmethod
    def original_key(sha256: str) -> str:
        return f"originals/{sha256[:2]}/{sha256}"

    def put_original(self, data: bytes) -> str:
        sha = hashlib.sha256(data).hexdigest()
        self._put_or_refresh(self.original_key(sha), data)
        return sha

    def get_original(self, sha256: str) -> bytes:
        data = self.get(self.original_key(sha256))
        if hashlib.sha256(data).hexdigest() != sha256:
            raise StoreError(f"original {sha256} does not match its address", code="corrupt_store")
        return data

    @staticmethod
    def artifact_key(sha256: str) -> str:
        return f"artifacts/{sha256[:2]}/{sha256}.json"

    def put_artifact(self, canonical: bytes) -> str:
        sha = hashlib.sha256(canonical).hexdigest()
        self._put_or_refresh(self.artifact_key(sha), canonical)
        return sha

    def get_artifact_bytes(self, sha256: str) -> bytes:
        return self.get(self.artifact_key(sha256))

    # Per-revision state written by the steps ------------------------------------------------

    @staticmethod
    def revision_key(revision: str, name: str) -> str:
        return f"revisions/{revision}/{name}"


def _modified(info: dict[str, Any]) -> float:
    # A local file says `mtime` (seconds); S3 says `LastModified` (a datetime).
    value = info.get("mtime", info.get("LastModified", info.get("last_modified")))
    if isinstance(value, datetime):
        return value.timestamp()
    if value is None:
        raise StoreError(f"the store gives no modification time for {info.get('name')}")
    return float(value)


def _write_private(path: str, data: bytes) -> None:
    """Write a local object whole (a temporary name, then a rename), readable by its owner only.

    The store holds copies of every original: a folder or file another user can read would
    publish them to that user, whatever the watched folders allowed.
    """
    _make_private_folders(posixpath.dirname(path))
    partial = f"{path}.{uuid.uuid4().hex}.partial"
    descriptor = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    try:
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(data)
        os.replace(partial, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(partial)
        raise


def _make_private_folders(folder: str) -> None:
    """Create `folder` and any missing parent, each 0700 (os.makedirs gives only the last one
    its mode)."""
    missing = []
    while folder and not os.path.isdir(folder):
        missing.append(folder)
        folder = posixpath.dirname(folder)
    for path in reversed(missing):
        with contextlib.suppress(FileExistsError):  # another step made it meanwhile
            os.mkdir(path, 0o700)
