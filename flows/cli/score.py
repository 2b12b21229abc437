"""``libre score``: batch scoring from the command line.

libre score runs/pima/<run>/model.json incoming/ scored/pima.parquet [--batch-rows N]

``score_command`` is a plain typer command function; the main CLI mounts it with
``app.command("score")(score_command)``. ``app`` here runs it standalone
(``python -m libre_flows.flows.cli.score MODEL INPUTS OUTPUT``).
"""

from __future__ import annotations

import contextlib
import json
import re
import sys
import time
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from libre_flows.flows.cli.common import (
    Debug,
    console,
    console_to_stderr,
    fail,
    interrupted,
    known_pipelines,
    pipeline_and_store,
    pipeline_console,
    server_note,
    user_errors,
    work_committed,
)

ModelArg = Annotated[
    Path,
    typer.Argument(
        help="A model.json (e.g. from `libre train`), or a registered version: PIPELINE (its "
        "champion) or PIPELINE@VERSION, where a spec file may stand for PIPELINE.",
        show_default=False,
    ),
]
StoreOpt = Annotated[
    Path | None,
    typer.Option(
        "--store",
        help="Store holding the model registry, for PIPELINE refs (default: ./.libre-store; "
        "for a SPEC, the spec's store).",
        show_default=False,
    ),
]
_REF = re.compile(r"^(?P<pipeline>[a-z0-9][a-z0-9-]*)(?:@(?P<version>[\w-]+))?$")


def resolve_model(model: Path, store: Path | None) -> Path:
    """A model.json path as given, or the registered version that PIPELINE[@VERSION] or
    SPEC[@VERSION] names (a spec file stands for its pipeline, in the spec's store unless
    ``store`` is given)."""
    from libre_lib.errors import ParameterError
    from libre_lib.ops.registry import ModelRegistry
    from libre_lib.ops.spec import DATA_NAMES

    if model.name.lower().endswith(DATA_NAMES):
        raise ParameterError(
            f"{str(model)!r} is a data file: libre score takes the model first (a pipeline's "
            "name, its spec file or a model.json), then the inputs, then the output."
        )
    spec, at, version = str(model).rpartition("@")
    if not at:
        spec, version = str(model), ""
    if Path(spec).suffix.lower() in (".yaml", ".yml") and Path(spec).is_file():
        pipeline, store = pipeline_and_store(spec, store)
        return ModelRegistry(store).get(pipeline, version or "champion").model_path
    _, store = pipeline_and_store(str(model), store)
    match = _REF.match(str(model))
    registry = ModelRegistry(store)
    if not model.exists() and match is None and _looks_like_a_name(str(model)):
        raise FileNotFoundError(
            f"{str(model)!r} is neither a model file nor a pipeline name (pipeline names are "
            "lowercase letters, digits and dashes)."
            + known_pipelines(str(model), registry.pipelines(), str(store / "models"))
        )
    if model.is_dir():  # a registered version's folder, or a run's
        if (model / "model.json").is_file():
            return model / "model.json"
        raise FileNotFoundError(
            f"{str(model)!r} is a folder without a model.json: give a model.json, a run or "
            "version folder holding one, or a pipeline's name."
        )
    if model.exists() or match is None:
        return model
    known = registry.pipelines()
    if match["pipeline"] not in known:  # "pim" for "pima": the pipelines there, closest first
        hint = known_pipelines(match["pipeline"], known, str(store / "models"))
        raise FileNotFoundError(
            f"No model file {str(model)!r}, and no pipeline {match['pipeline']!r} has model "
            f"versions in {store}.{hint}"
        )
    version = registry.get(match["pipeline"], match["version"] or "champion")
    return version.model_path


def _looks_like_a_name(given: str) -> bool:
    """A bare word, not a path or a file name (no folder, no .json)."""
    return not any(c in given for c in "/\\") and not given.lower().endswith(".json")


InputsArg = Annotated[
    Path,
    typer.Argument(help="A CSV / Parquet file, or a directory of them.", show_default=False),
]
OutputArg = Annotated[
    Path, typer.Argument(help="The Parquet file to write (atomically).", show_default=False)
]
BatchRows = Annotated[
    int, typer.Option("--batch-rows", min=1, help="Rows per batch (bounds memory).")
]


