"""Dagster resources for the object store, the catalog and the search index."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

import duckdb
from dagster import ConfigurableResource
from dagster_duckdb import DuckDBResource

from loom_dagster.catalog import catalog_url, ensure_schema, open_shared
from loom_dagster.objectstore import ObjectStore
from loom_dagster.search.lexical import LexicalIndex

if TYPE_CHECKING:
    from loom_dagster.search.vector import VectorIndex


class ObjectStoreResource(ConfigurableResource):
    """An fsspec URL: a local folder (file://...) or s3://bucket/prefix."""

    url: str

    def get(self) -> ObjectStore:
        return ObjectStore(self.url)


class CatalogResource(DuckDBResource):
    """The DuckDB catalog; every connection finds the schema in place.

    DuckDBResource retries a connection while another process holds the file, so a short
    write elsewhere is a wait here, never a lock error.
    """

    @contextmanager
    def connect(self) -> Iterator[duckdb.DuckDBPyConnection]:
        url = catalog_url()
        if url is not None:  # LOOM_CATALOG_URL: the catalog shared with other workers
            shared = open_shared(url, Path(self.database).parent)
            try:
                yield shared
            finally:
                shared.close()
            return
        with self.get_connection() as con:
            ensure_schema(con)
            yield con


class SearchIndexResource(ConfigurableResource):
    directory: str
    # The vector index's folder and LOOM_EMBEDDER as read when the definitions loaded; no
    # folder: no vector leg (the lexical index alone, as a test may want).
    vectors_directory: str = ""
    embedder: str = ""

    def get(self) -> LexicalIndex:
        return LexicalIndex(self.directory)

    def vectors(self) -> VectorIndex | None:
        if not self.vectors_directory:
            return None
        from loom_dagster.search.vector import VectorIndex, shared_embedder
        from loom_dagster.settings.embedder import EmbedderSpec

        embedder = shared_embedder(EmbedderSpec.parse(self.embedder))
        return VectorIndex(self.vectors_directory, embedder)
