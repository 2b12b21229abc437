"""``libre models``: the model registry's versions and champions.

libre models list pima [--store DIR]      (pima, or its spec file)
libre models show pima [VERSION|champion] [--store DIR]   (or pima@VERSION, as libre score)
libre models promote pima VERSION [--reason TEXT] [--store DIR]

Mounted by ``libre_flows.flows.cli`` as ``app.add_typer(models_app, name="models")``.
Needs no Prefect.
"""

from __future__ import annotations

import contextlib
import math
import re
import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from libre_flows.flows.cli.common import Debug, known_pipelines, pipeline_and_store

models_app = typer.Typer(
    add_completion=False,
    rich_markup_mode="markdown",
    no_args_is_help=True,
    help="List and inspect registered model versions; make one the champion by hand.",
)
#: Off a terminal (a file, a pipe, CI) lines stay whole and tables keep every column.
console = Console(soft_wrap=True, width=1_000) if not sys.stdout.isatty() else Console()
errors = Console(stderr=True, soft_wrap=True)

PipelineArg = Annotated[
    str, typer.Argument(help="Pipeline name (the spec's `name`), or its spec file.")
]
PinnedArg = Annotated[
    str,
    typer.Argument(
        help="Pipeline name (the spec's `name`) or its spec file, optionally @VERSION "
        "(pima@v0002-1a2b3c4d)."
    ),
]
#: The VERSION of PIPELINE@VERSION.
_VERSION = re.compile(r"[\w-]+")
StoreOpt = Annotated[
    Path | None,
    typer.Option(
        "--store",
        help="Store root holding models/PIPELINE/ (default: ./.libre-store; for a spec, the "
        "spec's store).",
        show_default=False,
    ),
]

STATUS_STYLE = {
    "champion": "bold green",
    "challenger-rejected": "red",
    "retired": "dim",
    "candidate": "yellow",
}


def _minute(stamp: str) -> str:
    """An ISO 8601 UTC timestamp to the minute, as a table cell: "2026-11-30 05:21"."""
    return stamp[:16].replace("T", " ") if len(stamp) >= 16 and stamp[10:11] == "T" else stamp


def _fail(exc: BaseException, debug: bool = False) -> None:
    """One clear line on stderr, exit code 1 (with --debug, the traceback)."""
    if debug:
        raise exc
    message = str(exc).strip().splitlines() or [type(exc).__name__]
    errors.print(f"[bold red]error:[/] {escape(message[0])}", highlight=False)
    raise typer.Exit(code=1)


VersionArg = Annotated[
    str, typer.Argument(help="A version id (e.g. v0003-1a2b3c4d) or `champion`.")
]


def _version(pipeline: str, version: str, store: Path | None, debug: bool):
    """(pipeline, store, registry, its registry entry, its model) of the version a command
    names; one error line (exit 1) if it cannot be read."""
    from libre_lib.errors import LibreError, ParameterError

    try:
        named, at, pinned = pipeline.rpartition("@")
        if at and named and _VERSION.fullmatch(pinned) and not Path(pipeline).exists():
            # PIPELINE@VERSION, as `libre score` takes it (a spec path may hold an @)
            if version != "champion":
                raise ParameterError(
                    f"{pipeline!r} names version {pinned!r} and the command also got {version!r}:"
                    " give the version once."
                )
            pipeline, version = named, pinned
        pipeline, store = pipeline_and_store(pipeline, store)
        registry = _registry(store)
        entry = registry.get(pipeline, version)
        return pipeline, store, registry, entry, registry.load_model(pipeline, entry.version)
    except (LibreError, OSError) as exc:
        _fail(exc, debug)
        raise  # not reached: _fail exits


def _registry(store: Path):
    from libre_lib.ops.registry import ModelRegistry

    return ModelRegistry(store)


def _rate(value) -> str:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return "–"
    return "–" if math.isnan(number) else f"{number:.3f}"


def _in_sample(registry, pipeline: str, version: str) -> bool:
    """Was the version trained without a holdout (its metrics on its training rows)?"""
    from libre_lib.errors import LibreError

    try:
        return registry.spec(pipeline, version).get("holdout_fraction") == 0
    except (LibreError, OSError, AttributeError):
        return False  # an unreadable spec: the version reads as scored on a holdout


