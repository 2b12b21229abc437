"""What a rule set's scores mean next to simple answers: the confusion matrix, the class
balance, the majority-class answer and the best single rule, and the scores of earlier model
versions.

All take 0/1 arrays (``predicted``, ``positive``) or the fired-rules matrix, so they depend on
nothing but numpy and pandas; :mod:`libre_lib.ops.report` computes those from a model.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping

import numpy as np
import pandas as pd

from ..errors import apart, counted

__all__ = [
    "BASELINE_COLUMNS",
    "TREND_COLUMNS",
    "TREND_VERSIONS",
    "baselines",
    "cautions",
    "class_balance",
    "confusion_matrix",
    "extra_rules_p",
    "mcnemar_p",
    "precision_drop_p",
    "scores",
    "version_trend",
]

BASELINE_COLUMNS = ("answer", "f1", "precision", "recall", "accuracy", "flagged")
TREND_COLUMNS = (
    "version",
    "created_at",
    "status",
    "this_run",
    "scored_on",
    "f1",
    "precision",
    "recall",
    "accuracy",
    "n_rules",
    "n_rows",
    "positive_share",
)

TREND_VERSIONS = 20
"""The trend shows at most this many versions, the latest."""


def scores(predicted: np.ndarray, positive: np.ndarray) -> dict:
    """Counts and rates of a 0/1 prediction; a rate with an empty denominator is 0."""
    predicted = np.asarray(predicted, dtype=bool)
    positive = np.asarray(positive, dtype=bool)
    tp = int(np.sum(predicted & positive))
    fp = int(np.sum(predicted & ~positive))
    fn = int(np.sum(~predicted & positive))
    n = int(predicted.shape[0])
    tn = n - tp - fp - fn
    return {
        "covered": tp + fp,
        "true_positives": tp,
        "false_positives": fp,
        "precision": tp / (tp + fp) if tp + fp else 0.0,
        "recall": tp / (tp + fn) if tp + fn else 0.0,
        "f1": 2 * tp / (2 * tp + fp + fn) if tp else 0.0,
        "accuracy": (tp + tn) / n if n else 0.0,
    }


def confusion_matrix(predicted: np.ndarray, positive: np.ndarray) -> dict[str, int]:
    """``{"tp", "fp", "fn", "tn"}``: rows flagged and really positive, flagged but negative,
    missed positives, and negatives left alone."""
    predicted = np.asarray(predicted, dtype=bool)
    positive = np.asarray(positive, dtype=bool)
    return {
        "tp": int(np.sum(predicted & positive)),
        "fp": int(np.sum(predicted & ~positive)),
        "fn": int(np.sum(~predicted & positive)),
        "tn": int(np.sum(~predicted & ~positive)),
    }


def class_balance(positive: np.ndarray) -> dict[str, int]:
    """``{"positive", "negative"}``: row counts of each class."""
    positive = np.asarray(positive, dtype=bool)
    n_positive = int(positive.sum())
    return {"positive": n_positive, "negative": int(positive.shape[0]) - n_positive}


def _f1(fired: np.ndarray, positive: np.ndarray) -> np.ndarray:
    """Each column's F1 score as a prediction on its own."""
    tp = (fired & positive[:, None]).sum(axis=0)
    flagged = fired.sum(axis=0)
    denominator = flagged + positive.sum()
    return np.divide(2 * tp, denominator, out=np.zeros(fired.shape[1]), where=denominator > 0)


