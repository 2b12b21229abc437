"""Rendering rules for other systems: SQL and JSON-ready dictionaries.

Rendering depends on the rule model, never the reverse: the paper-style text is the value
objects' own ``str`` (:mod:`libre_lib.rules`); its helpers are re-exported here for renderers.
"""

from __future__ import annotations

import math

import numpy as np

from .discretization import NUMERIC
from .errors import ModelFormatError
from .rules import (  # noqa: F401 - the text helpers are part of this module's interface
    Condition,
    Interval,
    Rule,
    RuleSet,
    RuleStats,
    condition_text,
    interval_text,
    number_text,
    rule_text,
    ruleset_text,
)

# --- SQL -------------------------------------------------------------------------------------


def sql_identifier(name: str) -> str:
    return '"' + str(name).replace('"', '""') + '"'


#: The largest finite double: only +inf is above it, only -inf below its negative.
_MAX_DOUBLE = repr(float(np.finfo(np.float64).max))


def sql_literal(value) -> str:
    """A valid SQL literal for a finite number, a bool or a text. Infinities and NaN have no
    literal SQLite, DuckDB and PostgreSQL share: :func:`sql_in` compares with them instead."""
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"{value!r} has no SQL literal; sql_in compares with it instead.")
        return float_literal(value)
    return "'" + str(value).replace("'", "''") + "'"


#: Significant digits up to which a number's shortest form is its SQL literal.
SHORT_LITERAL_DIGITS = 5


def float_literal(value: float) -> str:
    """A double as a literal every engine reads back as that double: its shortest form (26.4)
    up to :data:`SHORT_LITERAL_DIGITS` significant digits, else all 17 digits. SQLite reads a
    few literals of more digits one unit off in the last place (0.986512 as the double above
    it), which flips the rows on such a cut point; it reads 17 digits exactly."""
    text = repr(value)
    if value.is_integer() and abs(value) < 2**53:  # whole numbers read exactly
        return text
    digits = text.split("e")[0].replace("-", "").replace(".", "").strip("0")
    return text if len(digits) <= SHORT_LITERAL_DIGITS else f"{value:.17g}"


def sql_in(column: str, values) -> str:
    """``column`` equals one of ``values``: an ``IN`` list of the literals, and a comparison
    beyond the largest double for each infinity; NaN equals nothing (as in
    ``Condition.evaluate``), so it is left out (``FALSE`` if nothing is left)."""
    literals, parts = [], []
    for value in values:
        if isinstance(value, np.generic):
            value = value.item()
        if isinstance(value, float) and math.isnan(value):
            continue
        if isinstance(value, float) and math.isinf(value):
            sign, operator = ("", ">") if value > 0 else ("-", "<")
            parts.append(f"{column} {operator} {sign}{_MAX_DOUBLE}")
        else:
            literals.append(sql_literal(value))
    if literals:
        parts.insert(0, f"{column} IN ({', '.join(literals)})")
    if not parts:
        return "FALSE"
    return parts[0] if len(parts) == 1 else "(" + " OR ".join(parts) + ")"


def marker_literals(condition: Condition, markers) -> list[str]:
    """The SQL literals of ``markers`` (values that stand for a missing value in the
    condition's column) that its column can hold: numbers for a numeric column or one of
    numeric categories, texts for one of text categories, TRUE or FALSE for one of booleans
    (a marker that reads "True" or "False"; a number there would not compare in PostgreSQL)."""
    if condition.categories and all(isinstance(c, bool | np.bool_) for c in condition.categories):
        # a column of booleans: as libre score reads it, a marker matches its values' texts
        texts = marker_texts(markers)
        return [sql_literal(flag) for flag in (True, False) if str(flag) in texts]
    numeric = condition.kind == NUMERIC or (
        condition.categories and not any(isinstance(c, str) for c in condition.categories)
    )
    literals = []
    for marker in markers:
        if isinstance(marker, np.generic):
            marker = marker.item()
        if numeric:
            try:
                number = float(marker)
            except (TypeError, ValueError):
                continue  # "?" cannot be in a column of numbers
            if math.isfinite(number):
                literals.append(sql_literal(number))
        else:  # as libre score matches them in a column of texts
            literals += [sql_literal(t) for t in marker_texts([marker])]
    return list(dict.fromkeys(literals))


