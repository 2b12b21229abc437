"""LibreSearchCV: inner CV on fit's data only, exact shared-work evaluation, sklearn API."""

import re
import warnings
import weakref

import numpy as np
import pandas as pd
import pytest
from joblib import parallel_config
from sklearn.base import clone
from sklearn.exceptions import NotFittedError
from sklearn.metrics import (
    balanced_accuracy_score,
    f1_score,
    make_scorer,
    precision_score,
    recall_score,
)
from sklearn.model_selection import ParameterGrid, StratifiedKFold, cross_val_score

from libre_lib import LibreClassifier, LibreSearchCV, LibreWarning, ParameterError
from libre_lib import search as search_module
from libre_lib.datasets import load_dataset
from libre_lib.errors import DataError
from libre_lib.estimator import AUTO_FALLBACK, BEYOND_TOLERANCE
from libre_lib.search import (
    DEFAULT_GRID,
    EARLY_STOP,
    LARGE_DATA_GRID,
    LARGE_DATA_POSITIVES,
    PAPER_GRID,
    SELECTION_FILTERS,
    WIDE_COLUMNS,
    WIDE_MAX_FEATURES,
    choose_candidate,
    default_grid,
    resolve_tolerance,
)

SMALL_GRID = {"n_estimators": [5, 20], "alpha": [0.5, 0.9], "chi2_threshold": [6.0, 4.0]}

#: What the search gives a parameter its grid leaves at "auto".
PAPER = dict(AUTO_FALLBACK)


@pytest.fixture(scope="module")
def tuned(haberman):
    X, y, info = haberman
    return LibreSearchCV(SMALL_GRID, positive_class=info.positive_class, cv=3, random_state=0).fit(
        X, y
    )


def test_tunes_over_the_grid_and_refits_the_best(haberman, tuned):
    X, y, info = haberman
    assert tuned.best_params_ in list(ParameterGrid(SMALL_GRID))
    assert tuned.best_params_ == tuned.cv_results_["params"][tuned.best_index_]
    # the default choice: fewest mean rules within 1 standard error of the best
    mean = tuned.cv_results_["mean_test_score"]
    rules = tuned.cv_results_["mean_n_rules"]
    assert (tuned.score_tolerance, tuned.standard_errors) == (0.0, 1.0)
    se = tuned.cv_results_["std_test_score"][np.argmax(mean)] / np.sqrt(3)
    assert tuned.tolerance_ == pytest.approx(se)
    within = mean >= mean.max() - tuned.tolerance_ - 1e-9
    assert tuned.best_score_ == pytest.approx(mean[tuned.best_index_])
    assert within[tuned.best_index_]
    assert rules[tuned.best_index_] == rules[within].min()
    assert len(tuned.cv_results_["params"]) == 8
    assert tuned.n_splits_ == 3
    # best_estimator_ is exactly LibreClassifier(best params, same seed) on all of X
    plain = LibreClassifier(positive_class=info.positive_class, random_state=0, **PAPER)
    plain.set_params(**tuned.best_params_).fit(X, y)
    assert tuned.rules_ == plain.rules_
    assert list(tuned.classes_) == list(plain.classes_)
    np.testing.assert_array_equal(tuned.predict(X), plain.predict(X))
    np.testing.assert_array_equal(tuned.decision_function(X), plain.decision_function(X))


def assert_scores_equal_plain_fits(results, data, n_splits=3):
    """Every split score equals the F1 of LibreClassifier(**params).fit on that inner fold
    (folds as LibreSearchCV(cv=n_splits, random_state=0) draws them)."""
    X, y, info = data
    positive = (y == info.positive_class).to_numpy()
    folds = list(StratifiedKFold(n_splits, shuffle=True, random_state=0).split(X, positive))
    for i, params in enumerate(results["params"]):
        n_rules, n_atoms = [], []
        for k, (train, test) in enumerate(folds):
            params = {**PAPER, **params}
            clf = LibreClassifier(positive_class=info.positive_class, random_state=0, **params)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", LibreWarning)
                clf.fit(X.iloc[train], y.iloc[train])
            pred = clf.predict(X.iloc[test]) == info.positive_class
            expected = f1_score(positive[test], pred, zero_division=0.0)
            assert results[f"split{k}_test_score"][i] == pytest.approx(expected)
            n_rules.append(len(clf.rules_))
            n_atoms.append(clf.rules_.n_atoms)
        assert results["mean_n_rules"][i] == pytest.approx(np.mean(n_rules))
        assert results["mean_n_atoms"][i] == pytest.approx(np.mean(n_atoms))


def test_shared_work_scores_equal_plain_fits(haberman, tuned):
    assert_scores_equal_plain_fits(tuned.cv_results_, haberman)


def test_never_sees_rows_outside_fit(haberman, monkeypatch):
    """Inside cross_val_score, every stage only ever sees the outer training rows."""
    X, y, info = haberman
    seen = []

    def spying(original):
        def spy(self, frame, target, *args, **kwargs):
            seen.append(set(frame.index))
            return original(self, frame, target, *args, **kwargs)

        return spy

    for stage in ("count_classes", "discretize"):
        monkeypatch.setattr(LibreClassifier, stage, spying(getattr(LibreClassifier, stage)))
    outer = list(StratifiedKFold(3, shuffle=True, random_state=1).split(X, y))
    search = LibreSearchCV(
        {"alpha": [0.5, 0.9]}, positive_class=info.positive_class, cv=2, random_state=0
    )
    scorer = make_scorer(f1_score, pos_label=info.positive_class)
    scores = cross_val_score(search, X, y, cv=outer, scoring=scorer)
    assert scores.shape == (3,) and np.all((scores >= 0) & (scores <= 1))
    assert seen
    train_sets = [set(X.index[train]) for train, _ in outer]
    for rows in seen:
        assert any(rows <= train for train in train_sets)


def test_clone_get_params_and_determinism(haberman, tuned):
    X, y, _ = haberman
    params = tuned.get_params()
    assert params["param_grid"] == SMALL_GRID and params["random_state"] == 0
    twin = clone(tuned)
    assert not hasattr(twin, "best_estimator_")
    twin.fit(X, y)
    assert twin.best_params_ == tuned.best_params_
    assert twin.rules_ == tuned.rules_
    for key in ("mean_test_score", "mean_n_rules", "mean_n_atoms"):
        np.testing.assert_array_equal(twin.cv_results_[key], tuned.cv_results_[key])


def test_parallel_inner_cv_gives_the_same_result(haberman, tuned):
    X, y, _ = haberman
    with parallel_config(backend="threading"):  # the process backend's start-up is slow
        parallel = clone(tuned).set_params(n_jobs=2).fit(X, y)
    assert parallel.best_params_ == tuned.best_params_
    np.testing.assert_array_equal(
        parallel.cv_results_["mean_test_score"], tuned.cv_results_["mean_test_score"]
    )


def test_max_rules_passthrough_is_libre_3(haberman):
    X, y, info = haberman
    search = LibreSearchCV(
        {"alpha": [0.7, 0.9]}, max_rules=1, positive_class=info.positive_class, random_state=0
    ).fit(X, y)
    assert search.best_estimator_.max_rules == 1
    assert len(search.rules_) <= 1
    # the fitted model's attributes a LibreClassifier user reaches for
    assert search.positive_class_ == info.positive_class == search.best_estimator_.positive_class_
    assert search.classes_.tolist() == search.best_estimator_.classes_.tolist()
    assert np.all(search.cv_results_["mean_n_rules"] <= 1)


def test_refit_false_keeps_only_the_search(haberman, tuned):
    X, y, _ = haberman
    search = clone(tuned).set_params(refit=False).fit(X, y)
    assert search.best_params_ == tuned.best_params_ and search.seed_ == 0
    assert not hasattr(search, "best_estimator_")
    with pytest.raises(NotFittedError, match="fitted with refit=False"):
        search.predict(X)
    assert not hasattr(search, "positive_class_")