def score_command(
    model: ModelArg,
    inputs: InputsArg,
    output: OutputArg,
    batch_rows: BatchRows = 100_000,
    store: StoreOpt = None,
    fail_on_drift: Annotated[
        bool,
        typer.Option(
            "--fail-on-drift",
            help="Fail (nothing written, exit 3) when a column the rules test drifts: unseen "
            "categories, more values out of the training range than chance gives (docs/"
            "operations.md), more missing values (only the "
            "last in a column the rules test only for a missing value).",
        ),
    ] = False,
    as_json: Annotated[
        bool,
        typer.Option(
            "--json",
            help="Print the run's summary as one JSON object on stdout (rows, n_positive, "
            "positive_rate, warnings, output, model, model_sha256, ...); everything else goes "
            "to stderr.",
        ),
    ] = False,
    debug: Debug = False,
) -> None:
    """Score INPUTS with MODEL into OUTPUT, and report drift against its data contract.

    Every row gets its prediction, score, fired rules and explanation. Drift is reported (or
    fails the run with --fail-on-drift); broken data fails the run."""
    with contextlib.ExitStack() as stack:
        if as_json:  # the human lines to stderr, stdout for the JSON alone
            stack.enter_context(console_to_stderr())
        _score(model, inputs, output, batch_rows, store, fail_on_drift, debug, as_json)


def _score(model, inputs, output, batch_rows, store, fail_on_drift, debug, as_json) -> None:
    """:func:`score_command`'s work, its lines on the console; with ``as_json`` the summary
    as one JSON object on stdout once the output is in place."""
    try:
        from libre_flows.flows.score import preflight
        from libre_flows.flows.score import score as run_score

        model = resolve_model(model, store)
        preflight(model, inputs, output)
        console.print(
            f"[bold]libre[/] scoring {escape(str(inputs))} with {escape(str(model))}",
            soft_wrap=True,
        )
        started = time.perf_counter()
        replaced = Path(output).expanduser().is_file()
        with pipeline_console(debug, f"scoring ({server_note()})"):
            summary = run_score(
                model, inputs, output, batch_rows=batch_rows, fail_on_drift=fail_on_drift
            )
    except user_errors() as exc:
        fail(exc, debug)
        return
    except KeyboardInterrupt:
        interrupted(
            f"{output} is either as it was or the complete new output (it is written to a "
            "temporary file and renamed only when every batch is in)."
        )
    work_committed()
    summary["flag_rate_caution"] = flag_rate_caution(model, summary)
    _print_summary(summary, time.perf_counter() - started, replaced)
    if as_json:
        shown = {"model": str(model), "replaced": replaced, **summary}
        sys.stdout.write(json.dumps(shown, default=str) + "\n")
        sys.stdout.flush()


#: A share of flagged rows this many times the registered version's own (or that share this
#: many times it), and this far from it in standard errors, draws a caution.
FLAG_RATE_RATIO, FLAG_RATE_Z = 2.0, 4.0


def flag_rate_caution(model: Path, summary: dict) -> str | None:
    """A caution when a registered version flags a share of the scored rows far from the share
    of its own holdout (``version.json``'s metrics beside ``model``): 10.7 % of the rows
    against 0.9 % was scored without a word, although the flags then mean something else."""
    from libre_lib.ops.baselines import far_share

    rows, flagged = summary.get("rows") or 0, summary.get("n_positive") or 0
    try:
        recorded = json.loads((Path(model).parent / "version.json").read_text(encoding="utf-8"))
        metrics = recorded["metrics"]
        before, of = int(metrics["n_flagged"]), int(metrics["n_rows"])
    except (OSError, ValueError, KeyError, TypeError):
        return None  # a model.json of its own, or a version that recorded no counts
    if rows < 100 or of < 50:
        return None
    now, then = flagged / rows, before / of
    if not far_share(now, rows, then, of, FLAG_RATE_RATIO, FLAG_RATE_Z):
        return None
    return (
        f"the model flagged {100 * now:.2f}% of these rows, against {100 * then:.2f}% of the "
        f"{of:,} rows its version was judged on ({before:,} flagged): these rows, or the share "
        "of the positive class among them, differ from the training data's; check the drift "
        "warnings, and a sample of the flags, before acting on them"
    )


