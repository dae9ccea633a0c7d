"""The server's side of the extractor contract v1: routing settings, the HTTP client, and how
an answer maps to an artifact or to a typed failure.

The client fails closed (document extraction, "Fail closed."): anything that says the service
cannot be used right now (unreachable, past the timeout, a refused token, 408, 429, a 5xx, any
answer that is neither 200 nor 4xx, a compressed answer, format_unavailable) raises
ExtractorUnavailable, which is retryable; a source the service refuses raises
ExtractionFailed with the contract's code; an artifact that breaks the contract raises
ExtractionFailed("invalid_artifact") from parse_artifact. There is no in-process fallback.

Everything above ExtractorResource is plain Python; Dagster only wraps it at the bottom.
"""

from __future__ import annotations

import json
import math
import os
import re
import socket
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor, wait
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import dataclass, field
from typing import Any, NoReturn
from urllib.parse import urlsplit

import dagster as dg
import httpx

from loom_dagster.contract.artifact import Artifact
from loom_dagster.contract.formats import FORMATS, format_for_media_type, format_of
from loom_dagster.contract.validate import parse_artifact
from loom_dagster.errors import ExtractionFailed, ExtractorUnavailable, SettingsError
from loom_dagster.resources.local_extractor import reference_extractor

ENV_URL = "LOOM_DOCUMENT_EXTRACTOR_URL"
ENV_ROUTES = "LOOM_DOCUMENT_EXTRACTORS_JSON"
ENV_TOKEN = "LOOM_DOCUMENT_EXTRACTOR_TOKEN"
ENV_TOKENS = "LOOM_DOCUMENT_EXTRACTOR_TOKENS_JSON"
ENV_TIMEOUT = "LOOM_DOCUMENT_EXTRACTOR_TIMEOUT_S"
ENV_MAX_ARTIFACT_BYTES = "LOOM_DOCUMENT_EXTRACTOR_MAX_ARTIFACT_BYTES"

CONTRACT_VERSION = 1
DEFAULT_TIMEOUT_S = 60.0
DEFAULT_MAX_ARTIFACT_BYTES = 256 * 1024 * 1024
MAX_ERROR_BODY_BYTES = 64 * 1024
# A capabilities document lists at most a few dozen formats; anything near this is not one.
MAX_CAPABILITIES_BYTES = 1024 * 1024
# Answers that mean "this service cannot be used now", not "this source is refused".
UNAVAILABLE_4XX = frozenset({401, 403, 407, 408, 429})
# The JSON settings are one flat object of strings (a route or a token per service): a few
# hundred bytes in practice. Past these bounds a value is not one, and is refused before decoding.
MAX_JSON_SETTING_CHARS = 64 * 1024
MAX_JSON_SETTING_DEPTH = 4
# Query parameters the client sets itself; a caller's option may not replace them.
RESERVED_PARAMETERS = frozenset({"format", "name"})

_ERROR_CODE = re.compile(r"[a-z_]{1,40}")

Availability = str  # "available" | "unavailable" | "unknown"


# --------------------------------------------------------------------------------------------
# Settings
# --------------------------------------------------------------------------------------------


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
        default_url = None if self.default_url is None else _base_url(self.default_url, ENV_URL)
        routes = _routes(self.routes)
        token = None if self.token is None else _token(self.token, ENV_TOKEN)
        tokens = _tokens(self.tokens, named={default_url, *routes.values()})
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
        """The base URL a file of `fmt` goes to, or None when no extractor is configured for it.

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

    def urls(self) -> frozenset[str]:
        """Every base URL the settings name."""
        named = set(self.routes.values())
        if self.default_url is not None:
            named.add(self.default_url)
        return frozenset(named)


def _refuse(variable: str, problem: str) -> NoReturn:
    raise SettingsError(f"{variable}: {problem}")


def _shown(value: object, limit: int = 80) -> str:
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
            shown = "" if secret_values else f" {_shown(value)}"
            _refuse(variable, f"the value of key {_shown(key)}{shown} is not a string")
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
        _refuse(variable, f"{_shown(raw)} is not a number of seconds")


def _parse_int(raw: str, variable: str) -> int:
    if not raw.isdigit():
        _refuse(variable, f"{_shown(raw)} is not a positive whole number of bytes")
    return int(raw)


def _positive_number(value: object, variable: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        _refuse(variable, f"{_shown(value)} is not a number of seconds")
    if not math.isfinite(value) or value <= 0:
        _refuse(variable, f"{_shown(value)} is not a positive number of seconds")
    return float(value)


def _positive_int(value: object, variable: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        _refuse(variable, f"{_shown(value)} is not a positive whole number of bytes")
    return value


def _media_type_key(media_type: str) -> str:
    """A media type's essence: 'Text/Markdown; charset=utf-8' -> 'text/markdown'."""
    return media_type.split(";", 1)[0].strip().lower()


