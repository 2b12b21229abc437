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
