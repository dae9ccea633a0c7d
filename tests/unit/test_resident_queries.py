"""`loom sql` and `loom query` answered by the resident (issue 39): the socket protocol of the
`sql` and `query` ops with a real server on a real Unix socket in a thread of this process
(tests/unit/test_resident.py's `serving`, a recording answerer), and the resident's renderer
against the command in this process over a real catalog and snapshot (the processes themselves
are tests/integration/test_query_resident.py's)."""

from __future__ import annotations

import io
import json
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from loom_dagster import cli
from loom_dagster.cli import query as query_cli
from loom_dagster.cli.resident_server import (
    BUSY_WAIT,
    MAX_QUERIES,
    render_query,
    valid_fields,
)
from loom_dagster.cli.thread_output import captured
from loom_dagster.query.run import MAX_SECONDS_CEILING
from loom_dagster.search import resident
from loom_dagster.search.resident import MAX_REQUEST_BYTES, PROTOCOL, QUERY_OPS
from loom_dagster.settings import LoomSettings
from tests.unit.test_query_cli import home  # noqa: F401 - the fixture: a served dataset
from tests.unit.test_resident import FIELDS, client_for, raw_exchange, serving, wait_for

SQL: dict[str, Any] = {
    "text": 'SELECT 1 FROM "a.csv#t0"',
    "json": False,
    "max_rows": 10,
    "timeout": 30.0,
}
PLAN: dict[str, Any] = {"plan": '{"datasets": []}', "json": True, "max_rows": 10, "timeout": 30.0}


def request(op: str, fields: Any, key: str, **extra: Any) -> bytes:
    return json.dumps(
        {"protocol": PROTOCOL, "op": op, "key": key, "query": fields, **extra}
    ).encode()


# The protocol ---------------------------------------------------------------------------------


def test_a_query_and_a_plan_are_answered_with_what_the_resident_rendered(tmp_path: Path) -> None:
    with serving(tmp_path) as running:
        sql = client_for(tmp_path).query("sql", SQL)
        plan = client_for(tmp_path).query("query", PLAN)
        state = client_for(tmp_path).status()
    assert sql is not None and (sql.status, sql.stdout) == (0, f"sql rows for {SQL['text']}\n")
    assert plan is not None and plan.stdout == f"query rows for {PLAN['plan']}\n"
    assert running.queries == [("sql", SQL), ("query", PLAN)]
    assert state is not None and (state["answered"], state["queries"]) == (2, 2)


@pytest.mark.parametrize(
    ("op", "fields"),
    [
        ("sql", {**SQL, "max_rows": "10"}),  # a wrong type
        ("sql", {**SQL, "max_rows": True}),  # a bool is no row count
        ("sql", {**SQL, "timeout": 30}),  # argparse gives a float
        ("sql", {**SQL, "json": "yes"}),
        ("sql", {**SQL, "text": ["SELECT 1"]}),
        ("query", {**PLAN, "plan": {"datasets": []}}),  # the plan is sent as text
        ("sql", {k: v for k, v in SQL.items() if k != "timeout"}),  # a field missing
        ("sql", {**SQL, "extra": 1}),  # a field too many
        ("sql", PLAN),  # the other op's fields
        ("query", SQL),
        ("sql", None),
        ("sql", "SELECT 1"),
    ],
)
def test_a_malformed_query_request_is_refused(tmp_path: Path, op: str, fields: Any) -> None:
    with serving(tmp_path) as running:
        reply = raw_exchange(tmp_path, request(op, fields, client_for(tmp_path).key))
    assert reply == {"status": "refused", "reason": "bad_request"}
    assert running.queries == []


def test_a_query_request_with_a_field_beside_its_own_is_refused(tmp_path: Path) -> None:
    with serving(tmp_path) as running:
        key = client_for(tmp_path).key
        extra = raw_exchange(tmp_path, request("sql", SQL, key, search=FIELDS))
        missing = raw_exchange(
            tmp_path, json.dumps({"protocol": PROTOCOL, "op": "sql", "key": key}).encode()
        )
    assert extra == missing == {"status": "refused", "reason": "bad_request"}
    assert running.queries == []


def test_an_oversized_statement_or_plan_is_refused_and_never_sent(tmp_path: Path) -> None:
    huge = "x" * MAX_REQUEST_BYTES
    with serving(tmp_path) as running:
        key = client_for(tmp_path).key
        assert raw_exchange(tmp_path, request("sql", {**SQL, "text": huge}, key)) == {
            "status": "refused",
            "reason": "too_large",
        }
        # The client does not send one: the command answers in its own process.
        assert client_for(tmp_path).query("sql", {**SQL, "text": huge}) is None
        assert client_for(tmp_path).query("query", {**PLAN, "plan": huge}) is None
        assert client_for(tmp_path).query("sql", SQL) is not None
    assert running.queries == [("sql", SQL)]


