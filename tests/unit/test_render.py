"""Rendering rules: paper-style text, SQL (checked in sqlite) and JSON-ready dictionaries."""

import json
import math
import sqlite3

import numpy as np
import pandas as pd
import pytest

from libre_lib.discretization import CATEGORICAL, NUMERIC
from libre_lib.errors import ModelFormatError
from libre_lib.render import (
    condition_from_dict,
    condition_sql,
    condition_to_dict,
    interval_text,
    number_text,
    rule_from_dict,
    rule_to_dict,
    ruleset_sql,
    sql_identifier,
    sql_literal,
)
from libre_lib.rules import Condition, Interval, Rule, RuleSet, RuleStats

INF = math.inf

APPENDIX_RULES = RuleSet(
    (
        Rule((Condition("CPU", NUMERIC, intervals=(Interval(95.0, INF),)),)),
        Rule(
            (
                Condition("CPU", NUMERIC, intervals=(Interval(81.0, INF),)),
                Condition("MEM", NUMERIC, intervals=(Interval(85.0, INF),)),
            )
        ),
    ),
    target="Label",
    positive_class=1,
    negative_class=0,
)


def sql_mask(ruleset: RuleSet, frame: pd.DataFrame) -> list[bool]:
    with sqlite3.connect(":memory:") as con:
        frame.to_sql("t", con, index=False)
        rows = con.execute(f"SELECT {ruleset_sql(ruleset)} FROM t").fetchall()
    return [bool(r[0]) for r in rows]


# --- text --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (158.0, "158"),
        (30.7, "30.7"),
        (-3.0, "-3"),
        (0.1 + 0.2, "0.30000000000000004"),
        (1e20, "1e+20"),
    ],
)
def test_number_text_is_the_shortest_exact_text(value, text):
    assert number_text(value) == text
    assert float(text) == value


def test_interval_text():
    assert interval_text(Interval(-INF, 40.0)) == "[min, 40)"
    assert interval_text(Interval(30.0, INF)) == "[30, max]"
    assert interval_text(Interval(30.0, 60.5)) == "[30, 60.5)"
    assert interval_text(Interval(-INF, INF)) == "[min, max]"


def test_ruleset_text_like_the_paper():
    assert str(APPENDIX_RULES) == (
        "IF CPU ∈ [95, max]\nOR CPU ∈ [81, max] AND MEM ∈ [85, max]\nTHEN Label = 1 ELSE Label = 0"
    )


def test_empty_ruleset_text():
    assert str(RuleSet((), target="y", positive_class="+", negative_class="-")) == (
        "IF FALSE THEN y = + ELSE y = -"
    )


def test_condition_text_with_several_intervals_and_missing():
    condition = Condition(
        "glucose", NUMERIC, intervals=(Interval(-INF, 80.0), Interval(158.0, INF)), missing=True
    )
    assert str(Rule((condition,))) == "glucose ∈ [min, 80) ∪ [158, max] ∪ missing"


# --- SQL ---------------------------------------------------------------------------------------


def test_sql_identifier_and_literal_escaping():
    assert sql_identifier('we"ird') == '"we""ird"'
    assert sql_literal("O'Brien") == "'O''Brien'"
    assert sql_literal(True) == "TRUE"
    assert sql_literal(3) == "3"
    assert sql_literal(2.5) == "2.5"


def test_sql_of_the_appendix_rules_in_sqlite():
    frame = pd.DataFrame(
        {"CPU": [95, 80, 81, 10, 10, 82, 85, 81], "MEM": [10, 10, 85, 85, 10, 10, 10, 10]}
    )
    assert sql_mask(APPENDIX_RULES, frame) == [True, False, True, False, False, False, False, False]


def test_sql_escapes_quotes_in_names_and_categories():
    rules = RuleSet(
        (
            Rule(
                (
                    Condition('the "owner"', CATEGORICAL, categories=("O'Brien", "plain")),
                    Condition("it's", NUMERIC, intervals=(Interval(-INF, 2.0),), missing=True),
                )
            ),
        )
    )
    frame = pd.DataFrame(
        {
            'the "owner"': ["O'Brien", "plain", "O'Brien", "other", None],
            "it's": [1.0, np.nan, 3.0, 1.0, 1.0],
        }
    )
    expected = [True, True, False, False, False]
    assert rules.fired(frame)[:, 0].tolist() == expected
    assert sql_mask(rules, frame) == expected


