"""benchmarks/tuning_study.py: a replayed choice rule gives what LibreSearchCV gives.

The design study's figures rest on this: the study records every grid point's inner and outer
figures once, and a choice rule replayed on them must pick the point, and report the outer F1,
that ``LibreSearchCV`` with the same grid and rule gives when refitted on the outer training
fold.
"""

from __future__ import annotations

import importlib.util
import json
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest
from sklearn.metrics import f1_score
from sklearn.model_selection import StratifiedKFold

from libre_lib import LibreSearchCV
from libre_lib.datasets import load_dataset

BENCH = Path(__file__).resolve().parents[2] / "benchmarks"
GRID = [
    {
        "n_estimators": [5],
        "heuristic": ["H1"],
        "alpha": [0.5, 0.9],
        "conflict_tolerance": [0.0, 0.5],
        "max_intervals": [None],
        "max_rules": [1, 2, None],
    },
    {"n_estimators": [5], "heuristic": ["H2"], "alpha": [0.7], "max_rules": [1, None]},
]


@pytest.fixture(scope="module")
def study():
    with pytest.MonkeyPatch.context() as mp:
        mp.syspath_prepend(str(BENCH))
        spec = importlib.util.spec_from_file_location(
            "_bench_tuning_study", BENCH / "tuning_study.py"
        )
        module = importlib.util.module_from_spec(spec)
        mp.setitem(sys.modules, spec.name, module)
        spec.loader.exec_module(module)
        yield module


@pytest.fixture(scope="module")
def results(study, tmp_path_factory):
    out = tmp_path_factory.mktemp("study") / "study.json"
    study.run(["haberman"], GRID, out, n_jobs=1, folds=[0])
    return out


