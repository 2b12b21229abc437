"""``libre init``'s first spec (libre_lib.ops.starter): a new user's CSV or Parquet file becomes a
spec that ``libre train`` reads, with identifier columns left out and the positive class said."""

import dataclasses
import re

import numpy as np
import pandas as pd
import pytest

from libre_lib.errors import DataError
from libre_lib.ops import starter as st


def _frame(n=200, seed=0):
    rng = np.random.default_rng(seed)
    return pd.DataFrame(
        {
            "customer id": [f"C{i:05d}" for i in range(n)],
            "row": np.arange(n),
            "age": rng.integers(18, 90, n),
            "plan": rng.choice(["basic", "pro"], n),
            "churned": rng.choice(["no", "yes"], n, p=[0.7, 0.3]),
        }
    )


def test_a_first_spec_leaves_identifiers_out_and_names_the_positive_class(tmp_path):
    frame = _frame()
    found = st.starter(frame, "churned", name="visits")
    assert found.positive_class == "yes" and found.classes == ["no", "yes"]
    assert found.features == ["age", "plan"] and found.categorical == ["plan"]
    assert set(found.left_out) == {"customer id", "row"}
    assert found.positive_share == pytest.approx((frame["churned"] == "yes").mean())
    text = found.yaml("data/visits.csv", "data/visits.csv")
    assert "# left out: customer id (200 distinct values in 200 rows: an id?)" in text
    spec = st.check(text, tmp_path / "visits.yaml")
    assert spec.name == "visits" and spec.target.positive_class == "yes"  # quoted: not a bool
    assert spec.features.include == ["age", "plan"] and spec.features.categorical == ["plan"]
    assert spec.data_location() == str((tmp_path / "data" / "visits.csv").resolve())
    assert spec.tuning.enabled and not spec.model.significant_cuts
    hinted = text.replace("  # significant_cuts: true", "  significant_cuts: true")
    assert st.check(hinted, tmp_path / "visits.yaml").model.significant_cuts  # uncommented
    assert not spec.model.contiguous
    hinted = text.replace("  # contiguous: true", "  contiguous: true")
    assert st.check(hinted, tmp_path / "visits.yaml").model.contiguous
    assert found.identifiers == ["customer id", "row"] and spec.split_by == []
    lasted = st.starter(
        frame.assign(session=pd.to_timedelta(frame["age"], unit="m")), "churned", name="visits"
    )
    assert lasted.left_out["session"].startswith("durations, e.g. '0 days ")
    assert "session" not in lasted.features and "session" not in lasted.categorical
    amounts = [f"${1000 + 37 * i:,.2f}" for i in range(len(frame))]
    money = st.starter(frame.assign(amount=amounts), "churned", name="visits")
    assert "amount" not in money.identifiers  # never suggested as split_by
    assert money.left_out["amount"] == (
        "numbers written as text, e.g. '$1,000.00': to use them, write them as plain numbers "
        "in the data (without '$' and commas: 1000.00)"  # its own example, not a fixed one
    )
    # thousands separators alone: the spec option that reads them (it said to rewrite the data)
    grouped = [f"{1000 + 37 * i:,.2f}" for i in range(len(frame))]
    plain = st.starter(frame.assign(amount=grouped), "churned", name="visits")
    assert plain.left_out["amount"] == (
        "numbers written with thousands separators, e.g. '1,000.00': to use them, read them "
        "as numbers with data.read_options: {thousands: ','} in the spec, or write them as "
        "plain numbers in the data (1000.00)"
    )
    scored = st.starter(frame.assign(score=frame["age"]), "churned", name="visits")
    assert scored.left_out["score"].startswith("libre score writes a column of this name")
    assert "score" not in scored.features
    hinted = text.replace("# split_by: [customer id]", "split_by: [customer id]")
    assert st.check(hinted, tmp_path / "visits.yaml").split_by == ["customer id"]


