"""`loom serve`: the published search, passages, documents and datasets for agents (MCP over
stdio or streamable HTTP) and services (the JSON API under /v1); `loom serve token` adds a
bearer token to a token file (loom_dagster/serve/)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from loom_dagster.cli.common import command


def add_commands(commands: Any) -> None:
    serve = command(
        commands,
        "serve",
        "serve search, passages, documents and datasets, read-only, over MCP and HTTP",
    )
    serve.add_argument(
        "--http",
        action="store_true",
        help="serve streamable HTTP (MCP at /mcp, the JSON API at /v1) instead of stdio",
    )
    serve.add_argument("--host", default="127.0.0.1", help="with --http (default 127.0.0.1)")
    serve.add_argument("--port", type=int, default=8791, help="with --http (default 8791)")
    serve.add_argument(
        "--token-file", type=Path, help="with --http (required): the tokens and their sources"
    )
    serve.add_argument(
        "--source",
        action="append",
        default=[],
        dest="sources",
        help="over stdio: read only this source (repeatable; default every source)",
    )
    serve.add_argument(
        "--timeout", type=float, default=10.0, help="seconds a call may take (default 10)"
    )
    serve.set_defaults(run=_serve)
    actions = serve.add_subparsers(metavar="ACTION")
    token = command(actions, "token", "make a bearer token, print it once, add its hash to a file")
    token.add_argument("--token-file", type=Path, required=True, dest="file")
    token.add_argument("--name", required=True)
    token.add_argument("--source", action="append", default=[], dest="token_sources")
    token.add_argument("--all-sources", action="store_true")
    token.set_defaults(run=_token)


def _serve(args: argparse.Namespace) -> int:
    from loom_dagster.errors import SettingsError
    from loom_dagster.serve import run

    if not 0 < args.timeout <= 600:
        raise SettingsError("--timeout must be more than 0 and at most 600 seconds")
    if args.http:
        if args.sources:
            raise SettingsError("--source scopes stdio; over HTTP each token has its sources")
        run.run_http(args.host, args.port, args.token_file, args.timeout)
    else:
        if args.token_file is not None:
            raise SettingsError("--token-file is for --http; over stdio use --source")
        run.run_stdio(args.sources, args.timeout)
    return 0


def _token(args: argparse.Namespace) -> int:
    from loom_dagster.serve.tokens import ALL, add_token

    sources = [ALL] if args.all_sources else args.token_sources
    print(add_token(args.file, args.name, sources))
    return 0
