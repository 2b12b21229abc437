"""Validate a spec's data without training (``libre validate``)."""

from __future__ import annotations

from prefect import flow

from libre_flows.flows import heartbeats
from libre_flows.flows.embedded_server import guard_embedded_server, run_flow
from libre_flows.tasks import data as tasks
from libre_flows.tasks import streamed
from libre_flows.tasks.common import read_frame, store_root
from libre_lib.inputs import misread_text_columns, resolve_categorical
from libre_lib.ops.spec import load_spec
from libre_lib.ops.stages import unheld_label_notes

heartbeats.install()  # the run's end does not wait for its heartbeat thread


def _run_name() -> str:
    """``validate-<pipeline>-<time>``: which pipeline's data were checked, in the UI's run
    list (the spec's name, else its file's)."""
    from datetime import UTC, datetime
    from pathlib import Path

    from prefect.runtime import flow_run

    from libre_lib.errors import LibreError

    path = str((flow_run.parameters or {}).get("spec_path", "spec"))
    try:
        named = load_spec(path).name
    except (LibreError, OSError):
        named = Path(path).stem
    return f"validate-{named}-{datetime.now(UTC):%Y%m%d-%H%M%S}"


@flow(name="libre-validate", flow_run_name=_run_name)
def validate_flow(spec_path: str, store: str | None = None) -> dict:
    """Load the data and run the spec's expectations; fails the run on a failed expectation.
    The result's ``notes`` name columns that training would read as text although they mostly
    hold numbers (in memory); a column training refuses (dates, cells no rule can name) fails
    the run, as in training. In memory, the split is computed (training reuses it): a
    positive class the target never holds, or ``split_by`` key columns without a value, fail
    here, not first in training.
    A streamed spec is profiled part by part (the training pipeline's first pass, whose
    artifacts a later ``libre train`` reuses)."""
    spec = load_spec(spec_path)
    root = store_root(spec, store)
    if spec.is_streamed():
        plan, source = streamed.plan_source(spec)
        profiles = streamed.profile_all(spec, root, source, plan)
        validation = streamed.validate(spec, root, plan, profiles, record_run=False)
        notes = list(streamed.source_notes(spec))
    else:
        data = tasks.load(spec, root)
        frame = read_frame(root, data)
        tasks.check_labels(spec, frame)
        validation = tasks.validate(spec, root, data, record_run=False)
        # what the split refuses (a positive class the target never holds, key columns
        # without a value), cached as training's, which reuses it
        tasks.split(spec, root, data)
        features = frame.drop(columns=[spec.target.column])
        # what training would refuse (dates, cells no rule can name) and warn of: numbers
        # read as text (a decimal comma, a stray marker)
        resolve_categorical(features, spec.features.categorical, warn=False)
        notes = list(streamed.source_notes(spec))  # a folder's files left out or read twice
        notes += misread_text_columns(features, spec.features.categorical).values()
        notes += unheld_label_notes(spec, features, "the data")  # a misspelled value label
    return {**tasks.load_validation(root, validation).to_dict(), "notes": notes}


def validate(spec_path, store: str | None = None) -> dict:
    """Run the validation flow (the embedded server, if any, guarded to die with this process)."""
    guard_embedded_server()
    return run_flow(validate_flow, str(spec_path), store=store)
