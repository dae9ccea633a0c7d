"""Loom on Dagster: registered document folders into originals, artifacts, cited chunks and
typed datasets, served to search and typed queries.

Four layers, each importing only those below it (pyproject.toml's import contract; the map is
docs/architecture.md):

- entry points: `cli/` (the `loom` command) over `api/` (the Python API);
- the Dagster shell: `definitions.py`, `sensors.py`, `jobs.py`, `assets/`, `resources/`, and
  `runs.py`, `event_log.py`, `partitions.py` (what concerns Dagster's instance);
- the domain, plain Python that never imports Dagster: `pipeline/`, `search/`, `settings/`,
  `query/`, `lifecycle.py`, `datasets/`, `catalog/`, `extractor/`, `sources/`,
  `objectstore.py`, `chunking.py`, `contract/`;
- the foundation: `retries.py`, `variables.py`, `hold.py`, `errors.py`, `display.py`.
"""
