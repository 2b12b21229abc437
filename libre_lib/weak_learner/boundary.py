"""The bottom-up weak learner: FindBoundary / FindBoundaryPoint (paper, section 3.1, Alg. 1-2).

Starting from a positive record ``x`` (a maximally specific rule), bits are flipped off one at
a time, generalizing the rule, until any further flip would make it cover a negative record
(a *conflict*). The result ``p(J)`` is a boundary point. The distance of the current element
``p`` to a negative ``y`` is ``d(p, y) = #{i : p(i) = 1, y(i) = 0}``; flipping bit ``i`` lowers it
by one for exactly the negatives with a 0 at ``i``, so flipping ``i`` creates a conflict iff
``min{d(p, y) : y(i) = 0} = 1``. That minimum is kept per bit and updated exactly after each
flip (the authors' published code updates it from the wrong negatives).

Heuristics choose the bit to flip among the candidates ``I`` (ties: lowest bit index):

* ``H1`` = (|S_i^0|, |D+_i^0|, distance), favouring fewer boundary points;
* ``H2`` = (distance, |S_i^0|, |D+_i^0|), favouring points with fewer ones (shorter rules);

where ``|S_i^0|`` and ``|D+_i^0|`` are the weights (multiplicities) of the uncovered and of all
positives that have a 0 at ``i``. A bit that no negative has at 0 never blocks, and flipping it
changes no distance; its distance is "undefined" and ranks as +infinity.

Seeding (``seeds``):

* ``"uncovered"`` (Algorithm 1): seeds are taken from ``S``, the positives not yet covered by a
  boundary point, and ``|S_i^0|`` shrinks as points cover positives;
* ``"all"`` (the authors' published code): every distinct positive seeds once and
  ``|S_i^0| = |D+_i^0|``.

Seeds are visited by decreasing weight, then input order. The boundary set is kept
irredundant: a point covered by an existing one is dropped, and existing points that a new,
more general point covers are removed.

A negative identical to the seed is covered from the start (distance 0) and cannot be avoided;
such contradictory records are tolerated, as in the reference implementation. Every other
training negative is never covered by a point of this learner.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from numba import njit

from ..encoding import ZeroSets
from ..errors import ParameterError
from ..params import validate_params
from .cells import (
    cell_layout,
    codes_of,
    directory_levels,
    find_boundary_cells,
    positive_runs,
    sorted_runs,
    subtract_touched,
    unpack_alive,
)

_UNDEFINED = np.iinfo(np.int64).max // 4


def _as_zero_sets(records) -> ZeroSets:
    return records if isinstance(records, ZeroSets) else ZeroSets.from_bits(records)


def check_heuristic(heuristic: str) -> None:
    validate_params({"heuristic": heuristic}, owner=None)


def check_seeds(seeds: str) -> None:
    validate_params({"seeds": seeds}, owner=None)


@dataclass
class _Negatives:
    """Negatives indexed both ways: zeros per record and records per zero bit."""

    zeros: ZeroSets
    by_bit_ptr: np.ndarray
    by_bit: np.ndarray
    nonempty: np.ndarray
    rows: np.ndarray = field(init=False)

    def __post_init__(self):
        self.rows = self.zeros.rows

    @classmethod
    def build(cls, zeros: ZeroSets) -> _Negatives:
        order = np.argsort(zeros.indices, kind="stable")
        counts = np.bincount(zeros.indices, minlength=zeros.n_bits)
        ptr = np.concatenate(([0], np.cumsum(counts))).astype(np.int64)
        return cls(zeros, ptr, zeros.rows[order], counts > 0)

    def min_distance_per_bit(self, distance: np.ndarray) -> np.ndarray:
        """min{distance[y] : y(i) = 0} for every bit i (undefined where no negative has a 0)."""
        out = np.full(self.zeros.n_bits, _UNDEFINED, dtype=np.int64)
        if self.by_bit.size:
            starts = self.by_bit_ptr[:-1][self.nonempty]
            out[self.nonempty] = np.minimum.reduceat(distance[self.by_bit], starts)
        return out

    def with_zero_at(self, bit: int) -> np.ndarray:
        return self.by_bit[self.by_bit_ptr[bit] : self.by_bit_ptr[bit + 1]]

    def zero_bits_of(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(bit positions, owning row) of the zeros of the given negatives."""
        z = self.zeros
        if z.width is not None:
            bits = z.indices.reshape(z.n_rows, z.width)[rows].ravel()
            return bits, np.repeat(rows, z.width)
        starts, stops = z.indptr[rows], z.indptr[rows + 1]
        lengths = stops - starts
        idx = np.repeat(starts - np.cumsum(lengths) + lengths, lengths) + np.arange(lengths.sum())
        return z.indices[idx], np.repeat(rows, lengths)


