"""The data contract: built from a model and its training frame, JSON, GX suite, checks."""

import dataclasses
import json

import numpy as np
import pandas as pd
import pytest

from libre_lib import LibreError, ParameterError
from libre_lib.ops.contract import (
    ContractReport,
    ContractViolation,
    DataContract,
)


def _warnings(report, problem=None):
    return {w.column: w for w in report.warnings if problem is None or w.problem == problem}


def _tested(model) -> set[str]:
    return {c.feature for rule in model.rules_ for c in rule}


# --- building and persistence -----------------------------------------------------------------


def test_contract_describes_every_model_column(credit):
    X, model, contract = credit
    assert contract.names == list(model.columns_)
    assert contract.n_training_rows == len(X)
    bins = {f.name: f for f in model.discretization_.features}
    for column in contract.columns:
        feature = bins[column.name]
        assert column.kind == feature.kind
        assert column.has_missing_bin == feature.has_missing
        assert column.in_rules == (column.name in _tested(model))
        assert column.missing_rate == pytest.approx(X[column.name].isna().mean())
        if column.kind == "numeric":
            assert column.family == "number"
            assert column.min == X[column.name].min() and column.max == X[column.name].max()
            assert column.domain is None
        else:
            assert column.family == "string"
            assert column.domain == tuple(feature.categories)
            assert set(column.domain) == set(X[column.name].dropna())


def test_contract_round_trips_through_json(credit, tmp_path):
    _, _, contract = credit
    assert DataContract.from_dict(json.loads(contract.to_json())) == contract
    contract.save(tmp_path / "contract.json")
    assert DataContract.load(tmp_path / "contract.json") == contract
    marked = dataclasses.replace(contract, missing_markers=(" ", "?"), column_markers={"a2": [0]})
    back = DataContract.from_json(marked.to_json())
    assert back.missing_markers == (" ", "?") and back.column_markers == {"a2": ("0",)}
    older = json.loads(contract.to_json())
    del older["missing_markers"]  # written before the field existed
    assert DataContract.from_dict(older) == contract


def test_training_statistics_of_every_row_replace_a_samples(credit):
    """A streamed run builds the contract from its sample, then gives it the statistics of
    every training row: ranges and missing rates replaced, the sample's categories of the
    named (dropped) columns forgotten, everything else kept."""
    _, _, contract = credit
    numeric = next(c for c in contract.columns if c.kind == "numeric")
    text = next(c for c in contract.columns if c.kind == "categorical")
    wide = contract.with_training_statistics(
        10_000, {numeric.name: 2_500}, {numeric.name: [-1.0, 1e9]}, unknown_domains=[text.name]
    )
    assert wide.n_training_rows == 10_000
    assert (wide[numeric.name].min, wide[numeric.name].max) == (-1.0, 1e9)
    assert wide[numeric.name].missing_rate == 0.25
    assert wide[text.name].domain is None and text.domain is not None
    assert wide[text.name].missing_rate == text.missing_rate  # not in the statistics
    others = [c for c in contract.columns if c.name not in (numeric.name, text.name)]
    assert [wide[c.name] for c in others] == others
    report = wide.check(credit[0].assign(**{numeric.name: 5e8}))
    assert numeric.name not in {w.column for w in report.warnings}


def test_a_pipeline_spec_names_the_texts_it_reads_as_missing():
    from libre_lib.ops.spec import DataSource

    def markers(na_values):
        options = {} if na_values is None else {"na_values": na_values}
        return DataSource(path="d.csv", read_options=options).missing_markers()

    assert markers(None) == ()
    assert markers(" ") == (" ",)
    assert markers(["?", " ", "?"]) == ("?", " ")
    assert markers({"a": "?", "b": ["-", "?"]}) == ()  # per column: not for every column
    assert markers([-1]) == ("-1",)
    per_column = DataSource(path="d.csv", read_options={"na_values": {"a": "?", "b": [0, "-"]}})
    assert per_column.column_missing_markers() == {"a": ("?",), "b": ("0", "-")}
    assert DataSource(path="d.csv", read_options={"na_values": "?"}).column_missing_markers() == {}


@pytest.mark.parametrize(
    "data",
    [{"format": "something"}, {"format": "libre-flows/data-contract", "format_version": 99}, []],
)
def test_a_foreign_or_future_contract_is_refused(data):
    with pytest.raises(LibreError):
        DataContract.from_dict(data)


