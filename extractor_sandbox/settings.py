"""The service's settings: environment variables read once at start, each checked then.

A bad value stops the service before it listens, with one line naming the variable, rather than
surfacing as a strange failure on the first request. An empty variable counts as unset.
"""

from __future__ import annotations

import math
import os
import resource
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TypeVar

from extractor_sandbox.output_size import DEFAULT_MAX_OUTPUT_BYTES, DEFAULT_PER_INPUT_BYTE

MIN_TOKEN_CHARS = 16
TOKEN_VARIABLE = "LOOM_EXTRACTOR_TOKEN"
# Descriptors the service keeps for itself beside its connections: its listening socket, its
# selector and wake-up pipe, the template's socket, standard streams, the log; and per extraction
# (each slot, and the slot kept for small originals) its pipes and its child's pidfd.
FILES_RESERVED = 32
FILES_PER_SLOT = 8

T = TypeVar("T")


class SettingsError(Exception):
    """A setting is missing or invalid; the message is one line naming it."""


def default_slots() -> int:
    """Extractions at once by default: two, or one on a machine (or CPU set) of one core."""
    return min(2, len(os.sched_getaffinity(0)))


@dataclass(frozen=True)
class Settings:
    max_bytes: int = 64 * 1024 * 1024  # the largest original taken (advertised in /v1/capabilities)
    timeout_s: float = 120.0  # wall clock for one extraction's child process
    cpu_s: int = 120  # CPU seconds for one child (applied by the sandbox)
    memory_mb: int = 2048  # address space for one child (applied by the sandbox)
    # extractions at once (declared as `slots` in /v1/capabilities); a request's body is read
    # before it waits for a slot
    concurrency: int = field(default_factory=default_slots)
    max_output_bytes: int = DEFAULT_MAX_OUTPUT_BYTES  # the largest artifact a child may write
    # artifact bytes per byte of the original past a 1 MiB floor; the child cuts the rest, said
    max_output_per_input_byte: int = DEFAULT_PER_INPUT_BYTE
    body_timeout_s: float = 60.0  # wall clock to receive one request's body, however it trickles
    warm: bool = True  # each extraction a fork of a warm template process; off: a fresh interpreter
    # The HTTP layer (service.py): connections open at once, fitted under the open-file limit
    # (`fit_open_files`); past it a new one takes the place of the longest idle, else is refused
    max_connections: int = 512
    head_timeout_s: float = 10.0  # wall clock to receive a request's whole head (line and headers)
    backlog: int = 512  # connections the kernel holds for the service before it accepts them
    # the longest a request waits for memory for its body, or for a slot; past it, 503 Retry-After
    queue_wait_s: float = 15.0
    # an original of at most this many bytes may also run in one more slot, kept for them, so it
    # is not stuck behind large ones; 0: no such slot
    small_bytes: int = 256 * 1024


def load_settings(environ: Mapping[str, str]) -> Settings:
    """The settings from `environ`, defaults for the variables it does not set."""
    defaults = Settings()
    return Settings(
        max_bytes=_read(environ, "LOOM_EXTRACTOR_MAX_BYTES", _positive_int, defaults.max_bytes),
        timeout_s=_read(environ, "LOOM_EXTRACTOR_TIMEOUT_S", _positive_seconds, defaults.timeout_s),
        cpu_s=_read(environ, "LOOM_EXTRACTOR_CPU_S", _positive_int, defaults.cpu_s),
        memory_mb=_read(environ, "LOOM_EXTRACTOR_MEMORY_MB", _positive_int, defaults.memory_mb),
        concurrency=_read(
            environ, "LOOM_EXTRACTOR_CONCURRENCY", _positive_int, defaults.concurrency
        ),
        max_output_bytes=_read(
            environ, "LOOM_EXTRACTOR_MAX_OUTPUT_BYTES", _positive_int, defaults.max_output_bytes
        ),
        max_output_per_input_byte=_read(
            environ,
            "LOOM_EXTRACTOR_MAX_OUTPUT_PER_INPUT_BYTE",
            _positive_int,
            defaults.max_output_per_input_byte,
        ),
        body_timeout_s=_read(
            environ, "LOOM_EXTRACTOR_BODY_TIMEOUT_S", _positive_seconds, defaults.body_timeout_s
        ),
        warm=_read(environ, "LOOM_EXTRACTOR_WARM", _on_or_off, defaults.warm),
        max_connections=_read(
            environ, "LOOM_EXTRACTOR_MAX_CONNECTIONS", _positive_int, defaults.max_connections
        ),
        head_timeout_s=_read(
            environ, "LOOM_EXTRACTOR_HEAD_TIMEOUT_S", _positive_seconds, defaults.head_timeout_s
        ),
        backlog=_read(environ, "LOOM_EXTRACTOR_BACKLOG", _positive_int, defaults.backlog),
        queue_wait_s=_read(
            environ, "LOOM_EXTRACTOR_QUEUE_WAIT_S", _positive_seconds, defaults.queue_wait_s
        ),
        small_bytes=_read(
            environ, "LOOM_EXTRACTOR_SMALL_BYTES", _non_negative_int, defaults.small_bytes
        ),
    )


