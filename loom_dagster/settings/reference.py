"""Every environment variable Loom reads, with its type, default and meaning: the one table
docs/reference/settings.md is generated from (scripts/docs_reference.py). tests/unit/test_docs.py
holds it to the variables the code reads, both ways; the extractor's own are in
extractor_sandbox/settings.py's SETTINGS."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Setting:
    """One environment variable: its name, the kind of value, its default and what it does."""

    name: str
    type: str
    default: str
    meaning: str


SETTINGS: tuple[Setting, ...] = (
    Setting(
        "LOOM_HOME", "path", "`./.loom`", "catalog, search index, object store and Dagster instance"
    ),
    Setting(
        "DAGSTER_HOME",
        "path",
        "`$LOOM_HOME/dagster`",
        "the Dagster instance's folder; `loom ui` sets it, export the same one to run `dagster dev` yourself",
    ),
    Setting(
        "LOOM_OBJECT_STORE_URL",
        "URL",
        "`file://$LOOM_HOME/store`",
        "any fsspec URL (`s3://bucket/prefix` through s3fs: see [Operations](../operations.md#running-on-s3))",
    ),
    Setting("LOOM_BATCH_SIZE", "positive integer", "`200`", "revisions per run for `loom ingest`"),
    Setting(
        "LOOM_MAX_CHUNKS_PER_DOCUMENT",
        "positive integer",
        "`20000`",
        "the most chunks one document indexes to (seed 000's default); the text past them is a failed unit `text past chunk N: resource_limit`, shown by `loom ingest`, the `published` event and every hit of the revision, which reads as incomplete",
    ),
    Setting(
        "LOOM_MAX_CHUNKS_PER_INPUT_KIB",
        "positive integer",
        "`64`",
        "also at most this many chunks per KiB of the original (one per 16 bytes, text about 75 times the file's size), never fewer than 1,000: a 25 KB DOCX whose one run inflates to 25 MB indexes 1,583 chunks, not 20,972",
    ),
    Setting(
        "LOOM_EXTRACT_CONCURRENCY",
        "positive integer",
        "`2`",
        "extractions one step has in flight (at most the service's slots reach it)",
    ),
    Setting(
        "LOOM_RETRY_ATTEMPTS",
        "integer",
        "`4`",
        "retries of a file the extractor or store cannot take, within its step, and of a step where no file got through; then the file ends `retries_exhausted`, which the next ingest tries again",
    ),
    Setting(
        "LOOM_RETRY_DELAY_S",
        "seconds",
        "`1`",
        "the first wait before a retry; each next doubles, jittered ±50%",
    ),
    Setting(
        "LOOM_KEEP_REVISIONS",
        "positive integer",
        "`3`",
        "newest revisions kept per document (with the live one and pending ones)",
    ),
    Setting(
        "LOOM_KEEP_DAYS",
        "positive integer",
        "(no age rule)",
        "also keep revisions registered in the last this many days",
    ),
    Setting(
        "LOOM_PARTITION_WINDOW",
        "integer, 0 or more",
        "`50000`",
        "past this many revision partitions, the partitions of settled revisions (published and live), first added first, leave the partition set (at most 1,000 a folder sensor tick; `loom partitions compact` at once); their documents stay live and searchable, their facts in the catalog (`loom show`). `0`: no window (see [Scale](../scale.md#the-partition-window-built))",
    ),
    Setting(
        "LOOM_STRICT",
        "`0` or `1`",
        "`0`",
        "`1`: the `extracted` and `complete` checks block (errors), so a refused or incomplete file fails its run (CI through the Dagster CLI)",
    ),
    Setting(
        "LOOM_WATCHER",
        "`0` or `1`",
        "`1`",
        "`0`: `loom ui` and `loom watch` start no folder watcher, and every registered folder is found by the folder sensor's polling scan, every 30 s (for a filesystem that gives no change notification: see [Operations](../operations.md#watching-folders-loom-watch))",
    ),
    Setting(
        "LOOM_DOCUMENT_EXTRACTOR_URL",
        "URLs",
        "(local reference service)",
        "the extractor a format goes to when no route names it; several replicas of one service as base URLs separated by spaces or commas (at most 32): calls spread across them, and a file goes to another replica when one is unavailable",
    ),
    Setting(
        "LOOM_DOCUMENT_EXTRACTORS_JSON",
        "JSON object",
        "(none)",
        "`{format or media type: base URL}` (a value may name replicas the same way)",
    ),
    Setting(
        "LOOM_DOCUMENT_EXTRACTOR_TOKEN",
        "secret",
        "(none)",
        "the bearer token sent to a service with none of its own",
    ),
    Setting(
        "LOOM_DOCUMENT_EXTRACTOR_TOKENS_JSON",
        "JSON object",
        "(none)",
        "`{base URL: token}` (this and the routes: at most 64 KiB, nested at most 4 deep)",
    ),
    Setting(
        "LOOM_DOCUMENT_EXTRACTOR_TIMEOUT_S",
        "seconds",
        "`60`",
        "seconds one whole call may take; an extraction waits at least the service's own limit (`LOOM_EXTRACTOR_TIMEOUT_S`, 120) × 1.1 + 1 s, counted from when one of the service's slots is free (the `slots` its capabilities declare, else `LOOM_EXTRACTOR_CONCURRENCY`, default 1 for a service that declares none)",
    ),
    Setting(
        "LOOM_DOCUMENT_EXTRACTOR_MAX_ARTIFACT_BYTES",
        "positive integer",
        "`268435456`",
        "the largest answer read; longer is `resource_limit`",
    ),
    Setting(
        "LOOM_RETIRE_MAX_SHARE",
        "fraction",
        "`0.5`",
        "a scan that would retire all of a folder's documents, or more than this share of them and at least `LOOM_RETIRE_MIN_COUNT`, is held (its documents stay live, the line says so) until `loom ingest --confirm-retire`",
    ),
    Setting(
        "LOOM_RETIRE_MIN_COUNT",
        "positive integer",
        "`5`",
        "the fewest retirements a scan must make before `LOOM_RETIRE_MAX_SHARE` holds it",
    ),
    Setting(
        "LOOM_DAGSTER_POSTGRES_URL",
        "URL (secret)",
        "(SQLite under the instance's folder)",
        "`postgresql+psycopg2://user[:password]@host:port/db`: Dagster's runs, event logs and schedules in PostgreSQL (see [Operations](../operations.md#running-with-postgresql)); never written to disk or printed",
    ),
    Setting(
        "LOOM_CATALOG_URL",
        "URL (secret)",
        "(the DuckDB file `LOOM_HOME/catalog.duckdb`)",
        "`postgresql://user[:password]@host:port/db`: the catalog's tables in PostgreSQL, so workers on several machines publish into one catalog (see [Operations](../operations.md#running-with-postgresql)); never written to disk or printed (a message shows it without its password)",
    ),
    Setting(
        "LOOM_WORKERS",
        "positive integer",
        "`1`",
        "more than 1: Dagster's queued run coordinator runs at most this many runs at once, each launched as a process of its own in a worker home `LOOM_HOME/workers/<n>` (needs `LOOM_CATALOG_URL` and `LOOM_DAGSTER_POSTGRES_URL`; see [Operations](../operations.md#runs-spread-across-workers))",
    ),
    Setting(
        "LOOM_RUNS_PER_SOURCE",
        "positive integer",
        "`1`",
        "with `LOOM_WORKERS`: the most queued runs of one source (tag `loom/source`) running at once",
    ),
    Setting(
        "LOOM_RUNS_PER_EXTRACTOR",
        "positive integer",
        "`LOOM_WORKERS`",
        "with `LOOM_WORKERS`: the most queued runs calling one extractor service (tag `loom/extractor`) at once",
    ),
    Setting(
        "LOOM_EMBEDDER",
        "embedder name",
        "`wordllama`",
        "the vector leg's embedder: `wordllama` (its model ships in the wheel, the first 128 of its 256 dimensions used; never downloads), `ngram` (hashed character n-grams, what the floors and tests run), or a model on disk: `sentence-transformers:/path` or `fastembed:/path` (that package installed by you; loaded with local files only). A change re-embeds every live document at the next ingest",
    ),
    Setting(
        "LOOM_SEARCH_RESIDENT",
        "`on` or `off`",
        "`on`",
        "`off` (or `0`, `no`, `false`): `loom search`, `loom sql` and `loom query` neither ask nor start the home's resident process",
    ),
    Setting(
        "LOOM_SEARCH_RESIDENT_IDLE",
        "seconds",
        "`600`",
        "seconds without a search or query after which the resident process exits (a positive number; anything else stops `loom search`, `loom sql` and `loom query` with one line)",
    ),
    Setting(
        "LOOM_EXTRACTOR_ENV",
        "path",
        "`/opt/loom/extractor-venv`",
        "the reference extractor's own environment (built by `scripts/setup` as root), from which Loom, run as root, starts the service",
    ),
    Setting(
        "LOOM_EXTRACTOR_USER",
        "user name",
        "`nobody`",
        "the user the reference extractor drops to when Loom, run as root, starts it",
    ),
    Setting(
        "AWS_ENDPOINT_URL",
        "URL",
        "(AWS)",
        "the S3 endpoint, for a server that is not AWS; never logged or shown",
    ),
    Setting("AWS_ENDPOINT_URL_S3", "URL", "(AWS)", "the same, for S3 only"),
    Setting(
        "AWS_ACCESS_KEY_ID",
        "secret",
        "(`~/.aws`)",
        "S3 credentials (standard AWS variable); never logged or shown",
    ),
    Setting(
        "AWS_SECRET_ACCESS_KEY",
        "secret",
        "(`~/.aws`)",
        "S3 credentials (standard AWS variable); never logged or shown",
    ),
    Setting(
        "AWS_SESSION_TOKEN", "secret", "(none)", "S3 session credentials (standard AWS variable)"
    ),
    Setting(
        "AWS_PROFILE", "name", "(default profile)", "the `~/.aws` profile S3 credentials come from"
    ),
    Setting("AWS_DEFAULT_REGION", "region", "(none)", "the S3 region (standard AWS variable)"),
    Setting("AWS_REGION", "region", "(none)", "the S3 region (standard AWS variable)"),
)
