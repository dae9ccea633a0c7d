"""The extractor settings: where each format is extracted, with which token, within which
limits, and what the services themselves allow (contract v1). Plain Python: read from a mapping
of variables once, by whoever loads Loom's settings, and passed down."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, NoReturn
from urllib.parse import urlsplit

from loom_dagster.contract.formats import FORMATS, format_for_media_type
from loom_dagster.errors import SettingsError

ENV_URL = "LOOM_DOCUMENT_EXTRACTOR_URL"
ENV_ROUTES = "LOOM_DOCUMENT_EXTRACTORS_JSON"
ENV_TOKEN = "LOOM_DOCUMENT_EXTRACTOR_TOKEN"
ENV_TOKENS = "LOOM_DOCUMENT_EXTRACTOR_TOKENS_JSON"
ENV_TIMEOUT = "LOOM_DOCUMENT_EXTRACTOR_TIMEOUT_S"
ENV_MAX_ARTIFACT_BYTES = "LOOM_DOCUMENT_EXTRACTOR_MAX_ARTIFACT_BYTES"
DEFAULT_TIMEOUT_S = 60.0
DEFAULT_MAX_ARTIFACT_BYTES = 256 * 1024 * 1024
# The JSON settings are one flat object of strings (a route or a token per service): a few
# hundred bytes in practice. Past these bounds a value is not one, and is refused before decoding.
MAX_JSON_SETTING_CHARS = 64 * 1024
MAX_JSON_SETTING_DEPTH = 4


@dataclass(frozen=True)
class ExtractorSettings:
    """Where each format is extracted, with which token, within which limits.

    Constructing one validates and normalises it, whether from the environment (from_env) or
    directly: route keys become a format name or a media type's essence (lowercased, no
    parameters), URLs become `scheme://host[:port]`. An invalid value raises SettingsError
    naming the variable it came from.
    """

    default_url: str | None = None
    routes: Mapping[str, str] = field(default_factory=dict)  # format or media type -> base URL
    token: str | None = None
    tokens: Mapping[str, str] = field(default_factory=dict)  # base URL -> token
    timeout_s: float = DEFAULT_TIMEOUT_S
    max_artifact_bytes: int = DEFAULT_MAX_ARTIFACT_BYTES

    def __post_init__(self) -> None:
        default_url = None if self.default_url is None else _replicas(self.default_url, ENV_URL)
        routes = _routes(self.routes)
        token = None if self.token is None else _token(self.token, ENV_TOKEN)
        named = {url for group in (default_url or "", *routes.values()) for url in group.split()}
        tokens = _tokens(self.tokens, named=named)
        # Frozen, so normalised values are set the way dataclasses set them.
        object.__setattr__(self, "default_url", default_url)
        object.__setattr__(self, "routes", routes)
        object.__setattr__(self, "token", token)
        object.__setattr__(self, "tokens", tokens)
        object.__setattr__(self, "timeout_s", _positive_number(self.timeout_s, ENV_TIMEOUT))
        object.__setattr__(
            self,
            "max_artifact_bytes",
            _positive_int(self.max_artifact_bytes, ENV_MAX_ARTIFACT_BYTES),
        )

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> ExtractorSettings:
        """Read the LOOM_DOCUMENT_EXTRACTOR* variables; an empty variable counts as unset."""
        values: dict[str, Any] = {
            "default_url": _text(env, ENV_URL),
            "routes": _json_object_of_strings(env, ENV_ROUTES),
            "token": _text(env, ENV_TOKEN),
            "tokens": _json_object_of_strings(env, ENV_TOKENS, secret_values=True),
        }
        timeout = _text(env, ENV_TIMEOUT)
        if timeout is not None:
            values["timeout_s"] = _parse_number(timeout, ENV_TIMEOUT)
        max_bytes = _text(env, ENV_MAX_ARTIFACT_BYTES)
        if max_bytes is not None:
            values["max_artifact_bytes"] = _parse_int(max_bytes, ENV_MAX_ARTIFACT_BYTES)
        return cls(**values)

    def url_for(self, fmt: str, media_type: str | None = None) -> str | None:
        """The base URL a file of `fmt` goes to, or None when no extractor is configured for it;
        several replicas of one service are one value, their URLs separated by a space
        (`replicas` splits it).

        A route keyed by the format wins; then one keyed by the file's media type, but only
        when that media type names this very format; then the default URL.
        """
        if fmt in self.routes:
            return self.routes[fmt]
        if media_type:
            key = _media_type_key(media_type)
            if key in self.routes and format_for_media_type(key) == fmt:
                return self.routes[key]
        return self.default_url

    def token_for(self, url: str) -> str | None:
        """The service's own token, else the shared one, so no service holds another's token."""
        return self.tokens.get(_normalised_url(url), self.token)

    def held_by(self, env: Mapping[str, str]) -> bool:
        """Whether `env` holds exactly these tokens in LOOM_DOCUMENT_EXTRACTOR_TOKEN(S_JSON):
        the Dagster resource names those variables and reads them where it runs, never a
        token's value (which the UI would show)."""
        held = ExtractorSettings.from_env(
            {
                ENV_URL: self.default_url or "",
                ENV_ROUTES: json.dumps(dict(self.routes)),
                ENV_TOKEN: env.get(ENV_TOKEN, ""),
                ENV_TOKENS: env.get(ENV_TOKENS, ""),
            }
        )
        return held.token == self.token and dict(held.tokens) == dict(self.tokens)

    def urls(self) -> frozenset[str]:
        """Every base URL the settings name, each replica's own."""
        groups = [*self.routes.values(), *([self.default_url] if self.default_url else [])]
        return frozenset(url for group in groups for url in replicas(group))