def _routes(routes: Mapping[str, str]) -> dict[str, str]:
    normalised: dict[str, str] = {}
    spelled: dict[str, str] = {}  # normalised key -> the key as written
    for key, url in routes.items():
        if not isinstance(key, str):
            _refuse(ENV_ROUTES, f"key {_shown(key)} is not a string")
        name = _media_type_key(key)
        if name in FORMATS:
            kind = "format"
        elif "/" in name and format_for_media_type(name) is not None:
            kind = "media type"
        else:
            _refuse(ENV_ROUTES, f"key {_shown(key)} names no format and no known media type")
        if name in spelled:
            _refuse(
                ENV_ROUTES,
                f"keys {_shown(spelled[name])} and {_shown(key)} are two spellings of one {kind}",
            )
        spelled[name] = key
        normalised[name] = _base_url(url, ENV_ROUTES, key=key)
    return normalised


def _tokens(tokens: Mapping[str, str], *, named: set[str | None]) -> dict[str, str]:
    normalised: dict[str, str] = {}
    for url, token in tokens.items():
        base = _base_url(url, ENV_TOKENS, key=url)
        if base not in named:
            _refuse(
                ENV_TOKENS,
                f"URL {_shown(url)} is named neither by {ENV_URL} nor by {ENV_ROUTES}",
            )
        if base in normalised:
            _refuse(ENV_TOKENS, f"URL {_shown(url)} is listed twice")
        normalised[base] = _token(token, ENV_TOKENS, key=url)
    return normalised


def _token(token: object, variable: str, *, key: str | None = None) -> str:
    where = "the token" if key is None else f"the token for {_shown(key)}"
    # Never echo a token: the message goes to logs and the UI.
    if not isinstance(token, str) or not token:
        _refuse(variable, f"{where} is empty or not a string")
    if any(char.isspace() or not char.isprintable() for char in token):
        _refuse(variable, f"{where} holds a space or a control character")
    return token


def _base_url(value: object, variable: str, *, key: str | None = None) -> str:
    """Check a base URL is `http(s)://host[:port]` and normalise it (lowercase, no '/')."""
    where = "" if key is None else f"key {_shown(key)}: "
    if not isinstance(value, str):
        _refuse(variable, f"{where}{_shown(value)} is not a URL")
    if "@" in value:
        # A password in a URL would end up in logs; tokens have their own settings.
        _refuse(variable, f"{where}a base URL must not carry credentials")
    try:
        parts = urlsplit(value.strip())
        port = parts.port
    except ValueError:
        _refuse(variable, f"{where}{_shown(value)} is not an http(s)://host[:port] URL")
    if (
        parts.scheme.lower() not in ("http", "https")
        or not parts.hostname
        or parts.path not in ("", "/")
        or parts.query
        or parts.fragment
        or "?" in value
        or "#" in value
    ):
        _refuse(variable, f"{where}{_shown(value)} is not an http(s)://host[:port] URL")
    host = parts.hostname.lower()
    if ":" in host:
        host = f"[{host}]"  # an IPv6 literal
    return f"{parts.scheme.lower()}://{host}" + ("" if port is None else f":{port}")


def _normalised_url(url: str) -> str:
    try:
        return _base_url(url, "url")
    except SettingsError:
        return url


# --------------------------------------------------------------------------------------------
# Capabilities
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Capabilities:
    """What one service says it extracts (GET /v1/capabilities)."""

    contract_version: int
    max_bytes: int = 0
    formats: Mapping[str, frozenset[str]] = field(default_factory=dict)  # format -> options

    def declares(self, fmt: str) -> bool:
        return self.contract_version == CONTRACT_VERSION and fmt in self.formats


class _NotCapabilities(ValueError):
    """A capabilities body that is not the contract's shape."""


