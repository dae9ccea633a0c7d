"""The names of the files in a vector index's folder (search/vector.py tells what each holds),
apart from the code that reads them, so that a search can tell whether there are vectors without
importing numpy."""

from __future__ import annotations

# The manifest: the model and the generation's name, swapped in whole by every writer.
MANIFEST = "manifest.json"
GENERATIONS = "generations"
LEGACY_DOCS = "docs"  # one file per revision, before generations: removed by the next writer
GRAPH = "graph.usearch"
DOCUMENTS = "documents.json"
# In the manifest's model: vectors of the per-revision layout are not read as a generation.
LAYOUT_VERSION = "gen2"
CACHE = "embeddings.duckdb"
LOCK = ".writer.lock"
