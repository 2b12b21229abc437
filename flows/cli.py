"""The ``libre`` command: train, validate and report on declarative pipelines.

libre train deployments/specs/pima.yaml [--force] [--store DIR]
libre validate deployments/specs/pima.yaml
libre report .libre-store/runs/pima/<run>
"""

from __future__ import annotations

import contextlib
import json
import logging
import sys
import time
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.markdown import Markdown
from rich.table import Table

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    help="Learn interpretable IF/OR rule sets (LIBRE) with Prefect pipelines.",
)
console = Console()
errors = Console(stderr=True, soft_wrap=True)

SpecArg = Annotated[Path, typer.Argument(help="Pipeline spec (YAML).", show_default=False)]
Debug = Annotated[bool, typer.Option("--debug", help="Show full tracebacks on errors.")]


class _ConsoleFilter(logging.Filter):
    """Keep Prefect's console to warnings and errors, without tracebacks (the CLI prints its
    own progress and one clear error line; --debug shows everything)."""

    RUN_LOGGERS = (
        "prefect.task_runs",
        "prefect.flow_runs",
        "prefect.task_engine",
        "prefect.flow_engine",
    )

    def filter(self, record: logging.LogRecord) -> bool:
        if record.name.startswith(self.RUN_LOGGERS):
            return False  # run outcomes: the CLI reports them itself, in one line
        record.exc_info = None
        record.exc_text = None
        return record.levelno >= logging.WARNING


class _StageProgress(logging.Handler):
    """Turns the stage log lines of the pipeline's tasks into a live status line."""

    def __init__(self, status) -> None:
        super().__init__(level=logging.INFO)
        self.status = status
        self.learners = 0

    def emit(self, record: logging.LogRecord) -> None:
        words = record.getMessage().split()
        if len(words) >= 3 and words[0] == "stage":
            if words[1] == "learner":
                self.learners += 1
                self.status.update(f"weak learners finished: {self.learners}")
            else:
                self.status.update(f"{words[1]}: {' '.join(words[2:4])}")


@contextlib.contextmanager
def _pipeline_console(debug: bool, message: str):
    """A status line during the run; Prefect's console quiet unless --debug."""
    from prefect.logging import configuration

    if not configuration.PROCESS_LOGGING_CONFIG:
        configuration.setup_logging()  # Prefect would do it at the first run; we filter it
    handlers = [
        h
        for name in ("", "prefect")
        for h in logging.getLogger(name).handlers
        if isinstance(h, logging.StreamHandler)
    ]
    quiet = _ConsoleFilter()
    if not debug:
        for handler in handlers:
            handler.addFilter(quiet)
    with console.status(message) as status:
        progress = _StageProgress(status)
        task_logger = logging.getLogger("prefect.task_runs")
        task_logger.addHandler(progress)
        try:
            yield
        finally:
            task_logger.removeHandler(progress)
            for handler in handlers:
                handler.removeFilter(quiet)


def _fail(exc: BaseException, debug: bool) -> None:
    """One clear message (multi-line for validation failures), no traceback unless --debug."""
    if debug:
        raise exc
    from libre_lib.errors import LibreError

    message = str(exc).strip().splitlines() or [type(exc).__name__]
    if not isinstance(exc, LibreError | OSError):
        message[0] = f"{type(exc).__name__}: {message[0]} (run with --debug for the traceback)"
    errors.print(f"[bold red]error:[/] {message[0]}", highlight=False)
    for line in message[1:]:
        errors.print(f"  {line}", highlight=False)
    raise typer.Exit(code=1)


def _user_errors() -> tuple[type[BaseException], ...]:
    return (Exception,)


@app.command()
def train(
    spec: SpecArg,
    force: Annotated[bool, typer.Option("--force", help="Recompute every stage.")] = False,
    store: Annotated[
        Path | None, typer.Option("--store", help="Artifact store root (default: the spec's).")
    ] = None,
    debug: Debug = False,
) -> None:
    """Train the rule set SPEC declares; prints where the report is."""
    from libre_lib.spec import load_spec

    try:
        parsed = load_spec(spec)
        console.print(f"[bold]libre[/] training [cyan]{parsed.name}[/] from {spec}")
        started = time.perf_counter()
        from flows.train import preflight
        from flows.train import train as run_train

        preflight(spec)
        with _pipeline_console(debug, "starting Prefect (embedded server) and the pipeline"):
            summary = run_train(spec, force=force, store=str(store) if store else None)
    except _user_errors() as exc:
        _fail(exc, debug)
        return
    _print_summary(summary, time.perf_counter() - started)


