"""What each service says it extracts (GET /v1/capabilities), and which formats are
available given the routes: plain Python, no HTTP."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field

from loom_dagster.contract.formats import FORMATS

CONTRACT_VERSION = 1

Availability = str  # "available" | "unavailable" | "unknown"


@dataclass(frozen=True)
class Capabilities:
    """What one service says it extracts (GET /v1/capabilities)."""

    contract_version: int
    max_bytes: int = 0
    formats: Mapping[str, frozenset[str]] = field(default_factory=dict)  # format -> options

    def declares(self, fmt: str) -> bool:
        return self.contract_version == CONTRACT_VERSION and fmt in self.formats


class NotCapabilities(ValueError):
    """A capabilities body that is not the contract's shape."""


def parse_capabilities(raw: bytes) -> Capabilities:
    """Read a capabilities document; raises NotCapabilities naming the first problem.

    A service of another contract version is read no further: its fields may mean other things.
    A format name this server does not know is ignored, so a newer service can declare more.
    """
    try:
        document = json.loads(raw)
    except ValueError as exc:  # also UnicodeDecodeError
        raise NotCapabilities("not JSON") from exc
    if not isinstance(document, dict):
        raise NotCapabilities("not a JSON object")
    version = document.get("contract_version")
    if isinstance(version, bool) or not isinstance(version, int):
        raise NotCapabilities("contract_version is not an integer")
    if version != CONTRACT_VERSION:
        return Capabilities(contract_version=version)
    max_bytes = document.get("max_bytes")
    if isinstance(max_bytes, bool) or not isinstance(max_bytes, int) or max_bytes < 0:
        raise NotCapabilities("max_bytes is not a whole number of bytes")
    entries = document.get("formats")
    if not isinstance(entries, list):
        raise NotCapabilities("formats is not a list")
    formats: dict[str, frozenset[str]] = {}
    for index, entry in enumerate(entries):
        if not isinstance(entry, dict) or not isinstance(entry.get("format"), str):
            raise NotCapabilities(f"formats[{index}] has no format name")
        options = entry.get("options", [])
        if not isinstance(options, list) or not all(isinstance(o, str) for o in options):
            raise NotCapabilities(f"formats[{index}].options is not a list of strings")
        name = entry["format"]
        if name in formats:
            raise NotCapabilities(f"formats[{index}]: {name!r} is listed twice")
        if name in FORMATS:
            formats[name] = frozenset(options)
    return Capabilities(contract_version=version, max_bytes=max_bytes, formats=formats)


@dataclass(frozen=True)
class CapabilitiesRead:
    """The last capabilities read of one service: what it said, or None when it failed."""

    at: float  # time.monotonic()
    capabilities: Capabilities | None


def availability(
    fmt: str, urls: set[str], declarations: Mapping[str, Capabilities | None]
) -> Availability:
    said = [declarations[url] for url in urls]
    if any(capabilities is not None and capabilities.declares(fmt) for capabilities in said):
        return "available"
    if any(capabilities is None for capabilities in said):
        return "unknown"
    return "unavailable"
