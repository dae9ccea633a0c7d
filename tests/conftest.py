"""Settings for every test process and the processes it starts."""

import os
import signal

# `loom search` starts a resident searcher that outlives it; tests of it turn it on themselves.
os.environ["LOOM_SEARCH_RESIDENT"] = "off"

# A suite a shell starts in the background (CI, `nohup ... &`) inherits SIGINT ignored. Dagster
# gives SIGTERM SIGINT's handler whenever it captures interrupts on the main thread, so SIGTERM
# ends up ignored too, and every process a later step starts inherits that: its compute-log
# `tail -F` processes then outlive their terminate(), and the step's clean-up waits 2 x 30 s for
# them (six Dagster tests took a minute more each in the whole suite that way).
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)