def test_contract_from_the_model_alone_knows_domains_but_not_ranges(credit):
    X, model, _ = credit
    contract = DataContract.from_model(model)
    by_name = {c.name: c for c in contract.columns}
    assert by_name["a6"].domain == credit[2]["a6"].domain
    assert by_name["a2"].min is None and by_name["a2"].max is None
    assert by_name["a2"].missing_rate is None  # a missing bin, rate unknown
    assert by_name["a3"].missing_rate == 0.0  # no missing bin: none in training
    assert contract.check(X).ok and not contract.check(X).warnings


def test_training_frame_must_hold_the_model_columns(credit):
    X, model, _ = credit
    with pytest.raises(LibreError, match="a1"):
        DataContract.from_model(model, X.drop(columns=["a1"]))


def test_tolerance_is_validated():
    with pytest.raises(LibreError, match="missing_rate_tolerance"):
        DataContract((), missing_rate_tolerance=1.5)


# --- errors -----------------------------------------------------------------------------------


def test_the_training_frame_meets_its_contract(credit):
    X, _, contract = credit
    report = contract.check(X)
    assert report.ok and report.n_rows == len(X)
    assert report.warnings == ()
    assert "meets" in report.summary()


def test_a_missing_column_is_an_error_naming_it(credit):
    X, _, contract = credit
    with pytest.raises(ContractViolation, match=r"column 'a6': missing") as caught:
        contract.check(X.drop(columns=["a6"]))
    assert isinstance(caught.value, LibreError)
    assert [e.column for e in caught.value.report.errors] == ["a6"]
    # a name that differs only in case or spaces is named (it said only "missing")
    with pytest.raises(ContractViolation, match=r"it has 'A6 ': names must match exactly"):
        contract.check(X.rename(columns={"a6": "A6 "}))
    # one that differs in its Unicode form prints alike: the message says why they differ
    # (it said "has 'bmï', which the model does not read: renamed?" of 'bmï')
    composed = X.rename(columns={"a6": "a6\u00ef"})
    decomposed = X.rename(columns={"a6": "a6i\u0308"})
    bound = dataclasses.replace(
        contract,
        columns=tuple(
            dataclasses.replace(c, name="a6\u00ef") if c.name == "a6" else c
            for c in contract.columns
        ),
    )
    bound.check(composed)
    with pytest.raises(ContractViolation, match=r"the same name in other Unicode code points"):
        bound.check(decomposed)


def test_text_in_a_numeric_column_is_an_error_with_count_and_examples(credit):
    X, _, contract = credit
    frame = X.assign(a2=X["a2"].astype(object))
    frame.loc[[3, 5, 8], "a2"] = ["abc", "n/a", "abc"]
    with pytest.raises(ContractViolation) as caught:
        contract.check(frame)
    (error,) = caught.value.report.errors
    assert (error.column, error.problem, error.count) == ("a2", "wrong_type", 3)
    assert error.examples == ("abc", "n/a")
    assert "column 'a2': expected numbers" in str(caught.value)


def test_every_error_is_listed_in_one_message(credit):
    X, _, contract = credit
    frame = X.drop(columns=["a1"]).assign(
        a3=X["a3"] > 1,  # booleans in a numeric column
        a9=np.where(X["a9"] == "t", 1, 0),  # numbers where training had text categories
        a14=X["a14"].replace(0.0, np.inf),
    )
    with pytest.raises(ContractViolation) as caught:
        contract.check(frame)
    message = str(caught.value)
    for column in ("a1", "a3", "a9", "a14"):
        assert f"column '{column}'" in message
    assert message.count("\n  - ") == 4
    assert "which the rules that test it cannot place" in message  # a14: the rules test it
    problems = {e.column: e.problem for e in caught.value.report.errors}
    assert problems == {
        "a1": "missing_column",
        "a3": "wrong_type",
        "a9": "wrong_type",
        "a14": "infinite_values",
    }


def test_errors_can_be_returned_instead_of_raised(credit):
    X, _, contract = credit
    report = contract.check(X.drop(columns=["a2"]), raise_errors=False)
    assert not report.ok and report.errors[0].column == "a2"
    with pytest.raises(ContractViolation, match="in batch 7"):
        report.raise_for_errors("batch 7")


def test_numbers_written_as_text_and_pandas3_dtypes_are_accepted(credit):
    X, _, contract = credit
    categorical = [c.name for c in contract.columns if c.kind == "categorical"]
    as_text = X.assign(a2=X["a2"].astype("str").where(X["a2"].notna()))
    as_str = X.astype({c: "str" for c in categorical})
    as_category = X.astype({c: "category" for c in categorical})
    for frame in (as_text, as_str, as_category):
        report = contract.check(frame)
        assert report.ok and report.warnings == ()


