"""A challenger trained on another split is compared with the champion on its own holdout: the
champion's model is rescored on those rows, and run.json and the report say which rows."""

import json
import re
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


def test_a_growing_table_keeps_each_rows_side_so_the_comparison_is_fair(spec_copy, tmp_path):
    """The second version's data holds the first version's rows and more: every row the
    champion trained on stays a training row, so the comparison carries no caution."""
    import pandas as pd

    source = Path(__file__).resolve().parents[2] / "libre_lib" / "datasets" / "haberman.csv"
    rows = pd.read_csv(source)
    data = tmp_path / "haberman.csv"
    rows.iloc[:240].to_csv(data, index=False)
    spec_path = spec_copy(data__path=str(data))
    first = train(spec_path)
    first_holdout = _holdout_rows(first["run_dir"])
    rows.sample(frac=1.0, random_state=3).to_csv(data, index=False)  # more rows, reordered
    second = train(spec_path)
    decision = json.loads(Path(second["run_dir"], "run.json").read_text())["decision"]
    assert decision["previous"] and "favours" not in decision["scored_on"]
    second_holdout = _holdout_rows(second["run_dir"])
    assert first_holdout and first_holdout <= second_holdout
    assert second_holdout - first_holdout  # new rows reached the holdout too


def _holdout_rows(run_dir: str) -> set:
    """The run's holdout rows, as tuples of their values (haberman has a few duplicates, which
    land on the same side)."""
    import pandas as pd

    stages = json.loads(Path(run_dir, "run.json").read_text())["stages"]
    path = {entry["stage"]: entry["path"] for entry in stages}
    frame = pd.read_parquet(path["load"])
    flags = pd.read_parquet(path["split"])["holdout"].to_numpy()
    return set(map(tuple, frame.loc[flags].astype(str).to_numpy().tolist()))


def test_rows_keyed_by_an_id_keep_their_side_when_features_and_values_change(spec_copy, tmp_path):
    """With ``split_by: [patient]`` a patient keeps its side when the spec drops a feature and
    the patients' ages change, so the comparison carries no caution."""
    import pandas as pd

    source = Path(__file__).resolve().parents[2] / "libre_lib" / "datasets" / "haberman.csv"
    rows = pd.read_csv(source)
    rows.insert(0, "patient", [f"p{i:04d}" for i in range(len(rows))])
    data = tmp_path / "patients.csv"
    rows.to_csv(data, index=False)
    keyed = {"data__path": str(data), "split_by": ["patient"]}
    first = train(spec_copy(features__exclude=["patient"], **keyed))
    changed = rows.assign(age=rows["age"] + 1).sample(frac=1.0, random_state=3)
    changed.to_csv(data, index=False)
    second = train(spec_copy(features__exclude=["patient", "year_of_operation"], **keyed))
    decision = json.loads(Path(second["run_dir"], "run.json").read_text())["decision"]
    assert decision["previous"] and "favours" not in decision["scored_on"]
    held_out = _holdout_ids(first["run_dir"], rows["patient"])
    assert held_out and held_out == _holdout_ids(second["run_dir"], changed["patient"])


def _holdout_ids(run_dir: str, ids) -> set:
    """The ids of a run's holdout rows (``ids``: the file's id column when the run read it)."""
    import pandas as pd

    stages = json.loads(Path(run_dir, "run.json").read_text())["stages"]
    path = {entry["stage"]: entry["path"] for entry in stages}
    flags = pd.read_parquet(path["split"])["holdout"].to_numpy()
    return set(ids.to_numpy()[flags])


def test_a_column_read_as_text_now_is_named_as_moving_the_rows_sides(spec_copy, data_copy):
    """Three stray texts among a column's numbers: the column is read as text, every row's key
    changes with it, and the champion's training rows came into the holdout. The split keys
    were equal, so the decision said nothing of it."""
    import pandas as pd

    data = data_copy("haberman.csv")
    spec = spec_copy(data={"path": str(data)}, holdout_fraction=0.3)
    first = train(spec)
    assert first["promoted"]
    frame = pd.read_csv(data)
    frame["year_of_operation"] = frame["year_of_operation"].astype(object)
    frame.loc[:2, "year_of_operation"] = "unknown"
    frame.to_csv(data, index=False)
    second = train(spec)
    decision = json.loads(Path(second["run_dir"], "run.json").read_text())["decision"]
    assert "'year_of_operation' is read as text in one version" in decision["scored_on"]
    assert decision["scored_on"].endswith("(that favours it)")


