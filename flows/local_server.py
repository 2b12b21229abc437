"""A local Prefect server started once and reused by every later ``libre`` command.

Without ``PREFECT_API_URL`` every command used to start Prefect's temporary server and stop it
at exit: 10-20 s per command, whatever the work. ``libre server start`` runs one Prefect server
(the API, its services and the UI) in the background instead; every later ``train``,
``validate``, ``score``, ``notify`` and ``serve`` finds it through a state file and talks to it,
so their flows are the same Prefect flows, recorded in the same database, without the start.

* The server process is ``python -m libre_flows.flows.local_server <port>``: it binds
  127.0.0.1 (any free port unless one is given), writes :func:`state_file` (url, pid, port,
  start time) and serves Prefect's app with uvicorn; on SIGTERM or SIGINT it stops and removes
  the state file. It runs in its own session, so it outlives the command that started it and a
  closed terminal.
* A command uses the server while the state file names a live process of this module whose
  health endpoint answers (:func:`running`); a stale file (crashed server, reboot) is ignored
  and removed.
* ``LIBRE_SERVER`` chooses what a command does without ``PREFECT_API_URL``: ``reuse`` (the
  default) uses the local server when it runs, else the temporary one; ``auto`` also starts
  the local server in the background when none runs (the first command waits for it, later
  ones reuse it); ``embedded`` always uses the temporary server.
* A ``libre serve`` on the local server records itself in ``LIBRE_HOME/serve/<pid>.json``
  while it runs (:func:`serving`); :func:`stop` stops those first, while the server can still
  take their deployments' pause, since a serve does not follow a restarted server (another
  port) and would go on asking the old one for runs.
* ``LIBRE_HOME`` (default ``~/.libre``) holds ``server.json``, ``server.log`` and the start
  lock. The database is Prefect's own (``PREFECT_HOME``, default ``~/.prefect``), as for the
  temporary server and ``prefect server start``.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from dataclasses import asdict, dataclass
from pathlib import Path

__all__ = [
    "MODES",
    "ServerState",
    "connect",
    "libre_home",
    "mode",
    "running",
    "start",
    "state_file",
    "stop",
]

MODULE = "libre_flows.flows.local_server"
"""How the server process is started (``python -m MODULE <port>``) and recognised."""
MODES = ("reuse", "auto", "embedded")
# embedded_server.TOKEN (not imported: embedded_server imports this module): a watchdog stops
# the servers that carry it once their command is gone, so the local server must not.
_GUARD_TOKEN = "LIBRE_SERVER_GUARD"
START_TIMEOUT_S = 120.0
STOP_GRACE_S = 10.0
HEALTH_TIMEOUT_S = 2.0

# Defaults of the server process (the environment wins): no telemetry; events stored every
# second, not every 5 s, so that `libre notify`, which waits until its event is stored,
# returns sooner.
_SERVER_ENV = {
    "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
    "DO_NOT_TRACK": "1",
    "PREFECT_SERVER_SERVICES_EVENT_PERSISTER_FLUSH_INTERVAL": "1",
}


@dataclass(frozen=True)
class ServerState:
    """What :func:`state_file` records about the running server."""

    url: str
    pid: int
    port: int
    started: float
    log: str

    @property
    def api_url(self) -> str:
        return f"{self.url}/api"


def libre_home() -> Path:
    """The folder of the server's state file and log: ``LIBRE_HOME``, else ``~/.libre``."""
    return Path(os.environ.get("LIBRE_HOME") or Path.home() / ".libre").expanduser()


def state_file() -> Path:
    """``<LIBRE_HOME>/server.json``: the running server's url and pid."""
    return libre_home() / "server.json"


def mode() -> str:
    """``LIBRE_SERVER`` (``reuse``, ``auto`` or ``embedded``; default ``reuse``)."""
    from libre_lib.errors import ParameterError

    value = (os.environ.get("LIBRE_SERVER") or "reuse").strip().lower()
    if value not in MODES:
        raise ParameterError(
            f"LIBRE_SERVER={value!r} is not one of {', '.join(MODES)}: unset it to reuse a "
            "running `libre server`, or set it to auto or embedded."
        )
    return value


