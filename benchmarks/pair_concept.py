"""A concept joining two of 20 columns: does the fit find it? (docs/benchmarks.md, rounds 34-35)

    python benchmarks/pair_concept.py --rows 100000 --table-seed 1 --random-states 0-19
    python benchmarks/pair_concept.py --rows 100000 --table-seed 1 --random-states 10 14 --without

A synthetic table (12 uniform numbers with 2 % missing, 4 small integers, a city of 400 values,
a plan, a region, a product; the class is ``x0 ≥ 60 ∧ x1 < 40 ∨ plan = pro ∧ x2 ≥ 70 ∨ (a
seventh of the cities) ∧ x3 > 80``, 5 % of labels flipped), split 80 / 20 (stratified, seed
0). For each ``random_state``, ``LibreClassifier(random_state=...)`` with its defaults: the
"auto" choice's inner F1, the fit's training and holdout F1, its rules, ``learner_factor_``
(2 or 4 when the fit fell far below its inner score and was fitted again with more learners)
and whether it warned. ``--without`` turns that check off (``LEARNER_FACTORS = ()``), as the
library was before the thirty-fifth round. The seed-0 table of 300,000 rows is the one that
showed the failure (``--rows 300000 --table-seed 0``).
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
import pandas as pd
from sklearn.metrics import f1_score
from sklearn.model_selection import train_test_split

from libre_lib import LibreClassifier, estimator


def pair_table(n_rows: int, seed: int) -> pd.DataFrame:
    """The synthetic table described above, with its class in column ``y`` ("yes"/"no")."""
    rng = np.random.default_rng(seed)
    columns = {}
    for i in range(12):
        values = rng.uniform(0, 100, n_rows)
        values[rng.random(n_rows) < 0.02] = np.nan
        columns[f"x{i}"] = values
    for i in range(4):
        columns[f"k{i}"] = rng.integers(0, 20, n_rows).astype(float)
    cities = np.array([f"city_{i:03d}" for i in range(400)])
    columns["city"] = cities[rng.zipf(1.3, n_rows) % 400]
    columns["plan"] = rng.choice(["basic", "plus", "pro", "enterprise"], n_rows)
    columns["region"] = rng.choice([f"r{i}" for i in range(30)], n_rows)
    columns["product"] = np.array([f"p{i}" for i in range(250)])[rng.integers(0, 250, n_rows)]
    columns["plan"] = pd.Series(columns["plan"]).where(rng.random(n_rows) > 0.01, None).to_numpy()
    frame = pd.DataFrame(columns)
    city = frame["city"].str[-3:].astype(int) % 7 == 0
    concept = (
        ((frame.x0 >= 60) & (frame.x1 < 40))
        | ((frame.plan == "pro") & (frame.x2 >= 70))
        | (city & (frame.x3 > 80))
    )
    flipped = rng.random(n_rows) < 0.05
    frame["y"] = np.where(concept ^ flipped, "yes", "no")
    return frame


def seeds(values: list[str]) -> list[int]:
    """``["0-3", "7"]`` → ``[0, 1, 2, 3, 7]``."""
    out = []
    for value in values:
        low, _, high = value.partition("-")
        out += list(range(int(low), int(high or low) + 1))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--table-seed", type=int, default=1)
    parser.add_argument("--random-states", nargs="+", default=["0-19"])
    parser.add_argument("--without", action="store_true", help="no refit with more learners")
    args = parser.parse_args()
    if args.without:
        estimator.LEARNER_FACTORS = ()
    frame = pair_table(args.rows, args.table_seed)
    X, y = frame.drop(columns="y"), frame["y"]
    X_train, X_test, y_train, y_test = train_test_split(
        X, y, test_size=0.2, random_state=0, stratify=y
    )
    print(f"{args.rows:,} rows (table seed {args.table_seed}); the check with more learners "
          f"{'off' if args.without else 'on'}")  # fmt: skip
    print("random_state  inner F1  training F1  holdout F1  rules  learner_factor  warned  fit s")
    for state in seeds(args.random_states):
        started = time.perf_counter()
        with warnings.catch_warnings(record=True) as said:
            warnings.simplefilter("always")
            model = LibreClassifier(random_state=state).fit(X_train, y_train)
        seconds = time.perf_counter() - started
        warned = any("far below" in str(w.message) for w in said)
        inner = model.auto_inner_score()
        train = f1_score(y_train, model.predict(X_train), pos_label="yes")
        test = f1_score(y_test, model.predict(X_test), pos_label="yes")
        print(
            f"{state:>12}  {inner:>8.3f}  {train:>11.3f}  {test:>10.3f}  {len(model.rules_):>5}  "
            f"{model.learner_factor_:>14}  {warned!s:>6}  {seconds:>5.1f}",
            flush=True,
        )


if __name__ == "__main__":
    main()
