"""The ``libre`` command: train, validate and report on declarative pipelines.

libre train deployments/specs/pima.yaml [--force] [--store DIR]
libre validate deployments/specs/pima.yaml
libre init data/visits.csv --target churned   (a first spec for a data file)
libre report pima [--store DIR]          (its latest run; or its spec, or a run folder)
"""

from __future__ import annotations

import contextlib
import json
import sys
import time
from pathlib import Path
from typing import Annotated

import typer
from rich.markdown import Markdown
from rich.markup import escape
from rich.table import Table

from libre_flows.flows.cli.common import (
    DEFAULT_STORE,
    Debug,
    SpecArg,
    as_console_command,
    console,
    console_to_stderr,
    ensure_crash_detection,
    errors,
    fail,
    interrupted,
    interrupts_noticed,
    known_pipelines,
    pipeline_and_store,
    pipeline_console,
    run_console,
    server_note,
    shown,
    user_errors,
    work_committed,
)

app = typer.Typer(
    add_completion=False,
    rich_markup_mode="markdown",
    no_args_is_help=True,
    help="Learn interpretable IF/OR rule sets (LIBRE) with Prefect pipelines.",
)


@app.command()
def train(
    spec: SpecArg,
    force: Annotated[bool, typer.Option("--force", help="Recompute every stage.")] = False,
    store: Annotated[
        Path | None, typer.Option("--store", help="Artifact store root (default: the spec's).")
    ] = None,
    as_json: Annotated[
        bool,
        typer.Option(
            "--json",
            help="Print the run's summary as one JSON object on stdout (the run.json fields: "
            "model_version, new_version, promoted, champion_changed, metrics, run_dir, report, "
            "notes, cautions, ...); everything else goes to stderr.",
        ),
    ] = False,
    debug: Debug = False,
) -> None:
    """Train the rule set SPEC declares; prints where the report is."""
    with contextlib.ExitStack() as stack:
        if as_json:  # the human lines to stderr, stdout for the JSON alone
            stack.enter_context(console_to_stderr())
        _train(spec, force, store, debug, as_json)


def _print_json(summary: dict) -> None:
    """The run's ``run.json`` (the summary, with its ``promotion_state``) as one line."""
    with contextlib.suppress(OSError, ValueError, KeyError):
        summary = json.loads((Path(summary["run_dir"]) / "run.json").read_text("utf-8"))
    sys.stdout.write(json.dumps(summary, default=str) + "\n")
    sys.stdout.flush()


def _train(spec, force: bool, store: Path | None, debug: bool, as_json: bool = False) -> None:
    from libre_lib.ops.registry import store_option
    from libre_lib.ops.spec import load_spec

    name, where, root, began = "PIPELINE", "", None, time.time()
    try:
        parsed = load_spec(spec)
        name = parsed.name
        root = Path(store).resolve() if store else Path(parsed.store_location())
        where = store_option(root)
        console.print(
            f"[bold]libre[/] training [cyan]{parsed.name}[/] from {escape(str(spec))}",
            soft_wrap=True,
        )
        started = time.perf_counter()
        from libre_flows.flows.train import preflight
        from libre_flows.flows.train import train as run_train

        preflight(spec, str(store) if store else None)
        with interrupts_noticed() as ctrl_c:
            with pipeline_console(debug, f"training ({server_note()})"):
                summary = run_train(spec, force=force, store=str(store) if store else None)
    except user_errors() as exc:
        fail(exc, debug)
        return
    except KeyboardInterrupt:
        applied = _applied_since(root, name, began) if root is not None else None
        if applied is not None:
            interrupted(
                f"the run had finished: {applied}. `libre report {name}{where}` shows its report."
            )
        interrupted(
            "the stages finished before it are cached (a re-run reuses them). If the run "
            f"reached promotion, its model is the champion: `libre models list {name}{where}` "
            f"shows the versions, `libre report {name}{where}` the last run's report."
        )
    work_committed()
    _print_summary(summary, time.perf_counter() - started)
    if as_json:  # the run completed: its object, also when a lost Ctrl-C exits 130 below
        _print_json(summary)
    if ctrl_c:  # it was lost inside the run, which went on to the end
        interrupted(
            "a Ctrl-C during the run was lost (raised where Python could not pass it on) and "
            "did not stop it: the run completed, and what it did (above) stands."
        )


