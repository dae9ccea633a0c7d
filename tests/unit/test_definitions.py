"""The Dagster shell: settings validated at load, the asset graph, retries, batching."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from dagster import AssetKey, Failure, RetryRequested

from loom_dagster.assets import retried_only_when_retryable
from loom_dagster.definitions import build_definitions
from loom_dagster.errors import ExtractionFailed, ExtractorUnavailable, SettingsError
from loom_dagster.partitions import contiguous_batches
from loom_dagster.resources.extractor import ExtractorResource
from loom_dagster.retries import RetrySettings
from loom_dagster.settings import LoomSettings


@pytest.fixture
def settings(tmp_path: Path) -> LoomSettings:
    return LoomSettings.from_env({"LOOM_HOME": str(tmp_path / "home")})


@pytest.mark.parametrize(
    ("variable", "value", "named"),
    [
        ("LOOM_DOCUMENT_EXTRACTORS_JSON", '{"spreadsheet": "http://127.0.0.1:1"}', "spreadsheet"),
        (
            "LOOM_DOCUMENT_EXTRACTOR_TOKENS_JSON",
            '{"http://127.0.0.1:9": "t" }',
            "http://127.0.0.1:9",
        ),
        ("LOOM_DOCUMENT_EXTRACTOR_TIMEOUT_S", "soon", "LOOM_DOCUMENT_EXTRACTOR_TIMEOUT_S"),
    ],
)
def test_definitions_refuse_a_bad_extractor_setting_at_load(
    tmp_path: Path, variable: str, value: str, named: str
) -> None:
    # Loading the code location reads the settings, extractor settings included, once.
    with pytest.raises(SettingsError) as raised:
        LoomSettings.from_env({"LOOM_HOME": str(tmp_path / "home"), variable: value})
    assert named in raised.value.message


def test_the_extractor_resource_gets_the_settings_read_at_load(tmp_path: Path) -> None:
    settings = LoomSettings.from_env(
        {
            "LOOM_HOME": str(tmp_path / "home"),
            "LOOM_DOCUMENT_EXTRACTOR_URL": "http://127.0.0.1:9",
            "LOOM_DOCUMENT_EXTRACTOR_TIMEOUT_S": "7",
            "LOOM_EXTRACTOR_CONCURRENCY": "3",
            "LOOM_EXTRACT_CONCURRENCY": "5",
        }
    )
    extractor = build_definitions(settings).resources["extractor"]
    assert isinstance(extractor, ExtractorResource)
    assert extractor.settings() == settings.extractor
    assert extractor.settings().timeout_s == 7.0
    assert extractor.limits().slots == 3
    assert extractor.concurrency == 5


def test_importing_the_definitions_writes_nothing(tmp_path: Path) -> None:
    """No folder, no dagster.yaml, no environment variable: the `loom` command prepares the home."""
    home = tmp_path / "home"
    probe = (
        "import os, sys\n"
        "before = dict(os.environ)\n"
        "import loom_dagster.definitions\n"
        "sys.exit(0 if dict(os.environ) == before else 3)\n"
    )
    env = {
        key: value for key, value in os.environ.items() if not key.startswith(("LOOM_", "DAGSTER_"))
    }
    env["LOOM_HOME"] = str(home)
    done = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
    assert not home.exists()
    assert "DAGSTER_HOME" not in env


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"LOOM_OBJECT_STORE_URL": "/data/loom"}, "LOOM_OBJECT_STORE_URL must be a URL"),
        ({"LOOM_BATCH_SIZE": "0"}, "LOOM_BATCH_SIZE must be a positive whole number, not '0'"),
        (
            {"LOOM_EXTRACT_CONCURRENCY": "two"},
            "LOOM_EXTRACT_CONCURRENCY must be a positive whole number",
        ),
    ],
)
def test_loom_settings_refuse_bad_values_with_the_variable_named(
    env: dict[str, str], message: str
) -> None:
    with pytest.raises(SettingsError) as raised:
        LoomSettings.from_env(env)
    assert raised.value.message.startswith(message)


def test_dagster_home_and_the_catalog_live_under_loom_home(settings: LoomSettings) -> None:
    assert settings.dagster_home.parent == settings.home
    assert settings.catalog_path.parent == settings.home
    assert settings.object_store_url == (settings.home / "store").as_uri()


def test_the_asset_graph_runs_original_artifact_chunks_published(
    settings: LoomSettings, monkeypatch: pytest.MonkeyPatch
) -> None:
    for variable in ("LOOM_DOCUMENT_EXTRACTOR_URL", "LOOM_DOCUMENT_EXTRACTORS_JSON"):
        monkeypatch.delenv(variable, raising=False)
    graph = build_definitions(settings).resolve_asset_graph()
    settings.prepare()
    parents = {
        key.to_user_string(): {p.to_user_string() for p in graph.get(key).parent_keys}
        for key in graph.get_all_asset_keys()
    }
    assert parents == {
        "loom/original": set(),
        "loom/artifact": {"loom/original"},
        "loom/chunks": {"loom/artifact"},
        "loom/published": {"loom/chunks"},
        "loom/datasets": {"loom/artifact"},
    }
    assert graph.get(AssetKey(["loom", "published"])).pools == {"loom_catalog"}
    assert (settings.dagster_home / "dagster.yaml").read_text().count("default_limit: 1") == 1


def test_an_unavailable_extractor_asks_for_a_retry_within_the_set_attempts() -> None:
    retry = RetrySettings(retries=2, delay_s=0.5)
    with pytest.raises(RetryRequested) as raised, retried_only_when_retryable(retry, 1):
        raise ExtractorUnavailable("connection refused")
    assert raised.value.max_retries == 2
    assert raised.value.seconds_to_wait is not None and 0.5 <= raised.value.seconds_to_wait <= 1.5


@pytest.mark.parametrize("error", [ExtractionFailed("invalid_artifact", "bad"), KeyError("bug")])
def test_a_failure_that_would_repeat_is_not_retried(error: Exception) -> None:
    with pytest.raises(Failure) as raised, retried_only_when_retryable(RetrySettings()):
        raise error
    assert raised.value.allow_retries is False


def test_batches_are_runs_of_neighbouring_partitions_within_the_size() -> None:
    ordered = ["a", "b", "c", "d", "e", "f"]
    assert contiguous_batches(ordered, ["a", "b", "c", "e", "f"], 2) == [
        ["a", "b"],
        ["c"],
        ["e", "f"],
    ]
    assert contiguous_batches(ordered, ["f", "a"], 10) == [["a"], ["f"]]


def test_loading_the_code_location_logs_no_beta_or_preview_warning(tmp_path: Path) -> None:
    """Issue 28 part 8: `loom ui`'s log held hundreds of them, one per definition and process."""
    env = {
        key: value for key, value in os.environ.items() if not key.startswith(("LOOM_", "DAGSTER_"))
    }
    env["LOOM_HOME"] = str(tmp_path / "home")
    done = subprocess.run(
        [sys.executable, "-W", "default", "-c", "import loom_dagster.definitions"],
        env=env,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "BetaWarning" not in done.stderr and "PreviewWarning" not in done.stderr, done.stderr


def test_a_token_its_variable_does_not_hold_is_refused_at_load(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The resource names the variable (EnvVar); a token read from elsewhere would be lost.
    monkeypatch.delenv("LOOM_DOCUMENT_EXTRACTOR_TOKEN", raising=False)
    settings = LoomSettings.from_env(
        {
            "LOOM_HOME": str(tmp_path / "home"),
            "LOOM_DOCUMENT_EXTRACTOR_URL": "http://127.0.0.1:9",
            "LOOM_DOCUMENT_EXTRACTOR_TOKEN": "a-token-0123456789",
        }
    )
    with pytest.raises(SettingsError) as raised:
        build_definitions(settings)
    assert "0123456789" not in raised.value.message
