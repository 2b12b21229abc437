"""Boundary refinement: endpoints move to the training rows' gaps, only when the score rises."""

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from libre_lib import LibreClassifier, LibreSearchCV
from libre_lib.datasets import load_dataset
from libre_lib.discretization import NUMERIC
from libre_lib.errors import ParameterError
from libre_lib.inputs import Target, binary_target
from libre_lib.rules import Condition, Interval, Rule
from libre_lib.selection import refine_rules, rule_stats


def target(positive, weight=None) -> Target:
    positive = np.asarray(positive, dtype=bool)
    return Target(positive, np.array([0, 1]), 1, weight)


def numeric(feature, low=-math.inf, high=math.inf, missing=False) -> Condition:
    return Condition(feature, NUMERIC, intervals=(Interval(low, high),), missing=missing)


def score(rules, frame, y, objective=0.5) -> float:
    hit = np.zeros(frame.shape[0], dtype=bool)
    for rule in rules:
        hit |= rule.evaluate(frame)
    tp, fp = float((hit & y).sum()), float((hit & ~y).sum())
    if objective == "f1":
        return 2 * tp / (tp + fp + y.sum())
    return objective * tp - (1 - objective) * fp


def test_a_low_endpoint_moves_to_the_gap_between_the_classes():
    x = np.arange(20, dtype=float)
    frame = pd.DataFrame({"x": x})
    y = x >= 7
    (rule,) = refine_rules([Rule((numeric("x", 10.0),))], frame, target(y))
    assert rule == Rule((numeric("x", 6.5),))  # halfway between 6 and 7


def test_an_endpoint_that_takes_in_every_row_beyond_it_opens():
    frame = pd.DataFrame({"x": np.arange(10, dtype=float)})
    y = np.ones(10, dtype=bool)
    y[9] = False
    (rule,) = refine_rules([Rule((numeric("x", 5.0, 8.5),))], frame, target(y))
    assert rule.conditions[0].intervals == (Interval(-math.inf, 8.5),)


def test_an_optimal_rule_is_returned_unchanged():
    x = np.arange(20, dtype=float)
    frame = pd.DataFrame({"x": x})
    rule = Rule((numeric("x", 6.5),))
    assert refine_rules([rule], frame, target(x >= 7))[0] is rule


def test_equal_scores_keep_the_cut_point_nearest_the_old_one():
    # x = 3 holds a positive and a negative: taking it in or not scores the same
    x = np.array([0, 1, 2, 3, 3, 4, 5, 6], dtype=float)
    y = np.array([0, 0, 0, 1, 0, 1, 1, 1], dtype=bool)
    frame = pd.DataFrame({"x": x})
    (rule,) = refine_rules([Rule((numeric("x", 4.5),))], frame, target(y))
    assert rule.conditions[0].intervals[0].low == 3.5  # not 2.5, the farther of the two


def test_rows_another_rule_covers_do_not_count():
    # rule 2 already covers x < 3; rule 1 on x would gain nothing by reaching below 10
    x = np.arange(20, dtype=float)
    frame = pd.DataFrame({"x": x, "z": (x < 3).astype(float)})
    y = (x >= 10) | (x < 3)
    rules = [Rule((numeric("x", 12.0),)), Rule((numeric("z", 0.5),))]
    refined = refine_rules(rules, frame, target(y))
    assert refined[0] == Rule((numeric("x", 9.5),))
    assert refined[1] == rules[1]
    assert score(refined, frame, y) == 0.5 * y.sum()  # every positive, no negative


def test_other_conditions_of_the_rule_select_the_rows_that_decide():
    # among rows with a = 1 the class changes at x = 4; among all rows it does not
    rng = np.random.default_rng(0)
    a = rng.integers(0, 2, 400).astype(float)
    x = rng.uniform(0, 10, 400)
    y = (a == 1) & (x >= 4)
    frame = pd.DataFrame({"a": a, "x": x})
    rule = Rule((numeric("a", 0.5), numeric("x", 7.0)))
    (refined,) = refine_rules([rule], frame, target(y))
    low = refined.conditions[1].intervals[0].low
    assert x[(a == 1) & (x < 4)].max() < low <= x[(a == 1) & (x >= 4)].min()
    assert refined.conditions[0] == rule.conditions[0]