def replicas(service: str) -> tuple[str, ...]:
    """The base URLs of the replicas `url_for` named (one for a service of one)."""
    return tuple(service.split())


def _refuse(variable: str, problem: str) -> NoReturn:
    raise SettingsError(f"{variable}: {problem}")


def shown(value: object, limit: int = 80) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _text(env: Mapping[str, str], variable: str) -> str | None:
    value = env.get(variable)
    if value is None or not value.strip():
        return None
    return value.strip()


def _json_object_of_strings(
    env: Mapping[str, str], variable: str, *, secret_values: bool = False
) -> dict[str, str]:
    raw = _text(env, variable)
    if raw is None:
        return {}
    # Checked before decoding: the decoder recurses per level and would end in RecursionError.
    if len(raw) > MAX_JSON_SETTING_CHARS:
        _refuse(
            variable, f"is {len(raw)} characters, over the {MAX_JSON_SETTING_CHARS} it may hold"
        )
    if _nests_deeper_than(raw, MAX_JSON_SETTING_DEPTH):
        _refuse(
            variable,
            f"nests deeper than {MAX_JSON_SETTING_DEPTH} levels (it is one JSON object of strings)",
        )
    try:
        document = json.loads(raw)
    except ValueError as exc:
        # JSONDecodeError's message names a position, never the content, so no token leaks.
        message = exc.msg if isinstance(exc, json.JSONDecodeError) else "invalid"
        _refuse(variable, f"is not JSON ({message})")
    if not isinstance(document, dict):
        _refuse(variable, f"is not a JSON object but {type(document).__name__}")
    for key, value in document.items():
        if not isinstance(value, str):
            said = "" if secret_values else f" {shown(value)}"
            _refuse(variable, f"the value of key {shown(key)}{said} is not a string")
    return document


def _nests_deeper_than(text: str, limit: int) -> bool:
    """Whether arrays and objects in `text` nest more than `limit` deep (brackets in strings do
    not count); any text, JSON or not, is scanned once without recursion."""
    depth = 0
    in_string = escaped = False
    for char in text:
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "[{":
            depth += 1
            if depth > limit:
                return True
        elif char in "]}":
            depth -= 1
    return False