def _applied_since(root: Path, pipeline: str, began: float) -> str | None:
    """The promotion decision of a run of ``pipeline`` under ``root`` that started at or after
    ``began`` (a Unix time) and applied it (its run.json says so), or None: a Ctrl-C that
    came after the run's last step says what the run did."""
    from libre_lib.ops.cleanup import RUN_FILE, RUNS_DIR

    with contextlib.suppress(OSError):
        for path in (root / RUNS_DIR / pipeline).glob(f"*/{RUN_FILE}"):
            if path.parent.stat().st_mtime < began - 1:  # a folder of an earlier run
                continue
            with contextlib.suppress(OSError, ValueError):
                summary = json.loads(path.read_text(encoding="utf-8"))
                if summary.get("promotion_state") == "applied":
                    return f"model {summary.get('model_version')}: {summary.get('promotion')}"
    return None


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
    from libre_lib.ops.baselines import undefined_metric

    metrics = summary["metrics"]
    in_sample = summary.get("metrics_on", "holdout") == "training"

    def shown(name: str) -> str:
        if undefined_metric(metrics, name):
            return "n/a"
        return f"{metrics.get(name, float('nan')):.3f}"

    console.print(
        ("training F1 (no holdout, in-sample)" if in_sample else "holdout F1")
        + f" [bold]{shown('f1')}[/]  precision {shown('precision')}  recall {shown('recall')}  "
        f"rules {metrics.get('n_rules', 0)}"
    )
    verdict = "[green]champion[/]" if summary.get("promoted") else "[yellow]not promoted[/]"
    reused = "" if summary.get("new_version", True) else " (unchanged: reused, not registered)"
    console.print(
        f"model version {summary.get('model_version')}{reused}: {verdict} "
        f"({escape(str(summary.get('promotion')))})"
    )
    for note in summary.get("notes", ()):
        console.print(f"[yellow]note[/]: {escape(note)}")
    for caution in summary.get("cautions", ()):
        console.print(f"[bold yellow]caution[/]: {escape(caution)}")
    console.print(f"report: [green]{escape(str(summary['report']))}[/]", soft_wrap=True)
    console.print(f"model:  {escape(str(summary['model']))}", soft_wrap=True)
    console.print(
        f"{summary['cache_hits']}/{summary['n_stages']} stage outputs (one per task, a mapped "
        "stage's one per learner or fold) read from the store (written by an earlier run, or "
        f"earlier in this one); {seconds:.1f} s in total"
    )


@app.command()
def validate(spec: SpecArg, debug: Debug = False) -> None:
    """Check SPEC and validate its data with the declared expectations."""
    try:
        from libre_flows.flows.train import preflight
        from libre_flows.flows.validate import validate as run_validate

        preflight(spec, writes="validation writes the stages that load and check the data there")
        with pipeline_console(debug, f"validating the data ({server_note()})"):
            report = run_validate(spec)
    except user_errors() as exc:
        fail(exc, debug)
        return
    console.print(f"[green]data valid[/]: {len(report['results'])} expectations passed")
    for note in report.get("notes", ()):
        console.print(f"[yellow]note[/]: {escape(note)}", soft_wrap=True)


