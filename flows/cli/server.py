"""``libre server``: the local Prefect server every later command reuses.

libre server start [--port N]
libre server status
libre server stop

Mounted by ``libre_flows.flows.cli`` as ``app.add_typer(server_app, name="server")``. See
``libre_flows.flows.local_server``.
"""

from __future__ import annotations

import time
from typing import Annotated

import typer

from libre_flows.flows.cli.common import Debug, console, fail

server_app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    help="Start, stop or show the local Prefect server that every later command reuses.",
)


def _describe(state) -> str:
    minutes = (time.time() - state.started) / 60
    return f"{state.url} (pid {state.pid}, up {minutes:.0f} min; log {state.log})"


@server_app.command("start")
def start(
    port: Annotated[
        int | None, typer.Option("--port", min=1, max=65535, help="Port (default: any free).")
    ] = None,
    debug: Debug = False,
) -> None:
    """Start the local server in the background (once); later commands use it."""
    from libre_flows.flows import local_server

    try:
        state = local_server.running()
        if state is not None:
            console.print(f"already running: {_describe(state)}", soft_wrap=True)
            return
        with console.status("starting the local Prefect server"):
            state = local_server.start(port=port)
    except Exception as exc:
        fail(exc, debug)
        return
    console.print(f"[green]started[/] {_describe(state)}", soft_wrap=True)
    console.print(f"UI and API: {state.url}  (stop it with `libre server stop`)")


@server_app.command("status")
def status(debug: Debug = False) -> None:
    """Whether the local server runs, and where; exit code 1 if it does not."""
    from libre_flows.flows import local_server

    state = local_server.running()
    if state is None:
        console.print(
            "not running: commands start a temporary Prefect server each "
            "(`libre server start` to reuse one)",
            soft_wrap=True,
        )
        raise typer.Exit(code=1)
    console.print(f"running: {_describe(state)}", soft_wrap=True)


@server_app.command("stop")
def stop(debug: Debug = False) -> None:
    """Stop the local server."""
    from libre_flows.flows import local_server

    try:
        state = local_server.stop()
    except Exception as exc:
        fail(exc, debug)
        return
    if state is None:
        console.print("not running")
    else:
        console.print(f"stopped the server on {state.url} (pid {state.pid})")