def parse_capabilities(raw: bytes) -> Capabilities:
    """Read a capabilities document; raises _NotCapabilities naming the first problem.

    A service of another contract version is read no further: its fields may mean other things.
    A format name this server does not know is ignored, so a newer service can declare more.
    """
    try:
        document = json.loads(raw)
    except ValueError as exc:  # also UnicodeDecodeError
        raise _NotCapabilities("not JSON") from exc
    if not isinstance(document, dict):
        raise _NotCapabilities("not a JSON object")
    version = document.get("contract_version")
    if isinstance(version, bool) or not isinstance(version, int):
        raise _NotCapabilities("contract_version is not an integer")
    if version != CONTRACT_VERSION:
        return Capabilities(contract_version=version)
    max_bytes = document.get("max_bytes")
    if isinstance(max_bytes, bool) or not isinstance(max_bytes, int) or max_bytes < 0:
        raise _NotCapabilities("max_bytes is not a whole number of bytes")
    entries = document.get("formats")
    if not isinstance(entries, list):
        raise _NotCapabilities("formats is not a list")
    formats: dict[str, frozenset[str]] = {}
    for index, entry in enumerate(entries):
        if not isinstance(entry, dict) or not isinstance(entry.get("format"), str):
            raise _NotCapabilities(f"formats[{index}] has no format name")
        options = entry.get("options", [])
        if not isinstance(options, list) or not all(isinstance(o, str) for o in options):
            raise _NotCapabilities(f"formats[{index}].options is not a list of strings")
        name = entry["format"]
        if name in formats:
            raise _NotCapabilities(f"formats[{index}]: {name!r} is listed twice")
        if name in FORMATS:
            formats[name] = frozenset(options)
    return Capabilities(contract_version=version, max_bytes=max_bytes, formats=formats)


@dataclass(frozen=True)
class _CapabilitiesRead:
    """The last capabilities read of one service: what it said, or None when it failed."""

    at: float  # time.monotonic()
    capabilities: Capabilities | None


# --------------------------------------------------------------------------------------------
# One HTTP call, bounded as a whole
# --------------------------------------------------------------------------------------------


class _Watchdog:
    """Shuts a call's socket down at its deadline, so no phase of the call outlives it.

    httpx's timeouts are per phase (connect, each write, each read): a service that trickles
    bytes slower than the timeout but faster than each read's limit would hold a call open
    indefinitely. The socket is learnt from httpcore's documented `trace` extension when the
    connection is made; shutting it down wakes whichever read or write is blocked on it.
    """

    def __init__(self, deadline: float) -> None:
        self._lock = threading.Lock()
        self._socket: socket.socket | None = None
        self.expired = False
        self._done = False
        self._timer = threading.Timer(max(0.0, deadline - time.monotonic()), self._expire)
        self._timer.daemon = True

    def start(self) -> None:
        self._timer.start()

    def stop(self) -> None:
        self._timer.cancel()
        with self._lock:
            self._done = True
            self._socket = None

    def trace(self, event: str, info: Mapping[str, Any]) -> None:
        if event != "connection.connect_tcp.complete":
            return
        stream = info.get("return_value")
        sock = None if stream is None else stream.get_extra_info("socket")
        with self._lock:
            if self._done:
                return
            self._socket = sock
            expired = self.expired
        if expired and sock is not None:
            _shut_down(sock)

    def _expire(self) -> None:
        with self._lock:
            if self._done:
                return
            self.expired = True
            sock = self._socket
        if sock is not None:
            _shut_down(sock)


def _shut_down(sock: socket.socket) -> None:
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass  # already closed: the call ended on its own


class _Answer:
    """A service's answer whose body has not been read yet."""

    def __init__(self, url: str, response: httpx.Response, deadline: float) -> None:
        self.url = url
        self.status = response.status_code
        self.headers = response.headers
        self._response = response
        self._deadline = deadline

    def read(self, limit: int) -> bytes | None:
        """The body, or None as soon as it is longer than `limit` bytes (the rest is not read).

        The raw bytes are read, never decoded: a compressed answer is refused before this.
        """
        declared = self.headers.get("content-length", "")
        if declared.isdigit() and int(declared) > limit:
            return None
        body = bytearray()
        # iter_raw() with no chunk size yields each read as it arrives (a chunk size would
        # buffer up to it), so the deadline is checked after every read.
        for chunk in self._response.iter_raw():
            body += chunk
            if len(body) > limit:
                return None
            if time.monotonic() > self._deadline:
                raise _past_deadline(self.url)
        return bytes(body)


