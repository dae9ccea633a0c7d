"""`loom ui` in a real browser (issue 34 row 5): the URL it prints opens the UI for its user;
a browser without the session's token gets nothing, GraphQL included.

Headless Debian chromium (launched by path) through playwright, as in test_dagster_ui.py.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from loom_dagster.dagster_dev import url_path
from tests.browser.test_dagster_ui import CHROMIUM, CHROMIUM_FLAGS, open_page, shot
from tests.integration.test_loom_ui import free_port, loom_ui

pytestmark = pytest.mark.slow


def test_loom_ui_opens_for_its_user_and_for_nobody_without_the_token(
    loom_home: Path, tmp_path: Path
) -> None:
    from playwright.sync_api import sync_playwright

    port = free_port()
    with loom_ui(tmp_path / "ui.log", port=port), sync_playwright() as driver:
        url = url_path(loom_home).read_text().strip()
        browser = driver.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_FLAGS)
        try:
            # The user: the printed URL, as is, opens the UI; the token leaves the address bar.
            mine = browser.new_context(viewport={"width": 1400, "height": 900})
            page = mine.new_page()
            page.set_default_timeout(60_000)
            open_page(page, url)
            page.get_by_text("Deployment").first.wait_for()
            assert "loom_token" not in page.url
            open_page(page, f"http://127.0.0.1:{port}/assets/loom")
            page.get_by_text("original").first.wait_for()
            shot(page, tmp_path, "loom-ui-with-token")
            answer = mine.request.post(
                f"http://127.0.0.1:{port}/graphql", data={"query": "{ version }"}
            )
            assert answer.status == 200 and "version" in answer.json()["data"]

            # Anyone else: the bare address, a page, GraphQL read and write, all refused.
            other = browser.new_context()
            page = other.new_page()
            for address in (f"http://127.0.0.1:{port}/", f"http://127.0.0.1:{port}/assets/loom"):
                response = page.goto(address)
                assert response is not None and response.status == 401
                assert "needs the URL with the token" in page.inner_text("body")
            for query in ("{ version }", 'mutation { stopSensor(id: "x") { __typename } }'):
                answer = other.request.post(
                    f"http://127.0.0.1:{port}/graphql", data={"query": query}
                )
                assert answer.status == 401 and "data" not in answer.text()
            wrong = other.request.get(f"http://127.0.0.1:{port}/?loom_token=guess", max_redirects=0)
            assert wrong.status == 401
        finally:
            browser.close()
