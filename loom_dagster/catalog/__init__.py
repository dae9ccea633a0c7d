"""The catalog: sources, the revision registry, documents and their live revision, outcomes.

Plain functions over a DuckDB connection, so the Dagster shell, the sensor and the command line
share one way to read and write it. DuckDB takes one writing process per file: callers keep
connections short, and the publishing step runs in a Dagster pool of size 1.

With `LOOM_CATALOG_URL=postgresql://...` the same functions run on PostgreSQL, so workers on
several machines publish into one catalog (postgres.PostgresCatalog adapts the SQL, which is
written in these modules once, in DuckDB's spelling). Writers of the same documents serialise on
`transactions._lock`; the search index marks are per index (`index_marks`), since each home has
its own.

The modules, each importing only those listed before it:
- errors.py: CatalogError, CatalogUnavailable (try again), CatalogRefused (a setting to fix).
- postgres.py: the PostgreSQL adapter (PostgresCatalog), `catalog_url`, `index_id_of`.
- transactions.py: `transaction`, `atomic`, and the per-document locks of a shared catalog.
- schema.py: the tables (SCHEMA), `ensure_schema` and the migration of an old file.
- connection.py: opening the catalog, the DuckDB file (`connect`) or PostgreSQL (`open_shared`).
- sources.py: the registered sources, written and read.
- outcomes.py: the statuses, `Outcome`, each revision's current outcome and their history.
- revisions.py: the revision registry: registering scanned revisions, what is pending.
- history.py: a file's revisions with every outcome each had (`file_history`).
- documents.py: publishing revisions, retiring documents, what is live.
- marks.py: which revision of each document a search index is known to hold.
- retention.py: what loom_dagster.lifecycle reads to decide what is kept; removing a source.

The names the rest of Loom uses are re-exported here: `from loom_dagster import catalog`, then
`catalog.<name>`.
"""

from loom_dagster.catalog.connection import connect, open_shared
from loom_dagster.catalog.documents import (
    Publication,
    counts,
    live_digest,
    live_documents,
    live_unlike,
    publish_batch,
    publish_revision,
    retire_paths,
    superseded_in_order,
)
from loom_dagster.catalog.errors import CatalogError, CatalogRefused, CatalogUnavailable
from loom_dagster.catalog.history import RevisionHistory, file_history
from loom_dagster.catalog.marks import (
    mark_indexed,
    mark_written,
    searchable,
    unindexed,
    unmark_indexed,
)
from loom_dagster.catalog.outcomes import (
    PUBLISHED,
    REFUSED,
    RETRIES_EXHAUSTED,
    SUPERSEDED,
    Outcome,
    outcomes_for,
    record_outcome,
)
from loom_dagster.catalog.postgres import PostgresCatalog, catalog_url
from loom_dagster.catalog.retention import (
    DocumentRevision,
    RevisionState,
    active_documents,
    document_states,
    remove_source,
    revision_states,
    settled_among,
    source_paths,
)
from loom_dagster.catalog.revisions import (
    get_revision,
    known_document_digests,
    known_files,
    known_files_in,
    live_document_paths,
    needs_registration,
    pending_revisions,
    refresh_identity,
    register_revisions,
    registered_keys,
    revisions_of,
)
from loom_dagster.catalog.schema import ensure_schema
from loom_dagster.catalog.sources import (
    SourceSummary,
    get_source,
    list_sources,
    mark_synced,
    source_at,
    source_root,
    source_roots,
    source_summaries,
    source_tags,
    upsert_source,
)
from loom_dagster.catalog.transactions import atomic, transaction
from loom_dagster.errors import LoomError

__all__ = [
    "PUBLISHED",
    "REFUSED",
    "RETRIES_EXHAUSTED",
    "SUPERSEDED",
    "CatalogError",
    "CatalogRefused",
    "CatalogUnavailable",
    "DocumentRevision",
    "LoomError",
    "Outcome",
    "PostgresCatalog",
    "Publication",
    "RevisionHistory",
    "RevisionState",
    "SourceSummary",
    "active_documents",
    "atomic",
    "catalog_url",
    "connect",
    "counts",
    "document_states",
    "ensure_schema",
    "file_history",
    "get_revision",
    "get_source",
    "known_files",
    "known_files_in",
    "list_sources",
    "live_digest",
    "live_document_paths",
    "live_documents",
    "live_unlike",
    "mark_indexed",
    "mark_written",
    "mark_synced",
    "known_document_digests",
    "needs_registration",
    "open_shared",
    "outcomes_for",
    "pending_revisions",
    "publish_batch",
    "publish_revision",
    "record_outcome",
    "refresh_identity",
    "register_revisions",
    "registered_keys",
    "remove_source",
    "retire_paths",
    "revision_states",
    "settled_among",
    "revisions_of",
    "searchable",
    "source_at",
    "source_paths",
    "source_root",
    "source_roots",
    "source_summaries",
    "source_tags",
    "superseded_in_order",
    "transaction",
    "unindexed",
    "unmark_indexed",
    "upsert_source",
]