def baselines(
    fired: np.ndarray,
    positive: np.ndarray,
    *,
    majority_positive: bool,
    choice_fired: np.ndarray | None = None,
    choice_positive: np.ndarray | None = None,
) -> tuple[pd.DataFrame, int | None]:
    """The model next to simple answers, scored on the same rows.

    Parameters
    ----------
    fired : ndarray of shape (n_rows, n_rules)
        Which rule matches which (holdout) row.
    positive : ndarray of shape (n_rows,)
        Which row really has the outcome.
    majority_positive : bool
        Whether the majority class (normally of the training rows) is the positive one; the
        majority-class answer flags every row if so, none otherwise.
    choice_fired, choice_positive : ndarray, optional
        The rows the best single rule is chosen on (normally the training rows): the rule with
        the highest F1 there. Without them it is chosen on ``fired`` / ``positive`` itself.

    Returns
    -------
    table : DataFrame
        Rows ``model``, ``majority``, ``every_row`` (flagging every row: the F1 any answer
        reaches without a rule; absent when the majority answer already does it) and (when the
        model has rules) ``best_rule``; columns :data:`BASELINE_COLUMNS` (``flagged``: rows
        flagged).
    best : int or None
        The 1-based number of the best single rule (None without rules).
    """
    fired = np.asarray(fired, dtype=bool)
    positive = np.asarray(positive, dtype=bool)
    n_rows = positive.shape[0]
    rows = [("model", fired.any(axis=1) if fired.shape[1] else np.zeros(n_rows, dtype=bool))]
    rows.append(("majority", np.full(n_rows, bool(majority_positive))))
    if not majority_positive:  # else the majority answer is this one
        rows.append(("every_row", np.ones(n_rows, dtype=bool)))
    best = None
    if fired.shape[1]:
        if choice_fired is None or choice_positive is None:
            choice_fired, choice_positive = fired, positive
        by_f1 = _f1(np.asarray(choice_fired, dtype=bool), np.asarray(choice_positive, dtype=bool))
        best = int(np.argmax(by_f1))
        rows.append(("best_rule", fired[:, best]))
    records = []
    for answer, predicted in rows:
        s = scores(predicted, positive)
        records.append(
            {
                "answer": answer,
                **{k: s[k] for k in ("f1", "precision", "recall", "accuracy")},
                "flagged": s["covered"],
            }
        )
    return pd.DataFrame(records, columns=list(BASELINE_COLUMNS)), (
        None if best is None else best + 1
    )


#: A model that flags at least this share of the rows, ahead of flagging every row by a gap
#: chance may explain, gets a caution too (the other side of the flag-every-row caution).
MOST_FLAGGED = 0.75


