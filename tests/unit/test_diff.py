"""Rule-set diffs and metric deltas, and their stakeholder Markdown."""

import math

import pytest

from libre_lib.discretization import CATEGORICAL, NUMERIC
from libre_lib.ops.diff import (
    ChampionChanges,
    RuleDiff,
    diff_rules,
    format_delta,
    metric_deltas,
    render_diff_markdown,
    shown_delta,
    summary_sentence,
)
from libre_lib.rules import Condition, Interval, Rule, RuleSet


def num(feature, low=-math.inf, high=math.inf, missing=False):
    return Condition(feature, NUMERIC, intervals=(Interval(low, high),), missing=missing)


def cat(feature, *values):
    return Condition(feature, CATEGORICAL, categories=values)


def rules(*rule_list, target="diabetes"):
    return RuleSet(tuple(rule_list), target=target, positive_class=1, negative_class=0)


GLU_HIGH = Rule((num("glucose", 158), num("pressure", 56)))
GLU_BMI = Rule((num("glucose", 110, 158), num("bmi", 30.7)))
AGE = Rule((num("age", 40),))
SEX = Rule((cat("sex", "f"),))


class _Version:
    version = "v0004-aaaaaaaa"


def test_identical_rule_sets_give_an_empty_diff():
    old = rules(GLU_HIGH, GLU_BMI)
    diff = diff_rules(old, rules(GLU_HIGH, GLU_BMI))
    assert diff.is_empty
    assert diff.added == diff.removed == diff.changed == ()
    assert diff.unchanged == (GLU_HIGH, GLU_BMI)
    assert diff.counts() == {"added": 0, "removed": 0, "changed": 0, "unchanged": 2}
    text = render_diff_markdown(diff, metric_deltas({"f1": 0.5}, {"f1": 0.5}), "v1", "v2")
    assert "v2 has exactly the same rules as v1." in text
    assert "Rules added" not in text and "Rules removed" not in text
    assert "| F1 score | 0.500 | 0.500 | = no change |" in text


def test_empty_rule_sets():
    assert diff_rules(rules(), rules()).is_empty
    diff = diff_rules(rules(), rules(AGE))
    assert diff.added == (AGE,) and not diff.is_empty
    diff = diff_rules(rules(AGE), rules())
    assert diff.removed == (AGE,)
    assert summary_sentence(diff, "v1", "v2") == "Compared with v1, v2 has 1 rule removed."


def test_reordered_rules_and_conditions_are_unchanged():
    swapped = Rule(tuple(reversed(GLU_HIGH.conditions)))
    assert swapped != GLU_HIGH  # the rule objects differ ...
    diff = diff_rules(rules(GLU_HIGH, AGE), rules(AGE, swapped))
    assert diff.is_empty  # ... but AND and OR do not care about order
    assert len(diff.unchanged) == 2


def test_added_removed_changed_unchanged():
    moved = Rule((num("glucose", 150), num("pressure", 56)))  # threshold moved 158 -> 150
    old = rules(GLU_HIGH, GLU_BMI, AGE)
    new = rules(moved, GLU_BMI, SEX)
    diff = diff_rules(old, new)
    assert diff.unchanged == (GLU_BMI,)
    assert diff.added == (SEX,)
    assert diff.removed == (AGE,)
    assert len(diff.changed) == 1
    change = diff.changed[0]
    assert (change.before, change.after) == (GLU_HIGH, moved)
    assert (change.before_index, change.after_index) == (0, 0)
    assert [c.feature for c in change.conditions] == ["glucose"]
    assert not diff.is_empty
    assert diff.to_dict()["changed_rules"] == [{"before": str(GLU_HIGH), "after": str(moved)}]
    assert summary_sentence(diff, "v1", "v2") == (
        "Compared with v1, v2 has 1 rule added, 1 removed, 1 changed and 1 unchanged."
    )


def test_changed_needs_the_same_feature_set():
    extra = Rule((num("glucose", 158), num("pressure", 56), num("bmi", 30)))
    diff = diff_rules(rules(GLU_HIGH), rules(extra))
    assert diff.changed == ()
    assert diff.added == (extra,) and diff.removed == (GLU_HIGH,)


def test_changed_pairs_the_most_similar_rules():
    a = Rule((num("x", 1), num("y", 5)))
    b = Rule((num("x", 2), num("y", 9)))
    b2 = Rule((num("x", 3), num("y", 9)))  # shares y with b, nothing with a
    a2 = Rule((num("x", 1), num("y", 6)))  # shares x with a
    diff = diff_rules(rules(a, b), rules(b2, a2))
    pairs = {(c.before, c.after) for c in diff.changed}
    assert pairs == {(a, a2), (b, b2)}
    assert [c.after_index for c in diff.changed] == [0, 1]  # in the new set's order


def test_condition_level_changes_include_categories_and_missing():
    before = Rule((cat("sex", "f"), num("age", 40)))
    after = Rule((cat("sex", "f", "m"), num("age", 40, missing=True)))
    (change,) = diff_rules(rules(before), rules(after)).changed
    assert [c.feature for c in change.conditions] == ["sex", "age"]
    text = render_diff_markdown(diff_rules(rules(before), rules(after)), {}, "v1", "v2")
    assert "sex ∈ {f} → sex ∈ {f, m}" in text
    assert "age ∈ \\[40, max\\] → age ∈ \\[40, max\\] ∪ missing" in text


def test_duplicate_rules_match_one_to_one():
    diff = diff_rules(rules(AGE, AGE), rules(AGE))
    assert diff.unchanged == (AGE,) and diff.removed == (AGE,)


