"""The vector leg on real files in tmp_path: a paraphrase only it finds, vectors reused instead
of embedded again, a publish a reader sees whole or not at all, filters inside the search."""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from loom_dagster.chunking import Chunk
from loom_dagster.contract.artifact import Locator
from loom_dagster.errors import SettingsError
from loom_dagster.search.embedding import (
    Matrix,
    NgramEmbedder,
    WordLlamaEmbedder,
    build_embedder,
    embedded_text,
)
from loom_dagster.search.hnsw import HNSW_THRESHOLD
from loom_dagster.search.legs import SearchFilter
from loom_dagster.search.lexical import IndexedChunk, LexicalIndex
from loom_dagster.search.vector import VectorIndex
from loom_dagster.settings.embedder import EmbedderSpec


def chunk(
    document_id: str,
    ordinal: int,
    text: str,
    *,
    revision: str = "r1",
    source: str = "docs",
    format: str = "markdown",
    block_type: str = "paragraph",
    path: str | None = None,
    section: tuple[str, ...] = ("Guide",),
) -> IndexedChunk:
    piece = Chunk(
        ordinal=ordinal,
        text=text,
        block_ids=("b1",),
        block_type=block_type,
        section_path=section,
        locator=Locator(line_start=1, line_end=2),
        keys=(),
        revision=f"{document_id}@{revision}",
        format=format,
    )
    return IndexedChunk.of(
        piece, document_id=document_id, source=source, path=path or f"{document_id}.md"
    )


class CountingEmbedder(NgramEmbedder):
    def __init__(self) -> None:
        super().__init__()
        self.embedded: list[str] = []

    def embed(self, texts: Sequence[str]) -> Matrix:
        self.embedded.extend(texts)
        return super().embed(texts)


def ids(hits: Sequence[object]) -> list[str]:
    return [hit.chunk_id for hit in hits]  # type: ignore[attr-defined]


def test_the_ngram_embedder_is_deterministic_and_normalised() -> None:
    embedder = NgramEmbedder()
    first = embedder.embed(["Disk full on the primary", ""])
    again = NgramEmbedder().embed(["Disk full on the primary", ""])
    assert first.dtype == np.float32 and first.shape == (2, embedder.dimension)
    assert np.array_equal(first, again)
    assert abs(float(np.linalg.norm(first[0])) - 1.0) < 1e-5
    assert not first[1].any()  # nothing to embed is a zero row, not NaN


def test_a_chunk_is_embedded_with_its_title_and_section_breadcrumb() -> None:
    text = embedded_text("Restart it.", section_path=("Runbook", "Disk full"), title="storage")
    assert text == "storage\nRunbook > Disk full\nRestart it."


def test_a_paraphrase_is_found_by_the_vector_leg_where_bm25_finds_nothing(tmp_path: Path) -> None:
    chunks = [
        chunk("a", 0, "Restarting the replication daemon clears stuck transactions."),
        chunk("b", 0, "Quarterly revenue grew in the northern region."),
    ]
    lexical = LexicalIndex(tmp_path / "lexical")
    lexical.publish_many({"a": chunks[:1], "b": chunks[1:]})
    vectors = VectorIndex(tmp_path / "vectors", NgramEmbedder())
    vectors.publish_many({"a": chunks[:1], "b": chunks[1:]})

    query = "restart replicator transaction"  # no word of it is a word of the chunk
    assert lexical.search(query) == []
    assert ids(vectors.rank(query, SearchFilter(), 1)) == ["a@r1#0"]


def test_an_unchanged_chunk_is_not_embedded_again_in_a_later_revision(tmp_path: Path) -> None:
    embedder = CountingEmbedder()
    index = VectorIndex(tmp_path / "vectors", embedder)
    first = [chunk("a", 0, "unchanged passage"), chunk("a", 1, "old wording")]
    assert index.publish_many({"a": first}) == 2

    second = [
        chunk("a", 0, "unchanged passage", revision="r2"),
        chunk("a", 1, "new wording", revision="r2"),
    ]
    embedder.embedded.clear()
    assert index.publish_many({"a": second}) == 1
    assert len(embedder.embedded) == 1 and embedder.embedded[0].endswith("new wording")

    # Another index object (a later process) reuses the stored vectors too, even in another document.
    again = CountingEmbedder()
    VectorIndex(tmp_path / "vectors", again).publish_many(
        {"b": [chunk("b", 0, "unchanged passage", path="a.md")]}
    )
    assert again.embedded == []
    assert set(ids(index.rank("new wording", SearchFilter(), 5))) == {"a@r2#0", "a@r2#1", "b@r1#0"}


