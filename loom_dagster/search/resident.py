"""The client side of the resident searcher, and what it shares with the server
(resident_server.py): where a home's resident lives, how the two recognise each other, the
request's shape and bounds. The same resident answers `loom sql` and `loom query` (issue 39).

`loom search` spends most of its time starting: importing numpy and tantivy and loading the
embedder, before a search of a few milliseconds. A resident process (one per LOOM_HOME, like
dmypy) keeps them loaded; the command sends it the parsed request over a Unix socket and prints
the answer it returns, which the resident renders with the command's own code, so the output is
the same as an in-process search's. This module is imported on every `loom search`: it must
stay light (no numpy, tantivy, embedder, settings, Dagster).

Safety: the socket lives in `LOOM_HOME/resident/` (0700, this user's), is 0600, and each side
checks the other's uid (SO_PEERCRED). A request names a key (this checkout, its code, the
interpreter, the resolved home and every LOOM_ setting), and a resident answers only requests
whose key is its own, so one started by another checkout, version or home is never used.
Anything unexpected (no resident, a dead one, a refusal, a timeout) makes the command search
in its own process, as it would without a resident.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import socket
import stat
import struct
import sys
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any, NamedTuple

RESIDENT_ENV = "LOOM_SEARCH_RESIDENT"  # "off" (or 0, no, false): never ask or start one
IDLE_ENV = "LOOM_SEARCH_RESIDENT_IDLE"  # seconds without a request before it exits
DEFAULT_IDLE_SECONDS = 600
_OFF = frozenset({"off", "0", "no", "false"})
# loom_dagster.settings.DEFAULT_HOME, repeated here because importing the settings costs more
# than the whole client; tests/unit/test_resident.py checks that the two agree.
DEFAULT_HOME = ".loom"

# 2: the `sql` and `query` ops (issue 39).
PROTOCOL = 2
FOLDER = "resident"
SOCKET_NAME = "search.sock"
LOCK_NAME = "search.lock"
LOG_NAME = "search.log"
# A request is a parsed command line: a query pasted from a page still fits with room to spare.
# A larger one is searched in-process; the resident refuses one without reading past this.
MAX_REQUEST_BYTES = 256 * 1024
# How long the command waits for the resident's answer before searching itself (and then
# replacing it: one that does not answer in this time is stuck).
ANSWER_TIMEOUT = 30.0
# query.run.MAX_SECONDS_CEILING (not imported: it loads DuckDB): a longer --timeout is refused
# by the query itself, quickly.
_QUERY_SECONDS_TOP = 3600.0
# No dataclasses here: importing them costs the command milliseconds it otherwise saves.
# sun_path holds 108 bytes; a longer socket path is reached through the folder's descriptor.
_SUN_PATH_LIMIT = 100
_UCRED = struct.Struct("3i")  # pid, uid, gid

# The parsed `loom search` arguments a request carries, and the type each must have.
SEARCH_FIELDS: dict[str, type] = {
    "text": str,
    "limit": str,
    "formats": list,
    "sources": list,
    "tags": list,
    "block_types": list,
    "path": str,
    "json": bool,
    "explain": bool,
}


# The parsed `loom sql` and `loom query` arguments a request carries (op "sql" or "query"), with
# the plan of `loom query` read by the client and sent as text. Exact types: argparse gives an
# int for --max-rows and a float for --timeout, and nothing else is accepted.
QUERY_OPS: dict[str, dict[str, type]] = {
    "sql": {"text": str, "json": bool, "max_rows": int, "timeout": float},
    "query": {"plan": str, "json": bool, "max_rows": int, "timeout": float},
}


def enabled(env: Mapping[str, str]) -> bool:
    return env.get(RESIDENT_ENV, "").strip().lower() not in _OFF


def home_of(env: Mapping[str, str]) -> str:
    """LOOM_HOME resolved as LoomSettings.from_env resolves it."""
    return os.path.realpath(os.path.expanduser(env.get("LOOM_HOME") or DEFAULT_HOME))


def _package_folder() -> str:
    return os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _code_fingerprint(folder: str) -> list[tuple[str, int, int]]:
    """Every module of the package with its size and modification time: an edit, a checkout of
    another commit or an upgrade changes it."""
    found: list[tuple[str, int, int]] = []
    pending = [folder]
    while pending:
        with os.scandir(pending.pop()) as entries:
            for entry in entries:
                if entry.is_dir(follow_symlinks=False) and entry.name != "__pycache__":
                    pending.append(entry.path)
                elif entry.name.endswith(".py"):
                    status = entry.stat()
                    found.append((entry.path, status.st_size, status.st_mtime_ns))
    return sorted(found)


def key_for(env: Mapping[str, str], home: str) -> str:
    """What a client and a resident must agree on for one to answer the other."""
    package = _package_folder()
    settings = sorted(
        (name, value)
        for name, value in env.items()
        if name.startswith("LOOM_") and name != "LOOM_HOME" and not name.startswith(RESIDENT_ENV)
    )
    payload = json.dumps(
        [PROTOCOL, home, package, sys.executable, sys.version, _code_fingerprint(package), settings]
    )
    return hashlib.sha256(payload.encode("utf-8", "surrogatepass")).hexdigest()


class Place:
    """Where the resident of one home keeps its socket, lock and log."""

    def __init__(self, home: str) -> None:
        self.home = home

    @property
    def folder(self) -> str:
        return os.path.join(self.home, FOLDER)

    @property
    def socket(self) -> str:
        return os.path.join(self.folder, SOCKET_NAME)

    @property
    def lock(self) -> str:
        return os.path.join(self.folder, LOCK_NAME)

    @property
    def log(self) -> str:
        return os.path.join(self.folder, LOG_NAME)

    def private(self) -> bool:
        """The folder is there, a real folder, this user's and closed to everyone else."""
        try:
            status = os.lstat(self.folder)
        except OSError:
            return False
        return (
            stat.S_ISDIR(status.st_mode)
            and status.st_uid == os.geteuid()
            and not status.st_mode & 0o077
        )

    def make_private(self) -> bool:
        """Create the folder (0700) or close an existing one of this user's; False when it is
        not a folder of this user's (then no resident is started or asked)."""
        try:
            os.mkdir(self.folder, 0o700)
        except FileExistsError:
            pass
        except OSError:
            return False
        try:
            status = os.lstat(self.folder)
            if (
                stat.S_ISDIR(status.st_mode)
                and status.st_uid == os.geteuid()
                and status.st_mode & 0o077
            ):
                os.chmod(self.folder, 0o700, follow_symlinks=False)
        except OSError:
            return False
        return self.private()

    @contextmanager
    def socket_path(self) -> Iterator[str]:
        """The socket's path as bind and connect take it, whatever the home's length."""
        if len(os.fsencode(self.socket)) < _SUN_PATH_LIMIT:
            yield self.socket
            return
        folder = os.open(self.folder, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC | os.O_NOFOLLOW)
        try:
            yield f"/proc/self/fd/{folder}/{SOCKET_NAME}"
        finally:
            os.close(folder)

    def open_lock(self) -> int:
        return os.open(self.lock, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW, 0o600)

    def held(self) -> bool:
        """A live resident (or one starting) holds the lock."""
        try:
            descriptor = self.open_lock()
        except OSError:
            return True  # unknown: act as if one were there
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        finally:
            os.close(descriptor)
        return False

    def remove_stale_socket(self) -> None:
        """The socket of a resident that died: removed, unless a live one holds the lock."""
        try:
            descriptor = self.open_lock()
        except OSError:
            return
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
            try:
                os.unlink(self.socket)
            except FileNotFoundError:
                pass
        except BlockingIOError:
            pass
        finally:
            os.close(descriptor)


