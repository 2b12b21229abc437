"""Missing-value-aware discretization: ChiMerge for numbers, one bin per category.

LIBRE works on discretized features (paper, section 3 and "Data Preprocessing"): every numeric
feature is cut into intervals by ChiMerge (Kerber 1992) with a chi-square threshold (the paper
tunes it over {6, 4.6, 4}). What this module adds for real data, and one choice:

* **Bounded pre-binning.** With more than ``max_prebins`` distinct values, the sorted values are
  first grouped into at most ``max_prebins`` bins (quantile bins, plus one of its own for every
  value heavier than a quantile bin), so merging costs O(max_prebins^2) whatever the
  number of rows and the whole step stays O(n log n) (one sort).
* **Optional speck removal.** ``min_fraction > 0`` merges any interval holding less than that
  share of the values into its more similar neighbour first. It is off by default: measured on
  the benchmark datasets it did not change F1, and it can swallow a rare positive class (the
  imbalanced case LIBRE is for); the interval cap already keeps rules short.
* **Optional significant cuts.** ``significant_cuts=True`` then merges, least significant
  first, every adjacent pair of intervals whose class counts do not differ by Fisher's exact
  test at the threshold's own level divided by the number of places ChiMerge could cut (a
  Bonferroni correction): on continuous columns ChiMerge keeps specks of a dozen rows that
  pass its threshold by chance among hundreds of places; a column left without a cut point
  keeps its quartiles (:func:`quartile_cuts`). Off by default: on the design half it left F1
  unchanged (docs/benchmarks.md, twentieth round).
* **A real cap.** After the usual "merge the adjacent pair with the lowest chi-square while it is
  below the threshold", merging of the lowest pair continues until at most ``max_intervals``
  intervals remain. Noisy large data otherwise keeps hundreds of intervals per feature.
* **Two merge orders.** ``merge_order="lowest"`` (the default) is Kerber's: the adjacent pair
  with the lowest chi-square is merged first. ``"sweep"`` is the order of the paper's reference
  code: left-to-right sweeps merge every non-overlapping adjacent pair at most the threshold,
  until a sweep merges nothing. The sweep mixes classes early and so ends with fewer, coarser
  intervals on noisy columns; Kerber's order first joins runs of one class, whose chi-square
  against an opposite run (their combined size) then stays above the threshold.

Missing values (NaN/None) get a bin of their own, placed after the value bins, so rules can
include or exclude them. Bin code -1 means "no bin": an unseen category, or a missing value in a
feature that had none in training. A record with code -1 in a feature matches only rules that
do not test that feature.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
import pandas as pd
from numba import njit

from .errors import LibreWarning, user_stacklevel
from .inputs import category_codes, category_values, numeric_values
from .params import validate_params

NUMERIC = "numeric"
CATEGORICAL = "categorical"
DEFAULT_MAX_PREBINS = 256
DEFAULT_MIN_FRACTION = 0.0
#: A categorical column with at least this share of distinct values among its present values
#: (and at least ``ID_LIKE_MIN_ROWS`` of them) is nearly unique per row: an id, not a feature.
ID_LIKE_FRACTION = 0.9
ID_LIKE_MIN_ROWS = 50
#: A categorical column with more categories than this has them grouped into bins
#: (:func:`group_categories`) instead of one bin each: the learners' search grows with the
#: bins (one bin per category, 20,000 rows: 2 categories 5 s, 100 14 s, 300 47 s, 1,000 over
#: 5 minutes for ``LibreClassifier()``). No development dataset has more than 41.
MANY_CATEGORIES = 100
#: Categories of a column with more than ``MANY_CATEGORIES`` that hold fewer rows than this
#: are pooled before the categories are grouped (:func:`group_categories`).
MIN_CATEGORY_ROWS = 10


def chi2_adjacent(counts: np.ndarray) -> np.ndarray:
    """Chi-square statistic of each pair of adjacent intervals.

    ``counts`` is (k, 2): negatives and positives per interval. Cells with an expected count of
    zero (a class absent from both intervals) contribute nothing.
    """
    a, b = counts[:-1, 0], counts[:-1, 1]
    c, d = counts[1:, 0], counts[1:, 1]
    n = a + b + c + d
    denom = (a + b) * (c + d) * (a + c) * (b + d)
    with np.errstate(divide="ignore", invalid="ignore"):
        chi2 = n * (a * d - b * c) ** 2 / denom
    return np.where(denom > 0, chi2, 0.0)


def chimerge_cuts(
    values: np.ndarray,
    positive: np.ndarray,
    threshold: float,
    max_intervals: int | None = None,
    max_prebins: int = DEFAULT_MAX_PREBINS,
    min_fraction: float = DEFAULT_MIN_FRACTION,
    significant_cuts: bool = False,
    merge_order: str = "lowest",
) -> np.ndarray:
    """Cut points of ChiMerge on one numeric feature (missing values must be removed first).

    Interval ``k`` is ``[cuts[k-1], cuts[k])`` with open ends below the first and above the last
    cut; every cut is the smallest training value of the interval to its right.
    """
    return _chimerge(
        values,
        positive,
        threshold,
        max_intervals,
        max_prebins,
        min_fraction,
        significant_cuts,
        merge_order=merge_order,
    )[0]


def _value_counts(
    values: np.ndarray, positive: np.ndarray, weight: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Sorted distinct values and their (negative, positive) counts, from two sorts and one
    merge pass (no argsort, no scatter-add: both dominated the time on a million rows). With
    ``weight``, the counts are the rows' summed weights."""
    if weight is not None:
        distinct, inverse = np.unique(values, return_inverse=True)
        positive = positive.astype(bool)
        counts = np.empty((distinct.size, 2))
        counts[:, 0] = np.bincount(
            inverse, weights=np.where(positive, 0.0, weight), minlength=distinct.size
        )
        counts[:, 1] = np.bincount(
            inverse, weights=np.where(positive, weight, 0.0), minlength=distinct.size
        )
        return distinct, counts
    ordered = np.sort(values)
    pos_values = np.sort(values[positive.astype(bool)])
    return _count_sorted(ordered, pos_values)


