"""The resident searcher of one LOOM_HOME: a process that keeps the search modules, the index,
numpy and the embedder loaded and answers `loom search` over a Unix socket (search/resident.py
says what the two sides share and why). It answers `loom sql` and `loom query` too, with
DuckDB, Arrow and sqlglot loaded (issue 39).

Each answer is what the command would print in its own process: the same cli code renders it,
and the index is re-read per request (the lexical reader reloads, the vector manifest is
checked, the home is prepared as every command prepares it), so a revision published or
retired after the resident started is in, or gone from, the next answer; a query reads the
catalog as it is at the request, as the command does.

Searches are answered one at a time; queries beside them, at most MAX_QUERIES at once, so a
query never holds up a search.

It exits when asked (`loom resident stop`), after LOOM_SEARCH_RESIDENT_IDLE seconds without a
request, and when its home, its folder or its socket goes away; a lock file keeps it the only
one for its home.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import sys
import threading
import time
import traceback
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from loom_dagster.cli.thread_output import captured
from loom_dagster.errors import LoomError
from loom_dagster.search.home import HomeSearcher
from loom_dagster.search.resident import (
    ANSWER_TIMEOUT,
    MAX_REQUEST_BYTES,
    PROTOCOL,
    QUERY_OPS,
    SEARCH_FIELDS,
    Place,
    home_of,
    idle_seconds,
    key_for,
    peer_uid,
    receive,
)

if TYPE_CHECKING:
    from loom_dagster.search.legs import SearchFilter
    from loom_dagster.search.service import SearchHit

Reply = dict[str, Any]
Answerer = Callable[[Mapping[str, Any]], Reply]
QueryAnswerer = Callable[[str, Mapping[str, Any]], Reply]

# How long a connection may take to send its request; a slow one holds only its own thread.
READ_TIMEOUT = 5.0
MAX_CONNECTIONS = 32
# How long a search waits for the one being answered (they are answered one at a time): past
# it the client is told `busy` and searches in its own process, so one slow client holds up
# the others at most this long (issue 34).
BUSY_WAIT = 0.5
# Queries answered at once, beside the search being answered: past it a query waits at most
# BUSY_WAIT, is told `busy` and its client answers in its own process. Each runs DuckDB with
# its own threads (query.run.Ceilings), so more would only share the same cores.
MAX_QUERIES = 2
# How long a new resident waits for the one it replaces to let go of the lock.
LOCK_WAIT = 5.0
# How often the accept loop wakes to check its home, its socket and its idle time.
POLL_SECONDS = 0.5


def valid_fields(fields: object, kinds: Mapping[str, type]) -> bool:
    """Exactly these names, each of exactly its type (a bool is no int here), a list of
    strings only."""
    if not isinstance(fields, dict) or set(fields) != set(kinds):
        return False
    for name, kind in kinds.items():
        value = fields[name]
        if type(value) is not kind:
            return False
        if isinstance(value, list) and not all(isinstance(item, str) for item in value):
            return False
    return True


def render(fields: Mapping[str, Any], find: Callable[..., list[SearchHit]]) -> Reply:
    """The command's output for a search, rendered by the command's own code."""
    from loom_dagster.cli.search import search_status

    return _rendered(lambda: search_status(argparse.Namespace(**fields), find))


def render_query(op: str, fields: Mapping[str, Any]) -> Reply:
    """The command's output for `loom sql` or `loom query` (`op`), rendered by its own code."""
    from loom_dagster.cli.query import answer_status

    return _rendered(lambda: answer_status(op, argparse.Namespace(**fields)))


def _rendered(answer: Callable[[], int]) -> Reply:
    """What `answer` printed, as this thread printed it, and the exit status it returned."""
    with captured() as (out, err):
        status = answer()
    return {"status": "ok", "exit": status, "stdout": out.getvalue(), "stderr": err.getvalue()}


def take_lock(place: Place, wait: float) -> int | None:
    """The home's resident lock, waited for up to `wait` seconds; None when another holds it."""
    import fcntl

    descriptor = place.open_lock()
    deadline = time.monotonic() + wait
    while True:
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return descriptor
        except BlockingIOError:
            if time.monotonic() >= deadline:
                os.close(descriptor)
                return None
            time.sleep(0.05)


def _identity(path: str) -> tuple[int, int] | None:
    try:
        status = os.lstat(path)
    except OSError:
        return None
    return (status.st_dev, status.st_ino)


