"""LOOM_EMBEDDER, parsed and checked when the settings load, without importing any model code
(numpy and the embedders load only when something embeds)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from loom_dagster.errors import SettingsError

# LOOM_EMBEDDER's values: a built-in name, or a kind and a local path ("fastembed:/models/bge").
WORDLLAMA = "wordllama"
NGRAM = "ngram"
SENTENCE_TRANSFORMERS = "sentence-transformers"
FASTEMBED = "fastembed"
DEFAULT_EMBEDDER = WORDLLAMA
# The default model's first 128 of its 256 dimensions: on bench/retrieval.py's 54 questions the
# vector leg found 0.67 first with 128 and 0.69 with 256, fused 0.81 and 0.78 (within the noise
# of 54 questions), and the exact scan and the memory are halved (bench/search_latency.py).
WORDLLAMA_DIMENSION = 128
# The cosine below which a chunk only the vector leg finds is not an answer (search/fusion.py):
# a vector leg ranks whatever is served, so without it a query of words no document holds still
# fills the limit. Chosen per embedder on `bench/retrieval.py --floors` (54 questions, 11
# queries of words no document holds): wordllama's best off-topic cosine was 0.34 and its one
# answer only the vector leg found 0.358; the n-gram embedder's 0.21 and none (its lowest
# answer, found by BM25 too, 0.196). A local model the user names has none (scale unknown).
VECTOR_FLOORS = {WORDLLAMA: 0.35, NGRAM: 0.25}


# -- the setting --------------------------------------------------------------------------


@dataclass(frozen=True)
class EmbedderSpec:
    """LOOM_EMBEDDER, parsed: `wordllama` (the default), `ngram`, or
    `sentence-transformers:/path` / `fastembed:/path` for a model on disk."""

    kind: str = DEFAULT_EMBEDDER
    path: Path | None = None

    @classmethod
    def parse(cls, raw: str | None) -> EmbedderSpec:
        value = (raw or "").strip()
        if not value or value in (WORDLLAMA, NGRAM):
            return cls(value or DEFAULT_EMBEDDER)
        kind, _, where = value.partition(":")
        if kind not in (SENTENCE_TRANSFORMERS, FASTEMBED) or not where:
            raise SettingsError(
                "LOOM_EMBEDDER must be wordllama, ngram, sentence-transformers:<folder> or "
                f"fastembed:<folder>, not {value!r}"
            )
        path = Path(where).expanduser()
        if not path.is_dir():
            raise SettingsError(f"LOOM_EMBEDDER names {path}, which is not a folder")
        return cls(kind, path.resolve())

    @property
    def floor(self) -> float:
        """The cosine a chunk found by the vector leg alone must reach to be an answer."""
        return VECTOR_FLOORS.get(self.kind, 0.0)

    @property
    def setting(self) -> str:
        """The LOOM_EMBEDDER value that parses back to this spec."""
        return self.kind if self.path is None else f"{self.kind}:{self.path}"