@njit(cache=True, nogil=True)
def _count_sorted(ordered, pos_values):
    n = ordered.size
    n_distinct = 0
    for i in range(n):
        if i == 0 or ordered[i] != ordered[i - 1]:
            n_distinct += 1
    distinct = np.empty(n_distinct, dtype=ordered.dtype)
    counts = np.zeros((n_distinct, 2))
    k = -1
    j = 0
    for i in range(n):
        if i == 0 or ordered[i] != ordered[i - 1]:
            k += 1
            distinct[k] = ordered[i]
            # positives equal to this value (both arrays sorted, same values)
            while j < pos_values.size and pos_values[j] < ordered[i]:
                j += 1
            start = j
            while j < pos_values.size and pos_values[j] == ordered[i]:
                j += 1
            counts[k, 1] = j - start
        counts[k, 0] += 1.0
    for k in range(n_distinct):
        counts[k, 0] -= counts[k, 1]
    return distinct, counts


def _chimerge(
    values: np.ndarray,
    positive: np.ndarray,
    threshold: float,
    max_intervals: int | None,
    max_prebins: int,
    min_fraction: float,
    significant_cuts: bool = False,
    weight: np.ndarray | None = None,
    merge_order: str = "lowest",
) -> tuple[np.ndarray, int]:
    """Cut points and the number of distinct values; ``weight``: the rows' sample weights
    (all > 0), counted as that many rows."""
    if values.size == 0:
        return np.empty(0), 0
    distinct, counts = _value_counts(values, positive, weight)
    total = values.size if weight is None else float(weight.sum())
    return _cuts_from_counts(
        distinct, counts, threshold, max_intervals, max_prebins, min_fraction * total,
        significant_cuts, merge_order,
    )  # fmt: skip


def _cuts_from_counts(
    distinct: np.ndarray,
    counts: np.ndarray,
    threshold: float,
    max_intervals: int | None,
    max_prebins: int,
    min_count: float = 0.0,
    significant_cuts: bool = False,
    merge_order: str = "lowest",
) -> tuple[np.ndarray, int]:
    """ChiMerge on sorted distinct values and their (negative, positive) counts: the cut points
    and the number of distinct values."""
    if distinct.size <= 1:
        return np.empty(0), int(distinct.size)
    lefts = distinct
    if distinct.size > max_prebins:
        lefts, counts = prebin(distinct, counts, max_prebins)
    # the pre-bins, which a streamed run knows exactly as a frame does (not every value)
    prebins, totals = lefts, counts.sum(axis=1)
    places = lefts.size - 1  # where ChiMerge could cut: the Bonferroni count
    counts, lefts = _merge(counts, lefts, threshold, max_intervals, min_count, merge_order)
    if significant_cuts and lefts.size > 1:
        level = math.erfc(math.sqrt(max(float(threshold), 0.0) / 2.0)) / places
        counts, kept = _merge_insignificant(np.ascontiguousarray(counts, dtype=np.float64), level)
        lefts = lefts[kept]
    if significant_cuts and lefts.size <= 1:  # no difference alone; maybe with other columns
        return quartile_cuts(prebins, totals), int(distinct.size)
    return lefts[1:].astype(np.float64), int(distinct.size)


#: Where :func:`quartile_cuts` cuts a column: the shares of its rows below each cut point.
QUARTILES = (0.25, 0.5, 0.75)


