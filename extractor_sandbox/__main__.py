"""python -m extractor_sandbox serve --host H --port P [--token-file PATH] [--user NAME]
[--stop-with-stdin]

The token comes from LOOM_EXTRACTOR_TOKEN or the token file, never from a flag, which every user of
the machine could read in the process list. The settings are LOOM_EXTRACTOR_* variables (README.md).

Before it listens the service checks that its sandbox can hold: the architecture is one the socket
filter covers; it does not serve as root or with CAP_SYS_RESOURCE or CAP_SYS_ADMIN permitted (a
start as root drops at once to --user, `nobody` by default, once the token and settings are read);
the user it serves as can run the children's interpreter and read the package. Then it makes
itself non-dumpable and sets no-new-privileges.

With --stop-with-stdin it stops, as on SIGTERM, when its stdin closes: the process that started it
holds the other end of that pipe, so the service does not outlive it even when it is killed with
SIGKILL (a parent-death signal would not do: the kernel clears it at the drop to --user).

Exit status 2: a setting or the token is invalid, or the sandbox cannot hold here (one line on
stderr says which); 1: the address cannot be listened on.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading
from collections.abc import Sequence

from extractor_sandbox import sandbox
from extractor_sandbox.ocr_settings import check_ocr
from extractor_sandbox.settings import SettingsError, fit_open_files, load_settings, load_token

DEFAULT_PORT = 8790


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m extractor_sandbox", description="Loom's reference extractor service"
    )
    commands = parser.add_subparsers(dest="command", required=True)
    serve_command = commands.add_parser("serve", help="serve contract v1 over HTTP")
    serve_command.add_argument("--host", default="127.0.0.1", help="address to listen on")
    serve_command.add_argument(
        "--port", type=int, default=DEFAULT_PORT, help="port to listen on; 0 picks a free one"
    )
    serve_command.add_argument(
        "--token-file", help="a file holding the bearer token, instead of LOOM_EXTRACTOR_TOKEN"
    )
    serve_command.add_argument(
        "--user",
        help=f"started as root, the user to drop to before serving (default {sandbox.DEFAULT_USER})",
    )
    serve_command.add_argument(
        "--stop-with-stdin",
        action="store_true",
        help="stop when stdin closes (the starter holds a pipe's other end)",
    )
    arguments = parser.parse_args(argv)

    try:
        sandbox.check_architecture()
        token = load_token(os.environ, arguments.token_file)
        settings, files_note = fit_open_files(load_settings(os.environ))
        ocr_note = check_ocr(os.environ)
    except (SettingsError, sandbox.SandboxError) as error:
        return _refuse(error)
    for note in (files_note, ocr_note):
        if note:
            print(f"loom-extractor: {note}", file=sys.stderr, flush=True)

    # Everything the service runs is loaded now, before the drop, so that nothing is imported
    # from a place the user it serves as might not read.
    from extractor_sandbox.runner import PACKAGE_ROOT
    from extractor_sandbox.service import serve

    try:
        if os.geteuid() == 0:
            sandbox.drop_privileges(arguments.user or sandbox.DEFAULT_USER)
        elif arguments.user is not None and arguments.user != _user_name():
            raise sandbox.SandboxError(
                f"--user {arguments.user} needs a start as root; this is {_user_name()}"
            )
        sandbox.check_privileges()
        sandbox.check_runnable(sys.executable, PACKAGE_ROOT)
        sandbox.confine_service()
    except sandbox.SandboxError as error:
        return _refuse(error)
    if arguments.stop_with_stdin:
        threading.Thread(target=_stop_when_stdin_closes, name="stdin-watch", daemon=True).start()
    return serve(arguments.host, arguments.port, token, settings)


def _stop_when_stdin_closes() -> None:
    try:
        while os.read(0, 4096):
            pass  # nothing is ever written; only the end of the pipe matters
    except OSError:
        pass  # closed or unreadable: the starter is gone either way
    # serve() stops on SIGTERM: it stops taking calls and kills its running children.
    os.kill(os.getpid(), signal.SIGTERM)


def _user_name() -> str:
    import pwd

    try:
        return pwd.getpwuid(os.getuid()).pw_name
    except KeyError:
        return str(os.getuid())


def _refuse(error: Exception) -> int:
    print(f"loom-extractor: {error}", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
