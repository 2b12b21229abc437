"""The warm runner's process: a fork server whose imports are done (see
``libre_flows.flows.warm`` for the design, the client and the runner's lifecycle).

``python -m libre_flows.flows.warm_runner <server pid>`` imports Prefect, the project's flows
and Great Expectations once, then serves requests until its local server is gone; each forked
child runs one ``libre`` command. Kept apart from ``warm`` because the child runs the ``libre``
typer app, whose ``main`` calls the client in ``warm``.
"""

from __future__ import annotations

import contextlib
import json
import os
import selectors
import signal
import socket
import sys
import threading
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from libre_flows.flows.warm import (
    COMMANDS,
    POLL_S,
    REQUEST_TIMEOUT_S,
    RunnerState,
    _Lines,
    _log_file,
    _ping,
    _remove_state,
    _send,
    _settings_files,
    fingerprint,
    refusal,
    socket_path,
    state_file,
)


@dataclass
class _Child:
    pid: int
    command: str
    conn: socket.socket | None
    gate: int | None  # write end of the pipe the child waits on for "go"
    started: float = field(default_factory=time.monotonic)


class _Runner:
    """The fork server's state and loop (see the module docstring)."""

    def __init__(self, server_pid: int) -> None:
        self.pid = os.getpid()
        self.server_pid = server_pid
        self.env = dict(os.environ)
        self.cwd_files = _settings_files(os.getcwd())
        self.profiles = _profiles_path()
        self.fingerprint = fingerprint(profiles=self.profiles)
        self.children: dict[int, _Child] = {}
        self.retiring: str | None = None  # why it stopped accepting
        self.terminate = False
        self.told_stale = False
        self.path = socket_path()
        self.listener = self._bind()
        self.wake_r, self.wake_w = os.pipe()
        for fd in (self.wake_r, self.wake_w):
            os.set_blocking(fd, False)
        signal.set_wakeup_fd(self.wake_w, warn_on_full_buffer=False)
        signal.signal(signal.SIGCHLD, lambda *_: None)  # wakes the loop through the pipe
        signal.signal(signal.SIGTERM, self._on_stop)
        signal.signal(signal.SIGINT, self._on_stop)
        signal.signal(signal.SIGHUP, signal.SIG_IGN)
        self.selector = selectors.DefaultSelector()
        self.selector.register(self.listener, selectors.EVENT_READ)
        self.selector.register(self.wake_r, selectors.EVENT_READ)
        state = RunnerState(
            pid=self.pid,
            socket=str(self.path),
            started=time.time(),
            server_pid=server_pid,
            log=str(_log_file()),
        )
        from libre_lib.ops.files import atomic_write_text

        atomic_write_text(state_file(), json.dumps(asdict(state), indent=1))

    def _bind(self) -> socket.socket:
        if self.path.exists():
            if _ping(self.path) is not None:
                raise RuntimeError(f"A warm runner already listens on {self.path}.")
            self.path.unlink()
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        mask = os.umask(0o177)  # the socket is created 0600
        try:
            listener.bind(str(self.path))
        finally:
            os.umask(mask)
        os.chmod(self.path, 0o600)
        listener.listen(64)
        listener.setblocking(False)
        return listener

    def _on_stop(self, signum, frame) -> None:
        self.terminate = True

    def _log(self, message: str) -> None:
        print(f"{time.strftime('%Y-%m-%d %H:%M:%S')} {message}", flush=True)

    # ------------------------------------------------------------------ the loop

    def serve(self) -> dict | None:
        """Serve until stopped; in a forked child, return its request instead."""
        self._log(f"warm runner {self.pid} listening on {self.path}")
        try:
            while not self._finished():
                for key, _ in self.selector.select(POLL_S):
                    if key.fileobj is self.listener:
                        request = self._accept()
                        if request is not None:  # this is the child
                            return request
                    elif key.fileobj == self.wake_r:
                        with contextlib.suppress(OSError):
                            while os.read(self.wake_r, 512):
                                pass
                    else:
                        self._from_client(key.fileobj, key.data)
                self._reap()
        finally:
            if os.getpid() == self.pid:
                self._close()
        return None

    def _finished(self) -> bool:
        if self.retiring is None:
            if self.terminate:
                self.retiring = "stopped"
            elif not _server_alive(self.server_pid):
                self.retiring = f"the local Prefect server (pid {self.server_pid}) is gone"
        if self.retiring is None:
            return False
        if self.listener.fileno() >= 0:
            self._log(f"retiring: {self.retiring}")
            self.selector.unregister(self.listener)
            self.listener.close()
            self._unlink()
        if self.terminate:
            for child in self.children.values():
                with contextlib.suppress(OSError):
                    os.kill(child.pid, signal.SIGTERM)
        return not self.children

    def _unlink(self) -> None:
        with contextlib.suppress(FileNotFoundError):
            self.path.unlink()
        _remove_state(self.pid)

    def _close(self) -> None:
        self._unlink()
        self._log(f"warm runner {self.pid} stopped")

    # ------------------------------------------------------------------ requests

    def _accept(self) -> dict | None:
        try:
            conn, _ = self.listener.accept()
        except OSError:
            return None
        fds: list[int] = []
        try:
            conn.settimeout(REQUEST_TIMEOUT_S)
            data, fds, _, _ = socket.recv_fds(conn, 65536, 3)
            request = _Lines(conn, data).next()
            if request.get("ping"):
                _send(conn, {"pid": self.pid, "running": len(self.children)})
                conn.close()
                return None
            reason = self._refusal(request, fds)
            if reason is not None:
                note = None
                if self.retiring and not self.told_stale:
                    self.told_stale, note = True, reason
                _send(conn, {"refused": reason, "note": note})
                conn.close()
                return None
            return self._fork(conn, request, fds)
        except Exception as exc:  # a bad request never stops the runner
            self._log(f"request dropped: {exc!r}")
            conn.close()
            return None
        finally:
            if os.getpid() == self.pid:
                for fd in fds:
                    with contextlib.suppress(OSError):
                        os.close(fd)

    def _refusal(self, request: dict, fds: list[int]) -> str | None:
        if self.retiring:
            return f"the warm runner is stopping ({self.retiring})"
        argv = request.get("argv") or []
        if len(argv) < 2 or argv[1] not in COMMANDS:
            return "not a command the warm runner serves"
        if len(fds) != 3:
            return "the request came without its standard streams"
        if threading.active_count() != 1:
            return "the warm runner has threads, so it cannot fork"
        if fingerprint(profiles=self.profiles) != self.fingerprint:
            self.retiring = (
                "the project's code or Prefect's profiles changed since the warm runner "
                "started, so commands run in their own process until `libre server start` "
                "starts it again"
            )
            return self.retiring
        return refusal(request, self.env, self.cwd_files)

    def _fork(self, conn: socket.socket, request: dict, fds: list[int]) -> dict | None:
        sys.stdout.flush()
        sys.stderr.flush()
        gate_r, gate_w = os.pipe()
        pid = os.fork()
        if pid == 0:
            try:
                os.close(gate_w)
                self._become_child(conn, request, fds, gate_r)
            except BaseException:
                os._exit(1)
            return request
        os.close(gate_r)
        command = request["argv"][1]
        self.children[pid] = _Child(pid, command, conn, gate_w)
        self._log(f"pid {pid}: libre {command}")
        try:
            _send(conn, {"pid": pid})
        except OSError:  # the client is gone: the child sees the gate close and exits
            self._drop(self.children[pid])
            return None
        conn.setblocking(False)
        self.selector.register(conn, selectors.EVENT_READ, self.children[pid])
        return None

    def _become_child(self, conn, request: dict, fds: list[int], gate: int) -> None:
        """In the forked child: leave the runner, wait for "go", become the command's process."""
        signal.set_wakeup_fd(-1)
        for sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGCHLD):
            signal.signal(sig, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        self.selector.close()
        for sock in (self.listener, conn, *(c.conn for c in self.children.values() if c.conn)):
            sock.close()
        for fd in (self.wake_r, self.wake_w, *(c.gate for c in self.children.values())):
            if fd is not None:
                with contextlib.suppress(OSError):
                    os.close(fd)
        try:
            go = os.read(gate, 1)
        except KeyboardInterrupt:
            os._exit(128 + signal.SIGINT)
        if go != b"g":
            os._exit(0)  # the client went away before it started: nothing ran
        os.close(gate)
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
        for fd in fds:
            if fd > 2:
                os.close(fd)
        try:
            os.chdir(request["cwd"])
            os.umask(int(request["umask"]))
            os.environ.clear()
            os.environ.update(request["env"])
            sys.argv = list(request["argv"])
            sys.stdout.reconfigure(line_buffering=sys.stdout.isatty())
            if "numpy" in sys.modules:  # as a fresh process: its own global random state
                sys.modules["numpy"].random.seed()
            from prefect.logging.configuration import setup_logging

            setup_logging(incremental=False)  # handlers on these streams (colour for a tty)
        except Exception as exc:
            print(f"error: the warm runner could not start the command: {exc}", file=sys.stderr)
            sys.stderr.flush()
            os._exit(1)

    def _from_client(self, conn: socket.socket, child: _Child) -> None:
        try:
            data = conn.recv(16)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        if child.gate is not None:  # waiting for "go"
            if data.startswith(b"g"):
                with contextlib.suppress(OSError):
                    os.write(child.gate, b"g")
            os.close(child.gate)
            child.gate = None
            if data:
                return
        if not data:  # the client is gone: stop its command, as its death would have
            if child.pid in self.children:
                with contextlib.suppress(OSError):
                    os.kill(child.pid, signal.SIGTERM)
            self._drop(child)

    def _drop(self, child: _Child) -> None:
        if child.gate is not None:
            with contextlib.suppress(OSError):
                os.close(child.gate)
            child.gate = None
        if child.conn is not None:
            with contextlib.suppress(KeyError, ValueError):
                self.selector.unregister(child.conn)
            child.conn.close()
            child.conn = None

    def _reap(self) -> None:
        while True:
            try:
                pid, status, usage = os.wait4(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            child = self.children.pop(pid, None)
            if child is None:
                continue
            code = os.waitstatus_to_exitcode(status)
            code = 128 - code if code < 0 else code
            seconds = time.monotonic() - child.started
            cpu = usage.ru_utime + usage.ru_stime
            self._log(
                f"pid {pid}: libre {child.command} exited {code} after {seconds:.2f} s "
                f"(cpu {cpu:.2f} s)"
            )
            if child.conn is not None:
                with contextlib.suppress(OSError):
                    child.conn.setblocking(True)
                    child.conn.settimeout(REQUEST_TIMEOUT_S)
                    ended = {"exit": code}
                    if os.WIFSIGNALED(status):  # killed, not an exit code above 128 it chose
                        ended["signal"] = os.WTERMSIG(status)
                    _send(child.conn, ended)
            self._drop(child)


def _server_alive(pid: int) -> bool:
    from libre_flows.flows.local_server import _is_ours

    return _is_ours(pid)


def _profiles_path() -> Path | None:
    try:
        from prefect.settings import get_current_settings

        return Path(get_current_settings().profiles_path)
    except Exception:
        return None


_PRELOAD = (
    "libre_flows.flows.deploy",
    "libre_flows.flows.events",
    "libre_flows.flows.score",
    "libre_flows.flows.train",
    "libre_flows.flows.validate",
    # the numba kernels of the learners (their compiled code is cached on disk)
    "libre_lib.discretization",
    "libre_lib.ensemble",
    "libre_lib.selection.cover",
    "libre_lib.weak_learner.boundary",
    "libre_lib.weak_learner.cells",
    # what a flow run imports when it starts, and the scoring and reporting stack
    "fastapi",
    "prefect.engine",
    "prefect.flow_engine",
    "prefect.task_engine",
    "prefect.concurrency.sync",
    "prefect.telemetry.run_telemetry",
    "prefect.utilities.visualization",
    "pyarrow.csv",
    "pyarrow.dataset",
    "pyarrow.pandas_compat",
    "rich.markdown",
    "rich.status",
)
"""Modules the runner imports before it serves. Not ``libre_flows.flows.cli`` nor typer: their
consoles and options read the terminal and the environment at import, so each child imports
them (0.1 s)."""


def _preload() -> None:
    """Import what the commands need: Prefect, the project's flows, and Great Expectations."""
    import importlib

    for name in _PRELOAD:
        importlib.import_module(name)
    from libre_lib.ops.validation import _import_gx

    _import_gx()


def main(server_pid: int) -> None:
    """The runner process: import, serve; a forked child runs its command and exits with it."""
    _preload()
    if threading.active_count() != 1:
        names = ", ".join(t.name for t in threading.enumerate())
        raise SystemExit(f"error: the warm runner cannot fork with threads running ({names})")
    request = _Runner(server_pid).serve()
    if request is None:
        return
    from libre_flows.flows.cli import app
    from libre_flows.flows.cli.common import as_console_command, run_console

    as_console_command()
    run_console(lambda: app(prog_name="libre"))  # exits with the command's code, as `libre`
    # does (and its usage lines name `libre`, not the runner's module)


if __name__ == "__main__":
    main(int(sys.argv[1]))
