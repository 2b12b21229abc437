"""The paper's comparison (Mita et al. 2020, tables 2-3 and supplementary tables) on the bundled
datasets: stratified 5-fold CV with the same folds for every method; F1 of the positive class,
number of rules and average atoms per rule; tuning by inner CV on the training folds only.

    python benchmarks/paper_table.py --quick                      # a few minutes
    python benchmarks/paper_table.py --doc docs/benchmarks.md     # full run, writes "Quality"

Methods: LIBRE tuned (LibreSearchCV with its default grid), LIBRE 3 (the same search with
max_rules=3), LIBRE with defaults, DecisionTree and RandomForest (max_depth tuned), RIPPER
(wittgenstein, k tuned), and the imodels rule models SkopeRules, RuleFit and BayesianRuleSet.
LIBRE gets the raw columns (strings, NaN); the peers get imputation + one-hot encoding fitted
on the training fold (BayesianRuleSet, which needs binary inputs, also gets quartile bins of the
numeric columns). Every peer fit runs in a child process under a time budget; a fit that
exceeds it is reported as "did not finish" (DNF) for that dataset.

Counting conventions (the paper's, section 4): a condition on one feature - a range, or a set of
categories, including several one-hot columns of the same original feature - is one atom.
* LIBRE: rules of the rule set; atoms = conditions per rule.
* DecisionTree: one rule per leaf predicting the positive class (root-to-leaf path); atoms =
  distinct original features on the path.
* RIPPER: rules of the positive-class rule set; atoms = distinct original features per rule.
* SkopeRules: rules kept for its weighted vote; BayesianRuleSet: rules of the set.
* RuleFit: terms with a non-zero coefficient (a linear term counts as a 1-atom rule).
* RandomForest: a black box - no rule count.
"""

from __future__ import annotations

import argparse
import ast
import json
import logging
import multiprocessing as mp
import os
import platform
import re
import shlex
import subprocess
import sys
import time
import traceback
import warnings
from collections import Counter
from dataclasses import dataclass, field, replace
from importlib import metadata
from pathlib import Path

import numpy as np
import pandas as pd
from _docs import axis_values
from _machine import cpu_model, ram_gib
from protocol import CONFIRMATION, DESIGN, half_of
from sklearn.base import BaseEstimator, ClassifierMixin, TransformerMixin
from sklearn.ensemble import RandomForestClassifier
from sklearn.metrics import f1_score
from sklearn.model_selection import GridSearchCV, ParameterGrid, StratifiedKFold
from sklearn.pipeline import Pipeline
from sklearn.tree import DecisionTreeClassifier

from libre_lib import LibreClassifier, LibreSearchCV
from libre_lib.datasets import dataset_names, load_dataset, manifest
from libre_lib.ops.files import atomic_write_text
from libre_lib.search import (
    CONFLICT_TOLERANCES,
    DEFAULT_GRID,
    EARLY_STOP,
    LARGE_DATA_GRID,
    LARGE_DATA_POSITIVES,
    SELECTION_FILTERS,
    caps_bins,
    checked_order,
    choice_order,
    default_grid,
    refit_in_choice_order,
    resolve_tolerance,
    thins_cuts,
    usable_columns,
)

logger = logging.getLogger("paper_table")

# Published numbers: LIBRE and LIBRE 3 columns of the F1, #rules and #atoms tables (main paper
# and supplementary material). (mean, std); None where the paper has no such dataset.
PAPER = {
    "adult": {"f1": (0.70, 0.01), "rules": (14.0, 2.1), "atoms": (7.8, 1.0),
              "f1_3": (0.62, 0.01), "rules_3": (3.0, 0.0), "atoms_3": (6.5, 0.7)},
    "australian": {"f1": (0.84, 0.03), "rules": (2.4, 1.4), "atoms": (4.4, 1.8),
                   "f1_3": (0.84, 0.03), "rules_3": (2.2, 0.7), "atoms_3": (4.4, 1.3)},
    "bank": {"f1": (0.55, 0.01), "rules": (15.0, 1.1), "atoms": (4.7, 0.5),
             "f1_3": (0.44, 0.01), "rules_3": (2.0, 0.6), "atoms_3": (2.0, 0.1)},
    "haberman": {"f1": (0.41, 0.04), "rules": (1.6, 0.8), "atoms": (2.1, 0.3),
                 "f1_3": (0.41, 0.04), "rules_3": (1.6, 0.8), "atoms_3": (2.1, 0.3)},
    "liver": {"f1": (0.60, 0.07), "rules": (3.4, 1.9), "atoms": (2.5, 1.0),
              "f1_3": (0.63, 0.06), "rules_3": (2.8, 0.4), "atoms_3": (1.3, 0.4)},
    "pima": {"f1": (0.64, 0.05), "rules": (1.6, 1.0), "atoms": (2.5, 0.7),
             "f1_3": (0.64, 0.05), "rules_3": (1.6, 1.0), "atoms_3": (2.5, 0.7)},
    "tictactoe": {"f1": (1.00, 0.00), "rules": (9.0, 1.1), "atoms": (3.8, 0.8),
                  "f1_3": (0.68, 0.04), "rules_3": (3.0, 0.0), "atoms_3": (3.0, 0.0)},
    "transfusion": {"f1": (0.49, 0.12), "rules": (1.2, 0.4), "atoms": (2.8, 0.7),
                    "f1_3": (0.49, 0.12), "rules_3": (1.2, 0.4), "atoms_3": (2.8, 0.7)},
}  # fmt: skip

