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
"""

from __future__ import annotations

import sys
import warnings
from collections.abc import Sequence
from types import SimpleNamespace
from typing import Any

WEBSERVER_MODULE = ["-m", "dagster_webserver"]


def webserver_command(command: Sequence[str], socket_path: str, read_only: bool) -> list[str]:
    """`dagster dev`'s webserver command, run by `web` on `socket_path` instead."""
    head = [sys.executable, *WEBSERVER_MODULE]
    if list(command[: len(head)]) != head:
        return list(command)
    return [
        sys.executable,
        "-m",
        "loom_dagster.ui_webserver",
        "web",
        socket_path,
        "1" if read_only else "0",
        *command[len(head) :],
    ]


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


def main(argv: list[str]) -> None:
    role, socket_path, read_only, *rest = argv
    (dev if role == "dev" else web)(socket_path, read_only == "1", rest)


if __name__ == "__main__":
    main(sys.argv[1:])
