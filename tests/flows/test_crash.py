"""What a killed command leaves behind: nothing that outlives the bound, and no server.

After SIGKILLs during training, promotion and scoring, stage temp files, a temp version folder,
a run folder without run.json and a scoring output's temp stayed forever (nothing called the
clean-up), and in 10 of 14 kills Prefect's embedded server ran on as an orphan.
"""

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from libre_flows.flows.embedded_server import SERVER_APP, server_children
from libre_flows.flows.score import score
from libre_flows.flows.train import train
from libre_lib.ops.files import STALE_AFTER_S

DEAD = 2**22 + 1  # above Linux's largest pid_max: never a live process
HEX = "0123456789abcdef" * 2
LINUX = Path("/proc/self/task").is_dir()


def _debris(path: Path, age: float, folder: bool = False) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    past = time.time() - age
    if folder:
        path.mkdir()
        (path / "model.json").write_text("{}")
        os.utime(path / "model.json", (past, past))
    else:
        path.write_bytes(b"PAR1 half written")
    os.utime(path, (past, past))
    return path


def test_training_removes_stale_leftovers_of_crashed_runs_and_keeps_fresh_ones(spec_copy, tmp_path):
    store = tmp_path / "store"
    old = STALE_AFTER_S + 600
    stale = [
        _debris(store / "learn" / f".k.parquet.tmp-{DEAD}-{HEX}", old),
        _debris(store / "models" / "haberman" / f".tmp-v0007-1a2b3c4d-{DEAD}-{HEX}", old, True),
        _debris(store / "runs" / "haberman" / "20260101-000000-0123456789ab", old, True),
    ]
    fresh = [
        _debris(store / "learn" / f".k2.parquet.tmp-{DEAD}-{HEX}", 60),
        _debris(store / "models" / "haberman" / f".tmp-v0008-1a2b3c4d-{DEAD}-{HEX}", 60, True),
        _debris(store / "runs" / "haberman" / "20260101-000100-0123456789ac", 60, True),
    ]
    summary = train(spec_copy())
    assert [path for path in stale if path.exists()] == []
    assert all(path.exists() for path in fresh)
    assert summary["model_version"].startswith("v0001-")  # the temp folders took no number
    assert Path(summary["run_dir"], "run.json").is_file()


def test_scoring_removes_stale_temps_of_its_output_and_keeps_fresh_ones(tmp_path, credit):
    X, model, contract = credit
    (tmp_path / "model.json").write_text(model.to_json())
    contract.save(tmp_path / "contract.json")
    X.iloc[:200].to_csv(tmp_path / "day.csv", index=False)
    output = tmp_path / "scored" / "day.parquet"
    stale = _debris(output.with_name(f".day.parquet.tmp-{DEAD}-{HEX}"), STALE_AFTER_S + 600)
    fresh = _debris(output.with_name(f".day.parquet.tmp-{DEAD}-{'e' * 32}"), 60)
    summary = score(tmp_path / "model.json", tmp_path / "day.csv", output)
    assert summary["rows"] == 200 and output.is_file()
    assert not stale.exists() and fresh.exists()


# --------------------------------------------------------------------------- the server


def _started(pid: int) -> str | None:
    """The start time of a running process (None once it is gone or a zombie)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[-1].split()
    except OSError:
        return None
    return None if fields[0] in ("Z", "X") else fields[19]


def _alive(pids: dict[int, str]) -> dict[int, str]:
    """The processes of ``pids`` (pid -> start time) still running."""
    return {pid: started for pid, started in pids.items() if _started(pid) == started}


def _watchdogs(parent: int) -> dict[int, str]:
    """The children of ``parent`` running the embedded server's watchdog."""
    found = {}
    for pid in map(int, Path(f"/proc/{parent}/task/{parent}/children").read_text().split()):
        try:
            if b"libre_flows.flows.embedded_server" in Path(f"/proc/{pid}/cmdline").read_bytes():
                found[pid] = _started(pid)
        except OSError:
            continue
    return found


def _wait_gone(pids: dict[int, str], seconds: float) -> dict[int, str]:
    deadline = time.monotonic() + seconds
    while _alive(pids) and time.monotonic() < deadline:
        time.sleep(0.2)
    left = _alive(pids)
    for pid in left:  # do not leave them running after a failure
        os.kill(pid, signal.SIGKILL)
    return left


def _env(tmp_path: Path) -> dict[str, str]:
    """This environment without a configured API, so the command starts its own server (not
    a local one that may run: LIBRE_SERVER=embedded)."""
    env = {k: v for k, v in os.environ.items() if k != "PREFECT_API_URL"}
    env |= {"PREFECT_HOME": str(tmp_path / "prefect-home"), "LIBRE_SERVER": "embedded"}
    return env


@pytest.mark.skipif(not LINUX, reason="the guard reads /proc (Linux)")
def test_a_sigkilled_parent_takes_a_just_started_server_with_it(tmp_path):
    """The parent starts a (stand-in) server and is killed at once: before the watchdog's next
    look at its children, so only the token in the server's environment finds it."""
    parent = textwrap.dedent(
        f"""
        import subprocess, sys, time
        from libre_flows.flows.embedded_server import guard_embedded_server
        assert guard_embedded_server() is not None
        server = subprocess.Popen(
            [sys.executable, "-c", "import time; time.sleep(120)", {SERVER_APP!r}]
        )
        print(server.pid, flush=True)
        time.sleep(120)
        """
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", parent], stdout=subprocess.PIPE, text=True, env=_env(tmp_path)
    )
    try:
        server = int(proc.stdout.readline())
        servers = _alive({server: _started(server)})
        assert servers, "the stand-in server did not start"
    finally:
        proc.kill()
        proc.wait()
    assert _wait_gone(servers, 30) == {}, "the server outlived its parent"