QUICK_DATASETS = ["haberman", "liver", "transfusion"]
LARGE = 20_000  # rows; such datasets may get a smaller inner CV (--inner-cv-large)
QUICK_GRID = {"n_estimators": [20], "alpha": [0.5, 0.7, 0.9], "chi2_threshold": [6.0, 4.0]}
DEPTHS = [5, 10, 20, None]
RIPPER_K = [1, 2, 3, 4, 5]
RUNS = "_runs"  # key of the run log in the results file
SETTINGS = "_settings"  # key of the settings every cached result was obtained with

LIBRE_METHODS = ["LIBRE", "LIBRE 3", "LIBRE default"]
PEER_METHODS = ["DT", "RF", "RIPPER", "Skope", "Skope any", "RuleFit", "BRS"]
ALL_METHODS = LIBRE_METHODS + PEER_METHODS


# -- preprocessing for the peers --------------------------------------------------------------


class Prep(TransformerMixin, BaseEstimator):
    """Median / most-frequent imputation and one-hot encoding, fitted on the training rows.

    Output columns: numeric columns under their own name, then ``<col>_is_<k>`` for the k-th
    training category of each categorical column (unseen categories: all zeros). With
    ``numeric_bins`` the numeric columns are replaced by one-hot quantile bins
    ``<col>_bin_<k>`` (for models that need binary inputs). ``origin_`` maps every output
    column to its original feature (to count atoms).
    """

    def __init__(self, categorical=(), numeric_bins=None):
        self.categorical = categorical
        self.numeric_bins = numeric_bins

    def fit(self, X, y=None):
        cats = [c for c in X.columns if c in set(self.categorical)]
        nums = [c for c in X.columns if c not in set(self.categorical)]
        self.numeric_ = nums
        self.medians_ = {c: float(pd.to_numeric(X[c]).median()) for c in nums}
        self.categories_ = {}
        for c in cats:
            values = X[c].dropna().astype(str)
            self.categories_[c] = (
                sorted(values.unique()),
                values.mode().iloc[0] if len(values) else "",
            )
        self.cuts_ = {}
        if self.numeric_bins:
            quantiles = np.linspace(0, 1, self.numeric_bins + 1)[1:-1]
            for c in nums:
                values = pd.to_numeric(X[c]).fillna(self.medians_[c]).to_numpy(float)
                self.cuts_[c] = np.unique(np.quantile(values, quantiles))
        self.origin_ = {}
        for c in nums:
            if self.numeric_bins:
                for k in range(len(self.cuts_[c]) + 1):
                    self.origin_[f"{c}_bin_{k}"] = c
            else:
                self.origin_[c] = c
        for c, (levels, _) in self.categories_.items():
            for k in range(len(levels)):
                self.origin_[f"{c}_is_{k}"] = c
        return self

    def transform(self, X):
        parts = {}
        for c in self.numeric_:
            values = pd.to_numeric(X[c]).fillna(self.medians_[c]).to_numpy(float)
            if self.numeric_bins:
                code = np.searchsorted(self.cuts_[c], values, side="right")
                for k in range(len(self.cuts_[c]) + 1):
                    parts[f"{c}_bin_{k}"] = (code == k).astype(float)
            else:
                parts[c] = values
        for c, (levels, mode) in self.categories_.items():
            values = X[c].astype(object).where(X[c].notna(), mode).astype(str).to_numpy()
            for k, level in enumerate(levels):
                parts[f"{c}_is_{k}"] = (values == level).astype(float)
        return pd.DataFrame(parts, index=X.index)


class Ripper(ClassifierMixin, BaseEstimator):
    """wittgenstein's RIPPER behind the scikit-learn API (it has no __sklearn_tags__)."""

    def __init__(self, k=2, random_state=None):
        self.k = k
        self.random_state = random_state

    def fit(self, X, y):
        import wittgenstein as lw

        self.model_ = lw.RIPPER(k=self.k, random_state=self.random_state)
        self.model_.fit(pd.DataFrame(X), np.asarray(y).astype(int), pos_class=1)
        self.classes_ = np.array([0, 1])
        return self

    def predict(self, X):
        return np.asarray(self.model_.predict(pd.DataFrame(X))).astype(int)


# -- rule counting -----------------------------------------------------------------------------


def tree_rules(tree, origin: list[str]) -> list[int]:
    """Atoms (distinct original features) of each root-to-leaf path ending in a positive
    leaf of a fitted sklearn tree."""
    t = tree.tree_
    out = []
    stack = [(0, frozenset())]
    while stack:
        node, feats = stack.pop()
        left, right = t.children_left[node], t.children_right[node]
        if left == right:  # leaf
            if np.argmax(t.value[node][0]) == 1:
                out.append(len(feats))
            continue
        feats = feats | {origin[t.feature[node]]}
        stack.append((left, feats))
        stack.append((right, feats))
    return out


def imodels_rule_features(rule) -> set[str]:
    """Features named in an imodels Rule (or its string)."""
    if hasattr(rule, "agg_dict"):
        return {feature for feature, _ in rule.agg_dict}
    text = rule if isinstance(rule, str) else str(rule)
    return {term.strip().split(" ")[0] for term in text.split(" and ")}


def count(atoms: list[int]) -> tuple[int, float]:
    return len(atoms), float(np.mean(atoms)) if atoms else 0.0


# -- one fit of one method on one outer fold ---------------------------------------------------


@dataclass
class Config:
    grid: dict | None
    inner_cv: int
    seed: int
    n_jobs: int
    inner_cv_large: int | None = None
    ripper_k: list = field(default_factory=lambda: list(RIPPER_K))
    libre_params: dict = field(default_factory=dict)  # fixed LibreClassifier params (studies)


