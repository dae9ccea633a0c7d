"""Loom's settings that runs and ticks use, as a Dagster resource: the values LoomSettings read
once where the definitions were built, never the environment of the run or the tick."""

from __future__ import annotations

import dagster as dg

from loom_dagster.chunking import ChunkLimits
from loom_dagster.extractor.settings import DEFAULT_SERVICE_MAX_BYTES
from loom_dagster.lifecycle import DEFAULT_PARTITION_WINDOW, Retention, RetireGuard
from loom_dagster.retries import DEFAULT_DELAY_S, DEFAULT_RETRIES, RetrySettings
from loom_dagster.settings import LoomSettings


class SettingsResource(dg.ConfigurableResource):
    """Retries (LOOM_RETRY_*), retention (LOOM_KEEP_*, LOOM_PARTITION_WINDOW) and the home, filled from LoomSettings
    (`of`)."""

    retry_attempts: int = DEFAULT_RETRIES
    retry_delay_s: float = DEFAULT_DELAY_S
    keep_revisions: int = Retention.keep_revisions
    keep_days: int = Retention.keep_days
    partition_window: int = DEFAULT_PARTITION_WINDOW  # LOOM_PARTITION_WINDOW; 0: none
    max_input_bytes: int = DEFAULT_SERVICE_MAX_BYTES  # LOOM_EXTRACTOR_MAX_BYTES
    retire_max_share: float = RetireGuard.max_share  # LOOM_RETIRE_MAX_SHARE
    retire_min_count: int = RetireGuard.min_count  # LOOM_RETIRE_MIN_COUNT
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
            partition_window=settings.partition_window,
            home=str(settings.home),
            max_input_bytes=settings.limits.max_bytes,
            retire_max_share=settings.retire_guard.max_share,
            retire_min_count=settings.retire_guard.min_count,
            max_chunks_per_document=settings.chunk_limits.max_chunks,
            max_chunks_per_input_kib=settings.chunk_limits.chunks_per_kib,
        )

    def retire_guard(self) -> RetireGuard:
        return RetireGuard(max_share=self.retire_max_share, min_count=self.retire_min_count)

    def retry(self) -> RetrySettings:
        return RetrySettings(retries=self.retry_attempts, delay_s=self.retry_delay_s)

    def retention(self) -> Retention:
        return Retention(keep_revisions=self.keep_revisions, keep_days=self.keep_days)

    def chunk_limits(self) -> ChunkLimits:
        return ChunkLimits(
            max_chunks=self.max_chunks_per_document, chunks_per_kib=self.max_chunks_per_input_kib
        )
