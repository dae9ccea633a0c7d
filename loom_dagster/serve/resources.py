"""Published documents as MCP resources: `loom://SOURCE/PATH` names a document's live revision,
listed a page at a time among the caller's sources and read as the text Loom published (its
passages in order), whole or refused. Another scope's document is unknown, as a missing one."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, unquote

from loom_dagster.display import one_line
from loom_dagster.serve import bounds
from loom_dagster.serve.bounds import ServeError, bounded, checked_text
from loom_dagster.serve.tokens import Scope

if TYPE_CHECKING:
    from loom_dagster.search.lexical import LexicalIndex
    from loom_dagster.settings import LoomSettings

RESOURCE_SCHEME = "loom://"


def resource_uri(source: str, path: str) -> str:
    """A published document's MCP resource: loom://SOURCE/PATH, the path percent-encoded."""
    return f"{RESOURCE_SCHEME}{quote(source, safe='')}/{quote(path, safe='/')}"


def resource_target(uri: str) -> tuple[str, str] | None:
    """(source, path) of a loom:// URI, or None when it is not one."""
    if not uri.startswith(RESOURCE_SCHEME):
        return None
    source, slash, path = uri[len(RESOURCE_SCHEME) :].partition("/")
    if not (slash and source and path):
        return None
    return unquote(source), unquote(path)


def list_resources(settings: LoomSettings, scope: Scope, cursor: object = None) -> dict[str, Any]:
    """The live documents of the caller's sources, MAX_RESOURCES_PAGE a page; the cursor is
    where the next page starts."""
    from loom_dagster import catalog

    start = 0
    if cursor is not None:
        if not isinstance(cursor, str) or not cursor.isdigit() or len(cursor) > 9:
            raise ServeError("the cursor is not one this server gave", code="bad_cursor")
        start = int(cursor)
    settings.prepare()
    with catalog.connect(settings.catalog_path) as con:
        live = [row for row in catalog.live_documents(con) if scope.allows(row[1])]
    page = live[start : start + bounds.MAX_RESOURCES_PAGE]
    following = start + len(page)
    return {
        "resources": [
            {
                "uri": resource_uri(source, path),
                "name": f"{source}:{path}",
                "source": source,
                "path": path,
                "revision": revision,
            }
            for _, source, path, revision in page
        ],
        "next_cursor": str(following) if following < len(live) else None,
    }


def read_resource(
    settings: LoomSettings, index: Callable[[], LexicalIndex], scope: Scope, uri: object
) -> dict[str, Any]:
    """The text Loom published of one live document (its passages in order), whole or not at
    all: past MAX_DOCUMENT_CHUNKS passages or MAX_RESULT_BYTES it is refused."""
    from loom_dagster import catalog

    wanted = checked_text(uri, "uri", bounds.MAX_NAME_CHARS)
    unknown = ServeError(
        f"no published document is {one_line(wanted, 200)!r} (loom://SOURCE/PATH)",
        code="unknown_resource",
    )
    target = resource_target(wanted)
    if target is None or not scope.allows(target[0]):
        raise unknown
    source, path = target
    settings.prepare()
    with catalog.connect(settings.catalog_path) as con:
        history = catalog.file_history(con, source, path)
    live = next((entry for entry in history if entry.live), None)
    if live is None:
        raise unknown
    chunks = index().document_chunks(live.revision.document_id, bounds.MAX_DOCUMENT_CHUNKS + 1)
    if len(chunks) > bounds.MAX_DOCUMENT_CHUNKS:
        raise ServeError(
            f"{source}:{path} has more than {bounds.MAX_DOCUMENT_CHUNKS} passages; read it by"
            " search and get_passage",
            code="result_too_large",
        )
    return bounded(
        {
            "uri": resource_uri(source, path),
            "source": source,
            "path": path,
            "revision": live.revision.key,
            "passages": len(chunks),
            "text": "\n\n".join(chunk.text for chunk in chunks),
        }
    )
