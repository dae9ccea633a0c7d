"""Reading one variable of a settings mapping (the environment, read once by LoomSettings)."""

from __future__ import annotations

from collections.abc import Mapping

from loom_dagster.errors import SettingsError


def positive_int(env: Mapping[str, str], name: str, default: int) -> int:
    raw = env.get(name)
    if raw is None or raw == "":
        return default
    try:
        value = int(raw)
    except ValueError:
        raise SettingsError(f"{name} must be a positive whole number, not {raw!r}") from None
    if value < 1:
        raise SettingsError(f"{name} must be a positive whole number, not {raw!r}")
    return value


def whole_number(env: Mapping[str, str], name: str, default: int, zero: str) -> int:
    """A setting of 0 or more, where 0 means `zero` (said in its error)."""
    raw = env.get(name)
    if raw is None or raw == "":
        return default
    try:
        value = int(raw)
    except ValueError:
        value = -1
    if value < 0:
        raise SettingsError(f"{name} must be a whole number, 0 or more (0: {zero}), not {raw!r}")
    return value
