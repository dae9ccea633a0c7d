"""What each of Loom's stores holds per chunk: a folder of Markdown files run through the plain
pipeline (no Dagster; `bench/ingest_throughput.py` measures Dagster's instance beside it), then
every store's size on disk, per 1,000 chunks and extrapolated to a million (docs/scale.md).

    .venv/bin/python bench/store_sizes.py --files 1000 --sections 100   # ~100,000 chunks
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.ingest_throughput import WORDS, fresh_home, plain_loop  # noqa: E402


def make_folder(root: Path, files: int, sections: int, seed: int = 11) -> Path:
    """`files` Markdown files of `sections` sections each, a paragraph of 40-80 words a section:
    each section is a chunk of its own."""
    rng = random.Random(seed)
    for n in range(files):
        parts = [f"# Runbook {n}\n"]
        for s in range(sections):
            words = " ".join(rng.choice(WORDS) for _ in range(rng.randint(40, 80)))
            parts.append(f"## Step {s} of runbook {n}\n\n{words}.\n")
        path = root / f"group-{n % 20:02d}" / f"runbook-{n:05d}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("\n".join(parts))
    return root


def size(path: Path) -> int:
    if path.is_file():
        return path.stat().st_size
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file()) if path.exists() else 0


def chunk_count(home: Path) -> int:
    import duckdb

    con = duckdb.connect(str(home / "catalog.duckdb"), read_only=True)
    try:
        tables = {row[0] for row in con.execute("SHOW TABLES").fetchall()}
        if "chunks" in tables:
            return int(con.execute("SELECT count(*) FROM chunks").fetchone()[0])  # type: ignore[index]
    finally:
        con.close()
    import pyarrow.parquet as pq

    return sum(
        pq.ParquetFile(p).metadata.num_rows for p in (home / "store").rglob("chunks.parquet")
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=1000)
    parser.add_argument("--sections", type=int, default=100)
    parser.add_argument("--out", type=Path, default=Path("bench/results/store_sizes.json"))
    args = parser.parse_args()

    from loom_dagster.extractor.local import reference_extractor
    from loom_dagster.extractor.settings import ENV_TOKEN, ENV_URL

    os.environ.setdefault("LOOM_EMBEDDER", "wordllama")
    with tempfile.TemporaryDirectory(prefix="loom-sizes-", dir=Path.home()) as scratch:
        folder = make_folder(Path(scratch) / "folder", args.files, args.sections)
        with reference_extractor() as service:
            os.environ[ENV_URL], os.environ[ENV_TOKEN] = service.url, service.token
            home = fresh_home(Path(scratch), "home")
            started = time.perf_counter()
            plain_loop(folder, vectors=True)
            seconds = time.perf_counter() - started
        chunks = chunk_count(home)
        store = home / "store"
        stores = {
            "originals (object store)": size(store / "originals"),
            "artifacts (object store)": size(store / "artifacts"),
            "per-revision chunks and records (object store)": size(store / "revisions"),
            "catalog (DuckDB file)": size(home / "catalog.duckdb"),
            "lexical and exact legs (tantivy)": size(home / "search"),
            "vector generation (served)": size(home / "vectors" / "generations"),
            "vectors, all (with the embedding cache)": size(home / "vectors"),
        }
        result = {
            "files": args.files,
            "chunks": chunks,
            "folder_bytes": size(folder),
            "seconds": round(seconds, 1),
            "load": Path("/proc/loadavg").read_text().split()[:3],
            "stores": stores,
        }
    print(
        f"{args.files} files, {chunks} chunks, {result['folder_bytes'] / 1e6:.1f} MB of "
        f"Markdown, {seconds:.0f} s through the plain pipeline (load {' '.join(result['load'])})"
    )
    print(f"{'store':50} {'MB':>9} {'bytes/chunk':>12} {'GB per 1M chunks':>17}")
    for name, total in stores.items():
        per_chunk = total / max(chunks, 1)
        print(f"{name:50} {total / 1e6:9.1f} {per_chunk:12.0f} {per_chunk * 1e6 / 1e9:17.2f}")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
