"""The child's entry point: `python -P -s -m extractor_sandbox.child --cpu-s=N --memory-mb=M`.

Started by the parent's runner (extractor_sandbox.runner) with a Unix socket as its stdin, it is
the template process (extractor_sandbox.template), and each extraction is a fork of it that runs
`extract_one`; with a pipe (LOOM_EXTRACTOR_WARM=off) it is one extraction itself. Either way it
makes itself non-dumpable first thing (the flag does not survive execve; a fork inherits it),
reads the request's JSON line {"format", "name", "options", "max_artifact_bytes"} a byte at a time (nothing of the
source after it leaves the pipe yet), loads and warms what the format's reader needs (`warm`: its module, and its
FormatSpec's prepare step, where libraries that start threads or call programs are set up while
that is still allowed), then confines itself with `sandbox.confine_child` before it reads the
source that follows on stdin. It writes the artifact JSON on stdout and exits 0, or writes
{"error": {"code", "message"}} and exits EXIT_REFUSED; EXIT_SANDBOX when it could not confine
itself (and read nothing).

This module is all the child loads before it is confined, but for the reader `warm` loads: none
of the runner (subprocess, selectors, threads) and no reader of another format.
"""

from __future__ import annotations

if __name__ == "__main__":
    # The child, first thing: no process of its user may read its memory or environment.
    from extractor_sandbox.sandbox import set_non_dumpable

    set_non_dumpable()

import argparse  # noqa: E402
import codecs  # noqa: E402
import importlib  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
import sys  # noqa: E402
from collections.abc import Mapping, Sequence  # noqa: E402
from typing import Any, NoReturn  # noqa: E402

from extractor_sandbox.errors import ExtractError  # noqa: E402
from extractor_sandbox.sandbox import SandboxError, confine_child, landlock_abi  # noqa: E402

CHILD_MODULE = "extractor_sandbox.child"
EXIT_REFUSED = 3
EXIT_SANDBOX = 4  # the child could not confine itself and read nothing: the service's failure
MAX_HEADER_BYTES = 64 * 1024


# The codecs a byte-order mark selects, and cp437 (zipfile's, for a name not marked UTF-8),
# beside the declared one.
_WARM_CODECS = (
    "utf-8-sig",
    "utf-16",
    "utf-16-le",
    "utf-16-be",
    "utf-32",
    "utf-32-le",
    "utf-32-be",
    "cp437",
)

# Standard modules the standard library itself imports late (Counter.most_common: heapq).
_LATE_STANDARD_MODULES = ("heapq", "bisect", "unicodedata", "decimal", "fractions", "datetime")


def warm(fmt: str, options: Mapping[str, str], *, opens_nothing: bool = False) -> None:
    """Import and warm what the format's reader needs, before the child is bound: its module, the
    codecs it may decode with, and its spec's prepare step. The one place for a warm-up that
    must run in each child before its limits (a library that starts threads, or loads what a
    fork must not inherit half-started): a template's fork runs it too, never the template. With `opens_nothing` (a kernel without
    Landlock, where the confined child can open no file) also what the reader would import late:
    the spec's late_imports."""
    from extractor_sandbox.registry import AVAILABLE

    importlib.import_module("extractor_sandbox.source")  # extract() runs once confined
    for name in (*_WARM_CODECS, options.get("encoding") or "utf-8"):
        try:
            codecs.lookup(name)
        except LookupError:
            pass  # the decoder refuses it, by name
    spec = AVAILABLE.get(fmt)
    if spec is None:
        return  # extract() refuses it, by name
    try:
        module = importlib.import_module(spec.module)
        if opens_nothing:
            for name in _LATE_STANDARD_MODULES:
                importlib.import_module(name)
            if spec.late_imports is not None:
                spec.late_imports(module, options)
        if spec.prepare is not None:
            spec.prepare()
    except ImportError:
        pass  # the reader finds its library missing and says so
    except ValueError:
        pass  # an unknown dialect: the reader refuses it, by name


