"""Typed errors: every failure a user or a step can see has a code and a one-line message."""

from __future__ import annotations

from dataclasses import dataclass


class LoomError(Exception):
    """A failure with a stable code (lowercase, `_`) and a one-line message."""

    code: str = "internal"
    retryable: bool = False

    def __init__(self, message: str, *, code: str | None = None) -> None:
        super().__init__(message)
        if code is not None:
            self.code = code
        self.message = message

    def __str__(self) -> str:
        return f"{self.code}: {self.message}"


class SettingsError(LoomError):
    """A setting (environment variable or option) is missing or invalid; raised at load."""

    code = "invalid_setting"


class SourceError(LoomError):
    """A registered source cannot be read (missing folder, unreadable file)."""

    code = "source_unreadable"


class ExtractorUnavailable(LoomError):
    """The extractor cannot be used right now; the source can be tried again later."""

    code = "extractor_unavailable"
    retryable = True


class ExtractionFailed(LoomError):
    """The extractor refused the source, or its answer broke the contract.

    `code` is the contract's code: format_mismatch, encoding, corrupt, too_large, timeout,
    resource_limit, invalid_option, unsupported_format, format_unavailable, invalid_artifact,
    or `refused` for an answer whose code the contract does not allow.
    """

    code = "refused"

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message, code=code)


@dataclass(frozen=True)
class ErrorCode:
    """What a code means to a user, whether Loom tries it again by itself, and what to do."""

    meaning: str
    action: str
    retryable: bool = False