@app.command()
def init(
    data: Annotated[
        Path, typer.Argument(help="The data: a CSV or Parquet file, or a directory of them.")
    ],
    target: Annotated[
        str | None,
        typer.Option(
            "--target",
            help="The column the rules explain (without it, the columns of two values are listed).",
        ),
    ] = None,
    positive: Annotated[
        str | None,
        typer.Option(
            "--positive",
            help="The class the rules describe (default: the yes of a yes/no or 0/1 pair, "
            "else the rarer class).",
        ),
    ] = None,
    name: Annotated[
        str | None, typer.Option("--name", help="Pipeline name (default: from the file name).")
    ] = None,
    output: Annotated[
        Path | None,
        typer.Option("--output", "-o", help="Spec file to write (default: NAME.yaml here)."),
    ] = None,
    force: Annotated[bool, typer.Option("--force", help="Overwrite the spec file.")] = False,
    debug: Debug = False,
) -> None:
    """Write a first spec for DATA; `libre train` runs it.

    The spec names the target's classes and the positive one, lists the features (text columns
    as categorical) and leaves out columns that identify rows, with a comment for each choice.
    It is checked as `libre train` reads it before it is written; nothing is overwritten
    without --force.
    """
    import dataclasses
    import os

    from libre_lib.ops import starter
    from libre_lib.ops.files import atomic_write_text

    try:
        if not data.expanduser().exists():
            raise FileNotFoundError(
                f"{data} does not exist: give the path of a CSV or Parquet file."
            )
        location = str(data.expanduser().resolve())
        file_format = starter.data_format(location)
        pipeline = name or starter.pipeline_name(data)
        spec_path = output or Path(f"{pipeline}.yaml")
        options = starter.dialect(location, file_format)
        frame, more = starter.sample(location, file_format, target, options)
        texts = starter.target_missing_texts(location, file_format, target, options)
        found = starter.starter(
            frame, target, positive, pipeline, more, file_format, options, texts
        )
        found = dataclasses.replace(
            found,
            feature_texts=starter.missing_texts(location, file_format, found.categorical, options),
        )
        written = spec_path.expanduser().resolve()
        if written == Path(location) or (written.exists() and written.samefile(location)):
            raise FileExistsError(  # --force wrote the spec over the data it describes
                f"{spec_path} is the data file itself: give the spec another name (--output "
                f"{Path(location).stem}.yaml)."
            )
        if spec_path.exists() and not force:  # after the data's own problems, which come first
            raise FileExistsError(
                f"{spec_path} exists: --force overwrites it, --output writes another file."
            )
        folder = spec_path.expanduser().resolve().parent
        store_dir = Path.cwd().resolve() / DEFAULT_STORE
        store = os.path.relpath(store_dir, folder)
        data_path = os.path.relpath(location, folder)
        taken = name is None and starter.name_taken(
            store_dir, pipeline, data_path, location, file_format
        )
        if taken:
            raise FileExistsError(taken)
        text = found.yaml(data_path, str(data), store)
        starter.check(text, spec_path)
        spec_path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_text(spec_path, text)
    except user_errors() as exc:
        fail(exc, debug)
        return
    from libre_lib.errors import counted

    categorical = f", {len(found.categorical)} of them categorical" if found.categorical else ""
    console.print(
        f"wrote [cyan]{escape(str(spec_path))}[/]: target {shown(repr(found.target))}, "
        f"positive class {shown(repr(found.positive_class))} ({found.positive_share:.1%} of "
        f"the rows read: {shown(found.why_positive)}; --positive chooses another); "
        f"{counted(len(found.features), 'feature')}"
        f"{categorical}",
        soft_wrap=True,
        highlight=False,
    )
    if found.dialect:
        said = []
        if "sep" in found.dialect:
            said.append(f"separator {found.dialect['sep']!r}")
        if found.dialect.get("decimal") == ",":
            thousands = " (points between thousands)" if "thousands" in found.dialect else ""
            said.append(f"a decimal comma{thousands}")
        elif "thousands" in found.dialect:
            said.append("points between thousands (12.475 is twelve thousand)")
        if "encoding" in found.dialect:
            said.append(f"{found.dialect['encoding']} text (not UTF-8)")
        console.print(f"read with {shown(' and '.join(said))}", soft_wrap=True, highlight=False)
    left_out = list(found.left_out.items())
    for column, why in left_out[:INIT_LINES]:
        console.print(f"left out: {shown(column)} ({shown(why)})", soft_wrap=True, highlight=False)
    if len(left_out) > INIT_LINES:
        console.print(
            f"left out: {len(left_out) - INIT_LINES:,} more columns (the spec's comments give "
            "each with its reason)",
            soft_wrap=True,
            highlight=False,
        )
    if found.n_unlabeled:
        console.print(
            f"left out of each run: rows without a target value ({found.n_unlabeled:,} of the "
            "rows read; target.unlabeled: drop)",
            soft_wrap=True,
            highlight=False,
        )
        if found.unlabeled_texts:
            console.print(
                f"[bold yellow]check[/]: {shown(found.unlabeled_hint())}",
                soft_wrap=True,
                highlight=False,
            )
    for hint in found.feature_hints():
        console.print(f"[bold yellow]check[/]: {shown(hint)}", soft_wrap=True, highlight=False)
    if found.codes:
        console.print(
            f"few whole numbers, codes?: {shown(_some(found.codes))} (read as numbers; "
            "list them under features.categorical if their order means nothing)",
            soft_wrap=True,
            highlight=False,
        )
    for marker, columns in found.missing_markers.items():
        console.print(
            f"read as missing: {shown(repr(marker))} (among the numbers of "
            f"{shown(_some(columns))})",
            soft_wrap=True,
            highlight=False,
        )
    console.print(
        f"next: libre validate {escape(str(spec_path))}, then libre train {escape(str(spec_path))}",
        soft_wrap=True,
        highlight=False,
    )


