"""Report task: holdout metrics, the stakeholder rule report (files and Prefect artifacts)."""

from __future__ import annotations

import dataclasses
import json
from datetime import UTC, datetime
from pathlib import Path

import pandas as pd
from prefect import task
from prefect.artifacts import create_markdown_artifact, create_table_artifact
from prefect.cache_policies import NO_CACHE

from libre_lib.ops.artifacts import atomic_write_text
from libre_lib.ops.contract import DataContract
from libre_lib.ops.registry import ModelRegistry, validation_record
from libre_lib.ops.report import build_report, render_html, render_markdown
from libre_lib.ops.spec import PipelineSpec
from libre_lib.ops.validation import ValidationReport

from .common import Stage, log, read_stage, run_stage, spec_hash, target_label
from .learning import load_model, training_part


def artifact_key(spec: PipelineSpec, what: str) -> str:
    """Prefect artifact keys: lowercase letters, digits and dashes."""
    return f"libre-{spec.name}-{what}"


def _records(frame: pd.DataFrame) -> list[dict]:
    return json.loads(frame.to_json(orient="records"))


@task(name="report", cache_policy=NO_CACHE)
def report(
    spec: PipelineSpec,
    store_root: str,
    selection: Stage,
    data: Stage,
    split: Stage,
    validation: Stage,
    run_dir: str,
    force: bool = False,
) -> dict:
    """Metrics on the holdout rows, report.md / report.html / model.json in the run folder,
    and the markdown and table artifacts."""
    model = load_model(store_root, selection)
    X, y = training_part(spec, store_root, data, split, holdout=True)
    note = ()
    if len(X) == 0:
        X, y = training_part(spec, store_root, data, split)
        note = ("holdout_fraction is 0: the metrics below are on the training rows.",)
    validation_report = ValidationReport.from_dict(read_stage(store_root, validation)[1]["report"])
    n_train = int((~read_stage(store_root, split)[0].column("holdout").to_numpy()).sum())
    rule_report = build_report(
        model,
        X,
        y,
        title=spec.report.title or f"Rule report: {spec.name}",
        column_labels=spec.report.column_labels,
        target_label=spec.report.target_label,
        validation_summary=validation_report.summary(),
        validation_success=validation_report.success,
        data_description=(
            f"{Path(spec.data.path).name}: {n_train} training rows, {len(X)} holdout rows; "
            f"positive class {target_label(spec, spec.target.positive_class)!r}"
        ),
        generated_at=datetime.now(UTC).isoformat(timespec="seconds"),
        notes=note,
    )
    X_train, _ = training_part(spec, store_root, data, split)
    data_contract = DataContract.from_model(model, X_train)
    contract = data_contract.to_json()
    suite = json.dumps(data_contract.to_expectation_suite(f"libre-{spec.name}-contract"), indent=2)
    version, decision, changes = _register(
        spec,
        store_root,
        model,
        rule_report,
        validation_report,
        data,
        Path(run_dir).name,
        {"contract.json": contract, "expectations.json": suite},
    )
    rule_report = dataclasses.replace(rule_report, changes=changes)
    markdown = render_markdown(rule_report)
    folder = Path(run_dir)
    atomic_write_text(folder / "report.md", markdown)
    atomic_write_text(folder / "report.html", render_html(rule_report))
    atomic_write_text(folder / "model.json", model.to_json())
    atomic_write_text(folder / "contract.json", contract)
    atomic_write_text(folder / "expectations.json", suite)

    def compute():
        return rule_report.rules, {"metrics": dict(rule_report.metrics)}

    stage = run_stage(
        spec,
        store_root,
        "report",
        {"spec": spec.report.model_dump()},
        [selection, data, split, validation],
        compute,
        force,
    )
    create_markdown_artifact(
        markdown, key=artifact_key(spec, "report"), description=f"LIBRE rule report for {spec.name}"
    )
    create_table_artifact(
        _records(rule_report.rules),
        key=artifact_key(spec, "rules"),
        description="Per-rule statistics",
    )
    create_table_artifact(
        [dict(rule_report.metrics)],
        key=artifact_key(spec, "metrics"),
        description="Holdout metrics",
    )
    return {
        "metrics": dict(rule_report.metrics),
        "report_stage": stage.ref.path,
        "version": version.version,
        "promoted": decision.promoted,
        "promotion": decision.reason,
    }


def _register(
    spec, store_root, model, rule_report, validation_report, data: Stage, run_id, files: dict
):
    """Register this run's model as a new version and promote it if it is not worse than the
    champion (section "Model versions" of docs/operations.md)."""
    registry = ModelRegistry(store_root)
    previous = registry.champion(spec.name)
    version = registry.register(
        spec.name,
        model.to_json(),
        spec=spec.model_dump(mode="json"),
        metrics=dict(rule_report.metrics),
        validation=validation_record(validation_report),
        data_fingerprint=data.ref.sha256,
        spec_hash=spec_hash(spec),
        run_id=run_id,
        extra_files=files,
    )
    decision = registry.promote(
        spec.name,
        version.version,
        tolerance=spec.promotion.tolerance,
        metric=spec.promotion.metric,
    )
    log().info("model %s: %s", version.version, decision.reason)
    changes = registry.changes(spec.name, previous, version, decision)
    if changes is not None and spec.report.column_labels:
        changes = dataclasses.replace(changes, column_labels=dict(spec.report.column_labels))
    return version, decision, changes
