"""The Dagster UI tells the truth about a healthy folder and shows no secret (issue 28).

One `loom ui` (tests/browser/loom_ui.py) runs for the whole module on a folder of mixed files
(examples/docs, a table-less text, a CSV, a file deleted once published), after its folder
sensor and automation took every file; Debian's chromium, driven by Playwright, reads the pages
as a user would. Screenshots go under the test's tmp dir, and into docs/screenshots/ when
LOOM_UPDATE_SCREENSHOTS=1.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest

from loom_dagster.extractor.local import RunningExtractor
from tests.browser.loom_ui import RETIRED, Ui, loom_ui_on_mixed_folder, wait_for
from tests.browser.test_dagster_ui import CHROMIUM, CHROMIUM_FLAGS

REPO = Path(__file__).resolve().parents[2]
DOCS_SHOTS = REPO / "docs" / "screenshots"
BOGUS = "made-up.txt~0123456789@0123456789abcdef"

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        not CHROMIUM.exists(),
        reason="/usr/bin/chromium is absent (scripts/setup installs Debian's chromium as root)",
    ),
]


@pytest.fixture(scope="module")
def ui(
    reference_service: RunningExtractor, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Ui]:
    with loom_ui_on_mixed_folder(tmp_path_factory.mktemp("ui-truth"), reference_service) as up:
        yield up


@pytest.fixture(scope="module")
def browser(ui: Ui) -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as driver:
        launched = driver.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_FLAGS)
        yield launched
        launched.close()


@pytest.fixture
def page(browser: Any, ui: Ui) -> Iterator[Any]:
    opened = browser.new_page(viewport={"width": 1400, "height": 900})
    opened.set_default_timeout(60_000)
    opened.goto(ui.printed)  # the printed URL: the gate sets the session's cookie (issue 34)
    yield opened
    opened.close()


def open_page(page: Any, url: str, wait_for_text: str | None = None) -> str:
    """Go to `url`, past the first-visit dialog; the page's text once `wait_for_text` shows."""
    page.goto(url)
    page.wait_for_load_state("networkidle")
    skip = page.get_by_role("button", name="Skip")
    if skip.count():
        skip.click()
    if wait_for_text is not None:
        page.get_by_text(wait_for_text).first.wait_for()
    return str(page.inner_text("body"))


def text_when(page: Any, pattern: str, timeout: float = 30.0) -> str:
    """The page's text once it matches `pattern` (the UI fills its counts after it loads)."""
    deadline = time.monotonic() + timeout
    while True:
        text = str(page.inner_text("body"))
        if re.search(pattern, text) or time.monotonic() > deadline:
            return text
        page.wait_for_timeout(500)


def shot(page: Any, tmp_path: Path, name: str) -> None:
    path = tmp_path / f"{name}.png"
    page.screenshot(path=str(path))
    print(f"screenshot: {path}")
    if os.environ.get("LOOM_UPDATE_SCREENSHOTS") == "1":
        from PIL import Image

        DOCS_SHOTS.mkdir(exist_ok=True)
        small = Image.open(path).convert("RGB").quantize(colors=64)  # a few tens of kB each
        small.save(DOCS_SHOTS / f"{name}.png", optimize=True)


def partition_url(ui: Ui, asset: str, key: str) -> str:
    return f"{ui.url}/assets/loom/{asset}?view=partitions&partition={quote(key)}"


# -- every asset can be green --------------------------------------------------------------------


def test_no_run_or_backfill_failed_on_a_healthy_folder(ui: Ui, page: Any) -> None:
    failed = ui.graphql(
        "{ runsOrError(filter: {statuses: [FAILURE]}) { ... on Runs { results { runId } } } }"
    )["data"]["runsOrError"]["results"]
    assert failed == []
    backfills = ui.graphql(
        "{ partitionBackfillsOrError { ... on PartitionBackfills { results { id status } } } }"
    )["data"]["partitionBackfillsOrError"]["results"]
    assert all(b["status"] in ("COMPLETED", "COMPLETED_SUCCESS") for b in backfills), backfills
    text = open_page(page, f"{ui.url}/runs", "Success")
    assert "Failure" not in text