def test_a_reader_sees_a_publish_whole_or_not_at_all(tmp_path: Path) -> None:
    index = VectorIndex(tmp_path / "vectors", NgramEmbedder())
    index.publish_many({"a": [chunk("a", n, f"old wording {n}") for n in range(3)]})
    reader = VectorIndex(tmp_path / "vectors", NgramEmbedder())
    assert reader.count() == 3

    # The reader between the document files and the manifest swap: still the old revision whole.
    real_replace = os.replace
    seen: list[set[str]] = []

    def replace(source: str | Path, target: str | Path) -> None:
        if Path(target).name == "manifest.json":
            seen.append(
                {h.chunk_id.split("#")[0] for h in reader.rank("wording", SearchFilter(), 10)}
            )
        real_replace(source, target)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(os, "replace", replace)
        index.publish_many(
            {"a": [chunk("a", n, f"new wording {n}", revision="r2") for n in range(2)]}
        )
    assert seen == [{"a@r1"}]
    after = reader.rank("wording", SearchFilter(), 10)
    assert sorted(ids(after)) == ["a@r2#0", "a@r2#1"]
    # The old generation is gone once no manifest names it.
    assert len(list((tmp_path / "vectors" / "generations").iterdir())) == 1


def test_a_crash_before_the_swap_leaves_the_old_generation_serving(tmp_path: Path) -> None:
    directory = tmp_path / "vectors"
    index = VectorIndex(directory, NgramEmbedder())
    index.publish_many({"a": [chunk("a", n, f"old wording {n}") for n in range(3)]})
    (before,) = (directory / "generations").iterdir()

    real_replace = os.replace

    def crash(source: str | Path, target: str | Path) -> None:
        if Path(target).name == "manifest.json":
            raise OSError("power lost")
        real_replace(source, target)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(os, "replace", crash)
        with pytest.raises(OSError, match="power lost"):
            index.publish_many(
                {"a": [chunk("a", n, f"new wording {n}", revision="r2") for n in range(2)]}
            )
    # The new generation was written whole, but nothing names it: a reader (another process's
    # view: a fresh index object) still serves the old revision, whole.
    assert len(list((directory / "generations").iterdir())) == 2
    reader = VectorIndex(directory, NgramEmbedder())
    assert sorted(ids(reader.rank("wording", SearchFilter(), 10))) == [
        "a@r1#0",
        "a@r1#1",
        "a@r1#2",
    ]
    assert reader.live_revisions() == {"a": "a@r1"}
    # The next writer publishes over the old generation and removes the orphan.
    index.publish_many({"b": [chunk("b", 0, "other wording")]})
    (after,) = (directory / "generations").iterdir()
    assert after != before
    assert reader.live_revisions() == {"a": "a@r1", "b": "b@r1"}
    assert not list(directory.glob("manifest.*.tmp"))


def _publish_forever(directory: str, rounds: int) -> None:
    index = VectorIndex(directory, NgramEmbedder())
    for n in range(rounds):
        revision = f"r{n + 2}"
        index.publish_many(
            {
                doc: [chunk(doc, k, f"wording {n} {k}", revision=revision) for k in range(4)]
                for doc in ("a", "b")
            }
        )


def test_a_reader_in_another_process_never_sees_a_mixed_batch(tmp_path: Path) -> None:
    directory = tmp_path / "vectors"
    VectorIndex(directory, NgramEmbedder()).publish_many(
        {doc: [chunk(doc, k, f"wording {k}") for k in range(4)] for doc in ("a", "b")}
    )
    writer = multiprocessing.get_context("spawn").Process(
        target=_publish_forever, args=(str(directory), 12)
    )
    writer.start()
    kept = VectorIndex(directory, NgramEmbedder())
    while writer.is_alive():
        # A new reader each time, as each `loom search` is, and one kept across swaps.
        for reader in (VectorIndex(directory, NgramEmbedder()), kept):
            hits = reader.rank("wording", SearchFilter(), 20)
            revisions = {h.chunk_id.split("@")[1].split("#")[0] for h in hits}
            documents = {h.chunk_id.split("@")[0] for h in hits}
            # Both documents of a batch, at one revision: never one of the batch without the other.
            assert len(hits) == 8 and len(revisions) == 1 and documents == {"a", "b"}, hits
    writer.join()
    assert writer.exitcode == 0
    assert {h.chunk_id.split("#")[0] for h in kept.rank("wording", SearchFilter(), 10)} == {
        "a@r13",
        "b@r13",
    }
    assert len(list((directory / "generations").iterdir())) == 1


