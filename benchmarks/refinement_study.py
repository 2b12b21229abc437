"""Boundary refinement (sixteenth design round): outer F1 with and without it.

    python benchmarks/refinement_study.py run --method search --datasets pima wdbc \\
        --out /tmp/refine
    python benchmarks/refinement_study.py report /tmp/refine
    python benchmarks/refinement_study.py speed --rows 1000000

For each outer fold of the paper's protocol (stratified 5-fold, seed 0) ``run`` fits
``LibreSearchCV(refine=None)`` (``--method search``) or ``LibreClassifier()`` (``--method
default``) on the outer training fold, then refines the fitted rules on the same rows with three
objectives: the model's own set-cover gain (its ``alpha_``), accuracy (``refine="accuracy"``)
and F1 (``refine="f1"``). One fit gives all four models, so the comparison is paired: the rules
before refinement are those the estimator ships with ``refine=None``. It writes
``<out>/<dataset>_<method>.json`` (per fold: test F1 and accuracy of every variant, training F1,
rules changed, times). ``report`` prints, per method, the mean test F1 of each variant per
dataset, its mean over the datasets without haberman (where no method beats answering
"positive" everywhere) and its change, and the worst single-dataset change. ``speed`` times a
fit and its refinement on synthetic rows.

``run --speck F`` measures the seventeenth round's candidate instead (its ``plain`` figures):
every numeric column's ChiMerge intervals hold at least F times the column's smaller class
count of rows, smaller ones merged first into their more similar neighbour. The floor is applied
in this process only, so it needs ``--n-jobs 1``.

``run --tree-cuts`` measures the eighteenth round's candidate (its ``plain`` figures): every
numeric column's cut points are ChiMerge's plus the thresholds at which a decision tree (16
leaves, leaves of at least max(5, 1 % of the rows)) fitted on the same rows splits that column.
In this process only too.

``run --seed-share majority|enriched|both`` measures the nineteenth round's candidates: a
learner's distinct record is a positive (a seed) only when its positive share exceeds 1/2, or
the training rows' positive share; or each learner runs with every positive seeding and with
majority seeds, and keeps the union of both. In this process only.

``run --significance`` measures the twentieth round's candidate, now the estimators'
``significant_cuts=True``: after ChiMerge, the adjacent pair of intervals whose class counts
differ least significantly (Fisher's exact test) is merged while its p-value exceeds the
chi-square threshold's level divided by the number of places ChiMerge could cut.
"""

from __future__ import annotations

import argparse
import copy
import json
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.metrics import f1_score
from sklearn.model_selection import StratifiedKFold

from libre_lib import LibreClassifier, LibreSearchCV, discretization
from libre_lib.datasets import load_dataset
from libre_lib.inputs import as_frame, binary_target, pandas_frame
from libre_lib.rules import RuleSet
from libre_lib.selection import refine_rules

DESIGN = [
    *("haberman", "pima", "tictactoe", "australian", "credit_approval", "wdbc", "magic", "adult")
]
VARIANTS = ("plain", "gain", "acc", "f1")
NO_SIGNAL = "haberman"


def floor_chimerge(fraction: float) -> None:
    """The seventeenth round's speck floor, in this process: ChiMerge's intervals hold at least
    ``fraction`` x the column's smaller class count (the existing ``min_count`` merge step)."""
    plain = discretization._cuts_from_counts

    def floored(distinct, counts, threshold, max_intervals, max_prebins, min_count=0.0, *more):
        smaller = float(np.asarray(counts, dtype=np.float64).sum(axis=0).min())
        floor = max(min_count, fraction * smaller)
        return plain(distinct, counts, threshold, max_intervals, max_prebins, floor, *more)

    discretization._cuts_from_counts = floored


