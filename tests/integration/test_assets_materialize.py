"""Each asset materialized through Dagster (`materialize`) on its own, with real parts: a DuckDB
file, a store folder, a tantivy index and a fake extractor speaking contract v1 over real HTTP,
handed to the asset as the ExtractorResource (no environment, no reference service)."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from dagster import AssetCheckEvaluation, DagsterEventType, DagsterInstance, materialize

from loom_dagster import api, catalog, pipeline
from loom_dagster.assets import EXTRACTED_CHECK, artifact, original, published
from loom_dagster.extractor.settings import ENV_ROUTES
from loom_dagster.objectstore import ObjectStore
from loom_dagster.partitions import PARTITIONS_NAME
from loom_dagster.resources.extractor import ExtractorResource
from loom_dagster.resources.settings import SettingsResource
from loom_dagster.resources.storage import (
    CatalogResource,
    ObjectStoreResource,
    SearchIndexResource,
)
from loom_dagster.search.lexical import LexicalIndex
from loom_dagster.settings import LoomSettings
from tests.integration.misbehaving_extractor import EXTRACT, MisbehavingExtractor, error_reply

TOKEN = "materialize-token-0123456789"
ORIGINAL = b"# Hi\n"  # what misbehaving_extractor.artifact() extracts


@dataclass
class Loom:
    settings: LoomSettings
    service: MisbehavingExtractor
    instance: DagsterInstance
    key: str

    @property
    def store(self) -> ObjectStore:
        return ObjectStore(self.settings.object_store_url)

    def resources(self) -> dict[str, object]:
        return {
            "catalog_db": CatalogResource(database=str(self.settings.catalog_path)),
            "store": ObjectStoreResource(url=self.settings.object_store_url),
            "search_index": SearchIndexResource(directory=str(self.settings.search_dir)),
            "extractor": ExtractorResource(url=self.service.url, token=TOKEN, concurrency=1),
            "loom": SettingsResource(),
        }

    def materialize(self, asset: object) -> object:
        result = materialize(
            [asset],  # type: ignore[list-item]
            partition_key=self.key,
            resources=self.resources(),
            instance=self.instance,
        )
        assert result.success
        return result


@pytest.fixture
def loom(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Loom]:
    # The assets use the resources they are given, whatever the environment says: a route
    # there would send markdown to a port nobody listens on.
    for name in list(os.environ):
        if name.startswith(("LOOM_DOCUMENT_EXTRACTOR", "LOOM_RETRY")):
            monkeypatch.delenv(name)
    monkeypatch.setenv(ENV_ROUTES, json.dumps({"markdown": "http://127.0.0.1:9"}))
    settings = LoomSettings.from_env(
        {
            "LOOM_HOME": str(tmp_path / "home"),
            "LOOM_OBJECT_STORE_URL": (tmp_path / "store").as_uri(),
        }
    )
    settings.prepare()
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "note.md").write_bytes(ORIGINAL)
    os.utime(folder / "note.md", (1_000_000_000, 1_000_000_000))  # settled long ago
    source = api.register_source(settings, folder, name="docs")
    with CatalogResource(database=str(settings.catalog_path)).connect() as con:
        [revision] = pipeline.sync_source(con, LexicalIndex(settings.search_dir), source).new
    with MisbehavingExtractor() as service, DagsterInstance.ephemeral() as instance:
        instance.add_dynamic_partitions(PARTITIONS_NAME, [revision.key])
        yield Loom(settings, service, instance, revision.key)


def checks_of(result: object) -> list[AssetCheckEvaluation]:
    events = result.all_events  # type: ignore[attr-defined]
    return [
        event.event_specific_data  # type: ignore[misc]
        for event in events
        if event.event_type == DagsterEventType.ASSET_CHECK_EVALUATION
    ]


def test_original_keeps_the_bytes_in_the_store_folder(loom: Loom) -> None:
    loom.materialize(original)

    revision = _revision(loom)
    assert loom.store.get_original(revision.sha256) == ORIGINAL
    assert loom.service.requests_to(EXTRACT) == []


def test_artifact_asks_the_given_extractor_and_records_the_artifact(loom: Loom) -> None:
    loom.materialize(original)
    result = loom.materialize(artifact)

    [request] = loom.service.requests_to(EXTRACT)
    assert request.headers["authorization"] == f"Bearer {TOKEN}"
    assert request.body == ORIGINAL
    extraction = pipeline.read_extraction(loom.store, loom.key)
    assert extraction is not None and not extraction.refused
    assert extraction.artifact_sha256 is not None
    [check] = [c for c in checks_of(result) if c.check_name == EXTRACTED_CHECK]
    assert (check.passed, check.partition) == (True, loom.key)


def test_artifact_records_the_extractors_refusal_and_its_check_is_red(loom: Loom) -> None:
    loom.service.replies[EXTRACT] = error_reply(422, "corrupt", "not markdown at all")
    loom.materialize(original)
    result = loom.materialize(artifact)

    extraction = pipeline.read_extraction(loom.store, loom.key)
    assert extraction is not None
    assert (extraction.code, extraction.message) == ("corrupt", "not markdown at all")
    [check] = [c for c in checks_of(result) if c.check_name == EXTRACTED_CHECK]
    assert check.passed is False
    assert check.metadata["code"].value == "corrupt"


def test_the_publishing_step_writes_the_revisions_chunks(loom: Loom) -> None:
    # `chunks` and `published` are one step (a multi-asset): the chunks of a revision it makes
    # live are written as it publishes them.
    loom.materialize(original)
    loom.materialize(artifact)
    loom.materialize(published)

    [chunk] = pipeline.read_chunks(loom.store, loom.key)
    assert (chunk.text, chunk.revision, chunk.format) == ("# Hi", loom.key, "markdown")


def test_published_makes_the_revision_live_and_searchable(loom: Loom) -> None:
    for asset in (original, artifact, published):
        loom.materialize(asset)

    with CatalogResource(database=str(loom.settings.catalog_path)).connect() as con:
        assert catalog.outcomes_for(con, [loom.key])[loom.key].status == catalog.PUBLISHED
        assert catalog.searchable(con, [loom.key]) == {loom.key}
    [hit] = LexicalIndex(loom.settings.search_dir).search("hi")
    assert (hit.chunk.path, hit.chunk.text) == ("note.md", "# Hi")


def test_published_records_a_refusal_as_the_revisions_outcome(loom: Loom) -> None:
    loom.service.replies[EXTRACT] = error_reply(422, "corrupt", "not markdown at all")
    for asset in (original, artifact, published):
        loom.materialize(asset)

    with CatalogResource(database=str(loom.settings.catalog_path)).connect() as con:
        outcome = catalog.outcomes_for(con, [loom.key])[loom.key]
    assert (outcome.status, outcome.code) == (catalog.REFUSED, "corrupt")
    assert LexicalIndex(loom.settings.search_dir).search("hi") == []


def _revision(loom: Loom) -> object:
    with CatalogResource(database=str(loom.settings.catalog_path)).connect() as con:
        return catalog.get_revision(con, loom.key)
