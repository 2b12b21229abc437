"""Nested-CV study of LibreSearchCV's choices (grid, choice rule), without tuning on test folds.

For every outer fold of the paper's protocol (``StratifiedKFold(5, shuffle=True,
random_state=0)`` on the positive-class mask, as in ``paper_table.py``) it runs ONE inner search
over a superset grid on the outer training fold (inner 5-fold, 3-fold above 20,000 rows) and
records, for every grid point, the inner mean F1 and mean #rules *and* the outer test F1 and
#rules of that point refitted on the outer training fold (computed with the search's exact
shared-work evaluation, identical to ``LibreClassifier(**params).fit``).

A choice rule (a sub-grid plus ``score_tolerance``) is then replayed offline: it picks a point
from the inner figures only, and only the picked point's outer figures are reported. So every
reported figure is a nested-CV estimate of "LibreSearchCV with that sub-grid and tolerance".
Comparing several rules on the same outer folds still means choosing among them with the test
folds: treat small differences as noise and say so.

    python benchmarks/tuning_study.py run --grid sizes --out /tmp/study_sizes.json
    python benchmarks/tuning_study.py report /tmp/study_sizes.json

Grids: ``early`` (paper grid x early stop 1..10), ``sizes`` (paper grid x early stop x
subset_sizes), ``tolerance`` (the H1 half of ``sizes`` x conflict_tolerance; with ``sizes``
the default's superset), ``wide`` (+ max_intervals, min_local_support, top_k)
and ``large`` (finding 3 on adult and bank), ``intervals`` (the default's H1 half x the
discretization cap), ``support`` (adult: cap, support filter and top-K with the
tolerance), ``default`` (the default grid, both halves, with the early stops it had until
round nine, :data:`STUDY_STOPS`), ``default-large`` (the same on large data),
``default-wide`` (the default grid with ``n_estimators`` 200 too, for data padded to 60
columns with ``run --pad 60``: :func:`padded`). Results and their reading: docs/benchmarks.md.

    python benchmarks/tuning_study.py choice FILE...    # the search's choice rule and three others
    python benchmarks/tuning_study.py paired FILE...    # round 8: paired-difference rules
    python benchmarks/tuning_study.py bounds FILE...    # the best single grid point (on the
                                                        # test folds: an upper bound, not a result)
    python benchmarks/tuning_study.py wide FILE...      # the grid with / without its largest
                                                        # n_estimators
    python benchmarks/tuning_study.py stops FILE...     # round 9: the early stops up to 13
                                                        # (--candidate 1 2 3 5 8: round 21)
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import time
import warnings
from pathlib import Path

import numpy as np
from _docs import axis_values
from sklearn.model_selection import ParameterGrid, RepeatedStratifiedKFold, StratifiedKFold

from libre_lib import LibreClassifier, LibreSearchCV
from libre_lib.datasets import load_dataset
from libre_lib.ops.files import atomic_write_text
from libre_lib.search import (
    DEFAULT_GRID,
    EARLY_STOP,
    LARGE_DATA_GRID,
    PAPER_GRID,
    SELECTION_FILTERS,
    _evaluate,
    _labels,
    choose_candidate,
    resolve_tolerance,
)

logger = logging.getLogger("tuning_study")

DATASETS = ["haberman", "liver", "transfusion", "pima", "australian", "tictactoe", "bank", "adult"]
LARGE = 20_000
PAPER = {  # the paper's LIBRE F1 and #rules
    "adult": (0.70, 14.0),
    "australian": (0.84, 2.4),
    "bank": (0.55, 15.0),
    "haberman": (0.41, 1.6),
    "liver": (0.60, 3.4),
    "pima": (0.64, 1.6),
    "tictactoe": (1.00, 9.0),
    "transfusion": (0.49, 1.2),
}
#: The early stops of the default grid until the ninth study round (it ends at 8 since round 21,
#: :data:`EARLY_STOP`): the study grids keep them, so that earlier rounds replay and round nine
#: compares both.
STUDY_STOPS = [1, 2, 3, 5, 8, 13, 21, None]


def _study_stops(parts) -> list[dict]:
    """Grid parts with the early stops of :data:`STUDY_STOPS`."""
    return [{**part, "max_rules": STUDY_STOPS} for part in parts]


_DEFAULT = _study_stops(DEFAULT_GRID)
FINE_CHI2 = 2.71  # round 15: ChiMerge at 90 % confidence (one degree of freedom)
_LARGE = _study_stops(LARGE_DATA_GRID)

GRIDS = {
    # the paper's grid x the early stop 1..10 (None = no early stop)
    "early": {**PAPER_GRID, "max_rules": [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, None]},
    # the paper's grid x the early stop x the learners' subset-size policy (finding 4)
    "sizes": {
        **PAPER_GRID,
        "max_rules": [1, 2, 3, 5, 8, None],
        "subset_sizes": ["cycle", "fixed"],
    },
    # finding 3 on the large datasets: cap, support filter and top-K with the early stop
    "large": {
        "n_estimators": [50],
        "alpha": [0.5, 0.7],
        "chi2_threshold": [6.0],
        "max_rules": [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 12, 14, None],
        "max_intervals": [3, None],
        "min_local_support": [0.05, 0.01],
        "top_k": [200, None],
    },
    # the tolerant conflict test (H1 only: it needs H1 and uncovered seeds) with the early stop
    # and the subset-size policy
    "tolerance": {
        **PAPER_GRID,
        "heuristic": ["H1"],
        "max_rules": [1, 2, 3, 5, 8, None],
        "subset_sizes": ["cycle", "fixed"],
        "conflict_tolerance": [0.0, 0.25, 0.5],
    },
    # ... times the discretization cap, the support filter and the top-K cut (finding 3)
    "wide": {
        **PAPER_GRID,
        "max_rules": [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, None],
        "max_intervals": [3, None],
        "min_local_support": [0.05, 0.01],
        "top_k": [200, None],
    },
    # the default grid's H1 half x the discretization cap (finding 2: transfusion)
    "intervals": {
        **PAPER_GRID,
        "heuristic": ["H1"],
        "max_rules": [1, 2, 3, 5, 8, None],
        "subset_sizes": ["cycle", "fixed"],
        "conflict_tolerance": [0.0, 0.5],
        "max_intervals": [3, None],
    },
    # the default grid itself (both halves, early stops up to round nine), to replay sub-grids
    "default": _DEFAULT,
    # ... and the default grid on large data (from 1,000 positives: magic, adult, bank, spambase)
    "default-large": _LARGE,
    # the default grid with a fourth n_estimators value: the wide-data study (60 columns)
    "default-wide": [{**part, "n_estimators": [5, 20, 50, 200]} for part in _DEFAULT],
    # ... with a looser conflict tolerance (1: a grown rule may cover as many negatives as
    # positives) tried too
    "broad": [{**_DEFAULT[0], "conflict_tolerance": [0.0, 0.5, 1.0]}, dict(_DEFAULT[1])],
    # the design study (benchmarks/protocol.py): the default grid, its H1 half also on capped
    # bins (so that LibreClassifier()'s own defaults are a point of it)
    "design": [{**_DEFAULT[0], "max_intervals": [3, None]}, dict(_DEFAULT[1])],
    # round 15: the default grids (early stops up to 13) with a fourth, lower ChiMerge threshold
    "chi2": [
        {**part, "chi2_threshold": [*PAPER_GRID["chi2_threshold"], FINE_CHI2]}
        for part in DEFAULT_GRID
    ],
    "chi2-large": [
        {**part, "chi2_threshold": [*PAPER_GRID["chi2_threshold"], FINE_CHI2]}
        for part in LARGE_DATA_GRID
    ],
    # ... with the selection filters of the large-data grid
    "design-large": [
        {**_DEFAULT[0], "max_intervals": [3, None], **SELECTION_FILTERS},
        dict(_DEFAULT[1]),
    ],
    # adult (finding 1): the cap, the support filter and top-K with the tolerance
    "support": {
        "n_estimators": [20, 50],
        "heuristic": ["H1"],
        "alpha": [0.5, 0.7, 0.9],
        "chi2_threshold": [6.0],
        "max_rules": [1, 2, 3, 5, 8, 14, None],
        "subset_sizes": ["cycle", "fixed"],
        "conflict_tolerance": [0.0, 0.5],
        "max_intervals": [3, None],
        "min_local_support": [0.05, 0.01],
        "top_k": [200, None],
    },
}


def padded(X, width: int, seed: int = 0):
    """``X`` widened to ``width`` columns with permuted copies of its own columns (``pad0``,
    ``pad1``, ...): the marginals of real columns, no signal. Wide data for a design half
    that has none."""
    rng = np.random.RandomState(seed)
    extra = {}
    for i in range(max(width - X.shape[1], 0)):
        source = X.columns[rng.randint(X.shape[1])]
        extra[f"pad{i}"] = X[source].to_numpy()[rng.permutation(len(X))]
    return X.assign(**extra) if extra else X


def run(
    datasets, grid, out: Path, seed=0, n_jobs=2, extra=None, folds=None, repeats=1, pad=None
) -> None:
    """Run the study; ``folds`` (0-based outer fold numbers) runs only those, so that one
    dataset can be split over processes (merge the files with ``merge``); ``repeats`` > 1
    repeats the inner stratified k-fold with that many shuffles; ``pad`` widens every dataset
    to that many columns (:func:`padded`)."""
    results = json.loads(out.read_text()) if out.exists() else {}
    fixed = {k: [v] for k, v in (extra or {}).items()}
    grid = [{**part, **fixed} for part in grid] if isinstance(grid, list) else {**grid, **fixed}
    points = list(ParameterGrid(grid))
    for name in datasets:
        if name in results:
            continue
        X, y, info = load_dataset(name)
        if pad:
            X = padded(X, pad, seed)
        positive = (y == info.positive_class).to_numpy()
        labels = _labels(y)
        inner = 3 if len(X) > LARGE else 5
        splits = list(StratifiedKFold(5, shuffle=True, random_state=seed).split(X, positive))
        entry = {
            "params": [json.dumps(p, sort_keys=True) for p in points],
            "inner_folds": inner,
            "inner_repeats": repeats,
            "fold_ids": [],
            "folds": [],
        }
        for k, (train, test) in enumerate(splits):
            if folds is not None and k not in folds:
                continue
            started = time.perf_counter()
            search = LibreSearchCV(
                grid,
                positive_class=info.positive_class,
                cv=(
                    StratifiedKFold(inner, shuffle=True, random_state=seed)
                    if repeats == 1
                    else RepeatedStratifiedKFold(
                        n_splits=inner, n_repeats=repeats, random_state=seed
                    )
                ),
                refit=False,
                n_jobs=n_jobs,
                random_state=seed,
            )
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                search.fit(X.iloc[train], y.iloc[train])
            candidates = search._candidates(
                search._base_params(info.positive_class), int(positive[train].sum()), len(train)
            )
            candidates = [{**c, "random_state": seed} for c in candidates]
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                outer = _evaluate(X, labels, positive, (train, test), candidates, None)
            res = search.cv_results_
            entry["folds"].append(
                {
                    "inner_f1": res["mean_test_score"].tolist(),
                    "inner_rules": res["mean_n_rules"].tolist(),
                    "inner_std": res["std_test_score"].tolist(),
                    "inner_splits": np.round(
                        [res[f"split{j}_test_score"] for j in range(search.n_splits_)], 5
                    ).T.tolist(),
                    "f1": [r[0] for r in outer["results"]],
                    "rules": [r[1] for r in outer["results"]],
                    "atoms": [r[2] for r in outer["results"]],
                }
            )
            entry["fold_ids"].append(k)
            logger.info("%s fold %d done in %.1f s", name, k + 1, time.perf_counter() - started)
        results[name] = entry
        atomic_write_text(out, json.dumps(results))


def merge(paths, out: Path) -> None:
    """One result file from several runs of the same grid over different outer folds."""
    merged = {}
    for path in paths:
        for name, entry in json.loads(Path(path).read_text()).items():
            into = merged.setdefault(name, {**entry, "fold_ids": [], "folds": []})
            if into["params"] != entry["params"]:
                raise SystemExit(f"{path}: {name} was run with another grid")
            into["fold_ids"] += entry.get("fold_ids", list(range(len(entry["folds"]))))
            into["folds"] += entry["folds"]
    for entry in merged.values():
        order = np.argsort(entry["fold_ids"])
        entry["fold_ids"] = [entry["fold_ids"][i] for i in order]
        entry["folds"] = [entry["folds"][i] for i in order]
    atomic_write_text(out, json.dumps(merged))


def replay(entry, keep, tolerance) -> dict:
    """Outer F1 / #rules / atoms per fold of the point picked from the inner figures only,
    among the points ``keep(params)`` accepts."""
    params = [json.loads(p) for p in entry["params"]]
    idx = np.array([i for i, p in enumerate(params) if keep(p)])
    f1, rules, atoms, chosen = [], [], [], []
    for fold in entry["folds"]:
        inner_f1 = np.asarray(fold["inner_f1"])[idx]
        inner_rules = np.asarray(fold["inner_rules"])[idx]
        if isinstance(tolerance, tuple):  # (score_tolerance, standard_errors): needs the
            std = np.asarray(fold["inner_std"])[idx]  # inner std (since the 'intervals' grid)
            tol = resolve_tolerance(*tolerance, inner_f1, std, entry.get("inner_folds", 5))
        else:
            tol = tolerance
        best = int(idx[choose_candidate(inner_f1, inner_rules, tol)])
        f1.append(fold["f1"][best])
        rules.append(fold["rules"][best])
        atoms.append(fold["atoms"][best])
        chosen.append(params[best])
    return {"f1": f1, "rules": rules, "atoms": atoms, "params": chosen}


DEFAULTS = {
    "max_rules": None,
    "max_intervals": 3,
    "min_local_support": 0.05,
    "top_k": 200,
    "subset_sizes": "cycle",
    "conflict_tolerance": 0.0,
}
STOP6 = [1, 2, 3, 5, 8, None]
STOP11 = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, None]
FIB = STUDY_STOPS  # the default's early stops until round nine, 1, 2, 3, 5, 8, 13, 21, None
FILTERS = SELECTION_FILTERS
# the previous default grid's axes (for the 'default' study: H1 uncapped, H2 capped)
PREVIOUS = {
    "subset_sizes": ["cycle", "fixed"],
    "conflict_tolerance": [0.0, 0.5],
    "max_intervals": [3, None],
}
SUBGRIDS = {  # name -> allowed values of the non-paper axes (the rest at DEFAULTS)
    "paper grid": {},
    "stop {1,2,3,5,8,-}": {"max_rules": STOP6},
    "stop 1..10,-": {"max_rules": STOP11},
    "stop6 + top_k {200,-}": {"max_rules": STOP6, "top_k": [200, None]},
    "stop6 + mls {.05,.01}": {"max_rules": STOP6, "min_local_support": [0.05, 0.01]},
    "stop6 + max_int {3,-}": {"max_rules": STOP6, "max_intervals": [3, None]},
    "stop6 + all three": {
        "max_rules": STOP6,
        "max_intervals": [3, None],
        "min_local_support": [0.05, 0.01],
        "top_k": [200, None],
    },
    "stop6 + sizes {cycle,fixed}": {"max_rules": STOP6, "subset_sizes": ["cycle", "fixed"]},
    "stop6 + sizes + conflict tol {0,.25,.5}": {
        "max_rules": STOP6,
        "subset_sizes": ["cycle", "fixed"],
        "conflict_tolerance": [0.0, 0.25, 0.5],
    },
    "stop6 + sizes + conflict tol {0,.5}": {
        "max_rules": STOP6,
        "subset_sizes": ["cycle", "fixed"],
        "conflict_tolerance": [0.0, 0.5],
    },
    "stop6 + sizes, conflict tol .5 only": {
        "max_rules": STOP6,
        "subset_sizes": ["cycle", "fixed"],
        "conflict_tolerance": [0.5],
    },
    "stop6 + sizes + conflict tol {0,.5}, max_int {3,-}": {
        "max_rules": STOP6,
        "subset_sizes": ["cycle", "fixed"],
        "conflict_tolerance": [0.0, 0.5],
        "max_intervals": [3, None],
    },
    "stop6 + sizes + conflict tol {0,.5}, uncapped": {
        "max_rules": STOP6,
        "subset_sizes": ["cycle", "fixed"],
        "conflict_tolerance": [0.0, 0.5],
        "max_intervals": [None],
    },
    # sub-grids of the default grid (--grid default); H1 uncapped, H2 capped
    "previous default (stop6, no filter axes)": {**PREVIOUS, "max_rules": STOP6},
    "stop Fibonacci, no filter axes": {**PREVIOUS, "max_rules": FIB},
    "stop6 + mls {.05,.01} x top_k {200,-}": {**PREVIOUS, "max_rules": STOP6, **FILTERS},
    "stop Fibonacci + mls {.05,.01}": {
        **PREVIOUS,
        "max_rules": FIB,
        "min_local_support": [0.05, 0.01],
    },
    "stop Fibonacci + top_k {200,-}": {**PREVIOUS, "max_rules": FIB, "top_k": [200, None]},
    "default: stop Fibonacci + mls x top_k": {**PREVIOUS, "max_rules": FIB, **FILTERS},
    "LIBRE 3": {"max_rules": [3]},
    "LIBRE 3 + sizes": {"max_rules": [3], "subset_sizes": ["cycle", "fixed"]},
}
# a number: that score_tolerance alone; a pair: (score_tolerance, standard_errors), the
# tolerance being the larger of the two (needs the inner std, recorded since 'intervals')
TOLERANCES = [0.0, 0.005, 0.01, 0.02, (0.0, 1.0), (0.01, 1.0)]


def _keep(allowed):
    def keep(p):
        return all(p.get(k, v) in allowed.get(k, [v]) for k, v in DEFAULTS.items())

    return keep


def _label(tol) -> str:
    return f"tol {tol:g}" if not isinstance(tol, tuple) else f"tol max({tol[0]:g}, {tol[1]:g} SE)"


RULES = {
    f"{name}, {_label(tol)}": (_keep(allowed), tol)
    for name, allowed in SUBGRIDS.items()
    for tol in TOLERANCES
}


def report(path: Path, rules=None) -> str:
    results = json.loads(path.read_text())
    names = [d for d in DATASETS if d in results]
    lines = [
        "| choice rule | " + " | ".join(names) + " | met | mean F1 - paper |",
        "|---|" + "---|" * (len(names) + 2),
    ]
    for label, (keep, tol) in (rules or RULES).items():
        cells, met, gaps = [], 0, []
        for d in names:
            if isinstance(tol, tuple) and "inner_std" not in results[d]["folds"][0]:
                cells.append("–")
                continue
            r = replay(results[d], keep, tol)
            f1, n = float(np.mean(r["f1"])), float(np.mean(r["rules"]))
            pf, pr = PAPER[d]
            ok = f1 >= pf - 0.02 and n <= pr
            met += ok
            gaps.append(f1 - pf)
            cells.append(f"{f1:.3f} / {n:.1f}{' ✓' if ok else ''}")
        lines.append(f"| {label} | " + " | ".join(cells) + f" | {met} | {np.mean(gaps):+.3f} |")
    return "\n".join(lines)


# -- the design study (benchmarks/protocol.py): choice rules replayed on the design half -------


def _is_default_grid(p) -> bool:
    """The point is in the default grid of the first round: H1 on uncapped bins, H2 on capped
    ones (any early stop)."""
    return p["heuristic"] == "H2" or p.get("max_intervals", 3) is None


def _paper_defaults() -> dict:
    """The estimator's previous defaults: the paper's selection (alpha 0.7, no inner choice)."""
    return {
        **LibreClassifier().get_params(),
        "alpha": 0.7,
        "max_rules": None,
        "conflict_tolerance": 0.0,
    }


def _is_untuned(p) -> bool:
    """The paper's selection with the estimator's other defaults (the previous default)."""
    untuned = _paper_defaults()
    return all(p.get(k, untuned[k]) == untuned[k] for k in p) and p["n_estimators"] == 50


def _tolerance_rule(tol):
    def choose(inner_f1, inner_rules, inner_std, n_inner, splits=None):
        t = resolve_tolerance(*tol, inner_f1, inner_std, n_inner) if isinstance(tol, tuple) else tol
        return choose_candidate(inner_f1, inner_rules, t)

    return choose


def _penalty_rule(per_rule):
    """The best inner F1 minus ``per_rule`` per rule (ties: fewer rules, then grid order)."""

    def choose(inner_f1, inner_rules, inner_std, n_inner, splits=None):
        value = inner_f1 - per_rule * inner_rules
        best = value.max()
        tied = np.flatnonzero(value >= best - 1e-12)
        return int(tied[np.argmin(inner_rules[tied])])  # first minimum: grid order

    return choose


def _paired_rule(floor):
    """Fewest rules among the points whose mean inner F1 is within max(``floor``, one standard
    error of the paired fold differences to the best point) of the best (ties: the best mean,
    then grid order). Needs the per-split inner scores (``inner_splits``, runs since round 8)."""

    def choose(inner_f1, inner_rules, inner_std, n_inner, splits=None):
        if splits is None:
            raise SystemExit("This run has no per-split inner scores: run it again.")
        best = int(np.argmax(inner_f1))
        differences = splits[best][None, :] - splits
        tolerance = np.maximum(floor, differences.std(axis=1) / np.sqrt(splits.shape[1]))
        eligible = np.flatnonzero(np.round(inner_f1, 9) >= np.round(inner_f1[best] - tolerance, 9))
        # among them, the search's order: fewest rules, then best mean, then grid order
        return int(eligible[choose_candidate(inner_f1[eligible], inner_rules[eligible], np.inf)])

    return choose


def _untuned_but(**axes):
    """:func:`_paper_defaults` except ``axes`` (name -> allowed values)."""
    untuned = _paper_defaults()

    def keep(p):
        return all(p.get(k, untuned[k]) in axes.get(k, [untuned[k]]) for k in p)

    return keep


DESIGN_RULES = {
    "previous default (max_rules=None, tolerance 0)": (_is_untuned, _tolerance_rule(0.0)),
    "untuned, max_rules by inner CV, max(.01, 1 SE)": (
        _untuned_but(max_rules=STUDY_STOPS),
        _tolerance_rule((0.01, 1.0)),
    ),
    "untuned, max_rules by inner CV, best": (
        _untuned_but(max_rules=STUDY_STOPS),
        _tolerance_rule(0.0),
    ),
    "untuned + H2, max_rules by inner CV, max(.01, 1 SE)": (
        _untuned_but(max_rules=STUDY_STOPS, heuristic=["H1", "H2"]),
        _tolerance_rule((0.01, 1.0)),
    ),
    "untuned + alpha, max_rules by inner CV, max(.01, 1 SE)": (
        _untuned_but(max_rules=STUDY_STOPS, alpha=[0.5, 0.7, 0.9]),
        _tolerance_rule((0.01, 1.0)),
    ),
    "untuned + tol, max_rules by inner CV, max(.01, 1 SE) (chosen: max_rules='auto', "
    "conflict_tolerance='auto')": (
        _untuned_but(max_rules=STUDY_STOPS, conflict_tolerance=[0.0, 0.5]),
        _tolerance_rule((0.01, 1.0)),
    ),
    "untuned + tol, max_rules by inner CV, tol .005": (
        _untuned_but(max_rules=STUDY_STOPS, conflict_tolerance=[0.0, 0.5]),
        _tolerance_rule(0.005),
    ),
    "untuned + tol, max_rules by inner CV, best": (
        _untuned_but(max_rules=STUDY_STOPS, conflict_tolerance=[0.0, 0.5]),
        _tolerance_rule(0.0),
    ),
    "untuned + tol + sizes, max_rules by inner CV, max(.01, 1 SE)": (
        _untuned_but(
            max_rules=STUDY_STOPS, conflict_tolerance=[0.0, 0.5], subset_sizes=["cycle", "fixed"]
        ),
        _tolerance_rule((0.01, 1.0)),
    ),
    "default grid, max(.01, 1 SE) (current)": (_is_default_grid, _tolerance_rule((0.01, 1.0))),
    "default grid, 1 SE": (_is_default_grid, _tolerance_rule((0.0, 1.0))),
    "default grid, tol .01": (_is_default_grid, _tolerance_rule(0.01)),
    "default grid, tol .005": (_is_default_grid, _tolerance_rule(0.005)),
    "default grid, best inner F1": (_is_default_grid, _tolerance_rule(0.0)),
    "default grid, F1 - .002/rule": (_is_default_grid, _penalty_rule(0.002)),
    "default grid, F1 - .001/rule": (_is_default_grid, _penalty_rule(0.001)),
    "+ capped H1, max(.01, 1 SE)": (lambda p: True, _tolerance_rule((0.01, 1.0))),
    "+ capped H1, tol .005": (lambda p: True, _tolerance_rule(0.005)),
    "+ capped H1, best inner F1": (lambda p: True, _tolerance_rule(0.0)),
    "+ capped H1, F1 - .002/rule": (lambda p: True, _penalty_rule(0.002)),
    "+ capped H1, F1 - .001/rule": (lambda p: True, _penalty_rule(0.001)),
}


def replay_rule(entry, keep, choose) -> dict:
    """Like :func:`replay`, with any choice function of the inner figures."""
    params = [json.loads(p) for p in entry["params"]]
    idx = np.array([i for i, p in enumerate(params) if keep(p)], dtype=int)
    if not idx.size:
        raise SystemExit("No grid point of this run belongs to the rule's sub-grid: run its grid.")
    out = {"f1": [], "rules": [], "params": []}
    for fold in entry["folds"]:
        pick = choose(
            np.asarray(fold["inner_f1"])[idx],
            np.asarray(fold["inner_rules"])[idx],
            np.asarray(fold["inner_std"])[idx],
            entry.get("inner_folds", 5),
            np.asarray(fold["inner_splits"])[idx] if "inner_splits" in fold else None,
        )
        best = int(idx[pick])
        out["f1"].append(fold["f1"][best])
        out["rules"].append(fold["rules"][best])
        out["params"].append(params[best])
    return out


def _merged(paths) -> dict:
    results = {}
    for path in paths:
        results.update(json.loads(Path(path).read_text()))
    return results


def _all(params) -> bool:
    return True


def _table_head(first: str, names) -> list[str]:
    return [
        f"| {first} | " + " | ".join(names) + " | mean F1 | mean #rules |",
        "|---|" + "---|" * (len(names) + 2),
    ]


def _row(label: str, replays) -> str:
    """A table row: the outer F1 / #rules of one replay per dataset, then their means."""
    f1s = [float(np.mean(r["f1"])) for r in replays]
    ns = [float(np.mean(r["rules"])) for r in replays]
    cells = " | ".join(f"{f:.3f} / {n:.1f}" for f, n in zip(f1s, ns, strict=True))
    return f"| {label} | {cells} | {np.mean(f1s):.3f} | {np.mean(ns):.1f} |"