def cautions(
    table: pd.DataFrame,
    n_rows: int,
    *,
    majority_name: str,
    best_rule: int | None,
    best_rule_chosen_elsewhere: bool,
    evaluated_on: str = "holdout",
) -> tuple[str, ...]:
    """What a reader should know before trusting the model, from a :func:`baselines` table:
    the model is less accurate than the majority-class answer, its F1 is no higher than
    flagging every row's, or one of its rules alone scores a higher F1. Accuracy is compared
    in rows right (at a rare class two accuracies differ past the third decimal), F1 as the
    report prints it (3 decimals); each caution gives the rows behind it and an exact
    test on the rows where the two answers disagree (McNemar's for accuracy, a paired
    randomization test for F1), so that a reader can tell a one-row difference from a real
    one.

    Parameters
    ----------
    table : DataFrame
        The ``baselines`` table of the model.
    n_rows : int
        The number of rows ``table`` is scored on.
    majority_name : str
        How the report names the majority-class answer's class.
    best_rule : int or None
        The 1-based number of the best single rule.
    best_rule_chosen_elsewhere : bool
        Whether the best single rule was chosen on other rows than ``table``'s (normally the
        training rows); a rule chosen on the scored rows themselves is not compared.
    evaluated_on : str
        The rows ``table`` is scored on.

    Returns
    -------
    tuple of str
        The cautions, in plain sentences (none when the model beats every answer).
    """
    by_answer = {row["answer"]: row for row in table.to_dict("records")}
    model = by_answer.get("model")
    if model is None:
        return ()
    out = []
    majority = by_answer.get("majority")
    if majority is not None and _n_positives(majority, n_rows) == 0:
        out.append(
            f"The {n_rows:,} {evaluated_on} rows hold no row with the outcome, so recall "
            "cannot be measured on them, nor F1 unless the model flags rows (every flag is "
            f"then a false alarm and F1 is 0; it flags {int(model['flagged']):,} here). Compare "
            "models on rows that hold the outcome: a larger holdout, or more data."
        )

    right, right_majority = (
        round(a * n_rows) for a in (model["accuracy"], (majority or model)["accuracy"])
    )  # rows, not rounded accuracies: 11,982 against 11,988 both read 0.999
    if majority is not None and right < right_majority:
        shown, shown_majority = apart(model["accuracy"], majority["accuracy"])
        won, lost = _disagreements(model, majority, n_rows)
        p = mcnemar_p(won, lost)
        verdict = _verdict(
            p, "difference", evaluated_on, "the model is less accurate or only unlucky"
        )
        out.append(
            f"On the {n_rows:,} {evaluated_on} rows the model is less accurate than always "
            f"answering “{majority_name}”: right on {right:,} rows against {right_majority:,} "
            f"(accuracy {shown} against {shown_majority}; F1 "
            f"{model['f1']:.3f} against {majority['f1']:.3f}). The two answers differ on "
            f"{counted(won + lost, 'row')}, {won:,} in the model's favour and {lost:,} in the "
            "majority "
            f"answer's; a split at least this uneven arises by chance with probability "
            f"{_probability(p)} (exact McNemar test), {verdict}. Weigh what a missed case "
            "and a false alarm cost before relying on it."
        )
    everyone = by_answer.get("every_row")
    if everyone is None and majority is not None and majority["flagged"] == n_rows:
        everyone = majority
    if (
        everyone is not None
        and model["flagged"]
        and everyone["f1"] > 0  # rows without the outcome have their own caution
        and round(model["f1"], 3) <= round(everyone["f1"], 3)
    ):
        hits = round(model["precision"] * model["flagged"])
        misses = int(model["flagged"]) - hits
        n_positives = round(everyone["precision"] * n_rows)
        extra_hits, extra_misses = n_positives - hits, n_rows - n_positives - misses
        p = extra_rules_p(hits, misses, extra_hits, extra_misses, n_positives)
        tested = _paired_test(
            p, "those rows", evaluated_on, "the rules do worse than flagging every row"
        )
        if int(model["flagged"]) == n_rows:  # no row left to compare on: say what it means
            out.append(
                f"The model flags every one of the {n_rows:,} {evaluated_on} rows: on them it "
                f"answers exactly as flagging every row does (F1 {model['f1']:.3f}), so its "
                "rules tell these rows apart no better than no rule at all. F1 rewards flagging "
                "widely: the columns may hold little signal for this outcome, and accuracy and "
                "the cost of a false alarm say more."
            )
        else:
            out.append(
                f"Flagging every one of the {n_rows:,} {evaluated_on} rows scores an F1 at "
                f"least as high as the model's ({everyone['f1']:.3f} against "
                f"{model['f1']:.3f}): the rows the model leaves unflagged hold {extra_hits:,} "
                f"with the outcome and {extra_misses:,} without. {tested} F1 rewards flagging "
                "widely: where the rules do no better than flagging everyone, the columns may "
                "hold little signal for this outcome, and accuracy and the cost of a false "
                "alarm say more."
            )
    if (
        everyone is not None
        and everyone["f1"] > 0
        and n_rows > model["flagged"] >= MOST_FLAGGED * n_rows
        and round(model["f1"], 3) > round(everyone["f1"], 3)
    ):  # ahead of flagging every row, by a gap chance may explain
        hits = round(model["precision"] * model["flagged"])
        misses = int(model["flagged"]) - hits
        n_positives = round(everyone["precision"] * n_rows)
        extra_hits, extra_misses = n_positives - hits, n_rows - n_positives - misses
        p = extra_rules_p(hits, misses, extra_hits, extra_misses, n_positives)
        if p >= 0.05:
            rows = f"the {extra_hits + extra_misses:,} rows it leaves unflagged"
            out.append(
                f"The model flags {int(model['flagged']):,} of the {n_rows:,} {evaluated_on} "
                f"rows ({model['flagged'] / n_rows:.0%}), and its F1 is only "
                f"{model['f1'] - everyone['f1']:.3f} above flagging every row's "
                f"({model['f1']:.3f} against {everyone['f1']:.3f}). "
                + _paired_test(p, rows, evaluated_on, "the rules do better than flagging every row")
                + " Its rules may tell these rows apart little better than no rule at all: "
                "accuracy and the cost of a false alarm say more."
            )
    has_rules = "best_rule" in by_answer  # a model without rules has a caution of its own
    if everyone is not None and not model["flagged"] and everyone["f1"] > 0 and has_rules:
        n_positives = round(everyone["precision"] * n_rows)
        out.append(
            f"The model flags none of the {n_rows:,} {evaluated_on} rows, {n_positives:,} of "
            f"which {'has' if n_positives == 1 else 'have'} the outcome: its F1 is 0, below "
            f"flagging every row's ({everyone['f1']:.3f}). Its rules match no row here; rules "
            "learned from few rows with the outcome rarely match new ones, and more data or a "
            "larger holdout would tell what they are worth."
        )
    single = by_answer.get("best_rule")
    if (
        single is not None
        and best_rule_chosen_elsewhere
        and round(single["f1"], 3) > round(model["f1"], 3)
    ):
        hits, single_hits = (round(r["precision"] * r["flagged"]) for r in (model, single))
        misses, single_misses = model["flagged"] - hits, single["flagged"] - single_hits
        extra_hits, extra_misses = hits - single_hits, misses - single_misses
        n_positives = (
            _n_positives(majority, n_rows)
            if majority is not None
            else round(hits / model["recall"])  # the caution fires only if the model has hits
        )
        p = extra_rules_p(single_hits, single_misses, extra_hits, extra_misses, n_positives)
        rows = f"those {extra_hits + extra_misses:,} rows"
        tested = _paired_test(p, rows, evaluated_on, "the other rules lower the F1")
        out.append(
            f"Rule {best_rule} alone scores a higher F1 on the {evaluated_on} rows than the whole "
            f"rule set ({single['f1']:.3f} against {model['f1']:.3f}): the other rules flag "
            f"{extra_hits:,} more rows that have the outcome and {extra_misses:,} more that do "
            f"not. {tested}"
        )
    return tuple(out)


