"""A tick fed by the change journal (pipeline/watching.py, sources.scan with `only`): it looks at
the changed paths and nothing else, scans a folder whole where no watcher covers it, when a new
watcher starts, and when the journal lost changes; a tick with nothing journaled is idle."""

from __future__ import annotations

import os
import time
from pathlib import Path

from loom_dagster.pipeline.watching import WatchCursor, idle, plan_tick
from loom_dagster.sources import FileState, Source, scan
from loom_dagster.sources.journal import Change, Heartbeat, JournalWriter, write_heartbeat


def folder_of(root: Path, names: list[str]) -> Source:
    for name in names:
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"# {name}\n")
        os.utime(path, (time.time() - 60, time.time() - 60))
    return Source("docs", str(root))


def known_of(source: Source) -> dict[str, FileState]:
    return {
        r.path: FileState(r.size, r.mtime_ns, r.sha256, r.device, r.inode, r.options, r.key)
        for r in scan(source, {}).new
    }


def test_a_look_at_changed_paths_sees_them_and_retires_only_what_is_gone_among_them(
    tmp_path: Path,
) -> None:
    source = folder_of(tmp_path / "docs", ["a.md", "b.md", "sub/c.md", "sub/d.md"])
    known = known_of(source)
    (tmp_path / "docs" / "a.md").write_text("# a, edited\n")
    os.utime(tmp_path / "docs" / "a.md", (time.time() - 60, time.time() - 60))
    (tmp_path / "docs" / "b.md").unlink()
    (tmp_path / "docs" / "sub" / "d.md").unlink()  # gone, but not among the paths looked at

    result = scan(source, known, only={"a.md", "b.md"})

    assert [r.path for r in result.new] == ["a.md"]
    assert result.deleted == ("b.md",)


def test_a_folder_moved_in_is_walked_and_one_moved_out_retires_what_it_held(
    tmp_path: Path,
) -> None:
    source = folder_of(tmp_path / "docs", ["old/x.md", "old/y.md"])
    known = known_of(source)
    (tmp_path / "docs" / "old").rename(tmp_path / "elsewhere")
    folder_of(tmp_path / "docs", ["new/deep/z.md"])

    result = scan(source, known, only={"old", "new"})

    assert [r.path for r in result.new] == ["new/deep/z.md"]
    assert result.deleted == ("old/x.md", "old/y.md")


def test_a_changed_path_reached_through_a_link_or_hidden_finds_nothing(tmp_path: Path) -> None:
    source = folder_of(tmp_path / "docs", [".hidden/a.md"])
    folder_of(tmp_path / "outside", ["b.md"])
    (tmp_path / "docs" / "link").symlink_to(tmp_path / "outside")

    result = scan(source, {}, only={".hidden/a.md", "link/b.md", "link"})

    assert result.new == ()


def live_watcher(home: Path, roots: list[str], generation: str = "g1") -> JournalWriter:
    writer = JournalWriter(home, generation)
    write_heartbeat(home, Heartbeat(generation, os.getpid(), tuple(roots), time.time()))
    return writer


def test_with_no_watcher_a_folder_is_scanned_whole_every_poll_and_not_between(
    tmp_path: Path,
) -> None:
    source = folder_of(tmp_path / "docs", ["a.md"])
    first = plan_tick(tmp_path / "home", [source], WatchCursor(), time.time())
    assert [look.only for look in first.looks] == [None]
    first.cursor.scanned["docs"] = time.time()

    second = plan_tick(tmp_path / "home", [source], first.cursor, time.time())

    assert second.looks == [] and not second.watcher


def test_a_watched_folder_is_scanned_whole_once_then_only_at_its_journaled_paths(
    tmp_path: Path,
) -> None:
    home = tmp_path / "home"
    source = folder_of(tmp_path / "docs", ["a.md", "b.md"])
    writer = live_watcher(home, [source.root])

    first = plan_tick(home, [source], WatchCursor(), time.time())
    assert [look.only for look in first.looks] == [None]  # what changed before it watched
    first.cursor.scanned["docs"] = first.cursor.scanned[""] = time.time()
    writer.append([Change(str(tmp_path / "docs" / "b.md"), True, 5)])

    second = plan_tick(home, [source], first.cursor, time.time())

    [look] = second.looks
    assert look.only == frozenset({"b.md"}) and look.closed == {"b.md": 5}
    assert idle(home, second.cursor, time.time(), housekeeping_s=30)
    writer.append([Change(str(tmp_path / "docs" / "a.md"), False, 6)])
    assert not idle(home, second.cursor, time.time(), housekeeping_s=30)


def test_a_new_watcher_generation_makes_its_folders_scanned_whole_again(
    tmp_path: Path,
) -> None:
    home = tmp_path / "home"
    source = folder_of(tmp_path / "docs", ["a.md"])
    live_watcher(home, [source.root], "g1")
    first = plan_tick(home, [source], WatchCursor(), time.time())
    first.cursor.scanned["docs"] = time.time()
    live_watcher(home, [source.root], "g2")  # the watcher restarted: changes in between unseen

    second = plan_tick(home, [source], first.cursor, time.time())

    assert [look.only for look in second.looks] == [None]


def test_the_polling_sensors_earlier_cursor_is_read_as_its_resume_points() -> None:
    cursor = WatchCursor.loads('{"docs": "sub/c.md"}')

    assert cursor.resume == {"docs": "sub/c.md"} and cursor.at is None
    assert WatchCursor.loads(cursor.dumps()) == cursor