def tree_cuts() -> None:
    """The eighteenth round's candidate, in this process: every numeric column's cut points are
    ChiMerge's plus the thresholds at which a decision tree fitted on the same rows (numeric
    columns only, 16 leaves, leaves of at least max(5, 1 % of the rows)) splits that column."""
    import dataclasses
    import math

    from sklearn.tree import DecisionTreeClassifier

    from libre_lib import LibreClassifier
    from libre_lib.discretization import NUMERIC, Discretization
    from libre_lib.inputs import resolve_categorical

    plain = LibreClassifier.discretize

    def with_tree(self, frame, target, *args, **kwargs):
        found = plain(self, frame, target, *args, **kwargs)
        categorical = resolve_categorical(frame, self.categorical_features, warn=False)
        positive, weight = target.positive, target.weight
        numeric = [n for n, c in zip(frame.columns, categorical, strict=True) if not c]
        if not numeric:
            return found
        X = frame[numeric].apply(pd.to_numeric, errors="coerce").to_numpy(dtype=np.float64)
        tree = DecisionTreeClassifier(
            max_leaf_nodes=16,
            min_samples_leaf=max(5, math.ceil(0.01 * len(frame))),
            random_state=0,
        ).fit(X, np.asarray(positive, dtype=bool), sample_weight=weight)
        split = tree.tree_.feature >= 0
        extra: dict[str, set] = {}
        for column, threshold in zip(
            tree.tree_.feature[split], tree.tree_.threshold[split], strict=True
        ):
            extra.setdefault(numeric[column], set()).add(float(threshold))
        features = tuple(
            dataclasses.replace(f, cuts=tuple(sorted(set(f.cuts) | extra[f.name])))
            if f.kind == NUMERIC and f.name in extra
            else f
            for f in found.features
        )
        return Discretization(features, found.dropped)

    LibreClassifier.discretize = with_tree


def seed_floor(mode: str) -> None:
    """The nineteenth round's candidates, in this process: a learner's distinct record seeds
    only when its positive share exceeds 1/2 (``majority``) or the training rows' positive
    share (``enriched``), other records staying negatives; or (``both``) the union of the
    learner's points with every positive seeding and with majority seeds."""
    from libre_lib import ensemble, search

    plain = ensemble.learn_subset

    def floored(records, n_bins, subset, heuristic="H1", seeds="uncovered", tolerance=0.0):
        if mode == "both":
            parts = [
                plain(records, n_bins, subset, heuristic, seeds, tolerance, share)
                for share in (0.0, 0.5)
            ]
            return ensemble.union_candidates(parts, int(np.sum(n_bins)))
        positives = float(records.positive_weight.sum())
        share = (
            0.5
            if mode == "majority"
            else positives / (positives + float(records.negative_weight.sum()))
        )
        return plain(records, n_bins, subset, heuristic, seeds, tolerance, share)

    ensemble.learn_subset = search.learn_subset = floored


def make_estimator(method: str, positive_class, n_jobs: int, significant_cuts: bool = False):
    """The estimator a fold fits: the search (unrefined) or ``LibreClassifier()``, with the
    twentieth round's ``significant_cuts`` when asked."""
    base = LibreClassifier(
        positive_class=positive_class, random_state=0, significant_cuts=significant_cuts
    )
    if method == "search":
        return LibreSearchCV(
            estimator=base, positive_class=positive_class, random_state=0, n_jobs=n_jobs
        )
    return base


def run(name: str, method: str, n_jobs: int, significant_cuts: bool = False) -> dict:
    X, y, info = load_dataset(name)
    positive = (y == info.positive_class).to_numpy()
    folds = StratifiedKFold(5, shuffle=True, random_state=0).split(X, positive)
    out = []
    for fold, (train, test) in enumerate(folds):
        estimator = make_estimator(method, info.positive_class, n_jobs, significant_cuts)
        started = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            estimator.fit(X.iloc[train], y.iloc[train])
        row = {"fold": fold, "fit_s": time.perf_counter() - started}
        model = estimator.best_estimator_ if method == "search" else estimator
        frame = as_frame(pandas_frame(X.iloc[train]))
        truth = binary_target(y.iloc[train], info.positive_class)
        rules = {"plain": model.rules_.rules}
        for variant, objective in (("gain", model.alpha_), ("acc", 0.5), ("f1", "f1")):
            started = time.perf_counter()
            rules[variant] = tuple(refine_rules(model.rules_.rules, frame, truth, objective))
            row[variant + "_s"] = time.perf_counter() - started
        row["rules"] = len(model.rules_)
        row["alpha"] = str(model.alpha_)
        for variant, chosen in rules.items():
            shown = copy.copy(model)
            shown.rules_ = RuleSet(
                chosen,
                model.rules_.target,
                model.rules_.positive_class,
                model.rules_.negative_class,
            )
            pred = shown.predict(X.iloc[test]) == info.positive_class
            row[variant] = float(f1_score(positive[test], pred, zero_division=0.0))
            row[variant + "_acc"] = float(np.mean(pred == positive[test]))
            fitted = shown.predict(X.iloc[train]) == info.positive_class
            row[variant + "_train"] = float(f1_score(positive[train], fitted, zero_division=0.0))
            row[variant + "_changed"] = sum(
                a != b for a, b in zip(model.rules_.rules, chosen, strict=True)
            )
        out.append(row)
        print(name, method, json.dumps(row), flush=True)
    keys = [*VARIANTS, *(v + "_acc" for v in VARIANTS), "rules", "fit_s", "f1_s"]
    summary = {k: float(np.mean([r[k] for r in out])) for k in keys}
    return {"name": name, "method": method, "folds": out, "summary": summary}


