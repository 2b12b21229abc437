"""`libre server`: a command started with LIBRE_SERVER=auto starts the local Prefect server,
which outlives it; later commands send their runs to it; `libre server start` adds the
automation that marks the runs of killed commands Crashed; `libre server stop` ends it."""

import json
import os
import subprocess
import sys
import time

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
        # as `libre server start` sets it up: killed runs are marked Crashed there
        assert "crash detection created" in output
        found = httpx.post(f"{state['url']}/api/automations/filter", json={}, timeout=30).json()
        assert [automation["name"] for automation in found] == [crash_detection.NAME]

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
        # prefect's own commands need the address (they started a temporary server each)
        assert f"export PREFECT_API_URL={state['url']}/api" in output

        # `server start` on the running server finds the automation in place: no second one
        code, output = _libre("server", "start", "--no-warm")
        assert code == 0 and "already running" in output and "crash detection" not in output
        found = httpx.post(f"{state['url']}/api/automations/filter", json={}, timeout=30).json()
        assert [automation["name"] for automation in found] == [crash_detection.NAME]
    finally:
        code, output = _libre("server", "stop")
    assert code == 0 and f"pid {state['pid']}" in output
    assert not (home / "server.json").exists()
    assert local_server.running() is None
    code, output = _libre("server", "status")
    assert code == 1 and "not running" in output


def test_stopping_the_server_names_the_flow_runs_it_cancels(monkeypatch):
    """`libre server stop` cancelled a retraining `libre notify` had started and said nothing:
    the event was lost without a word."""
    from prefect import flow
    from prefect.client.orchestration import get_client
    from prefect.settings import PREFECT_API_URL
    from prefect.states import Completed, Running
    from typer.testing import CliRunner

    from libre_flows.flows.cli.server import server_app

    @flow(name="libre-train-probe")
    def probe():
        return None

    with get_client(sync_client=True) as client:
        started = time.time()
        run = client.create_flow_run(probe, name="pima-on-new-data-probe")
        client.set_flow_run_state(run.id, Running(), force=True)
        try:
            listed = local_server.running_flow_runs(PREFECT_API_URL.value())
            assert "pima-on-new-data-probe (no deployment)" in listed
            recent = local_server.running_flow_runs(PREFECT_API_URL.value(), since=started)
            assert "pima-on-new-data-probe (no deployment)" in recent
            # a server started after the run entered Running did not run it: a command killed
            # under a temporary server left it Running in the database; it is not "stopped"
            later = local_server.running_flow_runs(PREFECT_API_URL.value(), since=time.time() + 5)
            assert "pima-on-new-data-probe (no deployment)" not in later
        finally:
            client.set_flow_run_state(run.id, Completed(), force=True)
    assert local_server.running_flow_runs("http://127.0.0.1:9/api", timeout=1) == []

    class Stopped:
        url, pid, api_url = "http://127.0.0.1:4367", 1, "http://127.0.0.1:4367/api"
        started = 0.0

    monkeypatch.setattr(local_server, "running", lambda: Stopped())
    monkeypatch.setattr(
        local_server, "running_flow_runs", lambda url, since=None: ["a-run (pima-on-new-data)"]
    )
    monkeypatch.setattr(local_server, "serve_processes", lambda url: [])
    monkeypatch.setattr(local_server, "stop", lambda: Stopped())
    monkeypatch.setattr("libre_flows.flows.warm.stop", lambda: None)
    result = CliRunner().invoke(server_app, ["stop"], env={"COLUMNS": "250"})
    assert result.exit_code == 0
    out = " ".join(result.output.split())
    assert "warning: 1 flow run was in progress and stopped with the server: a-run " in out
    assert "(pima-on-new-data). Nothing runs them again" in out
