"""Flow-run heartbeats that stop with the run (``libre_flows.flows.heartbeats``)."""

from __future__ import annotations

import threading
from types import SimpleNamespace

from prefect import flow_engine

from libre_flows.flows import heartbeats


def test_installed_with_the_pinned_prefect_once_a_flow_module_is_imported():
    import libre_flows.flows.score  # noqa: F401  (installs it)

    assert flow_engine._send_heartbeats is heartbeats.prompt_heartbeats
    assert heartbeats.install() is True  # idempotent


class _Engine:
    """What the context manager uses of Prefect's flow engine."""

    def __init__(self, seconds):
        self.heartbeat_seconds = seconds
        self.flow_run = SimpleNamespace(state=SimpleNamespace(is_final=lambda: False))
        self.logger = SimpleNamespace(debug=lambda *a, **k: None)
        self.sent = []
        self.first = threading.Event()

    def _build_heartbeat_event_template(self):
        return {"prefect.resource.id": "prefect.flow-run.x"}, ["related"]

    def _emit_flow_run_heartbeat(self, resource, related):
        self.sent.append((resource, related))
        self.first.set()


def test_sends_the_engine_heartbeat_at_once_and_stops_with_the_block():
    engine = _Engine(seconds=3600)
    before = {t.name for t in threading.enumerate()}
    with heartbeats.prompt_heartbeats(engine):
        assert engine.first.wait(10)
        assert "libre-heartbeats" in {t.name for t in threading.enumerate()}
    # joined on exit although its next heartbeat is an hour away
    assert "libre-heartbeats" not in {t.name for t in threading.enumerate()} - before
    assert engine.sent == [({"prefect.resource.id": "prefect.flow-run.x"}, ["related"])]


def test_no_heartbeats_when_they_are_off_or_the_run_has_ended():
    off = _Engine(seconds=None)
    with heartbeats.prompt_heartbeats(off):
        pass
    assert off.sent == []
    ended = _Engine(seconds=3600)
    ended.flow_run.state = SimpleNamespace(is_final=lambda: True)
    with heartbeats.prompt_heartbeats(ended):
        pass
    assert ended.sent == []


def test_another_prefect_keeps_its_own_heartbeats(monkeypatch):
    def other(engine, join_on_exit=True, interval=None):  # a changed signature
        yield

    monkeypatch.setattr(flow_engine, "_send_heartbeats", other)
    assert heartbeats.install() is False
    assert flow_engine._send_heartbeats is other
