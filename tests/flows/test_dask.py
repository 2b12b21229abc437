"""`runner: dask` runs the mapped learners on a 2-worker local Dask cluster and gives the same
rules as the default thread runner (subsets are fixed up front from the seed)."""

import json
from pathlib import Path

import pytest

pytest.importorskip("prefect_dask")

from libre_flows.flows.train import train


def test_dask_runner_gives_the_thread_runners_rules(spec_copy, tmp_path):
    threads = train(spec_copy())
    dask = train(
        spec_copy(runner={"kind": "dask", "n_workers": 2}, store=str(tmp_path / "dask-store"))
    )
    assert dask["cache_hits"] == 0  # its own store: everything was computed on the cluster
    rules = [json.loads(Path(s["model"]).read_text())["rules"] for s in (threads, dask)]
    assert rules[0] == rules[1]