def test_retire_removes_a_document_from_search(tmp_path: Path) -> None:
    index = VectorIndex(tmp_path / "vectors", NgramEmbedder())
    index.publish_many({"a": [chunk("a", 0, "shared words")], "b": [chunk("b", 0, "shared words")]})
    index.retire("a")
    assert ids(index.rank("shared words", SearchFilter(), 10)) == ["b@r1#0"]
    assert index.live_revisions() == {"b": "b@r1"}


@pytest.mark.parametrize("hnsw", [False, True])
def test_a_filter_applies_inside_the_search_and_keeps_its_k_best(
    tmp_path: Path, hnsw: bool
) -> None:
    index = VectorIndex(
        tmp_path / "vectors",
        NgramEmbedder(),
        sources_tagged=lambda tags: ["wiki"] if "public" in tags else [],
        hnsw_threshold=0 if hnsw else HNSW_THRESHOLD,
    )
    # Thirty near-copies of the query in markdown outrank the one pdf chunk and the table.
    close = {f"m{n}": [chunk(f"m{n}", 0, f"disk full alert on node {n}")] for n in range(30)}
    index.publish_many(
        {
            **close,
            "p": [
                chunk(
                    "p", 0, "storage volume warnings", format="pdf", source="wiki", path="ops/p.pdf"
                )
            ],
            "t": [chunk("t", 0, "disk capacity table", block_type="table", path="ops/t.md")],
        }
    )
    query = "disk full alert"
    assert "p@r1#0" not in ids(index.rank(query, SearchFilter(), 5))
    assert ids(index.rank(query, SearchFilter(formats=("pdf",)), 5)) == ["p@r1#0"]
    assert ids(index.rank(query, SearchFilter(sources=("wiki",)), 5)) == ["p@r1#0"]
    assert ids(index.rank(query, SearchFilter(tags=("public",)), 5)) == ["p@r1#0"]
    assert ids(index.rank(query, SearchFilter(block_types=("table",)), 5)) == ["t@r1#0"]
    assert sorted(ids(index.rank(query, SearchFilter(path_prefix="ops/"), 5))) == [
        "p@r1#0",
        "t@r1#0",
    ]
    assert index.rank(query, SearchFilter(formats=("docx",)), 5) == []
    kept = index.rank(query, SearchFilter(formats=("markdown",)), 30)
    assert len(kept) == 30 and all(h.chunk_id.startswith("m") for h in kept)


def test_vectors_of_another_model_are_not_compared_with_a_query(tmp_path: Path) -> None:
    VectorIndex(tmp_path / "vectors", NgramEmbedder()).publish_many({"a": [chunk("a", 0, "words")]})
    other = VectorIndex(tmp_path / "vectors", NgramEmbedder(dimension=256))
    assert other.rank("words", SearchFilter(), 5) == []
    assert other.live_revisions() == {}  # so a sync embeds every live document again


def test_the_embedder_setting_is_checked_at_load(tmp_path: Path) -> None:
    assert EmbedderSpec.parse(None).kind == "wordllama"
    assert build_embedder(EmbedderSpec.parse("ngram")).model.startswith("ngram-")
    assert EmbedderSpec.parse(f"fastembed:{tmp_path}").path == tmp_path.resolve()
    with pytest.raises(SettingsError, match="LOOM_EMBEDDER must be wordllama, ngram"):
        EmbedderSpec.parse("openai")
    with pytest.raises(SettingsError, match="which is not a folder"):
        EmbedderSpec.parse(f"sentence-transformers:{tmp_path / 'missing'}")


