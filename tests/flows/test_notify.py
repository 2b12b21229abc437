"""`libre notify` returns only once the server has stored the event, fails clearly when it
cannot deliver it, and warns when no automation or deployment trigger listens for it."""

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from prefect.client.orchestration import get_client
from prefect.events.filters import EventFilter, EventIDFilter
from prefect.settings import PREFECT_API_URL, temporary_settings
from typer.testing import CliRunner

from libre_flows.flows.cli import app
from libre_flows.flows.deploy import DATASET_UPDATED, build_deployments, notify
from libre_flows.flows.events import DeliveryError, deliver

runner = CliRunner()


def _renamed(spec: Path, name: str) -> Path:
    raw = yaml.safe_load(spec.read_text())
    raw["name"] = name
    spec.write_text(yaml.safe_dump(raw))
    return spec


def _stored(event_id) -> list:
    with get_client(sync_client=True) as client:
        page = client.read_events(EventFilter(id=EventIDFilter(id=[event_id])), limit=1)
    return page.events


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_the_event_is_stored_when_notify_returns(spec_copy):
    spec = _renamed(spec_copy(), "notify-stored")
    event = notify(spec)
    (stored,) = _stored(event.id)  # read at once: no waiting for a background sender
    assert stored.event == DATASET_UPDATED
    assert stored.resource.id == "libre.pipeline.notify-stored"
    assert stored.payload["sha256"] == event.payload["sha256"]


def test_piped_into_head_the_event_is_stored_when_the_command_exits(spec_copy):
    spec = _renamed(spec_copy(), "notify-piped")
    env = {**os.environ, "PREFECT_API_URL": PREFECT_API_URL.value()}
    command = f"{Path(sys.executable).parent / 'libre'} notify {spec} | head -2"
    done = subprocess.run(command, shell=True, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
    event_id = done.stdout.split("(")[-1].split(")")[0]
    (stored,) = _stored(event_id)
    assert stored.resource.id == "libre.pipeline.notify-piped"


def test_without_a_listener_notify_warns_and_with_one_names_it(spec_copy):
    spec = _renamed(spec_copy(), "notify-listeners")
    result = runner.invoke(app, ["notify", str(spec)])
    assert result.exit_code == 0, result.output
    assert "delivered libre.dataset.updated for libre.pipeline.notify-listeners" in result.stdout
    warning = " ".join(result.stderr.split())
    assert "no automation or deployment trigger on the server (http" in warning
    assert "/api) listens for libre.dataset.updated" in warning
    assert "libre serve" in warning and "prefect deploy" in warning

    on_new_data = build_deployments(spec, relative_to=None)[2]
    on_new_data.apply()
    result = runner.invoke(app, ["notify", str(spec)])
    assert result.exit_code == 0, result.output
    assert "no automation" not in result.stderr
    assert "triggers: notify-listeners-dataset-updated" in result.stdout
    waits = " ".join(result.stderr.split())  # nothing serves the deployment: the run waits
    assert "the run waits until a process serves it: notify-listeners-on-new-data" in waits
    assert f"libre serve {spec}" in waits


def test_an_unreachable_server_fails_the_command_with_one_clear_line(spec_copy):
    spec = _renamed(spec_copy(), "notify-unreachable")
    with temporary_settings({PREFECT_API_URL: f"http://127.0.0.1:{_closed_port()}/api"}):
        result = runner.invoke(app, ["notify", str(spec)])
    assert result.exit_code == 1
    assert "delivered" not in result.stdout and "emitted" not in result.stdout
    message = " ".join(result.stderr.split())
    assert "error: event libre.dataset.updated was not delivered to http://127.0.0.1" in message
    assert "PREFECT_API_URL" in message


def test_an_event_the_server_does_not_store_in_time_is_reported(monkeypatch):
    from prefect.events import Event

    from libre_flows.flows import events

    async def never_stored(event, timeout):
        return False

    monkeypatch.setattr(events, "_stored", never_stored)
    event = Event(event=DATASET_UPDATED, resource={"prefect.resource.id": "test.unstored"})
    with pytest.raises(DeliveryError, match="had not stored it after 2 s"):
        deliver(event, stored_timeout=2)


def test_without_a_server_that_outlives_it_notify_fails_instead_of_succeeding(spec_copy, tmp_path):
    """With no server configured, notify sent the event to its own temporary server, which
    stopped with it: nothing could ever run from the event, yet it exited 0 (a nightly cron
    job reported success)."""
    spec = _renamed(spec_copy(), "notify-nowhere")
    env = {k: v for k, v in os.environ.items() if not k.startswith("PREFECT_API")}
    env.update(LIBRE_SERVER="embedded", PREFECT_HOME=str(tmp_path / "prefect"))
    command = [str(Path(sys.executable).parent / "libre"), "notify", str(spec)]
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 1, done.stdout + done.stderr
    message = " ".join(done.stderr.split())
    assert "error: No Prefect server to notify" in message and "libre server start" in message
    assert "delivered" not in done.stdout
