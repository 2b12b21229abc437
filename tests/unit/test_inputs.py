"""How input columns are typed: numbers hidden in text columns are named in a warning, and
dates are refused, so no model silently memorises exact values."""

import contextlib
import datetime
import warnings

import numpy as np
import pandas as pd
import pytest

from libre_lib import LibreClassifier
from libre_lib.errors import DataError, LibreWarning, ParameterError, SchemaError
from libre_lib.inputs import (
    as_frame,
    bools_beside_numbers_message,
    numeric_values,
    resolve_categorical,
    warn_spelled_alike,
)
from libre_lib.ops import stages
from libre_lib.ops.spec import parse_spec

N = 300


def measurements(stray_every: int | None = 10) -> tuple[pd.DataFrame, np.ndarray]:
    """A numeric column 'a' with stray text in every ``stray_every``-th row (10 %), as a
    spreadsheet export gives it, and a noise column 'b'."""
    rng = np.random.default_rng(0)
    a = rng.normal(30, 5, N).round(2)
    y = (a > 31).astype(int)
    column = a.astype(object)
    if stray_every is not None:
        column[::stray_every] = ["n/a", "?", "abc"] * (N // stray_every // 3)
    return pd.DataFrame({"a": column, "b": rng.normal(size=N)}), y


@contextlib.contextmanager
def no_libre_warnings():
    with warnings.catch_warnings():
        warnings.simplefilter("error", LibreWarning)
        yield


# --- numbers in a text column -------------------------------------------------------------------


def test_a_numeric_column_with_stray_text_is_named_with_its_share_and_examples():
    # the story: ~10 % "n/a"/"?"/"abc" among floats made the column categorical, and the rule
    # listed exact values (a ∈ {20.03, 24.82, 31.1, …}) without a word
    X, _ = measurements()
    with pytest.warns(LibreWarning) as caught:
        resolve_categorical(X, None)
    (message,) = [str(w.message) for w in caught]
    assert message.startswith("Column 'a' is mostly numbers, but 30 of its 300 values (10.0%)")
    assert "'n/a'" in message and "'?'" in message and "'abc'" in message
    assert "categorical_features" in message and "errors='coerce'" in message


def test_the_warning_reaches_the_caller_of_fit_and_the_cleaned_column_gets_intervals():
    X, y = measurements()
    model = LibreClassifier(n_estimators=5, max_rules=3, random_state=0)
    with pytest.warns(LibreWarning, match=r"Column 'a' is mostly numbers") as caught:
        model.fit(X, y)
    assert any(w.filename == __file__ for w in caught if "mostly numbers" in str(w.message))
    assert model.discretization_.features[0].kind == "categorical"
    cleaned = X.assign(a=pd.to_numeric(X["a"], errors="coerce"))  # what the warning advises
    with no_libre_warnings():
        resolve_categorical(cleaned, None)
    model.fit(cleaned, y)
    assert model.discretization_.features[0].kind == "numeric"
    assert "a ∈ {" not in str(model.rules_)


def test_declaring_the_column_categorical_silences_the_warning():
    X, _ = measurements()
    with no_libre_warnings():
        assert resolve_categorical(X, ["a"]) == [True, False]
        assert resolve_categorical(X, [0]) == [True, False]
        assert resolve_categorical(X, [True, False]) == [True, False]
        assert resolve_categorical(X, None, warn=False) == [True, False]


@pytest.mark.parametrize("dtype", [object, "str"])
def test_numbers_stored_as_text_are_named(dtype):
    X, _ = measurements(stray_every=None)
    text = X.assign(a=X["a"].astype(str).astype(dtype))
    with pytest.warns(LibreWarning, match=r"Column 'a' holds numbers stored as text"):
        resolve_categorical(text, None)


@pytest.mark.parametrize(
    "text, message",
    [
        (
            lambda v: f"{v:.2f}".replace(".", ","),
            r"decimal comma \(e\.g\. '\d+,\d\d'\).*decimal=','",
        ),
        (lambda v: f"{v * 100:,.0f}", r"thousands separator \(e\.g\. '\d,\d{3}'\).*thousands=','"),
        (  # a finance export's amounts: thousands and cents
            lambda v: f"{v * 100:,.2f}",
            r"thousands separator \(e\.g\. '\d,\d{3}\.\d\d'\).*thousands=','",
        ),
        (
            lambda v: f"{v * 100:,.0f}".replace(",", " "),
            r"spaces between thousands \(e\.g\. '\d \d{3}'\).*str\.replace\(r'\\s'",
        ),
        (lambda v: f"{v:.1f}%", r"as percentages \(e\.g\. '\d+\.\d%'\).*rstrip\('%'\)\) / 100"),
        (  # the advice turns the decimal comma into a point too
            lambda v: f"{v * 100:,.1f}".replace(",", " ").replace(".", ","),
            r"spaces between thousands .*regex=True\)\.str\.replace\(',', '\.'\)\)\)",
        ),
        (
            lambda v: f"{v:.1f}%".replace(".", ","),
            r"as percentages \(e\.g\. '\d+,\d%'\).*rstrip\('%'\)\.str\.replace\(',', '\.'\)\)",
        ),
    ],
    ids=[
        "decimal-comma",
        "thousands",
        "thousands-and-decimals",
        "spaces",
        "percent",
        "spaces-and-decimal-comma",
        "percent-with-decimal-comma",
    ],
)
def test_numbers_written_for_people_are_named_with_the_fix(text, message):
    """A European CSV's "33,60", a US report's "2,650" or "2,650.25", a French "2 650", a
    "12.5%": parsed as text, not numbers."""
    X, _ = measurements(stray_every=None)
    written = X.assign(a=X["a"].map(text))
    assert written["a"].str.contains("[, %]").any()
    with pytest.warns(LibreWarning, match=message):
        resolve_categorical(written, None)


@pytest.mark.parametrize(
    "column",
    [
        ["x", "y", "z"] * (N // 3),  # categories
        ["0", "1", "n/a"] * (N // 3),  # a few codes: harmless as categories
        [str(i) for i in range(N // 2)] + [f"w{i}" for i in range(N // 2)],  # half text
        pd.Categorical([str(i % 50) for i in range(N)]),  # categories chosen by the caller
    ],
    ids=["categories", "codes", "half-text", "category-dtype"],
)
def test_real_categories_draw_no_warning(column):
    with no_libre_warnings():
        assert resolve_categorical(pd.DataFrame({"c": column}), None) == [True]


# --- dates ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("column", "what"),
    [
        (pd.date_range("2020-01-01", periods=N, freq="D"), "dates"),
        (pd.date_range("2020-01-01", periods=N, freq="h", tz="Europe/Paris"), "dates"),
        (pd.period_range("2020-01", periods=N, freq="M"), "dates"),
        ([datetime.date(2020, 1, 1) + datetime.timedelta(days=i) for i in range(N)], "dates"),
        (pd.to_timedelta(np.arange(N), unit="s"), "durations"),
    ],
    ids=["datetime64", "tz-aware", "period", "date-objects", "timedelta64"],
)
def test_a_date_column_is_refused_with_what_to_do(column, what):
    # the story: a timestamp column was typed categorical and rules named exact timestamps
    X = pd.DataFrame({"when": column, "b": np.arange(N, dtype=float)})
    y = np.arange(N) % 2
    with pytest.raises(DataError, match=rf"Column 'when' holds {what} \(dtype "):
        resolve_categorical(X, None)
    with pytest.raises(DataError, match=r"Column 'when' holds .*(derive features|number)"):
        LibreClassifier(n_estimators=2, max_rules=3).fit(X, y)
    with pytest.raises(DataError, match=r"Column 'when'"):
        resolve_categorical(X, ["when"])  # declaring it categorical makes no difference


@pytest.mark.parametrize("dtype", [bool, "boolean", object])
def test_booleans_in_a_column_learned_as_numbers_are_refused_at_predict(dtype):
    """predict read True as 1 in a numeric column without a word: `b >= 8` stopped firing
    and 99 of 600 predictions changed."""
    X = pd.DataFrame({"b": np.arange(N) % 10, "a": np.arange(N) % 7})
    model = LibreClassifier(n_estimators=2, random_state=0).fit(X, (X.b > 7).astype(int))
    flags = X.assign(b=(X.b > 7).astype(dtype))
    with pytest.raises(DataError, match=r"Column 'b' holds booleans \(dtype .*learned it as num"):
        model.predict(flags)
    assert (model.predict(X.assign(b=X.b.astype(float))) == model.predict(X)).all()


def test_a_column_parsed_as_dates_in_a_pipeline_is_refused(tmp_path):
    days = pd.date_range("2020-01-01", periods=N, freq="D").strftime("%Y-%m-%d")
    data = pd.DataFrame({"visit": days, "age": np.arange(N) % 70 + 18, "target": np.arange(N) % 2})
    data.to_csv(tmp_path / "visits.csv", index=False)
    spec = parse_spec(
        {
            "name": "visits",
            "data": {"path": "visits.csv", "read_options": {"parse_dates": ["visit"]}},
            "target": {"column": "target", "positive_class": 1},
            "model": {"n_estimators": 2, "max_rules": 3},
        },
        base_dir=tmp_path,
    )
    with pytest.raises(DataError, match=r"'visit' \(dates, dtype datetime64.* Leave them out "
                       r"\(features.exclude: \['visit'\]\), or derive"):  # fmt: skip
        stages.load(spec, "fingerprint")  # at load, before validation, in the spec's terms


def test_labels_of_mixed_types_are_refused_not_inverted():
    X = pd.DataFrame({"a": np.linspace(0, 1, 40)})
    y = pd.Series([1 if v > 0.3 else "other" for v in X.a], dtype=object)
    with pytest.raises(DataError, match=r"y mixes text and non-text labels .*y.astype\(str\)"):
        LibreClassifier(random_state=0).fit(X, y)
    model = LibreClassifier(random_state=0, max_rules=1).fit(X, y.astype(str))
    assert (model.predict(X) == y.astype(str)).mean() > 0.9


@pytest.mark.parametrize(
    "cells, message",
    [
        ([["a"], ["b"]], r"Column 'tags' holds a list at row 0 \(\['a'\]\)"),
        ([{"k": 1}, "x"], r"Column 'tags' holds a dict at row 0"),
        ([b"x", b"y"], r"Column 'tags' holds a bytes at row 0 .*str.decode"),
    ],
    ids=["list", "dict", "bytes"],
)
def test_cells_no_rule_can_name_are_refused_naming_the_column(cells, message):
    X = pd.DataFrame({"ok": np.arange(40) % 3, "tags": cells * 20})
    y = np.arange(40) % 2
    with pytest.raises(DataError, match=message):
        LibreClassifier(random_state=0).fit(X, y)
    mixed = pd.DataFrame({"ok": np.arange(40) % 3, "tags": ["a", 1.5] * 20})  # text and numbers
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", LibreWarning)
        LibreClassifier(random_state=0, max_rules=1).fit(mixed, y).to_json()


def test_decimal_columns_are_numbers_as_databases_and_warehouse_parquet_give_them():
    """An object column of Decimal cells (a SQL read) or an Arrow decimal128 column (Parquet
    from a warehouse) was refused or read as one category per value."""
    import decimal

    import pyarrow as pa

    rng = np.random.default_rng(0)
    X = pd.DataFrame({"amount": rng.integers(0, 1000, 300) / 10, "k": rng.integers(0, 3, 300)})
    y = (X["amount"] > 60) & (X["k"] > 0)
    cells = [decimal.Decimal(f"{v:.1f}") for v in X["amount"]]
    cells[5] = None  # a missing cell, as a NULL reads
    cells[6] = 12  # an int beside the decimals, as an object column may hold
    plain = X.assign(amount=[np.nan if c is None else float(c) for c in cells])
    expected = LibreClassifier(random_state=0).fit(plain, y)
    arrow = pd.array(cells, dtype=pd.ArrowDtype(pa.decimal128(6, 1)))
    for amount in (pd.Series(cells, dtype=object), arrow):
        frame = X.assign(amount=amount)
        assert resolve_categorical(as_frame(frame), None) == [False, False]
        model = LibreClassifier(random_state=0).fit(frame, y)
        assert str(model.rules_) == str(expected.rules_)
        assert "amount ∈ [" in str(model.rules_) or "amount ≥" in str(model.rules_)
        np.testing.assert_array_equal(model.predict(frame), expected.predict(plain))
    # text beside the decimals: refused, naming the column, as before
    frame = X.assign(amount=pd.Series(["n/a", *cells[1:]], dtype=object))
    with pytest.raises(DataError, match=r"Column 'amount' holds a Decimal"):
        LibreClassifier(random_state=0).fit(frame, y)


def test_an_object_column_of_floats_is_numbers_as_the_same_array_is():
    """``df.replace({np.nan: None})`` leaves float cells in object columns: they were one
    category per value (no rule learned), while the same values as a numpy array were numbers."""
    rng = np.random.default_rng(0)
    plain = pd.DataFrame({"x": rng.random(400).round(4), "z": rng.random(400).round(4)})
    y = (plain["x"] > 0.5).to_numpy()
    plain.loc[::25, "x"] = np.nan
    objects = plain.replace({np.nan: None})
    assert objects["x"].dtype == object and objects["x"].iloc[1].__class__ is float
    assert resolve_categorical(as_frame(objects), None) == [False, False]
    with warnings.catch_warnings():
        warnings.simplefilter("error", LibreWarning)  # no "numbers stored as text" warning
        model = LibreClassifier(random_state=0).fit(objects, y)
    expected = LibreClassifier(random_state=0).fit(plain, y)
    assert str(model.rules_) == str(expected.rules_) and "x ∈ [" in str(model.rules_)
    np.testing.assert_array_equal(model.predict(objects), expected.predict(plain))
    # whole numbers too (they stayed categories, while the same column written to Parquet
    # was numbers in a pipeline); a column of bools and ints does not pass for numbers
    ints = pd.DataFrame({"k": pd.Series([1, 2, None, 3] * 10, dtype=object)})
    assert as_frame(ints)["k"].dtype == "Int64" and as_frame(ints)["k"].isna().sum() == 10
    # declared categorical, they stay whole numbers (they turned into categories 2.0, 4.0)
    y = np.arange(40) % 2
    coded = LibreClassifier(random_state=0, categorical_features=["k"]).fit(ints, y)
    (condition,) = [c for rule in coded.rules_ for c in rule if c.feature == "k"][:1]
    assert all(type(v) is int for v in condition.categories), condition.categories
    flags = pd.DataFrame({"k": pd.Series([1, True, 0] * 10, dtype=object)})
    assert as_frame(flags)["k"].dtype == object


def test_bools_beside_the_numbers_they_equal_draw_a_warning():
    """True == 1 in Python: in one object column they were one category, named by whichever
    came first, without a word, and the rule text named one spelling while matching both."""
    rng = np.random.default_rng(3)
    cells = np.array(["1", 1, True, "x", None], dtype=object)[rng.integers(0, 5, 400)]
    X = pd.DataFrame({"mixed": pd.Series(cells, dtype=object), "noise": rng.normal(size=400)})
    said = r"Column 'mixed' holds the bools and numbers True / 1: .*astype\('string'\)"
    with pytest.warns(LibreWarning, match=said):
        LibreClassifier(random_state=0).fit(X, np.arange(400) % 2)
    apart = X.assign(mixed=X["mixed"].astype("string"))  # the advice: no warning
    with no_libre_warnings():
        assert resolve_categorical(apart, None) == [True, False]
    # and missing values stay missing (astype(str) made them a category 'None' on pandas 2)
    model = LibreClassifier(random_state=0, n_estimators=2).fit(apart, np.arange(400) % 2)
    (mixed,) = [f for f in model.discretization_.features if f.name == "mixed"]
    assert sorted(mixed.categories) == ["1", "True", "x"] and mixed.has_missing
    for fine in ([True, 2, "x"], [True, "1"], [False, 1]):  # no value equal to another
        assert bools_beside_numbers_message(pd.Series(fine * 5, dtype=object)) is None


def test_not_a_time_beside_numbers_is_a_missing_value_at_fit_and_at_predict():
    """NaT in an object column of floats (a frame concatenated from sources with dates) was a
    bare TypeError naming no column; it is missing, as None and pd.NA are."""
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"income": rng.normal(size=200), "k": rng.integers(0, 3, 200)})
    y = (X["income"] > 0).astype(int)
    missing = X.astype({"income": object})
    missing.loc[::5, "income"] = None
    for absent in (pd.NaT, np.datetime64("NaT")):
        odd = X.astype({"income": object})
        odd.loc[::5, "income"] = absent
        model = LibreClassifier(random_state=0).fit(odd, y)
        expected = LibreClassifier(random_state=0).fit(missing, y)
        assert str(model.rules_) == str(expected.rules_)
        np.testing.assert_array_equal(model.predict(odd), expected.predict(missing))


def test_dates_or_durations_where_a_model_learned_numbers_are_refused_at_predict():
    """Fit refuses them; predict read a duration as nanoseconds, every row past the last cut."""
    rng = np.random.default_rng(0)
    X = pd.DataFrame(
        {"days": rng.integers(0, 1000, 300).astype(float), "k": rng.integers(0, 3, 300)}
    )
    model = LibreClassifier(random_state=0).fit(X, X["days"] > 600)
    durations = X.assign(days=pd.to_timedelta(X["days"], unit="D"))
    with pytest.raises(DataError, match=r"Column 'days' holds durations .*learned it as numbers"):
        model.predict(durations)
    gone = X.assign(days=pd.Series([pd.NaT, None] * 150, dtype=object))  # all missing: no dates
    assert (model.predict(gone) == model.predict(X.assign(days=np.nan))).all()
    dates = X.assign(days=pd.Timestamp("2020-01-01") + pd.to_timedelta(X["days"], unit="D"))
    with pytest.raises(DataError, match=r"Column 'days' holds dates"):
        model.predict(dates.astype({"days": object}))


def test_integers_beyond_float_precision_draw_a_warning_naming_the_column():
    X = pd.DataFrame({"id": np.arange(60, dtype=np.int64) + 2**60, "x": np.arange(60) % 7})
    y = np.arange(60) % 2
    # 60 consecutive integers near 2**60 are one float: the warning says why the column goes
    said = r"Column 'id' holds integers beyond 2\*\*53.*its 60 distinct values are 1 as floats \(so"
    with pytest.warns(LibreWarning, match=said):
        LibreClassifier(random_state=0, max_rules=1).fit(X, y)
    spread = X.assign(id=np.arange(60, dtype=np.int64) * 4096 + 2**60)  # still distinct
    with pytest.warns(LibreWarning, match=r"beyond 2\*\*53.*round: nearby values may share"):
        LibreClassifier(random_state=0, max_rules=1).fit(spread, y)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        LibreClassifier(random_state=0, max_rules=1).fit(X.assign(id=np.arange(60)), y)
    assert not [w for w in caught if "2**53" in str(w.message)]


# --- categories read back with another type, tables of other libraries ------------------------


def coded() -> tuple[pd.DataFrame, np.ndarray]:
    """Int codes (declared categorical), a bool flag and a number; the label needs all three."""
    rng = np.random.default_rng(0)
    a = rng.integers(0, 100, 400)
    code = rng.choice([101, 202, 303], 400)
    flag = rng.random(400) > 0.5
    y = ((a > 60) & (code != 303) & flag).astype(int)
    return pd.DataFrame({"a": a, "code": code, "flag": flag}), y


def test_categories_read_back_as_text_match_what_they_spell():
    X, y = coded()
    model = LibreClassifier(
        categorical_features=["code"], random_state=0, n_estimators=20, alpha=0.7,
        max_rules=3, max_intervals=3, conflict_tolerance=0,
    ).fit(X, y)  # fmt: skip
    tested = {c.feature for rule in model.rules_ for c in rule}
    assert {"code", "flag"} <= tested
    expected = model.predict(X)
    as_text = X.astype(str)  # a service reading CSV or JSON as strings
    assert (model.predict(as_text) == expected).all()
    assert (
        model.predict(X.assign(flag=X.flag.map({True: " true", False: "FALSE"}))) == expected
    ).all()
    # and back: codes that were text in training ("101", ...) arrive as ints
    text_model = LibreClassifier(
        random_state=0, n_estimators=20, alpha=0.7, max_rules=3, max_intervals=3,
        conflict_tolerance=0,
    ).fit(as_text.assign(a=X.a), y)  # fmt: skip
    assert (text_model.predict(X) == text_model.predict(as_text.assign(a=X.a))).all()


def test_a_column_mixing_text_and_numbers_matches_only_equal_values():
    values = np.array(["1", 1, "x", 2.0, None, "2"], dtype=object)
    from libre_lib.inputs import category_codes

    # the categories hold text and numbers: each value matches its equal only
    assert category_codes(values, ("1", 2.0)).tolist() == [0, -1, -1, 1, -1, -1]
    # numbers only: the text "1" spells 1 and "2" spells 2.0; "x" and None match nothing
    assert category_codes(values, (1, 2.0)).tolist() == [0, 0, -1, 1, -1, 1]
    # two categories spelling the same ("7" and "07" both spell 7): no guess
    assert category_codes(np.array([7], dtype=object), ("7", "07")).tolist() == [-1]


def test_tables_of_other_libraries_keep_their_column_names():
    pa = pytest.importorskip("pyarrow")
    X, y = coded()
    table = pa.Table.from_pandas(X, preserve_index=False)
    model = LibreClassifier(random_state=0, n_estimators=10, max_rules=3).fit(table, y)
    assert list(model.feature_names_in_) == ["a", "code", "flag"]
    expected = model.predict(X)
    reordered = table.select(["flag", "a", "code"])
    assert (model.predict(reordered) == expected).all()
    when = pa.table({"a": X.a, "when": pa.array(np.arange(400) * 10**9, pa.timestamp("ns"))})
    with pytest.raises(DataError, match=r"Column 'when' holds dates"):
        LibreClassifier(random_state=0).fit(when, y)


def test_a_model_fitted_without_names_warns_and_matches_a_frame_by_position():
    X, y = coded()
    model = LibreClassifier(random_state=0, n_estimators=10, max_rules=3).fit(X.to_numpy(), y)
    expected = model.predict(X.to_numpy())
    named = X.set_axis(["x1", "x0", "x2"], axis=1)  # names that happen to match, swapped
    with pytest.warns(UserWarning, match="fitted without feature names"):
        assert (model.predict(named) == expected).all()
    with pytest.raises(SchemaError, match="X has 2 features, but LibreClassifier is expecting 3"):
        model.predict(X.iloc[:, :2])


@pytest.mark.parametrize(
    "labels", [[0, 1, 2], [("a", "x"), ("a", "y"), ("b", "x")], ["a", 1, 2.5]], ids=str
)
def test_columns_named_by_numbers_or_tuples_are_matched_by_the_names_the_rules_show(labels):
    """No feature_names_in_ for such names (as in scikit-learn), but the rules name the
    columns: a frame with them in another order predicts as the model does, before and after
    a JSON round trip; a frame of other names is matched by position, with a warning."""
    X, y = coded()
    X = X.set_axis(pd.MultiIndex.from_tuples(labels) if isinstance(labels[0], tuple) else labels,
                   axis=1)  # fmt: skip
    model = LibreClassifier(random_state=0, n_estimators=10, max_rules=3).fit(X, y)
    assert not hasattr(model, "feature_names_in_")
    assert {c.feature for r in model.rules_ for c in r.conditions} <= set(map(str, labels))
    expected = model.predict(X)
    reordered = X.iloc[:, [2, 0, 1]]
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        assert (model.predict(reordered) == expected).all()
        again = LibreClassifier.from_json(model.to_json())
        assert (again.predict(reordered) == expected).all()
    other = X.set_axis([7, 8, 9], axis=1)
    with pytest.warns(UserWarning, match=r"X's columns \['7', '8', '9'\] are not the columns"):
        assert (model.predict(other) == expected).all()
    # the same names as texts, in another order (a Parquet round trip writes 0 as "0"): matched
    # by name; they were matched by position, and predictions changed without an error
    texts = reordered.set_axis([str(c) for c in reordered.columns], axis=1)
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        assert (model.predict(texts) == expected).all()


def test_an_index_in_categorical_features_that_is_also_another_columns_name_is_refused():
    X, y = coded()
    X = X.set_axis([2, 0, 1], axis=1)  # column index 0 holds the column named 2
    with pytest.raises(ParameterError, match=r"index 0, which holds column '2', but X also has a "
                       r"column named '0' \(index 1\): name it as text \('0'\)"):  # fmt: skip
        LibreClassifier(categorical_features=[0]).fit(X, y)
    model = LibreClassifier(categorical_features=["0"], random_state=0, max_rules=3).fit(X, y)
    kinds = {f.name: f.kind for f in model.discretization_.features}
    assert kinds["2"] == "numeric" and kinds["0"] == "categorical"  # a, and code as declared
    # in order, an index and a name agree: no doubt
    X = X.set_axis([0, 1, 2], axis=1)
    model = LibreClassifier(categorical_features=[1], random_state=0, max_rules=3).fit(X, y)
    assert {f.name: f.kind for f in model.discretization_.features}["1"] == "categorical"


SECONDS = pd.array([datetime.timedelta(seconds=s) for s in range(N)], "duration[ns][pyarrow]")
HOURS = pd.array([datetime.time(h % 24) for h in range(N)], dtype="time64[us][pyarrow]")
CUT = pd.cut(np.arange(N) % 10, [-1, 4, 10])


@pytest.mark.parametrize(
    "column, message",
    [
        (CUT, r"holds intervals \(dtype category\).*astype\('string'\)"),
        (pd.Series(list(CUT), dtype=object), r"holds intervals \(dtype object\)"),
        (
            pd.Categorical(pd.to_datetime(["2020-01-01", "2021-01-01"] * (N // 2))),
            r"holds dates \(dtype category\)",
        ),
        (
            pd.Categorical(pd.to_timedelta(["1D", "2D"] * (N // 2))),
            r"holds durations \(dtype category\)",
        ),
        (pd.Categorical([("x", 0), ("x", 1)] * (N // 2)), r"holds a tuple as a category"),
        (pd.Categorical([b"a", b"b"] * (N // 2)), r"holds a bytes as a category .*str.decode"),
        (SECONDS, r"holds durations \(dtype duration"),
        (HOURS, r"holds times \(dtype time64.*hours since midnight"),
    ],
    ids=[
        "cut",
        "object-intervals",
        "category-dates",
        "category-durations",
        "category-tuples",
        "category-bytes",
        "arrow-duration",
        "arrow-time",
    ],
)
def test_columns_a_saved_model_could_not_keep_are_refused_at_fit(column, message):
    X = pd.DataFrame({"a": np.arange(N) % 7, "g": column})
    with pytest.raises(DataError, match=r"Column 'g' " + message):
        LibreClassifier(random_state=0).fit(X, np.arange(N) % 2)


def test_a_series_as_x_says_how_to_make_a_frame_of_it():
    """One row taken as df.iloc[i] failed with a conversion error about a text value."""
    X = pd.DataFrame({"age": np.arange(40.0), "city": ["a", "b"] * 20})
    y = np.arange(40) % 2
    model = LibreClassifier(random_state=0).fit(X, y)
    for call in (model.predict, lambda row: LibreClassifier().fit(row, [0, 1, 0])):
        with pytest.raises(DataError, match=r"X is a pandas Series \(2 values\).*to_frame\(\)\.T"):
            call(X.iloc[0])
    assert model.predict(X.iloc[[0]]).shape == (1,)


@pytest.mark.parametrize(
    "series",
    [
        pd.Series([1.5, np.nan, -2.0]),
        pd.Series([3, 1, 2], dtype="int8"),
        pd.Series([2**40, None, 7], dtype="Int64"),
        pd.Series([0.25, None, 4.0], dtype="Float32"),
        pd.Series([5, None, 6], dtype="int64[pyarrow]"),
        pd.Series([1.0, None, 2.5], dtype="double[pyarrow]"),
        pd.Series(["1.5", None, "2"], dtype=object),
        pd.Series([1, 2.5, None], dtype=object),
        pd.Series(pd.Categorical([1.0, 2.0, None])),
    ],
    ids=lambda s: str(s.dtype),
)
def test_numeric_values_are_what_to_numeric_gives_whatever_the_dtype(series):
    expected = pd.to_numeric(series).to_numpy(dtype=np.float64, na_value=np.nan)
    got = numeric_values(series)
    assert got.dtype == np.float64
    np.testing.assert_array_equal(got, expected)
    with pytest.raises(DataError, match=r"holds 1 infinite"):
        numeric_values(pd.concat([series, pd.Series([np.inf])], ignore_index=True).rename("c"))


def test_a_text_column_of_dates_draws_one_warning_that_says_what_to_derive():
    rng = np.random.default_rng(0)
    n = 300
    X = pd.DataFrame(
        {
            "joined": pd.date_range("2021-01-01", periods=n, freq="D").strftime("%Y-%m-%d"),
            "age": rng.integers(18, 90, n),
        }
    )
    y = (X["age"] > 50).astype(int)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        LibreClassifier(random_state=0, n_estimators=5, max_rules=2).fit(X, y)
    said = [str(w.message) for w in caught if issubclass(w.category, LibreWarning)]
    dates = [m for m in said if "holds dates as text (e.g. '2021-01-01')" in m]
    assert len(dates) == 1 and "pd.to_datetime(X['joined']).dt.month" in dates[0]
    assert not any("distinct values" in m for m in said)  # not also called an id
    with warnings.catch_warnings():
        warnings.simplefilter("error", LibreWarning)  # declared categorical: the user chose
        resolve_categorical(X, ["joined"])
        resolve_categorical(X.assign(joined="on " + X["joined"]), None)  # not only a date


def test_a_column_of_numbers_and_one_mark_says_it_mixes_them():
    """Half numbers, half "unk": categorical without a word, and a rule then listed 55 numbers
    one by one."""
    X, _ = measurements(stray_every=None)
    X["a"] = X["a"].astype(object)
    X.loc[::2, "a"] = "unk"
    with pytest.warns(LibreWarning, match=r"'a' mixes numbers \(\d+ distinct, 50% of its values\) "
                      r"with text \(e\.g\. 'unk'\).*errors='coerce'"):  # fmt: skip
        resolve_categorical(X, None)


def test_numbers_in_an_object_column_are_not_called_text():
    X, _ = measurements(stray_every=None)
    X["a"] = X["a"].astype(object)
    X.loc[::9, "a"] = True
    with pytest.warns(LibreWarning, match="holds numbers in a column of dtype object") as said:
        resolve_categorical(X, None)
    assert not any("as text" in str(w.message) for w in said)


def test_arrow_bytes_and_nested_columns_are_refused_by_name():
    """A pyarrow binary column was learned (``z ∈ {b'2'}``) and the model then could not be
    saved; list and struct columns failed inside pandas without naming the column."""
    import pyarrow as pa

    y = np.arange(N) % 2
    for array, what in [
        (pa.array([b"0", b"2"] * (N // 2), pa.binary()), r"bytes .*str.decode"),
        (pa.array([[1, 2], [3]] * (N // 2)), r"nested values .*split it"),
        (pa.array([{"x": 1}, {"x": 2}] * (N // 2)), r"nested values"),
    ]:
        X = pd.DataFrame({"a": np.arange(N) % 5, "z": pd.arrays.ArrowExtensionArray(array)})
        with pytest.raises(DataError, match=rf"Column 'z' holds {what}"):
            LibreClassifier(n_estimators=2, random_state=0).fit(X, y)


def test_categorical_features_names_columns_named_by_tuples_or_numbers():
    """A MultiIndex column ('h', 'code') was split into two names ("names column array(['h',
    'code'])"), and 40 for a column named 40 of four was read as an index out of range."""
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"a": rng.uniform(size=N), "code": rng.choice([1, 2, 3], N)})
    y = (X.code == 2).astype(int)
    for columns, named in [
        (pd.MultiIndex.from_tuples([("g", "a"), ("h", "code")]), [("h", "code")]),
        (pd.MultiIndex.from_tuples([("g", "a"), ("h", "code")]), ("h", "code")),
        ([10, 40], [40]),
    ]:
        model = LibreClassifier(n_estimators=2, random_state=0, categorical_features=named)
        model.fit(X.set_axis(columns, axis=1), y)
        assert [f.kind for f in model.discretization_.features] == ["numeric", "categorical"]
    with pytest.raises(ParameterError, match="names column index 7, but X has 2 columns"):
        LibreClassifier(categorical_features=[7]).fit(X.set_axis([10, 40], axis=1), y)


def test_categories_that_differ_by_spaces_or_case_draw_a_warning():
    """ "red" and "RED " were two categories of one column without a word (the target refuses
    such labels); the rule read c ∈ {"GREEN ", "RED ", green, red}."""
    rng = np.random.default_rng(1)
    colours = np.array(["red", "RED ", "green", "blue"], dtype=object)[rng.integers(0, 4, N)]
    X = pd.DataFrame({"c": colours, "a": rng.uniform(size=N)})
    said = r"Column 'c' writes one category in ways that differ by spaces, case or number "
    said += r"format \('RED ', 'red'"
    with pytest.warns(LibreWarning, match=said):
        LibreClassifier(n_estimators=2, random_state=0).fit(X, np.arange(N) % 2)
    cleaned = X.assign(c=X.c.str.strip().str.lower())  # the advice: no warning
    with no_libre_warnings():
        warn_spelled_alike(cleaned, None)


def test_columns_that_repeat_another_are_named_at_fit():
    """`income` and its copy `income_copy`: the rules named the copy, never the original,
    without a word (and `libre init` kept both)."""
    from libre_lib.inputs import duplicate_columns

    rng = np.random.default_rng(0)
    X = pd.DataFrame({"income": rng.normal(size=400), "age": rng.integers(18, 90, 400)})
    X = X.assign(income_copy=X["income"], age_again=X["age"], one=1, also_one=1)
    X["near"] = X["income"].where(X.index != 7, 0.0)  # one value differs: no copy
    assert duplicate_columns(X) == [("income", "income_copy"), ("age", "age_again")]
    y = (X["income"] > 0.3).astype(int)
    with pytest.warns(LibreWarning, match=r"Columns 'income' and 'income_copy' hold the same "
                      r"values in every row \(and 1 more such pair\).*X\.drop\(columns="
                      r"\['income_copy', 'age_again'\]\)"):  # fmt: skip
        LibreClassifier(random_state=0, n_estimators=5, max_rules=1).fit(X, y)
    assert duplicate_columns(X.drop(columns=["income_copy", "age_again"])) == []
