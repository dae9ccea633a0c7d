"""Reading one variable of a settings mapping (the environment, read once by LoomSettings)."""

from __future__ import annotations

from collections.abc import Mapping

from loom_dagster.errors import SettingsError


def positive_int(env: Mapping[str, str], name: str, default: int) -> int:
    return _whole(env, name, default, least=1, wrong="a positive whole number")


def whole_number(env: Mapping[str, str], name: str, default: int, zero: str) -> int:
    """A setting of 0 or more, where 0 means `zero` (said in its error)."""
    return _whole(env, name, default, least=0, wrong=f"a whole number, 0 or more (0: {zero})")


def _whole(env: Mapping[str, str], name: str, default: int, *, least: int, wrong: str) -> int:
    """`name`'s whole number, at least `least` (`default` when unset or empty); the error says
    it must be `wrong`."""
    raw = env.get(name)
    if raw is None or raw == "":
        return default
    try:
        value = int(raw)
    except ValueError:
        raise SettingsError(f"{name} must be {wrong}, not {raw!r}") from None
    if value < least:
        raise SettingsError(f"{name} must be {wrong}, not {raw!r}")
    return value