def small_slots(settings: Settings) -> int:
    """Slots kept for small originals, beside LOOM_EXTRACTOR_CONCURRENCY's: one, or none."""
    return 1 if settings.small_bytes > 0 else 0


def fit_open_files(settings: Settings) -> tuple[Settings, str | None]:
    """The settings with max_connections under the open-file limit, and a note when it was
    lowered to fit. The soft limit is raised towards the hard one first, as far as needed.

    A service that runs out of descriptors cannot accept even the connection that would be
    served, and its accept loop spins; so the connections it keeps open stay below the limit,
    with room for its own files and its extractions' pipes.
    """
    reserved = FILES_RESERVED + FILES_PER_SLOT * (settings.concurrency + small_slots(settings))
    needed = settings.max_connections + reserved
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != resource.RLIM_INFINITY and soft < needed:
        raised = needed if hard == resource.RLIM_INFINITY else min(hard, needed)
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (raised, hard))
            soft = raised
        except (ValueError, OSError):
            pass  # kept as it was: fitted below
    if soft == resource.RLIM_INFINITY or soft >= needed:
        return settings, None
    room = soft - reserved
    if room < 1:
        raise SettingsError(
            f"the open-file limit ({soft}) leaves no descriptor for a connection beside the"
            f" {reserved} the service keeps for itself; raise it (ulimit -n)"
        )
    note = (
        f"LOOM_EXTRACTOR_MAX_CONNECTIONS {settings.max_connections} lowered to {room}: the"
        f" open-file limit is {soft} (ulimit -n), {reserved} kept for the service itself"
    )
    return replace(settings, max_connections=room), note


def load_token(environ: Mapping[str, str], token_file: str | None) -> str:
    """The bearer token every call must carry: from LOOM_EXTRACTOR_TOKEN or a file, never a flag.

    A flag would show the token to every user of the machine in the process list.
    """
    from_env = environ.get(TOKEN_VARIABLE, "")
    if token_file is not None and from_env:
        raise SettingsError(f"set {TOKEN_VARIABLE} or --token-file, not both")
    if token_file is not None:
        try:
            token = Path(token_file).read_text(encoding="utf-8").strip()
        except (OSError, UnicodeDecodeError) as error:
            raise SettingsError(f"cannot read the token file {token_file}: {error}") from error
    else:
        token = from_env
    if len(token) < MIN_TOKEN_CHARS:
        raise SettingsError(f"{TOKEN_VARIABLE} must be at least {MIN_TOKEN_CHARS} characters")
    if not all("!" <= char <= "~" for char in token):
        # It travels in an Authorization header, where only visible ASCII survives unchanged.
        raise SettingsError(f"{TOKEN_VARIABLE} must be visible ASCII characters, with no spaces")
    return token


def _read(environ: Mapping[str, str], name: str, parse: Callable[[str], T], default: T) -> T:
    raw = environ.get(name, "").strip()
    if not raw:
        return default
    try:
        return parse(raw)
    except ValueError as error:
        raise SettingsError(f"{name} {error}, not {raw!r}") from None


