"""`libre server`: a command started with LIBRE_SERVER=auto starts the local Prefect server,
which outlives it; later commands send their runs to it; `libre server start` adds the
automation that marks the runs of killed commands Crashed; `libre server stop` ends it."""

import json
import os
import subprocess
import sys

import httpx

from libre_flows.flows import crash_detection, local_server

CLI = "import sys; from libre_flows.flows.cli import main; sys.argv[0] = 'libre'; main()"


def _libre(*args, **env):
    done = subprocess.run(
        [sys.executable, "-c", CLI, *map(str, args)],
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=600,
    )
    return done.returncode, done.stdout + done.stderr


def test_commands_start_reuse_and_stop_the_local_server(spec_copy, tmp_path, monkeypatch):
    home = tmp_path / "home"
    monkeypatch.setenv("LIBRE_HOME", str(home))
    monkeypatch.setenv("PREFECT_HOME", str(tmp_path / "prefect"))
    monkeypatch.delenv("PREFECT_API_URL", raising=False)
    spec = spec_copy()
    try:
        code, output = _libre("validate", spec, LIBRE_SERVER="auto")
        assert code == 0, output
        state = json.loads((home / "server.json").read_text())
        assert local_server.running().pid == state["pid"]  # it outlived the command

        # another Prefect home: had the command started a temporary server, its run would be
        # recorded there, not on the local server
        other = tmp_path / "other-prefect"
        code, output = _libre("validate", spec, LIBRE_SERVER="reuse", PREFECT_HOME=str(other))
        assert code == 0, output
        assert not (other / "prefect.db").exists()
        runs = httpx.post(f"{state['url']}/api/flow_runs/filter", json={}, timeout=30).json()
        assert sorted(run["state_type"] for run in runs) == ["COMPLETED", "COMPLETED"]

        code, output = _libre("server", "status")
        assert code == 0 and state["url"] in output

        # `server start` on the running server adds the automation that marks killed runs
        code, output = _libre("server", "start", "--no-warm")
        assert code == 0 and "already running" in output and "crash detection created" in output
        found = httpx.post(f"{state['url']}/api/automations/filter", json={}, timeout=30).json()
        assert [automation["name"] for automation in found] == [crash_detection.NAME]
    finally:
        code, output = _libre("server", "stop")
    assert code == 0 and f"pid {state['pid']}" in output
    assert not (home / "server.json").exists()
    assert local_server.running() is None
    code, output = _libre("server", "status")
    assert code == 1 and "not running" in output