def _parse_number(raw: str, variable: str) -> float:
    try:
        return float(raw)
    except ValueError:
        _refuse(variable, f"{shown(raw)} is not a number of seconds")


def _parse_int(raw: str, variable: str) -> int:
    if not raw.isdigit():
        _refuse(variable, f"{shown(raw)} is not a positive whole number of bytes")
    return int(raw)


def _positive_number(value: object, variable: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        _refuse(variable, f"{shown(value)} is not a number of seconds")
    if not math.isfinite(value) or value <= 0:
        _refuse(variable, f"{shown(value)} is not a positive number of seconds")
    return float(value)


def _positive_int(value: object, variable: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        _refuse(variable, f"{shown(value)} is not a positive whole number of bytes")
    return value


def _media_type_key(media_type: str) -> str:
    """A media type's essence: 'Text/Markdown; charset=utf-8' -> 'text/markdown'."""
    return media_type.split(";", 1)[0].strip().lower()


def _routes(routes: Mapping[str, str]) -> dict[str, str]:
    normalised: dict[str, str] = {}
    spelled: dict[str, str] = {}  # normalised key -> the key as written
    for key, url in routes.items():
        if not isinstance(key, str):
            _refuse(ENV_ROUTES, f"key {shown(key)} is not a string")
        name = _media_type_key(key)
        if name in FORMATS:
            kind = "format"
        elif "/" in name and format_for_media_type(name) is not None:
            kind = "media type"
        else:
            _refuse(ENV_ROUTES, f"key {shown(key)} names no format and no known media type")
        if name in spelled:
            _refuse(
                ENV_ROUTES,
                f"keys {shown(spelled[name])} and {shown(key)} are two spellings of one {kind}",
            )
        spelled[name] = key
        normalised[name] = _replicas(url, ENV_ROUTES, key=key)
    return normalised


# Replicas of one extractor, each run on its own host: a file goes to one, and to another when
# that one is unavailable. More than this many is a mistake, not a deployment.
MAX_REPLICAS = 32


def _replicas(value: object, variable: str, *, key: str | None = None) -> str:
    """One base URL, or several replicas' separated by spaces or commas: each checked and
    normalised, joined by one space."""
    where = "" if key is None else f"key {shown(key)}: "
    if not isinstance(value, str):
        _refuse(variable, f"{where}{shown(value)} is not a URL")
    urls = [_base_url(part, variable, key=key) for part in value.replace(",", " ").split()]
    if not urls:
        _refuse(variable, f"{where}names no URL")
    if len(urls) > MAX_REPLICAS:
        _refuse(variable, f"{where}names {len(urls)} replicas, over the {MAX_REPLICAS} allowed")
    if len(set(urls)) != len(urls):
        _refuse(variable, f"{where}names one replica twice")
    return " ".join(urls)


def _tokens(tokens: Mapping[str, str], *, named: set[str]) -> dict[str, str]:
    normalised: dict[str, str] = {}
    for url, token in tokens.items():
        base = _base_url(url, ENV_TOKENS, key=url)
        if base not in named:
            _refuse(
                ENV_TOKENS,
                f"URL {shown(url)} is named neither by {ENV_URL} nor by {ENV_ROUTES}",
            )
        if base in normalised:
            _refuse(ENV_TOKENS, f"URL {shown(url)} is listed twice")
        normalised[base] = _token(token, ENV_TOKENS, key=url)
    return normalised


def _token(token: object, variable: str, *, key: str | None = None) -> str:
    where = "the token" if key is None else f"the token for {shown(key)}"
    # Never echo a token: the message goes to logs and the UI.
    if not isinstance(token, str) or not token:
        _refuse(variable, f"{where} is empty or not a string")
    if any(char.isspace() or not char.isprintable() for char in token):
        _refuse(variable, f"{where} holds a space or a control character")
    return token


def _base_url(value: object, variable: str, *, key: str | None = None) -> str:
    """Check a base URL is `http(s)://host[:port]` and normalise it (lowercase, no '/')."""
    where = "" if key is None else f"key {shown(key)}: "
    if not isinstance(value, str):
        _refuse(variable, f"{where}{shown(value)} is not a URL")
    if "@" in value:
        # A password in a URL would end up in logs; tokens have their own settings.
        _refuse(variable, f"{where}a base URL must not carry credentials")
    try:
        parts = urlsplit(value.strip())
        port = parts.port
    except ValueError:
        _refuse(variable, f"{where}{shown(value)} is not an http(s)://host[:port] URL")
    if (
        parts.scheme.lower() not in ("http", "https")
        or not parts.hostname
        or parts.path not in ("", "/")
        or parts.query
        or parts.fragment
        or "?" in value
        or "#" in value
    ):
        _refuse(variable, f"{where}{shown(value)} is not an http(s)://host[:port] URL")
    host = parts.hostname.lower()
    if ":" in host:
        host = f"[{host}]"  # an IPv6 literal
    return f"{parts.scheme.lower()}://{host}" + ("" if port is None else f":{port}")


def _normalised_url(url: str) -> str:
    try:
        return _base_url(url, "url")
    except SettingsError:
        return url


ENV_SERVICE_TIMEOUT = "LOOM_EXTRACTOR_TIMEOUT_S"
ENV_SERVICE_CONCURRENCY = "LOOM_EXTRACTOR_CONCURRENCY"
ENV_SERVICE_MAX_BYTES = "LOOM_EXTRACTOR_MAX_BYTES"
# The reference service's own defaults (extractor_sandbox/settings.py), which this package may
# not import: 120 s for one extraction, one at a time.
DEFAULT_SERVICE_TIME_LIMIT_S = 120.0
DEFAULT_SERVICE_SLOTS = 1
# The largest original the reference service takes (its capabilities' `max_bytes`): a file
# larger is refused `too_large` from its size, before a byte of it is read or stored.
DEFAULT_SERVICE_MAX_BYTES = 64 * 1024 * 1024


@dataclass(frozen=True)
class ServiceLimits:
    """What the extraction services allow, as far as the client must know (contract v1's
    capabilities do not declare them): how long one extraction may take there, and how many
    run at once. Read from the services' own LOOM_EXTRACTOR_* variables, which the local
    default service is started with too."""

    time_limit_s: float = DEFAULT_SERVICE_TIME_LIMIT_S
    slots: int = DEFAULT_SERVICE_SLOTS
    max_bytes: int = DEFAULT_SERVICE_MAX_BYTES

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> ServiceLimits:
        values: dict[str, Any] = {}
        raw = _text(env, ENV_SERVICE_TIMEOUT)
        if raw is not None:
            values["time_limit_s"] = _positive_number(
                _parse_number(raw, ENV_SERVICE_TIMEOUT), ENV_SERVICE_TIMEOUT
            )
        raw = _text(env, ENV_SERVICE_CONCURRENCY)
        if raw is not None:
            if not raw.isdigit() or int(raw) < 1:
                _refuse(ENV_SERVICE_CONCURRENCY, f"{shown(raw)} is not a positive whole number")
            values["slots"] = int(raw)
        raw = _text(env, ENV_SERVICE_MAX_BYTES)
        if raw is not None:
            if not raw.isdigit() or int(raw) < 1:
                _refuse(ENV_SERVICE_MAX_BYTES, f"{shown(raw)} is not a positive whole number")
            values["max_bytes"] = int(raw)
        return cls(**values)

    def extract_deadline_s(self, configured_s: float) -> float:
        """The client's bound on one extraction: never shorter than the service's own limit
        plus a margin for sending and reading back, so a file the service would still finish
        (or refuse as `timeout`, a coded outcome) is not cut off as "unavailable" and retried
        for ever."""
        return max(configured_s, self.time_limit_s * 1.1 + 1.0)
