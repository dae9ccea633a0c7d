"""The folder sensor's scan at 100,000 files: the polling scan (stat every file, nothing changed)
beside a journal tick (read the watcher's journal after a cursor, look at the one changed path),
in the same run, plus the catalog's read of the folder's known files that both do.

The folder is made once under `--folder` (tiny Markdown files in folders of 1,000; reused when
there), its known states from one scan that hashes them all (what the catalog would hold after
they were published), written to a catalog made for the bench (`--folder`/catalog.duckdb) with
the real catalog schema, so `known_files` reads 100,000 rows as the sensor does.

    .venv/bin/python bench/folder_tick.py --folder ~/bench-tick-100k --files 100000
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from loom_dagster.sources import FileState, Source, scan  # noqa: E402
from loom_dagster.sources.journal import Change, JournalWriter, end_of, read_after  # noqa: E402
from loom_dagster.sources.settling import Settle  # noqa: E402


def make_folder(root: Path, files: int) -> None:
    marker = root / ".made"
    if marker.exists() and int(marker.read_text()) == files:
        return
    for n in range(files):
        folder = root / f"d{n // 1000:03}"
        if n % 1000 == 0:
            folder.mkdir(parents=True, exist_ok=True)
        (folder / f"n{n:06}.md").write_text(f"# Note {n}\n\nword{n}\n")
    past = time.time() - 3600
    for path in root.rglob("*.md"):
        os.utime(path, (past, past))
    marker.write_text(str(files))


def timed(runs: int, work: object) -> list[float]:
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        work()  # type: ignore[operator]
        samples.append(time.perf_counter() - start)
    return samples


def line(label: str, samples: list[float]) -> str:
    return (
        f"{label:<44} median {statistics.median(samples) * 1000:9.1f} ms"
        f"  max {max(samples) * 1000:9.1f} ms"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--folder", type=Path, required=True)
    parser.add_argument("--files", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    root = args.folder / "docs"
    made = time.perf_counter()
    make_folder(root, args.files)
    print(f"folder of {args.files} files ready in {time.perf_counter() - made:.1f} s")
    source = Source("docs", str(root))
    changed = root / "d000" / "n000001.md"
    changed.write_text("# Note 1\n\nword1\n")  # as made (a run stopped early changed it)
    os.utime(changed, (time.time() - 3600, time.time() - 3600))
    first = scan(source, {})
    known = {
        r.path: FileState(r.size, r.mtime_ns, r.sha256, r.device, r.inode, r.options, r.key)
        for r in first.new
    }
    assert len(known) == args.files, len(known)

    home = args.folder / "home"
    writer = JournalWriter(home, "bench")
    changed.write_text("# Note 1\n\nword1 changed\n")
    os.utime(changed, (time.time() - 60, time.time() - 60))  # settled: both kinds take it
    start = end_of(home, "bench")
    writer.append([Change(str(changed), True, time.time_ns())])

    def polling() -> None:
        result = scan(source, known, settle_s=2.0)
        assert len(result.new) == 1

    def journal() -> None:
        read = read_after(home, start)
        assert read is not None
        changes, _ = read
        paths = {os.path.relpath(c.path, root) for c in changes}
        closed = {os.path.relpath(c.path, root): c.time_ns for c in changes if c.closed}
        looked = {p: known[p] for p in paths if p in known}  # known_files(under=paths)
        result = scan(source, looked, only=paths, settle=Settle({}, closed))
        assert len(result.new) == 1

    print(f"nproc {os.cpu_count()}, load {os.getloadavg()[0]:.1f}; {args.files} files, one changed")
    print(line("polling scan (walk and stat every file)", timed(args.runs, polling)))
    print(line("journal tick (read journal, look at 1 path)", timed(args.runs, journal)))
    catalog_read(args, known, "d000/n000001.md")
    changed.write_text("# Note 1\n\nword1\n")


def catalog_read(args: argparse.Namespace, known: dict[str, FileState], changed: str) -> None:
    """`catalog.known_files` for the folder (the polling scan's), and for the changed path only
    (a journal tick's), on a catalog holding the folder's revisions."""
    from loom_dagster import catalog
    from loom_dagster.sources import Revision, document_id

    path = args.folder / "catalog.duckdb"
    import duckdb

    fresh = not path.exists()
    con = duckdb.connect(str(path))
    try:
        if fresh:
            catalog.ensure_schema(con)
            catalog.register_revisions(
                con,
                [
                    Revision(
                        key=state.key or "",
                        document_id=document_id("docs", relative),
                        source="docs",
                        path=relative,
                        size=state.size,
                        mtime_ns=state.mtime_ns,
                        sha256=state.sha256,
                        device=state.device,
                        inode=state.inode,
                        options=state.options,
                    )
                    for relative, state in known.items()
                ],
            )
        print(
            line(
                "catalog.known_files, whole folder (polling)",
                timed(args.runs, lambda: catalog.known_files(con, "docs")),
            )
        )
        print(
            line(
                "catalog.known_files, the changed path (journal)",
                timed(args.runs, lambda: catalog.known_files(con, "docs", under=[changed])),
            )
        )
    finally:
        con.close()


if __name__ == "__main__":
    main()
