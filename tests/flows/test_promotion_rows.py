"""A challenger trained on another split is compared with the champion on its own holdout: the
champion's model is rescored on those rows, and run.json and the report say which rows."""

import json
from pathlib import Path

from libre_flows.flows.train import train
from libre_lib.ops.registry import ModelRegistry


def test_the_champion_is_rescored_on_the_challengers_holdout(spec_copy, tmp_path):
    first = train(spec_copy(holdout_fraction=0.5))
    assert first["promoted"]
    spec_path = spec_copy(holdout_fraction=0.35)
    second = train(spec_path)
    run = json.loads(Path(second["run_dir"], "run.json").read_text())
    decision = run["decision"]
    n_holdout = second["metrics"]["n_rows"]
    assert n_holdout != first["metrics"]["n_rows"]
    assert decision["rows"] == n_holdout
    run_id = Path(second["run_dir"]).name
    scored_on = (
        f"both scored on the same {n_holdout} rows, the holdout rows of run {run_id}; the "
        "champion was trained on another split of the same data, so some of these rows were "
        "most likely its training rows (that favours it)"
    )
    assert decision["scored_on"] == scored_on
    assert run["promotion"].endswith(scored_on)

    # the champion's model was scored on those rows, not its own holdout's scores reused
    assert decision["champion_scores"]["n_rows"] == n_holdout
    champion = ModelRegistry(tmp_path / "store").get("haberman", first["model_version"])
    assert champion.metrics["n_rows"] == first["metrics"]["n_rows"]

    report = Path(second["run_dir"], "report.md").read_text()
    assert f"Both scored on the same {n_holdout} rows, the holdout rows of run {run_id}; " in report
    assert "most likely its training rows (that favours it)." in " ".join(report.split())
