"""The report's sections on evidence and context, as plain blocks both renderers share.

A block is ``("p", text)``, ``("h", heading)``, ``("list", [text, ...])``, ``("dl", [(term,
text), ...])``, ``("table", (headers, rows, numeric))`` or ``("figure", (svg, caption))``;
:mod:`libre_lib.ops.report` writes them as Markdown and HTML. Every cell is already text here:
counts with thousands separators, rates with three decimals, "n/a" for a precision of nothing
flagged.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from ..discretization import MANY_CATEGORIES, NUMERIC
from ..estimator import AUTO_FALLBACK, AUTO_SIGNIFICANT_ROWS
from ..rules import set_item_text
from .display import KNOWN_LEGEND, LEGEND, RuleDisplay, natural_key, rounding_note
from .figures import svg_class_balance, svg_trend, svg_tuning

__all__ = [
    "NOT_AVAILABLE",
    "balance_blocks",
    "baseline_blocks",
    "confusion_blocks",
    "discretization_blocks",
    "discretization_table",
    "expectation_blocks",
    "fmt",
    "legend_blocks",
    "param_text",
    "trend_blocks",
    "tuning_blocks",
]

DASH = "–"
NOT_AVAILABLE = "n/a"
Block = tuple[str, object]


# --- numbers as text ---------------------------------------------------------------------------


def is_missing(value) -> bool:
    try:
        return value is None or bool(pd.isna(value))
    except (TypeError, ValueError):
        return False


def fmt(value, kind: str) -> str:
    """``int``/``count``: ``1,234``; ``rate``: ``0.612``; ``decimal``: ``1.50``; ``text``: as
    is; anything else: four significant digits. Missing values read "–"."""
    if kind == "text":
        return str(value)
    if is_missing(value):
        return DASH
    if kind in ("int", "count"):
        number = float(value)
        return f"{round(number):,}" if number.is_integer() else f"{number:,.1f}"
    if kind == "rate":
        return f"{float(value):.3f}"
    if kind == "decimal":
        return f"{float(value):.2f}"
    return fmt_value(value)


def fmt_value(value) -> str:
    """A parameter or unknown metric value."""
    if isinstance(value, bool) or value is None:
        return str(value)
    if isinstance(value, float | np.floating):
        return f"{float(value):.4g}"
    if isinstance(value, np.integer):
        return str(int(value))
    return str(value)


#: What None means for the parameters where it is a value of its own.
_NONE_MEANS = {
    "max_intervals": "none (no cap)",
    "max_rules": "none (no limit)",
    "top_k": "none (all)",
    "max_features": "none (all columns)",
    "random_state": "none (not fixed)",
}


def param_text(name: str, value) -> str:
    """A parameter's value for people: ``None`` says what it means (``none (no cap)``);
    booleans and lists as a spec writes them (``true``, ``[age, bmi]``; they read ``True``
    and ``['age', 'bmi']``)."""
    if value is None:
        return _NONE_MEANS.get(str(name), "none")
    if isinstance(value, bool | np.bool_):
        return "true" if value else "false"
    if isinstance(value, list | tuple):
        from .spec import yaml_scalar

        return yaml_scalar(list(value))
    return fmt_value(value)


def _share(part: int, whole: int) -> str:
    return f"{part / whole:.1%}" if whole else NOT_AVAILABLE


# --- notation ----------------------------------------------------------------------------------


GROUPS_LEGEND = (
    "x ∈ groups 2–4 (n categories)",
    "x is one of the n categories of groups 2, 3 and 4 of its column (a column of many "
    'categories; the groups are listed in "How each column was discretized").',
)


def legend_blocks(
    rows: str = "training and holdout", grouped: bool = False, known: bool = False
) -> list[Block]:
    """What the symbols in the rules mean (``grouped``: also the groups of a column of many
    categories; ``known``: also the conditions read through a column's known categories),
    and that numbers are rounded for display (from the ``rows`` named, see
    :func:`~libre_lib.ops.display.rounding_note`)."""
    extra = [*([GROUPS_LEGEND] if grouped else []), *(KNOWN_LEGEND if known else ())]
    return [
        ("h", "Notation"),
        ("dl", [*LEGEND, *extra]),
        ("p", rounding_note(rows)),
    ]


# --- holdout evidence --------------------------------------------------------------------------


def confusion_blocks(
    confusion: Mapping[str, int], names: tuple[str, str], evaluated_on: str = "holdout"
) -> list[Block]:
    """The 2x2 table of actual against predicted class, with row shares (on the
    ``evaluated_on`` rows: "holdout", or "training" when there is none)."""
    positive, negative = names
    tp, fp, fn, tn = (int(confusion[k]) for k in ("tp", "fp", "fn", "tn"))
    rows = [
        [f"Actually {positive}", f"{tp:,}", f"{fn:,}", f"{tp + fn:,}"],
        [f"Actually {negative}", f"{fp:,}", f"{tn:,}", f"{fp + tn:,}"],
        ["Total", f"{tp + fp:,}", f"{fn + tn:,}", f"{tp + fp + fn + tn:,}"],
    ]
    headers = ("", f"Predicted {positive}", f"Predicted {negative}", "Total")
    return [
        ("h", f"Confusion matrix ({evaluated_on} rows)"),
        (
            "p",
            f"Of the {_rows(tp + fn, evaluated_on)} whose outcome is “{positive}”, the model "
            f"flags {tp:,} ({_share(tp, tp + fn)}) and misses {fn:,}; it also flags {fp:,} of the "
            f"{_rows(fp + tn)} whose outcome is “{negative}”.",
        ),
        ("table", (headers, rows, (False, True, True, True))),
    ]


def in_short(
    confusion: Mapping[str, int] | None,
    names: tuple[str, str],
    n_rules: int,
    majority_name: str = "",
    evaluated_on: str = "holdout",
) -> str | None:
    """What the model does and how often it is right, in one plain paragraph for the top of
    the report (the figures below say the same in metrics); None without rules or counts."""
    if confusion is None or not n_rules:
        return None
    positive, negative = names
    tp, fp, fn, tn = (int(confusion[k]) for k in ("tp", "fp", "fn", "tn"))
    n = tp + fp + fn + tn
    if not n:
        return None
    rules, flag, they, find = (
        ("rule", "flags", "it", "finds")
        if n_rules == 1
        else (f"{n_rules} rules", "flag", "they", "find")
    )
    text = (
        f"In short: on {_rows(n, evaluated_on)} the {rules} {flag} {tp + fp:,} as “{positive}”; "
        f"{tp:,} of those have that outcome ({_share(tp, tp + fp)}), and {they} {find} {tp:,} "
        f"of the {_rows(tp + fn)} that {'has' if tp + fn == 1 else 'have'} it "
        f"({_share(tp, tp + fn)}). The model is right on "
        f"{tp + tn:,} of the {n:,} rows ({_share(tp + tn, n)})"
    )
    if majority_name in (positive, negative):
        right = tp + fn if majority_name == positive else fp + tn
        text += f", against {right:,} ({_share(right, n)}) for always answering “{majority_name}”"
    return text + "."


def baseline_blocks(
    table: pd.DataFrame,
    best_rule: int | None,
    *,
    majority_name: str,
    majority_of: str = "training",
    n_rules: int,
    chosen_on_training: bool,
    evaluated_on: str = "holdout",
) -> list[Block]:
    """The model's scores (on the ``evaluated_on`` rows) next to the majority-class answer
    and the best single rule."""
    names = {
        "model": f"This model ({n_rules} rule{'' if n_rules == 1 else 's'})",
        "majority": f"Majority class of the {majority_of} rows: always “{majority_name}”",
        "every_row": "Flag every row",
        "best_rule": f"Best single rule (rule {best_rule})",
    }
    rows = []
    for record in table.to_dict("records"):
        flagged = int(record["flagged"])
        precision = NOT_AVAILABLE if flagged == 0 else fmt(record["precision"], "rate")
        rows.append(
            [
                names.get(record["answer"], str(record["answer"])),
                fmt(record["f1"], "rate"),
                precision,
                fmt(record["recall"], "rate"),
                fmt(record["accuracy"], "rate"),
                f"{flagged:,}",
            ]
        )
    where = "training" if chosen_on_training else "holdout"
    described = {
        "majority": "answering the majority class everywhere (a model should beat its accuracy)",
        "every_row": "flagging every row (the F1 score any answer reaches without a rule: a "
        "model should beat it)",
        "best_rule": f"the rule with the highest F1 score on the {where} rows used on its own "
        "(the gain of combining rules)",
    }
    shown = [described[a] for a in described if a in set(table["answer"])]
    listed = shown[0] if len(shown) == 1 else f"{', '.join(shown[:-1])} and {shown[-1]}"
    text = f"The same {evaluated_on} rows scored for simple answers: {listed}."
    headers = ("Answer", "F1 score", "Precision", "Recall", "Accuracy", "Rows flagged")
    return [
        ("h", "Compared with simple answers"),
        ("p", text),
        ("table", (headers, rows, (False, True, True, True, True, True))),
    ]


def _rows(n: int, kind: str = "") -> str:
    """The count of rows in words: "1 holdout row", "27 holdout rows"."""
    return f"{n:,} {kind + ' ' if kind else ''}row{'' if n == 1 else 's'}"


def balance_blocks(
    balance: Mapping[str, Mapping[str, int]], names: tuple[str, str], figure: bool = True
) -> list[Block]:
    """Rows of each class in the training and holdout rows (table and bar figure)."""
    positive, negative = names
    rows = []
    for name, counts in balance.items():
        p, n = int(counts.get("positive", 0)), int(counts.get("negative", 0))
        rows.append([name, f"{p:,}", f"{n:,}", f"{p + n:,}", _share(p, p + n)])
    headers = ("Rows", positive, negative, "Total", f"Share {positive}")
    blocks: list[Block] = [
        ("h", "Class balance"),
        ("table", (headers, rows, (False, True, True, True, True))),
    ]
    if figure:
        caption = (
            f"Share of the rows whose outcome is “{positive}” in the "
            f"{' and '.join(n.lower() for n in balance)} rows."
        )
        blocks.append(("figure", (svg_class_balance(balance, names), caption)))
    return blocks


# --- discretization ----------------------------------------------------------------------------

DISCRETIZATION_COLUMNS = ("column", "kind", "n_bins", "bins", "missing")


#: A group of categories in the bins table lists at most this many of them (the rules name
#: groups, so the bins table is where their categories are read; an id-like column's one
#: group of thousands is cut short).
SHOWN_PER_GROUP = MANY_CATEGORIES
#: A column of many categories in one group (no rule can test it) lists this many of them.
SHOWN_IN_ONE_GROUP = 10


def _category_list(feature: str, categories, display: RuleDisplay, limit: int | None = None):
    """Categories in natural order, labelled; beyond ``limit`` the rest is only counted."""
    ordered = sorted(categories, key=natural_key)
    if limit is not None and len(ordered) > limit:
        rest, ordered = len(ordered) - limit, ordered[:limit]
    else:
        rest = 0
    values = []
    for category in ordered:  # quoted as the rules quote them where a comma would split one
        shown = set_item_text(display.value(feature, category))
        raw = set_item_text(category)
        values.append(shown if shown == raw else f"{shown} ({raw})")
    if rest:
        values.append(f"… {rest:,} more")
    return ", ".join(values)


def discretization_table(
    discretization,
    display: RuleDisplay,
    group_shares: Mapping | None = None,
    positive_name: str = "positive",
) -> pd.DataFrame:
    """One row per input column: its kind, number of bins, cut points (rounded for display) or
    categories (labelled; grouped categories with each group's positive share in
    ``group_shares``, per column), and how missing values are binned; dropped columns last."""
    group_shares = group_shares or {}
    rows = []
    for feature in getattr(discretization, "features", ()):
        name = _column_and_label(display, feature.name)
        if feature.kind == NUMERIC:
            cuts = [display.number(feature.name, c) for c in feature.cuts]
            if cuts:
                bins = ("cut point " if len(cuts) == 1 else "cut points ") + ", ".join(cuts)
            else:  # ChiMerge merged every interval: its values do not tell the classes apart
                bins = "no cut point (one range: rules cannot test its values)"
            kind = "numeric"
        elif feature.groups and feature.n_value_bins == 1:  # "3,966 categories in 1 groups"
            tested = (
                "rules can test only whether it is missing"
                if feature.has_missing
                else "no rule can test this column"
            )
            bins = (
                f"{len(feature.categories):,} categories in one group: none differed enough in "
                f"its share of {positive_name} (in training) to stand apart, so {tested}; e.g. "
                + _category_list(feature.name, feature.categories, display, SHOWN_IN_ONE_GROUP)
            )
            kind = "categorical"
        elif feature.groups:
            shares = group_shares.get(feature.name) or [None] * feature.n_value_bins
            groups = [
                f"group {b + 1} {{"
                + _category_list(feature.name, feature.bin_categories(b), display, SHOWN_PER_GROUP)
                + "}"
                + ("" if share is None else f": {share:.1%} {positive_name}")
                for b, share in zip(range(feature.n_value_bins), shares, strict=True)
            ]
            bins = (
                f"{len(feature.categories):,} categories in {len(groups)} groups of a similar "
                f"share of {positive_name} (in training): " + "; ".join(groups)
            )
            kind = "categorical"
        else:
            bins = "categories " + _category_list(feature.name, feature.categories, display)
            kind = "categorical"
        missing = "own bin" if feature.has_missing else "none in training"
        rows.append(
            {
                "column": name,
                "kind": kind,
                "n_bins": int(feature.n_bins),
                "bins": bins,
                "missing": missing,
            }
        )
    for dropped in getattr(discretization, "dropped", ()):
        rows.append(
            {
                "column": _column_and_label(display, dropped),
                "kind": "dropped",
                "n_bins": 0,
                "bins": "constant or always missing in training: not used",
                "missing": "",
            }
        )
    return pd.DataFrame(rows, columns=list(DISCRETIZATION_COLUMNS))


def _column_and_label(display: RuleDisplay, column) -> str:
    """A column's label with its name in the data when they differ (``glucose
    (plasma_glucose)``), so a labelled report can be traced to the data's columns."""
    label = display.column(column)
    return label if label == str(column) else f"{label} ({column})"