def test_a_new_fit_leaves_nothing_of_the_last_one(haberman, tuned):
    """A fit without refit drops the model an earlier fit made (it learned other data), and a
    fit on unnamed columns drops the earlier column names."""
    X, y, _ = haberman
    search = clone(tuned).fit(X, y)
    assert hasattr(search, "best_estimator_") and hasattr(search, "feature_names_in_")
    search.set_params(refit=False).fit(X.iloc[:200], y[:200])
    assert not hasattr(search, "best_estimator_") and not hasattr(search, "refit_time_")
    with pytest.raises(NotFittedError):
        search.predict(X)
    search.set_params(refit=True).fit(X.to_numpy(), y)
    assert not hasattr(search, "feature_names_in_") and search.n_features_in_ == X.shape[1]


def test_default_grid_is_the_papers():
    assert LibreSearchCV().param_grid is None
    assert len(ParameterGrid(PAPER_GRID)) == 54
    assert PAPER_GRID["chi2_threshold"] == [6.0, 4.6, 4.0]


def test_other_scorer_and_array_input(haberman):
    X, y, _ = haberman
    search = LibreSearchCV(
        {"alpha": [0.5, 0.9]}, scoring="balanced_accuracy", cv=2, random_state=0
    ).fit(X.to_numpy(), y.to_numpy())
    assert search.best_params_["alpha"] in (0.5, 0.9)
    assert search.predict(X.to_numpy()).shape == (len(X),)


def test_other_scorer_scores_like_plain_fits(haberman):
    X, y, info = haberman
    grid = {"alpha": [0.5, 0.9], "max_rules": [1, None]}
    search = LibreSearchCV(
        grid, scoring="balanced_accuracy", cv=3, random_state=0, refit=False
    ).fit(X, y)
    positive = (y == info.positive_class).to_numpy()
    folds = list(StratifiedKFold(3, shuffle=True, random_state=0).split(X, positive))
    for i, params in enumerate(search.cv_results_["params"]):
        for k, (train, test) in enumerate(folds):
            params = {**PAPER, **params}
            clf = LibreClassifier(positive_class=info.positive_class, random_state=0, **params)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", LibreWarning)
                clf.fit(X.iloc[train], y.iloc[train])
            expected = balanced_accuracy_score(y.iloc[test], clf.predict(X.iloc[test]))
            assert search.cv_results_[f"split{k}_test_score"][i] == pytest.approx(expected)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"param_grid": {"gamma": [1]}},
        {"param_grid": {"random_state": [0, 1]}},
        {"param_grid": {"max_rules": [1, 3]}, "max_rules": 3},
        {"param_grid": [{"alpha": [0.5]}, {"max_rules": [1, 3]}], "max_rules": [1, 3]},
        {"max_rules": []},
        {"max_rules": [1, 0]},
        {"max_rules": [2, "auto"]},
        {"max_rules": [2, 2.5]},
        {"max_rules": [3, 3]},
        {"param_grid": {"alpha": [2.0]}},
        {"cv": 1},
        {"score_tolerance": -0.1},
        {"score_tolerance": "2se"},
        {"standard_errors": -1},
        {"verbose": -1},
        {"verbose": "loud"},
        {"refit": "no"},
        {"estimator": object()},
    ],
)
def test_bad_parameters_raise(haberman, kwargs):
    X, y, _ = haberman
    with pytest.raises(ParameterError):
        LibreSearchCV(**kwargs).fit(X, y)


def test_the_time_left_counts_the_folds_that_run_at_once():
    """With n_jobs=2 two folds end together: elapsed time per fold done overstated the time
    left by the number of workers (adult: about 484 s said, 187 s taken)."""
    from libre_lib.search import time_left

    assert time_left([100.0], 4, 1) == 400.0
    assert time_left([100.0, 120.0], 3, 2) == 165.0  # three folds of 110 s, two at a time
    assert time_left([], 5, 2) == 0.0 and time_left([50.0], 0, 2) == 0.0


def test_verbose_prints_the_progress_and_quiet_prints_nothing(haberman, tuned, capsys):
    X, y, info = haberman
    quiet = LibreSearchCV(SMALL_GRID, positive_class=info.positive_class, cv=3, random_state=0)
    quiet.fit(X, y)
    assert capsys.readouterr().err == ""
    handlers, level = list(search_module.logger.handlers), search_module.logger.level
    loud = clone(quiet).set_params(verbose=1).fit(X, y)
    assert search_module.logger.handlers == handlers  # the handler lives only during fit
    assert search_module.logger.level == level
    lines = capsys.readouterr().err.splitlines()
    assert (
        lines[0] == f"LibreSearchCV: 8 candidates x 3 folds (3 tasks, n_jobs=None) on {len(X)} rows"
    )
    assert [line.split(" (")[0] for line in lines[1:4]] == [
        f"LibreSearchCV: task {k}/3" for k in (1, 2, 3)
    ]
    assert lines[3].endswith("about 0 s left")
    assert lines[4].startswith(f"LibreSearchCV: best {loud.best_params_}")
    assert lines[5].startswith(f"LibreSearchCV: refitted on {len(X)} rows in ")
    assert lines[5].endswith(f": {len(loud.rules_)} rules")
    assert len(lines) == 6
    assert loud.rules_.to_frame().equals(tuned.rules_.to_frame())  # printing changes nothing


def test_max_rules_is_a_prefix_of_the_uncapped_cover():
    """The greedy cover capped at k rules is the first k rules of the uncapped cover, which is
    what lets the search score every early stop on one cover."""
    X, y, info = load_dataset("pima")
    for alpha in (0.5, 0.7):
        paper = {**PAPER, "alpha": alpha}
        full = LibreClassifier(
            positive_class=info.positive_class, random_state=0, **paper, abstain=False
        )
        full.fit(X, y)
        assert len(full.rules_) >= 2  # otherwise the check below says nothing
        for k in range(1, len(full.rules_) + 2):
            capped = (
                LibreClassifier(positive_class=info.positive_class, random_state=0, abstain=False)
                .set_params(**{**paper, "max_rules": k})
                .fit(X, y)
            )
            assert capped.rules_.rules == full.rules_.rules[:k]
            assert capped.rules_.stats == full.rules_.stats[:k]


@pytest.mark.parametrize(
    "grid",
    [
        {"alpha": [0.5, 0.9], "max_rules": [1, 2, None]},
        {"max_features": [2], "subset_sizes": ["cycle", "fixed"], "max_rules": [2, None]},
        # the filter settings share one cover problem per setting, every alpha reuses it
        {
            "alpha": [0.5, 0.9],
            "min_local_support": [0.05, 0.01],
            "top_k": [3, None],
            "max_rules": [2, None],
        },
    ],
)
def test_early_stop_and_subset_sizes_score_like_plain_fits(haberman, grid):
    """Candidates differing only in max_rules share one cover, those differing in subset_sizes
    draw their own subsets, and each is still scored exactly as the plain fit."""
    X, y, info = haberman
    search = LibreSearchCV(
        grid, positive_class=info.positive_class, cv=3, random_state=0, refit=False
    ).fit(X, y)
    results = search.cv_results_
    assert_scores_equal_plain_fits(results, haberman)
    capped = [p["max_rules"] for p in results["params"]]
    for i, cap in enumerate(capped):
        if cap is not None:
            assert results["mean_n_rules"][i] <= cap


def test_choose_candidate_prefers_fewer_rules_within_the_tolerance():
    mean = np.array([0.60, 0.64, 0.63, 0.635, 0.50])
    rules = np.array([1.0, 8.0, 2.0, 2.0, 1.0])
    assert choose_candidate(mean, rules, 0.0) == 1  # plain best score
    assert choose_candidate(mean, rules, 0.01) == 3  # fewest rules, then best score
    assert choose_candidate(mean, rules, 0.05) == 0  # 1 rule, and better than the other one
    # exact ties in score and rules: grid order
    assert choose_candidate([0.5, 0.5], [2.0, 2.0], 0.0) == 0
    # tolerance 0: equal scores -> fewer rules
    assert choose_candidate([0.5, 0.5], [3.0, 2.0], 0.0) == 1