def test_extra_columns_are_ignored(credit):
    X, _, contract = credit
    assert contract.check(X.assign(customer_id=np.arange(len(X)))).ok


# --- drift warnings ---------------------------------------------------------------------------


def test_unseen_categories_are_counted_with_examples(credit):
    X, model, contract = credit
    frame = X.copy()
    frame.loc[:9, "a6"] = "zz"
    frame.loc[10:12, "a6"] = "yy"
    frame.loc[13, "a6"] = None  # missing, not unseen
    report = contract.check(frame)
    warning = _warnings(report, "unseen_category")["a6"]
    assert warning.count == 13 and warning.examples == ("zz", "yy")
    assert warning.severity == "warning"
    assert ("do not fire" in warning.message) == ("a6" in _tested(model))
    assert report.observations["a6"].n_unseen == 13
    assert "13 values (1.88%) are categories not seen" in warning.message
    frame.loc[:11, "a6"] = X.loc[:11, "a6"]  # one left: "1 value ... is a category" ("are")
    (one,) = [w for w in contract.check(frame).warnings if w.column == "a6"]
    assert "1 value (0.145%) is a category not seen in training" in one.message


def test_values_outside_the_training_range_are_counted(credit):
    X, _, contract = credit
    low, high = contract["a15"].min, contract["a15"].max
    frame = X.copy()
    frame.loc[:2, "a15"] = high + 1
    frame.loc[3, "a15"] = high + 1000
    frame.loc[4, "a15"] = low - 5
    warning = _warnings(contract.check(frame), "out_of_range")["a15"]
    assert warning.count == 5
    assert warning.examples == (low - 5, high + 1000)
    observation = contract.check(frame).observations["a15"]
    assert (observation.n_below, observation.n_above) == (1, 4)
    _, model, _ = credit
    tested = "a15" in _tested(model)
    assert ("read them as its lowest / highest interval" in warning.message) == tested
    assert ("no rule tests 'a15', so predictions are unaffected" in warning.message) != tested
    untested = next(c for c in contract.names if c not in _tested(model) and contract[c].max)
    frame = X.copy()
    frame.loc[:1, untested] = contract[untested].max + 1
    warning = _warnings(contract.check(frame), "out_of_range")[untested]
    assert f"no rule tests {untested!r}, so predictions are unaffected" in warning.message


def test_a_missing_rate_jump_warns_above_the_tolerance_only(credit):
    X, _, contract = credit
    rate = contract["a14"].missing_rate
    n = len(X)
    frame = X.copy()
    extra = round(0.05 * n)  # +5 points: within the default +10
    targets = X.index[X["a14"].notna()][:extra]
    frame.loc[targets, "a14"] = np.nan
    assert "a14" not in _warnings(contract.check(frame), "missing_rate")
    strict = contract.with_tolerance(0.02)
    warning = _warnings(strict.check(frame), "missing_rate")["a14"]
    assert warning.count == X["a14"].isna().sum() + extra
    assert frame["a14"].isna().mean() > rate + 0.02
    more = X.index[X["a14"].notna()][: int(0.2 * n)]
    frame.loc[more, "a14"] = np.nan
    assert "a14" in _warnings(contract.check(frame), "missing_rate")


def test_missing_values_where_training_had_none_warn(credit):
    X, _, contract = credit
    assert contract["a9"].missing_rate == 0.0 and not contract["a9"].has_missing_bin
    frame = X.assign(a9=X["a9"].where(X.index >= 3))
    warning = _warnings(contract.check(frame), "missing_not_in_training")["a9"]
    assert warning.count == 3


def test_batch_reports_merge_into_the_whole_frame_report(credit):
    X, _, contract = credit
    frame = X.copy()
    frame.loc[::7, "a7"] = "new"
    frame.loc[::11, "a8"] = 1e6
    frame.loc[::3, "a3"] = np.nan
    whole = contract.check(frame)
    merged = ContractReport(0, missing_rate_tolerance=contract.missing_rate_tolerance)
    for start in range(0, len(frame), 100):
        merged = merged.merge(contract.check(frame.iloc[start : start + 100]))
    assert merged.to_dict() == whole.to_dict()
    assert {w.column for w in whole.warnings} == {"a7", "a8", "a3"}
    assert ContractReport.from_dict(json.loads(json.dumps(whole.to_dict()))) == whole


