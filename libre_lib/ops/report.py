"""Rule reports for people who read rules, not models: tables, Markdown and self-contained HTML.

>>> report = build_report(model, X_holdout, y_holdout, title="Liver disorders",
...                       column_labels={"sgot": "Aspartate aminotransferase (sgot)"})
>>> markdown = render_markdown(report)   # GitHub / Prefect markdown artifact (no HTML inside)
>>> page = render_html(report)           # one file: inline CSS and inline SVG figures
>>> artifact = render_markdown(report, figures=True)   # the figures as inline images

Every number is computed from ``model.fired_rules(X)`` on the data given (normally a holdout
set), except the training columns, which come from ``model.rules_.stats``, and the class balance
and best-rule choice, which use the training rows when given. Rules are written for people
(:mod:`libre_lib.ops.display`: comparisons, rounded cut points, labels); predictions use the
exact rules. Rendering is deterministic: the same report gives the same text byte for byte (the
caller supplies the timestamp). The figures (:mod:`libre_lib.ops.figures`) are inline SVG.
"""

from __future__ import annotations

import dataclasses
import html
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ..discretization import NUMERIC
from ..errors import ParameterError, counted
from ..estimator import (
    AUTO_CHOSEN,
    AUTO_SIGNIFICANT_ROWS,
    BELOW_INNER,
    LEARNER_FACTORS,
    LibreClassifier,
    auto_refit_order,
    exact_column_message,
    falls_short,
    telling_rule,
    training_f1,
)
from ..inputs import numeric_values, one_vs_rest
from ..params import AUTO
from ..rules import RuleSet, outcome_text
from .baselines import (
    baselines,
    cautions,
    class_balance,
    confusion_matrix,
    precision_drop_p,
    undefined_metric,
)
from .baselines import scores as _scores
from .diff import ChampionChanges, diff_blocks, plain_rule_text
from .display import RuleDisplay
from .figures import svg_curve, svg_rule_bars
from .markdown import (
    md_block,
    md_blocks,
    md_cells,
    md_code,
    md_fence,
    md_image,
    md_inline,
    md_table,
    one_line,
)
from .report_sections import (
    DASH,
    NOT_AVAILABLE,
    balance_blocks,
    baseline_blocks,
    confusion_blocks,
    discretization_blocks,
    discretization_table,
    expectation_blocks,
    expectations_frame,
    in_short,
    legend_blocks,
    param_text,
    rate_or_na,
    trend_blocks,
    tuning_blocks,
)
from .report_sections import fmt as _fmt
from .spec import yaml_scalar

__all__ = [
    "RuleReport",
    "artifact_tables",
    "build_report",
    "metrics",
    "plain_rule_text",
    "plain_ruleset_text",
    "render_html",
    "render_markdown",
    "rule_table",
    "truncation_curve",
]

RULE_TABLE_COLUMNS = (
    "rule",
    "text",
    "atoms",
    "train_support",
    "train_precision",
    "covered",
    "true_positives",
    "false_positives",
    "precision",
    "recall",
    "marginal_true_positives",
)
CURVE_COLUMNS = (
    "n_rules",
    "covered",
    "true_positives",
    "false_positives",
    "precision",
    "recall",
    "f1",
    "accuracy",
)


# --- numbers -----------------------------------------------------------------------------------


def _positive_label(model: LibreClassifier):
    """The label of ``y`` the rules describe (the user's label, also in one-vs-rest mode)."""
    if model.positive_class is not None:
        return model.positive_class
    return model.positive_class_


def _is_label(value, label) -> bool:
    try:
        if value is None or value is pd.NA or (isinstance(value, float) and math.isnan(value)):
            return False
        return bool(value == label)
    except (TypeError, ValueError):
        return False


def _positive_mask(model: LibreClassifier, y, n_rows: int) -> np.ndarray:
    values = np.asarray(y, dtype=object).ravel()
    if values.shape[0] != n_rows:
        raise ValueError(f"y has {values.shape[0]} labels but X has {n_rows} rows.")
    label = _positive_label(model)
    return np.fromiter((_is_label(v, label) for v in values), dtype=bool, count=n_rows)


def _check_labels(model: LibreClassifier, y, name: str) -> None:
    """Refuse labels none of which is one of the model's classes (``"yes"``/``"no"`` for a
    model of ``"+"``/``"-"``, or text for a model of numbers): every row read as the negative
    class gave a report of F1 0 without a word. A label the training rows never held, beside
    known ones, counts as negative, as ``score`` counts it; one class against the rest takes
    any labels."""
    if y is None or one_vs_rest(model.positive_class_, model.positive_class):
        return
    values = pd.unique(pd.Series(np.asarray(y, dtype=object).ravel()).dropna())
    known = np.asarray(model.classes_).tolist()
    if not len(values) or any(_is_label(v, k) for v in values for k in known):
        return
    shown = [v.item() if isinstance(v, np.generic) else v for v in values[:5]]
    spelled = {str(k) for k in known} & {str(v) for v in shown}
    hint = (
        " They spell the classes in another type (text for numbers, or numbers for text): "
        "convert y to the type the model was trained on."
        if spelled
        else " Give the labels as the model was trained on them."
    )
    raise ParameterError(
        f"{name} holds none of the model's classes {known!r}: its labels are {shown!r}.{hint}"
    )


def _fired_and_positive(model: LibreClassifier, X, y) -> tuple[np.ndarray, np.ndarray]:
    fired = np.asarray(model.fired_rules(X), dtype=bool)
    return fired, _positive_mask(model, y, fired.shape[0])


def rule_table(
    model: LibreClassifier,
    X,
    y,
    *,
    column_labels: Mapping[str, str] | None = None,
    display: RuleDisplay | None = None,
) -> pd.DataFrame:
    """One row per rule, in the model's order.

    Columns: ``rule`` (1..k), ``text`` (``display.rule_text`` if a display is given, else
    plain-language, see :func:`plain_rule_text`), ``atoms``
    (conditions in the rule), ``train_support`` (training rows the rule matched: positives +
    negatives of ``rules_.stats``), ``train_precision``, and on ``X``/``y``: ``covered`` (rows
    matched), ``true_positives``, ``false_positives``, ``precision``, ``recall`` (share of all
    positives the rule matches) and ``marginal_true_positives`` (positives it matches that no
    earlier rule matched; they sum to the whole model's true positives).
    """
    fired, positive = _fired_and_positive(model, X, y)
    n_positive = int(positive.sum())
    stats = tuple(model.rules_.stats)
    caught = np.zeros(fired.shape[0], dtype=bool)
    rows = []
    for j, rule in enumerate(model.rules_):
        hit = fired[:, j]
        scores = _scores(hit, positive)
        stat = stats[j] if j < len(stats) else None
        rows.append(
            {
                "rule": j + 1,
                "text": (
                    display.rule_text(rule)
                    if display is not None
                    else plain_rule_text(rule, column_labels)
                ),
                "atoms": len(rule),
                "train_support": (
                    float(stat.positives + stat.negatives) if stat is not None else math.nan
                ),
                "train_precision": float(stat.precision) if stat is not None else math.nan,
                "covered": scores["covered"],
                "true_positives": scores["true_positives"],
                "false_positives": scores["false_positives"],
                "precision": scores["precision"],
                "recall": scores["true_positives"] / n_positive if n_positive else 0.0,
                "marginal_true_positives": int(np.sum(hit & positive & ~caught)),
            }
        )
        caught |= hit
    table = pd.DataFrame(rows, columns=list(RULE_TABLE_COLUMNS))
    ints = ["rule", "atoms", "covered", "true_positives", "false_positives"]
    ints.append("marginal_true_positives")
    floats = ["train_support", "train_precision", "precision", "recall"]
    return table.astype({**dict.fromkeys(ints, "int64"), **dict.fromkeys(floats, "float64")})


def _used_parameters(model: LibreClassifier, by_rows: bool = False) -> dict:
    """The model's parameters, an "auto" one with the value its inner cross-validation chose
    (``auto: 0.7``), so the report says what the model used; ``by_rows``: its cut points were
    thinned because the training rows were many (:func:`thinned_by_rows`)."""
    params = dict(model.get_params(deep=False))
    for name in AUTO_CHOSEN:
        used = getattr(model, name + "_", None)
        if isinstance(params.get(name), str) and params[name] == AUTO:
            params[name] = f"{AUTO}: {param_text(name, used)}"
    if by_rows:  # the rows decided it: not the spec, not tuning
        params["significant_cuts"] = (
            f"true: on more than {AUTO_SIGNIFICANT_ROWS:,} training rows (not set, not tuned)"
        )
    return params


