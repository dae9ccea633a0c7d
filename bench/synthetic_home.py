"""A home grown fast to many published revisions, for the benches that measure what grows with
them (bench/partition_ceiling.py, bench/freshness.py): Dagster partitions added and their
materializations copied from a real run's, and (`grow_folder`) a watched folder's files
published as a real publish leaves them, without running them through Dagster.

What `grow_folder` makes is real but for what no later step reads: each file is on disk (a
tiny Markdown note) and registered as a scan registers it (its size, mtime, inode and SHA-256 as
stat and its bytes give them); published with `catalog.publish_batch` (documents, outcomes and
their history) and marked indexed; its chunk is in the lexical index and its vector in the
vector index, so `loom search` runs over every file; its partition is in the instance, with a
copy of each ASSET_MATERIALIZATION a real run of the template file stored (its partition
replaced), so the folder sensor and automation see it as materialized. Synthetic: no run
(nor its other events: steps, checks), and no object in the object store (no original,
artifact, extraction record or chunk file: a synthetic revision's outcome names the template's
artifact); its chunk is the template's chunk with the template's name and word replaced.
Nothing the freshness bench runs reads those (publishing reconciles only documents whose index
mark differs), but `loom show` of a synthetic document or `loom gc` would.
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

# Rows written to the catalog, the indexes and the event log at once.
CHUNK = 20_000
# Partitions added per `add_dynamic_partitions` call (what partition_ceiling times).
BATCH = 1000
# Files to a subfolder, as a large real folder spreads them.
PER_FOLDER = 1000


# Dagster's instance -------------------------------------------------------------------------------


def materializations(
    instance: Any, *, asset: Sequence[str] | None = None, partition: str | None = None
) -> list[dict[str, Any]]:
    """Stored ASSET_MATERIALIZATION rows of the event log's index, as dicts: the first of `asset`,
    or every one of `partition` (one per asset a run materialized for it)."""
    from dagster import AssetKey
    from dagster._core.storage.event_log.schema import SqlEventLogStorageTable as events

    query = events.select().where(events.c.dagster_event_type == "ASSET_MATERIALIZATION")
    if asset is not None:
        query = query.where(events.c.asset_key == AssetKey(list(asset)).to_string()).limit(1)
    if partition is not None:
        query = query.where(events.c.partition == partition)
    with instance.event_log_storage.index_connection() as conn:
        rows = [dict(row) for row in conn.execute(query).mappings()]
    if not rows:
        raise RuntimeError(f"no materialization to copy (asset {asset}, partition {partition})")
    return rows


def add_events(instance: Any, template: dict[str, Any], keys: Sequence[str]) -> None:
    """A copy of the stored event `template` for each partition of `keys`."""
    from dagster._core.storage.event_log.schema import SqlEventLogStorageTable as events

    old = template["partition"]
    rows = [
        {
            "run_id": template["run_id"],
            "event": template["event"].replace(old, key),
            "dagster_event_type": template["dagster_event_type"],
            "timestamp": template["timestamp"],
            "step_key": template["step_key"],
            "asset_key": template["asset_key"],
            "partition": key,
        }
        for key in keys
    ]
    with instance.event_log_storage.index_connection() as conn:
        conn.execute(events.insert(), rows)


def add_partitions(instance: Any, name: str, keys: Sequence[str]) -> list[float]:
    """Add `keys` to the dynamic partitions `name`, BATCH a call; returns each call's seconds."""
    calls = []
    for first in range(0, len(keys), BATCH):
        started = time.perf_counter()
        instance.add_dynamic_partitions(name, list(keys[first : first + BATCH]))
        calls.append(time.perf_counter() - started)
    return calls


# A folder of published files -----------------------------------------------------------------------


def synthetic_path(n: int) -> str:
    return f"syn-{n // PER_FOLDER:04d}/syn-{n:07d}.md"


