"""Training-data validation: the rules, the suite, the report, and GX runs on real frames.

Tests marked ``gx`` run Great Expectations (the first one pays the ~5 s import); the module
shares one clean and one broken validation run between most of them.
"""

import json
import subprocess
import sys
import tempfile
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest

from libre_lib.errors import DataValidationError, LibreError, ParameterError
from libre_lib.ops.validation import (
    ColumnRule,
    ExpectationResult,
    ValidationReport,
    ValidationRules,
    build_expectations,
    label_key,
    raise_for_failures,
    validate_frame,
)

gx = pytest.mark.gx

CLEAN_RULES = ValidationRules(
    required_columns=tuple(f"a{i}" for i in range(1, 16)),
    target_column="target",
    target_classes=("+", "-"),
    min_rows=100,
    max_missing_fraction=0.05,
    columns={
        "a2": ColumnRule(min=13, max=81, dtype="numeric"),
        "a14": ColumnRule(min=0),
        "a1": ColumnRule(values=("a", "b"), dtype="categorical"),
        "a4": ColumnRule(values=("u", "y", "l")),
        "a5": ColumnRule(values=("g", "p", "gg")),
    },
    expectations=(
        {
            "type": "expect_column_mean_to_be_between",
            "kwargs": {"column": "a3", "min_value": 0, "max_value": 50},
        },
    ),
)

# Every rule below is broken by the data in ``broken_frame``, one defect per line.
BROKEN_RULES = replace(
    CLEAN_RULES,
    target_classes=("+", "-", "maybe"),  # 'maybe' never appears
    min_rows=1_000,  # credit_approval has 690 rows
    columns={
        "a2": ColumnRule(min=13, max=60),  # some applicants are older
        "a14": ColumnRule(max_missing_fraction=0.01),  # 13 of 690 missing
        "a1": ColumnRule(dtype="numeric"),  # letters
        "a4": ColumnRule(values=("u", "y")),  # 'l' occurs twice
        "a5": ColumnRule(values=("g", "p", "gg")),  # the column is dropped
    },
    expectations=(
        {
            "type": "expect_column_values_to_be_between",
            "kwargs": {"column": "a8", "max_value": 20},
        },
    ),
)


@pytest.fixture(scope="module")
def clean_frame(credit_data):
    X, y, _ = credit_data
    return X.assign(target=y)


@pytest.fixture(scope="module")
def broken_frame(clean_frame):
    frame = clean_frame.drop(columns=["a5"])
    frame.loc[0, "target"] = None
    frame.loc[1, "target"] = "?"
    return frame


@pytest.fixture(scope="module")
def clean_report(clean_frame):
    return validate_frame(clean_frame, CLEAN_RULES)


@pytest.fixture(scope="module")
def broken_report(broken_frame):
    return validate_frame(broken_frame, BROKEN_RULES)


def _line(summary: str, expectation: str, column: str | None) -> str:
    where = f"column {column!r}" if column is not None else "the table"
    lines = [line for line in summary.splitlines() if f"{expectation} on {where}" in line]
    assert len(lines) == 1, summary
    return lines[0]


# --------------------------------------------------------------------------- without GX