def marker_texts(markers) -> list[str]:
    """The texts ``markers`` match in a column of texts, as pandas' ``na_values`` and
    ``libre score`` match them: each as written, and a number (or a text that reads as one)
    in its other spellings too (``0``, ``0.0``)."""
    out = []
    for marker in markers:
        if isinstance(marker, np.generic):
            marker = marker.item()
        out.append(str(marker))
        if isinstance(marker, bool):
            continue
        try:
            number = float(marker)
        except (TypeError, ValueError):
            continue
        out.append(str(number))
        if number.is_integer():
            out.append(str(int(number)))
    return list(dict.fromkeys(out))


def condition_sql(condition: Condition, markers=()) -> str:
    """``condition`` in SQL; ``markers``: values of its column that stand for a missing value
    (read as NULL, as the pipeline's ``na_values`` read them when scoring)."""
    column = sql_identifier(condition.feature)
    literals = marker_literals(condition, markers)
    if literals:
        column = f"(CASE WHEN {column} IN ({', '.join(literals)}) THEN NULL ELSE {column} END)"
    parts = []
    if condition.kind == NUMERIC:
        for interval in condition.intervals:  # finite bounds: an unbounded side is left out
            bounds = []
            if interval.low != -math.inf:
                bounds.append(f"{column} >= {sql_literal(float(interval.low))}")
            if interval.high != math.inf:
                bounds.append(f"{column} < {sql_literal(float(interval.high))}")
            parts.append(" AND ".join(bounds) if bounds else f"{column} IS NOT NULL")
    elif condition.categories:
        parts.append(sql_in(column, condition.categories))
    if condition.missing:
        parts.append(f"{column} IS NULL")
    return parts[0] if len(parts) == 1 else "(" + " OR ".join(f"({p})" for p in parts) + ")"


def ruleset_sql(ruleset: RuleSet, missing_values=None) -> str:
    """A boolean SQL expression over the original column names, true where the model predicts
    the positive class. SQL NULLs stand for missing values, and so do the values
    ``missing_values`` (a dict: column → values) names for a column; the expression is
    wrapped in ``COALESCE(..., FALSE)`` so a comparison with NULL never leaks a NULL
    prediction."""
    if not ruleset.rules:
        return "FALSE"
    markers = dict(missing_values or {})
    rules = []
    for rule in ruleset.rules:
        atoms = [condition_sql(c, markers.get(c.feature, ())) for c in rule.conditions] or ["TRUE"]
        rules.append("(" + " AND ".join(atoms) + ")")
    return "COALESCE(" + "\n OR ".join(rules) + ", FALSE)"


# --- JSON-ready dictionaries -----------------------------------------------------------------


def _bound(value: float):
    return None if math.isinf(value) else float(value)


def condition_to_dict(condition: Condition) -> dict:
    out: dict = {"feature": condition.feature, "kind": condition.kind}
    if condition.kind == NUMERIC:
        out["intervals"] = [[_bound(i.low), _bound(i.high)] for i in condition.intervals]
    else:
        out["categories"] = list(condition.categories)
    out["missing"] = condition.missing
    return out


def condition_from_dict(data: dict) -> Condition:
    try:
        intervals = tuple(
            Interval(-math.inf if lo is None else float(lo), math.inf if hi is None else float(hi))
            for lo, hi in data.get("intervals", ())
        )
        return Condition(
            feature=data["feature"],
            kind=data["kind"],
            intervals=intervals,
            categories=tuple(data.get("categories", ())),
            missing=bool(data.get("missing", False)),
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise ModelFormatError(f"Malformed rule condition {data!r}: {exc}") from None


def rule_to_dict(rule: Rule, stats: RuleStats | None = None) -> dict:
    out: dict = {"text": rule_text(rule), "conditions": [condition_to_dict(c) for c in rule]}
    if stats is not None:
        out["stats"] = {
            "positives": stats.positives,
            "negatives": stats.negatives,
            "new_positives": stats.new_positives,
            "new_negatives": stats.new_negatives,
            "precision": stats.precision,
        }
    return out


def rule_from_dict(data: dict) -> tuple[Rule, RuleStats | None]:
    rule = Rule(tuple(condition_from_dict(c) for c in data["conditions"]))
    stats = data.get("stats")
    if stats is None:
        return rule, None
    return rule, RuleStats(
        float(stats["positives"]),
        float(stats["negatives"]),
        float(stats["new_positives"]),
        float(stats["new_negatives"]),
    )
