"""`python -m loom_dagster.cli`: the `loom` command."""

import sys

from loom_dagster.cli import main

sys.exit(main())