def thinned_by_rows(model) -> bool:
    """Whether ``model``'s cut points were thinned because its training rows were many (the
    "auto" bins' rule), not because its ``significant_cuts`` asked it."""
    rule = getattr(model, "_thinned_by_rows", None)
    return bool(rule()) if callable(rule) else False


def metrics(model: LibreClassifier, X, y) -> dict:
    """Whole-model scores on ``X``/``y``: f1, precision, recall, accuracy (floats) and n_rows,
    n_positive, n_rules, n_flagged (ints: rows, positives, rules, rows flagged), avg_atoms
    (float, conditions per rule). Precision is 0 when nothing is flagged, where reports read
    "n/a" (:func:`~libre_lib.ops.baselines.undefined_metric`)."""
    fired, positive = _fired_and_positive(model, X, y)
    scores = _scores(fired.any(axis=1), positive)
    return {
        "f1": scores["f1"],
        "precision": scores["precision"],
        "recall": scores["recall"],
        "accuracy": scores["accuracy"],
        "n_rows": int(fired.shape[0]),
        "n_positive": int(positive.sum()),
        "n_rules": len(model.rules_),
        "avg_atoms": float(model.rules_.n_atoms),
        "n_flagged": int(scores["covered"]),
    }


def truncation_curve(model: LibreClassifier, X, y) -> pd.DataFrame:
    """Scores when only the first ``k`` rules are kept, for k = 0..len(rules).

    Columns: n_rules, covered (rows flagged), true_positives, false_positives, precision,
    recall, f1, accuracy. At k=0 nothing is flagged (precision, recall and F1 are 0); the last
    row equals :func:`metrics`.
    """
    fired, positive = _fired_and_positive(model, X, y)
    flagged = np.zeros(fired.shape[0], dtype=bool)
    rows = [{"n_rules": 0, **_scores(flagged, positive)}]
    for k in range(fired.shape[1]):
        flagged = flagged | fired[:, k]
        rows.append({"n_rules": k + 1, **_scores(flagged, positive)})
    return pd.DataFrame(rows, columns=list(CURVE_COLUMNS))


# --- plain-language rule text ------------------------------------------------------------------


def plain_ruleset_text(
    ruleset: RuleSet,
    column_labels: Mapping[str, str] | None = None,
    target_label: str | None = None,
) -> str:
    """The paper's ``IF ... OR ... THEN target = 1 ELSE target = 0`` with labels."""
    then = outcome_text(ruleset, target_label)
    if not ruleset.rules:
        return f"IF FALSE {then}"
    lines = [
        ("IF " if i == 0 else "OR ") + plain_rule_text(rule, column_labels)
        for i, rule in enumerate(ruleset.rules)
    ]
    return "\n".join([*lines, then])


# --- the report --------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class RuleReport:
    """Everything a rendered report shows; build it with :func:`build_report`."""

    title: str
    ruleset_text: str
    rules: pd.DataFrame
    metrics: Mapping[str, float]
    curve: pd.DataFrame
    validation_summary: str | None = None
    validation_success: bool | None = None
    parameters: Mapping[str, object] = field(default_factory=dict)
    data_description: str = ""
    generated_at: str = ""
    notes: tuple[str, ...] = ()
    changes: ChampionChanges | None = None
    """Optional "Changes since the champion" section (see :meth:`ModelRegistry.changes`)."""
    description: str = ""
    run_id: str = ""
    model_version: str = ""
    display: RuleDisplay | None = None
    """How rules read (labels, rounded cut points); also writes the changes section's rules."""
    class_names: tuple[str, str] = ("positive", "negative")
    confusion: Mapping[str, int] | None = None
    baselines: pd.DataFrame | None = None
    best_rule: int | None = None
    best_rule_on_training: bool = False
    majority_name: str = ""
    majority_of: str = "training"
    """Whose majority class ``majority_name`` is: the training rows', else the scored rows'."""
    balance: Mapping[str, Mapping[str, int]] | None = None
    discretization: pd.DataFrame | None = None
    expectations: pd.DataFrame | None = None
    trend: pd.DataFrame | None = None
    """Holdout scores of the registered versions (see ``baselines.version_trend``)."""
    tuning: pd.DataFrame | None = None
    """The search's grid points (``pick`` stage: mean_score, mean_rules, chosen), if tuned."""
    tuning_summary: Mapping | None = None
    """The search's choice: best_params, best_score, tolerance, n_splits, scoring."""
    evaluated_on: str = "holdout"
    """The rows the scores are on: "holdout", or "training" when the run kept none."""
    display_rows: str = "training and holdout"
    """The rows printed cut points sort as the model does (empty: none were given)."""
    grouped: bool = False
    """Whether a rule reads as groups of categories (the notation then explains them)."""
    known: bool = False
    """Whether a rule reads through a column's known categories (``marital ≠ single``; the
    notation then explains it)."""
    refine: str | None = None
    """The model's boundary refinement ("f1", "accuracy"), if any: its cut points may lie
    inside the bins."""
    significant_cuts: bool = False
    """Whether ChiMerge's cut points were thinned to those Fisher's test finds significant."""
    cuts_by_rows: bool = False
    """Whether they were thinned because the training rows were many (not by a parameter)."""
    fit_cautions: tuple[str, ...] = ()
    """Cautions about the fit itself (see :func:`below_inner_caution`), shown with the others."""
    covered: int | None = None
    """How many rules the set cover chose before the majority guard (None: not known)."""

    @property
    def cautions(self) -> tuple[str, ...]:
        """What a reader should know before trusting the model (see ``baselines.cautions``
        and ``fit_cautions``); shown under the report's header."""
        empty = (
            (no_rules_caution(self.parameters, self.majority_name, self.covered),)
            if self.empty
            else ()
        )
        empty += tuple(self.fit_cautions)
        if self.baselines is None:
            return empty
        return empty + cautions(
            self.baselines,
            int(self.metrics.get("n_rows", 0)),
            majority_name=self.majority_name,
            best_rule=self.best_rule,
            best_rule_chosen_elsewhere=self.best_rule_on_training,
            evaluated_on=self.evaluated_on,
        )

    @property
    def empty(self) -> bool:
        """Whether the model has no rule (it never flags a row)."""
        return int(self.metrics.get("n_rules", 1)) == 0


#: A numeric condition joining at least this many separate ranges gets a note in the report.
SCATTERED_RANGES = 3


def thinned_cuts(model) -> bool:
    """Whether ``model``'s bins keep only significant cut points: its ``significant_cuts``,
    or the rows' rule for "auto"'s uncapped bins (``significant_cuts_``)."""
    return bool(getattr(model, "significant_cuts", False)) or bool(
        getattr(model, "significant_cuts_", False)
    )


def scattered_ranges_notes(
    model: LibreClassifier,
    display: RuleDisplay,
    rows: pd.DataFrame | None = None,
    rows_name: str = "training",
    holdout: bool = True,
) -> tuple[str, ...]:
    """A note naming the columns whose conditions join :data:`SCATTERED_RANGES` or more
    separate ranges (uncapped ChiMerge keeps narrow pre-bins whose difference from their
    neighbours passes its threshold by chance), with the fewest of ``rows`` (the
    ``rows_name`` rows) one of those ranges holds, and how to get plainer rules (when the
    model keeps only significant cut points already, ``contiguous`` alone)."""
    thinned = thinned_cuts(model)
    most: dict[str, int] = {}
    fewest: dict[str, int] = {}
    for rule in model.rules_:
        for condition in rule.conditions:
            if condition.kind != NUMERIC or len(condition.intervals) < SCATTERED_RANGES:
                continue
            feature = condition.feature
            most[feature] = max(most.get(feature, 0), len(condition.intervals))
            if rows is not None and feature in rows.columns:
                values = numeric_values(rows[feature])
                held = min(
                    int(np.count_nonzero((values >= i.low) & (values < i.high)))
                    for i in condition.intervals
                )
                fewest[feature] = min(fewest.get(feature, held), held)
    if not most:
        return ()

    def named(feature: str, n: int) -> str:
        if feature not in fewest:
            return f"{display.column(feature)} (up to {n} ranges)"
        held = fewest[feature]
        word = "row" if held == 1 else "rows"
        return (
            f"{display.column(feature)} (up to {n} ranges, one of them holding {held:,} "
            f"{rows_name} {word})"
        )

    listed = ", ".join(
        named(feature, n) for feature, n in sorted(most.items(), key=lambda i: (-i[1], i[0]))
    )
    measured = (
        "." if holdout else " (this run keeps no holdout: holdout_fraction > 0 measures them)."
    )
    if thinned:  # every cut passed the significance test: readability is what is left
        return (
            f"Some conditions join several separate ranges of one column: {listed}. Each cut "
            "point passed a significance test, but many separate ranges are hard to read; "
            "contiguous: true (the spec's model section, or LibreClassifier(contiguous=True)) "
            "makes every numeric condition one range (docs/algorithm.md). It can cost "
            "accuracy on some data: compare the holdout scores before keeping it" + measured,
        )
    return (
        f"Some conditions join several separate ranges of one column: {listed}. Narrow ranges "
        "scattered over a column can fit chance differences in the training rows rather than "
        "a pattern; significant_cuts: true (the spec's model section, or "
        "LibreClassifier(significant_cuts=True)) thins the cut points to those a significance "
        "test supports, and contiguous: true makes every numeric condition one range, for "
        "plainer rules (docs/algorithm.md). Either can cost accuracy on some data "
        "(docs/benchmarks.md): compare the holdout scores before keeping it" + measured,
    )