# --- the Great Expectations suite -------------------------------------------------------------


def test_expectation_suite_is_plain_json_with_drift_as_warnings(credit):
    _, _, contract = credit
    suite = contract.to_expectation_suite("libre-credit")
    assert json.loads(json.dumps(suite)) == suite
    by_type = {}
    for item in suite["expectations"]:
        by_type.setdefault(item["type"], []).append(item)
    assert len(by_type["expect_column_to_exist"]) == len(contract.columns)
    assert all(e["severity"] == "critical" for e in by_type["expect_column_to_exist"])
    in_set = {e["kwargs"]["column"]: e for e in by_type["expect_column_values_to_be_in_set"]}
    assert in_set["a6"]["kwargs"]["value_set"] == list(contract["a6"].domain)
    between = {e["kwargs"]["column"]: e for e in by_type["expect_column_values_to_be_between"]}
    assert between["a2"]["kwargs"]["min_value"] == contract["a2"].min
    assert all(e["severity"] == "warning" for e in by_type["expect_column_values_to_be_in_set"])
    not_null = {e["kwargs"]["column"]: e for e in by_type["expect_column_values_to_not_be_null"]}
    assert not_null["a3"]["kwargs"]["mostly"] == pytest.approx(0.9)


@pytest.mark.gx
def test_great_expectations_runs_the_suite_and_agrees_with_check(credit):
    import great_expectations as gx
    from great_expectations.data_context.types.base import ProgressBarsConfig

    X, _, contract = credit
    frame = X.copy()
    frame.loc[:9, "a6"] = "zz"
    frame.loc[:3, "a2"] = 500.0
    suite = gx.ExpectationSuite(**contract.to_expectation_suite())
    context = gx.get_context(mode="ephemeral")
    context.variables.progress_bars = ProgressBarsConfig(globally=False)
    batch = (
        context.data_sources.add_pandas(name="scoring")
        .add_dataframe_asset(name="batch")
        .add_batch_definition_whole_dataframe("whole")
        .get_batch(batch_parameters={"dataframe": frame})
    )
    result = batch.validate(suite, result_format={"result_format": "SUMMARY"})
    failed = {
        (r.expectation_config.type, r.expectation_config.kwargs["column"]): r
        for r in result.results
        if not r.success
    }
    assert set(failed) == {
        ("expect_column_values_to_be_in_set", "a6"),
        ("expect_column_values_to_be_between", "a2"),
    }
    ours = _warnings(contract.check(frame))
    in_set = failed[("expect_column_values_to_be_in_set", "a6")]
    assert in_set.result["unexpected_count"] == ours["a6"].count == 10
    between = failed[("expect_column_values_to_be_between", "a2")]
    assert between.result["unexpected_count"] == ours["a2"].count == 4


def test_a_tested_column_empty_in_every_row_is_an_error(credit):
    """An all-blank glucose column scored every pima row positive (its "∪ missing" bin), the
    run ended with exit 0 and one drift warning."""
    X, model, contract = credit
    tested = sorted(c for c in _tested(model) if contract[c].missing_rate < 0.5)
    untested = sorted(c for c in contract.names if c not in _tested(model))
    frame = X.iloc[:40].copy()
    frame[tested[0]] = np.nan if contract[tested[0]].kind == "numeric" else None
    with pytest.raises(ContractViolation, match=rf"column {tested[0]!r}: missing in every one "
                       r"of the 40 rows .* and rules test it"):  # fmt: skip
        contract.check(frame)
    few = X.iloc[:5].copy()
    few[tested[0]] = frame[tested[0]].iloc[:5]
    assert not contract.check(few, raise_errors=False).errors  # 5 rows tell little
    blank = X.iloc[:40].copy()
    blank[untested[0]] = np.nan if contract[untested[0]].kind == "numeric" else None
    assert not contract.check(blank, raise_errors=False).errors  # no rule reads it
    # a contract built from the model alone does not know the training's missing rate
    bare = DataContract.from_model(model)
    assert bare[tested[0]].missing_rate is None
    assert not bare.check(frame, raise_errors=False).errors