def run_method(method, X_train, y_train, X_test, info, cfg: Config) -> dict:
    """Fit ``method`` on the training fold (tuning by inner CV there), predict the test fold."""
    positive = info.positive_class
    inner = StratifiedKFold(cfg.inner_cv, shuffle=True, random_state=cfg.seed)
    started = time.perf_counter()
    params = None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if method == "LIBRE default":
            model = LibreClassifier(
                positive_class=positive, random_state=cfg.seed, **cfg.libre_params
            )
            model.fit(X_train, y_train)
            fit_s = time.perf_counter() - started
            pred = model.predict(X_test) == positive
            return _result(pred, len(model.rules_), model.rules_.n_atoms, fit_s, None)

        y01 = (np.asarray(y_train) == positive).astype(int)
        cats = list(info.categorical_columns)
        prep = Prep(categorical=cats, numeric_bins=4 if method == "BRS" else None)
        if method in ("DT", "RF"):
            if method == "DT":
                clf = DecisionTreeClassifier(random_state=cfg.seed)
            else:
                clf = RandomForestClassifier(
                    n_estimators=100, random_state=cfg.seed, n_jobs=cfg.n_jobs
                )
            search = GridSearchCV(
                Pipeline([("prep", prep), ("clf", clf)]),
                {"clf__max_depth": DEPTHS},
                cv=inner,
                scoring="f1",
            )
        elif method == "RIPPER":
            search = GridSearchCV(
                Pipeline([("prep", prep), ("clf", Ripper(random_state=cfg.seed))]),
                {"clf__k": cfg.ripper_k},
                cv=inner,
                scoring="f1",
            )
        else:
            search = Pipeline([("prep", prep), ("clf", _imodels(method, cfg.seed))])
        search.fit(X_train, y01)
        fit_s = time.perf_counter() - started
        pred = search.predict(X_test).astype(int) == 1
        if isinstance(search, GridSearchCV):
            params = {k.removeprefix("clf__"): v for k, v in search.best_params_.items()}
            pipe = search.best_estimator_
        else:
            pipe = search
        fitted_prep, model = pipe.named_steps["prep"], pipe.named_steps["clf"]
        if method == "Skope any":  # positive when any of its rules fires (a plain rule set)
            Xt = fitted_prep.transform(X_test).to_numpy(dtype=float)
            pred = model._predict_top_rules(Xt, len(model.rules_)) == 1
        origin = fitted_prep.origin_
        names = list(origin)
        if method == "RF":
            return _result(pred, None, None, fit_s, params)
        if method == "DT":
            atoms = tree_rules(model, [origin[n] for n in names])
        elif method == "RIPPER":
            atoms = [len({origin[c.feature] for c in r.conds}) for r in model.model_.ruleset_.rules]
        elif method in ("Skope", "Skope any"):
            atoms = [len({origin[f] for f in imodels_rule_features(r)}) for r in model.rules_]
        elif method == "BRS":
            atoms = [len({origin[i.removesuffix("_neg")] for i in r}) for r in model.rules_]
        elif method == "RuleFit":
            n_linear = len(model.coef) - len(model.rules_)
            atoms = [1 for c in model.coef[:n_linear] if c != 0]
            atoms += [
                len({origin[f] for f in imodels_rule_features(r)})
                for r, c in zip(model.rules_, model.coef[n_linear:], strict=True)
                if c != 0
            ]
        n_rules, mean_atoms = count(atoms)
        return _result(pred, n_rules, mean_atoms, fit_s, params)