def find_boundary_point(
    seed_zeros: np.ndarray,
    negatives: _Negatives,
    s0: np.ndarray,
    d0: np.ndarray,
    heuristic: str,
    trace: list | None = None,
) -> np.ndarray:
    """Algorithm 2 for one seed: returns the boundary point p(J) as a bool vector."""
    n_bits = negatives.zeros.n_bits
    candidates = np.ones(n_bits, dtype=bool)  # I: bits where the seed is 1
    candidates[seed_zeros] = False
    kept = np.zeros(n_bits, dtype=bool)  # J
    seed_ones = candidates.copy()
    distance = negatives.zeros.count_per_row(seed_ones)  # d(x, y) for every negative y
    per_bit = negatives.min_distance_per_bit(distance)
    bit_index = np.arange(n_bits)
    while True:
        blocked = candidates & (per_bit == 1)
        if blocked.any():
            kept |= blocked
            candidates &= ~blocked
            if trace is not None:
                trace.extend(("keep", int(b)) for b in np.flatnonzero(blocked))
        remaining = np.flatnonzero(candidates)
        if remaining.size == 0:
            break
        dist = per_bit[remaining]
        if heuristic == "H1":
            keys = (bit_index[remaining], -dist, -d0[remaining], -s0[remaining])
        else:
            keys = (bit_index[remaining], -d0[remaining], -s0[remaining], -dist)
        best = int(remaining[np.lexsort(keys)[0]])
        candidates[best] = False
        if trace is not None:
            trace.append(("flip", best))
        if per_bit[best] == _UNDEFINED:
            continue  # no negative has a 0 here: no distance changes
        moved = negatives.with_zero_at(best)
        distance[moved] -= 1
        bits, owners = negatives.zero_bits_of(moved)
        np.minimum.at(per_bit, bits, distance[owners])
    return kept


def find_boundary(*args, **kwargs) -> np.ndarray:
    """Algorithm 1: the boundary points (bool matrix, one row per point); see
    :func:`find_boundary_with_coverage` for the parameters."""
    return find_boundary_with_coverage(*args, **kwargs)[0]


def find_boundary_with_coverage(
    positives,
    negatives,
    positive_weight: np.ndarray | None = None,
    heuristic: str = "H1",
    seeds: str = "uncovered",
    trace: list | None = None,
    conflict_tolerance: float = 0.0,
    negative_weight: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray | None, np.ndarray | None]:
    """Algorithm 1: the boundary points (bool matrix, one row per point) separating the
    positive from the negative records, with the weighted positives and negatives each point
    covers when the kernel that ran knows them (the cell-key kernel), else ``None, None``.

    ``positives`` / ``negatives`` are bit matrices (rows x bits) or :class:`ZeroSets`.
    ``positive_weight`` / ``negative_weight`` give the multiplicity of each (distinct) record.
    With ``trace`` the step-by-step numpy version runs and records its steps; otherwise the
    compiled kernels, which give the same points.

    ``conflict_tolerance`` > 0 relaxes the conflict test (not in the paper): a flip conflicts
    only when the negative weight the grown element covers, records identical to the seed
    aside, exceeds ``conflict_tolerance`` times the positive weight it covers, or when the
    records the flip adds exceed it beyond sampling noise
    (:func:`~libre_lib.weak_learner.cells.slab_over_tolerance`). It needs inverse one-hot
    records, H1 and ``seeds="uncovered"``.
    """
    check_heuristic(heuristic)
    check_seeds(seeds)
    validate_params({"conflict_tolerance": conflict_tolerance}, owner=None, requirements=())
    tolerance = float(conflict_tolerance)
    pos = _as_zero_sets(positives)
    neg_zeros = _as_zero_sets(negatives)
    if pos.n_bits != neg_zeros.n_bits:
        raise ValueError(f"positives have {pos.n_bits} bits but negatives have {neg_zeros.n_bits}")
    weight = np.ones(pos.n_rows) if positive_weight is None else np.asarray(positive_weight, float)
    if tolerance > 0:
        radix = _cell_radix(pos, neg_zeros)
        grid_too_large = pos.blocks is not None and cell_layout(pos.blocks) is None
        if heuristic == "H1" and seeds == "uncovered" and trace is None and grid_too_large:
            raise ParameterError(
                f"conflict_tolerance={tolerance:g} needs the records' grid (the product of the "
                f"{pos.blocks.size - 1} features' bin counts) to "
                "fit a 63-bit cell key; it does not. Use fewer features or bins per learner, "
                "or conflict_tolerance=0."
            )
        if heuristic != "H1" or seeds != "uncovered" or radix is None or trace is not None:
            raise ParameterError(
                "conflict_tolerance > 0 is implemented for heuristic='H1' with "
                "seeds='uncovered' on inverse one-hot records (the estimator's learners); got "
                f"heuristic={heuristic!r}, seeds={seeds!r}. Use conflict_tolerance=0 otherwise."
            )
    neg_weight = None if negative_weight is None else np.asarray(negative_weight, dtype=float)
    if trace is None:
        return _find_boundary_compiled(
            pos, neg_zeros, weight, heuristic, seeds, tolerance, neg_weight
        )
    points = _find_boundary_numpy(pos, _Negatives.build(neg_zeros), weight, heuristic, seeds, trace)
    return points, None, None


