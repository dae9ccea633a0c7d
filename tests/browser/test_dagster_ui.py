"""The Dagster UI, in a real browser, after `loom ingest` of a folder with a refused file and a
PDF whose image page needs OCR: what a data engineer sees per revision (issue 13).

dagster-webserver runs on this test's LOOM_HOME; headless Debian chromium is driven through
playwright. Screenshots are saved under the test's tmp dir (the path is printed).
"""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx
import pytest

from loom_dagster import api
from loom_dagster.api import FileOutcome
from tests.integration.test_dagster_truth import make_folder

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        not CHROMIUM.exists() and os.geteuid() != 0,
        reason="/usr/bin/chromium is absent and only root can install it (scripts/setup does)",
    ),
]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture
def ingested(loom_home: Path, tmp_path: Path) -> dict[str, FileOutcome]:
    report = api.ingest_folder(make_folder(tmp_path / "docs"))
    return {o.path: o for o in report.outcomes}


@pytest.fixture
def webserver(ingested: dict[str, FileOutcome], tmp_path: Path) -> Iterator[str]:
    port = free_port()
    log = (tmp_path / "webserver.log").open("w")
    server = subprocess.Popen(
        [str(Path(sys.executable).parent / "dagster-webserver")]
        + ["-m", "loom_dagster.definitions", "-h", "127.0.0.1", "-p", str(port)],
        env=os.environ.copy(),
        stdout=log,
        stderr=subprocess.STDOUT,
        cwd=Path(__file__).resolve().parents[2],
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                if httpx.get(f"{url}/server_info", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            assert server.poll() is None, (tmp_path / "webserver.log").read_text()
            assert time.monotonic() < deadline, "dagster-webserver did not start in 120 s"
            time.sleep(0.5)
        yield url
    finally:
        server.terminate()
        server.wait(timeout=30)
        log.close()


@pytest.fixture
def page(webserver: str, tmp_path: Path) -> Iterator[object]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as driver:
        browser = driver.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_FLAGS)
        page = browser.new_page(viewport={"width": 1600, "height": 1000})
        page.set_default_timeout(60_000)
        yield page
        browser.close()


def shot(page: object, tmp_path: Path, name: str) -> None:
    path = tmp_path / "screenshots" / f"{name}.png"
    path.parent.mkdir(exist_ok=True)
    page.screenshot(path=str(path), full_page=True)  # type: ignore[attr-defined]
    print(f"screenshot: {path}")


def open_page(page: object, url: str) -> str:
    """Go to `url`, past the UI's first-visit newsletter dialog; the page's text."""
    page.goto(url)  # type: ignore[attr-defined]
    page.wait_for_load_state("networkidle")  # type: ignore[attr-defined]
    skip = page.get_by_role("button", name="Skip")  # type: ignore[attr-defined]
    if skip.count():
        skip.click()
    return str(page.inner_text("body"))  # type: ignore[attr-defined]


def visible_item(page: object, pattern: str) -> Any:
    """A list item as shown: the UI keeps a hidden full-length copy of each truncated key."""
    found = page.get_by_text(re.compile(pattern))  # type: ignore[attr-defined]
    return found.filter(visible=True).last


def wait_for_text(page: object, text: str) -> str:
    page.get_by_text(text).first.wait_for()  # type: ignore[attr-defined]
    return str(page.inner_text("body"))  # type: ignore[attr-defined]


def test_what_a_user_sees_per_revision(
    page: object, webserver: str, ingested: dict[str, FileOutcome], tmp_path: Path
) -> None:
    note, guide, legacy, scan = (
        ingested[p] for p in ("note.txt", "guide.md", "legacy.txt", "scan.pdf")
    )
    assert legacy.status == "refused" and "incomplete" in scan.detail

    # The four assets under the `loom` prefix; chunks and published 3 materialized, 1 missing.
    text = open_page(page, f"{webserver}/assets/loom")
    wait_for_text(page, "published")
    text = str(page.inner_text("body"))  # type: ignore[attr-defined]
    for name in ("original", "artifact", "chunks", "published"):
        assert name in text
    shot(page, tmp_path, "1-assets-under-loom")

    # A partition's own chunk count and preview, not its batch's sum.
    chunks_url = f"{webserver}/assets/loom/chunks?view=partitions&partition="
    open_page(page, chunks_url + quote(note.revision or ""))
    text = wait_for_text(page, "Buy lamp oil")
    assert re.search(r"\bchunks\s+1\s", text), text
    assert "Materialized (3)" in text and "Missing (1)" in text
    shot(page, tmp_path, "2-note-chunks")
    open_page(page, chunks_url + quote(guide.revision or ""))
    text = wait_for_text(page, "Step 1 of the install")
    assert re.search(rf"\bchunks\s+{guide.detail.split()[0]}\s", text), text

    # The refused file fails `extracted`; the check's partitions count it, and pass the rest.
    open_page(page, f"{webserver}/assets/loom/artifact?view=checks&checkDetail=extracted")
    page.get_by_text("Partitions", exact=True).last.click()  # type: ignore[attr-defined]
    text = wait_for_text(page, "Passed (3)")
    assert "Failed (1)" in text and "Missing (0)" in text
    shot(page, tmp_path, "3-extracted-partitions")
    page.get_by_placeholder("Filter by partition").fill("legacy")  # type: ignore[attr-defined]
    visible_item(page, r"^legacy\.txt~").click()
    text = wait_for_text(page, "cannot decode byte 0xe9")
    shot(page, tmp_path, "4-extracted-refused")

    # The incomplete PDF warns on `complete`, naming its page.
    open_page(page, f"{webserver}/assets/loom/artifact?view=checks&checkDetail=complete")
    page.get_by_text("Partitions", exact=True).last.click()  # type: ignore[attr-defined]
    page.get_by_placeholder("Filter by partition").fill("scan")  # type: ignore[attr-defined]
    visible_item(page, r"^scan\.pdf~").click()
    text = wait_for_text(page, "needs OCR")
    assert "page 2" in text
    shot(page, tmp_path, "5-complete-warned")
