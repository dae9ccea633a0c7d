"""Files per minute for a first load of small files: through Dagster, and as a plain loop.

Both sides run in this one process, on the same generated folder, against the same reference
extractor service, calling the same domain functions (loom_dagster.pipeline); the plain loop is
the baseline that shows what Dagster's runs, events and batching cost.

    .venv/bin/python bench/ingest_throughput.py --files 1000
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import tempfile
import time
import warnings
from pathlib import Path

WORDS = (
    "invoice ledger tax account queue worker volume backup retention schema index "
    "partition revision extractor chunk citation heading paragraph"
).split()


def make_folder(root: Path, files: int, seed: int = 7) -> Path:
    rng = random.Random(seed)
    for n in range(files):
        sentences = [" ".join(rng.choice(WORDS) for _ in range(12)) + "." for _ in range(6)]
        text = f"# Note {n}\n\n## Summary\n\n{' '.join(sentences[:3])}\n\n## Details\n\n{' '.join(sentences[3:])}\n"
        path = root / f"group-{n % 20:02d}" / f"note-{n:05d}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def fresh_home(base: Path, name: str) -> None:
    home = base / name
    os.environ["LOOM_HOME"] = str(home)
    os.environ["DAGSTER_HOME"] = str(home / "dagster")


def plain_loop(folder: Path, *, vectors: bool = False) -> float:
    from loom_dagster import api, pipeline
    from loom_dagster.extractor.client import ExtractorClient
    from loom_dagster.extractor.settings import ExtractorSettings
    from loom_dagster.objectstore import ObjectStore
    from loom_dagster.resources.storage import CatalogResource
    from loom_dagster.search.lexical import LexicalIndex
    from loom_dagster.search.vector import open_vectors
    from loom_dagster.settings import LoomSettings

    started = time.perf_counter()
    settings = LoomSettings.from_env()
    api.prepare_environment(settings)
    source = api.register_source(settings, folder, name="bench")
    store, index = ObjectStore(settings.object_store_url), LexicalIndex(settings.search_dir)
    catalog_db = CatalogResource(database=str(settings.catalog_path))
    client = ExtractorClient(ExtractorSettings.from_env(os.environ))
    vector_index = open_vectors(settings) if vectors else None
    with catalog_db.connect() as con:
        scan = pipeline.sync_source(con, index, source, vectors=vector_index)
        for revision in scan.new:
            pipeline.store_original(store, source.root, revision)
            extraction = pipeline.extract(store, client, revision)
            pipeline.make_chunks(store, extraction, revision)
        pipeline.publish(con, index, store, list(scan.new), vectors=vector_index)
    client.close()
    return time.perf_counter() - started


def through_dagster(folder: Path) -> tuple[float, int]:
    from loom_dagster import api

    started = time.perf_counter()
    report = api.ingest_folder(folder, name="bench")
    elapsed = time.perf_counter() - started
    assert report.conserved and report.count("published") == report.files, (
        "not every file published"
    )
    return elapsed, report.files


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--files", type=int, default=1000)
    parser.add_argument("--out", type=Path, default=Path("bench/results/ingest_throughput.json"))
    parser.add_argument(
        "--vectors",
        action="store_true",
        help="only the plain loop, without and with the vector leg (the default embedder)",
    )
    args = parser.parse_args()
    warnings.filterwarnings("ignore")

    from loom_dagster.extractor.local import reference_extractor
    from loom_dagster.extractor.settings import ENV_TOKEN, ENV_URL
    from loom_dagster.settings import LoomSettings

    with tempfile.TemporaryDirectory() as scratch, reference_extractor() as service:
        base = Path(scratch)
        os.environ[ENV_URL], os.environ[ENV_TOKEN] = service.url, service.token
        folder = make_folder(base / "folder", args.files)
        if args.vectors:
            fresh_home(base, "lexical")
            without = plain_loop(folder)
            fresh_home(base, "vectors")
            with_vectors = plain_loop(folder, vectors=True)
            result = {
                "files": args.files,
                "plain_loop_s": round(without, 1),
                "plain_loop_with_vectors_s": round(with_vectors, 1),
                "vector_leg_cost": f"{(with_vectors / without - 1) * 100:+.1f}%",
                "machine": f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}",
            }
            print(json.dumps(result, indent=2))
            return
        fresh_home(base, "plain")
        plain_s = plain_loop(folder)
        fresh_home(base, "dagster")
        dagster_s, files = through_dagster(folder)
        batch = LoomSettings.from_env().batch_size

    result = {
        "files": files,
        "plain_loop_s": round(plain_s, 1),
        "plain_loop_files_per_min": round(files / plain_s * 60),
        "dagster_s": round(dagster_s, 1),
        "dagster_files_per_min": round(files / dagster_s * 60),
        "dagster_runs": -(-files // batch),
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}",
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