def test_every_asset_reads_green_on_the_overview(ui: Ui, page: Any, tmp_path: Path) -> None:
    # Overview's asset activity: the group's five assets materialized, none missing or failed.
    open_page(page, f"{ui.url}/overview/activity/assets", "Failed/Overdue")
    text = text_when(page, r"\bloom\s+\d+\s+\d+\s+\d+\s+\d+\b")
    assert re.search(r"\bloom\s+0\s+0\s+0\s+5\b", text), text
    shot(page, tmp_path, "ui-overview")
    # The catalog: every partition of every asset materialized, none missing, failed or running;
    # and only live documents are counted: the deleted file's revision left the partitions.
    live = len(ui.keys) - 1
    open_page(page, f"{ui.url}/assets", "published")
    text = text_when(page, r"(All\s+\d+\s+\d+\s+\d+\s+\d+ partitions[\s\S]*){5}")
    rows = re.findall(r"All\s+0\s+0\s+0\s+(\d+) partitions", text)
    assert rows == [str(live)] * 5, text
    text = open_page(page, f"{ui.url}/assets/loom/datasets?view=partitions", "Materialized (")
    assert f"Materialized ({live})" in text and "Missing (0)" in text, text
    assert "Failed (0)" in text
    shot(page, tmp_path, "ui-asset-partitions")


def test_a_table_less_files_datasets_partition_says_no_tables(ui: Ui, page: Any) -> None:
    text = open_page(page, partition_url(ui, "datasets", ui.keys["notes/plain.txt"]), "no tables")
    assert re.search(r"dagster/row_count\s+0\b", text), text
    assert re.search(r"\bdatasets\s+0\b", text), text


# -- retired looks retired -----------------------------------------------------------------------


def test_a_retired_partition_reads_retired(ui: Ui, page: Any, tmp_path: Path) -> None:
    gone = ui.keys[RETIRED]
    # Its partition left every asset's partitions (Overview counts only live documents)...
    for asset in ("original", "published", "datasets"):
        node = ui.graphql(
            "query($k: AssetKeyInput!) { assetNodeOrError(assetKey: $k) { ... on AssetNode { "
            "partitionKeys } } }",
            {"k": {"path": ["loom", asset]}},
        )["data"]["assetNodeOrError"]
        assert gone not in node["partitionKeys"] and len(node["partitionKeys"]) == len(ui.keys) - 1
    # ... and its history stays: its last materialization says it was retired, and it is the
    # latest event of `published`, which the asset's Events tab opens on.
    [last] = ui.graphql(
        "query($k: AssetKeyInput!, $p: [String!]) { assetOrError(assetKey: $k) { ... on Asset { "
        "assetMaterializations(partitions: $p, limit: 1) { partition metadataEntries { label "
        "... on TextMetadataEntry { text } } } } } }",
        {"k": {"path": ["loom", "published"]}, "p": [gone]},
    )["data"]["assetOrError"]["assetMaterializations"]
    said = {e["label"]: e.get("text") for e in last["metadataEntries"]}
    assert said["status"] == "retired: its file was deleted", said
    text = open_page(page, f"{ui.url}/assets/loom/published?view=events", "its file was deleted")
    assert "retired" in text
    shot(page, tmp_path, "ui-retired-partition")


# -- the partition page ----------------------------------------------------------------------------


def test_a_published_partition_shows_its_facts_and_links(ui: Ui, page: Any, tmp_path: Path) -> None:
    key = ui.keys["notes/hosts.csv"]
    text = open_page(page, partition_url(ui, "published", key), "loom show")
    for fact in ("notes/hosts.csv", "csv", "hosts.csv: 3 rows", "published", key.split("@")[1]):
        assert fact in text, fact
    assert "loom show docs:notes/hosts.csv" in text
    for stored in ("/originals/", "/artifacts/"):
        assert page.locator(f"a[href*='{stored}']").count(), stored
    shot(page, tmp_path, "ui-partition-page")


# -- keys a user can tell apart --------------------------------------------------------------------


def test_two_files_of_one_folder_read_apart_in_the_partition_list(
    ui: Ui, page: Any, tmp_path: Path
) -> None:
    open_page(page, f"{ui.url}/assets/loom/original?view=partitions", "Materialized")
    page.get_by_placeholder("Filter by name").fill("runbooks")
    # The UI cuts a long key in its middle (a hidden full copy sits beside each): what is
    # visible must still name each file.
    shown = [
        item.inner_text().strip()
        for item in page.get_by_text(re.compile(r"^disk-")).filter(visible=True).all()
    ]
    assert len(shown) == 2 and shown[0] != shown[1], shown
    assert any(s.startswith("disk-full.md") for s in shown), shown
    assert any(s.startswith("disk-usage.xls") for s in shown), shown
    shot(page, tmp_path, "ui-partitions")


# -- only real partitions run ----------------------------------------------------------------------


