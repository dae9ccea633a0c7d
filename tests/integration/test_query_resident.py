"""`loom sql` and `loom query` answered by the home's resident process (issue 39), as a user runs
them: real `loom` processes, a real resident process, datasets served from a real catalog and
object store (tests/support/query_datasets.py; no extractor needed).

Every test starts the resident through a first command and stops it (and waits for it to be
gone) at the end; the rest of the suite runs with LOOM_SEARCH_RESIDENT=off (tests/conftest.py)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path

import pytest

from loom_dagster.datasets.model import ColumnType, DatasetColumn, DatasetSchema
from loom_dagster.objectstore import ObjectStore
from loom_dagster.search.resident import Place, ResidentClient
from loom_dagster.settings import LoomSettings
from tests.integration import test_search_resident as search_resident
from tests.integration.loom_command import LOOM, alive
from tests.integration.test_search_resident import wait_for
from tests.support.query_datasets import parquet_bytes, serve_in_catalog

SCHEMA = DatasetSchema(
    (DatasetColumn("host", ColumnType.TEXT), DatasetColumn("n", ColumnType.DECIMAL))
)
ROWS = [("a", Decimal("1.5")), ("b\x1b[2J", Decimal(2)), ("a", Decimal("0.25"))]
# Enough rows that a three-way cross join runs past a short --timeout.
WIDE_ROWS = [(f"h{i}", Decimal(i)) for i in range(2000)]
SLOW = 'SELECT sum(a.n + b.n + c.n) FROM "wide.csv#t0" a, "wide.csv#t0" b, "wide.csv#t0" c'
PLAN = {
    "datasets": [{"alias": "a", "dataset": "a.csv#t0"}],
    "groups": [{"alias": "a", "column": "host"}],
    "aggregates": [{"fn": "sum", "alias": "a", "column": "n"}, {"fn": "count"}],
}

Result = tuple[int, str, str]


def publish(path: str, rows: list[tuple[str, Decimal]], sha: str) -> None:
    settings = LoomSettings.from_env()
    settings.prepare()
    serve_in_catalog(
        settings.catalog_path,
        ObjectStore(settings.object_store_url),
        parquet_bytes(SCHEMA, rows),
        SCHEMA,
        source="docs",
        path=path,
        sha=sha,
        snapshot=f"s-{path}",
        rows_stored=len(rows),
        rows_rejected=0,
    )


class Resident(search_resident.Resident):
    """The home's resident as these tests see it (test_search_resident.py's), started by a first
    `loom sql`; a command runs with its stdin."""

    def queries(self) -> int:
        state = self.state()
        assert state is not None, "no resident answers"
        return int(state["queries"])

    def start(self) -> int:
        """A first query (in-process), then the resident it started; its pid."""
        result = self.run("sql", 'SELECT host FROM "a.csv#t0"')
        assert result[0] == 0, result
        state = wait_for(self.state, "the resident to answer")
        return int(state["pid"])

    def run(
        self, *args: str, stdin: str | None = None, env: dict[str, str] | None = None
    ) -> Result:
        done = subprocess.run(
            [*LOOM, *args],
            input=stdin,
            capture_output=True,
            text=True,
            timeout=180,
            env=env or self.env,
        )
        return (done.returncode, done.stdout, done.stderr)

    def in_process(self, *args: str, stdin: str | None = None) -> Result:
        return self.run(*args, stdin=stdin, env={**self.env, "LOOM_SEARCH_RESIDENT": "off"})


@pytest.fixture
def resident(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Resident]:
    monkeypatch.setenv("LOOM_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("LOOM_OBJECT_STORE_URL", raising=False)
    monkeypatch.setenv("LOOM_EMBEDDER", "ngram")  # the resident loads the search too: cheaply
    publish("a.csv", ROWS, "1" * 64)
    with search_resident.stopped_after(Resident(search_resident.resident_env())) as running:
        yield running


def test_the_resident_answers_byte_for_byte_as_the_commands_in_their_own_process(
    resident: Resident, tmp_path: Path
) -> None:
    """Twelve commands, each run in-process and through the resident: two dozen `loom`
    processes of about half a second each, so some 15 s."""
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps(PLAN))
    requests: list[tuple[tuple[str, ...], str | None]] = [
        (("sql", 'SELECT host, sum(n) AS total FROM "a.csv#t0" GROUP BY host ORDER BY host'), None),
        (("sql", 'SELECT * FROM "a.csv#t0"', "--json"), None),
        (("sql", "SELECT FROM WHERE"), None),  # invalid SQL
        (("sql", 'SELECT * FROM "nope.csv#t0"'), None),  # an unknown dataset
        (("sql", 'SELECT * FROM "a.csv#t0"', "--max-rows", "1"), None),  # a ceiling past
        (("sql", 'SELECT * FROM "a.csv#t0"', "--timeout", "nan"), None),  # an invalid one
        (("query", str(plan)), None),
        (("query", str(plan), "--json"), None),
        (("query", "-"), json.dumps(PLAN)),  # the plan from stdin
        (("query", "-"), "{not json"),
        (("query", "-", "--json"), json.dumps({"datasets": [{"alias": "a", "dataset": "zz"}]})),
    ]
    resident.start()
    expected = [resident.in_process(*args, stdin=stdin) for args, stdin in requests]
    before = resident.queries()
    served = [resident.run(*args, stdin=stdin) for args, stdin in requests]
    assert resident.queries() == before + len(requests)  # each was the resident's answer
    for (args, _), want, got in zip(requests, expected, served, strict=True):
        assert got == want, args
    assert [status for status, _, _ in served] == [0, 0, 1, 1, 1, 2, 0, 0, 0, 1, 1]
    assert (
        served[3][2]
        == "loom: unknown_dataset: no dataset 'nope.csv#t0' is served (by id or name)\n"
    )


def test_a_dataset_published_after_it_started_is_in_the_next_answer(resident: Resident) -> None:
    pid = resident.start()
    statement = 'SELECT host, n FROM "late.csv#t0" ORDER BY n'
    before = resident.queries()
    assert resident.run("sql", statement) == (
        1,
        "",
        "loom: unknown_dataset: no dataset 'late.csv#t0' is served (by id or name)\n",
    )
    publish("late.csv", [("x", Decimal(7)), ("y", Decimal(8))], "2" * 64)
    answer = resident.run("sql", statement)
    assert answer[0] == 0 and answer[1].splitlines()[2:4] == [
        "x     7.000000000",
        "y     8.000000000",
    ], answer
    assert resident.queries() == before + 2  # both were the resident's answers
    assert answer == resident.in_process("sql", statement)
    state = resident.state()
    assert state is not None and state["pid"] == pid  # the same process all along


def test_the_resident_holds_a_query_to_its_own_timeout(resident: Resident) -> None:
    """A query past its --timeout in the resident fails `time_limit` there, after 1 s."""
    publish("wide.csv", WIDE_ROWS, "3" * 64)
    resident.start()
    before = resident.queries()
    assert resident.run("sql", SLOW, "--timeout", "1") == (
        1,
        "",
        "loom: time_limit: the query ran past its time limit (1 s)\n",
    )
    assert resident.queries() == before + 1  # the resident's answer


def test_a_resident_killed_while_answering_a_query_leaves_the_command_to_answer_it(
    resident: Resident,
) -> None:
    """The killed resident's query ran up to 2 s, then the command's own, 2 s: some 5 s."""
    publish("wide.csv", WIDE_ROWS, "3" * 64)
    pid = resident.start()
    command = subprocess.Popen(
        [*LOOM, "sql", SLOW, "--timeout", "2"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=resident.env,
    )
    try:
        wait_for(
            lambda: (resident.state() or {}).get("answering") == 1, "the query in the resident"
        )
        os.kill(pid, signal.SIGKILL)
        out, err = command.communicate(timeout=180)
    finally:
        if command.poll() is None:
            command.kill()
            command.wait()
    assert (command.returncode, out, err) == (
        1,
        "",
        "loom: time_limit: the query ran past its time limit (2 s)\n",
    )
    assert not alive(pid)
    assert os.path.exists(Place(ResidentClient(resident.env).place.home).socket)  # stale


def test_off_neither_asks_nor_starts_for_queries(resident: Resident) -> None:
    off = {**resident.env, "LOOM_SEARCH_RESIDENT": "off"}
    statement = 'SELECT host FROM "a.csv#t0"'
    assert resident.run("sql", statement, env=off)[0] == 0
    assert not os.path.exists(Place(ResidentClient(resident.env).place.home).folder)
    assert resident.state() is None

    resident.start()
    before = resident.queries()
    assert resident.run("sql", statement, env=off)[0] == 0
    assert resident.queries() == before  # a running one is not asked either


def test_a_served_query_imports_no_query_or_dagster_module(resident: Resident) -> None:
    resident.start()
    before = resident.queries()
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "loom_dagster.cli", "sql", "SELECT 1"],
        capture_output=True,
        text=True,
        env=resident.env,
        timeout=120,
        check=False,
    )
    assert done.returncode == 1 and resident.queries() == before + 1
    imported = {
        line.split("|")[-1].strip()
        for line in done.stderr.splitlines()
        if line.startswith("import time:")
    }
    assert "loom_dagster.search.resident" in imported
    heavy = ("dagster", "duckdb", "pyarrow", "sqlglot", "numpy", "loom_dagster.query")
    assert sorted(n for n in imported if n.split(".")[0] in heavy or n.startswith(heavy)) == []
