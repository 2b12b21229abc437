"""Production deployments: prefect.yaml matches the Python definitions, definitions read back
from the server, and a "dataset updated" event starts the triggered deployment."""

import time
from pathlib import Path

import pytest
import yaml
from prefect.client.orchestration import get_client
from prefect.client.schemas.filters import DeploymentFilter, DeploymentFilterId

from libre_flows.flows.deploy import DATASET_UPDATED, build_deployments, notify

ROOT = Path(__file__).resolve().parents[2]
PREFECT_YAML = ROOT / "deployments" / "prefect.yaml"


def _yaml_deployments():
    return {d["name"]: d for d in yaml.safe_load(PREFECT_YAML.read_text())["deployments"]}


@pytest.mark.parametrize("spec", ["pima", "credit-approval"])
def test_prefect_yaml_matches_the_python_definitions(spec):
    declared = _yaml_deployments()
    for built in build_deployments(ROOT / "deployments" / "specs" / f"{spec}.yaml"):
        entry = declared[built.name]
        assert entry["entrypoint"] == built.entrypoint == "flows/train.py:train_flow"
        assert entry["parameters"] == built.parameters
        assert (ROOT / entry["parameters"]["spec_path"]).is_file()
        schedules = [
            {"cron": s.schedule.cron, "timezone": s.schedule.timezone, "active": s.active}
            for s in built.schedules
        ]
        assert entry.get("schedules", []) == schedules
        triggers = [
            {
                "type": "event",
                "enabled": True,
                "expect": sorted(t.expect),
                "match": t.match.model_dump(),
                "parameters": t.parameters,
            }
            for t in built.triggers
        ]
        assert entry.get("triggers", []) == triggers


def test_deployments_read_back_and_the_event_starts_a_run(spec_copy):
    spec = spec_copy(schedule={"cron": "15 4 * * 1", "timezone": "Europe/Paris"})
    nightly, on_demand, on_new_data = build_deployments(spec, relative=False)
    ids = {d.name: d.apply() for d in (nightly, on_demand, on_new_data)}
    with get_client(sync_client=True) as client:
        stored = client.read_deployment(ids["haberman-nightly"])
        assert stored.parameters == {"spec_path": str(spec.resolve()), "force": False}
        assert stored.schedules[0].schedule.cron == "15 4 * * 1"
        assert stored.schedules[0].schedule.timezone == "Europe/Paris"
        assert client.read_deployment(ids["haberman-on-demand"]).schedules == []
        automations = client.read_resource_related_automations(
            f"prefect.deployment.{ids['haberman-on-new-data']}"
        )
        assert [a.trigger.expect for a in automations] == [{DATASET_UPDATED}]

        notify(spec)
        run_filter = DeploymentFilter(id=DeploymentFilterId(any_=[ids["haberman-on-new-data"]]))
        runs = []
        for _ in range(60):
            runs = client.read_flow_runs(deployment_filter=run_filter)
            if runs:
                break
            time.sleep(0.5)
        assert runs, "the dataset-updated event did not create a flow run"
        assert runs[0].parameters["spec_path"] == str(spec.resolve())
