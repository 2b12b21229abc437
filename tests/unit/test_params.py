"""The parameter rules, written once (libre_lib/params.py) and read by every place that checks
them: the estimator, the pipeline spec, fit_discretization, the weak learner and the search."""

import inspect
import re
import subprocess
import sys
from numbers import Integral, Real

import numpy as np
import pandas as pd
import pytest

from libre_lib import LibreClassifier, LibreSearchCV, ParameterError
from libre_lib.discretization import fit_discretization
from libre_lib.errors import SpecError
from libre_lib.ops.spec import ModelSpec, parse_spec
from libre_lib.params import (
    LIBRE_PARAMETERS,
    MAX_ESTIMATORS,
    InstanceOf,
    Options,
    Range,
    Requires,
    broken_requirement,
    broken_rule,
    describe,
    validate_params,
)
from libre_lib.weak_learner import check_heuristic

X4 = pd.DataFrame({"a": [1.0, 2.0, 3.0, 4.0, 5.0, 6.0], "b": [0.0, 1.0, 0.0, 1.0, 0.0, 1.0]})
Y4 = np.array([0, 0, 0, 1, 1, 1])


# --- each kind of rule -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("interval", "inside", "outside", "text"),
    [
        (
            Range(Real, 0, 1, closed="both"),
            [0, 0.5, 1, np.float32(1)],
            [-0.1, 1.01],
            "a float in [0, 1]",
        ),
        (Range(Real, 0, 1, closed="right"), [1, 1e-9], [0, 0.0], "a float in (0, 1]"),
        (Range(Real, 0, 1, closed="left"), [0], [1], "a float in [0, 1)"),
        (Range(Real, 0, 1, closed="neither"), [0.5], [0, 1], "a float in (0, 1)"),
        (Range(Real, 0, None, closed="left"), [0, 1e300, float("inf")], [-1e-9], "a float >= 0"),
        (
            Range(Integral, 1, None, closed="left"),
            [1, np.int64(7), 10**30],
            [0, 2.0],
            "an int >= 1",
        ),
        (Range(Integral, None, -1, closed="right"), [-1, -5], [0], "an int <= -1"),
        (Range(Integral, 1, 3, closed="both"), [1, 3], [0, 4], "an int in [1, 3]"),
    ],
)
def test_interval(interval, inside, outside, text):
    assert all(interval.is_satisfied_by(v) for v in inside)
    assert not any(interval.is_satisfied_by(v) for v in outside)
    assert str(interval) == text


@pytest.mark.parametrize("value", [True, False, np.bool_(True), float("nan"), "1", None, [1]])
def test_an_interval_never_holds_booleans_nan_strings_or_none(value):
    assert not Range(Real, None, None).is_satisfied_by(value)
    assert not Range(Integral, None, None).is_satisfied_by(value)


def test_options_none_and_instances():
    options = Options(("H1", "H2"))
    assert options.is_satisfied_by("H1") and not options.is_satisfied_by("H3")
    assert not options.is_satisfied_by(["H1"])
    assert str(options) == "one of ('H1', 'H2')"
    assert broken_rule("top_k", None) is None
    assert broken_rule("top_k", 0) == "an int >= 1 or None"
    state = InstanceOf(np.random.RandomState)
    assert state.is_satisfied_by(np.random.RandomState(0)) and not state.is_satisfied_by(0)
    assert str(state) == "a RandomState"


def test_a_list_of_rules_reads_as_one_sentence():
    assert describe(LIBRE_PARAMETERS["max_features"]) == "an int >= 1, a float in (0, 1] or None"
    assert describe(LIBRE_PARAMETERS["alpha"]) == "a float in [0, 1] or one of ('auto', 'f1')"


