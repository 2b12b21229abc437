"""Producing the final boundary (paper, section 3.3): filtering and greedy weighted set cover.

1. Statistics of every candidate on the full training set (weighted by multiplicity):
   local support of positives ``lsup+ = covered positives / positives`` and of negatives, and
   exclusiveness ``lsup+ / (lsup+ + lsup-)`` (Gu et al. 2003).
2. Filter: keep candidates with ``lsup+ > lsup-`` and ``lsup+ >= min_local_support``; keep the
   ``top_k`` by exclusiveness, then local support, then generality (number of zeros).
3. Greedy weighted set cover: repeatedly take the candidate with the highest gain
   ``alpha * new positives - (1 - alpha) * new negatives`` (records covered by an already chosen
   rule count for nothing; ties go to the more general candidate) until every positive is
   covered, no candidate has a positive gain, or ``max_rules`` rules are chosen.

The cover runs on a :class:`CoverProblem`: the coverage bit-packed per record, records with
the same coverage collapsed into weighted patterns, kept packed (a pattern's row is one bit per
candidate), so a problem takes patterns x candidates / 8 bytes. ``filter_for_cover`` +
``cover_filtered`` split :func:`select_rules` so that one filtered problem serves several alpha
and caps.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

from ..encoding import DistinctRecords, offsets
from ..ensemble import Candidates
from ..rules import RuleStats
from ..weak_learner.cells import _popcount

#: The ``alpha`` that makes the cover's gain the rule set's training F1 (not in the paper).
F1_GAIN = "f1"


def coverage(points: np.ndarray, codes: np.ndarray, n_bins: np.ndarray) -> np.ndarray:
    """Bool matrix (points x records): does point ``a`` cover record ``s`` (``a <= s``)? The
    plain form, for inspection; the set cover uses :func:`packed_coverage`."""
    starts = offsets(n_bins)
    covered = np.ones((points.shape[0], codes.shape[0]), dtype=bool)
    for f, (start, width) in enumerate(zip(starts, n_bins, strict=True)):
        block = points[:, start : start + width]
        if not block.any():
            continue
        # a record with code -1 (no bin) is covered only by points leaving the feature free
        padded = np.concatenate([block, block.any(axis=1, keepdims=True)], axis=1)
        covered &= ~padded[:, codes[:, f]]
    return covered


def _pack(bits: np.ndarray) -> np.ndarray:
    """Pack a bool matrix (rows x n) into uint64 words (rows x ceil(n / 64)), bit i of the row
    in word i // 64 at position i % 64."""
    packed = np.packbits(bits, axis=1, bitorder="little")
    pad = -packed.shape[1] % 8
    if pad or packed.shape[1] == 0:
        pad = pad or 8
        packed = np.concatenate([packed, np.zeros((bits.shape[0], pad), dtype=np.uint8)], axis=1)
    return np.ascontiguousarray(packed).view(np.uint64)


def _unpack(words: np.ndarray, n: int) -> np.ndarray:
    """Inverse of :func:`_pack`: (rows x words) uint64 -> (rows x n) bool."""
    raw = np.ascontiguousarray(words).view(np.uint8)
    return np.unpackbits(raw, axis=1, count=n, bitorder="little").astype(bool)


