"""What changed between two rule sets, in words a stakeholder can read.

>>> diff = diff_rules(champion_model.rules_, new_model.rules_)
>>> deltas = metric_deltas(champion_metrics, new_metrics)
>>> print(render_diff_markdown(diff, deltas, "v0003-1a2b3c4d", "v0004-5e6f7a8b"))

Rules are matched in three passes:

1. **unchanged**: the same conditions (the order of the conditions inside a rule and the
   position of the rule in the set do not matter; predictions do not depend on them);
2. **changed**: a new rule that constrains exactly the same columns as a remaining old rule,
   with different conditions (e.g. a threshold moved). Among several candidates the pair with
   the most identical conditions is taken first, then the earliest rules;
3. what is left over is **added** (only in the new set) or **removed** (only in the old one).

Identical rule sets give an empty diff (:attr:`RuleDiff.is_empty`). This module depends only on
the rule model: :mod:`libre_lib.ops.report` renders the same data as a report section.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from ..render import condition_text
from ..rules import Condition, Rule, RuleSet, outcome_text, tested_columns
from .baselines import undefined_metric
from .markdown import md_blocks

__all__ = [
    "METRIC_ORDER",
    "ChampionChanges",
    "ConditionChange",
    "RuleChange",
    "RuleDiff",
    "diff_rules",
    "metric_deltas",
    "metric_value",
    "outcome_text",
    "plain_condition_text",
    "plain_rule_text",
    "render_diff_markdown",
]

METRIC_ORDER = ("f1", "precision", "recall", "accuracy", "n_rules", "avg_atoms")
"""Metrics listed first (in this order) by :func:`metric_deltas`; any others follow by name."""

METRIC_NAMES = {
    "f1": "F1 score",
    "precision": "Precision",
    "recall": "Recall",
    "accuracy": "Accuracy",
    "n_rows": "Holdout rows",
    "n_positive": "Holdout rows with the outcome",
    "n_flagged": "Holdout rows flagged",
    "n_rules": "Rules",
    "avg_atoms": "Average conditions per rule",
}
_RATES = frozenset({"f1", "precision", "recall", "accuracy"})
_COUNTS = frozenset({"n_rows", "n_positive", "n_flagged", "n_rules"})


# --- data ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ConditionChange:
    """One column's condition in a changed rule; ``None`` on a side where it is absent."""

    feature: str
    before: Condition | None
    after: Condition | None


@dataclass(frozen=True)
class RuleChange:
    """An old rule and the new rule that replaced it (same constrained columns)."""

    before: Rule
    after: Rule
    before_index: int
    after_index: int

    @property
    def conditions(self) -> tuple[ConditionChange, ...]:
        """The conditions that differ, in the new rule's column order."""
        old = {c.feature: c for c in self.before.conditions}
        out = []
        for condition in self.after.conditions:
            previous = old.get(condition.feature)
            if previous != condition:
                out.append(ConditionChange(condition.feature, previous, condition))
        new = {c.feature for c in self.after.conditions}
        out += [ConditionChange(f, c, None) for f, c in old.items() if f not in new]
        return tuple(out)


@dataclass(frozen=True)
class RuleDiff:
    """Rules of ``new`` compared with ``old`` (indices are positions in each rule set)."""

    added: tuple[Rule, ...] = ()
    removed: tuple[Rule, ...] = ()
    changed: tuple[RuleChange, ...] = ()
    unchanged: tuple[Rule, ...] = ()
    outcome_before: str = ""
    outcome_after: str = ""

    @property
    def outcome_changed(self) -> bool:
        return self.outcome_before != self.outcome_after

    @property
    def is_empty(self) -> bool:
        """True when the two rule sets make the same predictions with the same rules."""
        return not (self.added or self.removed or self.changed or self.outcome_changed)

    def counts(self) -> dict[str, int]:
        return {
            "added": len(self.added),
            "removed": len(self.removed),
            "changed": len(self.changed),
            "unchanged": len(self.unchanged),
        }

    def to_dict(self) -> dict:
        """JSON-ready: rule texts, and before/after texts of the changed rules."""
        return {
            **self.counts(),
            "outcome_before": self.outcome_before,
            "outcome_after": self.outcome_after,
            "added_rules": [str(r) for r in self.added],
            "removed_rules": [str(r) for r in self.removed],
            "changed_rules": [
                {"before": str(c.before), "after": str(c.after)} for c in self.changed
            ],
            "unchanged_rules": [str(r) for r in self.unchanged],
        }


