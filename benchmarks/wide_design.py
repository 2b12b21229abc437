"""Design-half probes of LibreClassifier() on wide data (docs/benchmarks.md, eleventh round).

    python benchmarks/wide_design.py --datasets digits:8 wdbc pad:pima
    python benchmarks/wide_design.py --learners-per-column 2.5 --datasets digits:8 wdbc

Stratified 5-fold CV (seed 0) of ``LibreClassifier()`` with its defaults, or with one of two
candidates for wide data that the library does not ship:

* ``--learners-per-column K``: the ensemble draws max(n_estimators, ceil(K x usable columns))
  learners (at most 500) instead of ``n_estimators``, so that each column sits in as many
  learners as on narrow data;
* ``--column-test P``: the learners draw only columns whose ChiMerge bins are significant
  against the class at level P / columns (a chi-square test of the bins, Bonferroni);
* ``--size-choice``: with ``--learners-per-column K``, the "auto" inner cross-validation
  chooses between ``n_estimators`` and the larger ensemble (both sizes' combinations in one
  table, the same choice rule; exact ties go to ``n_estimators``) on data with more than
  ``WIDE_COLUMNS`` usable columns (twelfth round);
* ``--wide-features F``: on more than ``WIDE_COLUMNS`` usable columns (at least two distinct
  present values) the learners see up to F columns (``max_features``) instead of 5: the
  default grid's with ``--method search`` (thirteenth round; the library's default grid does
  so with 8 since the twenty-fifth), ``LibreClassifier()``'s otherwise (twenty-sixth round,
  not adopted).

Datasets: a bundled name (design half: haberman pima tictactoe australian credit_approval
wdbc magic adult), ``digits:N`` (scikit-learn's bundled 8 x 8 digits, class N against the
rest: 1,797 rows, 61 non-constant pixel columns; not a development dataset) or ``pad:NAME``
(a bundled dataset padded to 60 columns with shuffled copies of its own columns:
``tuning_study.padded``). Prints F1 of the positive class, #rules and fit seconds (means over
the folds). ``--method search`` runs ``LibreSearchCV()`` instead (no candidate), ``--method
tree`` a decision tree with ``max_depth`` in {5, 10, 20, None} tuned by inner 5-fold F1 (the
peers' setting in benchmarks/paper_table.py: categories one-hot, missing numbers the median).
"""

from __future__ import annotations

import argparse
import math
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.stats import chi2
from sklearn.compose import ColumnTransformer
from sklearn.datasets import load_digits
from sklearn.impute import SimpleImputer
from sklearn.metrics import f1_score
from sklearn.model_selection import GridSearchCV, StratifiedKFold
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import OneHotEncoder
from sklearn.tree import DecisionTreeClassifier
from sklearn.utils import check_random_state

from libre_lib import LibreClassifier, LibreSearchCV, estimator
from libre_lib.datasets import load_dataset
from libre_lib.ensemble import draw_feature_subsets
from libre_lib.search import default_grid

sys.path.insert(0, str(Path(__file__).resolve().parent))
from tuning_study import padded

MAX_LEARNERS = 500
WIDE_COLUMNS = 20


def load(name: str):
    """(X, y, positive class) of a bundled, ``digits:N`` or ``pad:NAME`` dataset."""
    if name.startswith("digits:"):
        digits = load_digits()
        X = pd.DataFrame(digits.data, columns=[f"p{i}" for i in range(digits.data.shape[1])])
        X = X.loc[:, X.nunique() > 1]
        return X, pd.Series((digits.target == int(name[7:])).astype(int)), 1
    if name.startswith("pad:"):
        X, y, info = load_dataset(name[4:])
        return padded(X, 60), y, info.positive_class
    X, y, info = load_dataset(name)
    return X, y, info.positive_class


def significant_columns(codes: np.ndarray, n_bins, positive: np.ndarray, level: float) -> set:
    """Columns whose bins' chi-square against the class has p < level / columns."""
    keep = set()
    for j in range(codes.shape[1]):
        c, seen = codes[:, j], codes[:, j] >= 0
        table = np.stack(
            [
                np.bincount(c[seen & positive], minlength=int(n_bins[j])),
                np.bincount(c[seen & ~positive], minlength=int(n_bins[j])),
            ],
            axis=1,
        ).astype(float)
        table = table[table.sum(axis=1) > 0]
        if table.shape[0] < 2:
            continue
        expected = table.sum(axis=1, keepdims=True) * table.sum(axis=0) / table.sum()
        stat = float((((table - expected) ** 2) / np.where(expected > 0, expected, 1)).sum())
        if chi2.sf(stat, table.shape[0] - 1) < level / codes.shape[1]:
            keep.add(j)
    return keep


