"""Embedders for the vector leg: what turns a chunk (with its context) or a query into a vector.

Every embedder answers L2-normalised float32 rows, so a dot product is the cosine. Its `model`
names the model and its version: a stored vector is reused only under the same `model`, and a
vector index refuses vectors of another one.

- `NgramEmbedder`: hashed character n-grams, deterministic and dependency-free; the seed's
  retrieval floors are measured with it (a code such as M-41 shares n-grams with its heading
  even where no word does), and the unit tests run it.
- `WordLlamaEmbedder`: the default. A static word-embedding model whose weights ship inside the
  wordllama wheel (256 dimensions, 16 MB; the first 128 used): it loads offline from the
  package's own folder with downloads disabled, and embeds about 1,000 chunks/s of real text on
  two busy cores (bench/search_latency.py).
- `LocalModelEmbedder`: a sentence-transformers or fastembed model the user has on disk, named
  by LOOM_EMBEDDER; never downloaded.
"""

from __future__ import annotations

import hashlib
import re
import threading
import zlib
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

from loom_dagster.errors import LoomError
from loom_dagster.settings.embedder import (
    NGRAM,
    SENTENCE_TRANSFORMERS,
    WORDLLAMA,
    WORDLLAMA_DIMENSION,
    EmbedderSpec,
)

Matrix = npt.NDArray[np.float32]

# What of a chunk is embedded: its text with the context a reader of the passage would have.
# A chunk's text rarely says which document or section it is in, and a question often names them.
MAX_EMBEDDED_CHARS = 4000


class EmbedderError(LoomError):
    """The embedder cannot embed (its model is missing or it failed); the publish can be retried."""

    code = "embedder_unavailable"
    retryable = True


class Embedder(Protocol):
    model: str  # the model and its version: the key stored vectors are reused under
    dimension: int

    def embed(self, texts: Sequence[str]) -> Matrix:
        """One L2-normalised float32 row per text, in order (a zero row for a text with nothing
        to embed)."""
        ...


def normalized(rows: npt.ArrayLike) -> Matrix:
    matrix = np.asarray(rows, dtype=np.float32)
    if matrix.ndim != 2:
        raise ValueError(f"embeddings must be a matrix, not shape {matrix.shape}")
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    np.divide(matrix, norms, out=matrix, where=norms > 0)
    return np.ascontiguousarray(matrix)


def embedded_text(
    text: str, *, section_path: Sequence[str] = (), title: str = "", description: str = ""
) -> str:
    """The text a chunk is embedded as: title, description and section breadcrumb, then the text."""
    context = [part for part in (title, description, " > ".join(section_path)) if part]
    return "\n".join([*context, text])[:MAX_EMBEDDED_CHARS]


# Function words a question is built of ("what is the ... of a ...") but that say nothing of
# its subject; a static model's average gives them the weight of the words that do.
STOP_WORDS = frozenset(
    """a about above after again against all am an and any are as at be because been before
    being below between both but by can could did do does doing down during each few for from
    further had has have having he her here hers herself him himself his how i if in into is it
    its itself just me more most my myself no nor not now of off on once only or other our ours
    ourselves out over own same she should so some such than that the their theirs them
    themselves then there these they this those through to too under until up very was we were
    what when where which while who whom why will with would you your yours yourself
    yourselves""".split()
)


def weighted_embedding(
    embedder: Embedder, parts: Sequence[str], weights: Sequence[float]
) -> Matrix:
    """One normalised row: the sum of the parts' vectors, each times its weight. An embedder
    that pools token vectors (`sums`) is weighted before its pooling's normalisation, so a
    weight of 1 everywhere gives the same row as embedding the parts joined."""
    dimension = max(embedder.dimension, 1)
    if not parts:
        return np.zeros((1, dimension), dtype=np.float32)
    sums = getattr(embedder, "sums", None)
    rows = sums(parts) if callable(sums) else embedder.embed(parts)
    scale = np.asarray(weights, dtype=np.float32)[:, None]
    return normalized((np.asarray(rows, dtype=np.float32) * scale).sum(axis=0, keepdims=True))


def text_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


# -- the deterministic n-gram embedder ------------------------------------------------------

_WORDS = re.compile(r"\w+(?:[-.]\w+)*")


class NgramEmbedder:
    """Hashed character n-grams of each lower-cased word (with its boundaries), plus the word
    itself, signed-hashed into `dimension` buckets. Deterministic across runs and machines
    (crc32, not Python's salted hash)."""

    def __init__(self, dimension: int = 512, sizes: tuple[int, ...] = (3, 4)) -> None:
        self.dimension = dimension
        self.sizes = sizes
        self.model = f"ngram-{'-'.join(map(str, sizes))}-d{dimension}-v1"

    def embed(self, texts: Sequence[str]) -> Matrix:
        matrix = np.zeros((len(texts), self.dimension), dtype=np.float32)
        for row, text in enumerate(texts):
            features: list[str] = []
            for word in _WORDS.findall(text.casefold()):
                features.append(f"w:{word}")
                padded = f" {word} "
                for size in self.sizes:
                    features.extend(padded[i : i + size] for i in range(len(padded) - size + 1))
            if not features:
                continue
            hashes = np.fromiter(
                (zlib.crc32(f.encode("utf-8", "surrogatepass")) for f in features),
                dtype=np.uint64,
                count=len(features),
            )
            signs = np.where(hashes & (1 << 31), -1.0, 1.0).astype(np.float32)
            np.add.at(matrix[row], (hashes % self.dimension).astype(np.intp), signs)
        return normalized(matrix)