#: More drift warnings than this on columns no rule tests are given as one line.
UNTESTED_SHOWN = 3


def _print_warnings(warnings: list[dict]) -> None:
    """Drift warnings on the columns the rules test first, each on its line; those on columns
    no rule tests (predictions unaffected) too, or as one line naming the columns when there
    are more than :data:`UNTESTED_SHOWN` (a wide table's noise columns gave 43 lines)."""
    tested = [w for w in warnings if w.get("tested", True)]
    untested = [w for w in warnings if not w.get("tested", True)]
    for warning in tested + (untested if len(untested) <= UNTESTED_SHOWN else []):
        console.print(f"  [yellow]-[/] {escape(warning['message'])}", highlight=False)
    if len(untested) > UNTESTED_SHOWN:
        names = list(dict.fromkeys(str(w["column"]) for w in untested))
        shown = ", ".join(repr(n) for n in names[:8]) + (", ..." if len(names) > 8 else "")
        console.print(
            f"  [yellow]-[/] {len(untested)} on {len(names)} columns no rule tests, so "
            f"predictions are unaffected: {escape(shown)} (the scoring report artifact lists "
            "each)",
            highlight=False,
        )


def _print_summary(summary: dict, seconds: float, replaced: bool = False) -> None:
    from libre_lib.errors import counted
    from libre_lib.ops.scoring import (
        MODEL_ALONE,
        MODEL_ALONE_MISSES,
        NO_ROWS,
        no_rules_text,
        predicted_text,
    )

    console.print(
        f"scored [bold]{summary['rows']:,}[/] rows in "
        f"{counted(summary['batches'], 'batch', 'batches')}: "
        f"{summary['rows_per_second']:,.0f} rows/s"
    )
    if summary["rows"] == 0:
        console.print(
            f"[yellow]warning:[/] {NO_ROWS[0].lower()}{NO_ROWS[1:]}: the output holds the "
            "columns and no row; no drift was checked.",
            highlight=False,
        )
    else:
        console.print(
            f"{escape(predicted_text(summary))}: {summary['n_positive']:,} "
            f"({100.0 * summary['positive_rate']:.2f}%)",
            highlight=False,
        )
        if no_rules_text(summary):
            console.print(f"[yellow]warning:[/] {escape(no_rules_text(summary))}.", highlight=False)
        if summary.get("flag_rate_caution"):
            console.print(
                f"[yellow]warning:[/] {escape(summary['flag_rate_caution'])}.", highlight=False
            )
        origin = str(summary.get("contract_origin") or "")
        if origin.startswith(MODEL_ALONE):
            console.print(
                "[yellow]warning:[/] the model has no contract.json beside it: its data "
                f"contract was {MODEL_ALONE}, so "
                f"{escape(MODEL_ALONE_MISSES)}. Score a registered version (PIPELINE@VERSION), "
                "or keep contract.json beside model.json.",
                highlight=False,
            )
        warnings = summary["warnings"]
        if warnings:
            console.print(
                f"[yellow]{counted(len(warnings), 'drift warning')}[/] (rows were scored):"
            )
            _print_warnings(warnings)
        else:
            console.print(
                "[green]no drift[/] against the model's data contract"
                + (" (derived from the model alone)" if origin.startswith(MODEL_ALONE) else "")
            )
    console.print(
        f"output: [green]{escape(str(summary['output']))}[/]"
        + (" (replaced the file that was there)" if replaced else ""),
        soft_wrap=True,
    )
    console.print(
        f"report artifact: {escape(str(summary.get('artifact')))}; {seconds:.1f} s in total"
    )


app = typer.Typer(
    add_completion=False, rich_markup_mode="markdown", help="Batch scoring with LIBRE rule models."
)
app.command("score")(score_command)


if __name__ == "__main__":  # pragma: no cover
    typer.run(score_command)
