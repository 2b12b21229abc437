"""libre-flows installed as a plugin in someone else's project.

The wheel is built from a copy of the sources (so the build writes nothing into the checkout)
and installed, not editable, into a fresh virtual environment. The dependencies come from this
checkout's environment through a plain path entry, which does not activate its editable finder:
libre_lib and libre_flows can only come from the wheel. In a project folder that has its own
``flows`` package, its own CSV and its own spec, ``libre train`` and ``libre score`` run with
Prefect's embedded server, and the deployments that ``libre serve`` registers resolve their
module-path entrypoint from the installed package, and run. The project's ``flows`` stays its
own and nothing under the checkout is imported (apart from its environment's dependencies).
"""

import csv
import json
import os
import random
import shutil
import subprocess
import sys
import sysconfig
import tomllib
from pathlib import Path

import pyarrow.parquet as pq
import pytest

ROOT = Path(__file__).resolve().parents[2]
ENTRYPOINT = "libre_flows.flows.train.train_flow"

pytestmark = pytest.mark.install

SPEC = """\
name: visits
description: Which patients come back within a month (the project's own data).
data: {path: ../data/visits.csv}
store: ../.libre-store
target: {column: returned, positive_class: "yes", classes: ["no", "yes"]}
expectations:
  min_rows: 100
  columns:
    age: {min: 0, max: 120}
    ward: {values: [A, B, C]}
model: {n_estimators: 5, random_state: 0}
"""

# Runs in the project folder (``python -c``, so the folder is first on sys.path, as for any
# script of the project): imports the project's own ``flows`` first, then builds the deployments
# from the installed package, serves them once (what ``libre serve`` does) with a run of the
# on-demand deployment, and reports what it loaded.
CHECK = """\
import asyncio
import json
import sys
from pathlib import Path

import flows
import flows.mine
from prefect.client.orchestration import get_client
from prefect.deployments import run_deployment
from prefect.flows import load_flow_from_entrypoint
from prefect.runner import Runner

from libre_flows.flows.deploy import build_deployments
from libre_flows.flows.train import train_flow

declared = build_deployments("specs/visits.yaml")
served = build_deployments("specs/visits.yaml", relative_to=None)
runner = Runner(name="visits-check")
for deployment in served:
    runner.add_deployment(deployment)
flow_run = run_deployment("libre-train/visits-on-demand", timeout=0)
asyncio.run(runner.start(run_once=True))
with get_client(sync_client=True) as client:
    state = client.read_flow_run(flow_run.id).state
import flows as again

Path(sys.argv[1]).write_text(json.dumps({
    "flows": again.__file__,
    "mine": flows.mine.OWNER,
    "entrypoints": sorted({d.entrypoint for d in declared + served}),
    "loads_train_flow": all(load_flow_from_entrypoint(d.entrypoint) is train_flow for d in served),
    "spec_paths": sorted({d.parameters["spec_path"] for d in declared}),
    "served_run": state.type.value,
    "modules": {n: getattr(m, "__file__", None) for n, m in list(sys.modules.items())},
}))
"""


