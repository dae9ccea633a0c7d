"""What each service says it extracts (GET /v1/capabilities), and which formats are
available given the routes: plain Python, no HTTP."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field

from loom_dagster.contract.formats import FORMATS

CONTRACT_VERSION = 1
# The longest parser name or version read from a capabilities answer (the artifact's bound).
MAX_PARSER_CHARS = 200

Availability = str  # "available" | "unavailable" | "unknown"


@dataclass(frozen=True)
class Capabilities:
    """What one service says it extracts (GET /v1/capabilities)."""

    contract_version: int
    max_bytes: int = 0
    formats: Mapping[str, frozenset[str]] = field(default_factory=dict)  # format -> options
    # format -> "parser version" as the service declares it for that format (an extension of
    # contract v1's answer); a format it gives none for has the extractor's "name version".
    parsers: Mapping[str, str] = field(default_factory=dict)
    # Extractions the service runs at once (an extension too); None when it does not say.
    slots: int | None = None

    def declares(self, fmt: str) -> bool:
        return self.contract_version == CONTRACT_VERSION and fmt in self.formats

    def parser_of(self, fmt: str) -> str | None:
        """What the service extracts `fmt` with now, "parser version"; None if not declared."""
        return self.parsers.get(fmt) if self.declares(fmt) else None


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
    slots = document.get("slots")
    if slots is not None and (isinstance(slots, bool) or not isinstance(slots, int) or slots < 1):
        raise NotCapabilities("slots is not a positive whole number")
    entries = document.get("formats")
    if not isinstance(entries, list):
        raise NotCapabilities("formats is not a list")
    formats: dict[str, frozenset[str]] = {}
    parsers: dict[str, str] = {}
    extractor = _label(document.get("extractor"), "name", "version", "extractor")
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
            own = _label(entry, "parser", "parser_version", f"formats[{index}]")
            if own or extractor:
                parsers[name] = own or extractor
    return Capabilities(
        contract_version=version,
        max_bytes=max_bytes,
        formats=formats,
        parsers=parsers,
        slots=slots,
    )


def _label(holder: object, name: str, version: str, where: str) -> str:
    """`"<name> <version>"` from an object's two string fields, "" when it has neither (they
    are optional); one without the other, or a value that is no short string, is refused."""
    if not isinstance(holder, dict):
        return ""
    values = holder.get(name), holder.get(version)
    if values == (None, None):
        return ""
    if not all(isinstance(v, str) and 0 < len(v) <= MAX_PARSER_CHARS for v in values):
        raise NotCapabilities(
            f"{where}: {name} and {version} must both be strings of 1 to {MAX_PARSER_CHARS} "
            "characters"
        )
    return f"{values[0]} {values[1]}"


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
