"""The scoring flow end to end (two flow runs): output, scoring report artifact, and a contract
violation failing the run through the CLI with one clear message."""

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import typer
from prefect.artifacts import Artifact
from typer.testing import CliRunner

from libre_flows.flows.cli.score import score_command
from libre_flows.flows.score import score, scoring_name
from libre_lib import LibreClassifier
from libre_lib.ops.contract import DataContract

app = typer.Typer()
app.command("score")(score_command)


@app.command("other")
def _other() -> None:  # a second command, so "score" is a sub-command as in `libre score`
    """Placeholder."""


@pytest.fixture(scope="module")
def scoring(tmp_path_factory, credit_data):
    folder = tmp_path_factory.mktemp("scoring")
    X, y, info = credit_data
    model = LibreClassifier(positive_class=info.positive_class, n_estimators=10, random_state=0)
    model.fit(X, y)
    run = folder / "runs" / "credit" / "20260101-000000-abcd1234"
    run.mkdir(parents=True)
    (run / "model.json").write_text(model.to_json())
    DataContract.from_model(model, X).save(run / "contract.json")
    drifted = X.assign(customer_id=np.arange(len(X)))
    drifted.loc[::10, "a6"] = "brand-new"
    inputs = folder / "incoming"
    inputs.mkdir()
    drifted.iloc[:400].to_csv(inputs / "day-1.csv", index=False)
    drifted.iloc[400:].to_parquet(inputs / "day-2.parquet")
    return X, model, run / "model.json", inputs, folder


def test_scoring_flow_writes_the_output_and_a_scoring_report(scoring):
    X, model, model_path, inputs, folder = scoring
    output = folder / "scored" / "credit.parquet"
    summary = score(model_path, inputs, output, batch_rows=128)
    assert summary["rows"] == len(X) and summary["batches"] == 4 + 3
    scored = pd.read_parquet(output).sort_values("customer_id")
    np.testing.assert_array_equal(scored["prediction"].to_numpy(), model.predict(X))
    assert (
        summary["artifact"]
        == "libre-credit-scoring"
        == f"libre-{scoring_name(str(model_path))}-scoring"
    )
    (warning,) = summary["warnings"]
    assert (warning["column"], warning["problem"], warning["count"]) == (
        "a6",
        "unseen_category",
        len(range(0, len(X), 10)),
    )
    artifact = Artifact.get("libre-credit-scoring")
    assert artifact is not None and artifact.type == "markdown"
    assert "| a6 | unseen_category |" in artifact.data
    assert "rows/s" in artifact.data and "saved with the model" in artifact.data
    import hashlib

    import pyarrow.parquet as pq

    meta = pq.read_schema(output).metadata  # the model file that scored it
    sha256 = hashlib.sha256(model_path.read_bytes()).hexdigest()
    assert meta[b"libre.model_sha256"].decode() == sha256


def test_broken_data_fails_the_run_with_one_clear_message(scoring, tmp_path):
    X, _, model_path, _, _ = scoring
    broken = tmp_path / "broken"
    broken.mkdir()
    bad = X.assign(a2=X["a2"].astype(object))
    bad.loc[7, "a2"] = "forty"
    bad.drop(columns=["a13"]).to_csv(broken / "batch.csv", index=False)
    output = tmp_path / "scored.parquet"
    result = CliRunner().invoke(app, ["score", str(model_path), str(broken), str(output)])
    assert result.exit_code == 3  # the data were refused, not the command
    assert "error: Input data breaks the model's data contract" in result.output
    assert "column 'a13': missing from" in result.output
    assert "Traceback" not in result.output
    assert not output.exists()
    assert not [p for p in tmp_path.rglob("*") if ".tmp-" in p.name]


@pytest.mark.parametrize(
    ("what", "message"),
    [
        ("model", "does not exist"),
        ("inputs", "does not exist"),
        ("output", "would be a Parquet file under another name"),
    ],
)
def test_missing_files_are_reported_before_prefect_starts(scoring, tmp_path, what, message):
    _, _, model_path, inputs, _ = scoring
    args = {"model": model_path, "inputs": inputs, "output": tmp_path / "o.parquet"}
    args[what] = tmp_path / ("o.csv" if what == "output" else "absent")
    result = CliRunner().invoke(
        app, ["score", str(args["model"]), str(args["inputs"]), str(args["output"])]
    )
    assert result.exit_code == 1 and message in result.output
    assert "Traceback" not in result.output


def test_artifact_names_follow_the_model_location():
    assert scoring_name("/x/runs/Pima_v2/20260101-abc/model.json") == "pima-v2"
    assert scoring_name("/store/models/churn/v0003-1a2b3c4d/model.json") == "churn"
    assert scoring_name("/models/churn/model.json") == "churn"
    assert scoring_name("/models/churn.json") == "churn"
    assert scoring_name(None, "Credit Approval") == "credit-approval"
    assert scoring_name(None) == "model"


def test_model_path_or_loader_is_required(tmp_path):
    from libre_lib.errors import ParameterError

    with pytest.raises(ParameterError, match="model"):
        score(None, tmp_path, tmp_path / "o.parquet")
    assert Path(tmp_path).exists()


