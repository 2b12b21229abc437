"""The pipeline spec: YAML read safely and bounded, every problem one short SpecError line."""

import re
from pathlib import Path

import pytest

from libre_lib.errors import EXCERPT_CHARS, SpecError
from libre_lib.ops.spec import MAX_SPEC_BYTES, MAX_SPEC_DEPTH, load_spec, parse_spec

DATA = Path(__file__).resolve().parents[2] / "libre_lib" / "datasets" / "pima.csv"
BASE = f"""name: pima
data: {{path: {DATA}}}
target: {{column: target, positive_class: "1"}}
"""
RAW = {
    "name": "pima",
    "data": {"path": str(DATA)},
    "target": {"column": "target", "positive_class": "1"},
}


def write(tmp_path: Path, text: str | bytes) -> Path:
    path = tmp_path / "spec.yaml"
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


def one_line(exc: pytest.ExceptionInfo) -> str:
    message = str(exc.value)
    assert "\n" not in message
    return message


def test_a_plain_spec_loads(tmp_path):
    assert load_spec(write(tmp_path, BASE)).name == "pima"


def test_a_tsv_file_is_read_with_tabs_unless_the_spec_says_otherwise():
    """A .tsv file read as one column with commas between fields."""
    tsv = {**RAW, "data": {"path": "data/visits.tsv"}}
    assert parse_spec(tsv).data.read_options == {"sep": "\t"}
    given = {**RAW, "data": {"path": "data/visits.tsv", "read_options": {"sep": ";"}}}
    assert parse_spec(given).data.read_options == {"sep": ";"}
    assert parse_spec(RAW).data.read_options == {}  # a .csv file: as before


# --- YAML read safely (the "billion laughs" expanded a 1 KB file into gigabytes) --------------


BILLION_LAUGHS = (
    BASE
    + """description: &a ["lol", "lol", "lol", "lol", "lol", "lol", "lol"]
extra0: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]
extra1: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]
extra2: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c]
extra3: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d]
extra4: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e]
extra5: &g [*f, *f, *f, *f, *f, *f, *f, *f, *f]
extra6: &h [*g, *g, *g, *g, *g, *g, *g, *g, *g]
extra7: &i [*h, *h, *h, *h, *h, *h, *h, *h, *h]
"""
)


def test_an_alias_bomb_is_refused_before_it_expands(tmp_path):
    with pytest.raises(SpecError, match=r"anchors \(&name\) are not allowed.*line 4") as exc:
        load_spec(write(tmp_path, BILLION_LAUGHS))
    assert len(one_line(exc)) < 300


def test_aliases_and_merge_keys_are_refused(tmp_path):
    with pytest.raises(SpecError, match=r"aliases \(\*name\) are not allowed"):
        load_spec(write(tmp_path, BASE + "description: *x\n"))
    with pytest.raises(SpecError, match=r"merge keys \(<<\) are not allowed"):
        load_spec(write(tmp_path, BASE + "model: {<<: {alpha: 0.5}}\n"))


def test_duplicate_keys_are_refused_not_silently_overwritten(tmp_path):
    text = BASE + "model: {alpha: 0.5}\nmodel: {alpha: 0.9}\n"
    with pytest.raises(SpecError, match=r"duplicate key 'model' at line 5"):
        load_spec(write(tmp_path, text))
    with pytest.raises(SpecError, match=r"duplicate key 'alpha'"):
        load_spec(write(tmp_path, BASE + "model: {alpha: 0.5, alpha: 0.9}\n"))


def test_a_spec_file_over_the_size_cap_is_refused_unread(tmp_path):
    text = BASE + "description: '" + "x" * MAX_SPEC_BYTES + "'\n"
    with pytest.raises(SpecError, match=r"at most 1,048,576 bytes"):
        load_spec(write(tmp_path, text))


