"""Fit time on wide data: many columns, few rows (section "Speed and scale", fourth round).

    python benchmarks/wide.py                       # spambase, wdbc, 2,000 x 300, 2,000 x 1,000
    python benchmarks/wide.py --data spambase 2000x300 --no-search

Each measurement fits ``LibreClassifier(random_state=0)`` and, unless ``--no-search``,
``LibreSearchCV(random_state=0, n_jobs=1)``, and prints the seconds and the number of rules.
A tiny fit runs first so that numba's compile times (cached afterwards) are not counted.
Synthetic data ``ROWSxCOLUMNS``: standard normal columns, label ``c0 + c1 - c2 + noise > 0.8``
(about a quarter positive), so only three of the columns hold signal.
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
import pandas as pd

from libre_lib import LibreClassifier, LibreSearchCV
from libre_lib.datasets import load_dataset


def synthetic(rows: int, columns: int) -> tuple[pd.DataFrame, pd.Series]:
    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.normal(size=(rows, columns)), columns=[f"c{i}" for i in range(columns)])
    noise = rng.normal(scale=0.5, size=rows)
    y = ((X["c0"] + X["c1"] - X["c2"] + noise) > 0.8).astype(int)
    return X, y


def load(name: str):
    if "x" in name and name.replace("x", "").isdigit():
        rows, columns = (int(part) for part in name.split("x"))
        X, y = synthetic(rows, columns)
        return X, y, 1
    X, y, info = load_dataset(name)
    return X, y, info.positive_class


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--data",
        nargs="+",
        default=["spambase", "wdbc", "2000x300", "2000x1000"],
        help="bundled dataset names or ROWSxCOLUMNS synthetic tables",
    )
    parser.add_argument("--no-search", action="store_true", help="only LibreClassifier")
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    LibreSearchCV(random_state=0, n_jobs=1).fit(*synthetic(200, 6))  # compile, not timed
    print("| data | rows | columns | estimator | fit s | rules |")
    print("|---|---|---|---|---|---|")
    for name in args.data:
        X, y, positive = load(name)
        estimators = [LibreClassifier(positive_class=positive, random_state=0)]
        if not args.no_search:
            estimators.append(LibreSearchCV(positive_class=positive, random_state=0, n_jobs=1))
        for estimator in estimators:
            start = time.perf_counter()
            estimator.fit(X, y)
            seconds = time.perf_counter() - start
            model = getattr(estimator, "best_estimator_", estimator)
            print(
                f"| {name} | {len(X):,} | {X.shape[1]:,} | {type(estimator).__name__} "
                f"| {seconds:.1f} | {len(model.rules_)} |",
                flush=True,
            )


if __name__ == "__main__":
    main()
