"""The production path on a Prefect server whose database is PostgreSQL, as production runs it
(the other flow tests use SQLite): ``libre server start`` on a throwaway PostgreSQL cluster,
``libre train`` with 42 learners recording their task runs at once, and a deployment from
``prefect deploy`` that ``libre notify`` triggers (events and automations) and a process worker
runs. Skipped when PostgreSQL (``initdb``, ``pg_ctl``) or asyncpg is missing:
``apt-get install postgresql``."""

import asyncio
import contextlib
import hashlib
import json
import os
import pwd
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx
import pytest
from prefect.client.orchestration import get_client
from prefect.client.schemas.filters import (
    DeploymentFilter,
    DeploymentFilterId,
    FlowRunFilter,
    FlowRunFilterId,
    FlowRunFilterName,
    FlowRunFilterParentFlowRunId,
)
from prefect.settings import PREFECT_API_URL, temporary_settings

from libre_flows.flows.prefect_yaml import render

from .conftest import SPECS
from .test_deployments import _prefect_deploy, _renamed
from .test_local_server import _libre

PIMA = SPECS.parents[1] / "libre_lib" / "datasets" / "pima.csv"
SHA_FULL = hashlib.sha256(PIMA.read_bytes()).hexdigest()  # what `libre notify` announces
SHA = SHA_FULL[:12]  # runs are named <pipeline>-<SHA>


def _postgres_bin() -> Path | None:
    """The folder of ``initdb`` and ``pg_ctl``: from PATH, else the newest
    /usr/lib/postgresql/<version>/bin (Debian's packages do not put them on PATH)."""
    found = shutil.which("initdb")
    folders = [Path(found).resolve().parent] if found else []
    installed = Path("/usr/lib/postgresql").glob("*/bin")
    folders += sorted(
        installed, key=lambda p: int(p.parent.name) if p.parent.name.isdigit() else 0
    )[::-1]
    return next((f for f in folders if (f / "initdb").exists() and (f / "pg_ctl").exists()), None)


def _unprivileged() -> list[str]:
    """The prefix running a command as the ``postgres`` user when this is root (PostgreSQL
    refuses to run as root), else nothing."""
    if os.geteuid() != 0:
        return []
    try:
        user = pwd.getpwnam("postgres")
    except KeyError:
        pytest.skip("running as root, and no 'postgres' user to run PostgreSQL as")
    if shutil.which("runuser"):
        return ["runuser", "-u", "postgres", "--"]
    if shutil.which("setpriv"):
        ids = [f"--reuid={user.pw_uid}", f"--regid={user.pw_gid}", "--init-groups"]
        return ["setpriv", *ids, "--"]
    pytest.skip("running as root, and neither runuser nor setpriv to run PostgreSQL as 'postgres'")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="module")
def postgres():
    """A throwaway PostgreSQL cluster on 127.0.0.1 (free port, socket in its own folder, no
    fsync): yields the SQLAlchemy URL of an empty database; stopped and deleted afterwards."""
    pytest.importorskip("asyncpg", reason="asyncpg, Prefect's PostgreSQL driver, is missing")
    folder = _postgres_bin()
    if folder is None:
        pytest.skip("PostgreSQL is not installed (no initdb): apt-get install postgresql")
    prefix = _unprivileged()
    root = Path(tempfile.mkdtemp(prefix="libre-postgres-"))  # pytest's tmp is root-only
    if prefix:
        shutil.chown(root, "postgres", "postgres")
    data, port = root / "data", _free_port()
    options = f"-h 127.0.0.1 -p {port} -k {root} -c fsync=off -c full_page_writes=off"

    def run(program: str, *args) -> subprocess.CompletedProcess:
        command = [*prefix, str(folder / program), *map(str, args)]
        return subprocess.run(command, capture_output=True, text=True, timeout=120)

    try:
        for program, *args in [
            ("initdb", "-D", data, "-U", "libre", "--auth=trust", "-E", "UTF8", "--locale=C", "-N"),
            ("pg_ctl", "-D", data, "-l", root / "postgres.log", "-w", "-o", options, "start"),
            ("createdb", "-h", "127.0.0.1", "-p", port, "-U", "libre", "prefect"),
        ]:
            done = run(program, *args)
            if done.returncode != 0:
                output = " ".join((done.stdout + done.stderr).split())[-500:]
                pytest.skip(f"PostgreSQL did not start ({program} failed): {output}")
        yield f"postgresql+asyncpg://libre@127.0.0.1:{port}/prefect"
    finally:
        if (data / "postmaster.pid").exists():
            if run("pg_ctl", "-D", data, "-m", "fast", "-w", "stop").returncode != 0:
                run("pg_ctl", "-D", data, "-m", "immediate", "-w", "stop")
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture(scope="module")
def server(postgres, tmp_path_factory):
    """``libre server start`` with PREFECT_SERVER_DATABASE_CONNECTION_URL set to ``postgres``:
    yields its API URL; ``libre server stop`` afterwards."""
    tmp = tmp_path_factory.mktemp("postgres-server")
    env = {
        "LIBRE_HOME": str(tmp / "libre-home"),
        "PREFECT_HOME": str(tmp / "prefect-home"),
        "PREFECT_SERVER_DATABASE_CONNECTION_URL": postgres,
    }
    try:
        code, output = _libre("server", "start", "--no-warm", **env)
        assert code == 0, output
        state = json.loads((tmp / "libre-home" / "server.json").read_text())
        yield f"{state['url']}/api"
    finally:
        code, output = _libre("server", "stop", **env)
        assert code == 0, output


