"""The default search on many rows: capped or uncapped ChiMerge bins in its H1 half.

    python benchmarks/search_rows.py --rows 80000 --grid default
    python benchmarks/search_rows.py --rows 80000 --grid uncapped

Above ``AUTO_UNCAPPED_ROWS`` training rows (50,000) ``LibreSearchCV()``'s default grid puts its
H1 half on capped bins (``max_intervals=3``), as ``LibreClassifier``'s "auto" does. This script
measures what that costs and saves: it draws the messy synthetic table of
``benchmarks/synthetic.py`` (10 uniform numbers, a learnable label with 5 % noise, two
irrelevant categorical columns, 1 % missing cells), keeps 75 % for training (stratified, seed
0), fits ``LibreSearchCV(random_state=0, n_jobs=2)`` in a child process with the default grid
(``default``) or with the default grid of uncapped bins passed explicitly (``uncapped``, the
grid the search used on any number of rows before), and prints one JSON line: rows, grid
points, seconds, the chosen parameters, the number of rules and the test F1. ``--timeout``
bounds a run (the child is then killed, with its workers, and the run reported as not
finished).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np
from _machine import kill_tree


def fit(rows: int, grid: str, seed: int) -> dict:
    from sklearn.model_selection import train_test_split
    from synthetic import f1, make_frame

    from libre_lib import LibreSearchCV
    from libre_lib.search import default_grid

    warnings.simplefilter("ignore")
    X, y = make_frame(rows, seed=seed, messy=True)
    X_train, X_test, y_train, y_test = train_test_split(
        X, y, train_size=0.75, stratify=y, random_state=0
    )
    param_grid = default_grid(int(np.sum(y_train))) if grid == "uncapped" else None
    search = LibreSearchCV(param_grid, random_state=0, n_jobs=2)
    started = time.perf_counter()
    search.fit(X_train, y_train)
    seconds = time.perf_counter() - started
    return {
        "rows": rows,
        "training_rows": int(X_train.shape[0]),
        "grid": grid,
        "grid_points": len(search.cv_results_["params"]),
        "seconds": round(seconds, 1),
        "max_intervals": search.best_params_.get("max_intervals"),
        "rules": len(search.rules_),
        "test_f1": round(f1(np.asarray(y_test), search.predict(X_test)), 4),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=80_000)
    parser.add_argument("--grid", choices=("default", "uncapped"), default="default")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--timeout", type=float, default=1800.0, help="seconds per run")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(fit(args.rows, args.grid, args.seed)), flush=True)
        return
    cmd = [sys.executable, str(Path(__file__).resolve()), "--child"]
    cmd += ["--rows", str(args.rows), "--grid", args.grid, "--seed", str(args.seed)]
    started = time.perf_counter()
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        child = subprocess.Popen(cmd, stdout=out, stderr=err, text=True)
        try:
            child.wait(timeout=args.timeout)
        except subprocess.TimeoutExpired:
            import psutil

            kill_tree(psutil.Process(child.pid))
            child.wait()
        out.seek(0), err.seek(0)
        lines = out.read().strip().splitlines()
        if child.returncode == 0 and lines:
            result = json.loads(lines[-1])
        elif time.perf_counter() - started >= args.timeout:
            result = {"rows": args.rows, "grid": args.grid, "status": "not finished"}
            result["seconds"] = f"> {args.timeout:.0f}"
        else:
            result = {"rows": args.rows, "grid": args.grid, "status": "failed"}
            result["error"] = err.read().strip().splitlines()[-1:]
    result["wall_seconds"] = round(time.perf_counter() - started, 1)
    print(json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