def test_deep_nesting_is_refused(tmp_path):
    deep = "[" * (MAX_SPEC_DEPTH + 5) + "]" * (MAX_SPEC_DEPTH + 5)
    with pytest.raises(SpecError, match=rf"nests deeper than {MAX_SPEC_DEPTH} levels"):
        load_spec(write(tmp_path, BASE + f"description: {deep}\n"))
    very_deep = "[" * 5000 + "]" * 5000  # was a RecursionError
    with pytest.raises(SpecError, match=r"nests deeper"):
        load_spec(write(tmp_path, BASE + f"description: {very_deep}\n"))


def test_a_spec_that_is_not_utf8_is_one_clear_error(tmp_path):
    text = BASE.encode() + b"description: caf\xe9\n"  # Latin-1, was a UnicodeDecodeError
    with pytest.raises(SpecError, match=r"is not UTF-8 text \(byte 0xe9 at offset \d+\)"):
        load_spec(write(tmp_path, text))


def test_bad_yaml_is_one_line(tmp_path):
    with pytest.raises(SpecError, match=r"line 4, column") as exc:
        load_spec(write(tmp_path, BASE + "model: {alpha: [0.5}\n"))
    one_line(exc)


# --- errors never echo a whole value ------------------------------------------------------------


@pytest.mark.parametrize(
    "section",
    [
        {"model": {"alpha": "x" * 10_000}},
        {"model": {"n_estimators": list(range(10_000))}},
        {"holdout_fraction": "y" * 10_000},
        {"k" * 10_000: 1},
        {"data": {"path": "z" * 10_000 + ".xlsx"}},
    ],
)
def test_spec_errors_show_only_a_short_excerpt_of_a_bad_value(section):
    with pytest.raises(SpecError) as exc:
        parse_spec({**RAW, **section})
    message = one_line(exc)
    assert len(message) < 3 * EXCERPT_CHARS + 200, message
    assert "characters)" in message


# --- values that used to pass the check and fail later with a raw exception --------------------


@pytest.mark.parametrize(
    ("section", "match"),
    [
        ({"split_seed": -1}, r"split_seed: .*greater than or equal to 0 \(got -1\)"),
        ({"split_seed": 2**70}, r"split_seed: .*less than or equal to 4294967295"),
        (
            {"model": {"random_state": 2**70}},
            r"model.random_state: must be a whole number from 0 to 4294967295",
        ),
        (
            {"model": {"random_state": -1}},
            r"model.random_state: must be a whole number from 0 to 4294967295",
        ),
    ],
)
def test_seeds_are_bounded_in_the_spec(section, match):
    with pytest.raises(SpecError, match=match):
        parse_spec({**RAW, **section})


@pytest.mark.parametrize(
    ("section", "match"),
    [
        (
            {
                "target": {
                    "column": "c",
                    "positive_class": "Yes ",
                    "classes": [" Yes", "No", "Yes "],
                }
            },
            r"target.classes: ' Yes' and 'Yes ' write one value in different ways \(spaces, "
            r"case or number format\): as separate",
        ),
        ({"features": "bmi"}, r"features: give a list of column names \(\[bmi\]\) or a mapping"),
    ],
)
def test_a_spec_mistake_a_user_makes_is_named_with_its_fix(section, match):
    with pytest.raises(SpecError, match=match):
        parse_spec({**RAW, **section})


def test_a_directory_given_as_the_spec_is_named_as_one(tmp_path):
    with pytest.raises(SpecError, match=r"is a directory: give the path of a spec \(.yaml\) file"):
        load_spec(tmp_path)


@pytest.mark.parametrize(
    ("options", "match"),
    [
        ({"chunksize": 10}, r"option 'chunksize' is not supported \(the pipeline reads the whole"),
        ({"iterator": True}, r"option 'iterator' is not supported"),
        ({"dtype": {"age": "str"}}, r"option 'dtype' is not supported \(declare text columns"),
        ({"seperator": ";"}, r"'seperator' is not an option of pandas.read_csv"),
    ],
)
def test_read_options_that_cannot_work_are_refused_in_the_spec(options, match):
    with pytest.raises(SpecError, match=r"data.read_options: .*" + match):
        parse_spec({**RAW, "data": {"path": str(DATA), "read_options": options}})