# -- the default: wordllama's bundled static model ------------------------------------------


class WordLlamaEmbedder:
    """wordllama's bundled 256-dimension model, read from the installed package's own files.

    wordllama's loader looks for the bundled tokenizer under a folder name the wheel does not
    have and would then download it, and importing the package costs more than a second (it
    brings requests and pydantic) and calls logging.basicConfig(INFO) on the importer's root
    logger. The model is two files: a tokenizer (read with `tokenizers`) and a safetensors
    matrix (read here, memory-mapped, without importing wordllama), so a one-shot `loom search`
    loads it in a fraction of that, nothing is ever downloaded, and the root logger is left
    as it was. The vectors are the ones wordllama's own loader gives (a test compares them).
    """

    CONFIG = "l2_supercat"
    FULL_DIMENSION = 256
    TENSOR = "embedding.weight"
    # Texts in a call up to which each text's token rows are read from the mapped file; more,
    # and the whole truncated matrix is converted once and kept (a writer's batches).
    FEW = 16

    def __init__(
        self,
        dimension: int = WORDLLAMA_DIMENSION,
        *,
        token_weights: npt.NDArray[np.float32] | None = None,
        weighting: str = "",
    ) -> None:
        # The model is trained so that its first 64 or 128 dimensions also work alone.
        self.dimension = dimension
        self._tokenizer: Any = None
        self._weights: npt.NDArray[np.float16] | None = None
        self._table: Matrix | None = None
        self._lock = threading.Lock()
        # A weight per token id, applied to its vector before pooling (bench/retrieval.py
        # --token-weights measures them); `weighting` names them in the model.
        self.token_weights = token_weights
        self.model = f"wordllama-l2_supercat-{dimension}-{_version('wordllama')}" + (
            f"-{weighting}" if weighting else ""
        )

    def token_ids(self, texts: Sequence[str]) -> list[list[int]]:
        tokenizer, _ = self._load()
        return [e.ids for e in tokenizer.encode_batch(list(texts), add_special_tokens=False)]

    def _load(self) -> tuple[Any, npt.NDArray[np.float16]]:
        with self._lock:
            if self._tokenizer is None or self._weights is None:
                folder = _package_folder("wordllama")
                try:
                    from tokenizers import Tokenizer
                except ImportError as error:
                    raise EmbedderError(
                        f"the default embedder needs the tokenizers package: {error}"
                    ) from error
                tokenizer_file = folder / "tokenizers" / f"{self.CONFIG}_tokenizer_config.json"
                weights_file = (
                    folder / "weights" / f"{self.CONFIG}_{self.FULL_DIMENSION}.safetensors"
                )
                try:
                    tokenizer = Tokenizer.from_file(str(tokenizer_file))
                    weights = _safetensors_matrix(weights_file, self.TENSOR)
                except Exception as error:  # the tokenizers library raises its own Exception
                    raise EmbedderError(
                        f"wordllama's bundled model cannot be loaded: {error}"
                    ) from error
                if weights.ndim != 2 or weights.shape[1] < self.dimension:
                    raise EmbedderError(
                        f"wordllama's bundled matrix has shape {weights.shape}, "
                        f"not (vocabulary, at least {self.dimension})"
                    )
                tokenizer.no_padding()  # texts are pooled one by one, never padded
                tokenizer.no_truncation()
                self._tokenizer, self._weights = tokenizer, weights
            return self._tokenizer, self._weights

    def _rows(self, weights: npt.NDArray[np.float16], many: bool) -> Any:
        if not many:
            return weights  # token rows read from the mapped file as they are needed
        with self._lock:
            if self._table is None:
                self._table = np.ascontiguousarray(weights[:, : self.dimension], dtype=np.float32)
            return self._table

    def embed(self, texts: Sequence[str]) -> Matrix:
        return normalized(self.sums(texts))

    def sums(self, texts: Sequence[str]) -> Matrix:
        """Each text's token vectors summed, not normalised (`weighted_embedding`)."""
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        tokenizer, weights = self._load()
        table = self._rows(weights, len(texts) > self.FEW)
        # wordllama's own embed() pads every batch to its longest text and pools a 3-D array:
        # 367 chunks/s here. Summing each text's token vectors (its average, once normalised)
        # gives the same vectors at about three times the speed (bench/search_latency.py).
        encoded = tokenizer.encode_batch(list(texts), add_special_tokens=False)
        matrix = np.zeros((len(texts), self.dimension), dtype=np.float32)
        for row, encoding in enumerate(encoded):
            ids = np.asarray(encoding.ids, dtype=np.intp)
            if len(ids):
                rows = np.asarray(table[ids, : self.dimension], dtype=np.float32)
                if self.token_weights is not None:
                    rows = rows * self.token_weights[ids, None]
                matrix[row] = rows.sum(axis=0)
        return matrix


