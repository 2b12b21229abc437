"""Scoring tasks: check the inputs against the data contract, score them, publish a scoring
report; and the model and artifact name a scoring run uses."""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from pathlib import Path

from prefect import task
from prefect.artifacts import create_markdown_artifact
from prefect.cache_policies import NO_CACHE

from libre_lib.errors import ParameterError, counted
from libre_lib.ops import scoring
from libre_lib.ops.contract import DataContract
from libre_lib.ops.files import remove_stale_temps

from .common import log
from .policies import CHECK_INPUTS_TIMEOUT_S, read_policy

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
        model = scoring.load_model(model_path)
        contract = scoring.find_contract(model_path)
        origin = "saved with the model" if contract is not None else None
    else:
        raise ParameterError("Give a model path or a model_loader.")
    if isinstance(contract, dict):
        contract = DataContract.from_dict(contract)
    if contract is None:
        contract = DataContract.from_model(model)
        origin = f"{scoring.MODEL_ALONE} (no contract saved with it: {scoring.MODEL_ALONE_MISSES})"
    return model, contract, origin


@task(name="check_inputs", cache_policy=NO_CACHE, **read_policy(CHECK_INPUTS_TIMEOUT_S))
def check_inputs(model, contract, inputs: str, output: str) -> dict:
    """Every file's columns and a sample of each against the contract; fails on errors."""
    started = time.perf_counter()
    result = scoring.check_inputs(model, inputs, contract, exclude=[output])
    warnings = result.sample.warnings
    log().info(
        "stage check_inputs %s, %d sample rows, %s (%.2f s)",
        counted(len(result.files), "file"),
        result.sample.n_rows,
        counted(len(warnings), "drift warning"),
        time.perf_counter() - started,
    )
    for warning in warnings:
        log().warning("sample drift: %s", warning.message)
    return result.to_dict()


@task(name="score_inputs", cache_policy=NO_CACHE, **read_policy())
def score_inputs(
    model,
    contract,
    inputs: str,
    output: str,
    batch_rows: int,
    fail_on_drift: bool = False,
    model_sha256: str | None = None,
) -> dict:
    """Stream the inputs through the model into one Parquet file (first removing the stale
    temps a killed scoring run left next to it, ``libre_lib.ops.files.remove_stale_temps``)."""
    removed = remove_stale_temps(output)
    if removed:
        log().info(
            "removed %s a killed scoring run left next to %s",
            counted(len(removed), "temp file"),
            output,
        )
    last = [0.0]

    def progress(rows: int, total: int | None) -> None:
        now = time.perf_counter()
        if now - last[0] >= PROGRESS_EVERY_S:
            last[0] = now
            of = f" of {total:,}" if total else ""
            log().info("stage score_inputs %s%s rows", f"{rows:,}", of)

    summary = scoring.score_files(
        model,
        inputs,
        output,
        batch_rows=batch_rows,
        contract=contract,
        progress=progress,
        fail_on_drift=fail_on_drift,
        model_sha256=model_sha256,
    )
    log().info(
        "stage score_inputs %d rows in %.2f s (%.0f rows/s) -> %s",
        summary.rows,
        summary.seconds,
        summary.rows_per_second,
        summary.output,
    )
    for warning in summary.warnings:
        log().warning("drift: %s", warning.message)
    return summary.to_dict()


@task(name="scoring_report", cache_policy=NO_CACHE)
def scoring_report(summary: dict, name: str, model_label: str, contract_origin: str) -> str:
    """The Markdown scoring report as a Prefect artifact; returns its key."""
    markdown = scoring.render_scoring_report(
        summary, title=f"Scoring report: {name}", model=model_label
    )
    markdown += f"\nData contract: {contract_origin}.\n"
    key = artifact_key(name)
    create_markdown_artifact(
        markdown, key=key, description=f"Batch scoring of {model_label}: drift and throughput"
    )
    return key
