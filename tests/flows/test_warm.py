"""The warm command runner (`libre server start` starts it next to the local server): commands
run through it give what they give in their own process; a client falls back when the runner is
absent, stale or started with another environment; Ctrl-C reaches the command; children are
reaped; `libre server stop` stops it."""

import contextlib
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd
import pytest

from libre_flows.flows import warm

CLI = "import sys; from libre_flows.flows.cli import main; sys.argv[0] = 'libre'; main()"
DATA = Path(__file__).resolve().parents[2] / "libre_lib" / "datasets" / "haberman.csv"
IN_PROCESS = {"LIBRE_TEST_IN_PROCESS": "1"}  # a LIBRE_ variable the runner did not start with


def _environment(home: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "PREFECT_API_URL"}
    paths = {"LIBRE_HOME": str(home), "PREFECT_HOME": str(home / "prefect")}
    return {**env, **paths, "LIBRE_SERVER": "reuse"}  # the tests' conftest sets embedded


def _libre(env: dict, cwd: Path, *args, **extra) -> tuple[int, str]:
    done = subprocess.run(
        [sys.executable, "-c", CLI, *map(str, args)],
        env={**env, **extra},
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
    )
    return done.returncode, done.stdout + done.stderr


def _served(home: Path) -> list[str]:
    """The runner's log lines of finished commands."""
    log = home / "warm.log"
    return [line for line in log.read_text().splitlines() if " exited " in line]


def _children(pid: int) -> list[int]:
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            found.append(int(stat.parent.name))
    return found


def _steady(text: str) -> str:
    """Output without the timings, and without Prefect's shutdown note that its event sender
    still had items queued (it shows only when the machine is loaded)."""
    text = re.sub(r"(?m)^.*EventsWorker - Still processing items.*\n?", "", text)
    text = re.sub(r"(?m)^\[ *[\d.]+ s\] ", "[N s] ", text)  # progress lines off a terminal
    return re.sub(r"[\d,]+(\.\d+)? (rows/s|s in total)", r"N \2", text)


@pytest.fixture(scope="module")
def runner(write_spec):
    """A local server and warm runner in a short LIBRE_HOME (a Unix socket path has at most
    107 bytes), a trained haberman spec, and the folder commands run in."""
    home = Path(tempfile.mkdtemp(prefix="libre-warm-", dir="/tmp"))
    env = _environment(home)
    work = home / "work"
    work.mkdir()
    try:
        code, output = _libre(env, work, "server", "start")
        assert code == 0 and "warm runner started" in output, output
        state = json.loads((home / "warm.json").read_text())
        spec = write_spec(work)
        code, output = _libre(env, work, "train", spec)
        assert code == 0, output
        assert "libre train exited 0" in _served(home)[-1]  # through the runner
        yield {"home": home, "env": env, "work": work, "spec": spec, "pid": state["pid"]}
    finally:
        _libre(env, work, "server", "stop")
        shutil.rmtree(home, ignore_errors=True)


def test_validate_and_score_give_what_they_give_in_their_own_process(runner):
    env, work, spec = runner["env"], runner["work"], runner["spec"]
    served = len(_served(runner["home"]))
    warm_code, warm_out = _libre(env, work, "validate", spec)
    code, out = _libre(env, work, "validate", spec, **IN_PROCESS)
    assert (warm_code, _steady(warm_out)) == (code, _steady(out)) == (0, _steady(out))
    assert len(_served(runner["home"])) == served + 1  # the first one only

    inputs = work / "incoming.csv"
    pd.read_csv(DATA).drop(columns=["target"]).to_csv(inputs, index=False)
    store = work / "store"
    score = ("score", "haberman", inputs)
    warm_code, warm_out = _libre(env, work, *score, "a.parquet", "--store", store)
    code, out = _libre(env, work, *score, "b.parquet", "--store", store, **IN_PROCESS)
    assert warm_code == code == 0, warm_out + out
    assert _steady(warm_out.replace("a.parquet", "X")) == _steady(out.replace("b.parquet", "X"))
    pd.testing.assert_frame_equal(
        pd.read_parquet(work / "a.parquet"), pd.read_parquet(work / "b.parquet")
    )
    assert len(_served(runner["home"])) == served + 2
    assert _children(runner["pid"]) == []  # reaped


def test_a_bad_spec_fails_with_the_same_line(runner):
    env, work = runner["env"], runner["work"]
    warm_code, warm_out = _libre(env, work, "validate", "missing.yaml")
    code, out = _libre(env, work, "validate", "missing.yaml", **IN_PROCESS)
    assert warm_code == code == 1
    assert warm_out == out and out.startswith("error: ") and len(out.splitlines()) == 1
    assert _served(runner["home"])[-1].split(": ", 1)[1].startswith("libre validate exited 1")


def test_another_environment_runs_in_its_own_process(runner):
    served = len(_served(runner["home"]))
    code, output = _libre(runner["env"], runner["work"], "report", "nope")  # served
    assert code == 1 and "No finished run of 'nope'" in output
    code, quiet = _libre(runner["env"], runner["work"], "report", "nope", **IN_PROCESS)
    assert code == 1 and quiet == output  # silently in its own process
    code, noted = _libre(runner["env"], runner["work"], "report", "nope", "--debug", **IN_PROCESS)
    assert noted.startswith(
        "note: not using the warm runner: the environment differs from the runner's in "
        "LIBRE_TEST_IN_PROCESS\n"
    )
    assert len(_served(runner["home"])) == served + 1


