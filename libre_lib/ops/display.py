"""Rule text for people: rounded cut points, comparisons, labels, and rules combined for display.

The model's own text (``str(rule)``, :mod:`libre_lib.rules`) is exact and paper-style:
``bmi ∈ [26.400000000000002, max]``. A report reads better as ``bmi ≥ 26.4``:

>>> display = RuleDisplay.from_model(model, column_labels={"plas": "glucose"},
...                                  class_labels={"1": "diabetic"})
>>> display.rule_text(model.rules_[0])
'glucose ≥ 158 AND age ≥ 30'
>>> print(display.ruleset_text(model.rules_))

Given the rows a report describes, each cut point prints as the roundest number between it
and the closest value below it in those rows, so the printed rules sort every one of them as
the model does; without rows, cut points are rounded to the fewest significant digits (at least
three) that keep them increasing (:func:`display_numbers`). A cut point written with at most
four significant digits (16.82) prints as it is, so the printed value itself falls on the
model's side. Either way two different cut points never print the same. Everything here is
display only: predictions use the exact rules.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import ROUND_FLOOR, Decimal

import numpy as np
import pandas as pd

from ..discretization import NUMERIC
from ..inputs import numeric_values
from ..rules import Condition, Interval, Rule, RuleSet, class_text, name_text, set_item_text

__all__ = [
    "KNOWN_LEGEND",
    "LEGEND",
    "SAMPLED",
    "RuleDisplay",
    "combine_rules",
    "display_numbers",
    "round_text",
    "rounding_note",
]

MIN_DIGITS = 3
"""The fewest significant digits a cut point is shown with."""
MAX_DIGITS = 17
"""Enough significant digits to tell any two doubles apart."""
EXACT_DIGITS = 4
"""A cut point written with at most this many significant digits prints as it is: 16.82
printed as 16.8 put 16.8 itself on the other side of the printed rule."""

LEGEND = (
    ("x ≥ a", "x is a or more."),
    ("x < b", "x is below b (b itself does not match)."),
    ("a ≤ x < b", "x lies between a (included) and b (not included)."),
    ("x ∈ [a, b)", "the same range written as an interval: a included, b not included."),
    (
        "min, max",
        "the lowest and the highest value: [min, b) has no lower bound, [a, max] no upper bound.",
    ),
    ("∪", "or: x ∈ [min, 20) ∪ [30, max] matches values below 20 and values of 30 or more."),
    (
        "∪ missing",
        "a row where x is missing also matches: a blank cell (a text such as NA in a CSV), "
        "or a value the data line says is read as missing.",
    ),
    ("x = c, x ∈ {c, d}", "x is the category c, or one of the categories listed."),
    ("x is missing", "only rows where x is missing match."),
    ("x is not missing", "any value of x matches, but a missing one does not."),
    (
        "AND, OR",
        "each condition between two ANDs is about one column and is read whole first: "
        "“x ∈ [a, max] ∪ missing AND y = c” is (x ≥ a or x missing) and y = c. A rule is "
        "its conditions joined by AND; the rule set flags a row that any rule (OR) matches.",
    ),
)
"""The notation of the report's rules: (notation, meaning)."""

KNOWN_LEGEND = (
    (
        "x ≠ c, x ∉ {c, d}",
        "x is any other category seen in training, or missing (“, not missing”: a missing "
        "value does not match); a category new since training does not match.",
    ),
    (
        "(any of its n known values)",
        "every category of x seen in training matches; a missing value or a category new "
        "since training does not.",
    ),
)
"""The notation of conditions read through a column's known categories
(:meth:`RuleDisplay.known_reading`), shown when a rule reads so."""


#: How ``rows`` of :func:`rounding_note` starts when the display was built from a sample of the
#: rows (a streamed run's report).
SAMPLED = "a sample of the"


