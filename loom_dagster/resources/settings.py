"""Loom's settings that runs and ticks use, as a Dagster resource: the values LoomSettings read
once where the definitions were built, never the environment of the run or the tick."""

from __future__ import annotations

import dagster as dg

from loom_dagster.chunking import ChunkLimits
from loom_dagster.lifecycle import Retention
from loom_dagster.retries import DEFAULT_DELAY_S, DEFAULT_RETRIES, RetrySettings
from loom_dagster.settings import LoomSettings


class SettingsResource(dg.ConfigurableResource):
    """Retries (LOOM_RETRY_*), retention (LOOM_KEEP_*) and the home, filled from LoomSettings
    (`of`)."""

    retry_attempts: int = DEFAULT_RETRIES
    retry_delay_s: float = DEFAULT_DELAY_S
    keep_revisions: int = Retention.keep_revisions
    keep_days: int = Retention.keep_days
    home: str = ""  # LOOM_HOME: where the last declared parsers are kept ("" keeps none)
    max_chunks_per_document: int = ChunkLimits.max_chunks
    max_chunks_per_input_kib: int = ChunkLimits.chunks_per_kib

    @classmethod
    def of(cls, settings: LoomSettings) -> SettingsResource:
        return cls(
            retry_attempts=settings.retry.retries,
            retry_delay_s=settings.retry.delay_s,
            keep_revisions=settings.retention.keep_revisions,
            keep_days=settings.retention.keep_days,
            home=str(settings.home),
            max_chunks_per_document=settings.chunk_limits.max_chunks,
            max_chunks_per_input_kib=settings.chunk_limits.chunks_per_kib,
        )

    def retry(self) -> RetrySettings:
        return RetrySettings(retries=self.retry_attempts, delay_s=self.retry_delay_s)

    def retention(self) -> Retention:
        return Retention(keep_revisions=self.keep_revisions, keep_days=self.keep_days)

    def chunk_limits(self) -> ChunkLimits:
        return ChunkLimits(
            max_chunks=self.max_chunks_per_document, chunks_per_kib=self.max_chunks_per_input_kib
        )
