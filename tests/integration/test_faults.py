"""Seed 000 "Faults": each fault meets the next revision of a source that already serves one, ends
as an outcome row with the table's code, and the earlier revision keeps serving search.

And issue 12.4: one file the service cannot take in time ends with its own outcome while the
others of its batch publish.
"""

from __future__ import annotations

import dataclasses
import shutil
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from loom_dagster import api, catalog, hold
from loom_dagster.extractor.client import ExtractorClient
from loom_dagster.extractor.settings import (
    ENV_MAX_ARTIFACT_BYTES,
    ENV_TIMEOUT,
    ENV_TOKEN,
    ENV_URL,
    ExtractorSettings,
    ServiceLimits,
)
from loom_dagster.objectstore import ObjectStore
from loom_dagster.resources.storage import CatalogResource
from loom_dagster.settings import LoomSettings
from tests.integration.misbehaving_extractor import (
    EXTRACT,
    MisbehavingExtractor,
    Recorded,
    Reply,
    artifact,
    capabilities_reply,
    error_reply,
    gzip_reply,
    json_reply,
)
from tests.integration.test_extractor_down import a_port_nobody_listens_on

FIRST = "# Old\n\nalpha words of the first revision\n"
NEXT = "# Hi\n"  # the one line the misbehaving service's artifact describes


