"""Class weights on a rare positive class: does weighting the positive rows help the default
search? (docs/benchmarks.md, "Class weights on a rare positive class".)

A design-half dataset with its positive rows subsampled to ``--share`` (seed 0), outer
stratified 3-fold (seed 0). Per fold: ``LibreSearchCV(random_state=0)`` without weights, with
each positive row weighted ``w`` (``sqrt``: sqrt(negatives / positives); a number: that weight;
normalized to mean 1), its inner folds scored without the weights (the F1 a user reports), and
the depth-tuned tree of ``benchmarks/pipeline_targets.py``. Prints each fold's F1 of the
positive class and each method's mean.

    python benchmarks/rare_weights.py magic --share 0.03 --weights none sqrt 3 tree
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.metrics import f1_score
from sklearn.model_selection import StratifiedKFold

sys.path.insert(0, str(Path(__file__).resolve().parent))

from pipeline_targets import decision_tree

import libre_lib.search as search_module
from libre_lib import LibreClassifier, LibreSearchCV
from libre_lib.datasets import load_dataset

_scored = search_module._Validation.__init__


def _unweighted(self, X, labels, truth, scorer, weight=None):
    """The inner folds' validation rows scored without the training weights."""
    _scored(self, X, labels, truth, scorer, None)


def rare(name: str, share: float) -> tuple[pd.DataFrame, pd.Series, object, list]:
    """The dataset with its positive rows subsampled to ``share`` of the rows (seed 0)."""
    X, y, info = load_dataset(name)
    positive = y.astype(str).to_numpy() == str(info.positive_class)
    n_negative = int((~positive).sum())
    n_positive = round(share * n_negative / (1 - share))
    rng = np.random.default_rng(0)
    chosen = rng.choice(np.flatnonzero(positive), n_positive, replace=False)
    keep = np.sort(np.concatenate([np.flatnonzero(~positive), chosen]))
    X, y = X.iloc[keep].reset_index(drop=True), y.iloc[keep].reset_index(drop=True)
    return X, y, info.positive_class, list(info.categorical_columns)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dataset")
    parser.add_argument("--share", type=float, default=0.03)
    parser.add_argument("--weights", nargs="+", default=["none", "sqrt", "tree"])
    args = parser.parse_args()
    X, y, positive_class, categorical = rare(args.dataset, args.share)
    positive = y.astype(str).to_numpy() == str(positive_class)
    print(f"{args.dataset}: {len(y):,} rows, {int(positive.sum()):,} positive", flush=True)
    search_module._Validation.__init__ = _unweighted
    scores: dict[str, list[float]] = {w: [] for w in args.weights}
    folds = StratifiedKFold(3, shuffle=True, random_state=0).split(X, positive)
    for k, (train, test) in enumerate(folds):
        X_train, y_train, X_test, y_test = X.iloc[train], y.iloc[train], X.iloc[test], y.iloc[test]
        p = positive[train]
        for how in args.weights:
            started = time.perf_counter()
            if how == "tree":
                f1 = decision_tree(
                    X_train, y_train, X_test, y_test, str(positive_class), categorical
                )["f1"]
            else:
                ratio = (~p).sum() / p.sum()
                w = None if how == "none" else np.sqrt(ratio) if how == "sqrt" else float(how)
                weight = None if w is None else np.where(p, w, 1.0)
                weight = None if weight is None else weight / weight.mean()
                estimator = LibreClassifier(
                    positive_class=positive_class,
                    categorical_features=categorical or None,
                    random_state=0,
                )
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    model = LibreSearchCV(estimator=estimator, random_state=0, n_jobs=1)
                    model.fit(X_train, y_train, sample_weight=weight)
                truth = y_test.astype(str).to_numpy() == str(positive_class)
                flagged = pd.Series(model.predict(X_test)).astype(str).to_numpy()
                f1 = f1_score(truth, flagged == str(positive_class))
            scores[how].append(f1)
            seconds = time.perf_counter() - started
            print(f"fold {k} {how:>5}: F1 {f1:.3f} ({seconds:.0f} s)", flush=True)
    for how, values in scores.items():
        print(f"mean {args.dataset} {args.share:g} {how:>5}: F1 {np.mean(values):.3f}")


if __name__ == "__main__":
    main()