def test_score_tolerance_picks_a_simpler_model_within_the_tolerance(haberman):
    X, y, info = haberman
    grid = {"alpha": [0.5, 0.7, 0.9], "max_rules": [1, 2, None]}
    plain = LibreSearchCV(
        grid,
        positive_class=info.positive_class,
        cv=3,
        random_state=0,
        score_tolerance=0.0,
        standard_errors=0.0,
    ).fit(X, y)
    loose = clone(plain).set_params(score_tolerance=0.05).fit(X, y)
    res = loose.cv_results_
    best = res["mean_test_score"].max()
    assert plain.best_score_ == pytest.approx(best)
    assert loose.best_score_ >= best - 0.05 - 1e-9
    within = res["mean_test_score"] >= best - 0.05 - 1e-9
    assert res["mean_n_rules"][loose.best_index_] == res["mean_n_rules"][within].min()
    assert len(loose.rules_) == len(loose.best_estimator_.rules_)


def test_one_standard_error_rule(haberman):
    # one standard error: the first best point's std over the folds / sqrt(folds)
    assert resolve_tolerance(0, 1, [0.5, 0.7, 0.7], [0.3, 0.08, 0.01], 4) == pytest.approx(0.04)
    assert resolve_tolerance(0.05, 1, [0.5, 0.7], [0.3, 0.08], 4) == 0.05  # the larger one
    assert resolve_tolerance(0.02, 0, [0.5], [0.3], 4) == 0.02
    assert resolve_tolerance(0, 2, [0.5], [0.3], 4) == pytest.approx(0.3)
    X, y, info = haberman
    grid = {"alpha": [0.5, 0.7, 0.9], "max_rules": [1, 2, None]}
    search = LibreSearchCV(
        grid, positive_class=info.positive_class, cv=3, random_state=0, score_tolerance=0.0
    ).fit(X, y)
    res = search.cv_results_
    mean, rules = res["mean_test_score"], res["mean_n_rules"]
    top = int(np.argmax(mean))
    se = res["std_test_score"][top] / np.sqrt(3)
    assert se > 0
    within = mean >= mean[top] - se - 1e-9
    assert rules[search.best_index_] == rules[within].min()
    assert search.tolerance_ == pytest.approx(se)
    assert search.best_index_ == choose_candidate(mean, rules, se)


def test_default_grid_adds_the_early_stop_subset_sizes_and_the_tolerance(haberman, monkeypatch):
    h1, h2 = DEFAULT_GRID
    assert set(h2) == set(PAPER_GRID) | {"max_rules", "subset_sizes"}
    assert set(h1) == set(h2) | {"conflict_tolerance", "max_intervals"}
    assert h1["max_intervals"] == [None]  # H1 on the paper's uncapped ChiMerge
    assert (h1["heuristic"], h2["heuristic"]) == (["H1"], ["H2"])
    assert 0.0 in h1["conflict_tolerance"]  # the paper's learner stays in the grid
    for part in DEFAULT_GRID:
        # a handful of rules at most (rounds 9 and 21): the early stops end at 8, no uncapped
        # cover
        assert part["max_rules"] == EARLY_STOP == [1, 2, 3, 5, 8]
        assert part["subset_sizes"] == ["cycle", "fixed"]
    n_stops = len(h1["max_rules"])
    n_tol = len(h1["conflict_tolerance"])
    assert len(ParameterGrid(DEFAULT_GRID)) == 27 * 2 * n_stops * (n_tol + 1) == 810
    # large data: the H1 half also tries the selection filter, the estimator's own first
    large_h1, large_h2 = LARGE_DATA_GRID
    assert large_h1 == {**h1, **SELECTION_FILTERS} and large_h2 == h2
    assert large_h1["min_local_support"][0] == 0.05 and large_h1["top_k"][0] == 200
    n_filters = len(SELECTION_FILTERS["min_local_support"]) * len(SELECTION_FILTERS["top_k"])
    assert len(ParameterGrid(LARGE_DATA_GRID)) == 27 * 2 * n_stops * (n_tol * n_filters + 1)
    assert default_grid(LARGE_DATA_POSITIVES - 1) == DEFAULT_GRID
    assert default_grid(LARGE_DATA_POSITIVES) == LARGE_DATA_GRID
    # with the cap fixed the default grid drops its max_rules axis
    X, y, _ = haberman
    capped = LibreSearchCV(max_rules=2, cv=2, random_state=0, refit=False)
    capped.fit(X, y)
    assert len(capped.cv_results_["params"]) == 27 * 2 * (n_tol + 1)
    assert all("max_rules" not in p for p in capped.cv_results_["params"])
    assert np.all(capped.cv_results_["mean_n_rules"] <= 2)
    assert capped.param_grid_ == [
        {k: v for k, v in part.items() if k != "max_rules"} for part in DEFAULT_GRID
    ]
    # the grid follows the positives of the data given to fit (81 in haberman)
    monkeypatch.setattr(search_module, "LARGE_DATA_POSITIVES", 50)
    large = LibreSearchCV(max_rules=2, cv=2, random_state=0, refit=False).fit(X, y)
    assert len(large.cv_results_["params"]) == 27 * 2 * (n_tol * n_filters + 1)
    assert {p.get("top_k", 200) for p in large.cv_results_["params"]} == {200, None}
    for name, values in PAPER_GRID.items():
        if name != "heuristic":
            assert h1[name] == h2[name] == values


def test_max_rules_lists_the_early_stops_to_tune(haberman):
    """``max_rules=[...]`` replaces the default grid's early stops (13 back for large data):
    the default stops listed give the default search, point for point."""
    X, y, _ = haberman
    default = LibreSearchCV(cv=2, random_state=0, refit=False).fit(X, y)
    listed = LibreSearchCV(max_rules=tuple(EARLY_STOP), cv=2, random_state=0, refit=False)
    listed.fit(X, y)
    assert listed.param_grid_ == default.param_grid_ == DEFAULT_GRID
    assert listed.cv_results_["params"] == default.cv_results_["params"]
    assert np.array_equal(
        listed.cv_results_["mean_test_score"], default.cv_results_["mean_test_score"]
    )
    wider = LibreSearchCV(max_rules=[1, 13, None], cv=2, random_state=0, refit=False).fit(X, y)
    assert [part["max_rules"] for part in wider.param_grid_] == [[1, 13, None]] * 2
    assert {p["max_rules"] for p in wider.cv_results_["params"]} == {1, 13, None}
    assert len(wider.cv_results_["params"]) == len(default.cv_results_["params"]) // 5 * 3
    # a given grid gets the axis in each part; the refit keeps the chosen stop
    grid = [{"alpha": [0.5, 0.9]}, {"heuristic": ["H2"]}]
    given = LibreSearchCV(grid, max_rules=[1, 2], cv=2, random_state=0).fit(X, y)
    assert given.param_grid_ == [{**part, "max_rules": [1, 2]} for part in grid]
    assert len(given.cv_results_["params"]) == 6
    assert given.best_estimator_.max_rules == given.best_params_["max_rules"] in (1, 2)
    assert grid == [{"alpha": [0.5, 0.9]}, {"heuristic": ["H2"]}]  # the user's grid untouched
    one = LibreSearchCV({"alpha": [0.5]}, max_rules=[2], cv=2, random_state=0).fit(X, y)
    assert one.param_grid_ == {"alpha": [0.5], "max_rules": [2]}


@pytest.mark.parametrize(
    ("stops", "words"),
    [
        ([], "empty list"),
        ([1, 0], "Got 0 in [1, 0]"),
        ([2, "auto"], "int >= 1 or None"),
        ([3, 3], "twice"),
    ],
)
def test_a_bad_list_of_early_stops_says_what_is_wrong(haberman, stops, words):
    X, y, _ = haberman
    with pytest.raises(ParameterError, match=re.escape(words)):
        LibreSearchCV(max_rules=stops).fit(X, y)
    with pytest.raises(ParameterError, match="pick one"):
        LibreSearchCV({"max_rules": [1, 2]}, max_rules=[1, 2]).fit(X, y)


