"""Production deployments: prefect.yaml matches the Python definitions and `prefect deploy`
accepts it, definitions read back from the server, and a "dataset updated" event starts the
triggered deployment. Entrypoints are module paths that resolve from the installed package
(tests/flows/test_install.py proves it outside the checkout)."""

import asyncio
import contextlib
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml
from prefect import flow
from prefect.client.orchestration import get_client
from prefect.client.schemas.actions import WorkPoolCreate, WorkPoolUpdate
from prefect.client.schemas.filters import DeploymentFilter, DeploymentFilterId
from prefect.deployments.steps.core import StepExecutionError, run_steps
from prefect.exceptions import ObjectAlreadyExists, ObjectNotFound
from prefect.flows import load_flow_from_entrypoint
from prefect.settings import PREFECT_API_URL

from libre_flows.flows.deploy import (
    DATASET_UPDATED,
    DeploymentConflict,
    build_deployments,
    notify,
    serve,
)
from libre_flows.flows.events import TRAIN_FLOW, idle_deployments, paused_on_pools, triggered
from libre_flows.flows.prefect_yaml import declarations, render
from libre_flows.flows.steps import ProjectFolderError
from libre_flows.flows.train import train_flow
from libre_lib.errors import SpecError

ROOT = Path(__file__).resolve().parents[2]
PREFECT_YAML = ROOT / "deployments" / "prefect.yaml"
SPECS = sorted((ROOT / "deployments" / "specs").glob("*.yaml"))
ENTRYPOINT = "libre_flows.flows.train.train_flow"


def _yaml_deployments():
    return {d["name"]: d for d in yaml.safe_load(PREFECT_YAML.read_text())["deployments"]}


@pytest.mark.parametrize("spec", SPECS, ids=lambda path: path.stem)
def test_prefect_yaml_matches_the_python_definitions(spec):
    """Every bundled spec has its three deployments in prefect.yaml (it used to cover two of
    the four), as `libre serve` builds them."""
    declared = _yaml_deployments()
    for built in build_deployments(spec, ROOT):
        entry = declared[built.name]
        assert entry["entrypoint"] == built.entrypoint == ENTRYPOINT
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


def test_prefect_yaml_is_what_libre_deployments_write_writes():
    """prefect.yaml was written by hand and drifted from the specs; it is generated now, and
    the committed file must equal the generator's output (regenerate: the command it names)."""
    relative = [spec.relative_to(ROOT) for spec in SPECS]
    assert len(SPECS) == 4 and len(_yaml_deployments()) == 3 * len(SPECS)
    assert render(relative, ROOT, output="deployments/prefect.yaml") == PREFECT_YAML.read_text(), (
        "deployments/prefect.yaml is out of date: run "
        "libre deployments write deployments/specs/*.yaml -o deployments/prefect.yaml"
    )


def test_libre_deployments_write_writes_the_file(tmp_path, monkeypatch):
    from typer.testing import CliRunner

    from libre_flows.flows.cli import app

    monkeypatch.chdir(ROOT)
    output = tmp_path / "prefect.yaml"
    specs = [str(spec.relative_to(ROOT)) for spec in reversed(SPECS)]
    result = CliRunner().invoke(app, ["deployments", "write", *specs, "-o", str(output)])
    assert result.exit_code == 0, result.output
    assert f"wrote {output}: 12 deployments" in " ".join(result.output.split())
    assert output.read_text() == render(sorted(specs), ".", output=str(output))
    assert yaml.safe_load(output.read_text())["deployments"] == declarations(SPECS, ROOT)


def test_libre_deployments_write_keeps_a_prefect_yaml_it_did_not_write(tmp_path, monkeypatch):
    """The project's own prefect.yaml (another deployment in it) was replaced without a word."""
    from typer.testing import CliRunner

    from libre_flows.flows.cli import app

    monkeypatch.chdir(ROOT)
    output = tmp_path / "prefect.yaml"
    own = "name: my-project\ndeployments:\n  - name: my-etl\n    entrypoint: etl.py:main\n"
    output.write_text(own)
    specs = [str(spec.relative_to(ROOT)) for spec in SPECS]
    command = ["deployments", "write", *specs, "-o", str(output)]
    refused = CliRunner().invoke(app, command)
    assert refused.exit_code == 1 and output.read_text() == own
    said = " ".join(refused.output.split())
    assert "was not written by libre deployments write" in said and "--force" in said
    assert CliRunner().invoke(app, [*command, "--force"]).exit_code == 0
    assert output.read_text().startswith("# Production deployments of the libre-flows")
    assert CliRunner().invoke(app, command).exit_code == 0  # its own file: written again


