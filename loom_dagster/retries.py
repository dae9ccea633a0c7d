"""How often, and after how long, an unavailable service or store is tried again.

One setting pair serves both levels: a file is tried again within its step (so one slow file
never fails its batch), and a step whose every file found the service unavailable is retried by
Dagster (so a service that is down waits for it to come back). Read from the environment and
checked when an ingest starts; tests keep them small through the same variables.
"""

from __future__ import annotations

import math
import random
from collections.abc import Mapping
from dataclasses import dataclass

from loom_dagster.errors import SettingsError

ENV_ATTEMPTS = "LOOM_RETRY_ATTEMPTS"
ENV_DELAY = "LOOM_RETRY_DELAY_S"
DEFAULT_RETRIES = 4
DEFAULT_DELAY_S = 1.0
# The longest wait between two tries, however many came before.
MAX_DELAY_S = 300.0


@dataclass(frozen=True)
class RetrySettings:
    retries: int = DEFAULT_RETRIES  # tries after the first
    delay_s: float = DEFAULT_DELAY_S  # the first wait; each next one doubles, with jitter

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> RetrySettings:
        return cls(
            retries=_whole(env, ENV_ATTEMPTS, DEFAULT_RETRIES),
            delay_s=_seconds(env, ENV_DELAY, DEFAULT_DELAY_S),
        )

    def delay(self, retry: int) -> float:
        """The wait before retry number `retry` (0 for the first), jittered by +-50%."""
        base = min(self.delay_s * 2.0**retry, MAX_DELAY_S)
        return base * random.uniform(0.5, 1.5)


def _whole(env: Mapping[str, str], name: str, default: int) -> int:
    raw = (env.get(name) or "").strip()
    if not raw:
        return default
    if not raw.isdigit():
        raise SettingsError(f"{name} must be a whole number of retries (0 or more), not {raw!r}")
    return int(raw)


def _seconds(env: Mapping[str, str], name: str, default: float) -> float:
    raw = (env.get(name) or "").strip()
    if not raw:
        return default
    try:
        value = float(raw)
    except ValueError:
        raise SettingsError(f"{name} must be a number of seconds, not {raw!r}") from None
    if not math.isfinite(value) or value < 0:
        raise SettingsError(f"{name} must be a number of seconds, 0 or more, not {raw!r}")
    return value
