"""What `loom serve` answers, once, for both transports: each method takes the caller's scope
and the request's raw values, checks them as the command line does plus the server's bounds,
calls the domain functions the CLI calls, and returns plain JSON values, or raises ServeError.

Scope: a token reads only the sources it names. A source, passage, document or dataset outside
it is answered exactly as one that does not exist (same code, same message), a search's filter
is cut to the scope inside every leg, and a tag or a dataset name is resolved among the
caller's own sources only, so no answer, count or error tells one scope about another.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

from loom_dagster.display import one_line
from loom_dagster.errors import LoomError
from loom_dagster.search.home import HomeSearcher
from loom_dagster.search.service import describe_locator
from loom_dagster.serve import bounds
from loom_dagster.serve.bounds import ServeError, bounded, checked_text
from loom_dagster.serve.tokens import Scope
from loom_dagster.settings import LoomSettings

if TYPE_CHECKING:
    from loom_dagster.datasets.model import Dataset
    from loom_dagster.search.lexical import IndexedChunk, LexicalIndex
    from loom_dagster.search.service import SearchHit

FILTER_KEYS = ("formats", "sources", "block_types", "tags", "path_prefix")


def _strings(value: object, name: str) -> list[str]:
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise ServeError(f"filters.{name} must be a list of strings", code="bad_filter")
    if len(value) > bounds.MAX_FILTER_VALUES:
        raise ServeError(
            f"filters.{name} holds more than {bounds.MAX_FILTER_VALUES} values", code="bad_filter"
        )
    return [checked_text(item, f"filters.{name}", bounds.MAX_NAME_CHARS) for item in value]


def citation(chunk: IndexedChunk) -> dict[str, Any]:
    """What a model quotes and a person opens: the file, its revision, where in it, and the id
    that fetches the passage again."""
    locator = chunk.locator.to_dict()
    return {
        "passage_id": chunk.chunk_id,
        "source": chunk.source,
        "path": chunk.path,
        "revision": chunk.revision,
        "section_path": list(chunk.section_path),
        "locator": locator,
        "cite": f"{chunk.source}:{chunk.path} ({describe_locator(locator)}; revision {chunk.revision})",
    }


def _passage(chunk: IndexedChunk) -> dict[str, Any]:
    return {
        "passage_id": chunk.chunk_id,
        "text": chunk.text,
        "format": chunk.format,
        "block_type": chunk.block_type,
        "incomplete": chunk.incomplete,
        "citation": citation(chunk),
    }


def _dataset(found: Dataset) -> dict[str, Any]:
    return {
        "dataset_id": found.dataset_id,
        "name": found.name,
        "source": found.source,
        "path": found.path,
        "revision": found.revision,
        "table_id": found.table_id,
        "state": found.state.value,
        "rows_stored": found.rows_stored,
        "rows_rejected": found.rows_rejected,
        "complete": found.complete,
        "incomplete_reasons": list(found.incomplete_reasons),
        "columns": [
            {"name": c.name, "type": c.type.value, "approved": c.approved}
            for c in found.schema.columns
        ],
        "questions": list(found.questions),
        "snapshot": found.snapshot,
    }


class ScopedDatasets:
    """The query package's Catalog, seeing only the datasets of the caller's sources: a name
    is resolved among them, so another scope's dataset of the same name is neither found nor
    makes the name ambiguous."""

    def __init__(self, served: Any, scope: Scope) -> None:
        self.served = served
        self.scope = scope

    def mine(self) -> list[Dataset]:
        return [d for d in self.served.served_datasets() if self.scope.allows(d.source)]

    def served_dataset(self, id_or_name: str) -> Dataset | None:
        if self.scope.sources is None:
            found: Dataset | None = self.served.served_dataset(id_or_name)
            return found
        mine = self.mine()
        by_id = [d for d in mine if d.dataset_id == id_or_name]
        named = by_id or [d for d in mine if d.name == id_or_name]
        if len(named) > 1:
            raise ServeError(
                f"{len(named)} served datasets are named {id_or_name!r}; name one by its id",
                code="ambiguous_dataset",
            )
        return named[0] if named else None

    def is_served(self, dataset_id: str, snapshot: str) -> bool:
        served: bool = self.served.is_served(dataset_id, snapshot)
        return served


class Reader:
    """The answers of one home, its search index kept open between requests."""

    def __init__(self, settings: LoomSettings | None = None) -> None:
        self.settings = settings or LoomSettings.from_env()
        self._searcher = HomeSearcher(self.settings)
        self._lock = threading.Lock()

    def _index(self) -> LexicalIndex:
        with self._lock:  # the reopen check is cheap; the searches themselves run in parallel
            return self._searcher.index()

    # search ------------------------------------------------------------------------------

    def search(
        self, scope: Scope, query: object, k: object = bounds.DEFAULT_K, filters: object = None
    ) -> dict[str, Any]:
        from loom_dagster.search.service import BadSearch, default_legs, make_filter, search

        text = checked_text(query, "query", bounds.MAX_QUERY_CHARS, code="query_too_long")
        if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= bounds.MAX_K:
            raise ServeError(f"k must be an integer from 1 to {bounds.MAX_K}", code="bad_k")
        if filters is None:
            filters = {}
        if not isinstance(filters, dict):
            raise ServeError("filters must be an object", code="bad_filter")
        unknown = sorted(set(filters) - set(FILTER_KEYS))
        if unknown:
            raise ServeError(
                f"unknown filter {one_line(str(unknown[0]), 100)!r}; filters are "
                + ", ".join(FILTER_KEYS),
                code="bad_filter",
            )
        path_prefix = filters.get("path_prefix") or ""
        path_prefix = checked_text(path_prefix, "filters.path_prefix", bounds.MAX_NAME_CHARS)
        sources = _strings(filters.get("sources"), "sources")
        tags = _strings(filters.get("tags"), "tags")
        outside = [name for name in sources if not scope.allows(name)]
        if outside:
            raise ServeError(f"unknown source {one_line(outside[0], 200)!r}", code="unknown_source")
        if scope.sources is not None:
            sources = sources or sorted(scope.sources)
        index = self._index()
        if scope.sources is not None:
            # A tag is known when a source of this scope carries it (another scope's tags are
            # unknown here, as the service says of a tag no chunk carries).
            for tag in tags:
                if not set(index.sources_tagged([tag.strip().casefold()])) & scope.sources:
                    raise ServeError(
                        f"unknown tag {one_line(tag, 200)!r}: no published chunk of yours"
                        " carries it",
                        code="unknown_tag",
                    )
        try:
            search_filter = make_filter(
                formats=_strings(filters.get("formats"), "formats"),
                sources=sources,
                block_types=_strings(filters.get("block_types"), "block_types"),
                tags=tags,
                path_prefix=path_prefix,
            )
            hits: list[SearchHit] = search(
                index,
                text,
                search_filter,
                limit=k,
                legs=default_legs(index, self._searcher._leg(index)),
            )
        except BadSearch as error:
            raise ServeError(error.message, code=error.code) from None
        return bounded(
            {
                "query": text,
                "hits": [
                    {
                        **_passage(hit.chunk),
                        "score": hit.score,
                        "found_by": [leg.leg for leg in hit.legs],
                    }
                    for hit in hits
                ],
            }
        )

    # passages and documents -------------------------------------------------------------

    def get_passage(self, scope: Scope, passage_id: object) -> dict[str, Any]:
        wanted = checked_text(passage_id, "id", bounds.MAX_NAME_CHARS)
        revision, hash_, ordinal = wanted.rpartition("#")
        unknown = ServeError(
            f"no passage has the id {one_line(wanted, 200)!r}", code="unknown_passage"
        )
        if not hash_ or not revision or not ordinal.isdigit() or len(ordinal) > 9:
            raise unknown
        index = self._index()
        number = int(ordinal)
        before, after = f"{revision}#{number - 1}", f"{revision}#{number + 1}"
        found = index.fetch([wanted, after] if number == 0 else [wanted, before, after])
        chunk = found.get(wanted)
        if chunk is None or not scope.allows(chunk.source):
            raise unknown
        return bounded(
            {
                **_passage(chunk),
                "previous": _passage(found[before]) if before in found else None,
                "next": _passage(found[after]) if after in found else None,
            }
        )

    def get_document(self, scope: Scope, target: object) -> dict[str, Any]:
        """`SOURCE:PATH`, or a revision key: its revisions with their outcomes, and the live
        revision's outline (the headings, each with its first passage)."""
        from loom_dagster import catalog

        wanted = checked_text(target, "document", bounds.MAX_NAME_CHARS)
        unknown = ServeError(
            f"no document is {one_line(wanted, 200)!r} (give SOURCE:PATH or a revision key)",
            code="unknown_document",
        )
        self.settings.prepare()
        with catalog.connect(self.settings.catalog_path) as con:
            source, colon, path = wanted.partition(":")
            if not (colon and source and path):
                try:
                    revision = catalog.get_revision(con, wanted)
                except LoomError:
                    raise unknown from None
                source, path = revision.source, revision.path
            if not scope.allows(source):
                raise unknown
            history = catalog.file_history(con, source, path)
        if not history:
            raise unknown
        live = next((entry for entry in history if entry.live), None)
        outline: list[dict[str, Any]] = []
        passages = 0
        if live is not None:
            chunks = self._index().document_chunks(
                live.revision.document_id, bounds.MAX_DOCUMENT_CHUNKS
            )
            passages = len(chunks)
            seen: set[tuple[str, ...]] = set()
            for chunk in chunks:
                section = tuple(chunk.section_path)
                if section and section not in seen and len(outline) < bounds.MAX_OUTLINE:
                    seen.add(section)
                    outline.append(
                        {
                            "section_path": list(section),
                            "passage_id": chunk.chunk_id,
                            "locator": chunk.locator.to_dict(),
                        }
                    )
        return bounded(
            {
                "source": source,
                "path": path,
                "document_id": history[-1].revision.document_id,
                "live_revision": live.revision.key if live else None,
                "status": history[-1].status if live is None else "live",
                "passages": passages,
                "outline": outline,
                "revisions": [
                    {
                        "revision": entry.revision.key,
                        "status": entry.status,
                        "registered_at": str(entry.registered_at),
                        "sha256": entry.revision.sha256,
                        "size": entry.revision.size,
                        "outcomes": [
                            {
                                "status": o.status,
                                "code": o.code,
                                "message": o.message,
                                "chunks": o.chunk_count,
                                "recorded_at": str(o.recorded_at),
                            }
                            for o in entry.outcomes
                        ],
                    }
                    for entry in history
                ],
            }
        )

    # resources: the published documents (resources.py) -------------------------------

    def list_resources(self, scope: Scope, cursor: object = None) -> dict[str, Any]:
        from loom_dagster.serve.resources import list_resources

        return list_resources(self.settings, scope, cursor)

    def read_resource(self, scope: Scope, uri: object) -> dict[str, Any]:
        from loom_dagster.serve.resources import read_resource

        return read_resource(self.settings, self._index, scope, uri)

    # datasets and queries ---------------------------------------------------------------

    def _datasets(self, scope: Scope) -> ScopedDatasets:
        from loom_dagster.query.catalog import ServedDatasets

        self.settings.prepare()
        return ScopedDatasets(ServedDatasets(self.settings.catalog_path), scope)

    def list_datasets(self, scope: Scope) -> dict[str, Any]:
        return bounded({"datasets": [_dataset(d) for d in self._datasets(scope).mine()]})

    def describe_dataset(self, scope: Scope, name: object) -> dict[str, Any]:
        from loom_dagster.datasets.catalog import DatasetError

        wanted = checked_text(name, "name", bounds.MAX_NAME_CHARS)
        try:
            found = self._datasets(scope).served_dataset(wanted)
        except DatasetError as error:
            raise ServeError(error.message, code=error.code) from None
        if found is None:
            raise ServeError(
                f"no served dataset has the id or name {one_line(wanted, 200)!r}",
                code="unknown_dataset",
            )
        return bounded(_dataset(found))

    def _ceilings(self, seconds: float) -> Any:
        from loom_dagster.query.run import Ceilings

        return Ceilings(max_rows=bounds.MAX_ROWS, seconds=seconds)

    def query(self, scope: Scope, plan: object, seconds: float) -> dict[str, Any]:
        from loom_dagster.objectstore import ObjectStore
        from loom_dagster.query.service import run_query
        from loom_dagster.query.snapshots import StoreSnapshots

        if not isinstance(plan, dict):
            raise ServeError("plan must be a JSON object (seed 000 'Queries')", code="invalid_plan")
        catalog = self._datasets(scope)
        files = StoreSnapshots(ObjectStore(self.settings.object_store_url))
        return bounded(_answer(run_query(plan, catalog, files, self._ceilings(seconds))))

    def sql(self, scope: Scope, statement: object, seconds: float) -> dict[str, Any]:
        from loom_dagster.objectstore import ObjectStore
        from loom_dagster.query.service import run_sql
        from loom_dagster.query.snapshots import StoreSnapshots

        text = checked_text(statement, "statement", bounds.MAX_SQL_CHARS, code="statement_too_long")
        catalog = self._datasets(scope)
        files = StoreSnapshots(ObjectStore(self.settings.object_store_url))
        return bounded(_answer(run_sql(text, catalog, files, self._ceilings(seconds))))

    # formats ------------------------------------------------------------------------------

    def formats(self, scope: Scope) -> dict[str, Any]:
        from loom_dagster.api.quick import formats

        answer = formats(self.settings)
        return {
            "formats": dict(sorted(answer.states.items())),
            "unreadable": [error.message for error in answer.unreadable],
        }


def _answer(answer: Any) -> dict[str, Any]:
    result: dict[str, Any] = answer.to_dict()
    # Paths of this machine never leave it: the receipt names snapshot keys already.
    return result
