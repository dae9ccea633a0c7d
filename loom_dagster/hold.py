"""Named points in a run where a test may hold the process, to kill it there or act meanwhile.

Only tests set LOOM_TEST_HOLD_AT (a point's name, or several separated by commas) and
LOOM_TEST_HOLD_DIR (a folder): at each such point the process writes `<point>.reached` there
and waits until `<point>.release` appears, so a crash test kills the process at an exact step
rather than after a guessed delay, and a test holds a run twice (act, release, act again).
Unset, a point costs one dictionary lookup.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

ENV_AT = "LOOM_TEST_HOLD_AT"
ENV_DIR = "LOOM_TEST_HOLD_DIR"
# The end of each step, and inside publishing between the catalog's commit and the index's
# ("published") and after the index's ("index"), the catalog closed at both. "slot": the
# publishing step holds the catalog's pool slot and has not opened the catalog yet.
POINTS = ("original", "artifact", "chunks", "published", "index")


def reached(point: str) -> None:
    """Hold here when a test asked for this point; return at once otherwise."""
    at = os.environ.get(ENV_AT)
    if not at or point not in at.split(",") or not os.environ.get(ENV_DIR):
        return
    folder = Path(os.environ[ENV_DIR])
    (folder / f"{point}.reached").write_text(str(os.getpid()))
    release = folder / f"{point}.release"
    while not release.exists():
        time.sleep(0.05)