class WideProbe(LibreClassifier):
    """LibreClassifier with the candidates above (the inner "auto" CV uses them too)."""

    learners_per_column: float = 0.0
    column_test: float = 0.0
    size_choice: bool = False

    def choose_auto(self, frame, target, n_rows=None):
        if not (self.size_choice and self.learners_per_column):
            return LibreClassifier.choose_auto(self, frame, target, n_rows)
        self._larger = False
        chosen, table = LibreClassifier.choose_auto(self, frame, target, n_rows)
        if table is None or frame.shape[1] <= WIDE_COLUMNS:
            return chosen, table
        self._larger = True
        larger, wide = LibreClassifier.choose_auto(self, frame, target, n_rows)
        mean = np.array(table["mean_f1"] + wide["mean_f1"])
        std = np.array(table["std_f1"] + wide["std_f1"])
        rules = np.array(table["mean_rules"] + wide["mean_rules"])
        tolerance = estimator.resolve_tolerance(
            *estimator.AUTO_CHOICE, mean, std, table["n_splits"]
        )
        pick = estimator.choose_candidate(mean, rules, tolerance)
        self._larger = pick >= len(table["mean_f1"])
        self.larger_chosen_ = self._larger
        return (larger if self._larger else chosen), table

    def encode(self, frame, target, discretization):
        if self.column_test:
            codes = discretization.transform(frame)
            positive = np.asarray(target.positive, dtype=bool)
            self._kept = (
                discretization,
                significant_columns(codes, discretization.n_bins, positive, self.column_test),
            )
        return LibreClassifier.encode(frame, target, discretization)

    def draw_subsets(self, discretization, learner_factor=1):
        pool = [j for j, b in enumerate(discretization.n_bins) if b >= 2]
        kept = getattr(self, "_kept", None)
        if self.column_test and kept is not None and kept[0] is discretization:
            pool = [j for j in pool if j in kept[1]] or pool
        if not pool:
            return []
        n = self.n_estimators * learner_factor
        larger = getattr(self, "_larger", True) if self.size_choice else True
        if self.learners_per_column and larger:
            n = min(MAX_LEARNERS, max(n, math.ceil(self.learners_per_column * len(pool))))
        rng = check_random_state(self.random_state)
        return draw_feature_subsets(pool, n, self._n_features(len(pool)), rng, self.subset_sizes)


def usable_columns(X: pd.DataFrame) -> int:
    """Columns with at least two distinct present values."""
    return int((X.nunique(dropna=True) >= 2).sum())


def model_for(method: str, positive_class, seed: int, X: pd.DataFrame, y=None, features=0):
    if method == "search":
        grid = None
        if features and usable_columns(X) > WIDE_COLUMNS:
            n_positives = int((np.asarray(y) == positive_class).sum())
            grid = [{**part, "max_features": [features]} for part in default_grid(n_positives)]
        return LibreSearchCV(
            positive_class=positive_class, random_state=seed, n_jobs=1, param_grid=grid
        )
    if method == "tree":
        numeric = [c for c in X.columns if pd.api.types.is_numeric_dtype(X[c])]
        prep = ColumnTransformer(
            [
                ("numbers", SimpleImputer(strategy="median"), numeric),
                (
                    "categories",
                    OneHotEncoder(handle_unknown="ignore"),
                    X.columns.difference(numeric),
                ),
            ]
        )
        tree = Pipeline([("prep", prep), ("tree", DecisionTreeClassifier(random_state=seed))])
        inner = StratifiedKFold(5, shuffle=True, random_state=seed)
        return GridSearchCV(tree, {"tree__max_depth": [5, 10, 20, None]}, scoring="f1", cv=inner)
    if features and usable_columns(X) > WIDE_COLUMNS:
        return WideProbe(positive_class=positive_class, random_state=seed, max_features=features)
    return WideProbe(positive_class=positive_class, random_state=seed)


def cross_validate(name: str, seed: int = 0, method: str = "libre", features: int = 0) -> tuple:
    """Mean F1, #rules (NaN for the tree) and fit seconds over the outer folds."""
    X, y, positive_class = load(name)
    positive = (y == positive_class).to_numpy()
    if method == "tree":
        X = X.astype({c: str for c in X.columns if not pd.api.types.is_numeric_dtype(X[c])})
        y, positive_class = positive, True
    f1s, rules, seconds = [], [], []
    for train, test in StratifiedKFold(5, shuffle=True, random_state=seed).split(X, positive):
        y_train = y[train] if method == "tree" else y.iloc[train]
        model = model_for(method, positive_class, seed, X.iloc[train], y_train, features)
        started = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model.fit(X.iloc[train], y_train)
        seconds.append(time.perf_counter() - started)
        f1s.append(f1_score(positive[test], model.predict(X.iloc[test]) == positive_class))
        rules.append(float("nan") if method == "tree" else len(model.rules_))
    return float(np.mean(f1s)), float(np.mean(rules)), float(np.mean(seconds))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--datasets", nargs="+", default=["digits:8", "wdbc", "pad:pima"])
    parser.add_argument("--learners-per-column", type=float, default=0.0, metavar="K")
    parser.add_argument("--column-test", type=float, default=0.0, metavar="P")
    parser.add_argument("--size-choice", action="store_true")
    parser.add_argument("--wide-features", type=int, default=0, metavar="F")
    parser.add_argument("--method", choices=("libre", "search", "tree"), default="libre")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    if args.method != "libre" and (args.learners_per_column or args.column_test):
        parser.error("the candidates apply to --method libre only")
    WideProbe.learners_per_column = args.learners_per_column
    WideProbe.column_test = args.column_test
    WideProbe.size_choice = args.size_choice
    if args.size_choice and not args.learners_per_column:
        parser.error("--size-choice needs --learners-per-column")
    print(
        f"method: {args.method}; learners per column: {args.learners_per_column or 'off'}; "
        f"column test: {args.column_test or 'off'}"
    )
    print(f"{'dataset':<22}{'F1':>7}{'#rules':>8}{'fit s':>8}")
    for name in args.datasets:
        f1, rules, seconds = cross_validate(name, args.seed, args.method, args.wide_features)
        print(f"{name:<22}{f1:>7.3f}{rules:>8.1f}{seconds:>8.1f}", flush=True)


if __name__ == "__main__":
    main()