def _is_ours(pid: int, module: str = MODULE) -> bool:
    """Whether ``pid`` is a live process of ``module`` (``python -m module``): by default, a
    server of this module."""
    try:
        args = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except FileNotFoundError:
        return False
    except OSError:  # no /proc here: trust a live pid
        try:
            os.kill(pid, 0)
        except OSError:
            return False
        return True
    return module.encode() in args


def _healthy(url: str, timeout: float = HEALTH_TIMEOUT_S) -> bool:
    try:
        with urllib.request.urlopen(f"{url}/api/health", timeout=timeout) as response:
            return response.status == 200
    except OSError:
        return False


def _read_state() -> ServerState | None:
    try:
        return ServerState(**json.loads(state_file().read_text(encoding="utf-8")))
    except (OSError, ValueError, TypeError):
        return None


def _remove_state(pid: int) -> None:
    """Remove the state file if it still names ``pid``."""
    state = _read_state()
    if state is not None and state.pid == pid:
        with contextlib.suppress(FileNotFoundError):
            state_file().unlink()


def running(wait: float = 0.0) -> ServerState | None:
    """The local server if it runs and answers, else None (a stale state file is removed).

    Parameters
    ----------
    wait : float
        Seconds to wait for a server that is still starting (its process is alive but its API
        does not answer yet).

    Returns
    -------
    ServerState or None
    """
    deadline = time.monotonic() + wait
    while True:
        state = _read_state()
        if state is None:
            return None
        if not _is_ours(state.pid):
            _remove_state(state.pid)
            return None
        if _healthy(state.url):
            return state
        if time.monotonic() >= deadline:
            return None
        time.sleep(0.2)


@contextlib.contextmanager
def start_lock(name: str = "server.lock"):
    """Hold the lock file ``name`` in :func:`libre_home`: one start at a time."""
    home = libre_home()
    home.mkdir(parents=True, exist_ok=True)
    with open(home / name, "a+") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def start(port: int | None = None, timeout: float = START_TIMEOUT_S) -> ServerState:
    """Start the local server in the background (or return the one running) and wait until it
    answers.

    Parameters
    ----------
    port : int, optional
        The port on 127.0.0.1; default: any free port.
    timeout : float
        Seconds to wait for the server's API.

    Returns
    -------
    ServerState
        The running server.

    Raises
    ------
    RuntimeError
        The server exited or did not answer within ``timeout`` (the message names its log).
    """
    with start_lock():  # one start at a time; a second command waits and reuses it
        state = running(wait=timeout)
        if state is not None:
            return state
        stuck = _read_state()
        if stuck is not None and _is_ours(stuck.pid):  # alive, silent for `timeout` s
            _terminate(stuck.pid)
            _remove_state(stuck.pid)
        if port:
            _check_free(port)
        log = libre_home() / "server.log"
        env = {**_SERVER_ENV, **os.environ}
        for name in ("PREFECT_API_URL", _GUARD_TOKEN):  # a server, not a client nor guarded
            env.pop(name, None)
        with open(log, "ab") as out:
            process = subprocess.Popen(
                [sys.executable, "-m", MODULE, str(port or 0)],
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                env=env,
                start_new_session=True,  # outlives this command and its terminal
            )

        def ready() -> ServerState | None:
            state = _read_state()
            if state is not None and state.pid == process.pid and _healthy(state.url):
                return state
            return None

        return await_ready(process, ready, "The local Prefect server", log, timeout)