def test_read_options_of_read_csv_pass():
    spec = parse_spec({**RAW, "data": {"path": str(DATA), "read_options": {"sep": ","}}})
    assert spec.data.read_options == {"sep": ","}


# --- the store, relative to the spec file like data.path ---------------------------------------


def test_a_relative_store_is_relative_to_the_spec_file_from_any_working_directory(
    tmp_path, monkeypatch
):
    """The store used to be relative to the working directory: a cron job started elsewhere
    made a second, empty registry ("no champion yet"). Now it resolves like data.path."""
    project = tmp_path / "project"
    (project / "specs").mkdir(parents=True)
    spec_path = write(project / "specs", BASE + "store: ../models-store\n")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    locations = set()
    for cwd in (project, project / "specs", elsewhere):
        monkeypatch.chdir(cwd)
        locations.add(load_spec(spec_path).store_location())
    assert locations == {str((project / "models-store").resolve())}


def test_the_default_store_lies_next_to_the_spec_and_an_absolute_store_is_kept(tmp_path):
    spec_path = write(tmp_path, BASE)
    assert load_spec(spec_path).store_location() == str((tmp_path / ".libre-store").resolve())
    absolute = tmp_path / "elsewhere" / "store"
    spec_path = write(tmp_path, BASE + f"store: {absolute}\n")
    assert load_spec(spec_path).store_location() == str(absolute)


# --- checks that would otherwise fail only in train or serve -------------------------------------


@pytest.mark.parametrize(
    ("section", "match"),
    [
        ({"schedule": {"cron": "61 * * * *"}}, r"schedule.cron: .*minute field '61' must stay"),
        ({"schedule": {"cron": "0 3 * * 8"}}, r"day-of-week field '8' must stay within 0-7"),
        ({"schedule": {"cron": "0 3 1-x * *"}}, r"day-of-month field .* not a number"),
        ({"schedule": {"cron": "*/0 * * * *"}}, r"bad step '0'"),
        (
            {"target": {"column": "target", "positive_class": "3", "classes": ["0", "1"]}},
            r"target.positive_class: must be one of target.classes: '0', '1'",
        ),
        (
            {"report": {"column_labels": {"bmi": "body", "age": "body"}}},
            r"report.column_labels: .*the same label 'body'",
        ),
        (
            {"report": {"column_labels": {"bmi": "age", "age": "years"}}},
            r"'bmi' is labelled 'age', the name of another labelled column",
        ),
        ({"model": {"refine": "precision"}}, r"model.refine: must be one of"),
        ({"model": {"significant_cuts": "often"}}, r"model.significant_cuts: "),
        ({"model": {"merge_order": "kerber"}}, r"model.merge_order: "),
        ({"model": {"contiguous": "often"}}, r"model.contiguous: "),
        ({"tuning": {"grid": {"contiguous": [True, "often"]}}}, r"contiguous"),
        ({"tuning": {"refine": "precision"}}, r"tuning.refine: .*'f1' or 'accuracy'"),
        ({"tuning": {"grid": {"refine": ["f1"]}}}, r"'refine' cannot be tuned"),
        ({"tuning": {"grid": {"verbose": [0, 1]}}}, r"'verbose' cannot be tuned; tunable: \["),
        (  # said "None" is allowed, then refused None: YAML reads it as text
            {"model": {"max_rules": "None"}},
            r"model.max_rules: must be an int >= 1, null or one of \('auto',\) \(write null",
        ),
        ({"tuning": {"grid": {"max_rules": [3, "None"]}}}, r"must be .*null.* \(write null"),
    ],
)
def test_spec_problems_are_caught_by_validation(section, match):
    with pytest.raises(SpecError, match=match):
        parse_spec({**RAW, **section})


@pytest.mark.parametrize("cron", ["0 3 * * *", "*/15 2-5 1,15 jan-mar mon-fri", "0 0 L * *"])
def test_valid_crons_pass(cron):
    assert parse_spec({**RAW, "schedule": {"cron": cron}}).schedule.cron == cron