def test_the_default_embedder_loads_offline_from_its_wheel(monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("wordllama")
    # Any attempt to reach the network fails the test.
    import requests

    def no_network(*args: object, **kwargs: object) -> None:
        raise AssertionError("the default embedder tried to download")

    monkeypatch.setattr(requests, "get", no_network)
    monkeypatch.setattr(requests.Session, "request", no_network)
    embedder = WordLlamaEmbedder()
    rows = embedder.embed(["the disk is full", "storage capacity exhausted", "chocolate cake"])
    assert rows.shape == (3, embedder.dimension) and embedder.dimension == 128
    assert float(rows[0] @ rows[1]) > float(rows[0] @ rows[2])


def test_loom_settings_read_the_embedder_once_and_refuse_a_bad_one(tmp_path: Path) -> None:
    from loom_dagster.settings import LoomSettings

    home = {"LOOM_HOME": str(tmp_path / "home")}
    assert LoomSettings.from_env(home).embedder == EmbedderSpec("wordllama")
    assert LoomSettings.from_env({**home, "LOOM_EMBEDDER": "ngram"}).embedder.kind == "ngram"
    assert LoomSettings.from_env(home).vectors_dir == (tmp_path / "home" / "vectors").resolve()
    with pytest.raises(SettingsError) as refused:
        LoomSettings.from_env({**home, "LOOM_EMBEDDER": "hub:all-MiniLM"})
    assert refused.value.code == "invalid_setting"


def test_a_local_model_is_loaded_from_its_folder_only_and_a_missing_package_is_typed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import sys
    import types

    from loom_dagster.search.embedding import EmbedderError, LocalModelEmbedder

    # No sentence-transformers model can be installed or downloaded here: a stand-in module
    # records how the model is opened.
    opened: list[tuple[str, dict[str, object]]] = []

    class SentenceTransformer:
        def __init__(self, path: str, **options: object) -> None:
            opened.append((path, options))

        def encode(self, texts: list[str], batch_size: int) -> np.ndarray:
            return np.array([[len(t), 1.0, 0.0] for t in texts], dtype=np.float32)

    monkeypatch.setitem(
        sys.modules,
        "sentence_transformers",
        types.SimpleNamespace(SentenceTransformer=SentenceTransformer),
    )
    spec = EmbedderSpec.parse(f"sentence-transformers:{tmp_path}")
    embedder = build_embedder(spec)
    rows = embedder.embed(["abc", "de"])
    assert opened == [(str(tmp_path.resolve()), {"device": "cpu", "local_files_only": True})]
    assert embedder.dimension == 3 and np.allclose(np.linalg.norm(rows, axis=1), 1.0)
    assert embedder.model == f"sentence-transformers:{tmp_path.resolve()}"

    monkeypatch.setitem(sys.modules, "fastembed", None)  # an import of it fails
    with pytest.raises(EmbedderError) as missing:
        LocalModelEmbedder("fastembed", tmp_path).embed(["x"])
    assert missing.value.code == "embedder_unavailable"
    assert "fastembed is not installed" in missing.value.message


def test_the_writer_keeps_the_hnsw_graph_and_a_reader_maps_it_without_building(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import loom_dagster.search.hnsw as hnsw

    directory = tmp_path / "vectors"
    writer = VectorIndex(directory, NgramEmbedder(), hnsw_threshold=0)
    writer.publish_many(
        {
            "a": [chunk("a", 0, "replication daemon restart"), chunk("a", 1, "cake recipe")],
            "b": [chunk("b", 0, "quarterly revenue report")],
        }
    )
    (generation,) = (directory / "generations").iterdir()
    assert (generation / "graph.usearch").is_file()
    built: list[int] = []
    real_new_graph = hnsw._new_graph

    def counted(dimension: int) -> object:
        built.append(dimension)
        return real_new_graph(dimension)

    monkeypatch.setattr(hnsw, "_new_graph", counted)
    reader = VectorIndex(directory, NgramEmbedder(), hnsw_threshold=0)
    assert ids(reader.rank("replication daemon", SearchFilter(), 1)) == ["a@r1#0"]

    # The writer updates the old graph: the retired document's rows leave it, the new ones join.
    writer.publish_many({"c": [chunk("c", 0, "replication daemon restart")]}, retire=["a"])
    assert ids(reader.rank("replication daemon", SearchFilter(), 1)) == ["c@r1#0"]
    assert "a@r1#0" not in ids(reader.rank("cake recipe", SearchFilter(), 5))
    writer.publish_many({"a": [chunk("a", 0, "cake recipe", revision="r2")]})
    assert ids(reader.rank("cake recipe", SearchFilter(), 1)) == ["a@r2#0"]
    assert built == []  # neither the reader nor the writer built a graph from scratch again
    (generation,) = (directory / "generations").iterdir()
    from usearch.index import Index

    graph = Index.restore(str(generation / "graph.usearch"), view=True)
    assert graph is not None and len(graph) == 3  # b, c and a's new revision


def test_the_default_embedder_gives_wordllamas_own_vectors() -> None:
    pytest.importorskip("wordllama")
    import logging

    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    try:
        import wordllama  # its import calls logging.basicConfig(INFO): undone below
        from wordllama import WordLlama
    finally:
        root.handlers[:], root.level = handlers, level
    theirs = WordLlama.load(
        config="l2_supercat",
        dim=256,
        trunc_dim=128,
        cache_dir=Path(wordllama.__file__).parent,
        disable_download=True,
    )
    texts = ["the disk is full", "Ducks swim in ponds.", "x", "Café crème, naïve résumé"]
    reference = np.stack(
        [
            theirs.embedding[theirs.tokenizer.encode(t, add_special_tokens=False).ids].sum(axis=0)
            for t in texts
        ]
    )
    reference /= np.linalg.norm(reference, axis=1, keepdims=True)
    ours = WordLlamaEmbedder()
    # Few texts read their token rows from the mapped file; many convert the matrix once.
    assert np.allclose(ours.embed(texts), reference, atol=1e-6)
    assert np.allclose(ours.embed(texts * 5)[: len(texts)], reference, atol=1e-6)


LOGGING_PROBE = """
import json, logging, sys
from loom_dagster.search.embedding import WordLlamaEmbedder
root = logging.getLogger()
before = (len(root.handlers), root.level)
rows = WordLlamaEmbedder().embed(["the disk is full"])
print(json.dumps([before, [len(root.handlers), root.level], "wordllama" in sys.modules,
                  rows.shape[1]]))
"""


def test_loading_the_default_embedder_leaves_the_root_logger_alone() -> None:
    pytest.importorskip("wordllama")
    import json
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-c", LOGGING_PROBE], capture_output=True, text=True, check=True
    )
    before, after, imported, dimension = json.loads(done.stdout.splitlines()[-1])
    # wordllama's own import adds a handler at INFO to the root logger (logging.basicConfig).
    assert after == before and not imported and dimension == 128, done.stderr


def test_a_query_of_words_no_document_holds_returns_no_hits(tmp_path: Path) -> None:
    from loom_dagster.search.fusion import LegRank, fuse
    from loom_dagster.search.legs import LegHit
    from loom_dagster.search.service import default_legs, search

    chunks = {
        "a": [chunk("a", 0, "Restarting the replication daemon clears stuck transactions.")],
        "b": [chunk("b", 0, "Quarterly revenue grew in the northern region.")],
    }
    lexical = LexicalIndex(tmp_path / "lexical")
    lexical.publish_many(chunks)
    floor = EmbedderSpec.parse("ngram").floor
    assert floor > 0
    vectors = VectorIndex(tmp_path / "vectors", NgramEmbedder(), floor=floor)
    vectors.publish_many(chunks)
    legs = default_legs(lexical, vectors)

    assert search(lexical, "zebra xylophone quasar", legs=legs) == []
    # Without the floor the vector leg fills the answer with whatever is nearest.
    unfloored = default_legs(lexical, VectorIndex(tmp_path / "vectors", NgramEmbedder()))
    assert len(search(lexical, "zebra xylophone quasar", legs=unfloored)) == 2
    # A paraphrase only the vector leg finds is still an answer: it is above the floor.
    [hit] = search(lexical, "restart replicator transaction", legs=legs)
    assert hit.chunk.chunk_id == "a@r1#0" and [leg.leg for leg in hit.legs] == ["vector"]

    # The floor drops only a chunk no other leg found: one BM25 also ranks stays.
    fused = fuse(
        [("lexical", [LegHit("x", 3.0)]), ("vector", [LegHit("y", 0.01), LegHit("x", 0.02)])],
        10,
        floors={"vector": 0.3},
    )
    assert [(f.chunk_id, f.legs) for f in fused] == [
        ("x", (LegRank("lexical", 1, 3.0), LegRank("vector", 2, 0.02)))
    ]


@pytest.mark.parametrize(
    ("weights", "message"),
    [
        (None, "No such file or directory"),
        (b"\x02", "has no safetensors header"),
        (
            (28).to_bytes(8, "little") + b'{"other": {"dtype": "F16"}} ',
            "has no embedding.weight tensor of a float type",
        ),
        (
            (81).to_bytes(8, "little")
            + b'{"embedding.weight": {"dtype": "F16", "shape": [4, 256], "data_offsets": [0, 8]}}',
            "byte range does not match its shape",
        ),
    ],
)
def test_a_damaged_default_model_is_a_typed_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, weights: bytes | None, message: str
) -> None:
    pytest.importorskip("wordllama")
    import loom_dagster.search.embedding as embedding

    real = embedding._package_folder("wordllama")
    (tmp_path / "tokenizers").mkdir()
    (tmp_path / "weights").mkdir()
    name = "l2_supercat_tokenizer_config.json"
    (tmp_path / "tokenizers" / name).write_bytes((real / "tokenizers" / name).read_bytes())
    if weights is not None:
        (tmp_path / "weights" / "l2_supercat_256.safetensors").write_bytes(weights)
    monkeypatch.setattr(embedding, "_package_folder", lambda package: tmp_path)
    with pytest.raises(embedding.EmbedderError) as refused:
        WordLlamaEmbedder().embed(["the disk is full"])
    assert refused.value.code == "embedder_unavailable"
    assert refused.value.message.startswith("wordllama's bundled model cannot be loaded: ")
    assert message in refused.value.message


