"""A real S3-compatible server on loopback for the S3 suite: moto's standalone server in a
process of its own, and a gate in front of it that can stop answering mid-run while the server
keeps its buckets (a stopped moto server forgets everything, so the outage is the gate's)."""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

# The test credentials: moto accepts any pair unless it checks them (refusing_credentials).
ACCESS_KEY = "loom-test-access-key"
SECRET_KEY = "loom-test-secret-never-shown-4f9c2a"
REGION = "us-east-1"


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class S3Server:
    """`python -m moto.server` on 127.0.0.1; `check_credentials` makes it refuse every key
    (moto checks keys against its IAM users, and there are none)."""

    def __init__(self, log: Path, *, check_credentials: bool = False) -> None:
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        env = dict(os.environ)
        if check_credentials:
            env["INITIAL_NO_AUTH_ACTION_COUNT"] = "0"
        self._log = log.open("wb")
        self._process = subprocess.Popen(
            [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(self.port)],
            stdout=self._log,
            stderr=subprocess.STDOUT,
            env=env,
        )
        self._wait_until_it_answers()

    def _wait_until_it_answers(self) -> None:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self._process.poll() is not None:
                raise RuntimeError(f"moto's server ended at start; see {self._log.name}")
            try:
                urllib.request.urlopen(f"{self.url}/moto-api/", timeout=1).close()
                return
            except (urllib.error.URLError, OSError):
                time.sleep(0.2)
        raise RuntimeError("moto's server did not answer within 60 s")

    def create_bucket(self, name: str) -> None:
        self._client().create_bucket(Bucket=name)

    def _client(self) -> Any:
        import boto3

        return boto3.client(
            "s3",
            endpoint_url=self.url,
            aws_access_key_id=ACCESS_KEY,
            aws_secret_access_key=SECRET_KEY,
            region_name=REGION,
        )

    def keys(self, bucket: str) -> list[str]:
        """Every key in `bucket`, listed straight from the server (not through loom)."""
        pages = self._client().get_paginator("list_objects_v2").paginate(Bucket=bucket)
        return [item["Key"] for page in pages for item in page.get("Contents", [])]

    def objects(self, bucket: str) -> dict[str, bytes]:
        """Every object in `bucket` with its bytes; one deleted since the listing is left out."""
        client = self._client()
        found: dict[str, bytes] = {}
        for key in self.keys(bucket):
            try:
                found[key] = client.get_object(Bucket=bucket, Key=key)["Body"].read()
            except client.exceptions.NoSuchKey:
                continue
        return found

    def stop(self) -> None:
        self._process.terminate()
        try:
            self._process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()
        self._log.close()


class Gate:
    """A TCP relay on its own loopback port in front of `target`: while open it passes bytes
    both ways; `close()` drops every connection and refuses new ones until `open()`."""

    def __init__(self, target_port: int) -> None:
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self._target = target_port
        self._lock = threading.Lock()
        self._connections: list[socket.socket] = []
        self._listener: socket.socket | None = None
        self.open()

    def open(self) -> None:
        listener = socket.socket()
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", self.port))
        listener.listen(64)
        self._listener = listener
        threading.Thread(target=self._accept, args=(listener,), daemon=True).start()

    def close(self) -> None:
        with self._lock:
            listener, self._listener = self._listener, None
            connections, self._connections = self._connections, []
        if listener is not None:
            with contextlib.suppress(OSError):
                listener.shutdown(socket.SHUT_RDWR)
            listener.close()
        for connection in connections:
            with contextlib.suppress(OSError):
                connection.shutdown(socket.SHUT_RDWR)
            connection.close()

    def _accept(self, listener: socket.socket) -> None:
        while True:
            try:
                client, _ = listener.accept()
            except OSError:
                return  # closed
            try:
                upstream = socket.create_connection(("127.0.0.1", self._target))
            except OSError:
                client.close()
                continue
            with self._lock:
                if self._listener is not listener:
                    client.close()
                    upstream.close()
                    return
                self._connections += [client, upstream]
            for source, sink in ((client, upstream), (upstream, client)):
                threading.Thread(target=_relay, args=(source, sink), daemon=True).start()


def _relay(source: socket.socket, sink: socket.socket) -> None:
    with contextlib.suppress(OSError):
        while data := source.recv(65536):
            sink.sendall(data)
    with contextlib.suppress(OSError):
        sink.shutdown(socket.SHUT_WR)


@contextlib.contextmanager
def running_server(log: Path, *, check_credentials: bool = False) -> Iterator[S3Server]:
    server = S3Server(log, check_credentials=check_credentials)
    try:
        yield server
    finally:
        server.stop()