def test_a_run_for_a_made_up_key_fails_naming_it(ui: Ui, page: Any) -> None:
    location = ui.graphql("{ workspaceOrError { ... on Workspace { locationEntries { name } } } }")[
        "data"
    ]["workspaceOrError"]["locationEntries"][0]["name"]
    repository = {"repositoryLocationName": location, "repositoryName": "__repository__"}
    ui.graphql(
        "mutation($r: RepositorySelector!, $k: String!) { addDynamicPartition("
        'repositorySelector: $r, partitionsDefName: "revisions", partitionKey: $k) '
        "{ __typename } }",
        {"r": repository, "k": BOGUS},
    )
    launched = ui.graphql(
        "mutation($p: ExecutionParams!) { launchRun(executionParams: $p) { __typename "
        "... on LaunchRunSuccess { run { runId } } ... on PythonError { message } } }",
        {
            "p": {
                "selector": {**repository, "jobName": "ingest"},
                "executionMetadata": {"tags": [{"key": "dagster/partition", "value": BOGUS}]},
            }
        },
    )["data"]["launchRun"]
    assert launched["__typename"] == "LaunchRunSuccess", launched
    run_id = launched["run"]["runId"]

    def ended() -> str | None:
        status = ui.graphql(
            "query($id: ID!) { runOrError(runId: $id) { ... on Run { status } } }", {"id": run_id}
        )["data"]["runOrError"]["status"]
        return status if status in ("FAILURE", "SUCCESS", "CANCELED") else None

    started = time.monotonic()
    assert wait_for("the made-up key's run", ended, 180, ui.log) == "FAILURE"
    print(f"failed {time.monotonic() - started:.0f} s after launch")
    text = open_page(page, f"{ui.url}/runs/{run_id}", "no file of a registered folder")
    assert BOGUS in text


# -- secrets stay secret ---------------------------------------------------------------------------

SECRET_QUERIES = {
    "resources": """query($r: RepositorySelector!) {
      allTopLevelResourceDetailsOrError(repositorySelector: $r) {
        ... on ResourceDetailsList { results { name description
          configFields { name description defaultValueAsJson }
          configuredValues { key value type } } } } }""",
    "runs": """{ runsOrError { ... on Runs { results { runId runConfigYaml
      tags { key value } } } } }""",
    "instance": "{ instance { info runLauncher { name } } }",
    "repository": """query($r: RepositorySelector!) { repositoryOrError(repositorySelector: $r) {
      ... on Repository { name sensors { name description } jobs { name description }
        assetNodes { assetKey { path } description opName } } } }""",
}


def test_the_token_is_in_no_answer_of_the_webserver_and_no_file_of_the_dagster_home(
    ui: Ui, page: Any, tmp_path: Path
) -> None:
    location = ui.graphql("{ workspaceOrError { ... on Workspace { locationEntries { name } } } }")[
        "data"
    ]["workspaceOrError"]["locationEntries"][0]["name"]
    repository = {"repositoryLocationName": location, "repositoryName": "__repository__"}
    answers = {name: ui.graphql(query, {"r": repository}) for name, query in SECRET_QUERIES.items()}
    resources = answers["resources"]["data"]["allTopLevelResourceDetailsOrError"]["results"]
    [extractor] = [r for r in resources if r["name"] == "extractor"]
    configured = {v["key"]: (v["type"], v["value"]) for v in extractor["configuredValues"]}
    assert configured["token"] == ("ENV_VAR", "LOOM_DOCUMENT_EXTRACTOR_TOKEN")
    run_ids = [r["runId"] for r in answers["runs"]["data"]["runsOrError"]["results"]]
    assert run_ids
    for run_id in run_ids:
        answers[run_id] = ui.graphql(
            """query($id: ID!) { logsForRun(runId: $id) { ... on EventConnection {
              events { __typename ... on MessageEvent { message } } } } }""",
            {"id": run_id},
        )
    for name, answer in answers.items():
        assert ui.token not in str(answer), name
    # The Resources tab as rendered.
    text = open_page(page, f"{ui.url}/locations/{location}/resources/extractor", "token")
    assert ui.token not in text and "LOOM_DOCUMENT_EXTRACTOR_TOKEN" in text
    shot(page, tmp_path, "ui-resources-extractor")
    # Every file under the Dagster home: event logs, run storage, compute logs, schedules.
    secret = ui.token.encode()
    holding = [
        str(path)
        for path in ui.dagster_home.rglob("*")
        if path.is_file() and secret in path.read_bytes()
    ]
    assert holding == []
