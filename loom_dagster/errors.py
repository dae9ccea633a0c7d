"""Typed errors: every failure a user or a step can see has a code and a one-line message."""

from __future__ import annotations


class LoomError(Exception):
    """A failure with a stable code (lowercase, `_`) and a one-line message."""

    code: str = "internal"
    retryable: bool = False

    def __init__(self, message: str, *, code: str | None = None) -> None:
        super().__init__(message)
        if code is not None:
            self.code = code
        self.message = message

    def __str__(self) -> str:
        return f"{self.code}: {self.message}"


class SettingsError(LoomError):
    """A setting (environment variable or option) is missing or invalid; raised at load."""

    code = "invalid_setting"


class SourceError(LoomError):
    """A registered source cannot be read (missing folder, unreadable file)."""

    code = "source_unreadable"


class ExtractorUnavailable(LoomError):
    """The extractor cannot be used right now; the source can be tried again later."""

    code = "extractor_unavailable"
    retryable = True


class ExtractionFailed(LoomError):
    """The extractor refused the source, or its answer broke the contract.

    `code` is the contract's code: format_mismatch, encoding, corrupt, too_large, timeout,
    resource_limit, invalid_option, unsupported_format, format_unavailable, invalid_artifact,
    or `refused` for an answer whose code the contract does not allow.
    """

    code = "refused"

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message, code=code)
