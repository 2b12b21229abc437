"""Data tasks: load the source file, validate it, split off the holdout."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pyarrow as pa
from prefect import task
from prefect.artifacts import create_markdown_artifact, create_table_artifact
from prefect.cache_policies import NO_CACHE
from sklearn.model_selection import train_test_split

from libre_lib.errors import DataError, SpecError
from libre_lib.ops.sources import fingerprint_source, read_source
from libre_lib.ops.spec import PipelineSpec
from libre_lib.ops.validation import (
    ColumnRule,
    ValidationReport,
    ValidationRules,
    raise_for_failures,
    validate_frame,
)

from .common import Stage, log, read_frame, read_stage, run_stage, target_label


def _select_columns(frame: pd.DataFrame, spec: PipelineSpec) -> pd.DataFrame:
    target = spec.target.column
    if target not in frame.columns:
        raise DataError(
            f"The target column {target!r} is not in the data. Columns are: {list(frame.columns)}."
        )
    features = spec.features
    unknown = [c for c in (features.include or []) + features.exclude if c not in frame.columns]
    if unknown:
        raise SpecError(f"features.include/exclude name columns not in the data: {unknown}.")
    keep = features.include if features.include is not None else list(frame.columns)
    keep = [c for c in keep if c not in features.exclude and c != target]
    return frame[[*keep, target]]


@task(name="load", cache_policy=NO_CACHE)
def load_data(spec: PipelineSpec, store_root: str, force: bool = False) -> Stage:
    """Read the CSV/Parquet source once and keep the selected columns as a Parquet artifact."""
    location = spec.data_location()
    file_format = spec.data.resolved_format()
    fingerprint = fingerprint_source(location)
    text_columns = [spec.target.column, *(spec.features.categorical or [])]
    params = {
        "format": file_format,
        "read_options": spec.data.read_options,
        "features": spec.features.model_dump(),
        "target": spec.target.column,
    }

    def compute():
        frame = read_source(location, file_format, spec.data.read_options, text_columns)
        frame = _select_columns(frame, spec)
        return frame, {"source": location, "source_sha256": fingerprint}

    source = Stage("source", _source_ref(fingerprint), True)
    return run_stage(spec, store_root, "dataset", params, [source], compute, force)


def _source_ref(fingerprint: str):
    from libre_lib.ops.artifacts import ArtifactRef

    return ArtifactRef(stage="source", key=fingerprint, path="", sha256=fingerprint, n_rows=-1)


def validation_rules(spec: PipelineSpec) -> ValidationRules:
    """The Great Expectations suite the spec declares, in plain form."""
    expectations = spec.expectations
    classes = spec.target.classes
    return ValidationRules(
        required_columns=(spec.target.column, *(spec.features.include or [])),
        target_column=spec.target.column,
        target_classes=tuple(str(c) for c in classes) if classes is not None else None,
        min_rows=expectations.min_rows,
        max_missing_fraction=expectations.max_missing_fraction,
        columns={
            name: ColumnRule(
                min=rule.min,
                max=rule.max,
                values=tuple(rule.values) if rule.values is not None else None,
                max_missing_fraction=rule.max_missing_fraction,
                dtype=rule.dtype,
            )
            for name, rule in expectations.columns.items()
        },
        expectations=tuple(e.model_dump() for e in expectations.extra),
    )


def _publish_validation(spec: PipelineSpec, report: ValidationReport) -> None:
    """The validation result as Prefect artifacts (also when it fails the run)."""
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
    create_markdown_artifact(
        "\n".join(lines), key=f"libre-{spec.name}-validation", description="Data validation"
    )
    create_table_artifact(
        json.loads(report.to_frame().to_json(orient="records")),
        key=f"libre-{spec.name}-expectations",
        description="One row per expectation",
    )


@task(name="validate", cache_policy=NO_CACHE)
def validate_data(spec: PipelineSpec, store_root: str, data: Stage, force: bool = False) -> Stage:
    """Run the spec's expectations; the result is stored, and a failure fails the run."""
    rules = validation_rules(spec)

    def compute():
        report = validate_frame(read_frame(store_root, data), rules)
        return report.to_frame(), {"report": report.to_dict()}

    params = {
        "expectations": spec.expectations.model_dump(mode="json"),
        "target": spec.target.model_dump(mode="json"),
        "include": spec.features.include,
    }
    stage = run_stage(spec, store_root, "validation", params, [data], compute, force)
    report = ValidationReport.from_dict(read_stage(store_root, stage)[1]["report"])
    _publish_validation(spec, report)
    log().info(
        "data validation %s (%d expectations)",
        "passed" if report.success else "FAILED",
        len(report.results),
    )
    raise_for_failures(report)
    return stage


@task(name="split", cache_policy=NO_CACHE)
def split_data(spec: PipelineSpec, store_root: str, data: Stage, force: bool = False) -> Stage:
    """Mark the holdout rows (stratified by class, seeded)."""
    params = {
        "holdout_fraction": spec.holdout_fraction,
        "split_seed": spec.split_seed,
        "positive_class": target_label(spec, spec.target.positive_class),
    }

    def compute():
        frame = read_frame(store_root, data)
        positive = (frame[spec.target.column] == params["positive_class"]).to_numpy()
        holdout = np.zeros(frame.shape[0], dtype=bool)
        if spec.holdout_fraction > 0:
            rows = np.arange(frame.shape[0])
            counts = np.bincount(positive.astype(int), minlength=2)
            stratify = positive if counts.min() >= 2 else None
            _, test = train_test_split(
                rows,
                test_size=spec.holdout_fraction,
                random_state=spec.split_seed,
                stratify=stratify,
            )
            holdout[test] = True
        return pa.table({"holdout": holdout}), {}

    return run_stage(spec, store_root, "split", params, [data], compute, force)