def _check_free(port: int) -> None:
    """A one-line error when another process listens on 127.0.0.1:``port`` (the server would
    exit with "address already in use" in its log)."""
    from libre_lib.errors import ParameterError

    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as the server binds
        try:
            probe.bind(("127.0.0.1", port))
        except OSError as exc:
            raise ParameterError(
                f"Port {port} on 127.0.0.1 is not free ({exc.strerror or exc}): another process "
                "listens on it. Choose another --port, or leave --port out for any free one."
            ) from None


def await_ready(process, ready, what: str, log, timeout: float, module: str = MODULE, poll=0.2):
    """``ready()``'s first state that is not None, polled every ``poll`` seconds while the
    just started ``process`` (of ``module``) runs; it is terminated if none comes within
    ``timeout``. Raises RuntimeError naming ``what`` and its ``log`` if it exits or stays
    silent."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"{what} exited with code {process.returncode}: see {log}.")
        state = ready()
        if state is not None:
            return state
        time.sleep(poll)
    _terminate(process.pid, module=module)
    raise RuntimeError(f"{what} did not answer within {timeout:.0f} s: see {log}.")


def _terminate(pid: int, grace: float = STOP_GRACE_S, module: str = MODULE) -> None:
    """SIGTERM ``pid`` (a process of ``module``), SIGKILL after ``grace`` seconds."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        with contextlib.suppress(OSError):
            os.kill(pid, sig)
        deadline = time.monotonic() + grace
        while time.monotonic() < deadline:
            if not _is_ours(pid, module):
                return
            with contextlib.suppress(ChildProcessError):
                os.waitpid(pid, os.WNOHANG)  # reap it if this process started it
            time.sleep(0.1)


def stop(grace: float = STOP_GRACE_S) -> ServerState | None:
    """Stop the ``libre serve`` processes that serve from the local server
    (:func:`stop_serving`), then the server (SIGTERM, SIGKILL after ``grace`` seconds).

    Returns
    -------
    ServerState or None
        The server that was stopped, None if none was running.
    """
    state = _read_state()
    if state is None:
        return None
    stop_serving(state.api_url, grace)
    if _is_ours(state.pid):
        _terminate(state.pid, grace)
    _remove_state(state.pid)
    return state


SERVE_ARGUMENT = "serve"
"""The command-line word that marks a ``libre serve`` process."""


def _serve_dir() -> Path:
    return libre_home() / "serve"


@contextlib.contextmanager
def serving(api_url: str):
    """Record this process as a ``libre serve`` of the server at ``api_url`` while the block
    runs, so that :func:`stop` stops it first."""
    from libre_lib.ops.files import atomic_write_text

    folder = _serve_dir()
    folder.mkdir(parents=True, exist_ok=True)
    record = folder / f"{os.getpid()}.json"
    atomic_write_text(record, json.dumps({"pid": os.getpid(), "api_url": api_url}))
    try:
        yield
    finally:
        with contextlib.suppress(OSError):
            record.unlink()


def serve_processes(api_url: str) -> list[int]:
    """The live ``libre serve`` processes recorded as serving from ``api_url`` (the records of
    dead ones are removed)."""
    pids = []
    for record in sorted(_serve_dir().glob("*.json")):
        try:
            entry = json.loads(record.read_text(encoding="utf-8"))
            pid, url = int(entry["pid"]), str(entry["api_url"])
        except (OSError, ValueError, KeyError, TypeError):
            continue
        if not _is_ours(pid, SERVE_ARGUMENT):
            with contextlib.suppress(OSError):
                record.unlink()
        elif url == api_url:
            pids.append(pid)
    return pids