def test_the_default_grid_caps_the_bins_on_many_rows(haberman, monkeypatch):
    """On more rows than LibreClassifier's "auto" leaves uncapped, the default grid's H1 half
    is on capped bins too (uncapped ones cost a 200,000-row search more than 13 minutes per
    inner fold); an explicit grid is searched as given."""
    X, y, _ = haberman  # 306 rows
    monkeypatch.setattr(search_module, "AUTO_UNCAPPED_ROWS", len(X))
    kept = LibreSearchCV(max_rules=2, cv=2, random_state=0, refit=False).fit(X, y)
    assert kept.param_grid_[0]["max_intervals"] == [None]
    monkeypatch.setattr(search_module, "AUTO_UNCAPPED_ROWS", len(X) - 1)
    capped = LibreSearchCV(max_rules=2, cv=2, random_state=0, refit=False).fit(X, y)
    assert capped.param_grid_[0]["max_intervals"] == [3]
    assert {p["max_intervals"] for p in capped.cv_results_["params"] if "max_intervals" in p} == {3}
    assert len(capped.cv_results_["params"]) == len(kept.cv_results_["params"])
    assert capped.param_grid_ == [
        {k: v for k, v in part.items() if k != "max_rules"}
        for part in default_grid(81, capped_bins=True)  # haberman's 81 positives
    ]
    given = LibreSearchCV({"max_intervals": [None], "max_rules": [2]}, cv=2, random_state=0)
    assert given.fit(X, y).best_params_["max_intervals"] is None


def test_the_default_grid_thins_uncapped_bins_on_many_rows(haberman, monkeypatch, capsys):
    """The thirty-sixth round: on more than AUTO_SIGNIFICANT_ROWS rows the default grid's
    uncapped bins keep only significant cut points (its capped part is as it was); an estimator
    that asks for them itself gets no axis (nor a warning that the grid tunes its parameter)."""
    X, y, _ = haberman
    monkeypatch.setattr(search_module, "AUTO_SIGNIFICANT_ROWS", len(X))
    kept = LibreSearchCV(max_rules=2, cv=2, random_state=0, refit=False).fit(X, y)
    assert all("significant_cuts" not in part for part in kept.param_grid_)
    monkeypatch.setattr(search_module, "AUTO_SIGNIFICANT_ROWS", len(X) - 1)
    thinned = LibreSearchCV(max_rules=2, cv=2, random_state=0, refit=False, verbose=1).fit(X, y)
    said = capsys.readouterr().err.splitlines()
    assert said[0] == (
        "LibreSearchCV: the default grid's uncapped bins keep only significant cut points "
        "(more than 305 rows)"
    )
    h1, h2 = thinned.param_grid_
    assert h1["max_intervals"] == [None] and h1["significant_cuts"] == [True]
    assert "significant_cuts" not in h2
    assert thinned.param_grid_ == [
        {k: v for k, v in part.items() if k != "max_rules"}
        for part in default_grid(81, significant_cuts=True)  # haberman's 81 positives
    ]
    assert len(thinned.cv_results_["params"]) == len(kept.cv_results_["params"])
    uncapped = [
        i for i, p in enumerate(kept.cv_results_["params"]) if p.get("max_intervals", 3) is None
    ]
    moved = (
        thinned.cv_results_["mean_test_score"][uncapped]
        != kept.cv_results_["mean_test_score"][uncapped]
    )
    assert moved.any()  # the uncapped points were scored on other bins
    capped = [i for i, p in enumerate(kept.cv_results_["params"]) if "max_intervals" not in p]
    assert list(thinned.cv_results_["mean_test_score"][capped]) == list(
        kept.cv_results_["mean_test_score"][capped]
    )
    own = LibreSearchCV(
        estimator=LibreClassifier(significant_cuts=True), max_rules=2, cv=2, random_state=0
    )
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")
        own.fit(X, y)
    assert not [w for w in said if str(w.message).startswith(search_module.ESTIMATOR_TUNED)]
    assert all("significant_cuts" not in part for part in own.param_grid_)
    monkeypatch.setattr(search_module, "AUTO_UNCAPPED_ROWS", len(X) - 1)  # capped: nothing to thin
    capped_grid = LibreSearchCV(max_rules=2, cv=2, random_state=0, refit=False).fit(X, y)
    assert all("significant_cuts" not in part for part in capped_grid.param_grid_)


def test_on_wide_data_the_default_grids_learners_see_more_columns(haberman, monkeypatch):
    """The twenty-fifth round: on more than WIDE_COLUMNS usable columns (two distinct present
    values at least) the default grid's learners see up to WIDE_MAX_FEATURES columns; a
    max_features the user set on the estimator, or a grid given, is searched as given."""
    assert default_grid(10, n_columns=WIDE_COLUMNS) == DEFAULT_GRID
    wide = [{**part, "max_features": [WIDE_MAX_FEATURES]} for part in DEFAULT_GRID]
    assert default_grid(10, n_columns=WIDE_COLUMNS + 1) == wide
    assert WIDE_MAX_FEATURES > LibreClassifier().max_features
    X, y, _ = haberman  # 3 usable columns
    X = X.assign(constant=1.0, empty=np.nan)  # neither counts
    monkeypatch.setattr(search_module, "WIDE_COLUMNS", 3)
    narrow = LibreSearchCV(max_rules=2, cv=2, random_state=0, refit=False).fit(X, y)
    assert all("max_features" not in part for part in narrow.param_grid_)
    monkeypatch.setattr(search_module, "WIDE_COLUMNS", 2)
    search = LibreSearchCV(max_rules=2, cv=2, random_state=0, refit=False).fit(X, y)
    assert all(part["max_features"] == [WIDE_MAX_FEATURES] for part in search.param_grid_)
    assert {p["max_features"] for p in search.cv_results_["params"]} == {WIDE_MAX_FEATURES}
    assert len(search.cv_results_["params"]) == len(narrow.cv_results_["params"])
    own = LibreSearchCV(estimator=LibreClassifier(max_features=3), max_rules=2, cv=2, refit=False)
    assert all("max_features" not in part for part in own.fit(X, y).param_grid_)
    given = LibreSearchCV({"alpha": [0.5]}, max_rules=2, cv=2, refit=False).fit(X, y)
    assert given.param_grid_ == {"alpha": [0.5]}


def test_one_cover_problem_at_a_time(haberman, monkeypatch):
    """The default search ran out of memory on magic (15,216 training rows, past 23 GB): a
    fold kept the cover problem of every filter setting it met, because the grid's order
    varies alpha slowest and each problem was needed again until the fold's end. Grid points
    are now visited grouped by what they share, and a problem is dropped once its points are
    scored; the scores do not depend on the grid's order."""
    X, y, info = haberman
    grid = {
        "alpha": [0.5, 0.9],
        "chi2_threshold": [6.0, 4.0],
        "n_estimators": [5, 20],
        "top_k": [3, None],
        "max_rules": [2, None],
    }
    problems, alive = [], []
    original = search_module.filter_for_cover

    def spy(*args):
        alive.append(sum(ref() is not None for ref in problems))
        filtered = original(*args)
        problems.append(weakref.ref(filtered))
        return filtered

    monkeypatch.setattr(search_module, "filter_for_cover", spy)
    kwargs = dict(positive_class=info.positive_class, cv=3, random_state=0, refit=False)
    search = LibreSearchCV(grid, n_jobs=1, **kwargs).fit(X, y)
    assert len(alive) >= 3 * 4  # per fold: 2 n_estimators x 2 top_k, per distinct bins
    assert max(alive) <= 1  # the one being replaced
    points = list(ParameterGrid(grid))[::-1]
    backwards = LibreSearchCV([{k: [v] for k, v in p.items()} for p in points], **kwargs)
    backwards.fit(X, y)
    assert backwards.cv_results_["params"] == points
    for name in ("mean_test_score", "std_test_score", "mean_n_rules", "mean_n_atoms"):
        assert backwards.cv_results_[name][::-1].tolist() == search.cv_results_[name].tolist()