def _verdict(p: float, what: str, evaluated_on: str, whether: str) -> str:
    """How a caution's test reads: the ``what`` unlikely to be chance (p < 0.05), or too
    likely to tell ``whether`` from the ``evaluated_on`` rows."""
    if p < 0.05:
        return f"so the {what} is unlikely to be chance"
    return (
        f"too often to tell from these {evaluated_on} rows whether {whether} (more rows would tell)"
    )


def _paired_test(p: float, rows: str, evaluated_on: str, whether: str) -> str:
    """The sentence of a caution's paired randomization test (:func:`extra_rules_p`)."""
    return (
        f"Handing each of {rows} to one answer or the other at random opens an F1 gap at least "
        f"this wide with probability {_probability(p)} (exact paired randomization test), "
        f"{_verdict(p, 'gap', evaluated_on, whether)}."
    )


def extra_rules_p(
    hits: int, false_alarms: int, extra_hits: int, extra_false_alarms: int, n_positives: int
) -> float:
    """Two-sided p-value of the exact paired randomization test of a rule against the rule set
    that contains it, on F1.

    The set flags every row the rule flags (``hits`` with the outcome, ``false_alarms``
    without) and ``extra_hits + extra_false_alarms`` more. Under the null hypothesis each of
    those extra rows is as likely to be flagged by either answer; the p-value is the chance
    that handing each to one answer at random (``a ~ Binomial(extra_hits, 1/2)`` hits and
    ``b ~ Binomial(extra_false_alarms, 1/2)`` false alarms to the rule, the rest to the set)
    opens an F1 gap at least as wide as the observed one. The two binomials are summed
    exactly over all the mass above 1e-18.
    """
    from scipy.stats import binom  # imported here: only a caution needs it

    if extra_hits + extra_false_alarms == 0:
        return 1.0

    def f1(tp, fp):
        return 2 * tp / np.maximum(tp + fp + n_positives, 1)

    def support(n):
        k = np.arange(n + 1)
        mass = binom.pmf(k, n, 0.5)
        keep = mass > 1e-18
        return k[keep], mass[keep]

    a, mass_a = support(extra_hits)
    b, mass_b = support(extra_false_alarms)
    a, b = a[:, None], b[None, :]
    gap = np.abs(
        f1(hits + extra_hits - a, false_alarms + extra_false_alarms - b)
        - f1(hits + a, false_alarms + b)
    )
    observed = abs(
        f1(hits + extra_hits, false_alarms + extra_false_alarms) - f1(hits, false_alarms)
    )
    weight = mass_a[:, None] * mass_b[None, :]
    return float(min(1.0, weight[gap >= observed - 1e-12].sum()))


def _n_positives(majority: Mapping, n_rows: int) -> int:
    """The rows with the outcome, from the majority answer's ``baselines`` row."""
    majority_right = round(majority["accuracy"] * n_rows)
    return majority_right if int(majority["flagged"]) else n_rows - majority_right


def _disagreements(model: Mapping, majority: Mapping, n_rows: int) -> tuple[int, int]:
    """The rows where the model and the majority answer disagree, from their ``baselines``
    rows: (the model right, the majority answer right). The majority answer flags every row
    or none, so the model is right where they disagree on its true positives (a negative
    majority) or its true negatives (a positive one)."""
    flagged = int(model["flagged"])
    hits = round(model["precision"] * flagged)
    false_alarms = flagged - hits
    if int(majority["flagged"]) == 0:
        return hits, false_alarms
    positives = _n_positives(majority, n_rows)
    return n_rows - positives - false_alarms, positives - hits


def mcnemar_p(won: int, lost: int) -> float:
    """Two-sided p-value of the exact McNemar test: the chance that, of ``won + lost`` rows on
    which two answers disagree, a fair coin splits them at least as unevenly."""
    if won + lost == 0:
        return 1.0
    from scipy.stats import binomtest  # imported here: only a caution needs it

    return float(binomtest(min(won, lost), won + lost, 0.5).pvalue)