def test_ctrl_c_reaches_the_command(runner, write_spec):
    home, work = runner["home"], runner["work"]
    spec = write_spec(work, "pima", tuning__enabled=True)  # long enough to interrupt
    code, output, child = _signalled(runner, spec, signal.SIGINT, to_client=True)
    assert code not in (0, None)
    assert "report:" not in output  # it stopped before the end
    assert "killed by" not in output  # the user's Ctrl-C, which the client forwarded
    assert f"pid {child}: libre train exited {code}" in (home / "warm.log").read_text()
    assert _children(runner["pid"]) == []


def _signalled(runner, spec, signum: int, to_client: bool = False) -> tuple[int, str, int]:
    """Start `libre train SPEC --force` through the runner, send ``signum`` to the client
    (``to_client``: as a Ctrl-C in its terminal) or to its command's process, and return the
    client's exit code, output and the command's pid."""
    work = runner["work"]
    client = subprocess.Popen(
        [sys.executable, "-c", CLI, "train", str(spec), "--force"],
        env=runner["env"],
        cwd=work,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    child = None
    try:
        deadline = time.monotonic() + 60
        while child is None and time.monotonic() < deadline:
            for pid in _children(runner["pid"]):
                with contextlib.suppress(OSError):
                    if Path(f"/proc/{pid}/cwd").resolve() == work.resolve():
                        child = pid  # released: it took the client's folder
            time.sleep(0.05)
        assert child is not None, "the command did not start in the runner"
        time.sleep(1.0)  # the command under way
        if to_client:
            client.send_signal(signum)
        else:
            os.kill(child, signum)
        output, _ = client.communicate(timeout=120)
    finally:
        if client.poll() is None:
            client.kill()
            client.wait()
        if child is not None and child in _children(runner["pid"]):
            os.kill(child, signal.SIGKILL)
    return client.returncode, output, child


def test_a_command_killed_in_the_runner_says_so(runner, write_spec):
    """The out-of-memory killer SIGKILLed a command in the runner: the client exited 137 with
    no word (the shell prints "Killed" only when the client itself dies)."""
    spec = write_spec(runner["work"], "pima", tuning__enabled=True)  # long enough to kill
    code, output, child = _signalled(runner, spec, signal.SIGKILL)
    assert code == 128 + signal.SIGKILL
    assert "killed by SIGKILL (the out-of-memory killer sends it, or kill -9)" in output
    assert f"warm runner (pid {child})" in output
    # a command that ends itself on an interrupt exits 130 without being killed: no such line
    code, output, _ = _signalled(runner, spec, signal.SIGINT)
    assert code == 130 and "interrupted" in output and "killed by" not in output
    assert _children(runner["pid"]) == []


def test_without_a_live_runner_commands_run_in_their_own_process(tmp_path):
    home = Path(tempfile.mkdtemp(prefix="libre-stale-", dir="/tmp"))
    try:
        env = _environment(home)
        code, absent = _libre(env, tmp_path, "report", "nope")
        assert code == 1 and "No finished run of 'nope'" in absent

        stale = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)  # bound, never listening
        stale.bind(str(home / "warm.sock"))
        stale.close()
        (home / "warm.json").write_text(
            json.dumps(
                {
                    "pid": 2**22 + 1,
                    "socket": str(home / "warm.sock"),
                    "started": 0.0,
                    "server_pid": 2**22 + 2,
                    "log": "",
                }
            )
        )
        code, output = _libre(env, tmp_path, "report", "nope")
        assert (code, output) == (1, absent)
        assert not (home / "warm.sock").exists() and not (home / "warm.json").exists()
    finally:
        shutil.rmtree(home, ignore_errors=True)


def test_the_fingerprint_follows_the_code(tmp_path):
    module = tmp_path / "pkg" / "m.py"
    module.parent.mkdir()
    module.write_text("x = 1\n")
    before = warm.fingerprint([tmp_path])
    assert warm.fingerprint([tmp_path]) == before
    os.utime(module, ns=(time.time_ns(), time.time_ns() + 10**9))
    assert warm.fingerprint([tmp_path]) != before
    changed = warm.fingerprint([tmp_path])
    (module.parent / "n.py").write_text("")
    os.utime(module.parent / "n.py", ns=(0, 0))
    assert warm.fingerprint([tmp_path]) != changed  # a new (older) file counts too


def test_stop_stops_the_runner_with_the_server(runner):
    home, pid = runner["home"], runner["pid"]
    code, output = _libre(runner["env"], runner["work"], "server", "status")
    assert code == 0 and f"warm runner: pid {pid}" in output
    code, output = _libre(runner["env"], runner["work"], "server", "stop")
    assert code == 0 and f"stopped the warm runner (pid {pid})" in output
    assert not (home / "warm.sock").exists() and not (home / "warm.json").exists()
    assert (
        not Path(f"/proc/{pid}").exists()
        or b"warm" not in Path(f"/proc/{pid}/cmdline").read_bytes()
    )
