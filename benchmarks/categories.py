"""Columns of many categories: grouped bins against one bin per category (docs/benchmarks.md,
"Columns of many categories").

    python benchmarks/categories.py --categories 300 1000 --seeds 0 1 --min-rows 5 10 30
    python benchmarks/categories.py --categories 150 300 --seeds 2 3 --one-bin-each

Synthetic data, 20,000 training rows and 20,000 fresh test rows per seed: six normal columns,
a three-letter column, and a ``city`` column of K categories with Zipf-like frequencies
(weight 1 / rank^0.8), each city with its own effect on the label
(``x0 + effect[city] + noise > 1``). ``LibreClassifier(random_state=0)`` is fitted with each
``MIN_CATEGORY_ROWS`` given and, with ``--one-bin-each``, with grouping off (one bin per
category, the paper's encoding); each line prints test F1, accuracy, #rules and fit seconds.
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
import pandas as pd
from sklearn.metrics import accuracy_score, f1_score

import libre_lib.discretization as discretization
from libre_lib import LibreClassifier


def city_data(rows: int, n_cities: int, seed: int, effect: np.ndarray):
    rng = np.random.default_rng(seed)
    X = pd.DataFrame(rng.normal(size=(rows, 6)), columns=[f"x{i}" for i in range(6)])
    weight = 1.0 / np.arange(1, n_cities + 1) ** 0.8
    city = rng.choice(n_cities, size=rows, p=weight / weight.sum())
    X["city"] = [f"c{v}" for v in city]
    X["kind"] = rng.choice(list("abc"), rows)
    y = ((X["x0"] + effect[city] + rng.normal(scale=0.7, size=rows)) > 1).astype(int)
    return X, y


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--categories", type=int, nargs="+", default=[150, 300])
    parser.add_argument("--seeds", type=int, nargs="+", default=[2, 3])
    parser.add_argument(
        "--min-rows", type=int, nargs="+", default=[discretization.MIN_CATEGORY_ROWS]
    )
    parser.add_argument("--one-bin-each", action="store_true", help="also without grouping")
    parser.add_argument("--rows", type=int, default=20_000)
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    settings = [("grouped, min rows", m, discretization.MANY_CATEGORIES) for m in args.min_rows]
    if args.one_bin_each:
        settings.append(("one bin each", None, 10**9))
    print("| categories | seed | setting | test F1 | accuracy | rules | fit s |")
    print("|---|---|---|---|---|---|---|")
    for n_cities in args.categories:
        for seed in args.seeds:
            effect = np.random.default_rng(100 + seed).normal(size=n_cities)
            X, y = city_data(args.rows, n_cities, seed, effect)
            X_test, y_test = city_data(args.rows, n_cities, 50 + seed, effect)
            for name, min_rows, many in settings:
                if min_rows is not None:
                    discretization.MIN_CATEGORY_ROWS = min_rows
                discretization.MANY_CATEGORIES = many
                start = time.perf_counter()
                model = LibreClassifier(random_state=0).fit(X, y)
                seconds = time.perf_counter() - start
                predicted = model.predict(X_test)
                label = name if min_rows is None else f"{name} {min_rows}"
                print(
                    f"| {n_cities} | {seed} | {label} | {f1_score(y_test, predicted):.3f} "
                    f"| {accuracy_score(y_test, predicted):.3f} | {len(model.rules_)} "
                    f"| {seconds:.0f} |",
                    flush=True,
                )


if __name__ == "__main__":
    main()