def test_a_damaged_generation_is_reported_and_the_next_publish_starts_a_new_one(
    tmp_path: Path,
) -> None:
    from loom_dagster.errors import LoomError

    directory = tmp_path / "vectors"
    index = VectorIndex(directory, NgramEmbedder())
    index.publish_many({"a": [chunk("a", 0, "shared words")], "b": [chunk("b", 0, "more words")]})
    (generation,) = (directory / "generations").iterdir()
    vectors = generation / "vectors.npy"
    vectors.write_bytes(vectors.read_bytes()[:-100])  # cut short

    reader = VectorIndex(directory, NgramEmbedder())
    with pytest.raises(LoomError) as damaged:
        reader.rank("words", SearchFilter(), 5)
    assert damaged.value.code == "index_unreadable"
    assert f"generation {generation.name} in {directory} cannot be read" in damaged.value.message
    # The writer's view: nothing is live, so a sync re-publishes every document; so too when
    # the generation's listing of documents is damaged.
    assert index.live_revisions() == {}
    (generation / "documents.json").write_text("{")
    assert index.live_revisions() == {}
    index.publish_many({"a": [chunk("a", 0, "shared words")]})
    assert ids(reader.rank("words", SearchFilter(), 5)) == ["a@r1#0"]
    assert [p.name for p in (directory / "generations").iterdir()] != [generation.name]


