"""``sample_weight`` in ``LibreClassifier.fit`` and ``LibreSearchCV.fit``: a row of weight w
counts as w rows, weight 0 as none, and bad weights fail with one line naming the parameter."""

import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import f1_score as sklearn_f1

from libre_lib import LibreClassifier, LibreSearchCV, LibreWarning, ParameterError
from libre_lib.datasets import load_dataset
from libre_lib.discretization import fit_discretization
from libre_lib.estimator import f1_score

pytestmark = pytest.mark.filterwarnings("ignore::libre_lib.errors.LibreWarning")

#: No "auto": its inner folds split rows, so repeated rows would fall in other folds.
FIXED = {
    "max_rules": None,
    "conflict_tolerance": 0.0,
    "alpha": 0.5,
    "n_estimators": 20,
    "random_state": 0,
}


def _weights(n, seed=0, high=4):
    return np.random.default_rng(seed).integers(0, high, size=n)


def _repeated(X, y, weight):
    rows = np.repeat(np.arange(len(y)), weight)
    return X.iloc[rows].reset_index(drop=True), y.iloc[rows].reset_index(drop=True)


def _same_model(a, b):
    assert str(a.rules_) == str(b.rules_)
    assert a.rules_.stats == b.rules_.stats
    assert a.discretization_.to_dict() == b.discretization_.to_dict()


@pytest.mark.parametrize("dataset", ["haberman", "credit_approval"])
@pytest.mark.parametrize("max_intervals", [3, None])
def test_integer_weights_give_the_rules_of_repeated_rows(dataset, max_intervals):
    X, y, info = load_dataset(dataset)
    weight = _weights(len(y))
    params = {**FIXED, "max_intervals": max_intervals, "positive_class": info.positive_class}
    weighted = LibreClassifier(**params).fit(X, y, sample_weight=weight)
    repeated = LibreClassifier(**params).fit(*_repeated(X, y, weight))
    _same_model(weighted, repeated)
    unweighted = LibreClassifier(**params).fit(X, y)
    assert str(weighted.rules_) != str(unweighted.rules_)  # the weights did something


def test_unit_weights_and_dropped_rows_match_no_weights_with_auto(haberman):
    X, y, info = haberman
    params = {"n_estimators": 10, "random_state": 0, "positive_class": info.positive_class}
    plain = LibreClassifier(**params).fit(X, y)
    ones = LibreClassifier(**params).fit(X, y, sample_weight=np.ones(len(y)))
    _same_model(ones, plain)
    assert ones.auto_scores_ == plain.auto_scores_

    weight = np.ones(len(y))
    weight[::3] = 0
    zeros = LibreClassifier(**params).fit(X, y, sample_weight=weight)
    kept = weight > 0
    dropped = LibreClassifier(**params).fit(X[kept].reset_index(drop=True), y[kept])
    _same_model(zeros, dropped)
    assert zeros.auto_scores_ == dropped.auto_scores_


def test_the_auto_choice_scores_folds_with_weighted_f1(haberman):
    X, y, info = haberman
    params = {"n_estimators": 10, "random_state": 0, "positive_class": info.positive_class}
    weight = _weights(len(y), seed=1, high=5) + 1  # no zero: the same rows in the same folds
    weighted = LibreClassifier(**params).fit(X, y, sample_weight=weight)
    plain = LibreClassifier(**params).fit(X, y)
    assert weighted.auto_scores_["mean_f1"] != plain.auto_scores_["mean_f1"]


def test_weighted_f1_is_scikit_learns():
    rng = np.random.default_rng(0)
    truth, pred = rng.random(50) < 0.4, rng.random(50) < 0.5
    weight = rng.integers(0, 5, size=50).astype(float)
    assert f1_score(truth, pred, weight) == pytest.approx(
        sklearn_f1(truth, pred, sample_weight=weight)
    )
    assert f1_score(truth, pred, np.ones(50)) == f1_score(truth, pred)


def test_chimerge_counts_weights_as_rows():
    values = pd.DataFrame({"x": np.arange(40.0)})
    positive = np.arange(40) >= 20
    weight = np.where(np.arange(40) % 2 == 0, 3.0, 1.0)
    rows = np.repeat(np.arange(40), weight.astype(int))
    weighted = fit_discretization(values, positive, [False], max_intervals=None, weight=weight)
    repeated = fit_discretization(values.iloc[rows], positive[rows], [False], max_intervals=None)
    assert weighted.to_dict() == repeated.to_dict()


@pytest.mark.parametrize(
    "weight, message",
    [
        (lambda n: -np.ones(n), r"must be finite and >= 0\. Got -1\.0 at row 0"),
        (lambda n: np.r_[np.nan, np.ones(n - 1)], r"must be finite and >= 0\. Got nan at row 0"),
        (lambda n: np.ones(n - 1), r"must hold one weight per row of X \(\d+\)"),
        (lambda n: np.zeros(n), r"must have a weight > 0: all \d+ weights are zero"),
        (lambda n: ["a"] * n, "must be numbers, one per row"),
    ],
    ids=["negative", "nan", "length", "all-zero", "text"],
)
def test_bad_weights_fail_with_one_line_naming_the_parameter(haberman, weight, message):
    X, y, _ = haberman
    with pytest.raises(ParameterError, match="The 'sample_weight' parameter of LibreClassifier"):
        LibreClassifier(**FIXED).fit(X, y, sample_weight=weight(len(y)))
    with pytest.raises(ParameterError, match=message):
        LibreClassifier(**FIXED).fit(X, y, sample_weight=weight(len(y)))