REFINED = {"f1": "F1", "accuracy": "accuracy"}
"""What each ``refine`` setting raises, as the report names it."""


def discretization_blocks(
    table: pd.DataFrame | None,
    rows: str = "training and holdout",
    refine: str | None = None,
    significant_cuts: bool = False,
    by_rows: bool = False,
) -> list[Block]:
    """The section on the bins; ``significant_cuts``: the cut points were thinned to
    significant ones, ``by_rows``: because the training rows were many, not by a parameter."""
    blocks: list[Block] = [("h", "How each column was discretized")]
    if table is None or not len(table):
        return [*blocks, ("p", "The model records no discretization.")]
    blocks.append(
        (
            "p",
            "Before learning, each numeric column is cut into ranges (bins) at the cut points "
            "below, and each categorical column keeps one bin per category (a column of more "
            f"than {MANY_CATEGORIES} categories: one bin per group of categories of similar "
            "positive share); "
            "rules are unions of bins"
            + (
                ". A numeric column is cut only where the share of positives clearly changes "
                "from one side of the cut to the other, which gives fewer, wider ranges (a "
                "column where it never does is cut at its quartiles, for rules that combine it "
                "with others)"
                + (
                    f": on more than {AUTO_SIGNIFICANT_ROWS:,} training rows the library does "
                    "so by itself, for readable rules and a fast fit"
                    if by_rows
                    else ""
                )
                + " (a significance test: Fisher's exact test at the ChiMerge threshold's level, "
                "corrected for the number of places a column could be cut; significant_cuts)"
                if significant_cuts
                else ""
            )
            + (
                f". Then each rule's numeric cut points were moved on the training rows to the "
                f"values that raise the rule set's training {REFINED[refine]} (refine: "
                f"{refine}), so a rule's cut point may lie inside a bin"
                if refine
                else ""
            )
            + ". A column without missing values in training has no bin for them: a missing "
            "value there matches none of its conditions. " + rounding_note(rows),
        )
    )
    rows = [
        [r["column"], r["kind"], f"{int(r['n_bins']):,}", r["bins"], r["missing"]]
        for r in table.to_dict("records")
    ]
    headers = ("Column", "Kind", "Bins", "Cut points or categories", "Missing values")
    blocks.append(("table", (headers, rows, (False, False, True, False, False))))
    return blocks


