"""Fixtures for end-to-end tests: a Loom home, a Dagster instance and a real reference extractor."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from loom_dagster.extractor.local import RunningExtractor, reference_extractor
from loom_dagster.extractor.settings import ENV_TOKEN, ENV_URL


@pytest.fixture(scope="session")
def reference_service() -> Iterator[RunningExtractor]:
    with reference_extractor() as running:
        yield running


@pytest.fixture
def loom_home(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, reference_service: RunningExtractor
) -> Path:
    """A fresh LOOM_HOME whose DAGSTER_HOME lives under it, pointed at the reference service."""
    home = tmp_path / "loom-home"
    monkeypatch.setenv("LOOM_HOME", str(home))
    monkeypatch.setenv("DAGSTER_HOME", str(home / "dagster"))
    monkeypatch.delenv("LOOM_OBJECT_STORE_URL", raising=False)
    monkeypatch.setenv(ENV_URL, reference_service.url)
    monkeypatch.setenv(ENV_TOKEN, reference_service.token)
    # The seed's deterministic embedder, cheap to start: every `loom` process a test runs would
    # otherwise load the default model. The default's own tests ask for it by name.
    monkeypatch.setenv("LOOM_EMBEDDER", "ngram")
    return home
