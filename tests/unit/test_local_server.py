"""The local Prefect server: its state file, which server a command uses, stopping it.

A stand-in process plays the server here (it answers ``/api/health`` and carries the server
module's name on its command line); tests/flows/test_local_server.py starts the real one.
"""

import json
import os
import subprocess
import sys
import textwrap
import time

import pytest

from libre_flows.flows import local_server
from libre_lib.errors import ParameterError

STAND_IN = textwrap.dedent(
    """
    import http.server, json, os, sys, time
    class Health(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_response(200 if self.path == "/api/health" else 404)
            self.end_headers()
            self.wfile.write(b"true")
        def log_message(self, *args):
            pass
    server = http.server.HTTPServer(("127.0.0.1", 0), Health)
    port = server.server_address[1]
    state = {"url": f"http://127.0.0.1:{port}", "pid": os.getpid(), "port": port,
             "started": time.time(), "log": "server.log"}
    with open(sys.argv[1] + ".tmp", "w") as out:
        json.dump(state, out)
    os.rename(sys.argv[1] + ".tmp", sys.argv[1])
    server.serve_forever()
    """
)


@pytest.fixture
def home(tmp_path, monkeypatch):
    """An empty LIBRE_HOME and no API URL (not even a flow-test harness's, when one runs in
    this session); Prefect's global settings read again afterwards."""
    from prefect.context import refresh_global_settings_context
    from prefect.settings import PREFECT_API_URL, temporary_settings

    monkeypatch.setenv("LIBRE_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("PREFECT_API_URL", raising=False)
    monkeypatch.delenv("LIBRE_SERVER", raising=False)
    with temporary_settings(restore_defaults={PREFECT_API_URL}):
        yield tmp_path / "home"
    monkeypatch.undo()
    refresh_global_settings_context()


@pytest.fixture
def stand_in(home):
    """A process that answers like the server and wrote the state file."""
    home.mkdir(parents=True)
    state = home / "server.json"
    process = subprocess.Popen([sys.executable, "-c", STAND_IN, str(state), local_server.MODULE])
    deadline = time.monotonic() + 30
    while not state.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    yield process
    process.kill()
    process.wait()


def _dead_pid() -> int:
    process = subprocess.Popen([sys.executable, "-c", "pass"])
    process.wait()
    return process.pid


def _write_state(home, pid):
    home.mkdir(parents=True, exist_ok=True)
    state = {"url": "http://127.0.0.1:9", "pid": pid, "port": 9, "started": 0.0, "log": "x"}
    (home / "server.json").write_text(json.dumps(state))


def test_the_default_mode_reuses_and_a_bad_mode_is_one_line(home, monkeypatch):
    assert local_server.mode() == "reuse"
    monkeypatch.setenv("LIBRE_SERVER", "Auto")
    assert local_server.mode() == "auto"
    monkeypatch.setenv("LIBRE_SERVER", "always")
    with pytest.raises(ParameterError, match="LIBRE_SERVER='always' is not one of reuse, auto"):
        local_server.mode()


def test_no_state_file_means_no_server(home):
    assert local_server.running() is None
    assert local_server.connect() is None
    assert "PREFECT_API_URL" not in os.environ
    assert local_server.stop() is None


@pytest.mark.parametrize("whose", ["dead", "another program"])
def test_a_stale_state_file_is_ignored_and_removed(home, whose):
    """A crashed server or a reboot leaves a state file naming a dead pid, or a pid that a
    different program reuses: no command may send its runs there."""
    _write_state(home, _dead_pid() if whose == "dead" else os.getpid())
    assert local_server.running() is None
    assert not (home / "server.json").exists()
    assert local_server.connect() is None
    assert "PREFECT_API_URL" not in os.environ


def test_a_running_server_is_reused(stand_in, home):
    state = local_server.running()
    assert state is not None and state.pid == stand_in.pid
    assert local_server.connect() == f"{state.url}/api"
    assert os.environ["PREFECT_API_URL"] == f"{state.url}/api"
    from prefect.context import GLOBAL_SETTINGS_CONTEXT  # Prefect read its settings again

    assert GLOBAL_SETTINGS_CONTEXT.settings.api.url == f"{state.url}/api"


def test_embedded_mode_and_a_configured_url_leave_the_server_alone(stand_in, home, monkeypatch):
    monkeypatch.setenv("LIBRE_SERVER", "embedded")
    assert local_server.connect() is None
    assert "PREFECT_API_URL" not in os.environ
    monkeypatch.setenv("LIBRE_SERVER", "reuse")
    monkeypatch.setenv("PREFECT_API_URL", "http://elsewhere:4200/api")
    assert local_server.connect() is None
    assert os.environ["PREFECT_API_URL"] == "http://elsewhere:4200/api"


def test_stop_ends_the_server_and_removes_its_state_file(stand_in, home):
    stopped = local_server.stop(grace=5)
    assert stopped is not None and stopped.pid == stand_in.pid
    assert stand_in.wait(timeout=10) is not None
    assert not (home / "server.json").exists()
    assert local_server.running() is None


def test_a_server_that_cannot_start_names_its_log(home, monkeypatch):
    """The server process exits at once (its port is taken): start says so, pointing at the
    log, instead of waiting for the timeout. A port in use is named in one line before any
    server starts (it said only "exited with code 1: see server.log")."""
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        with pytest.raises(ParameterError, match=rf"Port {port} on 127.0.0.1 is not free"):
            local_server.start(port=port, timeout=60)
        assert not (home / "server.log").exists()
        monkeypatch.setattr(local_server, "_check_free", lambda port: None)  # the server's bind
        with pytest.raises(RuntimeError, match=r"exited with code \d+: see .*server\.log"):
            local_server.start(port=port, timeout=60)
    assert local_server.running() is None


def test_the_token_the_server_drops_is_the_watchdogs():
    """A command's watchdog stops the servers carrying its token once the command is gone; a
    local server started by that command must not carry it."""
    from libre_flows.flows import embedded_server

    assert local_server._GUARD_TOKEN == embedded_server.TOKEN


def test_server_stop_stops_the_serve_processes_of_that_server_first(home):
    """A `libre serve` outlived `libre server stop` and went on asking the stopped server's port
    for runs, silently, after the next `libre server start` chose another port."""
    url, other = "http://127.0.0.1:1/api", "http://127.0.0.1:2/api"
    code = "import sys, time; time.sleep(120)"
    procs = [subprocess.Popen([sys.executable, "-c", code, "serve", "x.yaml"]) for _ in range(2)]
    try:
        with local_server.serving(url):  # this process, as `libre serve` records itself
            mine = home / "serve" / f"{os.getpid()}.json"
            assert json.loads(mine.read_text()) == {"pid": os.getpid(), "api_url": url}
        assert not mine.exists()
        folder = home / "serve"
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


@pytest.mark.parametrize(
    ("mode", "started", "watched"), [("auto", True, True), ("reuse", False, False)]
)
def test_a_server_libre_server_auto_starts_marks_killed_runs_crashed(
    monkeypatch, mode, started, watched
):
    """LIBRE_SERVER=auto started a server that later commands reuse, without the crash
    detection `libre server start` sets up: runs of killed commands stayed Running there."""
    from libre_flows.flows.cli import common

    monkeypatch.setenv("LIBRE_SERVER", mode)
    url = "http://127.0.0.1:9/api"
    monkeypatch.setattr(local_server, "running", lambda wait=0.0: None if started else object())
    monkeypatch.setattr(local_server, "connect", lambda: url)
    asked = []
    monkeypatch.setattr(
        common, "ensure_crash_detection", lambda api_url=None: asked.append(api_url)
    )
    settled = []
    monkeypatch.setattr(common, "_settle_task_runs", settled.append)
    assert common.server_note() == "local Prefect server http://127.0.0.1:9"
    assert asked == ([url] if watched else [])
    assert settled == [url]  # the task runs a crashed run left Running: marked on either server
