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

from .encoding import ZeroSets
from .errors import ParameterError

HEURISTICS = ("H1", "H2")
SEEDING = ("uncovered", "all")
_UNDEFINED = np.iinfo(np.int64).max // 4


def _as_zero_sets(records) -> ZeroSets:
    return records if isinstance(records, ZeroSets) else ZeroSets.from_bits(records)


def check_heuristic(heuristic: str) -> None:
    if heuristic not in HEURISTICS:
        raise ParameterError(
            f"The 'heuristic' parameter must be one of {HEURISTICS}. Got {heuristic!r} instead."
        )


def check_seeds(seeds: str) -> None:
    if seeds not in SEEDING:
        raise ParameterError(
            f"The 'seeds' parameter must be one of {SEEDING}. Got {seeds!r} instead."
        )


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


def find_boundary(
    positives,
    negatives,
    positive_weight: np.ndarray | None = None,
    heuristic: str = "H1",
    seeds: str = "uncovered",
    trace: list | None = None,
) -> np.ndarray:
    """Algorithm 1: the boundary points (bool matrix, one row per point) separating the
    positive from the negative records.

    ``positives`` / ``negatives`` are bit matrices (rows x bits) or :class:`ZeroSets`.
    ``positive_weight`` gives the multiplicity of each (distinct) positive record.
    """
    check_heuristic(heuristic)
    check_seeds(seeds)
    pos = _as_zero_sets(positives)
    neg = _Negatives.build(_as_zero_sets(negatives))
    if pos.n_bits != neg.zeros.n_bits:
        raise ValueError(f"positives have {pos.n_bits} bits but negatives have {neg.zeros.n_bits}")
    n_bits = pos.n_bits
    weight = np.ones(pos.n_rows) if positive_weight is None else np.asarray(positive_weight, float)
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