def _past_deadline(url: str) -> ExtractorUnavailable:
    return ExtractorUnavailable(f"the extractor at {url} did not answer within the timeout")


def _unavailable(url: str, why: str) -> ExtractorUnavailable:
    return ExtractorUnavailable(f"the extractor at {url} {why}")


def _one_line(text: str, limit: int = 300) -> str:
    """An untrusted message made safe for a log line: one line, printable, bounded."""
    cleaned = "".join(char if char.isprintable() else " " for char in text)
    cleaned = " ".join(cleaned.split())
    return cleaned if len(cleaned) <= limit else cleaned[: limit - 3] + "..."


# --------------------------------------------------------------------------------------------
# The client
# --------------------------------------------------------------------------------------------


ENV_SERVICE_TIMEOUT = "LOOM_EXTRACTOR_TIMEOUT_S"
ENV_SERVICE_CONCURRENCY = "LOOM_EXTRACTOR_CONCURRENCY"
# The reference service's own defaults (extractor_sandbox/settings.py), which this package may
# not import: 120 s for one extraction, one at a time.
DEFAULT_SERVICE_TIME_LIMIT_S = 120.0
DEFAULT_SERVICE_SLOTS = 1


@dataclass(frozen=True)
class ServiceLimits:
    """What the extraction services allow, as far as the client must know (contract v1's
    capabilities do not declare them): how long one extraction may take there, and how many
    run at once. Read from the services' own LOOM_EXTRACTOR_* variables, which the local
    default service is started with too."""

    time_limit_s: float = DEFAULT_SERVICE_TIME_LIMIT_S
    slots: int = DEFAULT_SERVICE_SLOTS

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
                _refuse(ENV_SERVICE_CONCURRENCY, f"{_shown(raw)} is not a positive whole number")
            values["slots"] = int(raw)
        return cls(**values)

    def extract_deadline_s(self, configured_s: float) -> float:
        """The client's bound on one extraction: never shorter than the service's own limit
        plus a margin for sending and reading back, so a file the service would still finish
        (or refuse as `timeout`, a coded outcome) is not cut off as "unavailable" and retried
        for ever."""
        return max(configured_s, self.time_limit_s * 1.1 + 1.0)


