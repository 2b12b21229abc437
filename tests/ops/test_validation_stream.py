"""Streamed validation: per-batch statistics, merged, judge a table as ``validate_frame`` does.

Every case compares ``validate_statistics(merge_statistics(...))`` over chunks of a frame with
``validate_frame`` on the whole frame, field by field, for one chunk, three chunks and uneven
chunks (empty ones included). Tests marked ``gx`` run Great Expectations.
"""

import functools
import itertools
import json
import subprocess
import sys
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest

from libre_lib.datasets import dataset_info, load_dataset
from libre_lib.errors import ParameterError
from libre_lib.ops.validation import ColumnRule, ValidationReport, ValidationRules, validate_frame
from libre_lib.ops.validation_stream import (
    batch_statistics,
    merge_statistics,
    user_expectation_results,
    validate_statistics,
)

gx = pytest.mark.gx

CHUNKINGS = ("one", "three", "uneven")


# --------------------------------------------------------------------------- frames


@functools.cache
def _pima() -> pd.DataFrame:
    return pd.read_csv(dataset_info("pima").path)


@functools.cache
def _credit() -> pd.DataFrame:
    X, y, _ = load_dataset("credit_approval")
    return X.assign(target=y)


def _pima_gaps() -> pd.DataFrame:
    """pima with 5% of bmi missing and one implausible bmi (row 500)."""
    frame = _pima().copy()
    frame.loc[::20, "bmi"] = np.nan
    frame.loc[500, "bmi"] = 99.0
    return frame


def _credit_broken() -> pd.DataFrame:
    frame = _credit().drop(columns=["a5"])
    frame.loc[0, "target"] = None
    frame.loc[1, "target"] = "?"
    return frame


def _pandas3_dtypes() -> pd.DataFrame:
    """Text, category and nullable-integer columns (200 rows)."""
    return pd.DataFrame(
        {
            "s": pd.Series(["1", "2", "?", None] * 50, dtype="str"),
            "c": pd.Series(["a", "b", "a", "z"] * 50, dtype="category"),
            "n": pd.Series([1, 2, 3, None] * 50, dtype="Int64"),
            "y": [0, 1, 0, 1] * 50,
        }
    )


FRAMES = {
    "pima": _pima,
    "pima_gaps": _pima_gaps,
    "pima_one_class": lambda: _pima()[_pima()["target"] == 1].reset_index(drop=True),
    "credit": _credit,
    "credit_broken": _credit_broken,
    "pandas3": _pandas3_dtypes,
}