def test_requirements_between_parameters():
    rule = Requires("conflict_tolerance", off=0, needs={"heuristic": "H1"}, why="H1 only")
    assert str(rule) == "0 unless heuristic='H1' (H1 only)"
    assert rule.is_satisfied_by({"conflict_tolerance": 0.0, "heuristic": "H2"})
    assert rule.is_satisfied_by({"conflict_tolerance": 0.5, "heuristic": "H1"})
    assert not rule.is_satisfied_by({"conflict_tolerance": 0.5, "heuristic": "H2"})
    # a rule naming a parameter that is not given is not checked (a grid may tune one alone)
    assert broken_requirement({"conflict_tolerance": 0.5}) is None
    assert broken_requirement({"conflict_tolerance": 0.5, "heuristic": "H2", "seeds": "all"})


# --- the messages ----------------------------------------------------------------------------


def test_the_message_names_the_parameter_the_owner_the_rule_and_the_value():
    with pytest.raises(ParameterError) as caught:
        validate_params({"alpha": 1.3})
    assert str(caught.value) == (
        "The 'alpha' parameter of LibreClassifier must be a float in [0, 1] or one of ('auto', "
        "'f1'). Got 1.3 instead."
    )
    with pytest.raises(ParameterError, match=r"^The 'heuristic' parameter must be one of"):
        validate_params({"heuristic": "H3"}, owner=None)
    validate_params({"not_a_rule": object()})  # names without a rule pass


def test_every_estimator_parameter_has_a_rule_and_its_default_satisfies_it():
    defaults = LibreClassifier().get_params(deep=False)
    assert set(LIBRE_PARAMETERS) == set(defaults)
    validate_params(defaults)


# --- the spec and the estimator agree --------------------------------------------------------

SPEC_FIELDS = [name for name in ModelSpec.model_fields if name != "random_state"]
VALUES = [
    0, 1, 2, 100_000, 100_001, -1, 0.0, 0.05, 0.5, 1.0, 1.3, 4.6, 2.0, float("nan"), float("inf"),
    True, None, "0.5", "H1", "H2", "H3", "cycle", "fixed", "uncovered", "all", "auto", "sometimes",
]  # fmt: skip


def _estimator_accepts(name, value):
    try:
        LibreClassifier(**{name: value})._check_params()
    except ParameterError:
        return False
    return True


def _spec_accepts(name, value):
    raw = {"name": "p", "data": {"path": "d.csv"}, "target": {"column": "y", "positive_class": 1}}
    try:
        parse_spec({**raw, "model": {name: value}})
    except SpecError as error:
        assert f"model.{name}" in str(error)
        return False
    return True


@pytest.mark.parametrize("name", SPEC_FIELDS)
def test_the_spec_and_the_estimator_accept_the_same_values(name):
    for value in VALUES:
        assert _spec_accepts(name, value) == _estimator_accepts(name, value), value


def test_the_spec_checks_the_rules_between_parameters_naming_the_field():
    raw = {"name": "p", "data": {"path": "d.csv"}, "target": {"column": "y", "positive_class": 1}}
    model = {"conflict_tolerance": 0.3, "heuristic": "H2"}
    with pytest.raises(
        SpecError, match=r"model\.conflict_tolerance: must be 0 unless heuristic='H1'"
    ):
        parse_spec({**raw, "model": model})
    with pytest.raises(ParameterError, match="'conflict_tolerance' parameter of LibreClassifier"):
        LibreClassifier(**model).fit(X4, Y4)


def test_the_spec_keeps_its_defaults_from_the_estimator():
    signature = inspect.signature(LibreClassifier.__init__).parameters
    for name, field in ModelSpec.model_fields.items():
        if name != "random_state":
            assert field.default == signature[name].default


def test_the_spec_accepts_auto_and_refuses_other_words_with_the_tables_message():
    raw = {"name": "p", "data": {"path": "d.csv"}, "target": {"column": "y", "positive_class": 1}}
    for name in ("max_rules", "conflict_tolerance"):
        assert getattr(parse_spec({**raw, "model": {name: "auto"}}).model, name) == "auto"
        rule = re.escape(describe(LIBRE_PARAMETERS[name]).replace("None", "null"))  # as YAML
        with pytest.raises(SpecError, match=rf"model\.{name}: must be {rule} \(got 'sometimes'\)"):
            parse_spec({**raw, "model": {name: "sometimes"}})


