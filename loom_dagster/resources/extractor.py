"""The extractor as a Dagster resource: configuration in, a client out; nothing else.

Its fields are the LOOM_DOCUMENT_EXTRACTOR* and LOOM_EXTRACTOR_* values as text, filled from
Loom's settings where the definitions are built (`of`), so a test or an operator can point it at
any service speaking contract v1. The tokens are the exception: `of` gives them as Dagster
`EnvVar`s naming LOOM_DOCUMENT_EXTRACTOR_TOKEN and LOOM_DOCUMENT_EXTRACTOR_TOKENS_JSON, which
Dagster resolves in the process that uses the resource, so no token is ever a literal of the
resource's configuration (the UI's Resources tab, its GraphQL, a run's snapshot); this module
itself reads no environment. The local
default service's token is made by the run that starts it and never leaves that process.
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
            # The tokens as the variables they were read from (`ExtractorSettings.held_by` checks
            # where the definitions are built that those hold them), never as values.
            token=dg.EnvVar(ENV_TOKEN) if settings.token else None,
            tokens_json=dg.EnvVar(ENV_TOKENS) if settings.tokens else None,
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
        return {
            variable: value.get_value() or "" if isinstance(value, dg.EnvVar) else value
            for variable, value in fields
            if value is not None
        }

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