def precision_drop_p(train_hits: int, train_false_alarms: int, hits: int, false_alarms: int):
    """One-sided p-value of Fisher's exact test that a rule's precision on the training rows
    (``train_hits`` of ``train_hits + train_false_alarms``) exceeds its precision on other
    rows (``hits`` of ``hits + false_alarms``) by chance alone."""
    from scipy.stats import fisher_exact  # imported here: only a report note needs it

    table = [[train_hits, train_false_alarms], [hits, false_alarms]]
    return float(fisher_exact(table, alternative="greater").pvalue)


def _probability(p: float) -> str:
    """A p-value as a reader takes it in: two decimals, three below 0.01, a bound below 0.001."""
    if p < 0.001:
        return "below 0.001"
    return f"{p:.3f}" if p < 0.01 else f"{p:.2f}"


def undefined_metric(metrics: Mapping, name: str) -> bool:
    """Whether ``metrics`` (a run's holdout scores) has no meaningful ``name``: the precision
    of a model that flagged no row, the recall of rows without the outcome (and their F1 when
    nothing was flagged either), the conditions per rule of a model without rules."""
    flagged = metrics.get("n_flagged")
    if name == "precision":
        return flagged == 0 if flagged is not None else metrics.get("n_rules") == 0
    if name in ("recall", "f1") and metrics.get("n_positive") == 0:
        return name == "recall" or flagged == 0
    return name == "avg_atoms" and metrics.get("n_rules") == 0


def version_trend(
    versions: Iterable,
    champions: Iterable[str] = (),
    current: str | None = None,
    last: int = TREND_VERSIONS,
    in_sample: Iterable[str] = (),
) -> pd.DataFrame:
    """Holdout scores of registered model versions, oldest first (at most the ``last`` ones).

    ``versions`` are registry :class:`~libre_lib.ops.registry.ModelVersion` objects (anything
    with ``version``, ``created_at``, ``status`` and a ``metrics`` mapping); ``champions`` the
    versions ever promoted, whose ``status`` reads "champion (earlier)" when they are retired;
    ``current`` the version of this run (``this_run`` True); ``in_sample`` the versions trained
    without a holdout, whose scores are on their training rows (``scored_on`` "training", else
    "holdout"). Columns :data:`TREND_COLUMNS`: the metrics, the rows they were measured on
    (``n_rows``) and the positive class's share of them (a halved share reads as a drop in F1).
    """
    promoted = set(champions)
    in_sample = set(in_sample)
    rows = []
    for v in list(versions)[-last:]:
        metrics: Mapping = getattr(v, "metrics", {}) or {}
        status = str(getattr(v, "status", ""))
        if status != "champion" and v.version in promoted:
            status = "champion (earlier)"
        rows.append(
            {
                "version": str(v.version),
                "created_at": str(getattr(v, "created_at", ""))[:10],
                "status": status,
                "this_run": v.version == current,
                "scored_on": "training" if v.version in in_sample else "holdout",
                **{
                    k: float("nan") if undefined_metric(metrics, k) else _number(metrics.get(k))
                    for k in TREND_COLUMNS[5:-1]
                },
                "positive_share": _share(metrics.get("n_positive"), metrics.get("n_rows")),
            }
        )
    return pd.DataFrame(rows, columns=list(TREND_COLUMNS))


def far_share(
    now: float, n_now: int, then: float, n_then: int, ratio: float = 1.5, z: float = 4.0
) -> bool:
    """Whether the share ``now`` of ``n_now`` rows is far from ``then`` of ``n_then`` rows: one
    at least ``ratio`` times the other, and more than ``z`` standard errors apart (pooled)."""
    times = max(now, then) / min(now, then) if min(now, then) > 0 else math.inf
    pooled = (now * n_now + then * n_then) / (n_now + n_then)
    spread = math.sqrt(pooled * (1 - pooled) * (1 / n_now + 1 / n_then))
    return times >= ratio and spread > 0 and abs(now - then) / spread > z


def _share(part, whole) -> float:
    """``part / whole``, NaN when either is not a count (a version that recorded none)."""
    counts = all(isinstance(v, int | float) and not isinstance(v, bool) for v in (part, whole))
    return float(part) / float(whole) if counts and whole else float("nan")


def _number(value) -> float:
    if isinstance(value, bool) or value is None:
        return float("nan")
    try:
        return float(value)
    except (TypeError, ValueError):
        return float("nan")
