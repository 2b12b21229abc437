"""How long each ``libre`` command takes, end to end, in a fresh process.

    python benchmarks/cli_latency.py                        # the three setups, 3 runs each
    python benchmarks/cli_latency.py --setups local warm --repeat 5 --commands score validate
    python benchmarks/cli_latency.py --json /tmp/cli-latency.json
    python benchmarks/cli_latency.py --server-settings      # what server settings save

Every command runs ``--repeat`` times, each in a new process (``python -c "...main()"``, as the
``libre`` script does), and the medians of its wall and CPU seconds (user + system of the
process and the children it waited for) are printed, with the load averages seen during the
runs. Three setups:

* ``embedded``: no ``PREFECT_API_URL`` and ``LIBRE_SERVER=embedded``, so every command starts
  Prefect's temporary server (the behaviour before ``libre server``);
* ``local``: ``libre server start --no-warm`` once (its start time is printed), then every
  command reuses the server (``LIBRE_SERVER=reuse``) and imports its stack itself; stopped at
  the end;
* ``warm``: ``libre server start`` once, which also starts the warm command runner
  (``libre_flows.flows.warm``): the ``libre`` commands are forked from it, their imports done.
  ``trivial``, ``fit`` and ``search`` are not ``libre`` commands and run as in ``local``. A
  command's CPU seconds add those of the runner's child that ran it (from ``warm.log``).

Commands: ``trivial`` (a one-task flow, on the server a command would use), ``score``
(``libre score pima`` of 100 rows of pima.csv with the champion), ``validate`` (``libre
validate`` of the pima spec),
``notify`` (``libre notify`` of the pima spec), ``train`` (``libre train --force`` of a pima
spec copy with ``tuning: {enabled: false}``), ``train-tuned`` (the same with the spec's
default tuning). ``fit`` and ``search`` time the bare model fits the two trainings wrap, in a
fresh process: ``LibreClassifier.fit`` (``stages.estimator(spec)``) and ``LibreSearchCV.fit``
(``stages.search(spec)``) on the same training rows, outside Prefect; their "fit s" is the
fit alone, imports and reading excluded.

``--server-settings`` instead starts Prefect's server (uvicorn serving its app, in a fresh
process) ``--repeat`` times under each of :data:`SERVER_SETTINGS` and prints the median wall
and CPU seconds of the server process until ``/api/health`` answers.

Everything runs in a temporary folder (specs with their store, ``LIBRE_HOME`` and
``PREFECT_HOME``); one untimed run per setup warms up the database and the import caches.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
SPECS = ROOT / "deployments" / "specs"
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _machine import cpu_model, ram_gib  # noqa: E402

CLI = "import sys; from libre_flows.flows.cli import main; sys.argv[0] = 'libre'; main()"
TRIVIAL = (
    "from libre_flows.flows.local_server import connect\n"
    "connect()\n"  # as the libre commands do: the local server if one runs
    "from prefect import flow, task\n"
    "@task\ndef one(): return 1\n"
    "@flow\ndef trivial(): return one()\n"
    "trivial()\n"
)
FIT = """
import json, sys, time, warnings
from libre_lib.ops import stages
from libre_lib.ops.sources import fingerprint_source
from libre_lib.ops.spec import load_spec
spec = load_spec(sys.argv[1])
frame, _ = stages.load(spec, fingerprint_source(spec.data_location()))
flags = stages.split(spec, frame)[0].column("holdout").to_numpy()
X, y = stages.split_rows(spec, frame, flags)
model = stages.search(spec) if sys.argv[2] == "search" else stages.estimator(spec)
started = time.perf_counter()
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    model.fit(X, y)
print(json.dumps({"fit_s": time.perf_counter() - started}))
"""
COMMANDS = ("trivial", "score", "validate", "notify", "train", "train-tuned", "fit", "search")
DEFAULT_COMMANDS = ("trivial", "score", "validate", "notify", "train", "fit")
SETUPS = ("embedded", "local", "warm")


def write_specs(folder: Path) -> dict[str, Path]:
    """The pima spec (store in ``folder``, data path absolute) and a copy without tuning."""
    raw = yaml.safe_load((SPECS / "pima.yaml").read_text())
    raw["data"]["path"] = str((SPECS / raw["data"]["path"]).resolve())
    raw["store"] = str(folder / "store")
    tuned = folder / "pima.yaml"
    tuned.write_text(yaml.safe_dump(raw))
    raw["tuning"] = {"enabled": False}
    plain = folder / "pima-notune.yaml"
    plain.write_text(yaml.safe_dump(raw))
    return {"tuned": tuned, "plain": plain}


def write_inputs(folder: Path, rows: int = 100) -> Path:
    import pandas as pd

    raw = yaml.safe_load((SPECS / "pima.yaml").read_text())
    frame = pd.read_csv((SPECS / raw["data"]["path"]).resolve()).head(rows)
    path = folder / f"pima-{rows}.csv"
    frame.drop(columns=[raw["target"]["column"]]).to_csv(path, index=False)
    return path


def argv(command: str, folder: Path, specs: dict, inputs: Path) -> list[str]:
    python = [sys.executable, "-c"]
    output, store = str(folder / "scored.parquet"), str(folder / "store")
    return {
        "trivial": [*python, TRIVIAL],
        "score": [*python, CLI, "score", "pima", str(inputs), output, "--store", store],
        "validate": [*python, CLI, "validate", str(specs["tuned"])],
        "notify": [*python, CLI, "notify", str(specs["tuned"])],
        "train": [*python, CLI, "train", str(specs["plain"]), "--force"],
        "train-tuned": [*python, CLI, "train", str(specs["tuned"]), "--force"],
        "fit": [*python, FIT, str(specs["plain"]), "fit"],
        "search": [*python, FIT, str(specs["tuned"]), "search"],
    }[command]


def _served(env: dict) -> tuple[int, float | None]:
    """How many lines the warm runner's log has, and the CPU seconds of the last command its
    child ran."""
    try:
        lines = (Path(env["LIBRE_HOME"]) / "warm.log").read_text().splitlines()
    except (OSError, KeyError):
        return 0, None
    last = lines[-1] if lines else ""
    match = re.search(r" exited -?\d+ after [\d.]+ s \(cpu ([\d.]+) s\)$", last)
    return len(lines), float(match[1]) if match else None


def run_once(args: list[str], env: dict) -> dict:
    """Wall and CPU seconds of one fresh process (and the fit time it prints, if any); a
    command the warm runner ran adds its child's CPU seconds (from the runner's log)."""
    before, _ = _served(env)
    started = time.perf_counter()
    process = subprocess.Popen(
        args, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    output = process.stdout.read()
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - started
    process.returncode = os.waitstatus_to_exitcode(status)
    row = {"wall_s": wall, "cpu_s": usage.ru_utime + usage.ru_stime, "code": process.returncode}
    after, child = _served(env)
    if after > before and child is not None:  # the runner ran this command
        row["cpu_s"] += child
        row["warm"] = True
    if process.returncode != 0:
        row["error"] = output.strip().splitlines()[-3:]
    for line in output.splitlines():
        if line.startswith('{"fit_s"'):
            row["fit_s"] = json.loads(line)["fit_s"]
    return row


def measure(setup: str, commands, repeat: int, folder: Path, base_env: dict) -> dict:
    specs, inputs = write_specs(folder), write_inputs(folder)
    env = {**base_env, "LIBRE_SERVER": "embedded" if setup == "embedded" else "reuse"}
    result: dict = {"setup": setup, "commands": {}}
    server = None
    if setup in ("local", "warm"):
        started = time.perf_counter()
        start = ["server", "start"] if setup == "warm" else ["server", "start", "--no-warm"]
        done = subprocess.run([sys.executable, "-c", CLI, *start], env=env, capture_output=True)
        if done.returncode != 0:
            raise RuntimeError(f"libre server start failed: {done.stdout!r} {done.stderr!r}")
        result["server_start_s"] = time.perf_counter() - started
        server = True
    try:
        warm = run_once(argv("train", folder, specs, inputs), env)  # a champion to score
        if warm["code"] != 0:
            raise RuntimeError(f"warm-up training failed: {warm.get('error')}")
        for command in commands:
            runs, loads = [], []
            for _ in range(repeat):
                loads.append(os.getloadavg()[0])
                runs.append(run_once(argv(command, folder, specs, inputs), env))
            ok = [r for r in runs if r["code"] == 0]
            row = {
                "runs": runs,
                "failed": len(runs) - len(ok),
                "load_1min": [round(x, 2) for x in loads],
            }
            for key in ("wall_s", "cpu_s", "fit_s"):
                values = [r[key] for r in ok if key in r]
                if values:
                    row[key] = statistics.median(values)
            result["commands"][command] = row
            print(_line(setup, command, row), flush=True)
    finally:
        if server:
            subprocess.run([sys.executable, "-c", CLI, "server", "stop"], env=env)
    return result


_EPHEMERAL = {"PREFECT__SERVER_EPHEMERAL": "1", "PREFECT_UI_ENABLED": "0"}
_EVENT_SERVICES = ("TASK_RUN_RECORDER", "EVENT_PERSISTER", "TRIGGERS", "EVENT_LOGGER", "ACTIONS")
SERVER_SETTINGS = {
    "Prefect's temporary server (ephemeral, no UI)": _EPHEMERAL,
    "+ PREFECT_SERVER_ANALYTICS_ENABLED=false": {
        **_EPHEMERAL,
        "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
    },
    "+ PREFECT_API_DATABASE_MIGRATE_ON_START=false": {
        **_EPHEMERAL,
        "PREFECT_API_DATABASE_MIGRATE_ON_START": "false",
    },
    "+ PREFECT_API_BLOCKS_REGISTER_ON_START=false": {
        **_EPHEMERAL,
        "PREFECT_API_BLOCKS_REGISTER_ON_START": "false",
    },
    "+ event services off": {
        **_EPHEMERAL,
        **{f"PREFECT_SERVER_SERVICES_{name}_ENABLED": "false" for name in _EVENT_SERVICES},
    },
    "the full server with UI and all services (libre server)": {},
}


def _cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def server_start(settings: dict, base_env: dict) -> tuple[float, float]:
    """Wall and CPU seconds until Prefect's app, served by uvicorn in a fresh process with
    ``settings`` in its environment, answers ``/api/health``."""
    import socket
    import urllib.request

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    env = {**base_env, "PREFECT_SERVER_ANALYTICS_ENABLED": "true", **settings}
    app = "prefect.server.api.server:create_app"
    options = ["--port", str(port), "--log-level", "error", "--lifespan", "on"]
    started = time.perf_counter()
    server = subprocess.Popen(
        [sys.executable, "-m", "uvicorn", "--factory", app, *options],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/health", timeout=1):
                    break
            except OSError:
                if server.poll() is not None:
                    code = server.returncode
                    raise RuntimeError(f"the server exited with code {code}") from None
                time.sleep(0.05)
        return time.perf_counter() - started, _cpu_seconds(server.pid)
    finally:
        server.terminate()
        server.wait()


def measure_server_settings(repeat: int, base_env: dict) -> dict:
    """Median start seconds of the server under each of :data:`SERVER_SETTINGS` (the database
    created first, untimed)."""
    server_start(_EPHEMERAL, base_env)
    runs: dict[str, list] = {name: [] for name in SERVER_SETTINGS}
    for _ in range(repeat):
        for name, settings in SERVER_SETTINGS.items():
            runs[name].append(server_start(settings, base_env))
    result = {}
    for name, values in runs.items():
        wall = statistics.median(v[0] for v in values)
        cpu = statistics.median(v[1] for v in values)
        result[name] = {"wall_s": wall, "cpu_s": cpu, "runs": values}
        print(f"server   {name:60s} wall {wall:6.2f} s  cpu {cpu:5.2f} s", flush=True)
    return result


def _line(setup: str, command: str, row: dict) -> str:
    parts = [f"{setup:8s} {command:12s}"]
    for key, label in (("wall_s", "wall"), ("cpu_s", "cpu"), ("fit_s", "fit")):
        if key in row:
            parts.append(f"{label} {row[key]:6.2f} s")
    parts.append(f"load {'/'.join(f'{x:.1f}' for x in row['load_1min'])}")
    if row["failed"]:
        parts.append(f"FAILED {row['failed']}x: {row['runs'][-1].get('error')}")
    return "  ".join(parts)


def main(argv_: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--setups", nargs="+", choices=SETUPS, default=None)
    parser.add_argument("--commands", nargs="+", choices=COMMANDS, default=DEFAULT_COMMANDS)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--json", type=Path, help="Write every run's figures here.")
    parser.add_argument(
        "--server-settings",
        action="store_true",
        help="Instead: CPU seconds until Prefect's server answers, under settings that might "
        "skip work (Linux).",
    )
    args = parser.parse_args(argv_)
    setups = args.setups or list(SETUPS)
    results = {
        "machine": f"{os.cpu_count()} cores ({cpu_model()}), {ram_gib() or 0:.0f} GiB RAM",
        "python": sys.version.split()[0],
        "started": time.strftime("%Y-%m-%d %H:%M:%S"),
        "load_before": os.getloadavg(),
        "setups": [],
    }
    print(f"machine: {results['machine']}; load average {results['load_before']}", flush=True)
    with tempfile.TemporaryDirectory(prefix="libre-cli-latency-") as tmp:
        base_env = {k: v for k, v in os.environ.items() if k != "PREFECT_API_URL"}
        if args.server_settings:
            env = {**base_env, "PREFECT_HOME": str(Path(tmp) / "prefect-home")}
            results["server_settings"] = measure_server_settings(args.repeat, env)
            setups = []
        for setup in setups:
            folder = Path(tmp) / setup
            folder.mkdir()
            env = {
                **base_env,
                "LIBRE_HOME": str(folder / "libre-home"),
                "PREFECT_HOME": str(folder / "prefect-home"),
            }
            result = measure(setup, args.commands, args.repeat, folder, env)
            if "server_start_s" in result:
                print(f"{setup:8s} server start {result['server_start_s']:6.2f} s", flush=True)
            results["setups"].append(result)
    results["load_after"] = os.getloadavg()
    print(f"load average after: {results['load_after']}")
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
