"""The estimator's shipped defaults: the inner choice of ``max_rules`` and
``conflict_tolerance`` ("auto"), the majority-class guard (``abstain``) and the weak-rule
warning."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from libre_lib import LibreClassifier, LibreSearchCV, LibreWarning, ParameterError
from libre_lib.estimator import (
    AUTO_ALPHAS,
    AUTO_CHOSEN,
    AUTO_INTERVALS,
    AUTO_STOPS,
    AUTO_TOLERANCES,
    auto_refit_order,
)
from libre_lib.inputs import as_frame, binary_target
from libre_lib.rules import RuleStats
from libre_lib.selection import majority_prefix


def stats(*pairs):
    return [RuleStats(p, n, p, n) for p, n in pairs]


@pytest.mark.parametrize(
    ("pairs", "n_pos", "n_neg", "expected"),
    [
        ([(10, 0), (5, 1)], 20, 80, 2),  # every prefix helps
        ([(3, 5)], 20, 80, 0),  # the only rule is wrong more often than right: abstain
        ([(10, 2), (1, 6), (4, 0)], 20, 80, 3),  # a bad middle rule, still better overall
        ([(10, 2), (1, 6), (1, 9)], 20, 80, 2),  # the last rule makes it worse: drop it
        ([(5, 5)], 20, 80, 1),  # exactly as accurate as the majority: kept
        ([], 20, 80, 0),
        # positives are the majority (60 vs 40): a prefix must beat "positive everywhere"
        ([(55, 10)], 60, 40, 1),
        ([(20, 0)], 60, 40, 1),  # no prefix reaches it: abstaining cannot help, keep all
    ],
)
def test_majority_prefix(pairs, n_pos, n_neg, expected):
    assert majority_prefix(stats(*pairs), n_pos, n_neg) == expected


def noisy_data(seed=0, n=600):
    """A weak signal in x0 and noise elsewhere: the paper's cover keeps rules that are worse
    than answering "no" everywhere."""
    rng = np.random.RandomState(seed)
    X = pd.DataFrame(rng.rand(n, 4), columns=["x0", "x1", "x2", "x3"])
    y = (rng.rand(n) < 0.15 + 0.25 * (X["x0"] > 0.7)).astype(int)
    return X, y


def training_accuracy(model, X, y) -> float:
    return float(np.mean(model.predict(X) == y))


def test_the_guard_keeps_the_model_no_worse_than_the_majority_on_training_data():
    X, y = noisy_data()
    majority = max(y.mean(), 1 - y.mean())
    paper = dict(max_rules=None, conflict_tolerance=0.0, random_state=0, alpha=0.7, max_intervals=3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", LibreWarning)
        unguarded = LibreClassifier(abstain=False, **paper).fit(X, y)
    assert training_accuracy(unguarded, X, y) < majority  # the data shows the problem
    with pytest.warns(LibreWarning, match=r"Kept \d+ of the \d+ rules"):
        guarded = LibreClassifier(**paper).fit(X, y)
    assert training_accuracy(guarded, X, y) >= majority
    assert guarded.rules_.rules == unguarded.rules_.rules[: len(guarded.rules_)]


def test_auto_chooses_by_inner_cross_validation_and_records_it(haberman):
    X, y, info = haberman
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", LibreWarning)
        model = LibreClassifier(positive_class=info.positive_class, random_state=0).fit(X, y)
    scores = model.auto_scores_
    # the search's default early stops (21 dropped in the tenth study round, 13 in the
    # twenty-first)
    assert AUTO_STOPS == (1, 2, 3, 5, 8) and model.max_rules_ in AUTO_STOPS
    assert scores["params"] == [
        {"max_intervals": m, "conflict_tolerance": t, "alpha": a, "max_rules": s}
        for m in AUTO_INTERVALS
        for t in AUTO_TOLERANCES
        for a in AUTO_ALPHAS
        for s in AUTO_STOPS
    ]
    assert scores["n_splits"] == 5
    best = int(np.argmax(scores["mean_f1"]))
    chosen = scores["params"].index({k: getattr(model, k + "_") for k in AUTO_CHOSEN})
    # within max(0.01, 1 standard error) of the best, with the fewest rules
    tolerance = max(0.01, scores["std_f1"][best] / np.sqrt(5))
    within = [m >= scores["mean_f1"][best] - tolerance - 1e-9 for m in scores["mean_f1"]]
    assert within[chosen]
    assert scores["mean_rules"][chosen] == min(
        r for r, ok in zip(scores["mean_rules"], within, strict=True) if ok
    )
    # the final fit is the plain fit with the chosen values
    plain = LibreClassifier(
        positive_class=info.positive_class,
        random_state=0,
        max_rules=model.max_rules_,
        conflict_tolerance=model.conflict_tolerance_,
        alpha=model.alpha_,
        max_intervals=model.max_intervals_,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", LibreWarning)
        plain.fit(X, y)
    assert plain.rules_ == model.rules_
    assert plain.auto_scores_ is None


def test_auto_is_deterministic_and_survives_json(haberman):
    X, y, info = haberman
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", LibreWarning)
        a = LibreClassifier(positive_class=info.positive_class, random_state=3).fit(X, y)
        b = LibreClassifier(positive_class=info.positive_class, random_state=3).fit(X, y)
    assert a.rules_ == b.rules_ and a.auto_scores_ == b.auto_scores_
    back = LibreClassifier.from_json(a.to_json())
    assert {k: getattr(back, k + "_") for k in AUTO_CHOSEN} == {
        k: getattr(a, k + "_") for k in AUTO_CHOSEN
    }
    assert back.get_params()["max_rules"] == "auto"


def test_auto_with_h2_tries_no_tolerance_and_tiny_data_falls_back():
    X, y = noisy_data(n=300)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", LibreWarning)
        h2 = LibreClassifier(heuristic="H2", random_state=0).fit(X, y)
        assert {p["conflict_tolerance"] for p in h2.auto_scores_["params"]} == {0.0}
        tiny = LibreClassifier(random_state=0).fit(X.iloc[:12], [0] * 8 + [1] * 4)
    assert tiny.auto_scores_ is None  # 4 positives cannot fill 5 folds twice over
    assert (tiny.max_rules_, tiny.conflict_tolerance_) == (None, 0.0)


def test_weak_rules_draw_a_warning():
    """The advice said "a higher alpha", which lets weaker rules in (the cover takes a rule above
    precision 1 - alpha), and offered max_rules='auto' to a fit that used it."""
    X, y = noisy_data()
    with pytest.warns(
        LibreWarning, match=r"training precision below 0\.\d\d \(1.2 x the base rate"
    ) as said:
        LibreClassifier(
            max_rules=None, conflict_tolerance=0.0, abstain=False, alpha=0.9, random_state=0
        ).fit(X, y)
    (text,) = [str(w.message) for w in said if "training precision below" in str(w.message)]
    assert "Consider a lower alpha (" in text and "above 1 - alpha: 0.10 here)" in text
    # its weak rule 1 stays under any cap: a smaller max_rules was offered all the same
    assert text.startswith("rule 1 (") and text.endswith("above 1 - alpha: 0.10 here).")
    X2, y2 = noisy_data(seed=2)  # rule 1 above the bar, rule 2 below: the cap before it
    with pytest.warns(LibreWarning, match="training precision below") as said:
        LibreClassifier(
            max_rules=None, conflict_tolerance=0.0, abstain=False, alpha=0.9, random_state=0
        ).fit(X2, y2)
    (text,) = [str(w.message) for w in said if "training precision below" in str(w.message)]
    assert text.startswith("rule 2 (")
    assert text.endswith(", max_rules=1 (the rules before rule 2) or max_rules='auto'.")
    with warnings.catch_warnings(record=True) as said:  # alpha "f1" has no 1 - alpha to state
        warnings.simplefilter("always")
        LibreClassifier(
            max_rules=None, conflict_tolerance=0.0, abstain=False, alpha="f1", random_state=0
        ).fit(X, y)
    texts = [str(w.message) for w in said if "Consider a lower alpha" in str(w.message)]
    assert all("above 1 - alpha)" in t for t in texts)


def test_a_precise_rule_of_a_majority_class_draws_no_weak_rule_warning():
    X = pd.DataFrame({"a": np.repeat(np.arange(50.0), 2)})  # (distinct values: not row ids)
    y = (X["a"] >= 4).astype(int)  # positives are 92 % of the rows; "a >= 4" is exact
    with warnings.catch_warnings():
        warnings.simplefilter("error", LibreWarning)
        model = LibreClassifier(max_rules=1, conflict_tolerance=0.0, random_state=0).fit(X, y)
    assert model.rules_.stats[0].precision == 1.0


def test_search_resolves_auto_and_refuses_it_in_a_grid(haberman):
    X, y, _ = haberman
    with pytest.raises(ParameterError, match=r"param_grid sets \['max_rules'\] to 'auto'"):
        LibreSearchCV({"max_rules": ["auto", 1]}).fit(X, y)
    search = LibreSearchCV({"alpha": [0.7]}, cv=3, random_state=0).fit(X, y)
    assert search.best_estimator_.max_rules is None
    assert search.best_estimator_.conflict_tolerance == 0.0


def test_a_column_warning_is_given_once_not_once_per_inner_fold():
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"x": rng.normal(size=300), "id": [f"row-{i}" for i in range(300)]})
    y = (X["x"] > 0.3).astype(int)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        LibreClassifier(random_state=0).fit(X, y)
    about_id = [w for w in caught if "'id'" in str(w.message)]
    assert len(about_id) == 1, [str(w.message) for w in about_id]


def test_alpha_and_max_intervals_can_be_auto_too(haberman):
    X, y, info = haberman
    params = dict(positive_class=info.positive_class, random_state=0, n_estimators=10)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", LibreWarning)
        model = LibreClassifier(alpha="auto", max_intervals="auto", **params).fit(X, y)
    scores = model.auto_scores_
    assert len(scores["params"]) == 2 * 2 * 3 * len(AUTO_STOPS)
    assert {p["alpha"] for p in scores["params"]} == {0.5, 0.7, 0.9}
    assert {p["max_intervals"] for p in scores["params"]} == {3, None}
    used = {k: getattr(model, k + "_") for k in AUTO_CHOSEN}
    assert used in scores["params"]
    # the final fit is the plain fit with the chosen values
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", LibreWarning)
        plain = LibreClassifier(**{**params, **used}).fit(X, y)
    assert plain.rules_ == model.rules_
    assert model.discretization_ == plain.discretization_
    back = LibreClassifier.from_json(model.to_json())
    assert {k: getattr(back, k + "_") for k in AUTO_CHOSEN} == used


def test_the_f1_gain_fits_and_survives_json(haberman):
    X, y, info = haberman
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", LibreWarning)
        model = LibreClassifier(alpha="f1", positive_class=info.positive_class, random_state=0)
        model.fit(X, y)
    assert model.alpha_ == "f1"
    back = LibreClassifier.from_json(model.to_json())
    assert back.alpha_ == "f1" and back.rules_ == model.rules_
    tp = sum(s.new_positives for s in model.rules_.stats)
    fp = sum(s.new_negatives for s in model.rules_.stats)
    assert tp >= fp  # never less accurate than the negative majority on its training data


def test_auto_bins_stay_capped_on_many_rows(haberman, monkeypatch):
    """Uncapped bins stop compressing the records of large data: "auto" tries them only for a
    fit on at most AUTO_UNCAPPED_ROWS rows (the fit's rows, not those of a sample)."""
    from libre_lib import estimator

    X, y, info = haberman
    model = LibreClassifier(positive_class=info.positive_class, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", LibreWarning)
        model.fit(X, y)
    assert {p["max_intervals"] for p in model.auto_scores_["params"]} == {3, None}
    monkeypatch.setattr(estimator, "AUTO_UNCAPPED_ROWS", len(X) - 1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", LibreWarning)
        model.fit(X, y)
    assert {p["max_intervals"] for p in model.auto_scores_["params"]} == {3}
    assert model.max_intervals_ == 3
    frame = as_frame(X.iloc[:100])
    target = binary_target(y.iloc[:100], info.positive_class, n_rows=100)
    chosen, scores = model.choose_auto(frame, target, n_rows=len(X))
    assert chosen["max_intervals"] == 3
    assert {p["max_intervals"] for p in scores["params"]} == {3}


def test_auto_uncapped_bins_keep_significant_cuts_on_many_rows(haberman, monkeypatch, caplog):
    """The thirty-sixth round: on more than AUTO_SIGNIFICANT_ROWS rows the uncapped bins of
    "auto" keep only significant cut points (uncapped ChiMerge on 48,000 noisy rows made the
    default search take 636 s); the capped ones, and explicit parameters, stay as they are."""
    import json
    import logging

    from libre_lib import estimator
    from libre_lib.ops.report import _used_parameters, thinned_by_rows

    X, y, info = haberman

    def fitted(**params):
        model = LibreClassifier(positive_class=info.positive_class, random_state=0, **params)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", LibreWarning)
            return model.fit(X, y)

    plain, floored = fitted(), fitted(significant_cuts=True)
    assert not plain.significant_cuts_ and "significant_cuts" not in json.loads(plain.to_json())
    monkeypatch.setattr(estimator, "AUTO_SIGNIFICANT_ROWS", len(X) - 1)
    with caplog.at_level(logging.INFO, logger="libre_lib.estimator"):
        model = fitted()
    # the inner folds score the uncapped combinations on thinned bins, the capped ones as before
    for i, params in enumerate(model.auto_scores_["params"]):
        source = floored if params["max_intervals"] is None else plain
        assert model.auto_scores_["mean_f1"][i] == source.auto_scores_["mean_f1"][i]
    assert model.significant_cuts_ == (model.max_intervals_ is None)
    target = binary_target(y, info.positive_class, n_rows=len(X))
    bins = model.discretize(as_frame(X), target, None)
    assert bins.to_dict() == floored.discretize(as_frame(X), target, None).to_dict()
    unthinned = LibreClassifier(positive_class=info.positive_class, max_intervals=None)
    assert bins.to_dict() != unthinned.discretize(as_frame(X), target, None).to_dict()
    assert model.discretize(as_frame(X), target, 3).to_dict() == (
        plain.discretize(as_frame(X), target, 3).to_dict()
    )
    # a fold of the rows is thinned when the fit it is for has more rows than the rule's
    assert model.thinned(None, len(X)) and not model.thinned(None, len(X) - 1)
    assert not model.thinned(3, len(X))
    assert not LibreClassifier(max_intervals=None).thinned(None, len(X))  # the user's choice
    # a choice of the uncapped bins: the model, its JSON, its log line and its report say so
    monkeypatch.setattr(estimator, "AUTO_INTERVALS", (None,))
    with caplog.at_level(logging.INFO, logger="libre_lib.estimator"):
        uncapped = fitted()
    assert uncapped.max_intervals_ is None and uncapped.significant_cuts_ is True
    assert "uncapped bins with significant cuts only (more than 305 rows)" in caplog.text
    saved = json.loads(uncapped.to_json())
    assert saved["significant_cuts"] is True and saved["params"]["significant_cuts"] is False
    assert LibreClassifier.from_json(uncapped.to_json()).significant_cuts_ is True
    shown = _used_parameters(uncapped, thinned_by_rows(uncapped))["significant_cuts"]
    assert shown == "true: on more than 10,000 training rows (not set, not tuned)"
    assert _used_parameters(plain)["significant_cuts"] is False
    forced = plain.__class__.from_json(plain.to_json())
    forced.significant_cuts_ = True
    assert LibreClassifier.from_json(forced.to_json()).significant_cuts_ is True


def test_verbose_shows_the_auto_choice_as_it_goes_and_quiet_shows_nothing(haberman, capsys):
    from libre_lib import estimator as estimator_module

    X, y, info = haberman
    quiet = LibreClassifier(positive_class=info.positive_class, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", LibreWarning)
        quiet.fit(X, y)
        assert capsys.readouterr().err == ""
        handlers = list(estimator_module.logger.handlers)
        level = estimator_module.logger.level
        loud = LibreClassifier(positive_class=info.positive_class, random_state=0, verbose=1)
        loud.fit(X, y)
    assert estimator_module.logger.handlers == handlers  # the handler lives only during fit
    assert estimator_module.logger.level == level
    lines = capsys.readouterr().err.splitlines()
    n = len(quiet.auto_scores_["params"])
    assert [line.split(";")[0] for line in lines[:5]] == [
        f"auto: inner fold {k}/5 done ({n} combinations)" for k in range(1, 6)
    ]
    assert lines[4].endswith("about 0 s left")
    assert lines[5].startswith(f"auto: max_intervals={loud.max_intervals_}, ")
    assert lines[6].startswith(f"discretized {len(loud.discretization_.features)} columns into ")
    # haberman's 3 columns hold 7 feature subsets: the 43 other draws repeat one (the
    # pipeline's progress counts the 50 drawn, the estimator the learners fitted)
    n_learners = len(loud.feature_subsets_)
    assert lines[7].startswith(
        f"{n_learners} learners ({50 - n_learners} of the 50 drawn repeated a feature subset) gave "
    )
    assert len(lines) == 8
    assert loud.rules_ == quiet.rules_ and loud.auto_scores_ == quiet.auto_scores_
    with pytest.raises(ParameterError, match="'verbose' parameter of LibreClassifier"):
        LibreClassifier(verbose=-1).fit(X, y)
    with pytest.raises(ParameterError, match=r"param_grid may not tune \['verbose'\]"):
        LibreSearchCV({"verbose": [0, 1]}).fit(X, y)


def churn_like(seed=8, strength=0.8, n=3000):
    """Training rows (80 %) of a synthetic churn table on which the fit of the "auto" choice
    keeps no rule although the choice kept rules in most inner folds (the majority guard)."""
    from sklearn.model_selection import train_test_split

    rng = np.random.default_rng(seed)
    frame = pd.DataFrame(
        {
            "plan": rng.choice(["basic", "pro", "enterprise"], n),
            "fee": rng.gamma(3, 20, n),
            "calls": rng.poisson(2, n),
            "tenure": rng.integers(0, 72, n),
            "country": rng.choice([f"c{i}" for i in range(30)], n),
        }
    )
    logit = -2 + strength * (0.6 * frame.calls - 0.04 * frame.tenure + (frame.plan == "basic"))
    y = pd.Series(np.where(rng.random(n) < 1 / (1 + np.exp(-logit)), "yes", "no"))
    X, _, y, _ = train_test_split(frame, y, test_size=0.2, stratify=y, random_state=seed)
    return X, y


def test_a_fit_that_keeps_no_rule_falls_back_as_the_search_does():
    """The "auto" refit check (rounds 24-25): the choice kept rules in most inner folds
    but its fit on all the rows keeps none; the next combinations in the choice's order are
    fitted until one keeps a rule, and only the kept fit's warnings are given."""
    X, y = churn_like()
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")
        model = LibreClassifier(positive_class="yes", random_state=8).fit(X, y)
    scores, fallbacks = model.auto_scores_, model.auto_fallbacks_
    order = auto_refit_order(scores)
    assert fallbacks >= 1 and len(model.rules_) >= 1
    assert scores["ruled_folds"][order[0]] > scores["n_splits"] / 2  # in most inner folds
    used = {k: getattr(model, k + "_") for k in AUTO_CHOSEN}
    assert used == {**scores["params"][order[fallbacks]], "alpha": used["alpha"]}

    def plain(combo):
        fixed = {**combo, "conflict_tolerance": float(combo["conflict_tolerance"])}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", LibreWarning)
            return LibreClassifier(positive_class="yes", random_state=8, **fixed).fit(X, y)

    assert len(plain(scores["params"][order[0]]).rules_) == 0  # the choice's own fit
    assert all(len(plain(scores["params"][i]).rules_) == 0 for i in order[1:fallbacks])
    assert plain(scores["params"][order[fallbacks]]).rules_ == model.rules_
    messages = [str(w.message) for w in said]
    assert not any(m.startswith(("Kept 0 of", "No rule was learned")) for m in messages)
    back = LibreClassifier.from_json(model.to_json())
    assert back.auto_fallbacks_ == fallbacks and back.rules_ == model.rules_


def test_the_refit_order_starts_with_the_choice_and_goes_beyond_the_tolerance():
    scores = {
        "params": [{"max_rules": k} for k in range(5)],
        "mean_f1": [0.60, 0.595, 0.50, 0.55, 0.40],
        "std_f1": [0.0] * 5,
        "mean_rules": [3.0, 2.0, 1.0, 5.0, 1.0],
        "ruled_folds": [5, 2, 3, 5, 1],
        "n_splits": 5,
    }
    # the choice (fewest rules within 0.01 of the best) left three inner folds of five empty:
    # no fallback (its empty fit agrees with most of its inner folds)
    assert list(auto_refit_order(scores)) == [1]
    # it kept rules in three folds of five, most of them: the other accepted one, then those
    # outside the tolerance that kept rules in most folds, best mean F1 first (not 4: one fold)
    scores["ruled_folds"][1] = 3
    assert list(auto_refit_order(scores)) == [1, 0, 3, 2]
    scores["ruled_folds"][2] = 2  # two folds of five are not most of them
    assert list(auto_refit_order(scores)) == [1, 0, 3]
    assert list(auto_refit_order(None)) == []
    old = {k: v for k, v in scores.items() if k != "ruled_folds"}  # recorded before the count
    assert list(auto_refit_order(old)) == []
