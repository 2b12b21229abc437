"""Rule reports: the numbers against a direct computation, Markdown and self-contained HTML."""

import ast
import copy
import dataclasses
import math
import re
import sys
import xml.etree.ElementTree as ET
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import accuracy_score, f1_score, precision_score, recall_score
from sklearn.model_selection import train_test_split

from libre_lib import LibreClassifier
from libre_lib.discretization import CATEGORICAL, NUMERIC
from libre_lib.ops.report import (
    RULE_TABLE_COLUMNS,
    RuleReport,
    artifact_tables,
    build_report,
    metrics,
    plain_rule_text,
    plain_ruleset_text,
    render_html,
    render_markdown,
    rule_table,
    truncation_curve,
)
from libre_lib.rules import Condition, Interval, Rule, RuleSet, RuleStats

NASTY = 'a<b & "c"'


@pytest.fixture(scope="module")
def liver():
    from libre_lib.datasets import load_dataset

    X, y, info = load_dataset("liver")
    X_train, X_test, y_train, y_test = train_test_split(
        X, y, test_size=0.3, random_state=0, stratify=y
    )
    model = LibreClassifier(random_state=0, positive_class=info.positive_class)
    model.fit(X_train, y_train)
    assert len(model.rules_) >= 2  # the tests below need a real rule set
    return model, X_test.reset_index(drop=True), y_test.reset_index(drop=True), info


@pytest.fixture(scope="module")
def labels(liver):
    model = liver[0]
    return {model.rules_[0].features[0]: NASTY, "not_a_column": "ignored"}


@pytest.fixture(scope="module")
def report(liver, labels):
    model, X, y, _ = liver
    return build_report(
        model,
        X,
        y,
        title="Liver <disorders> & drinks",
        column_labels=labels,
        target_label="drinks per day",
        validation_summary="3 of 3 checks passed\n- no missing target\n- <script>x</script>",
        validation_success=True,
        data_description="liver.csv, 241 training rows, 104 holdout rows",
        generated_at="2025-01-01T00:00:00Z",
        notes=("Split 70/30, stratified.", "1. starts like a list"),
    )


def empty_model(model: LibreClassifier) -> LibreClassifier:
    empty = copy.deepcopy(model)
    empty.rules_ = RuleSet(
        (),
        target=model.rules_.target,
        positive_class=model.rules_.positive_class,
        negative_class=model.rules_.negative_class,
    )
    return empty


def truncated(model: LibreClassifier, k: int) -> LibreClassifier:
    short = copy.deepcopy(model)
    short.rules_ = RuleSet(
        model.rules_.rules[:k],
        target=model.rules_.target,
        positive_class=model.rules_.positive_class,
        negative_class=model.rules_.negative_class,
        stats=model.rules_.stats[:k],
    )
    return short


# --- numbers -----------------------------------------------------------------------------------


def test_rule_table_matches_fired_rules(liver):
    model, X, y, info = liver
    table = rule_table(model, X, y)
    fired = model.fired_rules(X)
    positive = (y == info.positive_class).to_numpy()
    k = len(model.rules_)

    assert list(table.columns) == list(RULE_TABLE_COLUMNS)
    assert table["rule"].tolist() == list(range(1, k + 1))
    assert table["text"].tolist() == [str(r) for r in model.rules_]
    assert table["atoms"].tolist() == [len(r) for r in model.rules_]
    np.testing.assert_array_equal(table["covered"], fired.sum(axis=0))
    np.testing.assert_array_equal(table["true_positives"], (fired & positive[:, None]).sum(axis=0))
    np.testing.assert_array_equal(
        table["false_positives"], (fired & ~positive[:, None]).sum(axis=0)
    )
    np.testing.assert_allclose(
        table["precision"], table["true_positives"] / table["covered"].clip(lower=1)
    )
    np.testing.assert_allclose(table["recall"], table["true_positives"] / positive.sum())
    stats = model.rules_.stats
    np.testing.assert_allclose(table["train_support"], [s.positives + s.negatives for s in stats])
    np.testing.assert_allclose(table["train_precision"], [s.precision for s in stats])

    for j in range(k):
        earlier = fired[:, :j].any(axis=1)
        assert table["marginal_true_positives"][j] == np.sum(fired[:, j] & positive & ~earlier)
    model_tp = np.sum((model.predict(X) == info.positive_class) & positive)
    assert table["marginal_true_positives"].sum() == model_tp
    assert table["marginal_true_positives"][0] == table["true_positives"][0]


def test_metrics_agree_with_sklearn(liver):
    model, X, y, info = liver
    pred = model.predict(X)
    pos = info.positive_class
    got = metrics(model, X, y)
    assert set(got) == {
        "f1",
        "precision",
        "recall",
        "accuracy",
        "n_rows",
        "n_positive",
        "n_rules",
        "avg_atoms",
        "n_flagged",
    }
    assert got["n_flagged"] == int((pred == pos).sum())
    assert got["f1"] == pytest.approx(f1_score(y, pred, pos_label=pos))
    assert got["precision"] == pytest.approx(precision_score(y, pred, pos_label=pos))
    assert got["recall"] == pytest.approx(recall_score(y, pred, pos_label=pos))
    assert got["accuracy"] == pytest.approx(accuracy_score(y, pred))
    assert got["n_rows"] == len(X)
    assert got["n_positive"] == int((y == pos).sum())
    assert got["n_rules"] == len(model.rules_)
    assert got["avg_atoms"] == pytest.approx(model.rules_.n_atoms)
    assert all(isinstance(got[k], int) for k in ("n_rows", "n_positive", "n_rules"))


def test_truncation_curve(liver):
    model, X, y, _ = liver
    curve = truncation_curve(model, X, y)
    k = len(model.rules_)
    assert curve["n_rules"].tolist() == list(range(k + 1))

    first = curve.iloc[0]
    assert first["recall"] == 0 and first["covered"] == 0 and first["f1"] == 0

    last = curve.iloc[-1]
    whole = metrics(model, X, y)
    for name in ("f1", "precision", "recall", "accuracy"):
        assert last[name] == pytest.approx(whole[name])

    for j in range(k + 1):  # each row is the model cut to its first j rules
        cut = metrics(truncated(model, j), X, y)
        for name in ("f1", "precision", "recall", "accuracy"):
            assert curve[name][j] == pytest.approx(cut[name])
    assert (np.diff(curve["recall"]) >= 0).all()
    assert (np.diff(curve["covered"]) >= 0).all()


def test_y_as_array_and_holdout_with_one_class(liver):
    model, X, y, info = liver
    assert rule_table(model, X, y.to_numpy()).equals(rule_table(model, X, y))
    only_negative = (y != info.positive_class).to_numpy()
    Xn, yn = X[only_negative], y[only_negative]
    got = metrics(model, Xn, yn)
    assert got["n_positive"] == 0 and got["recall"] == 0 and got["f1"] == 0
    assert (rule_table(model, Xn, yn)["recall"] == 0).all()
    with pytest.raises(ValueError, match="labels"):
        metrics(model, X, y[:-1])


# --- plain-language text -----------------------------------------------------------------------


def test_plain_rule_text():
    rule = Rule(
        (
            Condition("glu", NUMERIC, intervals=(Interval(158.0, math.inf),)),
            Condition("sex", CATEGORICAL, categories=("f", "m"), missing=True),
            Condition("bmi", NUMERIC, missing=True),
        )
    )
    assert plain_rule_text(rule, None) == str(rule)
    assert plain_rule_text(rule, {}) == str(rule)
    assert plain_rule_text(rule, {"glu": "Glucose (mg/dL)", "bmi": NASTY}) == (
        'Glucose (mg/dL) ∈ [158, max] AND sex ∈ {f, m} ∪ missing AND a<b & "c" is missing'
    )
    # Two columns with the same label still render (no Rule is rebuilt).
    assert plain_rule_text(rule, {"glu": "x", "sex": "x"}).startswith("x ∈ [158, max] AND x ∈")
    assert plain_rule_text(Rule(()), {"a": "b"}) == "TRUE"


def test_plain_ruleset_text(liver, labels):
    model = liver[0]
    assert plain_ruleset_text(model.rules_) == str(model.rules_)
    text = plain_ruleset_text(model.rules_, labels, "drinks")
    lines = text.splitlines()
    assert len(lines) == len(model.rules_) + 1
    assert lines[0].startswith("IF ") and all(line.startswith("OR ") for line in lines[1:-1])
    assert NASTY in text
    pos, neg = model.rules_.positive_class, model.rules_.negative_class
    assert lines[-1] == f'THEN drinks = "{pos}" ELSE drinks = "{neg}"'  # ">2", "<=2" quoted
    assert plain_ruleset_text(empty_model(model).rules_) == (
        f'IF FALSE THEN target = "{pos}" ELSE target = "{neg}"'
    )


# --- Markdown ----------------------------------------------------------------------------------


def test_markdown_content(report, liver):
    md = render_markdown(report)
    model = liver[0]
    assert md.startswith("# Liver \\<disorders\\> \\& drinks\n")
    assert "## How to read this" in md
    assert "```text\n" + report.ruleset_text + "\n```" in md
    assert report.ruleset_text.splitlines()[-1].startswith("THEN drinks per day = ")
    for heading in (
        "## Rules one by one",
        "## Holdout performance",
        "## Keeping only the first rules",
        "## Data validation",
        "## Model parameters",
        "## Notes",
    ):
        assert heading in md
    assert "| \\# | Rule | Conditions |" in md
    assert "| Rules kept | Rows flagged |" in md
    assert "**Status: Passed**" in md
    assert "- <script>x</script>" in md  # verbatim, inside the fenced summary
    assert "| `random_state` | `0` |" in md
    assert "- 1\\. starts like a list" in md
    # Counts as integers, rates with three decimals.
    row = report.rules.iloc[0]
    assert f"| {row['covered']} | {row['true_positives']} | {row['false_positives']} | " in md
    assert f"| {row['precision']:.3f} | {row['recall']:.3f} |" in md
    assert f"| F1 score | {report.metrics['f1']:.3f} |" in md
    assert len(report.rules) == len(model.rules_)


def test_markdown_is_plain_gfm(report):
    markdown_it = pytest.importorskip("markdown_it")
    md = render_markdown(report)
    parser = markdown_it.MarkdownIt("commonmark").enable("table")
    tokens = parser.parse(md)
    inline = [c for t in tokens if t.children for c in t.children]
    assert not [t for t in tokens if t.type == "html_block"]
    assert not [t for t in inline if t.type in ("html_inline", "link_open", "image")]
    # rules, metrics, confusion, baselines, balance, curve, discretization, parameters
    assert sum(t.type == "table_open" for t in tokens) == 8
    rendered = parser.render(md)
    n_rule_rows = len(report.rules) + 1
    assert rendered.count("a&lt;b &amp; &quot;c&quot;") >= 3  # fenced block, rules, bins
    assert "<script>" not in rendered
    first_table = rendered.split("<table>")[1]
    assert first_table.count("<tr>") == n_rule_rows


# --- HTML --------------------------------------------------------------------------------------


