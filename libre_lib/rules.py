"""Rules as frozen value objects, evaluated on raw columns (paper, section 3.1, "From Boundary
Set To Rules").

A boundary point's zeros are the bins a rule allows. Per constrained feature this becomes one
:class:`Condition`: a union of intervals ``[low, high)`` (adjacent bins merged; ``-inf`` /
``inf`` are the open "min" / "max" ends) or a set of categories, plus whether a missing value
satisfies it. A feature whose every bin is allowed is unconstrained and gets no condition.

Printed, a rule set reads as in the paper's figures::

    IF glucose ∈ [158, max] AND blood_pressure ∈ [56, max]
    OR glucose ∈ [110, 158) AND bmi ∈ [30.7, max]
    THEN diabetes = 1 ELSE diabetes = 0

SQL and dictionaries are rendered by :mod:`libre_lib.render`, which imports this module.
"""

from __future__ import annotations

import json
import math
import numbers
import re
import unicodedata
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace

import numpy as np
import pandas as pd

from .discretization import NUMERIC, Discretization
from .encoding import offsets
from .inputs import category_codes, narrow_float, numeric_values, of_kind


@dataclass(frozen=True, order=True)
class Interval:
    """The half-open range ``[low, high)``; ``low=-inf`` reads "min", ``high=inf`` reads "max"."""

    low: float
    high: float

    def __post_init__(self):
        if not self.low < self.high:
            raise ValueError(f"empty interval [{self.low}, {self.high})")

    def contains(self, values: np.ndarray) -> np.ndarray:
        """Which ``values`` lie in the range, compared in their own float type: a float32
        column's 0.585 is float32(0.585), below the float64 cut point 0.585, but equal to the
        cut point in float32."""
        low, high = self.low, self.high
        if values.dtype != np.float64:
            with np.errstate(over="ignore"):  # a cut beyond the type's range: its infinity
                low, high = values.dtype.type(low), values.dtype.type(high)
        return (values >= low) & (values < high)

    def __str__(self) -> str:
        return interval_text(self)


def _mixed_key(value) -> tuple:
    """Orders categories of several types: numbers by value (2 before 10), then the others by
    type and text."""
    if isinstance(value, numbers.Real) and not isinstance(value, bool):
        return (0, "", float(value), "")
    return (1, type(value).__name__, 0.0, str(value))


@dataclass(frozen=True)
class Condition:
    """One atom of a rule: the feature's value lies in ``intervals`` (numeric) or in
    ``categories`` (categorical), or is missing when ``missing`` is true."""

    feature: str
    kind: str
    intervals: tuple[Interval, ...] = ()
    categories: tuple = ()
    missing: bool = False

    def __post_init__(self):
        merged: list[Interval] = []
        for interval in sorted(self.intervals):
            if merged and merged[-1].high >= interval.low:
                last = merged.pop()
                interval = Interval(last.low, max(last.high, interval.high))
            merged.append(interval)
        object.__setattr__(self, "intervals", tuple(merged))
        try:
            cats = tuple(sorted(set(self.categories)))
        except TypeError:  # numbers and texts: the numbers first, by value, then the texts
            cats = tuple(sorted(set(self.categories), key=_mixed_key))
        object.__setattr__(self, "categories", cats)
        if not (self.intervals or self.categories or self.missing):
            raise ValueError(f"condition on {self.feature!r} allows nothing")

    def evaluate(self, column: pd.Series) -> np.ndarray:
        """Boolean mask of the values that satisfy the condition."""
        if self.kind == NUMERIC:
            narrow = narrow_float(column.dtype)
            # a narrow column compared in its own type, as it holds its values: the same
            # order as its decimals (which fit's cut points of float32 rows are)
            values = numeric_values(column, learned=True, decimals=False)
            if narrow is not None:  # compared as the column holds them (Interval.contains)
                values = values.astype(narrow)
            is_missing = np.isnan(values)
            hit = np.zeros(values.shape, dtype=bool)
            for interval in self.intervals:
                hit |= interval.contains(values)
        else:
            is_missing = column.isna().to_numpy()
            hit = np.zeros(is_missing.shape, dtype=bool)
            if self.categories:
                if of_kind(column, self.categories):
                    hit = column.isin(list(self.categories)).to_numpy(dtype=bool)
                else:  # e.g. codes read back as text: match what they spell
                    hit = category_codes(column.to_numpy(dtype=object), self.categories) >= 0
                hit = hit & ~is_missing
        if self.missing:
            hit |= is_missing
        return hit

    def __str__(self) -> str:
        return condition_text(self)


