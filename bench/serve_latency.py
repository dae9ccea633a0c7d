"""`loom serve` latency: a search through MCP over streamable HTTP (a real `loom serve --http`
process, the mcp SDK's ClientSession) beside the same search in this process (serve's Reader,
the index kept open), query by query in turn, p50/p95 in one run; then 50 concurrent MCP clients' p95 and errors.

The corpus is bench/search_latency.py's generator (synthetic chunks from the words of
shared/corpus/gold), published into a fresh LOOM_HOME's lexical index: the exact-key and BM25
legs answer (no vector leg, on both sides alike).

    nice .venv/bin/python bench/serve_latency.py --chunks 100000 [--home DIR]

With --home the built home is kept in DIR and reused by a later run of the same --chunks.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import platform
import random
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx2
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client

sys.path.insert(0, str(Path(__file__).resolve().parent))
from search_latency import corpus_text, make_chunks, percentiles, vocabulary  # noqa: E402
from serving import serving  # noqa: E402

from loom_dagster.search.lexical import LexicalIndex  # noqa: E402
from loom_dagster.serve.reader import Reader  # noqa: E402
from loom_dagster.serve.tokens import EVERYTHING  # noqa: E402
from loom_dagster.settings import LoomSettings  # noqa: E402

LOOM = [str(Path(sys.executable).with_name("loom"))]


async def session_latencies(url: str, token: str, queries: list[str]) -> tuple[list[float], int]:
    samples: list[float] = []
    errors = 0
    async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=60) as http:
        async with streamable_http_client(f"{url}/mcp", http_client=http) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                for query in queries:
                    started = time.perf_counter()
                    try:
                        result = await session.call_tool("search", {"query": query, "k": 10})
                        errors += bool(result.is_error)
                    except Exception:
                        errors += 1
                    samples.append(time.perf_counter() - started)
    return samples, errors


async def paired(
    reader: Reader, url: str, token: str, queries: list[str]
) -> tuple[list[float], list[float], int]:
    """Each query in this process (serve's Reader, the index kept open) and then through MCP,
    in turn, so a load that drifts during the run weighs on both sides alike."""
    local: list[float] = []
    served: list[float] = []
    errors = 0
    async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=60) as http:
        async with streamable_http_client(f"{url}/mcp", http_client=http) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                for at, query in enumerate(queries[:20] + queries):
                    started = time.perf_counter()
                    reader.search(EVERYTHING, query, 10)
                    middle = time.perf_counter()
                    try:
                        result = await session.call_tool("search", {"query": query, "k": 10})
                        errors += bool(result.is_error)
                    except Exception:
                        errors += 1
                    if at >= 20:  # the first 20 warm both sides
                        local.append(middle - started)
                        served.append(time.perf_counter() - middle)
    return local, served, errors


async def concurrent(
    url: str, token: str, queries: list[str], clients: int, each: int
) -> dict[str, Any]:
    rng = random.Random(3)
    started = time.perf_counter()
    results = await asyncio.gather(
        *(session_latencies(url, token, rng.sample(queries, each)) for _ in range(clients)),
        return_exceptions=True,
    )
    wall = time.perf_counter() - started
    samples = [s for r in results if not isinstance(r, BaseException) for s in r[0]]
    errors = sum(r[1] for r in results if not isinstance(r, BaseException))
    failed_clients = sum(isinstance(r, BaseException) for r in results)
    return {
        "clients": clients,
        "calls": len(samples),
        "errors": errors,
        "failed_clients": failed_clients,
        "calls_per_s": round(len(samples) / wall, 1),
        **percentiles(samples),
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--chunks", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--each", type=int, default=10, help="searches per concurrent client")
    parser.add_argument("--out", type=Path)
    parser.add_argument("--home", type=Path, help="build the home here and keep it (reused)")
    args = parser.parse_args()

    with contextlib.ExitStack() as stack:
        if args.home is None:
            base = stack.enter_context(tempfile.TemporaryDirectory(prefix="loom-serve-bench-"))
        else:
            args.home.mkdir(parents=True, exist_ok=True)
            base = str(args.home)
        home = Path(base) / "home"
        env = {
            **os.environ,
            "LOOM_HOME": str(home),
            "DAGSTER_HOME": str(home / "dagster"),
            "LOOM_SEARCH_RESIDENT": "off",
        }
        os.environ.update(env)
        settings = LoomSettings.from_env()
        settings.prepare()
        words = vocabulary(corpus_text())
        marker = Path(base) / "built.json"
        if marker.is_file() and json.loads(marker.read_text())["chunks"] == args.chunks:
            built = json.loads(marker.read_text())["index_build_s"]
        else:
            started = time.perf_counter()
            documents = make_chunks(args.chunks, words)
            index = LexicalIndex(settings.search_dir)
            names = sorted(documents)
            for at in range(0, len(names), 500):
                index.publish_many({d: documents[d] for d in names[at : at + 500]})
            built = round(time.perf_counter() - started, 1)
            marker.write_text(json.dumps({"chunks": args.chunks, "index_build_s": built}))
        rng = random.Random(5)
        queries = [
            " ".join(rng.choices(words[:2000], k=rng.randint(2, 6))) for _ in range(args.queries)
        ]

        reader = Reader(settings)
        with serving(env, Path(base), start_within_s=60) as (url, token):
            local_samples, served_samples, served_errors = asyncio.run(
                paired(reader, url, token, queries)
            )
            in_process, served = percentiles(local_samples), percentiles(served_samples)
            many = asyncio.run(concurrent(url, token, queries, args.clients, args.each))
    result = {
        "chunks": args.chunks,
        "index_build_s": built,
        "queries": len(queries),
        "in_process": in_process,
        "mcp_streamable_http": {**served, "errors": served_errors},
        "ratio_p50": round(served["p50_ms"] / in_process["p50_ms"], 2),
        "ratio_p95": round(served["p95_ms"] / in_process["p95_ms"], 2),
        "concurrent": many,
        "machine": f"{os.cpu_count()} cores, {platform.machine()}, Python {platform.python_version()}",
    }
    text = json.dumps(result, indent=2)
    print(text)
    if args.out:
        args.out.write_text(text + "\n")


if __name__ == "__main__":
    main()