#: The level of :func:`sharper_than_holdout_notes`' test, divided by the number of rules.
SHARPER_LEVEL = 0.05


def sharper_than_holdout_notes(rules: pd.DataFrame) -> tuple[str, ...]:
    """A note naming the rules less precise on the holdout rows than on the training rows by
    more than chance explains (one-sided Fisher exact test at :data:`SHARPER_LEVEL` divided by
    the number of rules): the set cover chose them on the training rows, where they may fit
    the rows rather than a pattern that carries over. ``rules``: :func:`rule_table`'s."""
    if rules.empty:
        return ()
    level = SHARPER_LEVEL / len(rules)
    found = []
    for row in rules.itertuples():
        support = row.train_support
        if not (support > 0 and row.covered > 0) or math.isnan(row.train_precision):
            continue
        train_tp = round(support * row.train_precision)
        p = precision_drop_p(
            train_tp, round(support) - train_tp, int(row.true_positives), int(row.false_positives)
        )
        if p < level:
            found.append(
                f"rule {row.rule} ({row.precision:.3f} of {int(row.covered):,} holdout rows "
                f"against {row.train_precision:.3f} of {round(support):,} training rows, "
                f"p = {p:.2g})"
            )
    if not found:
        return ()
    return (
        "Less precise on the holdout rows than on the training rows by more than chance "
        f"explains: {'; '.join(found)} (one-sided Fisher exact test, below {SHARPER_LEVEL} / "
        f"{len(rules)} rules). The set cover chose these rules on the training rows; they "
        "may fit those rows more than a pattern that carries over to new ones, so read their "
        "holdout figures, not their training ones.",
    )


def auto_fallback_notes(model: LibreClassifier) -> tuple[str, ...]:
    """A note when the "auto" values the model used are not its inner cross-validation's first
    choice: the refit check passed over combinations whose fit kept no rule
    (``auto_fallbacks_``)."""
    fallbacks = getattr(model, "auto_fallbacks_", 0)
    if not fallbacks:
        return ()
    scores = ""
    order = auto_refit_order(getattr(model, "auto_scores_", None))
    if len(order):
        mean = model.auto_scores_["mean_f1"]
        shipped = mean[int(order[min(fallbacks, len(order) - 1)])]
        scores = (
            f" Their mean inner F1 is {shipped:.3f}, against {mean[int(order[0])]:.3f} for the "
            f"first choice and {float(np.max(mean)):.3f} for the best combination."
        )
    return (
        'The "auto" parameters are not the inner cross-validation\'s first choice: fitted on '
        "all the training rows, that choice kept no rule although it had kept rules in most "
        "inner folds (the majority guard cut its rules, or none passed the set cover), so the "
        "next combinations in the choice's "
        f"order were fitted until one kept a rule ({fallbacks} passed over). The values shown "
        f"are the ones used.{scores}",
    )


def more_learners_notes(model: LibreClassifier) -> tuple[str, ...]:
    """A note when the model's learners are a multiple of ``n_estimators``
    (``learner_factor_``): the fit with ``n_estimators`` fell far below the inner score that
    chose its settings, and the fit with more learners did not."""
    factor = getattr(model, "learner_factor_", 1)
    if factor == 1:
        return ()
    drawn = len(model.feature_subsets_)  # repeated subsets are drawn once
    return (
        f"The rules come from {drawn} learners, drawn for {factor} × n_estimators: with "
        f"n_estimators = {model.n_estimators}, the fit on all the training rows scored a "
        f"training F1 more than {BELOW_INNER} below the inner score that chose its settings "
        "(its learners' random columns most likely missed a combination the inner folds' "
        f"learners used), so it was fitted again with {factor} times as many learners, the "
        "first of them the same, which came within it.",
    )


def below_inner_caution(
    model: LibreClassifier,
    train_positive: np.ndarray | None,
    tuning_summary: Mapping | None = None,
) -> tuple[str, ...]:
    """A caution when the rule set scores a training F1 more than
    :data:`~libre_lib.estimator.BELOW_INNER` below the mean validation F1 that chose its
    settings: the search's (``tuning_summary["best_score"]``, when it scored F1) or the "auto"
    choice's (:meth:`~libre_lib.estimator.LibreClassifier.auto_inner_score`). The learners'
    columns are drawn at random (paper, section 3.2), so a fit on all the training rows can
    miss a combination of columns that the folds' learners found; the estimators warn of it,
    and the report says it where a reader sees it. ``train_positive``: the training rows'
    positive mask (the F1 is :func:`~libre_lib.estimator.training_f1`, from the rules'
    training counts). Empty without training rows or rules."""
    if train_positive is None or not len(model.rules_):
        return ()
    if tuning_summary is not None and "best_score" in tuning_summary:
        if tuning_summary.get("scoring", "f1") != "f1":  # an inner score of another metric
            return ()
        inner, chooser = float(tuning_summary["best_score"]), "the search"
    else:
        inner, chooser = model.auto_inner_score(), 'the "auto" choice'
    n_positive = float(np.sum(train_positive))
    if not falls_short(model.rules_, n_positive, inner):  # the estimators' own test
        return ()
    f1 = training_f1(model.rules_, n_positive)
    return (
        f"On its own training rows the model scores F1 {f1:.3f}, far below the {inner:.3f} "
        f"with which {chooser} picked its settings on the inner folds' validation rows. "
        "Fitted on all the training rows, its learners, whose columns are drawn at random, "
        "most likely missed a combination of columns that the folds' learners used, so these "
        "rules are probably weaker than the settings can give (fits with "
        + " and ".join(map(str, LEARNER_FACTORS))
        + " times as many learners, tried in that case, fell as short). Train again with "
        "another random_state, and compare.",
    )


def exact_column_caution(
    model: LibreClassifier, X_train: pd.DataFrame | None, train_positive: np.ndarray | None
) -> tuple[str, ...]:
    """A caution when the model's one condition on a column of two values tells the training
    rows' classes apart exactly (:func:`~libre_lib.estimator.exact_column`): most often the
    target, or a recoding of it, left among the features. ``LibreClassifier.fit`` warns of it;
    the report says it where a reader sees it."""
    if X_train is None or train_positive is None:
        return ()
    found = telling_rule(model.rules_, X_train, float(np.sum(train_positive)))
    if found is None:
        return ()
    column = model.rules_.rules[found[0]].conditions[0].feature
    remedy = (
        f"features.exclude: {yaml_scalar([column])} in a spec, X.drop(columns={column!r}) in Python"
    )
    return (exact_column_message(model.rules_, remedy, found),)


def _with_notes(given: tuple[str, ...], found: tuple[str, ...]) -> tuple[str, ...]:
    """The notes passed in, then those the report found that are not among them."""
    return given + tuple(note for note in found if note not in given)