def test_columns_training_will_call_ids_are_left_out_here_too():
    """8,981 distinct texts in 10,000 rows passed (below 0.9 of the rows), and the first
    `libre train` then called 7,276 of its 7,946 training rows an id; free text was called an
    id with advice about measurements."""
    rng = np.random.default_rng(0)
    n = 5000
    words = ["late", "delivery", "refund", "great", "service", "broken", "box", "again"]
    comment = [  # 0.885 distinct per row, 0.906 on the 80 % training sees
        f"{words[i % 8]} {words[i // 8 % 8]} {words[i // 64 % 8]} order {i // 512}"
        for i in rng.integers(0, 20_000, n)
    ]
    codes = [f"C-{v:05d}" for v in rng.integers(0, 20_000, n)]  # the same, as codes
    frame = pd.DataFrame(
        {"comment": comment, "code": codes, "age": rng.integers(18, 90, n),
         "churned": rng.choice(["no", "yes"], n)}
    )  # fmt: skip
    for column in ("comment", "code"):
        ratio = frame[column].nunique() / n
        share = frame[column].sample(frac=0.8, random_state=0)
        assert ratio < 0.9 <= share.nunique() / len(share), (column, ratio)
    found = st.starter(frame, "churned", name="visits")
    assert found.left_out["comment"].startswith("free text (")
    assert "derive features from it" in found.left_out["comment"]
    assert found.identifiers == ["code"] and "age" in found.features
    copied = st.starter(frame.assign(age_again=frame["age"]), "churned", name="visits")
    said = "the same values as 'age' in every row read: a copy of it"  # init reads a sample
    assert copied.left_out["age_again"] == said
    assert "age" in copied.features and "age_again" not in copied.features


@pytest.mark.parametrize(
    ("labels", "positive", "why"),
    [
        (["0", "1", "1", "1"], "1", "it reads as yes"),  # a yes-like name, even as the majority
        (["2", "1", "1", "1"], "2", "the rarer class"),
        (["-1", "1", "1", "1"], "1", "it reads as yes"),  # as LibreClassifier takes it
        (["a", "b", "b", "c", "c"], "a", "the other classes are the negative answer"),
    ],
)
def test_the_positive_class_is_a_yes_of_a_pair_else_the_rarer_one(labels, positive, why):
    frame = pd.DataFrame({"x": range(len(labels)), "y": labels})
    found = st.starter(frame, "y")
    assert found.positive_class == positive and why in found.why_positive
    assert st.starter(frame, "y", positive_class=labels[-1]).positive_class == labels[-1]


@pytest.mark.parametrize(
    ("target", "positive", "pattern"),
    [
        ("Churned", None, re.escape("'Churned' is not a column of the data; its columns: 'cust")),
        ("plan", "gold", re.escape("--positive 'gold' is not a value of the target column 'plan'")),
        ("age", None, r"holds \d+ distinct values: LIBRE learns rules for one class"),
        (
            None,
            None,
            re.escape(
                "Give it with --target; the columns of two values in the rows "
                "read: 'plan', 'churned'."
            ),
        ),
    ],
)
def test_a_wrong_target_or_class_is_named(target, positive, pattern):
    with pytest.raises(DataError, match=pattern):
        st.starter(_frame(), target, positive_class=positive)


def test_a_positive_class_written_as_another_number_is_suggested():
    frame = _frame().assign(churned=lambda f: np.where(f.churned == "yes", "1.0", "0.0"))
    with pytest.raises(DataError, match=re.escape("Did you mean --positive '1.0'?")):
        st.starter(frame, "churned", positive_class="1")
    booleans = _frame().assign(churned=lambda f: np.where(f.churned == "yes", "True", "False"))
    with pytest.raises(DataError, match=re.escape("Did you mean --positive 'True'?")):
        st.starter(booleans, "churned", positive_class="true")  # it said nothing


def test_without_a_target_and_a_two_valued_column_init_says_what_to_give():
    frame = _frame()[["age", "row"]]
    with pytest.raises(DataError, match="no column holds two values in the rows read"):
        st.starter(frame, None)


def test_one_class_or_no_feature_is_refused():
    with pytest.raises(DataError, match="holds only 'no': the rules need two classes"):
        st.starter(pd.DataFrame({"x": [1, 2], "y": ["no", "no"]}), "y")
    ids = pd.DataFrame({"id": [f"r{i}" for i in range(60)], "y": ["a", "b"] * 30})
    with pytest.raises(DataError, match=r"no feature column .* \(left out: id\)"):
        st.starter(ids, "y")


