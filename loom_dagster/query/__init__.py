"""Typed queries over datasets (seed 000 "Queries"): a plan checked against the schemas,
compiled to one sqlglot AST with bound parameters, run by a locked-down in-memory DuckDB over
exactly the served snapshot files, answered with a receipt. `loom sql` is the same path for a
SELECT a person wrote, held to an allowlist. No Dagster here.
"""
