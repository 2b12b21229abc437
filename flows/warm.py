"""A warm command runner: ``libre`` commands forked from a process whose imports are done.

With the local server (``libre_flows.flows.local_server``) a command no longer starts Prefect,
but every command is still a fresh Python process that imports Prefect, pandas, pyarrow,
scikit-learn and Great Expectations again: about 3 CPU seconds before any work. ``libre server
start`` therefore also starts this runner, a fork server:

* The runner (``python -m libre_flows.flows.warm_runner <server pid>``) imports that stack and the
  project's flows once, then listens on :func:`socket_path` (a Unix socket, mode 0600, in
  ``LIBRE_HOME``) in a single-threaded selector loop; a signal wake-up pipe and ``waitpid``
  with ``WNOHANG`` reap its children, so no thread exists when it forks.
* The client is :func:`run`, called first by the ``libre`` command for ``train``, ``validate``,
  ``score``, ``notify`` and ``report``. It sends its stdin, stdout and stderr (``send_fds``)
  with its argv, working folder, umask and environment. The runner checks that a fresh process
  would be the same process (:func:`refusal`), forks, and sends the child's pid; the client
  then forwards SIGINT, SIGTERM and SIGHUP to it and sends "go", which releases the child. The
  child takes the streams as its 0, 1 and 2, the folder, umask and environment, default signal
  handlers and a new logging setup, runs the ``libre`` typer app with argv and exits as that
  process would; the runner sends its exit status (128 + N when signal N killed it).
* A command is never lost: until the client has sent "go" it can fall back, and does so on any
  refusal or error, running the command in its own process as before. A child whose client
  goes away first is sent SIGTERM, as the command would have been.
* A request is refused, so the command runs in its own process, when what a fresh process
  reads at import would differ: environment variables Prefect, the project, Great
  Expectations, Python or the BLAS libraries read (:data:`ENV_PREFIXES`, :data:`ENV_NAMES`),
  Prefect settings files in the working folder, or another Python. When the project's code or
  Prefect's profiles changed since the runner started (:func:`fingerprint`), it refuses, says
  so once and retires: it removes its socket, lets its children finish and exits.
* It exits as well, the same way, when the local server it was started for is gone, and on
  SIGTERM after sending SIGTERM to its children. ``LIBRE_SERVER=embedded`` uses no runner.

``LIBRE_HOME`` holds ``warm.sock``, ``warm.json`` (pid, socket, start time, server pid, log),
``warm.log`` and the start lock. Linux and macOS (``fork``, ``send_fds``).
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "COMMANDS",
    "ENV_NAMES",
    "ENV_PREFIXES",
    "RunnerState",
    "fingerprint",
    "refusal",
    "run",
    "running",
    "socket_path",
    "start",
    "state_file",
    "stop",
]

MODULE = "libre_flows.flows.warm_runner"
"""How the runner is started (``python -m MODULE <server pid>``) and recognised."""
COMMANDS = frozenset({"train", "validate", "score", "notify", "report"})
"""The ``libre`` commands the runner serves (``server`` and ``serve`` run in their own process)."""
ENV_PREFIXES = (
    "PREFECT_",
    "LIBRE_",
    "GX_",
    "PYTHON",
    "NUMBA_",
    "OMP_",
    "OPENBLAS_",
    "MKL_",
    "OTEL_",
)
ENV_NAMES = ("HOME", "DO_NOT_TRACK", "LANG", "LC_ALL", "LC_CTYPE", "TZ")
"""The environment a request must share with the runner (read at import, or decisive)."""
_ENV_IGNORED = ("LIBRE_SERVER",)  # read when a command runs; `embedded` never reaches a runner
_SETTINGS_FILES = ("prefect.toml", ".env", "pyproject.toml")  # Prefect reads them in the cwd
_FORWARDED = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
START_TIMEOUT_S = 120.0
CONNECT_TIMEOUT_S = 10.0
REQUEST_TIMEOUT_S = 2.0
POLL_S = 1.0


@dataclass(frozen=True)
class RunnerState:
    """What :func:`state_file` records about the running runner."""

    pid: int
    socket: str
    started: float
    server_pid: int
    log: str


def _home() -> Path:
    from libre_flows.flows.local_server import libre_home

    return libre_home()


def socket_path() -> Path:
    """``<LIBRE_HOME>/warm.sock``: where the runner listens."""
    return _home() / "warm.sock"


def state_file() -> Path:
    """``<LIBRE_HOME>/warm.json``: the running runner's pid and socket."""
    return _home() / "warm.json"


