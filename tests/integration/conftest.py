"""Fixtures for end-to-end tests: a Loom home, a Dagster instance and a real reference extractor."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypeVar

import pytest

from loom_dagster.extractor.local import RunningExtractor, reference_extractor
from loom_dagster.extractor.settings import ENV_TOKEN, ENV_URL

T = TypeVar("T")


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
    use_home(monkeypatch, home, reference_service)
    return home


def use_home(env: pytest.MonkeyPatch, home: Path, service: RunningExtractor) -> None:
    """Point this process (and what it starts) at `home`, as `loom_home` does: a module's
    fixture that builds one home for several tests calls it inside `pytest.MonkeyPatch.context()`,
    and again in each test that reads that home."""
    env.setenv("LOOM_HOME", str(home))
    env.setenv("DAGSTER_HOME", str(home / "dagster"))
    env.delenv("LOOM_OBJECT_STORE_URL", raising=False)
    env.setenv(ENV_URL, service.url)
    env.setenv(ENV_TOKEN, service.token)
    # The seed's deterministic embedder, cheap to start: every `loom` process a test runs would
    # otherwise load the default model. The default's own tests ask for it by name.
    env.setenv("LOOM_EMBEDDER", "ngram")


def home_made_once(
    tmp_path_factory: pytest.TempPathFactory,
    service: RunningExtractor,
    name: str,
    make: Callable[[Path], T],
) -> tuple[Path, T]:
    """A home of a module's own (`name`), filled once by `make(root)` with this process pointed
    at it, for the module's tests that only read it (each points at it again with `use_home`)."""
    root = tmp_path_factory.mktemp(name)
    home = root / "loom-home"
    with pytest.MonkeyPatch.context() as env:
        use_home(env, home, service)
        return home, make(root)