@dataclass(frozen=True)
class ChampionChanges:
    """Everything the "Changes since the champion" report section shows.

    ``decision`` is a plain sentence on what happened to the new version (promoted or not and
    why), or None when no decision has been made yet.
    """

    old_version: str
    new_version: str
    diff: RuleDiff
    deltas: Mapping[str, Mapping[str, float | None]]
    decision: str | None = None
    column_labels: Mapping[str, str] | None = None
    scored_on: str | None = None
    """Which rows the scores in ``deltas`` are on, in words (None: not known)."""
    columns: str | None = None
    """The columns the new version reads that the champion did not, and the other way round,
    in words (None: the same columns)."""

    def to_dict(self) -> dict:
        return {
            "old_version": self.old_version,
            "new_version": self.new_version,
            "diff": self.diff.to_dict(),
            "deltas": {k: dict(v) for k, v in self.deltas.items()},
            "decision": self.decision,
            "scored_on": self.scored_on,
            "columns": self.columns,
        }


def column_changes(old_columns, new_columns, new_rules) -> str | None:
    """The columns a new version reads that the old one did not (a column the data gained,
    which a spec without ``features.include`` takes as a feature: a caution when a rule tests
    it) and those it no longer reads, in words; None when they are the same."""
    old, new = list(map(str, old_columns)), list(map(str, new_columns))
    gained = [c for c in new if c not in old]
    lost = [c for c in old if c not in new]
    said = []
    if gained:
        tested = tested_columns(new_rules)
        used = [c for c in gained if c in tested]
        sentence = f"It reads {_columns(gained)} that the champion did not read"
        if used:
            sentence += (
                f"; its rules test {', '.join(map(repr, used))}: check that "
                f"{'this column belongs' if len(used) == 1 else 'these columns belong'} among "
                "the features (a spec's features.include lists them)"
            )
        said.append(sentence + ".")
    if lost:
        said.append(f"It no longer reads {_columns(lost)}.")
    return " ".join(said) or None


def _columns(names: list[str]) -> str:
    return ("column " if len(names) == 1 else "columns ") + ", ".join(map(repr, names))


# --- diffing ------------------------------------------------------------------------------------


def _canonical(rule: Rule) -> tuple[Condition, ...]:
    """The rule's conditions in column-name order (conditions are AND-ed: order is moot)."""
    return tuple(sorted(rule.conditions, key=lambda c: c.feature))


def diff_rules(old: RuleSet, new: RuleSet) -> RuleDiff:
    """Compare two rule sets (see the module docstring for how rules are matched)."""
    old_left = list(range(len(old.rules)))
    new_left = list(range(len(new.rules)))

    # 1. unchanged: identical conditions (each old rule matches at most one new rule).
    unchanged: list[int] = []
    by_key: dict[tuple[Condition, ...], list[int]] = {}
    for i in old_left:
        by_key.setdefault(_canonical(old.rules[i]), []).append(i)
    for j in list(new_left):
        matches = by_key.get(_canonical(new.rules[j]))
        if matches:
            old_left.remove(matches.pop(0))
            new_left.remove(j)
            unchanged.append(j)

    # 2. changed: the same constrained columns, different conditions; best pairs first.
    candidates = []
    for i in old_left:
        old_rule = old.rules[i]
        for j in new_left:
            new_rule = new.rules[j]
            if set(old_rule.features) == set(new_rule.features):
                shared = len(set(old_rule.conditions) & set(new_rule.conditions))
                candidates.append((-shared, j, i))
    changed: list[tuple[int, int]] = []
    for _, j, i in sorted(candidates):
        if i in old_left and j in new_left:
            old_left.remove(i)
            new_left.remove(j)
            changed.append((i, j))
    changed.sort(key=lambda pair: pair[1])

    # 3. the rest.
    return RuleDiff(
        added=tuple(new.rules[j] for j in new_left),
        removed=tuple(old.rules[i] for i in old_left),
        changed=tuple(RuleChange(old.rules[i], new.rules[j], i, j) for i, j in changed),
        unchanged=tuple(new.rules[j] for j in sorted(unchanged)),
        outcome_before=outcome_text(old),
        outcome_after=outcome_text(new),
    )