def _log_file() -> Path:
    return _home() / "warm.log"


# --------------------------------------------------------------------------- the wire


def _send(conn: socket.socket, message: dict) -> None:
    conn.sendall(json.dumps(message).encode() + b"\n")


class _Lines:
    """JSON messages, one a line, read from a socket."""

    def __init__(self, conn: socket.socket, buffer: bytes = b"") -> None:
        self.conn, self.buffer = conn, buffer

    def next(self) -> dict:
        while b"\n" not in self.buffer:
            data = self.conn.recv(65536)
            if not data:
                raise ConnectionError("the warm runner closed the connection")
            self.buffer += data
        line, self.buffer = self.buffer.split(b"\n", 1)
        return json.loads(line)


# --------------------------------------------------------------------------- the client


def run(argv: list[str]) -> int | None:
    """Run the ``libre`` command ``argv`` in the warm runner, if one serves it.

    Parameters
    ----------
    argv : list of str
        The command line (``sys.argv``: the program, the command, its arguments).

    Returns
    -------
    int or None
        The command's exit code; None when the runner did not start it (none runs, it refused,
        or it failed before the child started): the caller runs the command itself.
    """
    if len(argv) < 2 or argv[1] not in COMMANDS or "--help" in argv:
        return None
    if (os.environ.get("LIBRE_SERVER") or "").strip().lower() == "embedded":
        return None
    debug = "--debug" in argv
    path = socket_path()
    if not path.exists():
        if debug:
            _note("not using the warm runner: none runs (`libre server start` starts one)")
        return None
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        conn.settimeout(CONNECT_TIMEOUT_S)
        try:
            conn.connect(str(path))
        except (ConnectionRefusedError, FileNotFoundError):
            _clean_stale()
            if debug:
                _note("not using the warm runner: it stopped (`libre server start` starts one)")
            return None
        request = {
            "argv": list(argv),
            "cwd": os.getcwd(),
            "env": dict(os.environ),
            "umask": _umask(),
            "executable": sys.executable,
        }
        data = json.dumps(request).encode() + b"\n"
        sent = socket.send_fds(conn, [data], [0, 1, 2])
        if sent < len(data):
            conn.sendall(data[sent:])
        lines = _Lines(conn)
        reply = lines.next()
        if "pid" not in reply:
            if reply.get("note") or debug:
                _note(reply.get("note") or f"not using the warm runner: {reply.get('refused')}")
            conn.close()
            return None
    except (OSError, ValueError) as exc:
        if debug:
            _note(f"not using the warm runner: {exc}")
        conn.close()
        return None
    return _follow(conn, lines, int(reply["pid"]))


def _follow(conn: socket.socket, lines: _Lines, pid: int) -> int | None:
    """Release the child, forward signals to it, and return its exit status."""

    forwarded: list[int] = []

    def forward(signum, frame) -> None:
        forwarded.append(signum)
        with contextlib.suppress(OSError):
            os.kill(pid, signum)

    previous = {sig: signal.signal(sig, forward) for sig in _FORWARDED}
    try:
        try:
            conn.sendall(b"g")
        except OSError:  # the runner is gone: the child exits without running
            return None
        conn.settimeout(None)
        try:
            ended = lines.next()
            code = int(ended["exit"])
            if ended.get("signal") and not forwarded:
                _note(killed(int(ended["signal"]), pid))
            return code
        except (OSError, ValueError, KeyError):
            _wait_gone(pid)
            _note(
                f"error: the warm runner stopped while it ran the command (pid {pid}), so its "
                f"exit status is unknown: see {_log_file()}"
            )
            return 1
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        conn.close()