def _run_record(store: Path, pipeline: str, run_id: str) -> dict | None:
    """The run.json of the run that trained a version, if it is still in the store."""
    import json

    from libre_lib.ops.cleanup import RUN_FILE, RUNS_DIR

    try:
        record = json.loads((Path(store) / RUNS_DIR / pipeline / run_id / RUN_FILE).read_text())
    except (OSError, ValueError):
        return None
    return record if isinstance(record, dict) else None


def _count(value) -> str:
    if isinstance(value, bool) or value is None:
        return "–"
    try:
        return str(int(value))
    except (TypeError, ValueError):
        return "–"


@models_app.command("list")
def list_versions(pipeline: PipelineArg, store: StoreOpt = None, debug: Debug = False) -> None:
    """Every version of PIPELINE, oldest first; the champion is marked with ★."""
    from libre_lib.errors import LibreError

    try:
        pipeline, store = pipeline_and_store(pipeline, store)
        registry = _registry(store)
        versions = registry.versions(pipeline)
    except (LibreError, OSError) as exc:
        _fail(exc, debug)
        return
    if not versions:
        known = registry.pipelines()
        if pipeline in known:  # its folder exists, but no version in it can be read
            _fail(
                LookupError(
                    f"No readable model version of {pipeline!r} under {store / 'models'}: "
                    "every version folder is incomplete or damaged (see the warnings above)."
                )
            )
        hint = known_pipelines(pipeline, known, str(store / "models"))
        _fail(LookupError(f"No model versions of {pipeline!r}.{hint}"))
        return
    wide = console.width >= 100  # room for the reason, cut to one line
    in_sample = {v.version for v in versions if _in_sample(registry, pipeline, v.version)}
    table = Table(
        title=f"models of {pipeline}",
        show_edge=False,
        caption="f1: each version on its own run's holdout rows"
        + (" (*: on its training rows, no holdout)" if in_sample else "")
        + "; "
        + (
            "reason: the latest decision on each; every decision, in full,"
            if wide
            else "the promotion decisions"
        )
        + f" with `libre models show {pipeline} VERSION`",
    )
    for column, justify in (
        ("", "left"),
        ("version", "left"),
        ("created", "left"),
        ("status", "left"),
        ("f1", "right"),
        ("rules", "right"),
        *((("reason", "left"),) if wide else ()),
    ):  # a narrow terminal folds the timestamps, never a version id (it is copied)
        table.add_column(
            column,
            justify=justify,
            overflow="ellipsis" if column == "reason" else "fold",
            no_wrap=column not in ("created",),
            max_width=console.width - 80 if column == "reason" else None,
        )
    for version in versions:
        style = STATUS_STYLE.get(version.status, "")
        table.add_row(
            "★" if version.is_champion else "",
            version.version,
            _minute(version.created_at),
            f"[{style}]{version.status}[/]" if style else version.status,
            _rate(version.metrics.get("f1")) + (" *" if version.version in in_sample else ""),
            _count(version.metrics.get("n_rules")),
            *((Text(_reason(version)),) if wide else ()),
        )
    console.print(table)


def _reason(entry) -> str:
    """The version's promotion reason; for a candidate never decided on (its run stopped before
    the promotion), that."""
    if entry.reason or entry.status != "candidate" or entry.decided_at:
        return entry.reason
    return (
        "undecided: its run has applied no promotion decision (still running, or it stopped "
        "before; training the spec again decides)"
    )


def _past_decisions(registry, entry, record: dict | None) -> list[tuple[str, str]]:
    """The decisions on a version before its current reason: its run's (a later promotion
    replaced it with "replaced by v0004-..."), and each time it was made champion. `models
    show` printed only the latest, so why a retired version had once been promoted was lost."""
    rows = []
    decision = (record or {}).get("decision") or {}
    first = decision.get("reason") if decision.get("version") == entry.version else None
    if isinstance(first, str) and first != entry.reason:
        verdict = "promoted" if decision.get("promoted") else "not promoted"
        rows.append(("in its run", f"{verdict}: {first}"))
    said = (first, entry.reason)  # shown above already
    for promotion in registry.history(entry.pipeline):
        if promotion.get("version") == entry.version and promotion.get("reason") not in said:
            when = _minute(str(promotion.get("promoted_at", "")))
            rows.append(("made champion", f"{when}: {promotion.get('reason')}"))
    return rows