def metric_value(value) -> float | None:
    """A metric's value as a float; None when it is missing, not a number, a bool or NaN."""
    if isinstance(value, bool) or value is None:
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(number) else number


def metric_deltas(
    old: Mapping[str, object] | None, new: Mapping[str, object]
) -> dict[str, dict[str, float | None]]:
    """``{name: {"before", "after", "delta"}}`` for every numeric metric of either side.

    A side without the metric (or without a champion: ``old=None``) gives ``None`` there and as
    the delta. Known metrics come first in :data:`METRIC_ORDER`, then the rest by name.
    """
    old = old or {}
    names = [n for n in METRIC_ORDER if n in old or n in new]
    names += sorted((set(old) | set(new)) - set(names), key=str)
    out: dict[str, dict[str, float | None]] = {}
    for name in names:
        before, after = (
            None if undefined_metric(side, name) else metric_value(side.get(name))
            for side in (old, new)
        )
        if before is None and after is None:
            continue
        delta = after - before if before is not None and after is not None else None
        out[str(name)] = {"before": before, "after": after, "delta": delta}
    return out


# --- text ---------------------------------------------------------------------------------------


def plain_condition_text(
    condition: Condition, column_labels: Mapping[str, str] | None = None
) -> str:
    """``str(condition)`` with the column name replaced by its label (if it has one)."""
    labels = column_labels or {}
    return condition_text(
        dataclasses.replace(
            condition, feature=str(labels.get(condition.feature, condition.feature))
        )
    )


def plain_rule_text(rule: Rule, column_labels: Mapping[str, str] | None = None) -> str:
    """``str(rule)`` with each column name replaced by its label (unlabelled columns keep
    their name): ``Aspartate aminotransferase ∈ [min, 68) AND mcv ∈ [92, max]``."""
    if not rule.conditions:
        return "TRUE"
    return " AND ".join(plain_condition_text(c, column_labels) for c in rule.conditions)


def condition_change_text(
    change: ConditionChange, column_labels: Mapping[str, str] | None = None
) -> str:
    """``glucose ∈ [158, max] → glucose ∈ [150, max]`` (or "no longer required" / "new")."""
    return _change_text(change, lambda c: plain_condition_text(c, column_labels))


def _change_text(change: ConditionChange, condition: Callable[[Condition], str]) -> str:
    if change.after is None:
        return f"{condition(change.before)} (no longer required)"
    if change.before is None:
        return f"{condition(change.after)} (new condition)"
    return f"{condition(change.before)} → {condition(change.after)}"


def metric_name(name: str) -> str:
    return METRIC_NAMES.get(name, str(name))


def format_metric(name: str, value: float | None) -> str:
    """A metric for people; None reads "n/a" for the measures a model can lack (precision
    with nothing flagged, conditions per rule without rules), else "–"."""
    if value is None:
        return "n/a" if name in ("precision", "avg_atoms") else "–"
    if name == "avg_atoms":
        return f"{value:.2f}"
    if name in _RATES:
        return f"{value:.3f}"
    if name in _COUNTS or float(value).is_integer():
        return f"{round(value):,}"
    return f"{value:.2f}"


def shown_delta(name: str, before: float | None, after: float | None) -> float | None:
    """``after - before`` as the two values read once rounded for display
    (:func:`format_metric`), so that the change agrees with the figures beside it (0.648 and
    0.593 change by 0.055, not by the unrounded 0.0556)."""
    if before is None or after is None:
        return None
    shown = [float(format_metric(name, v).replace(",", "")) for v in (before, after)]
    return shown[1] - shown[0]


def format_delta(name: str, delta: float | None) -> str:
    """``▲ +0.032``, ``▼ −0.020`` or ``= no change``; ``–`` when a side is unknown."""
    if delta is None:
        return "–"
    if name in _RATES:
        text = f"{abs(delta):.3f}"
    elif name in _COUNTS or float(delta).is_integer():
        text = f"{round(abs(delta)):,}"
    else:
        text = f"{abs(delta):.2f}"
    if float(text.replace(",", "")) == 0:
        return "= no change"
    return f"▲ +{text}" if delta > 0 else f"▼ −{text}"


def _version_label(version) -> str:
    if version is None:
        return ""
    return str(getattr(version, "version", version))