def killed(signum: int, pid: int) -> str:
    """What the client says when a signal it did not forward killed the command (the runner
    reports the signal): the shell prints nothing, since the client itself was not killed."""
    try:
        name = signal.Signals(signum).name
    except ValueError:
        name = f"signal {signum}"
    cause = " (the out-of-memory killer sends it, or kill -9)" if signum == signal.SIGKILL else ""
    return (
        f"error: the command was killed by {name}{cause} while it ran in the warm runner (pid "
        f"{pid}); what it printed last is how far it got. Run it again: the stages it finished "
        "are cached."
    )


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _note(message: str) -> None:
    if not message.startswith("error:"):
        message = f"note: {message}"
    print(message, file=sys.stderr, flush=True)


def _wait_gone(pid: int) -> None:
    while True:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        except OSError:
            return
        time.sleep(0.2)


def _read_state() -> RunnerState | None:
    try:
        return RunnerState(**json.loads(state_file().read_text(encoding="utf-8")))
    except (OSError, ValueError, TypeError):
        return None


def _clean_stale() -> None:
    """Remove the socket and state file of a runner that is gone."""
    from libre_flows.flows.local_server import _is_ours

    state = _read_state()
    if state is not None and _is_ours(state.pid, MODULE):
        return  # alive, though not answering: leave it to `libre server stop`
    with contextlib.suppress(FileNotFoundError):
        socket_path().unlink()
    if state is not None:
        _remove_state(state.pid)


def _remove_state(pid: int) -> None:
    state = _read_state()
    if state is not None and state.pid == pid:
        with contextlib.suppress(FileNotFoundError):
            state_file().unlink()


# --------------------------------------------------------------------------- lifecycle


def _ping(path: str | Path, timeout: float = 2.0) -> dict | None:
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
            conn.settimeout(timeout)
            conn.connect(str(path))
            _send(conn, {"ping": True})
            return _Lines(conn).next()
    except (OSError, ValueError):
        return None


def running() -> RunnerState | None:
    """The runner if it runs and answers, else None (a stale socket or state file is removed).

    Returns
    -------
    RunnerState or None
    """
    from libre_flows.flows.local_server import _is_ours

    state = _read_state()
    if state is None or not _is_ours(state.pid, MODULE):
        _clean_stale()
        return None
    answer = _ping(state.socket)
    return state if answer is not None and answer.get("pid") == state.pid else None


def start(timeout: float = START_TIMEOUT_S) -> RunnerState | None:
    """Start the runner for the running local server (or return the one running) and wait
    until it answers.

    Parameters
    ----------
    timeout : float
        Seconds to wait for the runner's imports and socket.

    Returns
    -------
    RunnerState or None
        The running runner; None with ``LIBRE_SERVER=embedded`` (commands use no runner).

    Raises
    ------
    RuntimeError
        No local server runs, or the runner exited or did not answer within ``timeout`` (the
        message names its log).
    """
    from libre_flows.flows import local_server

    if local_server.mode() == "embedded":
        return None
    with local_server.start_lock("warm.lock"):
        state = running()
        if state is not None:
            return state
        server = local_server.running()
        if server is None:
            raise RuntimeError("No local Prefect server runs: start it with `libre server start`.")
        stuck = _read_state()
        if stuck is not None and local_server._is_ours(stuck.pid, MODULE):  # alive, silent
            local_server._terminate(stuck.pid, module=MODULE)
            _remove_state(stuck.pid)
        log = _log_file()
        env = dict(os.environ)
        env.pop(local_server._GUARD_TOKEN, None)
        with open(log, "ab") as out:
            process = subprocess.Popen(
                [sys.executable, "-m", MODULE, str(server.pid)],
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                env=env,
                cwd=_home(),  # no Prefect settings files of the starting folder
                start_new_session=True,
            )

        def ready() -> RunnerState | None:
            state = _read_state()
            if state is not None and state.pid == process.pid and _ping(state.socket):
                return state
            return None

        return local_server.await_ready(
            process, ready, "The warm runner", log, timeout, module=MODULE, poll=0.1
        )