@dataclass(frozen=True)
class Rule:
    """A conjunction of conditions on distinct features, in column order."""

    conditions: tuple[Condition, ...]

    def __post_init__(self):
        names = [c.feature for c in self.conditions]
        if len(set(names)) != len(names):
            raise ValueError(f"a rule may hold one condition per feature; got {names}")

    def __len__(self) -> int:
        return len(self.conditions)

    def __iter__(self) -> Iterator[Condition]:
        return iter(self.conditions)

    @property
    def features(self) -> list[str]:
        return [c.feature for c in self.conditions]

    def evaluate(self, frame: pd.DataFrame, cache: dict | None = None) -> np.ndarray:
        """Boolean mask of the rows the rule fires on. ``cache`` (condition -> mask), shared
        by rules evaluated on the same frame, evaluates each distinct condition once."""
        hit = np.ones(frame.shape[0], dtype=bool)
        for condition in self.conditions:
            if cache is None:
                hit &= condition.evaluate(frame[condition.feature])
                continue
            if condition not in cache:
                cache[condition] = condition.evaluate(frame[condition.feature])
            hit &= cache[condition]
        return hit

    def __str__(self) -> str:
        return rule_text(self)

    def _repr_pretty_(self, printer, cycle: bool) -> None:  # a notebook shows the text
        printer.text(str(self))


@dataclass(frozen=True)
class RuleStats:
    """Training statistics of a selected rule (weighted record counts)."""

    positives: float
    negatives: float
    new_positives: float
    new_negatives: float

    @property
    def precision(self) -> float:
        total = self.positives + self.negatives
        return self.positives / total if total else 0.0


@dataclass(frozen=True)
class RuleSet:
    """An ordered disjunction of rules predicting ``positive_class`` (else ``negative_class``)."""

    rules: tuple[Rule, ...]
    target: str = "y"
    positive_class: object = 1
    negative_class: object = 0
    stats: tuple[RuleStats, ...] = field(default=(), compare=False)

    def __len__(self) -> int:
        return len(self.rules)

    def __iter__(self) -> Iterator[Rule]:
        return iter(self.rules)

    def __getitem__(self, index):
        """A rule; a slice is a rule set of those rules, with their statistics when it is a
        first-rules prefix (``new_positives`` count what a rule adds to the rules before it)."""
        if isinstance(index, slice):
            rules = self.rules[index]
            prefix = self.rules[: len(rules)] == rules
            stats = self.stats[: len(rules)] if prefix and len(self.stats) == len(self) else ()
            return replace(self, rules=rules, stats=stats)
        return self.rules[index]

    @property
    def n_atoms(self) -> float:
        """Average number of conditions per rule (the paper's "#atoms")."""
        return float(np.mean([len(r) for r in self.rules])) if self.rules else 0.0

    def fired(self, frame: pd.DataFrame) -> np.ndarray:
        """Bool matrix (rows x rules): which rule fires on which record."""
        out = np.zeros((frame.shape[0], len(self.rules)), dtype=bool)
        for j, rule in enumerate(self.rules):
            out[:, j] = rule.evaluate(frame)
        return out

    def to_frame(self) -> pd.DataFrame:
        """The rules as a table, one row per rule in selection order.

        Returns
        -------
        DataFrame
            ``rule`` (1-based), ``text``, ``n_conditions``, ``features`` (comma-separated) and,
            when the training statistics are known, ``positives`` / ``negatives`` (training
            records the rule covers), ``precision`` and ``new_positives`` / ``new_negatives``
            (what it added to the rules before it).
        """
        table = pd.DataFrame(
            {
                "rule": np.arange(1, len(self.rules) + 1),
                "text": [rule_text(r) for r in self.rules],
                "n_conditions": [len(r) for r in self.rules],
                "features": [", ".join(c.feature for c in r.conditions) for r in self.rules],
            }
        )
        if len(self.stats) == len(self.rules):
            for name in ("positives", "negatives", "precision", "new_positives", "new_negatives"):
                table[name] = [float(getattr(s, name)) for s in self.stats]
        return table

    def __str__(self) -> str:
        return ruleset_text(self)

    def _repr_pretty_(self, printer, cycle: bool) -> None:  # a notebook shows the rules
        printer.text(str(self))


