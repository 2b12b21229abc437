"""Rule reports for people who read rules, not models: tables, Markdown and self-contained HTML.

>>> report = build_report(model, X_holdout, y_holdout, title="Liver disorders",
...                       column_labels={"sgot": "Aspartate aminotransferase (sgot)"})
>>> markdown = render_markdown(report)   # GitHub / Prefect markdown artifact (no HTML inside)
>>> page = render_html(report)           # one file: inline CSS and two inline SVG figures

Every number is computed from ``model.fired_rules(X)`` on the data given (normally a holdout
set), except the training columns, which come from ``model.rules_.stats``. Rendering is
deterministic: the same report gives the same text byte for byte (the caller supplies the
timestamp). The figures are drawn by the small SVG helpers below, without a plotting library.
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

from ..estimator import LibreClassifier
from ..rules import RuleSet
from .diff import ChampionChanges, diff_blocks, plain_rule_text
from .markdown import md_block, md_blocks, md_code, md_fence, md_inline, md_table

__all__ = [
    "RuleReport",
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


def _scores(predicted: np.ndarray, positive: np.ndarray) -> dict:
    """Counts and rates of a 0/1 prediction; a rate with an empty denominator is 0."""
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


def _fired_and_positive(model: LibreClassifier, X, y) -> tuple[np.ndarray, np.ndarray]:
    fired = np.asarray(model.fired_rules(X), dtype=bool)
    return fired, _positive_mask(model, y, fired.shape[0])


def rule_table(
    model: LibreClassifier, X, y, *, column_labels: Mapping[str, str] | None = None
) -> pd.DataFrame:
    """One row per rule, in the model's order.

    Columns: ``rule`` (1..k), ``text`` (plain-language, see :func:`plain_rule_text`), ``atoms``
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
                "text": plain_rule_text(rule, column_labels),
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


def metrics(model: LibreClassifier, X, y) -> dict:
    """Whole-model scores on ``X``/``y``: f1, precision, recall, accuracy (floats) and n_rows,
    n_positive, n_rules (ints), avg_atoms (float, conditions per rule)."""
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
    target = target_label if target_label is not None else ruleset.target
    then = f"THEN {target} = {ruleset.positive_class} ELSE {target} = {ruleset.negative_class}"
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


def build_report(
    model: LibreClassifier,
    X_holdout,
    y_holdout,
    *,
    title: str,
    column_labels: Mapping[str, str] | None = None,
    target_label: str | None = None,
    validation_summary: str | None = None,
    validation_success: bool | None = None,
    data_description: str = "",
    generated_at: str = "",
    notes: Sequence[str] = (),
    changes: ChampionChanges | None = None,
) -> RuleReport:
    """Compute the tables of a fitted model on holdout data and bundle them for rendering.

    ``changes`` adds the "Changes since the champion" section; it uses ``column_labels``
    unless it carries its own.
    """
    if changes is not None and changes.column_labels is None and column_labels:
        changes = dataclasses.replace(changes, column_labels=dict(column_labels))
    return RuleReport(
        title=title,
        ruleset_text=plain_ruleset_text(model.rules_, column_labels, target_label),
        rules=rule_table(model, X_holdout, y_holdout, column_labels=column_labels),
        metrics=metrics(model, X_holdout, y_holdout),
        curve=truncation_curve(model, X_holdout, y_holdout),
        validation_summary=validation_summary,
        validation_success=validation_success,
        parameters=dict(model.get_params(deep=False)),
        data_description=data_description,
        generated_at=generated_at,
        notes=tuple(str(n) for n in notes),
        changes=changes,
    )


# --- shared wording and number formats --------------------------------------------------------

HOW_TO_READ = (
    "The model flags a row (the outcome after THEN) when at least one rule matches it; rules "
    "are joined by OR, and the conditions inside a rule by AND. Unless a column says "
    '"training", numbers come from holdout rows the model did not see while learning.'
)
GLOSSARY = (
    ("Precision", "of the rows flagged, the share that really have the outcome."),
    ("Recall", "of the rows that really have the outcome, the share that is flagged."),
    ("F1 score", "one number balancing precision and recall (1 is perfect, 0 is useless)."),
    ("Newly caught", "correctly flagged rows that no earlier rule had flagged."),
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
    ("precision", "Precision", "rate"),
    ("recall", "Recall", "rate"),
    ("marginal_true_positives", "Newly caught", "int"),
)
CURVE_HEADERS = (
    ("n_rules", "Rules kept", "int"),
    ("covered", "Rows flagged", "int"),
    ("true_positives", "Correctly flagged", "int"),
    ("false_positives", "Wrongly flagged", "int"),
    ("precision", "Precision", "rate"),
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
    "n_rules": ("Rules", "int"),
    "avg_atoms": ("Average conditions per rule", "decimal"),
}
DASH = "–"