def design_report(paths, datasets) -> str:
    """Mean outer F1 / #rules of each choice rule on the given datasets (design half only)."""
    results = _merged(paths)
    names = [d for d in datasets if d in results]
    lines = _table_head("choice rule", names)
    for label, (keep, choose) in DESIGN_RULES.items():
        lines.append(_row(label, [replay_rule(results[d], keep, choose) for d in names]))
    return "\n".join(lines)


#: The search's choice rule: LibreSearchCV's defaults (score_tolerance, standard_errors).
SEARCH_RULE = (LibreSearchCV().score_tolerance, LibreSearchCV().standard_errors)
#: The search's choice rule until the eighth study round.
PREVIOUS_RULE = (0.01, 1.0)
#: The search's choice rule (first) and three alternatives.
CHOICE_RULES = {
    "1 SE (the search's)": SEARCH_RULE,
    "max(.01, 1 SE) (the search's until round 8)": PREVIOUS_RULE,
    "max(.005, 1 SE)": (0.005, 1.0),
    "best inner F1": 0.0,
}


def _rules_report(paths, rules) -> str:
    """Outer F1 / #rules of each choice function of ``rules`` (label -> function) on the whole
    grid of the runs."""
    results = _merged(paths)
    lines = _table_head("choice rule", results)
    for label, choose in rules.items():
        lines.append(_row(label, [replay_rule(e, _all, choose) for e in results.values()]))
    return "\n".join(lines)