class ExtractorClient:
    """Sends originals to the extractor their format is routed to and reads artifacts back.

    Safe to share between threads. Capabilities are cached per service for
    `capabilities_ttl_s`; available_formats reads the services together within
    `capabilities_deadline_s`. Given the services' `limits` (the pipeline always gives them),
    at most `limits.slots` extractions are in flight per service, an extraction's deadline
    starts once it has its slot, so a wait in the queue is never counted as the file's own
    time, and that deadline outlasts the service's own time limit; without them, each call is
    bounded by the configured timeout alone.
    """

    def __init__(
        self,
        settings: ExtractorSettings,
        *,
        capabilities_ttl_s: float = 60.0,
        capabilities_deadline_s: float = 5.0,
        limits: ServiceLimits | None = None,
    ) -> None:
        self.settings = settings
        self.limits = limits
        self._slots: dict[str, threading.BoundedSemaphore] = {}
        self._ttl_s = capabilities_ttl_s
        self._deadline_s = capabilities_deadline_s
        self._reads: dict[str, _CapabilitiesRead] = {}
        self._lock = threading.Lock()
        self._http = httpx.Client(
            follow_redirects=False,  # a redirect is an answer that is not 200 or 4xx
            # trust_env stays on: an operator's HTTP(S)_PROXY and CA bundle apply (a 407 from
            # such a proxy reads as the service being unavailable).
            # A fresh connection per call, so the watchdog always knows the call's socket.
            limits=httpx.Limits(max_connections=None, max_keepalive_connections=0),
        )

    def __enter__(self) -> ExtractorClient:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        self._http.close()

    # -- extraction ---------------------------------------------------------------------------

    def extract(
        self,
        data: bytes,
        *,
        name: str,
        declared_format: str | None = None,
        media_type: str | None = None,
        options: Mapping[str, str] | None = None,
    ) -> Artifact:
        """Extract one original; raises ExtractorUnavailable (retry later) or ExtractionFailed."""
        fmt = format_of(name, declared_format=declared_format, media_type=media_type)
        url = self.settings.url_for(fmt, media_type)
        if url is None:
            raise ExtractionFailed("format_unavailable", f"no extractor is configured for {fmt}")
        capabilities = self._capabilities(url)
        if capabilities.contract_version != CONTRACT_VERSION:
            raise _unavailable(
                url, f"speaks contract version {capabilities.contract_version}, not 1"
            )
        if not capabilities.declares(fmt):
            raise ExtractionFailed(
                "format_unavailable", f"the extractor at {url} does not declare {fmt}"
            )
        if len(data) > capabilities.max_bytes:
            raise ExtractionFailed(
                "too_large",
                f"the original is {len(data)} bytes, over the {capabilities.max_bytes} "
                f"the extractor at {url} takes",
            )
        params = {"format": fmt, "name": _query_safe(name)}
        for option, value in sorted((options or {}).items()):
            if option in RESERVED_PARAMETERS or option not in capabilities.formats[fmt]:
                raise ExtractionFailed(
                    "invalid_option", f"the extractor at {url} takes no option {option!r} for {fmt}"
                )
            params[option] = value

        with self._slot(url):
            timeout_s = self.settings.timeout_s
            if self.limits is not None:
                timeout_s = self.limits.extract_deadline_s(timeout_s)
            deadline = time.monotonic() + timeout_s
            call = self._exchange("POST", url, "/v1/extract", deadline, params=params, content=data)
            with call as answer:
                return self._artifact_from(answer, fmt=fmt, original_size=len(data))

    def _slot(self, url: str) -> AbstractContextManager[object]:
        if self.limits is None:
            return nullcontext()
        with self._lock:
            if url not in self._slots:
                self._slots[url] = threading.BoundedSemaphore(self.limits.slots)
            return self._slots[url]

    def _artifact_from(self, answer: _Answer, *, fmt: str, original_size: int) -> Artifact:
        _refuse_compressed(answer)
        if answer.status == 200:
            body = answer.read(self.settings.max_artifact_bytes)
            if body is None:
                raise ExtractionFailed(
                    "resource_limit",
                    f"the artifact from {answer.url} is longer than "
                    f"{self.settings.max_artifact_bytes} bytes ({ENV_MAX_ARTIFACT_BYTES})",
                )
            return parse_artifact(body, expected_format=fmt, original_size=original_size)
        if 400 <= answer.status < 500 and answer.status not in UNAVAILABLE_4XX:
            code, message = _refusal(answer)
            if code == "format_unavailable":
                # The service takes the format no more (its capabilities changed): retry later.
                raise _unavailable(answer.url, f"answered {answer.status} format_unavailable")
            raise ExtractionFailed(code, message)
        raise _unavailable(answer.url, _why_unusable(answer.status))

    # -- capabilities -------------------------------------------------------------------------

    def available_formats(self, media_types: Sequence[str] = ()) -> dict[str, Availability]:
        """Every format: "available", "unavailable" or "unknown" (its service cannot be read).

        A format is available when a service a file of it can go to declares it; the media
        types' routes count only for the media types given (those an upload carries).
        """
        candidates = {fmt: self._urls_a_file_can_go_to(fmt, media_types) for fmt in FORMATS}
        urls = sorted({url for urls in candidates.values() for url in urls})
        declarations = self._declarations(urls)
        return {fmt: _availability(fmt, candidates[fmt], declarations) for fmt in FORMATS}

    def _urls_a_file_can_go_to(self, fmt: str, media_types: Sequence[str]) -> set[str]:
        urls = {self.settings.url_for(fmt)}
        for media_type in media_types:
            if format_for_media_type(media_type) == fmt:
                urls.add(self.settings.url_for(fmt, media_type))
        return {url for url in urls if url is not None}

    def _declarations(self, urls: Sequence[str]) -> dict[str, Capabilities | None]:
        """What each service declares, None when it cannot be read; together, within the deadline.

        A service that could not be read is not asked again until its mark is older than the
        cache's lifetime, unless a read of it (by an extraction) succeeds meanwhile.
        """
        now = time.monotonic()
        deadline = now + self._deadline_s
        declarations: dict[str, Capabilities | None] = {}
        to_read = []
        for url in urls:
            read = self._fresh_read(url, now)
            if read is None:
                to_read.append(url)
            else:
                declarations[url] = read.capabilities
        if not to_read:
            return declarations

        call_deadline = min(deadline, now + self.settings.timeout_s)
        pool = ThreadPoolExecutor(max_workers=len(to_read), thread_name_prefix="capabilities")
        try:
            futures = {pool.submit(self._try_read, url, call_deadline): url for url in to_read}
            # Each read is bounded by its own deadline; the small grace is for thread switching.
            wait(futures, timeout=max(0.0, call_deadline - time.monotonic()) + 0.5)
            for future, url in futures.items():
                if future.done():
                    declarations[url] = future.result()
                else:
                    self._record(url, None)
                    declarations[url] = None
        finally:
            pool.shutdown(wait=False, cancel_futures=True)
        return declarations

    def _try_read(self, url: str, deadline: float) -> Capabilities | None:
        try:
            return self._read_capabilities(url, deadline)
        except ExtractorUnavailable:
            return None

    def _capabilities(self, url: str) -> Capabilities:
        """The service's capabilities: cached when read successfully within the lifetime."""
        read = self._fresh_read(url, time.monotonic())
        if read is not None and read.capabilities is not None:
            return read.capabilities
        return self._read_capabilities(url, time.monotonic() + self.settings.timeout_s)

    def _fresh_read(self, url: str, now: float) -> _CapabilitiesRead | None:
        with self._lock:
            read = self._reads.get(url)
        if read is None or now - read.at >= self._ttl_s:
            return None
        return read

    def _record(self, url: str, capabilities: Capabilities | None) -> None:
        with self._lock:
            self._reads[url] = _CapabilitiesRead(at=time.monotonic(), capabilities=capabilities)

    def _read_capabilities(self, url: str, deadline: float) -> Capabilities:
        """GET /v1/capabilities; records the outcome (a failure never as success)."""
        try:
            with self._exchange("GET", url, "/v1/capabilities", deadline) as answer:
                capabilities = _capabilities_from(answer)
        except ExtractorUnavailable:
            self._record(url, None)
            raise
        self._record(url, capabilities)
        return capabilities

    # -- HTTP ---------------------------------------------------------------------------------

    @contextmanager
    def _exchange(
        self,
        method: str,
        url: str,
        path: str,
        deadline: float,
        *,
        params: Mapping[str, str] | None = None,
        content: bytes | None = None,
    ) -> Iterator[_Answer]:
        """One call to a service, bounded as a whole by `deadline` (time.monotonic()).

        Any transport failure inside, while sending or while the caller reads the body, becomes
        ExtractorUnavailable naming the URL and why.
        """
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise _past_deadline(url)
        headers = {"Accept-Encoding": "identity"}
        token = self.settings.token_for(url)
        if token is not None:
            headers["Authorization"] = f"Bearer {token}"
        if content is not None:
            headers["Content-Type"] = "application/octet-stream"
        watchdog = _Watchdog(deadline)
        request = self._http.build_request(
            method,
            url + path,
            params=params,
            content=content,
            headers=headers,
            timeout=httpx.Timeout(remaining),
            extensions={"trace": watchdog.trace},
        )
        watchdog.start()
        try:
            response = self._http.send(request, stream=True)
            try:
                yield _Answer(url, response, deadline)
            finally:
                response.close()
        except httpx.TransportError as exc:
            if watchdog.expired or isinstance(exc, httpx.TimeoutException):
                raise _past_deadline(url) from exc
            reason = _one_line(str(exc)) or type(exc).__name__
            if isinstance(exc, httpx.ConnectError):
                raise _unavailable(url, f"cannot be reached ({reason})") from exc
            raise _unavailable(url, f"broke off the call ({reason})") from exc
        finally:
            watchdog.stop()


