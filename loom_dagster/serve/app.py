"""The server: the MCP tools (stdio or streamable HTTP at /mcp) and the JSON API under /v1,
both over one `Reader`. Every call runs in a worker thread under the time bound; every error is
one ServeError, never a traceback; over HTTP every request needs a bearer token of the token
file and reads only its scope."""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
from mcp.server.context import ServerRequestContext
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.shared.exceptions import MCPError
from mcp_types import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    ListResourcesResult,
    PaginatedRequestParams,
    ReadResourceRequestParams,
    ReadResourceResult,
    Resource,
    TextResourceContents,
    ToolAnnotations,
)
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp, Message, Receive, Send
from starlette.types import Scope as AsgiScope

from loom_dagster.errors import LoomError
from loom_dagster.serve import bounds
from loom_dagster.serve.bounds import ServeError, as_serve_error
from loom_dagster.serve.reader import Reader
from loom_dagster.serve.tokens import EVERYTHING, Scope, Tokens

log = logging.getLogger("loom.serve")
SCOPE_KEY = "loom.scope"

READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False, open_world_hint=False)

DESCRIPTIONS = {
    "search": (
        "Search the documents Loom has published (hybrid: exact identifiers, BM25 and vectors, "
        "fused). Give `query` as words or an identifier (an error code, a key path, a SQL "
        "name); `k` is how many hits (1-50, default 10); `filters` may narrow by `sources`, "
        "`formats`, `block_types`, `tags` (lists) and `path_prefix`. Each hit has the passage "
        "text, a score and a citation: source, path, revision, locator (lines, pages, sheet "
        "and rows, key path) and a `passage_id` for get_passage. Quote the citation's `cite` "
        "when you use a passage."
    ),
    "get_passage": (
        "The exact text of one passage by the `passage_id` a search hit gave, with its "
        "citation and the passages just before and after it in the same document revision."
    ),
    "get_document": (
        "One document, named `SOURCE:PATH` or by a revision key: its live revision, its "
        "outline (each heading with the id of its first passage) and every revision with its "
        "outcomes (published, refused with a code, superseded, retired)."
    ),
    "list_datasets": (
        "The typed tables Loom extracted from the published documents (CSV, XLSX, PDF tables, "
        "...): names, ids, columns and types, rows stored and rejected, and whether complete."
    ),
    "describe_dataset": "One dataset by its id or name: its schema, row counts, completeness and open questions.",
    "query": (
        "Answer a typed query plan over the datasets (seed 000 'Queries': datasets, filters, "
        "joins, group_by, aggregates, order_by, limit) with a receipt naming the snapshots "
        "read and whether the answer is complete. At most 1000 rows; bounded in time."
    ),
    "sql": (
        "Answer one SELECT over the datasets (named as tables by their name or id) from an "
        "allowlist of SQL; other statements are refused. Returns columns, rows and a receipt. "
        "At most 1000 rows; bounded in time."
    ),
    "formats": "Which document formats the configured extractors take now (available, unavailable, unknown).",
}


