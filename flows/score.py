"""Batch scoring as a Prefect flow: contract check, streaming scoring, a scoring report.

check the inputs (every file's columns, a sample of each against the model's data contract;
errors fail the run before anything is written) → score in record batches into one Parquet
file (atomic) → a Markdown "scoring report" artifact (``libre-<name>-scoring``) with throughput,
predictions per rule and drift warnings::

    from libre_flows.flows.score import score
    summary = score("runs/pima/<run>/model.json", "incoming/", "scored/pima.parquet")

The model comes from a ``model.json`` path (its data contract from ``contract.json`` /
``<stem>.contract.json`` next to it, else from the model alone) or from ``model_loader``: a
callable returning a fitted ``LibreClassifier`` or a ``(model, contract)`` pair, e.g.
``lambda: ModelRegistry(root).load_model(pipeline, version="champion")``.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from pathlib import Path

from prefect import flow, task
from prefect.artifacts import create_markdown_artifact
from prefect.cache_policies import NO_CACHE

from libre_flows.tasks.common import log
from libre_lib.errors import DataError, ParameterError
from libre_lib.ops.contract import DataContract
from libre_lib.ops.scoring import (
    DEFAULT_BATCH_ROWS,
    check_inputs,
    find_contract,
    list_inputs,
    load_model,
    render_scoring_report,
    score_files,
)

PROGRESS_EVERY_S = 5.0


def scoring_name(model_path: str | None, name: str | None = None) -> str:
    """The name in the artifact key: ``name``, else the pipeline of a run folder or registry
    version (``.../runs/<pipeline>/<run>/model.json``, ``.../models/<pipeline>/<version>/
    model.json``), else the model file's folder or stem."""
    if not name and model_path:
        path = Path(model_path)
        parts = path.parts
        if len(parts) >= 4 and parts[-4] in ("runs", "models"):
            name = parts[-3]
        elif path.stem == "model" and path.parent.name:
            name = path.parent.name
        else:
            name = path.stem
    slug = re.sub(r"[^a-z0-9]+", "-", (name or "model").lower()).strip("-")
    return slug or "model"


def artifact_key(name: str) -> str:
    return f"libre-{name}-scoring"


def resolve_model(model_path: str | None, model_loader: Callable | None = None):
    """(model, contract, where the contract came from)."""
    contract = None
    if model_loader is not None:
        loaded = model_loader()
        if isinstance(loaded, tuple):
            loaded, contract = loaded
        model = loaded
        origin = "the model loader" if contract is not None else None
    elif model_path:
        model = load_model(model_path)
        contract = find_contract(model_path)
        origin = "saved with the model" if contract is not None else None
    else:
        raise ParameterError("Give a model path or a model_loader.")
    if isinstance(contract, dict):
        contract = DataContract.from_dict(contract)
    if contract is None:
        contract = DataContract.from_model(model)
        origin = (
            "derived from the model alone (no contract saved with it: categories and missing "
            "bins are checked, training ranges and missing rates are not)"
        )
    return model, contract, origin


@task(name="check-inputs", cache_policy=NO_CACHE)
def check_scoring_inputs(model, contract, inputs: str, output: str) -> dict:
    """Every file's columns and a sample of each against the contract; fails on errors."""
    started = time.perf_counter()
    result = check_inputs(model, inputs, contract, exclude=[output])
    warnings = result.sample.warnings
    log().info(
        "stage check    %d file(s), %d sample rows, %d drift warning(s) (%.2f s)",
        len(result.files),
        result.sample.n_rows,
        len(warnings),
        time.perf_counter() - started,
    )
    for warning in warnings:
        log().warning("sample drift: %s", warning.message)
    return result.to_dict()


@task(name="score", cache_policy=NO_CACHE)
def score_inputs(model, contract, inputs: str, output: str, batch_rows: int) -> dict:
    """Stream the inputs through the model into one Parquet file."""
    last = [0.0]

    def progress(rows: int, total: int | None) -> None:
        now = time.perf_counter()
        if now - last[0] >= PROGRESS_EVERY_S:
            last[0] = now
            of = f" of {total}" if total else ""
            log().info("stage score    %d%s rows", rows, of)

    summary = score_files(
        model, inputs, output, batch_rows=batch_rows, contract=contract, progress=progress
    )
    log().info(
        "stage score    %d rows in %.2f s (%.0f rows/s) -> %s",
        summary.rows,
        summary.seconds,
        summary.rows_per_second,
        summary.output,
    )
    for warning in summary.warnings:
        log().warning("drift: %s", warning.message)
    return summary.to_dict()


@task(name="scoring-report", cache_policy=NO_CACHE)
def scoring_report(summary: dict, name: str, model_label: str, contract_origin: str) -> str:
    """The Markdown scoring report as a Prefect artifact; returns its key."""
    markdown = render_scoring_report(summary, title=f"Scoring report: {name}", model=model_label)
    markdown += f"\nData contract: {contract_origin}.\n"
    key = artifact_key(name)
    create_markdown_artifact(
        markdown, key=key, description=f"Batch scoring of {model_label}: drift and throughput"
    )
    return key


@flow(name="libre-score")
def score_flow(
    model_path: str | None,
    inputs: str,
    output: str,
    batch_rows: int = DEFAULT_BATCH_ROWS,
    name: str | None = None,
    model_loader: Callable | None = None,
) -> dict:
    """Score ``inputs`` (a CSV / Parquet file or a directory of them) with a model into one
    Parquet file; returns the scoring summary (rows, rows/s, drift warnings, artifact key)."""
    model, contract, origin = resolve_model(model_path, model_loader)
    label = model_path or name or "model from the loader"
    key_name = scoring_name(model_path, name)
    check = check_scoring_inputs(model, contract, inputs, output)
    summary = score_inputs(model, contract, inputs, output, batch_rows)
    summary["artifact"] = scoring_report(summary, key_name, str(label), origin)
    summary["sample_warnings"] = check["sample"]["warnings"]
    return summary


def preflight(model_path: str | None, inputs, output, model_loader: Callable | None = None):
    """Fast errors before Prefect starts: the model file and the inputs exist."""
    if model_loader is None:
        if not model_path:
            raise ParameterError("Give a model path or a model_loader.")
        load_model(model_path)
    list_inputs(str(inputs), exclude=[output])
    if Path(output).is_dir():
        raise DataError(f"Output {str(output)!r} is a directory; give a .parquet file path.")


def score(
    model_path=None,
    inputs=None,
    output=None,
    batch_rows: int = DEFAULT_BATCH_ROWS,
    *,
    name: str | None = None,
    model_loader: Callable | None = None,
) -> dict:
    """Run the scoring flow (Prefect's default embedded setup if no server is configured)."""
    if inputs is None or output is None:
        raise ParameterError("score needs inputs and an output path.")
    preflight(model_path, inputs, output, model_loader)
    return score_flow(
        str(model_path) if model_path else None,
        str(inputs),
        str(output),
        batch_rows=batch_rows,
        name=name,
        model_loader=model_loader,
    )