@pytest.mark.parametrize(
    ("section", "match"),
    [
        ({"holdout_fraction": "0.25"}, r"holdout_fraction: .*valid number"),
        ({"split_seed": "7"}, r"split_seed: .*valid integer"),
        ({"expectations": {"min_rows": "100"}}, r"expectations.min_rows: .*valid integer"),
    ],
)
def test_quoted_numbers_are_refused_as_in_the_model_section(section, match):
    """A quoted number is usually a templating mistake; model.* already refused them."""
    with pytest.raises(SpecError, match=match):
        parse_spec({**RAW, **section})


@pytest.mark.parametrize("value", ["abc", -3, 1.5, None, True, 2**32, "7"])
def test_model_random_state_must_be_a_whole_number_and_the_error_says_which(value):
    """The estimator's message ("an int ..., a RandomState or None") named things a YAML
    file cannot hold, and accepted None, which is not reproducible."""
    with pytest.raises(SpecError, match=r"model.random_state: must be a whole number from 0 "):
        parse_spec({**RAW, "model": {"random_state": value}})
    assert parse_spec({**RAW, "model": {"random_state": 7}}).model.random_state == 7


def test_a_missing_required_key_says_what_it_is_for():
    """A new user's first spec often leaves out target.positive_class; the error said only
    that it is missing."""
    raw = {**RAW, "target": {"column": RAW["target"]["column"]}}
    with pytest.raises(SpecError, match=r"'target.positive_class' \(the value of the target"):
        parse_spec(raw)
    no_name = {k: v for k, v in RAW.items() if k != "name"}
    with pytest.raises(SpecError, match=r"missing required key 'name' \(the pipeline's name"):
        parse_spec(no_name)


def test_yes_no_on_off_are_text_in_a_spec_as_in_yaml_1_2(tmp_path):
    """YAML 1.1 reads an unquoted Yes as True: `positive_class: Yes` matched no "Yes" row."""
    text = (
        "name: churn\ndata: {path: d.csv}\n"
        "target: {column: churned, positive_class: Yes, classes: [Yes, No]}\n"
        "report: {value_labels: {plan: {on: active, off: paused}}}\n"
    )
    spec = load_spec(write(tmp_path, text))
    assert spec.target.positive_class == "Yes" and spec.target.classes == ["Yes", "No"]
    assert spec.report.value_labels["plan"] == {"on": "active", "off": "paused"}
    flagged = load_spec(
        write(tmp_path, text.replace("Yes,", "true,") + "tuning: {enabled: false}\n")
    )
    assert flagged.target.classes == [True, "No"] and flagged.tuning.enabled is False
    with pytest.raises(SpecError, match=r"tuning.enabled: .*; write true or false"):
        load_spec(write(tmp_path, text + "tuning: {enabled: yes}\n"))


def test_features_as_a_plain_list_are_the_included_columns():
    """``features: [a, b]`` failed with "Input should be a valid dictionary or instance of
    FeatureSpec"; a list is what a new user writes first."""
    listed = parse_spec({**RAW, "features": ["glucose", "bmi"]})
    assert listed.features.include == ["glucose", "bmi"] and listed.features.exclude == []
    assert listed == parse_spec({**RAW, "features": {"include": ["glucose", "bmi"]}})
    with pytest.raises(SpecError, match="features"):
        parse_spec({**RAW, "features": "glucose"})


def test_a_directory_of_one_format_needs_no_data_format(tmp_path):
    """A directory of CSV files failed with "is neither .csv nor .parquet: set data.format";
    its files say which format it is, unless they are of both or neither."""
    (tmp_path / "parts").mkdir()
    for name in ("a.csv", "b.csv", "_SUCCESS", ".hidden.parquet"):
        (tmp_path / "parts" / name).write_text("x,target\n1,1\n")
    raw = {**RAW, "data": {"path": "parts"}}
    assert parse_spec(raw, base_dir=tmp_path).data.resolved_format() == "csv"
    explicit = {**raw, "data": {"path": "parts", "format": "parquet"}}
    assert parse_spec(explicit, base_dir=tmp_path).data.format == "parquet"  # as given
    (tmp_path / "parts" / "c.parquet").write_bytes(b"")
    with pytest.raises(SpecError, match=r"holds CSV files \('a.csv'.*and Parquet files "
                       r"\('c.parquet'.*set data.format"):  # fmt: skip
        parse_spec(raw, base_dir=tmp_path)
    (tmp_path / "empty").mkdir()
    with pytest.raises(SpecError, match=r"is a directory without \.csv or \.parquet files"):
        parse_spec({**RAW, "data": {"path": "empty"}}, base_dir=tmp_path)
    with pytest.raises(SpecError, match=r"is neither \.csv nor \.parquet"):  # not there yet
        parse_spec({**RAW, "data": {"path": "missing"}}, base_dir=tmp_path)