def _by_bit(zeros: ZeroSets) -> tuple[np.ndarray, np.ndarray]:
    """Rows per zero bit (CSR, rows ascending within a bit)."""
    order = np.argsort(zeros.indices, kind="stable")
    counts = np.bincount(zeros.indices, minlength=zeros.n_bits)
    ptr = np.concatenate(([0], np.cumsum(counts))).astype(np.int64)
    rows = np.repeat(np.arange(zeros.n_rows, dtype=np.int32), np.diff(zeros.indptr))
    return ptr, rows[order]


def _find_boundary_compiled(
    pos: ZeroSets,
    neg: ZeroSets,
    weight: np.ndarray,
    heuristic: str,
    seeds: str,
    tolerance: float = 0.0,
    neg_weight: np.ndarray | None = None,
):
    d0 = pos.bit_weights(weight)  # |D+_i^0|
    order = np.lexsort((np.arange(pos.n_rows), -weight)).astype(np.int64)
    radix = _cell_radix(pos, neg) if heuristic == "H1" and seeds == "uncovered" else None
    if radix is not None:
        return _find_boundary_cells(pos, neg, weight, order, radix, d0, tolerance, neg_weight)
    bit_ptr, bit_rows = _by_bit(neg)
    blocks = pos.blocks if pos.blocks is not None else np.zeros(0, dtype=np.int64)
    if blocks.size and seeds == "uncovered":
        pos_bit_ptr, pos_bit_rows = _by_bit(pos)
    else:
        pos_bit_ptr, pos_bit_rows = np.zeros(1, dtype=np.int64), np.zeros(0, dtype=np.int32)
    points = _find_boundary_kernel(
        pos.n_bits,
        pos.indptr.astype(np.int64, copy=False),
        pos.indices.astype(np.int64, copy=False),
        weight,
        order,
        neg.indptr.astype(np.int64, copy=False),
        neg.indices.astype(np.int64, copy=False),
        bit_ptr,
        bit_rows,
        pos_bit_ptr,
        pos_bit_rows,
        np.asarray(blocks, dtype=np.int64),
        d0.copy(),
        d0,
        heuristic == "H2",
        seeds == "all",
    )
    return points, None, None


def _find_boundary_cells(pos, neg, weight, order, radix, d0, tolerance=0.0, neg_weight=None):
    """H1 with uncovered seeds on inverse one-hot records: the cell-key kernel
    (:mod:`libre_lib.weak_learner.cells`), same points as the generic kernel. Returns the points
    and the weighted (positives, negatives) each covers."""
    blocks = pos.blocks.astype(np.int64, copy=False)
    m = blocks.size - 1
    levels = directory_levels(blocks, neg.n_rows)
    pos_codes = codes_of(pos, m)
    tolerant = tolerance > 0
    pos_bit_runs = sorted_runs(pos_codes if tolerant else pos_codes[:0], blocks, radix, levels)
    if neg_weight is None:
        neg_weight = np.ones(neg.n_rows)
    points, cover = find_boundary_cells(
        pos_codes,
        weight,
        order,
        positive_runs(pos_codes, blocks, radix, levels),
        sorted_runs(codes_of(neg, m), blocks, radix, levels),
        blocks,
        radix,
        d0.copy(),
        d0,
        float(tolerance),
        pos_bit_runs,
        np.asarray(neg_weight, dtype=np.float64),
    )
    return points, cover[:, 0].copy(), cover[:, 1].copy()