def test_libre_deployments_write_keeps_the_deployments_of_specs_not_given(tmp_path, monkeypatch):
    """Writing one new pipeline's spec over the file deleted every other pipeline's deployments
    (as the advice of `libre notify` led an operator to do)."""
    from typer.testing import CliRunner

    from libre_flows.flows.cli import app

    monkeypatch.chdir(ROOT)
    output = tmp_path / "prefect.yaml"
    specs = [str(spec.relative_to(ROOT)) for spec in SPECS]
    assert (
        CliRunner().invoke(app, ["deployments", "write", *specs, "-o", str(output)]).exit_code == 0
    )
    everything = output.read_text()
    one = ["deployments", "write", specs[0], "-o", str(output)]
    refused = CliRunner().invoke(app, one)
    assert refused.exit_code == 1 and output.read_text() == everything
    said = " ".join(refused.output.split())
    assert "holds deployments of other specs, which writing it would drop" in said
    assert specs[1] in said and "--force" in said
    assert CliRunner().invoke(app, [*one, "--force"]).exit_code == 0
    assert output.read_text().count("  - name: ") == 3  # one pipeline's three deployments
    assert CliRunner().invoke(app, one).exit_code == 0  # nothing dropped now: written again


def test_libre_deployments_write_says_a_given_spec_s_pipeline_was_renamed(spec_copy, tmp_path):
    """A spec whose name changed was told to "pass those specs too", naming itself."""
    from typer.testing import CliRunner

    from libre_flows.flows.cli import app

    spec, output = spec_copy(), tmp_path / "prefect.yaml"
    command = ["deployments", "write", str(spec), "-o", str(output), "--project", str(tmp_path)]
    assert CliRunner().invoke(app, command).exit_code == 0
    _renamed(spec, "haberman-renamed")
    refused = CliRunner().invoke(app, command)
    said = " ".join(refused.output.split())
    assert refused.exit_code == 1 and "the specs' name changed" in said and "--force" in said
    assert CliRunner().invoke(app, [*command, "--force"]).exit_code == 0


def test_two_specs_of_one_pipeline_are_refused(spec_copy):
    with pytest.raises(SpecError, match=r"Two specs name the pipeline 'haberman'"):
        declarations([spec_copy(), spec_copy()])


