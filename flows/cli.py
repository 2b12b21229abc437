"""The ``libre`` command: train, validate and report on declarative pipelines.

libre train deployments/specs/pima.yaml [--force] [--store DIR]
libre validate deployments/specs/pima.yaml
libre report .libre-store/runs/pima/<run>
"""

from __future__ import annotations

import json
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
errors = Console(stderr=True)

SpecArg = Annotated[Path, typer.Argument(help="Pipeline spec (YAML).", show_default=False)]
Debug = Annotated[bool, typer.Option("--debug", help="Show full tracebacks on errors.")]


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
    console.print(f"report: [green]{summary['report']}[/]")
    console.print(f"model:  {summary['model']}")
    console.print(
        f"{summary['cache_hits']}/{summary['n_stages']} stages cached; {seconds:.1f} s in total"
    )


@app.command()
def validate(spec: SpecArg, debug: Debug = False) -> None:
    """Check SPEC and validate its data with the declared expectations."""
    try:
        from flows.validate import validate as run_validate

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


def main() -> None:  # pragma: no cover - console entry point
    sys.exit(app())


if __name__ == "__main__":  # pragma: no cover
    main()
