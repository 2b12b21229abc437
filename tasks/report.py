"""Report tasks: the rule report on the holdout rows, the model version in the registry, the
run folder's files and Prefect artifacts, and last the promotion."""

from __future__ import annotations

import json
import time
from pathlib import Path

from prefect import task
from prefect.artifacts import create_markdown_artifact, create_table_artifact
from prefect.cache_policies import NO_CACHE

from libre_lib.errors import ArtifactError
from libre_lib.ops import stages
from libre_lib.ops.cleanup import RUN_FILE
from libre_lib.ops.files import atomic_write_text
from libre_lib.ops.registry import ModelRegistry
from libre_lib.ops.report import artifact_tables, render_markdown
from libre_lib.ops.spec import PipelineSpec
from libre_lib.ops.stages import Registration, TrainingReport

from .common import (
    Stage,
    artifact_key,
    data_aliases,
    data_fingerprint,
    log,
    read_frame,
    read_stage,
    run_stage,
)
from .data import holdout_flags, load_validation
from .learning import load_choice, load_model


@task(name="report", cache_policy=NO_CACHE)
def report(
    spec: PipelineSpec,
    store_root: str,
    rules: Stage,
    data: Stage,
    split: Stage,
    validation: Stage,
    force: bool = False,
    picked: Stage | None = None,
    refit_fallbacks: int = 0,
    choice: Stage | None = None,
    notes: tuple[str, ...] = (),
    asked_cuts: bool | None = None,
) -> tuple[TrainingReport, Stage]:
    """Metrics and per-rule statistics on the holdout rows, and the model's data contract; the
    per-rule table is stored (the stage returned, which the run lists as it lists the others).
    ``picked``: the tuning's ``pick`` stage, shown in the report, and the points the refit
    check passed over (``refit_fallbacks``). ``choice``: the ``choose`` stage the model was
    fitted from, whose inner scores the report compares the fit with. ``asked_cuts``: the
    significant_cuts of the spec as written (``spec`` is the tuned one)."""
    read = read_stage(store_root, data)[1]
    model = load_model(store_root, rules)
    if choice is not None:  # the model's JSON does not keep its inner scores
        model.auto_scores_ = load_choice(store_root, choice).scores
    frame, flags = read_frame(store_root, data), holdout_flags(store_root, split)
    if read.get("streamed") is None:  # a streamed run's frame is a sample: no rates from it
        X_train, y_train = stages.split_rows(spec, frame, flags)
        registry = ModelRegistry(store_root)
        notes = (*notes, *stages.drift_notes(registry, spec, X_train, model, y_train))
    trained = stages.report(
        spec,
        model,
        frame,
        flags,
        load_validation(store_root, validation),
        None
        if picked is None
        else stages.shipped_choice(read_stage(store_root, picked), refit_fallbacks),
        read.get("streamed"),
        read.get("n_unlabeled", 0),
        notes,
        covered=read_stage(store_root, rules)[0].num_rows,  # the cover's rules, one per row
        asked_cuts=asked_cuts,
    )

    def compute():
        return stages.report_table(trained)

    params = stages.report_params(spec)
    table = [rules, data, split, validation]
    return trained, run_stage(spec, store_root, "report", params, table, compute, force)


@task(name="register", cache_policy=NO_CACHE)
def register(
    spec: PipelineSpec, store_root: str, trained: TrainingReport, data: Stage, run_dir: str
) -> Registration:
    """Register the model as a new version, a candidate (or reuse the version that already
    holds the same model, data and spec), and decide whether it will replace the champion
    (``promote`` records the decision, last)."""
    registry = ModelRegistry(store_root)
    registration = stages.register(
        registry,
        spec,
        trained,
        data_fingerprint(store_root, data),
        Path(run_dir).name,
        data_aliases=data_aliases(store_root, data),
    )
    log().info(
        "model %s %s; %s: %s",
        registration.version.version,
        "registered"
        if registration.new_version
        else "unchanged (same model, data and spec as that version): reused, not registered",
        "to be promoted" if registration.decision.promoted else "not to be promoted",
        registration.decision.reason,
    )
    return registration


@task(name="publish", cache_policy=NO_CACHE)
def publish(
    spec: PipelineSpec, trained: TrainingReport, registration: Registration, run_dir: str
) -> None:
    """report.md, report.html, model.json and the contract files in the run folder; the report,
    rules and metrics as Prefect artifacts."""
    run_id = Path(run_dir).name
    files = stages.run_files(trained, registration, run_id)
    for name, text in files.items():
        atomic_write_text(Path(run_dir) / name, text)
    publish_artifacts(spec, trained, registration, run_id)


def publish_artifacts(
    spec: PipelineSpec, trained: TrainingReport, registration: Registration, run_id: str
) -> None:
    """The report, rules and metrics as Prefect artifacts (the pipeline's latest of each key)."""
    rule_report = stages.run_report(trained, registration, run_id)
    which = artifact_subject(spec, registration, run_id)
    create_markdown_artifact(
        render_markdown(rule_report, figures=True),
        key=artifact_key(spec, "report"),
        description=f"LIBRE rule report of {which}",
    )
    tables = artifact_tables(rule_report)
    create_table_artifact(
        tables["rules"],
        key=artifact_key(spec, "rules"),
        description=f"Per-rule holdout statistics of {which}",
    )
    create_table_artifact(
        tables["metrics"],
        key=artifact_key(spec, "metrics"),
        description=f"Holdout metrics of {which}",
    )