def test_a_query_of_another_version_is_not_answered(tmp_path: Path) -> None:
    with serving(tmp_path, key="another checkout's key") as running:
        client = client_for(tmp_path)
        assert client.query("sql", SQL) is None
        assert client.outdated  # so the command replaces it after answering itself
    assert running.queries == []


def test_a_query_being_answered_does_not_hold_up_a_search(tmp_path: Path) -> None:
    """Issue 39: a search waits at most BUSY_WAIT for the search being answered; a query never
    takes that turn, so a search is answered (not told `busy`) while queries run."""
    stuck = threading.Event()
    with serving(tmp_path, query_hold=stuck) as running:
        first = threading.Thread(target=client_for(tmp_path).query, args=("sql", SQL))
        first.start()
        try:
            wait_for(lambda: len(running.queries) == 1, "the query to be answered")
            answer = client_for(tmp_path).search(FIELDS)
            assert answer is not None and answer.stdout == "hits for disk full\n"
        finally:
            stuck.set()
            first.join(30)


def test_queries_past_their_bound_are_told_busy_and_the_next_is_answered(tmp_path: Path) -> None:
    stuck = threading.Event()
    with serving(tmp_path, query_hold=stuck) as running:
        key = client_for(tmp_path).key
        held = [
            threading.Thread(target=client_for(tmp_path).query, args=("sql", SQL))
            for _ in range(MAX_QUERIES)
        ]
        try:
            for thread in held:
                thread.start()
            wait_for(lambda: len(running.queries) == MAX_QUERIES, "the queries to be answered")
            started = time.monotonic()
            assert raw_exchange(tmp_path, request("sql", SQL, key)) == {"status": "busy"}
            assert time.monotonic() - started < BUSY_WAIT + 5
            assert client_for(tmp_path).query("query", PLAN) is None  # answered in-process
            assert client_for(tmp_path).search(FIELDS) is not None  # searches go on
        finally:
            stuck.set()
            for thread in held:
                thread.join(30)
        assert client_for(tmp_path).query("sql", SQL) is not None
    assert len(running.queries) == MAX_QUERIES + 1