def no_rules_caution(
    parameters: Mapping[str, object], majority_name: str = "", covered: int | None = None
) -> str:
    """Why a model has no rule and what to change, for the report's cautions (``parameters``:
    the model's, ``abstain`` among them; ``covered``: how many rules the set cover chose
    before the majority guard, when known)."""
    answer = f"“{majority_name}”" if majority_name else "the majority class"
    guarded = parameters.get("abstain", True)
    if guarded and covered:
        removed = (
            "removed it: with it, the model was"
            if covered == 1
            else f"removed all {covered}: with the first of them, the first two, and so on, the "
            "model was each time"
        )
        why = (
            f"The set cover chose {counted(covered, 'rule')}, and the majority guard (abstain, "
            f"on by default) {removed} less accurate on its training rows than answering "
            f"{answer} everywhere. To keep the rules the set cover chose, set abstain: false "
            "(the spec's model section, or LibreClassifier(abstain=False)), and weigh what a "
            "missed case and a false alarm cost; columns that carry more signal may give rules "
            "that pass it."
        )
    elif guarded and covered is None:
        why = (
            "Its majority guard (abstain, on by default) cuts the rule set back until it is at "
            f"least as accurate on its training rows as answering {answer} everywhere; where "
            "rules trade accuracy for F1 it can leave none (or no rule passed the set cover). "
            "To keep the rules the set cover chose, set abstain: false (the spec's model "
            "section, or LibreClassifier(abstain=False)), and weigh what a missed case and a "
            "false alarm cost; columns that carry more signal may give rules that pass it."
        )
    else:
        why = (
            "No rule passed the set cover on the training rows: try a higher alpha, a lower "
            "min_local_support or chi2_threshold, or columns that carry more signal."
        )
    return f"The model has no rules, so it never flags a row (its F1 is 0). {why}"


def build_report(
    model: LibreClassifier,
    X_holdout,
    y_holdout,
    *,
    title: str,
    column_labels: Mapping[str, str] | None = None,
    target_label: str | None = None,
    value_labels: Mapping[str, Mapping[object, str]] | None = None,
    class_labels: Mapping[object, str] | None = None,
    validation_summary: str | None = None,
    validation_success: bool | None = None,
    expectations=None,
    data_description: str = "",
    description: str = "",
    generated_at: str = "",
    notes: Sequence[str] = (),
    changes: ChampionChanges | None = None,
    X_train=None,
    y_train=None,
    trend: pd.DataFrame | None = None,
    tuning: pd.DataFrame | None = None,
    tuning_summary: Mapping | None = None,
    evaluated_on: str = "holdout",
    cautions: Sequence[str] = (),
    covered: int | None = None,
    cuts_by_rows: bool | None = None,
) -> RuleReport:
    """Compute the tables of a fitted model on holdout data and bundle them for rendering.

    Parameters
    ----------
    model : LibreClassifier
        The fitted model.
    X_holdout, y_holdout : DataFrame, array-like
        The rows every score is computed on (normally rows the model did not learn from).
    title : str
        The report's title.
    column_labels, value_labels, class_labels : mapping, optional
        Display names of columns, of values per column (``{"sex": {1: "female"}}``) and of
        classes (``{"1": "diabetic"}``).
    target_label : str, optional
        The target's name in ``THEN target = 1`` when its class has no label.
    validation_summary, validation_success : optional
        The data validation's summary line(s) and result; ``expectations`` its results
        (``ExpectationResult`` objects, dicts or a frame), listed one by one.
    data_description, description, generated_at : str
        The data, what the pipeline predicts (the spec's description) and when, for the header.
    notes : sequence of str
        Shown last.
    cautions : sequence of str
        Shown under the header with the report's own cautions (e.g. that no setting beat
        flagging every row: the columns may hold little signal).
    covered : int, optional
        How many rules the set cover chose before the majority guard: a model without rules
        then says whether the guard removed them or none passed the cover.
    changes : ChampionChanges, optional
        Adds the "Changes since the champion" section; it uses ``column_labels`` unless it
        carries its own.
    X_train, y_train : optional
        The training rows: the class balance, the majority class and the choice of the best
        single rule use them (without them, the holdout rows).
    trend : DataFrame, optional
        Holdout scores of the registered versions (:func:`libre_lib.ops.baselines.version_trend`).
    tuning, tuning_summary : DataFrame, mapping, optional
        The pipeline's search: its grid points (``pick`` stage table) and its choice.
    evaluated_on : {"holdout", "training"}, default "holdout"
        What ``X_holdout`` is: "training" when the run kept no holdout and the scores are
        in-sample; the report's wording says so throughout.
    cuts_by_rows : bool, optional
        Whether the cut points were thinned because the training rows were many (the
        default grid's rule, which a tuned model's parameters cannot tell from a tuned
        value); default: what the model says (:func:`thinned_by_rows`).

    Returns
    -------
    RuleReport
    """
    if evaluated_on not in EVALUATED_ON:
        raise ParameterError(
            f"evaluated_on must be one of {sorted(EVALUATED_ON)}; got {evaluated_on!r}."
        )
    if not hasattr(model, "rules_"):
        raise ParameterError(
            f"build_report needs a fitted model; got an unfitted {type(model).__name__} "
            "(call fit first)."
        )
    for name, y in (("y_holdout", y_holdout), ("y_train", y_train)):
        _check_labels(model, y, name)
    if changes is not None and changes.column_labels is None and column_labels:
        changes = dataclasses.replace(changes, column_labels=dict(column_labels))
    shown = {"training": X_train, evaluated_on: X_holdout}  # no holdout: the same rows
    shown = {k: X for k, X in shown.items() if isinstance(X, pd.DataFrame)}
    display = RuleDisplay.from_model(
        model,
        column_labels=column_labels,
        value_labels=value_labels,
        class_labels=class_labels,
        target_label=target_label if target_label is not None else model.rules_.target,
        rows=list(shown.values()),
    )
    ruleset = model.rules_
    names = (display.class_name(ruleset.positive_class), display.class_name(ruleset.negative_class))
    fired, positive = _fired_and_positive(model, X_holdout, y_holdout)
    balance = {}
    train_fired = train_positive = None
    if y_train is not None:
        train_positive = _positive_mask(model, y_train, len(np.asarray(y_train, dtype=object)))
        balance["Training"] = class_balance(train_positive)
        if X_train is not None:
            train_fired = np.asarray(model.fired_rules(X_train), dtype=bool)
    if evaluated_on == "holdout" or not balance:
        balance[evaluated_on.capitalize()] = class_balance(positive)
    majority_from = train_positive if train_positive is not None else positive
    majority_positive = (
        bool(majority_from.size) and 2 * int(majority_from.sum()) > majority_from.size
    )
    table, best = baselines(
        fired,
        positive,
        majority_positive=majority_positive,
        choice_fired=train_fired,
        choice_positive=train_positive if train_fired is not None else None,
    )
    rules = rule_table(model, X_holdout, y_holdout, display=display)
    by_rows = thinned_by_rows(model) if cuts_by_rows is None else bool(cuts_by_rows)
    printed = [*ruleset, *_diff_rules(changes)]  # every rule the report prints
    return RuleReport(
        title=title,
        ruleset_text=display.ruleset_text(ruleset),
        rules=rules,
        metrics=metrics(model, X_holdout, y_holdout),
        curve=truncation_curve(model, X_holdout, y_holdout),
        validation_summary=validation_summary,
        validation_success=validation_success,
        parameters=_used_parameters(model, by_rows),
        data_description=data_description,
        generated_at=generated_at,
        notes=_with_notes(
            tuple(str(n) for n in notes),
            auto_fallback_notes(model)
            + more_learners_notes(model)
            + scattered_ranges_notes(
                model,
                display,
                X_train if isinstance(X_train, pd.DataFrame) else X_holdout,
                "training" if isinstance(X_train, pd.DataFrame) else evaluated_on,
                holdout=evaluated_on == "holdout",
            )
            + (sharper_than_holdout_notes(rules) if evaluated_on == "holdout" else ()),
        ),
        changes=changes,
        description=description,
        display=display,
        covered=covered,
        fit_cautions=tuple(cautions)
        + below_inner_caution(model, train_positive, tuning_summary)
        + exact_column_caution(
            model, X_train if isinstance(X_train, pd.DataFrame) else None, train_positive
        ),
        class_names=names,
        confusion=confusion_matrix(fired.any(axis=1), positive),
        baselines=table,
        best_rule=best,
        best_rule_on_training=train_fired is not None,
        majority_name=names[0] if majority_positive else names[1],
        majority_of="training" if train_positive is not None else evaluated_on,
        balance=balance,
        discretization=discretization_table(
            getattr(model, "discretization_", None),
            display,
            group_shares=_group_shares(model, X_train, train_positive),
            positive_name=names[0],
        ),
        expectations=expectations_frame(expectations),
        trend=trend,
        tuning=tuning,
        tuning_summary=tuning_summary,
        evaluated_on=evaluated_on,
        display_rows=" and ".join(shown),
        grouped=_grouped(display, printed),
        known=any(display.known_reading(c) for rule in printed for c in rule),
        refine=getattr(model, "refine", None),
        significant_cuts=thinned_cuts(model),
        cuts_by_rows=by_rows,
    )


def _diff_rules(changes: ChampionChanges | None) -> list:
    if changes is None:
        return []
    diff = changes.diff
    moved = [r for change in diff.changed for r in (change.before, change.after)]
    return [*diff.added, *diff.removed, *diff.unchanged, *moved]


