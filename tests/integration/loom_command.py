"""The `loom` command as a user runs it: the installed console script, in a process of its own,
optionally as another user; and the processes it leaves behind, read from /proc."""

from __future__ import annotations

import os
import pwd
import shutil
import subprocess
import sys
import tempfile
import unicodedata
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

_SCRIPT = Path(sys.executable).with_name("loom")
# The console script `loom` (pyproject's [project.scripts]) when installed, else the same main().
LOOM: list[str] = (
    [str(_SCRIPT)] if _SCRIPT.is_file() else [sys.executable, "-m", "loom_dagster.cli"]
)
OTHER_USER = "nobody"
_CHECKOUT = Path(__file__).resolve().parents[2]


def loom(
    *args: str,
    env: dict[str, str] | None = None,
    as_user: str | None = None,
    stdout: int = subprocess.PIPE,
    timeout: float = 180,
) -> subprocess.CompletedProcess[str]:
    """Run `loom args…` to its end; stdout (unless redirected) and stderr are captured."""
    command = [*LOOM, *args]
    if as_user is not None:
        account = pwd.getpwnam(as_user)
        command = [
            "setpriv",
            f"--reuid={account.pw_uid}",
            f"--regid={account.pw_gid}",
            "--clear-groups",
            *command,
        ]
    return subprocess.run(
        command,
        stdout=stdout,
        stderr=subprocess.PIPE,
        text=True,
        timeout=timeout,
        env=env or dict(os.environ),
    )


def needs_root_to_act_as_another_user() -> None:
    if os.geteuid() != 0:
        pytest.skip(f"running a command as {OTHER_USER} needs root (setpriv)")
    try:
        account = pwd.getpwnam(OTHER_USER)
    except KeyError:
        pytest.skip(f"no user {OTHER_USER} on this machine")
    # The other user runs this checkout's own interpreter and `loom`: a checkout (or a Python)
    # under a folder only root may enter, such as /root, cannot be run by it at all.
    probe = subprocess.run(
        [
            "setpriv",
            f"--reuid={account.pw_uid}",
            f"--regid={account.pw_gid}",
            "--clear-groups",
            *LOOM,
            "--help",
        ],
        capture_output=True,
        timeout=60,
    )
    if probe.returncode != 0:
        pytest.skip(
            f"{OTHER_USER} cannot run this checkout's loom (it or its Python lies under a folder"
            f" only its owner may enter): {probe.stderr.decode(errors='replace')[:200]}"
        )


@pytest.fixture
def folder_for_everyone() -> Iterator[Path]:
    """A fresh folder every user can reach, made by this (root) process; removed afterwards.

    pytest's tmp_path is under a folder only its owner may enter (pytest sets it to 0700 again
    on every run, so it cannot be opened up), and the command run as another user needs a path
    it can reach. The checkout is such a path: that user runs the checkout's own `loom`.
    """
    folder = Path(tempfile.mkdtemp(prefix=".other-user-", dir=_CHECKOUT))
    try:
        folder.chmod(0o755)
        yield folder
    finally:
        shutil.rmtree(folder)


def raw_controls(text: str) -> list[str]:
    """Every control or format character in `text` other than a newline: what a terminal obeys."""
    return sorted(
        {
            repr(char)
            for char in text
            if char != "\n" and unicodedata.category(char) in {"Cc", "Cf", "Zl", "Zp"}
        }
    )


# -- processes ---------------------------------------------------------------------------------


def _stat(pid: int) -> list[str] | None:
    try:
        with open(f"/proc/{pid}/stat", "rb") as file:
            return file.read().rsplit(b")", 1)[1].decode().split()
    except OSError:
        return None


def alive(pid: int) -> bool:
    """A process that exists and is not a zombie (a zombie runs nothing and holds no port)."""
    fields = _stat(pid)
    return fields is not None and fields[0] not in ("Z", "X")


def children(pid: int) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            fields = _stat(int(entry))
            if fields is not None and int(fields[1]) == pid and fields[0] not in ("Z", "X"):
                found.append(int(entry))
    return found


def descendants(pid: int) -> list[int]:
    found: list[int] = []
    todo = [pid]
    while todo:
        for child in children(todo.pop()):
            found.append(child)
            todo.append(child)
    return found


def alive_among(pids: Sequence[int]) -> list[int]:
    return [pid for pid in pids if alive(pid)]