def test_a_model_loader_may_return_the_model_or_the_model_and_its_contract(scoring):
    from libre_flows.flows.score import resolve_model

    X, model, model_path, _, _ = scoring
    contract = DataContract.from_model(model, X)
    _, found, origin = resolve_model(None, lambda: (model, contract.to_dict()))
    assert found == contract and origin == "the model loader"
    loaded, found, origin = resolve_model(None, lambda: model)
    assert loaded is model and found == DataContract.from_model(model)
    assert "derived from the model alone" in origin
    _, found, origin = resolve_model(str(model_path))
    assert found == contract and origin == "saved with the model"
    from libre_flows.flows.score import score_flow

    def loader():
        return model

    checked = score_flow.validate_parameters(
        {"model_path": None, "inputs": "in", "output": "out.parquet", "model_loader": loader}
    )
    assert checked["model_loader"] is loader


def test_score_a_registered_champion_by_pipeline_name(spec_copy, tmp_path):
    """`libre score PIPELINE` scores with the registry's champion and its saved contract."""
    from libre_flows.flows.cli import app
    from libre_flows.flows.train import train
    from libre_lib.ops.registry import ModelRegistry

    summary = train(spec_copy())
    champion = ModelRegistry(tmp_path / "store").champion("haberman")
    assert (champion.path / "contract.json").is_file()
    suite = json.loads((champion.path / "expectations.json").read_text())
    assert suite["expectations"] and suite["name"] == "libre-haberman-contract"
    assert (Path(summary["run_dir"]) / "contract.json").is_file()
    data = Path(summary["stages"][0]["path"])  # the dataset artifact (Parquet)
    output = tmp_path / "scored.parquet"
    result = CliRunner().invoke(
        app, ["score", "haberman", str(data), str(output), "--store", str(tmp_path / "store")]
    )
    assert result.exit_code == 0, result.output
    scored = pd.read_parquet(output)
    model = LibreClassifier.from_json(champion.model_path.read_text())
    expected = model.predict(
        scored.drop(columns=["prediction", "score", "fired_rules", "explanation", "target"])
    )
    np.testing.assert_array_equal(scored["prediction"].astype(str), expected.astype(str))


def test_fail_on_drift_fails_the_command_when_a_tested_column_drifts(scoring, tmp_path):
    X, model, model_path, _, _ = scoring
    tested = sorted({c.feature for rule in model.rules_ for c in rule if c.kind == "categorical"})
    column = X[tested[0]]
    drifted = X.assign(**{tested[0]: column.where(X.index % 2 == 0, column.str.upper())})
    drifted.to_csv(tmp_path / "in.csv", index=False)
    output = tmp_path / "scored.parquet"
    args = ["score", str(model_path), str(tmp_path / "in.csv"), str(output)]
    result = CliRunner().invoke(app, [*args, "--fail-on-drift"])
    assert result.exit_code == 3 and "Drift in columns the rules test" in result.output
    assert not output.exists()
    assert CliRunner().invoke(app, args).exit_code == 0 and output.exists()  # a warning only
    output.unlink()
    X.assign(**{tested[0]: column.str.upper()}).to_csv(tmp_path / "all.csv", index=False)
    result = CliRunner().invoke(
        app, ["score", str(model_path), str(tmp_path / "all.csv"), str(output)]
    )
    assert result.exit_code == 3 and "is a category seen in training" in " ".join(
        result.output.split()
    )
    assert not output.exists()  # every row re-coded: an error, as an empty column is


def test_inputs_without_rows_are_said_to_hold_none_not_to_have_no_drift(scoring, tmp_path):
    """A header-only extract scored 0 rows and printed "no drift", which nothing checked."""
    X, _model, model_path, _, _ = scoring
    X.iloc[:0].to_csv(tmp_path / "header.csv", index=False)
    output = tmp_path / "scored.parquet"
    result = CliRunner().invoke(
        app, ["score", str(model_path), str(tmp_path / "header.csv"), str(output)]
    )
    assert result.exit_code == 0, result.output
    text = " ".join(result.output.split())
    assert "warning: the inputs hold no rows" in text and "no drift was checked" in text
    assert "no drift against" not in text and "predicted" not in text
    assert len(pd.read_parquet(output)) == 0


def test_validate_and_score_runs_are_named_for_their_pipeline(scoring, spec_copy):
    """They got Prefect's random names (amphibian-raven), where a training run is named for
    its pipeline: the UI's run list could not tell which pipeline failed validation."""
    from prefect.client.orchestration import get_client

    from libre_flows.flows.validate import validate

    _, _, model_path, inputs, folder = scoring
    score(model_path, inputs, folder / "named.parquet")
    validate(spec_copy())
    with get_client(sync_client=True) as client:
        names = [run.name for run in client.read_flow_runs(limit=200)]
    assert any(n.startswith("score-credit-") for n in names), names
    assert any(n.startswith("validate-haberman-") for n in names), names


def test_a_model_without_its_contract_says_so_on_the_command_line(scoring, tmp_path):
    """A model.json copied without its contract.json scored without the training data's
    markers and ranges, and the command said "no drift against the model's data contract"
    (only the artifact said where the contract came from)."""
    X, _, model_path, _, _ = scoring
    lone = tmp_path / "lone"
    lone.mkdir()
    (lone / "model.json").write_text(Path(model_path).read_text())
    X.to_csv(tmp_path / "in.csv", index=False)
    data, out = str(tmp_path / "in.csv"), str(tmp_path / "o.parquet")
    result = CliRunner().invoke(app, ["score", str(lone / "model.json"), data, out])
    said = " ".join(result.output.split())
    assert result.exit_code == 0, result.output
    assert "warning: the model has no contract.json beside it" in said
    assert "derived from the model alone" in said and "a spec's na_values" in said
    result = CliRunner().invoke(
        app, ["score", str(model_path), str(tmp_path / "in.csv"), str(tmp_path / "p.parquet")]
    )
    assert "no contract.json" not in result.output  # saved with the model: nothing to say
