"""Prefect flows of libre-flows (wiring only: which task runs after which)."""

import os

# Offline-friendly defaults, set before Prefect reads its settings; the environment wins.
for _name, _value in {
    "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
    "DO_NOT_TRACK": "1",
    "GX_ANALYTICS_ENABLED": "false",
    # The embedded server needs ~10-20 s to start (more on a new PREFECT_HOME or a busy machine).
    "PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS": "120",
}.items():
    os.environ.setdefault(_name, _value)
