"""Boundary refinement: the selected rules' numeric cut points moved to the training rows' own
gaps (not in the paper; it follows section 3.3's set cover).

ChiMerge places cut points from each column's class counts alone (section 4), so a rule's
boundary on one column sits where that column's classes change on their own, not where they
change among the rows its other conditions select. Refinement moves each endpoint of a
numeric condition to the position that most raises a training score of the whole rule set
(F1, or the gain ``alpha·TP − (1 − alpha)·FP``: accuracy at 0.5), counting only the rows whose
prediction that condition decides (the rule's other conditions hold, no other rule covers
them), one endpoint at a time, until no move raises the score (every move raises it, so the
ascent ends). A new cut point lies halfway between two adjacent training values; an endpoint
that takes in every row beyond it becomes ``min`` / ``max``; among equally good positions the
one nearest the old cut point wins. Conditions of several intervals (bins excluded in their
middle), categories and the missing-value flag are left as they are.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pandas as pd

from ..discretization import NUMERIC
from ..inputs import Target, numeric_values
from ..rules import Condition, Interval, Rule, RuleStats

__all__ = ["OBJECTIVES", "refine_rules", "rule_stats"]

#: The score each ``refine`` setting (:data:`~libre_lib.params.REFINE_OBJECTIVES`) maximizes
#: (a float: the gain with that alpha).
OBJECTIVES = {"f1": "f1", "accuracy": 0.5}

MAX_PASSES = 20
"""At most this many passes over every endpoint (each pass but the last moves one)."""


def refine_rules(
    rules: Sequence[Rule], frame: pd.DataFrame, target: Target, objective: float | str = 0.5
) -> list[Rule]:
    """The rules with their numeric endpoints moved to raise the rule set's training score.

    Parameters
    ----------
    rules : sequence of Rule
        The selected rules, in selection order (the order is kept).
    frame : DataFrame
        The training rows, raw values (the columns the rules test).
    target : Target
        Their labels and weights.
    objective : float in [0, 1] or "f1", default=0.5
        What a move must raise: a float is the gain ``alpha·TP − (1 − alpha)·FP`` with that
        ``alpha`` (0.5: the rule set's training accuracy), "f1" the rule set's training F1.

    Returns
    -------
    list of Rule
        One rule per input rule; a rule none of whose endpoints could move is the input rule.
    """
    rules = list(rules)
    if not rules or frame.shape[0] == 0:
        return rules
    positive, negative = target.class_weights()
    score = _scorer(objective, float(positive.sum()))
    columns: dict[str, _Column] = {}
    masks: dict[Condition, np.ndarray] = {}

    def mask(condition: Condition) -> np.ndarray:
        if condition not in masks:
            masks[condition] = condition.evaluate(frame[condition.feature])
        return masks[condition]

    n_rows = frame.shape[0]
    fires = [_fires(rule.conditions, mask, n_rows) for rule in rules]
    counts = np.sum(fires, axis=0, dtype=np.int64)
    totals = None
    for _ in range(MAX_PASSES):
        moved = False
        for i in range(len(rules)):
            for feature in rules[i].features:
                conditions = rules[i].conditions
                j = rules[i].features.index(feature)
                condition = conditions[j]
                if condition.kind != NUMERIC or len(condition.intervals) != 1:
                    continue
                if feature not in columns:
                    columns[feature] = _Column.of(frame[feature])
                column = columns[feature]
                others = conditions[:j] + conditions[j + 1 :]
                free = _fires(others, mask, n_rows) & (counts == fires[i]) & column.present
                if totals is None:  # the rule set's (true, false) positive weight
                    covered = counts > 0
                    totals = float(positive[covered].sum()), float(negative[covered].sum())
                interval = column.best_interval(
                    free, positive, negative, totals, score, condition.intervals[0]
                )
                if interval == condition.intervals[0]:
                    continue
                if interval == Interval(-math.inf, math.inf) and condition.missing:
                    rules[i] = Rule(others)  # the condition allows every value: dropped
                else:
                    new = Condition(
                        feature, NUMERIC, intervals=(interval,), missing=condition.missing
                    )
                    rules[i] = Rule((*conditions[:j], new, *conditions[j + 1 :]))
                hit = _fires(rules[i].conditions, mask, n_rows)
                counts += hit.astype(np.int64) - fires[i]
                fires[i] = hit
                totals = None
                moved = True
        if not moved:
            break
    return rules


def _scorer(objective: float | str, n_positive: float):
    """``score(tp, fp)`` (arrays of the rule set's true / false positive weight) to maximize."""
    if objective == "f1":
        return lambda tp, fp: 2 * tp / np.maximum(tp + fp + n_positive, 1e-300)
    alpha = float(objective)
    return lambda tp, fp: alpha * tp - (1.0 - alpha) * fp


def _fires(conditions, mask, n_rows: int) -> np.ndarray:
    hit = np.ones(n_rows, dtype=bool)
    for condition in conditions:
        hit &= mask(condition)
    return hit


class _Column:
    """A numeric column's distinct values (ascending) and each row's rank among them, so every
    endpoint position's counts are one ``bincount`` of the free rows."""

    def __init__(self, distinct: np.ndarray, rank: np.ndarray, present: np.ndarray):
        self.distinct, self.rank, self.present = distinct, rank, present

    @classmethod
    def of(cls, series: pd.Series) -> _Column:
        values = numeric_values(series)
        present = ~np.isnan(values)
        distinct, inverse = np.unique(values[present], return_inverse=True)
        rank = np.zeros(values.shape, dtype=np.int64)
        rank[present] = inverse
        return cls(distinct, rank, present)

    def best_interval(self, free, positive, negative, totals, score, interval) -> Interval:
        """``interval`` with its low, then its high endpoint moved to the best position for
        the ``free`` rows (the rows whose prediction only this condition decides); ``totals``
        is the rule set's current (true, false) positive weight."""
        rows = np.flatnonzero(free)
        rank = self.rank[rows]
        size = self.distinct.size
        weights = np.stack(
            [
                np.bincount(rank, weights=positive[rows], minlength=size),
                np.bincount(rank, weights=negative[rows], minlength=size),
            ]
        )
        seen = weights.sum(axis=0) > 0  # a value only rows of weight 0 hold is no position
        weights = weights[:, seen]
        distinct = self.distinct[seen]
        low = _best_end(distinct, weights, totals, score, interval.low, interval.high, True)
        high = _best_end(distinct, weights, totals, score, low, interval.high, False)
        return Interval(low, high)


def _best_end(distinct, weights, totals, score, low, high, lower: bool) -> float:
    """The best ``low`` (``lower``) or ``high`` endpoint, the other one fixed: ``distinct``
    are the free rows' values (ascending), ``weights`` their (positive, negative) weight."""
    inside = distinct < high if lower else distinct >= low
    current = low if lower else high
    if not inside.any():
        return current
    distinct, weights = distinct[inside], weights[:, inside]
    if lower:  # take in values from the top down: k values -> low below the k-th largest
        distinct, weights = distinct[::-1], weights[:, ::-1]
    taken = np.cumsum(weights, axis=1)
    # how many distinct values the current endpoint takes in
    now = int(np.count_nonzero(distinct >= current if lower else distinct < current))
    tp = totals[0] - (taken[0, now - 1] if now else 0.0) + taken[0]
    fp = totals[1] - (taken[1, now - 1] if now else 0.0) + taken[1]
    scores = score(tp, fp)
    now_score = score(np.array(totals[0]), np.array(totals[1]))
    best = float(scores.max())
    slack = 1e-9 * max(abs(best), 1.0)
    if best <= now_score + slack:
        return current
    ties = np.flatnonzero(scores >= best - slack)
    k = int(ties[np.argmin(np.abs(ties + 1 - now))]) + 1  # values taken in
    if k == distinct.size:
        return -math.inf if lower else math.inf
    inner, outer = float(distinct[k - 1]), float(distinct[k])
    cut = (inner + outer) / 2
    if lower:
        return cut if outer < cut <= inner else inner
    return cut if inner < cut <= outer else outer


def rule_stats(rules: Sequence[Rule], frame: pd.DataFrame, target: Target) -> tuple[RuleStats, ...]:
    """Each rule's training weight of positives and negatives it covers, and of those no rule
    before it covers (:class:`~libre_lib.rules.RuleStats`, as the set cover records them)."""
    positive, negative = target.class_weights()
    covered = np.zeros(frame.shape[0], dtype=bool)
    cache: dict = {}
    stats = []
    for rule in rules:
        hit = rule.evaluate(frame, cache)
        new = hit & ~covered
        stats.append(
            RuleStats(
                float(positive[hit].sum()),
                float(negative[hit].sum()),
                float(positive[new].sum()),
                float(negative[new].sum()),
            )
        )
        covered |= hit
    return tuple(stats)
