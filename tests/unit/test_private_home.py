"""LOOM_HOME and the object store are private to their owner (issue 12.11): they hold copies
of every original, so another user must not be able to read them."""

from __future__ import annotations

import stat
from pathlib import Path

from loom_dagster.objectstore import ObjectStore
from loom_dagster.settings import LoomSettings


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_a_new_home_and_its_folders_are_open_to_their_owner_only(tmp_path: Path) -> None:
    home = tmp_path / "home"
    settings = LoomSettings.from_env({"LOOM_HOME": str(home)})
    settings.prepare()
    for folder in (home, settings.dagster_home, settings.search_dir):
        assert mode(folder) == 0o700, folder


def test_an_existing_home_others_could_enter_is_closed(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    home.chmod(0o755)
    LoomSettings.from_env({"LOOM_HOME": str(home)}).prepare()
    assert mode(home) == 0o700


def test_stored_objects_are_readable_by_their_owner_only(tmp_path: Path) -> None:
    store = ObjectStore((tmp_path / "store").as_uri())
    sha = store.put_original(b"the payroll, verbatim")
    artifact = store.put_artifact(b'{"blocks": []}')
    stored = [p for p in (tmp_path / "store").rglob("*") if p.is_file()]
    assert len(stored) == 2 and {sha, artifact} <= {p.name for p in stored} | {
        p.stem for p in stored
    }
    for path in stored:
        assert mode(path) == 0o600, path
    for folder in [p for p in (tmp_path / "store").rglob("*") if p.is_dir()]:
        assert mode(folder) == 0o700, folder
