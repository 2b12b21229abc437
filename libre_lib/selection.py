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
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .encoding import DistinctRecords, offsets
from .ensemble import Candidates
from .rules import RuleStats


def coverage(points: np.ndarray, codes: np.ndarray, n_bins: np.ndarray) -> np.ndarray:
    """Bool matrix (points x records): does point ``a`` cover record ``s`` (``a <= s``)?"""
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


def weighted_set_cover(
    cover: np.ndarray,
    positive_weight: np.ndarray,
    negative_weight: np.ndarray,
    generality: np.ndarray,
    alpha: float,
    max_rules: int | None = None,
) -> tuple[list[int], list[tuple[float, float]]]:
    """Greedy weighted set cover over ``cover`` (candidates x records); returns the chosen rows
    in order and the (new positives, new negatives) each one added."""
    # Records with the same coverage pattern are interchangeable: collapse them.
    covered_any = cover.any(axis=0)
    patterns, inverse = np.unique(
        np.packbits(cover[:, covered_any].T, axis=1), axis=0, return_inverse=True
    )
    inverse = inverse.ravel()
    wp = np.bincount(inverse, weights=positive_weight[covered_any], minlength=len(patterns))
    wn = np.bincount(inverse, weights=negative_weight[covered_any], minlength=len(patterns))
    matrix = np.unpackbits(patterns, axis=1, count=cover.shape[0]).T.astype(np.float64)
    chosen: list[int] = []
    gains: list[tuple[float, float]] = []
    available = np.ones(cover.shape[0], dtype=bool)
    order_index = np.arange(cover.shape[0])
    limit = np.inf if max_rules is None else max_rules
    while len(chosen) < limit and wp.sum() > 0:
        new_pos = matrix @ wp
        new_neg = matrix @ wn
        # rounded so that exact ties (integer counts) are not decided by float noise
        gain = np.round(alpha * new_pos - (1.0 - alpha) * new_neg, 9)
        gain[~available] = -np.inf
        best = int(np.lexsort((order_index, -generality, -gain))[0])
        if not gain[best] > 0:
            break
        chosen.append(best)
        gains.append((float(new_pos[best]), float(new_neg[best])))
        available[best] = False
        hit = matrix[best] > 0
        wp[hit] = 0.0
        wn[hit] = 0.0
    return chosen, gains


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


def cover_candidates(
    candidates: Candidates,
    records: DistinctRecords,
    n_bins: np.ndarray,
    alpha: float = 0.7,
    max_rules: int | None = None,
) -> Selection:
    """Weighted set cover over (already filtered and ranked) candidates."""
    if len(candidates) == 0:
        return Selection(np.zeros(0, dtype=np.int64), (), 0, 0)
    generality = (~candidates.points).sum(axis=1)
    cover = coverage(candidates.points, records.codes, n_bins)
    chosen, gains = weighted_set_cover(
        cover, records.positive_weight, records.negative_weight, generality, alpha, max_rules
    )
    indices = np.asarray(chosen, dtype=np.int64)
    stats = tuple(
        RuleStats(float(candidates.positives[i]), float(candidates.negatives[i]), g[0], g[1])
        for i, g in zip(indices, gains, strict=True)
    )
    return Selection(indices, stats, len(candidates), len(candidates))


def select_rules(
    candidates: Candidates,
    records: DistinctRecords,
    n_bins: np.ndarray,
    alpha: float = 0.7,
    top_k: int | None = 200,
    max_rules: int | None = None,
    min_local_support: float = 0.0,
) -> Selection:
    """Filter the candidates and choose the final rules by weighted set cover; the returned
    indices refer to ``candidates``."""
    ranked = filter_candidates(candidates, records, top_k, min_local_support)
    chosen = cover_candidates(candidates.take(ranked), records, n_bins, alpha, max_rules)
    return Selection(ranked[chosen.indices], chosen.stats, len(candidates), int(ranked.size))
