"""The one error an extraction can end in: a contract code and a one-line message.

The service answers it as a 422 with the contract's error body, and the child process writes it on
its stdout the same way, so a refusal looks the same whichever side found it.
"""

from __future__ import annotations

from extractor_sandbox.contract import CONTRACT_CODES, MAX_MESSAGE_CHARS

__all__ = ["CONTRACT_CODES", "ExtractError", "one_line"]


class ExtractError(Exception):
    """A source the service refuses: `code` is one of CONTRACT_CODES, `message` a single line."""

    def __init__(self, code: str, message: str) -> None:
        if code not in CONTRACT_CODES:
            raise ValueError(f"{code!r} is not a contract error code")
        super().__init__(message)
        self.code = code
        self.message = one_line(message)

    def __str__(self) -> str:
        return f"{self.code}: {self.message}"

    def to_body(self) -> dict[str, dict[str, str]]:
        """The contract's error body."""
        return {"error": {"code": self.code, "message": self.message}}


def one_line(message: str) -> str:
    """The message on one line and bounded, since it travels in an error body and a log line."""
    flat = " ".join(message.split())
    if len(flat) > MAX_MESSAGE_CHARS:
        flat = flat[: MAX_MESSAGE_CHARS - 3] + "..."
    return flat