def _cell_radix(pos: ZeroSets, neg: ZeroSets) -> np.ndarray | None:
    """Cell-key radix when both sides are inverse one-hot records of the same grid and the
    grid fits an int64 key (then :mod:`libre_lib.weak_learner.cells` runs), else None."""
    if pos.blocks is None or pos.n_rows == 0:
        return None
    if neg.n_rows and (neg.blocks is None or not np.array_equal(neg.blocks, pos.blocks)):
        return None
    return cell_layout(pos.blocks)


def _find_boundary_numpy(
    pos: ZeroSets,
    neg: _Negatives,
    weight: np.ndarray,
    heuristic: str,
    seeds: str,
    trace: list | None,
) -> np.ndarray:
    """The step-by-step version of Algorithm 1 (reference for the compiled kernel)."""
    n_bits = pos.n_bits
    d0 = pos.bit_weights(weight)  # |D+_i^0|
    s0 = d0.copy()  # |S_i^0|
    uncovered = np.ones(pos.n_rows, dtype=bool)
    points: list[np.ndarray] = []
    order = np.lexsort((np.arange(pos.n_rows), -weight))
    for k in order:
        if seeds == "uncovered" and not uncovered[k]:
            continue
        seed_zeros = pos.indices[pos.indptr[k] : pos.indptr[k + 1]]
        if trace is not None:
            trace.append(("seed", int(k)))
        point = find_boundary_point(seed_zeros, neg, s0, d0, heuristic, trace)
        if not point.any():
            continue  # an always-true element is no rule
        if points:
            stack = np.asarray(points)
            if np.any(~(stack & ~point).any(axis=1)):
                continue  # an existing point already covers it
            keep = (point & ~stack).any(axis=1)  # drop points the new one covers
            points = [p for p, k_ in zip(points, keep, strict=True) if k_]
        points.append(point)
        if seeds == "uncovered":
            newly = uncovered & ~pos.any_per_row(point)
            if newly.any():
                uncovered &= ~newly
                s0 = s0 - pos_bit_weights_subset(pos, newly, weight)
    if not points:
        return np.zeros((0, n_bits), dtype=bool)
    return np.asarray(points)


def pos_bit_weights_subset(pos: ZeroSets, rows: np.ndarray, weight: np.ndarray) -> np.ndarray:
    """|S_i^0| contribution of the selected rows."""
    return pos.bit_weights(np.where(rows, weight, 0.0))


# -- compiled kernel ---------------------------------------------------------------------------
#
# The same algorithm as ``find_boundary`` / ``find_boundary_point`` above, compiled with numba
# and restructured for speed; it returns exactly the same points (tests compare both):
#
# * H1 is processed lazily. The keys (|S_i^0|, |D+_i^0|) are fixed during one seed, so the bits
#   are visited once in that order, in groups of equal keys. A blocked bit stays blocked
#   (distances only decrease), so it is enough to check a bit when its group comes up; only
#   inside a group of ties are the exact distances of the members needed. Per bit that is one
#   pass over the negatives with a 0 there (stopping at the first one at distance 1), instead of
#   keeping the minimum of every bit up to date after every flip.
# * H2 ranks by the distance first, so the minima are kept for every bit, updated from the
#   negatives of the flipped bit as in the numpy version.
# * Distances start from the negatives with a 0 at the seed's zeros (one pass per zero bit).
# * Points are kept packed in 64-bit words for the redundancy checks. With seeds="uncovered" a
#   new point can never be covered by an existing one (it would cover its seed, which is
#   uncovered), so only the reverse check runs.
# * The positives a new point covers are looked up from one feature block (inverse one-hot
#   layout: every record has exactly one 0 per block) instead of scanning all positives.


@njit(cache=True, nogil=True)
def _distances(seed_lo, seed_hi, pos_indices, row_nnz, bit_ptr, bit_rows, distance):
    distance[:] = row_nnz
    for k in range(seed_lo, seed_hi):
        z = pos_indices[k]
        for t in range(bit_ptr[z], bit_ptr[z + 1]):
            distance[bit_rows[t]] -= 1


@njit(cache=True, nogil=True)
def _slab_min(bit, bit_ptr, bit_rows, distance, stop_at_one):
    lo, hi = bit_ptr[bit], bit_ptr[bit + 1]
    if lo == hi:
        return _UNDEFINED
    best = _UNDEFINED
    for t in range(lo, hi):
        d = distance[bit_rows[t]]
        if d < best:
            best = d
            if d <= 1 and stop_at_one:
                return best
    return best


