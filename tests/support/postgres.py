"""A throwaway PostgreSQL server on loopback, from the machine's own server binaries (Debian's
`postgresql` package, which scripts/setup installs with LOOM_SETUP_POSTGRES=1).

Used by the tests of Dagster on PostgreSQL and by bench/ingest_throughput.py. The server refuses
to run as root, so as root it runs as the `postgres` user (or `nobody`) in a private temporary
folder that user owns; otherwise as the caller, under `root`.
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import sqlalchemy as db

# A fresh server answers in about a second; a loaded machine may take longer.
START_TIMEOUT_S = 60.0


def server_binaries() -> Path | None:
    """The folder holding `initdb` and `postgres`, or None when no server is installed."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/postgres"))
    if found:
        return Path(found[-1]).parent
    initdb = shutil.which("initdb")
    return Path(initdb).resolve().parent if initdb else None


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _server_user() -> str | None:
    """Whom the server runs as: the caller, or as root a user the server accepts."""
    if os.geteuid() != 0:
        return None
    for name in ("postgres", "nobody"):
        try:
            pwd.getpwnam(name)
            return name
        except KeyError:
            continue
    raise RuntimeError("running as root with neither a postgres nor a nobody user")


@contextmanager
def local_postgres(root: Path, *, durable: bool = False) -> Iterator[str]:
    """Start a server; yield its URL (psycopg2, database `postgres`, user `loom`, no password, loopback
    only); stop it and delete its files on leaving.

    `durable` keeps PostgreSQL's fsync on (for measurements); tests turn it off.
    """
    binaries = server_binaries()
    if binaries is None:
        raise FileNotFoundError("no PostgreSQL server binaries (initdb, postgres)")
    user = _server_user()
    # As root the data must sit where the server's user can reach: a private folder of its own.
    base = Path(tempfile.mkdtemp(prefix="loom-pg-")) if user else root / "postgres"
    base.mkdir(parents=True, exist_ok=True)
    data, sockets, log = base / "data", base / "run", base / "server.log"
    sockets.mkdir()
    if user:
        entry = pwd.getpwnam(user)
        for path in (base, sockets):
            os.chown(path, entry.pw_uid, entry.pw_gid)
    port = _free_port()
    server = None
    try:
        subprocess.run(
            [str(binaries / "initdb"), "-D", str(data), "-U", "loom", "--auth=trust", "-E", "UTF8"]
            + ["--no-sync", "--no-instructions"],
            check=True,
            capture_output=True,
            user=user,
            cwd=base,
        )
        settings = ["-c", "listen_addresses=127.0.0.1", "-c", f"unix_socket_directories={sockets}"]
        if not durable:
            settings += ["-c", "fsync=off", "-c", "synchronous_commit=off"]
        with open(log, "wb") as out:
            server = subprocess.Popen(
                [str(binaries / "postgres"), "-D", str(data), "-p", str(port)] + settings,
                stdout=out,
                stderr=subprocess.STDOUT,
                user=user,
                cwd=base,
            )
        url = f"postgresql+psycopg2://loom@127.0.0.1:{port}/postgres"
        _wait_until_up(url, server, log)
        yield url
    finally:
        if server is not None:
            server.terminate()
            try:
                server.wait(timeout=30)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait()
        shutil.rmtree(base, ignore_errors=True)


def _wait_until_up(url: str, server: subprocess.Popen[bytes], log: Path) -> None:
    engine = db.create_engine(url)
    deadline = time.monotonic() + START_TIMEOUT_S
    try:
        while True:
            try:
                with engine.connect() as conn:
                    conn.execute(db.text("SELECT 1"))
                return
            except db.exc.OperationalError:
                if server.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(
                        f"PostgreSQL did not start: {log.read_text(errors='replace')[-2000:]}"
                    ) from None
                time.sleep(0.2)
    finally:
        engine.dispose()