class Service:
    """The Reader under the server's time bound, errors made ServeErrors."""

    def __init__(self, reader: Reader, seconds: float = bounds.DEFAULT_SECONDS) -> None:
        self.reader = reader
        self.seconds = seconds
        # Counted on the event loop's thread only, so no lock.
        self.queries = 0

    async def call(self, tool: str, scope: Scope, **arguments: Any) -> dict[str, Any]:
        if tool not in ("query", "sql"):
            return await self._call(tool, scope, **arguments)
        if self.queries >= bounds.MAX_QUERIES_IN_FLIGHT:
            raise ServeError(
                f"{tool}: {self.queries} queries are running; try again shortly", code="busy"
            )
        self.queries += 1
        try:
            return await self._call(tool, scope, seconds=self.seconds, **arguments)
        finally:
            self.queries -= 1

    async def _call(self, tool: str, scope: Scope, **arguments: Any) -> dict[str, Any]:
        name = tool
        method: Callable[..., dict[str, Any]] = getattr(self.reader, name)
        try:
            grace = bounds.QUERY_GRACE_SECONDS if name in ("query", "sql") else 0.0
            with anyio.fail_after(self.seconds + grace):
                return await anyio.to_thread.run_sync(
                    lambda: method(scope, **arguments), abandon_on_cancel=True
                )
        except TimeoutError:
            raise ServeError(
                f"{name} took longer than {self.seconds:g} s", code="timeout"
            ) from None
        except LoomError as error:
            raise as_serve_error(error) from None
        except OSError as error:
            raise ServeError(
                f"io_error: {error.strerror or 'unreadable'}", code="io_error"
            ) from None
        except Exception:
            log.exception("%s failed", name)
            raise ServeError(f"{name} failed inside the server", code="internal") from None


# MCP ---------------------------------------------------------------------------------------


def _request_scope(request_context: Any, default: Scope) -> Scope | None:
    request = getattr(request_context, "request", None)
    if request is None:  # stdio: the scope the server was started with
        return default
    scope = request.scope.get(SCOPE_KEY)
    # The HTTP middleware sets it on every request; without it, nothing is answered.
    return scope if isinstance(scope, Scope) else None


def _scope_of(context: Context, default: Scope) -> Scope:
    scope = _request_scope(context.request_context, default)
    if scope is None:
        raise ToolError("unauthorized: no scope on this request")
    return scope


class LoomMCP(MCPServer):
    """The SDK's server, its resources the published documents of the caller's scope:
    listed (paged) and read through the same Service, under the same bounds, as the tools."""

    def __init__(self, service: Service, default: Scope, **settings: Any) -> None:
        super().__init__("loom", **settings)
        self.service = service
        self.default_scope = default

    async def _resources_call(self, ctx: Any, name: str, **arguments: Any) -> dict[str, Any]:
        scope = _request_scope(ctx, self.default_scope)
        try:
            if scope is None:
                raise ServeError("a valid bearer token is required", code="unauthorized")
            return await self.service.call(name, scope, **arguments)
        except ServeError as error:
            code = INTERNAL_ERROR if error.status >= 500 else INVALID_PARAMS
            raise MCPError(code=code, message=str(error), data={"code": error.code}) from None

    async def _handle_list_resources(
        self, ctx: ServerRequestContext[Any], params: PaginatedRequestParams | None
    ) -> ListResourcesResult:
        cursor = params.cursor if params is not None else None
        page = await self._resources_call(ctx, "list_resources", cursor=cursor)
        return ListResourcesResult(
            resources=[
                Resource(
                    uri=item["uri"],
                    name=item["name"],
                    description=f"{item['name']} (revision {item['revision']})",
                    mime_type="text/plain",
                )
                for item in page["resources"]
            ],
            next_cursor=page["next_cursor"],
        )

    async def _handle_read_resource(  # type: ignore[override]
        self, ctx: ServerRequestContext[Any], params: ReadResourceRequestParams
    ) -> ReadResourceResult:
        found = await self._resources_call(ctx, "read_resource", uri=params.uri)
        return ReadResourceResult(
            contents=[
                TextResourceContents(
                    uri=params.uri,
                    text=found["text"],
                    mime_type="text/plain",
                    _meta={"loom": {k: found[k] for k in ("revision", "passages")}},
                )
            ]
        )