def test_a_class_without_weight_is_refused(haberman):
    X, y, info = haberman
    weight = (y != info.positive_class).astype(float)
    with pytest.raises(ParameterError, match=r"gives every row of class .* weight 0"):
        LibreClassifier(**FIXED, positive_class=info.positive_class).fit(X, y, weight)
    flags = (y == info.positive_class).to_numpy()  # it read "class np.True_"
    with pytest.raises(ParameterError, match=r"gives every row of class True weight 0"):
        LibreClassifier(**FIXED).fit(X, flags, np.where(flags, 0.0, 1.0))


def test_the_search_passes_weights_to_its_folds_and_its_refit(haberman):
    X, y, info = haberman
    weight = _weights(len(y), seed=2)
    grid = {"alpha": [0.5, 0.9], "max_rules": [1, None]}
    base = {"n_estimators": 5, "random_state": 0, "positive_class": info.positive_class}
    search = LibreSearchCV(grid, estimator=LibreClassifier(**base), cv=3, random_state=0)
    search.fit(X, y, sample_weight=weight)
    plain = LibreSearchCV(grid, estimator=LibreClassifier(**base), cv=3, random_state=0).fit(X, y)
    assert search.cv_results_["mean_test_score"].tolist() != (
        plain.cv_results_["mean_test_score"].tolist()
    )
    refit = LibreClassifier(**search.best_estimator_.get_params()).fit(X, y, sample_weight=weight)
    _same_model(search.best_estimator_, refit)

    ones = LibreSearchCV(grid, estimator=LibreClassifier(**base), cv=3, random_state=0)
    ones.fit(X, y, sample_weight=np.ones(len(y)))
    assert ones.cv_results_["mean_test_score"].tolist() == (
        plain.cv_results_["mean_test_score"].tolist()
    )
    scored = LibreSearchCV(
        grid, estimator=LibreClassifier(**base), cv=3, random_state=0, scoring="accuracy"
    )
    scored.fit(X, y, sample_weight=weight)
    assert np.isfinite(scored.cv_results_["mean_test_score"]).all()
    with pytest.raises(ParameterError, match="The 'sample_weight' parameter of LibreSearchCV"):
        LibreSearchCV(grid, estimator=LibreClassifier(**base), cv=3).fit(
            X, y, sample_weight=-weight - 1
        )


def test_a_cv_of_row_positions_names_the_callers_rows_when_weights_drop_some(haberman):
    """Index arrays and a PredefinedSplit name rows of X: the rows of weight 0 leave their
    folds, and the other rows keep their folds (not shifted onto the rows after them)."""
    from sklearn.model_selection import KFold, PredefinedSplit

    X, y, info = haberman
    grid = {"alpha": [0.5, 0.9], "max_rules": [1, 3]}
    base = {"n_estimators": 5, "random_state": 0, "positive_class": info.positive_class}

    def search(cv, weight=None):
        found = LibreSearchCV(grid, estimator=LibreClassifier(**base), cv=cv, random_state=0)
        return found.fit(X, y, sample_weight=weight).cv_results_

    rows = np.arange(50, 250)  # folds over some rows only: weight 0 outside them changes nothing
    splits = [(rows[a], rows[b]) for a, b in KFold(3, shuffle=True, random_state=0).split(rows)]
    weight = np.ones(len(y))
    weight[:3] = 0
    np.testing.assert_array_equal(
        search(splits, weight)["mean_test_score"], search(splits)["mean_test_score"]
    )
    everywhere = list(KFold(3, shuffle=True, random_state=0).split(X))
    dropped = search(everywhere, weight)  # rows 0-2 leave the folds they were in
    kept = np.flatnonzero(weight > 0)
    by_hand = [(np.setdiff1d(a, [0, 1, 2]), np.setdiff1d(b, [0, 1, 2])) for a, b in everywhere]
    positions = [(np.searchsorted(kept, a), np.searchsorted(kept, b)) for a, b in by_hand]
    subset = LibreSearchCV(grid, estimator=LibreClassifier(**base), cv=positions, random_state=0)
    subset.fit(X.iloc[kept], y[kept] if isinstance(y, np.ndarray) else y.iloc[kept])
    np.testing.assert_array_equal(dropped["mean_test_score"], subset.cv_results_["mean_test_score"])
    predefined = search(PredefinedSplit(np.arange(len(y)) % 3), weight)
    assert np.isfinite(predefined["mean_test_score"]).all()
    lonely = [(np.arange(3, len(y)), np.arange(3))]  # its validation rows all have weight 0
    with pytest.raises(ParameterError, match="validation rows of fold 1 of the 'cv'"):
        search(lonely, weight)


def test_weights_normalized_to_sum_to_one_draw_a_warning(haberman):
    X, y, _ = haberman
    light = np.full(len(y), 1 / len(y))
    with pytest.warns(LibreWarning, match=r"average 0\.00\d+ over the \d+ rows .* mean of 1"):
        LibreClassifier(**FIXED).fit(X, y, sample_weight=light)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        LibreClassifier(**FIXED).fit(X, y, sample_weight=light / light.mean())
    assert not [w for w in caught if "sample weights" in str(w.message)]
