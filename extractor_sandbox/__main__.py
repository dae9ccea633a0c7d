"""python -m extractor_sandbox serve --host H --port P [--token-file PATH]

The token comes from LOOM_EXTRACTOR_TOKEN or the token file, never from a flag, which every user of
the machine could read in the process list. The settings are LOOM_EXTRACTOR_* variables (README.md).
Exit status 2: a setting or the token is invalid; 1: the address cannot be listened on.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

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
    arguments = parser.parse_args(argv)

    try:
        token = load_token(os.environ, arguments.token_file)
        settings = load_settings(os.environ)
    except SettingsError as error:
        print(f"loom-extractor: {error}", file=sys.stderr)
        return 2

    from extractor_sandbox.service import serve

    return serve(arguments.host, arguments.port, token, settings)


if __name__ == "__main__":
    sys.exit(main())