def test_a_series_of_numbers_scores_like_an_array(haberman):
    X, y, _ = haberman
    numbers = y.astype(int)  # a pandas Series of int64 labels, the most common y
    kwargs = dict(param_grid={"alpha": [0.5, 0.9]}, cv=3, random_state=0, refit=False)
    for scoring in ("accuracy", "roc_auc", "balanced_accuracy"):
        series = LibreSearchCV(scoring=scoring, **kwargs).fit(X, numbers)
        array = LibreSearchCV(scoring=scoring, **kwargs).fit(X, numbers.to_numpy())
        assert np.array_equal(
            series.cv_results_["mean_test_score"], array.cv_results_["mean_test_score"]
        )


@pytest.mark.parametrize("scoring", ["precision", "recall"])
def test_one_class_scorers_score_the_positive_class(haberman, scoring):
    X, y, info = haberman
    grid = {"alpha": [0.5, 0.9]}
    negative = "1" if info.positive_class == "2" else "2"
    for positive in (info.positive_class, negative):
        search = LibreSearchCV(
            grid, scoring=scoring, positive_class=positive, cv=3, random_state=0, refit=False
        ).fit(X, y)
        mask = (y == positive).to_numpy()
        folds = list(StratifiedKFold(3, shuffle=True, random_state=0).split(X, mask))
        train, test = folds[0]
        clf = LibreClassifier(
            positive_class=positive, random_state=0, **{**PAPER, **search.cv_results_["params"][0]}
        )
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", LibreWarning)
            clf.fit(X.iloc[train], y.iloc[train])
        metric = precision_score if scoring == "precision" else recall_score
        expected = metric(
            y.iloc[test], clf.predict(X.iloc[test]), pos_label=positive, zero_division=0
        )
        assert search.cv_results_["split0_test_score"][0] == pytest.approx(expected)


def test_one_class_of_several_against_the_rest():
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"a": rng.normal(size=300), "b": rng.integers(0, 10, 300).astype(float)})
    y = np.where(X.a > 0.3, "setosa", np.where(X.b > 5, "versicolor", "virginica"))
    grid = {"alpha": [0.5, 0.9]}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", LibreWarning)
        search = LibreSearchCV(grid, positive_class="setosa", cv=3, random_state=0).fit(X, y)
        plain = LibreClassifier(
            positive_class="setosa", random_state=0, **{**PAPER, **search.best_params_}
        ).fit(X, y)
        on_mask = LibreSearchCV(grid, cv=3, random_state=0).fit(X, y == "setosa")
    assert str(search.rules_) == str(plain.rules_)
    assert list(search.classes_) == [False, True]
    # the folds score the class mask, as a search on the mask itself does
    assert np.array_equal(
        search.cv_results_["mean_test_score"], on_mask.cv_results_["mean_test_score"]
    )