class _Collector(HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags: list[str] = []
        self.attrs: list[tuple[str, str | None]] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        self.attrs += attrs


def test_html_self_contained_and_escaped(report):
    page = render_html(report)
    assert page.startswith("<!DOCTYPE html>")
    assert page.count("<svg") == 3  # rule bars, class balance, curve
    assert "http://" not in page and "https://" not in page
    assert "a&lt;b &amp; &quot;c&quot;" in page
    assert NASTY not in page
    assert "<script" not in page.replace("&lt;script&gt;", "")
    assert "<title>Liver &lt;disorders&gt; &amp; drinks</title>" in page

    collector = _Collector()
    collector.feed(page)
    assert "script" not in collector.tags and "link" not in collector.tags
    assert "img" not in collector.tags and "iframe" not in collector.tags
    assert not [v for k, v in collector.attrs if k in ("src", "href")]
    # rules, metrics, confusion, baselines, balance, curve, discretization, parameters
    assert collector.tags.count("table") == 8
    assert "polyline" in collector.tags and "rect" in collector.tags

    for svg in re.findall(r"<svg.*?</svg>", page, flags=re.S):
        root = ET.fromstring(svg)  # well-formed XML
        assert root.find("title") is not None
        assert any(el.tag == "text" for el in root.iter())


def test_html_figures(report):
    page = render_html(report)
    bars, _, curve = re.findall(r"<svg.*?</svg>", page, flags=re.S)
    for row in report.rules.itertuples():
        assert f">Rule {row.rule}</text>" in bars
        assert f"{row.true_positives} correct · {row.false_positives} wrong" in bars
    assert "Holdout rows matched by the rule" in bars
    assert curve.count("<polyline") == 3
    assert "Number of rules kept" in curve and "Score on holdout rows" in curve
    for tick in ("0.0", "0.2", "0.4", "0.6", "0.8", "1.0"):
        assert f">{tick}</text>" in curve
    n_points = len(report.curve)
    # no precision point where nothing is flagged (0 rules): it is n/a, not 0
    assert curve.count("<circle") == 3 * n_points - int((report.curve["covered"] == 0).sum())
    assert "F1 score" in curve and "Precision" in curve and "Recall" in curve


def test_rendering_is_deterministic(liver, labels, report):
    model, X, y, _ = liver
    again = build_report(
        model,
        X,
        y,
        title=report.title,
        column_labels=labels,
        target_label="drinks per day",
        validation_summary=report.validation_summary,
        validation_success=True,
        data_description=report.data_description,
        generated_at=report.generated_at,
        notes=report.notes,
    )
    assert render_markdown(report) == render_markdown(again) == render_markdown(report)
    assert render_html(report) == render_html(again) == render_html(report)


# --- edge cases --------------------------------------------------------------------------------


def test_model_without_rules(liver):
    model, X, y, _ = liver
    empty = empty_model(model)
    table = rule_table(empty, X, y)
    assert table.empty and list(table.columns) == list(RULE_TABLE_COLUMNS)
    got = metrics(empty, X, y)
    assert got["n_rules"] == 0 and got["recall"] == 0 and got["f1"] == 0 and got["avg_atoms"] == 0
    assert got["accuracy"] == pytest.approx(float((empty.predict(X) == y).mean()))
    curve = truncation_curve(empty, X, y)
    assert curve["n_rules"].tolist() == [0]

    report = build_report(empty, X, y, title="No rules")
    assert report.ruleset_text.startswith("IF FALSE THEN ")
    md = render_markdown(report)
    assert "The model has no rules" in md and "**Status: Not run**" in md
    assert "| Average conditions per rule | n/a |" in md  # not 0.00: no rule to average over
    # how a condition's ∪ binds against AND (it could read "[104, max] ∪ (missing AND ...)")
    assert "is (x ≥ a or x missing) and y = c" in md
    # a caution under the header says why and what to change (the guard is on by default)
    assert report.cautions[0].startswith("The model has no rules, so it never flags a row")
    assert "set abstain: false" in report.cautions[0]
    assert f"> **Caution:** {report.cautions[0][:40]}" in md
    assert "Caution:</strong> The model has no rules" in render_html(report)
    unguarded = build_report(empty.set_params(abstain=False), X, y, title="No rules")
    assert "No rule passed the set cover" in unguarded.cautions[0]
    # the pipeline knows what the cover chose: the guard's work, or the cover's
    guarded = build_report(empty.set_params(abstain=True), X, y, title="No rules", covered=1)
    assert "The set cover chose 1 rule, and the majority guard" in guarded.cautions[0]
    assert "removed it: with it, the model was less accurate" in guarded.cautions[0]
    bare = build_report(empty, X, y, title="No rules", covered=0)
    assert "No rule passed the set cover" in bare.cautions[0]
    assert not any("no rules" in c for c in build_report(model, X, y, title="t").cautions)
    page = render_html(report)
    assert page.count("<svg") == 3 and "No rules: nothing to show" in page
    for svg in re.findall(r"<svg.*?</svg>", page, flags=re.S):
        ET.fromstring(svg)


def test_report_without_optional_parts_and_missing_stats():
    rule = Rule((Condition("x", NUMERIC, intervals=(Interval(1.0, math.inf),)),))
    rules = pd.DataFrame(
        {
            "rule": [1],
            "text": [str(rule)],
            "atoms": [1],
            "train_support": [float("nan")],
            "train_precision": [float("nan")],
            "covered": [3],
            "true_positives": [2],
            "false_positives": [1],
            "precision": [2 / 3],
            "recall": [1.0],
            "marginal_true_positives": [2],
        }
    )
    curve = pd.DataFrame(
        {
            "n_rules": [0, 1],
            "covered": [0, 3],
            "true_positives": [0, 2],
            "false_positives": [0, 1],
            "precision": [0.0, 2 / 3],
            "recall": [0.0, 1.0],
            "f1": [0.0, 0.8],
            "accuracy": [0.5, 0.75],
        }
    )
    report = RuleReport(
        title="t",
        ruleset_text="IF x ∈ [1, max]\nTHEN y = 1 ELSE y = 0",
        rules=rules,
        metrics={"f1": 0.8, "custom | metric": 7},
        curve=curve,
        validation_success=False,
    )
    md = render_markdown(report)
    assert "| – | – |" in md  # unknown training stats
    assert "| custom \\| metric | 7 |" in md
    assert "**Status: Failed**" in md and "No parameters recorded." in md
    assert "## Notes" not in md
    page = render_html(report)
    assert 'class="badge fail"' in page and page.count("<svg") == 2


def test_stats_none_gives_nan(liver):
    model, X, y, _ = liver
    blank = copy.deepcopy(model)
    blank.rules_ = RuleSet(
        model.rules_.rules,
        target=model.rules_.target,
        positive_class=model.rules_.positive_class,
        negative_class=model.rules_.negative_class,
        stats=tuple(None for _ in model.rules_),
    )
    table = rule_table(blank, X, y)
    assert table["train_support"].isna().all() and table["train_precision"].isna().all()
    assert table["covered"].tolist() == rule_table(model, X, y)["covered"].tolist()
    assert isinstance(model.rules_.stats[0], RuleStats)


def test_report_module_imports_only_stdlib_numpy_pandas_and_libre_lib():
    import libre_lib.ops.report as module

    tree = ast.parse(Path(module.__file__).read_text(encoding="utf-8"))
    roots = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            roots |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0:
            roots.add(node.module.split(".")[0])
    allowed = set(sys.stdlib_module_names) | {"numpy", "pandas", "libre_lib"}
    assert roots <= allowed, roots - allowed


# --- changes since the champion ----------------------------------------------------------------


def _changes(model, decision=None, labels=None):
    from libre_lib.ops.diff import ChampionChanges, diff_rules, metric_deltas

    moved = Rule((Condition("x", NUMERIC, intervals=(Interval(3.0, math.inf),)),))
    old = RuleSet(
        (Rule((Condition("x", NUMERIC, intervals=(Interval(1.0, math.inf),)),)), model.rules_[0]),
        target=model.rules_.target,
        positive_class=model.rules_.positive_class,
        negative_class=model.rules_.negative_class,
    )
    new = RuleSet(
        (moved, *model.rules_.rules),
        target=model.rules_.target,
        positive_class=model.rules_.positive_class,
        negative_class=model.rules_.negative_class,
    )
    return ChampionChanges(
        "v0003-11111111",
        "v0004-22222222",
        diff_rules(old, new),
        metric_deltas({"f1": 0.58, "n_rules": 2}, {"f1": 0.612, "n_rules": len(new)}),
        decision,
        labels,
    )


def test_report_without_changes_is_unchanged(report):
    assert report.changes is None
    assert "Changes since the champion" not in render_markdown(report)
    assert "Changes since the champion" not in render_html(report)


def test_changes_section_in_markdown_and_html(liver, labels, report):
    model, X, y, _ = liver
    decision = "v0004-22222222 became the champion: holdout f1 0.612 is not below 0.580."
    with_changes = build_report(
        model,
        X,
        y,
        title=report.title,
        column_labels=labels,
        target_label="drinks per day",
        generated_at=report.generated_at,
        changes=_changes(model, decision),
    )
    assert with_changes.changes.column_labels == labels  # the report's labels are passed on
    md = render_markdown(with_changes)
    section = md.split("## Changes since the champion\n", 1)[1].split("\n## ", 1)[0]
    assert md.index("## Holdout performance") < md.index("## Changes since the champion")
    assert md.index("## Changes since the champion") < md.index("## Keeping only the first")
    assert "compared with v0003-11111111, the model in production (the champion)" in section
    assert decision in section
    assert "### Rules changed: before → after" in section
    assert "x ≥ 1 → x ≥ 3" in section
    assert "### Rules added" in section and "### Rules removed" not in section
    assert "1 rule stayed the same." in section
    assert "| F1 score | 0.580 | 0.612 | ▲ +0.032 |" in section
    added = [line for line in section.splitlines() if line.startswith("- ")]
    assert len(added) == len(model.rules_) - 1

    markdown_it = pytest.importorskip("markdown_it")
    parser = markdown_it.MarkdownIt("commonmark").enable("table")
    tokens = parser.parse(md)
    assert not [t for t in tokens if t.type == "html_block"]
    assert sum(t.type == "table_open" for t in tokens) == 8 + 2  # rules changed, scores

    page = render_html(with_changes)
    assert "<h2>Changes since the champion</h2>" in page
    assert "<h3>Rules changed: before → after</h3>" in page
    assert "▲ +0.032" in page and "v0004-22222222 became the champion" in page
    assert NASTY not in page
    collector = _Collector()
    collector.feed(page)
    assert collector.tags.count("table") == 8 + 2
    assert "script" not in collector.tags
    assert render_html(with_changes) == page  # deterministic


def test_changes_section_when_the_rules_are_identical(liver):
    from libre_lib.ops.diff import ChampionChanges, diff_rules, metric_deltas

    model, X, y, _ = liver
    same = ChampionChanges(
        "v0001-aaaaaaaa",
        "v0002-bbbbbbbb",
        diff_rules(model.rules_, model.rules_),
        metric_deltas({"f1": 0.5}, {"f1": 0.5}),
    )
    report = RuleReport(
        title="t",
        ruleset_text=str(model.rules_),
        rules=rule_table(model, X, y),
        metrics=metrics(model, X, y),
        curve=truncation_curve(model, X, y),
        changes=same,
    )
    md = render_markdown(report)
    assert "v0002-bbbbbbbb has exactly the same rules as v0001-aaaaaaaa." in md
    assert "### Rules" not in md and "| F1 score | 0.500 | 0.500 | = no change |" in md
    assert "exactly the same rules" in render_html(report)


# --- readable rules, evidence and context ------------------------------------------------------


def test_display_numbers_rounds_but_keeps_neighbours_apart():
    from libre_lib.ops.display import display_numbers, round_text

    texts = display_numbers([29.709533160035694, 29.71, 48.3, 1234567.8])
    assert texts[48.3] == "48.3" and texts[1234567.8] == "1234568"
    assert texts[29.709533160035694] != texts[29.71]
    assert len(texts[29.709533160035694]) < len("29.709533160035694")
    assert round_text(26.400000000000002, 3) == "26.4" and round_text(158.0, 3) == "158"
    assert round_text(-0.0001, 1) == "-0.0001" and round_text(0.0, 3) == "0"


def test_printed_cut_points_increase_even_where_rounding_would_collide():
    from libre_lib.ops.display import display_numbers

    cuts = [1126.295, 1238.225, 1238.709, 1238.911, 1239.46, 1239.571]
    texts = [float(t) for t in display_numbers(cuts).values()]
    assert texts == sorted(set(texts)) and len(texts) == len(cuts)


@pytest.mark.parametrize("name", ["pima", "credit_approval", "wdbc"])
def test_printed_cut_points_sort_every_row_of_the_report_as_the_model_does(name):
    """A cut point prints as the roundest number between it and the closest value below it in
    the report's rows: applied literally, the printed threshold sorts every one of those rows
    as the exact one does, and the printed thresholds of a column increase."""
    from libre_lib.datasets import load_dataset
    from libre_lib.ops.display import RuleDisplay

    X, y, info = load_dataset(name)
    X_train, X_holdout = X.iloc[: len(X) * 3 // 4], X.iloc[len(X) * 3 // 4 :]
    model = LibreClassifier(
        random_state=0, positive_class=info.positive_class, max_intervals=None, max_rules=8
    ).fit(X_train, y.iloc[: len(X_train)])
    display = RuleDisplay.from_model(model, rows=[X_train, X_holdout])
    rounded = RuleDisplay.from_model(model)
    moved = 0
    for feature in model.discretization_.features:
        if feature.kind != NUMERIC or not feature.cuts:
            continue
        values = pd.to_numeric(X[feature.name], errors="coerce").dropna().to_numpy()
        printed = [float(display.number(feature.name, c)) for c in feature.cuts]
        assert printed == sorted(set(printed))
        for cut, shown in zip(feature.cuts, printed, strict=True):
            assert ((values >= shown) == (values >= cut)).all(), (feature.name, cut, shown)
            moved += int(
                ((values >= float(rounded.number(feature.name, cut))) != (values >= cut)).sum()
            )
    if name == "credit_approval":  # a2's 23.17 printed as 23.1 or 23.2 moved rows
        assert moved == 0
        (a2,) = [f for f in model.discretization_.features if f.name == "a2"]
        assert 23.17 in a2.cuts
        assert display.number("a2", 23.17) == rounded.number("a2", 23.17) == "23.17"


def test_conditions_read_as_comparisons_with_labels():
    from libre_lib.ops.display import RuleDisplay

    display = RuleDisplay(
        column_labels={"glu": "glucose"},
        value_labels={"sex": {1: "female", "0": "male"}},
        class_labels={"1": "diabetic"},
        target_label="diabetes",
        cuts={"glu": (99.99999, 158.00000001), "bmi": (26.400000000000002,)},
    )
    glu = Condition("glu", NUMERIC, intervals=(Interval(158.00000001, math.inf),))
    below = Condition("bmi", NUMERIC, intervals=(Interval(-math.inf, 26.400000000000002),))
    between = Condition("glu", NUMERIC, intervals=(Interval(99.99999, 158.00000001),))
    sex = Condition("sex", CATEGORICAL, categories=(1.0,))
    both = Condition("sex", CATEGORICAL, categories=("0", 1.0), missing=True)
    assert display.condition_text(glu) == "glucose ≥ 158"
    assert display.condition_text(below) == "bmi < 26.4"
    assert display.condition_text(between) == "100 ≤ glucose < 158"
    assert display.condition_text(sex) == "sex = female"
    assert display.condition_text(both) == "sex ∈ {male, female} ∪ missing"  # 0, 1
    assert display.outcome_text(RuleSet((), positive_class="1", negative_class="0")) == (
        "THEN diabetic ELSE diabetes = 0"
    )
    # a class label holding the rule's words read as more rule: THEN died ELSE target = 2 OR ...
    forged = RuleDisplay(class_labels={"1": "died ELSE target = 2 OR age ≥ 0", "2": "lived"})
    assert forged.outcome_text(RuleSet((), positive_class="1", negative_class="2")) == (
        'THEN "died ELSE target = 2 OR age ≥ 0" ELSE lived'
    )


def test_rules_touching_in_one_column_are_combined_for_display_only():
    from libre_lib.ops.display import RuleDisplay, combine_rules

    age = Condition("age", NUMERIC, intervals=(Interval(30.0, math.inf),))
    low = Rule((Condition("bmi", NUMERIC, intervals=(Interval(26.4, 48.3),)), age))
    high = Rule((Condition("bmi", NUMERIC, intervals=(Interval(48.3, math.inf),)), age))
    apart = Rule((Condition("bmi", NUMERIC, intervals=(Interval(-math.inf, 20.0),)), age))
    other = Rule((Condition("glu", NUMERIC, intervals=(Interval(158.0, math.inf),)),))
    shown = combine_rules([low, other, high, apart])
    assert [numbers for _, numbers in shown] == [(1, 3), (2,), (4,)]
    text = RuleDisplay().ruleset_text(RuleSet((low, other, high, apart), target="d"))
    assert text.splitlines()[0] == "IF bmi ≥ 26.4 AND age ≥ 30   (rules 1 and 3 combined)"
    assert "bmi < 20 AND age ≥ 30" in text  # ranges apart stay two rules
    frame = pd.DataFrame({"bmi": np.linspace(10, 60, 101), "age": np.arange(101) % 50.0})
    merged = shown[0][0].evaluate(frame)
    assert (merged == (low.evaluate(frame) | high.evaluate(frame))).all()


def test_report_sections_confusion_baselines_balance_and_bins(liver):
    model, X, y, info = liver
    X_all, y_all, _ = __import__("libre_lib.datasets", fromlist=["x"]).load_dataset("liver")
    report = build_report(
        model,
        X,
        y,
        title="t",
        class_labels={info.positive_class: "heavy drinker"},
        X_train=X_all,
        y_train=y_all,
        description="Who drinks more than two a day",
        expectations=[
            {
                "expectation": "expect_column_to_exist",
                "column": "mcv",
                "success": True,
                "unexpected_count": None,
                "details": "column present",
            },
            {
                "expectation": "expect_table_row_count_to_be_between",
                "column": None,
                "success": False,
                "unexpected_count": None,
                "details": "too few rows",
            },
        ],
    )
    pred = model.predict(X) == info.positive_class
    positive = (y == info.positive_class).to_numpy()
    assert report.confusion == {
        "tp": int((pred & positive).sum()),
        "fp": int((pred & ~positive).sum()),
        "fn": int((~pred & positive).sum()),
        "tn": int((~pred & ~positive).sum()),
    }
    base = report.baselines.set_index("answer")
    assert base.loc["model", "f1"] == pytest.approx(report.metrics["f1"])
    majority_positive = (y_all == info.positive_class).mean() > 0.5
    assert base.loc["majority", "flagged"] == (len(X) if majority_positive else 0)
    best = report.best_rule
    assert base.loc["best_rule", "f1"] == pytest.approx(
        f1_score(positive, model.fired_rules(X)[:, best - 1])
    )
    assert report.balance["Training"]["positive"] == int((y_all == info.positive_class).sum())
    assert report.balance["Holdout"]["negative"] == int((~positive).sum())

    page = render_html(report)
    for heading in (
        "Notation",
        "Confusion matrix (holdout rows)",
        "Compared with simple answers",
        "Class balance",
        "How each column was discretized",
        "Expectations checked",
    ):
        assert f">{heading}</h" in page
    assert "Who drinks more than two a day" in page
    assert "Predicted heavy drinker" in page
    assert "Table row count to be between" in page and "Failed" in page
    assert "1 of 2 expectations met." in page
    for feature in model.discretization_.features:  # every cut point, rounded for display
        for cut in feature.cuts:
            assert report.display.number(feature.name, cut) in page
    md = render_markdown(report)
    assert "### Confusion matrix (holdout rows)" in md and "data:image" not in md
    assert "THEN heavy drinker ELSE" in md
    # a labelled column reads as elsewhere in the report, with its name in the data
    labelled = build_report(
        model, X, y, title="t", column_labels={"mcv": "mean corpuscular volume"},
        expectations=report.expectations,
    )  # fmt: skip
    row = "| Column to exist | mean corpuscular volume (mcv) | Passed |"
    assert row in render_markdown(labelled)


def test_no_long_cut_points_in_rules_and_run_header(liver):
    model, X, y, _ = liver
    odd = copy.deepcopy(model)
    rule = Rule((Condition("mcv", NUMERIC, intervals=(Interval(-math.inf, 29.709533160035694),)),))
    odd.rules_ = RuleSet((rule,), target="t", positive_class="1", negative_class="2")
    report = dataclasses.replace(
        build_report(odd, X, y, title="t"), run_id="20250101-abc", model_version="v0007-12345678"
    )
    for text, shown in (
        (render_html(report), "mcv &lt; 29.7"),
        (render_markdown(report), "mcv \\< 29.7"),
    ):
        assert "29.709533160035694" not in text and shown in text
        assert "Run: 20250101-abc" in text and "Model version: v0007-12345678" in text


def test_precision_of_a_rule_matching_nothing_reads_na(liver):
    model, X, y, _ = liver
    never = copy.deepcopy(model)
    rule = Rule((Condition("mcv", NUMERIC, intervals=(Interval(1e9, math.inf),)),))
    never.rules_ = RuleSet(
        (rule,),
        target="t",
        positive_class=model.rules_.positive_class,
        negative_class=model.rules_.negative_class,
    )
    report = build_report(never, X, y, title="t")
    md = render_markdown(report)
    row = next(line for line in md.splitlines() if line.startswith("| 1 | mcv ≥ 1000000000 |"))
    assert row.endswith("| 0 | 0 | 0 | n/a | 0.000 | 0 |")
    tables = artifact_tables(report)
    assert tables["rules"][0]["Precision"] == "n/a" and tables["rules"][0]["Rows matched"] == 0
    assert {"Measure": "Precision", "Value": "n/a"} in tables["metrics"]


def test_artifact_tables_have_readable_headers_and_rounded_numbers(report):
    tables = artifact_tables(report)
    first = tables["rules"][0]
    assert list(first)[:2] == ["#", "Conditions"] and list(first)[-1] == "Rule"
    assert first["Precision"] == round(report.rules["precision"][0], 3)
    assert isinstance(first["Rows matched"], int)
    assert {"Measure": "F1 score", "Value": round(report.metrics["f1"], 3)} in tables["metrics"]


def test_markdown_artifact_has_the_figures_as_inline_images(report):
    import base64

    md = render_markdown(report, figures=True)
    images = re.findall(
        r"!\[(Figure \d+\.[^\]]*)\]\(data:image/svg\+xml;base64,([A-Za-z0-9+/=]+)\)", md
    )
    assert [alt.split(".")[0] for alt, _ in images] == ["Figure 1", "Figure 2", "Figure 3"]
    for _, data in images:  # each a well-formed SVG, in SVG's namespace: without it a browser
        # draws no SVG given as an image, and the Prefect UI showed broken images
        assert ET.fromstring(base64.b64decode(data)).tag == "{http://www.w3.org/2000/svg}svg"
    assert render_markdown(report) == render_markdown(report, figures=False)
    assert "data:image" not in render_markdown(report)


def test_version_trend_table_and_figure():
    from types import SimpleNamespace

    from libre_lib.ops.baselines import version_trend

    versions = [
        SimpleNamespace(
            version=f"v000{i}-aaaaaaaa",
            created_at=f"2025-01-0{i}T00:00",
            status=s,
            metrics={"f1": f, "accuracy": 0.7, "n_rules": 3},
        )
        for i, (s, f) in enumerate([("retired", 0.5), ("champion", 0.6), ("candidate", 0.55)], 1)
    ]
    trend = version_trend(
        versions, champions=["v0001-aaaaaaaa", "v0002-aaaaaaaa"], current="v0003-aaaaaaaa"
    )
    assert trend["status"].tolist() == ["champion (earlier)", "champion", "candidate"]
    assert trend["this_run"].tolist() == [False, False, True]
    assert trend["precision"].isna().all()
    liver_like = RuleReport(
        title="t",
        ruleset_text="IF FALSE THEN y = 1 ELSE y = 0",
        rules=pd.DataFrame(),
        metrics={},
        curve=pd.DataFrame(columns=["n_rules"]),
        trend=trend,
    )
    page = render_html(liver_like)
    assert "<h2>Model versions over time</h2>" in page and "candidate (this run)" in page
    svg = next(f for f in re.findall(r"<svg.*?</svg>", page, flags=re.S) if "version" in f)
    assert svg.count("<path") == 2 * 2 + 1  # 2 champions x 2 scores + key
    ET.fromstring(svg)


def test_the_tuning_figure_marks_the_chosen_point_on_round_score_ticks():
    import re

    from libre_lib.ops.figures import svg_tuning

    points = pd.DataFrame(
        {"mean_rules": [1.0, 2.0, 3.0, 8.0], "mean_score": [0.05, 0.6, 0.66, 0.7],
         "chosen": [False, False, True, False]}
    )  # fmt: skip
    svg = svg_tuning(points)
    ticks = re.findall(r'text-anchor="end" fill="#444">([0-9.]+)<', svg)
    assert ticks == ["0.00", "0.10", "0.20", "0.30", "0.40", "0.50", "0.60", "0.70"]
    assert svg.count("<circle") == 4 + 1  # the four grid points and the legend's key
    assert "chosen: 0.660 with 3.0 rules" in svg


def test_the_tuning_figures_best_score_line_is_a_staircase():
    import itertools
    import re

    from libre_lib.ops.figures import svg_tuning

    # the best score with at most k rules: flat until a rule count where a better point
    # appears, then straight up; a diagonal would claim scores that no grid point reaches
    points = pd.DataFrame(
        {"mean_rules": [0.6, 0.0, 0.2, 0.4, 0.2, 1.0],
         "mean_score": [0.25, 0.0, 0.07, 0.17, 0.05, 0.2],
         "chosen": [False, False, True, False, False, False]}
    )  # fmt: skip
    line = re.search(r'<polyline points="([^"]+)"', svg_tuning(points)).group(1)
    corners = [tuple(map(float, p.split(","))) for p in line.split()]
    assert len(corners) == 8  # 4 rule counts with a better score (3 risers) and the last flat
    for (x0, y0), (x1, y1) in itertools.pairwise(corners):
        assert x0 == x1 or y0 == y1  # every segment flat or vertical
        assert x1 >= x0 and y1 <= y0  # right or up (svg's y grows downward)


def test_the_bins_table_lists_numeric_looking_categories_in_numeric_order():
    from libre_lib.discretization import CATEGORICAL, Discretization, FeatureBins
    from libre_lib.ops.display import RuleDisplay
    from libre_lib.ops.report_sections import discretization_table

    codes = FeatureBins("nodes", CATEGORICAL, categories=("0", "1", "10", "11", "2", "other"))
    table = discretization_table(Discretization((codes,)), RuleDisplay())
    assert table.iloc[0].tolist()[3] == "categories 0, 1, 2, 10, 11, other"
    # a category holding a comma is quoted, as the rules quote it, not read as two
    cities = FeatureBins("city", CATEGORICAL, categories=("Berlin", "Paris, France", "Rome"))
    table = discretization_table(Discretization((cities,)), RuleDisplay())
    assert table.iloc[0].tolist()[3] == 'categories Berlin, "Paris, France", Rome'


def test_a_model_without_rules_reads_n_a_for_precision_everywhere():
    from types import SimpleNamespace

    from libre_lib.ops.baselines import version_trend
    from libre_lib.ops.diff import format_metric, metric_deltas
    from libre_lib.ops.report_sections import trend_blocks

    before = {"f1": 0.4, "precision": 0.25, "n_rules": 2, "avg_atoms": 1.5, "n_flagged": 8}
    after = {"f1": 0.0, "precision": 0.0, "n_rules": 0, "avg_atoms": 0.0, "n_flagged": 0}
    deltas = metric_deltas(before, after)
    assert deltas["precision"]["after"] is None and deltas["precision"]["delta"] is None
    assert format_metric("precision", deltas["precision"]["after"]) == "n/a"
    assert format_metric("avg_atoms", deltas["avg_atoms"]["after"]) == "n/a"
    assert format_metric("avg_atoms", deltas["avg_atoms"]["before"]) == "1.50"
    versions = [
        SimpleNamespace(version=v, created_at="2026-11-27", status="candidate", metrics=m)
        for v, m in (("v1", before), ("v2", after))
    ]
    blocks = trend_blocks(version_trend(versions), figure=False)
    rows = next(content[1] for kind, content in blocks if kind == "table")
    assert rows[0][4] == "0.250" and rows[1][4] == "n/a"
    assert rows[0][-2:] == ["n/a", "n/a"]  # no counts recorded: no rows, no share


def test_the_trend_table_gives_each_version_s_rows_and_positive_share():
    """F1 fell from 0.843 to 0.744 in the table while the new version beat the champion on the
    same rows: the positive class had halved, and nothing in the table said so."""
    from types import SimpleNamespace

    from libre_lib.ops.baselines import version_trend
    from libre_lib.ops.report_sections import trend_blocks

    versions = [
        SimpleNamespace(
            version=v,
            created_at="2026-11-27",
            status="candidate",
            metrics={"f1": f, "n_rules": 2, "n_rows": n, "n_positive": p},
        )
        for v, f, n, p in (("v1", 0.843, 135, 60), ("v2", 0.744, 92, 21))
    ]
    blocks = trend_blocks(version_trend(versions), figure=False)
    headers, rows, _ = next(content for kind, content in blocks if kind == "table")
    assert headers[-2:] == ("Rows scored", "Positive share")
    assert [r[-2:] for r in rows] == [["135", "44.4%"], ["92", "22.8%"]]


def test_parameters_say_what_auto_chose_and_what_none_means():
    from libre_lib.datasets import load_dataset

    X, y, info = load_dataset("haberman")
    model = LibreClassifier(random_state=0, positive_class=info.positive_class).fit(X, y)
    report = build_report(model, X, y, title="haberman")
    assert report.parameters["alpha"] == f"auto: {model.alpha_:.4g}"
    md = render_markdown(report)
    assert f"`auto: {model.max_rules_}`" in md or "`auto: none (no limit)`" in md
    assert "| `max_features` |" in md and "None" not in md.split("## Model parameters")[1]
    assert "| `abstain` | `true` |" in md  # as a spec writes it, not Python's True
    assert "n_flagged" not in md and "| Holdout rows flagged |" in md  # every measure named


def test_the_bins_table_shows_grouped_categories_as_groups():
    from libre_lib.discretization import CATEGORICAL, Discretization, FeatureBins
    from libre_lib.ops.display import RuleDisplay
    from libre_lib.ops.report_sections import SHOWN_PER_GROUP, discretization_table

    categories = tuple(f"z{i:03d}" for i in range(170))
    groups = tuple(0 if i < 150 else 1 + i % 2 for i in range(170))
    feature = FeatureBins("zip", CATEGORICAL, categories=categories, groups=groups)
    row = discretization_table(Discretization((feature,)), RuleDisplay()).iloc[0]
    assert row["n_bins"] == 3
    first, second, third = row["bins"].split(": ", 1)[1].split("; ")
    assert row["bins"].startswith("170 categories in 3 groups of a similar share of positive")
    shown = [f"z{i:03d}" for i in range(SHOWN_PER_GROUP)]
    assert first == "group 1 {" + ", ".join(shown) + f", … {150 - SHOWN_PER_GROUP} more}}"
    assert second == "group 2 {" + ", ".join(f"z{i:03d}" for i in range(150, 170, 2)) + "}"
    assert third == "group 3 {" + ", ".join(f"z{i:03d}" for i in range(151, 170, 2)) + "}"
    # one group: no rule can use the column; a few of its categories (it listed 100, and
    # read "3,966 categories in 1 groups")
    one = FeatureBins("city", CATEGORICAL, categories=categories, groups=(0,) * 170)
    (bins,) = discretization_table(Discretization((one,)), RuleDisplay())["bins"]
    assert bins.startswith("170 categories in one group: none differed enough in its share")
    assert "no rule can test this column; e.g. z000, z001," in bins and "… 160 more" in bins


def test_a_rule_on_many_grouped_categories_names_its_groups():
    """A rule on a column of grouped categories listed every category of its groups (60+
    names in one condition); it now names the groups, numbered as in the bins table."""
    from types import SimpleNamespace

    from libre_lib.discretization import CATEGORICAL, Discretization, FeatureBins
    from libre_lib.ops.display import RuleDisplay, number_ranges
    from libre_lib.ops.report import build_report, render_html, render_markdown

    assert number_ranges([1, 2, 3, 5, 7, 8]) == "1–3, 5, 7–8" and number_ranges([4]) == "4"
    categories = tuple(f"z{i:03d}" for i in range(120))
    groups = tuple(min(i // 30, 3) for i in range(120))  # four groups of 30
    feature = FeatureBins("zip", CATEGORICAL, categories=categories, groups=groups)
    model = SimpleNamespace(
        discretization_=Discretization((feature,)),
        rules_=RuleSet((), positive_class=1, negative_class=0, target="y"),
    )
    display = RuleDisplay.from_model(model)
    three = Condition("zip", CATEGORICAL, categories=categories[:60] + categories[90:])
    assert display.condition_text(three) == "zip ∈ groups 1–2, 4 (90 categories)"
    with_missing = Condition("zip", CATEGORICAL, categories=categories[30:60], missing=True)
    assert display.condition_text(with_missing) == "zip ∈ group 2 (30 categories) ∪ missing"
    # not a union of whole groups (an older model's rule), or few categories: listed in full
    odd = Condition("zip", CATEGORICAL, categories=categories[:31])
    assert display.condition_text(odd).startswith("zip ∈ {z000, z001,")
    few = Condition("zip", CATEGORICAL, categories=categories[:12])
    assert display.condition_text(few).count(", ") == 11

    from libre_lib.datasets import load_dataset

    X, y, info = load_dataset("haberman")
    plain = LibreClassifier(positive_class=info.positive_class, random_state=0).fit(X, y)
    # the notation explains groups only where a rule uses them
    assert "x ∈ groups 2–4" not in render_markdown(build_report(plain, X, y, title="t"))
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
    from categories import city_data

    X, y = city_data(3_000, 150, 0, np.random.default_rng(100).normal(size=150))
    model = LibreClassifier(random_state=0, n_estimators=10).fit(X, y)
    report = build_report(model, X, y, title="t", X_train=X, y_train=y)
    for text in (render_markdown(report), render_html(report)):
        assert re.search(r"city ∈ groups? [0-9–, ]+ \([0-9,]+ categories\)", text)
        assert "x ∈ groups 2–4 (n categories)" in text


def test_a_report_on_training_rows_says_so_everywhere_it_names_its_rows():
    """With holdout_fraction 0 the report's scores are in-sample, but its sections were titled
    "Holdout performance" and its counts "Holdout rows"."""
    from libre_lib.datasets import load_dataset
    from libre_lib.errors import ParameterError
    from libre_lib.ops.report import build_report, render_html, render_markdown

    X, y, info = load_dataset("haberman")
    model = LibreClassifier(positive_class=info.positive_class, random_state=0).fit(X, y)
    both = {"X_train": X, "y_train": y, "title": "t"}
    in_sample = build_report(model, X, y, evaluated_on="training", **both)
    held_out = build_report(model, X, y, **both)
    for text in (render_markdown(in_sample, figures=True), render_html(in_sample)):
        assert "Performance on the training rows (no holdout)" in text
        assert "Training rows flagged" in text and "Confusion matrix (training rows)" in text
        assert "optimistic" in text
        assert "Holdout performance" not in text and "Holdout rows" not in text
        assert "holdout rows" not in text.replace("on the holdout rows of its own run", "")
    assert list(in_sample.balance) == ["Training"]
    # the headline cards too (they read "F1 score (holdout)" on in-sample figures)
    assert "F1 score (training)" in render_html(in_sample)
    assert "(holdout)" not in render_html(in_sample)
    assert "F1 score (holdout)" in render_html(held_out)
    for text in (render_markdown(held_out, figures=True), render_html(held_out)):
        assert "Holdout performance" in text and "Holdout rows flagged" in text
    # the cut points' note names the rows they were rounded against
    assert "in the rows of this report (training rows)" in render_markdown(in_sample)
    assert "(training and holdout rows)" in render_markdown(held_out)
    alone = build_report(model, X, y, title="t")
    assert "in the rows of this report (holdout rows)" in render_markdown(alone)
    with pytest.raises(ParameterError, match="evaluated_on must be one of"):
        build_report(model, X, y, evaluated_on="test", **both)


def test_category_sets_read_in_natural_order():
    from libre_lib.ops.display import RuleDisplay

    cities = Condition("city", CATEGORICAL, categories=("c10", "c2", "c1", "b", "c100"))
    assert str(Rule((cities,))) == "city ∈ {b, c1, c10, c100, c2}"  # the model's text: sorted
    assert RuleDisplay().condition_text(cities) == "city ∈ {b, c1, c2, c10, c100}"


def test_a_report_gives_each_group_of_categories_its_share_in_training():
    import sys

    from libre_lib.ops.report import build_report, render_markdown

    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
    from categories import city_data

    effect = np.random.default_rng(100).normal(size=150)
    X, y = city_data(4_000, 150, 0, effect)
    model = LibreClassifier(random_state=0, n_estimators=10).fit(X, y)
    feature = model.discretization_.features[list(X.columns).index("city")]
    report = build_report(model, X, y, title="t", X_train=X, y_train=y, class_labels={1: "churned"})
    row = report.discretization.set_index("column").loc["city"]
    shares = re.findall(r"\}: (\d+\.\d)% churned", row["bins"])
    codes = feature.codes(X["city"])
    expected = [f"{100 * y[codes == b].mean():.1f}" for b in range(feature.n_value_bins)]
    assert shares == expected and len(shares) == feature.n_value_bins > 1
    assert "a similar share of churned (in training)" in render_markdown(report)


def test_scores_are_written_with_the_digits_that_tell_them_apart():
    from libre_lib.errors import apart

    assert apart(0.99892, 0.99942) == ("0.9989", "0.9994")
    assert apart(0.5, 0.5) == ("0.500", "0.500")  # equal: the usual 3 decimals
    assert apart(2_999_990 / 3e6, 2_999_991 / 3e6) == ("0.9999967", "0.9999970")


def test_a_model_below_the_majority_answer_at_a_rare_class_is_named_in_rows():
    """11,982 rows right against 11,988 of 11,995: both accuracies read 0.999, so no caution
    was given (the two were compared rounded to 3 decimals)."""
    from libre_lib.ops.baselines import baselines, cautions

    n = 11_995
    positive = np.zeros(n, dtype=bool)
    positive[:7] = True
    fired = np.zeros((n, 1), dtype=bool)
    fired[7:13] = True  # six false alarms, no positive found
    table, best = baselines(fired, positive, majority_positive=False)
    found = cautions(table, n, majority_name="no", best_rule=best, best_rule_chosen_elsewhere=False)
    assert found[0].startswith(
        "On the 11,995 holdout rows the model is less accurate than always answering “no”: "
        "right on 11,982 rows against 11,988 (accuracy 0.9989 against 0.9994; F1 "
    )


def test_cautions_name_a_model_below_the_majority_answer_or_its_best_rule():
    from libre_lib.ops.baselines import baselines, cautions

    positive = np.array([1, 1, 0, 0, 0, 0, 0, 0, 0, 0], dtype=bool)
    fired = np.zeros((10, 2), dtype=bool)
    fired[0, 0] = True  # rule 1: one right flag
    fired[[2, 3, 4], 1] = True  # rule 2: three wrong ones
    table, best = baselines(fired, positive, majority_positive=False)
    assert best == 1
    # the model (F1 0.333, right on 6 rows) is below the majority answer (right on 8) and below
    # rule 1 alone (F1 0.667)
    found = cautions(
        table, 10, majority_name="healthy", best_rule=best, best_rule_chosen_elsewhere=True
    )
    assert len(found) == 3
    assert found[0].startswith(
        "On the 10 holdout rows the model is less accurate than always answering “healthy”: "
        "right on 6 rows against 8 (accuracy 0.600 against 0.800; F1 0.333 against 0.000). "
        "The two answers differ on 4 rows, 1 in the model's favour and 3 in the majority "
        "answer's; a split at least this uneven arises by chance with probability 0.62 (exact "
        "McNemar test), too often to tell from these holdout rows whether the model is less "
        "accurate or only unlucky (more rows would tell)."
    )
    # and no higher an F1 than flagging all 10 rows (2 right of 10: F1 0.333 too)
    assert found[1].startswith(
        "Flagging every one of the 10 holdout rows scores an F1 at least as high as the "
        "model's (0.333 against 0.333): the rows the model leaves unflagged hold 1 with the "
        "outcome and 5 without."
    )
    assert found[2] == (
        "Rule 1 alone scores a higher F1 on the holdout rows than the whole rule set (0.667 "
        "against 0.333): the other rules flag 0 more rows that have the outcome and 3 more that "
        "do not. Handing each of those 3 rows to one answer or the other at random opens an F1 "
        "gap at least this wide with probability 0.25 (exact paired randomization test), too "
        "often to tell from these holdout rows whether the other rules lower the F1 (more rows "
        "would tell)."
    )
    # a best rule chosen on the scored rows themselves is not held against the model
    found = cautions(
        table, 10, majority_name="healthy", best_rule=best, best_rule_chosen_elsewhere=False
    )
    assert len(found) == 2 and "less accurate" in found[0] and "Flagging every" in found[1]
    # a model that flags every row is that answer: said so, without a test on no rows
    table, best = baselines(np.ones((10, 1), dtype=bool), positive, majority_positive=False)
    (flags_all,) = [
        c
        for c in cautions(
            table, 10, majority_name="h", best_rule=best, best_rule_chosen_elsewhere=True
        )
        if "every one of the 10" in c
    ]
    assert flags_all.startswith(
        "The model flags every one of the 10 holdout rows: on them it answers exactly as "
        "flagging every row does (F1 0.333)"
    )
    assert "probability" not in flags_all
    # a model right on every row: nothing to say
    table, best = baselines(positive[:, None], positive, majority_positive=False)
    kept = cautions(table, 10, majority_name="h", best_rule=best, best_rule_chosen_elsewhere=True)
    assert kept == ()


def test_the_majority_caution_tests_the_rows_where_the_answers_disagree():
    from libre_lib.ops.baselines import baselines, cautions, mcnemar_p

    # exact two-sided binomial tails, by hand: P(X <= 1 | 4, 1/2) = 5/16, P(X <= 0 | 6) = 1/64
    assert mcnemar_p(1, 3) == pytest.approx(10 / 16)
    assert mcnemar_p(6, 0) == mcnemar_p(0, 6) == pytest.approx(2 / 64)
    assert mcnemar_p(0, 0) == 1.0
    # a positive majority (70 of 100 rows): the model flags 50 rows, 40 of them positive, so it
    # misses 30 positives (the majority answer's side) and is right on 20 of the 30 negatives
    positive = np.zeros(100, dtype=bool)
    positive[:70] = True
    fired = np.zeros((100, 1), dtype=bool)
    fired[:40, 0] = True
    fired[70:80, 0] = True
    table, best = baselines(fired, positive, majority_positive=True)
    found, everyone = cautions(
        table, 100, majority_name="sick", best_rule=best, best_rule_chosen_elsewhere=False
    )
    # the majority answer flags every row: its F1 (0.824) is the one to beat too
    assert set(table["answer"]) == {"model", "majority", "best_rule"}
    assert everyone.startswith(
        "Flagging every one of the 100 holdout rows scores an F1 at least as high as the "
        "model's (0.824 against 0.667): the rows the model leaves unflagged hold 30 with the "
        "outcome and 20 without."
    )
    assert "unlikely to be chance" in everyone
    assert "right on 60 rows against 70" in found
    assert "differ on 50 rows, 20 in the model's favour and 30 in the majority answer's" in found
    assert f"probability {mcnemar_p(20, 30):.2f} (exact McNemar test)" in found
    assert "whether the model is less accurate or only unlucky" in found
    # a clear loss: 2 right flags against 30 false alarms over 200 rows
    positive = np.zeros(200, dtype=bool)
    positive[:20] = True
    fired = np.zeros((200, 1), dtype=bool)
    fired[18:50, 0] = True
    table, best = baselines(fired, positive, majority_positive=False)
    found, everyone = cautions(
        table, 200, majority_name="h", best_rule=best, best_rule_chosen_elsewhere=False
    )
    assert "(0.182 against 0.077)" in everyone  # flagging all 200 rows: 20 right
    assert "2 in the model's favour and 30 in the majority answer's" in found
    assert "probability below 0.001" in found and "unlikely to be chance" in found


def test_the_best_rule_caution_tests_the_rows_only_the_other_rules_flag():
    from libre_lib.ops.baselines import baselines, cautions, extra_rules_p

    # by hand: rule 1 has 1 hit of 2 positives; the set adds 3 false alarms. Of the 8 equally
    # likely ways to hand them out, only all-to-one-side (2 of 8) opens a gap as wide as 1/3
    assert extra_rules_p(1, 0, 0, 3, 2) == pytest.approx(0.25)
    assert extra_rules_p(5, 2, 0, 0, 10) == 1.0
    # against a simulation of the same null hypothesis
    rng = np.random.default_rng(0)
    hits, alarms, extra_hits, extra_alarms, n_positives = 12, 6, 5, 14, 30
    a = rng.binomial(extra_hits, 0.5, 200_000)
    b = rng.binomial(extra_alarms, 0.5, 200_000)

    def f1(tp, fp):
        return 2 * tp / (tp + fp + n_positives)

    observed = f1(hits, alarms) - f1(hits + extra_hits, alarms + extra_alarms)
    simulated = np.abs(
        f1(hits + a, alarms + b) - f1(hits + extra_hits - a, alarms + extra_alarms - b)
    )
    expected = np.mean(simulated >= abs(observed) - 1e-12)
    assert extra_rules_p(hits, alarms, extra_hits, extra_alarms, n_positives) == pytest.approx(
        expected, abs=0.005
    )
    # a clear loss on 1,000 rows: rule 1 flags 80 of the 100 positives and 20 negatives; rule 2
    # adds 5 positives and 120 negatives
    positive = np.zeros(1000, dtype=bool)
    positive[:100] = True
    fired = np.zeros((1000, 2), dtype=bool)
    fired[:80, 0] = True
    fired[100:120, 0] = True
    fired[80:85, 1] = True
    fired[200:320, 1] = True
    table, best = baselines(fired, positive, majority_positive=False)
    found = cautions(
        table, 1000, majority_name="h", best_rule=best, best_rule_chosen_elsewhere=True
    )
    assert len(found) == 2 and found[1].startswith("Rule 1 alone scores a higher F1")
    assert "5 more rows that have the outcome and 120 more that do not" in found[1]
    assert "those 125 rows" in found[1]
    assert "probability below 0.001" in found[1] and "unlikely to be chance" in found[1]


def test_holdout_rows_without_the_outcome_get_a_caution_and_no_f1():
    from libre_lib.ops.baselines import baselines, cautions, undefined_metric

    positive = np.zeros(40, dtype=bool)
    fired = np.zeros((40, 1), dtype=bool)
    table, best = baselines(fired, positive, majority_positive=False)
    (found,) = cautions(
        table, 40, majority_name="no", best_rule=best, best_rule_chosen_elsewhere=True
    )
    assert found.startswith(
        "The 40 holdout rows hold no row with the outcome, so recall cannot be measured on "
        "them, nor F1 unless the model flags rows"
    )
    assert "it flags 0 here" in found
    fired[:3] = True  # three false alarms: F1 is 0, and the majority caution follows
    table, best = baselines(fired, positive, majority_positive=False)
    found = cautions(table, 40, majority_name="no", best_rule=best, best_rule_chosen_elsewhere=True)
    assert len(found) == 2 and "it flags 3 here" in found[0] and "less accurate" in found[1]
    metrics = {"n_positive": 0, "n_flagged": 0, "n_rules": 1}
    assert undefined_metric(metrics, "recall") and undefined_metric(metrics, "f1")
    assert undefined_metric({**metrics, "n_flagged": 3}, "recall")
    assert not undefined_metric({**metrics, "n_flagged": 3}, "f1")  # every flag wrong: F1 0
    assert not undefined_metric({**metrics, "n_positive": 2}, "recall")


def test_a_model_that_flags_no_holdout_row_gets_a_caution_when_flagging_all_scores_more():
    """A rule learned from one positive training row matched no holdout row: F1 0 against
    flagging every row's 0.027, and the report opened with no caution at all."""
    positive = np.zeros(72, dtype=bool)
    positive[5] = True
    (found,) = _cautions_of(np.zeros((72, 1), dtype=bool), positive)
    assert found.startswith(
        "The model flags none of the 72 holdout rows, 1 of which has the outcome: its F1 is 0, "
        "below flagging every row's (0.027)."
    )


def test_a_report_puts_its_cautions_under_the_header(credit_data, credit_model):
    X, y, info = credit_data  # 44.5 % approved: the majority answer is "rejected"
    flags_all = copy.deepcopy(credit_model)  # one rule matching every row
    everything = Condition("a2", NUMERIC, (Interval(-math.inf, math.inf),), missing=True)
    flags_all.rules_ = RuleSet(
        (Rule((everything,)),),
        target=credit_model.rules_.target,
        positive_class=credit_model.rules_.positive_class,
        negative_class=credit_model.rules_.negative_class,
    )
    flags_all.auto_scores_ = None  # no choice made this rule set: no inner score to fall short of
    report = build_report(flags_all, X, y, title="t", X_train=X, y_train=y)
    caution, everyone = report.cautions  # flagging every row is all this model does
    assert everyone.startswith(f"The model flags every one of the {len(y)} holdout rows")
    approved = int((y == info.positive_class).sum())
    assert f"right on {approved} rows against {len(y) - approved} " in caution
    md = render_markdown(report)
    assert md.index(f"> **Caution:** On the {len(y)} holdout rows") < md.index("## How to read")
    page = render_html(report)
    assert f'<p class="caution"><strong>Caution:</strong> On the {len(y)} holdout rows' in page
    assert build_report(credit_model, X, y, title="t", X_train=X, y_train=y).cautions == ()


def test_the_majority_answer_says_whose_majority_it_is(credit_data, credit_model):
    # the training rows' majority can be the holdout's minority: its accuracy below 0.5 must
    # not read as "the majority class" of the rows it is scored on
    X, y, _ = credit_data
    md = render_markdown(build_report(credit_model, X, y, title="t", X_train=X, y_train=y))
    assert "| Majority class of the training rows: always “" in md
    md = render_markdown(build_report(credit_model, X, y, title="t"))  # no training rows given
    assert "| Majority class of the holdout rows: always “" in md


def test_a_refined_model_says_its_cut_points_may_lie_inside_the_bins(liver, report):
    model, X, y, _ = liver
    refined = LibreClassifier(**{**model.get_params(), "refine": "f1"})
    refined.fit(X, y)  # any rows: the text depends on the setting alone
    text = render_markdown(build_report(refined, X, y, title="refined"))
    assert "training F1 (refine: f1), so a rule's cut point may lie inside a bin" in text
    assert "(refine: f1)" in render_html(build_report(refined, X, y, title="refined"))
    assert "inside a bin" not in render_markdown(report)


def test_a_model_with_significant_cuts_says_how_its_cut_points_were_kept(liver, report):
    model, X, y, _ = liver
    thinned = LibreClassifier(**{**model.get_params(), "significant_cuts": True}).fit(X, y)
    text = render_markdown(build_report(thinned, X, y, title="thinned"))
    assert "cut only where the share of positives clearly changes" in text
    assert "the library does so by itself" not in text  # the parameter asked it
    assert "significant_cuts" in render_html(build_report(thinned, X, y, title="thinned"))
    plain = render_markdown(build_report(model, X, y, title="plain"))
    assert "clearly changes" not in plain
    # thinned because the training rows were many (a tuned model's parameters cannot tell a
    # grid's rule from a tuned value: the pipeline says which): said in the text, the
    # parameters and the tuning section, without jargon first
    by_rows = build_report(thinned, X, y, title="rows", cuts_by_rows=True)
    text = render_markdown(by_rows)
    assert "on more than 10,000 training rows the library does so by itself" in text
    assert (
        "| `significant_cuts` | `true: on more than 10,000 training rows (not set, not tuned)` |"
        in text
    )
    from libre_lib.ops.report_sections import tuning_blocks

    tuning = pd.DataFrame({"mean_score": [0.5], "mean_rules": [2.0], "chosen": [True]})
    summary = {"n_splits": 5, "tolerance": 0.02, "best_score": 0.5}
    summary["best_params"] = {"significant_cuts": True, "alpha": 0.7}
    (listed,) = [
        text for kind, text in tuning_blocks(tuning, summary, False, by_rows=True) if kind == "dl"
    ]
    assert (
        "significant_cuts",
        "true (not tuned: the default grid's rule on more than 10,000 training rows)",
    ) in listed
    (listed,) = [text for kind, text in tuning_blocks(tuning, summary, False) if kind == "dl"]
    assert ("significant_cuts", "true") in listed


def test_the_tuning_section_says_how_far_the_refit_check_went():
    from libre_lib.ops.report_sections import tuning_blocks

    tuning = pd.DataFrame(
        {"mean_score": [0.48, 0.47, 0.40], "mean_rules": [5.0, 5.0, 8.0], "chosen": [0, 0, 1]}
    ).astype({"chosen": bool})
    summary = {"n_splits": 5, "tolerance": 0.02, "best_params": {"alpha": 0.7}}

    def said(best_score, fallbacks):
        blocks = tuning_blocks(
            tuning, {**summary, "best_score": best_score, "refit_fallbacks": fallbacks}, False
        )
        return " ".join(text for kind, text in blocks if kind == "p")

    assert "passed over" not in said(0.48, 0)
    within = said(0.47, 1)
    assert "the next combinations in the choice's order" in within and "(1 passed over)" in within
    beyond = said(0.40, 2)
    assert "none of the combinations within the tolerance did" in beyond
    assert "(2 passed over)" in beyond and "the majority guard cut its rules" in beyond
    assert "cross-validation on the training rows (f1)" in within


def test_the_tuning_section_names_the_sample_it_searched_and_every_chosen_parameter():
    """With tuning.max_rows the search ran on a sample, and the text said "on the training
    rows"; the H2 half's max_intervals (3, the paper's) was missing from "Chosen"."""
    from libre_lib.ops.report_sections import tuning_blocks

    tuning = pd.DataFrame({"mean_score": [0.48], "mean_rules": [2.0], "chosen": [True]})
    summary = {
        "n_splits": 5,
        "tolerance": 0.01,
        "best_score": 0.48,
        "best_params": {"heuristic": "H2", "max_rules": 2},
        "tuned": {"heuristic": "H2", "max_rules": 2, "max_intervals": 3, "random_state": 0},
        "n_rows": 300,
        "n_training_rows": 614,
    }
    blocks = tuning_blocks(tuning, summary, False)
    text = " ".join(body for kind, body in blocks if kind == "p")
    assert "on a sample of 300 of the 614 training rows (tuning.max_rows)" in text
    (listed,) = [body for kind, body in blocks if kind == "dl"]
    assert dict(listed) == {"heuristic": "H2", "max_intervals": "3", "max_rules": "2"}
    assert "max_rules is a cap" not in text
    # the model ships fewer rules than the chosen max_rules: said, so 2 and 1 do not clash
    fewer = " ".join(b for k, b in tuning_blocks(tuning, summary, False, n_rules=1) if k == "p")
    assert "max_rules is a cap: the model has 1 rule, since the set cover stopped" in fewer
    same = " ".join(b for k, b in tuning_blocks(tuning, summary, False, n_rules=2) if k == "p")
    assert "max_rules is a cap" not in same


def test_conditions_of_scattered_ranges_get_a_note_with_the_way_to_plainer_rules(liver):
    from libre_lib.ops.report import SCATTERED_RANGES

    model, X, y, _ = liver
    speck = (Interval(-math.inf, 86.0), Interval(88.0, 89.0), Interval(95.0, math.inf))
    assert len(speck) == SCATTERED_RANGES
    scattered = Rule((Condition("mcv", NUMERIC, intervals=speck),))
    plain = Rule((Condition("sgpt", NUMERIC, intervals=(Interval(30.0, math.inf),)),))

    def with_rules(*rules, significant_cuts=False):
        changed = empty_model(model)
        stats = tuple(RuleStats(1.0, 1.0, 1.0, 1.0) for _ in rules)
        changed.rules_ = dataclasses.replace(changed.rules_, rules=rules, stats=stats)
        changed.significant_cuts = significant_cuts
        return build_report(changed, X, y, title="t", column_labels={"mcv": "mean volume"})

    report = with_rules(scattered, plain)
    (note,) = [n for n in report.notes if "separate ranges" in n]
    mcv = X["mcv"].to_numpy(dtype=float)
    narrowest = min(int(((mcv >= i.low) & (mcv < i.high)).sum()) for i in speck)
    assert narrowest > 0
    assert f"mean volume (up to 3 ranges, one of them holding {narrowest} holdout rows)" in note
    assert "sgpt" not in note
    assert "significant_cuts: true" in note and "compare the holdout scores" in note
    assert "keeps no holdout" not in note
    assert "separate ranges" in render_markdown(report) and "separate ranges" in render_html(report)
    # a run without a holdout is told how to get the scores the note asks to compare
    changed = empty_model(model)
    changed.rules_ = dataclasses.replace(
        changed.rules_, rules=(scattered,), stats=(RuleStats(1.0, 1.0, 1.0, 1.0),)
    )
    training = build_report(changed, X, y, title="t", evaluated_on="training")
    (note,) = [n for n in training.notes if "separate ranges" in n]
    assert note.endswith("(this run keeps no holdout: holdout_fraction > 0 measures them).")
    # none for plain conditions; once the model keeps only significant cut points (adult's
    # capital_gain in 10 ranges went unnoted then), the note stays and offers contiguous alone
    assert not any("separate ranges" in n for n in with_rules(plain).notes)
    (thinned,) = [
        n for n in with_rules(scattered, significant_cuts=True).notes if "separate ranges" in n
    ]
    assert "passed a significance test" in thinned and "contiguous: true" in thinned
    assert "significant_cuts: true" not in thinned


def test_a_condition_on_every_known_category_reads_as_such():
    from libre_lib.ops.display import RuleDisplay

    rng = np.random.RandomState(0)
    X = pd.DataFrame({"color": rng.choice(["red", "green", "blue"], 300), "x": rng.rand(300)})
    y = ((X["x"] > 0.5) | (X["color"] == "red")).astype(int)
    display = RuleDisplay.from_model(LibreClassifier(random_state=0).fit(X, y))
    every = Condition("color", CATEGORICAL, categories=("red", "green", "blue"))
    assert display.condition_text(every) == "color is not missing (any of its 3 known values)"
    blank_too = dataclasses.replace(every, missing=True)
    assert display.condition_text(blank_too) == "color is any of its 3 known values or missing"
    some = Condition("color", CATEGORICAL, categories=("red", "blue"))
    assert display.condition_text(some) == "color ∈ {blue, red}"
    # a display that does not know the column's categories lists them
    assert RuleDisplay().condition_text(every) == "color ∈ {blue, green, red}"
    # what the text says: a value unseen in training does not satisfy the condition
    assert not every.evaluate(pd.Series(["purple", None])).any()


def test_a_condition_on_most_categories_names_the_others():
    from libre_lib.ops.display import RuleDisplay

    known = ("single", "married", "widow", "separated", "divorced")
    display = RuleDisplay(known={"marital": frozenset(known)})
    most = Condition("marital", CATEGORICAL, categories=known[1:], missing=True)
    assert display.condition_text(most) == "marital ≠ single"
    no_blank = dataclasses.replace(most, missing=False)
    assert display.condition_text(no_blank) == "marital ≠ single, not missing"
    three = Condition("marital", CATEGORICAL, categories=known[2:])
    assert display.condition_text(three) == "marital ∉ {married, single}, not missing"
    two = Condition("marital", CATEGORICAL, categories=known[3:])  # shorter as it is
    assert display.condition_text(two) == "marital ∈ {divorced, separated}"
    labelled = dataclasses.replace(display, value_labels={"marital": {"single": "never wed"}})
    assert labelled.condition_text(most) == "marital ≠ never wed"
    # what the text says: a blank matches, a category new since training does not
    column = pd.Series(["married", None, "single", "engaged"])
    assert most.evaluate(column).tolist() == [True, True, False, False]


def test_the_notation_explains_a_reading_through_known_categories_only_when_a_rule_uses_it():
    from libre_lib.ops.report import build_report, render_html, render_markdown

    known = ("single", "married", "widow", "separated", "divorced")
    rng = np.random.RandomState(0)
    X = pd.DataFrame({"marital": rng.choice(known, 400), "x": rng.rand(400)})
    y = ((X["x"] > 0.6) & (X["marital"] != "single")).astype(int)
    model = LibreClassifier(random_state=0).fit(X, y)
    most = Condition("marital", CATEGORICAL, categories=known[1:])
    upper = Condition("x", NUMERIC, intervals=(Interval(0.6, math.inf),))

    def with_rule(*conditions):
        changed = copy.deepcopy(model)
        changed.rules_ = dataclasses.replace(model.rules_, rules=(Rule(conditions),), stats=())
        return changed

    reading, plain = with_rule(most, upper), with_rule(upper)
    for fitted, shown in ((reading, True), (plain, False)):
        report = build_report(fitted, X, y, title="t")
        assert report.known is shown
        for text in (render_markdown(report), render_html(report)):
            assert ("x ≠ c, x ∉ {c, d}" in text) is shown
            assert ("marital ≠ single, not missing" in text) is shown


def test_a_rule_much_less_precise_on_the_holdout_than_in_training_gets_a_note(liver):
    from libre_lib.ops.report import build_report, render_markdown

    model, X, y, _ = liver
    every = Rule((Condition("sgpt", NUMERIC, intervals=(Interval(-math.inf, math.inf),)),))
    fired, positive = np.ones(len(X), dtype=bool), (y == model.rules_.positive_class).to_numpy()
    share = positive[fired].mean()
    assert 0.3 < share < 0.8  # the holdout's precision of a rule that matches every row

    def with_stats(*stats, evaluated_on="holdout"):
        changed = empty_model(model)
        rules = (every,) * len(stats)
        changed.rules_ = dataclasses.replace(changed.rules_, rules=rules, stats=stats)
        return build_report(changed, X, y, title="t", evaluated_on=evaluated_on)

    sharp = RuleStats(40.0, 0.0, 40.0, 0.0)  # every one of 40 training rows positive
    fair = RuleStats(round(100 * share), 100 - round(100 * share), 0.0, 0.0)
    (note,) = [n for n in with_stats(fair, sharp).notes if n.startswith("Less precise")]
    assert "rule 2 (" in note and "rule 1 (" not in note
    assert f"{share:.3f} of {len(X):,} holdout rows against 1.000 of 40 training rows" in note
    assert "below 0.05 / 2 rules" in note
    assert "Less precise" in render_markdown(with_stats(fair, sharp))
    # none where the training precision is what the holdout shows, nor on training rows
    assert not any(n.startswith("Less precise") for n in with_stats(fair).notes)
    in_sample = with_stats(fair, sharp, evaluated_on="training")
    assert not any(n.startswith("Less precise") for n in in_sample.notes)


def test_precision_drop_p_is_the_hypergeometric_tail():
    from libre_lib.ops.baselines import precision_drop_p

    # 25 training rows (23 hits) and 13 other rows (7 hits): 30 hits among 38 rows; the chance
    # that the training rows draw 23 or more of them
    tail = sum(math.comb(30, k) * math.comb(8, 25 - k) for k in range(23, 26)) / math.comb(38, 25)
    assert precision_drop_p(23, 2, 7, 6) == pytest.approx(tail)
    assert precision_drop_p(7, 6, 23, 2) > 0.99  # the other way round: no drop


def test_the_simple_answers_text_describes_only_the_rows_the_table_shows():
    """With the positive class the majority, the table has no "Flag every row" line (it is the
    majority answer), and the text described it anyway."""
    from libre_lib.ops.report_sections import baseline_blocks

    def text_of(answers):
        table = pd.DataFrame(
            {
                "answer": answers,
                **{k: [0.5] * len(answers) for k in ("f1", "precision", "recall", "accuracy")},
                "flagged": [3] * len(answers),
            }
        )
        blocks = baseline_blocks(table, 1, majority_name="yes", n_rules=2, chosen_on_training=False)
        return next(body for kind, body in blocks if kind == "p")

    both = text_of(["model", "majority", "every_row", "best_rule"])
    assert "flagging every row" in both and ", flagging every row" in both
    assert both.endswith("(the gain of combining rules).")
    without = text_of(["model", "majority", "best_rule"])
    assert "flagging every row" not in without
    assert "accuracy) and the rule with the highest F1" in without


def test_a_fit_far_below_the_score_that_chose_it_is_a_caution(liver):
    """The estimators warn when a fit scores a training F1 more than 0.1 below the inner score
    that chose its settings (its random column subsets missed a combination the folds' learners
    used); a pipeline's reader sees no warning, so the report's cautions say it too, naming
    which choice it was: the search's or the "auto" one's."""
    from libre_lib.datasets import load_dataset

    model, X_test, y_test, info = liver
    X, y, _ = load_dataset("liver")
    X_train, _, y_train, _ = train_test_split(X, y, test_size=0.3, random_state=0, stratify=y)
    f1 = f1_score(y_train == info.positive_class, model.predict(X_train) == info.positive_class)
    rows = dict(X_train=X_train, y_train=y_train, title="t")

    def below(report):
        return [c for c in report.cautions if "far below" in c]

    assert model.auto_inner_score() is not None
    assert not below(build_report(model, X_test, y_test, **rows))  # as fitted: no caution
    assert not below(
        build_report(model, X_test, y_test, tuning_summary={"best_score": f1 + 0.09}, **rows)
    )
    (caution,) = below(
        build_report(model, X_test, y_test, tuning_summary={"best_score": f1 + 0.2}, **rows)
    )
    assert f"F1 {f1:.3f}, far below the {f1 + 0.2:.3f} with which the search" in caution
    assert not below(
        build_report(model, X_test, y_test, tuning_summary={"best_score": 1.0}, title="t")
    )
    accuracy = {"best_score": 1.0, "scoring": "accuracy"}  # not comparable with an F1
    assert not below(build_report(model, X_test, y_test, tuning_summary=accuracy, **rows))

    lucky = copy.deepcopy(model)  # the "auto" choice's inner score, without a search
    scores = lucky.auto_scores_
    lucky.auto_scores_ = {**scores, "mean_f1": np.ones_like(scores["mean_f1"])}
    assert lucky.auto_inner_score() == 1.0
    report = build_report(lucky, X_test, y_test, **rows)
    (caution,) = below(report)
    assert 'far below the 1.000 with which the "auto" choice' in caution
    assert "another random_state" in caution
    assert "far below the 1.000" in render_markdown(report)
    assert "far below the 1.000" in render_html(report)
    assert not below(build_report(empty_model(lucky), X_test, y_test, **rows))


def test_a_model_fitted_with_more_learners_says_so(liver):
    """A fit far below its inner score is fitted again with more learners (the thirty-fifth
    round); the report says how many learners its rules come from, and why."""
    model, X, y, _ = liver
    assert not any("learners" in n for n in build_report(model, X, y, title="t").notes)
    more = copy.deepcopy(model)
    more.learner_factor_ = 2
    report = build_report(more, X, y, title="t")
    (note,) = [n for n in report.notes if "learners" in n]
    drawn = len(model.feature_subsets_)  # the note counts the subsets the model holds
    assert note.startswith(f"The rules come from {drawn} learners, drawn for 2 × n_estimators")
    assert "more than 0.1 below the inner score" in note
    assert "fitted again with 2 times as many learners" in render_markdown(report)


def test_headline_rates_say_how_many_rows_they_rest_on():
    """hepatitis' holdout: recall 0.286 on 7 rows with the outcome, printed to three decimals
    with nothing to say it rests on 2 of 7 rows."""
    from libre_lib.ops.report import _cards, _metric_rows, metric_count

    values = {"f1": 0.4, "precision": 2 / 3, "recall": 2 / 7, "accuracy": 16 / 21,
              "n_rows": 21, "n_positive": 7, "n_flagged": 3, "n_rules": 2}  # fmt: skip
    assert metric_count(values, "precision") == "2 of 3 flagged rows"
    assert metric_count(values, "recall") == "2 of 7 rows with the outcome"
    assert metric_count(values, "accuracy") == "right on 16 of 21"
    assert metric_count(values, "f1") == "" and metric_count({"recall": 0.5}, "recall") == ""
    html = _cards(values, flagged=3)
    assert '<div class="count">2 of 7 rows with the outcome</div>' in html
    rows = dict(_metric_rows(values, 3))
    assert any(v == "0.286 (2 of 7 rows with the outcome)" for v in rows.values())


def test_the_auto_fallback_note_gives_the_inner_scores_it_moved_between():
    """The note said the first choice was passed over, not that the shipped settings scored
    0.102 in the inner folds against 0.145 for that choice and 0.177 for the best."""
    from types import SimpleNamespace

    from libre_lib.estimator import auto_refit_order
    from libre_lib.ops.report import auto_fallback_notes

    scores = {"params": [{}, {}, {}], "mean_f1": np.array([0.177, 0.145, 0.102]),
              "std_f1": np.array([0.2, 0.1, 0.1]), "mean_rules": np.array([5.0, 1.0, 2.0]),
              "ruled_folds": np.array([5, 5, 5]), "n_splits": 5}  # fmt: skip
    order = auto_refit_order(scores)
    assert order[0] == 1 and order[1] == 2  # fewest rules within the band, then the next
    model = SimpleNamespace(auto_fallbacks_=1, auto_scores_=scores)
    (note,) = auto_fallback_notes(model)
    assert note.endswith(
        "Their mean inner F1 is 0.102, against 0.145 for the first choice and 0.177 for the "
        "best combination."
    )
    assert auto_fallback_notes(SimpleNamespace(auto_fallbacks_=0)) == ()


def test_a_model_that_flags_most_rows_ahead_of_flag_all_by_chance_gets_a_caution():
    """liver: the model flagged 64 of 77 holdout rows and beat flagging every row by 0.010
    (p = 0.70) without a word, while pima, 0.0015 behind it (p = 0.98), opened with a long
    caution."""
    positive = np.zeros(77, dtype=bool)
    positive[:41] = True  # 41 with the outcome, 36 without
    fired = np.zeros((77, 1), dtype=bool)
    fired[:37, 0] = True  # 37 hits
    fired[41:68, 0] = True  # 27 false alarms: 64 flagged
    found = [c for c in _cautions_of(fired, positive, majority_positive=True) if "flags 64" in c]
    assert len(found) == 1
    assert found[0].startswith(
        "The model flags 64 of the 77 holdout rows (83%), and its F1 is only 0.010 above "
        "flagging every row's (0.705 against 0.695)."
    )
    assert "too often to tell" in found[0]
    fired[41:68, 0] = False  # 37 hits and no false alarm: few flags, no such caution
    assert not [c for c in _cautions_of(fired, positive, majority_positive=True) if "only" in c]


def _cautions_of(fired, positive, majority_positive=False):
    """The cautions of a model whose rules fire as ``fired`` on rows of ``positive``."""
    from libre_lib.ops.baselines import baselines, cautions

    table, best = baselines(fired, positive, majority_positive=majority_positive)
    return cautions(
        table, len(positive), majority_name="no", best_rule=best, best_rule_chosen_elsewhere=True
    )


def test_a_display_refuses_two_values_under_one_label():
    """The spec refused two values of a column under one label, the library API did not: the
    rules then read alike for different data."""
    from libre_lib.ops.display import RuleDisplay

    X = pd.DataFrame({"sex": [0, 1, 0, 1] * 10, "age": range(40)})
    y = pd.Series([0, 1, 0, 1] * 10)
    model = LibreClassifier(random_state=0, n_estimators=2).fit(X, y)
    with pytest.raises(ValueError, match=r"column sex: 0 and 1 have the same label 'x'"):
        RuleDisplay.from_model(model, value_labels={"sex": {0: "x", 1: "x"}})
    with pytest.raises(ValueError, match="the classes: 0 and 1 have the same label"):
        RuleDisplay.from_model(model, class_labels={0: "same", 1: "same"})
    same = RuleDisplay.from_model(model, value_labels={"sex": {1: "female", "1.0": "female"}})
    assert same.value("sex", 1) == "female" and same.value("sex", 0) == "0"


def test_the_words_of_a_quoted_name_are_not_marked_as_the_rules_keywords():
    """A column named "income AND age" (quoted in rules) had its AND marked as the rule's
    keyword in the HTML report, and a rules table cell split there into two conditions."""
    from libre_lib.ops.report import _rule_cell, _ruleset_html

    html_text = _ruleset_html('IF "income AND age" ∈ [1, 2) AND b = 1\nOR "OR" = 1\nTHEN y = 1')
    assert html_text.count('<span class="kw">') == 4  # IF, AND, OR, THEN
    assert html_text.count('<span class="line">') == 3  # one block a rule: wraps indent under it
    assert "&quot;income AND age&quot;" in html_text and "&quot;OR&quot; = 1" in html_text
    cell = _rule_cell('"income AND age" ∈ [1, 2) AND b ∈ {x}')
    assert cell.count('<span class="kw">AND</span>') == 1
    assert '<span class="cond">&quot;income AND age&quot; ∈ [1, 2)</span>' in cell


def test_commands_in_the_reports_sentences_read_as_code_in_html():
    """The HTML report showed a note's `libre models promote ...` with its backticks."""
    from libre_lib.datasets import load_dataset
    from libre_lib.ops.report import build_report, render_html

    X, y, info = load_dataset("haberman")
    model = LibreClassifier(positive_class=info.positive_class, random_state=0).fit(X, y)
    note = "Run `libre models promote haberman v0002-1a2b3c4d` to promote it; a<b stays text."
    html_text = render_html(build_report(model, X, y, title="t", notes=(note,)))
    assert "<code>libre models promote haberman v0002-1a2b3c4d</code>" in html_text
    assert "`libre models" not in html_text and "a&lt;b stays text" in html_text


def test_artifact_tables_escape_the_texts_the_prefect_ui_renders_as_markdown(report):
    """A rule or column text such as ``[l](javascript:...)`` was a link in the UI's table."""
    from dataclasses import replace

    rules = report.rules.copy()
    rules["text"] = "<img src=x> [l](javascript:alert(1))"
    tables = artifact_tables(replace(report, rules=rules))
    assert tables["rules"][0]["Rule"] == "\\<img src=x\\> \\[l\\](javascript:alert(1))"


def test_a_column_that_alone_tells_the_classes_apart_is_a_caution_of_the_report():
    """The pipeline shipped `IF leak = pos` with holdout F1 1.000 without a word; only
    LibreClassifier.fit warned of it."""
    from libre_lib.datasets import load_dataset

    X, y, info = load_dataset("pima")
    leaked = X.assign(leak=np.where(y == info.positive_class, "pos", "neg"))
    with pytest.warns(Warning, match="alone tells the classes apart"):
        model = LibreClassifier(random_state=0).fit(leaked, y)
    report = build_report(model, leaked, y, title="t", X_train=leaked, y_train=y)
    (caution,) = [c for c in report.cautions if "alone tells the classes apart" in c]
    assert caution.startswith("Column 'leak' alone tells the classes apart exactly")
    assert "features.exclude: [leak] in a spec" in caution
    assert "alone tells the classes apart" in render_markdown(report)
    plain = LibreClassifier(random_state=0).fit(X, y)
    report = build_report(plain, X, y, title="t", X_train=X, y_train=y)
    assert not [c for c in report.cautions if "tells the classes apart" in c]
    # the target plus noise: nearly, with its F1 (it shipped at holdout F1 0.99 without a word)
    noise = np.random.default_rng(0).normal(0, 0.01, len(y))
    noisy = X.assign(leak=(y == info.positive_class) + noise)
    with pytest.warns(Warning, match="nearly tells the classes apart"):
        model = LibreClassifier(random_state=0).fit(noisy, y)
    report = build_report(model, noisy, y, title="t", X_train=noisy, y_train=y)
    (caution,) = [c for c in report.cautions if "nearly tells the classes apart" in c]
    assert caution.startswith("Column 'leak' alone nearly tells the classes apart (F1 ")


def test_holdout_labels_the_model_does_not_know_are_refused(credit_data, credit_model):
    """Labels 'yes'/'no' for a model of '+'/'-' gave a report of F1 0.000 without a word; an
    unfitted model failed with an AttributeError."""
    from libre_lib.errors import ParameterError

    X, y, _ = credit_data
    relabelled = y.map({"+": "yes", "-": "no"})
    with pytest.raises(ParameterError, match=r"y_holdout holds none of the model's classes"):
        build_report(credit_model, X, relabelled, title="t")
    rare = y.copy()
    rare.iloc[0] = "?"  # a label training never held, beside known ones: counted as negative
    assert build_report(credit_model, X, rare, title="t").metrics["n_rows"] == len(y)
    with pytest.raises(ParameterError, match="needs a fitted model"):
        build_report(LibreClassifier(), X, y, title="t")
    assert build_report(credit_model, X, y, title="t").metrics["n_rows"] == len(y)


def test_a_bar_s_label_of_four_digit_counts_fits_in_figure_one():
    """With 1,234 correct and 766 wrong the label was cut at the figure's edge: "... 766 wr"."""
    from libre_lib.ops.figures import svg_rule_bars

    rules = pd.DataFrame(
        {
            "rule": [1, 2],
            "text": ["a", "b"],
            "true_positives": [1234, 20],
            "false_positives": [766, 3],
            "marginal_true_positives": [1234, 20],
        }
    )
    svg = svg_rule_bars(rules)
    width = float(re.search(r'viewBox="0 0 ([\d.]+) ', svg).group(1))
    x, text = re.search(r'<text x="([\d.]+)"[^>]*>(1,234 correct · 766 wrong)</text>', svg).groups()
    assert float(x) + 7 * len(text) <= width  # about 7 px a character at the figure's font
    assert "caught before" not in svg  # no rule here caught rows an earlier one had caught
    rules.loc[1, "marginal_true_positives"] = 5
    assert "Correctly flagged, caught before" in svg_rule_bars(rules)


def test_html_tables_name_their_rows_and_columns_for_screen_readers(credit_data, credit_model):
    """The confusion matrix's "Actually ..." cells were plain <td>s, bold by CSS only, so a
    screen reader could not say which row a count belongs to."""
    X, y, _ = credit_data
    page = render_html(build_report(credit_model, X, y, title="t", X_train=X, y_train=y))
    body_rows = re.findall(r"<tbody>(.*?)</tbody>", page, flags=re.S)
    assert body_rows and all(
        row.startswith('<th scope="row"')
        for rows in body_rows
        for row in re.findall(r"<tr>(.*?)(?=<tr>|$)", rows.strip(), flags=re.S)
    )
    assert '<th scope="row">Actually target = +</th>' in page
    assert '<th scope="col"' in page and "<th>" not in page.split("<tbody>", 1)[1]


def test_the_report_opens_with_what_the_model_does_in_plain_words(credit_data, credit_model):
    """A stakeholder met a statistical caution first, and the figures only as metrics."""
    X, y, _ = credit_data
    report = build_report(credit_model, X, y, title="t", X_train=X, y_train=y)
    c = report.confusion
    n = sum(int(c[k]) for k in ("tp", "fp", "fn", "tn"))
    flagged, right = int(c["tp"]) + int(c["fp"]), int(c["tp"]) + int(c["tn"])
    md = render_markdown(report)
    summary = next(line for line in md.splitlines() if line.startswith("In short:"))
    k = len(report.rules)
    assert k > 1 and summary.startswith(
        f"In short: on {n:,} holdout rows the {k} rules flag {flagged:,} as"
    )
    assert f"The model is right on {right:,} of the {n:,} rows" in summary
    assert f"for always answering “{report.majority_name}”" in summary
    assert md.index("In short:") < md.index("## How to read this")
    assert '<p class="summary">In short: on' in render_html(report)


def test_the_discretization_table_names_a_labelled_column_s_source():
    """Rules and the discretization table showed only labels ("glucose"), while the
    expectations table showed only names ("plasma_glucose"): nothing tied the two."""
    from libre_lib.discretization import Discretization, FeatureBins
    from libre_lib.ops.display import RuleDisplay
    from libre_lib.ops.report_sections import discretization_table

    feature = FeatureBins("plasma_glucose", NUMERIC, cuts=(100.0, 140.0), has_missing=False)
    other = FeatureBins("age", NUMERIC, cuts=(30.0,), has_missing=False)
    display = RuleDisplay(column_labels={"plasma_glucose": "glucose"})
    table = discretization_table(Discretization((feature, other)), display)
    assert table["column"].tolist() == ["glucose (plasma_glucose)", "age"]


def test_in_short_speaks_of_one_rule_of_training_rows_and_of_no_rows():
    from libre_lib.ops.report_sections import in_short

    confusion = {"tp": 3, "fp": 1, "fn": 2, "tn": 4}
    one = in_short(confusion, ("yes", "no"), 1, "no", "training")
    assert one.startswith("In short: on 10 training rows the rule flags 4 as “yes”; 3 of")
    assert "and it finds 3 of the 5 rows that have it (60.0%)" in one
    assert one.endswith(
        "right on 7 of the 10 rows (70.0%), against 5 (50.0%) for always answering “no”."
    )
    assert in_short({"tp": 0, "fp": 0, "fn": 0, "tn": 0}, ("yes", "no"), 2, "no") is None
    lone = in_short({"tp": 0, "fp": 2, "fn": 1, "tn": 95}, ("yes", "no"), 1, "no")
    assert "finds 0 of the 1 row that has it" in lone  # "the 1 row that have it"
    assert in_short(confusion, ("yes", "no"), 0, "no") is None  # no rule: its caution says it