def test_significant_cuts_in_the_model_section_and_the_tuning_grid():
    spec = parse_spec({**RAW, "model": {"significant_cuts": True}})
    assert spec.model.significant_cuts is True
    assert spec.estimator_params()["significant_cuts"] is True
    assert "significant_cuts" not in parse_spec(RAW).estimator_params()  # off: as before it
    tuned = parse_spec({**RAW, "tuning": {"grid": {"significant_cuts": [False, True]}}})
    assert tuned.tuning.grid == {"significant_cuts": [False, True]}


def test_a_target_listed_among_the_features_is_refused():
    """The target in features.include passed and was dropped without a word."""
    target = RAW["target"]["column"]
    with pytest.raises(SpecError, match=rf"features.include: lists the target column '{target}'"):
        parse_spec({**RAW, "features": {"include": ["a", target]}})
    parse_spec({**RAW, "features": {"include": ["a"]}})


@pytest.mark.parametrize(
    ("extra", "said"),
    [
        (
            {"holdout_fractoin": 0.3},
            "unknown key 'holdout_fractoin' (did you mean 'holdout_fraction'?",
        ),
        ({"tuning": {"fold": 3}}, "unknown key 'tuning.fold' (did you mean 'folds'?"),
        ({"colour": "blue"}, "unknown key 'colour' (check its spelling; see docs/pipeline.md)"),
        # estimator parameters a spec sets elsewhere: where, not a lookalike ("max_features")
        ({"model": {"n_jobs": 2}}, "'model.n_jobs': a pipeline's parallelism is runner.max"),
        ({"model": {"verbose": 1}}, "'model.verbose': a pipeline reports its progress"),
        ({"model": {"positive_class": 1}}, "positive class is target.positive_class"),
        ({"model": {"categorical_features": ["a"]}}, "its text columns in features.categorical"),
    ],
)
def test_an_unknown_key_names_the_nearest_known_one(extra, said):
    raw = {"name": "a", "data": {"path": "x.csv"}, "target": {"column": "y", "positive_class": 1}}
    with pytest.raises(SpecError) as caught:
        parse_spec({**raw, **extra})
    assert said in str(caught.value)


def test_an_expectation_on_a_column_the_pipeline_does_not_load_is_refused():
    """An expectation on a column left out of the features failed as "column is missing from
    the frame" although the data held it: the pipeline validates only what it loads."""
    excluded = {**RAW, "features": {"exclude": ["patient_id"]}}
    for expectations, where in [
        (
            {"columns": {"patient_id": {"max_missing_fraction": 0}}},
            "expectations.columns.patient_id",
        ),
        (
            {"extra": [{"type": "expect_column_values_to_be_unique",
                        "kwargs": {"column": "patient_id"}}]},
            "expectations.extra.0",
        ),
    ]:  # fmt: skip
        with pytest.raises(SpecError, match=rf"{where}: checks 'patient_id', which is not a"):
            parse_spec({**excluded, "expectations": expectations})
    included = {**RAW, "features": {"include": ["age"]}}
    with pytest.raises(SpecError, match=r"checks 'glucose', which is not a feature"):
        parse_spec({**included, "expectations": {"columns": {"glucose": {"min": 0}}}})
    parse_spec({**included, "expectations": {"columns": {"age": {"min": 0}, "target": {}}}})