def grow_folder(
    env: dict[str, str],
    source_name: str,
    template_path: str,
    count: int,
    note: Callable[[str, int], tuple[str, str]],
    *,
    say: Callable[[str], None] = lambda _: None,
    indexes: bool = True,
    index_chunk: int = CHUNK,
) -> dict[str, float]:
    """Add `count` published files to the registered folder `source_name` of the home `env`
    names (LOOM_HOME, DAGSTER_HOME), as the module's docstring says. `note(path, n)` is a file's
    text and the one word only it holds; `template_path` is a file of the folder that a real
    run published, written by `note(template_path, -1)`. Returns each stage's seconds.

    With `indexes` False, the lexical and vector indexes are not grown (the slowest stage: two
    thirds of a 1,000,000 build): the catalog still marks every document indexed, so what
    compares the marks (the quick ingest) finds nothing to repair, but whatever reads the indexes
    themselves (search, the full ingest's vector sync) finds the synthetic documents missing.
    For profiling the folder scan and the catalog's reads only. `index_chunk`: documents
    published to the indexes at once (the vector index writes a whole generation each time, so
    fewer, larger batches build a large home faster; the index they make is the same)."""
    from dagster import DagsterInstance

    from loom_dagster import catalog
    from loom_dagster.objectstore import ObjectStore
    from loom_dagster.partitions import PARTITIONS_NAME
    from loom_dagster.pipeline import read_chunks
    from loom_dagster.pipeline.publishing import indexed_chunks
    from loom_dagster.resources.storage import CatalogResource
    from loom_dagster.search.lexical import LexicalIndex
    from loom_dagster.search.vector import VectorIndex, shared_embedder
    from loom_dagster.settings import LoomSettings
    from loom_dagster.sources import Revision, document_id, revision_key
    from loom_dagster.sources.options import options_json

    settings = LoomSettings.from_env(env)
    timings: dict[str, float] = {}
    clock = time.perf_counter()

    def lap(stage: str) -> None:
        nonlocal clock
        now = time.perf_counter()
        timings[stage] = round(now - clock, 1)
        say(f"{stage}: {timings[stage]} s")
        clock = now

    db = CatalogResource(database=str(settings.catalog_path))
    with db.connect() as con:
        source = catalog.get_source(con, source_name)
        assert source is not None, f"no folder {source_name} is registered"
        [template] = [
            r for r in catalog.known_files(con, source_name).items() if r[0] == template_path
        ]
        template_key = template[1].key
        artifact, run_id = con.execute(
            "SELECT artifact_sha256, run_id FROM outcomes WHERE revision = ?", [template_key]
        ).fetchone() or (None, None)
        tags = catalog.source_tags(con, {source_name})[source_name]
    assert artifact, f"{template_path} was not published"
    chunks = read_chunks(ObjectStore(settings.object_store_url), template_key)
    _, template_word = note(template_path, -1)

    # The files, written long enough ago that no scan waits for them to settle.
    root = Path(source.root)
    past = time.time_ns() - 600 * 10**9
    revisions: list[Revision] = []
    words: dict[str, str] = {}
    for n in range(count):
        path = synthetic_path(n)
        text, word = note(path, n)
        data = text.encode()
        target = root / path
        if n % PER_FOLDER == 0:
            target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
        os.utime(target, ns=(past, past))
        stat = target.stat()
        sha = hashlib.sha256(data).hexdigest()
        options = options_json(source, path)
        revisions.append(
            Revision(
                revision_key(source_name, path, sha, options),
                document_id(source_name, path),
                source_name,
                path,
                stat.st_size,
                stat.st_mtime_ns,
                sha,
                stat.st_dev,
                stat.st_ino,
                options,
            )
        )
        words[path] = word
    lap("files written")

    def chunks_of(revision: Revision) -> list[Any]:
        def swap(text: str) -> str:
            return text.replace(template_path, revision.path).replace(
                template_word, words[revision.path]
            )

        return indexed_chunks(
            revision,
            [
                dataclasses.replace(
                    chunk,
                    text=swap(chunk.text),
                    section_path=tuple(swap(s) for s in chunk.section_path),
                    revision=revision.key,
                )
                for chunk in chunks
            ],
            tags,
            None,
        )

    with db.connect() as con:
        for first in range(0, count, CHUNK):
            batch = revisions[first : first + CHUNK]
            catalog.register_revisions(con, batch)
            catalog.publish_batch(
                con,
                [catalog.Publication(r, len(chunks), artifact) for r in batch],
                run_id=run_id,
            )
        lap("catalog: registered and published")
        lexical = LexicalIndex(str(settings.search_dir))
        vectors = VectorIndex(str(settings.vectors_dir), shared_embedder(settings.embedder))
        for first in range(0, count, index_chunk):
            batch = revisions[first : first + index_chunk]
            if not indexes:
                catalog.mark_indexed(con, {r.document_id: r.key for r in batch})
                continue
            live = {r.document_id: chunks_of(r) for r in batch}
            lexical.publish_many(live)
            vectors.publish_many(live)
            catalog.mark_indexed(con, {doc: items[0].revision for doc, items in live.items()})
        lap("lexical and vector indexes" if indexes else "index marks (indexes not grown)")

    keys = [r.key for r in revisions]
    with DagsterInstance.from_config(str(settings.dagster_home)) as instance:
        add_partitions(instance, PARTITIONS_NAME, keys)
        lap("partitions")
        for row in materializations(instance, partition=template_key):
            for first in range(0, count, CHUNK):
                add_events(instance, row, keys[first : first + CHUNK])
        lap("materializations")
    return timings
