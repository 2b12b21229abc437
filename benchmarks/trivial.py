"""Each method against the trivial answers, on the paper table's folds: test accuracy against
the majority rate, and F1 against answering "positive" everywhere.

Tells where no method beats a trivial classifier (the issue's "say so instead of tuning for
it"): the methods are run as ``benchmarks/paper_table.py`` runs them (same stratified 5-fold
split, seed 0, peers depth-tuned by inner 5-fold F1), and a row per dataset gives each method's
mean test accuracy and F1 next to the trivial answers'.

    python benchmarks/trivial.py --datasets haberman hepatitis
    python benchmarks/trivial.py --methods DT "LIBRE default" --datasets adult bank
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np
from sklearn.model_selection import StratifiedKFold

sys.path.insert(0, str(Path(__file__).resolve().parent))

import paper_table

from libre_lib.datasets import dataset_names, load_dataset
from libre_lib.estimator import f1_score

METHODS = ("LIBRE default", "DT", "RF")


def measure(name: str, methods, cfg) -> dict:
    """Mean test accuracy and F1 per method over the 5 outer folds, and the trivial answers'."""
    X, y, info = load_dataset(name)
    positive = (y == info.positive_class).to_numpy()
    folds = list(StratifiedKFold(5, shuffle=True, random_state=cfg.seed).split(X, positive))
    rate = positive.mean()
    out = {
        "majority": float(max(rate, 1 - rate)),
        "all positive F1": float(
            np.mean([f1_score(positive[t], np.ones(len(t), bool)) for _, t in folds])
        ),
    }
    for method in methods:
        started = time.perf_counter()
        accuracy, f1 = [], []
        for train, test in folds:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                fitted = paper_table.run_method(
                    method, X.iloc[train], y.iloc[train], X.iloc[test], info, cfg
                )
            accuracy.append(float(np.mean(fitted["pred"] == positive[test])))
            f1.append(f1_score(positive[test], fitted["pred"]))
        out[method] = (float(np.mean(accuracy)), float(np.mean(f1)))
        print(
            f"{name} {method}: accuracy {out[method][0]:.3f}, F1 {out[method][1]:.3f} "
            f"({time.perf_counter() - started:.0f} s)",
            file=sys.stderr,
            flush=True,
        )
    return out


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", nargs="+", required=True, choices=dataset_names())
    parser.add_argument("--methods", nargs="+", default=list(METHODS), choices=METHODS)
    parser.add_argument("--n-jobs", type=int, default=2)
    args = parser.parse_args(argv)
    cfg = paper_table.Config(grid=None, inner_cv=5, seed=0, n_jobs=args.n_jobs)
    header = ["dataset", "majority rate", *(f"{m} accuracy" for m in args.methods)]
    header += ["all-positive F1", *(f"{m} F1" for m in args.methods), "beats the majority"]
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for name in args.datasets:
        row = measure(name, args.methods, cfg)
        beats = [m for m in args.methods if row[m][0] > row["majority"]]
        cells = [name, f"{row['majority']:.3f}", *(f"{row[m][0]:.3f}" for m in args.methods)]
        cells += [f"{row['all positive F1']:.3f}", *(f"{row[m][1]:.3f}" for m in args.methods)]
        cells.append(", ".join(beats) if beats else "none")
        print("| " + " | ".join(cells) + " |", flush=True)


if __name__ == "__main__":
    main()
