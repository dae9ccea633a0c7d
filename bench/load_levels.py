"""The service levels bench/load.py holds a mixed load to: the seed's table (search, query, a
small document from ingest to ready) and issue 39's freshness (a small file's write to the first
search that finds it). Milliseconds; the bench exits non-zero when a measure is past its level.
"""

from __future__ import annotations

from typing import NamedTuple


class Level(NamedTuple):
    p95_ms: float
    p99_ms: float


LEVELS: dict[str, Level] = {
    "search": Level(150, 250),
    "query": Level(1_000, 1_500),
    "ingest small document": Level(20_000, 30_000),
    "freshness": Level(10_000, 15_000),
}

# Which level each of the bench's measures is held to (a measure not named here is reported
# without a level: the large files, the freshness probes).
MEASURE_LEVEL: dict[str, str] = {
    "search (resident)": "search",
    "search (serve HTTP)": "search",
    "query (serve HTTP)": "query",
    "sql (serve HTTP)": "query",
    "sql (loom sql)": "query",
    "small file: write to published": "ingest small document",
    "small file: write to searchable": "freshness",
}
