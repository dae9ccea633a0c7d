"""The retry settings and the services' limits the client reads: each bad value is refused with
one line naming its variable."""

from __future__ import annotations

import pytest

from loom_dagster.errors import SettingsError
from loom_dagster.extractor.settings import ServiceLimits
from loom_dagster.retries import RetrySettings


def test_the_defaults_and_set_values() -> None:
    assert RetrySettings.from_env({}) == RetrySettings(retries=4, delay_s=1.0)
    settings = RetrySettings.from_env({"LOOM_RETRY_ATTEMPTS": "0", "LOOM_RETRY_DELAY_S": "0.5"})
    assert settings == RetrySettings(retries=0, delay_s=0.5)
    assert 0.5 <= settings.delay(1) <= 1.5  # 0.5 s doubled, jittered by half either way


@pytest.mark.parametrize(
    ("variable", "value", "message"),
    [
        (
            "LOOM_RETRY_ATTEMPTS",
            "many",
            "LOOM_RETRY_ATTEMPTS must be a whole number of retries (0 or more), not 'many'",
        ),
        (
            "LOOM_RETRY_ATTEMPTS",
            "-1",
            "LOOM_RETRY_ATTEMPTS must be a whole number of retries (0 or more), not '-1'",
        ),
        (
            "LOOM_RETRY_DELAY_S",
            "soon",
            "LOOM_RETRY_DELAY_S must be a number of seconds, not 'soon'",
        ),
        (
            "LOOM_RETRY_DELAY_S",
            "nan",
            "LOOM_RETRY_DELAY_S must be a number of seconds, 0 or more, not 'nan'",
        ),
        (
            "LOOM_RETRY_DELAY_S",
            "-2",
            "LOOM_RETRY_DELAY_S must be a number of seconds, 0 or more, not '-2'",
        ),
    ],
)
def test_a_bad_retry_setting_is_refused(variable: str, value: str, message: str) -> None:
    with pytest.raises(SettingsError) as raised:
        RetrySettings.from_env({variable: value})
    assert (raised.value.code, raised.value.message) == ("invalid_setting", message)


@pytest.mark.parametrize(
    ("variable", "value", "message"),
    [
        (
            "LOOM_EXTRACTOR_TIMEOUT_S",
            "soon",
            "LOOM_EXTRACTOR_TIMEOUT_S: 'soon' is not a number of seconds",
        ),
        (
            "LOOM_EXTRACTOR_TIMEOUT_S",
            "0",
            "LOOM_EXTRACTOR_TIMEOUT_S: 0.0 is not a positive number of seconds",
        ),
        (
            "LOOM_EXTRACTOR_CONCURRENCY",
            "0",
            "LOOM_EXTRACTOR_CONCURRENCY: '0' is not a positive whole number",
        ),
    ],
)
def test_a_bad_service_limit_is_refused(variable: str, value: str, message: str) -> None:
    with pytest.raises(SettingsError) as raised:
        ServiceLimits.from_env({variable: value})
    assert raised.value.message == message