def rounding_note(rows: str = "training and holdout") -> str:
    """How the report prints cut points; ``rows`` names the rows the display was built from
    ("training and holdout", "training", ":data:`SAMPLED` training and holdout", ...; empty when
    it was built from none)."""
    if not rows:
        return (
            "A cut point of at most four significant digits is printed as it is, a longer one "
            "rounded; the exact cut points are in model.json, and a value between a printed "
            "and an exact cut point can be sorted differently from the text."
        )
    return (
        "A cut point of at most four significant digits is printed as it is. A longer one is "
        "printed with the fewest digits (at least three significant ones) that keep it above "
        f"the closest value below it in the rows of this report ({rows} rows), so every "
        "printed rule sorts those rows exactly as the model does. The exact cut points are in "
        "model.json; "
        + (
            "a value of the rows left out of the sample, or a new one,"
            if rows.startswith(SAMPLED)
            else "a new value"
        )
        + " between a printed and an exact cut point (the printed number itself included: "
        "“x < 5.14” printed for an exact 5.1401 matches 5.14) can be sorted differently from "
        "the text."
    )


SHOWN_IN_RULE = 12
"""A rule's condition on more categories than this of a grouped column names the groups."""


def number_ranges(numbers: Sequence[int]) -> str:
    """``1–3, 5, 7–8`` for [1, 2, 3, 5, 7, 8] (sorted, distinct)."""
    runs: list[list[int]] = []
    for n in numbers:
        if runs and n == runs[-1][-1] + 1:
            runs[-1].append(n)
        else:
            runs.append([n])
    return ", ".join(str(r[0]) if len(r) == 1 else f"{r[0]}–{r[-1]}" for r in runs)


def natural_key(value) -> tuple:
    """Sort key that puts numbers (and text that reads as a number) in numeric order, before
    other text, and orders the digit runs inside text as numbers: 2 before 10, "2" before
    "10", "c2" before "c10"."""
    try:
        return (0, float(value), ())
    except (TypeError, ValueError):
        parts = re.split(r"(\d+)", str(value))
        return (1, 0.0, tuple(int(p) if i % 2 else p for i, p in enumerate(parts)))


# --- numbers -----------------------------------------------------------------------------------


def round_text(value: float, digits: int) -> str:
    """``value`` rounded to ``digits`` significant digits (never in its integer part), without
    trailing zeros or exponent: ``29.709533`` -> ``'29.7'``, ``1234567.8`` -> ``'1234568'``."""
    value = float(value)
    if not math.isfinite(value):
        return "max" if value > 0 else "min" if value < 0 else "nan"
    if value == 0:
        return "0"
    decimals = max(0, digits - 1 - math.floor(math.log10(abs(value))))
    text = f"{value:.{decimals}f}"
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def display_numbers(
    values: Iterable[float], data: np.ndarray | None = None, min_digits: int = MIN_DIGITS
) -> dict[float, str]:
    """Display text of each finite value (cut points of one column), strictly increasing.

    With ``data`` (the column's values in the rows a report describes), each cut point prints
    as the roundest number between it and the closest data value (or smaller cut point) below
    it: the printed rule then sorts every one of those rows as the model does. Without, each is
    rounded to at least ``min_digits`` significant digits, more where the texts would
    otherwise not increase. Either way a value of at most :data:`EXACT_DIGITS` significant
    digits prints as it is.

    >>> display_numbers([29.709533160035694, 29.7, 48.3])
    {29.7: '29.7', 29.709533160035694: '29.71', 48.3: '48.3'}
    >>> display_numbers([1.189, 29.709533160035694], data=np.array([1.18, 1.189, 29.7001]))
    {1.189: '1.189', 29.709533160035694: '29.709'}
    """
    numbers = sorted({float(v) for v in values if math.isfinite(float(v))})
    short = {v: _short_text(v) for v in numbers}
    if all(text is not None for text in short.values()):
        return short
    if data is not None:
        data = np.asarray(data, dtype=np.float64)
        if data.size > 1 and not (data[1:] > data[:-1]).all():  # not already sorted, distinct
            data = np.unique(data)
        data = data[np.isfinite(data)]
        texts, previous = {}, -math.inf
        for number in numbers:
            below = int(np.searchsorted(data, number, side="left"))
            low = max(float(data[below - 1]) if below else -math.inf, previous)
            texts[number] = short[number] or roundest_between(low, number, min_digits)
            previous = number
        return texts
    digits = [min_digits] * len(numbers)
    while True:
        texts = [short[v] or round_text(v, d) for v, d in zip(numbers, digits, strict=True)]
        clash = False
        for i in range(len(numbers) - 1):
            if float(texts[i]) >= float(texts[i + 1]):  # equal, or out of order
                for j in (i, i + 1):
                    if digits[j] < MAX_DIGITS:
                        digits[j] += 1
                        clash = True
        if not clash:
            return dict(zip(numbers, texts, strict=True))