def test_a_generations_listing_is_parsed_once_per_process(tmp_path: Path) -> None:
    """A generation never changes once written, and a publish reads the listing of the one it
    replaces three times (readable? which revisions? the entries it copies): seconds each at
    100,000 documents. Read again, it is not read from disk."""
    directory = tmp_path / "vectors"
    index = VectorIndex(directory, NgramEmbedder())
    index.publish_many({"a": [chunk("a", 0, "shared words")]})
    assert index.live_revisions() == {"a": "a@r1"}
    (generation,) = (directory / "generations").iterdir()
    (generation / "documents.json").unlink()

    assert index.live_revisions() == {"a": "a@r1"}


@pytest.mark.parametrize("name", ["../../elsewhere", "00000000000000000001-abcdefgh", ""])
def test_a_manifest_naming_no_generation_is_refused(tmp_path: Path, name: str) -> None:
    import json

    from loom_dagster.errors import LoomError

    directory = tmp_path / "vectors"
    index = VectorIndex(directory, NgramEmbedder())
    index.publish_many({"a": [chunk("a", 0, "words")]})
    manifest = json.loads((directory / "manifest.json").read_text())
    (directory / "manifest.json").write_text(json.dumps({**manifest, "generation": name}))
    with pytest.raises(LoomError) as refused:
        VectorIndex(directory, NgramEmbedder()).rank("words", SearchFilter(), 5)
    assert refused.value.code == "index_unreadable"
    assert f"names {name!r}, not a generation" in refused.value.message