def _group_shares(model, X_train, train_positive) -> dict[str, list[float | None]]:
    """The training rows' positive share in each bin of every grouped categorical column
    (None for a bin without rows); empty without training rows."""
    discretization = getattr(model, "discretization_", None)
    if discretization is None or not isinstance(X_train, pd.DataFrame) or train_positive is None:
        return {}
    shares = {}
    for feature in discretization.features:
        if not feature.groups or feature.name not in X_train.columns:
            continue
        codes = feature.codes(X_train[feature.name])
        seen = codes >= 0
        rows = np.bincount(codes[seen], minlength=feature.n_bins)
        hits = np.bincount(codes[seen], weights=train_positive[seen], minlength=feature.n_bins)
        shares[feature.name] = [
            float(h / r) if r else None for h, r in zip(hits, rows, strict=True)
        ][: feature.n_value_bins]
    return shares


# --- shared wording and number formats --------------------------------------------------------

EVALUATED_ON = ("holdout", "training")
HOW_TO_READ = (
    "The model flags a row (the outcome after THEN) when at least one rule matches it; rules "
    "are joined by OR, and the conditions inside a rule by AND. Unless a column says "
    '"training", numbers come from holdout rows the model did not see while learning.'
)
HOW_TO_READ_IN_SAMPLE = (
    "The model flags a row (the outcome after THEN) when at least one rule matches it; rules "
    "are joined by OR, and the conditions inside a rule by AND. This run kept no holdout "
    "(holdout_fraction 0): every number comes from the training rows the model learned from, "
    "so the scores are optimistic; expect lower ones on new rows."
)


def how_to_read(report: RuleReport) -> str:
    return HOW_TO_READ if report.evaluated_on == "holdout" else HOW_TO_READ_IN_SAMPLE


def performance_heading(report: RuleReport) -> str:
    if report.evaluated_on == "holdout":
        return "Holdout performance"
    return "Performance on the training rows (no holdout)"


def _grouped(display: RuleDisplay, rules) -> bool:
    """Whether one of ``rules`` reads as groups of categories (see ``RuleDisplay``)."""
    return bool(display.groups) and any(
        display.groups_taken(c.feature, c.categories)
        for rule in rules
        for c in rule
        if c.kind != NUMERIC
    )


def metric_label(key: str, evaluated_on: str = "holdout") -> tuple[str, str]:
    """A metric's display name and number format; row counts name the rows they count."""
    label, kind = METRIC_LABELS.get(key, (str(key), "value"))
    if label.startswith("Holdout rows"):
        label = evaluated_on.capitalize() + label[len("Holdout") :]
    return label, kind


GLOSSARY = (
    (
        "Precision",
        "of the rows flagged, the share that really have the outcome (n/a when "
        "nothing is flagged).",
    ),
    ("Recall", "of the rows that really have the outcome, the share that is flagged."),
    ("F1 score", "one number balancing precision and recall (1 is perfect, 0 is useless)."),
    ("Accuracy", "the share of all rows the model predicts correctly."),
    ("Newly caught", "correctly flagged rows that no earlier rule had flagged."),
)
COMBINED_NOTE = (
    "Rules marked “combined” are shown as one line that matches exactly the rows any of them "
    "matches: two rules that differ in one column only, where their ranges touch or overlap "
    "or their categories join, read as one, and that line can join another in the same way "
    "(the table below lists the rules one by one). This changes no prediction."
)
RULE_HEADERS = (
    ("rule", "#", "int"),
    ("text", "Rule", "text"),
    ("atoms", "Conditions", "int"),
    ("train_support", "Training rows matched", "count"),
    ("train_precision", "Training precision", "rate"),
    ("covered", "Rows matched", "int"),
    ("true_positives", "Correctly flagged", "int"),
    ("false_positives", "Wrongly flagged", "int"),
    ("precision", "Precision", "precision"),
    ("recall", "Recall", "rate"),
    ("marginal_true_positives", "Newly caught", "int"),
)
CURVE_HEADERS = (
    ("n_rules", "Rules kept", "int"),
    ("covered", "Rows flagged", "int"),
    ("true_positives", "Correctly flagged", "int"),
    ("false_positives", "Wrongly flagged", "int"),
    ("precision", "Precision", "precision"),
    ("recall", "Recall", "rate"),
    ("f1", "F1 score", "rate"),
)
METRIC_LABELS = {
    "f1": ("F1 score", "rate"),
    "precision": ("Precision", "rate"),
    "recall": ("Recall", "rate"),
    "accuracy": ("Accuracy (share of rows predicted correctly)", "rate"),
    "n_rows": ("Holdout rows", "int"),
    "n_positive": ("Holdout rows with the outcome", "int"),
    "n_flagged": ("Holdout rows flagged", "int"),
    "n_rules": ("Rules", "int"),
    "avg_atoms": ("Average conditions per rule", "decimal"),
}


def _in_short(report: RuleReport) -> str | None:
    """The report's plain summary (:func:`~libre_lib.ops.report_sections.in_short`)."""
    return in_short(
        report.confusion,
        report.class_names,
        len(report.rules),
        report.majority_name,
        report.evaluated_on,
    )


def _flagged(report: RuleReport) -> int | None:
    """Rows the whole model flags (None when unknown)."""
    if report.confusion is None:
        return None
    return int(report.confusion["tp"]) + int(report.confusion["fp"])


def _metric_rows(
    values: Mapping[str, object], flagged: int | None = None, evaluated_on: str = "holdout"
) -> list[tuple[str, str]]:
    rows = []
    for key, value in values.items():
        label, kind = metric_label(key, evaluated_on)
        text = rate_or_na(value, flagged) if key == "precision" and flagged == 0 else None
        if key in ("recall", "f1") and undefined_metric(values, key):
            text = NOT_AVAILABLE
        if key == "avg_atoms" and values.get("n_rules") == 0:  # no rule to average over
            text = NOT_AVAILABLE
        text = text if text is not None else _fmt(value, kind)
        count = metric_count(values, key) if text != NOT_AVAILABLE else ""
        rows.append((label, f"{text} ({count})" if count else text))
    return rows


def _validation_status(success: bool | None, summary: str | None) -> str:
    if success is None:
        return "Not run" if summary is None else "Result unknown"
    return "Passed" if success else "Failed"


def _meta_line(report: RuleReport) -> str:
    parts = []
    if report.run_id:
        parts.append(f"Run: {report.run_id}")
    if report.model_version:
        parts.append(f"Model version: {report.model_version}")
    if report.data_description:
        parts.append(f"Data: {report.data_description}")
    if report.generated_at:
        parts.append(f"Generated: {report.generated_at}")
    return " · ".join(parts)


def _frame_rows(frame: pd.DataFrame, spec) -> tuple[list[str], list[list[str]], list[bool]]:
    """Headers, text cells and numeric flags of ``frame``'s columns named in ``spec``; a
    precision of a row that flags nothing (``covered`` 0) reads "n/a"."""
    present = [(col, head, kind) for col, head, kind in spec if col in frame.columns]
    headers = [head for _, head, _ in present]
    numeric = [kind != "text" for _, _, kind in present]
    covered = frame["covered"].tolist() if "covered" in frame.columns else [None] * len(frame)
    rows = []
    records = frame[[col for col, _, _ in present]].itertuples(index=False, name=None)
    for record, flagged in zip(records, covered, strict=True):
        row = []
        for (_, _, kind), value in zip(present, record, strict=True):
            row.append(rate_or_na(value, flagged) if kind == "precision" else _fmt(value, kind))
        rows.append(row)
    return headers, rows, numeric


# --- sections shared by both renderers ---------------------------------------------------------


def _performance_blocks(report: RuleReport, figures: bool = True) -> list:
    blocks = []
    if report.confusion is not None:
        blocks += confusion_blocks(report.confusion, report.class_names, report.evaluated_on)
    if report.baselines is not None:
        blocks += baseline_blocks(
            report.baselines,
            report.best_rule,
            majority_name=report.majority_name,
            majority_of=report.majority_of,
            n_rules=int(report.metrics.get("n_rules", len(report.rules))),
            chosen_on_training=report.best_rule_on_training,
            evaluated_on=report.evaluated_on,
        )
    if report.balance:
        blocks += balance_blocks(report.balance, report.class_names, figure=figures)
    return blocks


CHANGES_HEADING = "Changes since the champion"