#: Columns `libre init` names on a line, and lines it gives to columns left out: a table of
#: 2,000 columns printed 14 kB on one line.
INIT_NAMES, INIT_LINES = 12, 20


def _some(names) -> str:
    """``names`` joined, the first :data:`INIT_NAMES` of them and a count of the others."""
    names = [str(n) for n in names]
    more = len(names) - INIT_NAMES
    return ", ".join(names[:INIT_NAMES]) + (f" and {more:,} more" if more > 0 else "")


def latest_run(store: Path, pipeline: str) -> Path:
    """The newest finished run folder of ``pipeline`` under ``store`` (one with run.json)."""
    from libre_lib.ops.cleanup import RUNS_DIR, finished_runs

    runs = store / RUNS_DIR / pipeline
    finished = finished_runs(store, pipeline)
    if not finished and not runs.is_dir():
        known = sorted(p.name for p in (store / RUNS_DIR).glob("*") if p.is_dir())
        raise FileNotFoundError(
            f"No finished run of {pipeline!r}."
            + known_pipelines(pipeline, known, str(store / RUNS_DIR))
        )
    if not finished:
        raise FileNotFoundError(
            f"No finished run of {pipeline!r} under {runs}: train it first (`libre train "
            "SPEC`), pass --store, or give a run folder."
        )
    return finished[-1]


@app.command()
def report(
    target: Annotated[
        str,
        typer.Argument(
            help="A pipeline name or its spec file (its latest run), or a run folder from "
            "`libre train`."
        ),
    ],
    store: Annotated[
        Path | None,
        typer.Option(
            "--store",
            help="Store root holding runs/PIPELINE/ (default: ./.libre-store; for a spec, the "
            "spec's store).",
            show_default=False,
        ),
    ] = None,
    debug: Debug = False,
) -> None:
    """Print a finished run's rule report: the latest run of a pipeline, or a run folder."""
    from libre_lib.errors import LibreError

    run_dir = Path(target)
    try:
        pipeline, store = pipeline_and_store(target, store)
        if pipeline != target:  # a spec file: its pipeline's latest run in its store
            run_dir = latest_run(store, pipeline)
        if run_dir.is_file():  # report.md, model.json, ...: their run folder
            run_dir = run_dir.parent
        if not run_dir.is_dir():
            if "/" in target or "\\" in target:
                raise FileNotFoundError(
                    f"{target} does not exist: pass a run folder from `libre train` or a "
                    "pipeline name."
                )
            run_dir = latest_run(store, target)
        from libre_lib.ops.cleanup import RUNS_DIR

        in_runs = run_dir.resolve().parent.parent.name == RUNS_DIR  # STORE/runs/PIPELINE/RUN
        files = ("run.json", "report.md", "failure.md")
        if not in_runs and not any((run_dir / name).exists() for name in files):
            raise FileNotFoundError(  # /etc read as a run that "did not finish"
                f"{run_dir} is not a run folder (no run.json, report.md or failure.md in it): "
                "pass a run folder from `libre train` (STORE/runs/PIPELINE/RUN) or a pipeline "
                "name."
            )
        summary = _run_summary(run_dir)
        if summary.get("status") == "failed":
            _print_failed_run(run_dir, summary)
            return
        path = run_dir / "report.md"
        if not path.is_file():
            raise FileNotFoundError(f"{path} does not exist: pass a run folder from `libre train`.")
    except (OSError, LibreError) as exc:
        fail(exc, debug)
        return
    _print_markdown(path.read_text(encoding="utf-8"))
    if summary:
        # on stderr: `libre report PIPELINE > report.md` keeps the Markdown alone
        # the run folder read, not the path run.json recorded: a store moved or copied since
        html = run_dir.resolve() / "report.html"
        shown = html if html.is_file() else summary.get("report")
        errors.print(f"\nHTML report: [green]{escape(str(shown))}[/]", soft_wrap=True)
        since = _status_since(run_dir, summary)
        if since:
            errors.print(f"[yellow]note:[/] {escape(since)}", highlight=False)


