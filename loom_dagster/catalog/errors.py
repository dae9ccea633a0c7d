"""The catalog's error classes: CatalogError, and the two a caller acts on (try again later,
fix a setting). The package's lowest module: the PostgreSQL adapter (postgres.py) raises them
without importing the rest of the catalog.
"""

from __future__ import annotations

from loom_dagster.errors import LoomError


class CatalogError(LoomError):
    code = "catalog"


class CatalogUnavailable(CatalogError):
    """The catalog server cannot be reached or went away; the step can be tried again."""

    code = "catalog_unavailable"
    retryable = True


class CatalogRefused(CatalogError):
    """The catalog server refused the login (credentials, role, database): a setting to fix."""

    code = "catalog_refused"
