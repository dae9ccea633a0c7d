"""The extractor as a Dagster resource: configuration in, a client out; nothing else.

Its fields are the LOOM_DOCUMENT_EXTRACTOR* and LOOM_EXTRACTOR_* values as text, filled from
Loom's settings where the definitions are built (`of`); it reads no environment of its own, so
a test or an operator can point it at any service speaking contract v1.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager

import dagster as dg

from loom_dagster.extractor.client import ExtractorClient, configured_or_local
from loom_dagster.extractor.settings import (
    ENV_MAX_ARTIFACT_BYTES,
    ENV_ROUTES,
    ENV_SERVICE_CONCURRENCY,
    ENV_SERVICE_TIMEOUT,
    ENV_TIMEOUT,
    ENV_TOKEN,
    ENV_TOKENS,
    ENV_URL,
    ExtractorSettings,
    ServiceLimits,
)


class ExtractorResource(dg.ConfigurableResource):
    """Where and how to extract; a field left None takes the setting's default."""

    url: str | None = None
    routes_json: str | None = None
    token: str | None = None
    tokens_json: str | None = None
    timeout_s: str | None = None
    max_artifact_bytes: str | None = None
    service_timeout_s: str | None = None  # the service's own limit (LOOM_EXTRACTOR_TIMEOUT_S)
    service_slots: str | None = None  # its extractions at once (LOOM_EXTRACTOR_CONCURRENCY)
    concurrency: int = 2  # extractions one step runs at once (LOOM_EXTRACT_CONCURRENCY)

    @classmethod
    def of(
        cls, settings: ExtractorSettings, limits: ServiceLimits, *, concurrency: int
    ) -> ExtractorResource:
        """The resource for settings already read and validated."""
        return cls(
            url=settings.default_url,
            routes_json=json.dumps(dict(settings.routes)) if settings.routes else None,
            token=settings.token,
            tokens_json=json.dumps(dict(settings.tokens)) if settings.tokens else None,
            timeout_s=repr(settings.timeout_s),
            max_artifact_bytes=str(settings.max_artifact_bytes),
            service_timeout_s=repr(limits.time_limit_s),
            service_slots=str(limits.slots),
            concurrency=concurrency,
        )

    def _variables(self) -> dict[str, str]:
        """The fields as the variables they stand for, so both are validated the same way."""
        fields = (
            (ENV_URL, self.url),
            (ENV_ROUTES, self.routes_json),
            (ENV_TOKEN, self.token),
            (ENV_TOKENS, self.tokens_json),
            (ENV_TIMEOUT, self.timeout_s),
            (ENV_MAX_ARTIFACT_BYTES, self.max_artifact_bytes),
            (ENV_SERVICE_TIMEOUT, self.service_timeout_s),
            (ENV_SERVICE_CONCURRENCY, self.service_slots),
        )
        return {variable: value for variable, value in fields if value is not None}

    def settings(self) -> ExtractorSettings:
        return ExtractorSettings.from_env(self._variables())

    def limits(self) -> ServiceLimits:
        return ServiceLimits.from_env(self._variables())

    def get_client(self) -> ExtractorClient:
        """A client the caller closes."""
        return ExtractorClient(self.settings())

    @contextmanager
    def client(self) -> Iterator[ExtractorClient]:
        """A client closed on leaving the block (the local default started for it if need be),
        bounded by the services' own limits."""
        with (
            configured_or_local(self.settings()) as settings,
            ExtractorClient(settings, limits=self.limits()) as opened,
        ):
            yield opened
