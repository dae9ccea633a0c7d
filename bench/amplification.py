"""Issue 40 row 2: a DOCX whose one text run inflates to 25 MB, ingested beside a normal
Markdown file of the same folder, in one run, through the reference extractor and Dagster.

Prints, for the ingest of the normal file alone and then of the same folder with the bomb in it:
the wall time, this process's peak memory (ru_maxrss, the extractor's child is apart), each
file's outcome; then the chunk and index speed on the bomb's artifact alone (chunks/s of
`chunk_within` and of the lexical index write), the numbers the README's speed section quotes.

    .venv/bin/python bench/amplification.py [--run-chars 25000000] [--word]
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tests.extractor import office_packages  # noqa: E402


def peak_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def bomb(chars: int, word: bool) -> bytes:
    run = ("lorem ipsum dolor sit amet " * (chars // 27 + 1))[:chars] if word else "A" * chars
    return office_packages.docx(office_packages.paragraph(run))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--run-chars", type=int, default=25_000_000)
    parser.add_argument("--word", action="store_true", help="words, not one long word")
    args = parser.parse_args()

    scratch = Path(tempfile.mkdtemp(prefix="loom-amplification-"))
    os.environ["LOOM_HOME"] = str(scratch / "home")
    os.environ["DAGSTER_HOME"] = str(scratch / "home" / "dagster")
    os.environ.setdefault("LOOM_EMBEDDER", "ngram")
    from loom_dagster import api, pipeline
    from loom_dagster.chunking import chunk_within
    from loom_dagster.extractor.local import reference_extractor
    from loom_dagster.extractor.settings import ENV_TOKEN, ENV_URL
    from loom_dagster.objectstore import ObjectStore
    from loom_dagster.pipeline.records import load_artifact
    from loom_dagster.search.lexical import IndexedChunk, LexicalIndex
    from loom_dagster.settings import LoomSettings

    folder = scratch / "docs"
    folder.mkdir()
    (folder / "normal.md").write_text("# Normal\n\nA note of the same folder, searchable.\n" * 20)
    data = bomb(args.run_chars, args.word)
    print(f"machine: {os.cpu_count()} cores, load {open('/proc/loadavg').read().split()[:3]}")
    print(f"bomb.docx: {len(data):,} bytes, one run of {args.run_chars:,} characters")
    with reference_extractor() as service:
        os.environ[ENV_URL] = service.url
        os.environ[ENV_TOKEN] = service.token
        for label in ("normal file alone", "same folder with the bomb"):
            if label != "normal file alone":
                (folder / "bomb.docx").write_bytes(data)
                (folder / "normal.md").write_text(
                    (folder / "normal.md").read_text() + "One more line.\n"
                )
            started = time.perf_counter()
            report = api.ingest_folder(folder)
            took = time.perf_counter() - started
            print(f"\n{label}: {took:.1f} s, peak {peak_mib():.0f} MiB (this process)")
            for outcome in report.outcomes:
                print(f"  {outcome.path}: {outcome.status} {outcome.detail}")
        hits = {hit.chunk.path for hit in api.search("searchable note")}
        print(f"  normal.md searchable: {'normal.md' in hits}")

    settings = LoomSettings.from_env()
    store = ObjectStore(settings.object_store_url)
    [revision] = [o.revision for o in report.outcomes if o.path == "bomb.docx"]
    extraction = pipeline.read_extraction(store, revision)
    assert extraction is not None and not extraction.refused
    size = len(data)
    artifact_started = time.perf_counter()
    from dataclasses import dataclass

    @dataclass
    class Sized:  # load_artifact reads only the original's size of the revision
        size: int

    artifact = load_artifact(store, extraction, Sized(size))  # type: ignore[arg-type]
    parsed = time.perf_counter() - artifact_started
    text_chars = sum(len(block.text) for block in artifact.blocks)
    started = time.perf_counter()
    cut = chunk_within(artifact, revision=revision, original_size=size)
    chunked = time.perf_counter() - started
    indexed = [
        IndexedChunk.of(c, document_id="d", source="s", path="bomb.docx") for c in cut.chunks
    ]
    index = LexicalIndex(scratch / "index")
    started = time.perf_counter()
    index.publish_many({"d": indexed})
    written = time.perf_counter() - started
    print(f"\nbomb artifact: {text_chars:,} characters, parsed in {parsed:.1f} s")
    print(
        f"chunking: {len(cut.chunks):,} chunks (budget {cut.budget:,}, cut {cut.cut}) in "
        f"{chunked:.2f} s = {len(cut.chunks) / chunked:,.0f} chunks/s"
    )
    print(f"lexical index write: {len(indexed) / written:,.0f} chunks/s")
    print(f"peak {peak_mib():.0f} MiB; scratch {scratch}")


if __name__ == "__main__":
    main()