@pytest.mark.parametrize("tolerance", [(0.01, 1.0), 0.0])
def test_replay_equals_the_search(study, results, tolerance):
    entry = json.loads(results.read_text())["haberman"]
    assert entry["fold_ids"] == [0]
    replayed = study.replay(entry, lambda p: True, tolerance)

    X, y, info = load_dataset("haberman")
    positive = (y == info.positive_class).to_numpy()
    train, test = next(StratifiedKFold(5, shuffle=True, random_state=0).split(X, positive))
    score_tolerance, standard_errors = tolerance if isinstance(tolerance, tuple) else (tolerance, 0)
    search = LibreSearchCV(
        GRID,
        positive_class=info.positive_class,
        cv=StratifiedKFold(5, shuffle=True, random_state=0),
        score_tolerance=score_tolerance,
        standard_errors=standard_errors,
        random_state=0,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        search.fit(X.iloc[train], y.iloc[train])
    pred = search.predict(X.iloc[test]) == info.positive_class
    assert replayed["params"][0] == search.best_params_
    assert replayed["rules"][0] == len(search.rules_)
    assert np.isclose(replayed["f1"][0], f1_score(positive[test], pred, zero_division=0.0))


def test_bounds_are_above_every_choice_rule(study, results):
    entry = json.loads(results.read_text())["haberman"]
    rows = study.bounds_report([results]).splitlines()
    best = float(rows[2].split("|")[2].split("/")[0])
    capped = float(rows[2].split("|")[3])  # the best point with at most 1.6 rules
    for tolerance in study.CHOICE_RULES.values():
        r = study.replay_rule(entry, lambda p: True, study._tolerance_rule(tolerance))
        assert round(r["f1"][0], 3) <= best
        if r["rules"][0] <= 1:
            assert round(r["f1"][0], 3) <= capped
    table = study.choice_report([results]).splitlines()
    assert len(table) == 2 + len(study.CHOICE_RULES)
    assert table[2].startswith("| 1 SE (the search's) |")
    assert study.SEARCH_RULE == (0.0, 1.0)  # LibreSearchCV's defaults


def test_padding_adds_columns_without_signal(study):
    X = load_dataset("haberman")[0]
    wide = study.padded(X, 12, seed=0)
    assert wide.shape == (len(X), 12)
    assert list(wide.columns[: X.shape[1]]) == list(X.columns)
    assert wide.iloc[:, : X.shape[1]].equals(X)
    for i in range(12 - X.shape[1]):  # each a shuffle of one of the real columns
        pad = np.sort(wide[f"pad{i}"].to_numpy())
        assert any(np.array_equal(pad, np.sort(X[c].to_numpy())) for c in X.columns)
    assert study.padded(X, 12, seed=0).equals(wide)  # seeded
    assert study.padded(X, 2) is X  # already that wide


def test_the_wide_report_replays_the_grid_with_and_without_its_largest_ensemble(study, tmp_path):
    grid = {"n_estimators": [5, 20], "alpha": [0.5, 0.9], "max_rules": [1, None]}
    out = tmp_path / "wide.json"
    study.run(["haberman"], grid, out, n_jobs=1, folds=[0])
    entry = json.loads(out.read_text())["haberman"]
    rows = study.wide_report([out]).splitlines()
    search_rule = study._tolerance_rule(next(iter(study.CHOICE_RULES.values())))
    without = study.replay_rule(entry, lambda p: p["n_estimators"] < 20, search_rule)
    with_it = study.replay_rule(entry, lambda p: True, search_rule)
    assert rows[2].split("|")[2].strip() == f"{without['f1'][0]:.3f} / {without['rules'][0]:.1f}"
    assert rows[3].split("|")[2].strip() == f"{with_it['f1'][0]:.3f} / {with_it['rules'][0]:.1f}"
    picked = int(with_it["params"][0]["n_estimators"] == 20)
    assert rows[4].split("|")[2].strip() == str(picked)

    # each dataset is cut at its own widest ensemble (the search's grid grows with the columns)
    other = tmp_path / "other.json"
    study.run(["haberman"], {**grid, "n_estimators": [5, 50]}, other, n_jobs=1, folds=[0])
    other.write_text(json.dumps({"wider": json.loads(other.read_text())["haberman"]}))
    rows = study.wide_report([out, other]).splitlines()
    wider = json.loads(other.read_text())["wider"]
    cut = study.replay_rule(wider, lambda p: p["n_estimators"] < 50, search_rule)
    assert rows[2].split("|")[3].strip() == f"{cut['f1'][0]:.3f} / {cut['rules'][0]:.1f}"
    assert rows[2].split("|")[2].strip() == f"{without['f1'][0]:.3f} / {without['rules'][0]:.1f}"


def test_the_run_keeps_every_inner_split_score(study, results):
    fold = json.loads(results.read_text())["haberman"]["folds"][0]
    splits = np.asarray(fold["inner_splits"])
    assert splits.shape == (len(fold["inner_f1"]), 5)
    assert np.allclose(splits.mean(axis=1), fold["inner_f1"], atol=1e-5)
    assert np.allclose(splits.std(axis=1), fold["inner_std"], atol=1e-5)


def test_the_paired_rule_weighs_differences_fold_by_fold(study):
    # point 0 is best; point 1 (one rule) trails it by 0.02 in every fold: its scores spread as
    # much as the best's, so one unpaired standard error keeps it, but the paired differences
    # are constant and the paired rule refuses it; point 2 trails by 0.02 on average but
    # unevenly, so one paired standard error (0.023) keeps it.
    splits = np.array(
        [
            [0.90, 0.80, 0.95, 0.85, 0.75],
            [0.88, 0.78, 0.93, 0.83, 0.73],
            [0.95, 0.70, 0.95, 0.85, 0.70],
        ]
    )
    f1, std, rules = splits.mean(axis=1), splits.std(axis=1), np.array([3.0, 1.0, 2.0])
    unpaired = study._tolerance_rule((0.0, 1.0))
    assert unpaired(f1, rules, std, 5, splits) == 1
    assert study._paired_rule(0.0)(f1, rules, std, 5, splits) == 2
    assert study._paired_rule(0.03)(f1, rules, std, 5, splits) == 1  # the floor still applies
    with pytest.raises(SystemExit, match="per-split"):
        study._paired_rule(0.0)(f1, rules, std, 5, None)


def test_the_paired_report_replays_every_rule(study, results):
    entry = json.loads(results.read_text())["haberman"]
    table = study.paired_report([results]).splitlines()
    assert len(table) == 2 + len(study.PAIRED_RULES)
    for row, choose in zip(table[2:], study.PAIRED_RULES.values(), strict=True):
        r = study.replay_rule(entry, lambda p: True, choose)
        assert row.split("|")[2].strip() == f"{r['f1'][0]:.3f} / {r['rules'][0]:.1f}"


def test_the_stops_report_compares_the_default_early_stops_with_those_up_to_none(study, tmp_path):
    # inner figures: 21 and None beat the short stop by far more than a standard error, so
    # the rule keeps 21 on the whole grid and 5 once the grid ends at 8
    params = [json.dumps({"alpha": 0.5, "max_rules": k}) for k in (5, 21, None)]
    fold = {
        "inner_f1": [0.60, 0.80, 0.79],
        "inner_std": [0.01, 0.01, 0.01],
        "inner_rules": [5.0, 18.0, 30.0],
        "f1": [0.55, 0.75, 0.74],
        "rules": [5, 19, 31],
    }
    out = tmp_path / "stops.json"
    out.write_text(json.dumps({"toy": {"params": params, "folds": [fold], "inner_folds": 5}}))
    rows = study.stops_report([out]).splitlines()
    assert rows[2].split("|")[2].strip() == "0.750 / 19.0"
    assert rows[3].split("|")[2].strip() == "0.550 / 5.0"
    assert rows[4].split("|")[2].strip() == "1"
    assert "{1, 2, 3, 5, 8}" in rows[3] and "None}" in rows[2]


def test_the_stops_report_compares_a_candidate_set_of_early_stops(study, tmp_path):
    # the default grid's last stop beats the one before by far more than a standard error: the
    # default grid keeps the last, a candidate without it keeps the one before, and the one
    # fold picking the last is counted as outside the candidate
    *candidate, last = study.EARLY_STOP
    params = [json.dumps({"alpha": 0.5, "max_rules": k}) for k in (candidate[-1], last)]
    fold = {
        "inner_f1": [0.70, 0.80],
        "inner_std": [0.01, 0.01],
        "inner_rules": [float(candidate[-1]), float(last)],
        "f1": [0.66, 0.77],
        "rules": [candidate[-1], last],
    }
    out = tmp_path / "stops.json"
    out.write_text(json.dumps({"toy": {"params": params, "folds": [fold], "inner_folds": 5}}))
    rows = study.stops_report([out], candidate=candidate).splitlines()
    assert rows[3].split("|")[2].strip() == f"0.770 / {last:.1f}"
    assert rows[5].split("|")[2].strip() == f"0.660 / {candidate[-1]:.1f}"
    assert study.axis_values(candidate) in rows[5] and "candidate" in rows[5]
    assert rows[6].split("|")[2].strip() == "1"
    assert len(study.stops_report([out]).splitlines()) == 5  # no candidate: no extra rows