def test_the_client_waits_for_a_query_as_long_as_its_own_timeout(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An answer that takes longer than the client's usual wait, within the query's --timeout,
    is the resident's; a search is not waited for as long."""
    monkeypatch.setattr(resident, "ANSWER_TIMEOUT", 0.3)
    slow = threading.Event()
    with serving(tmp_path, query_hold=slow, hold=slow):
        releaser = threading.Timer(1.5, slow.set)
        releaser.start()
        try:
            client = client_for(tmp_path)
            client.answer_timeout = 0.3
            answer = client.query("sql", {**SQL, "timeout": 5.0})
        finally:
            releaser.join()
        assert answer is not None and answer.status == 0
        slow.clear()
        searching = client_for(tmp_path)
        searching.answer_timeout = 0.3
        try:
            assert searching.search(FIELDS) is None and searching.timed_out
        finally:
            slow.set()


def test_the_clients_top_timeout_is_the_querys() -> None:
    assert resident._QUERY_SECONDS_TOP == MAX_SECONDS_CEILING


# The rendering -------------------------------------------------------------------------------


GROUPED = {
    "datasets": [{"alias": "a", "dataset": "a.csv#t0"}],
    "groups": [{"alias": "a", "column": "host"}],
    "aggregates": [{"fn": "sum", "alias": "a", "column": "n"}, {"fn": "count"}],
}
COMMANDS = [
    ["sql", 'SELECT host, sum(n) AS total FROM "a.csv#t0" GROUP BY host ORDER BY host'],
    ["sql", 'SELECT * FROM "a.csv#t0"', "--json"],
    ["sql", "SELECT FROM WHERE"],  # invalid SQL
    ["sql", "DELETE FROM t"],
    ["sql", 'SELECT * FROM "nope.csv#t0"'],  # an unknown dataset
    ["sql", 'SELECT * FROM "a.csv#t0"', "--max-rows", "1"],  # a ceiling past
    ["sql", 'SELECT * FROM "a.csv#t0"', "--max-rows", "0"],  # an invalid ceiling
    ["sql", 'SELECT * FROM "a.csv#t0"', "--timeout", "nan"],
    ["sql", 'SELECT * FROM "a.csv#t0"', "--timeout", "inf"],
    ["sql", "SELECT '\udcff' FROM \"a.csv#t0\""],  # not UTF-8 on the command line
    ["query", json.dumps(GROUPED)],
    ["query", json.dumps(GROUPED), "--json"],
    ["query", "{not json"],
    ["query", json.dumps({"datasets": [{"alias": "a", "dataset": "zz"}]})],
]


def in_process(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    if argv[0] == "query":  # the plan from stdin, as the resident is sent its text
        argv = ["query", "-", *argv[2:]]
    status = cli.main(argv)
    out, err = capsys.readouterr()
    return status, out, err


@pytest.mark.usefixtures("home")
@pytest.mark.parametrize("argv", COMMANDS, ids=range(len(COMMANDS)))
def test_the_resident_renders_as_the_command_in_its_own_process(
    argv: list[str], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO(argv[1]))
    want = in_process(argv, capsys)
    parsed = cli._parser().parse_args(argv)
    op = argv[0]
    fields = {"json": parsed.json, "max_rows": parsed.max_rows, "timeout": parsed.timeout}
    fields["text" if op == "sql" else "plan"] = argv[1]
    # Through JSON both ways, as the socket carries it.
    reply = json.loads(json.dumps(render_query(op, json.loads(json.dumps(fields)))))
    assert (reply["exit"], reply["stdout"], reply["stderr"]) == want
    assert capsys.readouterr() == ("", "")  # nothing reached the process's own streams
    assert want[0] == 0 or want[2].startswith("loom: ")


@pytest.mark.usefixtures("home")
def test_a_busy_catalog_is_said_by_the_resident_as_by_the_command(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another process holds the catalog file (a publish): `catalog_busy` both ways."""
    monkeypatch.setattr("loom_dagster.query.catalog._ATTEMPTS", 2)  # not 6 s of retries
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD_CATALOG, str(LoomSettings.from_env().catalog_path)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "holding\n"
        argv = ["sql", 'SELECT * FROM "a.csv#t0"']
        want = in_process(argv, capsys)
        fields = {"text": argv[1], "json": False, "max_rows": 10_000, "timeout": 30.0}
        reply = render_query("sql", fields)
    finally:
        holder.communicate("", timeout=30)
    assert want[0] == 1 and want[2].startswith("loom: catalog_busy: the catalog is busy: ")
    assert (reply["exit"], reply["stdout"], reply["stderr"]) == want


HOLD_CATALOG = """
import sys, duckdb
con = duckdb.connect(sys.argv[1])
print("holding", flush=True)
sys.stdin.read()
"""


def test_a_query_and_a_search_render_at_once_each_into_its_own_answer() -> None:
    """Two threads printing at once each get only their own lines (redirect_stdout would mix
    them: it swaps the stream of every thread)."""
    both = threading.Barrier(2)
    got: dict[str, tuple[str, str]] = {}

    def speak(name: str) -> None:
        with captured() as (out, err):
            for n in range(200):
                print(f"{name} {n}")
                if n in (100, 101):  # both inside, each printing a line, at once
                    both.wait(30)
                print(f"{name} err", file=sys.stderr)
        got[name] = (out.getvalue(), err.getvalue())

    threads = [threading.Thread(target=speak, args=(name,)) for name in ("query", "search")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    for name in ("query", "search"):
        out, err = got[name]
        assert out == "".join(f"{name} {n}\n" for n in range(200))
        assert err == f"{name} err\n" * 200


def test_a_plan_the_client_cannot_read_is_said_as_without_a_resident(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "missing.json"
    argv = ["query", str(missing), "--timeout", "-1"]  # the ceiling is said first
    assert cli.main(argv) == 2
    assert capsys.readouterr().err == (
        "loom: invalid_ceiling: the time limit must be above 0 and at most 3,600 s, not -1.0\n"
    )
    assert cli.main(["query", str(missing)]) == 1
    assert capsys.readouterr().err.startswith(
        f"loom: invalid_plan: cannot read the plan {missing}: [Errno 2]"
    )


def test_the_fields_the_command_sends_are_those_the_resident_accepts() -> None:
    for argv, op in (
        (["sql", "SELECT 1", "--timeout", "5", "--max-rows", "3"], "sql"),
        (["query", "-", "--json"], "query"),
    ):
        parsed = cli._parser().parse_args(argv)
        said = {"text": parsed.text} if op == "sql" else {"plan": "{}"}
        assert valid_fields({**said, **query_cli._ceiling_fields(parsed)}, QUERY_OPS[op])