def test_columns_of_few_whole_numbers_are_named_as_possible_codes(tmp_path):
    """Codes (a chest-pain type 1-4, a region 3/6/7) read as numbers unless the user lists
    them: the spec names them with their values; 0/1 flags, counts of many values and
    fractional numbers are not named."""
    rng = np.random.default_rng(0)
    frame = _frame().assign(
        pain=rng.integers(1, 5, 200),
        region=rng.choice([3, 6, 7], 200),
        flag=rng.integers(0, 2, 200),
        score=rng.choice([0.5, 1.5, 2.5], 200),
    )
    found = st.starter(frame, "churned")
    assert found.codes == {"pain": [1, 2, 3, 4], "region": [3, 6, 7]}
    assert "age" not in found.codes and found.categorical == ["plan"]
    text = found.yaml("data/visits.csv", "data/visits.csv")
    assert "  #   pain: 1, 2, 3, 4\n  #   region: 3, 6, 7\n  categorical:" in text
    spec = st.check(text, tmp_path / "visits.yaml")  # the comment keeps the spec valid
    assert spec.features.categorical == ["plan"]
    assert "codes?" not in _frame().pipe(st.starter, "churned").yaml("d.csv", "d.csv")


def test_a_column_without_any_value_is_left_out_with_its_reason():
    frame = _frame().assign(promo=np.nan)
    found = st.starter(frame, "churned")
    assert "promo" not in found.features
    assert found.left_out["promo"] == "no value in the rows read: every one is missing"


def test_a_column_of_one_value_is_left_out_unless_some_rows_lack_it():
    # one value or blank (coupon): whether the value is there can be the signal
    coupon = np.where(np.arange(200) % 3 == 0, "SPRING", None)
    frame = _frame().assign(version=np.int64(5), source="web", coupon=coupon)
    found = st.starter(frame, "churned")
    assert found.left_out["version"] == "the same value in every row read: 5"
    assert found.left_out["source"] == "the same value in every row read: 'web'"
    assert "coupon" in found.features and "coupon" not in found.left_out


def test_the_sample_reads_the_target_as_the_pipeline_does(tmp_path, monkeypatch):
    frame = _frame(50).assign(churned=[1.0, 0.0] * 25)
    frame.to_csv(tmp_path / "a.csv", index=False)
    frame.to_parquet(tmp_path / "a.parquet", index=False)
    monkeypatch.setattr(st, "SAMPLE_ROWS", 30)
    read, more = st.sample(str(tmp_path / "a.csv"), "csv", "churned")
    assert len(read) == 30 and more and set(read["churned"]) == {"1.0", "0.0"}
    read, more = st.sample(str(tmp_path / "a.parquet"), "parquet", "churned")
    assert len(read) == 30 and more and set(read["churned"]) == {"1.0", "0.0"}
    assert st.data_format(str(tmp_path / "a.parquet")) == "parquet"


def test_a_parquet_decimal_column_is_read_as_numbers_not_categories(tmp_path):
    import decimal

    import pyarrow as pa
    import pyarrow.parquet as pq

    from libre_lib.ops.sources import read_source

    frame = _frame(50).assign(churned=[1.0, 0.0] * 25)
    table = pa.Table.from_pandas(frame, preserve_index=False).append_column(
        "balance",
        pa.array([None, *(decimal.Decimal(f"{i}.25") for i in range(49))], pa.decimal128(8, 2)),
    )
    pq.write_table(table, tmp_path / "a.parquet")
    read, _ = st.sample(str(tmp_path / "a.parquet"), "parquet", "churned")
    assert read["balance"].dtype == np.float64 and read["balance"].iloc[1:3].tolist() == [
        0.25,
        1.25,
    ]
    assert "balance" not in st.starter(read, "churned").categorical
    assert read_source(str(tmp_path / "a.parquet"), "parquet")["balance"].dtype == np.float64
    # declared categorical: read as text, as any categorical column
    text = read_source(str(tmp_path / "a.parquet"), "parquet", string_columns=["balance"])
    assert text["balance"].tolist()[:3] == [None, "0.25", "1.25"]


def test_pipeline_names_come_from_file_names():
    assert st.pipeline_name("data/Customer Visits 2026.csv.gz") == "customer-visits-2026"
    assert st.pipeline_name("parts/") == "parts"
    assert st.pipeline_name("___.csv") == "pipeline"
    assert st.pipeline_name("données patients v2.csv") == "donnees-patients-v2"  # not donn-es