def test_importing_the_module_does_not_import_gx_or_prefect():
    code = (
        "import sys, libre_lib.ops.validation; "
        "assert 'great_expectations' not in sys.modules; assert 'prefect' not in sys.modules"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_build_expectations_lists_the_suite_in_report_order():
    rules = ValidationRules(
        required_columns=("x", "c"),
        target_column="y",
        target_classes=(0, 1.0),
        min_rows=10,
        max_missing_fraction=0.1,
        columns={"x": ColumnRule(min=0, max=5, dtype="numeric", max_missing_fraction=0.0)},
        expectations=({"type": "expect_column_values_to_be_unique", "kwargs": {"column": "c"}},),
    )
    plan = build_expectations(rules, columns=["x", "c", "extra", "y"])
    assert [(p["type"], p["kwargs"].get("column")) for p in plan] == [
        ("expect_column_to_exist", "x"),
        ("expect_column_to_exist", "c"),
        ("expect_column_to_exist", "y"),
        ("expect_table_row_count_to_be_between", None),
        ("expect_column_values_to_not_be_null", "y"),
        ("expect_column_values_to_be_in_set", "y"),
        ("expect_column_distinct_values_to_contain_set", "y"),
        ("expect_column_values_to_not_be_null", "x"),
        ("expect_column_values_to_not_be_null", "c"),
        ("expect_column_values_to_not_be_null", "extra"),
        ("expect_column_dtype_to_be", "x"),
        ("expect_column_values_to_be_between", "x"),
        ("expect_column_values_to_be_unique", "c"),
    ]
    assert plan[5]["kwargs"]["value_set"] == ["0", "1"]
    assert plan[7]["kwargs"]["mostly"] == 1.0
    assert plan[8]["kwargs"]["mostly"] == 0.9
    assert {p["type"] for p in plan if p["checked_by"] == "libre_lib"} == {
        "expect_column_to_exist",
        "expect_column_dtype_to_be",
    }
    assert plan[-1]["source"] == "user"
    json.dumps(plan)  # plain values only


def test_without_declared_classes_the_target_needs_two_classes():
    plan = build_expectations(ValidationRules(required_columns=(), target_column="y"))
    assert plan[-1] == {
        "type": "expect_column_unique_value_count_to_be_between",
        "kwargs": {"column": "y", "min_value": 2},
        "checked_by": "great_expectations",
        "source": "rules",
    }
    assert not any(p["kwargs"].get("mostly") is not None for p in plan)  # default bound is 1.0


@pytest.mark.parametrize(
    ("value", "key"),
    [(1, "1"), (1.0, "1"), (np.int64(1), "1"), ("1", "1"), ("01", "01"), (True, "True"),
     (1.5, "1.5"), (float("nan"), None), (None, None), (pd.NA, None), ("+", "+")],
)  # fmt: skip
def test_label_key_compares_labels_as_strings(value, key):
    assert label_key(value) == key


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"target_column": ""}, "target_column"),
        ({"required_columns": "a1"}, "required_columns must be a list"),
        ({"target_classes": ("1", 1)}, "at least two distinct classes"),
        ({"min_rows": -1}, "min_rows"),
        ({"max_missing_fraction": 1.5}, "between 0 and 1"),
        ({"columns": {"y": ColumnRule(min=0)}}, "target column 'y'"),
        ({"columns": {"a": {"minimum": 0}}}, "Known keys"),
        ({"columns": {"a": 3}}, "ColumnRule or a dict"),
        ({"expectations": {"type": "x"}}, "single dict"),
        ({"expectations": ({"kwargs": {}},)}, "needs a 'type'"),
        ({"expectations": ({"type": "x", "args": 1},)}, "unknown key(s) ['args']"),
    ],
)
def test_bad_rules_are_rejected_with_a_clear_message(kwargs, message):
    arguments = {"required_columns": (), "target_column": "y", **kwargs}
    with pytest.raises(ParameterError) as info:
        ValidationRules(**arguments)
    assert message in str(info.value)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"min": 3, "max": 1}, "greater than"),
        ({"min": "0"}, "must be a number"),
        ({"values": "abc"}, "list or tuple"),
        ({"values": []}, "empty"),
        ({"dtype": "int"}, "'numeric', 'categorical'"),
        ({"max_missing_fraction": -0.1}, "between 0 and 1"),
    ],
)
def test_bad_column_rules_are_rejected(kwargs, message):
    with pytest.raises(ParameterError) as info:
        ColumnRule(**kwargs)
    assert message in str(info.value)


def test_rules_accept_plain_lists_and_dicts():
    rules = ValidationRules(
        required_columns=["a"],
        target_column="y",
        target_classes=["n", "p"],
        columns={"a": {"values": ["x", "z"], "dtype": "categorical"}},
        expectations=[{"type": "expect_column_to_exist", "kwargs": {"column": "a"}}],
    )
    assert rules.required_columns == ("a",)
    assert rules.columns["a"] == ColumnRule(values=("x", "z"), dtype="categorical")
    assert isinstance(rules.expectations, tuple)


def test_a_report_built_by_hand_round_trips():
    results = (
        ExpectationResult("expect_column_to_exist", "a", True, None, (), "column present"),
        ExpectationResult(
            "expect_column_values_to_be_in_set", "b", False, 3, ("z", 4, None), "3 of 9 ..."
        ),
    )
    report = ValidationReport(success=False, n_rows=9, results=results)
    assert ValidationReport.from_dict(json.loads(json.dumps(report.to_dict()))) == report
    assert report.failures() == [results[1]]
    with pytest.raises(ParameterError, match="ValidationReport"):
        ValidationReport.from_dict({"success": True})


