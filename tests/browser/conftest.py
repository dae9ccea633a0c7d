"""The browser tests use the integration tests' Loom home and reference extractor."""

from tests.integration.conftest import loom_home, reference_service  # noqa: F401