def summary_sentence(diff: RuleDiff, old_label: str, new_label: str) -> str:
    """``Compared with v0003, v0004 has 1 rule added, 1 removed, 1 changed and 2 unchanged.``"""
    if diff.is_empty:
        return f"{new_label} has exactly the same rules as {old_label}."
    parts = [f"{n} {what}" for what, n in diff.counts().items() if n]
    if not parts:
        return f"Compared with {old_label}, {new_label} has no rules."
    first_count = int(parts[0].split(" ")[0])
    parts[0] = f"{first_count} rule{'' if first_count == 1 else 's'} {parts[0].split(' ')[1]}"
    text = parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]
    return f"Compared with {old_label}, {new_label} has {text}."


# --- blocks and Markdown ------------------------------------------------------------------------


def diff_blocks(
    diff: RuleDiff,
    deltas: Mapping[str, Mapping[str, float | None]],
    old_label: str,
    new_label: str,
    column_labels: Mapping[str, str] | None = None,
    text: Callable[[Rule], str] | None = None,
    condition: Callable[[Condition], str] | None = None,
    scored_on: str | None = None,
) -> list[tuple[str, object]]:
    """The section's content as plain blocks, shared by the Markdown and HTML renderers.

    Each block is ``("p", text)``, ``("h", heading)``, ``("list", [text, ...])`` or
    ``("table", (headers, rows, numeric))``. ``text`` and ``condition`` write a rule and a
    condition (default: :func:`plain_rule_text` and :func:`plain_condition_text` with
    ``column_labels``). ``scored_on`` says which rows the scores are on (a sentence above the
    scores table).
    """
    if text is None:

        def text(rule: Rule) -> str:
            return plain_rule_text(rule, column_labels)

    if condition is None:

        def condition(c: Condition) -> str:
            return plain_condition_text(c, column_labels)

    blocks: list[tuple[str, object]] = [("p", summary_sentence(diff, old_label, new_label))]
    if diff.outcome_changed:
        blocks.append(
            (
                "p",
                f"The predicted outcome changed: before “{diff.outcome_before}”, "
                f"now “{diff.outcome_after}”.",
            )
        )
    if diff.added:
        blocks.append(("h", "Rules added"))
        blocks.append(("list", [text(r) for r in diff.added]))
    if diff.removed:
        blocks.append(("h", "Rules removed"))
        blocks.append(("list", [text(r) for r in diff.removed]))
    if diff.changed:
        blocks.append(("h", "Rules changed: before → after"))
        rows = [
            (
                text(c.before),
                text(c.after),
                "; ".join(_change_text(x, condition) for x in c.conditions),
            )
            for c in diff.changed
        ]
        blocks.append(("table", (("Before", "After", "What changed"), rows, (False,) * 3)))
    if diff.unchanged:
        blocks.append(
            (
                "p",
                f"{len(diff.unchanged)} rule{'' if len(diff.unchanged) == 1 else 's'} "
                "stayed the same.",
            )
        )
    if deltas:
        blocks.append(("h", "Holdout scores"))
        if scored_on:
            blocks.append(("p", f"{scored_on[:1].upper()}{scored_on[1:]}."))
        rows = [
            (
                metric_name(name),
                format_metric(name, d.get("before")),
                format_metric(name, d.get("after")),
                format_delta(name, shown_delta(name, d.get("before"), d.get("after"))),
            )
            for name, d in deltas.items()
        ]
        headers = ("Measure", old_label or "Before", new_label or "After", "Change")
        blocks.append(("table", (headers, rows, (False, True, True, True))))
    return blocks


def render_diff_markdown(
    diff: RuleDiff,
    deltas: Mapping[str, Mapping[str, float | None]],
    old_version,
    new_version,
    *,
    column_labels: Mapping[str, str] | None = None,
    heading_level: int = 2,
) -> str:
    """A stakeholder-readable Markdown summary (no HTML): what was added, removed, changed and
    how the scores moved. ``old_version`` / ``new_version`` are version ids (or anything with a
    ``.version`` attribute, e.g. a registry ``ModelVersion``)."""
    old_label, new_label = _version_label(old_version), _version_label(new_version)
    hashes = "#" * heading_level
    title = f"{hashes} Changes since {old_label or 'the previous model'}"
    blocks = diff_blocks(diff, deltas, old_label, new_label, column_labels)
    out = [title, *md_blocks(blocks, heading=f"{hashes}#")]
    return "\n\n".join(out) + "\n"
