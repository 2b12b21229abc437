"""Data tasks: load the source file, validate it, split off the holdout."""

from __future__ import annotations

import json

from prefect import task
from prefect.artifacts import create_markdown_artifact, create_table_artifact
from prefect.cache_policies import NO_CACHE

from libre_lib.errors import DataError, counted
from libre_lib.ops import stages
from libre_lib.ops.cleanup import RUN_FILE
from libre_lib.ops.files import atomic_write_text
from libre_lib.ops.markdown import md_block, md_cells
from libre_lib.ops.sources import fingerprint_source
from libre_lib.ops.spec import PipelineSpec
from libre_lib.ops.validation import ValidationReport, raise_for_failures

from .common import (
    Stage,
    artifact_key,
    log,
    read_frame,
    read_stage,
    run_folder,
    run_stage,
    source_stage,
)
from .policies import LOAD_TIMEOUT_S, read_policy


@task(name="load", cache_policy=NO_CACHE, **read_policy(LOAD_TIMEOUT_S))
def load(spec: PipelineSpec, store_root: str, force: bool = False) -> Stage:
    """Read the CSV/Parquet source once and keep the selected columns as a Parquet artifact."""
    params = stages.load_params(spec)
    fingerprint = fingerprint_source(spec.data_location(), spec.data.resolved_format())

    def compute():
        loaded = stages.load(spec, fingerprint)
        # the store keeps this content under the fingerprint hashed before reading: a file
        # replaced in between (an export landing mid-run) would be cached as the other's
        if not spec.data.is_url():
            after = fingerprint_source(spec.data_location(), spec.data.resolved_format())
            if after != fingerprint:
                raise DataError(
                    f"Data source {spec.data_location()!r} changed while the pipeline read it "
                    f"(sha256 {fingerprint[:12]}… when the run started, {after[:12]}… after "
                    "reading); nothing was stored. Run again once the file is written."
                )
        return loaded

    source = source_stage(fingerprint)
    stage = run_stage(spec, store_root, "load", params, [source], compute, force)
    n_unlabeled = read_stage(store_root, stage)[1].get("n_unlabeled", 0)
    if n_unlabeled:
        log().info("load: left out %s without a target value (target.unlabeled: drop)",
                   counted(n_unlabeled, "row"))  # fmt: skip
    return stage


@task(name="validate", cache_policy=NO_CACHE)
def validate(
    spec: PipelineSpec, store_root: str, data: Stage, force: bool = False, record_run: bool = True
) -> Stage:
    """Run the spec's expectations; the result is stored and published, and a failure fails
    the run (a training run's failure leaves a run folder: ``record_run``)."""
    rules = stages.validation_rules(spec)

    def compute():
        return stages.validate(read_frame(store_root, data), rules)

    params = stages.validate_params(spec)
    stage = run_stage(spec, store_root, "validate", params, [data], compute, force)
    return finish_validation(spec, store_root, stage, record_run)


def finish_validation(
    spec: PipelineSpec, store_root: str, stage: Stage, record_run: bool = True
) -> Stage:
    """Publish a ``validate`` stage's report and log it; raise when it failed, leaving a failed
    run's folder when ``record_run`` (a training run; ``libre validate`` only checks)."""
    report = load_validation(store_root, stage)
    _publish_validation(spec, report)
    log().info(
        "data validation %s (%d expectations)",
        "passed" if report.success else "FAILED",
        len(report.results),
    )
    if not report.success and record_run:
        _record_failed_run(spec, store_root, report)
    raise_for_failures(report)
    return stage


def _record_failed_run(spec: PipelineSpec, store_root: str, report: ValidationReport) -> None:
    """A run folder for a run that failed data validation: ``validation.md`` and a ``run.json``
    saying so, so that ``libre report`` shows the failure instead of an older run's report."""
    message = (
        f"Data validation failed: {len(report.failures())} of "
        f"{counted(len(report.results), 'expectation')} not met; no model was trained."
    )
    _write_failed_run(
        spec, store_root, "validate", "validation.md", validation_markdown(spec, report), message
    )


