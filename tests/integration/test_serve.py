"""`loom serve` as a real process, asked through the mcp SDK's own client (ClientSession over
stdio and over streamable HTTP) and through httpx for the JSON API, over a home that ingested
examples/docs (source `docs`) and a second folder (source `secret`) for the scope tests."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx
import pytest
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from loom_dagster.extractor.local import RunningExtractor
from loom_dagster.extractor.settings import ENV_TOKEN, ENV_URL
from loom_dagster.serve import bounds
from loom_dagster.serve.tokens import add_token
from tests.integration.loom_command import LOOM, loom

EXAMPLES = Path(__file__).resolve().parents[2] / "examples/docs"
SECRET_TEXT = "Zanzibar quarterly margin is 41 percent"
BIG_ROWS = 1200
BIG_TEXT = 1800  # characters of a note: the table's text and 1000 rows pass MAX_RESULT_BYTES
TOOLS = {
    "search",
    "get_passage",
    "get_document",
    "list_datasets",
    "describe_dataset",
    "query",
    "sql",
    "formats",
}


class Home:
    def __init__(self, root: Path, env: dict[str, str]) -> None:
        self.root = root
        self.env = env
        self.tokens = root / "tokens.json"
        self.token_docs = add_token(self.tokens, "docs-team", ["docs"])
        self.token_secret = add_token(self.tokens, "secret-team", ["secret"])
        self.token_all = add_token(self.tokens, "admin", ["*"])
        self.token_secret_big = add_token(self.tokens, "secret-and-big", ["secret", "big"])


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory, reference_service: RunningExtractor) -> Home:
    root = tmp_path_factory.mktemp("serve")
    env = {
        **os.environ,
        "LOOM_HOME": str(root / "home"),
        "DAGSTER_HOME": str(root / "home" / "dagster"),
        ENV_URL: reference_service.url,
        ENV_TOKEN: reference_service.token,
        "LOOM_EMBEDDER": "ngram",
        "LOOM_SEARCH_RESIDENT": "off",
    }
    env.pop("LOOM_OBJECT_STORE_URL", None)
    docs = root / "docs"
    shutil.copytree(EXAMPLES, docs)
    secret = root / "secret"
    secret.mkdir()
    (secret / "finance.md").write_text(f"# Finance\n\n{SECRET_TEXT}. Disk full alerts too.\n")
    (secret / "costs.csv").write_text("item,cost\ndisk,10\n")
    # `big`: a generated table wide enough that 1000 of its rows pass the answer's bound and
    # a cross join of it runs past any per-call time limit; its costs.csv shares secret's name.
    big = root / "big"
    big.mkdir()
    filler = "y" * BIG_TEXT
    (big / "wide.csv").write_text(
        "n,note\n" + "".join(f"{n},{filler}{n}\n" for n in range(BIG_ROWS))
    )
    (big / "costs.csv").write_text("item,cost\ntape,3\n")
    for folder, name in ((docs, "docs"), (secret, "secret"), (big, "big")):
        done = loom("ingest", str(folder), "--name", name, env=env, timeout=300)
        assert "published" in done.stdout, done.stderr
    return Home(root, env)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture(scope="module")
def server(home: Home) -> Iterator[str]:
    port = free_port()
    process = subprocess.Popen(
        [*LOOM, "serve", "--http", "--port", str(port), "--token-file", str(home.tokens)],
        env=home.env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while True:
        try:
            httpx.get(f"{url}/v1/formats", timeout=1)
            break
        except httpx.HTTPError:
            assert process.poll() is None, process.stderr.read() if process.stderr else ""
            assert time.monotonic() < deadline, "loom serve --http did not start"
            time.sleep(0.2)
    yield url
    process.terminate()
    try:
        process.wait(10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def api(url: str, token: str | None, method: str, path: str, body: Any = None) -> httpx.Response:
    headers = {} if token is None else {"Authorization": f"Bearer {token}"}
    return httpx.request(method, f"{url}{path}", json=body, headers=headers, timeout=30)


async def _http_session(url: str, token: str, calls: list[tuple[str, dict[str, Any]]]) -> list[Any]:
    import httpx2

    async with httpx2.AsyncClient(
        headers={"Authorization": f"Bearer {token}"}, timeout=30
    ) as client:
        async with streamable_http_client(f"{url}/mcp", http_client=client) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                results: list[Any] = [await session.list_tools()]
                for name, arguments in calls:
                    results.append(await session.call_tool(name, arguments))
                return results


def over_http(url: str, token: str, calls: list[tuple[str, dict[str, Any]]]) -> list[Any]:
    return asyncio.run(_http_session(url, token, calls))


async def _stdio_session(
    env: dict[str, str], args: list[str], calls: list[tuple[str, dict[str, Any]]]
) -> list[Any]:
    params = StdioServerParameters(command=LOOM[0], args=[*LOOM[1:], "serve", *args], env=env)
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            results: list[Any] = [await session.list_tools()]
            for name, arguments in calls:
                results.append(await session.call_tool(name, arguments))
            return results


def over_stdio(home: Home, calls: list[tuple[str, dict[str, Any]]], *args: str) -> list[Any]:
    return asyncio.run(_stdio_session(home.env, list(args), calls))


def structured(result: Any) -> dict[str, Any]:
    assert not result.is_error, result.content[0].text
    value: dict[str, Any] = result.structured_content
    return value


def error_text(result: Any) -> str:
    assert result.is_error
    text: str = result.content[0].text
    return text


def lines_of(path: Path, locator: dict[str, Any]) -> str:
    lines = path.read_text().splitlines()
    return "\n".join(lines[locator["line_start"] - 1 : locator["line_end"]])


# Every tool's happy path, over stdio -------------------------------------------------------


def test_every_tool_over_stdio_answers_with_citations_that_open_the_right_lines(home: Home) -> None:
    results = over_stdio(
        home,
        [
            ("search", {"query": "E-DISK-042", "k": 3}),
            (
                "search",
                {"query": "secondary acknowledged", "k": 3, "filters": {"formats": ["pdf"]}},
            ),
            ("list_datasets", {}),
            ("sql", {"statement": 'SELECT host FROM "runbooks/disk-usage.xlsx#Disk usage"'}),
            ("formats", {}),
            ("get_document", {"document": "docs:runbooks/disk-full.md"}),
        ],
        "--source",
        "docs",
    )
    assert {tool.name for tool in results[0].tools} == TOOLS
    for tool in results[0].tools:
        assert tool.description and tool.input_schema["type"] == "object"
    first = structured(results[1])["hits"][0]
    cite = first["citation"]
    assert (cite["source"], cite["path"]) == ("docs", "runbooks/disk-full.md")
    # The locator opens the lines the passage was cut from.
    assert "E-DISK-042" in lines_of(EXAMPLES / "runbooks/disk-full.md", cite["locator"])
    # ...and holds its words: the passage is the blocks' text, inline markup (`code`) left out.
    cited = lines_of(EXAMPLES / "runbooks/disk-full.md", cite["locator"])
    assert first["text"].split() == cited.replace("`", "").split()
    pdf = structured(results[2])["hits"][0]["citation"]
    assert pdf["path"] == "on-call-handbook.pdf" and pdf["locator"]["page_start"] == 2
    datasets = structured(results[3])["datasets"]
    assert [d["name"] for d in datasets] == ["runbooks/disk-usage.xlsx#Disk usage"]
    rows = structured(results[4])
    assert [row[0] for row in rows["rows"]][:1] == ["invoice-worker-1"]
    assert rows["receipt"]["complete"] is True
    assert structured(results[5])["formats"]["markdown"] == "available"
    document = structured(results[6])
    assert document["status"] == "live" and document["outline"][0]["section_path"][-1] == "Symptom"
    # The stdio server started with --source docs never reads the secret source.
    assert all(h["citation"]["source"] == "docs" for h in structured(results[1])["hits"])


def test_passage_document_dataset_and_query_over_streamable_http(home: Home, server: str) -> None:
    hit = structured(over_http(server, home.token_docs, [("search", {"query": "E-DISK-042"})])[1])[
        "hits"
    ][0]
    plan = {
        "datasets": [{"alias": "d", "dataset": "runbooks/disk-usage.xlsx#Disk usage"}],
        "columns": [{"alias": "d", "column": "host"}],
    }
    results = over_http(
        server,
        home.token_docs,
        [
            ("get_passage", {"id": hit["passage_id"]}),
            ("get_document", {"document": hit["citation"]["revision"]}),
            ("describe_dataset", {"name": "runbooks/disk-usage.xlsx#Disk usage"}),
            ("query", {"plan": plan}),
        ],
    )
    assert {tool.name for tool in results[0].tools} == TOOLS
    passage = structured(results[1])
    assert passage["text"] == hit["text"] and passage["next"]["passage_id"].endswith("#1")
    assert structured(results[2])["path"] == "runbooks/disk-full.md"
    assert structured(results[3])["columns"][0]["name"] == "host"
    answer = structured(results[4])
    assert [row[-1] for row in answer["rows"]][:1] == ["invoice-worker-1"]
    assert answer["receipt"]["complete"] is True


# The JSON API ------------------------------------------------------------------------------


def test_json_api_answers_search_and_openapi(home: Home, server: str) -> None:
    found = api(server, home.token_docs, "POST", "/v1/search", {"query": "E-DISK-042", "k": 2})
    assert found.status_code == 200
    hit = found.json()["hits"][0]
    assert hit["citation"]["path"] == "runbooks/disk-full.md"
    # A passage id holds '#': it goes into the URL percent-encoded.
    passage = api(
        server, home.token_docs, "GET", f"/v1/passages/{quote(hit['passage_id'], safe='')}"
    )
    assert passage.json()["text"] == hit["text"]
    document = api(server, home.token_docs, "GET", "/v1/documents/docs:runbooks/disk-full.md")
    assert document.json()["live_revision"] == hit["citation"]["revision"]
    assert api(server, home.token_docs, "GET", "/v1/datasets").json()["datasets"]
    sql = api(
        server,
        home.token_docs,
        "POST",
        "/v1/sql",
        {"statement": 'SELECT count(*) AS n FROM "runbooks/disk-usage.xlsx#Disk usage"'},
    )
    assert sql.json()["rows"] == [[3]]
    spec = api(server, home.token_docs, "GET", "/v1/openapi.json").json()
    assert "/v1/search" in spec["paths"]


# Tokens and scope --------------------------------------------------------------------------


@pytest.mark.parametrize("token", [None, "not-a-token", "Basic abc", "Bearer"])
def test_no_or_a_wrong_token_is_401_on_every_route(
    home: Home, server: str, token: str | None
) -> None:
    for method, path, body in (
        ("POST", "/v1/search", {"query": "disk"}),
        ("GET", "/v1/datasets", None),
        ("GET", "/v1/openapi.json", None),
        ("POST", "/mcp", {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}),
    ):
        headers = (
            {} if token is None else {"Authorization": token if " " in token else f"Bearer {token}"}
        )
        answer = httpx.request(method, f"{server}{path}", json=body, headers=headers, timeout=10)
        assert answer.status_code == 401, (path, answer.text)
        assert answer.json() == {
            "error": {"code": "unauthorized", "message": "a valid bearer token is required"}
        }


def test_a_token_of_scope_A_never_sees_B(home: Home, server: str) -> None:
    docs, secret = home.token_docs, home.token_secret
    # search: B's passages never come, even for B's own words; a B filter is an unknown source.
    hits = api(server, docs, "POST", "/v1/search", {"query": SECRET_TEXT, "k": 50}).json()["hits"]
    assert all(h["citation"]["source"] == "docs" for h in hits)
    assert not any("Zanzibar" in h["text"] for h in hits)
    mine = api(server, secret, "POST", "/v1/search", {"query": "Zanzibar"}).json()["hits"]
    assert mine and mine[0]["citation"]["source"] == "secret"
    unknown_source = {"error": {"code": "unknown_source", "message": "unknown source 'secret'"}}
    assert (
        api(
            server,
            docs,
            "POST",
            "/v1/search",
            {"query": "disk", "filters": {"sources": ["secret"]}},
        ).json()
        == unknown_source
    )
    # ... said exactly as of a source that does not exist.
    assert (
        api(
            server,
            docs,
            "POST",
            "/v1/search",
            {"query": "disk", "filters": {"sources": ["nowhere"]}},
        ).json()["error"]["code"]
        == "unknown_source"
    )
    # passages and documents of B are unknown, as a made-up one is
    b_passage = mine[0]["passage_id"]
    answer = api(server, docs, "GET", f"/v1/passages/{quote(b_passage, safe='')}")
    assert answer.status_code == 404 and answer.json()["error"]["code"] == "unknown_passage"
    made_up = api(server, docs, "GET", f"/v1/passages/{quote(b_passage[:-1], safe='')}9")
    assert made_up.json()["error"]["message"].startswith("no passage has the id")
    for target in ("secret:finance.md", mine[0]["citation"]["revision"]):
        answer = api(server, docs, "GET", f"/v1/documents/{target}")
        assert answer.status_code == 404 and answer.json()["error"]["code"] == "unknown_document"
    # datasets: B's are not listed, described, queried or counted
    names = [d["source"] for d in api(server, docs, "GET", "/v1/datasets").json()["datasets"]]
    assert names and set(names) == {"docs"}
    b_sets = api(server, secret, "GET", "/v1/datasets").json()["datasets"]
    assert [d["source"] for d in b_sets] == ["secret"]
    b_name = b_sets[0]["name"]
    for path in (f"/v1/datasets/{b_name}", f"/v1/datasets/{b_sets[0]['dataset_id']}"):
        answer = api(server, docs, "GET", path)
        assert answer.status_code == 404 and answer.json()["error"]["code"] == "unknown_dataset"
    sql = api(server, docs, "POST", "/v1/sql", {"statement": f'SELECT count(*) FROM "{b_name}"'})
    assert sql.status_code == 404 and sql.json()["error"]["code"] == "unknown_dataset"
    assert "Zanzibar" not in sql.text and "10" not in sql.text
    # MCP over HTTP: the same scope
    results = over_http(
        server,
        docs,
        [
            ("search", {"query": "Zanzibar", "k": 50}),
            ("get_passage", {"id": b_passage}),
            ("list_datasets", {}),
        ],
    )
    assert all(h["citation"]["source"] == "docs" for h in structured(results[1])["hits"])
    assert "unknown_passage" in error_text(results[2])
    assert {d["source"] for d in structured(results[3])["datasets"]} == {"docs"}


# Bad input: one typed error each, never a traceback ---------------------------------------


BAD_SEARCHES = [
    ({"query": "disk", "k": 0}, "bad_k", "k must be an integer from 1 to 50"),
    ({"query": "disk", "k": 51}, "bad_k", "k must be an integer from 1 to 50"),
    ({"query": "disk", "k": "5"}, "bad_k", "k must be an integer from 1 to 50"),
    ({"query": "disk", "k": True}, "bad_k", "k must be an integer from 1 to 50"),
    ({"query": 5}, "bad_request", "query must be a string"),
    ({"query": "x" * 2001}, "query_too_long", "query is longer than 2000 characters"),
    ({"query": "a\x00b"}, "bad_request", "query holds a NUL character"),
    ({"query": "!!! ---"}, "empty_query", "the query '!!! ---' has no words to search for"),
    ({"query": "disk", "filters": []}, "bad_filter", "filters must be an object"),
    (
        {"query": "disk", "filters": {"colour": ["red"]}},
        "bad_filter",
        "unknown filter 'colour'; filters are formats, sources, block_types, tags, path_prefix",
    ),
    (
        {"query": "disk", "filters": {"formats": "pdf"}},
        "bad_filter",
        "filters.formats must be a list of strings",
    ),
    ({"query": "disk", "filters": {"formats": ["exe"]}}, "unknown_format", None),
    ({"query": "disk", "filters": {"tags": ["nosuchtag"]}}, "unknown_tag", None),
    (
        {"query": "disk", "filters": {"sources": ["x"] * 33}},
        "bad_filter",
        "filters.sources holds more than 32 values",
    ),
    ({"query": "disk", "extra": 1}, "bad_request", "unknown field 'extra'"),
    ({}, "bad_request", "the field 'query' is required"),
]


@pytest.mark.parametrize(("body", "code", "message"), BAD_SEARCHES)
def test_every_bad_search_is_one_typed_error(
    home: Home, server: str, body: dict[str, Any], code: str, message: str | None
) -> None:
    answer = api(server, home.token_docs, "POST", "/v1/search", body)
    assert answer.status_code == 400, answer.text
    error = answer.json()["error"]
    assert error["code"] == code
    if message is not None:
        assert error["message"] == message


def test_bad_input_over_mcp_is_the_same_typed_error(home: Home, server: str) -> None:
    # The SDK validates arguments against the tool's schema first (a k of "5" is read as 5).
    calls = [
        ("search", body)
        for body, _, _ in BAD_SEARCHES[:8]
        if not isinstance(body.get("k"), (str, bool))
    ]
    results = over_http(
        server,
        home.token_docs,
        [
            *calls,
            ("get_passage", {"id": "nothing#1"}),
            ("get_document", {"document": "docs:nothing.md"}),
            ("describe_dataset", {"name": "nothing"}),
            ("sql", {"statement": "DROP TABLE x"}),
            ("query", {"plan": {"bogus": 1}}),
        ],
    )
    texts = [error_text(result) for result in results[1:]]
    for text in texts:
        assert "Traceback" not in text
    codes = [
        text.split(": ")[1] if text.startswith("Error executing tool") else text for text in texts
    ]
    assert codes[-5:-2] == ["unknown_passage", "unknown_document", "unknown_dataset"]
    assert all(code for code in codes)


def test_malformed_bodies_and_oversized_requests(home: Home, server: str) -> None:
    headers = {"Authorization": f"Bearer {home.token_docs}", "Content-Type": "application/json"}
    bad_json = httpx.post(f"{server}/v1/search", content=b"{not json", headers=headers)
    assert bad_json.status_code == 400 and bad_json.json()["error"]["code"] == "bad_request"
    large = httpx.post(
        f"{server}/v1/search", content=b" " * (bounds.MAX_REQUEST_BYTES + 1), headers=headers
    )
    assert large.status_code == 413 and large.json()["error"]["code"] == "request_too_large"

    # a chunked body with no length is cut off at the bound as it streams
    def chunks() -> Iterator[bytes]:
        for _ in range(100):
            yield b" " * 4096

    streamed = httpx.post(f"{server}/v1/search", content=chunks(), headers=headers)
    assert streamed.status_code == 413
    big_mcp = httpx.post(
        f"{server}/mcp", content=b"x" * (bounds.MAX_REQUEST_BYTES + 1), headers=headers
    )
    assert big_mcp.status_code == 413


# Serving and publishing at once ------------------------------------------------------------


def test_a_publish_while_serving_is_searchable_without_restart(home: Home, server: str) -> None:
    folder = home.root / "docs"
    (folder / "fresh.md").write_text("# Fresh\n\nThe quokka migration finished on Tuesday.\n")
    before = api(server, home.token_docs, "POST", "/v1/search", {"query": "quokka"}).json()
    assert before["hits"] == []
    done = loom("ingest", str(folder), "--name", "docs", env=home.env, timeout=300)
    assert done.returncode == 0, done.stderr
    after = api(server, home.token_docs, "POST", "/v1/search", {"query": "quokka"}).json()
    assert after["hits"][0]["citation"]["path"] == "fresh.md"
    assert after["hits"][0]["citation"]["locator"]["line_start"] == 3


# Starting: loopback, token file -------------------------------------------------------------


def test_http_without_a_token_file_refuses_to_start_off_loopback_and_on(home: Home) -> None:
    for host in ("0.0.0.0", "127.0.0.1"):
        refused = loom(
            "serve", "--http", "--host", host, "--port", str(free_port()), env=home.env, timeout=60
        )
        assert refused.returncode == 1
        assert (
            "refusing to serve HTTP" in refused.stderr and "without --token-file" in refused.stderr
        )
    assert (
        "0.0.0.0, which is not loopback"
        in loom("serve", "--http", "--host", "0.0.0.0", env=home.env, timeout=60).stderr
    )


def test_a_token_file_others_can_read_refuses_to_start(home: Home) -> None:
    loose = home.root / "loose.json"
    loose.write_bytes(home.tokens.read_bytes())
    loose.chmod(0o644)
    refused = loom(
        "serve",
        "--http",
        "--token-file",
        str(loose),
        "--port",
        str(free_port()),
        env=home.env,
        timeout=60,
    )
    assert refused.returncode == 1 and "must be 0600" in refused.stderr
    assert json.loads(home.tokens.read_text())["tokens"][0]["sha256"]
    assert home.token_docs not in home.tokens.read_text()  # only hashes are stored


# Resources: the published documents -------------------------------------------------------


async def _resources(session: ClientSession, read: list[str]) -> tuple[list[Any], list[Any]]:
    listed = (await session.list_resources()).resources
    answers: list[Any] = []
    for uri in read:
        try:
            answers.append(await session.read_resource(uri))
        except Exception as error:  # the SDK raises the server's JSON-RPC error
            answers.append(error)
    return listed, answers


async def _http_resources(url: str, token: str, read: list[str]) -> tuple[list[Any], list[Any]]:
    import httpx2

    async with httpx2.AsyncClient(
        headers={"Authorization": f"Bearer {token}"}, timeout=30
    ) as client:
        async with streamable_http_client(f"{url}/mcp", http_client=client) as (r, w):
            async with ClientSession(r, w) as session:
                await session.initialize()
                return await _resources(session, read)


async def _stdio_resources(
    env: dict[str, str], args: list[str], read: list[str]
) -> tuple[list[Any], list[Any]]:
    params = StdioServerParameters(command=LOOM[0], args=[*LOOM[1:], "serve", *args], env=env)
    async with stdio_client(params) as (r, w):
        async with ClientSession(r, w) as session:
            await session.initialize()
            return await _resources(session, read)


DISK_FULL = "loom://docs/runbooks/disk-full.md"


def test_published_documents_are_resources_over_stdio(home: Home) -> None:
    listed, (found, missing) = asyncio.run(
        _stdio_resources(home.env, ["--source", "docs"], [DISK_FULL, "loom://docs/nothing.md"])
    )
    uris = {str(resource.uri) for resource in listed}
    assert DISK_FULL in uris and "loom://docs/on-call-handbook.pdf" in uris
    assert all(uri.startswith("loom://docs/") for uri in uris)  # started with --source docs
    text = found.contents[0].text
    assert "E-DISK-042" in text and found.contents[0].mime_type == "text/plain"
    assert found.contents[0].meta["loom"]["passages"] >= 1
    assert isinstance(missing, MCPError) and missing.error.data == {"code": "unknown_resource"}
    assert str(missing) == (
        "unknown_resource: no published document is 'loom://docs/nothing.md' (loom://SOURCE/PATH)"
    )


def test_resources_over_http_are_scoped_by_the_token(home: Home, server: str) -> None:
    secret_uri = "loom://secret/finance.md"
    listed, (mine, theirs) = asyncio.run(
        _http_resources(server, home.token_docs, [DISK_FULL, secret_uri])
    )
    assert {str(r.uri).split("/")[2] for r in listed} == {"docs"}
    assert "E-DISK-042" in mine.contents[0].text
    # B's document is answered exactly as one that does not exist.
    assert isinstance(theirs, MCPError) and theirs.error.data == {"code": "unknown_resource"}
    assert str(theirs) == (
        f"unknown_resource: no published document is {secret_uri!r} (loom://SOURCE/PATH)"
    )
    listed_b, (read_b,) = asyncio.run(_http_resources(server, home.token_secret, [secret_uri]))
    assert {str(r.uri) for r in listed_b} >= {secret_uri}
    assert {str(r.uri).split("/")[2] for r in listed_b} == {"secret"}
    assert SECRET_TEXT in read_b.contents[0].text


def test_a_resource_past_the_answer_bound_is_refused_whole(home: Home, server: str) -> None:
    wide = "loom://big/wide.csv"
    _, (answer,) = asyncio.run(_http_resources(server, home.token_all, [wide]))
    assert isinstance(answer, MCPError), answer
    assert answer.error.data == {"code": "result_too_large"}
    assert str(answer).startswith("result_too_large: the answer is ")
    assert "yyyy" not in str(answer)


# Queries, datasets and the bounds of one call ----------------------------------------------

DISK_USAGE = "runbooks/disk-usage.xlsx#Disk usage"
WIDE = "wide.csv#wide.csv"


def test_a_valid_query_plan_gets_its_answer_with_a_receipt(home: Home, server: str) -> None:
    rows_plan = {
        "datasets": [{"alias": "d", "dataset": DISK_USAGE}],
        "columns": [{"alias": "d", "column": "host"}],
    }
    count_plan = {
        "datasets": [{"alias": "d", "dataset": DISK_USAGE}],
        "aggregates": [{"fn": "count"}],
    }
    results = over_http(
        server, home.token_docs, [("query", {"plan": rows_plan}), ("query", {"plan": count_plan})]
    )
    rows = structured(results[1])
    hosts = [row[-1] for row in rows["rows"]]
    assert "invoice-worker-1" in hosts and len(hosts) == 3
    assert rows["receipt"]["complete"] is True
    assert structured(results[2])["rows"] == [[3]]


def test_query_and_get_document_over_mcp_keep_to_the_token_scope(home: Home, server: str) -> None:
    secret_sets = api(server, home.token_secret, "GET", "/v1/datasets").json()["datasets"]
    b_name = secret_sets[0]["name"]
    plan = {"datasets": [{"alias": "c", "dataset": b_name}], "aggregates": [{"fn": "count"}]}
    results = over_http(
        server,
        home.token_docs,
        [
            ("query", {"plan": plan}),
            ("query", {"plan": {**plan, "datasets": [{"alias": "c", "dataset": "nothing"}]}}),
            ("get_document", {"document": "secret:finance.md"}),
            ("get_document", {"document": "docs:nothing.md"}),
        ],
    )
    theirs, none = error_text(results[1]), error_text(results[2])
    assert "unknown_dataset" in theirs and "Zanzibar" not in theirs
    assert theirs.replace(repr(b_name), "X") == none.replace("'nothing'", "X")
    doc_theirs, doc_none = error_text(results[3]), error_text(results[4])
    assert "unknown_document" in doc_theirs
    assert doc_theirs.replace("secret:finance.md", "X") == doc_none.replace("docs:nothing.md", "X")
    # B's own token gets B's answer.
    own = over_http(server, home.token_secret, [("query", {"plan": plan})])
    assert structured(own[1])["rows"] == [[1]]


COSTS = quote("costs.csv#costs.csv", safe="")  # secret's and big's costs.csv, one name


def test_a_name_two_datasets_of_the_scope_share_is_ambiguous(home: Home, server: str) -> None:
    for token in (home.token_all, home.token_secret_big):
        answer = api(server, token, "GET", f"/v1/datasets/{COSTS}")
        assert answer.status_code == 400, answer.text
        assert answer.json()["error"]["code"] == "ambiguous_dataset"
    # A scope holding one of them is not told of the other.
    one = api(server, home.token_secret, "GET", f"/v1/datasets/{COSTS}")
    assert one.status_code == 200 and one.json()["source"] == "secret"


def test_an_answer_past_the_size_bound_is_result_too_large(home: Home, server: str) -> None:
    statement = f'SELECT a.note, b.note AS again FROM "{WIDE}" a CROSS JOIN "{WIDE}" b LIMIT 1000'
    answer = api(server, home.token_all, "POST", "/v1/sql", {"statement": statement})
    assert answer.status_code == 413, answer.text
    assert answer.json()["error"]["code"] == "result_too_large"
    # Over MCP: the same error, never part of the rows.
    result = over_http(server, home.token_all, [("sql", {"statement": statement})])[1]
    assert "result_too_large" in error_text(result) and "yyyy" not in error_text(result)


def test_a_call_past_the_time_limit_is_a_timeout(home: Home) -> None:
    slow = f'SELECT sum(a.n + b.n + c.n) FROM "{WIDE}" a, "{WIDE}" b, "{WIDE}" c'
    started = time.monotonic()
    results = over_stdio(home, [("sql", {"statement": slow}), ("formats", {})], "--timeout", "1")
    assert error_text(results[1]) == (
        "Error executing tool sql: time_limit: the query ran past its time limit (1 s)"
    )
    assert structured(results[2])["formats"]  # the server still answers afterwards
    assert time.monotonic() - started < 60