def _query_safe(name: str) -> str:
    # A name read from disk may hold surrogate escapes, which have no UTF-8 spelling.
    return name.encode("utf-8", "replace").decode("utf-8")


def _refuse_compressed(answer: _Answer) -> None:
    encodings = answer.headers.get_list("content-encoding")
    if any(encoding.strip().lower() != "identity" for encoding in encodings):
        raise _unavailable(
            answer.url,
            f"sent a compressed answer (Content-Encoding: {_one_line(', '.join(encodings), 60)})",
        )


def _why_unusable(status: int) -> str:
    if status in (401, 403, 407):
        return f"refused the server's token ({status})"
    if 300 <= status < 400:
        return f"answered a redirect ({status}), which is not followed"
    return f"answered {status}"


def _refusal(answer: _Answer) -> tuple[str, str]:
    """The code and message of a 4xx error body; `refused` when it is not the contract's shape."""
    prefix = f"the extractor at {answer.url} refused the source ({answer.status})"
    body = answer.read(MAX_ERROR_BODY_BYTES)
    if body is None:
        return "refused", f"{prefix}: its error body is over {MAX_ERROR_BODY_BYTES} bytes"
    try:
        document = json.loads(body)
    except ValueError:  # also UnicodeDecodeError
        return "refused", f"{prefix}: its error body is not JSON"
    error = document.get("error") if isinstance(document, dict) else None
    if not isinstance(error, dict) or not isinstance(error.get("message", ""), str):
        return "refused", f"{prefix}: its error body is not the contract's error shape"
    code, message = error.get("code"), _one_line(error.get("message", ""))
    if not isinstance(code, str) or not _ERROR_CODE.fullmatch(code):
        return "refused", f"{prefix} with a code outside the contract: {_shown(code, 60)}"
    # The service's own words are what a user needs; where it came from is in the run's log.
    return code, message or prefix