def test_texts_that_stand_for_missing_numbers_are_read_as_missing(tmp_path):
    """A raw UCI file writes "?" for a missing age: read as text, the column of ages would be
    a categorical one whose rules list ages one by one."""
    n = 60
    frame = pd.DataFrame(
        {
            "age": [str(20 + i % 30) for i in range(n - 2)] + ["?", "?"],
            "income": [str(1000.5 + 7 * i) for i in range(n - 1)] + ["unknown"],
            "city": ["paris", "lyon", "?"] * (n // 3),  # "?" here too: the usual marker
            "size": [str(i % 20) for i in range(n - 1)] + ["big"],
            "kind": ["big", "big", "small"] * (n // 3),  # "big" is a category: not a marker
            "y": ["no", "yes"] * (n // 2),
        }
    )
    found = st.starter(frame, "y", name="raw")
    assert found.missing_markers == {"?": ["age"], "unknown": ["income"]}
    assert found.categorical == ["city", "size", "kind"]  # age and income are numbers now
    text = found.yaml("raw.csv", "raw.csv")
    assert "  # '?' in age\n" in text
    spec = st.check(text, tmp_path / "raw.yaml")
    assert spec.data.read_options == {"na_values": ["?", "unknown"]}
    assert st.missing_markers(frame, ["kind", "city"]) == {}
    # Parquet's reader takes no na_values: its columns stay as they are
    assert st.starter(frame, "y", file_format="parquet").missing_markers == {}


@pytest.mark.parametrize("sep", [";", "\t", "|"])
def test_a_csv_with_another_separator_and_decimal_commas_gets_its_read_options(tmp_path, sep):
    """Spreadsheets in many locales write ';' and decimal commas: init said the target was not
    a column (the header read as one), and training would have failed the same way."""
    from libre_lib.ops import stages
    from libre_lib.ops.sources import read_source

    frame = _frame(60).drop(columns=["customer id", "row"]).assign(bmi=np.linspace(18, 40, 60))
    path = tmp_path / "visits.csv"
    frame.to_csv(path, index=False, sep=sep, decimal=",")
    options = st.dialect(str(path), "csv")
    assert options == {"sep": sep, "decimal": ","}
    read, _ = st.sample(str(path), "csv", "churned", options)
    assert read["bmi"].dtype == np.float64 and read["bmi"].iloc[-1] == 40.0
    found = st.starter(read, "churned", name="visits", read_options=options)
    assert found.categorical == ["plan"] and "bmi" in found.features
    text = found.yaml("visits.csv", "visits.csv")
    spec = st.check(text, tmp_path / "visits.yaml")
    assert spec.data.read_options == options
    again = read_source(str(path), "csv", spec.data.read_options)
    np.testing.assert_allclose(again["bmi"], frame["bmi"])
    # a comma CSV needs nothing; without the options the target error says what to set
    frame.to_csv(tmp_path / "plain.csv", index=False)
    assert st.dialect(str(tmp_path / "plain.csv"), "csv") == {}
    with pytest.raises(DataError, match=re.escape(f"seem separated by {sep!r}")):
        st.starter(st.sample(str(path), "csv", "churned")[0], "churned")
    one_column = read_source(str(path), "csv")
    with pytest.raises(DataError, match=re.escape(f"data.read_options: {{sep: {sep!r}}}")):
        stages.select_columns(one_column, spec)


def test_a_tsv_file_is_a_csv_with_tabs_and_other_table_formats_say_how_to_convert(tmp_path):
    from libre_lib.errors import SpecError
    from libre_lib.ops.spec import DataSource

    frame = _frame(40).drop(columns=["customer id", "row"])
    path = tmp_path / "visits.tsv"
    frame.to_csv(path, index=False, sep="\t")
    assert st.data_format(str(path)) == "csv"
    options = st.dialect(str(path), "csv")
    assert options == {"sep": "\t"}
    found = st.starter(st.sample(str(path), "csv", "churned", options)[0], "churned")
    assert found.features == ["age", "plan"]
    for name, expected in [
        ("book.xlsx", "is an Excel workbook: libre reads CSV and Parquet files. Convert it "
         "first, e.g. pandas.read_excel(path).to_parquet('data.parquet')."),
        ("rows.jsonl", "pandas.read_json(path, lines=True).to_parquet"),
        ("data.dat", "is neither .csv nor .parquet: set data.format"),
    ]:  # fmt: skip
        with pytest.raises(SpecError, match=re.escape(expected)):
            DataSource(path=name).resolved_format()


def test_dates_as_text_or_as_timestamps_are_left_out_with_what_to_derive(tmp_path):
    n = 200
    frame = _frame(n).assign(
        signup=pd.date_range("2021-01-01", periods=n, freq="6h").strftime("%Y-%m-%d"),
        visited=[f"{1 + i % 28}/{1 + i % 12}/2022" if i % 20 else None for i in range(n)],
        seen_at=pd.date_range("2023-05-01", periods=n, freq="min"),
        code=[f"{i % 7}-{i % 3}" for i in range(n)],  # dashes, but no date: kept
        version=["1.2.3", "2.0.1"] * (n // 2),  # dots, but no date: kept
    )
    found = st.starter(frame, "churned")
    assert {"signup", "visited", "seen_at"} <= set(found.left_out)
    assert found.left_out["signup"].startswith("dates as text, e.g. '2021-01-01': rules would")
    assert "day of week" in found.left_out["visited"]
    assert found.left_out["seen_at"].startswith("dates, e.g. '2023-05-01 00:00:00': rules")
    assert {"code", "version", "age", "plan"} <= set(found.features)
    text = found.yaml("data/visits.csv", "data/visits.csv")
    assert "# left out: signup (dates as text" in text
    st.check(text, tmp_path / "visits.yaml")


def test_rows_without_a_target_value_get_unlabeled_drop_with_their_count(tmp_path):
    frame = _frame()
    found = st.starter(frame, "churned")
    assert found.n_unlabeled == 0 and "unlabeled" not in found.yaml("v.csv", "v.csv")
    frame.loc[[0, 5, 7], "churned"] = None
    found = st.starter(frame, "churned")
    assert found.n_unlabeled == 3
    text = found.yaml("data/visits.csv", "data/visits.csv")
    assert "  # 3 of the rows read have no target value;" in text
    spec = st.check(text, tmp_path / "visits.yaml")
    assert spec.target.unlabeled == "drop"


def test_a_marker_in_almost_half_of_a_column_of_numbers_is_read_as_missing():
    """hepatitis' protime writes "?" in 67 of 155 rows (43 %): the column became 43
    categories, and a rule `protime ∉ {56.0, 57.0, 58.0}` (a "?" in 10 % of the rows was read
    as missing)."""
    n = 150
    protime = [str(30 + i % 60) for i in range(n)]
    for i in range(0, n, 7):
        protime[i] = "?"
    for i in range(3, n, 3):
        protime[i] = "?"
    frame = pd.DataFrame({"protime": protime, "y": ["no", "yes"] * (n // 2)})
    assert 0.4 < (frame["protime"] == "?").mean() < 0.5
    found = st.starter(frame, "y", name="hepa")
    assert found.missing_markers == {"?": ["protime"]}
    assert found.categorical == []


def test_durations_as_text_and_nested_cells_are_left_out_with_what_to_do(tmp_path):
    """A CSV written from a timedelta column (``0 days 00:14:31``) became a column of hundreds
    of categories; a Parquet list column failed with "unhashable type: 'numpy.ndarray'"."""
    frame = _frame()
    minutes = pd.to_timedelta(frame["age"] * 7.5, unit="s")
    long = [str((m + pd.Timedelta(days=i % 3 + 1)).to_pytimedelta()) for i, m in enumerate(minutes)]
    written = frame.assign(stay=minutes.astype(str), py=long)  # "2 days, 0:04:00"
    found = st.starter(written, "churned")
    assert found.left_out["stay"].startswith("durations as text, e.g. '0 days 00:")
    assert found.left_out["py"].startswith("durations as text, e.g. '")
    assert " day" in found.left_out["py"]
    path = tmp_path / "nested.parquet"
    frame.assign(tags=[[i % 3, i % 5] for i in range(len(frame))]).to_parquet(path)
    found = st.starter(pd.read_parquet(path), "churned")
    assert found.left_out["tags"].startswith("nested values (ndarray cells): split it")
    assert {"age", "plan"} <= set(found.features)


def test_the_estimator_warns_of_durations_written_as_text():
    from libre_lib import LibreClassifier

    frame = _frame()
    X = frame[["age"]].assign(stay=pd.to_timedelta(frame["age"] * 7, unit="s").astype(str))
    with pytest.warns(UserWarning, match=r"Column 'stay' holds durations as text \(e.g. '0 days"):
        LibreClassifier(n_estimators=2, random_state=0).fit(X, frame["churned"])
    # whole days, as pandas writes a column of them ("10 days"): read as 45 categories before
    days = pd.to_timedelta(frame["age"] % 45, unit="D").astype(str)
    assert days.str.fullmatch(r"\d+ days?").all()
    with pytest.warns(UserWarning, match=r"Column 'stay' holds durations as text \(e.g. '\d+ day"):
        LibreClassifier(n_estimators=2, random_state=0).fit(X.assign(stay=days), frame["churned"])
    left = st.starter(frame.assign(stay=days), "churned").left_out["stay"]
    assert left.startswith("durations as text, e.g. '")
    assert "pd.to_timedelta(col).dt.total_seconds() / 60" in left  # .dt fails on text
    # a few whole-day values are as likely a category (a plan of 30, 90 or 365 days)
    plans = frame.assign(plan=np.array(["30 days", "90 days", "365 days"])[frame.index % 3])
    assert "plan" not in st.starter(plans, "churned").left_out


def test_a_running_number_beyond_2_to_the_53_is_an_id():
    """Ids of 2**60 + row were 7 distinct values as floats: libre init kept the column as a
    feature and the pipeline shipped a rule on it, its report silent."""
    from libre_lib.discretization import identifier_messages

    frame = _frame().assign(bigid=2**60 + np.arange(200, dtype=np.int64))
    found = st.starter(frame, "churned")
    assert found.left_out["bigid"] == "a different whole number in each of its 200 rows: an id?"
    assert "bigid" in found.identifiers
    (message,) = identifier_messages(frame[["bigid"]], [False])
    assert message.startswith("Column 'bigid' holds a different whole number in each of its 200")


def test_a_name_is_taken_by_other_data_whatever_path_a_spec_wrote(tmp_path):
    """Two folders' data.csv passed as the same data (the second took over the first's
    champion); versions of earlier releases, which recorded the load file's hash and no
    aliases, are still told by the path their spec wrote."""
    import warnings

    from libre_lib import LibreClassifier
    from libre_lib.ops.registry import ModelRegistry
    from libre_lib.ops.sources import fingerprint_source

    frame = _frame()
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    frame.to_csv(tmp_path / "a" / "data.csv", index=False)
    frame.iloc[::2].to_csv(tmp_path / "b" / "data.csv", index=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = LibreClassifier(random_state=0, max_rules=1).fit(frame[["age"]], frame["churned"])
    store = tmp_path / ".libre-store"

    def register(name, fingerprint, aliases):
        ModelRegistry(store).register_unless_unchanged(
            name, model.to_json(), spec={"name": name, "data": {"path": "data.csv"}},
            metrics={"f1": 0.5}, validation={"success": True}, data_fingerprint=fingerprint,
            spec_hash="s" * 64, run_id="run-1", data_aliases=aliases,
        )  # fmt: skip

    a, b = (str(tmp_path / f / "data.csv") for f in "ab")
    register("data", fingerprint_source(a, "csv"), ("c" * 64,))  # this release: aliases
    assert st.name_taken(store, "data", "data.csv", a, "csv") is None
    assert "already holds a pipeline named 'data'" in st.name_taken(
        store, "data", "data.csv", b, "csv"
    )
    register("old", "e" * 64, ())  # an earlier release: the load file's hash, no aliases
    assert st.name_taken(store, "old", "data.csv", a, "csv") is None
    assert st.name_taken(store, "old", "other.csv", a, "csv") is not None


def test_names_with_line_breaks_stay_inside_the_spec_s_comments(tmp_path):
    """A file named "x\\nholdout_fraction: 0.9\\n#.csv" wrote that key into the spec, and a
    left-out column so named made YAML the spec could not read."""
    import yaml

    frame = _frame().assign(**{"const\nsplit_seed: 12345": 7})
    found = st.starter(frame, "churned")
    text = found.yaml("data/x.csv", "data/x\nholdout_fraction: 0.9\n#.csv")
    raw = yaml.safe_load(text)
    assert "holdout_fraction" not in raw and "split_seed" not in raw
    assert '# left out: "const\\nsplit_seed: 12345"' in text


def test_texts_the_spec_reads_as_numbers_are_quoted_in_the_spec_init_writes(tmp_path):
    """`1e3` is a number to the spec's loader (YAML 1.2), so a column or class of that name was
    written bare and the spec init wrote was refused by its own check."""
    rng = np.random.default_rng(0)
    frame = pd.DataFrame(
        {
            "1e3": rng.normal(size=60),
            "1E-2": rng.integers(0, 50, 60),
            "kind": rng.choice(["1e3", "2e3"], 60, p=[0.7, 0.3]),
        }
    )
    found = st.starter(frame, "kind", name="exponents")
    text = found.yaml("data/e.csv", "data/e.csv")
    spec = st.check(text, tmp_path / "exponents.yaml")
    assert spec.features.include == ["1e3", "1E-2"]
    assert spec.target.positive_class == "2e3" and spec.target.classes == ["1e3", "2e3"]


def test_a_class_written_na_is_named_not_dropped_without_a_word(tmp_path):
    """A target of 'NA' (North America), 'EU' and 'AS': pandas reads 'NA' as missing, and init
    wrote `unlabeled: drop` for a third of the rows without saying why they were empty."""
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"x": rng.normal(size=90), "region": np.repeat(["NA", "EU", "AS"], 30)})
    frame.loc[0, "region"] = ""  # a truly empty cell is no text
    path = tmp_path / "regions.csv"
    frame.to_csv(path, index=False)
    texts = st.target_missing_texts(str(path), "csv", "region", st.dialect(str(path), "csv"))
    assert texts == {"NA": 29}
    sampled, _ = st.sample(str(path), "csv", "region")
    found = st.starter(sampled, "region", unlabeled_texts=texts)
    assert found.n_unlabeled == 30
    text = found.yaml("regions.csv", "regions.csv")
    assert "# target cells read as missing hold text: 'NA' in 29 rows" in text
    assert st.check(text, tmp_path / "regions.yaml").target.unlabeled == "drop"
    two = tmp_path / "two.csv"
    frame[frame["region"] != "AS"].to_csv(two, index=False)
    texts = st.target_missing_texts(str(two), "csv", "region")
    with pytest.raises(DataError, match=r"holds only 'EU'.*'NA' in 29 rows.*rename it"):
        st.starter(st.sample(str(two), "csv", "region")[0], "region", unlabeled_texts=texts)
    declared = st.target_missing_texts(str(path), "csv", "region", {"na_values": ["NA"]})
    assert declared == {}  # markers the spec declares are meant as missing
    assert st.target_missing_texts(str(path), "parquet", "region") == {}


def test_a_table_of_a_few_rows_names_no_column_as_possible_codes():
    """On 12 rows init named four columns "few whole numbers, codes?" for their few values."""
    rng = np.random.default_rng(0)
    small = pd.DataFrame(
        {
            "age": rng.integers(20, 80, 12),
            "visits": rng.integers(0, 5, 12),
            "churned": ["yes", "no"] * 6,
        }
    )
    assert st.starter(small, "churned").codes == {}
    assert "visits" in st.starter(pd.concat([small] * 5), "churned").codes


def test_a_category_written_na_in_a_feature_is_named_by_init(tmp_path):
    """A region column of 'NA' (North America) and 'EU': pandas read 'NA' as missing, so the
    rules said `region is missing`, the validation counted 361 missing values and the report
    spoke of blank cells; init said nothing."""
    rng = np.random.default_rng(0)
    frame = pd.DataFrame(
        {
            "region": rng.choice(["NA", "EU"], 200),
            "amount": rng.normal(size=200).round(2),
            "code": ["null" if i % 50 == 0 else f"c{i % 3}" for i in range(200)],
            "churned": rng.choice(["yes", "no"], 200),
        }
    )
    frame.loc[0, "region"] = ""  # an empty cell is no text
    path = tmp_path / "regions.csv"
    frame.to_csv(path, index=False)
    options = st.dialect(str(path), "csv")
    sampled, _ = st.sample(str(path), "csv", "churned", options)
    found = st.starter(sampled, "churned", file_format="csv", read_options=options)
    assert {"region", "code"} <= set(found.categorical)
    texts = st.missing_texts(str(path), "csv", found.categorical, options)
    n_na = int((frame["region"] == "NA").sum())
    assert texts == {"region": {"NA": n_na}, "code": {"null": 4}}
    found = dataclasses.replace(found, feature_texts=texts)
    hint = found.feature_hints()[0]
    assert hint.startswith(f"column 'region': cells read as missing hold text: 'NA' in {n_na} ")
    text = found.yaml("regions.csv", "regions.csv")
    assert "# column 'code': cells read as missing hold text: 'null' in 4 rows" in text
    st.check(text, tmp_path / "regions.yaml")  # comments only: the spec still reads
    assert st.missing_texts(str(path), "parquet", ["region"]) == {}


def test_spellings_of_one_value_and_formatted_numbers_in_a_feature_are_named():
    """'Yes', 'yes ' and 'YES' were three categories the rules put on both sides, and a money
    column of '€2,519' and '2,209' became 2,547 categories ('0' apart from '€0'), without a
    word from init."""
    rng = np.random.default_rng(0)
    n = 400
    frame = pd.DataFrame(
        {
            "housing": rng.choice(["yes", "Yes ", "YES", "no", " no"], n),
            "balance": [
                f"€{v:,}" if i % 3 == 0 else f"{v:,}"
                for i, v in enumerate(rng.integers(900, 1200, n) * 10)
            ],
            "plan": rng.choice(["basic", "gold"], n),
            "age": rng.integers(18, 80, n),
            "target": rng.choice(["Churned", "Stayed"], n),
        }
    )
    found = st.starter(frame, "target")
    assert set(found.written_otherwise) == {"housing", "balance"}
    hints = found.feature_hints()
    housing = next(h for h in hints if h.startswith("column 'housing'"))
    balance = next(h for h in hints if h.startswith("column 'balance'"))
    assert "' no', 'no'; 'YES', 'Yes ', 'yes'; each is a category of its own" in housing
    assert "numbers written as text, e.g. '€" in balance and "each a category of its own" in balance
    assert "# column 'housing': one value written in ways" in found.yaml("x.csv", "x.csv")


def test_an_integer_id_is_named_even_when_a_few_rows_repeat_whole():
    """Five rows exported twice: customer_id no longer held a different number in each row,
    stayed a feature, and the rules cut on it."""
    rng = np.random.default_rng(0)
    frame = pd.DataFrame(
        {
            "customer_id": np.arange(300),
            "age": rng.integers(18, 80, 300),
            "target": rng.choice(["Churned", "Stayed"], 300),
        }
    )
    found = st.starter(pd.concat([frame, frame.iloc[:5]]), "target")
    assert found.left_out["customer_id"].endswith("an id?") and "customer_id" in found.identifiers
    # and the repeats are named: copies can land on both sides of the holdout split
    (hint,) = [h for h in found.feature_hints() if "repeat another row whole" in h]
    assert hint.startswith("5 of the rows read repeat another row whole")
    assert st.starter(frame, "target").repeated_rows == 0


def test_decimals_stored_as_text_are_not_called_an_id(tmp_path):
    """A Parquet column of decimals written as text ("41.22") was left out as "309 distinct
    values in 320 rows: an id?"; digits alone stay a possible id."""
    rng = np.random.default_rng(0)
    frame = pd.DataFrame(
        {
            "amount": (rng.uniform(10, 90, 320)).round(2).astype(str),
            "order_no": (100_000 + np.arange(320)).astype(str),
            "age": rng.integers(18, 80, 320),
            "target": rng.choice(["no", "yes"], 320),
        }
    )
    frame.to_parquet(tmp_path / "orders.parquet")
    found = st.starter(pd.read_parquet(tmp_path / "orders.parquet"), "target")
    assert found.left_out["amount"].startswith(
        f"numbers stored as text, e.g. {frame['amount'][0]!r} ("
    )
    assert found.left_out["amount"].endswith("write the column as numbers in the data to use it")
    assert found.left_out["order_no"].endswith("an id?")


def test_a_column_that_tells_the_classes_apart_exactly_is_left_out_as_a_copy_of_the_target():
    """A flag computed from the outcome went into the features without a word; the first run
    trained a version of holdout F1 1.000 and made it the champion."""
    frame = _frame()
    outcome = frame["churned"].eq("yes")
    leaked = frame.assign(flag=outcome.map({True: "Y", False: "N"}), also=outcome.astype(int))
    found = st.starter(leaked, "churned")
    for column in ("flag", "also"):
        assert column not in found.features
        assert found.left_out[column].startswith("each of its values goes with one class")
    # a column of few values that mostly, not always, goes with a class stays a feature
    near = outcome.to_numpy().copy()
    near[:3] = ~near[:3]
    kept = st.starter(frame.assign(flag=np.where(near, "Y", "N")), "churned")
    assert "flag" in kept.features
    # so does one whose values are too rare to say (fewer than 5 rows each)
    few = st.starter(frame.iloc[:8].assign(flag=outcome.iloc[:8].astype(int)), "churned")
    assert "flag" not in few.left_out
    text = found.yaml("d.csv", "csv")
    assert "# left out: flag (each of its values goes with one class" in text


def test_a_class_of_a_few_rows_is_not_chosen_as_the_positive_one():
    """One row of a third class (a typo) was chosen as "the rarer class"; training then failed
    when the holdout took that row."""
    frame = _frame().assign(tier=lambda f: np.where(np.arange(len(f)) % 3 == 0, "gold", "basic"))
    frame.loc[0, "tier"] = "gld"
    found = st.starter(frame, "tier")
    assert found.positive_class == "gold" and found.classes == ["basic", "gld", "gold"]
    assert "'gld' (1 row): a typo?" in found.why_positive
    alone = st.starter(frame.iloc[:4].assign(tier=["a", "b", "b", "b"]), "tier")
    assert alone.positive_class == "a"  # no class has 5 rows: the rarer one, as before