def test_sql_missing_only_and_not_null_conditions():
    only_missing = Condition("x", NUMERIC, missing=True)
    assert condition_sql(only_missing) == '"x" IS NULL'
    any_value = Condition("x", NUMERIC, intervals=(Interval(-INF, INF),))
    assert condition_sql(any_value) == '"x" IS NOT NULL'
    frame = pd.DataFrame({"x": [1.0, np.nan]})
    assert sql_mask(RuleSet((Rule((only_missing,)),)), frame) == [False, True]
    assert sql_mask(RuleSet((Rule((any_value,)),)), frame) == [True, False]


def test_sql_nulls_never_leak_into_the_prediction():
    # "x" < 2 is NULL for a missing x; the expression is wrapped in COALESCE(..., FALSE).
    rules = RuleSet((Rule((Condition("x", NUMERIC, intervals=(Interval(-INF, 2.0),)),)),))
    assert ruleset_sql(rules).startswith("COALESCE(")
    with sqlite3.connect(":memory:") as con:
        pd.DataFrame({"x": [np.nan, 1.0]}).to_sql("t", con, index=False)
        values = [r[0] for r in con.execute(f"SELECT {ruleset_sql(rules)} FROM t")]
    assert values == [0, 1]


def test_sql_of_empty_ruleset_and_empty_rule():
    assert ruleset_sql(RuleSet(())) == "FALSE"
    frame = pd.DataFrame({"x": [1.0, np.nan]})
    assert sql_mask(RuleSet((Rule(()),)), frame) == [True, True]


def test_sql_literal_of_numpy_scalars():
    # Categories taken from pandas/numpy (e.g. tuple(df["c"].unique())) are numpy scalars.
    assert sql_literal(np.float64(1.5)) == "1.5"
    assert sql_literal(np.int64(2)) == "2"
    assert sql_literal(np.bool_(True)) == "TRUE"


# Every kind of category and interval, in every column type, checked in sqlite against
# Condition.evaluate (what scoring uses). A float category inf was written as bare `inf`, which
# SQLite and DuckDB reject.
CATEGORY_FRAME = pd.DataFrame(
    {
        "f": [1.5, INF, -INF, np.nan, 0.0, -2.25, 1e300, 5e-324],
        "s": ["a", "O'Brien", "inf", "NaN", None, "", "1.5", "ü"],
        "i": pd.array([1, -3, 0, None, 2**62, 7, 1, -(2**62)], dtype="Int64"),
        "b": [True, False, None, True, False, True, None, False],
    }
)
CATEGORY_CASES = [
    ("f", (INF,)),
    ("f", (-INF,)),
    ("f", (INF, -INF)),
    ("f", (1.5, INF)),
    ("f", (float("nan"),)),
    ("f", (float("nan"), 0.0)),
    ("f", (-2.25, 1e300, 5e-324)),
    ("f", (np.float64(INF), np.float64(1.5))),
    ("s", ("inf", "NaN", "O'Brien")),
    ("s", ("", "ü", "1.5")),
    ("i", (1, 2**62, -(2**62))),
    ("i", (np.int64(0), -3)),
    ("b", (True,)),
    ("b", (False,)),
]


@pytest.mark.parametrize("missing", [False, True])
@pytest.mark.parametrize(("column", "categories"), CATEGORY_CASES)
def test_sql_of_every_category_kind_runs_in_sqlite_and_agrees(column, categories, missing):
    condition = Condition(column, CATEGORICAL, categories=categories, missing=missing)
    sql = condition_sql(condition)
    assert "inf" not in sql.replace("'inf'", "").lower()
    assert "nan" not in sql.replace("'NaN'", "").lower()
    rules = RuleSet((Rule((condition,)),))
    expected = condition.evaluate(CATEGORY_FRAME[column]).tolist()
    assert sql_mask(rules, CATEGORY_FRAME) == expected


INTERVAL_CASES = [
    (Interval(-INF, INF),),
    (Interval(-INF, 0.5),),
    (Interval(0.5, INF),),
    (Interval(-1e300, 1e300),),
    (Interval(-INF, -1.0), Interval(1.0, INF)),
    (Interval(-0.5, 0.5), Interval(2.0, 3.0)),
    (Interval(5e-324, 1.0),),
]


@pytest.mark.parametrize("missing", [False, True])
@pytest.mark.parametrize("intervals", INTERVAL_CASES)
def test_sql_of_every_interval_kind_runs_in_sqlite_and_agrees(intervals, missing):
    frame = pd.DataFrame(
        {"x": [-1e308, -1.0, -0.5, 0.0, 5e-324, 0.5, 1.0, 2.5, 3.0, 1e308, np.nan]}
    )
    condition = Condition("x", NUMERIC, intervals=intervals, missing=missing)
    rules = RuleSet((Rule((condition,)),))
    assert sql_mask(rules, frame) == condition.evaluate(frame["x"]).tolist()