@pytest.fixture
def quick_retries(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LOOM_RETRY_ATTEMPTS", "1")
    monkeypatch.setenv("LOOM_RETRY_DELAY_S", "0")


def outcome_of(revision: str) -> catalog.Outcome:
    settings = LoomSettings.from_env()
    with CatalogResource(database=str(settings.catalog_path)).connect() as con:
        return catalog.outcomes_for(con, [revision])[revision]


def store() -> ObjectStore:
    return ObjectStore(LoomSettings.from_env().object_store_url)


def store_folder() -> Path:
    return LoomSettings.from_env().home / "store"


Setup = Callable[[MisbehavingExtractor, pytest.MonkeyPatch, Path], None]


def unreachable(service: MisbehavingExtractor, env: pytest.MonkeyPatch, _: Path) -> None:
    env.setenv(ENV_URL, f"http://127.0.0.1:{a_port_nobody_listens_on()}")


def slower_than_the_timeout(
    service: MisbehavingExtractor, env: pytest.MonkeyPatch, _: Path
) -> None:
    # The client waits the service's own limit plus a margin (0.1 s * 1.1 + 1 s), then gives up.
    env.setenv("LOOM_EXTRACTOR_TIMEOUT_S", "0.1")
    env.setenv(ENV_TIMEOUT, "0.2")
    service.replies[EXTRACT] = dataclasses.replace(json_reply(artifact()), delay_s=3.0)


def compressed(service: MisbehavingExtractor, env: pytest.MonkeyPatch, _: Path) -> None:
    service.replies[EXTRACT] = gzip_reply(artifact())


def refused_past_its_time_limit(
    service: MisbehavingExtractor, env: pytest.MonkeyPatch, _: Path
) -> None:
    service.replies[EXTRACT] = error_reply(422, "timeout", "the extraction took over 120 s")


def no_extractor_for_the_format(
    service: MisbehavingExtractor, env: pytest.MonkeyPatch, _: Path
) -> None:
    service.replies["/v1/capabilities"] = capabilities_reply({"pdf": []})


def artifact_past_the_bound(
    service: MisbehavingExtractor, env: pytest.MonkeyPatch, _: Path
) -> None:
    env.setenv(ENV_MAX_ARTIFACT_BYTES, "64")


def out_of_contract(service: MisbehavingExtractor, env: pytest.MonkeyPatch, _: Path) -> None:
    broken = artifact()
    broken["blocks"] = [dict(broken["blocks"][0], parent="b9")]  # type: ignore[index]
    service.replies[EXTRACT] = json_reply(broken)


def original_read_fails(service: MisbehavingExtractor, env: pytest.MonkeyPatch, _: Path) -> None:
    # A folder where the original's file should be: its read fails for root too, every time.
    (store_folder() / ObjectStore.original_key(_sha(NEXT))).mkdir(parents=True)


def artifact_write_fails(service: MisbehavingExtractor, env: pytest.MonkeyPatch, _: Path) -> None:
    # A file where the artifacts' folder should be: no write under it succeeds, even as root.
    artifacts = store_folder() / "artifacts"
    shutil.rmtree(artifacts)
    artifacts.write_text("not a folder")


def _sha(text: str) -> str:
    import hashlib

    return hashlib.sha256(text.encode()).hexdigest()


FAULTS: list[tuple[Setup, str]] = [
    (unreachable, "retries_exhausted"),
    (slower_than_the_timeout, "retries_exhausted"),
    (compressed, "retries_exhausted"),
    (refused_past_its_time_limit, "timeout"),
    (no_extractor_for_the_format, "format_unavailable"),
    (artifact_past_the_bound, "resource_limit"),
    (out_of_contract, "invalid_artifact"),
    (original_read_fails, "retries_exhausted"),
    (artifact_write_fails, "retries_exhausted"),
]


@pytest.mark.slow
@pytest.mark.parametrize(("fault", "code"), FAULTS, ids=[f.__name__ for f, _ in FAULTS])
def test_a_fault_on_the_next_revision_ends_typed_and_the_earlier_one_keeps_serving(
    loom_home: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    quick_retries: None,
    fault: Setup,
    code: str,
) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "a.md").write_text(FIRST)
    [first] = api.ingest_folder(folder).outcomes
    assert first.status == "published"

    (folder / "a.md").write_text(NEXT)
    with MisbehavingExtractor() as service:
        monkeypatch.setenv(ENV_URL, service.url)
        monkeypatch.setenv(ENV_TOKEN, "a-token-for-the-fake")
        fault(service, monkeypatch, folder)
        [second] = api.ingest_folder(folder).outcomes

    # Seed 000: a transient fault ends "failed retries_exhausted" (tried again next time);
    # the others are the file's own refusal.
    expected = "failed" if code == catalog.RETRIES_EXHAUSTED else "refused"
    assert second.status == expected and second.revision != first.revision
    assert second.detail.startswith(f"{code}: ")
    recorded = outcome_of(second.revision or "")
    assert (recorded.status, recorded.code) == (catalog.REFUSED, code)
    [hit] = api.search("alpha")
    assert hit.chunk.revision == first.revision


@pytest.mark.slow
def test_an_original_gone_from_the_store_ends_original_gone(
    loom_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, quick_retries: None
) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "a.md").write_text(FIRST)
    [first] = api.ingest_folder(folder).outcomes
    (folder / "a.md").write_text(NEXT)

    holds = tmp_path / "holds"
    holds.mkdir()
    monkeypatch.setenv(hold.ENV_AT, "original")
    monkeypatch.setenv(hold.ENV_DIR, str(holds))
    reports: list[api.IngestReport] = []
    ingest = threading.Thread(target=lambda: reports.append(api.ingest_folder(folder)))
    ingest.start()
    try:
        _wait_for(holds / "original.reached")
        (store_folder() / ObjectStore.original_key(_sha(NEXT))).unlink()
    finally:
        (holds / "original.release").write_text("")
        ingest.join(120)

    [second] = reports[0].outcomes
    assert (second.status, second.detail.split(":")[0]) == ("refused", "original_gone")
    [hit] = api.search("alpha")
    assert hit.chunk.revision == first.revision