# --------------------------------------------------------------------------- with GX


@gx
def test_clean_data_passes(clean_frame, clean_report):
    assert clean_report.success, clean_report.summary()
    assert clean_report.n_rows == len(clean_frame) == 690
    plan = build_expectations(CLEAN_RULES, columns=list(clean_frame.columns))
    assert [r.expectation for r in clean_report.results] == [p["type"] for p in plan]
    assert clean_report.failures() == []
    assert clean_report.summary().startswith("Data validation passed")
    raise_for_failures(clean_report)  # no error


@gx
def test_the_broken_frame_fails_exactly_the_broken_rules(broken_report):
    failed = {(r.expectation, r.column) for r in broken_report.failures()}
    assert failed == {
        ("expect_column_to_exist", "a5"),
        ("expect_table_row_count_to_be_between", None),
        ("expect_column_values_to_not_be_null", "target"),
        ("expect_column_values_to_be_in_set", "target"),
        ("expect_column_distinct_values_to_contain_set", "target"),
        ("expect_column_values_to_not_be_null", "a14"),
        ("expect_column_dtype_to_be", "a1"),
        ("expect_column_values_to_be_between", "a2"),
        ("expect_column_values_to_be_in_set", "a4"),
        ("expect_column_values_to_be_between", "a8"),
    }
    assert not broken_report.success


def _expected_failures(frame):
    return [
        # (expectation, column, unexpected count, an example, words in the details)
        ("expect_column_to_exist", "a5", None, None, "2 expectations on it were skipped"),
        ("expect_table_row_count_to_be_between", None, None, None, "690 rows"),
        ("expect_column_values_to_not_be_null", "target", 1, None,
         "none allowed; a row without a target value cannot be learned from: drop those rows"),
        ("expect_column_values_to_be_in_set", "target", 1, "?", "not in ['+', '-', 'maybe']"),
        ("expect_column_distinct_values_to_contain_set", "target", 1, "maybe", "never appear"),
        ("expect_column_values_to_not_be_null", "a14", int(frame["a14"].isna().sum()), None,
         "at most 1% allowed"),
        ("expect_column_dtype_to_be", "a1", int(frame["a1"].notna().sum()), "b",
         "expected a numeric column"),
        ("expect_column_values_to_be_between", "a2", int((frame["a2"] > 60).sum()), None,
         "outside [13, 60]"),
        ("expect_column_values_to_be_in_set", "a4", 2, "l", "not in ['u', 'y']"),
        ("expect_column_values_to_be_between", "a8", int((frame["a8"] > 20).sum()), None,
         "not ≤ 20"),
    ]  # fmt: skip


@gx
def test_a_range_check_counts_the_values_it_checked(broken_frame, broken_report):
    """The range check said "0 of 768 value(s) outside [0.0, 250.0]" of a column with 5
    missing values, which it does not check."""
    (result,) = [
        r
        for r in broken_report.failures()
        if (r.expectation, r.column) == ("expect_column_values_to_be_between", "a2")
    ]
    missing = int(broken_frame["a2"].isna().sum())
    present = int(broken_frame["a2"].notna().sum())
    assert missing > 0
    assert f" of {present:,} values (" in result.details
    assert result.details.endswith(f"; {missing} missing not checked")


@gx
@pytest.mark.parametrize("case", range(10))
def test_each_failure_names_its_column_count_and_examples(broken_frame, broken_report, case):
    expectation, column, count, example, words = _expected_failures(broken_frame)[case]
    (result,) = [
        r for r in broken_report.failures() if (r.expectation, r.column) == (expectation, column)
    ]
    assert result.unexpected_count == count
    if example is not None:
        assert example in result.unexpected_examples
    assert len(result.unexpected_examples) <= 5
    assert words in result.details
    line = _line(broken_report.summary(), expectation, column)
    if expectation == "expect_column_distinct_values_to_contain_set":
        # the count is of declared values the data lacks: not read as unexpected values
        assert "unexpected" not in line and "['maybe']" in line
    elif count is not None:
        assert count > 0
        assert f"unexpected count {count}" in line
    assert words in line


