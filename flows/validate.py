"""Validate a spec's data without training (``libre validate``)."""

from __future__ import annotations

from pathlib import Path

from prefect import flow

from libre_flows.tasks.common import read_stage
from libre_flows.tasks.data import load_data, validate_data
from libre_lib.ops.spec import load_spec


@flow(name="libre-validate")
def validate_flow(spec_path: str, store: str | None = None) -> dict:
    """Load the data and run the spec's expectations; fails the run on a failed expectation."""
    spec = load_spec(spec_path)
    root = str(Path(store or spec.store).resolve())
    data = load_data(spec, root)
    stage = validate_data(spec, root, data)
    return read_stage(root, stage)[1]["report"]


def validate(spec_path, store: str | None = None) -> dict:
    return validate_flow(str(spec_path), store=store)