def _is_missing(value) -> bool:
    try:
        return value is None or bool(pd.isna(value))
    except (TypeError, ValueError):
        return False


def _fmt(value, kind: str) -> str:
    if kind == "text":
        return str(value)
    if _is_missing(value):
        return DASH
    if kind in ("int", "count"):
        number = float(value)
        return f"{round(number):,}" if number.is_integer() else f"{number:,.1f}"
    if kind == "rate":
        return f"{float(value):.3f}"
    if kind == "decimal":
        return f"{float(value):.2f}"
    return _fmt_value(value)


def _fmt_value(value) -> str:
    """A parameter or unknown metric value."""
    if isinstance(value, bool) or value is None:
        return str(value)
    if isinstance(value, float | np.floating):
        return f"{float(value):.4g}"
    if isinstance(value, np.integer):
        return str(int(value))
    return str(value)


def _metric_rows(values: Mapping[str, object]) -> list[tuple[str, str]]:
    rows = []
    for key, value in values.items():
        label, kind = METRIC_LABELS.get(key, (str(key), "value"))
        rows.append((label, _fmt(value, kind)))
    return rows


def _validation_status(success: bool | None, summary: str | None) -> str:
    if success is None:
        return "Not run" if summary is None else "Result unknown"
    return "Passed" if success else "Failed"


def _meta_line(report: RuleReport) -> str:
    parts = []
    if report.data_description:
        parts.append(f"Data: {report.data_description}")
    if report.generated_at:
        parts.append(f"Generated: {report.generated_at}")
    return " · ".join(parts)


# --- Markdown ----------------------------------------------------------------------------------


def _frame_rows(frame: pd.DataFrame, spec) -> tuple[list[str], list[list[str]], list[bool]]:
    present = [(col, head, kind) for col, head, kind in spec if col in frame.columns]
    headers = [head for _, head, _ in present]
    numeric = [kind != "text" for _, _, kind in present]
    rows = [
        [_fmt(value, kind) for (_, _, kind), value in zip(present, record, strict=True)]
        for record in frame[[col for col, _, _ in present]].itertuples(index=False, name=None)
    ]
    return headers, rows, numeric


CHANGES_HEADING = "Changes since the champion"


def _changes_intro(changes: ChampionChanges) -> list[str]:
    intro = [
        f"This report is about {changes.new_version}. It is compared with "
        f"{changes.old_version}, the model in production (the champion) when it was trained."
    ]
    if changes.decision:
        intro.append(changes.decision)
    return intro


def _changes_blocks(changes: ChampionChanges):
    return diff_blocks(
        changes.diff,
        changes.deltas,
        changes.old_version,
        changes.new_version,
        changes.column_labels,
    )


def _changes_markdown(changes: ChampionChanges) -> list[str]:
    out = [f"## {CHANGES_HEADING}"]
    out += [md_block(line) for line in _changes_intro(changes)]
    return out + md_blocks(_changes_blocks(changes), heading="###", paragraph=md_block)