@gx
def test_range_examples_are_distinct_values_outside_the_range(broken_frame, broken_report):
    (result,) = [r for r in broken_report.failures() if r.column == "a2"]
    assert result.unexpected_examples
    assert len(set(result.unexpected_examples)) == len(result.unexpected_examples)
    assert all(v > 60 for v in result.unexpected_examples)


@gx
def test_raise_for_failures_lists_every_failure(broken_report):
    with pytest.raises(DataValidationError) as info:
        raise_for_failures(broken_report)
    error = info.value
    assert isinstance(error, LibreError) and isinstance(error, ValueError)
    assert error.report is broken_report
    message = str(error)
    assert message.startswith("Data validation failed: 10 of ")
    for result in broken_report.failures():
        assert result.describe() in message


@gx
def test_report_round_trips_through_json_and_parquet(broken_report, tmp_path):
    data = broken_report.to_dict()
    text = json.dumps(data, allow_nan=False)
    assert ValidationReport.from_dict(json.loads(text)) == broken_report

    frame = broken_report.to_frame()
    assert len(frame) == len(broken_report.results)
    assert list(frame.columns) == [
        "expectation", "column", "success", "unexpected_count", "unexpected_examples", "details"
    ]  # fmt: skip
    path = tmp_path / "validation.parquet"
    frame.to_parquet(path)
    back = pd.read_parquet(path)
    for row, result in zip(back.itertuples(index=False), broken_report.results, strict=True):
        assert row.expectation == result.expectation
        assert (None if pd.isna(row.unexpected_count) else int(row.unexpected_count)) == (
            result.unexpected_count
        )
        assert tuple(json.loads(row.unexpected_examples)) == result.unexpected_examples
        assert bool(row.success) == result.success


@gx
@pytest.mark.parametrize(
    ("labels", "classes"),
    [
        ([0, 1, 1, 0], ("0", "1")),
        (["0", "1", "1", "0"], (0, 1)),
        ([0.0, 1.0, 1.0, 0.0], (1, 0)),
        (pd.array(["n", "p", "p", "n"], dtype="category"), ("p", "n")),
    ],
)
def test_target_classes_compare_as_labels(labels, classes):
    frame = pd.DataFrame({"x": [1.0, 2.0, 3.0, 4.0], "y": labels})
    rules = ValidationRules(required_columns=("x",), target_column="y", target_classes=classes)
    report = validate_frame(frame, rules)
    assert report.success, report.summary()


@gx
def test_undeclared_classes_fail_with_a_single_class_target():
    frame = pd.DataFrame({"x": [1.0, 2.0], "y": ["p", "p"]})
    report = validate_frame(frame, ValidationRules(required_columns=("x",), target_column="y"))
    (failure,) = report.failures()
    assert failure.expectation == "expect_column_unique_value_count_to_be_between"
    assert failure.details == "1 distinct class(es); expected at least 2"


@gx
def test_dtypes_are_checked_by_our_code_under_pandas_3():
    frame = pd.DataFrame(
        {
            "s": pd.Series(["1", "2", "?", None], dtype="str"),
            "c": pd.Series(["a", "b", "a", "b"], dtype="category"),
            "n": pd.Series([1, 2, 3, 4], dtype="Int64"),
            "y": [0, 1, 0, 1],
        }
    )
    rules = ValidationRules(
        required_columns=("s", "c", "n"),
        target_column="y",
        columns={
            "s": ColumnRule(min=0, max=10, dtype="numeric"),
            "c": ColumnRule(values=("a", "b"), dtype="categorical"),
            "n": ColumnRule(min=1, max=3, dtype="categorical"),
        },
    )
    report = validate_frame(frame, rules)
    failed = {(r.expectation, r.column): r for r in report.failures()}
    assert set(failed) == {
        ("expect_column_dtype_to_be", "s"),
        ("expect_column_values_to_be_between", "s"),
        ("expect_column_dtype_to_be", "n"),
        ("expect_column_values_to_be_between", "n"),
    }
    assert failed["expect_column_dtype_to_be", "s"].unexpected_count == 1
    assert failed["expect_column_dtype_to_be", "s"].unexpected_examples == ("?",)
    assert "cannot be checked" in failed["expect_column_values_to_be_between", "s"].details
    assert "numeric dtype Int64" in failed["expect_column_dtype_to_be", "n"].details
    assert failed["expect_column_values_to_be_between", "n"].unexpected_count == 1
    # every value a number stored as text: the failure says so, not "0 ... are not numbers"
    texts = frame.assign(s=pd.Series(["1", "2", "3", None], dtype="str"))
    report = validate_frame(texts, rules)
    failed = {(r.expectation, r.column): r for r in report.failures()}
    details = failed["expect_column_values_to_be_between", "s"].details
    assert "every value reads as a number" in details and "are not numbers" not in details


