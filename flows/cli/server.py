"""``libre server``: the local Prefect server every later command reuses.

libre server start [--port N] [--no-warm]
libre server status
libre server stop

``start`` also starts the warm command runner (``libre_flows.flows.warm``) next to the server
unless ``--no-warm``, and makes sure the server marks the runs of killed commands Crashed
(``libre_flows.flows.crash_detection``); ``stop`` stops both. Mounted by
``libre_flows.flows.cli`` as ``app.add_typer(server_app, name="server")``. See
``libre_flows.flows.local_server``.
"""

from __future__ import annotations

import time
from typing import Annotated

import typer
from rich.markup import escape

from libre_flows.flows.cli.common import Debug, console, ensure_crash_detection, errors, fail

server_app = typer.Typer(
    add_completion=False,
    rich_markup_mode="markdown",
    no_args_is_help=True,
    help="Start, stop or show the local Prefect server that every later command reuses.",
)


def _describe(state) -> str:
    minutes = (time.time() - state.started) / 60
    return f"{state.url} (pid {state.pid}, up {minutes:.0f} min; log {state.log})"


def _prefect_hint(state) -> None:
    """``libre`` commands find the local server by themselves; ``prefect``'s own commands
    (work pools, workers, ``flow-run ls``) need its address, else each starts a temporary
    server of its own."""
    console.print(f"prefect's own commands: export PREFECT_API_URL={state.api_url}", soft_wrap=True)


def _describe_runner(state) -> str:
    minutes = (time.time() - state.started) / 60
    return f"pid {state.pid}, up {minutes:.0f} min; socket {state.socket}; log {state.log}"


def _start_runner() -> None:
    """Start the warm runner next to the running server; a failure is a warning, not an
    error (commands then run in their own process)."""
    from libre_flows.flows import warm

    try:
        state = warm.running()
        if state is not None:
            console.print(f"warm runner already running: {_describe_runner(state)}", soft_wrap=True)
            return
        with console.status("starting the warm command runner (imports once)"):
            state = warm.start()
    except Exception as exc:
        errors.print(
            f"[bold yellow]warning:[/] {exc} Commands run in their own process (slower).",
            highlight=False,
        )
        return
    if state is not None:
        console.print(
            f"[green]warm runner started[/]: {_describe_runner(state)}; train, validate, score, "
            "notify and report run in it",
            soft_wrap=True,
        )


@server_app.command("start")
def start(
    port: Annotated[
        int | None, typer.Option("--port", min=1, max=65535, help="Port (default: any free).")
    ] = None,
    warm: Annotated[
        bool,
        typer.Option(
            "--warm/--no-warm",
            help="Also start the warm command runner: commands answer in seconds.",
        ),
    ] = True,
    debug: Debug = False,
) -> None:
    """Start the local server and the warm command runner; later commands use them.

    Both run in the background, once: a second start reports the running server."""
    from libre_flows.flows import local_server

    try:
        state = local_server.running()
        if state is not None:
            console.print(f"already running: {_describe(state)}", soft_wrap=True)
        else:
            with console.status("starting the local Prefect server"):
                state = local_server.start(port=port)
            console.print(f"[green]started[/] {_describe(state)}", soft_wrap=True)
            console.print(f"UI and API: {state.url}  (stop it with `libre server stop`)")
        _prefect_hint(state)
        embedded = local_server.mode() == "embedded"
    except Exception as exc:
        fail(exc, debug)
        return
    ensure_crash_detection(state.api_url)
    if warm and not embedded:
        _start_runner()


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
    _prefect_hint(state)
    from libre_flows.flows import warm

    runner = warm.running()
    if runner is None:
        console.print("warm runner: not running (`libre server start` starts it)")
    else:
        console.print(f"warm runner: {_describe_runner(runner)}", soft_wrap=True)


@server_app.command("stop")
def stop(debug: Debug = False) -> None:
    """Stop the local server, its warm runner and the `libre serve` processes using it.

    Commands running in the warm runner stop with it; a `libre serve` pauses its deployments
    while the server can still record it."""
    from libre_flows.flows import local_server, warm

    try:
        current = local_server.running()
        in_progress = (
            local_server.running_flow_runs(current.api_url, since=current.started)
            if current
            else []
        )
        runner = warm.stop()
        served = local_server.serve_processes(current.api_url) if current else []
        state = local_server.stop()
    except Exception as exc:
        fail(exc, debug)
        return
    if in_progress:
        errors.print(
            f"[bold yellow]warning:[/] {len(in_progress)} flow run"
            f"{'s were' if len(in_progress) > 1 else ' was'} in progress and stopped with the "
            f"server: {escape(', '.join(in_progress))}. Nothing runs them again: after the next "
            "`libre server start`, start them anew (`libre notify SPEC` for a retraining an "
            "event started, `libre train SPEC` otherwise; the stages they finished are cached).",
            highlight=False,
            soft_wrap=True,
        )
    for pid in served:
        console.print(
            f"stopped libre serve (pid {pid}): its deployments are paused; serve them again "
            "after the next `libre server start`",
            soft_wrap=True,
        )
    if runner is not None:
        console.print(f"stopped the warm runner (pid {runner.pid})")
    if state is None:
        console.print("not running")
    else:
        console.print(f"stopped the server on {state.url} (pid {state.pid})")
