"""What one request may ask and get, and the one error a caller sees (a code, a message and
the HTTP status that goes with it). Nothing here imports the pipeline."""

from __future__ import annotations

import json
from typing import Any

from loom_dagster.errors import LoomError

MAX_REQUEST_BYTES = 64 * 1024  # an HTTP body, MCP or JSON API
MAX_QUERY_CHARS = 2000  # a search's text
MAX_K = 50  # hits per search
DEFAULT_K = 10
MAX_FILTER_VALUES = 32  # values per filter list
MAX_NAME_CHARS = 1000  # a path prefix, an id, a dataset name, a document target
MAX_SQL_CHARS = 20_000
MAX_ROWS = 1000  # rows a query or sql answer may hold (the query's own row ceiling)
MAX_RESULT_BYTES = 2 * 1024 * 1024  # an answer's JSON; past it the call fails, never cut
MAX_OUTLINE = 500  # headings in a document's outline
MAX_DOCUMENT_CHUNKS = 5000  # chunks read to make an outline
MAX_RESOURCES_PAGE = 500  # documents a resources/list page names
DEFAULT_SECONDS = 10.0  # wall time per call
# How long past its own time limit a query or SQL statement may run before the server gives up
# on it (`timeout`): the query interrupts itself at its limit (`time_limit`, query/run.py); this
# bound is only a backstop for one that does not. On a loaded 2-core machine the interrupt landed
# over a second late, and the backstop's error took the place of the query's own.
QUERY_GRACE_SECONDS = 5.0
# Queries and SQL statements one server runs or waits on at once; one more is refused at once
# (503 busy) rather than queued: on a small machine an open queue of queries grows past every
# call's time bound, and the searches of the same process wait behind it (issue 39).
MAX_QUERIES_IN_FLIGHT = 4

# The HTTP status of each error code; a code not named here is 400 (the caller's request).
STATUS = {
    "unauthorized": 401,
    "unknown_passage": 404,
    "unknown_document": 404,
    "unknown_dataset": 404,
    "unknown_resource": 404,
    "not_found": 404,
    "method_not_allowed": 405,
    "request_too_large": 413,
    "result_too_large": 413,
    "timeout": 504,
    "busy": 503,
    "catalog_busy": 503,
    "index_unreadable": 503,
    "extractor_unavailable": 503,
    "internal": 500,
}


class ServeError(LoomError):
    """A request `loom serve` answers with an error: one code, one line, no traceback."""

    code = "bad_request"

    @property
    def status(self) -> int:
        return STATUS.get(self.code, 400)

    def to_dict(self) -> dict[str, Any]:
        return {"error": {"code": self.code, "message": self.message}}


def as_serve_error(error: LoomError) -> ServeError:
    """A domain error (BadSearch, QueryError, DatasetError, ...) as the caller sees it."""
    if isinstance(error, ServeError):
        return error
    return ServeError(error.message, code=error.code)


def checked_text(value: object, name: str, limit: int, *, code: str = "bad_request") -> str:
    """A caller's string, checked: a string, at most `limit` characters, no NUL."""
    if not isinstance(value, str):
        raise ServeError(f"{name} must be a string", code="bad_request")
    if len(value) > limit:
        raise ServeError(f"{name} is longer than {limit} characters", code=code)
    if "\x00" in value:
        raise ServeError(f"{name} holds a NUL character", code="bad_request")
    return value


def bounded(answer: dict[str, Any]) -> dict[str, Any]:
    """The answer, unless its JSON is past MAX_RESULT_BYTES: then the call fails whole."""
    size = len(json.dumps(answer, ensure_ascii=False).encode("utf-8", "surrogatepass"))
    if size > MAX_RESULT_BYTES:
        raise ServeError(
            f"the answer is {size} bytes, more than {MAX_RESULT_BYTES}; ask for less"
            " (a smaller k, fewer rows, a narrower filter)",
            code="result_too_large",
        )
    return answer
