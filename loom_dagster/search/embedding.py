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
from loom_dagster.search.embedder_spec import (
    SENTENCE_TRANSFORMERS,
    WORDLLAMA_DIMENSION,
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
    """wordllama's bundled 256-dimension model, loaded from the installed package only.

    Its loader looks for the bundled tokenizer under a folder name the wheel does not have and
    would then download it; `cache_dir` = the package's own folder finds both files, and
    `disable_download` makes a missing file an error instead of a network call.
    """

    def __init__(self, dimension: int = WORDLLAMA_DIMENSION) -> None:
        # The model is trained so that its first 64 or 128 dimensions also work alone.
        self.dimension = dimension
        self._model: Any = None
        self._lock = threading.Lock()
        self.model = f"wordllama-l2_supercat-{dimension}-{_version('wordllama')}"

    def _load(self) -> Any:
        with self._lock:
            if self._model is None:
                try:
                    import wordllama
                    from wordllama import WordLlama
                except ImportError as error:
                    raise EmbedderError(
                        f"the default embedder needs the wordllama package: {error}"
                    ) from error
                folder = Path(wordllama.__file__).parent
                try:
                    model = WordLlama.load(
                        config="l2_supercat",
                        dim=256,
                        trunc_dim=None if self.dimension == 256 else self.dimension,
                        cache_dir=folder,
                        disable_download=True,
                    )
                except (FileNotFoundError, OSError, ValueError) as error:
                    raise EmbedderError(
                        f"wordllama's bundled model cannot be loaded: {error}"
                    ) from error
                model.tokenizer.no_padding()  # texts are pooled one by one, never padded
                self._model = model
            return self._model

    def embed(self, texts: Sequence[str]) -> Matrix:
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        model = self._load()
        # The model's own embed() pads every batch to its longest text and pools a 3-D array:
        # 367 chunks/s here. Summing each text's token vectors (its average, once normalised)
        # gives the same vectors at about three times the speed (bench/search_latency.py).
        encoded = model.tokenizer.encode_batch(list(texts), add_special_tokens=False)
        table = model.embedding
        matrix = np.zeros((len(texts), self.dimension), dtype=np.float32)
        for row, encoding in enumerate(encoded):
            ids = np.asarray(encoding.ids, dtype=np.intp)
            if len(ids):
                matrix[row] = table[ids].sum(axis=0)
        return normalized(matrix)


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


def _version(package: str) -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(package)
    except PackageNotFoundError:
        return "missing"