def render_markdown(report: RuleReport) -> str:
    """GitHub-flavoured Markdown without any HTML (usable as a Prefect markdown artifact)."""
    out = [f"# {md_inline(report.title)}"]
    meta = _meta_line(report)
    if meta:
        out.append(md_block(meta))
    out.append("## How to read this")
    out.append(md_block(HOW_TO_READ))
    out.append("\n".join(f"- **{md_inline(term)}**: {md_inline(text)}" for term, text in GLOSSARY))

    out.append("## Rule set")
    out.append(md_fence(report.ruleset_text))

    out.append("## Rules one by one")
    if len(report.rules):
        out.append(
            "Rules are listed in the model's order; *Newly caught* counts only rows that no "
            "earlier rule flagged."
        )
        out.append(md_table(*_frame_rows(report.rules, RULE_HEADERS)))
    else:
        out.append("The model has no rules, so it never flags a row.")

    out.append("## Holdout performance")
    out.append(md_table(("Measure", "Value"), _metric_rows(report.metrics), (False, True)))

    if report.changes is not None:
        out += _changes_markdown(report.changes)

    out.append("## Keeping only the first rules")
    out.append(
        "How the scores change when only the first *k* rules are used (0 rules flags nothing)."
    )
    out.append(md_table(*_frame_rows(report.curve, CURVE_HEADERS)))

    out.append("## Data validation")
    status = _validation_status(report.validation_success, report.validation_summary)
    out.append(f"**Status: {md_inline(status)}**")
    if report.validation_summary is not None:
        out.append(md_fence(str(report.validation_summary).rstrip("\n")))
    elif report.validation_success is None:
        out.append("The data-validation stage was not run for this report.")

    out.append("## Model parameters")
    if report.parameters:
        lines = [
            "| Parameter | Value |",
            "|---|---|",
            *(
                f"| {md_code(key)} | {md_code(_fmt_value(value))} |"
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


# --- SVG figures -------------------------------------------------------------------------------

COLOR_NEW = "#0b5cad"  # true positives no earlier rule caught
COLOR_OLD = "#8cb8e4"  # true positives an earlier rule had caught already
COLOR_FP = "#d55e00"  # false positives
COLOR_F1 = "#1a1a1a"
COLOR_PRECISION = "#009e73"
COLOR_RECALL = "#cc79a7"
FONT = "font-family=\"system-ui, -apple-system, 'Segoe UI', Roboto, Helvetica, Arial, sans-serif\""


def _h(text) -> str:
    return html.escape(str(text), quote=True)


def _n(value: float) -> str:
    """A coordinate: one decimal, no ``-0.0``."""
    text = f"{value:.1f}"
    return "0.0" if text == "-0.0" else text


def _count_ticks(maximum: float, most: int = 7) -> list[int]:
    """Integer ticks 0, s, 2s, ... covering ``maximum`` with the smallest round step
    (1, 2 or 5 times a power of ten) that needs at most ``most`` intervals."""
    maximum = max(float(maximum), 1.0)
    magnitude = 1
    while True:
        for multiple in (1, 2, 5):
            step = multiple * magnitude
            if math.ceil(maximum / step) <= most:
                return list(range(0, step * math.ceil(maximum / step) + 1, step))
        magnitude *= 10


def _svg_open(width: int, height: int, label: str) -> list[str]:
    return [
        f'<svg viewBox="0 0 {width} {height}" width="{width}" height="{height}" role="img" '
        f'aria-label="{_h(label)}" class="figure" {FONT} font-size="13">',
        f"<title>{_h(label)}</title>",
    ]


def _legend(items, x: float, y: float, horizontal: bool) -> list[str]:
    """``items``: (label, svg snippet drawing the key at (0, 0)-(14, 10))."""
    out = []
    for label, key in items:
        out.append(f'<g transform="translate({_n(x)},{_n(y)})">{key}')
        out.append(f'<text x="20" y="10">{_h(label)}</text></g>')
        if horizontal:
            x += 28 + 7.2 * len(label)
        else:
            y += 22
    return out


def svg_rule_bars(rules: pd.DataFrame) -> str:
    """Horizontal stacked bars per rule: holdout rows it matched, split into positives newly
    caught, positives already caught by an earlier rule, and false positives."""
    width, left, right, top, row = 760, 78, 150, 46, 30
    n = len(rules)
    height = top + max(n, 1) * row + 52
    plot = width - left - right
    label = "Holdout rows matched by each rule: correctly flagged vs wrongly flagged"
    out = _svg_open(width, height, label)
    key = '<rect width="14" height="10" fill="{}"/>'
    out += _legend(
        [
            ("Correctly flagged, newly caught", key.format(COLOR_NEW)),
            ("Correctly flagged, caught before", key.format(COLOR_OLD)),
            ("Wrongly flagged", key.format(COLOR_FP)),
        ],
        left,
        12,
        horizontal=True,
    )
    bottom = top + max(n, 1) * row
    if not n:
        out.append(
            f'<text x="{_n(left + plot / 2)}" y="{_n(top + row / 2 + 4)}" text-anchor="middle" '
            'fill="#555">No rules: nothing to show</text>'
        )
        out.append("</svg>")
        return "\n".join(out)
    tp = rules["true_positives"].to_numpy(dtype=float)
    fp = rules["false_positives"].to_numpy(dtype=float)
    new = rules["marginal_true_positives"].to_numpy(dtype=float)
    ticks = _count_ticks(float(np.max(tp + fp)))
    scale = plot / ticks[-1]
    for t in ticks:
        x = left + t * scale
        out.append(
            f'<line x1="{_n(x)}" y1="{top - 4}" x2="{_n(x)}" y2="{bottom}" stroke="#e3e3e3"/>'
        )
        out.append(
            f'<text x="{_n(x)}" y="{bottom + 18}" text-anchor="middle" fill="#444">{t:,}</text>'
        )
    out.append(
        f'<line x1="{left}" y1="{top - 4}" x2="{left}" y2="{bottom}" stroke="#888"/>'
        f'<line x1="{left}" y1="{bottom}" x2="{left + plot}" y2="{bottom}" stroke="#888"/>'
    )
    texts = rules["text"].tolist() if "text" in rules.columns else [""] * n
    numbers = rules["rule"].tolist() if "rule" in rules.columns else list(range(1, n + 1))
    for i in range(n):
        y = top + i * row + 5
        bar = row - 10
        segments = [(new[i], COLOR_NEW), (tp[i] - new[i], COLOR_OLD), (fp[i], COLOR_FP)]
        out.append(f"<g><title>{_h(f'Rule {numbers[i]}: {texts[i]}')}</title>")
        out.append(
            f'<text x="{left - 10}" y="{_n(y + bar / 2 + 4.5)}" text-anchor="end">'
            f"Rule {_h(numbers[i])}</text>"
        )
        x = float(left)
        for count, color in segments:
            if count > 0:
                w = count * scale
                out.append(
                    f'<rect x="{_n(x)}" y="{y}" width="{_n(w)}" height="{bar}" fill="{color}"/>'
                )
                x += w
        out.append(
            f'<text x="{_n(x + 6)}" y="{_n(y + bar / 2 + 4.5)}" fill="#333">'
            f"{round(tp[i]):,} correct · {round(fp[i]):,} wrong</text></g>"
        )
    out.append(
        f'<text x="{_n(left + plot / 2)}" y="{bottom + 40}" text-anchor="middle" fill="#222">'
        "Holdout rows matched by the rule</text>"
    )
    out.append("</svg>")
    return "\n".join(out)


def svg_curve(curve: pd.DataFrame) -> str:
    """F1, precision and recall on the holdout against the number of rules kept."""
    width, height = 760, 380
    left, right, top, bottom_margin = 64, 170, 20, 60
    plot_w, plot_h = width - left - right, height - top - bottom_margin
    bottom = top + plot_h
    label = "F1 score, precision and recall when only the first rules are kept"
    out = _svg_open(width, height, label)
    ks = curve["n_rules"].to_numpy(dtype=float) if len(curve) else np.zeros(0)
    x_ticks = _count_ticks(float(ks.max()) if ks.size else 1.0)
    x_max = x_ticks[-1]

    def px(k: float) -> float:
        return left + k / x_max * plot_w

    def py(v: float) -> float:
        return bottom - min(max(v, 0.0), 1.0) * plot_h

    for i in range(6):
        v = i / 5
        y = py(v)
        out.append(
            f'<line x1="{left}" y1="{_n(y)}" x2="{left + plot_w}" y2="{_n(y)}" stroke="#e3e3e3"/>'
        )
        out.append(
            f'<text x="{left - 8}" y="{_n(y + 4.5)}" text-anchor="end" fill="#444">{v:.1f}</text>'
        )
    for t in x_ticks:
        x = px(t)
        out.append(
            f'<line x1="{_n(x)}" y1="{bottom}" x2="{_n(x)}" y2="{bottom + 5}" stroke="#888"/>'
        )
        out.append(
            f'<text x="{_n(x)}" y="{bottom + 20}" text-anchor="middle" fill="#444">{t}</text>'
        )
    out.append(
        f'<line x1="{left}" y1="{top}" x2="{left}" y2="{bottom}" stroke="#888"/>'
        f'<line x1="{left}" y1="{bottom}" x2="{left + plot_w}" y2="{bottom}" stroke="#888"/>'
    )
    out.append(
        f'<text x="{_n(left + plot_w / 2)}" y="{height - 14}" text-anchor="middle" fill="#222">'
        "Number of rules kept (in the model's order)</text>"
    )
    out.append(
        f'<text transform="translate(18,{_n(top + plot_h / 2)}) rotate(-90)" '
        'text-anchor="middle" fill="#222">Score on holdout rows</text>'
    )
    series = [
        ("recall", "Recall", COLOR_RECALL, "2", "4 3"),
        ("precision", "Precision", COLOR_PRECISION, "2", "8 4"),
        ("f1", "F1 score", COLOR_F1, "3", ""),
    ]
    legend = []
    for column, name, color, stroke_width, dash in series:
        if column not in curve.columns or not len(curve):
            continue
        values = curve[column].to_numpy(dtype=float)
        points = " ".join(f"{_n(px(k))},{_n(py(v))}" for k, v in zip(ks, values, strict=True))
        dash_attr = f' stroke-dasharray="{dash}"' if dash else ""
        out.append(
            f'<polyline points="{points}" fill="none" stroke="{color}" '
            f'stroke-width="{stroke_width}"{dash_attr}/>'
        )
        for k, v in zip(ks, values, strict=True):
            out.append(
                f'<circle cx="{_n(px(k))}" cy="{_n(py(v))}" r="3.5" fill="{color}">'
                f"<title>{_h(f'{name} with {round(k)} rule(s): {v:.3f}')}</title></circle>"
            )
        legend.append(
            (
                name,
                f'<line x1="0" y1="5" x2="14" y2="5" stroke="{color}" '
                f'stroke-width="{stroke_width}"{dash_attr}/>',
            )
        )
    out += _legend(reversed(legend), left + plot_w + 20, top + 6, horizontal=False)
    out.append("</svg>")
    return "\n".join(out)


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
dl.glossary { display: grid; grid-template-columns: max-content 1fr; gap: 2px 14px;
  margin: 8px 0 0; color: #3a4150; }
dl.glossary dt { font-weight: 600; }
dl.glossary dd { margin: 0; }
pre { background: #f3f5f8; border: 1px solid #e1e4ea; border-radius: 6px; padding: 12px 14px;
  overflow-x: auto; font: 14px/1.6 ui-monospace, SFMono-Regular, Menlo, Consolas, monospace;
  white-space: pre-wrap; }
pre.ruleset .kw { color: #0b5cad; font-weight: 700; }
.table-wrap { overflow-x: auto; margin: 8px 0; }
table { border-collapse: collapse; font-size: 14px; }
table.wide { width: 100%; }
th, td { padding: 5px 9px; border-bottom: 1px solid #e8eaee; vertical-align: top; }
th { background: #f3f5f8; text-align: left; font-weight: 600; font-size: 13px;
  vertical-align: bottom; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
td.num { white-space: nowrap; }
td.code { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; }
td.rule-text { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace;
  font-size: 13px; min-width: 260px; }
tr:hover td { background: #fafbfc; }
figure { margin: 16px 0; }
figcaption { color: #5b6272; font-size: 13px; margin-top: 4px; }
svg.figure { max-width: 100%; height: auto; }
.badge { display: inline-block; padding: 2px 10px; border-radius: 12px; font-weight: 600; }
.badge.ok { background: #e3f4ea; color: #17693a; }
.badge.fail { background: #fde8e4; color: #a3290f; }
.badge.na { background: #eceef2; color: #4b5263; }
.empty { color: #5b6272; font-style: italic; }
h3 { font-size: 16px; margin: 20px 0 6px; }
ul.rules li { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace;
  font-size: 13px; }
"""


def _html_table(headers, rows, numeric, classes=None, wide: bool = False) -> str:
    classes = classes or [""] * len(headers)

    def cls(i):
        names = [c for c in ("num" if numeric[i] else "", classes[i]) if c]
        return f' class="{" ".join(names)}"' if names else ""

    table = '<table class="wide">' if wide else "<table>"
    out = [f'<div class="table-wrap">{table}', "<thead><tr>"]
    out += [f"<th{cls(i)}>{_h(h)}</th>" for i, h in enumerate(headers)]
    out.append("</tr></thead>")
    out.append("<tbody>")
    for row in rows:
        out.append("<tr>" + "".join(f"<td{cls(i)}>{_h(c)}</td>" for i, c in enumerate(row)))
    out.append("</tbody></table></div>")
    return "\n".join(out)


_KEYWORD = re.compile(r"^(IF|OR)\b|\b(AND|THEN|ELSE)\b")


def _ruleset_html(text: str) -> str:
    lines = []
    for line in text.splitlines():
        escaped = _h(line)
        lines.append(_KEYWORD.sub(lambda m: f'<span class="kw">{m.group(0)}</span>', escaped))
    return '<pre class="ruleset">' + "\n".join(lines) + "</pre>"


def _cards(values: Mapping[str, object]) -> str:
    cards = []
    for key in ("f1", "precision", "recall", "accuracy", "n_rules"):
        if key in values:
            name = {"f1": "F1 score (holdout)", "n_rules": "Rules"}.get(
                key, f"{key.capitalize()} (holdout)"
            )
            kind = METRIC_LABELS[key][1]
            cards.append(
                f'<div class="card"><div class="value">{_h(_fmt(values[key], kind))}</div>'
                f'<div class="name">{_h(name)}</div></div>'
            )
    return f'<div class="cards">{"".join(cards)}</div>' if cards else ""


def _changes_html(changes: ChampionChanges) -> list[str]:
    out = [f"<h2>{_h(CHANGES_HEADING)}</h2>"]
    out += [f"<p>{_h(line)}</p>" for line in _changes_intro(changes)]
    for kind, content in _changes_blocks(changes):
        if kind == "p":
            out.append(f"<p>{_h(content)}</p>")
        elif kind == "h":
            out.append(f"<h3>{_h(content)}</h3>")
        elif kind == "list":
            out.append(
                '<ul class="rules">' + "".join(f"<li>{_h(item)}</li>" for item in content) + "</ul>"
            )
        else:
            headers, rows, numeric = content
            classes = ["rule-text" if h in ("Before", "After") else "" for h in headers]
            wide = "Before" in headers
            out.append(_html_table(headers, rows, numeric, classes, wide=wide))
    return out


def render_html(report: RuleReport) -> str:
    """One self-contained HTML page: inline CSS, two inline SVG figures, no scripts or links."""
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
    meta = _meta_line(report)
    if meta:
        out.append(f'<p class="meta">{_h(meta)}</p>')
    out.append(_cards(report.metrics))

    out.append("<h2>How to read this</h2>")
    out.append(f"<p>{_h(HOW_TO_READ)}</p>")
    out.append('<dl class="glossary">')
    out += [f"<dt>{_h(term)}</dt><dd>{_h(text)}</dd>" for term, text in GLOSSARY]
    out.append("</dl>")

    out.append("<h2>Rule set</h2>")
    out.append(_ruleset_html(report.ruleset_text))

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
    out.append("<figure>")
    out.append(svg_rule_bars(report.rules))
    out.append(
        "<figcaption>Figure 1. Holdout rows each rule matches. Blue rows really have the outcome "
        "(dark blue: no earlier rule had caught them); orange rows do not.</figcaption>"
    )
    out.append("</figure>")

    out.append("<h2>Holdout performance</h2>")
    out.append(_html_table(("Measure", "Value"), _metric_rows(report.metrics), (False, True)))

    if report.changes is not None:
        out += _changes_html(report.changes)

    out.append("<h2>Keeping only the first rules</h2>")
    out.append(
        "<p>How the scores change when only the first <em>k</em> rules are used "
        "(0 rules flags nothing).</p>"
    )
    out.append("<figure>")
    out.append(svg_curve(report.curve))
    out.append(
        "<figcaption>Figure 2. F1 score, precision and recall on the holdout rows against the "
        "number of rules kept.</figcaption>"
    )
    out.append("</figure>")
    out.append(_html_table(*_frame_rows(report.curve, CURVE_HEADERS)))

    out.append("<h2>Data validation</h2>")
    status = _validation_status(report.validation_success, report.validation_summary)
    badge = {True: "ok", False: "fail"}.get(report.validation_success, "na")
    out.append(f'<p><span class="badge {badge}">{_h(status)}</span></p>')
    if report.validation_summary is not None:
        out.append(f"<pre>{_h(str(report.validation_summary).rstrip())}</pre>")
    elif report.validation_success is None:
        out.append('<p class="empty">The data-validation stage was not run for this report.</p>')

    out.append("<h2>Model parameters</h2>")
    if report.parameters:
        rows = [(str(k), _fmt_value(v)) for k, v in report.parameters.items()]
        out.append(_html_table(("Parameter", "Value"), rows, (False, False), ["code", "code"]))
    else:
        out.append('<p class="empty">No parameters recorded.</p>')

    if report.notes:
        out.append("<h2>Notes</h2>")
        out.append("<ul>" + "".join(f"<li>{_h(note)}</li>" for note in report.notes) + "</ul>")
    out += ["</main>", "</body>", "</html>"]
    return "\n".join(out) + "\n"