def run_libre_pair(X_train, y_train, X_test, info, cfg: Config) -> dict:
    """LIBRE tuned and LIBRE 3 from one inner CV.

    LIBRE is ``LibreSearchCV()`` (its default grid: the paper's grid times the early stop
    ``max_rules``), LIBRE 3 is ``LibreSearchCV(max_rules=3)`` (the same grid with the cap fixed
    at 3). One search over the grid with ``max_rules`` ∈ early stops ∪ {3} scores every
    combination exactly as the two separate searches would - same inner folds, same seed -
    while the discretizations, learners and set covers are computed once. Each method then
    applies LibreSearchCV's default choice rule (:func:`resolve_tolerance`,
    :func:`choose_candidate`) to its own candidates and refits the choice on the training fold.
    Each method's fit time is the shared search plus its own refit.
    """
    positive = info.positive_class
    if cfg.grid is None:
        n_positives = int((np.asarray(y_train) == positive).sum())
        n_rows = len(X_train)  # the row rules of LibreSearchCV's default grid
        grid = default_grid(
            n_positives,
            caps_bins(n_rows),
            n_columns=usable_columns(X_train),
            significant_cuts=thins_cuts(n_rows),
        )
    else:
        grid = [{**cfg.grid, "max_rules": cfg.grid.get("max_rules", EARLY_STOP)}]
    stops = list(grid[0]["max_rules"])
    axes = {k: v if isinstance(v, list) else [v] for k, v in cfg.libre_params.items()}
    grid = [{**part, **axes} for part in grid]
    choice = LibreSearchCV()  # its choice rule: score_tolerance, standard_errors
    started = time.perf_counter()
    search = LibreSearchCV(
        [{**part, "max_rules": stops + ([] if 3 in stops else [3])} for part in grid],
        positive_class=positive,
        cv=StratifiedKFold(cfg.inner_cv, shuffle=True, random_state=cfg.seed),
        refit=False,
        n_jobs=cfg.n_jobs,
        random_state=cfg.seed,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        search.fit(X_train, y_train)
    shared = time.perf_counter() - started
    res = search.cv_results_
    mean, rules, std = res["mean_test_score"], res["mean_n_rules"], res["std_test_score"]
    out = {}
    for method, caps in (("LIBRE", stops), ("LIBRE 3", [3])):
        idx = np.array([i for i, p in enumerate(res["params"]) if p["max_rules"] in caps])
        tol = resolve_tolerance(
            choice.score_tolerance, choice.standard_errors, mean[idx], std[idx], search.n_splits_
        )
        order = checked_order(idx[choice_order(mean[idx], rules[idx], tol)], res, pool=idx)
        started = time.perf_counter()

        def fit(index):
            model = LibreClassifier(
                positive_class=positive, random_state=search.seed_, **res["params"][index]
            )
            return model.fit(X_train, y_train)

        with warnings.catch_warnings():  # the search's refit, checked as it checks it
            warnings.simplefilter("ignore")
            model, best, _ = refit_in_choice_order(fit, order)
        params = dict(res["params"][best])
        fit_s = shared + time.perf_counter() - started
        pred = model.predict(X_test) == positive
        if method == "LIBRE 3":
            params.pop("max_rules")
        out[method] = _result(pred, len(model.rules_), model.rules_.n_atoms, fit_s, params)
        out[method]["inner_f1"] = float(mean[best])
    return out


def _imodels(method, seed):
    from imodels import BayesianRuleSetClassifier, RuleFitClassifier, SkopeRulesClassifier

    if method in ("Skope", "Skope any"):
        return SkopeRulesClassifier(random_state=seed)
    if method == "RuleFit":
        return RuleFitClassifier(random_state=seed)
    if method == "BRS":
        # the paper's BRS setting: 2 chains of 500 iterations; rules up to 3 items
        return BayesianRuleSetClassifier(num_chains=2, num_iterations=500, maxlen=3)
    raise ValueError(method)


def _result(pred, n_rules, atoms, fit_s, params) -> dict:
    return {
        "pred": np.asarray(pred, dtype=bool),
        "n_rules": n_rules,
        "atoms": atoms,
        "fit_s": fit_s,
        "params": params,
    }


def _child(conn, method, X_train, y_train, X_test, info, cfg):
    try:
        conn.send(("ok", run_method(method, X_train, y_train, X_test, info, cfg)))
    except BaseException as exc:
        conn.send(("error", f"{type(exc).__name__}: {exc}\n{traceback.format_exc()[-1500:]}"))
    finally:
        conn.close()


def run_with_budget(method, X_train, y_train, X_test, info, cfg, budget):
    """Run one fit in a forked child process; ("timeout", None) if it exceeds ``budget`` s."""
    ctx = mp.get_context("fork")
    parent, child = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=_child, args=(child, method, X_train, y_train, X_test, info, cfg))
    proc.start()
    child.close()
    if parent.poll(budget):
        try:
            status, payload = parent.recv()
        except EOFError:
            status, payload = "error", f"child died (exit code {proc.exitcode})"
        proc.join()
        return status, payload
    proc.kill()
    proc.join()
    return "timeout", None


# -- the experiment ----------------------------------------------------------------------------


def evaluate(name, methods, cfg, budget, results, save):
    X, y, info = load_dataset(name)
    if len(X) > LARGE and cfg.inner_cv_large:
        cfg = replace(cfg, inner_cv=cfg.inner_cv_large)
    positive = (y == info.positive_class).to_numpy()
    folds = list(StratifiedKFold(5, shuffle=True, random_state=cfg.seed).split(X, positive))
    pairs = {}  # fold -> results of run_libre_pair, shared by "LIBRE" and "LIBRE 3"
    for method in methods:
        key = f"{name}|{method}"
        if key in results:
            logger.info("%s: cached", key)
            continue
        entry = {
            "dataset": name,
            "method": method,
            "status": "ok",
            "inner_cv": cfg.inner_cv,
            "folds": [],
        }
        for k, (train, test) in enumerate(folds):
            X_train, y_train, X_test = X.iloc[train], y.iloc[train], X.iloc[test]
            if method in ("LIBRE", "LIBRE 3"):
                if k not in pairs:
                    pairs[k] = run_libre_pair(X_train, y_train, X_test, info, cfg)
                status, out = "ok", pairs[k][method]
            elif method in LIBRE_METHODS:
                status, out = "ok", run_method(method, X_train, y_train, X_test, info, cfg)
            else:
                status, out = run_with_budget(method, X_train, y_train, X_test, info, cfg, budget)
            if status != "ok":
                entry["status"] = "DNF" if status == "timeout" else "error"
                entry["detail"] = f"fold {k + 1}: " + (
                    f"exceeded the {budget:.0f} s budget" if out is None else out
                )
                logger.warning("%s: %s", key, entry["detail"].splitlines()[0])
                break
            f1 = f1_score(positive[test], out["pred"], zero_division=0.0)
            entry["folds"].append(
                {
                    "f1": float(f1),
                    "n_rules": out["n_rules"],
                    "atoms": out["atoms"],
                    "fit_s": out["fit_s"],
                    "params": out["params"],
                    "inner_f1": out.get("inner_f1"),
                }
            )
            logger.info(
                "%s fold %d: F1 %.3f, rules %s, atoms %s, fit %.1f s %s",
                key,
                k + 1,
                f1,
                out["n_rules"],
                None if out["atoms"] is None else round(out["atoms"], 2),
                out["fit_s"],
                out["params"] or "",
            )
        results[key] = entry
        save(results)


def summarize(entry) -> dict:
    if entry["status"] != "ok":
        return {"status": entry["status"]}
    folds = entry["folds"]
    f1 = np.array([f["f1"] for f in folds])
    out = {
        "status": "ok",
        "f1": f1.mean(),
        "f1_std": f1.std(),
        "fit_s": float(np.mean([f["fit_s"] for f in folds])),
    }
    if folds[0]["n_rules"] is not None:
        rules = np.array([f["n_rules"] for f in folds], dtype=float)
        atoms = np.array([f["atoms"] for f in folds], dtype=float)
        out.update(rules=rules.mean(), rules_std=rules.std(), atoms=atoms.mean())
    params = [json.dumps(f["params"], sort_keys=True) for f in folds if f["params"]]
    if params:
        out["params"] = Counter(params)
    return out