@models_app.command("show")
def show_version(
    pipeline: PinnedArg,
    version: VersionArg = "champion",
    store: StoreOpt = None,
    debug: Debug = False,
) -> None:
    """Metadata and rules of one version of PIPELINE (default: the champion)."""
    pipeline, store, registry, entry, model = _version(pipeline, version, store, debug)
    star = " ★ champion" if entry.is_champion else ""
    console.print(f"[bold]{pipeline} {entry.version}[/]{star}", highlight=False)
    meta = Table(show_header=False, show_edge=False, box=None, pad_edge=False)
    meta.add_column(style="bold")
    meta.add_column(overflow="fold")
    validation = entry.validation
    if validation.get("success") is True:
        checked = validation.get("n_expectations")
        valid = "passed" + (f" ({checked} expectations)" if checked is not None else "")
    else:
        from libre_lib.errors import counted

        n_failed = validation.get("n_failed")
        failed = counted(n_failed, "expectation") if isinstance(n_failed, int) else "expectations"
        valid = f"failed ({failed} not met)"
    record = _run_record(store, pipeline, entry.run_id)
    rows = [
        ("status", entry.status),
        ("reason", _reason(entry) or "–"),
        *_past_decisions(registry, entry, record),
        ("created", entry.created_at),
        ("decided", entry.decided_at or "–"),
        ("run id", entry.run_id),
        ("data", entry.data_fingerprint),
        ("spec hash", entry.spec_hash),
        ("model sha256", entry.model_sha256),
        ("validation", valid),
        ("path", str(entry.path)),
    ]
    for key, value in rows:
        meta.add_row(key, Text(str(value)))
    console.print(meta, highlight=False)
    if entry.metrics:
        title = "holdout metrics"
        if _in_sample(registry, pipeline, entry.version):  # a title folds to the table's width
            console.print("[bold]metrics on the training rows[/] (no holdout: holdout_fraction 0)")
            title = None
        metrics = Table(title=title, show_edge=False)
        metrics.add_column("metric")
        metrics.add_column("value", justify="right")
        for name, value in entry.metrics.items():
            shown = _rate(value) if isinstance(value, float) else str(value)
            metrics.add_row(Text(str(name)), Text(shown))
        console.print(metrics)
    cautions = (record or {}).get("cautions") or []
    if cautions:  # a sign-off made from the registry sees what the report warned of
        console.print(f"[bold yellow]cautions of its report (run {entry.run_id})[/]")
        for caution in cautions:
            console.print(f"- {caution}", markup=False, highlight=False)
    console.print("[bold]rules[/]")
    console.print(str(model.rules_), markup=False, highlight=False)


@models_app.command("sql")
def sql_version(
    pipeline: PinnedArg,
    version: VersionArg = "champion",
    store: StoreOpt = None,
    debug: Debug = False,
) -> None:
    """One version's rule set as a boolean SQL expression (default: the champion).

    TRUE where it predicts the positive class. The spec's missing-value markers (na_values)
    read as NULL, so the SQL answers as `libre score` does on the same rows."""
    from libre_lib.errors import LibreError

    pipeline, store, registry, entry, model = _version(pipeline, version, store, debug)
    try:
        contract = registry.load_contract(pipeline, entry.version)
    except (LibreError, OSError) as exc:
        _fail(exc, debug)
        return
    markers = {} if contract is None else contract.missing_values()
    markers = {c: m for c, m in markers.items() if c in set(model.columns_)}
    defaults: dict[str, list[str]] = {}
    with contextlib.suppress(LibreError, OSError, ValueError, KeyError, TypeError):
        defaults = csv_text_markers(registry.spec(pipeline, entry.version), model)
    rules = model.rules_
    said = f"{entry.version}: TRUE where {rules.target!r} = {str(rules.positive_class)!r}"
    print(_sql_comment(f"{pipeline} {said}"))
    if markers:
        shown = "; ".join(f"{c!r}: {', '.join(map(repr, m))}" for c, m in markers.items())
        print(_sql_comment(f"read as NULL, as the spec's na_values: {shown}"))
    if defaults:
        texts = next(iter(defaults.values()))
        print(
            _sql_comment(
                f"read as NULL in the text columns {', '.join(map(repr, defaults))}, as the CSV "
                "reader read them in training and `libre score` does: "
                + ", ".join(map(repr, texts))
            )
        )
        for column, found in defaults.items():
            markers[column] = list(dict.fromkeys([*markers.get(column, []), *found]))
    blank = [c for c in blank_text_columns(contract, model) if "" not in markers.get(c, [])]
    if blank:
        print(
            _sql_comment(
                f"read as NULL: an empty text in the text columns {', '.join(map(repr, blank))}, "
                "as `libre score` reads it (no training category is empty)"
            )
        )
        for column in blank:
            markers[column] = [*markers.get(column, []), ""]
    print(_sql_comment("SQL NULL is the missing value: store NaN as NULL, and numbers as numbers"))
    print(model.to_sql(markers))


