"""Prefect's embedded server dies with the process that started it.

Without ``PREFECT_API_URL``, Prefect runs its API in a child process (uvicorn serving
``prefect.server.api.server:create_app``) and stops it at exit. A process killed with SIGKILL
(or ended by an unhandled SIGTERM) never gets there, and the server ran on as an orphan (10 of
14 killed training runs). Prefect starts that child itself, from whichever thread first needs
the API, so the project cannot give it a ``preexec_fn``; and ``PR_SET_PDEATHSIG`` would fire
when the starting *thread* ends, not the process.

So :func:`guard_embedded_server` puts a token in this process's environment (:data:`TOKEN`),
which every child inherits, and starts a small watchdog process
(``python -m libre_flows.flows.embedded_server <pid> <token>``, which never imports Prefect).
Every :data:`POLL_S` seconds it checks that its parent is alive and notes the parent's children
that run Prefect's server (pid and start time, from ``/proc``). Once its parent is gone (its own
parent pid changed) it finds, besides those, every process running Prefect's server that has
the token in its environment and was adopted with the watchdog (so a server started just before
the kill is found too, and one a descendant started for itself is not), sends them
SIGTERM, then SIGKILL after :data:`GRACE_S` seconds, and exits. It exits as well when its parent
ends normally, after Prefect has stopped the server. Ctrl-C and hang-ups are its parent's to
handle: it ignores SIGINT and SIGHUP.

Linux only (``/proc``); elsewhere, and when ``PREFECT_API_URL`` names a server, the guard does
nothing.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

__all__ = [
    "GRACE_S",
    "POLL_S",
    "SERVER_APP",
    "SERVER_LOG_LEVEL",
    "TOKEN",
    "guard_embedded_server",
    "guarded_servers",
    "let_record",
    "run_flow",
    "server_children",
]

SERVER_APP = "prefect.server.api.server:create_app"
"""The app Prefect's embedded server runs (how the watchdog recognises it)."""
TOKEN = "LIBRE_SERVER_GUARD"
"""The environment variable that marks the processes a watchdog guards."""
SERVER_LOG_LEVEL = "PREFECT_SERVER_LOGGING_LEVEL"
"""The level of the embedded server's own log: CRITICAL unless set (set it to see more)."""
POLL_S = 0.5
GRACE_S = 5.0

_PROC = Path("/proc")
_guarded: dict[int, subprocess.Popen] = {}  # pid of the guarded process -> its watchdog


def uses_embedded_server() -> bool:
    """Whether Prefect would start its temporary server in this process (no API URL set)."""
    from prefect.settings import get_current_settings

    return not get_current_settings().api.url


def guard_embedded_server() -> subprocess.Popen | None:
    """Start this process's watchdog (once) if Prefect would run an embedded server here.

    Returns
    -------
    subprocess.Popen or None
        The watchdog process, or None where none is needed or possible (``PREFECT_API_URL``
        is set, a local server runs (``libre_flows.flows.local_server``), or there is no
        ``/proc``).
    """
    from libre_flows.flows.local_server import connect

    if connect():  # a running local server (``libre server start``) answers instead
        return None
    pid = os.getpid()
    if pid in _guarded:
        return _guarded[pid]
    if not (_PROC / str(pid) / "task").is_dir() or not uses_embedded_server():
        return None
    token = f"{pid}-{uuid.uuid4().hex}"
    os.environ[TOKEN] = token  # before Prefect starts its server: the server inherits it
    # the temporary server stops with this process, by Ctrl-C too; its services' cancelled
    # work is not the user's error (it printed some 150 lines of tracebacks after Ctrl-C)
    os.environ.setdefault(SERVER_LOG_LEVEL, "CRITICAL")
    _detach_from_terminal()
    _guarded[pid] = subprocess.Popen(
        [sys.executable, "-m", __name__, str(pid), token],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        # a session of its own, as the server's: a kill of the command's whole process group
        # (`timeout -s KILL`, a supervisor) killed the watchdog too and left the server running
        start_new_session=True,
    )
    return _guarded[pid]


def _detach_from_terminal() -> None:
    """Start Prefect's temporary server in a session of its own, so that the terminal's Ctrl-C
    (sent to the whole foreground process group) reaches only this process. The server had
    stopped at once while the interrupted flow went on reporting to it: Prefect's client
    retried for about 4 minutes and the command ended with a ConnectError, exit code 1,
    instead of the "interrupted" line and 130. This process stops the server at exit, and
    the watchdog when it is killed. Prefect starts the server with the ``subprocess`` module
    its server module imported: that module alone gets a ``Popen`` that opens a new session."""
    import functools
    import types

    from prefect.server.api import server

    if getattr(server.subprocess, "libre_detached", False):
        return
    detached = types.ModuleType("subprocess")
    detached.__dict__.update(vars(subprocess))
    detached.Popen = functools.partial(subprocess.Popen, start_new_session=True)
    detached.libre_detached = True
    server.subprocess = detached


def run_flow(flow, *args, **kwargs):
    """Call ``flow`` (a Prefect flow) and return what it returns; with Prefect's temporary
    server, first let it record the run (:func:`let_record`), as it stops when this process
    exits."""
    if os.environ.get("PREFECT_API_URL") or not uses_embedded_server():
        return flow(*args, **kwargs)
    state = flow(*args, return_state=True, **kwargs)
    let_record(state)
    return state.result()


RECORD_TIMEOUT_S = 15.0
"""How long :func:`let_record` waits for the temporary server to record a run."""