def _print_summary(summary: dict, seconds: float) -> None:
    table = Table(title="stages", show_edge=False)
    table.add_column("stage")
    table.add_column("result")
    counts: dict[str, list[int]] = {}
    for stage in summary["stages"]:
        hit, total = counts.setdefault(stage["stage"], [0, 0])
        counts[stage["stage"]] = [hit + stage["cache_hit"], total + 1]
    for name, (hit, total) in counts.items():
        label = "cache hit" if hit == total else ("computed" if hit == 0 else f"{hit}/{total} hits")
        if total > 1:
            label += f" ({total} tasks)"
        table.add_row(name, label)
    console.print(table)
    metrics = summary["metrics"]
    console.print(
        f"holdout F1 [bold]{metrics.get('f1', float('nan')):.3f}[/]  "
        f"precision {metrics.get('precision', float('nan')):.3f}  "
        f"recall {metrics.get('recall', float('nan')):.3f}  "
        f"rules {metrics.get('n_rules', 0)}"
    )
    verdict = "[green]champion[/]" if summary.get("promoted") else "[yellow]not promoted[/]"
    console.print(
        f"model version {summary.get('model_version')}: {verdict} ({summary.get('promotion')})"
    )
    console.print(f"report: [green]{summary['report']}[/]")
    console.print(f"model:  {summary['model']}")
    console.print(
        f"{summary['cache_hits']}/{summary['n_stages']} stages cached; {seconds:.1f} s in total"
    )


@app.command()
def validate(spec: SpecArg, debug: Debug = False) -> None:
    """Check SPEC and validate its data with the declared expectations."""
    try:
        from flows.train import preflight
        from flows.validate import validate as run_validate

        preflight(spec)
        with _pipeline_console(debug, "validating the data"):
            report = run_validate(spec)
    except _user_errors() as exc:
        _fail(exc, debug)
        return
    console.print(f"[green]data valid[/]: {len(report['results'])} expectations passed")


@app.command()
def report(
    run_dir: Annotated[Path, typer.Argument(help="A run folder printed by `libre train`.")],
    debug: Debug = False,
) -> None:
    """Print a finished run's rule report."""
    path = run_dir / "report.md"
    if not path.is_file():
        _fail(
            FileNotFoundError(f"{path} does not exist: pass a run folder from `libre train`."),
            debug,
        )
        return
    console.print(Markdown(path.read_text(encoding="utf-8")))
    summary = run_dir / "run.json"
    if summary.is_file():
        data = json.loads(summary.read_text(encoding="utf-8"))
        console.print(f"\nHTML report: [green]{data.get('report')}[/]")


@app.command()
def notify(spec: SpecArg, debug: Debug = False) -> None:
    """Emit the "dataset updated" event for SPEC's pipeline (starts its triggered deployment)."""
    try:
        from flows.deploy import notify as emit

        event = emit(spec)
    except _user_errors() as exc:
        _fail(exc, debug)
        return
    if event is None:
        _fail(RuntimeError("Prefect did not emit the event (is an API server reachable?)"), debug)
        return
    console.print(f"emitted [cyan]{event.event}[/] for {event.resource.id} ({event.id})")


@app.command()
def serve(
    specs: Annotated[list[Path], typer.Argument(help="Pipeline specs to serve.")],
    limit: Annotated[int | None, typer.Option(help="Max concurrent runs.")] = None,
    debug: Debug = False,
) -> None:
    """Serve the nightly, on-demand and on-new-data deployments of SPECS in this process
    (schedules and event triggers active; Ctrl-C to stop). For a work pool instead, run
    `prefect deploy --prefect-file deployments/prefect.yaml --all` (docs/operations.md)."""
    try:
        from flows.deploy import serve as run_serve

        for spec in specs:
            from flows.train import preflight

            preflight(spec)
        run_serve(*specs, limit=limit)
    except _user_errors() as exc:
        _fail(exc, debug)


def _mount_sub_apps() -> None:
    from flows.cli_models import models_app

    app.add_typer(models_app, name="models", help="List and show registered model versions.")


_mount_sub_apps()


def main() -> None:  # pragma: no cover - console entry point
    sys.exit(app())


if __name__ == "__main__":  # pragma: no cover
    main()