def stop(grace: float = 10.0) -> RunnerState | None:
    """Stop the runner (SIGTERM, which it sends on to the commands it runs; SIGKILL after
    ``grace`` seconds).

    Returns
    -------
    RunnerState or None
        The runner that was stopped, None if none was running.
    """
    from libre_flows.flows import local_server

    state = _read_state()
    alive = state is not None and local_server._is_ours(state.pid, MODULE)
    if alive:
        local_server._terminate(state.pid, grace, module=MODULE)
    _clean_stale()
    return state if alive else None


# --------------------------------------------------------------------------- the runner


def _package_roots() -> list[Path]:
    import importlib.util

    roots = []
    for name in ("libre_lib", "libre_flows.flows", "libre_flows.tasks"):
        found = importlib.util.find_spec(name)
        if found is not None and found.submodule_search_locations:
            roots += [Path(p) for p in found.submodule_search_locations]
    return roots


def fingerprint(roots: list[Path] | None = None, profiles: Path | None = None) -> str:
    """What the runner's imports depend on: the package version, the newest mtime and the
    number of the project's ``.py`` files, and the mtime of Prefect's profiles file.

    Parameters
    ----------
    roots : list of Path, optional
        The folders to scan; default: those of ``libre_lib``, ``libre_flows.flows`` and
        ``libre_flows.tasks``.
    profiles : Path, optional
        Prefect's profiles file (``PREFECT_PROFILES_PATH``).

    Returns
    -------
    str
    """
    from importlib.metadata import PackageNotFoundError, version

    try:
        parts = [version("libre-flows")]
    except PackageNotFoundError:
        parts = ["?"]
    newest, count = 0, 0
    for root in _package_roots() if roots is None else roots:
        for folder, _, names in os.walk(root):
            for name in names:
                if name.endswith(".py"):
                    with contextlib.suppress(OSError):
                        newest = max(newest, os.stat(os.path.join(folder, name)).st_mtime_ns)
                        count += 1
    parts += [str(newest), str(count)]
    if profiles is not None:
        try:
            parts.append(str(profiles.stat().st_mtime_ns))
        except OSError:
            parts.append("-")
    return ":".join(parts)


def _significant(env: dict) -> dict:
    return {
        k: v
        for k, v in env.items()
        if (k.startswith(ENV_PREFIXES) or k in ENV_NAMES) and k not in _ENV_IGNORED
    }


def _settings_files(folder: str) -> dict:
    """The Prefect settings files in ``folder`` (pyproject.toml only with a tool.prefect table),
    by name and content."""
    found = {}
    for name in _SETTINGS_FILES:
        try:
            text = (Path(folder) / name).read_bytes()
        except OSError:
            continue
        if name != "pyproject.toml" or b"tool.prefect" in text:
            found[name] = text
    return found


def refusal(request: dict, env: dict, cwd_files: dict) -> str | None:
    """Why a fresh process for ``request`` would differ from a child of the runner, or None.

    Parameters
    ----------
    request : dict
        The client's request (``env``, ``cwd``, ``executable``).
    env : dict
        The runner's environment when it imported its modules.
    cwd_files : dict
        :func:`_settings_files` of the runner's working folder.

    Returns
    -------
    str or None
        One line naming the difference.
    """
    if request.get("executable") != sys.executable:
        return f"another Python ({request.get('executable')}, the runner's is {sys.executable})"
    theirs, ours = _significant(request.get("env") or {}), _significant(env)
    differing = sorted(k for k in theirs.keys() | ours.keys() if theirs.get(k) != ours.get(k))
    if differing:
        return f"the environment differs from the runner's in {', '.join(differing[:3])}"
    if _settings_files(request.get("cwd") or ".") != cwd_files:
        return "Prefect settings files (prefect.toml, .env, pyproject.toml) in the working folder"
    return None