def running_flow_runs(api_url: str, timeout: float = 10.0, since: float | None = None) -> list[str]:
    """The flow runs the server at ``api_url`` holds as running or pending, each as "name
    (deployment or flow)": what stopping it cancels. Empty when the server does not answer.

    ``since``: the time (epoch seconds) the server started. A run that entered its state
    before then did not run under this server: a command killed under Prefect's temporary
    server left it Running in the shared database, and it is left out."""
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import (
        FlowRunFilter,
        FlowRunFilterState,
        FlowRunFilterStateType,
    )
    from prefect.client.schemas.objects import StateType
    from prefect.settings import PREFECT_API_URL, temporary_settings

    states = FlowRunFilterStateType(any_=[StateType.RUNNING, StateType.PENDING])
    try:
        with (
            temporary_settings({PREFECT_API_URL: api_url}),
            get_client(sync_client=True, httpx_settings={"timeout": timeout}) as client,
        ):
            runs = client.read_flow_runs(
                flow_run_filter=FlowRunFilter(state=FlowRunFilterState(type=states)), limit=50
            )
            names = {}
            for run in runs:
                if run.deployment_id is not None and run.deployment_id not in names:
                    names[run.deployment_id] = client.read_deployment(run.deployment_id).name
            return [
                f"{run.name} ({names.get(run.deployment_id, 'no deployment')})"
                for run in runs
                if run.parent_task_run_id is None  # the top-level runs, not their subflows
                and (since is None or _entered_since(run, since))
            ]
    except Exception:  # a server that does not answer: nothing to say about its runs
        return []


def _entered_since(run, since: float) -> bool:
    """Whether ``run`` entered its current state at ``since`` (epoch seconds) or later (a run
    without a state timestamp counts as recent)."""
    stamp = getattr(run.state, "timestamp", None) if run.state is not None else None
    return stamp is None or stamp.timestamp() >= since - 1.0


def stop_serving(api_url: str, grace: float = STOP_GRACE_S) -> list[int]:
    """Stop the ``libre serve`` processes of ``api_url`` (SIGTERM: they pause their
    deployments; SIGKILL after ``grace`` seconds) and return their pids."""
    pids = serve_processes(api_url)
    for pid in pids:
        _terminate(pid, grace, SERVE_ARGUMENT)
    return pids


def connect() -> str | None:
    """Point Prefect at the local server when this process has no API URL of its own.

    Call it before a command runs a flow: with ``LIBRE_SERVER=reuse`` (the default) it uses
    the local server if it runs; ``auto`` starts it first if needed; ``embedded`` (or a
    configured ``PREFECT_API_URL``) leaves Prefect's own choice.

    Returns
    -------
    str or None
        The API URL now in use, None when Prefect will start its temporary server.
    """
    if os.environ.get("PREFECT_API_URL") or mode() == "embedded":
        return None
    if "prefect.context" in sys.modules:
        from prefect.settings import get_current_settings

        if get_current_settings().api.url:  # e.g. a test harness or a profile
            return None
    state = start() if mode() == "auto" else running()
    if state is None:
        return None
    os.environ["PREFECT_API_URL"] = state.api_url
    if "prefect.context" in sys.modules:  # Prefect read its settings already: read them again
        from prefect.context import refresh_global_settings_context

        refresh_global_settings_context()
    return state.api_url


# --------------------------------------------------------------------------- the server


def serve(port: int = 0) -> None:
    """Run Prefect's server on 127.0.0.1:``port`` (0: any free port) in this process, with the
    state file written while it runs."""
    import uvicorn

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", port))
    port = sock.getsockname()[1]
    url = f"http://127.0.0.1:{port}"
    os.environ.setdefault("PREFECT_UI_API_URL", f"{url}/api")
    log = str(libre_home() / "server.log")
    state = ServerState(url=url, pid=os.getpid(), port=port, started=time.time(), log=log)
    from libre_lib.ops.files import atomic_write_text

    state_file().parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(state_file(), json.dumps(asdict(state), indent=1))
    signal.signal(signal.SIGHUP, signal.SIG_IGN)
    config = uvicorn.Config(
        "prefect.server.api.server:create_app",
        factory=True,
        log_level="warning",
        lifespan="on",
    )
    try:
        uvicorn.Server(config).run(sockets=[sock])
    finally:
        _remove_state(os.getpid())


if __name__ == "__main__":
    serve(int(sys.argv[1]) if len(sys.argv) > 1 else 0)
