"""Issue 40 row 2: DOCX bombs (a 25 KB one whose one text run inflates to 25 MB, a 256 KB one
of 250 MiB) ingested beside a normal Markdown file of the same folder, through the reference
extractor and Dagster, each case in a process of its own from a fresh home.

For each case (the normal file alone: the baseline; with each bomb; the 256 KB one again with
the extractor's artifact bound out of the way, as it was before it): the ingest's wall time, the
peak memory of the ingesting process and of the extractor (the service and its children, the
largest of them), each file's outcome, the bomb's chunks and the size of its artifact, and when
the batch's normal file became searchable (its `published` materialization, written once the
catalog and index commits that made it live are done, from the ingest's start). Then, on the
largest bomb's artifact, the chunker's and the lexical index's speed (chunks/s). And, for each
bomb, its extraction alone in one fresh confined child (runner.run_extraction, no template, in a
process of its own): the child's peak memory and its wall time.

    .venv/bin/python bench/amplification.py [--cases normal,25k,256k]

The reference extractor runs from LOOM_EXTRACTOR_ENV (default /opt/loom/extractor-venv), whose
copy of extractor_sandbox must be this checkout's.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from tests.extractor import office_packages  # noqa: E402

MIB = 1024 * 1024
# Characters of the one run: 25 MB packs to ~25 KB, 250 MiB to ~256 KB.
CASES = {"normal": 0, "25k": 25_000_000, "256k": 250 * MIB, "256k-unbounded": 250 * MIB}
# The last case runs with the extractor's artifact bound out of the way: what it was before.
UNBOUNDED = {"LOOM_EXTRACTOR_MAX_OUTPUT_PER_INPUT_BYTE": "1000000"}
NORMAL = "# Normal\n\nA note of the same folder, searchable.\n" * 20


def peak_mib(who: int = resource.RUSAGE_SELF) -> float:
    return resource.getrusage(who).ru_maxrss / 1024


def one_case(case: str, scratch: Path) -> dict[str, object]:
    """Ingest the folder of `case` from a fresh home, in this process; its measures."""
    os.environ["LOOM_HOME"] = str(scratch / "home")
    os.environ["DAGSTER_HOME"] = str(scratch / "home" / "dagster")
    os.environ.setdefault("LOOM_EMBEDDER", "ngram")
    from dagster import AssetRecordsFilter, DagsterInstance

    from loom_dagster import api, pipeline
    from loom_dagster.assets.specs import ARTIFACT, PUBLISHED
    from loom_dagster.extractor.local import reference_extractor
    from loom_dagster.extractor.settings import ENV_TOKEN, ENV_URL
    from loom_dagster.objectstore import ObjectStore
    from loom_dagster.settings import LoomSettings

    folder = scratch / "docs"
    bomb_file = folder / "bomb.docx"
    size = bomb_file.stat().st_size if bomb_file.exists() else 0
    with reference_extractor() as service:
        os.environ[ENV_URL] = service.url
        os.environ[ENV_TOKEN] = service.token
        started_wall = time.time()
        started = time.perf_counter()
        report = api.ingest_folder(folder)
        took = time.perf_counter() - started
        searchable = "normal.md" in {hit.chunk.path for hit in api.search("searchable note")}
    measures: dict[str, object] = {
        "case": case,
        "bomb_bytes": size,
        "seconds": round(took, 1),
        "peak_mib": round(peak_mib()),
        "extractor_peak_mib": round(peak_mib(resource.RUSAGE_CHILDREN)),
        "outcomes": [f"{o.path}: {o.status} {o.detail}" for o in report.outcomes],
        "normal_searchable": searchable,
    }
    path_of = {o.revision: o.path for o in report.outcomes}
    with DagsterInstance.get() as instance:
        records = instance.fetch_materializations(
            AssetRecordsFilter(asset_key=PUBLISHED), limit=100
        ).records
        published_at = {path_of.get(r.partition_key or ""): r.timestamp for r in records}
        extracted = instance.fetch_materializations(
            AssetRecordsFilter(asset_key=ARTIFACT), limit=100
        ).records
        extracted_at = {path_of.get(r.partition_key or ""): r.timestamp for r in extracted}
    measures["normal_live_after_s"] = round(published_at["normal.md"] - started_wall, 1)
    if "bomb.docx" in extracted_at:  # the batch's artifact step ends with its slowest file
        measures["bomb_extracted_after_s"] = round(extracted_at["bomb.docx"] - started_wall, 1)
    if "bomb.docx" in published_at:
        measures["bomb_live_after_s"] = round(published_at["bomb.docx"] - started_wall, 1)
    bomb = [o for o in report.outcomes if o.path == "bomb.docx"]
    if bomb and bomb[0].revision:
        store = ObjectStore(LoomSettings.from_env().object_store_url)
        extraction = pipeline.read_extraction(store, bomb[0].revision)
        if extraction is not None and extraction.artifact_sha256:
            measures["artifact_bytes"] = len(store.get_artifact_bytes(extraction.artifact_sha256))
            measures["chunks"] = len(pipeline.read_chunks(store, bomb[0].revision))
            measures["speed"] = speed(store, extraction, bomb[0].revision, size, scratch)
    return measures


def child_case(bomb: Path) -> dict[str, object]:
    """`bomb` extracted by one fresh child under the service's settings (from the environment):
    the child's peak memory (RUSAGE_CHILDREN: it is this process's only child). Read from its
    file, not made here: a child's peak counts the image it was forked from, before its exec."""
    from extractor_sandbox.runner import Limits, run_extraction
    from extractor_sandbox.settings import load_settings

    data = bomb.read_bytes()
    limits = Limits.of(load_settings(os.environ))
    started = time.perf_counter()
    body = run_extraction(data, "docx", "bomb.docx", {}, limits, warm=False)
    return {
        "child_seconds": round(time.perf_counter() - started, 1),
        "child_peak_mib": round(peak_mib(resource.RUSAGE_CHILDREN)),
        "child_artifact_bytes": len(body),
    }