def _chunks(frame: pd.DataFrame, how: str) -> list[pd.DataFrame]:
    n = len(frame)
    bounds = {
        "one": [0, n],
        "three": [0, n // 3, 2 * n // 3, n],
        "uneven": [0, 0, 1, 38, 38, 400, n],  # empty chunks, a one-row chunk, a big one
    }[how]
    bounds = [min(b, n) for b in bounds]
    return [frame.iloc[a:b] for a, b in itertools.pairwise(bounds)]


# --------------------------------------------------------------------------- cases

PIMA_RULES = ValidationRules(
    required_columns=("plasma_glucose", "bmi", "age"),
    target_column="target",
    target_classes=(0, 1),
    min_rows=100,
    max_missing_fraction=0.0,
    columns={
        "plasma_glucose": ColumnRule(min=0, max=200, dtype="numeric"),
        "bmi": ColumnRule(min=0, max=70),
        "age": ColumnRule(min=21, max=81, dtype="numeric"),
    },
)
CREDIT_RULES = ValidationRules(
    required_columns=tuple(f"a{i}" for i in range(1, 16)),
    target_column="target",
    target_classes=("+", "-"),
    min_rows=100,
    max_missing_fraction=0.05,
    columns={
        "a2": ColumnRule(min=13, max=81, dtype="numeric"),
        "a1": ColumnRule(values=("a", "b"), dtype="categorical"),
        "a4": ColumnRule(values=("u", "y", "l")),
    },
)
NULL, BETWEEN, IN_SET = (
    "expect_column_values_to_not_be_null",
    "expect_column_values_to_be_between",
    "expect_column_values_to_be_in_set",
)
DTYPE, EXISTS = "expect_column_dtype_to_be", "expect_column_to_exist"

# name: (frame, rules, the (expectation, column) pairs that fail on the whole frame)
CASES = {
    "pima passes": ("pima", PIMA_RULES, set()),
    "credit passes": ("credit", CREDIT_RULES, set()),
    "too few rows": (
        "pima",
        replace(PIMA_RULES, min_rows=1_000),
        {("expect_table_row_count_to_be_between", None)},
    ),
    "missing fraction exceeded": (
        "pima_gaps",
        replace(
            PIMA_RULES, max_missing_fraction=0.1, columns={"bmi": {"max_missing_fraction": 0.01}}
        ),
        {(NULL, "bmi")},
    ),
    "out of range": (
        "pima",
        replace(
            PIMA_RULES, columns={"plasma_glucose": {"min": 50, "max": 150}, "age": {"max": 60}}
        ),
        {(BETWEEN, "plasma_glucose"), (BETWEEN, "age")},
    ),
    "values not in set": (
        "credit",
        replace(CREDIT_RULES, columns={"a4": {"values": ("u", "y")}, "a6": {"values": ("c", "q")}}),
        {(IN_SET, "a4"), (IN_SET, "a6")},
    ),
    "missing required column": (
        "pima",
        replace(
            PIMA_RULES,
            required_columns=("bmi", "height"),
            columns={"height": {"min": 0}, "weight": {"values": (1, 2)}},
        ),
        {(EXISTS, "height"), (EXISTS, "weight")},
    ),
    "one class": (
        "pima_one_class",
        replace(PIMA_RULES, target_classes=None),
        {("expect_column_unique_value_count_to_be_between", "target")},
    ),
    "declared class absent": (
        "pima",
        replace(PIMA_RULES, target_classes=(0, 1, 2)),
        {("expect_column_distinct_values_to_contain_set", "target")},
    ),
    "categorical column with a range": (
        "credit",
        replace(CREDIT_RULES, columns={"a1": {"min": 0, "max": 1}, "a9": {"dtype": "numeric"}}),
        {(BETWEEN, "a1"), (DTYPE, "a9")},
    ),
    "many defects": (
        "credit_broken",
        replace(
            CREDIT_RULES,
            target_classes=("+", "-", "maybe"),
            min_rows=1_000,
            columns={
                "a2": ColumnRule(min=13, max=60),
                "a14": ColumnRule(max_missing_fraction=0.01),
                "a1": ColumnRule(dtype="numeric"),
                "a4": ColumnRule(values=("u", "y")),
                "a5": ColumnRule(values=("g", "p", "gg")),
            },
        ),
        {
            (EXISTS, "a5"),
            ("expect_table_row_count_to_be_between", None),
            (NULL, "target"),
            (IN_SET, "target"),
            ("expect_column_distinct_values_to_contain_set", "target"),
            (NULL, "a14"),
            (DTYPE, "a1"),
            (BETWEEN, "a2"),
            (IN_SET, "a4"),
        },
    ),
    "pandas 3 dtypes": (
        "pandas3",
        ValidationRules(
            required_columns=("s", "c", "n"),
            target_column="y",
            max_missing_fraction=0.3,
            columns={
                "s": ColumnRule(min=0, max=10, dtype="numeric"),
                "c": ColumnRule(values=("a", "b"), dtype="categorical"),
                "n": ColumnRule(min=1, max=2, dtype="categorical"),
            },
        ),
        {(DTYPE, "s"), (BETWEEN, "s"), (DTYPE, "n"), (BETWEEN, "n"), (IN_SET, "c")},
    ),
    "user expectation failing in one batch": (
        "pima_gaps",
        replace(
            PIMA_RULES,
            max_missing_fraction=0.1,
            expectations=(
                {"type": BETWEEN, "kwargs": {"column": "bmi", "max_value": 80}},
                {"type": IN_SET, "kwargs": {"column": "target", "value_set": [0, 1]}},
                {
                    "type": "expect_column_mean_to_be_between",
                    "kwargs": {"column": "age", "min_value": 0, "max_value": 200},
                },
            ),
        ),
        {(BETWEEN, "bmi")},
    ),
}


@functools.cache
def _whole_report(case: str) -> ValidationReport:
    frame_name, rules, _ = CASES[case]
    return validate_frame(FRAMES[frame_name](), rules)


def _roundtrip(value):
    """What another process would hand over: JSON text, parsed."""
    return json.loads(json.dumps(value))


def _streamed(chunks: list[pd.DataFrame], rules: ValidationRules) -> ValidationReport:
    stats = merge_statistics([_roundtrip(batch_statistics(chunk, rules)) for chunk in chunks])
    users = None
    if rules.expectations:
        users = [_roundtrip(user_expectation_results(chunk, rules)) for chunk in chunks]
    return validate_statistics(stats, rules, users)


def _assert_same_report(streamed: ValidationReport, whole: ValidationReport, rules) -> None:
    assert streamed.success == whole.success
    assert streamed.n_rows == whole.n_rows
    assert [(r.expectation, r.column) for r in streamed.results] == [
        (r.expectation, r.column) for r in whole.results
    ]
    n_builtin = len(streamed.results) - len(rules.expectations)
    for i, (ours, theirs) in enumerate(zip(streamed.results, whole.results, strict=True)):
        assert ours.success == theirs.success, (ours, theirs)
        assert ours.unexpected_count == theirs.unexpected_count, (ours, theirs)
        if i < n_builtin:
            assert ours.details == theirs.details
            assert ours.unexpected_examples == theirs.unexpected_examples
        else:
            assert "checked batch by batch" in ours.details


# --------------------------------------------------------------------------- same report


def test_importing_the_module_does_not_import_gx():
    code = (
        "import sys, libre_lib.ops.validation_stream; "
        "assert 'great_expectations' not in sys.modules"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


@gx
@pytest.mark.parametrize("how", CHUNKINGS)
@pytest.mark.parametrize("case", list(CASES))
def test_merged_statistics_give_the_whole_frames_report(case, how):
    frame_name, rules, failing = CASES[case]
    whole = _whole_report(case)
    assert {(r.expectation, r.column) for r in whole.failures()} == failing
    streamed = _streamed(_chunks(FRAMES[frame_name](), how), rules)
    _assert_same_report(streamed, whole, rules)


@gx
def test_row_wise_user_results_have_the_whole_frames_details_and_examples():
    _, rules, _ = CASES["user expectation failing in one batch"]
    whole = _whole_report("user expectation failing in one batch")
    chunks = _chunks(_pima_gaps(), "three")
    parts = [user_expectation_results(chunk, rules) for chunk in chunks]
    assert [p[0]["success"] for p in parts] == [True, False, True]  # row 500: second chunk
    streamed = _streamed(chunks, rules)
    ours, theirs = streamed.results[-3], whole.results[-3]
    assert not ours.success
    assert ours.unexpected_examples == theirs.unexpected_examples == (99.0,)
    assert ours.details == f"{theirs.details}; checked batch by batch (3 batches), exact"
    mean = streamed.results[-1]
    assert mean.success
    assert mean.details.startswith("checked batch by batch, not on the whole table")


@gx
def test_mostly_is_judged_on_the_summed_counts_and_aggregates_per_batch():
    frame = pd.DataFrame({"x": np.arange(100.0), "y": [0, 1] * 50})
    rules = ValidationRules(
        required_columns=("x",),
        target_column="y",
        expectations=(
            {"type": BETWEEN, "kwargs": {"column": "x", "max_value": 89, "mostly": 0.85}},
            {
                "type": "expect_column_mean_to_be_between",
                "kwargs": {"column": "x", "min_value": 0, "max_value": 60},
            },
        ),
    )
    whole = validate_frame(frame, rules)
    assert whole.success  # 10% above 89 is allowed; the mean is 49.5
    chunks = [frame.iloc[:90], frame.iloc[90:]]  # the second chunk is all above 89, mean 94.5
    streamed = _streamed(chunks, rules)
    between, mean = streamed.results[-2:]
    assert between.success and between.unexpected_count == 10
    assert not mean.success  # a per-batch check is stricter than the whole table's
    assert "not met in 1 of 2 batches; batch 2:" in mean.details


# --------------------------------------------------------------------------- batches that differ


def _mixed_batches() -> list[pd.DataFrame]:
    """Batches as a CSV reader hands them over: a numeric column that holds '?' in one batch,
    an integer column that becomes float, labels read as numbers in one batch and as text in
    another, category columns with different categories, and a column one batch lacks."""
    first = pd.DataFrame(
        {
            "glucose": [85, 168, 90, 120],
            "pressure": [66, 70, 80, 90],
            "kind": pd.Categorical(["a", "b", "a", "b"]),
            "bmi": [20.0, 31.5, 25.0, 40.0],
            "target": [0, 1, 0, 1],
        }
    )
    second = pd.DataFrame(
        {
            "glucose": pd.Series(["110", "?", "199", None], dtype="str"),
            "pressure": [60.5, np.nan, 72.0, 101.0],
            "kind": pd.Categorical(["c", "a", "c", "c"]),
            "target": ["1", "0", "2", None],
        }
    )
    third = pd.DataFrame(
        {
            "glucose": [100, 130],
            "pressure": [75, 65],
            "kind": pd.Categorical(["a", "a"]),
            "bmi": [np.nan, 22.0],
            "target": [1.0, 0.0],
        }
    )
    return [first, second, third]


MIXED_RULES = ValidationRules(
    required_columns=("glucose", "pressure", "bmi"),
    target_column="target",
    target_classes=(0, 1),
    max_missing_fraction=0.2,
    columns={
        "glucose": ColumnRule(min=0, max=150, dtype="numeric"),
        "pressure": ColumnRule(min=62, max=100, dtype="numeric"),
        "kind": ColumnRule(values=("a", "b"), dtype="categorical"),
        "bmi": ColumnRule(min=21, dtype="categorical"),
    },
)


@gx
def test_batches_with_different_dtypes_and_columns_give_the_concatenations_report():
    batches = _mixed_batches()
    whole = validate_frame(pd.concat(batches), MIXED_RULES)
    failed = {(r.expectation, r.column) for r in whole.failures()}
    assert {(DTYPE, "glucose"), (BETWEEN, "pressure"), (NULL, "bmi"), (DTYPE, "bmi")} <= failed
    _assert_same_report(_streamed(batches, MIXED_RULES), whole, MIXED_RULES)


# --------------------------------------------------------------------------- merging


def _broken_parts() -> list[dict]:
    _, rules, _ = CASES["many defects"]
    return [batch_statistics(c, rules) for c in _chunks(_credit_broken(), "uneven")]


def test_merging_is_associative():
    a, b, c, d, e, f = _broken_parts()
    flat = merge_statistics([a, b, c, d, e, f])
    assert merge_statistics([merge_statistics([a, b]), merge_statistics([c, d, e, f])]) == flat
    assert merge_statistics([a, merge_statistics([b, c]), d, merge_statistics([e, f])]) == flat
    assert merge_statistics([merge_statistics([a, b, c]), d, e, f]) == flat
    assert flat["n_batches"] == 6 and flat["n_rows"] == len(_credit_broken())
    assert _roundtrip(flat) == flat


def test_merging_keeps_the_order_of_the_batches():
    _, rules, _ = CASES["out of range"]
    parts = [batch_statistics(c, rules) for c in _chunks(_pima(), "three")]
    forward = merge_statistics(parts)["ranges"]["plasma_glucose"]
    backward = merge_statistics(parts[::-1])["ranges"]["plasma_glucose"]
    assert forward["count"] == backward["count"]
    assert forward["first"] != backward["first"]  # the first unexpected values, in row order


def test_a_left_out_batch_changes_the_report():
    _, rules, _ = CASES["many defects"]
    parts = _broken_parts()
    full = validate_statistics(merge_statistics(parts), rules)
    partial = validate_statistics(merge_statistics(parts[:-1]), rules)
    assert partial.n_rows < full.n_rows
    assert partial.results != full.results


def test_statistics_of_other_rules_or_without_user_results_are_refused():
    _, rules, _ = CASES["many defects"]
    stats = merge_statistics(_broken_parts())
    with pytest.raises(ParameterError, match="other rules"):
        validate_statistics(stats, replace(rules, columns={}))
    with pytest.raises(ParameterError, match="different rules"):
        merge_statistics([stats, batch_statistics(_credit(), CREDIT_RULES)])
    with pytest.raises(ParameterError, match="user_parts"):
        validate_statistics(stats, replace(rules, expectations=({"type": NULL, "kwargs": {}},)))
    with pytest.raises(ParameterError, match="at least one"):
        merge_statistics([])


def test_a_million_rows_are_summarised_exactly():
    rng = np.random.default_rng(0)
    n = 1_000_000
    frame = _pima().sample(n, replace=True, random_state=0).reset_index(drop=True)
    frame["colour"] = pd.Series(rng.choice(["red", "green", "blue", "?"], n), dtype="str")
    frame["size"] = pd.Series(rng.choice(["s", "m", "l"], n)).astype("category")
    frame["code"] = pd.Series(rng.choice(["1", "2", "x", None], n), dtype=object)
    frame["flag"] = rng.random(n) < 0.5
    rules = replace(
        PIMA_RULES,
        columns={
            **PIMA_RULES.columns,
            "colour": ColumnRule(values=("red", "green", "blue")),
            "size": ColumnRule(values=("s", "m")),
            "code": ColumnRule(min=0, max=5, dtype="numeric"),
        },
    )
    assert frame.shape == (n, 13)
    stats = batch_statistics(frame, rules)
    assert stats["value_sets"]["size"]["count"] == int((frame["size"] == "l").sum())
    assert stats["non_numbers"]["code"]["count"] == int((frame["code"] == "x").sum())


@gx
def test_a_user_expectation_is_skipped_in_batches_without_its_column():
    rules = replace(
        MIXED_RULES, expectations=({"type": BETWEEN, "kwargs": {"column": "bmi", "max_value": 35}},)
    )
    batches = _mixed_batches()
    parts = [user_expectation_results(batch, rules) for batch in batches]
    assert [p[0]["ran"] for p in parts] == [True, False, True]  # the second batch has no bmi
    result = _streamed(batches, rules).results[-1]
    assert (result.success, result.unexpected_count) == (False, 1)
    assert result.unexpected_examples == (40.0,)
    assert "skipped in 1 batch without its column; batch 1:" in result.details


def test_a_failure_names_the_parts_that_hold_its_unexpected_values():
    """A streamed run said "1 of 768 values not in ['0', '1']" of a folder of files, without
    saying which file held it."""
    from libre_lib.ops.validation_stream import name_parts

    frame = pd.DataFrame(
        {"x": [1.0, None, 3.0, 4.0, None, None], "target": ["0", "1", "0", "7", "1", "9"]}
    )
    rules = ValidationRules(
        required_columns=("x",), target_column="target", target_classes=("0", "1"), min_rows=1,
        max_missing_fraction=0.0,
    )  # fmt: skip
    parts = [("a.csv", batch_statistics(frame[:3], rules))]
    parts.append(("b.csv", batch_statistics(frame[3:], rules)))
    report = validate_statistics(merge_statistics([s for _, s in parts]), rules)
    named = {r.expectation: r.details for r in name_parts(report, parts, "target").failures()}
    assert named["expect_column_values_to_be_in_set"].endswith("; in 1 part of 2: b.csv (2)")
    assert named["expect_column_values_to_not_be_null"].endswith(
        "; in 2 parts of 2: b.csv (2), a.csv (1)"
    )
    assert name_parts(report, parts[:1], "target") == report  # one part: nothing to name
