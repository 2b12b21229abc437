"""A killed command's flow run is marked Crashed by the server's automation, with a message;
runs that keep sending heartbeats, that completed, or that are not libre's are left alone."""

import os
import select
import signal
import subprocess
import sys
import textwrap
import time
import uuid
from datetime import UTC, datetime, timedelta

import httpx
import pytest
from prefect.client.orchestration import get_client
from prefect.client.schemas.objects import StateType
from prefect.events.actions import ChangeFlowRunState
from prefect.events.schemas.automations import Posture
from prefect.settings import get_current_settings
from prefect.states import Completed, Running

from libre_flows.flows import HEARTBEAT_FREQUENCY_S, crash_detection

WAIT_S = 120.0  # a bound against hanging on a broken server, never reached when it works

SILENT = textwrap.dedent(
    """
    import time

    import libre_flows.flows  # libre's heartbeat default
    from libre_flows.flows import heartbeats
    from prefect import flow
    from prefect.runtime import flow_run

    assert heartbeats.install()  # the heartbeats libre's flows send

    @flow(name="libre-test-silent")
    def silent():
        print("RUN", flow_run.id, flush=True)
        time.sleep(600)

    silent()
    """
)


@pytest.fixture
def api():
    """The test server's API URL; the automation is deleted afterwards."""
    yield get_current_settings().api.url.rstrip("/")
    with get_client(sync_client=True) as client:
        for found in client.read_automations_by_name(crash_detection.NAME):
            client.delete_automation(found.id)


def _automations():
    with get_client(sync_client=True) as client:
        return client.read_automations_by_name(crash_detection.NAME)


def test_silence_limit_is_two_and_a_half_heartbeats():
    assert crash_detection.silence_limit(60) == timedelta(seconds=150)
    assert crash_detection.silence_limit(HEARTBEAT_FREQUENCY_S) >= timedelta(
        seconds=HEARTBEAT_FREQUENCY_S + 30
    )


def test_ensure_creates_the_automation_once_updates_it_and_keeps_it_paused(api):
    assert crash_detection.ensure(150) == "created"
    assert crash_detection.ensure(timedelta(seconds=150)) == "unchanged"
    [found] = _automations()
    assert found.enabled
    trigger = found.trigger
    assert trigger.posture == Posture.Proactive
    assert trigger.after == {"prefect.flow-run.heartbeat"}
    assert trigger.expect == {
        "prefect.flow-run.heartbeat",
        "prefect.flow-run.Completed",
        "prefect.flow-run.Failed",
        "prefect.flow-run.Cancelled",
        "prefect.flow-run.Crashed",
    }
    assert trigger.for_each == {"prefect.resource.id"}
    assert trigger.match.model_dump() == {"prefect.resource.id": "prefect.flow-run.*"}
    assert trigger.match_related.model_dump() == {
        "prefect.resource.role": "flow",
        "prefect.resource.name": "libre-*",
    }
    assert trigger.threshold == 1 and trigger.within == timedelta(seconds=150)
    [action] = found.actions
    assert isinstance(action, ChangeFlowRunState) and action.state == StateType.CRASHED
    assert action.message.startswith("No heartbeat for 150 s: the process running this flow")

    assert crash_detection.ensure(90) == "updated"  # another heartbeat frequency
    [updated] = _automations()
    assert updated.id == found.id and updated.trigger.within == timedelta(seconds=90)
    assert updated.actions[0].message.startswith("No heartbeat for 90 s")

    with get_client(sync_client=True) as client:  # `prefect automation pause`: turned off
        client.pause_automation(found.id)
    assert crash_detection.ensure(150) == "paused"
    [paused] = _automations()
    assert not paused.enabled and paused.trigger.within == timedelta(seconds=150)


def _heartbeat(api: str, run_id, flow_name: str) -> None:
    event = {
        "id": str(uuid.uuid4()),
        "occurred": datetime.now(UTC).isoformat(),
        "event": "prefect.flow-run.heartbeat",
        "resource": {"prefect.resource.id": f"prefect.flow-run.{run_id}"},
        "related": [
            {
                "prefect.resource.id": f"prefect.flow.{uuid.uuid4()}",
                "prefect.resource.role": "flow",
                "prefect.resource.name": flow_name,
            }
        ],
    }
    httpx.post(f"{api}/events", json=[event], timeout=30).raise_for_status()


def _run(client, name: str):
    """A Running flow run of a flow named ``name``."""
    from prefect import flow

    run = client.create_flow_run(flow(name=name)(lambda: None), state=Running())
    return run.id


def _heartbeats_stored(api: str, run_id) -> bool:
    query = {
        "filter": {
            "event": {"name": ["prefect.flow-run.heartbeat"]},
            "resource": {"id": [f"prefect.flow-run.{run_id}"]},
        }
    }
    found = httpx.post(f"{api}/events/filter", json=query, timeout=30).json()
    return bool(found["events"])


def _line(process: subprocess.Popen, deadline: float) -> str:
    while time.monotonic() < deadline:
        ready, _, _ = select.select([process.stdout], [], [], 1.0)
        line = process.stdout.readline() if ready else ""
        if line.startswith("RUN "):
            return line.split()[1]
        assert process.poll() is None, "the flow's process exited"
    raise AssertionError("the flow did not start")