@njit(cache=True, nogil=True)
def _flip(bit, bit_ptr, bit_rows, distance):
    for t in range(bit_ptr[bit], bit_ptr[bit + 1]):
        distance[bit_rows[t]] -= 1


@njit(cache=True, nogil=True)
def _point_h1(candidate, s0, d0, bit_ptr, bit_rows, distance, flipped):
    """Lazy H1 (see above): marks the flipped bits; the point is candidate & ~flipped."""
    bits = np.flatnonzero(candidate)
    n = bits.size
    if n == 0:
        return
    # order by s0 desc, d0 desc, bit asc (stable sorts of the ascending bits)
    keys_s = -s0[bits]
    keys_d = -d0[bits]
    order = np.argsort(keys_d, kind="mergesort")
    order = order[np.argsort(keys_s[order], kind="mergesort")]
    alive = np.zeros(n, dtype=np.bool_)
    g = 0
    while g < n:
        e = g + 1
        while (
            e < n
            and s0[bits[order[e]]] == s0[bits[order[g]]]
            and (d0[bits[order[e]]] == d0[bits[order[g]]])
        ):
            e += 1
        if e == g + 1:
            b = bits[order[g]]
            if _slab_min(b, bit_ptr, bit_rows, distance, True) != 1:
                flipped[b] = True
                _flip(b, bit_ptr, bit_rows, distance)
        else:
            for j in range(g, e):
                alive[j] = True
            while True:
                best = -1
                best_dist = 0
                for j in range(g, e):
                    if not alive[j]:
                        continue
                    b = bits[order[j]]
                    d = _slab_min(b, bit_ptr, bit_rows, distance, True)
                    if d == 1:
                        alive[j] = False  # blocked: kept
                        continue
                    if best < 0 or d > best_dist or (d == best_dist and b < bits[order[best]]):
                        best = j
                        best_dist = d
                if best < 0:
                    break
                alive[best] = False
                b = bits[order[best]]
                flipped[b] = True
                _flip(b, bit_ptr, bit_rows, distance)
        g = e


@njit(cache=True, nogil=True)
def _point_h2(candidate, s0, d0, bit_ptr, bit_rows, neg_ptr, neg_indices, distance, flipped):
    """H2 with the minimum distance of every bit kept up to date (as the numpy version)."""
    n_bits = candidate.size
    per_bit = np.empty(n_bits, dtype=np.int64)
    for b in range(n_bits):
        per_bit[b] = _slab_min(b, bit_ptr, bit_rows, distance, False)
    cand = candidate.copy()
    while True:
        best = -1
        for b in range(n_bits):
            if not cand[b]:
                continue
            if per_bit[b] == 1:
                cand[b] = False  # blocked: kept
                continue
            if best < 0:
                best = b
                continue
            if per_bit[b] != per_bit[best]:
                if per_bit[b] > per_bit[best]:
                    best = b
            elif s0[b] != s0[best]:
                if s0[b] > s0[best]:
                    best = b
            elif d0[b] > d0[best]:
                best = b
        if best < 0:
            break
        cand[best] = False
        flipped[best] = True
        if per_bit[best] == _UNDEFINED:
            continue
        for t in range(bit_ptr[best], bit_ptr[best + 1]):
            y = bit_rows[t]
            distance[y] -= 1
            d = distance[y]
            for k in range(neg_ptr[y], neg_ptr[y + 1]):
                z = neg_indices[k]
                if d < per_bit[z]:
                    per_bit[z] = d


@njit(cache=True, nogil=True)
def _covered_by(words, pos_ptr, pos_indices, row):
    """Does the packed point (ones = excluded bits) cover positive ``row``?"""
    for k in range(pos_ptr[row], pos_ptr[row + 1]):
        z = pos_indices[k]
        if (words[z >> 6] >> np.uint64(z & 63)) & np.uint64(1):
            return False
    return True


