"""`dagster dev` with its webserver on a Unix socket: what `loom ui` runs behind its gate.

Dagster's webserver listens only on TCP (`dagster-webserver -h/-p`), and any local user can
open a loopback port: the UI's GraphQL reads run tags and document text and runs mutations. So
`loom ui` runs `python -m loom_dagster.ui_webserver dev SOCKET READ_ONLY <dagster dev args>`:
`dagster dev` itself, whose webserver process is started as `python -m loom_dagster.ui_webserver
web SOCKET READ_ONLY <its args>` instead of `python -m dagster_webserver`. That process is the
webserver's own command line, but uvicorn serves on `SOCKET`, in a folder only the user can open
(0700; uvicorn makes the socket itself 0666), with `--read-only` when READ_ONLY is 1. The user's
browser reaches it through `ui_gate` (loopback TCP, a per-session token).

Two small substitutions in Dagster's code (`dagster._cli.dev.open_ipc_subprocess`,
`dagster_webserver.cli.uvicorn`); `tests/integration/test_loom_ui.py` fails if either stops
taking effect (the webserver would then be on TCP, and the gate's test reaches nothing).

The daemon `dagster dev` starts is run the same way (`python -m loom_dagster.ui_webserver daemon
<its args>`), for one setting Dagster 1.13 reads from no dagster.yaml: how often its backfill
daemon passes over the backfills (`dagster._daemon.controller.DEFAULT_DAEMON_INTERVAL_SECONDS`,
30 s, read when its loop starts). A backfill is marked completed on the first pass after its last run
ended, so with 30 s passes, which a busy pass can double, a backfill read "in progress" for up
to a minute after its work was done; every BACKFILL_PASS_S it is within one sensor tick (30 s).
A pass with no backfill in progress is three small queries.
"""

from __future__ import annotations

import os
import subprocess
import sys
import warnings
from collections.abc import Sequence
from contextlib import ExitStack
from types import SimpleNamespace
from typing import Any

WEBSERVER_MODULE = ["-m", "dagster_webserver"]
DAGSTER_MODULE = ["-m", "dagster"]
# What a run's process has imported before the run is handed to it.
PRELOAD = "loom_dagster.definitions"
# Seconds between two passes of the sensor daemon over the sensors (Dagster's own: 5): the
# folder sensor ticks every second (sensors.TICK_S).
SENSOR_PASS_S = 1.0
DAEMON_MODULE = ["-m", "dagster._daemon"]
# Seconds between two passes of the backfill daemon (Dagster's own: 30).
BACKFILL_PASS_S = 10


def webserver_command(command: Sequence[str], socket_path: str, read_only: bool) -> list[str]:
    """`dagster dev`'s webserver command, run by `web` on `socket_path` instead; its daemon's
    command, run by `daemon`; any other command as it is."""
    for module, role in ((WEBSERVER_MODULE, "web"), (DAEMON_MODULE, "daemon")):
        head = [sys.executable, *module]
        if list(command[: len(head)]) == head:
            return [
                sys.executable,
                "-m",
                "loom_dagster.ui_webserver",
                role,
                socket_path,
                "1" if read_only else "0",
                *command[len(head) :],
            ]
    return list(command)


def code_server_command(command: Sequence[str]) -> list[str]:
    """A code server's command (`dagster api grpc`, or the proxy `dagster code-server start`
    that starts one), run by this module's `grpc` or `code-server` role instead: the same
    server, whose runs start from a forkserver that has the code location imported."""
    head = [sys.executable, *DAGSTER_MODULE]
    for role, verb in (("grpc", ["api", "grpc"]), ("code-server", ["code-server", "start"])):
        if list(command[: len(head) + 2]) == [*head, *verb]:
            return [
                sys.executable,
                "-m",
                "loom_dagster.ui_webserver",
                role,
                "-",
                "0",
                *command[len(head) + 2 :],
            ]
    return list(command)


def start_code_servers_forking() -> None:
    """Code servers this process starts (`dagster._grpc.server.open_server_process`) are run
    by the `grpc` and `code-server` roles."""
    import dagster._grpc.server as server

    opened = server.open_ipc_subprocess

    def open_ipc_subprocess(parts: Sequence[str], **kwargs: Any) -> Any:
        return opened(code_server_command(parts), **kwargs)

    server.open_ipc_subprocess = open_ipc_subprocess


def dev(socket_path: str, read_only: bool, args: list[str]) -> None:
    import dagster._cli.dev as dagster_dev

    warnings.filterwarnings("ignore", message=r"Function `dev_command` is superseded")
    opened = dagster_dev.open_ipc_subprocess

    def open_ipc_subprocess(parts: Sequence[str], **kwargs: Any) -> Any:
        return opened(webserver_command(parts, socket_path, read_only), **kwargs)

    dagster_dev.open_ipc_subprocess = open_ipc_subprocess  # type: ignore[assignment]
    start_code_servers_forking()
    start_watcher()
    start_extractor()
    dagster_dev.dev_command.main(args=args, prog_name="dagster dev")


