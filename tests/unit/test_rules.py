"""Rules as value objects and the mapping from boundary points back to rules."""

import math

import numpy as np
import pandas as pd
import pytest

from libre_lib.discretization import CATEGORICAL, NUMERIC, Discretization, FeatureBins
from libre_lib.rules import (
    Condition,
    Interval,
    Rule,
    RuleSet,
    RuleStats,
    rule_from_point,
    rule_text,
    rules_from_points,
)

INF = math.inf

# The appendix example: CPU in [0, 81), [81, 95), [95, max]; MEM in [0, 85), [85, max].
APPENDIX = Discretization(
    (FeatureBins("CPU", NUMERIC, cuts=(81.0, 95.0)), FeatureBins("MEM", NUMERIC, cuts=(85.0,)))
)


def point(text: str) -> np.ndarray:
    return np.array([c == "1" for c in text.replace(" ", "")], dtype=bool)


# --- Interval / Condition canonical form ---------------------------------------------------


def test_interval_contains_is_half_open():
    interval = Interval(81.0, 95.0)
    values = np.array([80.99, 81.0, 94.99, 95.0, np.nan])
    assert interval.contains(values).tolist() == [False, True, True, False, False]


def test_empty_interval_is_refused():
    with pytest.raises(ValueError, match="empty interval"):
        Interval(3.0, 3.0)


def test_condition_merges_adjacent_and_overlapping_intervals_in_order():
    condition = Condition(
        "x",
        NUMERIC,
        intervals=(Interval(5.0, 6.0), Interval(1.0, 2.0), Interval(-INF, 1.0), Interval(5.5, 7)),
    )
    assert condition.intervals == (Interval(-INF, 2.0), Interval(5.0, 7.0))


def test_condition_sorts_and_deduplicates_categories():
    condition = Condition("os", CATEGORICAL, categories=("windows", "linux", "mac", "linux"))
    assert condition.categories == ("linux", "mac", "windows")


def test_condition_sorts_mixed_type_categories_deterministically():
    condition = Condition("c", CATEGORICAL, categories=("b", 2, "a", 1))
    assert condition.categories == (1, 2, "a", "b")


def test_condition_allowing_nothing_is_refused():
    with pytest.raises(ValueError, match="condition on 'x' allows nothing"):
        Condition("x", NUMERIC)


def test_equal_rules_are_equal_and_hash_alike():
    a = Rule(
        (
            Condition("CPU", NUMERIC, intervals=(Interval(81.0, 95.0), Interval(95.0, INF))),
            Condition("os", CATEGORICAL, categories=("b", "a")),
        )
    )
    b = Rule(
        (
            Condition("CPU", NUMERIC, intervals=(Interval(81.0, INF),)),
            Condition("os", CATEGORICAL, categories=("a", "b")),
        )
    )
    assert a == b
    assert hash(a) == hash(b)
    assert len({a, b}) == 1
    assert a != Rule((Condition("CPU", NUMERIC, intervals=(Interval(81.0, INF),)),))


def test_rule_with_two_conditions_on_one_feature_is_refused():
    c = Condition("x", NUMERIC, intervals=(Interval(0.0, 1.0),))
    with pytest.raises(ValueError, match="one condition per feature"):
        Rule((c, c))


def test_ruleset_equality_ignores_stats():
    rule = Rule((Condition("x", NUMERIC, intervals=(Interval(0.0, 1.0),)),))
    with_stats = RuleSet((rule,), stats=(RuleStats(3, 1, 3, 1),))
    assert with_stats == RuleSet((rule,))
    assert with_stats != RuleSet((rule,), positive_class="yes")


def test_rule_stats_precision():
    assert RuleStats(3.0, 1.0, 2.0, 0.0).precision == 0.75
    assert RuleStats(0.0, 0.0, 0.0, 0.0).precision == 0.0


def test_ruleset_len_iter_and_n_atoms():
    r1 = Rule((Condition("x", NUMERIC, intervals=(Interval(0.0, 1.0),)),))
    r2 = Rule(
        (
            Condition("x", NUMERIC, intervals=(Interval(0.0, 1.0),)),
            Condition("y", NUMERIC, missing=True),
        )
    )
    rules = RuleSet((r1, r2))
    assert len(rules) == 2
    assert list(rules) == [r1, r2]
    assert rules[1] is r2
    assert rules.n_atoms == 1.5
    assert RuleSet(()).n_atoms == 0.0