def _status_since(run_dir: Path, summary: dict) -> str | None:
    """What changed for the run's model version since the run (a rollback retired the
    champion it made, or `libre models promote` made it the champion), else None: the
    report says what the run decided, not what holds now."""
    from libre_lib.errors import LibreError
    from libre_lib.ops.registry import ModelRegistry

    version, promoted = summary.get("model_version"), summary.get("promoted")
    pipeline = summary.get("pipeline") or run_dir.parent.name
    if not isinstance(version, str) or not isinstance(promoted, bool):
        return None
    try:
        registry = ModelRegistry(run_dir.parents[2])
        entry = registry.get(pipeline, version)
        champion = registry.champion(pipeline)
    except (LibreError, OSError, IndexError):
        return None
    now = champion.version if champion is not None else "none"
    decided = summary.get("decision")
    to_promote = isinstance(decided, dict) and decided.get("promoted") is True
    if summary.get("promotion_state") == "pending" and to_promote and not entry.is_champion:
        return (
            f"this run has not applied its decision to promote {version} (it is still "
            f"running, or it stopped before): {version} is {entry.status} and the champion is "
            f"{now}. Train the spec again to apply it (the run reuses {version})."
        )
    if promoted and not entry.is_champion:
        reason = f" ({entry.reason})" if entry.reason else ""
        return (
            f"since this run, {version} is {entry.status}{reason}; the champion is now {now} "
            f"(`libre models list {pipeline}`)."
        )
    if not promoted and entry.is_champion:
        reason = f" ({entry.reason})" if entry.reason else ""
        return f"since this run, {version} has become the champion{reason}."
    return None


def _print_markdown(text: str) -> None:
    """Markdown rendered on a terminal; piped or redirected, the Markdown itself (a rendering
    at the default 80 columns would cut rule text and numbers short)."""
    if console.is_terminal:
        console.print(Markdown(text))
    else:
        sys.stdout.write(text if text.endswith("\n") else text + "\n")
        sys.stdout.flush()


def _by_time(runs: list[Path], name: str = "report.md") -> list[Path]:
    """Run folders oldest first: by the second in their name, then by when their ``name``
    file was written (two runs of one second are otherwise ordered by a random tail)."""
    return sorted(runs, key=lambda p: (p.name[:15], (p / name).stat().st_mtime_ns))


def _run_summary(run_dir: Path) -> dict:
    """A run folder's run.json; {} with a note when the run did not finish (no run.json) or
    its run.json cannot be read: the report is shown, said to be of such a run."""
    path = run_dir / "run.json"
    if not path.is_file():
        errors.print(
            f"[yellow]note:[/] {escape(run_dir.name)} has no run.json: the run did not finish "
            "(it was stopped, or is still running), so it may not have registered or promoted "
            "its model.",
            highlight=False,
        )
        return {}
    try:
        summary = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        errors.print(
            f"[yellow]note:[/] {escape(str(path))} cannot be read ({escape(str(exc))}): what the "
            "run registered and promoted is in `libre models list`.",
            highlight=False,
        )
        return {}
    return summary if isinstance(summary, dict) else {}


def _print_failed_run(run_dir: Path, summary: dict) -> None:
    """A run that failed before training: what failed, and where the last model's report is."""
    errors.print(f"[bold red]{run_dir.name}: {summary.get('message', 'the run failed')}[/]")
    page = Path(summary.get("report", run_dir / "validation.md"))
    if page.is_file():
        _print_markdown(page.read_text(encoding="utf-8"))
    runs = _by_time([p for p in run_dir.parent.glob("*") if (p / "report.md").is_file()])
    if runs:
        console.print(f"\nThe latest trained model's report: [green]{runs[-1]}[/]", soft_wrap=True)
    champion = _champion_run(run_dir)
    if champion is not None and (not runs or champion != runs[-1]):  # e.g. after a rollback
        console.print(f"The champion's report: [green]{champion}[/]", soft_wrap=True)
    raise typer.Exit(1)


