"""The LIBRE ensemble (paper, section 3.2): weak learners on random feature subsets, combined by
a plain union of their boundary points.

Each learner sees only its subset's bins; its points are mapped back to the full layout with
all-zero (unconstrained) blocks for the features it did not see. Subsets are drawn up front
from ``random_state``, so the result never depends on which learner finishes first.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from joblib import Parallel, delayed
from numba import njit

from .encoding import DistinctRecords, ZeroSets, distinct_records, offsets
from .params import SUBSET_SIZES
from .weak_learner import find_boundary_with_coverage
from .weak_learner.cells import box_weights, cell_layout, codes_of

logger = logging.getLogger(__name__)

_CELLS_PER_CHUNK = 1 << 24


def draw_feature_subsets(
    pool: Sequence[int],
    n_estimators: int,
    max_features: int,
    rng: np.random.RandomState,
    sizes: str = "cycle",
) -> list[tuple[int, ...]]:
    """``n_estimators`` sorted random subsets of ``pool`` of *up to* ``max_features`` features
    (paper, Experiments: "each weak learner uses up to 5 features").

    ``sizes="cycle"``: sizes cycle ``max_features, max_features - 1, ..., 1, max_features,
    ...`` so the ensemble mixes short, general rules with longer, specific ones.
    ``sizes="fixed"``: every subset has ``max_features`` features (what concepts spanning that
    many features, e.g. tic-tac-toe's lines, need). Either way the first ``n`` subsets drawn for
    ``n_estimators=m > n`` are those drawn for ``n_estimators=n``. Repeated subsets are skipped.
    """
    if sizes not in SUBSET_SIZES:
        raise ValueError(f"sizes must be one of {SUBSET_SIZES}, got {sizes!r}")
    pool = np.asarray(pool, dtype=np.int64)
    top = min(max_features, pool.size)
    subsets: list[tuple[int, ...]] = []
    seen = set()
    for i in range(n_estimators):
        size = top - i % top if sizes == "cycle" else top
        subset = tuple(sorted(int(f) for f in rng.choice(pool, size=size, replace=False)))
        if subset not in seen:
            seen.add(subset)
            subsets.append(subset)
    return subsets


def subset_bits(n_bins: np.ndarray, subset: Sequence[int]) -> np.ndarray:
    """Positions in the full layout of the bits of the features in ``subset``."""
    starts = offsets(n_bins)
    return np.concatenate([np.arange(starts[f], starts[f] + n_bins[f]) for f in subset])


@dataclass(frozen=True)
class Candidates:
    """Candidate rules as lattice elements of the full layout, with the weighted numbers of
    training positives and negatives each one covers."""

    points: np.ndarray
    positives: np.ndarray
    negatives: np.ndarray

    def __len__(self) -> int:
        return self.points.shape[0]

    @classmethod
    def empty(cls, n_bits: int) -> Candidates:
        return cls(np.zeros((0, n_bits), dtype=bool), np.zeros(0), np.zeros(0))

    def take(self, index) -> Candidates:
        return Candidates(self.points[index], self.positives[index], self.negatives[index])


def covered_counts(
    points: np.ndarray, records: ZeroSets, positive_weight: np.ndarray, negative_weight: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Weighted positives and negatives covered by each point (``a <= s``: no zero of ``s``
    falls on a one of ``a``).

    Inverse one-hot records (``records.blocks`` set) go through a compiled loop that only visits
    the records in the point's allowed bins of its most selective feature; other layouts are
    compared in memory-bounded chunks. (Sums are in a different order than a matrix product,
    which is exact for integer weights such as record counts.)"""
    points = np.asarray(points, dtype=bool)
    radix = cell_layout(records.blocks) if records.blocks is not None else None
    if radix is not None and records.n_rows and points.shape[0]:
        m = records.blocks.size - 1
        return box_weights(
            points, codes_of(records, m), records.blocks, radix, positive_weight, negative_weight
        )
    if records.blocks is not None and records.n_rows and points.shape[0]:
        order = np.argsort(records.indices, kind="stable")
        counts = np.bincount(records.indices, minlength=records.n_bits)
        ptr = np.concatenate(([0], np.cumsum(counts))).astype(np.int64)
        rows = np.repeat(np.arange(records.n_rows, dtype=np.int64), np.diff(records.indptr))
        return _covered_counts_kernel(
            np.ascontiguousarray(points),
            records.indptr.astype(np.int64, copy=False),
            records.indices.astype(np.int64, copy=False),
            records.blocks.astype(np.int64, copy=False),
            ptr,
            rows[order],
            np.asarray(positive_weight, dtype=np.float64),
            np.asarray(negative_weight, dtype=np.float64),
        )
    n, width = records.n_rows, records.width
    pos = np.empty(points.shape[0])
    neg = np.empty(points.shape[0])
    step = max(1, _CELLS_PER_CHUNK // max(n * width, 1))
    zeros = records.indices.reshape(n, width)
    for lo in range(0, points.shape[0], step):
        covered = ~points[lo : lo + step][:, zeros].any(axis=2)
        pos[lo : lo + step] = covered @ positive_weight
        neg[lo : lo + step] = covered @ negative_weight
    return pos, neg


@njit(cache=True, nogil=True)
def _covered_counts_kernel(points, indptr, indices, blocks, bit_ptr, bit_rows, wpos, wneg):
    n_points = points.shape[0]
    pos = np.zeros(n_points)
    neg = np.zeros(n_points)
    for i in range(n_points):
        point = points[i]
        best_f = 0
        best_size = -1
        for f in range(blocks.size - 1):
            size = 0
            for b in range(blocks[f], blocks[f + 1]):
                if not point[b]:
                    size += bit_ptr[b + 1] - bit_ptr[b]
            if best_size < 0 or size < best_size:
                best_size = size
                best_f = f
        p = 0.0
        q = 0.0
        for b in range(blocks[best_f], blocks[best_f + 1]):
            if point[b]:
                continue
            for t in range(bit_ptr[b], bit_ptr[b + 1]):
                r = bit_rows[t]
                inside = True
                for k in range(indptr[r], indptr[r + 1]):
                    if point[indices[k]]:
                        inside = False
                        break
                if inside:
                    p += wpos[r]
                    q += wneg[r]
        pos[i] = p
        neg[i] = q
    return pos, neg


def learn_subset(
    records: DistinctRecords,
    n_bins: np.ndarray,
    subset: Sequence[int],
    heuristic: str = "H1",
    seeds: str = "uncovered",
    conflict_tolerance: float = 0.0,
    min_seed_share: float = 0.0,
    ordered: np.ndarray | None = None,
) -> Candidates:
    """Boundary points of one weak learner on ``subset``, mapped to the full layout, with their
    training coverage (computed on the learner's distinct records: features outside the subset
    are unconstrained, so coverage is the same as in the full space). ``conflict_tolerance``:
    see :func:`libre_lib.weak_learner.find_boundary` (0 = the paper's conflict test); a
    subset whose grid is too large for the tolerant kernel (:func:`tolerance_fits`) learns
    with the paper's test. ``min_seed_share``: a distinct record is a positive of the learner
    only when its share of positive weight exceeds this (0: any positive, the paper's).
    ``ordered`` (``contiguous=True``): every feature's number of ordered value bins
    (:meth:`~libre_lib.discretization.Discretization.ordered_bins`); the points are widened
    to one range per ordered feature (:func:`contiguous_candidates`) and recounted on the
    learner's distinct records, which are far fewer than the full layout's."""
    subset = list(subset)
    sub_bins = n_bins[subset]
    if conflict_tolerance > 0 and not tolerance_fits(n_bins, subset):
        conflict_tolerance = 0.0
    projected = distinct_records(
        records.codes[:, subset], sub_bins, records.positive_weight, records.negative_weight
    )
    is_pos = projected.positive_weight > min_seed_share * (
        projected.positive_weight + projected.negative_weight
    )
    is_neg = projected.negative_weight > 0
    if not is_pos.any():
        return Candidates.empty(int(n_bins.sum()))
    points, pos, neg = find_boundary_with_coverage(
        ZeroSets.from_codes(projected.codes[is_pos], sub_bins),
        ZeroSets.from_codes(projected.codes[is_neg], sub_bins),
        positive_weight=projected.positive_weight[is_pos],
        heuristic=heuristic,
        seeds=seeds,
        conflict_tolerance=conflict_tolerance,
        negative_weight=projected.negative_weight[is_neg],
    )
    if pos is None:  # the kernel that ran does not count coverage
        pos, neg = covered_counts(
            points,
            ZeroSets.from_codes(projected.codes, sub_bins),
            projected.positive_weight,
            projected.negative_weight,
        )
    if ordered is not None:
        blocks = zip(offsets(sub_bins), np.asarray(ordered)[subset], strict=True)
        widened = contiguous_candidates(
            Candidates(points, pos, neg),
            projected,
            sub_bins,
            [(int(start), int(size)) for start, size in blocks if size >= 3],
        )
        points, pos, neg = widened.points, widened.positives, widened.negatives
    full = np.zeros((points.shape[0], int(n_bins.sum())), dtype=bool)
    full[:, subset_bits(n_bins, subset)] = points
    logger.debug(
        "learner on features %s: %d positive / %d negative distinct records -> %d points",
        subset,
        int(is_pos.sum()),
        int(is_neg.sum()),
        points.shape[0],
    )
    return Candidates(full, pos, neg)


def tolerance_fits(n_bins: np.ndarray, subset: Sequence[int]) -> bool:
    """Whether the tolerant conflict test can run on ``subset``: its grid (the product of its
    features' bin counts) must fit the cell kernel's int64 key, about 4.6e18 cells; dozens
    of features with uncapped bins do not."""
    sub_bins = np.asarray(n_bins, dtype=np.int64)[list(subset)]
    return cell_layout(np.concatenate(([0], np.cumsum(sub_bins)))) is not None


def union_candidates(parts: Sequence[Candidates], n_bits: int) -> Candidates:
    """Union of the learners' candidates, duplicates removed, in order of first appearance."""
    parts = [p for p in parts if len(p)]
    if not parts:
        return Candidates.empty(n_bits)
    merged = Candidates(
        np.concatenate([p.points for p in parts]),
        np.concatenate([p.positives for p in parts]),
        np.concatenate([p.negatives for p in parts]),
    )
    return merged.take(first_occurrences(np.packbits(merged.points, axis=1)))


def contiguous_candidates(
    candidates: Candidates,
    records: DistinctRecords,
    n_bins: np.ndarray,
    ordered_blocks: Sequence[tuple[int, int]],
) -> Candidates:
    """Candidates whose every numeric condition is one range (``contiguous=True``).

    On each ordered block (``(first bit, value bins)`` of a numeric column in the layout of
    ``n_bins``) a point's allowed bins are extended to every bin between its lowest and its
    highest allowed one: ``x ∈ [a, b) ∪ [c, d)`` becomes ``x ∈ [a, d)`` (the missing bin is
    left as it is). This generalizes the learners' points (section 3.1: a zero is an allowed
    bin), so duplicates are removed (first occurrence kept) and the points that changed are
    recounted on ``records``. Widening commutes with the union: widening each learner's
    points gives the union of the widened points, in the same order."""
    if not len(candidates) or not ordered_blocks:
        return candidates
    points = candidates.points.copy()
    changed = np.zeros(points.shape[0], dtype=bool)
    for start, size in ordered_blocks:
        excluded = points[:, start : start + size]
        allowed = ~excluded
        lowest = allowed.argmax(axis=1)
        highest = size - 1 - allowed[:, ::-1].argmax(axis=1)
        position = np.arange(size)
        inside = (position >= lowest[:, None]) & (position <= highest[:, None])
        gaps = inside & excluded & allowed.any(axis=1)[:, None]
        if gaps.any():
            changed |= gaps.any(axis=1)
            excluded[gaps] = False  # a view: writes into points
    if not changed.any():
        return candidates
    # widened points often coincide: drop the duplicates first, then recount the rest
    kept = first_occurrences(np.packbits(points, axis=1))
    filled = Candidates(points, candidates.positives.copy(), candidates.negatives.copy()).take(kept)
    recount = np.flatnonzero(changed[kept])
    filled.positives[recount], filled.negatives[recount] = covered_counts(
        filled.points[recount],
        ZeroSets.from_codes(records.codes, n_bins),
        records.positive_weight,
        records.negative_weight,
    )
    return filled


def first_occurrences(rows: np.ndarray) -> np.ndarray:
    """Ascending indices of the first occurrence of every distinct row of a 2-D byte array.

    Each row is compared as one opaque byte string: ``np.unique(axis=0)`` compares byte
    column by byte column, 10-60 times slower on the thousands of bits of wide data.
    """
    rows = np.ascontiguousarray(rows, dtype=np.uint8)
    if rows.shape[1] == 0:
        return np.arange(min(rows.shape[0], 1))
    keys = rows.view(np.dtype((np.void, rows.shape[1]))).ravel()
    _, first = np.unique(keys, return_index=True)
    return np.sort(first)


def fit_ensemble(
    records: DistinctRecords,
    n_bins: np.ndarray,
    subsets: Sequence[Sequence[int]],
    heuristic: str = "H1",
    seeds: str = "uncovered",
    n_jobs: int | None = None,
    conflict_tolerance: float = 0.0,
    ordered: np.ndarray | None = None,
) -> Candidates:
    """Run one learner per subset (in parallel threads with ``n_jobs``) and union their points
    (``ordered``: see :func:`learn_subset`)."""
    args = (heuristic, seeds, conflict_tolerance, 0.0, ordered)
    if n_jobs in (None, 1) or len(subsets) <= 1:
        results = [learn_subset(records, n_bins, s, *args) for s in subsets]
    else:
        results = Parallel(n_jobs=n_jobs, prefer="threads")(
            delayed(learn_subset)(records, n_bins, s, *args) for s in subsets
        )
    return union_candidates(results, int(n_bins.sum()))