_OUT_OF_MEMORY = json.dumps(
    ExtractError(
        "resource_limit", "the extraction ran out of memory (LOOM_EXTRACTOR_MEMORY_MB)"
    ).to_body()
).encode("utf-8")


def main(argv: Sequence[str] | None = None) -> int:
    arguments = argparse.ArgumentParser(prog=CHILD_MODULE)
    arguments.add_argument("--cpu-s", type=int, required=True)
    arguments.add_argument("--memory-mb", type=int, required=True)
    parsed = arguments.parse_args(argv)
    cpu_base = 0
    from extractor_sandbox.template import is_template

    if not is_template():
        leave(extract_one(cpu_s=parsed.cpu_s, memory_mb=parsed.memory_mb))
    from extractor_sandbox.template import run

    # Returns only in a fork made for one extraction, before anything of it was read.
    cpu_base = run(_WARM_CODECS, _LATE_STANDARD_MODULES)
    status = 1
    try:
        status = extract_one(cpu_s=parsed.cpu_s + cpu_base, memory_mb=parsed.memory_mb)
    except BaseException:
        import traceback

        traceback.print_exc()
    finally:
        leave(status)


def leave(status: int) -> NoReturn:
    """End the child with its answer flushed and without the interpreter's finalization. A fork
    would touch, and so copy, every page of the template's heap it tore down; and a confined
    child's native libraries may abort tearing down what the limits no longer let them manage
    (pyarrow's thread pool: "terminate called without an active exception", SIGABRT), which
    would turn an answer already written into a crash."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(status)


def read_header(fd: int) -> bytes:
    """The request's line, read a byte at a time: not a byte of the source after it is taken
    from the pipe (a buffered read would) before the child is confined."""
    line = bytearray()
    while len(line) < MAX_HEADER_BYTES:
        byte = os.read(fd, 1)
        if not byte or byte == b"\n":
            break
        line += byte
    return bytes(line)


def extract_one(*, cpu_s: int, memory_mb: int) -> int:
    """One extraction, from stdin to stdout: the request's line, the format's warm-up, the whole
    confinement, and only then the source. A fresh child and a template's fork both run this."""
    stdin = sys.stdin.buffer
    # The request's line is the service's (the file's name in it as JSON); the source follows it.
    request = json.loads(read_header(stdin.fileno()))
    fmt, options = request["format"], request["options"]
    try:
        # The wall clock and the output bound are the parent's to enforce, not the child's.
        confine_child(
            cpu_s=cpu_s,
            memory_mb=memory_mb,
            prepare=lambda: warm(fmt, options, opens_nothing=landlock_abi() == 0),
        )
    except SandboxError as error:
        print(f"loom-extractor child: {error}", file=sys.stderr, flush=True)
        return EXIT_SANDBOX
    try:
        return _answer(stdin, request)
    except MemoryError:
        # Prepared before the limits, so answering needs no memory the child may not have.
        os.write(sys.stdout.fileno(), _OUT_OF_MEMORY)
        return EXIT_REFUSED


def _answer(stdin: Any, request: Mapping[str, Any]) -> int:
    data = stdin.read()
    try:
        body = _artifact_bytes(data, request)
    except ExtractError as error:
        return _refuse(error)
    except MemoryError:
        raise
    except Exception as error:  # any parser failure on a hostile input is `corrupt`
        return _refuse(
            ExtractError(
                "corrupt", f"the {request['format']} parser failed: {type(error).__name__}: {error}"
            )
        )
    del data
    sys.stdout.buffer.write(body)
    sys.stdout.buffer.flush()
    return 0


def _artifact_bytes(data: bytes, request: Mapping[str, Any]) -> bytes:
    from extractor_sandbox.source import artifact_json

    return artifact_json(
        data,
        request["format"],
        request["name"],
        request["options"],
        max_artifact_bytes=request.get("max_artifact_bytes"),
    )


def _refuse(error: ExtractError) -> int:
    sys.stdout.buffer.write(json.dumps(error.to_body()).encode("utf-8"))
    sys.stdout.buffer.flush()
    return EXIT_REFUSED


if __name__ == "__main__":
    sys.exit(main())
