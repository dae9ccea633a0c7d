"""The settle rule (sources/settling.py): a changed file is taken when its writer closed it, or
when its size and mtime held between two looks HOLD_S apart, or when it is QUIET_S old; never on
a first look at a file written a moment ago and still open."""

from __future__ import annotations

from loom_dagster.sources.settling import HOLD_S, QUIET_S, Look, Settle

NOW = 1_000_000.0
JUST_WRITTEN_NS = int((NOW - 0.1) * 1e9)


def test_a_file_written_a_moment_ago_is_not_taken_at_its_first_look() -> None:
    settle = Settle(looks={}, closed={})

    assert not settle.ready("a.md", 10, JUST_WRITTEN_NS, NOW)
    assert settle.pending == {"a.md": Look(10, JUST_WRITTEN_NS, NOW)}


def test_a_file_its_writer_closed_after_its_last_write_is_taken_at_once() -> None:
    settle = Settle(looks={}, closed={"a.md": JUST_WRITTEN_NS + 1})

    assert settle.ready("a.md", 10, JUST_WRITTEN_NS, NOW)


def test_a_close_before_the_last_write_does_not_make_it_whole() -> None:
    settle = Settle(looks={}, closed={"a.md": JUST_WRITTEN_NS - 1})

    assert not settle.ready("a.md", 10, JUST_WRITTEN_NS, NOW)


def test_size_and_mtime_held_between_two_looks_far_enough_apart_is_taken() -> None:
    first = Settle(looks={}, closed={})
    first.ready("a.md", 10, JUST_WRITTEN_NS, NOW)

    too_soon = Settle(looks=first.pending, closed={})
    assert not too_soon.ready("a.md", 10, JUST_WRITTEN_NS, NOW + HOLD_S / 2)
    assert too_soon.pending["a.md"].at == NOW  # the first look stays the one compared with

    later = Settle(looks=too_soon.pending, closed={})
    assert later.ready("a.md", 10, JUST_WRITTEN_NS, NOW + HOLD_S)


def test_a_file_still_growing_between_two_looks_waits_for_a_third() -> None:
    first = Settle(looks={}, closed={})
    first.ready("a.md", 10, JUST_WRITTEN_NS, NOW)
    grown_ns = JUST_WRITTEN_NS + int(0.5e9)

    second = Settle(looks=first.pending, closed={})
    assert not second.ready("a.md", 20, grown_ns, NOW + HOLD_S)
    assert second.pending["a.md"] == Look(20, grown_ns, NOW + HOLD_S)


def test_a_file_untouched_for_the_quiet_period_is_taken_at_its_first_look() -> None:
    settle = Settle(looks={}, closed={})

    assert settle.ready("a.md", 10, int((NOW - QUIET_S) * 1e9), NOW)
    assert settle.pending == {}