def tested_columns(rules) -> set[str]:
    """The columns some rule of ``rules`` tests."""
    return {name for rule in rules for name in rule.features}


# --- text (the value objects' own str) -----------------------------------------------------


def number_text(value: float) -> str:
    """Shortest text that reads back as the same float (``158.0`` -> ``158``)."""
    text = repr(float(value))
    return text[:-2] if text.endswith(".0") else text


def interval_text(interval: Interval) -> str:
    low = "min" if interval.low == -math.inf else number_text(interval.low)
    if interval.high == math.inf:
        return f"[{low}, max]"
    return f"[{low}, {number_text(interval.high)})"


_RULE_WORDS = re.compile(r"(?:^|\s)(?:IF|AND|OR|THEN|ELSE)(?:\s|$)|^missing$")


def fired_patterns(fired: np.ndarray) -> tuple[np.ndarray, list[tuple[int, ...]]]:
    """The distinct rows of a fired-rules matrix (rows x rules): each row's pattern number,
    and each pattern's rule positions. Explanations are then built once per pattern, not per
    row."""
    n_rows, n_rules = fired.shape
    if n_rules == 0:
        return np.zeros(n_rows, dtype=np.intp), [()]
    if n_rules <= 62:
        keys = fired.astype(np.int64) @ (np.int64(1) << np.arange(n_rules, dtype=np.int64))
        inverse, uniques = pd.factorize(keys)
        bits = np.arange(n_rules, dtype=np.int64)
        patterns = [tuple(np.flatnonzero((int(k) >> bits) & 1).tolist()) for k in uniques]
    else:
        rows, inverse = np.unique(fired, axis=0, return_inverse=True)
        patterns = [tuple(np.flatnonzero(r).tolist()) for r in rows]
    return np.asarray(inverse).ravel(), patterns


def fired_text(texts: Sequence[str]) -> str:
    """The texts of the rules that fire on a row, joined by OR; when several fire, each rule
    of more than one condition in parentheses (``A OR B AND C`` read as one conjunction);
    empty when none fires."""
    if len(texts) <= 1:
        return "".join(texts)
    return " OR ".join(f"({t})" if " AND " in t else t for t in texts)


def set_item_text(value) -> str:
    """A category as an item of ``{a, b}`` (or after ``=``): quoted (JSON-style) when its text
    would read as several items or none (a comma, a brace, a quote, an empty or space-padded
    text) or as part of the rule around it (a relation sign, a word such as AND, the word
    missing)."""
    text = str(value)
    if any(unicodedata.category(ch) in ("Cc", "Cf") for ch in text):
        # a line break, a terminal escape, a right-to-left override: as a column's name is
        return json.dumps(text, ensure_ascii=True)
    if (
        not text
        or text != text.strip()
        or any(ch in text for ch in ',{}"=≠<>≤≥∈∉∪')
        or _RULE_WORDS.search(text)
    ):
        return json.dumps(text, ensure_ascii=False)
    return text


def name_text(name) -> str:
    """A column's name (or label) in a rule: quoted (JSON-style) where it would read as part
    of the rule around it: a word such as AND or OR (``income AND age``, ``OR``), a set sign
    (∈, ∉, ∪, braces), ``missing`` alone, or an empty or space-padded name. Other signs are
    kept as written (a label ``Age <years>``, ``a "quoted" word``); a name that reads as a
    number is quoted too."""
    text = str(name)
    if any(unicodedata.category(ch) in ("Cc", "Cf") for ch in text):
        # control and format characters (a right-to-left override reorders what follows)
        return json.dumps(text, ensure_ascii=True)
    ambiguous = (
        not text
        or text != text.strip()
        or any(ch in text for ch in "{}∈∉∪")
        or _RULE_WORDS.search(text)
        or _NUMBER_NAME.fullmatch(text)  # a column named 1 read as a value: 1 ∈ [155, max]
    )
    return json.dumps(text, ensure_ascii=False) if ambiguous else text