def test_an_infinite_value_fails_only_a_column_the_rules_test(credit_data):
    """One inf in a column no rule tests failed the whole file, though predict scores such
    rows; there it is out of the training range, as drift."""
    from libre_lib import LibreClassifier

    X, y, info = credit_data
    model = LibreClassifier(positive_class=info.positive_class, random_state=0, max_rules=1)
    model.fit(X, y)
    contract = DataContract.from_model(model, X)
    numeric = [c.name for c in contract.columns if c.kind == "numeric"]
    tested = {c.feature for rule in model.rules_ for c in rule}
    free = next(c for c in numeric if c not in tested)
    frame = X.assign(**{free: X[free].replace(X[free].max(), np.inf)})
    report = contract.check(frame)
    assert report.ok and any(w.column == free and "outside" in w.message for w in report.warnings)
    assert (model.predict(frame) == model.predict(X)).all()


def test_a_tested_column_of_codes_written_as_decimals_is_named_as_such():
    """Codes read as text ('6') arriving as '6.0' failed as "re-coded upstream (codes for
    names, booleans for t/f)"; the number written another way is named."""
    from libre_lib import LibreClassifier

    rng = np.random.default_rng(0)
    codes = rng.choice(["1", "2", "3", "6"], 400)
    X = pd.DataFrame({"code": codes, "z": rng.normal(size=400)})
    y = np.where((codes == "6") | (rng.random(400) < 0.05), "yes", "no")
    model = LibreClassifier(random_state=0, categorical_features=["code"]).fit(X, y)
    assert "code" in {c.feature for rule in model.rules_ for c in rule}
    contract = DataContract.from_model(model, X)
    decimals = X.assign(code=X["code"] + ".0")
    with pytest.raises(ContractViolation, match=r"the column writes '\d' as '\d\.0' \(a number"):
        contract.check(decimals)


def test_a_column_missing_beside_as_many_unknown_ones_asks_whether_it_was_renamed(credit):
    """A renamed column read "column 'a9': missing from the input" without a word of the new
    name the input had instead."""
    X, _, contract = credit
    renamed = X.rename(columns={"a9": "prior_default"})
    issues = contract.missing_columns(renamed.columns)
    (issue,) = issues
    assert issue.message.startswith("column 'a9': missing from the input")
    assert issue.message.endswith(
        "the input has 'prior_default', which the model does not read: renamed?"
    )
    extra = X.assign(id=1, source="x", batch=2).drop(columns="a9")  # more new names than lost
    (issue,) = contract.missing_columns(extra.columns)
    assert "renamed?" not in issue.message


def test_the_label_column_of_a_labelled_batch_is_not_offered_as_a_renamed_column(credit):
    """Scoring rows that keep their label, one model column lost: "missing ...; the input has
    'class', which the model does not read: renamed?" (any lost column matched the label)."""
    from libre_lib.ops.scoring import score_frame

    X, model, contract = credit
    assert model.rules_.target == "target"
    labelled = X.drop(columns="a9").assign(target="+")
    (issue,) = contract.missing_columns(labelled.columns, target=model.rules_.target)
    assert issue.message == "column 'a9': missing from the input"
    with pytest.raises(ContractViolation) as raised:
        score_frame(model, labelled, contract)
    assert "renamed?" not in str(raised.value) and "'a9': missing" in str(raised.value)


def test_a_text_given_as_the_markers_list_is_refused(credit):
    """missing_markers='NaN' was read as the markers 'N', 'a', 'N'."""
    X, model, _ = credit
    with pytest.raises(
        ParameterError, match=r"missing_markers takes a list of texts; got the text 'NaN'"
    ):
        DataContract.from_model(model, X, missing_markers="NaN")
    with pytest.raises(ParameterError, match=r"column_markers\['a9'\] takes a list"):
        DataContract.from_model(model, X, column_markers={"a9": "t/f"})
    assert DataContract.from_model(model, X, missing_markers=["NaN"]).missing_markers == ("NaN",)
    with pytest.raises(ParameterError, match="missing_markers takes a list"):  # a contract.json
        DataContract(columns=(), missing_markers="NaN")


def test_an_out_of_range_value_is_written_apart_from_the_bound_it_crossed():
    """A float32 training minimum and the same value read as float64 just below it: the
    warning read "outside the training range [-7.0421, 6.8248] ... observed -7.0421 to ..."."""
    from libre_lib.ops.contract import ColumnObservation

    low = float(np.float32(-7.0421))
    observation = ColumnObservation(
        "x",
        "numeric",
        True,
        False,
        low,
        6.8248,
        0.0,
        n_rows=10,
        n_below=1,
        observed_min=-7.0421,
        observed_max=6.0,
    )
    (issue,) = observation.warnings(0.1)
    assert (
        "outside the training range [-7.04209995, 6.8248] (1 below, 0 above; observed "
        "-7.0421 to 6)" in issue.message
    )