def _champion_run(run_dir: Path) -> Path | None:
    """The run folder of the champion of ``run_dir``'s pipeline (a store's
    ``runs/<pipeline>/<run>``), when it is still there."""
    from libre_lib.errors import LibreError
    from libre_lib.ops.registry import ModelRegistry

    try:
        champion = ModelRegistry(run_dir.parents[2]).champion(run_dir.parent.name)
    except (LibreError, OSError, ValueError, IndexError):
        return None
    folder = run_dir.parent / champion.run_id if champion is not None else None
    return folder if folder is not None and (folder / "report.md").is_file() else None


@app.command()
def prune(
    target: Annotated[
        str, typer.Argument(help="A pipeline name or its spec file.", show_default=False)
    ],
    keep_runs: Annotated[
        int, typer.Option("--keep-runs", help="How many of its newest runs to keep.")
    ] = 20,
    min_age_hours: Annotated[
        float,
        typer.Option(
            "--min-age-hours",
            help="Keep any stage file written or read by a run more recently (a run in "
            "progress may use it).",
        ),
    ] = 24.0,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Only say what would be removed.")
    ] = False,
    store: Annotated[
        Path | None,
        typer.Option(
            "--store",
            help="Store root (default: ./.libre-store; for a spec, the spec's store).",
            show_default=False,
        ),
    ] = None,
    debug: Debug = False,
) -> None:
    """Remove a pipeline's older run folders and the cached stage files no remaining run uses.

    Keeps its newest runs, the runs that trained and promoted its champion, every other
    pipeline's runs, and the model registry whole; what goes is a cache that a later run
    computes again."""
    from libre_lib.errors import LibreError, ParameterError
    from libre_lib.ops.cleanup import RUNS_DIR, prune_store

    try:
        pipeline, root = pipeline_and_store(target, store)
        if not (root / RUNS_DIR / pipeline).is_dir():
            raise FileNotFoundError(
                f"No runs of {pipeline!r} under {root / RUNS_DIR}: pass the pipeline's name or "
                "spec file, and --store for a store elsewhere."
            )
        if not min_age_hours >= 0:  # NaN too
            raise ParameterError(f"--min-age-hours must be at least 0; got {min_age_hours:g}.")
        done = prune_store(root, pipeline, keep_runs, min_age_hours * 3600, dry_run)
    except (OSError, LibreError) as exc:
        fail(exc, debug)
        return
    verb = "would remove" if dry_run else "removed"
    console.print(f"{pipeline}: {verb} {done}", highlight=False)
    for run in done.runs:
        console.print(f"  run {run.name}", highlight=False)


@app.command()
def notify(spec: SpecArg, debug: Debug = False) -> None:
    """Send the "dataset updated" event that starts SPEC's triggered retraining.

    Exits once the server has stored the event, warning when nothing on the server listens
    for it."""
    try:
        from libre_flows.flows.deploy import notify as send

        event = send(spec)
    except user_errors() as exc:
        fail(exc, debug)
        return
    console.print(f"delivered [cyan]{event.event}[/] for {event.resource.id} ({event.id})")
    _warn_without_listeners(event, spec)


def _warn_without_listeners(event, spec: Path) -> None:
    """Name what the event triggers; warn when nothing listens for it, or when the run it
    starts would wait because nothing serves its deployment."""
    from prefect.settings import get_current_settings

    from libre_flows.flows.events import idle_deployments, orphaned, triggered

    try:
        automations = triggered(event)
        dead = orphaned(automations)
        gone = {automation.id for automation in dead}
        live = [automation for automation in automations if automation.id not in gone]
        listening = [automation.name for automation in live]
        idle = idle_deployments(live) if listening else []
    except Exception as exc:  # the event is delivered; only the check failed
        errors.print(f"[bold yellow]warning:[/] could not read the server's automations ({exc})")
        return
    if dead and not listening:
        names = ", ".join(dict.fromkeys(automation.name for automation in dead))
        errors.print(
            f"[bold yellow]warning:[/] {names} start{'s' if len(dead) == 1 else ''} a "
            "deployment that no longer exists (deleted), so no run starts; `libre serve "
            f"{spec}` creates the deployments and their triggers again (or deploy them to a "
            "work pool, docs/operations.md)",
            highlight=False,
        )
        return
    if not listening:
        errors.print(
            f"[bold yellow]warning:[/] no automation or deployment trigger on the server "
            f"({get_current_settings().api.url}) listens for {event.event} on "
            f"{event.resource.id}, so no run starts: serve the deployments (`libre serve "
            f"{spec}`) or deploy them to a work pool (`libre deployments write {spec}` with "
            "the project's other specs, then "
            "`LIBRE_FLOWS_HOME=$PWD prefect deploy --all` in the project folder; "
            "docs/operations.md)",
            highlight=False,
        )
        return
    console.print(f"triggers: {', '.join(listening)}")
    _warn_paused_on_pools(spec)
    if idle:
        import re

        # `libre serve` refuses deployments of a work pool: those need its worker
        pools = list(dict.fromkeys(re.findall(r"work pool '([^']+)'", " ".join(idle))))
        remedies = [f"start `libre serve {spec}`"] if len(pools) < len(idle) else []
        remedies += [
            f"start a worker of work pool {p!r} (`prefect worker start --pool {p}`), or resume "
            f"the pool if it is paused (`prefect work-pool resume {p}`)"
            for p in pools
        ]
        remedy = "; ".join(remedies)
        errors.print(
            f"[bold yellow]warning:[/] the run waits until a process serves it: "
            f"{', '.join(idle)}; {remedy}",
            highlight=False,
        )


