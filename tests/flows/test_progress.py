"""The progress artifact of a mapped stage: followed, but not one server request per task."""

from __future__ import annotations

import pytest
from prefect import flow, task

from libre_flows.tasks import common
from libre_lib.ops.spec import load_spec

from .conftest import SPECS


@task
def _echo(item: int) -> int:
    return item


@pytest.mark.parametrize(("every", "updates"), [(0.0, 5), (3600.0, 1)])
def test_progress_updates_are_throttled_and_the_last_is_always_sent(monkeypatch, every, updates):
    spec = load_spec(SPECS / "haberman.yaml")
    sent = []
    monkeypatch.setattr(common, "PROGRESS_EVERY_S", every)
    import prefect.artifacts

    real = prefect.artifacts.update_progress_artifact

    def update(artifact_id, progress, **kwargs):
        sent.append(progress)
        return real(artifact_id, progress, **kwargs)

    monkeypatch.setattr(prefect.artifacts, "update_progress_artifact", update)

    @flow
    def mapped() -> list:
        found = [None, 7, None, None, None, None]  # one stage already in the store
        return common.map_missing(
            _echo, spec, found, "item", list(range(6)), {}, ("test-progress", "echo")
        )

    assert mapped() == [0, 7, 2, 3, 4, 5]
    assert len(sent) == updates
    assert sent[-1] == pytest.approx(100.0)


def test_mapped_tasks_that_finish_none_for_a_while_say_the_flow_is_waiting(monkeypatch):
    """Every Dask worker killed: the run stood at "tuning tasks finished: 0 of 10" for over
    100 s without a line; the flow now says it is waiting, and on what."""
    import logging
    import time

    from libre_lib import progress

    monkeypatch.setattr(progress, "HEARTBEAT_SECONDS", 0.1)
    spec = load_spec(SPECS / "haberman.yaml")
    said = []

    class Keep(logging.Handler):
        def emit(self, record):
            said.append(record.getMessage())

    @task(name="slow_probe")
    def slow(item):
        time.sleep(0.5)
        return item

    @flow(name="libre-waiting-probe")
    def probe():
        return common.map_missing(slow, spec, [None, None], "item", [1, 2], {}, ("probe", "p"))

    keep = Keep()
    logging.getLogger("prefect").addHandler(keep)
    try:
        assert probe() == [1, 2]
    finally:
        logging.getLogger("prefect").removeHandler(keep)
    waiting = [line for line in said if line.startswith("waiting: ")]
    assert waiting and waiting[0].startswith("waiting: 0 of 2 slow_probe tasks finished, the next")
    assert "Dask" not in waiting[0]  # the thread runner: no scheduler to blame