class ResidentServer:
    """The socket side: one thread per connection, searches answered one at a time and
    queries (`answer_query`) beside them, `max_queries` at once; a request that would wait past
    `busy_wait` for its turn is told `busy` (its client answers itself)."""

    def __init__(
        self,
        place: Place,
        key: str,
        answer: Answerer,
        *,
        idle: float,
        answer_query: QueryAnswerer | None = None,
        uid: int | None = None,
        read_timeout: float = READ_TIMEOUT,
        max_connections: int = MAX_CONNECTIONS,
        busy_wait: float = BUSY_WAIT,
        max_queries: int = MAX_QUERIES,
    ) -> None:
        self.place = place
        self.key = key
        self.answer = answer
        self.answer_query = answer_query
        self._queries = threading.BoundedSemaphore(max_queries)
        self.idle = idle
        self.uid = os.geteuid() if uid is None else uid
        self.read_timeout = read_timeout
        self.busy_wait = busy_wait
        self._slots = threading.BoundedSemaphore(max_connections)
        self._search_turn = threading.Lock()
        self._stop = threading.Event()
        self._state = threading.Lock()
        self._open_connections = 0
        self._last = time.monotonic()
        self._home = _identity(place.home)
        self._folder = _identity(place.folder)
        self._socket: tuple[int, int] | None = None
        self._listener: socket.socket | None = None
        self.stopped_because = ""
        self.answered = 0  # searches and queries answered, for `loom resident status`
        self.queries = 0  # of which queries
        self.answering = 0  # searches and queries being answered now
        self.busy_seconds = 0.0  # and the time spent answering them

    def bind(self) -> None:
        """Listen on the home's socket (0600), replacing a stale one; the caller holds the lock."""
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM | socket.SOCK_CLOEXEC)
        try:
            try:
                os.unlink(self.place.socket)
            except FileNotFoundError:
                pass
            with self.place.socket_path() as path:
                previous = os.umask(0o177)
                try:
                    listener.bind(path)
                finally:
                    os.umask(previous)
            os.chmod(self.place.socket, 0o600)
            listener.listen(64)
            listener.settimeout(POLL_SECONDS)
        except OSError:
            listener.close()
            raise
        self._socket = _identity(self.place.socket)
        self._listener = listener

    def request_stop(self, reason: str = "asked to stop") -> None:
        if not self._stop.is_set():
            self.stopped_because = reason
        self._stop.set()

    def serve(self) -> None:
        """Answer until asked to stop, idle too long, or the home or socket is gone."""
        listener = self._listener
        if listener is None:
            raise RuntimeError("bind() first")
        try:
            while not self._stop.is_set():
                reason = self._reason_to_exit()
                if reason:
                    self.request_stop(reason)
                    break
                try:
                    connection, _ = listener.accept()
                except TimeoutError:
                    continue
                except OSError:
                    time.sleep(0.05)  # out of descriptors, say: the clients fall back meanwhile
                    continue
                if not self._slots.acquire(blocking=False):
                    connection.close()  # too many at once: that client searches itself
                    continue
                with self._state:
                    self._open_connections += 1
                    self._last = time.monotonic()
                threading.Thread(target=self._handle, args=(connection,), daemon=True).start()
        finally:
            self.close()

    def close(self) -> None:
        if self._listener is not None:
            self._listener.close()
            self._listener = None
        # Only our own socket: a successor may already have bound a new one at the same path.
        if self._socket is not None and _identity(self.place.socket) == self._socket:
            try:
                os.unlink(self.place.socket)
            except OSError:
                pass
        self._socket = None

    def _reason_to_exit(self) -> str:
        if _identity(self.place.home) != self._home or _identity(self.place.folder) != self._folder:
            return "its home was removed"
        if _identity(self.place.socket) != self._socket:
            return "its socket was removed"
        with self._state:
            if not self._open_connections and time.monotonic() - self._last > self.idle:
                return "idle"
        return ""

    def _handle(self, connection: socket.socket) -> None:
        try:
            with connection:
                if peer_uid(connection) != self.uid:
                    return  # another user's process: not a word
                reply = self._reply(receive(connection, MAX_REQUEST_BYTES, self.read_timeout))
                connection.settimeout(ANSWER_TIMEOUT)
                connection.sendall(json.dumps(reply).encode("ascii"))
        except OSError:
            pass  # the client went away or was too slow: it searches itself
        finally:
            with self._state:
                self._open_connections -= 1
                self._last = time.monotonic()
            self._slots.release()

    def _reply(self, raw: bytes | None) -> Reply:
        if raw is None:
            return {"status": "refused", "reason": "too_large"}
        try:
            request = json.loads(raw)
        except ValueError:
            return {"status": "refused", "reason": "bad_request"}
        if not isinstance(request, dict):
            return {"status": "refused", "reason": "bad_request"}
        if request.get("protocol") != PROTOCOL:
            return {"status": "mismatch"}
        op = request.get("op")
        if op == "stop":
            self.request_stop()
            return {"status": "stopping", "pid": os.getpid()}
        if op == "status":
            return {
                "status": "running",
                "pid": os.getpid(),
                "home": self.place.home,
                "same_version": request.get("key") == self.key,
                "idle_seconds": self.idle,
                "answered": self.answered,
                "queries": self.queries,
                "answering": self.answering,
                "busy_seconds": self.busy_seconds,
            }
        turn: threading.Lock | threading.BoundedSemaphore
        if op == "search":
            kinds: Mapping[str, type] = SEARCH_FIELDS
            turn, fields_name = self._search_turn, "search"
        elif op in QUERY_OPS and self.answer_query is not None:
            kinds, turn, fields_name = QUERY_OPS[op], self._queries, "query"
        else:
            return {"status": "refused", "reason": "bad_request"}
        if set(request) != {"protocol", "op", "key", fields_name}:
            return {"status": "refused", "reason": "bad_request"}
        if request.get("key") != self.key:
            return {"status": "mismatch"}
        fields = request.get(fields_name)
        if not valid_fields(fields, kinds):
            return {"status": "refused", "reason": "bad_request"}
        assert isinstance(fields, dict)
        reason = self._reason_to_exit()
        if reason and reason != "idle":
            self.request_stop(reason)
            return {"status": "gone"}
        if not turn.acquire(timeout=self.busy_wait):
            return {"status": "busy"}  # the client answers itself
        with self._state:
            self.answering += 1
        try:
            started = time.perf_counter()
            if op == "search":
                reply = self.answer(fields)
            else:
                assert self.answer_query is not None
                reply = self.answer_query(op, fields)
            with self._state:
                self.answered += 1
                self.queries += op != "search"
                self.busy_seconds += time.perf_counter() - started
            return reply
        except Exception:  # noqa: BLE001 - a defect: the client answers itself and shows it
            traceback.print_exc(file=sys.stderr)
            return {"status": "error"}
        finally:
            with self._state:
                self.answering -= 1
            turn.release()