def packed_coverage(points: np.ndarray, codes: np.ndarray, n_bins: np.ndarray) -> np.ndarray:
    """:func:`coverage` transposed and bit-packed: (records x words) uint64, bit ``a`` of a
    record's row set when point ``a`` covers it. Per feature, one table (bin -> points that
    exclude the bin) is gathered by the records' codes, so the work is records x words, not
    records x points."""
    n_points = points.shape[0]
    missed = np.zeros((codes.shape[0], max(1, -(-n_points // 64))), dtype=np.uint64)
    for f, (start, width) in enumerate(zip(offsets(n_bins), n_bins, strict=True)):
        block = points[:, start : start + width]
        if not block.any():
            continue
        # a record with code -1 (no bin) is covered only by points leaving the feature free
        padded = np.concatenate([block, block.any(axis=1, keepdims=True)], axis=1)
        missed |= _pack(padded.T)[codes[:, f]]
    return ~missed & _pack(np.ones((1, n_points), dtype=bool))


@dataclass(frozen=True)
class Selection:
    """Chosen candidates (indices into the candidate points, in selection order) and stats."""

    indices: np.ndarray
    stats: tuple[RuleStats, ...]
    n_candidates: int
    n_filtered: int


def rank_candidates(
    pos: np.ndarray,
    neg: np.ndarray,
    generality: np.ndarray,
    n_pos: float,
    n_neg: float,
    top_k: int | None,
    min_local_support: float,
) -> np.ndarray:
    """Indices of the candidates kept by the local-support filter, best first, at most top_k."""
    lsup_pos = pos / n_pos
    lsup_neg = neg / n_neg
    keep = np.flatnonzero((lsup_pos > lsup_neg) & (lsup_pos >= min_local_support) & (pos > 0))
    exclusive = lsup_pos[keep] / (lsup_pos[keep] + lsup_neg[keep])
    order = np.lexsort((keep, -generality[keep], -lsup_pos[keep], -exclusive))
    ranked = keep[order]
    return ranked if top_k is None else ranked[:top_k]


@dataclass(frozen=True)
class CoverProblem:
    """A weighted set cover input with the records collapsed into coverage patterns.

    Records covered by exactly the same candidates are interchangeable for the greedy cover, so
    they are merged and their weights summed; alpha and the early stop only act on
    :func:`greedy_cover`, which reuses one problem. The coverage stays bit-packed: bit ``c`` of
    pattern ``p``'s row (word ``c // 64``, position ``c % 64``) is set when candidate ``c``
    covers it. (A dense float matrix, 64 times larger, held 0.8 GB per problem on magic's
    8,600 candidates x 11,800 patterns.)
    """

    patterns: np.ndarray  # patterns x ceil(candidates / 64), uint64
    positive_weight: np.ndarray  # per pattern
    negative_weight: np.ndarray  # per pattern
    generality: np.ndarray  # per candidate: zeros of its point (ties go to the more general)
    n_candidates: int

    def coverage(self) -> np.ndarray:
        """The (candidates x patterns) bool matrix, for inspection."""
        return _unpack(self.patterns, self.n_candidates).T


def _distinct_rows(words: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Distinct rows of a uint64 matrix: (the rows where each distinct row first appears in
    sorted order, per row the index of its distinct row). Exact: a lexicographic sort."""
    order = np.lexsort(words.T[::-1])
    ranked = words[order]
    new = np.ones(words.shape[0], dtype=bool)
    new[1:] = (ranked[1:] != ranked[:-1]).any(axis=1)
    inverse = np.empty(words.shape[0], dtype=np.int64)
    inverse[order] = np.cumsum(new) - 1
    return order[new], inverse


def collapse_patterns(cover: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Distinct columns of the bool matrix ``cover`` (candidates x records).

    Returns ``(patterns, inverse)``: ``patterns`` (candidates x distinct columns, bool) and,
    per record, the index of its pattern.
    """
    if cover.shape[1] == 0:
        return np.zeros((cover.shape[0], 0), dtype=bool), np.zeros(0, dtype=np.int64)
    first, inverse = _distinct_rows(_pack(cover.T))
    return cover[:, first], inverse


def _problem(words, n_candidates, positive_weight, negative_weight, generality) -> CoverProblem:
    covered_any = words.any(axis=1)  # records no candidate covers cannot change any gain
    words = words[covered_any]
    if words.shape[0] == 0:
        patterns = words
        inverse = np.zeros(0, dtype=np.int64)
    else:
        first, inverse = _distinct_rows(words)
        patterns = np.ascontiguousarray(words[first])
    n = patterns.shape[0]
    wp = np.bincount(inverse, weights=positive_weight[covered_any], minlength=n)
    wn = np.bincount(inverse, weights=negative_weight[covered_any], minlength=n)
    return CoverProblem(patterns, wp, wn, np.asarray(generality), int(n_candidates))


def cover_problem(
    cover: np.ndarray,
    positive_weight: np.ndarray,
    negative_weight: np.ndarray,
    generality: np.ndarray,
) -> CoverProblem:
    """Collapse ``cover`` (candidates x records) into a :class:`CoverProblem`; records that no
    candidate covers are dropped (no rule can gain from them)."""
    cover = np.asarray(cover, dtype=bool)
    return _problem(_pack(cover.T), cover.shape[0], positive_weight, negative_weight, generality)


@njit(cache=True, nogil=True)
def _add_pattern_weights(patterns, rows, sign, wp, wn, pos, neg):
    """``pos[c] += sign * wp[p]`` and ``neg[c] += sign * wn[p]`` for every pattern ``p`` in
    ``rows`` and every candidate ``c`` covering it (the set bits of row ``p``)."""
    for p in rows:
        a = sign * wp[p]
        b = sign * wn[p]
        for w in range(patterns.shape[1]):
            x = patterns[p, w]
            while x:
                low = x & (~x + np.uint64(1))
                c = w * 64 + _popcount(low - np.uint64(1))
                pos[c] += a
                neg[c] += b
                x ^= low


def _first_best(gain: np.ndarray, generality: np.ndarray) -> int:
    """The highest gain, ties to the more general, then the first (``np.lexsort((index,
    -generality, -gain))[0]`` without the sort)."""
    tied = np.flatnonzero(gain == gain.max())
    if tied.size > 1:
        tied = tied[generality[tied] == generality[tied].max()]
    return int(tied[0])


def _gains(alpha, new_pos, new_neg, totals, covered) -> tuple[np.ndarray, float]:
    """Every candidate's gain and the gain a rule must beat: ``alpha * new positives - (1 -
    alpha) * new negatives`` against 0, or with ``alpha="f1"`` the training F1 of the rule set
    with the candidate added against the current F1 (candidates that would leave the rule set
    less accurate than the majority answer get no gain; see :data:`F1_GAIN`)."""
    if alpha != F1_GAIN:
        # rounded so that exact ties (integer counts) are not decided by float noise
        return np.round(alpha * new_pos - (1.0 - alpha) * new_neg, 9), 0.0
    n_positive, n_negative = totals
    tp, fp = covered
    f1 = np.round(2.0 * (tp + new_pos) / (tp + new_pos + fp + new_neg + n_positive), 12)
    if n_negative >= n_positive:  # the majority guard: at least as many true as false positives
        f1[tp + new_pos < fp + new_neg] = -np.inf
    return f1, round(2.0 * tp / (tp + fp + n_positive), 12)


def greedy_cover(
    problem: CoverProblem,
    alpha: float | str,
    max_rules: int | None = None,
    totals: tuple[float, float] | None = None,
) -> tuple[list[int], list[tuple[float, float]]]:
    """Greedy weighted set cover: repeatedly the candidate with the highest gain
    ``alpha * new positives - (1 - alpha) * new negatives`` (ties: more general, then the
    first), until no positive is left, no gain is positive or ``max_rules`` are chosen.
    With ``alpha="f1"`` (not in the paper) the gain is the rule set's training F1 with the
    candidate added, and a rule joins only while it raises that F1; ``totals`` (the weighted
    positives and negatives of all training records) is then required.
    Returns the chosen rows in order and the (new positives, new negatives) each one added.

    Every candidate's new positives and negatives are summed once from the packed patterns;
    after a choice only the patterns it covers are subtracted. The sums are exact (so the
    result does not depend on their order) for integer weights, which record multiplicities
    are."""
    if alpha == F1_GAIN and totals is None:
        raise ValueError("alpha='f1' needs the totals of positives and negatives")
    patterns = problem.patterns
    n = problem.n_candidates
    wp = problem.positive_weight.astype(np.float64, copy=True)
    wn = problem.negative_weight.astype(np.float64, copy=True)
    generality = np.asarray(problem.generality)
    new_pos = np.zeros(n)
    new_neg = np.zeros(n)
    weighted = np.flatnonzero((wp != 0) | (wn != 0))
    _add_pattern_weights(patterns, weighted, 1.0, wp, wn, new_pos, new_neg)
    chosen: list[int] = []
    gains: list[tuple[float, float]] = []
    available = np.ones(n, dtype=bool)
    limit = np.inf if max_rules is None else max_rules
    covered = [0.0, 0.0]
    while n and len(chosen) < limit and wp.sum() > 0:
        gain, floor = _gains(alpha, new_pos, new_neg, totals, covered)
        gain[~available] = -np.inf
        best = _first_best(gain, generality)
        if not gain[best] > floor:
            break
        chosen.append(best)
        gains.append((float(new_pos[best]), float(new_neg[best])))
        covered[0] += new_pos[best]
        covered[1] += new_neg[best]
        available[best] = False
        column = patterns[:, best >> 6] >> np.uint64(best & 63)
        hit = np.flatnonzero(column & np.uint64(1))
        hit = hit[(wp[hit] != 0) | (wn[hit] != 0)]
        # what the chosen rule covers counts for nothing from now on
        _add_pattern_weights(patterns, hit, -1.0, wp, wn, new_pos, new_neg)
        wp[hit] = 0.0
        wn[hit] = 0.0
    return chosen, gains


def weighted_set_cover(
    cover: np.ndarray,
    positive_weight: np.ndarray,
    negative_weight: np.ndarray,
    generality: np.ndarray,
    alpha: float | str,
    max_rules: int | None = None,
) -> tuple[list[int], list[tuple[float, float]]]:
    """Greedy weighted set cover over ``cover`` (candidates x records); returns the chosen rows
    in order and the (new positives, new negatives) each one added."""
    problem = cover_problem(cover, positive_weight, negative_weight, generality)
    totals = (float(np.sum(positive_weight)), float(np.sum(negative_weight)))
    return greedy_cover(problem, alpha, max_rules, totals)


def filter_candidates(
    candidates: Candidates,
    records: DistinctRecords,
    top_k: int | None = 200,
    min_local_support: float = 0.0,
) -> np.ndarray:
    """Indices of the candidates passing the local-support filter, best first, at most top_k."""
    generality = (~candidates.points).sum(axis=1)
    return rank_candidates(
        candidates.positives,
        candidates.negatives,
        generality,
        float(records.positive_weight.sum()),
        float(records.negative_weight.sum()),
        top_k,
        min_local_support,
    )


def candidates_problem(
    candidates: Candidates, records: DistinctRecords, n_bins: np.ndarray
) -> CoverProblem:
    """The set-cover problem of (already filtered and ranked) candidates on the records."""
    generality = (~candidates.points).sum(axis=1)
    words = packed_coverage(candidates.points, records.codes, n_bins)
    return _problem(
        words, len(candidates), records.positive_weight, records.negative_weight, generality
    )


def cover_candidates(
    candidates: Candidates,
    records: DistinctRecords,
    n_bins: np.ndarray,
    alpha: float | str = 0.7,
    max_rules: int | None = None,
    problem: CoverProblem | None = None,
) -> Selection:
    """Weighted set cover over (already filtered and ranked) candidates; ``problem`` (from
    :func:`candidates_problem` on the same arguments) saves its construction when several
    ``alpha`` or ``max_rules`` are tried."""
    if len(candidates) == 0:
        return Selection(np.zeros(0, dtype=np.int64), (), 0, 0)
    if problem is None:
        problem = candidates_problem(candidates, records, n_bins)
    elif problem.n_candidates != len(candidates):
        raise ValueError("the cover problem was built for other candidates")
    totals = (float(records.positive_weight.sum()), float(records.negative_weight.sum()))
    chosen, gains = greedy_cover(problem, alpha, max_rules, totals)
    indices = np.asarray(chosen, dtype=np.int64)
    stats = tuple(
        RuleStats(float(candidates.positives[i]), float(candidates.negatives[i]), g[0], g[1])
        for i, g in zip(indices, gains, strict=True)
    )
    return Selection(indices, stats, len(candidates), len(candidates))


@dataclass(frozen=True)
class FilteredCandidates:
    """The candidates kept by the local-support filter (``ranked``: their indices in the
    original candidates, best first; ``kept``: those candidates) and their cover problem
    (None when nothing is kept). One serves every ``alpha`` and ``max_rules``."""

    n_candidates: int
    ranked: np.ndarray
    kept: Candidates
    problem: CoverProblem | None


def filter_for_cover(
    candidates: Candidates,
    records: DistinctRecords,
    n_bins: np.ndarray,
    top_k: int | None = 200,
    min_local_support: float = 0.0,
) -> FilteredCandidates:
    """The filter stage of :func:`select_rules`, with the cover problem built for reuse."""
    ranked = filter_candidates(candidates, records, top_k, min_local_support)
    kept = candidates.take(ranked)
    problem = candidates_problem(kept, records, n_bins) if len(kept) else None
    return FilteredCandidates(len(candidates), ranked, kept, problem)


def cover_filtered(
    filtered: FilteredCandidates,
    records: DistinctRecords,
    n_bins: np.ndarray,
    alpha: float | str = 0.7,
    max_rules: int | None = None,
) -> Selection:
    """The cover stage of :func:`select_rules` on a :func:`filter_for_cover` result."""
    chosen = cover_candidates(filtered.kept, records, n_bins, alpha, max_rules, filtered.problem)
    return Selection(
        filtered.ranked[chosen.indices],
        chosen.stats,
        filtered.n_candidates,
        int(filtered.ranked.size),
    )


def select_rules(
    candidates: Candidates,
    records: DistinctRecords,
    n_bins: np.ndarray,
    alpha: float | str = 0.7,
    top_k: int | None = 200,
    max_rules: int | None = None,
    min_local_support: float = 0.0,
) -> Selection:
    """Filter the candidates and choose the final rules by weighted set cover; the returned
    indices refer to ``candidates``."""
    filtered = filter_for_cover(candidates, records, n_bins, top_k, min_local_support)
    return cover_filtered(filtered, records, n_bins, alpha, max_rules)


def majority_prefix(stats, n_positive: float, n_negative: float) -> int:
    """How many of the first selected rules to keep so that the rule set is at least as
    accurate on its training records as answering the majority class everywhere: the longest
    such prefix (0 rules: abstain, i.e. predict the negative class). Not in the paper: its
    set cover accepts any rule above ``1 - alpha`` precision, whatever the base rate.

    ``stats`` are the rules' :class:`~libre_lib.rules.RuleStats` in selection order (their new
    positives and negatives add up to the prefix's true and false positives). When the
    positives are the majority and no prefix reaches their rate, every rule is kept (abstaining
    cannot help there).
    """
    new_pos = np.array([s.new_positives for s in stats], dtype=float)
    new_neg = np.array([s.new_negatives for s in stats], dtype=float)
    # accuracy of each prefix minus that of "negative everywhere", in weighted records
    gain = np.concatenate([[0.0], np.cumsum(new_pos - new_neg)])
    needed = max(float(n_positive) - float(n_negative), 0.0)
    ok = np.flatnonzero(gain >= needed - 1e-9 * max(float(n_positive) + float(n_negative), 1.0))
    return int(ok[-1]) if ok.size else len(new_pos)