@gx
def test_a_user_expectation_on_a_missing_column_is_reported_not_lost():
    frame = pd.DataFrame({"x": [1.0, 2.0], "y": ["n", "p"]})
    rules = ValidationRules(
        required_columns=("x",),
        target_column="y",
        expectations=(
            {"type": "expect_column_values_to_be_unique", "kwargs": {"column": "id"}},
            {"type": "expect_column_to_exist", "kwargs": {"column": "x", "column_index": 0}},
        ),
    )
    report = validate_frame(frame, rules)
    (failure,) = report.failures()
    assert (failure.expectation, failure.column) == ("expect_column_to_exist", "id")
    # the user's expectation and the check that it is not entirely missing
    assert "2 expectations on it were skipped" in failure.details
    assert report.results[-1].expectation == "expect_column_to_exist"  # the user's, run by GX
    assert report.results[-1].success


@gx
def test_an_empty_frame_fails_the_row_count_without_crashing():
    frame = pd.DataFrame({"x": pd.Series([], dtype=float), "y": pd.Series([], dtype=str)})
    report = validate_frame(frame, ValidationRules(required_columns=("x",), target_column="y"))
    assert report.n_rows == 0
    failed = {r.expectation for r in report.failures()}
    assert "expect_table_row_count_to_be_between" in failed


@gx
def test_unknown_expectation_type_is_a_clear_error(clean_frame):
    rules = replace(
        CLEAN_RULES,
        expectations=({"type": "expect_column_values_to_be_betwen", "kwargs": {"column": "a2"}},),
    )
    with pytest.raises(ParameterError) as info:
        validate_frame(clean_frame, rules)
    message = str(info.value)
    assert "Unknown expectation type 'expect_column_values_to_be_betwen'" in message
    assert "expect_column_values_to_be_between" in message  # the suggestion


@gx
def test_bad_kwargs_of_a_user_expectation_are_a_clear_error(clean_frame):
    rules = replace(
        CLEAN_RULES,
        expectations=({"type": "expect_column_values_to_be_between", "kwargs": {"colum": "a2"}},),
    )
    with pytest.raises(ParameterError, match="'expect_column_values_to_be_between' rejected"):
        validate_frame(clean_frame, rules)


@gx
def test_a_run_writes_no_files(clean_frame, tmp_path, monkeypatch):
    cwd, home, tmp = tmp_path / "cwd", tmp_path / "home", tmp_path / "tmp"
    for directory in (cwd, home, tmp):
        directory.mkdir()
    monkeypatch.chdir(cwd)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setattr(tempfile, "tempdir", str(tmp))
    report = validate_frame(clean_frame.head(200), CLEAN_RULES)
    assert report.success, report.summary()
    assert sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*")) == [
        p.relative_to(tmp_path) for p in (cwd, home, tmp)
    ]


@gx
def test_a_feature_that_arrives_entirely_missing_fails_validation():
    """Without a bound of its own a feature may miss any share of its values, but not all of
    them: an upstream column that broke was dropped by the fit without a word."""
    frame = pd.DataFrame({"x": [1.0, np.nan, 3.0], "plan": [np.nan] * 3, "y": ["n", "p", "n"]})
    rules = ValidationRules(required_columns=("x", "plan"), target_column="y")
    report = validate_frame(frame, rules)
    (failure,) = report.failures()
    assert (failure.expectation, failure.column) == ("expect_column_values_to_not_be_null", "plan")
    assert failure.details.startswith("all 3 values are missing: no rule can use the column")
    (fine,) = [r for r in report.results if r.column == "x" and "null" in r.expectation]
    said = "1 missing value of 3 (33.3%); allowed unless every value is missing"  # "not all"
    assert fine.success and fine.details == said
    # a bound of 1 set by hand allows it
    allowed = ValidationRules(
        required_columns=("x", "plan"),
        target_column="y",
        columns={"plan": ColumnRule(max_missing_fraction=1.0)},
    )
    assert validate_frame(frame, allowed).success