# --- the other readers of the table ----------------------------------------------------------


def test_n_estimators_has_an_upper_bound():
    LibreClassifier(n_estimators=MAX_ESTIMATORS)._check_params()
    with pytest.raises(ParameterError, match=r"'n_estimators' .* must be an int in \[1, 100000\]"):
        LibreClassifier(n_estimators=MAX_ESTIMATORS + 1).fit(X4, Y4)


def test_random_state_must_be_a_seed_numpy_accepts():
    with pytest.raises(ParameterError, match="'random_state' parameter of LibreClassifier"):
        LibreClassifier(random_state=-1).fit(X4, Y4)
    LibreClassifier(n_estimators=2, random_state=np.random.RandomState(0)).fit(X4, Y4)


def test_fit_discretization_and_the_weak_learner_read_the_table():
    with pytest.raises(ParameterError, match="'max_intervals' parameter of fit_discretization"):
        fit_discretization(X4, Y4 == 1, [False, False], max_intervals=2.5)
    with pytest.raises(ParameterError, match=r"'max_intervals' .* an int >= 2, None"):
        LibreClassifier(max_intervals=1).fit(X4, Y4)  # one bin: no rule could test a number
    with pytest.raises(ParameterError, match=r"one of \('H1', 'H2'\)"):
        check_heuristic("H3")


@pytest.mark.parametrize(
    ("grid", "message"),
    [
        ({"alpha": [0.5, 1.3]}, "The 'alpha' param_grid entry of LibreSearchCV must be a float"),
        ({"top_k": [0]}, "The 'top_k' param_grid entry of LibreSearchCV"),
        (
            {"heuristic": ["H2"], "seeds": ["uncovered"], "conflict_tolerance": [0.5]},
            "The 'conflict_tolerance' param_grid entry of LibreSearchCV must be 0 unless",
        ),
        # seeds comes from the estimator here: the rule is checked on the whole candidate
        (
            {"heuristic": ["H2"], "conflict_tolerance": [0.5]},
            "The 'conflict_tolerance' parameter of LibreClassifier must be 0 unless",
        ),
    ],
)
def test_the_search_checks_every_grid_value_naming_its_key(grid, message):
    with pytest.raises(ParameterError, match=message):
        LibreSearchCV(param_grid=grid, cv=2).fit(X4, Y4)


def test_the_search_checks_its_own_parameters_with_the_same_rules():
    with pytest.raises(ParameterError, match="'score_tolerance' parameter of LibreSearchCV"):
        LibreSearchCV(score_tolerance=float("nan")).fit(X4, Y4)
    # those it passes on to its estimators are its own too, and named as its own
    with pytest.raises(ParameterError, match="'max_rules' parameter of LibreSearchCV"):
        LibreSearchCV(max_rules=0, cv=2).fit(X4, Y4)
    with pytest.raises(ParameterError, match="'refine' parameter of LibreSearchCV"):
        LibreSearchCV(refine="best", cv=2).fit(X4, Y4)
    with pytest.raises(ParameterError, match="'positive_class' parameter of LibreSearchCV is 7"):
        LibreSearchCV(positive_class=7, cv=2).fit(X4, Y4)
    with pytest.raises(ParameterError, match="'categorical_features' parameter of LibreSearchCV"):
        LibreSearchCV(categorical_features=["zz"], cv=2).fit(X4, Y4)
    # one the estimator holds is the estimator's
    with pytest.raises(ParameterError, match="'positive_class' parameter of LibreClassifier is 7"):
        LibreSearchCV(estimator=LibreClassifier(positive_class=7), cv=2).fit(X4, Y4)


def test_the_rules_module_imports_no_operation_code():
    code = (
        "import sys, libre_lib.params; "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('prefect', 'pydantic') "
        "or m.startswith('libre_lib.ops')))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"