# Every code a user can meet, from Loom, the extractor contract and the reference extractor: the
# one table docs/reference/errors.md is generated from (scripts/docs_reference.py), and which
# tests/unit/test_docs.py holds to the codes the code raises, both ways.
ERROR_CODES: dict[str, ErrorCode] = {
    # The extractor contract's refusals (seed 001): a file ends `refused` with one of these.
    "unsupported_format": ErrorCode(
        "No extractor takes this file's format (a legacy .doc/.xls/.ppt, or a format no route names).",
        "Convert the file (to .docx, .xlsx, .pptx, PDF) or route its format to an extractor that reads it (LOOM_DOCUMENT_EXTRACTORS_JSON).",
    ),
    "format_unavailable": ErrorCode(
        "The format is known but this extractor build cannot read it now (its library is missing, e.g. pyarrow for Parquet).",
        "Install the missing library in the extractor's environment (scripts/setup), check `loom formats`, then ingest again.",
    ),
    "format_mismatch": ErrorCode(
        "The file's bytes are not the format its name or option says (a .pdf with no %PDF- header).",
        "Fix the file's extension, or say its format with `--option 'GLOB:format=FORMAT'`.",
    ),
    "encoding": ErrorCode(
        "A text file is not valid in its encoding (UTF-8 unless it says otherwise).",
        "Say its encoding: `loom ingest FOLDER --option 'GLOB:encoding=latin-1'`.",
    ),
    "corrupt": ErrorCode(
        "The file is damaged or not readable as its format (a broken zip, a truncated PDF).",
        "Open it in its own application, save it again, and ingest again.",
    ),
    "invalid_option": ErrorCode(
        "An extraction option is unknown, has a bad value, or is one this file's format does not take.",
        "Correct the `--option` (see `loom formats` for what each format takes).",
    ),
    "too_large": ErrorCode(
        "The file is larger than the extractor takes (LOOM_EXTRACTOR_MAX_BYTES, 64 MiB by default).",
        "Split the file, or raise LOOM_EXTRACTOR_MAX_BYTES for the extractor and for Loom.",
    ),
    "timeout": ErrorCode(
        "The extraction ran past its time limit (LOOM_EXTRACTOR_TIMEOUT_S wall clock or LOOM_EXTRACTOR_CPU_S CPU); from `loom serve`: the call ran past its limit.",
        "Raise the extractor's limits for such files, or split the file; for a serve call, narrow it.",
    ),
    "resource_limit": ErrorCode(
        "The extraction or its output passed a bound (memory, output bytes, blocks, chunks per document); the text past a chunk limit is a failed unit.",
        "Raise the named limit (LOOM_EXTRACTOR_MEMORY_MB, LOOM_MAX_CHUNKS_PER_DOCUMENT, ...) or split the file.",
    ),
    "invalid_artifact": ErrorCode(
        "The extractor's answer broke the contract (bad JSON, a block outside the source, a bound passed); Loom refuses it as untrusted input.",
        "Report it to the extractor's maintainer; the file stays refused until the extractor is fixed.",
    ),
    "refused": ErrorCode(
        "An extraction failed (ExtractionFailed) with a code the contract does not allow; the message says what the extractor answered.",
        "Look at the extractor's log; report a service that answers codes outside the contract.",
    ),
    # Outcomes of a file in a watched folder.
    "retries_exhausted": ErrorCode(
        "The extractor or the store stayed unavailable through every retry (LOOM_RETRY_ATTEMPTS).",
        "Bring the extractor or store back; the next `loom ingest` (or the sensor) takes the file up again.",
    ),
    "invalid_name": ErrorCode(
        "The file's name is not UTF-8, so it cannot be cited.",
        "Rename the file.",
    ),
    "source_changed": ErrorCode(
        "The file changed, or was swapped, between the scan and the read; it was not stored.",
        "Nothing: the next scan sees the new file.",
    ),
    "source_gone": ErrorCode(
        "The file was deleted between the scan and the read, or before its run published it.",
        "Nothing: the next scan retires it.",
    ),
    "source_unreadable": ErrorCode(
        "A registered folder or file cannot be read (permissions, a missing disk).",
        "Fix the permissions or mount, then ingest again.",
    ),
    "unreadable_folder": ErrorCode(
        "A folder inside a source cannot be listed; its files are left as they were.",
        "Fix its permissions, then ingest again.",
    ),
    "missing_folder": ErrorCode(
        "The folder given, or a registered source's root, does not exist.",
        "Check the path; `loom sources remove NAME` a folder that is gone for good.",
    ),
    "not_extracted": ErrorCode(
        "A revision reached publishing with no artifact (its extraction did not finish).",
        "Run the ingest again; it extracts the revision first.",
    ),
    "interrupted": ErrorCode(
        "The run was stopped (Ctrl-C, SIGTERM) or its process died before it finished.",
        "Run `loom ingest` again: it finishes what the run left.",
    ),
    # Settings, the home and the command line.
    "invalid_setting": ErrorCode(
        "A setting (an environment variable or an option) is missing or invalid; the message names it.",
        "Correct it (docs/reference/settings.md lists every one).",
    ),
    "unusable_home": ErrorCode(
        "LOOM_HOME cannot be made, reached, read or written by this user.",
        "Point LOOM_HOME at a folder this user owns.",
    ),
    "dagster_instance_unavailable": ErrorCode(
        "The Dagster instance (DAGSTER_HOME, or its PostgreSQL) cannot be opened.",
        "Check DAGSTER_HOME and LOOM_DAGSTER_POSTGRES_URL.",
    ),
    "workers_need_postgres": ErrorCode(
        "LOOM_WORKERS is above 1 but the catalog or Dagster's instance is not on PostgreSQL: each worker home would keep a catalog of its own.",
        "Set LOOM_CATALOG_URL and LOOM_DAGSTER_POSTGRES_URL, or LOOM_WORKERS=1.",
    ),
    "no_worker_free": ErrorCode(
        "The run queue released a run, but every worker home stayed held by a run process for a minute; the run failed before it started.",
        "Check for run processes left running under LOOM_HOME/workers; the next sensor tick or ingest asks for its revisions again.",
    ),
    "daemon_running": ErrorCode(
        "`loom ui` runs Dagster's daemon on this home; a second `loom ui` or a `loom ingest` would race it.",
        "Let the sensor ingest, or stop `loom ui` first.",
    ),
    "ui_port_unavailable": ErrorCode(
        "The port `loom ui` was asked to listen on is taken.",
        "Pick another with `loom ui --port`.",
    ),
    "io_error": ErrorCode(
        "The machine refused a read or write (disk full, permission).",
        "Free space or fix the permission named, then run again.",
    ),
    "internal": ErrorCode(
        "A failure Loom did not expect.",
        "Report it, with the command and its output.",
    ),
    # Sources and lookups.
    "source_exists": ErrorCode(
        "Another folder already has this source name.",
        "Choose another `--name`, or `--replace` to move the name to this folder.",
    ),
    "root_registered": ErrorCode(
        "This folder is already registered under another name.",
        "Use its name (`loom sources list`).",
    ),
    "invalid_source": ErrorCode(
        "A source name is not 1-64 letters, digits, `.`, `_` or `-` starting with a letter or digit.",
        "Choose a name of that shape (`--name`).",
    ),
    "invalid_tag": ErrorCode(
        "A tag is not 1-64 letters, digits, `.`, `_` or `-` starting with a letter or digit.",
        "Choose a tag of that shape (`--tag`).",
    ),
    "unknown_source": ErrorCode(
        "No source has this name (or it is outside the caller's token).",
        "See `loom sources list`.",
    ),
    "unknown_file": ErrorCode(
        "`loom show` found no file by this path in any registered folder.",
        "Give a path inside a registered folder, or SOURCE:PATH.",
    ),
    "unknown_revision": ErrorCode(
        "No revision has this key.",
        "See `loom show PATH` for a file's revisions.",
    ),
    "unknown_document": ErrorCode(
        "No published document has this source and path (or it is outside the caller's token).",
        "Check the path; search for it.",
    ),
    "unknown_passage": ErrorCode(
        "No published passage has this id.",
        "Take the id from a search hit of a live revision.",
    ),
    "unknown_resource": ErrorCode(
        "No published document is at this loom:// URI.",
        "Use loom://SOURCE/PATH of a published document.",
    ),
    # Search.
    "empty_query": ErrorCode("The search has no words.", "Give it words."),
    "query_too_long": ErrorCode("The search text is longer than allowed.", "Shorten it."),
    "bad_limit": ErrorCode("`--limit` is outside 1 to 1000.", "Give a limit between 1 and 1000."),
    "bad_search": ErrorCode(
        "The search could not be parsed or run as asked.", "Rephrase it, or drop the filter named."
    ),
    "unknown_format": ErrorCode(
        "A `--format` filter names no format.", "Use a name `loom formats` lists."
    ),
    "unknown_tag": ErrorCode("No source has this tag.", "See `loom sources list` for tags."),
    "invalid_utf8": ErrorCode("An argument is not valid UTF-8.", "Give it as UTF-8 text."),
    "filter_unsupported": ErrorCode(
        "The vector leg cannot apply this filter.", "Drop the filter, or search without vectors."
    ),
    "bad_filter": ErrorCode("A serve call's filter is malformed.", "Correct the filter."),
    "bad_k": ErrorCode("A serve call asks for a bad number of hits.", "Ask for 1 to 1000."),
    "bad_cursor": ErrorCode(
        "A paging cursor is malformed or from another listing.", "Start the listing again."
    ),
    "index_busy": ErrorCode(
        "Another writer held the search index past the wait.",
        "Nothing: the publish is tried again.",
        retryable=True,
    ),
    "index_incompatible": ErrorCode(
        "The search index was written by another version of Loom.",
        "Rebuild it: remove LOOM_HOME/search and run `loom ingest` (it reindexes what is published).",
    ),
    "index_unreadable": ErrorCode(
        "The search index (or a vector generation) cannot be read.",
        "Check LOOM_HOME's permissions and disk; rebuild the index if it is damaged.",
    ),
    "index_unwritable": ErrorCode(
        "The search index cannot be written.", "Check LOOM_HOME's permissions and free space."
    ),
    "embedder_unavailable": ErrorCode(
        "The embedder (LOOM_EMBEDDER) cannot embed: its model is missing or it failed.",
        "Check LOOM_EMBEDDER's path or package; the publish is tried again.",
        retryable=True,
    ),
    # The catalog, the object store and the extractor service.
    "catalog": ErrorCode(
        "The catalog refused an operation.", "Read the message; report it if it persists."
    ),
    "catalog_unavailable": ErrorCode(
        "The catalog's PostgreSQL server (LOOM_CATALOG_URL) cannot be reached.",
        "Bring the server back; the step is tried again.",
        retryable=True,
    ),
    "catalog_refused": ErrorCode(
        "The catalog's PostgreSQL server refused the login.",
        "Fix the user, password or database in LOOM_CATALOG_URL.",
    ),
    "busy": ErrorCode(
        "`loom serve` is running as many queries as it takes at once (4); this one was refused.",
        "Send it again after the Retry-After second.",
    ),
    "catalog_busy": ErrorCode(
        "A query found the catalog locked by a writer.", "Run the query again in a moment."
    ),
    "object_store": ErrorCode(
        "The object store could not be reached or broke off.",
        "Nothing at first (it is retried); if it lasts, check the store (LOOM_OBJECT_STORE_URL).",
        retryable=True,
    ),
    "store_bucket_missing": ErrorCode(
        "The S3 bucket in LOOM_OBJECT_STORE_URL does not exist.", "Create it, or fix the URL."
    ),
    "store_access_denied": ErrorCode(
        "The object store refused the credentials.",
        "Fix the AWS_* credentials or the bucket's policy.",
    ),
    "corrupt_store": ErrorCode(
        "An object's bytes do not match their content address.",
        "Restore the object store from a backup; ingest again to store the originals anew.",
    ),
    "not_found": ErrorCode(
        "An object the catalog names is not in the object store.",
        "Restore the store, or ingest the folder again.",
    ),
    "extractor_unavailable": ErrorCode(
        "The extractor service cannot be reached, is busy, or answered out of contract for the call.",
        "Nothing at first (retried with backoff); if it lasts, start or fix the service (LOOM_DOCUMENT_EXTRACTOR_URL).",
        retryable=True,
    ),
    # Datasets and queries.
    "dataset": ErrorCode(
        "A dataset operation failed.",
        "Read the message; `loom datasets list` shows what is served.",
    ),
    "unknown_dataset": ErrorCode(
        "No served dataset has this id or name.", "See `loom datasets list`."
    ),
    "ambiguous_dataset": ErrorCode(
        "Several served datasets have this name.", "Use its id (`ds_...`)."
    ),
    "needs_clarification": ErrorCode(
        "A dataset's schema is uncertain, so it is not served until a person approves it.",
        "`loom datasets show` it, then `loom datasets approve` it with its column types.",
    ),
    "artifact_gone": ErrorCode(
        "The revision's artifact is no longer in the store, so its dataset cannot be approved.",
        "Ingest the file again.",
    ),
    "revision_conflict": ErrorCode(
        "The dataset's revision changed since it was shown.", "Show it again, then approve."
    ),
    "invalid_type": ErrorCode(
        "A column type given to approve is not one Loom knows.",
        "Use one the message lists: text, decimal, double, date, timestamp, boolean, duration.",
    ),
    "unknown_column": ErrorCode(
        "A column named is not in the dataset.", "See its columns with `loom datasets show`."
    ),
    "invalid_plan": ErrorCode(
        "A query plan is not valid JSON or not a plan.", "Correct it (docs/datasets.md)."
    ),
    "unknown_alias": ErrorCode(
        "A plan names an alias it did not declare.", "Declare it under `datasets`."
    ),
    "duplicate_alias": ErrorCode("Two datasets in a plan share an alias.", "Rename one."),
    "too_many_datasets": ErrorCode(
        "A query reads more datasets than allowed (four).", "Split the query."
    ),
    "join_not_allowed": ErrorCode(
        "A join does not name a dataset declared before it.", "Reorder the datasets."
    ),
    "join_kind_mismatch": ErrorCode(
        "A join pairs columns of different kinds.", "Join columns of the same kind."
    ),
    "comparison_not_allowed": ErrorCode(
        "A filter compares a column in a way its type does not allow.", "Use an allowed operator."
    ),
    "value_not_readable": ErrorCode(
        "A filter value cannot be read as its column's type.", "Write it in the column's type."
    ),
    "aggregate_not_allowed": ErrorCode(
        "An aggregate does not apply to its column's type (a sum of text).",
        "Pick another aggregate.",
    ),
    "group_not_allowed": ErrorCode(
        "A grouping does not apply to its column (a `by` on a non-date).",
        "Group by a date, or drop `by`.",
    ),
    "sql_refused": ErrorCode(
        "The SQL is not one allowlisted SELECT over dataset names.",
        "Write one SELECT over `loom datasets list` names.",
    ),
    "statement_too_long": ErrorCode("The SQL is longer than allowed.", "Shorten it."),
    "invalid_ceiling": ErrorCode(
        "A query ceiling (`--max-rows`, `--timeout`) is out of range.", "Give one in range."
    ),
    "too_many_rows": ErrorCode(
        "The answer has more rows than `--max-rows`.", "Filter or aggregate, or raise `--max-rows`."
    ),
    "time_limit": ErrorCode(
        "The query ran past its time ceiling.", "Narrow it, or raise `--timeout`."
    ),
    "memory_limit": ErrorCode(
        "The query ran past its memory ceiling.", "Narrow it (filters, fewer joins)."
    ),
    "numeric_overflow": ErrorCode(
        "A value overflowed its numeric type.", "Cast to a wider type or filter the rows."
    ),
    "sum_overflow": ErrorCode("A sum overflowed.", "Aggregate fewer rows, or avg instead."),
    "snapshot_missing": ErrorCode(
        "A dataset's snapshot is not in the store.", "Ingest its file again."
    ),
    "snapshot_mismatch": ErrorCode(
        "A dataset's snapshot does not match its recorded digest.",
        "Restore the store from a backup, or ingest its file again.",
    ),
    "dataset_changed": ErrorCode(
        "A dataset's snapshot was replaced while the query ran.",
        "Run the query again.",
        retryable=True,
    ),
    "incomplete_dataset": ErrorCode(
        "The dataset's extraction left part of its table out, so a read refuses it by default.",
        "Read it anyway with allow_incomplete=True (`loom datasets export --allow-incomplete`);"
        " the frame's attrs say what is missing.",
    ),
    "invalid_target": ErrorCode(
        "`loom datasets export --to` names a folder or a place the store cannot write.",
        "Name a file path or an s3:// URL of a file.",
    ),
    "invalid_format": ErrorCode(
        "`loom datasets export --format` names a format it does not write.",
        "Use parquet or csv.",
    ),
    "query_failed": ErrorCode(
        "The query engine failed on the query.", "Read the message; simplify the query."
    ),
    # `loom serve`.
    "unauthorized": ErrorCode(
        "The HTTP call has no token, or one not in the token file.",
        "Send `Authorization: Bearer TOKEN` with a token from `--token-file`.",
    ),
    "bad_request": ErrorCode(
        "The HTTP call is malformed (its JSON, its parameters).", "Correct the call."
    ),
    "request_too_large": ErrorCode("The HTTP call's body is too large.", "Send less."),
    "result_too_large": ErrorCode(
        "The answer passes the size a call may return.", "Ask for fewer rows or hits."
    ),
}
