"""One worker of tests/integration/test_shared_catalog.py and bench/catalog_shared.py: registers
a folder and publishes every file of it through the pipeline's domain functions (no Dagster), in
batches, into the catalog LOOM_CATALOG_URL names (or the home's DuckDB file when unset).

    python -m tests.integration.shared_catalog_worker FOLDER NAME GO_FILE BATCH

Waits for GO_FILE to exist before its first catalog access, so workers started together meet
the catalog at once; prints one JSON line: its outcomes by status, the seconds from GO on, and
the typed error (code, message) that stopped it, if one did.
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from loom_dagster import api, pipeline
from loom_dagster.errors import LoomError
from loom_dagster.extractor.client import ExtractorClient
from loom_dagster.extractor.settings import ExtractorSettings
from loom_dagster.objectstore import ObjectStore
from loom_dagster.resources.storage import CatalogResource
from loom_dagster.search.lexical import LexicalIndex
from loom_dagster.settings import LoomSettings
from loom_dagster.sources import Revision

# Calls in flight towards the extractor, per worker.
THREADS = 4


def run(folder: Path, name: str, go: Path, batch: int) -> dict[str, object]:
    settings = LoomSettings.from_env()
    api.prepare_environment(settings)
    store, index = ObjectStore(settings.object_store_url), LexicalIndex(settings.search_dir)
    client = ExtractorClient(ExtractorSettings.from_env(os.environ))
    while not go.exists():  # the start line, shared with the other worker
        time.sleep(0.01)
    started = time.perf_counter()
    statuses: Counter[str] = Counter()

    refusals: list[str] = []

    def prepare(revision: Revision) -> None:
        pipeline.store_original(store, str(folder.resolve()), revision)
        extraction = pipeline.extract(store, client, revision)
        if extraction.refused:  # published as refused, with its code
            refusals.append(f"{revision.path}: {extraction.code}: {extraction.message}")
        else:
            pipeline.make_chunks(store, extraction, revision)

    try:
        source = api.register_source(settings, folder, name=name)
        with CatalogResource(database=str(settings.catalog_path)).connect() as con:
            scan = pipeline.sync_source(con, index, source)
            new = list(scan.new)
            with ThreadPoolExecutor(THREADS) as pool:
                for at in range(0, len(new), batch):
                    part = new[at : at + batch]
                    list(pool.map(prepare, part))
                    for outcome in pipeline.publish(con, index, store, part):
                        statuses[outcome.status] += 1
        error = None
    except LoomError as failure:
        error = [failure.code, failure.message]
    finally:
        client.close()
    return {
        "statuses": dict(statuses),
        "seconds": round(time.perf_counter() - started, 3),
        "error": error,
        "refusals": refusals[:5],
    }


if __name__ == "__main__":
    folder_arg, name_arg, go_arg, batch_arg = sys.argv[1:5]
    print(json.dumps(run(Path(folder_arg), name_arg, Path(go_arg), int(batch_arg))), flush=True)