def test_the_entrypoint_is_a_module_path_that_resolves_anywhere(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert load_flow_from_entrypoint(ENTRYPOINT) is train_flow


def _work_pool():
    with get_client(sync_client=True) as client, contextlib.suppress(ObjectAlreadyExists):
        client.create_work_pool(WorkPoolCreate(name="libre-process", type="process"))


def _renamed(spec: Path, name: str) -> Path:
    raw = yaml.safe_load(spec.read_text())
    spec.write_text(yaml.safe_dump({**raw, "name": name}))
    return spec


@pytest.fixture
def fake_serve(monkeypatch):
    """Prefect's serve replaced by a recorder (the real one blocks until interrupted)."""
    import prefect

    served = []
    monkeypatch.setattr(prefect, "serve", lambda *deployments, **_: served.extend(deployments))
    return served


def test_serve_refuses_to_replace_a_deployment_a_worker_runs(spec_copy, fake_serve):
    """`libre serve` used to upsert the deployments `prefect deploy` had made under the same
    names: 25 s of serving left them without work pool and pull step, with this process's
    absolute spec path, and paused, so the nightly run stopped and the next worker run crashed."""
    _work_pool()
    spec = _renamed(spec_copy(), "worker-owned")
    nightly, on_demand, *_ = build_deployments(spec)
    nightly.apply(work_pool_name="libre-process")  # as `prefect deploy` registers them
    on_demand.apply(work_pool_name="libre-process")

    with pytest.raises(DeploymentConflict) as refused:
        serve(spec)
    message = str(refused.value)
    assert "\n" not in message
    assert "2 deployments of this pipeline exist on a work pool" in message
    # every one is named: deleting the first alone left the next to refuse again
    for name in (nightly.name, on_demand.name):
        assert f"'libre-train/{name}' (work pool 'libre-process')" in message
        assert f"prefect deployment delete 'libre-train/{name}'" in message
    assert fake_serve == []
    with get_client(sync_client=True) as client:
        stored = client.read_deployment_by_name("libre-train/worker-owned-nightly")
    assert stored.work_pool_name == "libre-process" and not stored.paused
    assert stored.parameters == nightly.parameters


def test_serve_replaces_deployments_it_served_before(spec_copy, fake_serve):
    spec = _renamed(spec_copy(), "served-before")
    for deployment in build_deployments(spec, relative_to=None):
        deployment.apply()  # as an earlier `libre serve` registered them (no work pool)
    serve(spec)
    assert [d.name for d in fake_serve] == [
        "served-before-nightly",
        "served-before-on-demand",
        "served-before-on-new-data",
    ]


def test_serve_refuses_two_specs_of_one_pipeline(spec_copy, fake_serve):
    """`libre serve a.yaml b.yaml` of one pipeline name served both; the last one's spec path
    owned the deployments, so a's nightly run trained b's data."""
    first, second = spec_copy(), spec_copy()
    with pytest.raises(SpecError, match=r"Two specs name the pipeline 'haberman'") as refused:
        serve(first, second)
    assert str(first) in str(refused.value) and str(second) in str(refused.value)
    assert fake_serve == []


def test_serve_refuses_deployments_another_serve_is_serving(spec_copy, fake_serve):
    """A second `libre serve` of the same spec started silently, and when it stopped it paused
    the deployments: the first one's nightly run never fired again."""
    spec = _renamed(spec_copy(), "served-elsewhere")
    ids = [d.apply() for d in build_deployments(spec, relative_to=None)]
    with get_client(sync_client=True) as client:
        client.get_scheduled_flow_runs_for_deployments(ids)  # what a serving runner asks
        deadline = time.monotonic() + 30  # the server records the polls in the background
        while time.monotonic() < deadline:
            if all(client.read_deployment(i).last_polled for i in ids):
                break
            time.sleep(0.2)
    with pytest.raises(DeploymentConflict) as refused:
        serve(spec)
    message = str(refused.value)
    assert "'libre-train/served-elsewhere-nightly' is served by another process" in message
    assert "Stop the other libre serve first" in message
    assert fake_serve == []
    with get_client(sync_client=True) as client:
        assert not client.read_deployment(ids[0]).paused
        for deployment_id in ids:  # the other serve stopped: it paused them
            client.pause_deployment(deployment_id)
    serve(spec)
    assert len(fake_serve) == 3


def _prefect_deploy(prefect_file: Path, cwd: Path, home: Path | None):
    """`prefect deploy --all` in a subprocess, LIBRE_FLOWS_HOME set to ``home`` or unset."""
    _work_pool()
    env = {
        **{k: v for k, v in os.environ.items() if k != "LIBRE_FLOWS_HOME"},
        "PREFECT_API_URL": PREFECT_API_URL.value(),
        "PREFECT_HOME": str(cwd / "prefect-home"),
    }
    if home is not None:
        env["LIBRE_FLOWS_HOME"] = str(home)
    command = [sys.executable, "-m", "prefect", "--no-prompt", "deploy"]
    return subprocess.run(
        [*command, "--prefect-file", str(prefect_file), "--all"],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
    )


def test_prefect_deploy_accepts_prefect_yaml(tmp_path):
    """`prefect deploy` (run elsewhere than the repository) loads every module-path entrypoint
    and registers the declared deployments with their pull step."""
    deployed = _prefect_deploy(PREFECT_YAML, tmp_path, home=ROOT)
    assert deployed.returncode == 0, deployed.stdout[-3000:] + deployed.stderr[-3000:]
    declared = _yaml_deployments()
    with get_client(sync_client=True) as client:
        for name, entry in declared.items():
            stored = client.read_deployment_by_name(f"libre-train/{name}")
            assert stored.entrypoint == ENTRYPOINT
            assert stored.parameters == entry["parameters"]
            assert stored.work_pool_name == "libre-process"
            assert stored.pull_steps == [
                {"libre_flows.flows.steps.enter_project": {"directory": str(ROOT)}}
            ]
            assert len(stored.schedules) == len(entry.get("schedules", []))


def test_prefect_deploy_without_libre_flows_home_fails_and_registers_nothing(tmp_path, spec_copy):
    """Without LIBRE_FLOWS_HOME, `prefect deploy` exited 0 and stored the placeholder
    '{{ $LIBRE_FLOWS_HOME }}' as the pull step's folder: every later run failed. Now the build
    step fails the deploy with a line naming the variable."""
    spec = _renamed(spec_copy(), "unset-home")
    prefect_file = tmp_path / "prefect.yaml"
    prefect_file.write_text(render([spec], tmp_path))

    deployed = _prefect_deploy(prefect_file, tmp_path, home=None)
    output = " ".join((deployed.stdout + deployed.stderr).split())
    assert deployed.returncode != 0, output[-3000:]
    assert "LIBRE_FLOWS_HOME is not set" in output, output[-3000:]
    with get_client(sync_client=True) as client, pytest.raises(ObjectNotFound):
        client.read_deployment_by_name("libre-train/unset-home-nightly")


@pytest.mark.parametrize(
    ("home", "message"),
    [
        (None, "LIBRE_FLOWS_HOME is not set: set it to the project folder"),
        ("/no/such/folder", "LIBRE_FLOWS_HOME is '/no/such/folder', which is not a folder"),
    ],
)
def test_a_run_without_its_project_folder_fails_first_naming_libre_flows_home(
    home, message, monkeypatch
):
    """What a worker does with a pull step stored with the placeholder (deployed before the
    build step checked it) or with a folder this machine lacks: Prefect fills the variable in
    from the worker's environment, then the step fails with one line."""
    if home is None:
        monkeypatch.delenv("LIBRE_FLOWS_HOME", raising=False)
    else:
        monkeypatch.setenv("LIBRE_FLOWS_HOME", home)
    step = {"libre_flows.flows.steps.enter_project": {"directory": "{{ $LIBRE_FLOWS_HOME }}"}}
    with pytest.raises(StepExecutionError) as failed:
        asyncio.run(run_steps([step]))
    assert isinstance(failed.value.__cause__, ProjectFolderError)
    assert str(failed.value.__cause__).startswith(message)


def test_a_failed_pull_step_fails_its_flow_run_with_the_reason(tmp_path, monkeypatch):
    """The pull step's one line reached only the worker's output: the run read "Crashed:
    Process exited with status code: 1", and its logs held no reason."""
    from prefect.client.schemas.filters import LogFilter, LogFilterFlowRunId
    from prefect.states import Crashed

    @flow(name="pull-step-probe")
    def probe():
        return None

    with get_client(sync_client=True) as client:
        run = client.create_flow_run(probe)
    monkeypatch.setenv("PREFECT__FLOW_RUN_ID", str(run.id))
    monkeypatch.setenv("LIBRE_FLOWS_HOME", str(tmp_path / "moved"))
    step = {"libre_flows.flows.steps.enter_project": {"directory": "{{ $LIBRE_FLOWS_HOME }}"}}
    with pytest.raises(StepExecutionError):
        asyncio.run(run_steps([step]))
    with get_client(sync_client=True) as client:
        state = client.read_flow_run(run.id).state
        assert state.is_failed() and state.message.startswith("ProjectFolderError: LIBRE_FLOWS")
        logs = client.read_logs(LogFilter(flow_run_id=LogFilterFlowRunId(any_=[run.id])))
        assert any("which is not a folder on this machine" in log.message for log in logs)
        # the worker's report of the process's exit does not replace the reason
        client.set_flow_run_state(run.id, Crashed(message="Process exited with status code: 1"))
        assert client.read_flow_run(run.id).state.is_failed()


def test_the_pull_step_enters_the_project_folder(tmp_path, monkeypatch):
    monkeypatch.chdir(ROOT)
    monkeypatch.setenv("LIBRE_FLOWS_HOME", str(tmp_path))
    step = {"libre_flows.flows.steps.enter_project": {"directory": "{{ $LIBRE_FLOWS_HOME }}"}}
    assert asyncio.run(run_steps([step]))["directory"] == str(tmp_path.resolve())
    assert Path.cwd() == tmp_path.resolve()


def test_deployments_read_back_and_the_event_starts_a_run(spec_copy):
    spec = spec_copy(schedule={"cron": "15 4 * * 1", "timezone": "Europe/Paris"})
    nightly, on_demand, on_new_data = build_deployments(spec, relative_to=None)
    ids = {d.name: d.apply() for d in (nightly, on_demand, on_new_data)}
    with get_client(sync_client=True) as client:
        stored = client.read_deployment(ids["haberman-nightly"])
        assert stored.entrypoint == ENTRYPOINT
        assert stored.parameters == {"spec_path": str(spec.resolve()), "force": False}
        assert stored.schedules[0].schedule.cron == "15 4 * * 1"
        assert stored.schedules[0].schedule.timezone == "Europe/Paris"
        assert client.read_deployment(ids["haberman-on-demand"]).schedules == []
        automations = client.read_resource_related_automations(
            f"prefect.deployment.{ids['haberman-on-new-data']}"
        )
        assert [a.trigger.expect for a in automations] == [{DATASET_UPDATED}]

        event = notify(spec)
        run_filter = DeploymentFilter(id=DeploymentFilterId(any_=[ids["haberman-on-new-data"]]))
        runs = []
        for _ in range(60):
            runs = client.read_flow_runs(deployment_filter=run_filter)
            if runs:
                break
            time.sleep(0.5)
        assert runs, "the dataset-updated event did not create a flow run"
        assert runs[0].parameters["spec_path"] == str(spec.resolve())
        # the run compares what it reads with the data the event announced
        assert runs[0].parameters["expected_sha256"] == event.payload["sha256"]


def test_notify_names_a_triggered_deployment_that_nothing_serves(spec_copy):
    """After `libre serve` stopped (it pauses its deployments) `libre notify` still said
    "triggers: ..." and exited 0, while the run it started waited for a serve that never came."""
    spec = _renamed(spec_copy(), "idle-trigger")
    ids = {d.name: d.apply() for d in build_deployments(spec, relative_to=None)}
    target = ids["idle-trigger-on-new-data"]
    event = notify(spec)
    assert idle_deployments(triggered(event)) == [
        "idle-trigger-on-new-data (no process served it; last asked for runs never)"
    ]
    with get_client(sync_client=True) as client:
        client.get_scheduled_flow_runs_for_deployments([target])  # a serve asks for its runs
        assert idle_deployments(triggered(event)) == []
        client.pause_deployment(target)  # the serve stopped
    assert idle_deployments(triggered(event)) == ["idle-trigger-on-new-data (paused)"]


def test_notify_names_a_work_pool_deployment_that_no_worker_runs(spec_copy):
    """A deployment on a work pool without a worker: `libre notify` said "triggers: ..." and
    exited 0; the run waited for a worker to start."""
    with get_client(sync_client=True) as client:  # a pool of its own: no other test's worker
        client.create_work_pool(WorkPoolCreate(name="idle-pool", type="process"))
    spec = _renamed(spec_copy(), "pooled-trigger")
    for deployment in build_deployments(spec, relative_to=None):
        deployment.apply(work_pool_name="idle-pool")
    event = notify(spec)
    assert idle_deployments(triggered(event)) == [
        "pooled-trigger-on-new-data (no worker of its work pool 'idle-pool' is online)"
    ]
    with get_client(sync_client=True) as client:
        client.send_worker_heartbeat("idle-pool", "a-worker")  # a worker comes online
        assert idle_deployments(triggered(event)) == []
        # paused (a stopped `libre serve` pauses what it served, also once moved to a pool):
        # the worker still runs what the trigger starts, but the schedule is off
        paused = ["pooled-trigger-nightly", "pooled-trigger-on-new-data"]
        ids = [client.read_deployment_by_name(f"{TRAIN_FLOW}/{name}").id for name in paused]
        for deployment_id in ids:
            client.pause_deployment(deployment_id)
        assert idle_deployments(triggered(event)) == []
        assert paused_on_pools("pooled-trigger") == paused
        assert paused_on_pools("pooled") == []  # not another pipeline's, by its name's start
        assert TRAIN_FLOW == train_flow.name  # the name the deployments carry
        from typer.testing import CliRunner

        from libre_flows.flows.cli import app

        said = " ".join(CliRunner().invoke(app, ["notify", str(spec)]).stderr.split())
        assert "paused on a work pool: pooled-trigger-nightly, pooled-trigger-on-new-data" in said
        assert "prefect deployment resume 'libre-train/pooled-trigger-nightly'" in said
        assert "waits until a process serves it" not in said
        for deployment_id in ids:
            client.resume_deployment(deployment_id)
        assert paused_on_pools("pooled-trigger") == []
        client.update_work_pool("idle-pool", WorkPoolUpdate(is_paused=True))
    assert idle_deployments(triggered(event)) == [
        "pooled-trigger-on-new-data (its work pool 'idle-pool' is paused)"
    ]
    # the command names the remedy that works: `libre serve` refuses pool deployments
    from typer.testing import CliRunner

    from libre_flows.flows.cli import app

    result = CliRunner().invoke(app, ["notify", str(spec)])
    warning = " ".join(result.stderr.split())
    assert "prefect worker start --pool idle-pool" in warning
    assert "prefect work-pool resume idle-pool" in warning and "libre serve" not in warning


def test_notify_names_a_trigger_whose_deployment_was_deleted(spec_copy):
    """Deleting the deployments (the way from `libre serve` to a work pool) can leave their
    trigger behind: `libre notify` said "triggers: ..." and exited 0, the server's action failed
    with a 404 and no run started."""
    from typer.testing import CliRunner

    from libre_flows.flows.cli import app
    from libre_flows.flows.events import orphaned

    spec = _renamed(spec_copy(), "gone-trigger")
    ids = {d.name: d.apply() for d in build_deployments(spec, relative_to=None)}
    event = notify(spec)
    assert orphaned(triggered(event)) == []
    with get_client(sync_client=True) as client:
        client.delete_deployment(ids["gone-trigger-on-new-data"])
    left = triggered(event)
    if not left:
        pytest.skip("this server deleted the deployment's trigger with it")
    assert orphaned(left) == left
    result = CliRunner().invoke(app, ["notify", str(spec)])
    said = " ".join(result.output.split())
    assert "a deployment that no longer exists (deleted), so no run starts" in said, said
    # deployed again: a live trigger of the same name beside the orphan; the run starts
    ids = {d.name: d.apply() for d in build_deployments(spec, relative_to=None)}
    both = triggered(event)
    assert len(both) == 2 and len({a.name for a in both}) == 1
    assert orphaned(both) == left
    result = CliRunner().invoke(app, ["notify", str(spec)])
    said = " ".join(result.output.split())
    assert "triggers: gone-trigger-dataset-updated" in said and "no longer exists" not in said


def test_a_served_run_s_expected_failure_is_logged_without_a_traceback():
    """A served run that failed validation printed Prefect's 38-line traceback of FailedRun
    (the engine re-raising the Failed state the flow returned) after its one-line reason."""
    import logging
    import sys

    from prefect.exceptions import FailedRun

    from libre_flows.flows.train import EXPECTED_FAILURE
    from libre_lib.errors import DataError

    for error, shown in (
        (FailedRun("DataValidationError: Data validation failed: 2 of 23"), "2 of 23"),
        (DataError("column 'x' is gone"), None),
    ):
        try:
            raise error
        except type(error):
            info = sys.exc_info()
        record = logging.LogRecord(
            "prefect.flow_engine", logging.ERROR, __file__, 1, "Engine %s", ("exited",), info
        )
        assert EXPECTED_FAILURE.filter(record) and record.exc_info is None
        assert logging.Formatter().format(record).count("\n") == 0
        if shown:
            assert record.getMessage() == f"Engine exited: {error}" and shown in record.getMessage()