def _short_text(value: float) -> str | None:
    """``value`` as it is written, if that takes at most :data:`EXACT_DIGITS` significant
    digits (``16.82``, ``0.3699``, ``1200000``), else None."""
    exact = Decimal(repr(float(value))).normalize()
    if len(exact.as_tuple().digits) > EXACT_DIGITS:
        return None
    text = format(exact, "f")
    return "0" if text in ("-0", "") else text


def roundest_between(low: float, high: float, min_digits: int = MIN_DIGITS) -> str:
    """The roundest number in ``(low, high]``, as text: ``high`` floored to the fewest decimals
    (from ``min_digits`` significant digits, never rounding the integer part) that keep it
    above ``low``. ``roundest_between(29.7001, 29.709533)`` -> ``'29.709'``."""
    top = Decimal(repr(float(high)))
    bottom = Decimal(repr(float(low))) if math.isfinite(low) else None
    exponent = min(math.floor(math.log10(abs(high))) - (min_digits - 1), 0) if high else 0
    while True:
        step = Decimal(1).scaleb(exponent)
        floored = (top / step).to_integral_value(rounding=ROUND_FLOOR) * step
        if bottom is None or floored > bottom or floored == top:
            text = format(floored.normalize(), "f")
            return "0" if text in ("-0", "") else text
        exponent -= 1


def value_key(value) -> object:
    """A label lookup key: numbers (and text that reads as one) by value, the rest as text."""
    if isinstance(value, bool):
        return ("bool", value)
    if isinstance(value, int | float):
        number = float(value)
        return ("number", number) if math.isfinite(number) else ("text", str(value))
    text = str(value).strip()
    try:
        number = float(text)
    except (TypeError, ValueError):
        return ("text", str(value))
    # only a number's own spelling: the category "01" is not the category "1"
    spellings = {repr(number), str(int(number)) if number.is_integer() else None}
    if math.isfinite(number) and text in spellings:
        return ("number", number)
    return ("text", str(value))


# --- combining rules for display ---------------------------------------------------------------


def _union(a: Condition, b: Condition) -> Condition:
    return Condition(
        a.feature,
        a.kind,
        intervals=a.intervals + b.intervals,
        categories=a.categories + b.categories,
        missing=a.missing or b.missing,
    )


def _combined(a: Rule, b: Rule) -> Rule | None:
    """One rule matching exactly the rows ``a OR b`` match, when both constrain the same columns
    with the same conditions except one column whose conditions join: numeric ranges that touch
    or overlap, or category sets. None otherwise."""
    if a.features != b.features:
        return None
    differ = [i for i, (x, y) in enumerate(zip(a, b, strict=True)) if x != y]
    if len(differ) != 1:
        return None
    i = differ[0]
    x, y = a.conditions[i], b.conditions[i]
    if x.kind != y.kind:
        return None
    joined = _union(x, y)
    if x.kind == NUMERIC and len(joined.intervals) == len(x.intervals) + len(y.intervals):
        return None  # ranges apart: nothing simpler to show
    return Rule((*a.conditions[:i], joined, *a.conditions[i + 1 :]))


def combine_rules(rules: Sequence[Rule]) -> list[tuple[Rule, tuple[int, ...]]]:
    """The rules as displayed: rules that differ only in one column, where the two conditions
    join into one (``bmi ∈ [26.4, 48.3)`` OR ``bmi ∈ [48.3, max]`` -> ``bmi ∈ [26.4, max]``),
    are shown as one rule. Returns (rule, 1-based numbers of the model's rules it stands for),
    in the order of each group's first rule; a rule OR-ed with the others is unchanged, so
    the rule set predicts the same."""
    shown: list[tuple[Rule, tuple[int, ...]]] = [(r, (i + 1,)) for i, r in enumerate(rules)]
    merged = True
    while merged:
        merged = False
        for i in range(len(shown)):
            for j in range(i + 1, len(shown)):
                rule = _combined(shown[i][0], shown[j][0])
                if rule is not None:
                    shown[i] = (rule, tuple(sorted(shown[i][1] + shown[j][1])))
                    del shown[j]
                    merged = True
                    break
            if merged:
                break
    return shown


