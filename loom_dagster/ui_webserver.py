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

import sys
import warnings
from collections.abc import Sequence
from types import SimpleNamespace
from typing import Any

WEBSERVER_MODULE = ["-m", "dagster_webserver"]
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


def dev(socket_path: str, read_only: bool, args: list[str]) -> None:
    import dagster._cli.dev as dagster_dev

    warnings.filterwarnings("ignore", message=r"Function `dev_command` is superseded")
    opened = dagster_dev.open_ipc_subprocess

    def open_ipc_subprocess(parts: Sequence[str], **kwargs: Any) -> Any:
        return opened(webserver_command(parts, socket_path, read_only), **kwargs)

    dagster_dev.open_ipc_subprocess = open_ipc_subprocess  # type: ignore[assignment]
    dagster_dev.dev_command.main(args=args, prog_name="dagster dev")


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
    sys.argv = ["dagster-daemon", *args]
    cli.main()


def set_backfill_pass(seconds: int = BACKFILL_PASS_S) -> None:
    """Dagster's backfill daemon reads this module global when its loop starts, and sleeps
    what is left of it after each pass."""
    import dagster._daemon.controller as controller

    controller.DEFAULT_DAEMON_INTERVAL_SECONDS = seconds


def main(argv: list[str]) -> None:
    role, socket_path, read_only, *rest = argv
    run = {"dev": dev, "web": web, "daemon": daemon}[role]
    run(socket_path, read_only == "1", rest)


if __name__ == "__main__":
    main(sys.argv[1:])