def test_a_killed_process_s_run_is_marked_crashed_and_the_others_are_not(api, tmp_path):
    assert crash_detection.ensure(10) == "created"  # the shortest Prefect allows
    deadline = time.monotonic() + WAIT_S
    killed = subprocess.Popen(
        [sys.executable, "-c", SILENT],
        env={**os.environ, "PREFECT_API_URL": api},
        stdout=subprocess.PIPE,
        stderr=(tmp_path / "stderr.log").open("w"),
        text=True,
    )
    try:
        with get_client(sync_client=True) as client:
            beating = _run(client, "libre-test-beating")
            done = _run(client, "libre-test-done")
            other = _run(client, "other-flow")
            for run_id, name in ((beating, "libre-test-beating"), (done, "libre-test-done")):
                _heartbeat(api, run_id, name)
            _heartbeat(api, other, "other-flow")
            client.set_flow_run_state(done, Completed())

            silent = uuid.UUID(_line(killed, deadline))
            while not _heartbeats_stored(api, silent):  # its first heartbeat, sent at start
                _heartbeat(api, beating, "libre-test-beating")
                assert time.monotonic() < deadline, "no heartbeat from the flow's process"
                time.sleep(1)
            killed.send_signal(signal.SIGKILL)
            killed.wait()
            assert client.read_flow_run(silent).state.type == StateType.RUNNING

            beat = 0
            while client.read_flow_run(silent).state.type != StateType.CRASHED:
                assert time.monotonic() < deadline, "the killed process's run stayed Running"
                beat += 1
                if beat % 2 == 0:
                    _heartbeat(api, beating, "libre-test-beating")
                time.sleep(1)
            state = client.read_flow_run(silent).state
            assert state.message.startswith("No heartbeat for 10 s: the process running this")
            assert client.read_flow_run(beating).state.type == StateType.RUNNING
            assert client.read_flow_run(done).state.type == StateType.COMPLETED
            assert client.read_flow_run(other).state.type == StateType.RUNNING
    finally:
        if killed.poll() is None:
            killed.kill()
        killed.wait()
        killed.stdout.close()


def test_libre_sets_the_heartbeat_frequency_unless_configured(tmp_path):
    show = (
        "import libre_flows.flows; from prefect.settings import get_current_settings; "
        "print(get_current_settings().flows.heartbeat_frequency)"
    )
    profiles = tmp_path / "profiles.toml"
    profiles.write_text(
        'active = "mine"\n[profiles.mine]\nPREFECT_FLOWS_HEARTBEAT_FREQUENCY = "45"\n'
    )
    env = {
        k: v for k, v in os.environ.items() if not k.startswith(("PREFECT_FLOWS_", "PREFECT_RUN"))
    }
    env["PREFECT_HOME"] = str(tmp_path / "prefect")

    def frequency(**changes) -> str:
        done = subprocess.run(
            [sys.executable, "-c", show],
            env={**env, **changes},
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, done.stderr
        return done.stdout.strip()

    assert frequency() == str(HEARTBEAT_FREQUENCY_S)
    assert frequency(PREFECT_FLOWS_HEARTBEAT_FREQUENCY="90") == "90"
    assert frequency(PREFECT_PROFILES_PATH=str(profiles)) == "45"


def test_commands_create_it_on_their_server_and_only_warn_when_they_cannot(api, capsys):
    from prefect.settings import PREFECT_FLOWS_HEARTBEAT_FREQUENCY, temporary_settings

    from libre_flows.flows.cli.common import ensure_crash_detection

    ensure_crash_detection()  # heartbeats off (as in these tests): nothing to watch
    assert _automations() == []
    with temporary_settings({PREFECT_FLOWS_HEARTBEAT_FREQUENCY: HEARTBEAT_FREQUENCY_S}):
        ensure_crash_detection()  # as `libre serve`: on the server this process uses
        assert [found.name for found in _automations()] == [crash_detection.NAME]
        assert "crash detection created" in capsys.readouterr().out

        ensure_crash_detection("http://127.0.0.1:9/api")  # nothing listens there
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("warning: could not create the automation")


def test_task_runs_left_running_in_a_crashed_run_are_marked_crashed(api):
    """The automation ends the killed command's flow run; its task run in flight stayed
    Running for good (13 Completed, 1 Running after the run was marked Crashed)."""
    from prefect.states import Crashed

    with get_client(sync_client=True) as client:
        crashed, other = _run(client, "libre-test-crashed"), _run(client, "calibre-crashed")
        tasks = {}
        for run_id, name, state in (
            (crashed, "left", Running()),
            (crashed, "done", Completed()),
            (other, "foreign", Running()),
        ):
            created = client.create_task_run(
                _task(name), flow_run_id=run_id, dynamic_key=name, state=state
            )
            tasks[name] = created.id
        for run_id in (crashed, other):
            client.set_flow_run_state(run_id, Crashed(message="No heartbeat"), force=True)
        assert crash_detection.settle_task_runs(api) == 1
        states = {name: client.read_task_run(i).state for name, i in tasks.items()}
        assert states["left"].type == StateType.CRASHED
        assert states["left"].message.startswith("Its flow run crashed")
        assert states["done"].type == StateType.COMPLETED  # an end state is kept
        assert states["foreign"].type == StateType.RUNNING  # not a libre flow: left alone
        assert crash_detection.settle_task_runs(api) == 0  # once


def _task(name: str):
    from prefect import task

    return task(name=name)(lambda: None)
