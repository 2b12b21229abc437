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

from collections.abc import Callable

from prefect import flow

from libre_flows.flows import heartbeats
from libre_flows.flows.embedded_server import guard_embedded_server, run_flow
from libre_flows.tasks.score import (
    check_inputs,
    resolve_model,
    score_inputs,
    scoring_name,
    scoring_report,
)
from libre_lib.errors import ParameterError
from libre_lib.ops.artifacts import fingerprint_file
from libre_lib.ops.scoring import DEFAULT_BATCH_ROWS, check_output, list_inputs, load_model

heartbeats.install()  # the run's end does not wait for its heartbeat thread


def _run_name() -> str:
    """``score-<pipeline>-<time>``: which pipeline's model scored, in the UI's run list."""
    from datetime import UTC, datetime

    from prefect.runtime import flow_run

    given = flow_run.parameters or {}
    named = scoring_name(given.get("model_path"), given.get("name"))
    return f"score-{named}-{datetime.now(UTC):%Y%m%d-%H%M%S}"


@flow(name="libre-score", flow_run_name=_run_name)
def score_flow(
    model_path: str | None,
    inputs: str,
    output: str,
    batch_rows: int = DEFAULT_BATCH_ROWS,
    name: str | None = None,
    model_loader: Callable | None = None,
    fail_on_drift: bool = False,
) -> dict:
    """Score ``inputs`` (a CSV / Parquet file or a directory of them) with a model into one
    Parquet file; returns the scoring summary (rows, rows/s, drift warnings, artifact key).
    ``fail_on_drift``: drift in a column the rules test fails the run (nothing written)."""
    model, contract, origin = resolve_model(model_path, model_loader)
    label = model_path or name or "model from the loader"
    key_name = scoring_name(model_path, name)
    check = check_inputs(model, contract, inputs, output)
    sha256 = fingerprint_file(model_path) if model_path else None  # the file's, as registered
    summary = score_inputs(model, contract, inputs, output, batch_rows, fail_on_drift, sha256)
    summary["artifact"] = scoring_report(summary, key_name, str(label), origin)
    summary["sample_warnings"] = check["sample"]["warnings"]
    summary["contract_origin"] = origin
    return summary


def preflight(model_path: str | None, inputs, output, model_loader: Callable | None = None):
    """Fast errors before Prefect starts: the model file and the inputs exist."""
    if model_loader is None:
        if not model_path:
            raise ParameterError("Give a model path or a model_loader.")
        load_model(model_path)
    check_output(output)
    list_inputs(str(inputs), exclude=[output])


def score(
    model_path=None,
    inputs=None,
    output=None,
    batch_rows: int = DEFAULT_BATCH_ROWS,
    *,
    name: str | None = None,
    model_loader: Callable | None = None,
    fail_on_drift: bool = False,
) -> dict:
    """Run the scoring flow (Prefect's default embedded setup if no server is configured,
    guarded to die with this process)."""
    if inputs is None or output is None:
        raise ParameterError("score needs inputs and an output path.")
    preflight(model_path, inputs, output, model_loader)
    guard_embedded_server()
    return run_flow(
        score_flow,
        str(model_path) if model_path else None,
        str(inputs),
        str(output),
        batch_rows=batch_rows,
        name=name,
        model_loader=model_loader,
        fail_on_drift=fail_on_drift,
    )
