"""Flow-run heartbeats that stop the moment the run ends.

Prefect's flow engine sends a heartbeat event (``prefect.flow-run.heartbeat``, which the
crash detection of ``libre_flows.flows.crash_detection`` listens to) every
``PREFECT_FLOWS_HEARTBEAT_FREQUENCY`` seconds from a thread that sleeps in steps of a whole
second, and joins that thread when the run ends: every flow run waits up to a second at its end
(0.85 s of a 1.4 s ``libre score``). :func:`install` puts in the engine's place a context manager
that sends the same events from a thread that wakes as soon as the run ends.

It is installed only where Prefect's function has the shape it was written against (its
parameters and the engine methods it calls); otherwise Prefect's own is kept, heartbeats
included. ``tests/flows/test_heartbeats.py`` checks that it is installed with the Prefect this
project pins, and what it sends.
"""

from __future__ import annotations

import contextlib
import contextvars
import inspect
import threading
from collections.abc import Iterator

__all__ = ["install", "prompt_heartbeats"]

_ENGINE_NEEDS = ("heartbeat_seconds", "_build_heartbeat_event_template", "_emit_flow_run_heartbeat")


@contextlib.contextmanager
def prompt_heartbeats(engine, join_on_exit: bool = True) -> Iterator[None]:
    """Send ``engine``'s flow-run heartbeats while the block runs (as Prefect's
    ``_send_heartbeats``: the first at once, then every ``engine.heartbeat_seconds``, none once
    the run is in an end state), and stop the thread as soon as the block ends.

    Parameters
    ----------
    engine : prefect.flow_engine.FlowRunEngine
        The engine of the flow run.
    join_on_exit : bool, default=True
        Wait for the thread to stop (Prefect's async engine passes False).
    """
    seconds = engine.heartbeat_seconds
    if seconds is None:
        yield
        return
    resource, related = engine._build_heartbeat_event_template()
    stop = threading.Event()

    def beat() -> None:
        while not stop.is_set():
            run = engine.flow_run
            if run is not None and run.state is not None and run.state.is_final():
                return
            try:
                engine._emit_flow_run_heartbeat(resource, related)
            except Exception:
                engine.logger.debug("Failed to emit heartbeat", exc_info=True)
            stop.wait(seconds)

    # the context (settings, API URL) of the run, as Prefect's thread gets it
    context = contextvars.copy_context()
    thread = threading.Thread(
        target=context.run, args=(beat,), daemon=True, name="libre-heartbeats"
    )
    thread.start()
    try:
        yield
    finally:
        stop.set()
        if join_on_exit:
            thread.join(timeout=2)


def install() -> bool:
    """Use :func:`prompt_heartbeats` for every flow run of this process, if Prefect's
    ``flow_engine._send_heartbeats`` has the expected shape; True when it is in use."""
    from prefect import flow_engine

    current = getattr(flow_engine, "_send_heartbeats", None)
    if current is prompt_heartbeats:
        return True
    engine = getattr(flow_engine, "FlowRunEngine", None)
    try:
        parameters = list(inspect.signature(current).parameters)
    except (TypeError, ValueError):
        return False
    if parameters != ["engine", "join_on_exit"] or engine is None:
        return False
    if not all(hasattr(engine, name) for name in _ENGINE_NEEDS):
        return False
    flow_engine._send_heartbeats = prompt_heartbeats
    return True