def _package_folder(package: str) -> Path:
    """An installed package's folder, found without importing (running) the package."""
    import importlib.util

    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise EmbedderError(f"the default embedder needs the {package} package, not installed")
    return Path(next(iter(spec.submodule_search_locations)))


_SAFETENSORS_DTYPES = {"F16": "<f2", "F32": "<f4"}


def _safetensors_matrix(path: Path, name: str) -> Any:
    """One tensor of a safetensors file, memory-mapped: an 8-byte little-endian header length,
    the JSON header (each tensor's dtype, shape and byte range), then the data."""
    import json

    with open(path, "rb") as file:
        length = file.read(8)
        size = int.from_bytes(length, "little")
        raw = file.read(size) if len(length) == 8 and 0 < size <= 1 << 24 else b""
        if not raw or len(raw) != size:
            raise ValueError(f"{path} has no safetensors header")
        header = json.loads(raw)
    entry = header.get(name) if isinstance(header, dict) else None
    if not isinstance(entry, dict) or entry.get("dtype") not in _SAFETENSORS_DTYPES:
        raise ValueError(f"{path} has no {name} tensor of a float type")
    shape = tuple(int(n) for n in entry["shape"])
    begin, end = (int(n) for n in entry["data_offsets"])
    dtype = np.dtype(_SAFETENSORS_DTYPES[entry["dtype"]])
    if end - begin != int(np.prod(shape)) * dtype.itemsize:
        raise ValueError(f"{path}: {name}'s byte range does not match its shape {shape}")
    return np.memmap(path, dtype=dtype, mode="r", offset=8 + size + begin, shape=shape)


# -- a local model the user names -------------------------------------------------------------


class LocalModelEmbedder:
    """A sentence-transformers or fastembed model from a local folder (never downloaded)."""

    def __init__(self, kind: str, path: Path) -> None:
        self.kind = kind
        self.path = path
        self.model = f"{kind}:{path}"  # the folder names the model: two are never confused
        self._encode: Callable[[list[str]], Any] | None = None
        self._lock = threading.Lock()
        self.dimension = 0  # known once the model is loaded

    def _load(self) -> Callable[[list[str]], Any]:
        with self._lock:
            if self._encode is None:
                try:
                    if self.kind == SENTENCE_TRANSFORMERS:
                        from sentence_transformers import SentenceTransformer

                        st = SentenceTransformer(
                            str(self.path), device="cpu", local_files_only=True
                        )
                        self._encode = lambda texts: st.encode(texts, batch_size=32)
                    else:
                        from fastembed import TextEmbedding

                        fe = TextEmbedding(
                            model_name=self.path.name,
                            specific_model_path=str(self.path),
                            local_files_only=True,
                        )
                        self._encode = lambda texts: list(fe.embed(texts))
                except ImportError as error:
                    raise EmbedderError(
                        f"LOOM_EMBEDDER names a {self.kind} model but {self.kind} is not installed"
                    ) from error
                except Exception as error:  # a third-party loader: any failure is the model's
                    raise EmbedderError(
                        f"the {self.kind} model at {self.path} cannot be loaded: {error}"
                    ) from error
                self.dimension = int(np.asarray(self._encode(["probe"])).shape[1])
            return self._encode

    def embed(self, texts: Sequence[str]) -> Matrix:
        encode = self._load()
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        return normalized(np.asarray(encode(list(texts))))


# -- the embedder a setting names -------------------------------------------------------------


def build_embedder(spec: EmbedderSpec) -> Embedder:
    """The embedder LOOM_EMBEDDER names (its model loads on first use)."""
    if spec.kind == NGRAM:
        return NgramEmbedder()
    if spec.kind == WORDLLAMA:
        return WordLlamaEmbedder()
    assert spec.path is not None
    return LocalModelEmbedder(spec.kind, spec.path)


def _version(package: str) -> str:
    # The dist-info folder beside the package names its version: importing importlib.metadata
    # and scanning every path entry cost a one-shot `loom search` about 0.1 s here.
    import importlib.util

    spec = importlib.util.find_spec(package)
    if spec is not None and spec.submodule_search_locations:
        folder = Path(next(iter(spec.submodule_search_locations))).parent
        found = sorted(folder.glob(f"{package}-*.dist-info"))
        if len(found) == 1:
            return found[0].name[len(package) + 1 : -len(".dist-info")]
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(package)
    except PackageNotFoundError:
        return "missing"