def build_mcp(service: Service, default: Scope = EVERYTHING) -> MCPServer:
    server: MCPServer = LoomMCP(
        service,
        default,
        instructions=(
            "Loom serves the documents and tables of registered folders, read-only, each "
            "passage with a citation. Search first, then get_passage or get_document to read "
            "more; list_datasets, then query or sql for the tables. Each published document "
            "is also a resource, loom://SOURCE/PATH, its text as Loom extracted it."
        ),
        log_level="WARNING",
    )

    async def run(context: Context, tool: str, **arguments: Any) -> dict[str, Any]:
        try:
            return await service.call(tool, _scope_of(context, default), **arguments)
        except ServeError as error:
            raise ToolError(str(error)) from None

    async def search(
        query: str,
        context: Context,
        k: int = bounds.DEFAULT_K,
        filters: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        return await run(context, "search", query=query, k=k, filters=filters)

    async def get_passage(id: str, context: Context) -> dict[str, Any]:
        return await run(context, "get_passage", passage_id=id)

    async def get_document(document: str, context: Context) -> dict[str, Any]:
        return await run(context, "get_document", target=document)

    async def list_datasets(context: Context) -> dict[str, Any]:
        return await run(context, "list_datasets")

    async def describe_dataset(name: str, context: Context) -> dict[str, Any]:
        return await run(context, "describe_dataset", name=name)

    async def query(plan: dict[str, Any], context: Context) -> dict[str, Any]:
        return await run(context, "query", plan=plan)

    async def sql(statement: str, context: Context) -> dict[str, Any]:
        return await run(context, "sql", statement=statement)

    async def formats(context: Context) -> dict[str, Any]:
        return await run(context, "formats")

    for tool in (
        search,
        get_passage,
        get_document,
        list_datasets,
        describe_dataset,
        query,
        sql,
        formats,
    ):
        server.add_tool(
            tool, name=tool.__name__, description=DESCRIPTIONS[tool.__name__], annotations=READ_ONLY
        )
    return server


# HTTP --------------------------------------------------------------------------------------


def error_response(error: ServeError) -> JSONResponse:
    headers = {"WWW-Authenticate": 'Bearer realm="loom"'} if error.code == "unauthorized" else None
    if error.code == "busy":
        headers = {"Retry-After": "1"}
    return JSONResponse(error.to_dict(), status_code=error.status, headers=headers)


class Guard:
    """Every HTTP request: a body of at most MAX_REQUEST_BYTES (a larger one is refused before
    it is read), and a bearer token of the token file, whose scope the request then carries."""

    def __init__(self, app: ASGIApp, tokens: Tokens) -> None:
        self.app = app
        self.tokens = tokens

    async def __call__(self, scope: AsgiScope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        problem = self._problem(headers)
        if problem is not None:
            await error_response(problem)(scope, receive, send)
            return
        kind, _, presented = headers.get("authorization", "").partition(" ")
        found = self.tokens.scope_of(presented.strip()) if kind.lower() == "bearer" else None
        if found is None:
            await error_response(
                ServeError("a valid bearer token is required", code="unauthorized")
            )(scope, receive, send)
            return
        scope[SCOPE_KEY] = found
        taken = 0

        async def bounded_receive() -> Message:
            nonlocal taken
            message = await receive()
            if message["type"] == "http.request":
                taken += len(message.get("body", b""))
                if taken > bounds.MAX_REQUEST_BYTES:
                    raise _TooLarge()
            return message

        try:
            await self.app(scope, bounded_receive, send)
        except _TooLarge:
            await error_response(_too_large())(scope, receive, send)

    def _problem(self, headers: dict[str, str]) -> ServeError | None:
        length = headers.get("content-length")
        if length is not None and (not length.isdigit() or int(length) > bounds.MAX_REQUEST_BYTES):
            return _too_large()
        return None


class _TooLarge(ServeError):
    """A body that grew past the bound while it streamed in (no Content-Length)."""

    code = "request_too_large"

    def __init__(self) -> None:
        super().__init__(_too_large().message)


def _too_large() -> ServeError:
    return ServeError(
        f"the request body is larger than {bounds.MAX_REQUEST_BYTES} bytes",
        code="request_too_large",
    )


async def _body(request: Request) -> dict[str, Any]:
    raw = await request.body()
    try:
        value = json.loads(raw)
    except ValueError:
        raise ServeError("the body must be a JSON object", code="bad_request") from None
    if not isinstance(value, dict):
        raise ServeError("the body must be a JSON object", code="bad_request")
    return value


Handler = Callable[[Request], Awaitable[dict[str, Any]]]


def http_routes(service: Service) -> list[Route]:
    def route(path: str, method: str, handler: Handler) -> Route:
        async def endpoint(request: Request) -> Response:
            try:
                scope = request.scope.get(SCOPE_KEY)
                if not isinstance(scope, Scope):
                    raise ServeError("a valid bearer token is required", code="unauthorized")
                request.state.loom_scope = scope
                return JSONResponse(await handler(request))
            except ServeError as error:
                return error_response(error)

        return Route(path, endpoint, methods=[method])

    def scope(request: Request) -> Scope:
        found: Scope = request.state.loom_scope
        return found

    def fields(body: dict[str, Any], allowed: set[str], required: set[str]) -> None:
        extra = sorted(set(body) - allowed)
        if extra:
            raise ServeError(f"unknown field {extra[0][:100]!r}", code="bad_request")
        missing = sorted(required - set(body))
        if missing:
            raise ServeError(f"the field {missing[0]!r} is required", code="bad_request")

    async def search(request: Request) -> dict[str, Any]:
        body = await _body(request)
        fields(body, {"query", "k", "filters"}, {"query"})
        return await service.call(
            "search",
            scope(request),
            query=body["query"],
            k=body.get("k", bounds.DEFAULT_K),
            filters=body.get("filters"),
        )

    async def passage(request: Request) -> dict[str, Any]:
        return await service.call(
            "get_passage", scope(request), passage_id=request.path_params["id"]
        )

    async def document(request: Request) -> dict[str, Any]:
        return await service.call(
            "get_document", scope(request), target=request.path_params["target"]
        )

    async def datasets(request: Request) -> dict[str, Any]:
        return await service.call("list_datasets", scope(request))

    async def dataset(request: Request) -> dict[str, Any]:
        return await service.call(
            "describe_dataset", scope(request), name=request.path_params["name"]
        )

    async def query(request: Request) -> dict[str, Any]:
        body = await _body(request)
        fields(body, {"plan"}, {"plan"})
        return await service.call("query", scope(request), plan=body["plan"])

    async def sql(request: Request) -> dict[str, Any]:
        body = await _body(request)
        fields(body, {"statement"}, {"statement"})
        return await service.call("sql", scope(request), statement=body["statement"])

    async def formats(request: Request) -> dict[str, Any]:
        return await service.call("formats", scope(request))

    async def openapi(request: Request) -> dict[str, Any]:
        from loom_dagster.serve.openapi import document

        return document()

    return [
        route("/v1/search", "POST", search),
        route("/v1/passages/{id:path}", "GET", passage),
        route("/v1/documents/{target:path}", "GET", document),
        route("/v1/datasets", "GET", datasets),
        route("/v1/datasets/{name:path}", "GET", dataset),
        route("/v1/query", "POST", query),
        route("/v1/sql", "POST", sql),
        route("/v1/formats", "GET", formats),
        route("/v1/openapi.json", "GET", openapi),
    ]


def http_app(service: Service, tokens: Tokens, host: str) -> ASGIApp:
    from mcp.server.transport_security import TransportSecuritySettings

    mcp = build_mcp(service)
    for route in http_routes(service):
        mcp._custom_starlette_routes.append(route)
    app = mcp.streamable_http_app(
        streamable_http_path="/mcp",
        # One JSON body per call rather than an SSE stream: the SDK's client closes an SSE
        # response as soon as its answer arrives, which drops the connection, so every call
        # paid a new TCP connection; a JSON body is read whole and the connection kept alive.
        json_response=True,
        max_request_body_size=bounds.MAX_REQUEST_BYTES,
        host=host,
        transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
    )
    return Guard(app, tokens)