@gx
def test_a_column_pair_expectation_shows_its_examples_as_plain_pairs():
    """They read '(np.float64(nan), np.float64(3.5))'."""
    frame = pd.DataFrame(
        {"a": [5.0, np.nan, 1.0, 4.0], "b": [1.0, 3.5, 2.0, 1.0], "y": list("npnp")}
    )
    rules = ValidationRules(
        required_columns=("a", "b"),
        target_column="y",
        expectations=(
            {
                "type": "expect_column_pair_values_a_to_be_greater_than_b",
                "kwargs": {"column_A": "a", "column_B": "b"},
            },
        ),
    )
    (failure,) = [r for r in validate_frame(frame, rules).failures() if "pair" in r.expectation]
    assert "np." not in str(failure) and "np." not in repr(failure.unexpected_examples)
    assert (1.0, 2.0) in failure.unexpected_examples
    json.dumps(failure.to_dict())


@gx
def test_an_expectation_with_bad_kwargs_is_refused_in_one_line_naming_its_key():
    """Great Expectations' own error spanned five lines and named its model classes, not the
    spec's key."""
    from libre_lib.errors import ParameterError

    frame = pd.DataFrame({"age": [30, 40, 50], "y": [0, 1, 0]})
    rules = ValidationRules(
        required_columns=("age",),
        target_column="y",
        expectations=(
            {"type": "expect_column_values_to_be_between", "kwargs": {"column": "age", "minn": 0}},
        ),
    )
    with pytest.raises(ParameterError) as raised:
        validate_frame(frame, rules)
    message = str(raised.value)
    assert "\n" not in message and message.startswith("expectations.extra: expectation ")
    assert "minn: extra fields not permitted" in message


@gx
def test_classes_written_as_other_numbers_are_named():
    """A target written out as floats ('1.0') against classes 0/1 said only that every value
    was not in ['0', '1']."""
    frame = pd.DataFrame({"x": np.arange(20.0), "target": ["1.0", "0.0"] * 10})
    rules = ValidationRules(
        required_columns=("x",), target_column="target", target_classes=("0", "1"), min_rows=1
    )
    (result,) = [
        r
        for r in validate_frame(frame, rules).failures()
        if r.expectation == "expect_column_values_to_be_in_set"
    ]
    assert "(the column writes 0 as '0.0', 1 as '1.0': list the values as the data" in (
        result.details
    )


def test_validate_frame_given_a_spec_says_how_to_turn_it_into_rules():
    """validate_frame(frame, spec) failed with "'PipelineSpec' object has no attribute
    'target_column'"."""
    from pathlib import Path

    from libre_lib.ops.spec import load_spec
    from libre_lib.ops.validation import validate_frame

    spec = load_spec(Path(__file__).resolve().parents[2] / "deployments/specs/haberman.yaml")
    with pytest.raises(ParameterError, match=r"got PipelineSpec \(a spec: pass .*validation_rules"):
        validate_frame(pd.DataFrame({"a": [1]}), spec)
    with pytest.raises(ParameterError, match="takes ValidationRules; got NoneType"):
        validate_frame(pd.DataFrame({"a": [1]}), None)


def test_a_range_reads_as_the_spec_wrote_it():
    """Pima's report said "outside [0.0, 250.0]" where the spec wrote {min: 0, max: 250}."""
    from libre_lib.ops.validation import _gx_details

    item = {
        "type": "expect_column_values_to_be_between",
        "kwargs": {"column": "glucose", "min_value": 0.0, "max_value": 250.0},
    }
    info = {"unexpected_count": 0, "element_count": 768, "missing_count": 5}
    assert "outside [0, 250]" in _gx_details(item, True, info, [])
    item["kwargs"] = {"column": "bmi", "min_value": 0.5, "max_value": None}
    assert "not ≥ 0.5" in _gx_details(item, True, info, [])