def test_a_range_expectation_upside_down_names_its_column(tmp_path):
    """It said "ColumnRule.min (90.0) is greater than ColumnRule.max (10.0)." at validation,
    naming neither the column nor the key."""
    text = BASE + "expectations:\n  columns:\n    glucose: {min: 90, max: 10}\n"
    with pytest.raises(
        SpecError, match=r"expectations\.columns\.glucose: min \(90\) is greater than max \(10\)"
    ):
        load_spec(write(tmp_path, text))


def test_hostile_paths_and_numbers_are_refused_by_their_key(tmp_path):
    """A NUL in data.path failed as a bare ValueError; NaN bounds named an internal class;
    2**70 workers were accepted."""
    nul = BASE.replace(f"{{path: {DATA}}}", f'{{path: "{DATA}\\0"}}')
    for text, message in (
        (nul, r"data\.path: holds a NUL character"),
        (BASE + "expectations: {columns: {glucose: {min: .nan}}}\n", r"columns\.glucose\.min"),
        (BASE + "runner: {max_workers: 1180591620717411303424}\n", r"runner\.max_workers"),
    ):
        with pytest.raises(SpecError, match=message):
            load_spec(write(tmp_path, text))


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ("features: [age, age]", "features: include names 'age' twice"),
        ("features: []", "features: include is empty"),
        ("features: {include: [age], exclude: [age]}", "include and exclude both name 'age'"),
        ("features: {categorical: [a, a]}", "categorical names 'a' twice"),
        ("store: ''", "store: is empty"),
    ],
)
def test_spec_mistakes_are_named_where_they_are(tmp_path, extra, message):
    """A feature listed twice failed at load with "Parquet cannot store"; no feature at all
    passed `libre validate`; a column both included and excluded read as missing from the
    data; an empty store made the spec's own folder the store."""
    with pytest.raises(SpecError, match=re.escape(message)) as raised:
        load_spec(write(tmp_path, BASE + extra + "\n"))
    assert "Parquet" not in one_line(raised)


def test_an_empty_data_path_is_named_as_empty():
    """data.path "" read the spec's own folder: "a directory without .csv or .parquet files"."""
    with pytest.raises(SpecError, match=re.escape("data.path: is empty")):
        parse_spec({**RAW, "data": {"path": ""}})


@pytest.mark.parametrize(
    ("classes", "message"),
    [('["1", "2", "2"]', "lists '2' twice"), ('["2"]', "lists 1 class: a rule set needs two")],
)
def test_declared_classes_are_checked_when_the_spec_is_read(tmp_path, classes, message):
    """A class listed twice was called "written in different ways"; one class passed the spec
    and failed validation naming ValidationRules.target_classes."""
    text = BASE.replace('positive_class: "1"}', f'positive_class: "2", classes: {classes}}}')
    with pytest.raises(SpecError, match=re.escape(f"target.classes: {message}")):
        load_spec(write(tmp_path, text))


def test_numbers_in_exponent_form_read_as_numbers(tmp_path):
    """YAML 1.1 read 1e-3 as text: `min_local_support: 1e-3` was refused as not a float."""
    spec = load_spec(write(tmp_path, BASE + "model: {min_local_support: 1e-3}\n"))
    assert spec.model.min_local_support == 0.001


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"tuning": None}, "tuning: must be a mapping of keys"),
        ({"data": "x.csv"}, "data: must be a mapping of keys (key: value lines under it); "
         "write data: {path: x.csv}"),
        (
            {"target": {"column": "target", "positive_class": [1, 2]}},
            "target.positive_class: must be one text or number",
        ),
    ],
)  # fmt: skip
def test_sections_of_the_wrong_shape_are_named_in_the_specs_words(change, message):
    """A section of the wrong shape named pydantic's class ("instance of TuningSpec"), and a
    positive class of none of its types gave four errors, one per type."""
    with pytest.raises(SpecError) as raised:
        parse_spec({**RAW, **change})
    text = one_line(raised)
    assert message in text and "instance of" not in text and ".str:" not in text
    assert text.count("positive_class") <= 1
