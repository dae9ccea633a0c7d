"""The server's side of the extractor contract v1: the client that sends an original to the
service its format is routed to and maps the answer to an artifact or to a typed failure.

The client fails closed (document extraction, "Fail closed."): anything that says the service
cannot be used right now (unreachable, past the timeout, a refused token, 408, 429, a 5xx, any
answer that is neither 200 nor 4xx, a compressed answer, format_unavailable) raises
ExtractorUnavailable, which is retryable; a source the service refuses raises
ExtractionFailed with the contract's code; an artifact that breaks the contract raises
ExtractionFailed("invalid_artifact") from parse_artifact. There is no in-process fallback.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor, wait
from contextlib import AbstractContextManager, contextmanager, nullcontext

import httpx

from loom_dagster.contract.artifact import Artifact
from loom_dagster.contract.formats import FORMATS, format_for_media_type, format_of
from loom_dagster.contract.validate import parse_artifact
from loom_dagster.errors import ExtractionFailed, ExtractorUnavailable
from loom_dagster.extractor.http import (
    UNAVAILABLE_4XX,
    Answer,
    Watchdog,
    capabilities_from,
    one_line,
    past_deadline,
    refusal,
    refuse_compressed,
    unavailable,
    why_unusable,
)
from loom_dagster.extractor.local import reference_extractor
from loom_dagster.extractor.routing import (
    CONTRACT_VERSION,
    Availability,
    Capabilities,
    CapabilitiesRead,
    availability,
)
from loom_dagster.extractor.settings import (
    ENV_MAX_ARTIFACT_BYTES,
    ENV_TOKEN,
    ENV_URL,
    ExtractorSettings,
    ServiceLimits,
    replicas,
)

# Query parameters the client sets itself; a caller's option may not replace them.
RESERVED_PARAMETERS = frozenset({"format", "name"})


class ExtractorClient:
    """Sends originals to the extractor their format is routed to and reads artifacts back.

    Safe to share between threads. Capabilities are cached per service for
    `capabilities_ttl_s`; available_formats reads the services together within
    `capabilities_deadline_s`. No more extractions are in flight per service than the `slots`
    its capabilities declare, or, for a service that declares none, than `limits.slots` when
    the services' `limits` are given (the pipeline always gives them). An extraction's deadline
    starts once it has its slot, so a wait in the queue is never counted as the file's own
    time; given `limits`, that deadline outlasts the service's own time limit, and without
    them each call is bounded by the configured timeout alone.
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
        self._slots: dict[str, Slots] = {}
        self._ttl_s = capabilities_ttl_s
        self._deadline_s = capabilities_deadline_s
        self._reads: dict[str, CapabilitiesRead] = {}
        self._turns: dict[str, int] = {}  # replicated service -> calls started
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
        service = self.settings.url_for(fmt, media_type)
        if service is None:
            raise ExtractionFailed("format_unavailable", f"no extractor is configured for {fmt}")
        last: ExtractorUnavailable | None = None
        for url in self._replicas_in_turn(service):
            try:
                return self._extract_at(url, data, fmt=fmt, name=name, options=options)
            except ExtractorUnavailable as error:
                # An extraction changes nothing but its answer, so another replica may take
                # the file; this one is asked last until its capabilities read again.
                self._record(url, None)
                last = error
        assert last is not None
        raise last

    def _replicas_in_turn(self, service: str) -> list[str]:
        """The service's replicas in the order to try them: each call starts at the next one,
        so calls spread, and one that failed lately comes after those that did not."""
        urls = replicas(service)
        if len(urls) == 1:
            return list(urls)
        with self._lock:
            turn = self._turns.get(service, 0)
            self._turns[service] = turn + 1
        rotated = [*urls[turn % len(urls) :], *urls[: turn % len(urls)]]
        now = time.monotonic()

        def failed_lately(url: str) -> bool:
            read = self._fresh_read(url, now)
            return read is not None and read.capabilities is None

        return sorted(rotated, key=failed_lately)

    def _extract_at(
        self,
        url: str,
        data: bytes,
        *,
        fmt: str,
        name: str,
        options: Mapping[str, str] | None,
    ) -> Artifact:
        capabilities = self._capabilities(url)
        if capabilities.contract_version != CONTRACT_VERSION:
            raise unavailable(
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

        with self._slot(url, capabilities):
            timeout_s = self.settings.timeout_s
            if self.limits is not None:
                timeout_s = self.limits.extract_deadline_s(timeout_s)
            deadline = time.monotonic() + timeout_s
            call = self._exchange("POST", url, "/v1/extract", deadline, params=params, content=data)
            with call as answer:
                return self._artifact_from(answer, fmt=fmt, original_size=len(data))

    def _slot(self, url: str, capabilities: Capabilities) -> AbstractContextManager[object]:
        """One of the service's slots: as many as it declares, else as `limits` say, else any."""
        count = capabilities.slots
        if count is None and self.limits is not None:
            count = self.limits.slots
        with self._lock:
            slots = self._slots.get(url)
            if slots is None:
                if count is None:
                    return nullcontext()
                slots = self._slots[url] = Slots(count)
        if count is not None:
            slots.resize(count)  # a service restarted with other slots
        return slots.held()

    def _artifact_from(self, answer: Answer, *, fmt: str, original_size: int) -> Artifact:
        refuse_compressed(answer)
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
            code, message = refusal(answer)
            if code == "format_unavailable":
                # The service takes the format no more (its capabilities changed): retry later.
                raise unavailable(answer.url, f"answered {answer.status} format_unavailable")
            raise ExtractionFailed(code, message)
        raise unavailable(answer.url, why_unusable(answer.status))

    # -- capabilities -------------------------------------------------------------------------

    def available_formats(self, media_types: Sequence[str] = ()) -> dict[str, Availability]:
        """Every format: "available", "unavailable" or "unknown" (its service cannot be read).

        A format is available when a service a file of it can go to declares it; the media
        types' routes count only for the media types given (those an upload carries).
        """
        candidates = {fmt: self._urls_a_file_can_go_to(fmt, media_types) for fmt in FORMATS}
        urls = sorted({url for urls in candidates.values() for url in urls})
        declarations = self._declarations(urls)
        return {fmt: availability(fmt, candidates[fmt], declarations) for fmt in FORMATS}

    def declared_parsers(self) -> dict[str, str | None]:
        """Each available format's parser as its service declares it now ("parser version"),
        None for a format no readable service declares."""
        services = {fmt: self.settings.url_for(fmt) for fmt in FORMATS}
        declarations = self._declarations(sorted(self.settings.urls()))
        found: dict[str, str | None] = {}
        for fmt, service in services.items():
            said = [declarations.get(url) for url in replicas(service or "")]
            parsers = [d.parser_of(fmt) for d in said if d is not None and d.parser_of(fmt)]
            found[fmt] = parsers[0] if parsers else None
        return found

    def declared_parser(self, fmt: str) -> str | None:
        """What the service `fmt` is routed to declares it extracts it with, from the
        capabilities read for the extraction (cached)."""
        service = self.settings.url_for(fmt)
        now = time.monotonic()
        for url in replicas(service or ""):
            read = self._fresh_read(url, now)
            if read is not None and read.capabilities is not None:
                return read.capabilities.parser_of(fmt)
        return None

    def _urls_a_file_can_go_to(self, fmt: str, media_types: Sequence[str]) -> set[str]:
        services = {self.settings.url_for(fmt)}
        for media_type in media_types:
            if format_for_media_type(media_type) == fmt:
                services.add(self.settings.url_for(fmt, media_type))
        return {url for service in services for url in replicas(service or "")}

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

    def _fresh_read(self, url: str, now: float) -> CapabilitiesRead | None:
        with self._lock:
            read = self._reads.get(url)
        if read is None or now - read.at >= self._ttl_s:
            return None
        return read

    def _record(self, url: str, capabilities: Capabilities | None) -> None:
        with self._lock:
            self._reads[url] = CapabilitiesRead(at=time.monotonic(), capabilities=capabilities)

    def _read_capabilities(self, url: str, deadline: float) -> Capabilities:
        """GET /v1/capabilities; records the outcome (a failure never as success)."""
        try:
            with self._exchange("GET", url, "/v1/capabilities", deadline) as answer:
                capabilities = capabilities_from(answer)
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
    ) -> Iterator[Answer]:
        """One call to a service, bounded as a whole by `deadline` (time.monotonic()).

        Any transport failure inside, while sending or while the caller reads the body, becomes
        ExtractorUnavailable naming the URL and why.
        """
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise past_deadline(url)
        headers = {"Accept-Encoding": "identity"}
        token = self.settings.token_for(url)
        if token is not None:
            headers["Authorization"] = f"Bearer {token}"
        if content is not None:
            headers["Content-Type"] = "application/octet-stream"
        watchdog = Watchdog(deadline)
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
                yield Answer(url, response, deadline)
            finally:
                response.close()
        except httpx.TransportError as exc:
            if watchdog.expired or isinstance(exc, httpx.TimeoutException):
                raise past_deadline(url) from exc
            reason = one_line(str(exc)) or type(exc).__name__
            if isinstance(exc, httpx.ConnectError):
                raise unavailable(url, f"cannot be reached ({reason})") from exc
            raise unavailable(url, f"broke off the call ({reason})") from exc
        finally:
            watchdog.stop()


class Slots:
    """At most `count` holders at once; the count may change while some hold a slot (the
    holders past a smaller count finish, and no one new starts until there is room)."""

    def __init__(self, count: int) -> None:
        self._count = count
        self._held = 0
        self._room = threading.Condition()

    def resize(self, count: int) -> None:
        with self._room:
            self._count = count
            self._room.notify_all()

    @contextmanager
    def held(self) -> Iterator[None]:
        with self._room:
            self._room.wait_for(lambda: self._held < self._count)
            self._held += 1
        try:
            yield
        finally:
            with self._room:
                self._held -= 1
                self._room.notify()


def _query_safe(name: str) -> str:
    # A name read from disk may hold surrogate escapes, which have no UTF-8 spelling.
    return name.encode("utf-8", "replace").decode("utf-8")


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