# --- data validation ---------------------------------------------------------------------------


def _expectation_name(name: str) -> str:
    words = str(name).removeprefix("expect_").replace("_", " ")
    return words[:1].upper() + words[1:]


def expectation_blocks(
    expectations: pd.DataFrame | None, display: RuleDisplay | None = None
) -> list[Block]:
    """Every data expectation with its result (a column under its ``display`` label, with its
    name in the data)."""
    if expectations is None or not len(expectations):
        return []
    rows = []
    for r in expectations.to_dict("records"):
        count = r.get("unexpected_count")
        rows.append(
            [
                _expectation_name(r.get("expectation", "")),
                "the table"
                if is_missing(r.get("column"))
                else str(r["column"])
                if display is None
                else _column_and_label(display, r["column"]),
                "Passed" if r.get("success") else "Failed",
                DASH if is_missing(count) else f"{int(count):,}",
                str(r.get("details") or ""),
            ]
        )
    n_failed = sum(row[2] == "Failed" for row in rows)
    headers = ("Expectation", "Column", "Result", "Unexpected rows", "Details")
    return [
        ("h", "Expectations checked"),
        ("p", f"{len(rows) - n_failed} of {len(rows)} expectations met."),
        ("table", (headers, rows, (False, False, False, True, False))),
    ]


