"""The spec's report.value_labels and report.class_labels: checked, and used by the report."""

import pytest

from libre_lib.errors import SpecError
from libre_lib.ops.spec import parse_spec

RAW = {
    "name": "p",
    "data": {"path": "data.csv"},
    "target": {"column": "target", "positive_class": "1", "classes": ["0", "1"]},
}


def test_labels_are_read():
    spec = parse_spec(
        {
            **RAW,
            "report": {
                "class_labels": {"1": "diabetic", 0: "not diabetic"},
                "value_labels": {"sex": {1: "female", "0": "male"}},
            },
        }
    )
    assert spec.report.class_labels == {"1": "diabetic", 0: "not diabetic"}
    assert spec.report.value_labels == {"sex": {1: "female", "0": "male"}}
    assert parse_spec(RAW).report.value_labels == {} == parse_spec(RAW).report.class_labels


def test_labels_keep_the_joiners_persian_and_emoji_need():
    raw = {**RAW, "report": {"class_labels": {"1": "می\u200cخواهد 👩\u200d💻"}}}
    assert parse_spec(raw).report.class_labels["1"] == "می\u200cخواهد 👩\u200d💻"


@pytest.mark.parametrize(
    ("report", "message"),
    [
        ({"class_labels": {"2": "x"}}, r"report\.class_labels\.2: must be a class of the target"),
        ({"class_labels": {"1": "a", "0": "a"}}, "have the same label 'a'"),
        ({"class_labels": {"1": " "}}, "the label of '1' is empty"),
        ({"value_labels": {"sex": {1: "f", "1.0": "g"}}}, "1 and '1.0' are the same value"),
        ({"value_labels": {"target": {1: "x"}}}, "is the target column"),
        ({"value_labels": {"sex": [1, 2]}}, r"report\.value_labels\.sex"),
        ({"column_labels": {"a": "a\nOR b"}}, "line break or control character"),
        ({"value_labels": {"sex": {1: "f\tx"}}}, "line break or control character"),
        ({"target_label": "y\r"}, "line break or control character"),
        # a line separator split a rule in the HTML report into a fake "OR" line; an override
        # reversed the report's text after the label
        ({"class_labels": {"1": "died\u2028OR age ≥ 0"}}, r"holds U\+2028, an invisible"),
        ({"column_labels": {"a": "refused \u202egnp.exe"}}, r"holds U\+202E, an invisible"),
        ({"value_labels": {"sex": {1: "f\u200b"}}}, r"holds U\+200B, an invisible"),
    ],
)
def test_bad_labels_are_refused_with_the_key_named(report, message):
    with pytest.raises(SpecError, match=message):
        parse_spec({**RAW, "report": report})


def test_value_label_of_an_excluded_column_is_refused():
    raw = {**RAW, "features": {"exclude": ["sex"]}, "report": {"value_labels": {"sex": {1: "f"}}}}
    with pytest.raises(SpecError, match="is not a feature of the model"):
        parse_spec(raw)
