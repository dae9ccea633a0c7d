"""What one thread prints, captured while other threads print theirs: the resident process
(resident_server.py) renders a query's answer and a search's at once, each with the command's
own print calls. contextlib.redirect_stdout cannot: it swaps sys.stdout for every thread, so
two answers rendered together would take each other's lines."""

from __future__ import annotations

import io
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, TextIO


class _ThreadStream:
    """sys.stdout or sys.stderr while any thread captures: a capturing thread writes to its own
    buffer, any other to the stream this replaced."""

    def __init__(self, underlying: TextIO, which: int) -> None:
        self.underlying = underlying
        self.which = which

    def _target(self) -> TextIO:
        buffers = getattr(_capturing, "buffers", None)
        return self.underlying if buffers is None else buffers[self.which]

    def write(self, text: str) -> int:
        return self._target().write(text)

    def flush(self) -> None:
        self._target().flush()

    def __getattr__(self, name: str) -> Any:  # encoding, errors, fileno...: the target's
        return getattr(self._target(), name)


class _Installed:
    """The streams replaced while any thread captures, and how many do."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.saved: tuple[TextIO, TextIO] | None = None
        self.users = 0


_capturing = threading.local()
_installed = _Installed()


@contextmanager
def captured() -> Iterator[tuple[io.StringIO, io.StringIO]]:
    """What this thread prints meanwhile, on stdout and on stderr."""
    out, err = io.StringIO(), io.StringIO()
    with _installed.lock:
        if _installed.saved is None:
            _installed.saved = (sys.stdout, sys.stderr)
            sys.stdout = _ThreadStream(sys.stdout, 0)  # type: ignore[assignment]
            sys.stderr = _ThreadStream(sys.stderr, 1)  # type: ignore[assignment]
        _installed.users += 1
    _capturing.buffers = (out, err)
    try:
        yield out, err
    finally:
        _capturing.buffers = None
        with _installed.lock:
            _installed.users -= 1
            if not _installed.users and _installed.saved is not None:
                sys.stdout, sys.stderr = _installed.saved
                _installed.saved = None