def _changes_intro(changes: ChampionChanges) -> list[str]:
    intro = [
        f"This report is about {changes.new_version}. It is compared with "
        f"{changes.old_version}, the model in production (the champion) when it was trained."
    ]
    if changes.decision:
        intro.append(changes.decision)
    if changes.columns:
        intro.append(changes.columns)
    return intro


def _changes_blocks(changes: ChampionChanges, display: RuleDisplay | None = None):
    if display is not None:
        diff = changes.diff
        rules = [*diff.added, *diff.removed, *diff.unchanged]
        rules += [r for c in diff.changed for r in (c.before, c.after)]
        labels = changes.column_labels or display.column_labels
        both = dataclasses.replace(display.with_rules(rules), column_labels=dict(labels))
        return diff_blocks(
            diff,
            changes.deltas,
            changes.old_version,
            changes.new_version,
            text=both.rule_text,
            condition=both.condition_text,
            scored_on=changes.scored_on,
        )
    return diff_blocks(
        changes.diff,
        changes.deltas,
        changes.old_version,
        changes.new_version,
        changes.column_labels,
        scored_on=changes.scored_on,
    )


# --- table artifacts ---------------------------------------------------------------------------


def _cell(value, kind: str, flagged=None):
    """A table-artifact cell: counts as ints, rates rounded to three decimals, "n/a" for a
    precision of nothing flagged, missing as None."""
    if kind == "text":
        return str(value)
    if kind == "precision" and flagged is not None and rate_or_na(value, flagged) == NOT_AVAILABLE:
        return NOT_AVAILABLE
    if _fmt(value, kind) == DASH:
        return None
    if kind in ("int", "count") and float(value).is_integer():
        return int(value)
    if kind in ("rate", "precision"):
        return round(float(value), 3)
    return round(float(value), 2) if isinstance(value, float | np.floating) else value


def artifact_tables(report: RuleReport) -> dict[str, list[dict]]:
    """The ``rules`` and ``metrics`` tables for Prefect table artifacts: the report's column
    headers, rounded numbers ("n/a" for a precision of a rule matching no row), texts escaped
    for the Markdown the Prefect UI renders them as."""
    rules = []
    covered = report.rules["covered"].tolist() if "covered" in report.rules else []
    for i, record in enumerate(report.rules.to_dict("records")):
        flagged = covered[i] if covered else None
        row = {
            head: _cell(record[col], kind, flagged)
            for col, head, kind in RULE_HEADERS
            if col in record
        }
        row["Rule"] = row.pop("Rule")  # last: a long rule pushed the numbers out of the UI's view
        rules.append(row)
    flagged = _flagged(report)
    metrics_rows = []
    for key, value in report.metrics.items():
        label, kind = metric_label(key, report.evaluated_on)
        kind = "precision" if key == "precision" else kind
        metrics_rows.append({"Measure": label, "Value": _cell(value, kind, flagged)})
    return {"rules": md_cells(rules), "metrics": md_cells(metrics_rows)}


# --- Markdown ----------------------------------------------------------------------------------


def _changes_markdown(report: RuleReport, changes: ChampionChanges) -> list[str]:
    out = [f"## {CHANGES_HEADING}"]
    out += [md_block(line) for line in _changes_intro(changes)]
    blocks = _changes_blocks(changes, report.display)
    return out + md_blocks(blocks, heading="###", paragraph=md_block)


def render_markdown(report: RuleReport, figures: bool = False) -> str:
    """GitHub-flavoured Markdown without any HTML (usable as a Prefect markdown artifact).

    Parameters
    ----------
    report : RuleReport
    figures : bool, default False
        Add the figures as inline images (``data:image/svg+xml`` URLs): for the Prefect
        artifact; the run folder's ``report.md`` stays plain text.

    Returns
    -------
    str
    """
    counter = iter(range(1, 100))

    def image(svg: str, caption: str) -> list[str]:
        if not figures:
            return []
        return [md_image(svg, f"Figure {next(counter)}. {caption}")]

    def blocks(items) -> list[str]:
        numbered = [
            (kind, (c[0], f"Figure {next(counter)}. {c[1]}") if kind == "figure" and figures else c)
            for kind, c in items
        ]
        return md_blocks(numbered, heading="###", paragraph=md_block, figures=figures)

    out = [f"# {md_inline(report.title)}"]
    if report.description:
        out.append(f"*{md_inline(report.description)}*")
    meta = _meta_line(report)
    if meta:
        out.append(md_block(meta))
    summary = _in_short(report)
    if summary:
        out.append(md_block(summary))
    out += [f"> **Caution:** {md_block(text)}" for text in report.cautions]
    out.append("## How to read this")
    out.append(md_block(how_to_read(report)))
    out.append("\n".join(f"- **{md_inline(term)}**: {md_inline(text)}" for term, text in GLOSSARY))
    out += blocks(legend_blocks(report.display_rows, report.grouped, report.known))

    out.append("## Rule set")
    out.append(md_fence(report.ruleset_text))
    if "combined)" in report.ruleset_text:
        out.append(md_block(COMBINED_NOTE))

    out.append("## Rules one by one")
    if len(report.rules):
        out.append(
            "Rules are listed in the model's order; *Newly caught* counts only rows that no "
            "earlier rule flagged."
        )
        out.append(md_table(*_frame_rows(report.rules, RULE_HEADERS)))
    else:
        out.append("The model has no rules, so it never flags a row.")
    out += image(svg_rule_bars(report.rules, report.evaluated_on), rule_bars_caption(report))

    out.append(f"## {performance_heading(report)}")
    metric_rows = _metric_rows(report.metrics, _flagged(report), report.evaluated_on)
    out.append(md_table(("Measure", "Value"), metric_rows, (False, True)))
    out += blocks(_performance_blocks(report, figures=figures))

    if report.changes is not None:
        out += _changes_markdown(report, report.changes)
    for section in (
        trend_blocks(report.trend, figure=figures),
        tuning_blocks(
            report.tuning,
            report.tuning_summary,
            figure=figures,
            n_rules=_rules(report),
            by_rows=report.cuts_by_rows,
        ),
    ):
        if section:
            out.append(f"## {section[0][1]}")
            out += blocks(section[1:])

    out.append("## Keeping only the first rules")
    out.append(
        "How the scores change when only the first *k* rules are used (0 rules flags nothing)."
    )
    out += image(svg_curve(report.curve, report.evaluated_on), curve_caption(report))
    out.append(md_table(*_frame_rows(report.curve, CURVE_HEADERS)))

    if report.discretization is not None:
        section = discretization_blocks(
            report.discretization,
            report.display_rows,
            report.refine,
            report.significant_cuts,
            report.cuts_by_rows,
        )
        out.append(f"## {section[0][1]}")
        out += blocks(section[1:])

    out.append("## Data validation")
    status = _validation_status(report.validation_success, report.validation_summary)
    out.append(f"**Status: {md_inline(status)}**")
    if report.validation_summary is not None:
        out.append(md_fence(str(report.validation_summary).rstrip("\n")))
    elif report.validation_success is None:
        out.append("The data-validation stage was not run for this report.")
    out += blocks(expectation_blocks(report.expectations, report.display))

    out.append("## Model parameters")
    if report.parameters:
        lines = [
            "| Parameter | Value |",
            "|---|---|",
            *(
                f"| {md_code(key)} | {md_code(param_text(key, value))} |"
                for key, value in report.parameters.items()
            ),
        ]
        out.append("\n".join(lines))
    else:
        out.append("No parameters recorded.")

    if report.notes:
        out.append("## Notes")
        out.append("\n".join(f"- {md_block(note)}" for note in report.notes))
    return "\n\n".join(out) + "\n"


def rule_bars_caption(report: RuleReport) -> str:
    return (
        f"{report.evaluated_on.capitalize()} rows each rule matches. Blue rows really have the "
        "outcome (dark blue: no earlier rule had caught them); orange rows do not."
    )


def curve_caption(report: RuleReport) -> str:
    return (
        f"F1 score, precision and recall on the {report.evaluated_on} rows against the number "
        "of rules kept."
    )


# --- HTML --------------------------------------------------------------------------------------