def speed(store: object, extraction: object, revision: str, size: int, scratch: Path) -> dict:
    """Chunks/s of `chunk_within` and of the lexical index write, on the bomb's stored artifact."""
    from dataclasses import dataclass

    from loom_dagster.chunking import chunk_within
    from loom_dagster.pipeline.records import load_artifact
    from loom_dagster.search.lexical import IndexedChunk, LexicalIndex

    @dataclass
    class Sized:  # load_artifact reads only the original's size of the revision
        size: int

    artifact = load_artifact(store, extraction, Sized(size))  # type: ignore[arg-type]
    started = time.perf_counter()
    cut = chunk_within(artifact, revision=revision, original_size=size)
    chunked = time.perf_counter() - started
    indexed = [IndexedChunk.of(c, document_id="d", source="s", path="b") for c in cut.chunks]
    index = LexicalIndex(scratch / "index")
    started = time.perf_counter()
    index.publish_many({"d": indexed})
    written = time.perf_counter() - started
    return {
        "chunks": len(cut.chunks),
        "budget": cut.budget,
        "chunking_per_s": round(len(cut.chunks) / chunked),
        "index_per_s": round(len(indexed) / written),
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--cases", default=",".join(CASES))
    parser.add_argument("--one", help=argparse.SUPPRESS)  # a case, in this process
    parser.add_argument("--child", help=argparse.SUPPRESS)  # a bomb's path, in one child
    parser.add_argument("--scratch", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(one_case(args.one, Path(args.scratch))))
        return
    if args.child:
        print(json.dumps(child_case(Path(args.child))))
        return
    scratch = Path(tempfile.mkdtemp(prefix="loom-amplification-"))
    load = open("/proc/loadavg").read().split()[:3]
    print(f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; machine: {os.uname().machine},")
    print(f"{os.cpu_count()} cores, load {load} at start; scratch {scratch}")
    for case in args.cases.split(","):
        # The folder is written here, so the case's process measures the ingest alone.
        folder = scratch / case / "docs"
        folder.mkdir(parents=True)
        (folder / "normal.md").write_text(NORMAL)
        if CASES[case]:
            data = office_packages.docx(office_packages.paragraph("A" * CASES[case]))
            (folder / "bomb.docx").write_bytes(data)
            del data
        done = subprocess.run(
            [sys.executable, __file__, "--one", case, "--scratch", str(scratch / case)],
            capture_output=True,
            text=True,
            check=False,
            env={**os.environ, **(UNBOUNDED if case.endswith("unbounded") else {})},
        )
        lines = done.stdout.strip().splitlines()
        if done.returncode != 0 or not lines:
            print(f"\n{case}: failed ({done.returncode})\n{done.stderr[-3000:]}")
            continue
        measures = json.loads(lines[-1])
        if CASES[case]:
            alone = subprocess.run(
                [sys.executable, __file__, "--child", str(folder / "bomb.docx")],
                capture_output=True,
                text=True,
                check=False,
                env={**os.environ, **(UNBOUNDED if case.endswith("unbounded") else {})},
            )
            found = alone.stdout.strip().splitlines()
            if alone.returncode == 0 and found:
                measures.update(json.loads(found[-1]))
            else:
                measures["child"] = f"failed ({alone.returncode}): {alone.stderr[-500:]}"
        print(
            f"\n{case} ({measures['bomb_bytes']:,}-byte bomb):"
            if measures["bomb_bytes"]
            else f"\n{case}:"
        )
        for name, value in measures.items():
            if name not in ("case", "bomb_bytes", "outcomes"):
                print(f"  {name}: {value}")
        for outcome in measures["outcomes"]:
            print(f"  {outcome}")
    print(f"\nload at the end: {open('/proc/loadavg').read().split()[:3]}")


if __name__ == "__main__":
    main()