@contextlib.contextmanager
def _on(api_url: str):
    with temporary_settings({PREFECT_API_URL: api_url}), get_client(sync_client=True) as client:
        yield client


def _eventually(read, done, timeout: float = 60.0):
    """``read()`` until ``done`` holds of it, or ``timeout`` seconds passed; its last value."""
    deadline = time.monotonic() + timeout
    while not done(value := read()) and time.monotonic() < deadline:
        time.sleep(0.5)
    return value


def _client_env(api_url: str, folder: Path) -> dict:
    return {"PREFECT_API_URL": api_url, "PREFECT_HOME": str(folder / "prefect-home")}


def _query(postgres: str, sql: str, *args) -> list:
    """Rows of ``sql`` read straight from the PostgreSQL database."""
    import asyncpg

    async def fetch() -> list:
        connection = await asyncpg.connect(postgres.replace("+asyncpg", ""))
        try:
            return await connection.fetch(sql, *args)
        finally:
            await connection.close()

    return asyncio.run(fetch())


def test_the_server_keeps_its_data_in_postgres(postgres, server):
    assert httpx.get(f"{server}/health", timeout=10).json() is True
    tables = {row["tablename"] for row in _query(postgres, "SELECT tablename FROM pg_tables")}
    assert {"flow_run", "task_run", "artifact", "automation", "events"} <= tables


def test_libre_train_records_the_run_its_learners_and_artifacts(
    postgres, server, write_spec, tmp_path
):
    """42 learners on 8 threads write their task runs at once; the run is named after its
    data, completed, and has its report, tables and finished progress artifact."""
    spec = write_spec(tmp_path, "pima", runner={"kind": "thread", "max_workers": 8})
    spec = _renamed(spec, "pima-cli")
    code, output = _libre("train", spec, **_client_env(server, tmp_path))
    assert code == 0, output
    (run_file,) = (tmp_path / "store" / "runs" / "pima-cli").glob("*/run.json")
    learners = [s for s in json.loads(run_file.read_text())["stages"] if s["stage"] == "learn"]
    assert len(learners) > 40 and not any(s["cache_hit"] for s in learners)

    with _on(server) as client:
        (run,) = client.read_flow_runs(
            flow_run_filter=FlowRunFilter(name=FlowRunFilterName(any_=[f"pima-cli-{SHA}"]))
        )
        assert run.state.is_completed(), run.state
        this_run = FlowRunFilter(id=FlowRunFilterId(any_=[run.id]))

        def learn_runs() -> list:
            runs = client.read_task_runs(flow_run_filter=this_run, limit=200)
            return [t for t in runs if t.name.startswith("learn-")]

        def all_completed(runs: list) -> bool:
            return len(runs) == len(learners) and all(t.state.is_completed() for t in runs)

        # task runs are recorded from their events, after the flow run ended
        recorded = _eventually(learn_runs, all_completed)
        assert all_completed(recorded), sorted((t.name, t.state_type) for t in recorded)
        artifacts = {a.key: a for a in client.read_artifacts(flow_run_filter=this_run)}
    assert {f"libre-pima-cli-{key}" for key in ("report", "rules", "metrics")} <= set(artifacts)
    assert artifacts["libre-pima-cli-progress"].data == pytest.approx(100.0)
    stored = _query(postgres, "SELECT name, state_type FROM flow_run WHERE id = $1", run.id)
    assert [tuple(row) for row in stored] == [(f"pima-cli-{SHA}", "COMPLETED")]


