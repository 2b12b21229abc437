"""Holdout F1 of ``LibreClassifier(random_state=0)`` as the training rows grow, on the synthetic
label of benchmarks/synthetic.py with and without its categorical columns and missing cells.

    python benchmarks/growth_quality.py --rows 100000 1000000 5000000

Every size runs in a fresh process (one after the other: the machine is shared); the model is
scored on 200,000 fresh rows (seed 99) of the same kind. Prints one markdown table row per run:
data, rows, fit seconds, peak RSS, the values "auto" chose, rules, holdout F1 and the
Bayes-optimal F1 of that data.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
import warnings
from pathlib import Path

HOLDOUT_ROWS, HOLDOUT_SEED = 200_000, 99
BAYES = {False: 0.8991, True: 0.8927}  # synthetic.py --bayes (2,000,000 fresh rows)


def work(n: int, messy: bool) -> dict:
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from synthetic import f1, make_frame

    from libre_lib import LibreClassifier

    X, y = make_frame(n, seed=0, messy=messy)
    test, truth = make_frame(HOLDOUT_ROWS, seed=HOLDOUT_SEED, messy=messy)
    warnings.simplefilter("ignore")
    started = time.perf_counter()
    model = LibreClassifier(random_state=0).fit(X, y)
    seconds = time.perf_counter() - started
    return {
        "n": n,
        "messy": messy,
        "fit_s": seconds,
        "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0,
        "chosen": {k: getattr(model, k + "_") for k in ("conflict_tolerance", "max_rules")},
        "rules": len(model.rules_),
        "f1": f1(truth, model.predict(test).astype(bool)),
        "text": str(model.rules_),
    }


def row(r: dict) -> str:
    data = "categorical + missing" if r["messy"] else "numbers only"
    chosen = f"τ={r['chosen']['conflict_tolerance']:g}, max_rules={r['chosen']['max_rules']}"
    return (
        f"| {data} | {r['n']:,} | {r['fit_s']:.0f} | {r['rss_mb']:.0f} | {chosen} | "
        f"{r['rules']} | {r['f1']:.3f} | {BAYES[r['messy']]:.3f} |"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, nargs="+", default=[100_000, 1_000_000])
    parser.add_argument("--data", choices=["both", "messy", "plain"], default="both")
    parser.add_argument("--rules", action="store_true", help="also print each model's rules")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        n, messy = json.loads(args.worker)
        print(json.dumps(work(n, messy)))
        return
    kinds = {"both": [True, False], "messy": [True], "plain": [False]}[args.data]
    print("| data | rows | fit s | peak RSS MB | chosen | rules | holdout F1 | Bayes F1 |")
    print("|---|---:|---:|---:|---|---:|---:|---:|")
    for messy in kinds:
        for n in args.rows:
            cmd = [sys.executable, __file__, "--worker", json.dumps([n, messy])]
            done = subprocess.run(cmd, capture_output=True, text=True, check=True)
            result = json.loads(done.stdout.strip().splitlines()[-1])
            print(row(result), flush=True)
            if args.rules:
                print(result["text"], file=sys.stderr, flush=True)


if __name__ == "__main__":
    main()