def _capabilities_from(answer: _Answer) -> Capabilities:
    _refuse_compressed(answer)
    if answer.status != 200:
        raise _unavailable(answer.url, _why_unusable(answer.status) + " to /v1/capabilities")
    body = answer.read(MAX_CAPABILITIES_BYTES)
    if body is None:
        raise _unavailable(answer.url, f"sent capabilities over {MAX_CAPABILITIES_BYTES} bytes")
    try:
        return parse_capabilities(body)
    except _NotCapabilities as exc:
        raise _unavailable(
            answer.url, f"sent capabilities that are not the contract's: {exc}"
        ) from exc


def _availability(
    fmt: str, urls: set[str], declarations: Mapping[str, Capabilities | None]
) -> Availability:
    said = [declarations[url] for url in urls]
    if any(capabilities is not None and capabilities.declares(fmt) for capabilities in said):
        return "available"
    if any(capabilities is None for capabilities in said):
        return "unknown"
    return "unavailable"


# --------------------------------------------------------------------------------------------
# Dagster
# --------------------------------------------------------------------------------------------


@contextmanager
def configured_or_local(settings: ExtractorSettings) -> Iterator[ExtractorSettings]:
    """The configured extractors or, with none configured, the local default: a reference
    service started on loopback with a fresh token for the block's duration (a separate
    process, never in-process parsing)."""
    if settings.default_url or settings.routes:
        yield settings
        return
    with reference_extractor() as running:
        yield ExtractorSettings.from_env({ENV_URL: running.url, ENV_TOKEN: running.token})


class ExtractorResource(dg.ConfigurableResource):
    """The extractor settings as a Dagster resource; a field left None is read from the
    environment (the LOOM_DOCUMENT_EXTRACTOR* variables), so both validate the same way."""

    url: str | None = None
    routes_json: str | None = None
    token: str | None = None
    tokens_json: str | None = None
    timeout_s: str | None = None
    max_artifact_bytes: str | None = None
    concurrency: int = 2  # extractions one step runs at once (LOOM_EXTRACT_CONCURRENCY)

    def settings(self) -> ExtractorSettings:
        env = dict(os.environ)
        for variable, value in (
            (ENV_URL, self.url),
            (ENV_ROUTES, self.routes_json),
            (ENV_TOKEN, self.token),
            (ENV_TOKENS, self.tokens_json),
            (ENV_TIMEOUT, self.timeout_s),
            (ENV_MAX_ARTIFACT_BYTES, self.max_artifact_bytes),
        ):
            if value is not None:
                env[variable] = value
        return ExtractorSettings.from_env(env)

    def get_client(self) -> ExtractorClient:
        """A client the caller closes."""
        return ExtractorClient(self.settings())

    @contextmanager
    def client(self) -> Iterator[ExtractorClient]:
        """A client closed on leaving the block (the local default started for it if need be),
        bounded by the services' own limits (LOOM_EXTRACTOR_TIMEOUT_S, _CONCURRENCY)."""
        limits = ServiceLimits.from_env(os.environ)
        with (
            configured_or_local(self.settings()) as settings,
            ExtractorClient(settings, limits=limits) as opened,
        ):
            yield opened