def test_libre_notify_starts_a_deployment_that_a_worker_runs(server, write_spec, tmp_path):
    """prefect.yaml deployed with `prefect deploy`; `libre notify` emits the event whose
    automation creates a run of the on-new-data deployment; a process worker runs it."""
    spec = _renamed(write_spec(tmp_path, "pima", schedule={"active": False}), "pima-deployed")
    prefect_file = tmp_path / "prefect.yaml"
    prefect_file.write_text(render([spec], tmp_path))
    with temporary_settings({PREFECT_API_URL: server}):
        deployed = _prefect_deploy(prefect_file, tmp_path, home=tmp_path)
    assert deployed.returncode == 0, deployed.stdout[-3000:] + deployed.stderr[-3000:]

    code, output = _libre("notify", spec, **_client_env(server, tmp_path))
    assert code == 0, output
    assert "triggers: pima-deployed-on-new-data" in " ".join(output.split())
    with _on(server) as client:
        deployment = client.read_deployment_by_name("libre-train/pima-deployed-on-new-data")
        of_it = DeploymentFilter(id=DeploymentFilterId(any_=[deployment.id]))
        (triggered,) = _eventually(lambda: client.read_flow_runs(deployment_filter=of_it), bool)

    worker = [sys.executable, "-m", "prefect", "worker", "start", "--pool", "libre-process"]
    env = {**os.environ, **_client_env(server, tmp_path), "LIBRE_FLOWS_HOME": str(tmp_path)}
    done = subprocess.run(
        [*worker, "--run-once"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    with _on(server) as client:
        run = client.read_flow_run(triggered.id)
        children = FlowRunFilter(parent_flow_run_id=FlowRunFilterParentFlowRunId(any_=[run.id]))
        (pipeline,) = client.read_flow_runs(flow_run_filter=children)
    assert run.state.is_completed(), run.state
    assert run.parameters == {"spec_path": spec.name, "force": False, "expected_sha256": SHA_FULL}
    assert pipeline.state.is_completed() and run.name == pipeline.name == f"pima-deployed-{SHA}"
    assert (tmp_path / "store" / "models" / "pima-deployed").is_dir()


def test_a_model_s_sql_flags_in_postgres_the_rows_predict_flags(postgres):
    """``to_sql`` run in PostgreSQL on the column types docs/operations.md gives (boolean,
    integer codes, text, double precision), with missing-value markers in each column: the
    rows TRUE are the rows ``predict`` flags once the markers are read as missing. A number
    marker on the boolean column used to be written ``"flag" IN (0.0)``, which PostgreSQL
    refuses (boolean = numeric)."""
    import numpy as np
    import pandas as pd

    from libre_lib import LibreClassifier

    rng = np.random.default_rng(0)
    n = 600
    frame = pd.DataFrame(
        {
            "flag": rng.random(n) < 0.5,
            "code": rng.integers(0, 5, n),
            "kind": rng.choice(["a", "b", "?"], n),
            "x": np.where(rng.random(n) < 0.05, -999.0, rng.normal(size=n)),
        }
    )
    y = (frame["flag"] & frame["code"].between(1, 2)) | (frame["x"] > 1.2)
    markers = {"flag": [0, "?", "False"], "code": [0], "kind": ["?"], "x": [-999]}
    model = LibreClassifier(categorical_features=["flag", "code", "kind"], random_state=0)
    model.fit(frame, y)
    assert {c.feature for rule in model.rules_.rules for c in rule.conditions} >= {"flag", "x"}
    read = frame.astype({"flag": object}).copy()
    for column, values in markers.items():
        texts = {str(v) for v in values}
        read[column] = read[column].mask(read[column].astype(str).isin(texts))
    read.loc[read["x"] == -999.0, "x"] = np.nan
    expected = model.predict(read).astype(bool)

    rows = [(bool(r.flag), int(r.code), str(r.kind), float(r.x)) for r in frame.itertuples()]
    sql = model.to_sql(markers)

    import asyncpg

    async def flagged() -> list[bool]:
        connection = await asyncpg.connect(postgres.replace("+asyncpg", ""))
        try:
            await connection.execute(
                "CREATE TEMP TABLE visits (i integer, flag boolean, code integer, kind text,"
                " x double precision)"
            )
            await connection.executemany(
                "INSERT INTO visits VALUES ($1, $2, $3, $4, $5)",
                [(i, *row) for i, row in enumerate(rows)],
            )
            fetched = await connection.fetch(f"SELECT {sql} AS hit FROM visits ORDER BY i")
            return [r["hit"] for r in fetched]
        finally:
            await connection.close()

    got = asyncio.run(flagged())
    assert got == expected.tolist()
    assert 0 < sum(got) < n