def _wait_for(path: Path, timeout_s: float = 120.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not path.exists():
        assert time.monotonic() < deadline, f"{path.name} never appeared"
        time.sleep(0.05)


class OneSlowFile(MisbehavingExtractor):
    """Answers every file at once but `slow.md`, which it answers with `slow_reply`."""

    def __init__(self, slow_reply: Reply) -> None:
        super().__init__()
        self.slow_reply = slow_reply

    def reply_for(self, request: Recorded) -> Reply:
        if request.path == EXTRACT and request.query.get("name") == ["slow.md"]:
            return self.slow_reply
        return super().reply_for(request)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("slow_reply", "code"),
    [
        (dataclasses.replace(json_reply(artifact()), delay_s=3.0), "retries_exhausted"),
        (error_reply(422, "timeout", "the extraction took over its limit"), "timeout"),
    ],
    ids=["slower-than-the-client-waits", "refused-as-timeout-by-the-service"],
)
def test_one_slow_file_ends_with_its_own_outcome_while_its_batch_publishes(
    loom_home: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    quick_retries: None,
    slow_reply: Reply,
    code: str,
) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    for name in ("a.md", "b.md", "slow.md", "z.md"):
        (folder / name).write_text(NEXT)
    monkeypatch.setenv("LOOM_EXTRACTOR_TIMEOUT_S", "0.1")
    monkeypatch.setenv(ENV_TIMEOUT, "0.2")
    monkeypatch.setenv("LOOM_EXTRACT_CONCURRENCY", "3")
    with OneSlowFile(slow_reply) as service:
        monkeypatch.setenv(ENV_URL, service.url)
        monkeypatch.setenv(ENV_TOKEN, "a-token-for-the-fake")
        report = api.ingest_folder(folder)

    statuses = {o.path: (o.status, o.detail.split(":")[0]) for o in report.outcomes}
    expected = "failed" if code == catalog.RETRIES_EXHAUSTED else "refused"
    assert statuses.pop("slow.md") == (expected, code)
    assert {status for status, _ in statuses.values()} == {"published"}
    assert report.conserved == (expected == "refused")


def test_the_client_waits_longer_than_the_service_may_take() -> None:
    # Issue 12.4: a 60 s client deadline against the service's 120 s cut files off as
    # "unavailable" that the service would have finished.
    assert ServiceLimits().extract_deadline_s(60.0) > 120.0
    assert ServiceLimits(time_limit_s=10.0).extract_deadline_s(60.0) == 60.0
    limits = ServiceLimits.from_env(
        {"LOOM_EXTRACTOR_TIMEOUT_S": "300", "LOOM_EXTRACTOR_CONCURRENCY": "3"}
    )
    assert (limits.time_limit_s, limits.slots) == (300.0, 3)


class Arrivals(MisbehavingExtractor):
    """Every extraction takes `busy_s` here; notes when each request arrived."""

    def __init__(self, busy_s: float) -> None:
        super().__init__()
        self.replies[EXTRACT] = dataclasses.replace(json_reply(artifact()), delay_s=busy_s)
        self.arrived: list[float] = []

    def reply_for(self, request: Recorded) -> Reply:
        if request.path == EXTRACT:
            self.arrived.append(time.monotonic())
        return super().reply_for(request)


def test_the_client_keeps_no_more_extractions_in_flight_than_the_service_has_slots() -> None:
    # A service with one slot queues a second request, and the queue's wait would count against
    # that file's deadline: the client sends the next only when the one before has ended.
    busy_s = 0.5
    service = Arrivals(busy_s)
    with service:
        settings = ExtractorSettings(default_url=service.url, token="a-token-for-the-fake")
        limits = ServiceLimits(time_limit_s=busy_s, slots=1)
        with ExtractorClient(settings, limits=limits) as client, ThreadPoolExecutor(3) as pool:
            list(pool.map(lambda _: client.extract(NEXT.encode(), name="a.md"), range(3)))
    gaps = [b - a for a, b in zip(service.arrived, service.arrived[1:], strict=False)]
    assert len(service.arrived) == 3 and min(gaps) >= busy_s * 0.9
