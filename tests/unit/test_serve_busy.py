"""`loom serve` runs at most MAX_QUERIES_IN_FLIGHT queries and SQL statements at once and
refuses one more at once (503 busy, Retry-After), rather than queueing it past its time bound;
searches are never refused for it (issue 39)."""

from __future__ import annotations

import threading
from typing import Any

import anyio
import pytest
from starlette.responses import JSONResponse

from loom_dagster.serve import bounds
from loom_dagster.serve.app import Service, error_response
from loom_dagster.serve.bounds import ServeError
from loom_dagster.serve.tokens import EVERYTHING


class HeldReader:
    """Answers a query or SQL statement only once released; a search at once."""

    def __init__(self) -> None:
        self.release = threading.Event()
        self.started = 0

    def query(self, scope: Any, plan: object, seconds: float) -> dict[str, Any]:
        self.started += 1
        self.release.wait(30)
        return {"rows": []}

    def sql(self, scope: Any, statement: object, seconds: float) -> dict[str, Any]:
        return self.query(scope, statement, seconds)

    def search(self, scope: Any, query: str, k: int, filters: object) -> dict[str, Any]:
        return {"hits": []}


def test_a_query_past_the_bound_is_refused_at_once_and_searches_still_answer() -> None:
    reader = HeldReader()
    service = Service(reader, seconds=30)  # type: ignore[arg-type]
    outcomes: list[object] = []

    async def one(tool: str, **arguments: Any) -> None:
        try:
            outcomes.append(await service.call(tool, EVERYTHING, **arguments))
        except ServeError as error:
            outcomes.append(error)

    async def scenario() -> tuple[ServeError, dict[str, Any]]:
        async with anyio.create_task_group() as group:
            for n in range(bounds.MAX_QUERIES_IN_FLIGHT):
                if n % 2:
                    group.start_soon(lambda: one("query", plan={}))
                else:
                    group.start_soon(lambda: one("sql", statement="SELECT 1"))
            with anyio.fail_after(30):
                while reader.started < bounds.MAX_QUERIES_IN_FLIGHT:
                    await anyio.sleep(0.01)
            with pytest.raises(ServeError) as refused:
                await service.call("query", EVERYTHING, plan={})
            searched = await service.call("search", EVERYTHING, query="x", k=1, filters=None)
            reader.release.set()
        return refused.value, searched

    refused, searched = anyio.run(scenario)
    assert refused.code == "busy" and refused.status == 503
    assert searched == {"hits": []}
    assert outcomes == [{"rows": []}] * bounds.MAX_QUERIES_IN_FLIGHT
    assert service.queries == 0


def test_a_refused_query_asks_the_caller_to_retry() -> None:
    response = error_response(ServeError("busy", code="busy"))
    assert isinstance(response, JSONResponse)
    assert response.status_code == 503
    assert response.headers["Retry-After"] == "1"