def _write_failed_run(
    spec: PipelineSpec, store_root: str, stage: str, page_name: str, page: str, message: str
) -> None:
    """A failed run's folder: its page (what failed) and a ``run.json`` with status failed."""
    run_dir = run_folder(store_root, spec)
    run_dir.mkdir(parents=True, exist_ok=True)
    atomic_write_text(run_dir / page_name, page)
    summary = {
        "pipeline": spec.name,
        "run_dir": str(run_dir),
        "status": "failed",
        "failed_stage": stage,
        "report": str(run_dir / page_name),
        "message": message,
    }
    atomic_write_text(run_dir / RUN_FILE, json.dumps(summary, indent=2))


def record_failed_read(spec: PipelineSpec, store_root: str, exc: BaseException) -> None:
    """A run folder for a run that failed reading its data (a column gone, a file that cannot
    be parsed): ``failure.md`` and a ``run.json`` saying so, as a failed validation leaves, so
    that ``libre report`` shows the failure instead of an older run's report. Best effort: a
    store it cannot write leaves the original error to be raised."""
    message = md_block(" ".join(str(exc).split()) or type(exc).__name__)
    page = (
        f"# {spec.name}: the run failed reading its data\n\n{message}\n\nNo model was "
        "trained, and the champion (if any) is unchanged.\n"
    )
    summary = f"Reading the data failed ({type(exc).__name__}); no model was trained."
    try:
        _write_failed_run(spec, store_root, "load", "failure.md", page, summary)
    except OSError:
        pass


def validation_markdown(spec: PipelineSpec, report: ValidationReport) -> str:
    """The validation result in Markdown: the Prefect artifact, and a failed run's page."""
    status = "passed" if report.success else "FAILED"
    failures = report.failures()
    lines = [
        f"# Data validation: {spec.name}",
        "",
        f"**{status}**: {len(report.results) - len(failures)} of {len(report.results)} "
        f"expectations met on {report.n_rows} rows.",
    ]
    if failures:
        lines += ["", "```text", report.summary(), "```"]
    return "\n".join(lines)


def load_validation(store_root: str, stage: Stage) -> ValidationReport:
    return stages.validation_report(read_stage(store_root, stage)[1])


def _publish_validation(spec: PipelineSpec, report: ValidationReport) -> None:
    """The validation result as Prefect artifacts (also when it fails the run)."""
    create_markdown_artifact(
        validation_markdown(spec, report),
        key=artifact_key(spec, "validation"),
        description="Data validation",
    )
    rows = json.loads(report.to_frame().to_json(orient="records"))
    first = ("expectation", "column", "success", "details")  # in view before the examples
    rows = [{**{k: r[k] for k in first if k in r}, **r} for r in rows]
    create_table_artifact(
        md_cells(rows),
        key=artifact_key(spec, "expectations"),
        description="One row per expectation",
    )


def check_labels(spec: PipelineSpec, frame) -> None:
    """The spec's report labels against the loaded columns (``frame``), as ``load`` checks them
    when it computes (a cached ``load`` does not run): ``libre validate`` answers alike
    either way."""
    stages.check_report_labels(frame, spec, spec.features.categorical or [])


@task(name="split", cache_policy=NO_CACHE)
def split(spec: PipelineSpec, store_root: str, data: Stage, force: bool = False) -> Stage:
    """Mark the holdout rows (each by its values and the split seed: a row keeps its side)."""

    def compute():
        return stages.split(spec, read_frame(store_root, data))

    params = stages.split_params(spec)
    return run_stage(spec, store_root, "split", params, [data], compute, force)


def holdout_flags(store_root: str, split: Stage):
    """The ``holdout`` flag of every row, as a boolean array."""
    return read_frame(store_root, split)["holdout"].to_numpy()


def training_rows(store_root: str, split: Stage) -> int:
    """How many rows the split keeps for training (the final fit's rows)."""
    return int((~holdout_flags(store_root, split)).sum())


def split_rows(spec: PipelineSpec, store_root: str, data: Stage, split: Stage, holdout=False):
    """(X, y) of the training (or holdout) rows."""
    frame = read_frame(store_root, data)
    return stages.split_rows(spec, frame, holdout_flags(store_root, split), holdout)
