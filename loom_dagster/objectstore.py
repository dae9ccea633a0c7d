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
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import Any, BinaryIO

import fsspec
from fsspec.implementations.local import LocalFileSystem

from loom_dagster.display import one_line
from loom_dagster.errors import LoomError


class StoreError(LoomError):
    """The store could not be reached or answered with an error that may pass (retried)."""

    code = "object_store"
    retryable = True


class StoreRefused(StoreError):
    """The store answered, and no retry will change its answer: the bucket does not exist
    (`store_bucket_missing`) or the credentials were refused (`store_access_denied`)."""

    retryable = False


@dataclass(frozen=True)
class StoredObject:
    """One object as a listing saw it."""

    key: str  # relative to the store's root, with '/'
    size: int
    modified: float  # seconds since the epoch


class ObjectStore:
    def __init__(self, url: str) -> None:
        self.url = url
        self._fs, self._root = _filesystem(url)
        self._transient: tuple[type[BaseException], ...] = (OSError, *_remote_errors(self._fs))

    def _path(self, relative: str) -> str:
        return posixpath.join(self._root, relative)

    @contextlib.contextmanager
    def _calling(self, action: str, relative: str) -> Iterator[None]:
        """Turn what the filesystem raises into a StoreError with a code.

        S3 (through s3fs and botocore) says "no such bucket" and "access denied" as
        FileNotFoundError and PermissionError, and a server that is down or slow as botocore's
        or aiohttp's own exceptions, which are not OSErrors: each gets its code here, so a
        step retries what may pass and stops at once on what will not.
        """
        try:
            yield
        except StoreError:
            raise
        except FileNotFoundError as error:
            if _bucket_missing(error):
                raise StoreRefused(
                    f"the bucket of {self.url} does not exist", code="store_bucket_missing"
                ) from None
            raise StoreError(f"{relative} is not in the object store", code="not_found") from None
        except PermissionError as error:
            raise StoreRefused(
                f"{self.url} refused access to {relative}: {one_line(str(error), 200)}",
                code="store_access_denied",
            ) from None
        except self._transient as error:
            raise StoreError(
                f"cannot {action} {relative}: {one_line(str(error) or type(error).__name__, 300)}"
            ) from error

    def check(self) -> None:
        """Fail at once, with the reason, when the store cannot be written: a missing bucket or
        refused credentials would otherwise fail every file of a run, one retry after another.
        A probe object is written and deleted; a local folder needs no probe."""
        if isinstance(self._fs, LocalFileSystem):
            return
        probe = f"probes/{uuid.uuid4().hex}"
        self.put(probe, b"")
        self.delete(probe)

    def put(self, relative: str, data: bytes) -> None:
        """Write whole or not at all: a reader never sees half a file (an S3 object, multipart
        or not, is visible only once complete)."""
        path = self._path(relative)
        with self._calling("write", relative):
            if isinstance(self._fs, LocalFileSystem):
                _write_private(path, data)
            else:
                self._fs.pipe_file(path, data)

    @contextlib.contextmanager
    def writing(self, relative: str) -> Iterator[BinaryIO]:
        """A handle to stream an object into, stored whole or not at all when the block ends
        (a local partial file renamed into place; a remote upload committed only then)."""
        path = self._path(relative)
        if isinstance(self._fs, LocalFileSystem):
            with self._calling("write", relative):
                _make_private_folders(posixpath.dirname(path))
            partial = f"{path}.{uuid.uuid4().hex}.partial"
            try:
                with self._calling("write", relative):
                    descriptor = os.open(
                        partial, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600
                    )
                with os.fdopen(descriptor, "wb") as handle:
                    yield handle
                with self._calling("write", relative):
                    os.replace(partial, path)
            except BaseException:
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(partial)
                raise
            return
        with self._calling("write", relative):
            remote = self._fs.open(path, "wb", autocommit=False)
        try:
            yield remote
            with self._calling("write", relative):
                remote.close()
                remote.commit()
        except BaseException:
            with contextlib.suppress(Exception):
                remote.discard()
            raise

    def get(self, relative: str) -> bytes:
        with self._calling("read", relative):
            return bytes(self._fs.cat_file(self._path(relative)))

    def exists(self, relative: str) -> bool:
        with self._calling("look for", relative):
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
            with self._calling("list", prefix):
                found = self._fs.find(base, detail=True)
        except StoreError as error:
            if error.code == "not_found":
                return []
            raise
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
            with self._calling("stat", relative):
                return _modified(self._fs.info(self._path(relative)))
        except StoreError as error:
            if error.code == "not_found":
                return None
            raise

    def delete(self, relative: str) -> None:
        """Delete one object; one already gone is not an error."""
        try:
            with self._calling("delete", relative):
                self._fs.rm_file(self._path(relative))
        except StoreError as error:
            if error.code != "not_found":
                raise

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

    def put_original_stream(self, blocks: Iterable[bytes], sha256: str) -> bool:
        """Stream an original into the store at `sha256`'s address, hashing it on the way.

        Bounded memory: one block at a time, written to a partial object (a local temporary
        file renamed into place; elsewhere fsspec's uncommitted write, a multipart upload
        completed by `commit`). Bytes that do not hash to `sha256` are discarded and False
        returned: nothing of them is kept. An original stored already is only refreshed,
        after the bytes were hashed. An exception from `blocks` discards the partial copy.
        """
        relative = self.original_key(sha256)
        path = self._path(relative)
        digest = hashlib.sha256()
        with self._calling("write", relative):
            if self._refreshed(relative):
                for block in blocks:
                    digest.update(block)
                return digest.hexdigest() == sha256
            if isinstance(self._fs, LocalFileSystem):
                return _stream_private(path, blocks, sha256)
            handle = self._fs.open(path, "wb", autocommit=False)
            try:
                for block in blocks:
                    digest.update(block)
                    handle.write(block)
                if digest.hexdigest() != sha256:
                    handle.discard()
                    return False
                handle.close()
                handle.commit()
                return True
            except BaseException:
                with contextlib.suppress(Exception):
                    handle.discard()
                raise

    def _refreshed(self, relative: str) -> bool:
        """True when the local object exists and its time was refreshed (see _put_or_refresh)."""
        if not isinstance(self._fs, LocalFileSystem):
            return False
        try:
            os.utime(self._path(relative))
        except FileNotFoundError:
            return False
        return True

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


