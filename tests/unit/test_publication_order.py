"""The commits a batch is published in (pipeline.publication_order): its small documents first,
together, then each large one on its own, so one large document never holds the other files of
its batch out of search (issue 40 row 2)."""

from __future__ import annotations

from loom_dagster.pipeline import LARGE_ARTIFACT_BYTES, Extraction, publication_order
from loom_dagster.sources import Revision

LARGE = LARGE_ARTIFACT_BYTES + 1


def revision(name: str, version: int = 1) -> Revision:
    return Revision(f"{name}@{version}", f"doc-{name}", "docs", name, 10, 0, "0" * 64)


def extracted(rev: Revision, artifact_bytes: int) -> Extraction:
    return Extraction(rev.key, "extracted", artifact_sha256="1" * 64, artifact_bytes=artifact_bytes)


def keys(groups: list[list[Revision]]) -> list[list[str]]:
    return [[r.key for r in group] for group in groups]


def test_a_batch_of_small_documents_is_one_commit_in_its_order() -> None:
    batch = [revision(name) for name in ("c.md", "a.md", "b.md")]
    found = {r.key: extracted(r, 5_000) for r in batch}

    assert keys(publication_order(batch, found)) == [["c.md@1", "a.md@1", "b.md@1"]]


def test_large_documents_come_after_the_small_ones_each_alone_smallest_first() -> None:
    huge, big, small, refused, unknown = (revision(n) for n in ("h", "b", "s", "r", "u"))
    found: dict[str, Extraction | None] = {
        huge.key: extracted(huge, 10 * LARGE),
        big.key: extracted(big, LARGE),
        small.key: extracted(small, LARGE_ARTIFACT_BYTES),
        refused.key: Extraction(refused.key, "refused", code="corrupt", message="no"),
        unknown.key: None,
    }

    groups = publication_order([huge, big, small, refused, unknown], found)

    assert keys(groups) == [["s@1", "r@1", "u@1"], ["b@1"], ["h@1"]]


def test_a_documents_revisions_stay_in_one_commit_in_their_order() -> None:
    first, second, other = revision("d.md", 1), revision("d.md", 2), revision("e.md")
    found = {
        first.key: extracted(first, 100),
        second.key: extracted(second, LARGE),
        other.key: extracted(other, 100),
    }

    groups = publication_order([first, other, second], found)

    assert keys(groups) == [["e.md@1"], ["d.md@1", "d.md@2"]]