# --- versions ----------------------------------------------------------------------------------


def trend_blocks(trend: pd.DataFrame | None, figure: bool = True) -> list[Block]:
    """Holdout scores of the registered versions (table; figure from two versions on); a
    version trained without a holdout is marked as scored on its training rows."""
    if trend is None or not len(trend):
        return []
    in_sample = (
        trend["scored_on"].eq("training").to_numpy()
        if "scored_on" in trend
        else np.zeros(len(trend), dtype=bool)
    )
    text = (
        "Holdout scores of each registered version of this pipeline, oldest first (each "
        "measured on the holdout rows of its own run, whose count and share of the positive "
        "class are listed: on rows of another class balance, F1 moves whatever the model "
        "does). The champion is the version in production."
    )
    if in_sample.any():
        text += (
            ' A version marked "scored on training rows" was trained without a holdout: its '
            "scores are on the rows it learned from, and optimistic."
        )
    blocks: list[Block] = [("h", "Model versions over time"), ("p", text)]
    rows = []
    for r, training in zip(trend.to_dict("records"), in_sample, strict=True):
        status = _STATUS_WORDS.get(str(r["status"]), str(r["status"]))
        status += " (this run)" if r.get("this_run") else ""
        if training:
            status += ", scored on training rows"
        rows.append(
            [
                str(r["version"]),
                str(r["created_at"]),
                status,
                *(fmt(r[k], "rate") for k in ("f1",)),
                NOT_AVAILABLE if is_missing(r["precision"]) else fmt(r["precision"], "rate"),
                *(fmt(r[k], "rate") for k in ("recall", "accuracy")),
                fmt(r["n_rules"], "int"),
                NOT_AVAILABLE if is_missing(r["n_rows"]) else fmt(r["n_rows"], "int"),
                NOT_AVAILABLE
                if is_missing(r["positive_share"])
                else f"{100 * r['positive_share']:.1f}%",
            ]
        )
    headers = ("Version", "Registered", "Status", "F1 score", "Precision", "Recall", "Accuracy")
    headers += ("Rules", "Rows scored", "Positive share")
    numeric = (False, False, False, True, True, True, True, True, True, True)
    blocks.append(("table", (headers, rows, numeric)))
    if figure and len(trend) >= 2:
        caption = (
            "F1 score and accuracy of each registered version, each on the holdout rows of its "
            "own run: versions trained on other data are scored on other rows, so a step "
            "between two points mixes the models' change with the rows' (the changes section "
            "compares the champion on this run's rows; diamonds: champions)."
        )
        if in_sample.any():
            named = ", ".join(str(v).split("-")[0] for v in trend["version"][in_sample])
            caption = (
                "F1 score and accuracy of each registered version on its run's holdout rows "
                f"(on its training rows for {named}: no holdout; diamonds: champions)."
            )
        blocks.append(("figure", (svg_trend(trend), caption)))
    return blocks


