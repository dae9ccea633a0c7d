"""The change journal (sources/journal.py): what a watcher appends, a reader finds once, after its
position; a torn line is skipped; a reader behind the rotation is told it lost changes; the
journal stays bounded."""

from __future__ import annotations

import os
from pathlib import Path

from loom_dagster.sources.journal import (
    Change,
    Heartbeat,
    JournalWriter,
    Position,
    end_of,
    journal_dir,
    read_after,
    read_folders,
    read_heartbeat,
    write_folders,
    write_heartbeat,
)


def changes(*paths: str) -> list[Change]:
    return [Change(path, closed=path.endswith(".md"), time_ns=n) for n, path in enumerate(paths)]


def test_a_reader_gets_each_change_once_after_its_position(tmp_path: Path) -> None:
    writer = JournalWriter(tmp_path, "g1")
    start = end_of(tmp_path, "g1")
    writer.append(changes("/f/a.md", "/f/b.txt"))

    read = read_after(tmp_path, start)
    assert read is not None
    first, position = read
    assert first == changes("/f/a.md", "/f/b.txt")

    writer.append(changes("/f/c.md"))
    read = read_after(tmp_path, position)
    assert read is not None
    second, position = read
    assert [c.path for c in second] == ["/f/c.md"]
    assert read_after(tmp_path, position) == ([], position)


def test_a_torn_last_line_is_not_taken_until_it_is_whole(tmp_path: Path) -> None:
    writer = JournalWriter(tmp_path, "g1")
    writer.append(changes("/f/a.md"))
    segment = next(journal_dir(tmp_path).iterdir())
    with open(segment, "ab") as handle:
        handle.write(b'["w", 5, "/f/half')  # a watcher killed mid-line

    read = read_after(tmp_path, Position("g1", 0, 0))

    assert read is not None
    found, position = read
    assert [c.path for c in found] == ["/f/a.md"]
    assert position.offset < segment.stat().st_size


def test_a_reader_follows_the_rotation_and_is_told_when_it_fell_behind(tmp_path: Path) -> None:
    writer = JournalWriter(tmp_path, "g1", segment_bytes=100, keep=2)
    start = end_of(tmp_path, "g1")
    writer.append(changes(*(f"/f/{n:03}.md" for n in range(5))))  # over 100 bytes: rotates

    read = read_after(tmp_path, start)
    assert read is not None and len(read[0]) == 5
    caught_up = read[1]
    for n in range(10):
        writer.append(changes(f"/f/more-{n:03}.md", f"/f/again-{n:03}.md"))

    assert read_after(tmp_path, caught_up) is None  # its segment was deleted: changes lost
    assert len(list(journal_dir(tmp_path).iterdir())) <= 2  # bounded


def test_a_new_generation_deletes_the_journal_of_the_one_before(tmp_path: Path) -> None:
    JournalWriter(tmp_path, "g1").append(changes("/f/a.md"))
    JournalWriter(tmp_path, "g2").append(changes("/f/b.md"))

    assert sorted(p.name.split("-")[0] for p in journal_dir(tmp_path).iterdir()) == ["g2"]


def test_the_heartbeat_says_whether_the_watcher_is_alive_and_what_it_watches(
    tmp_path: Path,
) -> None:
    assert read_heartbeat(tmp_path) is None
    write_heartbeat(tmp_path, Heartbeat("g1", os.getpid(), ("/f",), 1000.0))

    beat = read_heartbeat(tmp_path)

    assert beat is not None and beat.roots == ("/f",)
    assert beat.alive(now=1001.0) and not beat.alive(now=1100.0)


def test_the_folders_file_is_written_only_when_the_roots_change(tmp_path: Path) -> None:
    assert write_folders(tmp_path, ["/b", "/a"])
    assert not write_folders(tmp_path, ["/a", "/b"])
    assert read_folders(tmp_path) == ["/a", "/b"]


def test_a_file_saved_by_rename_after_its_writer_closed_it_is_whole_under_its_new_name() -> None:
    from watchdog.events import (
        DirModifiedEvent,
        FileClosedEvent,
        FileModifiedEvent,
        FileMovedEvent,
        FileOpenedEvent,
    )

    from loom_dagster.sources.watcher import Collector

    collector = Collector()
    collector.dispatch(FileModifiedEvent("/f/x.tmp"))
    collector.dispatch(FileClosedEvent("/f/x.tmp"))
    collector.dispatch(FileMovedEvent("/f/x.tmp", "/f/x.md"))
    collector.dispatch(DirModifiedEvent("/f"))  # the folder's own change: its entries say it
    collector.dispatch(FileOpenedEvent("/f/y.md"))  # a read changes nothing

    changes = {c.path: c.closed for c in collector.take()}

    assert changes == {"/f/x.tmp": False, "/f/x.md": True}
    assert collector.take() == []
