"""Settings for every test process and the processes it starts."""

import os

# `loom search` starts a resident searcher that outlives it; tests of it turn it on themselves.
os.environ["LOOM_SEARCH_RESIDENT"] = "off"
