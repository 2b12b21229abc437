"""Production deployments of the training flow, built from pipeline specs.

For every spec: ``<name>-nightly`` (the spec's cron schedule and timezone), ``<name>-on-demand``
(no schedule) and ``<name>-on-new-data`` (runs when a ``libre.dataset.updated`` event names the
pipeline). ``deployments/prefect.yaml`` declares the same deployments for ``prefect deploy``
(written from the specs by :mod:`.prefect_yaml`).

The entrypoint is the flow's module path (``libre_flows.flows.train.train_flow``), so a worker or
``serve`` imports it from the installed package: it resolves from any working directory, a
checkout is not needed, and a project's own ``flows`` package is never shadowed.
"""

from __future__ import annotations

from pathlib import Path

from prefect.events import DeploymentEventTrigger, Event
from prefect.schedules import Cron
from prefect.types.entrypoint import EntrypointType

from libre_lib.errors import LibreError, SpecError, counted
from libre_lib.ops.sources import fingerprint_source
from libre_lib.ops.spec import PipelineSpec, load_spec

from .embedded_server import guard_embedded_server, uses_embedded_server
from .events import SERVED_WITHIN_S, deliver, deployment_names, seconds_since
from .train import train_flow

DATASET_UPDATED = "libre.dataset.updated"


def pipeline_resource(spec: PipelineSpec) -> str:
    """The event resource id that names a pipeline."""
    return f"libre.pipeline.{spec.name}"


def spec_parameter(spec_path: str | Path, relative_to: str | Path | None = ".") -> str:
    """The spec path as a deployment parameter: relative to ``relative_to`` (the project
    directory the deployments run from, which ``prefect.yaml``'s pull step makes the working
    directory) when the spec lies inside it, else absolute; ``None`` keeps it absolute
    (``serve`` runs the flows from this process)."""
    path = Path(spec_path).resolve()
    if relative_to is not None:
        try:
            return str(path.relative_to(Path(relative_to).resolve()))
        except ValueError:
            pass
    return str(path)


def build_deployments(spec_path: str | Path, relative_to: str | Path | None = ".") -> list:
    """The nightly, on-demand and event-triggered deployments of one spec (spec path made
    relative to ``relative_to`` as in :func:`spec_parameter`)."""
    spec = load_spec(spec_path)
    parameters = {"spec_path": spec_parameter(spec_path, relative_to), "force": False}
    tags = ["libre", spec.name]
    schedule = Cron(
        spec.schedule.cron, timezone=spec.schedule.timezone, active=spec.schedule.active
    )
    trigger = DeploymentEventTrigger(
        name=f"{spec.name}-dataset-updated",
        expect={DATASET_UPDATED},
        match={"prefect.resource.id": pipeline_resource(spec)},
        # the run compares the data it reads with those the event announced
        parameters={**parameters, "expected_sha256": "{{ event.payload.sha256 }}"},
    )
    common = {"parameters": parameters, "tags": tags, "entrypoint_type": EntrypointType.MODULE_PATH}
    nightly, on_demand, on_new_data = deployment_names(spec.name)
    return [
        train_flow.to_deployment(name=nightly, schedules=[schedule], **common),
        train_flow.to_deployment(name=on_demand, **common),
        train_flow.to_deployment(name=on_new_data, triggers=[trigger], **common),
    ]


def notify(spec_path: str | Path) -> Event:
    """Send the "dataset updated" event for a spec's pipeline (its data file has changed) and
    return it once the server has stored it; :class:`~.events.DeliveryError` if it did not."""
    spec = load_spec(spec_path)
    location = spec.data_location()
    event = Event(
        event=DATASET_UPDATED,
        resource={"prefect.resource.id": pipeline_resource(spec), "libre.pipeline": spec.name},
        payload={
            "data": location,
            "sha256": fingerprint_source(location, spec.data.resolved_format()),
        },
    )
    guard_embedded_server()
    if uses_embedded_server():
        raise NoServerError(
            "No Prefect server to notify: an event sent to this command's temporary server "
            "would end with it, and no deployment could ever run from it. Start one with "
            "`libre server start` (then `libre serve SPEC` so a deployment listens), or set "
            "PREFECT_API_URL to your server."
        )
    return deliver(event)


class NoServerError(LibreError):
    """``libre notify`` found no Prefect server that outlives the command."""


def serve(*spec_paths: str | Path, limit: int | None = None) -> None:
    """Run the deployments of these specs in this process (schedules and triggers active).

    Served deployments carry the declared names (``libre-train/<name>-nightly``, ...): one
    machine either serves them or has a worker run them. A deployment of the same name that runs
    on a work pool (``prefect deploy``) is never replaced: :class:`DeploymentConflict`."""
    from prefect import serve as prefect_serve

    one_spec_per_pipeline(spec_paths)
    deployments = [d for path in spec_paths for d in build_deployments(path, relative_to=None)]
    guard_embedded_server()
    refuse_declared(deployments)
    prefect_serve(*deployments, limit=limit)


def one_spec_per_pipeline(spec_paths) -> None:
    """:class:`~libre_lib.errors.SpecError` if two of the specs name the same pipeline: their
    deployments would share names, and the last one would silently run the other's."""
    seen: dict[str, str] = {}
    for path in spec_paths:
        pipeline = load_spec(path).name
        if pipeline in seen:
            raise SpecError(
                f"Two specs name the pipeline {pipeline!r} ({seen[pipeline]!r} and "
                f"{str(path)!r}); their deployments would share names: give each spec its own "
                "name."
            )
        seen[pipeline] = str(path)


class DeploymentConflict(LibreError):
    """``libre serve`` would replace a deployment that a worker or another serve runs."""


def refuse_declared(deployments: list) -> None:
    """Raise :class:`DeploymentConflict` if one of ``deployments`` exists on the server with a
    work pool, or is served by another live process.

    Serving a deployment upserts it: a deployment from ``prefect deploy`` would lose its work
    pool and pull step, get this process's absolute spec path and be paused when serving stops.
    Deployments ``serve`` made itself have no work pool and are replaced as before.

    Parameters
    ----------
    deployments : list of RunnerDeployment
        The deployments about to be served.
    """
    from prefect.client.orchestration import get_client
    from prefect.exceptions import ObjectNotFound

    with get_client(sync_client=True) as client:
        existing_ones = {}
        for deployment in deployments:
            name = f"{deployment.flow_name}/{deployment.name}"
            try:
                existing_ones[name] = client.read_deployment_by_name(name)
            except ObjectNotFound:
                continue
        pooled = {n: d.work_pool_name for n, d in existing_ones.items() if d.work_pool_name}
        if pooled:  # every one of them, so that deleting the named ones is enough
            names = ", ".join(f"{n!r} (work pool {pool!r})" for n, pool in pooled.items())
            deletes = "; ".join(f"prefect deployment delete {n!r}" for n in pooled)
            raise DeploymentConflict(
                f"{counted(len(pooled), 'deployment')} of this pipeline exist on a work pool "
                f"(from prefect deploy): {names}; libre serve will not replace them: run them "
                f"with a worker, or delete them first ({deletes}) to serve instead."
            )
        for name, existing in existing_ones.items():
            polled = seconds_since(existing.last_polled)
            if not existing.paused and polled is not None and polled < SERVED_WITHIN_S:
                raise DeploymentConflict(
                    f"Deployment {name!r} is served by another process (it asked the server "
                    f"for runs {polled:.0f} s ago): a second libre serve would pause it when it "
                    "stops, and the other's schedule with it. Stop the other libre serve first "
                    f"(if it was killed, serve again after {SERVED_WITHIN_S:.0f} s)."
                )