@njit(cache=True, nogil=True)
def _find_boundary_kernel(
    n_bits,
    pos_ptr,
    pos_indices,
    weight,
    order,
    neg_ptr,
    neg_indices,
    bit_ptr,
    bit_rows,
    pos_bit_ptr,
    pos_bit_rows,
    blocks,
    s0,
    d0,
    h2,
    all_seeds,
):
    n_pos = pos_ptr.size - 1
    n_neg = neg_ptr.size - 1
    n_words = (n_bits + 63) // 64
    row_nnz = np.empty(n_neg, dtype=np.int32)
    for y in range(n_neg):
        row_nnz[y] = neg_ptr[y + 1] - neg_ptr[y]
    distance = np.empty(n_neg, dtype=np.int32)
    uncovered = np.ones(n_pos, dtype=np.bool_)
    capacity = 64
    packed = np.zeros((capacity, n_words), dtype=np.uint64)
    alive = np.zeros(capacity, dtype=np.bool_)
    n_points = 0
    candidate = np.empty(n_bits, dtype=np.bool_)
    flipped = np.empty(n_bits, dtype=np.bool_)
    words = np.empty(n_words, dtype=np.uint64)
    total = np.zeros(n_bits)
    touched = np.zeros(n_bits, dtype=np.bool_)
    n_blocks = blocks.size - 1
    for k in order:
        if not all_seeds and not uncovered[k]:
            continue
        candidate[:] = True
        for t in range(pos_ptr[k], pos_ptr[k + 1]):
            candidate[pos_indices[t]] = False
        flipped[:] = False
        _distances(pos_ptr[k], pos_ptr[k + 1], pos_indices, row_nnz, bit_ptr, bit_rows, distance)
        if h2:
            _point_h2(candidate, s0, d0, bit_ptr, bit_rows, neg_ptr, neg_indices, distance, flipped)
        else:
            _point_h1(candidate, s0, d0, bit_ptr, bit_rows, distance, flipped)
        words[:] = 0
        empty = True
        for b in range(n_bits):
            if candidate[b] and not flipped[b]:
                words[b >> 6] |= np.uint64(1) << np.uint64(b & 63)
                empty = False
        if empty:
            continue  # an always-true element is no rule
        if all_seeds:
            dominated = False
            for i in range(n_points):
                if alive[i]:
                    inside = True
                    for w in range(n_words):
                        if packed[i, w] & ~words[w]:
                            inside = False
                            break
                    if inside:
                        dominated = True
                        break
            if dominated:
                continue  # an existing point already covers it
        for i in range(n_points):
            if alive[i]:
                covers = True
                for w in range(n_words):
                    if words[w] & ~packed[i, w]:
                        covers = False
                        break
                if covers:
                    alive[i] = False  # the new point covers it
        if n_points == capacity:
            capacity *= 2
            grown = np.zeros((capacity, n_words), dtype=np.uint64)
            grown[:n_points] = packed[:n_points]
            packed = grown
            grown_alive = np.zeros(capacity, dtype=np.bool_)
            grown_alive[:n_points] = alive[:n_points]
            alive = grown_alive
        packed[n_points] = words
        alive[n_points] = True
        n_points += 1
        if all_seeds:
            continue
        # positives the new point covers, in row order (for the same float sums as numpy)
        newly = np.zeros(0, dtype=np.int64)
        if n_blocks > 0:
            best_f = 0
            best_size = -1
            for f in range(n_blocks):
                size = 0
                for b in range(blocks[f], blocks[f + 1]):
                    if not ((words[b >> 6] >> np.uint64(b & 63)) & np.uint64(1)):
                        size += pos_bit_ptr[b + 1] - pos_bit_ptr[b]
                if best_size < 0 or size < best_size:
                    best_size = size
                    best_f = f
            found = np.empty(best_size, dtype=np.int64)
            m = 0
            for b in range(blocks[best_f], blocks[best_f + 1]):
                if (words[b >> 6] >> np.uint64(b & 63)) & np.uint64(1):
                    continue
                for t in range(pos_bit_ptr[b], pos_bit_ptr[b + 1]):
                    s = pos_bit_rows[t]
                    if uncovered[s] and _covered_by(words, pos_ptr, pos_indices, s):
                        found[m] = s
                        m += 1
            newly = np.sort(found[:m])
        else:
            found = np.empty(n_pos, dtype=np.int64)
            m = 0
            for s in range(n_pos):
                if uncovered[s] and _covered_by(words, pos_ptr, pos_indices, s):
                    found[m] = s
                    m += 1
            newly = found[:m]
        if newly.size == 0:
            continue
        for s in newly:
            uncovered[s] = False
            for t in range(pos_ptr[s], pos_ptr[s + 1]):
                z = pos_indices[t]
                total[z] += weight[s]
                touched[z] = True
        subtract_touched(s0, total, touched)
    return unpack_alive(packed, alive, n_points, n_bits)
