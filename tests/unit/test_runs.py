"""Who runs a run, told apart from a process that merely reuses its pid (issue 12.2)."""

from __future__ import annotations

import dataclasses
import signal
import subprocess
import sys

from loom_dagster.runs import Interrupted, ProcessIdentity, this_process


def test_a_live_process_is_not_gone_and_a_killed_one_is() -> None:
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        identity = ProcessIdentity.of(child.pid)
        assert identity is not None and identity.is_gone() is False
        assert ProcessIdentity.from_tag(identity.tag()) == identity
    finally:
        child.kill()
        child.wait()
    assert identity.is_gone() is True


def test_a_reused_pid_is_another_process_and_another_host_is_not_judged() -> None:
    me = this_process()
    assert dataclasses.replace(me, started="1").is_gone() is True
    assert dataclasses.replace(me, host="elsewhere").is_gone() is None
    assert ProcessIdentity.from_tag("not|a|tag") is None


def test_a_signal_ends_with_128_plus_its_number() -> None:
    assert Interrupted(signal.SIGTERM).exit_status == 143
    assert str(Interrupted(signal.SIGINT)) == "interrupted: stopped by SIGINT"