def main() -> int:
    """The resident process: `loom search` starts it (resident.ResidentClient.start)."""
    from loom_dagster.settings import LoomSettings

    env = dict(os.environ)
    place = Place(home_of(env))
    try:
        idle = idle_seconds(env)
        if not place.make_private():
            print(f"{place.folder} is not a private folder of this user's", file=sys.stderr)
            return 1
        lock = take_lock(place, LOCK_WAIT)
        if lock is None:
            return 0  # another resident serves this home
        try:
            searcher = HomeSearcher(LoomSettings.from_env(env))
            try:
                # Load everything a search needs (index, numpy, the embedder) before listening.
                searcher.find("loom", _no_filter(), 1)
            except LoomError:
                pass
            _load_queries()
            server = ResidentServer(
                place,
                key_for(env, place.home),
                lambda fields: render(fields, searcher.find),
                idle=idle,
                answer_query=render_query,
            )
            server.bind()
            signal.signal(signal.SIGTERM, lambda *_: server.request_stop("terminated"))
            server.serve()
            print(f"resident searcher exits: {server.stopped_because}", file=sys.stderr)
        finally:
            os.close(lock)
    except LoomError as error:
        print(str(error), file=sys.stderr)
        return 2
    return 0


def _load_queries() -> None:
    """Import what `loom sql` and `loom query` run (DuckDB, Arrow, sqlglot and its dialect)
    before listening: a first query then costs what the next does."""
    import loom_dagster.api.tables  # noqa: F401
    import loom_dagster.query.service  # noqa: F401
    from loom_dagster.query.sql import check_sql

    try:
        check_sql("SELECT 1 FROM t", lambda name: None)  # sqlglot's dialect and parser
    except LoomError:
        pass


def _no_filter() -> SearchFilter:
    from loom_dagster.search.legs import SearchFilter

    return SearchFilter()


if __name__ == "__main__":
    sys.exit(main())
