"""The code location: assets, sensors, jobs and resources, built from settings read once.

Loading it reads the environment (LoomSettings.from_env: a bad setting is an error at load, not
a surprise in a run) and writes nothing: no folder, no dagster.yaml, no environment variable.
The `loom` command makes the home before it loads this.
"""

from __future__ import annotations

from dagster import Definitions, in_process_executor

from loom_dagster.assets import PACKAGE_VERSION, artifact_asset, original, published
from loom_dagster.jobs import ingest_job, sync_job
from loom_dagster.pipeline import parsers
from loom_dagster.resources.extractor import ExtractorResource
from loom_dagster.resources.settings import SettingsResource
from loom_dagster.resources.storage import CatalogResource, ObjectStoreResource, SearchIndexResource
from loom_dagster.sensors import loom_folders, loom_ingest_automation, waiting_check
from loom_dagster.settings import LoomSettings


def build_definitions(settings: LoomSettings) -> Definitions:
    # The parsers the last run saw declared (read, never written, here): a parser upgrade
    # changes the artifact's code version once a run has seen it.
    version = parsers.code_version(parsers.read_declared(settings.home), PACKAGE_VERSION)
    extraction = artifact_asset(settings.strict).map_asset_specs(
        lambda spec: spec.replace_attributes(code_version=version)
    )
    return Definitions(
        assets=[original, extraction, published],
        asset_checks=[waiting_check],
        jobs=[ingest_job, sync_job],
        sensors=[loom_folders, loom_ingest_automation],
        executor=in_process_executor,
        resources={
            "catalog_db": CatalogResource(database=str(settings.catalog_path)),
            "store": ObjectStoreResource(url=settings.object_store_url),
            "search_index": SearchIndexResource(
                directory=str(settings.search_dir),
                vectors_directory=str(settings.vectors_dir),
                embedder=settings.embedder.setting,
            ),
            "loom": SettingsResource.of(settings),
            "extractor": ExtractorResource.of(
                settings.extractor, settings.limits, concurrency=settings.extract_concurrency
            ),
        },
    )


defs = build_definitions(LoomSettings.from_env())
