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


def test_a_deployment_run_uses_the_specs_dask_runner(spec_copy, monkeypatch):
    """Only ``train()`` applied the spec's runner: a deployment runs the flow its entrypoint
    names, which ran every task on the flow's hard-coded thread pool, so ``runner: dask`` was
    ignored by ``prefect.yaml`` and ``libre serve``. The learners must run on the cluster's
    workers when the entrypoint's flow is called as a deployment calls it."""
    from distributed import LocalCluster, get_worker
    from prefect.flows import load_flow_from_entrypoint

    from libre_lib.ops import stages

    workers = []
    learn = stages.learn

    def probe(*args, **kwargs):
        try:
            workers.append(get_worker().address)
        except ValueError:
            workers.append(None)
        return learn(*args, **kwargs)

    monkeypatch.setattr(stages, "learn", probe)
    with LocalCluster(
        n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None
    ) as cluster:
        spec = spec_copy(runner={"kind": "dask", "address": cluster.scheduler_address})
        flow = load_flow_from_entrypoint("libre_flows.flows.train.train_flow")
        summary = flow(str(spec))
        addresses = set(cluster.workers[name].address for name in cluster.workers)
    assert summary["cache_hits"] == 0 and workers
    assert set(workers) <= addresses, workers


def test_the_tuning_tasks_run_on_dask_and_pick_what_the_threads_pick(spec_copy, tmp_path):
    grid = {"alpha": [0.5, 0.9], "max_rules": [1, 3, None], "max_intervals": [3, None]}
    tuning = {"enabled": True, "grid": grid, "folds": 3}
    threads = train(spec_copy(tuning=tuning))
    dask = train(
        spec_copy(
            tuning=tuning,
            runner={"kind": "dask", "n_workers": 2},
            store=str(tmp_path / "dask-store"),
        )
    )
    assert dask["cache_hits"] == 0
    tune = [s for s in dask["stages"] if s["stage"] == "tune"]
    assert len(tune) == 3 * 2  # folds x ChiMerge caps
    rules = [json.loads(Path(s["model"]).read_text())["rules"] for s in (threads, dask)]
    assert rules[0] == rules[1]