def _warn_paused_on_pools(spec: Path) -> None:
    """Warn of the pipeline's deployments paused on a work pool: their schedules create no runs
    (the nightly retraining is off) although a worker runs what their triggers start."""
    from libre_flows.flows.events import TRAIN_FLOW, paused_on_pools
    from libre_lib.ops.spec import load_spec

    try:
        paused = paused_on_pools(load_spec(spec).name)
    except Exception:  # the event is delivered; this is advice only
        return
    if paused:
        resumes = "; ".join(f"prefect deployment resume '{TRAIN_FLOW}/{n}'" for n in paused)
        errors.print(
            f"[bold yellow]warning:[/] paused on a work pool: {', '.join(paused)}: their "
            "schedules create no runs (a `libre serve` that stopped pauses the deployments it "
            f"served, also after `prefect deploy` moved them to a pool); resume them: {resumes}",
            highlight=False,
        )


@app.command()
def serve(
    specs: Annotated[list[Path], typer.Argument(help="Pipeline specs to serve.")],
    limit: Annotated[int | None, typer.Option(help="Max concurrent runs.")] = None,
    debug: Debug = False,
) -> None:
    """Serve the nightly, on-demand and on-new-data deployments of SPECS (Ctrl-C stops).

    Schedules and event triggers are active while this process runs. For a work pool instead,
    run `LIBRE_FLOWS_HOME=$PWD prefect deploy --prefect-file deployments/prefect.yaml --all` in
    the project folder (docs/operations.md); serve refuses to replace deployments of the same
    names that run on a work pool."""
    try:
        from libre_flows.flows.deploy import serve as run_serve

        for spec in specs:
            from libre_flows.flows.train import preflight

            preflight(spec)
        ensure_crash_detection()  # a temporary server stops with serve: nothing to do there
        with _recorded_on_the_local_server():
            run_serve(*specs, limit=limit)
    except user_errors() as exc:
        fail(exc, debug)


def _recorded_on_the_local_server():
    """While serving from the local server, this process is recorded for `libre server stop`
    (which stops it first); a context that does nothing on any other server."""
    import contextlib
    import os

    from libre_flows.flows import local_server

    state = local_server.running()
    if state is None or os.environ.get("PREFECT_API_URL") != state.api_url:
        return contextlib.nullcontext()
    return local_server.serving(state.api_url)


def _mount_sub_apps() -> None:
    from libre_flows.flows.cli.deployments import deployments_app
    from libre_flows.flows.cli.models import models_app
    from libre_flows.flows.cli.score import score_command
    from libre_flows.flows.cli.server import server_app

    app.add_typer(
        models_app, name="models", help="List, show and promote registered model versions."
    )
    app.add_typer(deployments_app, name="deployments", help="Write prefect.yaml from specs.")
    app.add_typer(server_app, name="server", help="The local Prefect server commands reuse.")
    app.command("score")(score_command)


_mount_sub_apps()


def main() -> None:  # pragma: no cover - console entry point
    """``libre``: run the command in the warm runner when one serves it, else here."""
    from libre_flows.flows import warm

    as_console_command()

    def command() -> None:
        code = warm.run(sys.argv)
        sys.exit(app() if code is None else code)

    run_console(command)


if __name__ == "__main__":  # pragma: no cover
    main()
