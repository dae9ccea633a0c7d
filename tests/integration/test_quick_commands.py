"""Issue 15 part 4: `loom ingest` with nothing to do, `loom sources list` and `loom formats`
import only what they use (loom_dagster/api/quick.py). Guards, not timings: a fresh interpreter runs
the command and says which heavy modules it loaded. The answer is the full path's, line for
line; anything changed takes the full path.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from loom_dagster.api.quick import STATE

# What a command with nothing to run must not load (`loom ingest` needs DuckDB: the catalog).
# tantivy neither: the settings' embedder spec is plain data (settings/embedder.py) and imports
# nothing of search.
HEAVY = ("dagster", "httpx", "pyarrow", "numpy", "fsspec", "tantivy", "loom_dagster.pipeline")
ALSO = ("duckdb",)  # `loom formats` reads no catalog

PROBE = """
import contextlib, io, json, sys
from loom_dagster import cli
out = io.StringIO()
with contextlib.redirect_stdout(out):
    status = cli.main(sys.argv[1:])
heavy = sorted({n.split(".")[0] for n in sys.modules if n.split(".")[0] in %r}
               | ({"loom_dagster.pipeline"} & set(sys.modules)))
print(json.dumps([status, heavy, out.getvalue()]))
"""


def probe(*args: str) -> tuple[int, list[str], str]:
    done = subprocess.run(
        [sys.executable, "-c", PROBE % (HEAVY + ALSO,), *args],
        capture_output=True,
        text=True,
        env=dict(os.environ),
        timeout=600,
        check=False,
    )
    assert done.stdout, done.stderr
    status, loaded, out = json.loads(done.stdout.splitlines()[-1])
    # A command's `heavy`: what it loaded of HEAVY; `loaded` also says whether DuckDB was.
    probe.loaded = loaded  # type: ignore[attr-defined]
    return status, [name for name in loaded if name not in ALSO], out


def make_folder(root: Path) -> Path:
    for name, text in {
        "guide.md": "# Guide\n\nThe aardvark digs.\n",
        "notes/todo.txt": "Buy lamp oil\n",
        "bad-\udcff.txt": "a name that is not UTF-8\n",
    }.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(text.encode())
    return root


def test_an_ingest_with_nothing_to_do_imports_no_dagster_and_answers_as_the_full_one(
    loom_home: Path, tmp_path: Path
) -> None:
    folder = make_folder(tmp_path / "docs")
    status, heavy, first = probe("ingest", str(folder))
    assert status == 0 and "dagster" in heavy, first  # the first one runs: the full path
    assert (loom_home / STATE).exists()

    status, heavy, quick = probe("ingest", str(folder))
    assert status == 0
    assert heavy == []
    assert "unchanged  guide.md" in quick and "refused    bad-" in quick

    (loom_home / STATE).unlink()  # the same question, through the full path
    status, heavy, full = probe("ingest", str(folder))
    assert status == 0 and "dagster" in heavy
    assert quick == full

    # A changed file is something to run: the full path, which publishes it.
    (folder / "guide.md").write_text("# Guide\n\nThe aardvark digs deeper.\n")
    status, heavy, changed = probe("ingest", str(folder))
    assert status == 0 and "dagster" in heavy
    assert "published  guide.md" in changed

    # A registration that would change (another include) is the full path's too.
    status, heavy, narrowed = probe("ingest", str(folder), "--include", "*.md")
    assert status == 0 and "dagster" in heavy
    status, heavy, again = probe("ingest", str(folder), "--include", "*.md")
    assert status == 0 and heavy == [] and "unchanged  guide.md" in again


def test_an_index_that_moved_since_the_last_ingest_takes_the_full_path(
    loom_home: Path, tmp_path: Path
) -> None:
    folder = make_folder(tmp_path / "docs")
    assert probe("ingest", str(folder))[0] == 0
    # The search index removed (as an index of an older schema must be): the full path
    # rebuilds it from the catalog, which the quick one would not.
    for part in sorted((loom_home / "search").iterdir()):
        part.unlink()
    status, heavy, out = probe("ingest", str(folder))
    assert status == 0 and "dagster" in heavy, out
    status, heavy, _ = probe("search", "aardvark")
    assert status == 0


def test_sources_list_and_formats_import_only_what_they_use(
    loom_home: Path, tmp_path: Path
) -> None:
    folder = make_folder(tmp_path / "docs")
    assert probe("sources", "add", str(folder))[0] == 0
    status, heavy, listed = probe("sources", "list")
    assert status == 0 and heavy == [], listed
    assert "docs" in listed
    status, heavy, formats = probe("formats")
    assert status == 0, formats
    assert heavy == ["httpx"] and "duckdb" not in probe.loaded  # type: ignore[attr-defined]
    assert "markdown" in formats


def test_a_sql_statement_and_a_typed_query_import_no_dagster(
    loom_home: Path, tmp_path: Path
) -> None:
    """Issue 39: `loom sql` is a new process per call, held to the query's level (1 s at p95);
    Dagster's import alone took over half a second of it. A query reads the catalog and the
    snapshots, no code location."""
    status, _, _ = probe("sql", "SELECT 1")
    assert status == 1  # refused: it reads no dataset; the imports are what this test reads
    assert "dagster" not in probe.loaded  # type: ignore[attr-defined]

    plan = tmp_path / "plan.json"
    plan.write_text('{"dataset": "nothing", "select": ["a"]}')
    status, _, _ = probe("query", str(plan))
    assert status == 1  # no such dataset, answered from the catalog
    assert "duckdb" in probe.loaded  # type: ignore[attr-defined]
    assert "dagster" not in probe.loaded  # type: ignore[attr-defined]