@pytest.mark.skipif(not LINUX, reason="the guard reads /proc (Linux)")
def test_a_kill_of_the_command_s_process_group_takes_its_detached_server_with_it(tmp_path):
    """`timeout -s KILL` and supervisors kill a command's whole process group: the watchdog,
    in that group, died with it, and the server (in a session of its own, as Prefect's is
    started) ran on for good."""
    parent = textwrap.dedent(
        f"""
        import subprocess, sys, time
        from libre_flows.flows.embedded_server import guard_embedded_server
        watchdog = guard_embedded_server()
        server = subprocess.Popen(
            [sys.executable, "-c", "import time; time.sleep(120)", {SERVER_APP!r}],
            start_new_session=True,
        )
        print(watchdog.pid, server.pid, flush=True)
        time.sleep(120)
        """
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", parent],
        stdout=subprocess.PIPE,
        text=True,
        env=_env(tmp_path),
        start_new_session=True,  # its own group, as a shell gives a command
    )
    try:
        watchdog, server = (int(n) for n in proc.stdout.readline().split())
        mine = {pid: _started(pid) for pid in (watchdog, server)}
        time.sleep(1)  # the watchdog's first look at its parent
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    assert _wait_gone({server: mine[server]}, 30) == {}, "the server outlived the killed group"
    assert _wait_gone({watchdog: mine[watchdog]}, 30) == {}, "the watchdog outlived its parent"


@pytest.mark.skipif(not LINUX, reason="the guard reads /proc (Linux)")
def test_a_server_a_live_descendant_started_for_itself_is_left_alone(tmp_path):
    """A child of the guarded process inherits its token; when the guarded process dies, the
    server that child started (its own, the child still alive) must keep running."""
    child = (
        "import subprocess, sys, time; "
        f"s = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(120)', "
        f"{SERVER_APP!r}]); print(s.pid, flush=True); time.sleep(120)"
    )
    parent = textwrap.dedent(
        f"""
        import subprocess, sys, time
        from libre_flows.flows.embedded_server import guard_embedded_server
        watchdog = guard_embedded_server()
        print(watchdog.pid, flush=True)
        child = subprocess.Popen([sys.executable, "-c", {child!r}])
        print(child.pid, flush=True)
        time.sleep(120)
        """
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", parent], stdout=subprocess.PIPE, text=True, env=_env(tmp_path)
    )
    try:
        watchdog, child_pid, server = (int(proc.stdout.readline()) for _ in range(3))
        mine = {pid: _started(pid) for pid in (watchdog, child_pid, server)}
    finally:
        proc.kill()
        proc.wait()
    try:
        assert _wait_gone({watchdog: mine[watchdog]}, 30) == {}, "the watchdog did not finish"
        assert _alive(mine) == {pid: mine[pid] for pid in (child_pid, server)}
    finally:
        _wait_gone({child_pid: mine[child_pid], server: mine[server]}, 0)


@pytest.mark.skipif(not LINUX, reason="the guard reads /proc (Linux)")
def test_a_sigkilled_libre_train_leaves_no_prefect_server(write_spec, tmp_path):
    libre = Path(sys.executable).with_name("libre")
    if not libre.is_file():
        pytest.skip("the libre console script is not installed next to this Python")
    spec = write_spec(tmp_path)
    log = (tmp_path / "libre.log").open("w")
    proc = subprocess.Popen(
        [str(libre), "train", str(spec)], stdout=log, stderr=log, env=_env(tmp_path)
    )
    try:
        deadline = time.monotonic() + 90
        servers: dict[int, str] = {}
        while not servers and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.2)
            servers = server_children(proc.pid)
        watchdogs = _watchdogs(proc.pid) if proc.poll() is None else {}
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        log.close()
    assert servers, "libre train started no server: " + (tmp_path / "libre.log").read_text()
    assert watchdogs, "libre train started no watchdog"
    assert _wait_gone(servers, 30) == {}, "Prefect's server outlived the killed libre train"
    assert _wait_gone(watchdogs, 30) == {}, "the watchdog outlived its parent"


@pytest.mark.skipif(not LINUX, reason="the guard reads /proc (Linux)")
def test_the_embedded_servers_own_log_is_quiet_unless_the_user_asks(tmp_path):
    """Ctrl-C reaches the temporary server too: its services' cancelled work printed some 150
    lines of tracebacks after the command's one-line message. The server inherits the level
    from the environment the guard sets up before Prefect starts it (a level the user set
    stays: ``os.environ.setdefault``)."""
    code = (
        "import os; from libre_flows.flows.embedded_server import guard_embedded_server; "
        "assert guard_embedded_server() is not None; "
        "print(os.environ['PREFECT_SERVER_LOGGING_LEVEL'])"
    )
    env = {k: v for k, v in _env(tmp_path).items() if k != "PREFECT_SERVER_LOGGING_LEVEL"}
    done = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["CRITICAL"]