# The AWS variables a remote filesystem's client reads when it is made (endpoint, credentials,
# region): fsspec keeps one instance per URL's options, which would outlive a change to them.
_AWS_VARIABLES = (
    "AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_S3", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY",
    "AWS_SESSION_TOKEN", "AWS_PROFILE", "AWS_DEFAULT_REGION", "AWS_REGION",
)  # fmt: skip
_filesystems: dict[tuple[str, str], tuple[Any, str]] = {}


def _filesystem(url: str) -> tuple[Any, str]:
    """The filesystem for `url` and its root path, one per URL and AWS settings.

    The settings are keyed by a digest, so no credential is held as a key or shown."""
    if url.startswith("file:") or "://" not in url:
        fs, root = fsspec.core.url_to_fs(url)
        return fs, str(root)
    settings = hashlib.sha256(
        "\0".join(os.environ.get(name, "") for name in _AWS_VARIABLES).encode()
    ).hexdigest()
    key = (url, settings)
    if key not in _filesystems:
        fs, root = fsspec.core.url_to_fs(url, skip_instance_cache=True)
        _filesystems[key] = (fs, str(root))
    return _filesystems[key]


def _remote_errors(fs: object) -> tuple[type[BaseException], ...]:
    """The exceptions a remote filesystem's client raises for a server that is down, slow or
    broken mid-answer, where they are not OSErrors (botocore's, aiohttp's, a timeout)."""
    if isinstance(fs, LocalFileSystem):
        return ()
    found: list[type[BaseException]] = [TimeoutError]
    with contextlib.suppress(ImportError):
        from botocore.exceptions import BotoCoreError

        found.append(BotoCoreError)
    with contextlib.suppress(ImportError):
        from aiohttp import ClientError

        found.append(ClientError)
    return tuple(found)


def _bucket_missing(error: FileNotFoundError) -> bool:
    """s3fs raises FileNotFoundError both for a missing key and a missing bucket; botocore's
    error it was raised from tells them apart."""
    cause = error.__cause__ or error.__context__
    response = getattr(cause, "response", None)
    if isinstance(response, dict):
        return response.get("Error", {}).get("Code") == "NoSuchBucket"
    return "bucket does not exist" in str(error)


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


def _stream_private(path: str, blocks: Iterable[bytes], sha256: str) -> bool:
    """`_write_private` from a stream of blocks, renamed into place only if they hash to
    `sha256`; the partial file is removed otherwise (or on any error)."""
    _make_private_folders(posixpath.dirname(path))
    partial = f"{path}.{uuid.uuid4().hex}.partial"
    descriptor = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    digest = hashlib.sha256()
    kept = False
    try:
        with os.fdopen(descriptor, "wb") as handle:
            for block in blocks:
                digest.update(block)
                handle.write(block)
        if digest.hexdigest() == sha256:
            os.replace(partial, path)
            kept = True
        return kept
    finally:
        if not kept:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(partial)


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
