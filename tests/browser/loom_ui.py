"""One `loom ui` on a folder of mixed files, after its sensor and automation took every file and
one file was deleted (retired) midway: what the UI tests of issue 28 look at.

Started once per module (about three minutes on a busy 2-core machine); every wait is bounded.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import parse_qs, urlsplit

import httpx
from dagster import AssetKey, AssetRecordsFilter, DagsterInstance, DagsterRunStatus

from loom_dagster.dagster_dev import url_path
from loom_dagster.extractor.local import RunningExtractor
from loom_dagster.extractor.settings import ENV_TOKEN, ENV_URL
from tests.integration.loom_command import LOOM, alive_among, descendants, loom
from tests.integration.test_loom_ui import free_port

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples" / "docs"
ORIGINAL = AssetKey(["loom", "original"])
PUBLISHED = AssetKey(["loom", "published"])
STARTED_WITHIN_S = 180.0
INGESTED_WITHIN_S = 420.0
RETIRED_WITHIN_S = 180.0

# Beside examples/docs: a table-less file, a table, and a file deleted once it was published.
EXTRA = {
    "notes/plain.txt": "The lighthouse keeper logged the storm at dawn.\n",
    "notes/hosts.csv": "host,disk\nalpha,10\nbeta,20\ngamma,30\n",
    "notes/gone.md": "# Gone\n\nThis page is deleted once it was published.\n",
}
RETIRED = "notes/gone.md"


@dataclass
class Ui:
    url: str
    home: Path
    folder: Path
    token: str
    log: Path
    keys: dict[str, str] = field(default_factory=dict)  # path in the folder -> partition key
    printed: str = ""  # the URL `loom ui` printed, with its session's token (issue 34's gate)

    @property
    def headers(self) -> dict[str, str]:
        """What a script sends through `loom ui`'s gate: the session's token as a bearer."""
        token = parse_qs(urlsplit(self.printed).query).get("loom_token", [""])[0]
        return {"Authorization": f"Bearer {token}"}

    @property
    def dagster_home(self) -> Path:
        return self.home / "dagster"

    def graphql(self, query: str, variables: dict[str, Any] | None = None) -> dict[str, Any]:
        answer = httpx.post(
            f"{self.url}/graphql",
            json={"query": query, "variables": variables or {}},
            headers=self.headers,
            timeout=60,
        )
        answer.raise_for_status()
        body: dict[str, Any] = answer.json()
        assert "errors" not in body, body
        return body


T = TypeVar("T")


def wait_for(what: str, probe: Callable[[], T | None], timeout: float, log: Path) -> T:
    # Every 2 s (tests/integration/daemon.py's polls every 1 s): with 1 s this module's made-up
    # key test failed twice in a row, likely "no run going" read between two runs; kept apart.
    deadline = time.monotonic() + timeout
    while True:
        found = probe()
        if found:
            return found
        if time.monotonic() > deadline:
            tail = log.read_text(errors="replace")[-3000:] if log.exists() else ""
            raise AssertionError(f"{what}: not within {timeout:.0f} s; loom ui's log ends:\n{tail}")
        time.sleep(2.0)


def mixed_folder(folder: Path) -> Path:
    shutil.copytree(EXAMPLES, folder)
    for name, text in EXTRA.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text)
    past = time.time() - 300  # settled: the sensor registers no file written in its last seconds
    for path in folder.rglob("*"):
        os.utime(path, (past, past))
    return folder


def environment(home: Path, service: RunningExtractor) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LOOM_", "DAGSTER_"))}
    env.update(
        {
            "LOOM_HOME": str(home),
            "DAGSTER_HOME": str(home / "dagster"),
            ENV_URL: service.url,
            ENV_TOKEN: service.token,
            "LOOM_EMBEDDER": "ngram",
        }
    )
    return env


def partition_paths(dagster_home: Path) -> dict[str, str]:
    """Each partition's file, relative to the folder, from its `original` materialization."""
    found: dict[str, str] = {}
    with DagsterInstance.from_config(str(dagster_home)) as instance:
        records = instance.fetch_materializations(
            AssetRecordsFilter(asset_key=ORIGINAL), limit=10000
        ).records
        for record in records:
            event = record.asset_materialization
            if event is None or event.partition is None or "path" not in event.metadata:
                continue
            found[event.partition] = str(event.metadata["path"].value)
    return found