def test_one_class_of_several_reads_as_that_class_and_scores_against_it():
    rng = np.random.default_rng(1)
    X = pd.DataFrame({"a": rng.normal(size=300), "b": rng.integers(0, 10, 300).astype(float)})
    y = np.where(X.a > 0.3, "setosa", np.where(X.b > 5, "versicolor", "virginica"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", LibreWarning)
        model = LibreClassifier(positive_class="setosa", random_state=0).fit(X, y)
        scores = cross_val_score(LibreClassifier(positive_class="setosa", random_state=0), X, y)
    assert str(model.rules_).endswith("THEN y = setosa ELSE y = not setosa")
    assert model.score(X, y) == np.mean(model.predict(X) == (y == "setosa"))
    assert not np.isnan(scores).any() and scores.min() > 0.8
    again = LibreClassifier.from_json(model.to_json())
    assert str(again.rules_) == str(model.rules_)
    assert model.score(X[y != "setosa"], y[y != "setosa"]) <= 1.0  # a fold without the class


def test_a_nan_validation_score_ranks_last_and_is_never_chosen(haberman):
    X, y, _ = haberman

    def undefined_for_half(estimator, X_val, y_val):
        return float("nan") if estimator.alpha == 0.5 else estimator.score(X_val, y_val)

    grid = {"alpha": [0.5, 0.7]}
    with pytest.warns(LibreWarning, match=r"1 of the 2 candidates have a NaN validation score"):
        search = LibreSearchCV(grid, scoring=undefined_for_half, cv=3, random_state=0).fit(X, y)
    assert search.best_params_ == {"alpha": 0.7}
    assert search.cv_results_["rank_test_score"].tolist() == [2, 1]

    def undefined(estimator, X_val, y_val):
        return float("nan")

    with pytest.raises(ParameterError, match=r"Every candidate's validation score is NaN"):
        LibreSearchCV(grid, scoring=undefined, cv=3, random_state=0).fit(X, y)


def test_a_group_splitter_gets_the_groups(haberman):
    from sklearn.model_selection import GroupKFold

    X, y, _ = haberman
    groups = np.arange(len(y)) % 7
    grid = {"alpha": [0.5, 0.9]}
    search = LibreSearchCV(grid, cv=GroupKFold(3), random_state=0, refit=False)
    search.fit(X, y, groups=groups)
    splits = list(GroupKFold(3).split(X, y, groups))
    given = LibreSearchCV(grid, cv=splits, random_state=0, refit=False).fit(X, y)
    assert np.array_equal(
        search.cv_results_["mean_test_score"], given.cv_results_["mean_test_score"]
    )
    for _, test in splits:  # every validation fold is whole groups
        assert not set(groups[test]) & set(np.delete(groups, test))
    with pytest.raises(ParameterError, match=r"'groups' parameter .* one label per row"):
        search.fit(X, y, groups=groups[:10])


def test_the_search_exports_its_best_model(haberman, tuned):
    X, _, _ = haberman
    assert tuned.to_sql() == tuned.best_estimator_.to_sql()
    again = LibreClassifier.from_json(tuned.to_json())
    np.testing.assert_array_equal(again.predict(X), tuned.predict(X))
    with pytest.raises(NotFittedError):
        LibreSearchCV().to_sql()


def test_one_class_of_several_integer_labels_where_1_is_not_true():
    rng = np.random.default_rng(2)
    X = pd.DataFrame({"a": rng.normal(size=300)})
    y = np.where(X.a > 0.3, 1, np.where(X.a < -0.5, 2, 0))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", LibreWarning)
        model = LibreClassifier(positive_class=1, random_state=0).fit(X, y)
    assert str(model.rules_).endswith("THEN y = 1 ELSE y = not 1")
    assert model.score(X, y) == np.mean(model.predict(X) == (y == 1))


# --- the refit check (docs/benchmarks.md, fourteenth round) ----------------------------------


class _Fitted:
    def __init__(self, n_rules):
        self.rules_ = ["rule"] * n_rules


def _decided(split_rules, means, rules_of_refits):
    """A search whose choice is made (cv_results_ by hand) and a refit stub: candidate i
    refits to ``rules_of_refits[i]`` rules; the stub records the order of the refits."""
    search = LibreSearchCV()
    split_rules = np.asarray(split_rules, dtype=float)
    scores = np.tile(np.asarray(means, dtype=float)[:, None], (1, split_rules.shape[1]))
    search._grid_points = [{"alpha": i} for i in range(len(means))]
    search._fixed_points = [{} for _ in means]
    search._tuned_names = ["alpha"]
    search.cv_results_ = search._results(scores, split_rules, np.ones_like(scores))
    search.tolerance_ = 0.05
    search._set_choice(choose_candidate(means, split_rules.mean(axis=1), search.tolerance_))
    refitted = []

    def fit_point(index):
        refitted.append(index)
        warnings.warn(f"fit of candidate {index}", LibreWarning, stacklevel=2)
        return _Fitted(rules_of_refits[index])

    return search, fit_point, refitted


def test_an_empty_refit_the_inner_folds_never_showed_falls_back_to_the_next_choice():
    """Padded pima: one outer fold's chosen point (5 rules in each inner fold) refitted to no
    rule (the majority guard); the next accepted point in the choice's order is taken."""
    # candidate 0: 2 rules everywhere (chosen: fewest rules within 0.05 of 0.62); 1: 3 rules,
    # 0.60; 2: 3 rules, 0.61 (before 1: better score); 3: outside the tolerance
    search, fit_point, refitted = _decided(
        [[2, 2, 2], [3, 3, 3], [3, 3, 3], [1, 1, 1]], [0.60, 0.60, 0.61, 0.50], [0, 4, 3, 1]
    )
    assert search.best_index_ == 0 and list(search.choice_order()) == [0, 2, 1]
    # what the pipeline's pick hands on; 3, outside the tolerance, last (twenty-second round)
    assert list(search.refit_order()) == [0, 2, 1, 3]
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")
        model = search.checked_refit(fit_point)
    assert [str(w.message) for w in said] == ["fit of candidate 2"]  # the kept model's only
    assert refitted == [0, 2] and len(model.rules_) == 3
    assert search.best_index_ == 2 and search.best_params_ == {"alpha": 2}
    assert search.best_score_ == pytest.approx(0.61) and search.refit_fallbacks_ == 1


def test_an_empty_refit_stays_when_the_inner_folds_showed_it_or_nothing_else_keeps_a_rule():
    # most inner folds kept no rule: the empty refit agrees with the inner CV
    search, fit_point, refitted = _decided([[1, 0, 0], [3, 3, 3]], [0.6, 0.6], [0, 3])
    assert list(search.refit_order()) == [0]  # no fallback
    with pytest.warns(LibreWarning, match="fit of candidate 0"):
        assert len(search.checked_refit(fit_point).rules_) == 0 and refitted == [0]
    assert search.best_index_ == 0 and search.refit_fallbacks_ == 0
    # one inner fold of three kept no rule, most kept some (haberman's design fold, the
    # twenty-fifth round): the empty refit contradicts them, the next candidate ships
    search, fit_point, refitted = _decided([[1, 0, 1], [3, 3, 3]], [0.6, 0.6], [0, 3])
    assert list(search.refit_order()) == [0, 1]
    with pytest.warns(LibreWarning, match="fit of candidate 1"):
        assert len(search.checked_refit(fit_point).rules_) == 3 and refitted == [0, 1]
    assert search.best_index_ == 1 and search.refit_fallbacks_ == 1
    # every accepted candidate refits to no rule: the chosen one's empty model stays
    search, fit_point, refitted = _decided([[1, 1, 1], [2, 2, 2]], [0.6, 0.6], [0, 0])
    assert len(search.checked_refit(fit_point).rules_) == 0 and refitted == [0, 1]
    assert search.best_index_ == 0 and search.refit_fallbacks_ == 1
    # a refit that keeps rules is never second-guessed
    search, fit_point, refitted = _decided([[1, 1, 1], [2, 2, 2]], [0.6, 0.6], [1, 5])
    assert len(search.checked_refit(fit_point).rules_) == 1 and refitted == [0]


def test_when_every_accepted_refit_is_empty_the_check_goes_on_beyond_the_tolerance():
    """A churn table through the pipeline: the six accepted points (H2) kept rules in every
    inner fold and all refitted to none; the best point outside the tolerance that kept rules
    in most inner folds ships instead (rounds 22 and 25)."""
    # 0, 1: accepted (within 0.05 of 0.60), both refit empty; 2: outside, but most inner folds
    # kept no rule; 3 and 4: outside, 4 scores higher; 5: outside, as 4 with more rules
    split_rules = [[2, 2, 2], [3, 3, 3], [4, 0, 0], [5, 5, 5], [8, 8, 8], [9, 9, 9]]
    means = [0.60, 0.58, 0.54, 0.50, 0.53, 0.53]
    search, fit_point, refitted = _decided(split_rules, means, [0, 0, 6, 5, 8, 9])
    assert list(search.choice_order()) == [0, 1]
    assert list(search.refit_order()) == [0, 1, 4, 5, 3]
    with pytest.warns(LibreWarning, match="fit of candidate 4"):
        model = search.checked_refit(fit_point)
    assert refitted == [0, 1, 4] and len(model.rules_) == 8
    assert search.best_index_ == 4 and search.refit_fallbacks_ == 2
    assert search.best_score_ == pytest.approx(0.53)
    # at most BEYOND_TOLERANCE of them, and only from the pool given (LIBRE 3's points)
    many = [[1, 1, 1]] * (BEYOND_TOLERANCE + 5)
    results = _decided(many, np.linspace(0.6, 0.3, len(many)), [0] * len(many))[0].cv_results_
    order = search_module.checked_order([0], results)
    assert list(order) == list(range(BEYOND_TOLERANCE + 1))
    assert list(search_module.checked_order([0], results, pool=[0, 7, 3])) == [0, 3, 7]
    # nothing beyond when the choice itself left most inner folds empty
    assert list(search_module.checked_order([2], search.cv_results_)) == [2]


def test_the_choice_order_starts_with_the_choice_and_the_results_keep_each_splits_rules():
    X, y, info = load_dataset("haberman")
    search = LibreSearchCV(SMALL_GRID, positive_class=info.positive_class, random_state=0)
    search.fit(X, y)
    assert search.choice_order()[0] == search.best_index_
    per_split = np.stack([search.cv_results_[f"split{k}_n_rules"] for k in range(5)], axis=1)
    np.testing.assert_allclose(per_split.mean(axis=1), search.cv_results_["mean_n_rules"])


def test_a_class_too_small_for_the_inner_folds_is_named():
    """With one positive row an inner fold's fit failed on "y has one class" although y has
    two; with two, every training fold holds one and the search runs."""
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"a": rng.normal(size=200), "b": rng.normal(size=200)})
    y = np.zeros(200, dtype=bool)
    y[0] = True
    grid = {"alpha": [0.7]}
    with pytest.raises(DataError, match=r"hold no row of the positive class True \(1 in y\)"):
        LibreSearchCV(grid, random_state=0).fit(X, y)
    with pytest.raises(DataError, match=r"hold no row of the negative class \(1 in y\)"):
        LibreSearchCV(grid, random_state=0).fit(X, ~y)
    y[1] = True
    with pytest.warns(LibreWarning, match="Only 2 training rows of 200 are of the positive"):
        LibreSearchCV(grid, random_state=0).fit(X, y)  # the fit's own words, not the splitter's
    # fewer rows of either class than folds: scikit-learn's splitter failed with its own words
    tiny, labels = X.iloc[:6], np.array([False] * 4 + [True] * 2)
    with pytest.raises(
        DataError, match=r"hold 2 rows of the positive class True and 4 .*tuning\.folds"
    ):
        LibreSearchCV(grid, random_state=0).fit(tiny, labels)


OPTION_GRIDS = {
    "merge_order": {"merge_order": ["lowest", "sweep"], "max_intervals": [None]},
    "significant_cuts": {"significant_cuts": [False, True], "max_intervals": [None]},
    "contiguous": {"contiguous": [False, True], "max_intervals": [None]},
}


def _tuned_option(name, haberman):
    """The search tuning option ``name`` alone (uncapped bins, 5 learners, H1 with tolerance)
    on haberman, without a refit."""
    X, y, info = haberman
    grid = {**OPTION_GRIDS[name], "n_estimators": [5], "conflict_tolerance": [0.5]}
    return LibreSearchCV(
        grid, positive_class=info.positive_class, cv=3, random_state=0, refit=False
    ).fit(X, y)


