"""What `loom ui` runs instead of `dagster dev`'s own processes (loom_dagster/ui_webserver.py):
the webserver on a Unix socket, the daemon with its backfill passes every 10 s, and the folder
watcher unless LOOM_WATCHER=0."""

from __future__ import annotations

import sys
from pathlib import Path

import dagster._daemon.controller as controller
import pytest

from loom_dagster.errors import SettingsError
from loom_dagster.settings import LoomSettings
from loom_dagster.ui_webserver import (
    BACKFILL_PASS_S,
    set_backfill_pass,
    start_watcher,
    webserver_command,
)

OWN = [sys.executable, "-m", "loom_dagster.ui_webserver"]


def test_dagster_devs_daemon_runs_through_loom_with_its_arguments() -> None:
    command = [sys.executable, "-m", "dagster._daemon", "run", "--log-level", "info"]
    assert webserver_command(command, "/s/web.sock", False) == [
        *OWN,
        "daemon",
        "/s/web.sock",
        "0",
        "run",
        "--log-level",
        "info",
    ]
    web = [sys.executable, "-m", "dagster_webserver", "-h", "127.0.0.1"]
    assert webserver_command(web, "/s/web.sock", True)[: len(OWN) + 3] == [
        *OWN,
        "web",
        "/s/web.sock",
        "1",
    ]
    other = [sys.executable, "-m", "dagster", "code-server", "start"]
    assert webserver_command(other, "/s/web.sock", False) == other


def test_the_backfill_daemon_passes_every_ten_seconds_under_loom_ui(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """What Dagster 1.13's backfill loop reads when it starts (dagster/_daemon/backfill.py):
    its own default is 30 s, which left a backfill "in progress" up to a minute after its
    last run ended."""
    monkeypatch.setattr(controller, "DEFAULT_DAEMON_INTERVAL_SECONDS", 30)
    set_backfill_pass()
    from dagster._daemon.controller import DEFAULT_DAEMON_INTERVAL_SECONDS

    assert DEFAULT_DAEMON_INTERVAL_SECONDS == BACKFILL_PASS_S == 10


def test_loom_watcher_0_starts_no_watcher(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """A filesystem without change notification: the polling scan alone, no watcher process."""
    monkeypatch.setenv("LOOM_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("LOOM_WATCHER", "0")

    assert start_watcher() is None


def test_the_watcher_runs_unless_loom_watcher_says_0_and_any_other_value_is_refused(
    tmp_path: Path,
) -> None:
    home = str(tmp_path / "home")
    assert LoomSettings.from_env({"LOOM_HOME": home}).watcher
    assert LoomSettings.from_env({"LOOM_HOME": home, "LOOM_WATCHER": "1"}).watcher
    assert not LoomSettings.from_env({"LOOM_HOME": home, "LOOM_WATCHER": "0"}).watcher
    with pytest.raises(SettingsError, match="LOOM_WATCHER must be 0 or 1"):
        LoomSettings.from_env({"LOOM_HOME": home, "LOOM_WATCHER": "off"})