CSS = """
:root { color-scheme: light; }
body { margin: 0; background: #f5f6f8; color: #1d2330;
  font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, Helvetica, Arial, sans-serif; }
main { max-width: 1080px; margin: 0 auto; padding: 28px 32px 48px; background: #fff;
  box-shadow: 0 0 0 1px #e4e6eb; }
h1 { font-size: 26px; margin: 0 0 4px; }
h2 { font-size: 19px; margin: 34px 0 10px; padding-bottom: 4px; border-bottom: 2px solid #e8eaee; }
p.meta { color: #5b6272; margin: 0 0 18px; }
.cards { display: flex; flex-wrap: wrap; gap: 12px; margin: 18px 0 8px; }
.card { flex: 1 1 130px; border: 1px solid #e1e4ea; border-radius: 8px; padding: 10px 14px;
  background: #fafbfc; }
.card .value { font-size: 24px; font-weight: 600; }
.card .name { color: #5b6272; font-size: 13px; }
.card .count { color: #5b6272; font-size: 12px; margin-top: 2px; }
dl.glossary { display: grid; grid-template-columns: max-content 1fr; gap: 2px 14px;
  margin: 8px 0 0; color: #3a4150; }
dl.glossary dt { font-weight: 600; }
dl.glossary dd { margin: 0; }
pre { background: #f3f5f8; border: 1px solid #e1e4ea; border-radius: 6px; padding: 12px 14px;
  overflow-x: auto; font: 14px/1.6 ui-monospace, SFMono-Regular, Menlo, Consolas, monospace;
  white-space: pre-wrap; }
pre.ruleset .kw { color: #0b5cad; font-weight: 700; }
pre.ruleset .line { display: block; padding-left: 2.5em; text-indent: -2.5em; }
.table-wrap { overflow-x: auto; margin: 8px 0; }
table { border-collapse: collapse; font-size: 14px; }
table.wide { width: 100%; }
th, td { padding: 5px 7px; border-bottom: 1px solid #e8eaee; vertical-align: top; }
th { background: #f3f5f8; text-align: left; font-weight: 600; font-size: 13px;
  vertical-align: bottom; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
td.num { white-space: nowrap; }
td.code, tbody th.code { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; }
td.rule-text, tbody th.rule-text {
  font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 13px;
  min-width: 340px; max-width: 560px; overflow-wrap: anywhere; }
tr:hover td, tr:hover th[scope="row"] { background: #fafbfc; }
figure { margin: 16px 0; }
figcaption { color: #5b6272; font-size: 13px; margin-top: 4px; }
svg.figure { max-width: 100%; height: auto; }
.figure-wrap { overflow-x: auto; }
.badge { display: inline-block; padding: 2px 10px; border-radius: 12px; font-weight: 600; }
.badge.ok { background: #e3f4ea; color: #17693a; }
.badge.fail { background: #fde8e4; color: #a3290f; }
.badge.na { background: #eceef2; color: #4b5263; }
.empty { color: #5b6272; font-style: italic; }
h3 { font-size: 16px; margin: 20px 0 6px; }
ul.rules li { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace;
  font-size: 13px; }
p.description { font-size: 17px; color: #2b3340; margin: 4px 0 6px; }
p.summary { font-size: 16px; margin: 10px 0; }
dl.legend { display: grid; grid-template-columns: max-content 1fr; gap: 2px 14px;
  margin: 8px 0 0; color: #3a4150; }
dl.legend dt { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace;
  font-size: 13px; }
dl.legend dd { margin: 0; }
p.note { color: #5b6272; font-size: 13px; }
p.caution { background: #fff4e0; border-left: 4px solid #c77700; padding: 8px 12px;
  margin: 10px 0; color: #3d2a00; }
tbody th { background: none; font-size: inherit; vertical-align: top; }
tbody th.rule-text, tbody th.code { font-weight: normal; }
span.cond { white-space: nowrap; }
.rule-text .kw { color: #0b5cad; font-weight: 700; }
@media (max-width: 640px) {
  main { padding: 16px 12px 32px; }
  td.num { white-space: normal; }
  td.rule-text, tbody th.rule-text {
    min-width: 150px; position: sticky; left: 0; background: #fff; }
  dl.glossary, dl.legend { grid-template-columns: 1fr; }
  svg.figure { max-width: none; width: 560px; }
}
@media print {
  body { background: #fff; font-size: 11pt; }
  main { max-width: none; padding: 0; box-shadow: none; }
  .table-wrap { overflow: visible; }
  table { font-size: 9pt; }
  td.num { white-space: normal; }
  td.rule-text, tbody th.rule-text { min-width: 200px; font-size: 8.5pt; }
  tr, figure, pre, p.caution, .card { break-inside: avoid; }
  h2, h3 { break-after: avoid; }
}
"""


def _html_table(headers, rows, numeric, classes=None, wide: bool = False, css: str = "") -> str:
    classes = classes or [""] * len(headers)

    def cls(i):
        names = [c for c in ("num" if numeric[i] else "", classes[i]) if c]
        return f' class="{" ".join(names)}"' if names else ""

    names = " ".join(c for c in ("wide" if wide else "", css) if c)
    table = f'<table class="{names}">' if names else "<table>"
    out = [f'<div class="table-wrap">{table}', "<thead><tr>"]
    out += [f'<th scope="col"{cls(i)}>{_h(h)}</th>' for i, h in enumerate(headers)]
    out.append("</tr></thead>")
    out.append("<tbody>")

    def cell(i, text):
        if "rule-text" in classes[i]:
            return _rule_cell(text)
        return _h(one_line(text))

    for row in rows:  # the first cell names the row, for a screen reader as for the eye
        out.append(
            "<tr>"
            + "".join(
                f'<th scope="row"{cls(i)}>{cell(i, c)}</th>'
                if i == 0
                else f"<td{cls(i)}>{cell(i, c)}</td>"
                for i, c in enumerate(row)
            )
        )
    out.append("</tbody></table></div>")
    return "\n".join(out)


def _h(text) -> str:
    return html.escape(str(text), quote=True)


_CODE_SPAN = re.compile(r"`([^`\n]+)`")


def _prose(text) -> str:
    """A sentence as HTML: escaped, with its `commands` as code (they showed their
    backticks)."""
    return _CODE_SPAN.sub(lambda m: f"<code>{m.group(1)}</code>", _h(text))


#: A condition up to this long stays on one line; a longer one (many ranges or categories)
#: wraps, so the statistics beside the rule stay on screen.
_NOWRAP_CHARS = 40


#: A name quoted in a rule (JSON-style, :func:`~libre_lib.rules.name_text`): its words are the
#: column's, never the rule's AND / OR.
_QUOTED = re.compile(r'"(?:[^"\\]|\\.)*"')


def _split_outside_quotes(text: str, separator: str) -> list[str]:
    """``text.split(separator)``, except inside quoted names."""
    parts, start, searched = [], 0, 0
    quoted = [m.span() for m in _QUOTED.finditer(text)]
    while (at := text.find(separator, searched)) >= 0:
        inside = next((end for low, end in quoted if low < at < end), None)
        if inside is not None:
            searched = inside
            continue
        parts.append(text[start:at])
        start = searched = at + len(separator)
    return [*parts, text[start:]]


def _rule_cell(text) -> str:
    """A rule's conditions, short ones kept on one line (wrapping between conditions)."""
    parts = [
        f'<span class="cond">{_h(part)}</span>' if len(part) <= _NOWRAP_CHARS else _h(part)
        for part in _split_outside_quotes(str(text), " AND ")
    ]
    return ' <span class="kw">AND</span> '.join(parts)


_KEYWORD = re.compile(r"^(IF|OR)\b|\b(AND|THEN|ELSE)\b")


def _keywords_html(text: str) -> str:
    """``text`` escaped, with the rule's keywords marked (not the words of a quoted name)."""
    out, start = [], 0
    for match in _QUOTED.finditer(text):
        plain = _h(text[start : match.start()])
        keyword = _KEYWORD if start == 0 else _KEYWORD_INSIDE
        out.append(keyword.sub(lambda m: f'<span class="kw">{m.group(0)}</span>', plain))
        out.append(_h(match.group(0)))
        start = match.end()
    plain = _h(text[start:])
    keyword = _KEYWORD if start == 0 else _KEYWORD_INSIDE
    out.append(keyword.sub(lambda m: f'<span class="kw">{m.group(0)}</span>', plain))
    return "".join(out)


_KEYWORD_INSIDE = re.compile(r"\b(AND|THEN|ELSE)\b")


def _ruleset_html(text: str) -> str:
    lines = [_keywords_html(line) for line in text.splitlines()]
    # one block per rule, wrapped lines indented under its first: a long rule wrapped on a
    # phone or on paper no longer runs into the next one
    return (
        '<pre class="ruleset">'
        + "".join(f'<span class="line">{line}</span>' for line in lines)
        + "</pre>"
    )


