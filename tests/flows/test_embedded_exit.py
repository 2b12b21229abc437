"""A command on Prefect's temporary server lets it record the run before it stops it.

The server records task runs from their events; stopped at exit while writing the last ones,
it lost them and printed ``CancelledError`` tracebacks (exit code 0): every tuned pima run did.
"""

from __future__ import annotations

import os
import subprocess
import sys

from prefect import flow, task

from libre_flows.flows.embedded_server import let_record

CLI = "import sys; from libre_flows.flows.cli import main; sys.argv[0] = 'libre'; main()"


def test_a_tuned_run_on_the_temporary_server_exits_without_tracebacks(tmp_path, write_spec):
    spec = write_spec(tmp_path, "pima", tuning__enabled=True)
    env = {k: v for k, v in os.environ.items() if k != "PREFECT_API_URL"}
    env |= {
        "PREFECT_HOME": str(tmp_path / "prefect-home"),
        "LIBRE_HOME": str(tmp_path / "libre-home"),
        "LIBRE_SERVER": "embedded",
    }
    done = subprocess.run(
        [sys.executable, "-c", CLI, "train", str(spec)],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    output = done.stdout + done.stderr
    assert done.returncode == 0, output
    assert "holdout F1" in output
    for sign in ("Traceback", "CancelledError", "Error flushing"):
        assert sign not in output, output


@task
def _one(i: int) -> int:
    return i


@flow
def _mapped() -> int:
    return sum(f.result() for f in _one.map(range(20)))


def test_let_record_waits_until_every_task_run_is_recorded_in_an_end_state():
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import FlowRunFilter, FlowRunFilterId

    state = _mapped(return_state=True)
    assert let_record(state) is True
    runs = FlowRunFilter(id=FlowRunFilterId(any_=[state.state_details.flow_run_id]))
    with get_client(sync_client=True) as client:
        recorded = client.read_task_runs(flow_run_filter=runs)
    assert len(recorded) == 20
    assert {run.state_type.value for run in recorded} == {"COMPLETED"}


_SURVIVES_CTRL_C = """
import os, signal, sys, time
import httpx
from libre_flows.flows.embedded_server import guard_embedded_server
guard_embedded_server()
from prefect.server.api.server import SubprocessASGIServer
server = SubprocessASGIServer()
server.start()
print("server", os.getsid(server.server_process.pid) != os.getsid(0), flush=True)
signal.signal(signal.SIGINT, signal.SIG_IGN)  # this process lives on to look
os.killpg(os.getpgid(0), signal.SIGINT)  # a terminal's Ctrl-C: its whole foreground group
time.sleep(2)
alive = server.server_process.poll() is None
answers = httpx.get(server.api_url + "/health", timeout=10).status_code == 200 if alive else False
print("after Ctrl-C", alive, answers, flush=True)
server.stop()
"""


def test_ctrl_c_reaches_the_command_not_its_temporary_server(tmp_path):
    """The terminal's Ctrl-C reached Prefect's temporary server too: it stopped at once while
    the interrupted flow went on reporting to it, and after some 4 minutes of retries the
    command ended with a ConnectError (exit 1) instead of "interrupted" (130). The server now
    runs in a session of its own; the command stops it at exit (the watchdog, if killed)."""
    env = {k: v for k, v in os.environ.items() if k != "PREFECT_API_URL"}
    env |= {"PREFECT_HOME": str(tmp_path / "prefect-home"), "LIBRE_HOME": str(tmp_path / "lh")}
    env |= {"LIBRE_SERVER": "embedded"}
    done = subprocess.run(
        [sys.executable, "-c", _SURVIVES_CTRL_C],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        start_new_session=True,  # its own process group, as a shell gives a command
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "server True" in done.stdout and "after Ctrl-C True True" in done.stdout, done.stdout
