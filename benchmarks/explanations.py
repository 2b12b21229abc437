"""Scoring rows that fire many long rules (docs/benchmarks.md, "Long explanations").

    python benchmarks/explanations.py --rows 100000 300000 --folder /tmp/libre-explanations

A 40-rule model of magic (``LibreClassifier(max_rules=None, max_intervals=None, alpha=0.5,
conflict_tolerance=0.5, chi2_threshold=6.0, random_state=0)``) scores Parquet files of magic
rows drawn (with replacement) from the 200 that fire the most rules, each file in one batch
(``batch_rows`` = its rows). Every measurement runs in a fresh subprocess and prints its
outcome, seconds and peak RSS (the process's own high-water mark).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
import warnings
from pathlib import Path

import numpy as np


def _peak_mib() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) // 1024
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024


def prepare(folder: Path, rows: list[int]) -> Path:
    from libre_lib import LibreClassifier
    from libre_lib.datasets import load_dataset

    folder.mkdir(parents=True, exist_ok=True)
    model_path = folder / "model.json"
    X, y, info = load_dataset("magic")
    if not model_path.exists():
        model = LibreClassifier(
            positive_class=info.positive_class,
            max_rules=None,
            max_intervals=None,
            alpha=0.5,
            conflict_tolerance=0.5,
            chi2_threshold=6.0,
            random_state=0,
        ).fit(X, y)
        model_path.write_text(model.to_json())
    model = LibreClassifier.from_json(model_path.read_text())
    heavy = X.iloc[np.argsort(-model.fired_rules(X).sum(axis=1), kind="stable")[:200]]
    for n in rows:
        path = folder / f"heavy_{n}.parquet"
        if not path.exists():
            heavy.sample(n, replace=True, random_state=0).reset_index(drop=True).to_parquet(path)
    print(f"model: {len(model.rules_)} rules", flush=True)
    return model_path


def measure(folder: Path, n: int) -> None:
    from libre_lib import LibreClassifier
    from libre_lib.ops.scoring import score_files

    model = LibreClassifier.from_json((folder / "model.json").read_text())
    start = time.perf_counter()
    try:
        score_files(model, folder / f"heavy_{n}.parquet", folder / "out.parquet", batch_rows=n)
        outcome = "ok"
    except Exception as error:  # the figure to report is the failure itself
        outcome = f"{type(error).__name__}: {str(error)[:80]}"
    seconds = time.perf_counter() - start
    print(f"| {n:,} | {outcome} | {seconds:.1f} | {_peak_mib():,} |", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, nargs="+", default=[100_000, 300_000])
    parser.add_argument("--folder", type=Path, default=Path("/tmp/libre-explanations"))
    parser.add_argument("--measure", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    if args.measure:
        measure(args.folder, args.measure)
        return
    prepare(args.folder, args.rows)
    print("| rows (one batch) | outcome | seconds | peak RSS MiB |")
    print("|---|---|---|---|")
    for n in args.rows:
        subprocess.run(
            [sys.executable, __file__, "--folder", str(args.folder), "--measure", str(n)],
            check=True,
        )


if __name__ == "__main__":
    main()