def _cards(
    values: Mapping[str, object], flagged: int | None = None, evaluated_on: str = "holdout"
) -> str:
    """The headline figures, each named with the rows it was measured on."""
    cards = []
    for key in ("f1", "precision", "recall", "accuracy", "n_rules"):
        if key in values:
            name = {"f1": f"F1 score ({evaluated_on})", "n_rules": "Rules"}.get(
                key, f"{key.capitalize()} ({evaluated_on})"
            )
            kind = METRIC_LABELS[key][1]
            text = _fmt(values[key], kind)
            if key == "precision":
                text = rate_or_na(values[key], flagged) if flagged is not None else text
            elif key in ("recall", "f1") and undefined_metric(values, key):
                text = NOT_AVAILABLE
            count = metric_count(values, key)
            cards.append(
                f'<div class="card"><div class="value">{_h(text)}</div>'
                f'<div class="name">{_h(name)}</div>'
                + (f'<div class="count">{_h(count)}</div>' if count else "")
                + "</div>"
            )
    return f'<div class="cards">{"".join(cards)}</div>' if cards else ""


def metric_count(values: Mapping[str, object], key: str) -> str:
    """The rows behind a rate, in words ("2 of 7 with the outcome"), so that a reader sees how
    few rows a figure rests on; empty where the metric dict lacks the counts."""
    n_rows, n_positive, n_flagged = (values.get(k) for k in ("n_rows", "n_positive", "n_flagged"))
    try:
        if key == "precision" and n_flagged:
            hits = round(float(values["precision"]) * int(n_flagged))
            return f"{hits:,} of {int(n_flagged):,} flagged rows"
        if key == "recall" and n_positive:
            hits = round(float(values["recall"]) * int(n_positive))
            return f"{hits:,} of {int(n_positive):,} rows with the outcome"
        if key == "accuracy" and n_rows:
            return f"right on {round(float(values['accuracy']) * int(n_rows)):,} of {int(n_rows):,}"
    except (KeyError, TypeError, ValueError):
        return ""
    return ""


def _rules(report: RuleReport) -> int | None:
    """How many rules the reported model has (None when its metrics do not say)."""
    n_rules = report.metrics.get("n_rules")
    return None if n_rules is None else int(n_rules)


class _Figures:
    """Numbers the figures of a page in order."""

    def __init__(self):
        self.count = 0

    def html(self, svg: str, caption: str) -> list[str]:
        self.count += 1
        return [
            "<figure>",
            f'<div class="figure-wrap">{svg}</div>',
            f"<figcaption>Figure {self.count}. {_h(caption)}</figcaption>",
            "</figure>",
        ]


def _html_blocks(blocks, figures: _Figures, heading: str = "h3") -> list[str]:
    out = []
    for kind, content in blocks:
        if kind == "p":
            out.append(f"<p>{_prose(content)}</p>")
        elif kind == "h":
            out.append(f"<{heading}>{_h(content)}</{heading}>")
        elif kind == "list":
            out.append(
                '<ul class="rules">' + "".join(f"<li>{_h(item)}</li>" for item in content) + "</ul>"
            )
        elif kind == "dl":
            out.append('<dl class="legend">')
            out += [f"<dt>{_h(term)}</dt><dd>{_h(text)}</dd>" for term, text in content]
            out.append("</dl>")
        elif kind == "figure":
            out += figures.html(*content)
        else:
            headers, rows, numeric = content
            classes = ["rule-text" if h in ("Before", "After") else "" for h in headers]
            wide = (
                "Before" in headers or "Details" in headers or "Cut points or categories" in headers
            )
            css = "confusion" if headers and headers[-1] == "Total" else ""
            out.append(_html_table(headers, rows, numeric, classes, wide=wide, css=css))
    return out


def _section(blocks, figures: _Figures) -> list[str]:
    """A section whose first block is its ``h2`` heading."""
    if not blocks:
        return []
    (_, title), rest = blocks[0], blocks[1:]
    return [f"<h2>{_h(title)}</h2>", *_html_blocks(rest, figures)]


def render_html(report: RuleReport) -> str:
    """One self-contained HTML page: inline CSS and inline SVG figures, no scripts or links."""
    figures = _Figures()
    out = [
        "<!DOCTYPE html>",
        '<html lang="en">',
        "<head>",
        '<meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{_h(report.title)}</title>",
        f"<style>{CSS}</style>",
        "</head>",
        "<body>",
        "<main>",
        f"<h1>{_h(report.title)}</h1>",
    ]
    if report.description:
        out.append(f'<p class="description">{_h(report.description)}</p>')
    meta = _meta_line(report)
    if meta:
        out.append(f'<p class="meta">{_h(meta)}</p>')
    summary = _in_short(report)
    if summary:
        out.append(f'<p class="summary">{_h(summary)}</p>')
    out += [
        f'<p class="caution"><strong>Caution:</strong> {_prose(t)}</p>' for t in report.cautions
    ]
    flagged = _flagged(report)
    out.append(_cards(report.metrics, flagged, report.evaluated_on))

    out.append("<h2>How to read this</h2>")
    out.append(f"<p>{_h(how_to_read(report))}</p>")
    out.append('<dl class="glossary">')
    out += [f"<dt>{_h(term)}</dt><dd>{_h(text)}</dd>" for term, text in GLOSSARY]
    out.append("</dl>")
    out += _html_blocks(legend_blocks(report.display_rows, report.grouped, report.known), figures)

    out.append("<h2>Rule set</h2>")
    out.append(_ruleset_html(report.ruleset_text))
    if "combined)" in report.ruleset_text:
        out.append(f'<p class="note">{_h(COMBINED_NOTE)}</p>')

    out.append("<h2>Rules one by one</h2>")
    if len(report.rules):
        out.append(
            "<p>Rules are listed in the model's order; <em>Newly caught</em> counts only rows "
            "that no earlier rule flagged.</p>"
        )
        headers, rows, numeric = _frame_rows(report.rules, RULE_HEADERS)
        classes = ["rule-text" if h == "Rule" else "" for h in headers]
        out.append(_html_table(headers, rows, numeric, classes, wide=True))
    else:
        out.append('<p class="empty">The model has no rules, so it never flags a row.</p>')
    out += figures.html(svg_rule_bars(report.rules, report.evaluated_on), rule_bars_caption(report))

    out.append(f"<h2>{_h(performance_heading(report))}</h2>")
    out.append(
        _html_table(
            ("Measure", "Value"),
            _metric_rows(report.metrics, flagged, report.evaluated_on),
            (False, True),
        )
    )
    out += _html_blocks(_performance_blocks(report), figures)

    if report.changes is not None:
        out.append(f"<h2>{_h(CHANGES_HEADING)}</h2>")
        out += [f"<p>{_prose(line)}</p>" for line in _changes_intro(report.changes)]
        out += _html_blocks(_changes_blocks(report.changes, report.display), figures)
    out += _section(trend_blocks(report.trend), figures)
    out += _section(
        tuning_blocks(
            report.tuning,
            report.tuning_summary,
            n_rules=_rules(report),
            by_rows=report.cuts_by_rows,
        ),
        figures,
    )

    out.append("<h2>Keeping only the first rules</h2>")
    out.append(
        "<p>How the scores change when only the first <em>k</em> rules are used "
        "(0 rules flags nothing).</p>"
    )
    out += figures.html(svg_curve(report.curve, report.evaluated_on), curve_caption(report))
    out.append(_html_table(*_frame_rows(report.curve, CURVE_HEADERS)))

    if report.discretization is not None:
        out += _section(
            discretization_blocks(
                report.discretization,
                report.display_rows,
                report.refine,
                report.significant_cuts,
                report.cuts_by_rows,
            ),
            figures,
        )

    out.append("<h2>Data validation</h2>")
    status = _validation_status(report.validation_success, report.validation_summary)
    badge = {True: "ok", False: "fail"}.get(report.validation_success, "na")
    out.append(f'<p><span class="badge {badge}">{_h(status)}</span></p>')
    if report.validation_summary is not None:
        out.append(f"<pre>{_h(str(report.validation_summary).rstrip())}</pre>")
    elif report.validation_success is None:
        out.append('<p class="empty">The data-validation stage was not run for this report.</p>')
    out += _html_blocks(expectation_blocks(report.expectations, report.display), figures)

    out.append("<h2>Model parameters</h2>")
    if report.parameters:
        rows = [(str(k), param_text(k, v)) for k, v in report.parameters.items()]
        out.append(_html_table(("Parameter", "Value"), rows, (False, False), ["code", "code"]))
    else:
        out.append('<p class="empty">No parameters recorded.</p>')

    if report.notes:
        out.append("<h2>Notes</h2>")
        out.append("<ul>" + "".join(f"<li>{_prose(note)}</li>" for note in report.notes) + "</ul>")
    out += ["</main>", "</body>", "</html>"]
    return "\n".join(out) + "\n"
