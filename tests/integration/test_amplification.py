"""Issue 40 row 2: a document whose artifact is far larger than its original (a DOCX whose one
run inflates to 25 MB, or any extractor's huge valid artifact) indexes to at most its chunk
budget, the rest announced as a failed unit (resource_limit), and the small files of its batch
are published before it (pipeline.publication_order), searchable.

The extractor here is a fake that speaks the real protocol on loopback, so the bound is the
pipeline's own: it holds against a third-party extractor whatever that one sends.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from dagster import AssetRecordsFilter, DagsterInstance

from loom_dagster import api
from loom_dagster.api.reports import IngestReport
from loom_dagster.assets.specs import CHUNKS, PUBLISHED
from loom_dagster.chunking import MIN_CHUNK_BUDGET
from loom_dagster.extractor.settings import ENV_TOKEN, ENV_URL
from tests.integration.misbehaving_extractor import (
    CAPABILITIES,
    EXTRACT,
    MisbehavingExtractor,
    Recorded,
    Reply,
    artifact,
    capabilities_reply,
    json_reply,
)

SMALL = "# Hi\n"  # the one line the fake's artifact describes


def huge_artifact(chars: int) -> dict[str, object]:
    """A valid artifact of one paragraph of `chars` characters (no locator, so it fits the
    five-byte original it answers for)."""
    document = artifact()
    words = "amplified words of one inflated run "
    document["blocks"] = [
        {
            "id": "b0",
            "type": "paragraph",
            "text": (words * (chars // len(words) + 1))[:chars],
            "section_path": [],
            "keys": [],
            "locator": {},
        }
    ]
    return document


class HugeForBig(MisbehavingExtractor):
    """Answers `big.md` with a huge valid artifact, every other file with the small one."""

    def __init__(self, chars: int) -> None:
        super().__init__()
        self.big = json_reply(huge_artifact(chars))
        self.replies[CAPABILITIES] = capabilities_reply({"markdown": ["encoding"]})
        self.replies[EXTRACT] = json_reply(artifact())

    def reply_for(self, request: Recorded) -> Reply:
        if request.path == EXTRACT and request.query.get("name") == ["big.md"]:
            return self.big
        return super().reply_for(request)


def use_home(home: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("LOOM_HOME", str(home))
    monkeypatch.setenv("DAGSTER_HOME", str(home / "dagster"))
    monkeypatch.delenv("LOOM_OBJECT_STORE_URL", raising=False)
    monkeypatch.setenv("LOOM_EMBEDDER", "ngram")
    return home


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    return use_home(tmp_path / "loom-home", monkeypatch)


def make_batch(folder: Path) -> Path:
    folder.mkdir()
    for name in ("a.md", "big.md", "z.md"):
        (folder / name).write_text(SMALL)
    return folder


@pytest.fixture
def batch(tmp_path: Path) -> Path:
    return make_batch(tmp_path / "docs")


def served_by(chars: int, monkeypatch: pytest.MonkeyPatch) -> Iterator[HugeForBig]:
    with HugeForBig(chars) as service:
        monkeypatch.setenv(ENV_URL, service.url)
        monkeypatch.setenv(ENV_TOKEN, "a-token-for-the-fake")
        yield service


@pytest.fixture(scope="module")
def ingested(tmp_path_factory: pytest.TempPathFactory) -> Iterator[IngestReport]:
    """One batch (a.md, big.md, z.md) ingested, big.md answered with 1.8 M characters: about
    1,500 chunks; a 5-byte original's budget is the floor, 1,000. The environment stays set
    for the tests that read the home it left."""
    scratch = tmp_path_factory.mktemp("amplified")
    with pytest.MonkeyPatch.context() as monkeypatch:
        use_home(scratch / "loom-home", monkeypatch)
        for _ in served_by(1_800_000, monkeypatch):
            report = api.ingest_folder(make_batch(scratch / "docs"))
        yield report


def test_a_huge_artifact_indexes_to_its_budget_and_says_so(ingested: IngestReport) -> None:
    report = ingested
    outcomes = {o.path: o for o in report.outcomes}
    big = outcomes.pop("big.md")
    assert big.status == "published"
    assert big.incomplete
    assert big.detail == (
        f"{MIN_CHUNK_BUDGET} chunks (incomplete: text past chunk {MIN_CHUNK_BUDGET}: "
        "resource_limit)"
    )
    # The small files of the same batch were published too, whole, and are searchable.
    assert {(o.status, o.detail, o.incomplete) for o in outcomes.values()} == {
        ("published", "1 chunks", False)
    }
    assert {hit.chunk.path for hit in api.search("Hi")} >= {"a.md", "z.md"}
    [hit, *_] = api.search("amplified inflated")
    assert hit.chunk.path == "big.md"
    # Every hit of the cut revision says what it lost.
    assert hit.incomplete == f"text past chunk {MIN_CHUNK_BUDGET}: resource_limit"
    assert report.conserved


def test_the_small_files_of_a_batch_are_live_before_its_large_one_is_chunked(
    ingested: IngestReport,
) -> None:
    # The step's events, in the order it wrote them: a `published` materialization is written
    # once its revision's catalog and index commits are done, a `chunks` one once it is cut.
    path_of = {o.revision: o.path for o in ingested.outcomes}
    with DagsterInstance.get() as instance:
        order = [
            (record.storage_id, asset.path[-1], path_of[record.partition_key or ""])
            for asset in (CHUNKS, PUBLISHED)
            for record in instance.fetch_materializations(
                AssetRecordsFilter(asset_key=asset), limit=100
            ).records
        ]
    steps = [f"{path} {asset}" for _, asset, path in sorted(order)]

    assert steps.index("a.md published") < steps.index("big.md chunks")
    assert steps.index("z.md published") < steps.index("big.md chunks")
    assert steps[-1] == "big.md published"


def test_the_budget_is_a_setting(home: Path, batch: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LOOM_MAX_CHUNKS_PER_DOCUMENT", "40")
    for _ in served_by(200_000, monkeypatch):
        report = api.ingest_folder(batch)

    big = next(o for o in report.outcomes if o.path == "big.md")
    assert big.detail == "40 chunks (incomplete: text past chunk 40: resource_limit)"