def every_partition_done(dagster_home: Path, at_least: int) -> Callable[[], bool]:
    def probe() -> bool:
        with DagsterInstance.from_config(str(dagster_home)) as instance:
            keys = set(instance.get_dynamic_partitions("revisions"))
            done = instance.get_materialized_partitions(PUBLISHED)
            observed = instance.fetch_observations(
                AssetRecordsFilter(asset_key=PUBLISHED), limit=10000
            ).records
            done |= {r.partition_key for r in observed if r.partition_key}
            busy = instance.get_run_records(
                filters=None, limit=50
            )  # no run queued or going: automation has nothing left to do
            going = [
                r
                for r in busy
                if r.dagster_run.status
                in (DagsterRunStatus.QUEUED, DagsterRunStatus.STARTING, DagsterRunStatus.STARTED)
            ]
        return len(keys) >= at_least and keys <= done and not going

    return probe


def latest_status(dagster_home: Path, key: str) -> str | None:
    with DagsterInstance.from_config(str(dagster_home)) as instance:
        records = instance.fetch_materializations(
            AssetRecordsFilter(asset_key=PUBLISHED, asset_partitions=[key]), limit=1
        ).records
    if not records or records[0].asset_materialization is None:
        return None
    status = records[0].asset_materialization.metadata.get("status")
    return str(status.value) if status is not None else None


@contextmanager
def loom_ui_on_mixed_folder(root: Path, service: RunningExtractor) -> Iterator[Ui]:
    home = root / "home"
    folder = mixed_folder(root / "docs")
    env = environment(home, service)
    added = loom(
        "sources", "add", str(folder), "--option", "legacy/*.txt:encoding=latin-1", env=env
    )
    assert added.returncode == 0, added.stderr
    port = free_port()
    log = root / "loom-ui.log"
    with open(log, "wb") as out:
        process = subprocess.Popen(
            [*LOOM, "ui", "--port", str(port)],
            stdout=out,
            stderr=subprocess.STDOUT,
            env=env,
            start_new_session=True,
        )
    ui = Ui(url=f"http://127.0.0.1:{port}", home=home, folder=folder, token=service.token, log=log)
    try:

        def answering() -> bool:
            assert process.poll() is None, log.read_text(errors="replace")[-3000:]
            if not url_path(home).exists():
                return False
            ui.printed = url_path(home).read_text().strip()
            try:
                answer = httpx.get(f"{ui.url}/server_info", headers=ui.headers, timeout=2)
            except httpx.HTTPError:
                return False
            return answer.status_code == 200

        wait_for("dagster dev's webserver", answering, STARTED_WITHIN_S, log)
        files = [p for p in folder.rglob("*") if p.is_file()]
        wait_for(
            "every file published or refused by automation",
            every_partition_done(ui.dagster_home, len(files)),
            INGESTED_WITHIN_S,
            log,
        )
        ui.keys = {
            os.path.relpath(path, folder): key
            for key, path in partition_paths(ui.dagster_home).items()
        }
        # A file deleted midway: the sensor's next tick asks for a sync run, which retires it.
        (folder / RETIRED).unlink()
        gone = ui.keys[RETIRED]
        wait_for(
            f"{RETIRED} retired",
            lambda: (latest_status(ui.dagster_home, gone) or "").startswith("retired"),
            RETIRED_WITHIN_S,
            log,
        )
        wait_for(
            "no run queued or going",
            # The retired revision's partition left the instance (issue 28 part 3).
            every_partition_done(ui.dagster_home, len(files) - 1),
            INGESTED_WITHIN_S,
            log,
        )
        (root / "keys.json").write_text(json.dumps(ui.keys, indent=1))
        yield ui
    finally:
        family = [process.pid, *descendants(process.pid)]
        try:
            os.killpg(process.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            pass
        for pid in alive_among(family):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