def test_outcome_change_is_not_empty():
    old = rules(AGE)
    new = RuleSet((AGE,), target="diabetes", positive_class="yes", negative_class="no")
    diff = diff_rules(old, new)
    assert diff.outcome_changed and not diff.is_empty
    text = render_diff_markdown(diff, {}, "v1", "v2")
    assert "The predicted outcome changed" in text and "THEN diabetes = yes" in text


def test_metric_deltas():
    old = {"f1": 0.58, "recall": 0.7, "n_rules": 3, "custom": 2.0, "note": "text"}
    new = {"f1": 0.612, "recall": 0.7, "n_rules": 2, "precision": 0.5, "flag": True}
    deltas = metric_deltas(old, new)
    assert list(deltas) == ["f1", "precision", "recall", "n_rules", "custom"]
    assert deltas["f1"]["before"] == 0.58 and deltas["f1"]["after"] == 0.612
    assert deltas["f1"]["delta"] == pytest.approx(0.032)
    assert deltas["precision"] == {"before": None, "after": 0.5, "delta": None}
    assert deltas["custom"] == {"before": 2.0, "after": None, "delta": None}
    assert deltas["n_rules"]["delta"] == -1
    assert metric_deltas(None, {"f1": 0.5}) == {"f1": {"before": None, "after": 0.5, "delta": None}}
    assert metric_deltas({"f1": float("nan")}, {}) == {}


def test_format_delta_arrows():
    assert format_delta("f1", 0.032) == "▲ +0.032"
    assert format_delta("f1", -0.02) == "▼ −0.020"
    assert format_delta("f1", 0.0000001) == "= no change"
    assert format_delta("n_rules", -1) == "▼ −1"
    assert format_delta("f1", None) == "–"
    # the change of the figures as shown: 0.648 -> 0.593 is -0.055 (unrounded -3/54 = -0.0556)
    assert format_delta("recall", shown_delta("recall", 35 / 54, 32 / 54)) == "▼ −0.055"
    assert shown_delta("n_rules", None, 3) is None


def test_render_diff_markdown_for_stakeholders():
    moved = Rule((num("glucose", 150), num("pressure", 56)))
    diff = diff_rules(rules(GLU_HIGH, AGE, GLU_BMI), rules(moved, SEX, GLU_BMI))
    deltas = metric_deltas({"f1": 0.58, "n_rules": 3}, {"f1": 0.612, "n_rules": 3})
    text = render_diff_markdown(
        diff, deltas, "v0003-12345678", _Version(), column_labels={"age": "Age <years>"}
    )
    assert text.startswith("## Changes since v0003-12345678\n")
    assert "Compared with v0003-12345678, v0004-aaaaaaaa has 1 rule added" in text
    assert "### Rules added\n\n- sex ∈ {f}" in text
    assert "### Rules removed\n\n- Age \\<years\\> ∈ \\[40, max\\]" in text
    assert "### Rules changed: before → after" in text
    assert "| Before | After | What changed |" in text
    assert "glucose ∈ \\[158, max\\] → glucose ∈ \\[150, max\\]" in text
    assert "1 rule stayed the same." in text
    assert "| Measure | v0003-12345678 | v0004-aaaaaaaa | Change |" in text
    assert "| F1 score | 0.580 | 0.612 | ▲ +0.032 |" in text
    assert "| Rules | 3 | 3 | = no change |" in text
    assert "<" not in text.replace("\\<", "")  # no raw HTML


def test_markdown_is_plain_gfm():
    markdown_it = pytest.importorskip("markdown_it")
    moved = Rule((num("glucose", 150), num("pressure", 56)))
    diff = diff_rules(rules(GLU_HIGH, AGE), rules(moved, SEX))
    text = render_diff_markdown(diff, metric_deltas({"f1": 0.5}, {"f1": 0.6}), "v1", "v2")
    parser = markdown_it.MarkdownIt("commonmark").enable("table")
    tokens = parser.parse(text)
    assert not [t for t in tokens if t.type == "html_block"]
    assert sum(t.type == "table_open" for t in tokens) == 2
    assert sum(t.type == "bullet_list_open" for t in tokens) == 2


def test_champion_changes_to_dict():
    diff = diff_rules(rules(AGE), rules(SEX))
    changes = ChampionChanges("v1", "v2", diff, metric_deltas({"f1": 0.5}, {"f1": 0.6}), "ok")
    data = changes.to_dict()
    assert data["diff"]["added_rules"] == [str(SEX)]
    assert data["deltas"]["f1"]["after"] == 0.6 and data["decision"] == "ok"
    assert isinstance(RuleDiff().is_empty, bool) and RuleDiff().is_empty


def test_columns_a_new_version_gained_or_lost_are_named():
    """A row-number column appended upstream became a feature of a spec without
    features.include, and a model whose rule tests it became champion without a word."""
    from libre_lib.ops.diff import column_changes

    class Rule:
        features = ("new_col", "a15")

    assert column_changes(["a1", "a2"], ["a1", "a2"], [Rule()]) is None
    said = column_changes(["a1", "a14", "a15"], ["a1", "a15", "new_col", "tag"], [Rule()])
    assert said == (
        "It reads columns 'new_col', 'tag' that the champion did not read; its rules test "
        "'new_col': check that this column belongs among the features (a spec's "
        "features.include lists them). It no longer reads column 'a14'."
    )
    assert column_changes(["a1"], ["a1", "tag"], []) == (
        "It reads column 'tag' that the champion did not read."
    )