def _positive_int(raw: str) -> int:
    try:
        value = int(raw)
    except ValueError:
        raise ValueError("must be a positive integer") from None
    if value < 1:
        raise ValueError("must be a positive integer")
    return value


def _non_negative_int(raw: str) -> int:
    try:
        value = int(raw)
    except ValueError:
        raise ValueError("must be an integer, 0 or more") from None
    if value < 0:
        raise ValueError("must be an integer, 0 or more")
    return value


def _positive_seconds(raw: str) -> float:
    try:
        value = float(raw)
    except ValueError:
        raise ValueError("must be a positive number of seconds") from None
    if not math.isfinite(value) or value <= 0:
        raise ValueError("must be a positive number of seconds")
    return value


def _on_or_off(raw: str) -> bool:
    if raw not in ("on", "off"):
        raise ValueError("must be on or off")
    return raw == "on"


# Every variable the service reads: (name, type, default, meaning). docs/reference/settings.md is
# generated from this table (scripts/docs_reference.py), and tests/unit/test_docs.py holds it to
# the variables the package reads, both ways.
SETTINGS: tuple[tuple[str, str, str, str], ...] = (
    (
        "LOOM_EXTRACTOR_TOKEN",
        "secret",
        "(required)",
        "the bearer token every call must carry; at least 16 characters",
    ),
    (
        "LOOM_EXTRACTOR_MAX_BYTES",
        "positive integer",
        "`67108864` (64 MiB)",
        "the largest original taken; advertised as `max_bytes` in `/v1/capabilities`; a longer one is refused (`too_large`) before its body is read. Loom reads it too: a larger file in a watched folder is refused `too_large` from its size, unread and unstored",
    ),
    (
        "LOOM_EXTRACTOR_TIMEOUT_S",
        "seconds",
        "`120`",
        "seconds of wall clock one extraction may take (a decimal is allowed); past it the child's process group is killed (`timeout`)",
    ),
    (
        "LOOM_EXTRACTOR_CPU_S",
        "positive integer",
        "`120`",
        "CPU seconds for one extraction's child (RLIMIT_CPU: SIGXCPU at the limit, SIGKILL a second later); past it the answer is `timeout`",
    ),
    (
        "LOOM_EXTRACTOR_MEMORY_MB",
        "positive integer",
        "`2048`",
        "address space for one extraction's child, in MiB (RLIMIT_AS); a child that runs out is `resource_limit`",
    ),
    (
        "LOOM_EXTRACTOR_CONCURRENCY",
        "positive integer",
        "`2`, or `1` on one core (`min(2, cores)`)",
        "extractions at once, declared as `slots` in `/v1/capabilities` (a client keeps no more in flight); one more runs beside them for a small original (`LOOM_EXTRACTOR_SMALL_BYTES`). A request's body is read before it waits for a slot, so a body that trickles holds none; the originals held in memory, read or being read, are bounded by twice this many times `LOOM_EXTRACTOR_MAX_BYTES`, counted as their bytes arrive (a body that trickles holds what it has sent, not what it declared; one that finds no room within `LOOM_EXTRACTOR_QUEUE_WAIT_S` is a 503). Scale with replicas rather than slots",
    ),
    (
        "LOOM_EXTRACTOR_WARM",
        "`on` or `off`",
        "`on`",
        '`on`: each extraction is a fork of the service\'s template process, which has loaded the readers once (see "The template" under Isolation); `off`: each is a fresh interpreter, as before the template (slower by ~40 ms a file, for comparison or a kernel without pidfds, where `on` falls back to it)',
    ),
    (
        "LOOM_EXTRACTOR_MAX_OUTPUT_BYTES",
        "positive integer",
        "`268435456` (256 MiB)",
        "the largest artifact a child may write; past it the child is killed (`resource_limit`)",
    ),
    (
        "LOOM_EXTRACTOR_MAX_OUTPUT_PER_INPUT_BYTE",
        "positive integer",
        "`100`",
        "artifact bytes per byte of the original, beside a floor of 1 MiB any original may make: an"
        " artifact past `1 MiB + this x the original's size` (and never past"
        " `LOOM_EXTRACTOR_MAX_OUTPUT_BYTES`) is cut, not refused: the blocks that fit are kept, the"
        " one that crosses the bound keeps its text up to it, the rest are left out (a table keeps"
        " its first rows within half the bound), and `coverage.failed` names where it stops with the"
        " reason `resource_limit`, with a warning naming this variable. The DOCX, PPTX and XLSX"
        " readers stop reading text once past it (another `resource_limit` unit names where), so"
        " the rest is never held. A 25 KB DOCX whose one run inflates to 25 MB answers 3.6 MB; the"
        " largest ratio of a real document measured"
        " (`bench/artifact_ratio.py`, 1,392 files of tests/ and the development corpus) is 7.1",
    ),
    (
        "LOOM_EXTRACTOR_OCR",
        "`on` or `off`",
        "`on`",
        "`off`: no image is read with OCR, and a page or slide that needs it is a failed unit. The service says once, at start, when OCR is on but Tesseract's libraries are not installed",
    ),
    (
        "LOOM_EXTRACTOR_OCR_LANGUAGES",
        "models joined by `+`",
        "`eng`",
        "Tesseract's models, joined by `+` (`eng+deu`); the service refuses to start, with one line, when one is not installed (in `TESSDATA_PREFIX`, else `/usr/share/tesseract-ocr/5/tessdata`)",
    ),
    (
        "LOOM_EXTRACTOR_OCR_MAX_IMAGES",
        "positive integer",
        "`30`",
        "images one file reads with OCR (an image shown on several pages or slides counts once); past it, the page or slide is a failed unit naming the variable",
    ),
    (
        "LOOM_EXTRACTOR_BODY_TIMEOUT_S",
        "seconds",
        "`60`",
        "seconds of wall clock to receive one request's whole body, however it trickles (a decimal is allowed); past it the answer is 408 `request_timeout` and the connection ends",
    ),
    (
        "LOOM_EXTRACTOR_HEAD_TIMEOUT_S",
        "seconds",
        "`10`",
        "seconds of wall clock to receive a request's whole head (request line and headers), from the connection's start, or on a kept-alive connection from the next request's first byte; past it 408 `request_timeout` and the connection ends. A kept-alive connection may wait 60 s for its next request",
    ),
    (
        "LOOM_EXTRACTOR_MAX_CONNECTIONS",
        "positive integer",
        "`512`",
        "connections open at once. At start the service raises its open-file soft limit towards the hard one as far as this needs, and lowers this (one line on stderr) to fit under the limit beside 32 descriptors of its own and 8 per slot. One more connection takes the place of the one waiting longest for a request (an idle kept-alive one is closed, one in the middle of its head answered 503); when every one is at work, it is refused with 503 `busy` and `Retry-After: 1`, without a thread",
    ),
    (
        "LOOM_EXTRACTOR_BACKLOG",
        "positive integer",
        "`512`",
        "connections the kernel holds for the service before it accepts them (the listen backlog; the kernel caps it at `net.core.somaxconn`)",
    ),
    (
        "LOOM_EXTRACTOR_QUEUE_WAIT_S",
        "seconds",
        "`15`",
        "the longest a request waits for room for its body in memory, or for a slot; past it the answer is 503 `busy` with `Retry-After: 2` (the contract's server takes it as the service unavailable, and tries again later)",
    ),
    (
        "LOOM_EXTRACTOR_SMALL_BYTES",
        "integer ≥ 0",
        "`262144` (256 KiB)",
        "an original of at most this many bytes may also run in one slot kept for small ones, beside `LOOM_EXTRACTOR_CONCURRENCY`'s (and takes it first), so it is not stuck behind large ones; `0`: no such slot",
    ),
    (
        "TESSDATA_PREFIX",
        "path",
        "`/usr/share/tesseract-ocr/5/tessdata`",
        "where Tesseract's language models are read from",
    ),
)