def csv_text_markers(spec: dict, model) -> dict[str, list[str]]:
    """The texts a CSV's reader takes for a missing cell (pandas' and pyarrow's defaults:
    "NA", "null", "", ...), per text column of ``model``, when the version's data came from a
    CSV read with them (``spec``: its spec.json): its rules learned those cells as missing,
    and `libre score` reads them so, while a warehouse loading the file keeps "NA" a text.
    Empty otherwise (Parquet, or ``keep_default_na: false``)."""
    import pyarrow.csv as pacsv

    from libre_lib.discretization import CATEGORICAL
    from libre_lib.ops.spec import DataSource

    data = DataSource.model_validate(spec["data"])
    options = data.read_options
    off = options.get("keep_default_na") is False or options.get("na_filter") is False
    if data.resolved_format() != "csv" or off:
        return {}
    texts = list(pacsv.ConvertOptions().null_values)
    tested = {condition.feature for rule in model.rules_ for condition in rule}
    return {
        f.name: texts
        for f in model.discretization_.features
        if f.kind == CATEGORICAL and f.name in tested
    }


def blank_text_columns(contract, model) -> list[str]:
    """The text columns ``model``'s rules test where `libre score` reads an empty text as
    missing (:func:`~libre_lib.ops.scoring.blank_is_missing`): a Parquet-trained version's SQL
    compared it as a category, and flagged other rows than `libre score` (11 of 168)."""
    from libre_lib.discretization import CATEGORICAL
    from libre_lib.ops.scoring import blank_is_missing

    if contract is None:
        return []
    tested = {condition.feature for rule in model.rules_ for condition in rule}
    texts = {  # columns of text categories (a marker "" means nothing among numbers or bools)
        f.name
        for f in model.discretization_.features
        if f.kind == CATEGORICAL and any(isinstance(c, str) for c in f.categories)
    }
    return [c for c in blank_is_missing(contract) if c in tested and c in texts]


def _sql_comment(text: str) -> str:
    """One SQL comment line: texts from the data (a class, a marker) cannot end it."""
    return "-- " + " ".join(text.splitlines())


@models_app.command("promote")
def promote_version(
    pipeline: PipelineArg,
    version: Annotated[str, typer.Argument(help="The version id to make the champion.")],
    reason: Annotated[
        str, typer.Option("--reason", help="Why (recorded with the promotion).")
    ] = "",
    store: StoreOpt = None,
    debug: Debug = False,
) -> None:
    """Make VERSION the champion of PIPELINE by hand (a rollback, or a damaged champion).

    No score comparison: its files must pass their checksums and its data validation must have
    passed; the old champion, if readable, is retired."""
    from libre_lib.errors import LibreError

    try:
        pipeline, store = pipeline_and_store(pipeline, store)
        registry = _registry(store)
        if not registry.versions(pipeline):
            hint = known_pipelines(pipeline, registry.pipelines(), str(store / "models"))
            raise LookupError(f"No model versions of {pipeline!r} under {store / 'models'}.{hint}")
        try:
            before = registry.champion(pipeline)
        except LibreError:
            before = None
        champion = registry.set_champion(pipeline, version, reason)
    except (LibreError, OSError, LookupError) as exc:
        _fail(exc, debug)
        return
    if before is not None and before.version == champion.version:
        console.print(f"{pipeline} {champion.version} is already the champion.", highlight=False)
        return
    was = f" (was {before.version})" if before is not None else ""
    console.print(
        f"[bold green]★[/] {pipeline} {champion.version} is now the champion{was}.",
        highlight=False,
    )
