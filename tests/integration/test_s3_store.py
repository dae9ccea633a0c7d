"""The whole pipeline on S3: `LOOM_OBJECT_STORE_URL=s3://bucket/prefix` against a real
S3-compatible server on loopback (moto's, in a process of its own), endpoint and credentials
from the standard AWS variables. Ingest, change, delete, search and a dataset query, then the
faults: a missing bucket, refused credentials, and the server going away mid-run."""

from __future__ import annotations

import hashlib
import io
import json
import re
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from tests.integration.loom_command import loom
from tests.support.s3_server import (
    ACCESS_KEY,
    REGION,
    SECRET_KEY,
    Gate,
    S3Server,
    running_server,
)

pytestmark = pytest.mark.s3

BUCKET = "loom-docs"
PREFIX = "team/store"


@pytest.fixture(scope="module")
def s3_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[S3Server]:
    with running_server(tmp_path_factory.mktemp("moto") / "moto.log") as server:
        yield server


def use_s3(monkeypatch: pytest.MonkeyPatch, endpoint: str, bucket: str) -> None:
    monkeypatch.setenv("LOOM_OBJECT_STORE_URL", f"s3://{bucket}/{PREFIX}")
    monkeypatch.setenv("AWS_ENDPOINT_URL", endpoint)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", ACCESS_KEY)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", SECRET_KEY)
    monkeypatch.setenv("AWS_DEFAULT_REGION", REGION)


@pytest.fixture
def bucket(request: pytest.FixtureRequest, s3_server: S3Server) -> str:
    """A bucket of this test's own on the module's server."""
    name = re.sub(r"[^a-z0-9-]", "-", request.node.name.lower())[:40].strip("-") + "-b"
    s3_server.create_bucket(name)
    return name


@pytest.fixture
def docs(tmp_path: Path) -> Path:
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "disk.md").write_text(
        "# Disk alerts\n\nE-DISK-042 means the data volume is full; free space first.\n"
    )
    (folder / "usage.csv").write_text("host,day,used\nalpha,2024-01-01,10\nbeta,2024-01-02,20\n")
    (folder / "notes.txt").write_text("The harbour crane HW-77 is inspected every spring.\n")
    return folder


def stored(server: S3Server, bucket: str) -> dict[str, bytes]:
    """The bucket's objects under loom's prefix, by their key below it."""
    return {
        key.removeprefix(PREFIX + "/"): data
        for key, data in server.objects(bucket).items()
        if key.startswith(PREFIX + "/")
    }


def assert_every_object_whole(objects: dict[str, bytes]) -> None:
    """Content-addressed objects hash to their key; Parquet files read to their end."""
    for key, data in objects.items():
        if key.startswith("originals/"):
            assert hashlib.sha256(data).hexdigest() == key.rsplit("/", 1)[1], key
        elif key.startswith("artifacts/"):
            assert hashlib.sha256(data).hexdigest() + ".json" == key.rsplit("/", 1)[1], key
        elif key.endswith(".parquet"):
            pq.read_table(io.BytesIO(data))
        elif key.endswith(".json"):
            json.loads(data)


def search_paths(query: str) -> list[str]:
    result = loom("search", "--json", query)
    assert result.returncode == 0, result.stderr
    return [hit["path"] for hit in json.loads(result.stdout)["hits"]]


def sql_count(table: str) -> int:
    result = loom("sql", "--json", f'SELECT count(*) AS n FROM "{table}"')
    assert result.returncode == 0, result.stderr
    return int(json.loads(result.stdout)["rows"][0][0])


