"""The two processes stay apart at run time too.

pyproject.toml's import contract (`lint-imports` in scripts/test) checks every import statement:
the pipeline imports no document parser and not the extractor, sqlglot stays in the query
package, the extractor imports neither the pipeline nor Dagster. What it cannot see is what a
process loads through a name built at run time; this loads the code location and looks.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_code_location_loads_no_parser_library() -> None:
    # Dagster's processes (the code server, each run) import the definitions: no sqlglot nor
    # pypdf may come in with them, through the query package or anything else.
    program = (
        "import sys, warnings\n"
        "warnings.simplefilter('ignore')\n"
        "import loom_dagster.definitions\n"
        "print(sorted(name for name in ('sqlglot', 'pypdf', 'extractor_sandbox', 'loom_dagster.query')"
        " if name in sys.modules))\n"
    )
    loaded = subprocess.run(
        [sys.executable, "-c", program], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert (loaded.returncode, loaded.stdout.strip()) == (0, "[]"), loaded.stderr[-2000:]