def test_sql_literal_refuses_a_number_without_a_literal():
    for value in (INF, -INF, float("nan")):
        with pytest.raises(ValueError, match="has no SQL literal"):
            sql_literal(value)


# --- JSON-ready dictionaries -------------------------------------------------------------------


def test_condition_dict_round_trip_with_open_ends():
    condition = Condition(
        "age", NUMERIC, intervals=(Interval(-INF, 18.0), Interval(65.0, INF)), missing=True
    )
    data = condition_to_dict(condition)
    assert data == {
        "feature": "age",
        "kind": NUMERIC,
        "intervals": [[None, 18.0], [65.0, None]],
        "missing": True,
    }
    assert condition_from_dict(json.loads(json.dumps(data))) == condition


def test_rule_dict_round_trip_with_stats():
    rule = APPENDIX_RULES[1]
    stats = RuleStats(1.0, 0.0, 1.0, 0.0)
    data = rule_to_dict(rule, stats)
    assert data["text"] == "CPU ∈ [81, max] AND MEM ∈ [85, max]"
    assert data["stats"]["precision"] == 1.0
    again, again_stats = rule_from_dict(json.loads(json.dumps(data)))
    assert again == rule
    assert again_stats == stats
    assert rule_from_dict(rule_to_dict(rule)) == (rule, None)


@pytest.mark.parametrize(
    "data",
    [
        {"kind": NUMERIC, "intervals": [[None, 1.0]]},  # no feature
        {"feature": "x", "kind": NUMERIC, "intervals": [[2.0, 1.0]]},  # empty interval
        {"feature": "x", "kind": NUMERIC, "intervals": [[1.0]]},  # not a pair
        {"feature": "x", "kind": NUMERIC},  # allows nothing
    ],
)
def test_malformed_condition_dict(data):
    with pytest.raises(ModelFormatError, match="Malformed rule condition"):
        condition_from_dict(data)


def test_missing_value_markers_read_as_null_where_the_column_can_hold_them():
    """``ruleset_sql``'s ``missing_values``: a 0 that stands for a missing bmi is NULL (so the
    ``∪ missing`` part takes it, the cut points do not); "?" only in a column of texts."""
    rules = RuleSet(
        (
            Rule((Condition("bmi", NUMERIC, (Interval(-INF, 30.0),), missing=True),)),
            Rule((Condition("kind", CATEGORICAL, categories=("a",)),)),
        )
    )
    frame = pd.DataFrame({"bmi": [0.0, 25.0, 35.0, 35.0, None], "kind": ["b", "b", "?", "a", "b"]})
    markers = {"bmi": [0, "?"], "kind": ["?", 0]}
    sql = ruleset_sql(rules, markers)
    # a number marks texts as pandas' na_values reads them ("0", "0.0"): it was dropped
    assert "IN (0.0)" in sql and "IN ('?', '0', '0.0')" in sql
    with sqlite3.connect(":memory:") as con:
        frame.to_sql("t", con, index=False)
        got = [bool(r[0]) for r in con.execute(f"SELECT {sql} FROM t")]
        plain = [bool(r[0]) for r in con.execute(f"SELECT {ruleset_sql(rules)} FROM t")]
    assert got == [True, True, False, True, True]  # the 0 is missing, so the rule takes it
    assert plain == [True, True, False, True, True]  # 0 < 30: the same here, by the cut
    shifted = RuleSet((Rule((Condition("bmi", NUMERIC, (Interval(20.0, 30.0),)),)),))
    with sqlite3.connect(":memory:") as con:
        frame.assign(bmi=[0.0, 25.0, 35.0, 35.0, None]).to_sql("t", con, index=False)
        sql = ruleset_sql(shifted, {"bmi": [25]})
        assert [bool(r[0]) for r in con.execute(f"SELECT {sql} FROM t")] == [False] * 5


def test_sql_literals_read_back_as_the_model_s_doubles_in_sqlite():
    """SQLite read 0.986512 as the double above it, so the 50 rows on that cut point fell
    out of ``ratio >= 0.986512``; literals of more than five significant digits are written
    with 17 (short ones stay readable: 26.4, 155.0)."""
    rng = np.random.default_rng(0)
    values = [0.986512, 0.475494, 0.008916345, 54.68354634223763, *rng.random(2000).tolist()]
    with sqlite3.connect(":memory:") as con:
        misread = [
            v
            for v in values
            if con.execute(f"SELECT ? = {sql_literal(v)}", (v,)).fetchone()[0] != 1
        ]
    assert misread == []
    assert sql_literal(26.4) == "26.4" and sql_literal(155.0) == "155.0"
    assert sql_literal(123456.0) == "123456.0" and float(sql_literal(0.986512)) == 0.986512