# --- rule_from_point -------------------------------------------------------------------------


def test_appendix_point_11000_is_cpu_at_least_95():
    rule = rule_from_point(point("110 00"), APPENDIX)
    assert rule == Rule((Condition("CPU", NUMERIC, intervals=(Interval(95.0, INF),)),))
    assert str(rule) == "CPU ∈ [95, max]"


def test_appendix_point_10010_merges_cpu_intervals():
    rule = rule_from_point(point("100 10"), APPENDIX)
    assert rule == Rule(
        (
            Condition("CPU", NUMERIC, intervals=(Interval(81.0, INF),)),
            Condition("MEM", NUMERIC, intervals=(Interval(85.0, INF),)),
        )
    )
    assert str(rule) == "CPU ∈ [81, max] AND MEM ∈ [85, max]"


def test_paper_section_3_1_point_01_100():
    # "01 100" -> "f1 in [0, 40) and f2 in [30, 100]" (our intervals are open at the ends)
    disc = Discretization(
        (FeatureBins("f1", NUMERIC, cuts=(40.0,)), FeatureBins("f2", NUMERIC, cuts=(30.0, 60.0)))
    )
    rule = rule_from_point(point("01 100"), disc)
    assert str(rule) == "f1 ∈ [min, 40) AND f2 ∈ [30, max]"


def test_unconstrained_features_get_no_condition():
    assert rule_from_point(point("000 00"), APPENDIX) == Rule(())
    assert str(rule_from_point(point("000 00"), APPENDIX)) == "TRUE"
    assert rule_from_point(point("000 01"), APPENDIX).features == ["MEM"]


MISSING = Discretization(
    (
        FeatureBins("age", NUMERIC, cuts=(40.0,), has_missing=True),  # bits: <40, >=40, missing
        FeatureBins("os", CATEGORICAL, categories=("linux", "mac", "win"), has_missing=True),
    )
)


def test_missing_bin_allowed_with_values():
    rule = rule_from_point(point("100 0000"), MISSING)
    (age,) = rule.conditions
    assert age.intervals == (Interval(40.0, INF),)
    assert age.missing
    assert str(rule) == "age ∈ [40, max] ∪ missing"


def test_missing_only():
    rule = rule_from_point(point("110 0000"), MISSING)
    assert str(rule) == "age is missing"
    rule = rule_from_point(point("000 1110"), MISSING)
    assert str(rule) == "os is missing"


def test_all_values_but_not_missing():
    rule = rule_from_point(point("001 0001"), MISSING)
    assert str(rule) == "age ∈ [min, max] AND os ∈ {linux, mac, win}"


def test_categorical_condition_from_point():
    rule = rule_from_point(point("000 0100"), MISSING)
    assert rule == Rule((Condition("os", CATEGORICAL, categories=("linux", "win"), missing=True),))
    assert str(rule) == "os ∈ {linux, win} ∪ missing"


def test_rules_from_points():
    rules = rules_from_points([point("110 00"), point("100 10")], APPENDIX)
    assert [str(r) for r in rules] == ["CPU ∈ [95, max]", "CPU ∈ [81, max] AND MEM ∈ [85, max]"]


# --- evaluation on raw columns ---------------------------------------------------------------


def test_rule_evaluation_on_raw_values_matches_the_appendix_table():
    frame = pd.DataFrame(
        {"CPU": [95, 80, 81, 10, 10, 82, 85, 81], "MEM": [10, 10, 85, 85, 10, 10, 10, 10]}
    )
    rules = RuleSet(tuple(rules_from_points([point("110 00"), point("100 10")], APPENDIX)))
    fired = rules.fired(frame)
    assert fired[:, 0].tolist() == [True, False, False, False, False, False, False, False]
    assert fired[:, 1].tolist() == [False, False, True, False, False, False, False, False]


def test_condition_evaluation_with_missing_and_unseen_values():
    age = Condition("age", NUMERIC, intervals=(Interval(40.0, INF),), missing=True)
    assert age.evaluate(pd.Series([10.0, 40.0, np.nan, 1e9])).tolist() == [False, True, True, True]
    strict = Condition("age", NUMERIC, intervals=(Interval(40.0, INF),))
    assert strict.evaluate(pd.Series([np.nan, 50.0])).tolist() == [False, True]
    os_ = Condition("os", CATEGORICAL, categories=("linux",))
    values = pd.Series(["linux", "beos", None, np.nan], dtype=object)
    assert os_.evaluate(values).tolist() == [True, False, False, False]
    only_missing = Condition("os", CATEGORICAL, missing=True)
    assert only_missing.evaluate(values).tolist() == [False, False, True, True]


