"""The code location: assets, sensors, jobs and resources, with settings validated at load."""

from __future__ import annotations

import os

from dagster import Definitions, in_process_executor

from loom_dagster.assets.revisions import artifact, original, published, strict_from_env
from loom_dagster.jobs import ingest_job
from loom_dagster.lifecycle import Retention
from loom_dagster.resources.extractor import ExtractorResource, ExtractorSettings
from loom_dagster.resources.storage import CatalogResource, ObjectStoreResource, SearchIndexResource
from loom_dagster.sensors import loom_folders, loom_ingest_automation
from loom_dagster.settings import LoomSettings


def build_definitions(settings: LoomSettings) -> Definitions:
    # An invalid extractor setting is an error here, at load, not a surprise in a run.
    ExtractorSettings.from_env(os.environ)
    Retention.from_env(os.environ)
    strict_from_env(os.environ)
    settings.prepare()
    return Definitions(
        assets=[original, artifact, published],
        jobs=[ingest_job],
        sensors=[loom_folders, loom_ingest_automation],
        executor=in_process_executor,
        resources={
            "catalog_db": CatalogResource(database=str(settings.catalog_path)),
            "store": ObjectStoreResource(url=settings.object_store_url),
            "search_index": SearchIndexResource(directory=str(settings.search_dir)),
            "extractor": ExtractorResource(concurrency=settings.extract_concurrency),
        },
    )


defs = build_definitions(LoomSettings.from_env())
