"""The code location: assets, sensors, jobs and resources, built from settings read once.

Loading it reads the environment (LoomSettings.from_env: a bad setting is an error at load, not
a surprise in a run) and writes nothing: no folder, no dagster.yaml, no environment variable.
The `loom` command makes the home before it loads this.
"""

from __future__ import annotations

import os
import warnings

from dagster import BetaWarning, Definitions, PreviewWarning, in_process_executor

# Silenced deliberately, before the assets are defined, in every process that loads the code
# location (dagster dev's code server, each run): Dagster marks as beta or preview exactly the
# features the design rests on (partitioned asset checks, a backfill policy, resources bound to
# an asset, owners on a sensor), and said so once per definition and per process, hundreds of
# times a day in `loom ui`'s log, where nobody can act on it. Only those features are silenced:
# any other beta or preview feature still warns. Dagster's own changelog is where to follow them.
DELIBERATE = (
    r"Specifying a partitions_def on an AssetCheckSpec"
    r"|Parameter `(resource_defs|backfill_policy|owners)` of (function `(multi_)?asset`"
    r"|initializer `SensorDefinition.__init__`)"
)
warnings.filterwarnings("ignore", message=DELIBERATE, category=BetaWarning)
warnings.filterwarnings("ignore", message=DELIBERATE, category=PreviewWarning)
# The definitions are imported after the filter (E402), so it is in place when they are made.

from loom_dagster.assets import artifact_asset, original, published  # noqa: E402
from loom_dagster.errors import SettingsError  # noqa: E402
from loom_dagster.jobs import ingest_job, sync_job  # noqa: E402
from loom_dagster.resources.extractor import ExtractorResource  # noqa: E402
from loom_dagster.resources.settings import SettingsResource  # noqa: E402
from loom_dagster.resources.storage import CatalogResource, ObjectStoreResource, SearchIndexResource  # noqa: E402
from loom_dagster.sensors import loom_folders, loom_ingest_automation, waiting_check  # noqa: E402
from loom_dagster.settings import LoomSettings  # noqa: E402


def build_definitions(settings: LoomSettings) -> Definitions:
    if not settings.extractor.held_by(os.environ):
        # The resource passes the tokens on by the variables' names (EnvVar), never as values.
        raise SettingsError(
            "LOOM_DOCUMENT_EXTRACTOR_TOKEN(S_JSON): the extractor's tokens reach Dagster only "
            "through these variables, and they do not hold the tokens the settings were read with"
        )
    # The artifact's code version is Loom's (contract and package), not the extractor's parsers:
    # Dagster keeps one code version per asset, so a parser in it would mark every partition of
    # every format unsynced when one format's parser changed (or was first seen). The partitions
    # an upgrade made stale are exactly those the `current_parser` check warns about.
    return Definitions(
        assets=[original, artifact_asset(settings.strict), published],
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
