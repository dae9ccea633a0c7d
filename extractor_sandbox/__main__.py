"""python -m extractor_sandbox serve --host H --port P [--token-file PATH] [--user NAME]

The token comes from LOOM_EXTRACTOR_TOKEN or the token file, never from a flag, which every user of
the machine could read in the process list. The settings are LOOM_EXTRACTOR_* variables (README.md).

Before it listens the service checks that its sandbox can hold: the architecture is one the socket
filter covers; it does not serve as root or with CAP_SYS_RESOURCE or CAP_SYS_ADMIN permitted (a
start as root drops at once to --user, `nobody` by default, once the token and settings are read);
the user it serves as can run the children's interpreter and read the package. Then it makes
itself non-dumpable and sets no-new-privileges.

Exit status 2: a setting or the token is invalid, or the sandbox cannot hold here (one line on
stderr says which); 1: the address cannot be listened on.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

from extractor_sandbox import sandbox
from extractor_sandbox.settings import SettingsError, load_settings, load_token

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
    arguments = parser.parse_args(argv)

    try:
        sandbox.check_architecture()
        token = load_token(os.environ, arguments.token_file)
        settings = load_settings(os.environ)
    except (SettingsError, sandbox.SandboxError) as error:
        return _refuse(error)

    # Everything the service runs is loaded now, before the drop, so that nothing is imported
    # from a place the user it serves as might not read.
    from extractor_sandbox.child import PACKAGE_ROOT
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
    return serve(arguments.host, arguments.port, token, settings)


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