@pytest.mark.parametrize("name", list(OPTION_GRIDS))
def test_an_option_can_be_tuned_and_scores_like_plain_fits(name, haberman):
    """Each value of a tuned option is scored exactly as the plain fit: merge_order's and
    significant_cuts' values get their own discretizations, contiguous's its own learners on
    a shared one; the values give other rules."""
    search = _tuned_option(name, haberman)
    assert_scores_equal_plain_fits(search.cv_results_, haberman)
    assert [p[name] for p in search.cv_results_["params"]] == OPTION_GRIDS[name][name]
    splits = [search.cv_results_[f"split{k}_test_score"] for k in range(3)]
    assert any(scores[0] != scores[1] for scores in splits)


def test_an_option_the_grid_leaves_out_keeps_the_estimators_value(haberman):
    X, y, info = haberman
    tuned = _tuned_option("significant_cuts", haberman)
    base = LibreClassifier(significant_cuts=True, max_intervals=None, conflict_tolerance=0.5)
    fixed = LibreSearchCV(
        {"n_estimators": [5]}, estimator=base, positive_class=info.positive_class, cv=3,
        random_state=0,
    ).fit(X, y)  # fmt: skip
    assert fixed.best_estimator_.significant_cuts is True
    assert np.array_equal(
        tuned.cv_results_["mean_test_score"][1:], fixed.cv_results_["mean_test_score"]
    )


def test_a_refit_far_below_the_inner_score_draws_a_warning(credit_data):
    """The search's refit is checked as LibreClassifier()'s fit is: its training F1 far below
    the chosen point's mean inner F1 means its learners missed what the folds' learners had."""
    from libre_lib.estimator import below_inner_message

    X, y, info = credit_data
    search = LibreSearchCV(SMALL_GRID, positive_class=info.positive_class, cv=3, random_state=0)
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")
        search.fit(X, y)
    assert not any("far below" in str(w.message) for w in said)
    model = search.best_estimator_
    n_positive = float((np.asarray(y) == info.positive_class).sum())
    assert len(model.rules_)
    assert below_inner_message(model, n_positive, search.best_score_) is None
    assert "far below the 1.000" in below_inner_message(model, n_positive, 1.0)


def test_a_fit_far_below_its_inner_score_blames_random_columns_only_where_more_were_drawn(
    credit_data,
):
    """On three columns every learner sees every column: the warning advised more learners or
    another random_state, and said fits with more learners fell short, where none was run."""
    from libre_lib.estimator import _unstable_cause, below_inner_message

    X, y, info = credit_data
    n_positive = float((np.asarray(y) == info.positive_class).sum())
    settings = dict(positive_class=info.positive_class, random_state=0, max_rules=3)
    few = LibreClassifier(**settings).fit(X[["a2", "a3", "a8"]], y)
    said = below_inner_message(few, n_positive, 1.0)
    assert "already saw every set of columns" in said and "n_estimators" not in said
    # it names the causes that apply: none here (numeric columns, 307 positive rows)
    assert "the signal the rules use is likely weak" in said and "categories," not in said
    assert _unstable_cause(few, 60) == "only 60 rows are positive, which can do this"
    # weighted rows: the rows are counted, not their weight (3.07 for weights of 0.01)
    assert "(only 60 rows are positive," in below_inner_message(few, n_positive, 1.0, 60)
    wide = X[["a2", "a3"]].assign(code=(np.arange(len(X)) % 25).astype(str))
    coded = LibreClassifier(**settings).fit(wide, y)
    assert "(column code holds 25 categories, which can do this)" in below_inner_message(
        coded, n_positive, 1.0
    )
    many = LibreClassifier(max_features=2, n_estimators=3, **settings).fit(X, y)
    assert "missed a combination of columns" in below_inner_message(many, n_positive, 1.0)


def test_a_refit_far_below_the_inner_score_is_fitted_again_with_more_learners(
    monkeypatch, pair_data
):
    """One point, eight learners on twelve columns, random_state=1: the inner folds' learners
    held the two columns of the concept and the refit's did not. As ``LibreClassifier()``
    does, the refit is fitted again with twice its learners (the thirty-fifth round); the
    point's parameters stay what the search chose."""
    from libre_lib import estimator as module
    from libre_lib.estimator import BELOW_INNER, training_f1

    X, y = pair_data
    grid = {"n_estimators": [8], "alpha": [0.7], "max_intervals": [3],
            "conflict_tolerance": [0.5], "max_rules": [3]}  # fmt: skip
    n_positive = float((y == "yes").sum())
    with warnings.catch_warnings():
        warnings.simplefilter("error", LibreWarning)
        search = LibreSearchCV(grid, cv=3, random_state=1).fit(X, y)
    model = search.best_estimator_
    assert model.learner_factor_ == 2 and model.n_estimators == 8
    assert search.best_params_["n_estimators"] == 8
    assert training_f1(model.rules_, n_positive) >= search.best_score_ - BELOW_INNER

    monkeypatch.setattr(module, "LEARNER_FACTORS", ())
    with pytest.warns(LibreWarning, match="far below"):
        short = LibreSearchCV(grid, cv=3, random_state=1).fit(X, y).best_estimator_
    assert short.learner_factor_ == 1 and short.rules_ != model.rules_
    assert model.feature_subsets_[: len(short.feature_subsets_)] == short.feature_subsets_


def test_a_grid_that_leaves_auto_parameters_says_what_it_fits_them_as():
    """param_grid={"alpha": ...} fitted max_rules=None (uncapped) in silence, and
    LibreClassifier(**best_params_) did not give best_estimator_ as the docstring said."""
    X, y, _ = load_dataset("credit_approval")
    with pytest.warns(LibreWarning, match=r"does not tune max_intervals \(fitted as 3.*max_rules "
                      r"\(fitted as None"):  # fmt: skip
        search = LibreSearchCV({"alpha": [0.5, 0.7]}, cv=3, random_state=0).fit(X, y)
    assert search.fixed_params_ == {k: v for k, v in AUTO_FALLBACK.items() if k != "alpha"}
    again = LibreClassifier(
        random_state=search.seed_, **search.fixed_params_, **search.best_params_
    ).fit(X, y)
    assert str(again.rules_) == str(search.best_estimator_.rules_)


def test_the_paper_grid_is_importable_from_the_package_as_the_readme_writes_it():
    import libre_lib

    assert libre_lib.PAPER_GRID is PAPER_GRID
    assert "PAPER_GRID" in libre_lib.__all__


def test_the_library_s_own_grids_leave_auto_parameters_without_a_warning():
    """LibreSearchCV(PAPER_GRID), as the README suggests, warned on every fit."""
    X, y, _ = load_dataset("haberman")
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")
        search = LibreSearchCV(PAPER_GRID, cv=3, random_state=0, positive_class="2").fit(X, y)
    assert not [w for w in said if "does not tune" in str(w.message)]
    assert search.fixed_params_ == {k: v for k, v in AUTO_FALLBACK.items() if k != "alpha"}
    from libre_lib.search import default_grid

    built = default_grid(50, capped_bins=True, early_stops=False)  # as the pipeline builds it
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")
        LibreSearchCV(built, max_rules=3, cv=3, random_state=0, positive_class="2").fit(X, y)
    assert not [w for w in said if "does not tune" in str(w.message)]
    numpy_values = {**PAPER_GRID, "alpha": np.array([0.5, 0.9])}  # compared without a crash
    with pytest.warns(LibreWarning, match="does not tune"):
        LibreSearchCV(numpy_values, cv=3, random_state=0, positive_class="2").fit(X, y)