def choice_report(paths) -> str:
    """Outer F1 / #rules of each of :data:`CHOICE_RULES` on the whole grid of the runs."""
    return _rules_report(paths, {k: _tolerance_rule(t) for k, t in CHOICE_RULES.items()})


PAIRED_RULES = {
    "max(.01, 1 SE) (the search's until round 8)": _tolerance_rule(PREVIOUS_RULE),
    "1 SE (the search's)": _tolerance_rule(SEARCH_RULE),
    "max(.01, 1 paired SE)": _paired_rule(0.01),
    "1 paired SE": _paired_rule(0.0),
    "best inner F1": _tolerance_rule(0.0),
}


def paired_report(paths) -> str:
    """Outer F1 / #rules of each of :data:`PAIRED_RULES` (round 8) on the whole grid."""
    return _rules_report(paths, PAIRED_RULES)


def bounds_report(paths, caps=(1.6, 3, 8, 21)) -> str:
    """Per dataset, the grid point with the best mean outer F1, overall and among the points
    with at most ``cap`` mean rules. Chosen on the test folds: what no choice rule over this
    grid can beat, not an estimate of anything."""
    lines = [
        "| dataset | best point F1 / #rules | "
        + " | ".join(f"best with ≤ {c:g} rules" for c in caps)
        + " |",
        "|---|---|" + "---|" * len(caps),
    ]
    for name, entry in _merged(paths).items():
        f1 = np.array([fold["f1"] for fold in entry["folds"]]).mean(axis=0)
        rules = np.array([fold["rules"] for fold in entry["folds"]]).mean(axis=0)
        best = int(np.argmax(f1))
        cells = [f"{f1[best]:.3f} / {rules[best]:.1f}"]
        for cap in caps:
            ok = rules <= cap + 1e-9
            cells.append(f"{f1[ok].max():.3f}" if ok.any() else "–")
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def wide_report(paths) -> str:
    """The search's choice rule over the grid without its largest ``n_estimators`` (the
    default grid) and with it: outer F1 / #rules per dataset, and how often the widest
    ensemble was picked."""
    results = _merged(paths)
    # each dataset's own widest ensemble (on the search's grid it grows with the columns)
    widest = {
        name: max(json.loads(p)["n_estimators"] for p in entry["params"])
        for name, entry in results.items()
    }
    choose = _tolerance_rule(SEARCH_RULE)
    without = [
        replay_rule(entry, lambda p, w=widest[name]: p["n_estimators"] < w, choose)
        for name, entry in results.items()
    ]
    replays = [replay_rule(entry, _all, choose) for entry in results.values()]
    lines = _table_head("grid", results)
    lines.append(_row("without the widest n_estimators", without))
    lines.append(_row("with it", replays))
    picked = [
        sum(p["n_estimators"] == widest[name] for p in r["params"])
        for name, r in zip(results, replays, strict=True)
    ]
    lines.append("| folds picking the widest | " + " | ".join(map(str, picked)) + " | | |")
    return "\n".join(lines)