def _run(command: list, cwd: Path, env: dict | None = None, timeout: int = 240):
    done = subprocess.run(
        [str(part) for part in command],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    assert done.returncode == 0, f"{command}:\n{done.stdout[-4000:]}\n{done.stderr[-4000:]}"
    return done


def _source_copy(target: Path) -> Path:
    """pyproject.toml, the readme and every package folder the wheel is built from."""
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    setuptools = pyproject["tool"]["setuptools"]
    folders = setuptools.get("package-dir", {})
    tops = set()
    for package in setuptools["packages"]:
        mapped = [name for name in folders if package == name or package.startswith(f"{name}.")]
        if mapped:
            name = max(mapped, key=len)
            package = folders[name] + package[len(name) :].replace(".", "/")
        tops.add(package.replace(".", "/").split("/")[0])
    target.mkdir()
    shutil.copy(ROOT / "pyproject.toml", target)
    shutil.copy(ROOT / pyproject["project"]["readme"], target)
    for top in sorted(tops):
        ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
        shutil.copytree(ROOT / top, target / top, ignore=ignore)
    return target


def _write_project(project: Path) -> None:
    """A project with its own ``flows`` package, its own data and its own spec."""
    (project / "flows").mkdir(parents=True)
    (project / "flows" / "__init__.py").write_text('"""The project\'s own flows."""\n')
    (project / "flows" / "mine.py").write_text('OWNER = "the project"\n')
    rng = random.Random(0)
    rows = []
    for _ in range(240):
        age, dose, ward = rng.randint(20, 95), round(rng.uniform(0, 100), 1), rng.choice("ABC")
        returned = "yes" if (dose > 60 and ward == "B") or age > 80 else "no"
        rows.append({"age": age, "dose": dose, "ward": ward, "returned": returned})
    for folder, name, columns in [
        ("data", "visits.csv", ["age", "dose", "ward", "returned"]),
        ("incoming", "today.csv", ["age", "dose", "ward"]),
    ]:
        (project / folder).mkdir()
        with open(project / folder / name, "w", newline="", encoding="utf-8") as handle:
            writer = csv.DictWriter(handle, columns, extrasaction="ignore")
            writer.writeheader()
            writer.writerows(rows[:60] if folder == "incoming" else rows)
    (project / "specs").mkdir()
    (project / "specs" / "visits.yaml").write_text(SPEC)


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """A fresh virtual environment with the wheel installed; returns (python, site-packages)."""
    tmp = tmp_path_factory.mktemp("install")
    source = _source_copy(tmp / "source")
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check"]
    build = ["wheel", "--no-deps", "--no-build-isolation", "--no-index", "-q", "-w", tmp / "wheels"]
    _run([*pip, *build, source], cwd=tmp)
    (wheel,) = (tmp / "wheels").glob("libre_flows-*.whl")
    _run([sys.executable, "-m", "venv", "--without-pip", tmp / "venv"], cwd=tmp)
    python = tmp / "venv" / "bin" / "python"
    _run([*pip, "--python", python, "install", "--no-deps", "--no-index", "-q", wheel], cwd=tmp)
    purelib = "import sysconfig; print(sysconfig.get_paths()['purelib'])"
    site = Path(_run([python, "-c", purelib], cwd=tmp).stdout.strip())
    (site / "libre-flows-dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return python, site.resolve()


def _environment(tmp: Path, venv_bin: Path) -> dict:
    """No Prefect server, profile or Python path inherited: an embedded server per command. The
    compiled kernels run interpreted: compiling them into the fresh environment's cache would
    cost some 20 s of CPU and prove nothing about the installation."""
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("PREFECT_", "PYTHON", "VIRTUAL_ENV"))
    }
    return {
        **env,
        "PATH": f"{venv_bin}{os.pathsep}{env.get('PATH', '')}",
        "PREFECT_HOME": str(tmp / "prefect-home"),
        "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
        "PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS": "120",
        "DO_NOT_TRACK": "1",
        "GX_ANALYTICS_ENABLED": "false",
        "NUMBA_DISABLE_JIT": "1",
    }


def test_the_library_resolves_to_the_wheel(installed, tmp_path):
    python, site = installed
    where = "import libre_lib, libre_flows; print(libre_lib.__file__, *libre_flows.__path__)"
    env = _environment(tmp_path, python.parent)
    paths = _run([python, "-c", where], cwd=tmp_path, env=env).stdout.split()
    assert paths and all(Path(p).resolve().is_relative_to(site) for p in paths), paths


def test_train_score_and_serve_from_another_project(installed, tmp_path):
    python, site = installed
    project = tmp_path / "project"
    _write_project(project)
    env = _environment(tmp_path, python.parent)
    libre = python.parent / "libre"

    _run([libre, "train", "specs/visits.yaml"], cwd=project, env=env)
    (model,) = (project / ".libre-store" / "runs" / "visits").glob("*/model.json")
    assert (model.parent / "report.html").is_file()

    _run([libre, "score", "visits", "incoming/today.csv", "scored.parquet"], cwd=project, env=env)
    scored = pq.read_table(project / "scored.parquet")
    assert scored.num_rows == 60
    assert {"age", "dose", "ward", "prediction", "score", "explanation"} <= set(scored.column_names)

    _run([python, "-c", CHECK, tmp_path / "check.json"], cwd=project, env=env)
    check = json.loads((tmp_path / "check.json").read_text())
    assert Path(check["flows"]) == project / "flows" / "__init__.py"
    assert check["mine"] == "the project"
    assert check["entrypoints"] == [ENTRYPOINT]
    assert check["loads_train_flow"]
    assert check["spec_paths"] == ["specs/visits.yaml"]
    assert check["served_run"] == "COMPLETED"
    dependencies = [Path(sysconfig.get_paths()[key]).resolve() for key in ("purelib", "platlib")]
    for name, file in check["modules"].items():
        if file is None:
            continue
        path = Path(file).resolve()
        if name.split(".")[0] in {"libre_lib", "libre_flows"}:
            assert path.is_relative_to(site), (name, file)
        outside = not path.is_relative_to(ROOT)
        assert outside or any(path.is_relative_to(d) for d in dependencies), (name, file)