def test_an_estimator_value_the_grid_replaces_draws_a_warning_naming_it():
    """estimator=LibreClassifier(max_rules=1) was searched over 1 to 8 rules without a word."""
    X, y, _ = load_dataset("haberman")
    grid = {"alpha": [0.5, 0.9], "max_rules": [1, 2]}

    def said(search) -> list[str]:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            search.fit(X, y)
        return [str(w.message) for w in caught if "which the grid tunes" in str(w.message)]

    base = {"cv": 3, "random_state": 0, "positive_class": "2"}
    estimator = LibreClassifier(max_rules=1, alpha=0.9, n_estimators=5)
    (message,) = said(LibreSearchCV(grid, estimator=estimator, **base))
    assert "the estimator sets alpha=0.9, max_rules=1" in message
    assert "pass a param_grid without alpha, max_rules" in message
    assert "LibreSearchCV(max_rules=...)" in message
    # n_estimators is not tuned, a default alpha is not the user's, the search's own max_rules
    # said what to do with the cap
    assert not said(LibreSearchCV(grid, estimator=LibreClassifier(n_estimators=5), **base))
    (message,) = said(
        LibreSearchCV({"alpha": [0.5, 0.9]}, estimator=estimator, max_rules=[1, 2], **base)
    )
    assert "sets alpha=0.9, which" in message and "LibreSearchCV(max_rules" not in message


def test_nested_parameters_of_a_default_search_say_to_pass_an_estimator():
    """LibreSearchCV().set_params(estimator__n_estimators=10) raised AttributeError:
    'NoneType' object has no attribute 'set_params'."""
    with pytest.raises(ParameterError, match=r"estimator=LibreClassifier\(n_estimators=\.\.\.\)"):
        LibreSearchCV().set_params(estimator__n_estimators=10)
    given = LibreSearchCV().set_params(estimator=LibreClassifier(), estimator__n_estimators=10)
    assert given.estimator.n_estimators == 10
    again = LibreSearchCV(estimator=LibreClassifier()).set_params(estimator__alpha=0.9)
    assert again.estimator.alpha == 0.9 and again.get_params()["estimator__alpha"] == 0.9


def test_log_probabilities_for_cross_val_predict():
    """predict_log_proba was missing: cross_val_predict(method="predict_log_proba") failed."""
    from sklearn.model_selection import cross_val_predict

    X, labels, _ = load_dataset("haberman")
    y = labels == "2"  # cross_val_predict encodes y as 0/1 for these methods
    model = LibreClassifier(random_state=0, n_estimators=5)
    logs = cross_val_predict(model, X, y, cv=3, method="predict_log_proba")
    probabilities = cross_val_predict(model, X, y, cv=3, method="predict_proba")
    with np.errstate(divide="ignore"):
        np.testing.assert_array_equal(logs, np.log(probabilities))
    assert np.isneginf(logs).any()  # rows no rule fires on: probability 0
    search = LibreSearchCV({"alpha": [0.5]}, estimator=model, cv=3, random_state=0).fit(X, y)
    np.testing.assert_array_equal(
        search.predict_log_proba(X), search.best_estimator_.predict_log_proba(X)
    )


def test_multi_metric_scoring_is_refused_by_name():
    X, y, _ = load_dataset("haberman")
    for scoring in (["f1", "accuracy"], {"a": "accuracy"}):
        with pytest.raises(ParameterError, match="takes one metric"):
            LibreSearchCV({"alpha": [0.5]}, scoring=scoring, cv=3).fit(X, y)


@pytest.mark.parametrize(
    ("labels", "said"),
    [
        (["a", "b", None], "LibreSearchCV does not guess labels"),
        (["a", "b", "c"], "LibreSearchCV learns rules for one positive class"),
    ],
)
def test_errors_about_y_name_the_search_being_fitted(labels, said):
    """They named LibreClassifier, which the user had not called."""
    X = pd.DataFrame({"a": np.arange(30.0)})
    with pytest.raises(DataError, match=said):
        LibreSearchCV({"alpha": [0.5]}).fit(X, pd.Series(labels * 10))


def test_an_estimator_given_first_as_gridsearchcv_takes_it_is_told_its_name():
    X = pd.DataFrame({"a": np.arange(30.0)})
    with pytest.raises(ParameterError, match=r"pass the estimator by name: LibreSearchCV\(estim"):
        LibreSearchCV(LibreClassifier(), cv=3).fit(X, ["a", "b"] * 15)


def test_a_search_that_finds_no_positive_row_out_of_fold_says_so():
    """Four positive rows of 768: best_score_ 0.000, and the refit's rules were shipped
    without a word; scikit-learn's "least populated class" warning leaked instead."""
    X, _, _ = load_dataset("pima")
    y = (np.arange(len(X)) < 4).astype(int)
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")
        search = LibreSearchCV({"alpha": [0.5, 0.9]}, cv=2, random_state=0).fit(X, y)
    texts = [str(w.message) for w in said]
    assert search.best_score_ == 0
    assert any(t.startswith("No point of the grid scored an F1 above 0") for t in texts)
    assert any(t.startswith("Only 4 training rows of 768") for t in texts)
    assert not any("least populated class" in t for t in texts)
    y = (np.arange(len(X)) < 1).astype(int)
    with pytest.raises(DataError) as raised:
        LibreSearchCV({"alpha": [0.5]}, cv=2, random_state=0).fit(X, y)
    assert "smaller cv" not in str(raised.value) and "without a search" in str(raised.value)


def test_score_takes_a_one_column_y_and_passes_weights_to_the_scorer():
    """y as a one-column frame scored an "F1" of 82.0 (an n x n broadcast), and a scorer of
    `scoring` never saw sample_weight."""
    X, y, info = load_dataset("haberman")
    grid = {"alpha": [0.5, 0.9]}
    search = LibreSearchCV(grid, cv=3, random_state=0, positive_class=info.positive_class)
    search.fit(X, y)
    assert search.score(X, y.to_frame()) == search.score(X, y) <= 1.0
    with pytest.raises(ParameterError, match="306 rows of X, 5 labels"):
        search.score(X, y[:5])
    search.set_params(scoring="accuracy").fit(X, y)
    right = (search.predict(X) == y).astype(float)  # weighs only the rows it gets right
    assert search.score(X, y) < 1.0 and search.score(X, y, sample_weight=right) == 1.0


def test_a_search_below_flagging_every_row_says_the_columns_may_hold_no_signal():
    """A target drawn independently of the only column: the search's best inner F1 (0.21)
    stayed below the 0.31 of answering positive everywhere, and it said nothing."""
    from libre_lib.search import flag_every_row_f1

    rng = np.random.default_rng(0)
    X = pd.DataFrame({"a": rng.normal(size=300)})
    y = rng.random(300) < 0.2
    with pytest.warns(LibreWarning, match=r"below the 0\.\d+ of flagging every row") as said:
        grid = {"n_estimators": [5], "max_rules": [1, 3], "max_intervals": [None]}
        grid |= {"alpha": [0.9], "conflict_tolerance": [0.5]}
        search = LibreSearchCV(grid, random_state=0)
        search.fit(X, y)
    trivial = flag_every_row_f1(y)
    top = np.nanmax(search.cv_results_["mean_test_score"])  # the grid's best, not the chosen
    assert search.best_score_ <= top < trivial == pytest.approx(2 * y.mean() / (1 + y.mean()))
    assert f"{trivial:.3f}" in " ".join(str(w.message) for w in said)
    assert flag_every_row_f1([True, False, False, False], [3, 1, 1, 1]) == pytest.approx(2 / 3)


def test_a_chosen_point_below_flagging_every_row_is_said_although_the_best_is_above():
    """2 % positives, no signal: the best point scored 0.042 against the trivial 0.040, and the
    point chosen (one rule, within the tolerance) 0.029; nothing warned."""
    from libre_lib.estimator import below_trivial_message

    said = below_trivial_message(0.042, 0.0395, chosen=0.029)
    assert said.startswith("The chosen point (the fewest rules within the tolerance of the best)")
    assert "0.029, below the 0.040 of flagging every row" in said and "scored 0.042" in said
    assert below_trivial_message(0.042, 0.0395, chosen=0.041) is None
    assert below_trivial_message(0.042, 0.0395) is None
    assert below_trivial_message(0.03, 0.0395, chosen=0.02).startswith("The best point")