def test_empty_rule_fires_everywhere_and_empty_ruleset_nowhere():
    frame = pd.DataFrame({"x": [1.0, 2.0]})
    assert Rule(()).evaluate(frame).tolist() == [True, True]
    assert RuleSet(()).fired(frame).shape == (2, 0)


def test_rule_evaluate_with_a_shared_condition_cache():
    frame = pd.DataFrame({"x": [0.5, 2.0, np.nan, 0.1], "c": ["a", "b", "a", None]})
    x = Condition("x", NUMERIC, intervals=(Interval(0.0, 1.0),))
    c = Condition("c", CATEGORICAL, categories=("a",), missing=True)
    rules = [Rule((x, c)), Rule((x,)), Rule((c,))]
    cache: dict = {}
    for rule in rules:
        np.testing.assert_array_equal(rule.evaluate(frame, cache), rule.evaluate(frame))
    assert set(cache) == {x, c}  # each distinct condition evaluated once, then reused
    assert rules[0].evaluate(frame, cache).tolist() == [True, False, False, True]


def test_a_rule_set_as_a_table():
    from libre_lib import LibreClassifier
    from libre_lib.datasets import load_dataset

    X, y, info = load_dataset("credit_approval")
    model = LibreClassifier(positive_class=info.positive_class, random_state=0, max_rules=3)
    model.fit(X, y)
    table = model.rules_.to_frame()
    assert table["rule"].tolist() == list(range(1, len(model.rules_) + 1))
    assert table["text"].tolist() == [rule_text(r) for r in model.rules_]
    stats = model.rules_.stats
    assert table["precision"].tolist() == [s.precision for s in stats]
    assert table["new_positives"].sum() == sum(s.new_positives for s in stats)
    bare = RuleSet(model.rules_.rules)  # no statistics: text columns only
    assert list(bare.to_frame().columns) == ["rule", "text", "n_conditions", "features"]


def test_categories_that_would_read_as_several_are_quoted_in_a_set():
    """ "{Married, spouse present, Never married}" read as three categories, not two."""
    from libre_lib.ops.display import RuleDisplay
    from libre_lib.rules import condition_text, set_item_text

    condition = Condition(
        "marital", CATEGORICAL, categories=("Married, spouse present", "Never married", "")
    )
    text = '{"", "Married, spouse present", Never married}'
    assert condition_text(condition) == f"marital ∈ {text}"
    assert RuleDisplay().condition_text(condition) == f"marital ∈ {text}"
    labelled = RuleDisplay(value_labels={"marital": {"Never married": "single {never}"}})
    assert '"single {never}"' in labelled.condition_text(condition)
    assert [set_item_text(v) for v in ("a b", " a", 'say "hi"', 3)] == [
        "a b",
        '" a"',
        '"say \\"hi\\""',
        "3",
    ]


def test_categories_that_would_read_as_part_of_the_rule_are_quoted():
    """ "dept ∈ {R AND D, Sales} AND ..." hid where the condition ends; "x = a=b" too."""
    from libre_lib.ops.display import RuleDisplay
    from libre_lib.rules import set_item_text

    quoted = ("R AND D", "OR", "a=b", "≠ 3", "in ∈ out", "x ∪ y", "≥ 65", "<30", "missing")
    assert [set_item_text(v) for v in quoted] == [f'"{v}"' for v in quoted]
    assert [set_item_text(v) for v in ("Rand", "ORANGE", "Oregon", "D&D", "missing data")] == [
        "Rand", "ORANGE", "Oregon", "D&D", "missing data"
    ]  # fmt: skip
    one = Condition("dept", CATEGORICAL, categories=("R AND D",))
    assert RuleDisplay().condition_text(one) == 'dept = "R AND D"'


