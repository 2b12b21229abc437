"""The LIBRE ensemble (paper, section 3.2): weak learners on random feature subsets, combined by
a plain union of their boundary points.

Each learner sees only its subset's bins; its points are mapped back to the full layout with
all-zero (unconstrained) blocks for the features it did not see. Subsets are drawn up front
from ``random_state``, so the result never depends on which learner finishes first.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from joblib import Parallel, delayed

from .encoding import DistinctRecords, ZeroSets, distinct_records, offsets
from .weak_learner import find_boundary


def draw_feature_subsets(
    pool: Sequence[int], n_estimators: int, max_features: int, rng: np.random.RandomState
) -> list[tuple[int, ...]]:
    """``n_estimators`` sorted random subsets of ``pool``; repeated subsets are skipped."""
    pool = np.asarray(pool, dtype=np.int64)
    size = min(max_features, pool.size)
    subsets: list[tuple[int, ...]] = []
    seen = set()
    for _ in range(n_estimators):
        subset = tuple(sorted(int(f) for f in rng.choice(pool, size=size, replace=False)))
        if subset not in seen:
            seen.add(subset)
            subsets.append(subset)
    return subsets


def subset_bits(n_bins: np.ndarray, subset: Sequence[int]) -> np.ndarray:
    """Positions in the full layout of the bits of the features in ``subset``."""
    starts = offsets(n_bins)
    return np.concatenate([np.arange(starts[f], starts[f] + n_bins[f]) for f in subset])


def learn_subset(
    records: DistinctRecords,
    n_bins: np.ndarray,
    subset: Sequence[int],
    heuristic: str = "H1",
    seeds: str = "uncovered",
) -> np.ndarray:
    """Boundary points of one weak learner on ``subset``, in the full layout (bool rows)."""
    subset = list(subset)
    sub_bins = n_bins[subset]
    projected = distinct_records(
        records.codes[:, subset], sub_bins, records.positive_weight, records.negative_weight
    )
    is_pos = projected.positive_weight > 0
    is_neg = projected.negative_weight > 0
    full = np.zeros((0, int(n_bins.sum())), dtype=bool)
    if not is_pos.any():
        return full
    points = find_boundary(
        ZeroSets.from_codes(projected.codes[is_pos], sub_bins),
        ZeroSets.from_codes(projected.codes[is_neg], sub_bins),
        positive_weight=projected.positive_weight[is_pos],
        heuristic=heuristic,
        seeds=seeds,
    )
    full = np.zeros((points.shape[0], int(n_bins.sum())), dtype=bool)
    full[:, subset_bits(n_bins, subset)] = points
    return full


def union_points(point_sets: Sequence[np.ndarray], n_bits: int) -> np.ndarray:
    """Union of the learners' points, duplicates removed, in order of first appearance."""
    stacked = [p for p in point_sets if p.size]
    if not stacked:
        return np.zeros((0, n_bits), dtype=bool)
    points = np.concatenate(stacked)
    packed = np.packbits(points, axis=1)
    _, first = np.unique(packed, axis=0, return_index=True)
    return points[np.sort(first)]


def fit_ensemble(
    records: DistinctRecords,
    n_bins: np.ndarray,
    subsets: Sequence[Sequence[int]],
    heuristic: str = "H1",
    seeds: str = "uncovered",
    n_jobs: int | None = None,
) -> np.ndarray:
    """Run one learner per subset (in parallel threads with ``n_jobs``) and union their points."""
    if n_jobs in (None, 1) or len(subsets) <= 1:
        results = [learn_subset(records, n_bins, s, heuristic, seeds) for s in subsets]
    else:
        results = Parallel(n_jobs=n_jobs, prefer="threads")(
            delayed(learn_subset)(records, n_bins, s, heuristic, seeds) for s in subsets
        )
    return union_points(results, int(n_bins.sum()))