def test_ingest_change_delete_search_and_query_on_s3(
    loom_home: Path,
    monkeypatch: pytest.MonkeyPatch,
    s3_server: S3Server,
    bucket: str,
    docs: Path,
) -> None:
    use_s3(monkeypatch, s3_server.url, bucket)
    first = loom("ingest", str(docs))
    assert first.returncode == 0, first.stderr
    assert "files 3 = published 3" in first.stdout, first.stdout

    objects = stored(s3_server, bucket)
    kinds = {key.split("/", 1)[0] for key in objects}
    assert {"originals", "artifacts", "revisions", "datasets"} <= kinds, sorted(objects)
    assert sum(key.endswith("/chunks.parquet") for key in objects) == 3
    assert not (loom_home / "store").exists()  # nothing of the store on the local disk
    assert_every_object_whole(objects)
    assert search_paths("E-DISK-042")[0] == "disk.md"
    assert sql_count("usage.csv#usage.csv") == 2

    (docs / "usage.csv").write_text(
        "host,day,used\nalpha,2024-01-01,10\nbeta,2024-01-02,20\ngamma,2024-01-03,30\n"
    )
    (docs / "disk.md").unlink()
    second = loom("ingest", str(docs))
    assert second.returncode == 0, second.stderr
    assert sql_count("usage.csv#usage.csv") == 3
    assert "disk.md" not in search_paths("E-DISK-042")
    assert search_paths("HW-77")[0] == "notes.txt"
    after = stored(s3_server, bucket)
    snapshots = [key for key in after if key.startswith("datasets/")]
    assert len(snapshots) == 1, snapshots  # the superseded snapshot was deleted from S3
    assert snapshots != [key for key in objects if key.startswith("datasets/")]
    assert_every_object_whole(after)

    # `loom datasets export` reads the snapshot from S3 and writes it to S3, whole.
    url = f"s3://{bucket}/exports/usage.parquet"
    export = loom("datasets", "export", "usage.csv#usage.csv", "--to", url)
    assert export.returncode == 0, export.stderr
    assert ": 3 rows to s3://" in export.stdout, export.stdout
    exported = pq.read_table(io.BytesIO(s3_server.objects(bucket)["exports/usage.parquet"]))
    assert exported.equals(pq.read_table(io.BytesIO(after[snapshots[0]])))

    log = (loom_home / "dagster").rglob("*")
    shown = first.stdout + first.stderr + second.stdout + second.stderr
    shown += "".join(p.read_bytes().decode("latin-1") for p in log if p.is_file())
    assert SECRET_KEY not in shown


def test_a_missing_bucket_stops_the_ingest_before_any_run(
    loom_home: Path, monkeypatch: pytest.MonkeyPatch, s3_server: S3Server, docs: Path
) -> None:
    use_s3(monkeypatch, s3_server.url, "no-such-bucket")
    result = loom("ingest", str(docs))
    assert result.returncode == 1
    assert result.stderr.strip().splitlines() == [
        f"loom: store_bucket_missing: the bucket of s3://no-such-bucket/{PREFIX} does not exist"
    ], result.stderr
    assert "run 1/" not in result.stdout


def test_refused_credentials_stop_the_ingest_in_one_line_never_showing_the_secret(
    loom_home: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, docs: Path
) -> None:
    with running_server(tmp_path / "moto.log", check_credentials=True) as checking:
        use_s3(monkeypatch, checking.url, BUCKET)
        result = loom("ingest", str(docs))
    assert result.returncode == 1
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(
        f"loom: store_access_denied: s3://{BUCKET}/{PREFIX} refused access to probes/"
    ), result.stderr
    assert SECRET_KEY not in result.stdout + result.stderr
    assert "run 1/" not in result.stdout


def test_the_server_going_away_mid_run_fails_typed_then_the_next_ingest_publishes_each_once(
    loom_home: Path,
    monkeypatch: pytest.MonkeyPatch,
    s3_server: S3Server,
    bucket: str,
    tmp_path: Path,
) -> None:
    docs = tmp_path / "many"
    docs.mkdir()
    for number in range(12):
        (docs / f"note-{number:02}.md").write_text(f"# Note {number}\n\nCode N-{number:03}.\n")
    gate = Gate(s3_server.port)
    use_s3(monkeypatch, gate.url, bucket)
    # Every call to a server that is gone fails only after its client's own tries: keep those
    # few, so the run reaches its end soon.
    monkeypatch.setenv("LOOM_RETRY_ATTEMPTS", "1")
    monkeypatch.setenv("LOOM_RETRY_DELAY_S", "0.2")
    monkeypatch.setenv("AWS_MAX_ATTEMPTS", "1")
    monkeypatch.setenv("LOOM_BATCH_SIZE", "4")

    def close_once_a_revision_is_stored() -> None:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            if any(k.startswith(f"{PREFIX}/artifacts/") for k in s3_server.keys(bucket)):
                break
            time.sleep(0.05)
        gate.close()

    closer = threading.Thread(target=close_once_a_revision_is_stored)
    closer.start()
    broken = loom("ingest", str(docs), timeout=600)
    closer.join()
    failed = [line for line in broken.stdout.splitlines() if line.startswith("failed")]
    assert failed, broken.stdout
    for line in failed:  # each says why, with the store's code: not a bare "it failed"
        assert "object_store: cannot" in line, line
    assert_every_object_whole(stored(s3_server, bucket))

    gate.open()
    again = loom("ingest", str(docs), timeout=600)
    assert again.returncode == 0, again.stderr
    published = [
        line.split()[1] for line in again.stdout.splitlines() if line.startswith("published")
    ]
    first_time = [
        line.split()[1] for line in broken.stdout.splitlines() if line.startswith("published")
    ]
    assert sorted(published + first_time) == sorted(p.name for p in docs.iterdir())
    assert "files 12 = published" in again.stdout, again.stdout
    assert_every_object_whole(stored(s3_server, bucket))
    for number in (0, 5, 11):
        assert search_paths(f"N-{number:03}")[0] == f"note-{number:02}.md"
    gate.close()