def test_a_text_that_spells_as_another_category_is_quoted():
    """A column mixing the number 25 and the text "25" (two categories the model tells apart):
    the text is quoted, so the set does not seem to list a value twice."""
    from libre_lib.rules import condition_text

    mixed = Condition("age", CATEGORICAL, categories=(25, 26, "25", "27"))
    assert condition_text(mixed) == 'age ∈ {25, "25", 26, "27"}'
    plain = Condition("age", CATEGORICAL, categories=(25, "26"))
    assert condition_text(plain) == "age ∈ {25, 26}"  # nothing to tell apart: as before


def test_a_column_name_that_reads_as_part_of_the_rule_is_quoted():
    """`IF income AND age ∈ [...] AND OR ∈ {p, q}` could not be read back, by a person or a
    parser; categories were quoted in that case, column names not."""
    from libre_lib.rules import Condition, Interval, condition_text

    numeric = Condition("income AND age", "numeric", (Interval(0.3, float("inf")),))
    assert condition_text(numeric) == '"income AND age" ∈ [0.3, max]'
    assert condition_text(Condition("OR", "categorical", (), ("p", "q"))) == '"OR" ∈ {p, q}'
    plain = Condition("blood pressure", "numeric", (Interval(float("-inf"), 80.0),))
    assert condition_text(plain) == "blood pressure ∈ [min, 80)"


def test_a_control_character_in_a_column_name_is_shown_escaped():
    """A right-to-left override in a column name reached the report as is, reordering how the
    rest of the rule displays."""
    from libre_lib.rules import Condition, Interval, condition_text

    condition = Condition("name \u202e", "numeric", (Interval(3.0, float("inf")),))
    assert condition_text(condition) == '"name \\u202e" ∈ [3, max]'


def test_a_notebook_shows_rules_and_conditions_as_text(credit_model):
    """`clf.rules_` as a cell's last line showed a dataclass dump thousands of characters
    long; str() of a condition or an interval too; a slice of the rules was a plain tuple."""

    class Printer:  # what IPython hands _repr_pretty_
        def __init__(self):
            self.out = ""

        def text(self, text):
            self.out += text

    def pretty(obj) -> str:
        printer = Printer()
        obj._repr_pretty_(printer, False)
        return printer.out

    rules = credit_model.rules_
    assert pretty(rules) == str(rules) and pretty(rules[0]) == str(rules[0])
    condition = rules[0].conditions[0]
    assert str(condition).startswith(f"{condition.feature} ∈ ")
    first_two = rules[:2]
    assert type(first_two) is type(rules) and len(first_two) == 2
    assert first_two.stats == rules.stats[:2] and str(first_two).startswith("IF ")


def test_a_slice_keeps_statistics_only_for_the_first_rules(credit_model):
    """rules_[1:] kept rule 2's "new positives" (what it added to rule 1), wrong without it."""
    rules = credit_model.rules_
    assert len(rules) >= 3
    assert rules[:2].stats == rules.stats[:2]
    assert rules[1:].stats == () and len(rules[1:]) == len(rules) - 1
    assert rules[::-1].stats == ()


def test_the_outcome_quotes_a_target_or_class_that_would_read_as_rule_text():
    """THEN printed the target's name and the classes as written: a target named
    "is churned AND x" or a class " yes" (a leading space) read as part of the rule."""
    import pandas as pd

    from libre_lib import LibreClassifier
    from libre_lib.ops.display import RuleDisplay
    from libre_lib.ops.report import plain_ruleset_text

    X = pd.DataFrame({"a": [i % 50 for i in range(100)]})
    y = pd.Series([" yes" if i % 50 > 25 else "no" for i in range(100)], name="churned AND x")
    model = LibreClassifier(random_state=0, n_estimators=2).fit(X, y)
    outcome = 'THEN "churned AND x" = " yes" ELSE "churned AND x" = no'
    assert str(model.rules_).endswith(outcome)
    assert plain_ruleset_text(model.rules_).endswith(outcome)
    display = RuleDisplay.from_model(model, target_label="churned AND x")
    assert display.ruleset_text(model.rules_).endswith(outcome)
    # without a target_label, the target the rules name (it read "target = no")
    assert RuleDisplay.from_model(model).ruleset_text(model.rules_).endswith(outcome)
    labelled = RuleDisplay.from_model(model, class_labels={" yes": "churned"})
    assert labelled.outcome_text(model.rules_) == 'THEN churned ELSE "churned AND x" = no'