def test_categories_unions_and_the_missing_flag_are_left_alone():
    x = np.array([0, 1, 2, 3, 4, 5, np.nan, np.nan], dtype=float)
    y = np.array([0, 1, 1, 1, 1, 0, 1, 0], dtype=bool)
    frame = pd.DataFrame({"x": x, "c": list("abababab")})
    union = Condition(
        "x", NUMERIC, intervals=(Interval(-math.inf, 1), Interval(3, math.inf)), missing=True
    )
    categories = Condition("c", "categorical", categories=("a", "b"))
    rules = [Rule((categories, union))]
    assert refine_rules(rules, frame, target(y)) == rules
    single = Rule((numeric("x", 3.0, missing=True),))
    (refined,) = refine_rules([single], frame, target(y))
    assert refined.conditions[0].missing
    assert refined.conditions[0].intervals == (Interval(0.5, 4.5),)


def test_the_f1_objective_takes_in_rows_accuracy_would_leave_out():
    # below 10 every value holds one positive and one negative: accuracy cannot rise by
    # taking them in, F1 can (each adds as many true as false positives to 20 true ones)
    x = np.concatenate([np.arange(10, 30), np.repeat(np.arange(10), 2)]).astype(float)
    y = np.concatenate([np.ones(20), np.tile([1, 0], 10)]).astype(bool)
    frame = pd.DataFrame({"x": x})
    rule = Rule((numeric("x", 9.5),))
    assert refine_rules([rule], frame, target(y), 0.5)[0] is rule
    (wide,) = refine_rules([rule], frame, target(y), "f1")
    assert wide.conditions[0].intervals == (Interval(-math.inf, math.inf),)
    assert score([wide], frame, y, "f1") > score([rule], frame, y, "f1")


def test_weights_count_like_repeated_rows():
    x = np.arange(12, dtype=float)
    y = np.array([0, 0, 1, 0, 1, 1, 0, 1, 1, 1, 1, 1], dtype=bool)
    weight = np.array([1, 3, 2, 1, 1, 4, 2, 1, 1, 2, 1, 1], dtype=float)
    rule = Rule((numeric("x", 8.0),))
    weighted = refine_rules([rule], pd.DataFrame({"x": x}), target(y, weight))
    repeat = np.repeat(np.arange(12), weight.astype(int))
    repeated = refine_rules([rule], pd.DataFrame({"x": x[repeat]}), target(y[repeat]))
    assert weighted == repeated


def test_no_rules_or_no_rows_change_nothing():
    frame = pd.DataFrame({"x": np.arange(3.0)})
    assert refine_rules([], frame, target([1, 0, 1])) == []
    rule = Rule((numeric("x", 1.0),))
    assert refine_rules([rule], frame.iloc[:0], target([])) == [rule]


@pytest.mark.parametrize("objective", [0.5, 0.7, "f1"])
@settings(max_examples=40, deadline=None)
@given(data=st.data())
def test_refinement_never_lowers_the_training_score(objective, data):
    n = data.draw(st.integers(5, 40))
    seed = data.draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame(
        {
            "x": rng.integers(0, 8, n).astype(float),
            "z": np.where(rng.random(n) < 0.2, np.nan, rng.normal(size=n)),
        }
    )
    y = rng.random(n) < 0.4
    rules = [
        Rule((numeric("x", float(rng.integers(0, 4)) + 0.5, 6.5),)),
        Rule((numeric("x", -math.inf, 2.5), numeric("z", -0.3, missing=bool(rng.integers(2))))),
    ]
    refined = refine_rules(rules, frame, target(y), objective)
    assert score(refined, frame, y, objective) >= score(rules, frame, y, objective) - 1e-9
    assert refine_rules(refined, frame, target(y), objective) == refined  # a fixed point