#: A name that reads as a number.
_NUMBER_NAME = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")


def _shown_order(value) -> tuple:
    """How categories are listed: numbers, and texts that write one, by value ("2" before
    "10"), then the other texts (a pipeline reads categories as text)."""
    try:
        number = float(value if isinstance(value, numbers.Real) else str(value))
    except ValueError:
        number = math.nan
    if isinstance(value, bool) or not math.isfinite(number):
        return (1, 0.0, str(value))
    return (0, number, str(value))


def set_items_text(values) -> str:
    """Categories as ``{a, b}``, numbers by value; where a text spells the same as another value
    (the text "25" beside the number 25, in a column of mixed types) the texts are quoted."""
    values = sorted(values, key=_shown_order)
    spelled = [str(v) for v in values]
    clash = len(set(spelled)) < len(spelled)
    items = [
        json.dumps(str(v), ensure_ascii=False) if clash and isinstance(v, str) else set_item_text(v)
        for v in values
    ]
    return "{" + ", ".join(items) + "}"


def condition_text(condition: Condition) -> str:
    parts = []
    if condition.kind == NUMERIC:
        parts = [interval_text(i) for i in condition.intervals]
    elif condition.categories:
        parts = [set_items_text(condition.categories)]
    name = name_text(condition.feature)
    if condition.missing:
        if not parts:
            return f"{name} is missing"
        parts.append("missing")
    return f"{name} ∈ " + " ∪ ".join(parts)


def rule_text(rule: Rule) -> str:
    if not rule.conditions:
        return "TRUE"
    return " AND ".join(condition_text(c) for c in rule.conditions)


def class_text(target, value) -> str:
    """``target = value`` after THEN / ELSE, each quoted where it would read as part of the rule
    (a target named ``is churned AND x``, a class `` yes`` with a leading space)."""
    return f"{name_text(target)} = {set_item_text(value)}"


def outcome_text(ruleset: RuleSet, target=None) -> str:
    """``THEN target = positive ELSE target = negative`` (``target``: the rule set's own name
    unless given, e.g. a label)."""
    target = ruleset.target if target is None else target
    positive, negative = ruleset.positive_class, ruleset.negative_class
    return f"THEN {class_text(target, positive)} ELSE {class_text(target, negative)}"


def ruleset_text(ruleset: RuleSet) -> str:
    then = outcome_text(ruleset)
    if not ruleset.rules:
        return f"IF FALSE {then}"
    lines = [("IF " if i == 0 else "OR ") + rule_text(r) for i, r in enumerate(ruleset.rules)]
    return "\n".join([*lines, then])


def rule_from_point(point: np.ndarray, discretization: Discretization) -> Rule:
    """Map a lattice element of the full layout back to a rule on the original features."""
    n_bins = discretization.n_bins
    if not n_bins.size:
        return Rule(())
    starts = offsets(n_bins)
    point = np.asarray(point, dtype=bool)
    # the features with a 1 (an excluded bin) in their block; the others are unconstrained
    # (every feature has at least one bin, so no block is empty)
    tested = np.flatnonzero(np.add.reduceat(point, starts, dtype=np.int64))
    conditions = []
    for j in tested:
        feature, start = discretization.features[j], starts[j]
        block = point[start : start + feature.n_bins]
        allowed = np.flatnonzero(~block)
        missing = feature.has_missing and bool(~block[feature.missing_bin])
        values = allowed[allowed < feature.n_value_bins]
        if feature.kind == NUMERIC:
            edges = (-math.inf, *feature.cuts, math.inf)
            intervals = tuple(Interval(edges[b], edges[b + 1]) for b in values)
            conditions.append(
                Condition(feature.name, NUMERIC, intervals=intervals, missing=missing)
            )
        else:
            cats = tuple(c for b in values for c in feature.bin_categories(int(b)))
            conditions.append(
                Condition(feature.name, feature.kind, categories=cats, missing=missing)
            )
    return Rule(tuple(conditions))


def rules_from_points(points: Sequence[np.ndarray], discretization: Discretization) -> list[Rule]:
    return [rule_from_point(p, discretization) for p in points]