#: The registry's statuses as the trend table reads them, in the words of this run's line
#: ("candidate, not promoted").
_STATUS_WORDS = {
    "challenger-rejected": "not promoted",
    "retired": "retired (was champion)",
}


def _chosen_text(name: str, value, by_rows: bool) -> str:
    """A chosen parameter's value as the tuning section lists it; significant_cuts set by the
    default grid's rule for many training rows says so."""
    if name == "significant_cuts" and value and by_rows:
        return (
            f"true (not tuned: the default grid's rule on more than {AUTO_SIGNIFICANT_ROWS:,} "
            "training rows)"
        )
    return param_text(name, value)


def tuning_blocks(
    tuning: pd.DataFrame | None,
    summary: Mapping | None,
    figure: bool = True,
    n_rules: int | None = None,
    by_rows: bool = False,
) -> list[Block]:
    """How the parameters were chosen: the pipeline's search (``pick`` stage), its chosen
    parameters and the inner-CV score of every grid point against its number of rules
    (``n_rules``: the model's, said when fewer than the chosen ``max_rules`` allows;
    ``by_rows``: the grid's significant_cuts came from the training rows, not from tuning)."""
    if tuning is None or not len(tuning) or summary is None:
        return []
    chosen = dict(summary.get("best_params", {}))
    tuned = summary.get("tuned", {})
    # what the grid point leaves at "auto" takes the paper's value (H2's max_intervals: 3)
    chosen |= {k: tuned[k] for k in AUTO_FALLBACK if k not in chosen and k in tuned}
    score = summary.get("scoring", "f1")
    searched, of = summary.get("n_rows"), summary.get("n_training_rows")
    rows = (
        f"a sample of {searched:,} of the {of:,} training rows (tuning.max_rows)"
        if searched is not None and of is not None and searched < of
        else "the training rows"
    )
    blocks: list[Block] = [
        ("h", "How the parameters were chosen"),
        (
            "p",
            f"{len(tuning):,} combinations of parameters were scored by {summary['n_splits']}-fold "
            f"cross-validation on {rows} ({score}); the choice is the one with the "
            f"fewest rules among those within {fmt(summary['tolerance'], 'rate')} of the best "
            f"mean score ({fmt(float(tuning['mean_score'].max()), 'rate')}; the margin is the "
            "larger of tuning.score_tolerance and tuning.standard_errors standard errors of the "
            "best point: the standard deviation of its fold scores, taken over the folds as they "
            f"are (not as a sample), divided by √{summary['n_splits']}). Chosen: mean score "
            f"{fmt(summary['best_score'], 'rate')} with "
            f"{float(tuning.loc[tuning['chosen'], 'mean_rules'].iloc[0]):.1f} rules on average.",
        ),
        ("dl", [(str(k), _chosen_text(k, v, by_rows)) for k, v in sorted(chosen.items())]),
    ]
    cap = chosen.get("max_rules")
    if isinstance(cap, int) and n_rules is not None and n_rules < cap:
        blocks.append(
            (
                "p",
                f"max_rules is a cap: the model has {n_rules} rule{'' if n_rules == 1 else 's'}, "
                "since the set cover stopped earlier (no candidate left that raised its gain) "
                "or the majority guard kept fewer (abstain).",
            )
        )
    if summary.get("refit_fallbacks"):
        best = float(tuning["mean_score"].max())
        beyond = float(summary["best_score"]) < best - float(summary["tolerance"]) - 1e-12
        then = (
            "none of the combinations within the tolerance did, so the best-scoring ones outside "
            "it that had kept rules in most folds were refitted next"
            if beyond
            else "the next combinations in the choice's order were refitted"
        )
        blocks.insert(
            2,
            (
                "p",
                "The first choice, refitted on all the training rows, kept no rule although it "
                "had kept rules in most folds (on all the training rows the majority guard cut "
                f"its rules, or none passed the set cover); {then} until one kept a rule "
                f"({summary['refit_fallbacks']} passed over): that one is shown as chosen.",
            ),
        )
    if figure:
        caption = (
            "Inner cross-validation: mean score of every grid point against its mean number of "
            "rules; the line is the best score reachable with at most that many rules."
        )
        blocks.append(("figure", (svg_tuning(tuning, score), caption)))
    return blocks


def expectations_frame(results: Sequence | pd.DataFrame | None) -> pd.DataFrame | None:
    """Expectation results (objects with the fields of ``ExpectationResult``, dicts or a frame)
    as a frame with columns expectation, column, success, unexpected_count, details."""
    if results is None:
        return None
    columns = ["expectation", "column", "success", "unexpected_count", "details"]
    if isinstance(results, pd.DataFrame):
        return results.reindex(columns=columns)
    rows = []
    for r in results:
        get = r.get if isinstance(r, Mapping) else lambda k, r=r: getattr(r, k, None)
        rows.append({k: get(k) for k in columns})
    return pd.DataFrame(rows, columns=columns)


def rate_or_na(value, flagged) -> str:
    """A precision: "n/a" when nothing was flagged (no row to be right or wrong about)."""
    if not is_missing(flagged) and not math.isnan(float(flagged)) and int(flagged) == 0:
        return NOT_AVAILABLE
    return fmt(value, "rate")
