"""Prefect flows of libre-flows (wiring only: which task runs after which)."""

import os
import sys

# Offline-friendly defaults, set before Prefect reads its settings; the environment wins.
for _name, _value in {
    "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
    "DO_NOT_TRACK": "1",
    "GX_ANALYTICS_ENABLED": "false",
    # The embedded server needs ~10-20 s to start (more on a new PREFECT_HOME or a busy machine).
    "PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS": "120",
}.items():
    os.environ.setdefault(_name, _value)

HEARTBEAT_FREQUENCY_S = 60
"""Seconds between flow-run heartbeats in libre's processes (Prefect's default: 180): the server
marks a killed command's run Crashed after 2.5 of them (``crash_detection``)."""
_HEARTBEAT_NAMES = ("PREFECT_FLOWS_HEARTBEAT_FREQUENCY", "PREFECT_RUNNER_HEARTBEAT_FREQUENCY")


def _heartbeat_configured() -> bool:
    """Whether the environment or the active Prefect profile sets the heartbeat frequency."""
    if any(name in os.environ for name in _HEARTBEAT_NAMES):
        return True
    import tomllib
    from pathlib import Path

    home = Path(os.environ.get("PREFECT_HOME") or "~/.prefect").expanduser()
    path = Path(os.environ.get("PREFECT_PROFILES_PATH") or home / "profiles.toml").expanduser()
    try:
        profiles = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    active = os.environ.get("PREFECT_PROFILE") or profiles.get("active") or "ephemeral"
    settings = profiles.get("profiles", {}).get(active, {})
    return any(name in settings for name in _HEARTBEAT_NAMES)


if not _heartbeat_configured():
    os.environ["PREFECT_FLOWS_HEARTBEAT_FREQUENCY"] = str(HEARTBEAT_FREQUENCY_S)
    if "prefect.context" in sys.modules:  # e.g. a worker's `python -m prefect.engine`
        import prefect.context
        from prefect.settings import PREFECT_FLOWS_HEARTBEAT_FREQUENCY

        _root = prefect.context.GLOBAL_SETTINGS_CONTEXT  # read at import: update this one value
        _settings = _root.settings.copy_with_update(
            updates={PREFECT_FLOWS_HEARTBEAT_FREQUENCY: HEARTBEAT_FREQUENCY_S}
        )
        prefect.context.GLOBAL_SETTINGS_CONTEXT = _root.model_copy(update={"settings": _settings})