def test_a_condition_that_comes_to_allow_every_value_and_missing_is_dropped():
    x = np.array([0, 1, 2, 3, np.nan], dtype=float)
    frame = pd.DataFrame({"x": x, "a": [1.0, 1.0, 1.0, 0.0, 1.0]})
    y = np.array([1, 1, 1, 0, 1], dtype=bool)
    rule = Rule((numeric("a", 0.5), numeric("x", 1.5, missing=True)))
    (refined,) = refine_rules([rule], frame, target(y))
    assert refined == Rule((numeric("a", 0.5),))
    keeps = Rule((numeric("a", 0.5), numeric("x", 1.5)))  # missing x does not match
    (refined,) = refine_rules([keeps], frame, target(y))
    assert refined.conditions[1] == numeric("x")  # "x is not missing" stays


# --- in the estimator ------------------------------------------------------------------------


def test_the_estimator_refines_its_rules_and_their_statistics():
    X, y, info = load_dataset("pima")
    params = dict(random_state=0, max_intervals=None, max_rules=3, alpha=0.5)
    plain = LibreClassifier(conflict_tolerance=0, **params).fit(X, y)
    refined = LibreClassifier(conflict_tolerance=0, refine="accuracy", **params).fit(X, y)
    assert refined.rules_ != plain.rules_
    assert refined.score(X, y) > plain.score(X, y)
    assert len(refined.rules_) == len(plain.rules_)
    truth = binary_target(y, info.positive_class)
    assert refined.rules_.stats == rule_stats(refined.rules_.rules, X, truth)
    again = LibreClassifier.from_json(refined.to_json())
    assert again.refine == "accuracy" and again.rules_ == refined.rules_


def test_a_refinement_below_the_majority_answer_is_not_kept():
    # x >= 180: all positive; below, 40 %: taking those in raises F1 and lowers accuracy
    rng = np.random.default_rng(1)
    x = np.arange(200, dtype=float) / 10
    y = ((x >= 18) | (rng.random(200) < 0.4)).astype(int)
    X = pd.DataFrame({"x": x})
    params = dict(random_state=0, max_intervals=None, max_rules=1, alpha=0.5, chi2_threshold=20)
    plain = LibreClassifier(**params).fit(X, y)
    assert len(plain.rules_) == 1
    kept = LibreClassifier(refine="f1", **params).fit(X, y)
    assert kept.rules_ == plain.rules_  # F1 would take in rows below 50 % precision
    loose = LibreClassifier(refine="f1", abstain=False, **params).fit(X, y)
    assert loose.rules_ != plain.rules_
    assert loose.score(X, y) < max(np.mean(y), 1 - np.mean(y))


def test_refine_is_checked():
    X = pd.DataFrame({"x": np.arange(20.0)})
    y = (X["x"] > 9).astype(int)
    with pytest.raises(ParameterError, match="refine"):
        LibreClassifier(refine="precision").fit(X, y)


def test_the_search_refines_its_refit_and_does_not_tune_refine():
    X, y, _ = load_dataset("pima")
    grid = {"max_rules": [1, 3], "alpha": [0.5], "n_estimators": [5]}
    search = LibreSearchCV(grid, refine="accuracy", cv=3, random_state=0).fit(X, y)
    model = search.best_estimator_
    assert model.refine == "accuracy"
    plain = LibreClassifier(**{**model.get_params(), "refine": None}).fit(X, y)
    truth = binary_target(y, model.positive_class_)
    assert list(model.rules_.rules) == refine_rules(plain.rules_.rules, X, truth, 0.5)
    unrefined = LibreSearchCV(grid, refine=None, cv=3, random_state=0).fit(X, y)
    assert unrefined.best_index_ == search.best_index_  # the inner folds do not refine
    assert unrefined.best_estimator_.rules_ != search.best_estimator_.rules_
    # None leaves the estimator's setting; a setting given overrides it
    given = LibreSearchCV(grid, estimator=LibreClassifier(refine="f1"), cv=3, random_state=0)
    assert given.fit(X, y).best_estimator_.refine == "f1"
    given.set_params(refine="accuracy")
    assert given.fit(X, y).best_estimator_.refine == "accuracy"
    with pytest.raises(ParameterError, match="may not tune \\['refine'\\]"):
        LibreSearchCV({"refine": ["f1", None]}).fit(X, y)