def _numbers_text(numbers: Sequence[int]) -> str:
    words = [str(n) for n in numbers]
    return ", ".join(words[:-1]) + " and " + words[-1] if len(words) > 1 else words[0]


# --- display -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class RuleDisplay:
    """How rules read in a report: labels of columns, values and classes, and the display text
    of each column's cut points.

    ``cuts`` maps a column to the exact numbers its rules can print (cut points); other numbers
    are rounded on their own. ``value_labels`` maps a column to {value: label} (values compared
    as numbers when they read as numbers, so ``1``, ``1.0`` and ``"1"`` are the same value);
    ``class_labels`` maps a class to a label, e.g. ``{"1": "diabetic"}``.
    """

    column_labels: Mapping[str, str] = field(default_factory=dict)
    value_labels: Mapping[str, Mapping[object, str]] = field(default_factory=dict)
    class_labels: Mapping[object, str] = field(default_factory=dict)
    target_label: str | None = None
    cuts: Mapping[str, tuple[float, ...]] = field(default_factory=dict)
    data: Mapping[str, np.ndarray] = field(default_factory=dict, repr=False, compare=False)
    groups: Mapping[str, tuple[frozenset, ...]] = field(default_factory=dict, repr=False)
    """A column of grouped categories -> the categories of each group, in bin order: a
    condition on more than :data:`SHOWN_IN_RULE` of them reads as the groups it takes."""
    known: Mapping[str, frozenset] = field(default_factory=dict, repr=False)
    """A categorical column -> every category its discretization knows: a condition that
    allows all of them reads as such, one that allows most of them names the others."""
    _texts: dict = field(init=False, repr=False, compare=False)

    def __post_init__(self):
        texts = {
            feature: display_numbers(values, self.data.get(feature))
            for feature, values in self.cuts.items()
        }
        object.__setattr__(self, "_texts", texts)

    @classmethod
    def from_model(
        cls,
        model,
        *,
        column_labels: Mapping[str, str] | None = None,
        value_labels: Mapping[str, Mapping[object, str]] | None = None,
        class_labels: Mapping[object, str] | None = None,
        target_label: str | None = None,
        rows: Sequence[pd.DataFrame] = (),
    ) -> RuleDisplay:
        """The display of a fitted model's rules: cut points from its discretization (if it
        has one) and the interval ends of its rules.

        Parameters
        ----------
        model : LibreClassifier
            A fitted model.
        column_labels, value_labels, class_labels : mapping, optional
            Display names of columns, of values per column and of classes.
        target_label : str, optional
            The name of the target, used for a class without a label (default: the one the
            rules name, the target column).
        rows : sequence of DataFrame, optional
            The rows the display describes (e.g. training and holdout): each cut point then
            prints as the roundest number that sorts all of them as the model does
            (:func:`display_numbers`). Without, cut points are rounded.

        Returns
        -------
        RuleDisplay

        Raises
        ------
        ValueError
            When two values of one column, or two classes, share a label: the rules would read
            the same for different data.
        """
        for column, labels in (value_labels or {}).items():
            _distinct_labels(labels, f"column {name_text(str(column))}")
        _distinct_labels(class_labels or {}, "the classes")
        cuts: dict[str, set[float]] = {}
        groups: dict[str, tuple[frozenset, ...]] = {}
        known: dict[str, frozenset] = {}
        discretization = getattr(model, "discretization_", None)
        for feature in getattr(discretization, "features", ()):
            if feature.kind == NUMERIC:
                cuts.setdefault(feature.name, set()).update(feature.cuts)
                continue
            known[feature.name] = frozenset(feature.categories)
            if feature.groups:
                groups[feature.name] = tuple(
                    frozenset(feature.bin_categories(b)) for b in range(feature.n_value_bins)
                )
        for rule in model.rules_:
            for condition in rule:
                if condition.kind == NUMERIC:
                    cuts.setdefault(condition.feature, set())
        data = {  # sorted, distinct: every display built from this one reuses them as they are
            name: np.unique(np.concatenate([numeric_values(f[name]) for f in rows]))
            for name in cuts
            if rows and all(name in f.columns for f in rows)
        }
        display = cls(
            column_labels=dict(column_labels or {}),
            value_labels={str(k): dict(v) for k, v in (value_labels or {}).items()},
            class_labels=dict(class_labels or {}),
            target_label=target_label if target_label is not None else model.rules_.target,
            cuts={k: tuple(sorted(v)) for k, v in cuts.items()},
            data=data,
            groups=groups,
            known=known,
        )
        return display.with_rules(model.rules_)

    def with_rules(self, rules: Iterable[Rule]) -> RuleDisplay:
        """This display, also telling apart the interval ends of ``rules`` (e.g. an older
        model's, so a moved threshold never prints as the same number)."""
        cuts = {k: set(v) for k, v in self.cuts.items()}
        for rule in rules:
            for condition in rule:
                for interval in condition.intervals:
                    ends = {interval.low, interval.high} - {-math.inf, math.inf}
                    cuts.setdefault(condition.feature, set()).update(ends)
        return RuleDisplay(
            self.column_labels,
            self.value_labels,
            self.class_labels,
            self.target_label,
            {k: tuple(sorted(v)) for k, v in cuts.items()},
            self.data,
            self.groups,
            self.known,
        )

    # --- pieces

    def column(self, feature: str) -> str:
        return str(self.column_labels.get(feature, feature))

    def number(self, feature: str, value: float) -> str:
        text = self._texts.get(feature, {}).get(float(value))
        return text if text is not None else round_text(value, MIN_DIGITS)

    def value(self, feature: str, value) -> str:
        labels = _value_labels(self, feature)
        label = labels.get(value_key(value))
        if label is not None:
            return label
        if isinstance(value, float) and value.is_integer():
            return str(int(value))
        return str(value)

    def class_name(self, value) -> str:
        """``diabetic`` for a labelled class, else ``diabetes = 1``."""
        labels = {value_key(k): str(v) for k, v in self.class_labels.items()}
        label = labels.get(value_key(value))
        if label is not None:  # quoted where it would read as part of the rule (an OR, ELSE)
            return name_text(label)
        rest = str(value).removeprefix("not ")  # one class against the rest: "not green"
        if rest != str(value) and value_key(rest) in labels:
            return f"not {name_text(labels[value_key(rest)])}"
        return class_text(self.target_label or "target", value)

    def interval_text(self, feature: str, interval: Interval) -> str:
        low = "min" if interval.low == -math.inf else self.number(feature, interval.low)
        if interval.high == math.inf:
            return f"[{low}, max]"
        return f"[{low}, {self.number(feature, interval.high)})"

    # --- text

    def condition_text(self, condition: Condition) -> str:
        """``bmi ≥ 26.4``, ``26.4 ≤ bmi < 48.3``, ``bmi ∈ [min, 20) ∪ [30, max] ∪ missing``,
        ``sex = female``, ``sex ∈ {female, male} ∪ missing``, ``bmi is missing``; a condition
        allowing every known category of a column reads ``sex is not missing (any of its 2
        known values)`` (a value unseen in training does not satisfy it), one allowing most of
        them names the others (``marital ≠ single``, see :meth:`others`)."""
        name = name_text(self.column(condition.feature))
        feature = condition.feature
        if condition.kind == NUMERIC:
            intervals = condition.intervals
            if len(intervals) == 1 and not condition.missing:
                (interval,) = intervals
                low, high = interval.low, interval.high
                if low == -math.inf and high == math.inf:
                    return f"{name} is not missing"
                if low == -math.inf:
                    return f"{name} < {self.number(feature, high)}"
                if high == math.inf:
                    return f"{name} ≥ {self.number(feature, low)}"
                return f"{self.number(feature, low)} ≤ {name} < {self.number(feature, high)}"
            parts = [self.interval_text(feature, i) for i in intervals]
        else:
            taken = self.groups_taken(feature, condition.categories)
            ordered = sorted(condition.categories, key=natural_key)
            values = [self.value(feature, c) for c in ordered]
            if len(values) == 1 and not condition.missing:
                return f"{name} = {set_item_text(values[0])}"
            reading = self.known_reading(condition)
            if reading == "all":
                if condition.missing:
                    return f"{name} is any of its {len(values):,} known values or missing"
                return f"{name} is not missing (any of its {len(values):,} known values)"
            if reading == "others":
                others = self.others(feature, condition.categories)
                shown = [set_item_text(self.value(feature, c)) for c in others]
                text = (
                    f"{name} ≠ {shown[0]}"
                    if len(shown) == 1
                    else f"{name} ∉ {{{', '.join(shown)}}}"
                )
                return text if condition.missing else f"{text}, not missing"
            if taken:
                word = "group" if len(taken) == 1 else "groups"
                parts = [f"{word} {number_ranges(taken)} ({len(values):,} categories)"]
            else:
                parts = ["{" + ", ".join(set_item_text(v) for v in values) + "}"] if values else []
        if condition.missing:
            if not parts:
                return f"{name} is missing"
            parts.append("missing")
        return f"{name} ∈ " + " ∪ ".join(parts)

    def known_reading(self, condition: Condition) -> str | None:
        """How a categorical condition reads through its column's known categories: "all"
        when it allows every one (and more than one), "others" when it names those it
        leaves out (:meth:`others`; a condition that takes whole groups names them instead),
        else None (its categories are listed)."""
        if condition.kind == NUMERIC or not self.known.get(condition.feature):
            return None
        wanted = set(condition.categories)
        if len(wanted) > 1 and wanted == self.known[condition.feature]:
            return "all"
        if self.groups_taken(condition.feature, condition.categories):
            return None
        return "others" if self.others(condition.feature, condition.categories) else None

    def others(self, feature: str, categories) -> list | None:
        """The known categories of ``feature`` a condition on ``categories`` leaves out, in
        natural order, when naming them is shorter: at least 3 categories taken and fewer
        left out (``marital ≠ single`` for four of five); else None."""
        known = self.known.get(feature)
        wanted = set(categories)
        if not known or len(wanted) < 3 or not wanted < known:
            return None
        rest = known - wanted
        return sorted(rest, key=natural_key) if len(rest) < len(wanted) else None

    def groups_taken(self, feature: str, categories) -> list[int]:
        """The groups (numbered from 1) whose union is exactly ``categories``, when these are
        more than :data:`SHOWN_IN_RULE` categories of a grouped column; else empty."""
        groups = self.groups.get(feature)
        wanted = set(categories)
        if not groups or len(wanted) <= SHOWN_IN_RULE:
            return []
        taken = [i + 1 for i, members in enumerate(groups) if members <= wanted]
        covered = set().union(*(groups[i - 1] for i in taken)) if taken else set()
        return taken if covered == wanted else []

    def rule_text(self, rule: Rule) -> str:
        """The rule's conditions joined by AND (``TRUE`` for a rule without conditions)."""
        if not rule.conditions:
            return "TRUE"
        return " AND ".join(self.condition_text(c) for c in rule.conditions)

    def outcome_text(self, ruleset: RuleSet) -> str:
        """``THEN diabetic ELSE not diabetic`` (labelled classes) or ``THEN diabetes = 1 ELSE
        diabetes = 0``."""
        positive = self.class_name(ruleset.positive_class)
        negative = self.class_name(ruleset.negative_class)
        return f"THEN {positive} ELSE {negative}"

    def ruleset_text(self, ruleset: RuleSet, combine: bool = True) -> str:
        """``IF ... OR ... THEN ... ELSE ...``; with ``combine``, rules that join into one are
        shown once, marked with the numbers of the rules they stand for."""
        outcome = self.outcome_text(ruleset)
        if not ruleset.rules:
            return f"IF FALSE {outcome}"
        if combine:
            shown = combine_rules(ruleset.rules)
        else:
            shown = [(r, (i + 1,)) for i, r in enumerate(ruleset.rules)]
        lines = []
        for i, (rule, numbers) in enumerate(shown):
            line = ("IF " if i == 0 else "OR ") + self.rule_text(rule)
            if len(numbers) > 1:
                line += f"   (rules {_numbers_text(numbers)} combined)"
            lines.append(line)
        return "\n".join([*lines, outcome])


def _distinct_labels(labels: Mapping[object, str], where: str) -> None:
    """Refuse two values (or classes) of ``where`` under one label."""
    first: dict[str, object] = {}
    for value, label in labels.items():
        if str(label) in first and value_key(first[str(label)]) != value_key(value):
            raise ValueError(
                f"{where}: {first[str(label)]!r} and {value!r} have the same label "
                f"{str(label)!r}: labels must tell values apart"
            )
        first.setdefault(str(label), value)


def _value_labels(display: RuleDisplay, feature: str) -> dict[object, str]:
    return {value_key(k): str(v) for k, v in display.value_labels.get(feature, {}).items()}