@pytest.mark.parametrize("hnsw", [False, True])
def test_rows_copied_into_a_new_generation_keep_their_chunks(tmp_path: Path, hnsw: bool) -> None:
    # Chunks cut into passages (several rows a chunk): the documents a batch does not touch are
    # copied into the new generation, and each row must still point at its own chunk.
    index = VectorIndex(
        tmp_path / "vectors", NgramEmbedder(), passage_chars=40, hnsw_threshold=0 if hnsw else 10**6
    )
    long = "Filler sentence about nothing much. " * 3
    index.publish_many(
        {
            "a": [chunk("a", 0, long + "Replication daemon restarts."), chunk("a", 1, "Cake.")],
            "b": [chunk("b", 0, long + "Quarterly revenue grew.")],
            "c": [chunk("c", 0, "Glacier penguins.")],
        }
    )
    index.publish_many({"d": [chunk("d", 0, long + "Hosting costs doubled.")]}, retire=["b"])
    index.publish_many({"a": [chunk("a", 0, "Cake.", revision="r2")]})
    reader = VectorIndex(
        tmp_path / "vectors", NgramEmbedder(), passage_chars=40, hnsw_threshold=0 if hnsw else 10**6
    )
    assert ids(reader.rank("hosting costs doubled", SearchFilter(), 1)) == ["d@r1#0"]
    assert ids(reader.rank("glacier penguins", SearchFilter(), 1)) == ["c@r1#0"]
    assert ids(reader.rank("cake", SearchFilter(), 1)) == ["a@r2#0"]
    assert sorted(ids(reader.rank("words", SearchFilter(), 10))) == ["a@r2#0", "c@r1#0", "d@r1#0"]
    assert reader.live_revisions() == {"a": "a@r2", "c": "c@r1", "d": "d@r1"}


def test_a_query_can_drop_its_function_words_and_weight_its_words(tmp_path: Path) -> None:
    # Measured and off by default (README, "Search: the vector leg"); what the knobs do.
    embedder = NgramEmbedder()
    plain = VectorIndex(tmp_path / "v", embedder)
    dropping = VectorIndex(tmp_path / "v", embedder, stop_words=True)
    assert np.allclose(
        dropping.query_vector("what is the replicator"), plain.query_vector("replicator")
    )
    # A query of function words only keeps them rather than embedding nothing.
    assert dropping.query_vector("what is it").any()
    weighted = VectorIndex(
        tmp_path / "v", embedder, term_weights=lambda words: [w == "disk" for w in words]
    )
    assert np.allclose(weighted.query_vector("disk replicator"), plain.query_vector("disk"))


def test_term_weights_are_the_live_chunks_inverse_document_frequencies(tmp_path: Path) -> None:
    index = LexicalIndex(tmp_path / "index")
    index.publish_many(
        {
            "a": [chunk("a", 0, "disk full on the primary")],
            "b": [chunk("b", 0, "disk latency on the replica")],
            "c": [chunk("c", 0, "replica lag")],
        }
    )
    common, rare, absent, dropped = index.term_weights(["disk", "primary", "zebra", "?"])
    assert 0 < common < rare < absent and dropped == 0.0


def test_the_two_stage_scan_keeps_the_nearest_and_the_filter(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from loom_dagster.search import vector_table

    monkeypatch.setattr(vector_table, "PREFIX_CANDIDATES", 8)
    words = "disk network cache replica primary lag latency quorum ledger queue shard".split()
    documents = {
        f"d{n}": [
            chunk(
                f"d{n}",
                0,
                f"{words[n % 11]} {words[(n * 3) % 11]} {words[(n * 7) % 11]} note {n}",
                format="pdf" if n % 2 else "markdown",
            )
        ]
        for n in range(60)
    }
    writer = VectorIndex(tmp_path / "v", NgramEmbedder())
    writer.publish_many(documents)
    full = VectorIndex(tmp_path / "v", NgramEmbedder())
    staged = VectorIndex(tmp_path / "v", NgramEmbedder(), prefix_dimensions=256)
    for n in (3, 17, 42):
        query = documents[f"d{n}"][0].text
        assert ids(staged.rank(query, SearchFilter(), 1)) == ids(
            full.rank(query, SearchFilter(), 1)
        )
        assert ids(staged.rank(query, SearchFilter(), 1)) == [f"d{n}@r1#0"]
        kept = staged.rank(query, SearchFilter(formats=("pdf",)), 5)
        assert len(kept) == 5 and all(int(h.chunk_id[1:].split("@")[0]) % 2 for h in kept)
        scores = [h.score for h in staged.rank(query, SearchFilter(), 10)]
        assert scores == sorted(scores, reverse=True)