def stops_report(paths, candidate=None) -> str:
    """Rounds 9 and 21: the search's choice rule over the grid of the runs (early stops up to
    :data:`STUDY_STOPS`), over its points with the default's early stops (:data:`EARLY_STOP`)
    and, given ``candidate`` (a list of early stops), over its points with those; and how often
    the first picks a stop the default grid no longer has, or the default one outside
    ``candidate``."""
    results = _merged(paths)
    choose = _tolerance_rule(SEARCH_RULE)
    replays = [replay_rule(entry, _all, choose) for entry in results.values()]
    capped = [
        replay_rule(entry, lambda p: p.get("max_rules") in EARLY_STOP, choose)
        for entry in results.values()
    ]
    lines = _table_head("early stops", results)
    lines.append(_row(f"{axis_values(STUDY_STOPS)} (until round 9)", replays))
    lines.append(_row(f"{axis_values(EARLY_STOP)} (the default grid's)", capped))
    dropped = [sum(p.get("max_rules") not in EARLY_STOP for p in r["params"]) for r in replays]
    lines.append("| folds picking 21 or None | " + " | ".join(map(str, dropped)) + " | | |")
    if candidate:
        kept = [
            replay_rule(entry, lambda p: p.get("max_rules") in candidate, choose)
            for entry in results.values()
        ]
        lines.append(_row(f"{axis_values(candidate)} (candidate)", kept))
        beyond = [sum(p.get("max_rules") not in candidate for p in r["params"]) for r in capped]
        lines.append(
            f"| default grid's folds picking a stop outside {axis_values(candidate)} | "
            + " | ".join(map(str, beyond))
            + " | | |"
        )
    return "\n".join(lines)


