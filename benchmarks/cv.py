"""Stratified 5-fold CV of LibreClassifier configurations on bundled datasets.

    python benchmarks/cv.py --datasets liver pima --set alpha=0.5 --set max_rules=3

Prints, per dataset, mean (std) F1 of the positive class, #rules, average atoms, fit time, and
the mean test accuracy next to the majority-class rate of the test folds (and how many folds
fell below it).
"""

from __future__ import annotations

import argparse
import ast
import time
import warnings

import numpy as np
from sklearn.metrics import f1_score
from sklearn.model_selection import StratifiedKFold

from libre_lib import LibreClassifier, LibreWarning, estimator
from libre_lib.datasets import load_dataset

PAPER_SIX = ["liver", "pima", "transfusion", "haberman", "australian", "tictactoe"]


def cross_validate(name: str, params: dict, n_splits: int = 5, seed: int = 0) -> dict:
    X, y, info = load_dataset(name)
    positive = (y == info.positive_class).to_numpy()
    folds = StratifiedKFold(n_splits=n_splits, shuffle=True, random_state=seed)
    f1s, rules, atoms, times, accuracy, majority = [], [], [], [], [], []
    for train, test in folds.split(X, positive):
        clf = LibreClassifier(positive_class=info.positive_class, random_state=seed, **params)
        start = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", LibreWarning)
            clf.fit(X.iloc[train], y.iloc[train])
        times.append(time.perf_counter() - start)
        pred = clf.predict(X.iloc[test]) == info.positive_class
        f1s.append(f1_score(positive[test], pred, zero_division=0.0))
        accuracy.append(float(np.mean(pred == positive[test])))
        rate = float(np.mean(positive[test]))
        majority.append(max(rate, 1 - rate))
        rules.append(len(clf.rules_))
        atoms.append(clf.rules_.n_atoms)
    return {
        "dataset": name,
        "f1": float(np.mean(f1s)),
        "f1_std": float(np.std(f1s)),
        "rules": float(np.mean(rules)),
        "atoms": float(np.mean(atoms)),
        "fit_s": float(np.mean(times)),
        "accuracy": float(np.mean(accuracy)),
        "majority": float(np.mean(majority)),
        "folds_below_majority": int(
            sum(a < m - 1e-12 for a, m in zip(accuracy, majority, strict=True))
        ),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--datasets", nargs="+", default=PAPER_SIX)
    parser.add_argument("--set", action="append", default=[], metavar="PARAM=VALUE")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--auto-choice",
        nargs=2,
        type=float,
        metavar=("TOLERANCE", "SE"),
        help="the 'auto' parameters' choice rule: max(TOLERANCE, SE standard errors) "
        f"(default {estimator.AUTO_CHOICE[0]:g} and {estimator.AUTO_CHOICE[1]:g})",
    )
    parser.add_argument(
        "--auto-stops",
        nargs="+",
        type=int,
        metavar="K",
        help="the early stops 'max_rules=\"auto\"' chooses from "
        f"(default {' '.join(map(str, estimator.AUTO_STOPS))})",
    )
    args = parser.parse_args()
    if args.auto_choice:
        estimator.AUTO_CHOICE = tuple(args.auto_choice)
    if args.auto_stops:
        estimator.AUTO_STOPS = tuple(args.auto_stops)
    params = {}
    for item in args.set:
        key, value = item.split("=", 1)
        try:
            params[key] = ast.literal_eval(value)
        except (ValueError, SyntaxError):
            params[key] = value
    print(
        f"params: {params or 'defaults'}; auto choice: {estimator.AUTO_CHOICE}; "
        f"auto stops: {estimator.AUTO_STOPS}"
    )
    print(
        f"{'dataset':<16}{'F1':>12}{'#rules':>8}{'atoms':>7}{'fit s':>8}"
        f"{'accuracy':>10}{'majority':>10}{'folds below':>13}"
    )
    for name in args.datasets:
        r = cross_validate(name, params, seed=args.seed)
        print(
            f"{name:<16}{r['f1']:>6.3f} ({r['f1_std']:.2f}){r['rules']:>8.1f}"
            f"{r['atoms']:>7.2f}{r['fit_s']:>8.2f}{r['accuracy']:>10.3f}{r['majority']:>10.3f}"
            f"{r['folds_below_majority']:>13d}",
            flush=True,
        )


if __name__ == "__main__":
    main()
