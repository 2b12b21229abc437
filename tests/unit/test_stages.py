"""The pipeline's stages as plain functions: column selection, the holdout split, cache-key
parameters, and the stages chained by hand giving the estimator's own model."""

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from libre_lib import LibreClassifier
from libre_lib.errors import DataError, SpecError
from libre_lib.ops import stages
from libre_lib.ops.spec import load_spec
from libre_lib.ops.tables import (
    candidates_from_table,
    discretization_from_metadata,
    records_from_table,
)
from libre_lib.ops.validation import ValidationReport

SPECS = Path(__file__).resolve().parents[2] / "deployments" / "specs"


@pytest.fixture(scope="module")
def spec():
    return load_spec(SPECS / "haberman.yaml")


def _with(spec, **sections):
    return spec.model_copy(update=sections)


def test_select_columns_keeps_include_minus_exclude_then_the_target(spec):
    frame = pd.DataFrame({"a": [1], "b": [2], "target": ["1"], "c": [3]})
    assert list(stages.select_columns(frame, spec).columns) == ["a", "b", "c", "target"]
    features = spec.features.model_copy(update={"include": ["c", "a", "b"], "exclude": ["b"]})
    picked = stages.select_columns(frame, _with(spec, features=features))
    assert list(picked.columns) == ["c", "a", "target"]


def test_select_columns_names_a_missing_target_and_unknown_columns(spec):
    with pytest.raises(DataError, match="target column 'target' is not in the data"):
        stages.select_columns(pd.DataFrame({"a": [1]}), spec)
    features = spec.features.model_copy(update={"exclude": ["zzz"]})
    with pytest.raises(SpecError, match=r"\['zzz'\]"):
        stages.select_columns(pd.DataFrame({"target": ["1"]}), _with(spec, features=features))


def test_holdout_mask_is_stratified_seeded_and_empty_at_fraction_zero():
    positive = np.array([True] * 10 + [False] * 10)
    holdout = stages.holdout_mask(positive, 0.2, seed=0)
    assert holdout.sum() == 4 and holdout[positive].sum() == 2
    np.testing.assert_array_equal(holdout, stages.holdout_mask(positive, 0.2, seed=0))
    assert not stages.holdout_mask(positive, 0.0, seed=0).any()
    lonely = np.array([True] + [False] * 19)  # one positive: no stratification, still a split
    assert stages.holdout_mask(lonely, 0.2, seed=0).sum() == 4


def test_split_compares_the_positive_class_as_text(spec):
    frame = pd.DataFrame({"age": range(20), "target": ["2"] * 10 + ["1"] * 10})
    table, _ = stages.split(spec, frame)
    holdout = table.column("holdout").to_numpy()
    X, y = stages.split_rows(spec, frame, holdout, holdout=True)
    assert list(X.columns) == ["age"] and (y == "2").sum() == 2
    X_train, _ = stages.split_rows(spec, frame, holdout)
    assert len(X_train) + len(X) == 20


def test_learn_params_leave_conflict_tolerance_out_at_zero(spec):
    """Cached learners of specs without conflict_tolerance keep their keys."""
    assert stages.learn_params(spec, [0, 2]) == {
        "heuristic": spec.model.heuristic,
        "seeds": spec.model.seeds,
        "subset": [0, 2],
    }
    tolerant = _with(spec, model=spec.model.model_copy(update={"conflict_tolerance": 0.1}))
    assert stages.learn_params(tolerant, [0])["conflict_tolerance"] == 0.1


def test_the_stages_chained_by_hand_give_the_estimators_model(spec):
    """Through the tables the store keeps: load, validate, split, discretize, encode, learn,
    union_filter and set_cover equal LibreClassifier.fit on the same training rows."""
    frame, metadata = stages.load(spec, "sha")
    assert metadata == {"source": spec.data_location(), "source_sha256": "sha"}
    _, checked = stages.validate(frame, stages.validation_rules(spec))
    assert stages.validation_report(checked).success
    holdout = stages.split(spec, frame)[0].column("holdout").to_numpy()
    X, y = stages.split_rows(spec, frame, holdout)

    discretization = discretization_from_metadata(stages.discretize(spec, X, y)[1])
    records = records_from_table(*stages.encode(spec, X, y, discretization))
    subsets = stages.feature_subsets(spec, discretization)
    parts = [
        candidates_from_table(*stages.learn(spec, records, discretization, s)) for s in subsets
    ]
    table, meta = stages.union_filter(spec, parts, records, discretization)
    kept = candidates_from_table(table, meta)
    _, fitted = stages.set_cover(
        spec, kept, records, discretization, X, y, subsets, n_candidates=meta["n_union"]
    )
    model = stages.model_from_metadata(fitted)

    direct = LibreClassifier(**spec.estimator_params()).fit(X, y)
    assert model.rules_ == direct.rules_
    assert model.n_candidates_ == meta["n_union"]

    trained = stages.report(spec, model, frame, holdout, ValidationReport(True, len(frame), ()))
    assert trained.metrics["n_rows"] == int(holdout.sum())
    assert set(trained.contract_files()) == {"contract.json", "expectations.json"}
    rules, saved = stages.report_table(trained)
    assert len(rules) == len(model.rules_) and saved == {"metrics": trained.metrics}