def quartile_cuts(distinct: np.ndarray, totals: np.ndarray) -> np.ndarray:
    """The cut points of a column that significant cuts left whole: its quartiles (for each
    share of :data:`QUARTILES`, the first of its sorted ``distinct`` values, or pre-bins, with
    at least that share of the rows below it; ``totals`` rows each), so that learners can
    still combine it with other columns. A column that matters only together with another
    (y = x0 > 0.5 XOR x1 > 0.5) shows no difference alone, and without a cut point no rule
    could test it (docs/benchmarks.md, thirty-seventh round)."""
    totals = np.asarray(totals, dtype=np.float64)
    below = np.cumsum(totals) - totals
    at = np.searchsorted(below, totals.sum() * np.asarray(QUARTILES), side="left")
    at = np.unique(at[(at > 0) & (at < distinct.size)])
    return np.asarray(distinct, dtype=np.float64)[at]


class InexactElements(Exception):
    """Pre-binning needs the distinct values inside some elements that stand for several
    (``indices``): see :func:`prebin`."""

    def __init__(self, indices: np.ndarray):
        super().__init__(f"{indices.size} element(s) must be resolved into their values")
        self.indices = indices


def prebin(
    distinct: np.ndarray,
    counts: np.ndarray,
    max_prebins: int = DEFAULT_MAX_PREBINS,
    exact: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """The pre-bins of sorted distinct values: their smallest values and summed counts.

    With ``exact`` (a flag per element), an element may instead stand for a run of
    consecutive distinct values (its value the run's smallest, its counts the run's sum): the
    result is the same as on the values themselves as long as no quantile falls inside such an
    element and none of them is heavy; otherwise :class:`InexactElements` names them. This is
    how the streamed pipeline pre-bins a column it never holds whole.
    """
    starts = _prebin_starts(counts.sum(axis=1), max_prebins, exact)
    starts = starts[(starts > 0) & (starts < distinct.size)]
    bounds = np.concatenate(([0], starts))
    return distinct[bounds], np.add.reduceat(counts, bounds, axis=0)


def _prebin_starts(
    sizes: np.ndarray, max_prebins: int, exact: np.ndarray | None = None
) -> np.ndarray:
    """First distinct-value index of every pre-bin after the first (at most max_prebins bins).

    Quantile bins on the cumulative count: a pre-bin ends at the value where a quantile is
    reached (so a heavy value always ends one), and a value heavier than a quantile bin also
    starts one, so it stands alone and the values around it are not glued to it. Each heavy
    value can add one pre-bin, so the number of quantiles shrinks until the total fits.
    """
    cumulative = np.cumsum(sizes)
    q = max_prebins
    while True:
        targets = np.linspace(0.0, cumulative[-1], q + 1)[1:-1]
        ends = np.searchsorted(cumulative, targets, side="left") + 1
        heavy = np.flatnonzero(sizes >= cumulative[-1] / q)
        if exact is not None:
            needed = np.concatenate([ends - 1, heavy])
            needed = np.unique(needed[~exact[needed]])
            if needed.size:
                raise InexactElements(needed)
        starts = np.unique(np.concatenate([ends, heavy]))
        starts = starts[(starts > 0) & (starts < sizes.size)]
        if starts.size < max_prebins or q == 1:
            return starts
        q -= starts.size + 1 - max_prebins


def _merge(
    counts: np.ndarray,
    lefts: np.ndarray,
    threshold: float,
    max_intervals: int | None,
    min_count: float = 0.0,
    merge_order: str = "lowest",
):
    """Merge adjacent intervals, one pair at a time, while one of these holds:

    1. some interval holds fewer than ``min_count`` records: the smallest one is merged with
       the neighbour it is more similar to (lower chi-square);
    2. the lowest chi-square of an adjacent pair is below ``threshold`` (Kerber's ChiMerge);
    3. there are more than ``max_intervals`` intervals: the lowest-chi-square pair is merged.

    Ties go to the leftmost pair. With ``merge_order="sweep"``, step 2 is instead the
    reference code's sweeps (:func:`_sweep_compiled`), after step 1 and before step 3.
    Returns the merged counts and the left edges that remain.
    """
    cap = -1 if max_intervals is None else int(max_intervals)
    counts = np.ascontiguousarray(counts, dtype=np.float64)
    if merge_order == "sweep":
        counts, kept = _merge_compiled(counts, -1.0, -1, float(min_count))
        counts, swept = _sweep_compiled(np.ascontiguousarray(counts), float(threshold))
        kept = kept[swept]
        min_count, threshold = 0.0, -1.0  # done: only the cap is left
    else:
        kept = np.arange(counts.shape[0])
    merged, capped = _merge_compiled(counts, float(threshold), cap, float(min_count))
    return merged, lefts[kept[capped]]


@njit(cache=True, nogil=True)
def _pair_chi2(a, b, c, d):
    """:func:`chi2_adjacent` of one pair, the same arithmetic in the same order."""
    denom = (a + b) * (c + d) * (a + c) * (b + d)
    if denom > 0:
        return (a + b + c + d) * (a * d - b * c) ** 2 / denom
    return 0.0


@njit(cache=True, nogil=True)
def _merge_compiled(counts, threshold, cap, min_count):
    """:func:`_merge` on arrays shifted in place (at most ``max_prebins`` intervals, so the
    quadratic shifting is cheap); returns the merged counts and the kept intervals' indices."""
    neg, pos, kept, m = _unmerged(counts)
    chi2 = np.zeros(max(m - 1, 0))
    for i in range(m - 1):
        chi2[i] = _pair_chi2(neg[i], pos[i], neg[i + 1], pos[i + 1])
    while m > 1:
        j = -1
        if min_count > 0:
            small = 0
            for i in range(1, m):
                if neg[i] + pos[i] < neg[small] + pos[small]:
                    small = i
            if neg[small] + pos[small] < min_count:
                if small == 0:
                    j = 0
                elif small == m - 1:
                    j = small - 1
                elif chi2[small - 1] <= chi2[small]:
                    j = small - 1
                else:
                    j = small
        if j < 0:
            j = 0
            for i in range(1, m - 1):
                if chi2[i] < chi2[j]:
                    j = i
            if not (chi2[j] < threshold or (cap >= 0 and m > cap)):
                break
        _join(neg, pos, kept, chi2, j, m)
        m -= 1
        lo, hi = max(j - 1, 0), min(j + 1, m - 1)
        for i in range(lo, hi):
            chi2[i] = _pair_chi2(neg[i], pos[i], neg[i + 1], pos[i + 1])
    return _merged(neg, pos, kept, m)


@njit(cache=True, nogil=True)
def _sweep_compiled(counts, threshold):
    """The reference code's ChiMerge passes: a left-to-right sweep merges each adjacent pair
    whose chi-square is at most ``threshold`` (a merged interval is compared with its next
    neighbour only in the next sweep); sweeps repeat until one merges nothing. Returns the
    merged counts and the kept intervals' indices (as :func:`_merge_compiled`)."""
    neg, pos, kept, m = _unmerged(counts)
    scores = np.zeros(max(m - 1, 0))  # unused by the sweep; _join shifts it
    changed = True
    while changed:
        changed = False
        i = 0
        while i < m - 1:
            if _pair_chi2(neg[i], pos[i], neg[i + 1], pos[i + 1]) <= threshold:
                _join(neg, pos, kept, scores, i, m)
                m -= 1
                changed = True
            i += 1
    return _merged(neg, pos, kept, m)


@njit(cache=True, nogil=True)
def _unmerged(counts):
    """The merge loops' working copies: negatives, positives, kept indices, and their count."""
    m = counts.shape[0]
    return counts[:, 0].copy(), counts[:, 1].copy(), np.arange(m), m


@njit(cache=True, nogil=True)
def _join(neg, pos, kept, pair_scores, j, m):
    """Merge interval ``j + 1`` into ``j`` of the first ``m``, in place: the intervals after
    it and the adjacent pairs' scores shift down by one."""
    neg[j] += neg[j + 1]
    pos[j] += pos[j + 1]
    for i in range(j + 1, m - 1):
        neg[i] = neg[i + 1]
        pos[i] = pos[i + 1]
        kept[i] = kept[i + 1]
    for i in range(j, m - 2):
        pair_scores[i] = pair_scores[i + 1]


@njit(cache=True, nogil=True)
def _merged(neg, pos, kept, m):
    """The first ``m`` intervals' counts and indices, as the merge loops return them."""
    merged = np.empty((m, 2))
    merged[:, 0] = neg[:m]
    merged[:, 1] = pos[:m]
    return merged, kept[:m].copy()


@njit(cache=True, nogil=True)
def _fisher_p(neg1, pos1, neg2, pos2):
    """Two-sided p-value of Fisher's exact test on two intervals' class counts (rounded to
    whole rows): twice the tail away from the hypergeometric mode, at most 1. The tail's
    terms shrink geometrically, so it stops once they no longer change the sum."""
    n1 = int(neg1 + pos1 + 0.5)
    a = int(pos1 + 0.5)
    total = n1 + int(neg2 + pos2 + 0.5)
    k = a + int(pos2 + 0.5)
    if n1 == 0 or n1 == total or k == 0 or k == total:
        return 1.0
    lo, hi = max(0, n1 + k - total), min(n1, k)
    base = (
        math.lgamma(k + 1) + math.lgamma(total - k + 1) + math.lgamma(n1 + 1)
        + math.lgamma(total - n1 + 1) - math.lgamma(total + 1)
    )  # fmt: skip
    mode = (n1 + 1) * (k + 1) // (total + 2)
    step = 1 if a >= mode else -1
    tail = 0.0
    x = a
    while lo <= x <= hi:
        term = math.exp(
            base - math.lgamma(x + 1) - math.lgamma(k - x + 1) - math.lgamma(n1 - x + 1)
            - math.lgamma(total - k - n1 + x + 1)
        )  # fmt: skip
        tail += term
        if term <= 1e-17 * tail:
            break
        x += step
    return min(1.0, 2.0 * tail)


@njit(cache=True, nogil=True)
def _merge_insignificant(counts, level):
    """Merge the adjacent pair with the highest :func:`_fisher_p` while it exceeds ``level``;
    returns the merged counts and the kept intervals' indices (as :func:`_merge_compiled`)."""
    neg, pos, kept, m = _unmerged(counts)
    p = np.zeros(max(m - 1, 0))
    for i in range(m - 1):
        p[i] = _fisher_p(neg[i], pos[i], neg[i + 1], pos[i + 1])
    while m > 1:
        j = 0
        for i in range(1, m - 1):
            if p[i] > p[j]:
                j = i
        if p[j] <= level:
            break
        _join(neg, pos, kept, p, j, m)
        m -= 1
        for i in range(max(j - 1, 0), min(j + 1, m - 1)):
            p[i] = _fisher_p(neg[i], pos[i], neg[i + 1], pos[i + 1])
    return _merged(neg, pos, kept, m)


#: Integers beyond this lose precision as float64 (cut points are floats).
_EXACT_INTEGERS = 2**53


def row_ids_message(name, distinct: np.ndarray, n_present: int) -> str | None:
    """A warning about a numeric column holding a different whole number in every row (most
    often a row id or a running number, on which ChiMerge finds cut points that do not carry
    over to new rows), or None. ``distinct``: its distinct values."""
    if n_present < ID_LIKE_MIN_ROWS or distinct.size < n_present:
        return None
    values = np.asarray(distinct, dtype=np.float64)
    if not np.all(np.isfinite(values)) or not np.all(values == np.round(values)):
        return None
    if np.asarray(distinct).dtype.kind == "f" and np.abs(values).max() >= 2.0**52:
        return None  # every float that large is a whole number: it tells nothing
    return (
        f"Column {name!r} holds a different whole number in each of its {n_present:,} rows: "
        "if it identifies rows (an id, a row or line number), exclude it, since cut points "
        "on an identifier do not carry over to new rows; if it is a measurement, ignore this."
    )


def distinct_numbers(series: pd.Series) -> np.ndarray:
    """The distinct values of a numeric column, by hashing (no sort of the column); integers
    compared as integers, so ids beyond 2**53 that share a float stay apart."""
    if pd.api.types.is_integer_dtype(series.dtype):
        return pd.unique(series.dropna().to_numpy())
    values = numeric_values(series)
    return pd.unique(values[~np.isnan(values)])


def _warn_if_row_ids(name, distinct: np.ndarray, n_present: int) -> None:
    message = row_ids_message(name, distinct, n_present)
    if message is not None:
        warnings.warn(message, LibreWarning, stacklevel=user_stacklevel())


def _warn_if_rounded(series: pd.Series) -> None:
    """Warn about an integer column whose values do not all survive the float64 cut points."""
    if not pd.api.types.is_integer_dtype(series.dtype) or series.isna().all():
        return
    if max(abs(int(series.min())), abs(int(series.max()))) > _EXACT_INTEGERS:
        distinct = int(series.nunique())
        as_floats = int(pd.Series(series.dropna().to_numpy(dtype=np.float64)).nunique())
        shared = (
            f": its {distinct:,} distinct values are {as_floats:,} as floats"
            + (" (so the column is dropped as constant)" if as_floats == 1 else "")
            if as_floats < distinct
            else ": nearby values may share a bin"
        )
        warnings.warn(
            f"Column {series.name!r} holds integers beyond 2**53, which ChiMerge's float cut "
            f"points round{shared}. If they are identifiers, drop the column; if they are "
            "codes, declare it categorical.",
            LibreWarning,
            stacklevel=user_stacklevel(),
        )


@dataclass(frozen=True)
class FeatureBins:
    """How one input column maps to bins: numeric intervals or categories, plus a missing bin."""

    name: str
    kind: str
    cuts: tuple[float, ...] = ()
    categories: tuple = ()
    has_missing: bool = False
    groups: tuple[int, ...] = ()
    """The bin of each category when the categories are grouped (:func:`group_categories`);
    empty: one bin per category."""
    n_value_bins: int = field(init=False)

    def __post_init__(self):
        if self.kind == NUMERIC:
            n = len(self.cuts) + 1
        else:
            n = max(self.groups) + 1 if self.groups else len(self.categories)
        object.__setattr__(self, "n_value_bins", n)

    def bin_categories(self, b: int) -> tuple:
        """The categories of value bin ``b`` (a categorical column), in category order."""
        if not self.groups:
            return (self.categories[b],)
        return self._members[b]

    @cached_property
    def _members(self) -> tuple[tuple, ...]:
        """The categories of every value bin of grouped categories, found in one pass."""
        members: list[list] = [[] for _ in range(self.n_value_bins)]
        for category, group in zip(self.categories, self.groups, strict=True):
            members[group].append(category)
        return tuple(tuple(m) for m in members)

    @property
    def n_bins(self) -> int:
        return self.n_value_bins + int(self.has_missing)

    @property
    def missing_bin(self) -> int | None:
        return self.n_value_bins if self.has_missing else None

    def codes(self, series: pd.Series) -> np.ndarray:
        """Bin code of every value; -1 for values without a bin (see module docstring)."""
        if self.kind == NUMERIC:
            values = numeric_values(series, learned=True)
            missing = np.isnan(values)
            codes = np.searchsorted(np.asarray(self.cuts), values, side="right")
        else:
            values, missing = category_values(series)
            codes = category_codes(values, self.categories)
            if self.groups:
                codes = np.where(codes >= 0, np.asarray(self.groups)[codes], -1)
        codes = codes.astype(np.int32)
        codes[missing] = self.missing_bin if self.has_missing else -1
        return codes

    def to_dict(self) -> dict:
        out = {"name": self.name, "kind": self.kind, "has_missing": self.has_missing}
        if self.kind == NUMERIC:
            out["cuts"] = [float(c) for c in self.cuts]
        else:
            out["categories"] = list(self.categories)
            if self.groups:
                out["groups"] = list(self.groups)
        return out

    @classmethod
    def from_dict(cls, data: dict) -> FeatureBins:
        return cls(
            name=data["name"],
            kind=data["kind"],
            cuts=tuple(float(c) for c in data.get("cuts", ())),
            categories=tuple(data.get("categories", ())),
            has_missing=bool(data["has_missing"]),
            groups=tuple(int(g) for g in data.get("groups", ())),
        )


@dataclass(frozen=True)
class Discretization:
    """The fitted bins of every kept column, in input order, and the columns dropped."""

    features: tuple[FeatureBins, ...]
    dropped: tuple[str, ...] = ()

    @property
    def names(self) -> list[str]:
        return [f.name for f in self.features]

    @cached_property
    def n_bins(self) -> np.ndarray:
        """Bins per kept feature (computed once: the learners ask for it often; not to be
        written to)."""
        return np.array([f.n_bins for f in self.features], dtype=np.int64)

    def ordered_bins(self) -> np.ndarray:
        """Per kept feature, how many of its bins are ordered intervals: a numeric column's
        value bins (its missing bin, last, is not one of them); 0 for a categorical one."""
        return np.array(
            [f.n_value_bins if f.kind == NUMERIC else 0 for f in self.features], dtype=np.int64
        )

    def transform(self, frame: pd.DataFrame) -> np.ndarray:
        """Bin codes (rows x kept features, int32, -1 = no bin) of ``frame``'s columns."""
        codes = np.empty((frame.shape[0], len(self.features)), dtype=np.int32)
        for j, feature in enumerate(self.features):
            codes[:, j] = feature.codes(frame[feature.name])
        return codes

    def to_dict(self) -> dict:
        return {"features": [f.to_dict() for f in self.features], "dropped": list(self.dropped)}

    @classmethod
    def from_dict(cls, data: dict) -> Discretization:
        return cls(
            features=tuple(FeatureBins.from_dict(f) for f in data["features"]),
            dropped=tuple(data.get("dropped", ())),
        )


@dataclass(frozen=True)
class ColumnCounts:
    """The class counts of one column's training values: all that binning it needs, taken from
    one frame (:func:`column_counts`) or merged from batches (the streamed pipeline).

    ``values`` are the sorted distinct values of a numeric column, or its categories; with
    ``exact`` False (numeric only) they are the smallest value of each of a streamed fine
    pre-binning's bins, so ChiMerge's cut points fall on those bins' edges.
    """

    name: str
    kind: str
    values: np.ndarray
    counts: np.ndarray
    """(len(values), 2): the negative and positive weight of each value."""
    n_present: int
    """Rows with a value (not missing)."""
    n_missing: int
    exact: bool = True


def column_counts(
    name: str,
    series: pd.Series,
    positive: np.ndarray,
    is_categorical: bool,
    weight: np.ndarray | None = None,
) -> ColumnCounts:
    """The class counts of one column (``weight``: the rows' sample weights, all > 0)."""
    positive = np.asarray(positive, dtype=bool)
    if is_categorical:
        values, missing = category_values(series)
    else:
        values = numeric_values(series)
        missing = np.isnan(values)
        _warn_if_rounded(series)
    if missing.any():
        keep = ~missing
        values, positive = values[keep], positive[keep]
        weight = None if weight is None else weight[keep]
    if is_categorical:
        codes, uniques = pd.factorize(values)
        w = np.ones(codes.size) if weight is None else weight
        counts = np.column_stack(
            [
                np.bincount(codes, weights=np.where(positive, 0.0, w), minlength=len(uniques)),
                np.bincount(codes, weights=np.where(positive, w, 0.0), minlength=len(uniques)),
            ]
        )
        distinct = np.asarray(uniques, dtype=object)
        kind = CATEGORICAL
    elif values.size:
        distinct, counts = _value_counts(values, positive, weight)
        kind = NUMERIC
    else:
        distinct, counts, kind = np.empty(0), np.zeros((0, 2)), NUMERIC
    return ColumnCounts(name, kind, distinct, counts, int(values.size), int(missing.sum()))


def feature_bins(
    counts: ColumnCounts,
    chi2_threshold: float = 4.6,
    max_intervals: int | None = 3,
    max_prebins: int = DEFAULT_MAX_PREBINS,
    significant_cuts: bool = False,
    merge_order: str = "lowest",
) -> tuple[FeatureBins, int]:
    """One column's bins from its class counts, and its number of distinct values."""
    has_missing = counts.n_missing > 0
    if counts.kind == CATEGORICAL:
        order = _category_order(counts.values)
        categories = tuple(_plain(counts.values[i]) for i in order)
        groups = ()
        if len(categories) > MANY_CATEGORIES:
            groups = group_categories(
                np.asarray(counts.counts, dtype=np.float64)[order],
                chi2_threshold,
                max_intervals,
                max_prebins,
            )
        bins = FeatureBins(
            counts.name, CATEGORICAL, categories=categories, has_missing=has_missing, groups=groups
        )
        return bins, len(categories)
    cuts, n_distinct = _cuts_from_counts(
        np.asarray(counts.values, dtype=np.float64),
        np.asarray(counts.counts, dtype=np.float64),
        chi2_threshold,
        max_intervals,
        max_prebins,
        significant_cuts=significant_cuts,
        merge_order=merge_order,
    )
    bins = FeatureBins(counts.name, NUMERIC, cuts=tuple(cuts.tolist()), has_missing=has_missing)
    return bins, n_distinct


def discretization_from_counts(
    columns: list[ColumnCounts],
    chi2_threshold: float = 4.6,
    max_intervals: int | None = 3,
    max_prebins: int = DEFAULT_MAX_PREBINS,
    significant_cuts: bool = False,
    merge_order: str = "lowest",
) -> Discretization:
    """The bins of every column from their class counts; constant and all-missing columns are
    dropped (warning), nearly-unique categorical columns are warned about. ``significant_cuts``:
    numeric columns keep only cuts that pass Fisher's test; ``merge_order``: ChiMerge's
    (see the module's notes)."""
    validate_params(
        {"chi2_threshold": chi2_threshold, "max_intervals": max_intervals,
         "merge_order": merge_order},
        owner="fit_discretization",
    )  # fmt: skip
    features, dropped = [], []
    reasons: dict[bool, list] = {}  # all missing? -> the columns dropped so
    for counts in columns:
        feature, n_distinct = feature_bins(
            counts, chi2_threshold, max_intervals, max_prebins, significant_cuts, merge_order
        )
        if counts.kind == CATEGORICAL:
            _warn_if_id_like(counts.name, n_distinct, counts.n_present)
        elif counts.exact:
            _warn_if_row_ids(counts.name, counts.values, counts.n_present)
        if n_distinct == 0 or (n_distinct == 1 and not feature.has_missing):
            reasons.setdefault(n_distinct == 0, []).append(counts.name)
            dropped.append(counts.name)
            continue
        features.append(feature)
    for empty, names in reasons.items():  # one warning per reason: wide data drop many
        reason = "all values are missing" if empty else "it has a single value"
        if len(names) == 1:
            said = f"Column {names[0]!r} is dropped: {reason}, so no rule can use it."
        else:
            reason = "all their values are missing" if empty else "each has a single value"
            shown = ", ".join(map(repr, names[:DROPPED_SHOWN]))
            more = f" and {len(names) - DROPPED_SHOWN:,} more" if len(names) > DROPPED_SHOWN else ""
            said = f"Columns {shown}{more} are dropped: {reason}, so no rule can use them."
        warnings.warn(said, LibreWarning, stacklevel=user_stacklevel())
    return Discretization(tuple(features), tuple(dropped))


#: Dropped columns named in the warning about them.
DROPPED_SHOWN = 10


def fit_discretization(
    frame: pd.DataFrame,
    positive: np.ndarray,
    categorical: list[bool],
    chi2_threshold: float = 4.6,
    max_intervals: int | None = 3,
    max_prebins: int = DEFAULT_MAX_PREBINS,
    weight: np.ndarray | None = None,
) -> Discretization:
    """Learn the bins of every column; constant and all-missing columns are dropped (warning).
    ``weight``: the rows' sample weights (all > 0) in ChiMerge's class counts."""
    validate_params(
        {"chi2_threshold": chi2_threshold, "max_intervals": max_intervals},
        owner="fit_discretization",
    )
    columns = frame_counts(frame, positive, categorical, weight)
    return discretization_from_counts(columns, chi2_threshold, max_intervals, max_prebins)


def frame_counts(
    frame: pd.DataFrame,
    positive: np.ndarray,
    categorical: list[bool],
    weight: np.ndarray | None = None,
) -> list[ColumnCounts]:
    """The class counts of every column of ``frame``: what every ChiMerge threshold and cap
    starts from, so discretizations of the same rows can share them."""
    return [
        column_counts(name, series, positive, is_categorical, weight)
        for (name, series), is_categorical in zip(frame.items(), categorical, strict=True)
    ]


def id_like_message(name, n_distinct: int, n_present: int) -> str | None:
    """A warning about a categorical column that is nearly unique per row (an id, not a
    feature: its categories are too rare to be grouped, so no rule can use it), or None."""
    if n_present >= ID_LIKE_MIN_ROWS and n_distinct >= ID_LIKE_FRACTION * n_present:
        return (
            f"Categorical column {name!r} has {n_distinct:,} distinct values in "
            f"{n_present:,} rows: it looks like an id, not a feature (each category covers "
            "about one row, so rules on it do not generalize). Exclude it; if its values are "
            "measurements, give it as numbers and leave it out of categorical_features "
            "(features.categorical in a pipeline spec)."
        )
    return None


def _warn_if_id_like(name, n_distinct: int, n_present: int) -> None:
    message = id_like_message(name, n_distinct, n_present)
    if message is not None:
        warnings.warn(message, LibreWarning, stacklevel=user_stacklevel())


def identifier_messages(
    frame: pd.DataFrame, categorical: list[bool], skip: Callable[[str], bool] | None = None
) -> list[str]:
    """The warnings about identifier columns (:func:`id_like_message`,
    :func:`row_ids_message`) that ``frame``'s columns draw, for a report to repeat; a column
    for which ``skip(name)`` is true draws none (asked only of columns that would draw one:
    e.g. numbers stored as text, which draw their own warning)."""
    out = []
    for name, is_categorical in zip(frame.columns, categorical, strict=True):
        series = frame[name]
        n_present = int(series.notna().sum())
        if is_categorical:
            message = id_like_message(name, int(series.nunique()), n_present)
        else:
            message = row_ids_message(name, distinct_numbers(series), n_present)
        if message is not None and not (skip is not None and skip(name)):
            out.append(message)
    return out


def group_categories(
    counts: np.ndarray,
    chi2_threshold: float,
    max_intervals: int | None,
    max_prebins: int = DEFAULT_MAX_PREBINS,
) -> tuple[int, ...]:
    """The bin of each category of a column with many of them (``counts``: (negative, positive)
    per category): ChiMerge on the categories ordered by their positive share.

    With more than :data:`MANY_CATEGORIES` categories one bin each makes the learners' search
    slow and their rules fit noise; ordered by positive share, categories are cut like the
    values of a numeric column (Kerber's ChiMerge is defined on any ordered attribute), so
    a bin gathers categories of similar share that the chi-square cannot tell apart.
    Categories with fewer than :data:`MIN_CATEGORY_ROWS` rows have no reliable share of their
    own: they are pooled first and placed at their pooled share (otherwise the rows of an
    id-like column would be sorted by their own labels, one bin per class).
    """
    k = counts.shape[0]
    rare = counts.sum(axis=1) < MIN_CATEGORY_ROWS
    # one unit per frequent category, one for all rare ones together
    unit = np.where(rare, -1, np.arange(k))
    units, unit_of = np.unique(unit, return_inverse=True)
    unit_counts = np.zeros((units.size, 2))
    np.add.at(unit_counts, unit_of, counts)
    share = unit_counts[:, 1] / np.maximum(unit_counts.sum(axis=1), np.finfo(float).tiny)
    order = np.lexsort((np.arange(units.size), share))
    cuts, _ = _cuts_from_counts(
        np.arange(units.size, dtype=np.float64),
        unit_counts[order],
        chi2_threshold,
        max_intervals,
        max_prebins,
    )
    bin_of_position = np.searchsorted(cuts, np.arange(units.size), side="right")
    bin_of_unit = np.empty(units.size, dtype=np.int64)
    bin_of_unit[order] = bin_of_position
    return tuple(bin_of_unit[unit_of].tolist())


def _plain(value):
    return value.item() if isinstance(value, np.generic) else value


def _category_order(values) -> list[int]:
    """Indices that sort a column's categories (by value; by type name and text when the
    values do not compare)."""
    items = [_plain(v) for v in values]
    try:
        return sorted(range(len(items)), key=items.__getitem__)
    except TypeError:
        return sorted(range(len(items)), key=lambda i: (type(items[i]).__name__, str(items[i])))
