"""Which parser made each revision's artifact, against what the extractor declares now: the
revisions a parser upgrade left stale.

Contract v1's capabilities answer names the extractor; the reference extractor also names each
format's `parser` and `parser_version` (an extension a v1 client may ignore). A service without
them has its extractor's name and version stand for every format (routing.Capabilities). Each
extraction records what its service declared for the format (`Extraction.declared`); a revision
is stale when the service its format is routed to now declares another.

The last declaration a run saw is kept in `$LOOM_HOME/parsers.json`, so `loom show` can say which
revisions are stale without starting an extractor. It is not in the `artifact` asset's code
version: Dagster keeps one per asset, so it would mark every partition unsynced at once.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from loom_dagster.objectstore import ObjectStore
from loom_dagster.pipeline.records import Extraction, read_extraction

DECLARED_FILE = "parsers.json"

Declared = Mapping[str, str | None]  # format -> "parser version", None when not declared


@dataclass(frozen=True)
class Staleness:
    revision: str
    made_by: str  # "parser version" that made its artifact
    now: str  # "parser version" its format's service declares now


def made_by(extraction: Extraction) -> str:
    """ "parser version" its service declared when it extracted (the artifact's own parser and
    version for a record from before that was kept)."""
    return extraction.declared or f"{extraction.parser} {extraction.parser_version}"


def staleness(extraction: Extraction | None, declared: Declared) -> Staleness | None:
    """Whether an extracted revision's parser is not the one its format has now. A refused
    revision has no artifact to be stale; a format nobody declares now is not judged."""
    if extraction is None or extraction.refused or extraction.format is None:
        return None
    now = declared.get(extraction.format)
    if now is None or now == made_by(extraction):
        return None
    return Staleness(extraction.revision, made_by(extraction), now)


def stale_revisions(
    store: ObjectStore, keys: Iterable[str], declared: Declared
) -> dict[str, Staleness]:
    """The stale ones among `keys`: one small read of each extraction record."""
    found = {}
    for key in keys:
        stale = staleness(read_extraction(store, key), declared)
        if stale is not None:
            found[key] = stale
    return found


def read_declared(home: Path) -> dict[str, str | None]:
    """The declaration the last run recorded under `home`; empty before any."""
    try:
        recorded = json.loads((home / DECLARED_FILE).read_text())
    except (OSError, ValueError):
        return {}
    if not isinstance(recorded, dict):
        return {}
    return {str(k): v for k, v in recorded.items() if v is None or isinstance(v, str)}


def record_declared(home: Path, declared: Declared) -> bool:
    """Keep the declaration under `home` (atomically); returns whether it changed."""
    if read_declared(home) == dict(declared):
        return False
    temporary = home / f".{DECLARED_FILE}.{os.getpid()}"
    temporary.write_text(json.dumps(dict(declared), sort_keys=True, indent=1) + "\n")
    temporary.replace(home / DECLARED_FILE)
    return True