_RESIDENT = ExitStack()


def start_extractor() -> None:
    """With no extractor configured, each run would start the reference extractor itself (its
    largest fixed cost, seconds); one started here serves every run this process's daemon
    launches, for as long as this process lives (it ends with it: local.py)."""
    from loom_dagster.extractor.local import reference_extractor
    from loom_dagster.extractor.settings import ENV_TOKEN, ENV_URL, ExtractorSettings

    settings = ExtractorSettings.from_env(os.environ)
    if settings.default_url or settings.routes:
        return
    running = _RESIDENT.enter_context(reference_extractor())
    os.environ[ENV_URL] = running.url
    os.environ[ENV_TOKEN] = running.token


def start_watcher() -> subprocess.Popen[bytes] | None:
    """The home's watcher (sources/watcher.py), a child of this process: it ends with it.
    None with LOOM_WATCHER=0: the folder sensor's polling scan alone finds what changed."""
    from loom_dagster.settings import LoomSettings
    from loom_dagster.sources import watcher

    settings = LoomSettings.from_env()
    if not settings.watcher:
        return None
    return subprocess.Popen(watcher.command(settings.home))


def watch(socket_path: str, read_only: bool, args: list[str]) -> None:
    """`loom watch`: the watcher and Dagster's daemon, no webserver."""
    start_watcher()
    start_extractor()
    daemon(socket_path, read_only, args)


def grpc(socket_path: str, read_only: bool, args: list[str]) -> None:
    """`dagster api grpc`, its runs started from a forkserver (see the module's docstring)."""
    use_forkserver()
    from dagster._cli import main as dagster_main

    sys.argv = ["dagster", "api", "grpc", *args]
    dagster_main()


def code_server(socket_path: str, read_only: bool, args: list[str]) -> None:
    """`dagster code-server start`, the proxy `dagster dev` runs, whose own code server (it
    starts one) is run by `grpc`."""
    start_code_servers_forking()
    from dagster._cli import main as dagster_main

    sys.argv = ["dagster", "code-server", "start", *args]
    dagster_main()


class _Forkserver:
    """`multiprocessing` for Dagster's code server: the context it asks for ("spawn") is the
    forkserver one, its server started now with the code location imported."""

    def __init__(self) -> None:
        import multiprocessing
        import multiprocessing.forkserver

        self._module = multiprocessing
        self._context = multiprocessing.get_context("forkserver")
        self._context.set_forkserver_preload([PRELOAD])
        multiprocessing.forkserver.ensure_running()

    def get_context(self, method: str | None = None) -> Any:
        return self._context

    def __getattr__(self, name: str) -> Any:
        return getattr(self._module, name)


def use_forkserver() -> None:
    import dagster._grpc.server as server

    server.multiprocessing = _Forkserver()  # type: ignore[assignment]


def web(socket_path: str, read_only: bool, args: list[str]) -> None:
    import dagster_webserver.cli as cli
    import uvicorn

    def run(app: Any, **kwargs: Any) -> None:
        uvicorn.run(app, uds=socket_path, log_level=kwargs.get("log_level", "warning"))

    cli.uvicorn = SimpleNamespace(run=run)  # type: ignore[assignment]
    sys.argv = ["dagster-webserver", *args, *(["--read-only"] if read_only else [])]
    cli.main()


def daemon(socket_path: str, read_only: bool, args: list[str]) -> None:
    """`dagster-daemon` with its backfill daemon passing every BACKFILL_PASS_S."""
    import dagster._daemon.cli as cli

    set_backfill_pass()
    set_sensor_pass()
    start_code_servers_forking()
    sys.argv = ["dagster-daemon", *args]
    cli.main()


def set_backfill_pass(seconds: int = BACKFILL_PASS_S) -> None:
    """Dagster's backfill daemon reads this module global when its loop starts, and sleeps
    what is left of it after each pass."""
    import dagster._daemon.controller as controller

    controller.DEFAULT_DAEMON_INTERVAL_SECONDS = seconds


def set_sensor_pass(seconds: float = SENSOR_PASS_S) -> None:
    """Dagster's sensor daemon sleeps what is left of this module global after each pass over
    the sensors (read at every pass)."""
    import dagster._daemon.sensor as sensor

    sensor.MIN_INTERVAL_LOOP_TIME = seconds  # type: ignore[assignment]


def main(argv: list[str]) -> None:
    role, socket_path, read_only, *rest = argv
    run = {
        "dev": dev,
        "web": web,
        "daemon": daemon,
        "watch": watch,
        "grpc": grpc,
        "code-server": code_server,
    }[role]
    run(socket_path, read_only == "1", rest)


if __name__ == "__main__":
    main(sys.argv[1:])