def _mean(rows: dict, names: list[str], variant: str) -> float:
    return float(np.mean([rows[n][variant] for n in names])) if names else float("nan")


def report(folder: Path) -> None:
    for method in ("search", "default"):
        rows = {}
        for name in DESIGN:
            path = folder / f"{name}_{method}.json"
            if path.exists():
                rows[name] = json.loads(path.read_text())["summary"]
        if not rows:
            continue
        names = [n for n in DESIGN if n in rows]
        rest = [n for n in names if n != NO_SIGNAL]

        base = _mean(rows, rest, "plain")
        print(f"\n{method}: mean test F1 over the 5 outer folds (accuracy below)")
        print("| variant | " + " | ".join(names) + " | mean w/o haberman | change | worst change |")
        print("|---" * (len(names) + 4) + "|")
        for v in VARIANTS:
            mean = _mean(rows, rest, v)
            worst = min(rows[n][v] - rows[n]["plain"] for n in names)
            cells = " | ".join(f"{rows[n][v]:.3f}" for n in names)
            print(f"| {v} | {cells} | {mean:.4f} | {mean - base:+.4f} | {worst:+.4f} |")
        for v in VARIANTS:
            print(f"| {v} accuracy | " + " | ".join(f"{rows[n][v + '_acc']:.3f}" for n in names))


def speed(n_rows: int) -> None:
    """Seconds to fit and to refine on ``n_rows`` synthetic rows (the learnable label of
    ``benchmarks/synthetic.py``, 10 numeric columns), 8 rules."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from synthetic import make_frame

    X, y = make_frame(n_rows, seed=0)[:2]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        started = time.perf_counter()
        model = LibreClassifier(
            random_state=0, max_rules=8, alpha=0.5, max_intervals=3, conflict_tolerance=0
        ).fit(X, y)
        fit = time.perf_counter() - started
    frame = as_frame(pandas_frame(X))
    truth = binary_target(y, model.positive_class_)
    print(f"{n_rows:,} rows: fit {fit:.2f} s, {len(model.rules_)} rules")
    for name, objective in (("f1", "f1"), ("accuracy", 0.5)):
        started = time.perf_counter()
        refined = refine_rules(model.rules_.rules, frame, truth, objective)
        moved = sum(a != b for a, b in zip(refined, model.rules_.rules, strict=True))
        print(f"  refine={name}: {time.perf_counter() - started:.2f} s, {moved} rules moved")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    go = sub.add_parser("run")
    go.add_argument("--method", choices=("search", "default"), required=True)
    go.add_argument("--datasets", nargs="+", default=DESIGN)
    go.add_argument("--out", type=Path, required=True)
    go.add_argument("--n-jobs", type=int, default=1)
    go.add_argument("--speck", type=float, default=0.0, metavar="F")
    go.add_argument("--tree-cuts", action="store_true")
    go.add_argument("--seed-share", choices=("majority", "enriched", "both"))
    go.add_argument("--significance", action="store_true")
    show = sub.add_parser("report")
    show.add_argument("folder", type=Path)
    fast = sub.add_parser("speed")
    fast.add_argument("--rows", type=int, default=1_000_000)
    args = parser.parse_args()
    if args.command == "report":
        report(args.folder)
        return
    if args.command == "speed":
        speed(args.rows)
        return
    if args.speck > 0:
        if args.n_jobs != 1:
            parser.error("--speck applies in this process only: use --n-jobs 1")
        floor_chimerge(args.speck)
    if args.tree_cuts:
        if args.n_jobs != 1:
            parser.error("--tree-cuts applies in this process only: use --n-jobs 1")
        tree_cuts()
    if args.seed_share:
        if args.n_jobs != 1:
            parser.error("--seed-share applies in this process only: use --n-jobs 1")
        seed_floor(args.seed_share)
    args.out.mkdir(parents=True, exist_ok=True)
    for name in args.datasets:
        result = run(name, args.method, args.n_jobs, args.significance)
        (args.out / f"{name}_{args.method}.json").write_text(json.dumps(result))
        print("SUMMARY", name, args.method, json.dumps(result["summary"]), flush=True)


if __name__ == "__main__":
    main()