def test_a_tested_column_gone_mostly_missing_since_the_champion_is_a_note_of_the_run(
    spec_copy, data_copy
):
    """A column the rules test went 90 % missing: a spec without expectations on it trained,
    and the new model was promoted, without a word; scoring would have warned of it."""
    import numpy as np
    import pandas as pd

    data = data_copy("haberman.csv")
    spec = spec_copy(data={"path": str(data)}, expectations={"min_rows": 100})
    first = train(spec)
    registry = ModelRegistry(Path(first["run_dir"]).parents[2])
    tested = sorted({f for rule in registry.load_model("haberman").rules_ for f in rule.features})
    assert tested and not any("Since the champion" in n for n in first["notes"])
    frame = pd.read_csv(data)
    column = tested[0]
    blank = np.random.default_rng(0).random(len(frame)) < 0.9
    frame[column] = frame[column].astype(float).mask(blank)
    frame.to_csv(data, index=False)
    second = train(spec)
    (note,) = [n for n in second["notes"] if "Since the champion" in n]
    assert note.startswith(f"Since the champion {first['model_version']}'s training rows")
    assert re.search(
        rf"column {column!r}: \d+ of \d+ rows missing \((8|9)\d\.\d%\), against none in the "
        "champion's training rows",
        note,
    )
    report = Path(second["run_dir"], "report.md").read_text()
    assert "Since the champion" in report


def test_a_class_balance_and_values_far_from_the_champion_s_are_notes_of_the_run(
    spec_copy, data_copy
):
    """A delivery with 80 % of the positive rows gone, and a tested column shifted beyond the
    champion's range, trained and was compared with the champion without a word of either."""
    import numpy as np
    import pandas as pd

    data = data_copy("pima.csv")
    spec = spec_copy("pima", data={"path": str(data)}, expectations={"min_rows": 100})
    first = train(spec)
    assert not any("differ from the champion" in n for n in first["notes"])
    registry = ModelRegistry(Path(first["run_dir"]).parents[2])
    tested = sorted({f for rule in registry.load_model("pima").rules_ for f in rule.features})
    frame = pd.read_csv(data)
    positive = frame.index[frame["target"] == 1]
    gone = np.random.default_rng(0).choice(positive, int(0.8 * len(positive)), replace=False)
    frame = frame.drop(index=gone)
    frame[tested[0]] = frame[tested[0]] + 2 * (frame[tested[0]].max() - frame[tested[0]].min())
    untested = next(c for c in frame.columns if c not in tested and c != "target")
    frame[untested] = frame[untested] + 2 * (frame[untested].max() - frame[untested].min())
    frame.to_csv(data, index=False)
    second = train(spec)
    (note,) = [n for n in second["notes"] if "differ from the champion" in n]
    assert note.startswith(f"These training rows differ from the champion {first['model_version']}")
    assert re.search(r"the positive class is \d+\.\d% of them, against 3\d\.\d% of its holdout "
                     r"rows \(\d+ of \d+\)", note)  # fmt: skip
    (since,) = [n for n in second["notes"] if "Since the champion" in n]
    assert re.search(rf"column {tested[0]!r}: [\d,]+ of [\d,]+ values outside the champion's "
                     r"training range \[", since)  # fmt: skip
    # a column no rule tests: a short line of its own (the next versions' rules may test it)
    (other,) = [n for n in second["notes"] if "Columns no rule tests changed" in n]
    assert f"{untested!r} (100% of values outside its range)" in other, other
    assert untested not in since


def test_rows_rewritten_since_the_champion_are_said_to_favour_it(spec_copy, data_copy):
    """A delivery that rewrote a column (x 1.3 + 3) moved every row to a new side of the split:
    "both scored on the same 135 rows" said nothing of the 113 the champion had trained on in
    their earlier values. Rows appended to a growing table are no such change."""
    import pandas as pd

    data = data_copy("haberman.csv")
    spec = spec_copy(data={"path": str(data)}, expectations={"min_rows": 100})
    first = train(spec)
    frame = pd.read_csv(data)
    added = frame.sample(frac=0.2, random_state=0).assign(age=lambda f: f.age + 1)
    grown = pd.concat([frame, added])
    grown.to_csv(data, index=False)
    second = train(spec)
    decision = json.loads(Path(second["run_dir"], "run.json").read_text())["decision"]
    assert "both scored on the same" in decision["scored_on"]
    assert "not in the champion's data as they were" not in decision["scored_on"]
    rewritten = grown.assign(age=grown["age"] * 1.3 + 3)
    rewritten.to_csv(data, index=False)
    third = train(spec)
    decision = json.loads(Path(third["run_dir"], "run.json").read_text())["decision"]
    said = r"; \d+ of these \d+ rows are not in the champion's data as they were, although the "
    assert re.search(said + r"data grew by \d+ rows", decision["scored_on"]), decision
    # rows replaced (a rolling window) read alike: the claim stops at what is known
    assert decision["scored_on"].endswith(
        "rows were replaced or changed since. Rows changed (a column rewritten) take a new side "
        "of the split, and the champion trained on many of them in their earlier values, which "
        "favours it"
    )
    assert first["promoted"]