@pytest.mark.parametrize("dtype", ["float32", "Float32", "float16"])
def test_a_narrower_float_column_is_compared_in_its_own_type(dtype):
    """float32(0.585) is 0.58499998 in float64, below the cut point 0.585: the same data given
    as float32 fell out of [0.585, ...) and 7 of credit-approval's predictions changed."""
    condition = Condition("x", NUMERIC, (Interval(0.585, 2.5),))
    column = pd.Series([0.585, 0.58, 2.4, 2.5, None], dtype=dtype)
    assert condition.evaluate(column).tolist() == [True, False, True, False, False]
    assert not condition.evaluate(column.astype("float64"))[0]  # widened: 0.58499998 < 0.585
    beyond = Condition("x", NUMERIC, (Interval(-math.inf, 1e39),))  # a cut float32 cannot hold
    assert beyond.evaluate(pd.Series([1.0], dtype="float32")).tolist() == [True]


def test_a_model_predicts_the_same_data_alike_in_float32():
    from libre_lib import LibreClassifier
    from libre_lib.datasets import load_dataset

    X, y, _ = load_dataset("credit_approval")
    narrow = X.astype({c: "float32" for c in X.select_dtypes("number").columns})
    settings = dict(max_intervals=None, max_rules=8, alpha=0.9, conflict_tolerance=0)
    model = LibreClassifier(random_state=0, **settings).fit(X, y)
    np.testing.assert_array_equal(model.predict(narrow), model.predict(X))


@pytest.mark.parametrize("dtype", ["float32", "Float32"])
def test_a_model_fitted_on_float32_has_the_rules_of_its_decimals(dtype):
    """Cut points of a float32 fit were the widened values (bmi ∈ [26.399999618530273, max]):
    another model JSON than the float64 fit's, and 5 of pima's rows predicted otherwise when
    they came back as float64 (values on a cut point), with false drift at the range's ends."""
    from libre_lib import LibreClassifier
    from libre_lib.datasets import load_dataset
    from libre_lib.ops.contract import DataContract

    X, y, _ = load_dataset("pima")
    narrow = X.astype({c: dtype for c in X.select_dtypes("float").columns})
    wide = LibreClassifier(random_state=0).fit(X, y)
    model = LibreClassifier(random_state=0).fit(narrow, y)
    assert str(model.rules_) == str(wide.rules_) and "99999" not in model.to_json()
    np.testing.assert_array_equal(model.predict(X), model.predict(narrow))
    np.testing.assert_array_equal(model.predict_proba(X), wide.predict_proba(narrow))
    contract = DataContract.from_model(model, narrow)
    assert not contract.check(X).warnings and not contract.check(narrow).warnings


def test_categories_of_numbers_and_texts_list_the_numbers_by_value():
    """They read {10, 11, 2, 9, unk}: numbers sorted as text."""
    condition = Condition("code", CATEGORICAL, categories=(10, 11, 2, 9, "unk", np.int64(3)))
    assert str(condition) == "code ∈ {2, 3, 9, 10, 11, unk}"


def test_categories_that_write_numbers_are_listed_by_value_and_control_characters_quoted():
    """A pipeline reads categories as text: pregnancies ∈ {0, 1, 10, 11, ..., 2, 3}. A
    category or class holding a line break, a terminal escape or a right-to-left override was
    printed as it is (a rule split over lines, a terminal recoloured, text reordered)."""
    from libre_lib.rules import class_text, condition_text

    codes = Condition("n", CATEGORICAL, categories=("0", "1", "10", "11", "2", "x", "nan"))
    assert condition_text(codes) == "n ∈ {0, 1, 2, 10, 11, nan, x}"
    tricky = Condition("c", CATEGORICAL, categories=("safe", "evil\u202eDNA", "two\nlines"))
    assert condition_text(tricky) == 'c ∈ {"evil\\u202eDNA", safe, "two\\nlines"}'
    assert class_text("y", "yes\x1b[7m") == 'y = "yes\\u001b[7m"'


def test_a_column_named_by_a_number_is_quoted_so_it_does_not_read_as_a_value():
    """pima with columns named 0..7 read `IF 1 ∈ [155, max] OR 1 ∈ [100, max] AND 3 ∈ ...`."""
    from libre_lib.rules import condition_text

    assert condition_text(Condition("1", NUMERIC, (Interval(155.0, INF),))) == '"1" ∈ [155, max]'
    assert condition_text(Condition("x1", NUMERIC, (Interval(155.0, INF),))) == "x1 ∈ [155, max]"
