"""The vector index's generations on disk, and the manifest that names the one served.

A generation holds every live chunk's vectors, written whole before anything names it and never
changed after; a writer (one at a time, under the folder's lock) writes the next generation and
swaps the manifest in with one `os.replace`, so a reader sees the generation before a batch or
after it (search/vector.py describes the files)."""

from __future__ import annotations

import fcntl
import functools
import json
import os
import re
import shutil
import time
import uuid
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from loom_dagster.display import printable
from loom_dagster.errors import LoomError
from loom_dagster.search.embedding import Matrix
from loom_dagster.search.hnsw import write_graph
from loom_dagster.search.lexical import IndexBusy, IndexedChunk
from loom_dagster.search.vector_files import (
    DOCUMENTS,
    GENERATIONS,
    GRAPH,
    LEGACY_DOCS,
    LOCK,
    MANIFEST,
)

_GENERATION_NAME = re.compile(r"[0-9]{20}-[0-9a-f]{8}")


@dataclass(frozen=True)
class _Entry:
    document: str
    revision: str
    source: str
    path: str
    format: str
    count: int
    rows: int


class Generation:
    """One generation's files, memory-mapped read-only: opening it reads no vector."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.vectors: Matrix = _load(folder, "vectors")
        self.keys: npt.NDArray[np.uint64] = _load(folder, "keys")
        self.row_chunk: npt.NDArray[np.int64] = _load(folder, "row_chunk")
        self.chunk_ids: npt.NDArray[np.str_] = _load(folder, "chunk_ids")
        self.block_types: npt.NDArray[np.str_] = _load(folder, "block_types")
        self.doc_formats: npt.NDArray[np.str_] = _load(folder, "doc_formats")
        self.doc_sources: npt.NDArray[np.str_] = _load(folder, "doc_sources")
        self.doc_paths: npt.NDArray[np.str_] = _load(folder, "doc_paths")
        self.doc_chunks: npt.NDArray[np.int64] = _load(folder, "doc_chunks")
        self.has_graph = (folder / GRAPH).is_file()
        rows, chunks = len(self.vectors), len(self.chunk_ids)
        if (
            self.vectors.ndim != 2
            or len(self.keys) != rows
            or len(self.row_chunk) != rows
            or len(self.block_types) != chunks
            or int(np.asarray(self.doc_chunks).sum()) != chunks
            or not len(self.doc_formats) == len(self.doc_sources) == len(self.doc_paths)
            or len(self.doc_formats) != len(self.doc_chunks)
        ):
            raise ValueError("its files do not agree on the number of rows, chunks or documents")

    def documents(self) -> tuple[list[_Entry], int]:
        """Each document in row order, and the next free graph key (the writer's view)."""
        entries, next_key = _listing(self.folder)
        return list(entries), next_key


# A publish reads the listing of the generation it replaces twice (which revision each document
# has, then the entries it copies): 100,000 entries are seconds to parse. A generation is never
# changed once written and its name never reused, so a process parses each one once.
@functools.lru_cache(maxsize=2)
def _listing(folder: Path) -> tuple[tuple[_Entry, ...], int]:
    with open(folder / DOCUMENTS, encoding="utf-8") as listing:
        data = json.load(listing)
    return tuple(_Entry(**entry) for entry in data["documents"]), int(data["next_key"])


def _load(folder: Path, name: str) -> Any:
    return np.load(folder / f"{name}.npy", mmap_mode="r", allow_pickle=False)


def _save(folder: Path, name: str, array: npt.ArrayLike) -> None:
    with open(folder / f"{name}.npy", "wb") as out:
        np.save(out, np.asarray(array), allow_pickle=False)
        out.flush()
        os.fsync(out.fileno())


def _fsync_directory(path: Path) -> None:
    directory = os.open(path, os.O_RDONLY)
    try:
        os.fsync(directory)
    finally:
        os.close(directory)


def readable_generation(directory: Path, layout: str) -> Generation | None:
    """The writer's view: a damaged generation holds nothing, so the next publish starts a
    new one and `pipeline.sync_vectors` embeds every live document into it again (from the
    embedding cache: nothing unchanged is embedded twice). A reader reports the damage."""
    try:
        generation = open_generation(directory, layout, read_manifest(directory))
        if generation is not None:
            generation.documents()  # the listing a writer reads: damaged is unreadable too
        return generation
    except FileNotFoundError:
        raise
    except (OSError, ValueError, KeyError, TypeError):
        return None
    except LoomError as error:
        if error.code != "index_unreadable":
            raise
        return None


def open_generation(directory: Path, layout: str, manifest: Mapping[str, Any]) -> Generation | None:
    name = manifest.get("generation")
    if manifest.get("model") != layout or not isinstance(name, str):
        # Vectors of another model (or layout) cannot be compared with this one's queries;
        # the next sync under this model embeds every live document again.
        return None
    if not _GENERATION_NAME.fullmatch(name):
        raise LoomError(
            f"{directory / MANIFEST} names {printable(name)!r}, not a generation",
            code="index_unreadable",
        )
    try:
        return Generation(directory / GENERATIONS / name)
    except FileNotFoundError:
        raise  # replaced by a writer since the manifest was read: read it again
    except (OSError, ValueError, KeyError) as error:
        raise LoomError(
            f"generation {name} in {directory} cannot be read: {error}",
            code="index_unreadable",
        ) from error


def write_generation(
    directory: Path,
    old: Generation | None,
    documents: Mapping[str, Sequence[IndexedChunk]],
    hashes: Mapping[str, Sequence[Sequence[str]]],
    vectors: Mapping[str, npt.NDArray[np.float32]],
    retire: set[str],
    *,
    embedder_dimension: int,
    hnsw_threshold: int,
) -> str:
    """The new generation: the old one's rows of every document not replaced or retired
    (copied in runs, keys kept), then the batch's documents (new keys); returns its name."""
    old_entries, next_key = old.documents() if old is not None else ([], 0)
    dropped = set(documents) | retire
    entries: list[_Entry] = []
    runs: list[tuple[int, int, int, int]] = []  # (first chunk, end chunk, first row, end row)
    kept_rows = np.zeros(len(old.vectors) if old is not None else 0, dtype=bool)
    chunk_at = row_at = 0
    for entry in old_entries:
        if entry.document not in dropped:
            entries.append(entry)
            kept_rows[row_at : row_at + entry.rows] = True
            span = (chunk_at, chunk_at + entry.count, row_at, row_at + entry.rows)
            if runs and runs[-1][1] == span[0] and runs[-1][3] == span[2]:
                runs[-1] = (runs[-1][0], span[1], runs[-1][2], span[3])
            else:
                runs.append(span)
        chunk_at += entry.count
        row_at += entry.rows
    fresh: list[tuple[str, Sequence[IndexedChunk], list[str]]] = []
    for document_id, chunks in documents.items():
        flat = [h for rows in hashes[document_id] for h in rows]
        first = chunks[0] if chunks else None
        entries.append(
            _Entry(
                document=document_id,
                revision=first.revision if first else "",
                source=first.source if first else "",
                path=first.path if first else "",
                format=first.format if first else "",
                count=len(chunks),
                rows=len(flat),
            )
        )
        fresh.append((document_id, chunks, flat))

    name = f"{time.time_ns():020d}-{uuid.uuid4().hex[:8]}"
    folder = directory / GENERATIONS / name
    folder.mkdir(parents=True)
    dimension = next(
        (len(v) for v in vectors.values()),
        old.vectors.shape[1] if old is not None else max(embedder_dimension, 1),
    )
    total = sum(entry.rows for entry in entries)
    new_rows = sum(len(flat) for _, _, flat in fresh)
    # Written in place (a memory map over the new file), so a big index is never held twice.
    matrix = np.lib.format.open_memmap(
        folder / "vectors.npy", mode="w+", dtype=np.float32, shape=(total, dimension)
    )
    keys: list[npt.NDArray[np.uint64]] = []
    row_chunk: list[npt.NDArray[np.int64]] = []
    chunk_ids: list[npt.NDArray[np.str_]] = []
    block_types: list[npt.NDArray[np.str_]] = []
    at = chunks_at = 0
    for first_chunk, end_chunk, first_row, end_row in runs:
        assert old is not None
        matrix[at : at + end_row - first_row] = old.vectors[first_row:end_row]
        keys.append(np.asarray(old.keys[first_row:end_row], dtype=np.uint64))
        row_chunk.append(
            np.asarray(old.row_chunk[first_row:end_row], dtype=np.int64) - first_chunk + chunks_at
        )
        chunk_ids.append(np.asarray(old.chunk_ids[first_chunk:end_chunk]))
        block_types.append(np.asarray(old.block_types[first_chunk:end_chunk]))
        at += end_row - first_row
        chunks_at += end_chunk - first_chunk
    new_keys = np.arange(next_key, next_key + new_rows, dtype=np.uint64)
    for document_id, chunks, flat in fresh:
        if flat:
            matrix[at : at + len(flat)] = _stack([vectors[h] for h in flat], dimension)
        per_chunk = np.array([len(rows) for rows in hashes[document_id]], dtype=np.int64)
        row_chunk.append(np.repeat(np.arange(len(chunks), dtype=np.int64), per_chunk) + chunks_at)
        chunk_ids.append(np.array([c.chunk_id for c in chunks], dtype=np.str_))
        block_types.append(np.array([c.block_type for c in chunks], dtype=np.str_))
        at += len(flat)
        chunks_at += len(chunks)
    keys.append(new_keys)
    matrix.flush()
    del matrix
    with open(folder / "vectors.npy", "rb+") as written:
        os.fsync(written.fileno())
    all_keys = np.concatenate(keys)
    _save(folder, "keys", all_keys)
    _save(folder, "row_chunk", _joined(row_chunk, np.int64))
    _save(folder, "chunk_ids", _joined(chunk_ids, np.str_))
    _save(folder, "block_types", _joined(block_types, np.str_))
    _save(folder, "doc_formats", np.array([e.format for e in entries if e.count], np.str_))
    _save(folder, "doc_sources", np.array([e.source for e in entries if e.count], np.str_))
    _save(folder, "doc_paths", np.array([e.path for e in entries if e.count], np.str_))
    _save(folder, "doc_chunks", np.array([e.count for e in entries if e.count], np.int64))
    if total > hnsw_threshold:
        write_graph(
            folder,
            kept_rows,
            new_keys,
            all_keys,
            old_graph=old.folder / GRAPH if old is not None and old.has_graph else None,
            old_keys=old.keys if old is not None else None,
        )
    listed = {"documents": [vars(e) for e in entries], "next_key": next_key + new_rows}
    with open(folder / DOCUMENTS, "w", encoding="utf-8") as listing:
        # Every publish writes every document's entry: json.dumps, whose one-shot encoding is
        # C, not json.dump, which encodes in Python; vars, not asdict, which deep-copies each.
        # At 100,000 documents that was half of a one-file publish (docs/benchmarks/freshness.md).
        listing.write(json.dumps(listed, ensure_ascii=False))
        listing.flush()
        os.fsync(listing.fileno())
    _fsync_directory(folder)
    _fsync_directory(folder.parent)
    return name


def write_manifest(directory: Path, layout: str, generation: str) -> None:
    manifest = {"model": layout, "generation": generation}
    target = directory / MANIFEST
    temporary = target.with_suffix(f".{os.getpid()}.tmp")
    with open(temporary, "w", encoding="utf-8") as out:
        json.dump(manifest, out, ensure_ascii=False)
        out.flush()
        os.fsync(out.fileno())
    os.replace(temporary, target)  # the one step a reader sees
    _fsync_directory(directory)


def remove_unnamed(directory: Path, named: str) -> None:
    """Every generation but the named one (older ones, and any a crashed writer left before
    its swap), the per-revision files of the layout before generations, stray manifests."""
    for path in (directory / GENERATIONS).iterdir():
        if path.name != named:
            shutil.rmtree(path, ignore_errors=True)
    shutil.rmtree(directory / LEGACY_DOCS, ignore_errors=True)
    for path in directory.glob(f"{Path(MANIFEST).stem}.*.tmp"):
        path.unlink(missing_ok=True)


@contextmanager
def writing(directory: Path, lock_timeout: float) -> Iterator[None]:
    with open(directory / LOCK, "a+b") as lock:
        deadline = time.monotonic() + lock_timeout
        delay = 0.02
        while True:
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    raise IndexBusy(
                        f"another writer held {directory} for {lock_timeout:g}s"
                    ) from None
            time.sleep(delay)
            delay = min(delay * 2, 0.5)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def read_manifest(directory: Path) -> dict[str, Any]:
    try:
        with open(directory / MANIFEST, encoding="utf-8") as manifest:
            data: dict[str, Any] = json.load(manifest)
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as error:
        raise LoomError(
            f"{directory / MANIFEST} cannot be read: {error}", code="index_unreadable"
        ) from error
    return data


def _stack(rows: Sequence[npt.NDArray[np.float32]], dimension: int) -> Matrix:
    if not rows:
        return np.zeros((0, max(dimension, 1)), dtype=np.float32)
    return np.ascontiguousarray(np.stack(rows), dtype=np.float32)


def _joined(parts: Sequence[npt.NDArray[Any]], dtype: Any) -> npt.NDArray[Any]:
    return np.concatenate(parts) if parts else np.array([], dtype=dtype)