def chi2_report(paths) -> str:
    """Round 15: the search's choice rule over the runs' grid without its finest ChiMerge
    threshold (:data:`FINE_CHI2`; the default grid) and with it, and how often the latter
    picks it."""
    results = _merged(paths)
    choose = _tolerance_rule(SEARCH_RULE)
    without = [
        replay_rule(entry, lambda p: p["chi2_threshold"] != FINE_CHI2, choose)
        for entry in results.values()
    ]
    replays = [replay_rule(entry, _all, choose) for entry in results.values()]
    lines = _table_head("ChiMerge thresholds", results)
    lines.append(_row(f"{axis_values(PAPER_GRID['chi2_threshold'])} (the default grid's)", without))
    lines.append(_row(f"and {FINE_CHI2:g}", replays))
    picked = [sum(p["chi2_threshold"] == FINE_CHI2 for p in r["params"]) for r in replays]
    lines.append(f"| folds picking {FINE_CHI2:g} | " + " | ".join(map(str, picked)) + " | | |")
    return "\n".join(lines)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    sub = parser.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run")
    r.add_argument("--grid", choices=sorted(GRIDS), default="early")
    r.add_argument("--datasets", nargs="+", default=DATASETS)
    r.add_argument("--out", type=Path, required=True)
    r.add_argument("--n-jobs", type=int, default=2)
    r.add_argument("--extra", type=json.loads, default=None, help="fixed params, JSON")
    r.add_argument("--folds", type=int, nargs="+", help="only these outer folds (0-4)")
    r.add_argument("--repeats", type=int, default=1, help="shuffles of the inner k-fold")
    r.add_argument("--pad", type=int, help="widen every dataset to this many columns")
    m = sub.add_parser("merge")
    m.add_argument("parts", type=Path, nargs="+")
    m.add_argument("--out", type=Path, required=True)
    p = sub.add_parser("report")
    p.add_argument("results", type=Path)
    d = sub.add_parser("design", help="choice rules replayed on the design half")
    d.add_argument("results", type=Path, nargs="+")
    c = sub.add_parser("choice", help="the search's choice rule and alternatives, whole grid")
    c.add_argument("results", type=Path, nargs="+")
    q = sub.add_parser("paired", help="the choice rules of round 8 (paired standard errors)")
    q.add_argument("results", type=Path, nargs="+")
    b = sub.add_parser("bounds", help="the best single grid point (an upper bound)")
    b.add_argument("results", type=Path, nargs="+")
    w = sub.add_parser("wide", help="the grid with and without its widest n_estimators")
    w.add_argument("results", type=Path, nargs="+")
    s = sub.add_parser("stops", help="rounds 9 and 21: the grid's early stops, or fewer")
    s.add_argument("results", type=Path, nargs="+")
    s.add_argument("--candidate", type=int, nargs="+", help="early stops to compare too")
    x = sub.add_parser(
        "chi2", help="round 15: the grid with and without a fourth ChiMerge threshold"
    )
    x.add_argument("results", type=Path, nargs="+")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s", stream=sys.stderr)
    if args.cmd == "run":
        run(
            args.datasets,
            GRIDS[args.grid],
            args.out,
            n_jobs=args.n_jobs,
            extra=args.extra,
            folds=args.folds,
            repeats=args.repeats,
            pad=args.pad,
        )
    elif args.cmd == "merge":
        merge(args.parts, args.out)
    elif args.cmd == "choice":
        print(choice_report(args.results))
    elif args.cmd == "paired":
        print(paired_report(args.results))
    elif args.cmd == "bounds":
        print(bounds_report(args.results))
    elif args.cmd == "wide":
        print(wide_report(args.results))
    elif args.cmd == "stops":
        print(stops_report(args.results, args.candidate))
    elif args.cmd == "chi2":
        print(chi2_report(args.results))
    elif args.cmd == "design":
        from protocol import DESIGN

        print(design_report(args.results, DESIGN))
    else:
        print(report(args.results))


if __name__ == "__main__":
    main()