def let_record(state, timeout: float = RECORD_TIMEOUT_S) -> bool:
    """Before Prefect stops its temporary server at exit: send this process's pending events
    and wait until the server has recorded the task runs of the run that ended in ``state``
    (and of its subflow runs) in end states, or ``timeout`` seconds passed.

    The server records task runs from their events; stopped while it writes them, it lost them
    and printed ``CancelledError`` tracebacks (a tuned training run, 4 of 4 times). A server that
    outlives the command (``PREFECT_API_URL``, a local server) records them after the command
    anyway: nothing to wait for there.

    Parameters
    ----------
    state : prefect.client.schemas.objects.State
        The end state of the flow run (``flow(..., return_state=True)``).
    timeout : float
        Seconds at most.

    Returns
    -------
    bool
        True when every task run was recorded in an end state in time.
    """
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import (
        FlowRunFilter,
        FlowRunFilterId,
        FlowRunFilterParentFlowRunId,
    )
    from prefect.events.worker import EventsWorker

    deadline = time.monotonic() + timeout
    EventsWorker.drain_all(timeout=timeout, at_exit=False)
    root = state.state_details.flow_run_id
    if root is None:
        return False
    previous = None
    with get_client(sync_client=True) as client:
        children = client.read_flow_runs(
            flow_run_filter=FlowRunFilter(
                parent_flow_run_id=FlowRunFilterParentFlowRunId(any_=[root])
            )
        )
        runs = FlowRunFilter(id=FlowRunFilterId(any_=[root, *(run.id for run in children)]))
        while time.monotonic() < deadline:
            found, offset = [], 0
            while batch := client.read_task_runs(flow_run_filter=runs, offset=offset, limit=200):
                found += [(str(run.id), run.state_type) for run in batch]
                offset += len(batch)
            snapshot = sorted(found, key=str)
            done = all(kind is not None and kind.value in _END_STATES for _, kind in snapshot)
            if done and snapshot == previous:  # in end states, and nothing new for a poll
                return True
            previous = snapshot
            time.sleep(0.25)
    return False


_END_STATES = {"COMPLETED", "FAILED", "CANCELLED", "CRASHED"}


# --------------------------------------------------------------------------- the watchdog


def _stat(pid: int) -> list[str] | None:
    """The fields of ``/proc/<pid>/stat`` after the command name (state first); None once
    the process has ended (gone, or a zombie waiting to be reaped)."""
    try:
        fields = (_PROC / str(pid) / "stat").read_text().rsplit(")", 1)[-1].split()
    except OSError:
        return None
    return None if fields[0] in ("Z", "X") else fields


def _start_time(pid: int) -> str | None:
    """The start time of ``pid`` (field 22 of its stat), None once it has ended."""
    fields = _stat(pid)
    return None if fields is None else fields[19]


def _children(parent: int) -> set[int]:
    """The pids of ``parent``'s children (every thread's, from ``/proc``)."""
    pids: set[int] = set()
    with contextlib.suppress(OSError):
        for task in (_PROC / str(parent) / "task").iterdir():
            with contextlib.suppress(OSError):
                pids.update(int(p) for p in (task / "children").read_text().split())
    return pids


def _runs_server(pid: int) -> bool:
    try:
        args = (_PROC / str(pid) / "cmdline").read_bytes().split(b"\0")
    except OSError:
        return False
    return SERVER_APP.encode() in args


def _has_token(pid: int, token: str) -> bool:
    try:
        environ = (_PROC / str(pid) / "environ").read_bytes().split(b"\0")
    except OSError:  # gone, or another user's
        return False
    return f"{TOKEN}={token}".encode() in environ


def guarded_servers(token: str, adopted_by: int) -> dict[int, str]:
    """The processes running Prefect's server with ``token`` in their environment whose
    parent is ``adopted_by``.

    Parameters
    ----------
    token : str
        The value of :data:`TOKEN` a guarded process put in its environment.
    adopted_by : int
        The process that adopted the guarded process's children when it died (the
        watchdog's new parent): servers that descendants of the guarded process started for
        themselves, which inherited the token too, are left alone.

    Returns
    -------
    dict of int to str
        Each server's pid and its start time.
    """
    found = {}
    for entry in _PROC.iterdir():
        if not (entry.name.isdigit() and _has_token(pid := int(entry.name), token)):
            continue
        fields = _stat(pid)
        if fields is not None and int(fields[1]) == adopted_by and _runs_server(pid):
            found[pid] = fields[19]
    return found


def server_children(parent: int) -> dict[int, str]:
    """The children of ``parent`` that run Prefect's server: pid -> start time.

    Parameters
    ----------
    parent : int
        A process id.

    Returns
    -------
    dict of int to str
        Each server's pid and its start time (tells the process apart from a later one that
        reuses the pid).
    """
    found = {}
    for pid in _children(parent):
        started = _start_time(pid)
        if started is not None and _runs_server(pid):
            found[pid] = started
    return found


def _stop(servers: dict[int, str]) -> None:
    """SIGTERM the servers still running, SIGKILL those left after the grace period."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        live = {pid for pid, started in servers.items() if _start_time(pid) == started}
        for pid in live:
            with contextlib.suppress(OSError):
                os.kill(pid, sig)
        deadline = time.monotonic() + GRACE_S
        while live and time.monotonic() < deadline:
            time.sleep(0.1)
            live = {pid for pid in live if _start_time(pid) == servers[pid]}
        if not live:
            return


def watch(parent: int, token: str) -> None:
    """Note ``parent``'s server children until ``parent`` is gone, then stop them and every
    server started with ``token``."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGHUP, signal.SIG_IGN)
    servers: dict[int, str] = {}
    while os.getppid() == parent:
        servers.update(server_children(parent))
        time.sleep(POLL_S)
    _stop({**servers, **guarded_servers(token, adopted_by=os.getppid())})


if __name__ == "__main__":
    watch(int(sys.argv[1]), sys.argv[2])
