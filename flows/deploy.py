"""Production deployments of the training flow, built from pipeline specs.

For every spec: ``<name>-nightly`` (the spec's cron schedule and timezone), ``<name>-on-demand``
(no schedule) and ``<name>-on-new-data`` (runs when a ``libre.dataset.updated`` event names the
pipeline). ``deployments/prefect.yaml`` declares the same deployments for ``prefect deploy``.
"""

from __future__ import annotations

from pathlib import Path

from prefect.events import DeploymentEventTrigger, emit_event
from prefect.schedules import Cron

from libre_lib.ops.sources import fingerprint_source
from libre_lib.ops.spec import PipelineSpec, load_spec

from .train import train_flow

DATASET_UPDATED = "libre.dataset.updated"
REPO_ROOT = Path(__file__).resolve().parents[1]


def pipeline_resource(spec: PipelineSpec) -> str:
    """The event resource id that names a pipeline."""
    return f"libre.pipeline.{spec.name}"


def spec_parameter(spec_path: str | Path, relative: bool = True) -> str:
    """The spec path as a deployment parameter. Deployments run from the repo root (see
    ``prefect.yaml``), so paths inside the repo are made relative to it; ``serve`` runs in
    this process and passes absolute paths."""
    path = Path(spec_path).resolve()
    if relative:
        try:
            return str(path.relative_to(REPO_ROOT))
        except ValueError:
            pass
    return str(path)


def build_deployments(spec_path: str | Path, relative: bool = True) -> list:
    """The nightly, on-demand and event-triggered deployments of one spec."""
    spec = load_spec(spec_path)
    parameters = {"spec_path": spec_parameter(spec_path, relative), "force": False}
    tags = ["libre", spec.name]
    schedule = Cron(
        spec.schedule.cron, timezone=spec.schedule.timezone, active=spec.schedule.active
    )
    trigger = DeploymentEventTrigger(
        name=f"{spec.name}-dataset-updated",
        expect={DATASET_UPDATED},
        match={"prefect.resource.id": pipeline_resource(spec)},
        parameters=parameters,
    )
    return [
        train_flow.to_deployment(
            name=f"{spec.name}-nightly", schedules=[schedule], parameters=parameters, tags=tags
        ),
        train_flow.to_deployment(name=f"{spec.name}-on-demand", parameters=parameters, tags=tags),
        train_flow.to_deployment(
            name=f"{spec.name}-on-new-data", triggers=[trigger], parameters=parameters, tags=tags
        ),
    ]


def notify(spec_path: str | Path):
    """Emit the "dataset updated" event for a spec's pipeline (its data file has changed)."""
    spec = load_spec(spec_path)
    location = spec.data_location()
    return emit_event(
        event=DATASET_UPDATED,
        resource={"prefect.resource.id": pipeline_resource(spec), "libre.pipeline": spec.name},
        payload={"data": location, "sha256": fingerprint_source(location)},
    )


def serve(*spec_paths: str | Path, limit: int | None = None) -> None:
    """Run the deployments of these specs in this process (schedules and triggers active)."""
    from prefect import serve as prefect_serve

    deployments = [d for path in spec_paths for d in build_deployments(path, relative=False)]
    prefect_serve(*deployments, limit=limit)