# -- markdown ----------------------------------------------------------------------------------


def machine(commit: str | None = None) -> dict:
    cpu = cpu_model()
    gib = ram_gib()
    ram = "unknown" if gib is None else f"{gib:.0f} GiB"
    try:
        if commit is not None:
            raise OSError  # given on the command line
        commit = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=True
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no", "libre_lib"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        if dirty:
            commit += " (libre_lib had uncommitted changes)"
    except (OSError, subprocess.CalledProcessError):
        commit = commit or "unknown"
    versions = {}
    for package in ("scikit-learn", "numpy", "pandas", "wittgenstein", "imodels"):
        try:
            versions[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            versions[package] = "not installed"
    return {
        "cpu": cpu,
        "cores": os.cpu_count(),
        "ram": ram,
        "python": platform.python_version(),
        "commit": commit,
        "versions": versions,
    }


def _cell(s, what="f1", digits=2):
    if s is None:
        return "–"
    if s["status"] != "ok":
        return s["status"]
    if what == "f1":
        return f"{s['f1']:.{digits}f} ({s['f1_std']:.2f})"
    if what not in s:
        return "–"
    if what == "rules":
        return f"{s['rules']:.1f} ({s['rules_std']:.1f})"
    if what == "atoms":
        return f"{s['atoms']:.1f}"
    return f"{s[what]:.1f}"


def _paper(name, key):
    value = PAPER.get(name, {}).get(key)
    if value is None:
        return "–"
    return f"{value[0]:.2f} ({value[1]:.2f})" if key.startswith("f1") else f"{value[0]:.1f}"


def ranks(stats, datasets, methods) -> tuple[dict, list]:
    """Average F1 rank (1 = best, ties share the mean rank) over the datasets where every
    method finished."""
    common = [
        d for d in datasets if all(stats.get((d, m), {}).get("status") == "ok" for m in methods)
    ]
    table = pd.DataFrame(
        {m: [stats[(d, m)]["f1"] for d in common] for m in methods}, index=common, dtype=float
    )
    r = table.round(3).rank(axis=1, ascending=False, method="average")
    return {m: (r[m].mean(), r[m].std(ddof=0)) for m in methods}, common


def markdown(results, datasets, methods, meta) -> str:
    entries = list(results.values())
    stats = {(e["dataset"], e["method"]): summarize(e) for e in entries}
    datasets = [d for d in datasets if any((d, m) in stats for m in methods)]
    lines = [
        "## Quality",
        "",
        "The paper's protocol (section 4): stratified 5-fold CV, the **same folds for every "
        "method** (`StratifiedKFold(5, shuffle=True, random_state="
        f"{meta['seed']})` on the positive-class mask); F1 of the positive class; number of "
        "rules; average atoms per rule. Every tuned method is tuned by an inner "
        f"{meta['inner_cv']}-fold stratified CV on the outer training fold only"
        + (
            f" ({meta['inner_cv_large']}-fold on the datasets of more than {LARGE:,} rows)"
            if meta["inner_cv_large"]
            else ""
        )
        + ", scoring F1 of the positive class; the test fold is never seen during tuning.",
        "",
        "Commands (results accumulate in one JSON file; each run skips what is cached):",
        "",
        *[
            f"* `{r['command']}` – {r['wall_min']:.0f} min, load average at the end "
            + "/".join(f"{v:.1f}" for v in (r["load_average"] or ()))
            for r in meta["runs"]
        ],
        "",
        f"Machine: {meta['machine']['cpu']}, {meta['machine']['cores']} cores, "
        f"{meta['machine']['ram']} RAM; Python {meta['machine']['python']}, "
        + ", ".join(f"{k} {v}" for k, v in meta["machine"]["versions"].items())
        + f"; libre-flows commit {meta['machine']['commit']}.  ",
        f"Per-fit time budget for the peers: {meta['budget']:.0f} s.",
        "",
        "Methods:",
        "",
        "* **LIBRE** – `LibreSearchCV()`: "
        + (
            f"its default grid: {len(ParameterGrid(DEFAULT_GRID))} points, the paper's grid "
            "(n_estimators ∈ {5, 20, 50}, up to 5 features per learner, H1/H2, alpha ∈ {.5, "
            ".7, .9}, chi2_threshold ∈ {6, 4.6, 4}) × the early stop max_rules ∈ "
            f"{axis_values(EARLY_STOP)} × subset_sizes ∈ {{cycle, fixed}}, and for H1 × "
            f"conflict_tolerance ∈ {axis_values(CONFLICT_TOLERANCES)} on uncapped ChiMerge bins "
            "(max_intervals=None; H2 keeps the cap of 3); on training folds with at least "
            f"{LARGE_DATA_POSITIVES:,} positives (adult, bank) "
            f"{len(ParameterGrid(LARGE_DATA_GRID))} points: the H1 half also × "
            f"min_local_support ∈ {axis_values(SELECTION_FILTERS['min_local_support'])} × top_k ∈ "
            f"{axis_values(SELECTION_FILTERS['top_k'])}"
            if meta["grid"] is None
            else f"the quick grid `{meta['grid']}` × the early stop max_rules ∈ "
            f"{axis_values(EARLY_STOP)}"
        )
        + "; choice: the fewest mean rules among the points within max(score_tolerance, "
        "standard_errors × the standard error of the best point's mean) of the best mean inner "
        f"F1 (score_tolerance={LibreSearchCV().score_tolerance:g}, "
        f"standard_errors={LibreSearchCV().standard_errors:g}); other parameters at their "
        "defaults; raw data, NaN left in place.",
        "* **LIBRE 3** – `LibreSearchCV(max_rules=3)`: the same grid with the cap fixed at 3 "
        "and the same choice rule. Both come from one inner CV (identical scores to two "
        "separate searches; the learners and set covers are shared), so their fit times both "
        "include that joint search.",
        "* **LIBRE default** – `LibreClassifier()` with its defaults (alpha, max_intervals, "
        "max_rules and conflict_tolerance chosen by its own inner CV, the majority guard on).",
        "* **DT**, **RF** – scikit-learn DecisionTree / RandomForest (100 trees), max_depth ∈ "
        "{5, 10, 20, None} tuned.",
        "* **RIPPER** – wittgenstein 0.3.5, k (optimization passes) ∈ "
        f"{{{', '.join(map(str, meta['ripper_k']))}}} tuned, pruning on (its default).",
        "* **Skope**, **RuleFit** – imodels defaults (not tuned). imodels' Skope predicts by "
        "a precision-weighted vote of its rules (positive when the fired rules hold more than "
        "half of the total weight); **Skope any** is the same fitted model read as a rule set "
        "(positive when any rule fires, its `_predict_top_rules` with all rules). **BRS** – "
        "imodels BayesianRuleSet, 2 chains × 500 iterations (the paper's setting), rules of up "
        "to 3 items, on one-hot categories + quartile bins of numeric columns.",
        "* Peers get median / most-frequent imputation and one-hot encoding, fitted on the "
        "training fold. DNF = a fit exceeded the per-fit budget (the method is reported DNF "
        "for that dataset, remaining folds skipped); skipped = not started (see below); `–` = "
        "not applicable (RF has no rules; no published number).",
        "",
        "Counting conventions: a range or a set of categories on one original feature is one "
        "atom (one-hot columns of the same feature merge). DT: one rule per leaf predicting the "
        "positive class, atoms = distinct features on its root-to-leaf path. RuleFit: non-zero "
        "terms (linear terms = 1-atom rules). Skope / Skope any: all rules of the fitted model. "
        "RF: no "
        "rules.",
        "",
    ]
    header = "| dataset | " + " | ".join(methods) + " | paper LIBRE | paper LIBRE 3 |"
    sep = "|---" * (len(methods) + 3) + "|"
    for title, what, pkeys in (
        ("F1 of the positive class, mean (std) over the 5 outer folds", "f1", ("f1", "f1_3")),
        ("Number of rules, mean (std)", "rules", ("rules", "rules_3")),
        ("Average atoms per rule", "atoms", ("atoms", "atoms_3")),
        ("Mean fit time per outer fold, seconds (including inner tuning)", "fit_s", None),
    ):
        lines += [f"### {title}", ""]
        if pkeys is None:
            lines += [
                "| dataset | " + " | ".join(methods) + " |",
                "|---" * (len(methods) + 1) + "|",
            ]
        else:
            lines += [header, sep]
        for d in datasets:
            cells = [_cell(stats.get((d, m)), what) for m in methods]
            row = f"| {d} | " + " | ".join(cells)
            if pkeys is not None:
                row += f" | {_paper(d, pkeys[0])} | {_paper(d, pkeys[1])}"
            lines.append(row + " |")
        if what == "f1":
            rank, common = ranks(stats, datasets, methods)
            if common:
                lines.append(
                    "| **avg rank** | "
                    + " | ".join(f"{rank[m][0]:.1f} ({rank[m][1]:.1f})" for m in methods)
                    + " | | |"
                )
            # a second ranking among the methods that finished on every dataset
            complete = [
                m
                for m in methods
                if all(stats.get((d, m), {}).get("status") == "ok" for d in datasets)
            ]
            rank_all = None
            if 1 < len(complete) < len(methods):
                rank_all, _ = ranks(stats, datasets, complete)
                lines.append(
                    f"| **avg rank, {len(datasets)} datasets** | "
                    + " | ".join(
                        f"{rank_all[m][0]:.1f} ({rank_all[m][1]:.1f})" if m in complete else ""
                        for m in methods
                    )
                    + " | | |"
                )
            if common:
                lines += [
                    "",
                    f"avg rank: mean F1 rank (std) over the {len(common)} datasets where every "
                    f"listed method finished ({', '.join(common)}); 1 = best, F1 rounded to 3 "
                    "decimals, ties share the mean rank."
                    + (
                        f" avg rank, {len(datasets)} datasets: the same among the methods that "
                        f"ran on all {len(datasets)} datasets ({', '.join(complete)})."
                        if rank_all
                        else ""
                    ),
                ]
        lines.append("")

    lines += ["### Tuned LIBRE against the paper", ""]
    lines += [
        "| dataset | F1 tuned | paper F1 | gap | #rules tuned | paper #rules | "
        "F1 ≥ paper − 0.02 and #rules ≤ paper? | LIBRE 3 F1 | paper LIBRE 3 F1 |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for d in datasets:
        s, s3 = stats.get((d, "LIBRE")), stats.get((d, "LIBRE 3"))
        if not s or s["status"] != "ok" or d not in PAPER:
            continue
        pf, pr = PAPER[d]["f1"][0], PAPER[d]["rules"][0]
        ok = s["f1"] >= pf - 0.02 and s["rules"] <= pr
        f3 = f"{s3['f1']:.2f}" if s3 and s3["status"] == "ok" else "–"
        lines.append(
            f"| {d} | {s['f1']:.3f} | {pf:.2f} | {s['f1'] - pf:+.3f} | {s['rules']:.1f} | "
            f"{pr:.1f} | {'yes' if ok else 'no'} | {f3} | {PAPER[d]['f1_3'][0]:.2f} |"
        )
    lines += halves(stats, datasets)
    lines += ["", "### Parameters chosen by the inner CV (LIBRE), per outer fold", ""]
    for d in datasets:
        s = stats.get((d, "LIBRE"))
        if s and s.get("params"):
            chosen = "; ".join(
                f"{_short(p)} ×{n}" if n > 1 else _short(p) for p, n in s["params"].most_common()
            )
            lines.append(f"* {d}: {chosen}")
    lines.append("")
    notes = [e for e in entries if e["status"] != "ok" and e["method"] in methods]
    if notes:
        lines += ["### Not run, did not finish or failed", ""]
        for e in notes:
            lines.append(f"* {e['dataset']} / {e['method']}: {e['status']} – "
                         f"{e.get('detail', '').splitlines()[0]}")  # fmt: skip
        lines.append("")
    return "\n".join(lines)


def _short(params: str) -> str:
    names = {"n_estimators": "E", "alpha": "α", "chi2_threshold": "χ²", "max_rules": "k"}
    p = json.loads(params)
    return " ".join(
        str(v) if k in ("heuristic", "subset_sizes") else f"{names.get(k, k)}={v}"
        for k, v in sorted(p.items())
    )


KEEP = "<!-- analysis: kept by paper_table.py -->"


def halves(stats, datasets) -> list[str]:
    """The design / confirmation halves (benchmarks/protocol.py): mean F1 and #rules per
    method and half, and the issue's per-dataset check against the decision tree."""
    methods = ["LIBRE", "LIBRE default", "DT", "RF", "RIPPER"]
    lines = ["", "### Design and confirmation halves (benchmarks/protocol.py)", ""]
    lines += [
        "Every default, grid and choice rule was chosen on the design half; the confirmation "
        "half was run once the choices were fixed. Each cell: the mean over the half's datasets "
        "where that method ran (their number in parentheses; skipped runs are listed below), "
        "and on the last row of each half the mean over the datasets where all five ran.",
        "",
        "| half | datasets | " + " | ".join(f"{m} F1 / #rules" for m in methods) + " |",
        "|---|---|" + "---|" * len(methods),
    ]
    for half, names in (("design", DESIGN), ("confirmation", CONFIRMATION)):
        names = [d for d in names if d in datasets]
        cells = []
        for m in methods:
            ok = [stats.get((d, m)) for d in names]
            ok = [x for x in ok if x and x["status"] == "ok"]
            if not ok:
                cells.append("–")
                continue
            f1 = np.mean([x["f1"] for x in ok])
            rules = [x["rules"] for x in ok if "rules" in x]
            n = f" / {np.mean(rules):.1f}" if rules else ""
            cells.append(f"{f1:.3f}{n} ({len(ok)})")
        lines.append(f"| {half} | {', '.join(names)} | " + " | ".join(cells) + " |")
        common = [
            d
            for d in names
            if all((x := stats.get((d, m))) and x["status"] == "ok" for m in methods)
        ]
        if common and len(common) < len(names):
            cells = []
            for m in methods:
                f1 = np.mean([stats[(d, m)]["f1"] for d in common])
                rules = [stats[(d, m)]["rules"] for d in common if "rules" in stats[(d, m)]]
                cells.append(f"{f1:.3f}" + (f" / {np.mean(rules):.1f}" if rules else ""))
            lines.append(f"| {half}, common | {', '.join(common)} | " + " | ".join(cells) + " |")
    lines += [
        "",
        "| dataset | half | LIBRE F1 | DT F1 | LIBRE ≥ DT − 0.02 | LIBRE default F1 | "
        "RF F1 | all-positive F1 | any method above it? |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for d in [*DESIGN, *CONFIRMATION]:
        if d not in datasets:
            continue
        s, t = stats.get((d, "LIBRE")), stats.get((d, "DT"))
        u, r = stats.get((d, "LIBRE default")), stats.get((d, "RF"))

        def f(x):
            return f"{x['f1']:.3f}" if x and x["status"] == "ok" else "–"

        ok = "–"
        if s and t and s["status"] == t["status"] == "ok":
            ok = "yes" if s["f1"] >= t["f1"] - 0.02 else "no"
        rate = float(manifest()["datasets"][d]["positive_rate"])
        trivial = 2 * rate / (1 + rate)  # F1 of answering "positive" everywhere
        ran = [x["f1"] for m in methods if (x := stats.get((d, m))) and x["status"] == "ok"]
        above = "–" if not ran else ("yes" if max(ran) > trivial + 0.01 else "**no**")
        lines.append(
            f"| {d} | {half_of(d)} | {f(s)} | {f(t)} | {ok} | {f(u)} | {f(r)} | "
            f"{trivial:.3f} | {above} |"
        )
    lines += [
        "",
        "All-positive F1 is what answering the positive class everywhere scores (2p / (1 + p) "
        "at positive rate p); where no method beats it by more than 0.01 the data holds no "
        "signal the methods can use, and it is reported instead of tuned for.",
    ]
    return lines


def write_doc(path: Path, section: str) -> None:
    """Replace the "## Quality" section of ``path`` (created with both headings if missing).
    Text of the old section from the ``KEEP`` marker on (the hand-written analysis) is kept."""
    if path.exists():
        text = path.read_text(encoding="utf-8")
    else:
        text = "# Benchmarks\n\n## Quality\n\n## Speed and scale\n"
    match = re.search(r"^## Quality\s*$", text, flags=re.M)
    if match is None:
        text = text.rstrip("\n") + "\n\n" + section.rstrip("\n") + "\n"
    else:
        nxt = re.search(r"^## ", text[match.end() :], flags=re.M)
        end = match.end() + nxt.start() if nxt else len(text)
        old = text[match.start() : end]
        kept = old[old.index(KEEP) :] if KEEP in old else ""  # verbatim, blank lines included
        new = section.rstrip("\n") + "\n\n" + kept
        text = text[: match.start()] + new + text[end:]
    atomic_write_text(path, text)


def parse_setting(item: str) -> tuple[str, object]:
    """``PARAM=VALUE`` with VALUE read as a Python literal when it is one (else as text)."""
    name, sep, value = item.partition("=")
    if not sep:
        raise SystemExit(f"--libre-set {item!r}: expected PARAM=VALUE")
    try:
        return name, ast.literal_eval(value)
    except (ValueError, SyntaxError):
        return name, value


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--quick", action="store_true", help="3 small datasets, small grids, no BRS"
    )
    parser.add_argument("--datasets", nargs="+", default=None)
    parser.add_argument("--methods", nargs="+", default=None, choices=ALL_METHODS)
    parser.add_argument(
        "--skip",
        nargs="+",
        default=[],
        metavar="METHOD:DATASET",
        help="method/dataset pairs not to run (reported as '–')",
    )
    parser.add_argument("--budget", type=float, default=300.0, help="seconds per peer fit")
    parser.add_argument("--inner-cv", type=int, default=None, help="default 5 (quick: 3)")
    parser.add_argument(
        "--inner-cv-large",
        type=int,
        default=None,
        help=f"inner folds for datasets of more than {LARGE} rows (default: --inner-cv)",
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--n-jobs", type=int, default=2)
    parser.add_argument("--results", type=Path, default=Path("/tmp/paper_table_results.json"))
    parser.add_argument("--fresh", action="store_true", help="ignore cached results")
    parser.add_argument(
        "--report-only", action="store_true", help="only print/write the report of the results"
    )
    parser.add_argument(
        "--commit", default=None, help="commit the results came from (default: git HEAD here)"
    )
    parser.add_argument("--doc", type=Path, default=None, help="write the Quality section here")
    parser.add_argument(
        "--libre-set",
        action="append",
        default=[],
        metavar="PARAM=VALUE",
        help="a LibreClassifier parameter fixed in LIBRE, LIBRE 3 and LIBRE default, or a list "
        "of values the searches tune (a study of an option; use its own --results file)",
    )
    args = parser.parse_args(argv)
    logging.basicConfig(
        level=logging.INFO, format="%(asctime)s %(message)s", datefmt="%H:%M:%S", stream=sys.stderr
    )
    logging.getLogger("libre_lib.estimator").setLevel(logging.WARNING)
    started = time.perf_counter()
    datasets = args.datasets or (QUICK_DATASETS if args.quick else dataset_names())
    methods = args.methods or (
        [m for m in ALL_METHODS if m != "BRS"] if args.quick else ALL_METHODS
    )
    cfg = Config(
        grid=QUICK_GRID if args.quick else None,
        inner_cv=args.inner_cv or (3 if args.quick else 5),
        inner_cv_large=args.inner_cv_large,
        seed=args.seed,
        n_jobs=args.n_jobs,
        ripper_k=[1, 2] if args.quick else list(RIPPER_K),
        libre_params=dict(parse_setting(item) for item in args.libre_set),
    )
    settings = {
        "seed": cfg.seed,
        "inner_cv": cfg.inner_cv,
        "inner_cv_large": cfg.inner_cv_large,
        "grid": cfg.grid,
        "ripper_k": cfg.ripper_k,
        "budget": args.budget,
        **({"libre_params": cfg.libre_params} if cfg.libre_params else {}),
    }
    results = {}
    if args.results.exists() and not args.fresh:
        results = json.loads(args.results.read_text())
        if results.get(SETTINGS, settings) != settings:
            parser.error(
                f"{args.results} holds results obtained with other settings "
                f"({results[SETTINGS]}); pass --fresh or another --results file."
            )
    results[SETTINGS] = settings

    def save(res):
        atomic_write_text(args.results, json.dumps(res, indent=1, default=_jsonable))

    skip = {tuple(s.split(":", 1)) for s in args.skip}
    for name in datasets if not args.report_only else []:
        for method in methods:
            if (method, name) in skip and f"{name}|{method}" not in results:
                results[f"{name}|{method}"] = {
                    "dataset": name,
                    "method": method,
                    "status": "skipped",
                    "detail": "not run (--skip)",
                    "folds": [],
                }
        chosen = [m for m in methods if (m, name) not in skip]
        evaluate(name, chosen, cfg, args.budget, results, save)
    if not args.report_only:
        results.setdefault(RUNS, []).append(
            {
                "command": "python " + shlex.join([Path(sys.argv[0]).as_posix(), *sys.argv[1:]]),
                "wall_min": (time.perf_counter() - started) / 60,
                "load_average": os.getloadavg() if hasattr(os, "getloadavg") else None,
            }
        )
        save(results)
    # the report covers everything in the results file, in the usual order
    entries = {k: v for k, v in results.items() if not k.startswith("_")}
    present_methods = [m for m in ALL_METHODS if any(e["method"] == m for e in entries.values())]
    present_datasets = [
        d for d in dataset_names() if any(e["dataset"] == d for e in entries.values())
    ]
    meta = {**settings, "runs": results.get(RUNS, []), "machine": machine(args.commit)}
    section = markdown(entries, present_datasets, present_methods, meta)
    print(section)
    if args.doc:
        write_doc(args.doc, section)


def _jsonable(value):
    if isinstance(value, np.generic):
        return value.item()
    raise TypeError(type(value).__name__)


if __name__ == "__main__":
    main()
