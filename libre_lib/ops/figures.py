"""The report's figures as inline SVG, drawn without a plotting library.

Each function returns one ``<svg>`` element (a ``<title>`` and ``aria-label`` for screen
readers, ``<title>`` tooltips on the marks); the same input gives the same text byte for byte.
"""

from __future__ import annotations

import html
import math
from collections.abc import Mapping

import numpy as np
import pandas as pd

from ..errors import counted

__all__ = ["svg_class_balance", "svg_curve", "svg_rule_bars", "svg_trend"]

COLOR_NEW = "#0b5cad"  # true positives no earlier rule caught
COLOR_OLD = "#5b92c9"  # true positives an earlier rule had caught already (3:1 on white)
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


def _plot_area(width: int, height: int, bottom_margin: int) -> tuple[int, int, int, int, int]:
    """The plotting area of a figure with the shared margins (axis labels on the left, the
    legend on the right): left, top, width, height and bottom edge, in pixels."""
    left, right, top = 64, 170, 20
    plot_w, plot_h = width - left - right, height - top - bottom_margin
    return left, top, plot_w, plot_h, top + plot_h


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


def svg_rule_bars(rules: pd.DataFrame, evaluated_on: str = "holdout") -> str:
    """Horizontal stacked bars per rule: holdout rows it matched, split into positives newly
    caught, positives already caught by an earlier rule, and false positives."""
    width, left, top, row = 760, 78, 46, 30
    n = len(rules)
    height = top + max(n, 1) * row + 52
    counts = zip(rules.get("true_positives", ()), rules.get("false_positives", ()), strict=True)
    longest = max((len(f"{round(t):,} correct · {round(f):,} wrong") for t, f in counts), default=0)
    right = max(150, 7 * longest + 14)  # the longest bar's label fits beside it (1,234 correct)
    plot = width - left - right
    label = (
        f"{evaluated_on.capitalize()} rows matched by each rule: correctly flagged vs wrongly "
        "flagged"
    )
    out = _svg_open(width, height, label)
    key = '<rect width="14" height="10" fill="{}"/>'
    caught_before = n and bool(
        np.any(rules["true_positives"].to_numpy(float) > rules["marginal_true_positives"])
    )
    out += _legend(
        [
            ("Correctly flagged, newly caught", key.format(COLOR_NEW)),
            *(
                [("Correctly flagged, caught before", key.format(COLOR_OLD))]
                if caught_before
                else []
            ),
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
        f"{evaluated_on.capitalize()} rows matched by the rule</text>"
    )
    out.append("</svg>")
    return "\n".join(out)


def svg_curve(curve: pd.DataFrame, evaluated_on: str = "holdout") -> str:
    """F1, precision and recall on the holdout against the number of rules kept."""
    label = "F1 score, precision and recall when only the first rules are kept"
    width, height = 760, 380
    left, top, plot_w, plot_h, bottom = _plot_area(width, height, 60)
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
        f'text-anchor="middle" fill="#222">Score on {evaluated_on} rows</text>'
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
        if column == "precision" and "covered" in curve.columns:  # nothing flagged: n/a
            keep = curve["covered"].to_numpy() > 0
            ks_c, values = ks[keep], values[keep]
        else:
            ks_c = ks
        points = " ".join(f"{_n(px(k))},{_n(py(v))}" for k, v in zip(ks_c, values, strict=True))
        dash_attr = f' stroke-dasharray="{dash}"' if dash else ""
        out.append(
            f'<polyline points="{points}" fill="none" stroke="{color}" '
            f'stroke-width="{stroke_width}"{dash_attr}/>'
        )
        for k, v in zip(ks_c, values, strict=True):
            title = f"{name} with {counted(round(k), 'rule')}: {v:.3f}"
            out.append(
                f'<circle cx="{_n(px(k))}" cy="{_n(py(v))}" r="3.5" fill="{color}">'
                f"<title>{_h(title)}</title></circle>"
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


COLOR_POSITIVE = "#0b5cad"
COLOR_NEGATIVE = "#8090a2"  # 3:1 on white, as graphics need
COLOR_ACCURACY = "#b57a00"  # 3:1 on white


def svg_class_balance(balance: Mapping[str, Mapping[str, int]], names: tuple[str, str]) -> str:
    """One horizontal bar per row set (e.g. training, holdout): the share of each class.

    ``balance`` maps a row set's name to ``{"positive": n, "negative": n}``; ``names`` are the
    display names of the positive and negative class.
    """
    width, left, right, top, row = 760, 92, 40, 46, 34
    n = len(balance)
    height = top + max(n, 1) * row + 40
    plot = width - left - right
    label = f"Class balance: share of rows that are {names[0]} vs {names[1]}"
    out = _svg_open(width, height, label)
    key = '<rect width="14" height="10" fill="{}"/>'
    out += _legend(
        [(names[0], key.format(COLOR_POSITIVE)), (names[1], key.format(COLOR_NEGATIVE))],
        left,
        12,
        horizontal=True,
    )
    bottom = top + max(n, 1) * row
    for i, (name, counts) in enumerate(balance.items()):
        y = top + i * row + 5
        bar = row - 10
        positive, negative = int(counts.get("positive", 0)), int(counts.get("negative", 0))
        total = positive + negative
        share = positive / total if total else 0.0
        out.append(
            f"<g><title>{_h(f'{name}: {positive:,} of {total:,} rows ({share:.1%})')}</title>"
        )
        out.append(
            f'<text x="{left - 10}" y="{_n(y + bar / 2 + 4.5)}" text-anchor="end">{_h(name)}</text>'
        )
        w = share * plot
        out.append(
            f'<rect x="{left}" y="{y}" width="{_n(w)}" height="{bar}" fill="{COLOR_POSITIVE}"/>'
        )
        out.append(
            f'<rect x="{_n(left + w)}" y="{y}" width="{_n(plot - w)}" height="{bar}" '
            f'fill="{COLOR_NEGATIVE}"/>'
        )
        text = f"{share:.1%} ({positive:,} of {total:,})"
        inside = w > 150
        x = left + 8 if inside else left + w + 8
        fill = "#fff" if inside else "#222"
        out.append(
            f'<text x="{_n(x)}" y="{_n(y + bar / 2 + 4.5)}" fill="{fill}">{_h(text)}</text></g>'
        )
    for t in (0, 25, 50, 75, 100):
        x = left + t / 100 * plot
        out.append(
            f'<text x="{_n(x)}" y="{bottom + 18}" text-anchor="middle" fill="#444">{t}%</text>'
        )
    out.append("</svg>")
    return "\n".join(out)


def svg_trend(trend: pd.DataFrame) -> str:
    """F1 score and accuracy on the holdout of each registered model version, oldest first;
    champions are drawn as filled diamonds, the version of this run is named in bold."""
    label = "Holdout F1 score and accuracy of each registered model version"
    width, height = 760, 340
    left, top, plot_w, plot_h, bottom = _plot_area(width, height, 74)
    out = _svg_open(width, height, label)
    n = len(trend)
    step = plot_w / max(n - 1, 1)

    def px(i: int) -> float:
        return left + (i * step if n > 1 else plot_w / 2)

    def py(v: float) -> float:
        return bottom - min(max(v, 0.0), 1.0) * plot_h

    for i in range(6):
        v = i / 5
        out.append(
            f'<line x1="{left}" y1="{_n(py(v))}" x2="{left + plot_w}" y2="{_n(py(v))}" '
            'stroke="#e3e3e3"/>'
        )
        out.append(
            f'<text x="{left - 8}" y="{_n(py(v) + 4.5)}" text-anchor="end" fill="#444">'
            f"{v:.1f}</text>"
        )
    out.append(
        f'<line x1="{left}" y1="{top}" x2="{left}" y2="{bottom}" stroke="#888"/>'
        f'<line x1="{left}" y1="{bottom}" x2="{left + plot_w}" y2="{bottom}" stroke="#888"/>'
    )
    versions = trend["version"].tolist() if n else []
    statuses = trend["status"].tolist() if n else []
    current = trend["this_run"].tolist() if n else []
    every = max(1, math.ceil(n / 10))
    for i, version in enumerate(versions):
        if i % every and i != n - 1 and not current[i]:
            continue
        short = str(version).split("-")[0]
        weight = ' font-weight="700"' if current[i] else ""
        out.append(
            f'<text x="{_n(px(i))}" y="{bottom + 18}" text-anchor="middle" fill="#444"{weight}>'
            f"{_h(short)}</text>"
        )
    out.append(
        f'<text x="{_n(left + plot_w / 2)}" y="{height - 30}" text-anchor="middle" fill="#222">'
        "Model version (oldest first; bold: this run)</text>"
    )
    series = [("accuracy", "Accuracy", COLOR_ACCURACY, "8 4"), ("f1", "F1 score", COLOR_F1, "")]
    legend = []
    for column, name, color, dash in series:
        if column not in trend.columns or not n:
            continue
        values = trend[column].to_numpy(dtype=float)
        known = [(i, v) for i, v in enumerate(values) if not math.isnan(v)]
        dash_attr = f' stroke-dasharray="{dash}"' if dash else ""
        if len(known) > 1:
            points = " ".join(f"{_n(px(i))},{_n(py(v))}" for i, v in known)
            out.append(
                f'<polyline points="{points}" fill="none" stroke="{color}" stroke-width="2"'
                f"{dash_attr}/>"
            )
        for i, v in known:
            tip = _h(f"{versions[i]} ({statuses[i]}): {name} {v:.3f}")
            if str(statuses[i]).startswith("champion"):
                x, y = px(i), py(v)
                out.append(
                    f'<path d="M{_n(x)},{_n(y - 6)} L{_n(x + 6)},{_n(y)} L{_n(x)},{_n(y + 6)} '
                    f'L{_n(x - 6)},{_n(y)} Z" fill="{color}"><title>{tip}</title></path>'
                )
            else:
                out.append(
                    f'<circle cx="{_n(px(i))}" cy="{_n(py(v))}" r="4" fill="#fff" '
                    f'stroke="{color}" stroke-width="2"><title>{tip}</title></circle>'
                )
        legend.append(
            (
                name,
                f'<line x1="0" y1="5" x2="14" y2="5" stroke="{color}" stroke-width="2"'
                f"{dash_attr}/>",
            )
        )
    legend.append(("Champion", '<path d="M7,0 L12,5 L7,10 L2,5 Z" fill="#555"/>'))
    out += _legend(legend, left + plot_w + 20, top + 6, horizontal=False)
    out.append("</svg>")
    return "\n".join(out)


def _staircase(rules: np.ndarray, scores: np.ndarray) -> list[tuple[float, float]]:
    """The best score with at most k rules, as the corners of a step line: flat between two
    rule counts of the grid, up at the count where a better point appears (a straight segment
    between them would claim scores no point reaches). Points without a score are left out."""
    keep = np.isfinite(rules) & np.isfinite(scores)
    rules, scores = rules[keep], scores[keep]
    if not len(rules):
        return []
    order = np.argsort(rules, kind="stable")
    counts, first = np.unique(rules[order], return_index=True)
    best = np.maximum.accumulate(scores[order])
    ends = np.append(first[1:], len(order)) - 1  # each count's last point in that order
    corners = []
    for count, value in zip(counts, best[ends], strict=True):
        if corners and value > corners[-1][1]:
            corners.append((float(count), corners[-1][1]))
        corners.append((float(count), float(value)))
    return corners


def svg_tuning(points: pd.DataFrame, scoring: str = "f1") -> str:
    """Inner cross-validation of the search: every grid point's mean validation score (of
    ``scoring``) against its mean number of rules (on a log(1 + n) axis, so that 0 has a
    place), the best score reachable with at most that many rules as a line, and the chosen
    point as a filled diamond."""
    label = "Inner cross-validation score against the number of rules of every grid point"
    width, height = 760, 340
    left, top, plot_w, plot_h, bottom = _plot_area(width, height, 60)
    out = _svg_open(width, height, label)
    rules = points["mean_rules"].to_numpy(dtype=float)
    scores = points["mean_score"].to_numpy(dtype=float)
    most = max(float(np.nanmax(rules)) if len(rules) else 1.0, 1.0)
    low = max(0.0, math.floor(float(np.nanmin(scores)) * 10) / 10) if len(scores) else 0.0
    high = min(1.0, math.ceil(float(np.nanmax(scores)) * 10) / 10) if len(scores) else 1.0
    if high <= low:
        low, high = max(0.0, high - 0.1), max(high, 0.1)

    def px(r: float) -> float:
        return left + math.log1p(max(r, 0.0)) / math.log1p(most) * plot_w

    def py(v: float) -> float:
        return bottom - (min(max(v, low), high) - low) / (high - low) * plot_h

    step = next(t for t in (0.05, 0.1, 0.2, 0.25) if (high - low) / t <= 7)
    for i in range(round((high - low) / step) + 1):
        v = low + i * step
        out.append(
            f'<line x1="{left}" y1="{_n(py(v))}" x2="{left + plot_w}" y2="{_n(py(v))}" '
            'stroke="#e3e3e3"/>'
        )
        out.append(
            f'<text x="{left - 8}" y="{_n(py(v) + 4.5)}" text-anchor="end" fill="#444">'
            f"{v:.2f}</text>"
        )
    for tick in (t for t in (0, 1, 2, 3, 5, 8, 13, 21, 34, 55, 89, 144, 233) if t <= most):
        out.append(
            f'<text x="{_n(px(tick))}" y="{bottom + 18}" text-anchor="middle" fill="#444">'
            f"{tick}</text>"
        )
    out.append(
        f'<line x1="{left}" y1="{top}" x2="{left}" y2="{bottom}" stroke="#888"/>'
        f'<line x1="{left}" y1="{bottom}" x2="{left + plot_w}" y2="{bottom}" stroke="#888"/>'
        f'<text x="{_n(left + plot_w / 2)}" y="{height - 16}" text-anchor="middle" '
        'fill="#222">Mean number of rules (axis spaced as log(1 + rules))</text>'
        f'<text transform="translate(16,{_n(top + plot_h / 2)}) rotate(-90)" '
        f'text-anchor="middle" fill="#222">Mean validation score ({_h(scoring)})</text>'
    )
    for r, v in zip(rules, scores, strict=True):
        out.append(f'<circle cx="{_n(px(r))}" cy="{_n(py(v))}" r="2.5" fill="#6f97bf"/>')
    steps = _staircase(rules, scores)
    if len(steps) > 1:
        line = " ".join(f"{_n(px(r))},{_n(py(v))}" for r, v in steps)
        out.append(
            f'<polyline points="{line}" fill="none" stroke="{COLOR_F1}" stroke-width="1.5"/>'
        )
    chosen = np.flatnonzero(points["chosen"].to_numpy(dtype=bool))
    for i in chosen:
        x, y = px(rules[i]), py(scores[i])
        tip = _h(f"chosen: {scores[i]:.3f} with {rules[i]:.1f} rules")
        out.append(
            f'<path d="M{_n(x)},{_n(y - 8)} L{_n(x + 8)},{_n(y)} L{_n(x)},{_n(y + 8)} '
            f'L{_n(x - 8)},{_n(y)} Z" fill="{COLOR_FP}"><title>{tip}</title></path>'
        )
    legend = [
        ("Grid point", '<circle cx="7" cy="5" r="3" fill="#6f97bf"/>'),
        ("Best with ≤ k rules", f'<line x1="0" y1="5" x2="14" y2="5" stroke="{COLOR_F1}"/>'),
        ("Chosen", f'<path d="M7,0 L12,5 L7,10 L2,5 Z" fill="{COLOR_FP}"/>'),
    ]
    out += _legend(legend, left + plot_w + 20, top + 6, horizontal=False)
    out.append("</svg>")
    return "\n".join(out)
