"""The declarative training pipeline as a Prefect flow.

validation → discretization → mapped weak learners → union + filter → set cover → report,
every stage cached as a Parquet artifact (see ``libre_lib.ops.artifacts``)::

    from libre_flows.flows.train import train
    summary = train("deployments/specs/pima.yaml")
"""

from __future__ import annotations

import json
import os
import time
import uuid
from datetime import UTC, datetime
from pathlib import Path

from prefect import flow, unmapped
from prefect.artifacts import create_progress_artifact, update_progress_artifact
from prefect.context import get_run_context
from prefect.task_runners import ThreadPoolTaskRunner

from libre_flows.tasks.common import Stage, log, lookup_stage
from libre_flows.tasks.data import load_data, split_data, validate_data
from libre_flows.tasks.learning import (
    discretize,
    encode,
    feature_subsets,
    learn,
    learner_params,
    select,
    union_filter,
)
from libre_flows.tasks.report import artifact_key, report
from libre_lib.errors import DataError, SpecError
from libre_lib.ops.artifacts import atomic_write_text
from libre_lib.ops.spec import PipelineSpec, load_spec


def _run_dir(root: str, spec: PipelineSpec) -> Path:
    try:
        run_id = str(get_run_context().flow_run.id)[:8]
    except Exception:  # pragma: no cover - outside a flow run
        run_id = uuid.uuid4().hex[:8]
    stamp = datetime.now(UTC).strftime("%Y%m%d-%H%M%S")
    return Path(root) / "runs" / spec.name / f"{stamp}-{run_id}"


def _learn_all(spec, root, records, bins, subsets, force) -> list[Stage]:
    """Map one task per learner whose output is not in the store yet (cached learners are not
    resubmitted); a progress artifact follows them."""
    learners: list[Stage | None] = [
        None if force else lookup_stage(root, "learner", learner_params(spec, s), [records, bins])
        for s in subsets
    ]
    todo = [i for i, stage in enumerate(learners) if stage is None]
    done = len(subsets) - len(todo)
    if done:
        log().info("stage learner    cache hit  %d of %d learners", done, len(subsets))
    progress = create_progress_artifact(
        100.0 * done / max(len(subsets), 1),
        key=artifact_key(spec, "progress"),
        description="weak learners finished",
    )
    futures = learn.map(
        unmapped(spec),
        unmapped(root),
        unmapped(records),
        unmapped(bins),
        [subsets[i] for i in todo],
        unmapped(force),
    )
    for i, future in zip(todo, futures, strict=True):
        learners[i] = future.result()
        done += 1
        update_progress_artifact(progress, 100.0 * done / max(len(subsets), 1))
    return learners


@flow(name="libre-train", task_runner=ThreadPoolTaskRunner(max_workers=os.cpu_count() or 2))
def train_flow(spec_path: str, force: bool = False, store: str | None = None) -> dict:
    """Train the rule set a spec file declares; returns a summary (run folder, metrics, hits)."""
    started = time.perf_counter()
    spec = load_spec(spec_path)
    root = str(Path(store or spec.store).resolve())
    if spec.runner.kind == "dask":
        _share_api_with_workers()
    data = load_data(spec, root, force)
    validation = validate_data(spec, root, data, force)
    split = split_data(spec, root, data, force)
    bins = discretize(spec, root, data, split, force)
    records = encode(spec, root, data, split, bins, force)
    subsets = feature_subsets(spec, root, bins)
    learners = _learn_all(spec, root, records, bins, subsets, force)
    candidates = union_filter(spec, root, learners, records, bins, force)
    selection = select(spec, root, candidates, records, bins, data, split, subsets, force)
    run_dir = _run_dir(root, spec)
    outcome = report(spec, root, selection, data, split, validation, str(run_dir), force)
    stages = [data, validation, split, bins, records, *learners, candidates, selection]
    summary = {
        "pipeline": spec.name,
        "run_dir": str(run_dir),
        "report": str(run_dir / "report.html"),
        "model": str(run_dir / "model.json"),
        "metrics": outcome["metrics"],
        "model_version": outcome["version"],
        "promoted": outcome["promoted"],
        "promotion": outcome["promotion"],
        "stages": [
            {"stage": s.name, "key": s.key, "path": s.ref.path, "cache_hit": s.hit} for s in stages
        ],
        "cache_hits": sum(s.hit for s in stages),
        "n_stages": len(stages),
        "seconds": round(time.perf_counter() - started, 3),
    }
    atomic_write_text(run_dir / "run.json", json.dumps(summary, indent=2))
    log().info(
        "%d of %d stages were cache hits; report: %s",
        summary["cache_hits"],
        summary["n_stages"],
        summary["report"],
    )
    return summary


def preflight(spec_path: str | os.PathLike) -> PipelineSpec:
    """Check the spec and that a local data file exists before Prefect starts (fast errors)."""
    spec = load_spec(spec_path)
    location = spec.data_location()
    if not spec.data.is_url() and not Path(location).is_file():
        raise DataError(
            f"Data file {location!r} does not exist (data.path in {str(spec_path)!r}; relative "
            "paths are relative to the spec file)."
        )
    return spec


def task_runner(spec: PipelineSpec):
    """The task runner the spec asks for: threads by default (numpy learners scale on them),
    or Dask through prefect-dask (a local cluster, or an existing scheduler by address)."""
    runner = spec.runner
    if runner.kind == "thread":
        return ThreadPoolTaskRunner(max_workers=runner.max_workers or os.cpu_count() or 2)
    try:
        from prefect_dask import DaskTaskRunner
    except ImportError:
        raise SpecError(
            "runner.kind 'dask' needs prefect-dask: pip install 'libre-flows[dask]'."
        ) from None
    if runner.address:
        return DaskTaskRunner(address=runner.address)
    return DaskTaskRunner(
        cluster_kwargs={
            "n_workers": runner.n_workers,
            "threads_per_worker": runner.max_workers or 1,
            "processes": True,
            "dashboard_address": None,
        }
    )


def _share_api_with_workers() -> None:
    """Dask workers are other processes: without PREFECT_API_URL each would start its own
    temporary Prefect server. Point them at this run's server before the cluster starts."""
    if os.environ.get("PREFECT_API_URL"):
        return
    from prefect.client.orchestration import get_client

    with get_client(sync_client=True) as client:
        os.environ["PREFECT_API_URL"] = str(client.api_url).rstrip("/")


def train(spec_path: str | os.PathLike, force: bool = False, store: str | None = None) -> dict:
    """Run the training flow for a spec file (Prefect's default embedded setup if no server)."""
    spec = preflight(spec_path)
    flow_run = train_flow.with_options(task_runner=task_runner(spec))
    return flow_run(str(spec_path), force=force, store=store)