def peer_uid(connection: socket.socket) -> int:
    """The uid of the process at the other end of a Unix socket, from the kernel."""
    _, uid, _ = _UCRED.unpack(
        connection.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, _UCRED.size)
    )
    return int(uid)


def receive(
    connection: socket.socket, limit: int | None, seconds: float | None = None
) -> bytes | None:
    """Everything the other end sends until it shuts its side; None past `limit` bytes.
    With `seconds`, all of it must come in that time (TimeoutError): a client sending a byte
    now and then cannot hold a thread for long."""
    parts: list[bytes] = []
    size = 0
    deadline = None if seconds is None else time.monotonic() + seconds
    while True:
        if deadline is not None:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("the request took too long")
            connection.settimeout(left)
        part = connection.recv(65536)
        if not part:
            return b"".join(parts)
        size += len(part)
        if limit is not None and size > limit:
            return None
        parts.append(part)


class Answer(NamedTuple):
    """What the command prints and returns, as the resident rendered it."""

    status: int
    stdout: str
    stderr: str

    def shown(self) -> int:
        """Printed as the command prints it; its exit status."""
        sys.stdout.write(self.stdout)
        if self.stderr:
            sys.stderr.write(self.stderr)
            sys.stderr.flush()
        return self.status


class ResidentClient:
    """`loom search`'s side: ask the home's resident, or start one for the next call."""

    def __init__(self, env: Mapping[str, str] | None = None) -> None:
        self.env = dict(os.environ if env is None else env)
        self.enabled = enabled(self.env)
        self.place = Place(home_of(self.env))
        self._key: str | None = None
        # The resident that answered was started by another checkout, version or setting, or
        # did not answer in time: the command replaces it after searching itself.
        self.outdated = False
        self.timed_out = False
        self.answer_timeout = ANSWER_TIMEOUT
        self.uid = os.geteuid()  # the only user whose resident is trusted with the request

    @property
    def key(self) -> str:
        if self._key is None:
            self._key = key_for(self.env, self.place.home)
        return self._key

    def search(self, fields: Mapping[str, Any]) -> Answer | None:
        """The resident's answer to a parsed `loom search`, or None: search in-process.

        Raises SettingsError for a bad LOOM_SEARCH_RESIDENT_IDLE, as any command does for a bad
        setting (a resident started with it would exit at once, after every call)."""
        return self._ask({"op": "search", "search": dict(fields)})

    def query(self, op: str, fields: Mapping[str, Any]) -> Answer | None:
        """The resident's answer to a parsed `loom sql` or `loom query` (`op`), or None: answer
        in-process. The wait for it covers the query's own --timeout."""
        timeout = fields.get("timeout")
        if isinstance(timeout, float) and 0 < timeout <= _QUERY_SECONDS_TOP:
            self.answer_timeout = max(self.answer_timeout, ANSWER_TIMEOUT + timeout)
        return self._ask({"op": op, "query": dict(fields)})

    def _ask(self, request: Mapping[str, Any]) -> Answer | None:
        if not self.enabled:
            return None
        idle_seconds(self.env)
        reply = self.exchange({**request, "key": self.key})
        if reply is None:
            self.outdated = self.timed_out
            return None
        if reply.get("status") == "mismatch":
            self.outdated = True
            return None
        status, stdout, stderr = reply.get("exit"), reply.get("stdout"), reply.get("stderr")
        if reply.get("status") != "ok" or not isinstance(status, int):
            return None
        if not isinstance(stdout, str) or not isinstance(stderr, str):
            return None
        return Answer(status, stdout, stderr)

    def exchange(self, request: Mapping[str, Any]) -> dict[str, Any] | None:
        """One request, one reply; None when no resident of this user's answered."""
        data = json.dumps({"protocol": PROTOCOL, **request}).encode("ascii")
        if len(data) > MAX_REQUEST_BYTES or not self.place.private():
            return None
        connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM | socket.SOCK_CLOEXEC)
        try:
            connection.settimeout(self.answer_timeout)
            try:
                with self.place.socket_path() as path:
                    connection.connect(path)
            except ConnectionRefusedError:
                self.place.remove_stale_socket()
                return None
            if peer_uid(connection) != self.uid:
                return None
            connection.sendall(data)
            connection.shutdown(socket.SHUT_WR)
            raw = receive(connection, None)
        except TimeoutError:
            self.timed_out = True
            return None
        except OSError:
            return None
        finally:
            connection.close()
        try:
            reply = json.loads(raw or b"null")
        except ValueError:
            return None
        return reply if isinstance(reply, dict) else None

    def start(self) -> bool:
        """Start the home's resident, detached, for the next call (after an in-process search).
        An outdated one is asked to stop first; with a live one in place, nothing is started."""
        if not self.enabled or not os.path.isdir(self.place.home):
            return False
        if not self.place.make_private():
            return False
        if self.outdated:
            self.exchange({"op": "stop"})
        elif self.place.held():
            return False
        import subprocess  # only on the call that starts one

        env = {**self.env, "LOOM_HOME": self.place.home}
        boot = (
            "import sys; sys.path.insert(0, sys.argv[1]); "
            "from loom_dagster.cli.resident_server import main; sys.exit(main())"
        )
        try:
            log = os.open(
                self.place.log,
                os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC | os.O_NOFOLLOW,
                0o600,
            )
        except OSError:
            return False
        try:
            subprocess.Popen(
                [sys.executable, "-c", boot, os.path.dirname(_package_folder())],
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=log,
                start_new_session=True,
                close_fds=True,
            )
        except OSError:
            return False
        finally:
            os.close(log)
        return True

    def stop(self) -> bool:
        """Ask the home's resident to exit; False when none answered."""
        reply = self.exchange({"op": "stop"})
        return reply is not None and reply.get("status") == "stopping"

    def status(self) -> dict[str, Any] | None:
        reply = self.exchange({"op": "status", "key": self.key})
        return reply if reply is not None and reply.get("status") == "running" else None


def idle_seconds(env: Mapping[str, str]) -> float:
    raw = env.get(IDLE_ENV, "").strip()
    if not raw:
        return float(DEFAULT_IDLE_SECONDS)
    try:
        value = float(raw)
    except ValueError:
        value = -1.0
    if not 0 < value < float("inf"):  # NaN fails this too
        from loom_dagster.errors import SettingsError

        raise SettingsError(f"{IDLE_ENV} must be a positive number of seconds, not {raw!r}")
    return value