def artifact_subject(spec: PipelineSpec, registration: Registration, run_id: str) -> str:
    """Which model an artifact describes, and whether it serves: the latest artifact of a key
    can be a challenger that was not promoted, whose rules are not the ones in production."""
    decision = registration.decision
    previous = decision.previous.version if decision.previous is not None else None
    if decision.promoted:
        status = "the champion" if decision.unchanged else "to become the champion"
    else:
        status = "not promoted" + (f": {previous} stays the champion" if previous else "")
    return f"{spec.name} {registration.version.version} (run {run_id}; {status})"


@task(name="promote", cache_policy=NO_CACHE)
def promote(
    spec: PipelineSpec,
    store_root: str,
    registration: Registration,
    run_dir: str | None = None,
) -> Registration:
    """Record the promotion decision: the champion pointer moves if the version is not worse
    than the champion, then ``run.json`` in ``run_dir`` says it was applied. The run's last
    step, so a failed run leaves the champion in place (section "Model versions" of
    docs/operations.md). When another run promoted a version meanwhile, the decision is taken
    again (the flow then writes the report again: :func:`republish`)."""
    registry = ModelRegistry(store_root)
    promoted = stages.promote(registry, spec, registration)
    if run_dir is not None:
        path = Path(run_dir) / RUN_FILE
        try:
            summary = json.loads(path.read_text(encoding="utf-8"))
            summary.update(outcome(promoted), promotion_state="applied")
            atomic_write_text(path, json.dumps(summary, indent=2))
        except (OSError, ValueError) as exc:  # the decision stands: say what it was
            done = "is the champion" if promoted.decision.promoted else "was not promoted"
            raise ArtifactError(
                f"Model {promoted.version.version} {done} ({promoted.decision.reason}), but "
                f"{path} could not be updated to say so ({exc}): it still says the promotion "
                "is pending; `libre models list` shows the registry."
            ) from exc
    if promoted.decision != registration.decision:
        log().warning(
            "the champion changed while this run wrote its files; %s (decided before: %s)",
            promoted.decision.reason,
            registration.decision.reason,
        )
    decision = promoted.decision
    verdict = (
        ("kept: still the champion" if decision.unchanged else "promoted: the champion now")
        if decision.promoted
        else "not promoted"
    )
    log().info("model %s %s (%s)", promoted.version.version, verdict, promoted.decision.reason)
    return promoted


def republish(
    spec: PipelineSpec, trained: TrainingReport, promoted: Registration, run_dir: Path
) -> None:
    """The run folder's report and the artifacts again, with the decision ``promote`` applied
    when it differs from ``register``'s (the flow calls it after ``promote``, whose
    ``run.json`` already says what holds: a failure here is a warning)."""
    run_dir = Path(run_dir)
    try:
        for name, text in stages.report_files(trained, promoted, run_dir.name).items():
            atomic_write_text(run_dir / name, text)
        publish_artifacts(spec, trained, promoted, run_dir.name)
    except Exception as exc:  # a Prefect API error as much as a full disk
        log().warning(
            "the report in %s and the artifacts could not be written again with the decision "
            "applied (%s): they give the decision taken at register; run.json and `libre models "
            "list` give the one that holds",
            run_dir,
            exc,
        )


def outcome(registration: Registration) -> dict:
    """The promotion fields of the run's summary (``decision``: the metrics compared, and on
    which rows)."""
    decision = registration.decision
    return {
        "model_version": registration.version.version,
        "new_version": registration.new_version,
        "promoted": decision.promoted,
        # promoted and not the champion already: what a "deploy when it changed" step reads
        "champion_changed": decision.promoted and not decision.unchanged,
        "promotion": registration.decision.reason,
        "decision": registration.decision.to_dict(),
    }


def _column_changes(registration: Registration) -> list[str]:
    """The columns the new version reads that the champion did not, or no longer reads (the
    report's "changes since the champion" says it; ``libre train`` prints it too)."""
    changes = registration.changes
    return [changes.columns] if changes is not None and changes.columns else []


def summarize(
    spec: PipelineSpec,
    run_dir: Path,
    trained: TrainingReport,
    registration: Registration,
    outputs: list[Stage],
    started: float,
) -> dict:
    """The run's summary (run folder, metrics, model version and the promotion decision, which
    stages were cache hits), also written to ``run.json`` in the run folder before ``promote``:
    there ``promoted`` is false and ``promotion_state`` "pending" until ``promote`` has applied
    the decision (a run stopped in between never claims a promotion it did not make)."""
    summary = {
        "pipeline": spec.name,
        "run_dir": str(run_dir),
        "report": str(run_dir / "report.html"),
        "model": str(run_dir / "model.json"),
        "metrics": trained.metrics,
        "metrics_on": trained.scored_rows[2] if trained.scored_rows is not None else "holdout",
        "notes": list(trained.rules.notes) + _column_changes(registration),
        "cautions": list(trained.rules.cautions),
        **outcome(registration),
        "stages": [
            {"stage": s.name, "key": s.key, "path": s.ref.path, "cache_hit": s.hit} for s in outputs
        ],
        "cache_hits": sum(s.hit for s in outputs),
        "n_stages": len(outputs),
        "seconds": round(time.perf_counter() - started, 3),
    }
    for caution in summary["cautions"]:
        log().warning("caution: %s", caution)
    pending = {**summary, "promoted": False, "champion_changed": False}
    pending["promotion_state"] = "pending"
    atomic_write_text(run_dir / RUN_FILE, json.dumps(pending, indent=2))
    log().info(
        "%d of %d stage outputs (one per task) were cache hits; report: %s",
        summary["cache_hits"],
        summary["n_stages"],
        summary["report"],
    )
    return summary
