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


def test_a_port_in_use_is_named_before_any_server_starts(tmp_path, monkeypatch):
    """`libre server start --port N` on a busy port said only "exited with code 1: see
    server.log"."""
    import socket

    import pytest

    from libre_lib.errors import ParameterError

    monkeypatch.setenv("LIBRE_HOME", str(tmp_path / "home"))
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        with pytest.raises(ParameterError, match=rf"Port {port} on 127.0.0.1 is not free"):
            local_server.start(port=port, timeout=5)
    assert not (tmp_path / "home" / "server.log").exists()


def test_server_stop_stops_the_serve_processes_of_that_server_first(tmp_path, monkeypatch):
    """A `libre serve` outlived `libre server stop` and went on asking the stopped server's port
    for runs, silently, after the next `libre server start` chose another port."""
    monkeypatch.setenv("LIBRE_HOME", str(tmp_path / "home"))
    url, other = "http://127.0.0.1:1/api", "http://127.0.0.1:2/api"
    code = "import sys, time; time.sleep(120)"
    procs = [subprocess.Popen([sys.executable, "-c", code, "serve", "x.yaml"]) for _ in range(2)]
    try:
        with local_server.serving(url):  # this process, as `libre serve` records itself
            mine = tmp_path / "home" / "serve" / f"{os.getpid()}.json"
            assert json.loads(mine.read_text()) == {"pid": os.getpid(), "api_url": url}
        assert not mine.exists()
        folder = tmp_path / "home" / "serve"
        for proc, served in zip(procs, (url, other), strict=True):
            (folder / f"{proc.pid}.json").write_text(
                json.dumps({"pid": proc.pid, "api_url": served})
            )
        (folder / "999999999.json").write_text(json.dumps({"pid": 999999999, "api_url": url}))
        assert local_server.serve_processes(url) == [procs[0].pid]
        assert not (folder / "999999999.json").exists()  # a dead one's record is removed
        assert local_server.stop_serving(url, grace=5) == [procs[0].pid]
        assert procs[0].wait(timeout=10) == -15  # SIGTERM
        assert procs[1].poll() is None  # another server's serve is left alone
    finally:
        for proc in procs:
            proc.kill()
            proc.wait()
