"""The rules of LIBRE's parameters, written once as data.

:data:`LIBRE_PARAMETERS` maps every :class:`~libre_lib.LibreClassifier` parameter to the list of
values it accepts (any item of the list will do), in the manner of scikit-learn's
``_parameter_constraints``::

    "max_intervals": [Range(Integral, 2, None, closed="left"), None]

:data:`LIBRE_REQUIREMENTS` holds the rules between parameters. Every place that checks a
parameter reads these tables: the estimator's ``fit``, the pipeline spec's ``model`` section,
``fit_discretization``, the weak learner and ``LibreSearchCV``'s grid. :func:`validate_params`
raises :class:`~libre_lib.errors.ParameterError` naming the parameter, the owner, the rule and
the value ("The 'alpha' parameter of LibreClassifier must be a float in [0, 1]. Got 1.3
instead."); :func:`broken_rule` and :func:`broken_requirement` give the rule alone, for callers
that report errors their own way (the spec names ``model.alpha``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from numbers import Integral, Real
from typing import Any

import numpy as np

from .errors import ParameterError, excerpt

#: Bit-selection heuristics of FindBoundaryPoint (paper, section 3.1).
HEURISTICS = ("H1", "H2")
#: Which positives seed boundary points: the paper's uncovered ones, or all (the authors' code).
SEEDING = ("uncovered", "all")
#: How the learners' feature-subset sizes are drawn.
SUBSET_SIZES = ("cycle", "fixed")
#: ChiMerge's merge orders: Kerber's lowest pair first, or the reference code's sweeps.
MERGE_ORDERS = ("lowest", "sweep")
#: What the boundary refinement (``refine``) may raise: the rule set's training F1 or accuracy.
REFINE_OBJECTIVES = ("f1", "accuracy")
#: Most weak learners a model may ask for: far beyond any useful ensemble, well below a typo.
MAX_ESTIMATORS = 100_000
#: The largest seed ``random_state`` (and a pipeline's ``split_seed``) may be: numpy's limit.
MAX_SEED = 2**32 - 1
#: The value of ``max_rules`` and ``conflict_tolerance`` that ``fit`` chooses by inner
#: cross-validation on the training data.
AUTO = "auto"


@dataclass(frozen=True)
class Range:
    """Numbers of ``type`` (``Integral`` or ``Real``) between ``low`` and ``high`` (``None``:
    unbounded); ``closed`` says which bounds belong to it: "both", "left", "right", "neither".
    Booleans and NaN never belong; infinity does not when ``finite``."""

    type: type
    low: Real | None
    high: Real | None
    closed: str = "both"
    finite: bool = False

    def __post_init__(self):
        if self.type not in (Integral, Real):
            raise TypeError(f"Range type must be Integral or Real, got {self.type!r}")
        if self.closed not in ("both", "left", "right", "neither"):
            raise ValueError(
                f"closed must be 'both', 'left', 'right' or 'neither', got {self.closed!r}"
            )

    def is_satisfied_by(self, value: Any) -> bool:
        if isinstance(value, bool | np.bool_) or not isinstance(value, self.type):
            return False
        if not isinstance(value, Integral) and math.isnan(value):
            return False
        if self.finite and not isinstance(value, Integral) and math.isinf(value):
            return False
        if self.low is not None:
            if value < self.low or (value == self.low and self.closed in ("right", "neither")):
                return False
        if self.high is not None:
            if value > self.high or (value == self.high and self.closed in ("left", "neither")):
                return False
        return True

    def __str__(self) -> str:
        kind = "an int" if self.type is Integral else "a finite float" if self.finite else "a float"
        left_closed = self.closed in ("both", "left")
        right_closed = self.closed in ("both", "right")
        if self.low is None and self.high is None:
            return kind
        if self.high is None:
            return f"{kind} {'>=' if left_closed else '>'} {self.low}"
        if self.low is None:
            return f"{kind} {'<=' if right_closed else '<'} {self.high}"
        left, right = "[" if left_closed else "(", "]" if right_closed else ")"
        return f"{kind} in {left}{self.low}, {self.high}{right}"


@dataclass(frozen=True)
class Options:
    """One of a few fixed values."""

    values: tuple

    def is_satisfied_by(self, value: Any) -> bool:
        return isinstance(value, str | int | float) and value in self.values

    def __str__(self) -> str:
        return f"one of {self.values}"


@dataclass(frozen=True)
class InstanceOf:
    """An instance of ``type`` (e.g. a ``numpy.random.RandomState``)."""

    type: type

    def is_satisfied_by(self, value: Any) -> bool:
        return isinstance(value, self.type)

    def __str__(self) -> str:
        return f"a {self.type.__name__}"


class _BoolConstraint:
    """A bool, numpy's included (what scikit-learn's grids may hand over)."""

    def is_satisfied_by(self, value: Any) -> bool:
        return isinstance(value, bool | np.bool_)

    def __str__(self) -> str:
        return "a bool"


Boolean = _BoolConstraint()


@dataclass(frozen=True)
class CheckedInFit:
    """Any value here: the parameter can only be checked against the data, in ``fit``."""

    what: str

    def is_satisfied_by(self, value: Any) -> bool:
        return True

    def __str__(self) -> str:
        return self.what


class _NoneConstraint:
    def is_satisfied_by(self, value: Any) -> bool:
        return value is None

    def __str__(self) -> str:
        return "None"


_NONE = _NoneConstraint()


@dataclass(frozen=True)
class Requires:
    """``name`` may differ from ``off`` only while each parameter of ``needs`` has its given
    value (``why`` says why)."""

    name: str
    off: Any
    needs: Mapping[str, Any]
    why: str

    def applies_to(self, params: Mapping[str, Any]) -> bool:
        return self.name in params and all(k in params for k in self.needs)

    def is_satisfied_by(self, params: Mapping[str, Any]) -> bool:
        if params[self.name] == self.off or params[self.name] == AUTO:
            return True
        return all(params[k] == v for k, v in self.needs.items())

    def __str__(self) -> str:
        needs = " and ".join(f"{k}={v!r}" for k, v in self.needs.items())
        return f"{self.off!r} unless {needs} ({self.why})"


_AT_LEAST_ONE = Range(Integral, 1, None, closed="left")

#: What each LibreClassifier parameter accepts (any item of its list).
LIBRE_PARAMETERS: dict[str, list] = {
    "n_estimators": [Range(Integral, 1, MAX_ESTIMATORS, closed="both")],
    "max_features": [_AT_LEAST_ONE, Range(Real, 0, 1, closed="right"), None],
    "subset_sizes": [Options(SUBSET_SIZES)],
    "heuristic": [Options(HEURISTICS)],
    "alpha": [Range(Real, 0, 1, closed="both"), Options((AUTO, "f1"))],
    # infinity would merge every column into one interval: no rule, without an error
    "chi2_threshold": [Range(Real, 0, None, closed="left", finite=True)],
    # one interval puts every number of a column in one bin: no rule could test it
    "max_intervals": [Range(Integral, 2, None, closed="left"), None, Options((AUTO,))],
    "top_k": [_AT_LEAST_ONE, None],
    "max_rules": [_AT_LEAST_ONE, None, Options((AUTO,))],
    "min_local_support": [Range(Real, 0, 1, closed="both")],
    "seeds": [Options(SEEDING)],
    "conflict_tolerance": [Range(Real, 0, None, closed="left"), Options((AUTO,))],
    "abstain": [Boolean],
    "refine": [Options(REFINE_OBJECTIVES), None],
    "significant_cuts": [Boolean],
    "merge_order": [Options(MERGE_ORDERS)],
    "contiguous": [Boolean],
    "positive_class": [CheckedInFit("a label of y")],
    "categorical_features": [CheckedInFit("column names, indices or a mask of X")],
    "random_state": [
        Range(Integral, 0, MAX_SEED, closed="both"),
        InstanceOf(np.random.RandomState),
        None,
    ],
    "n_jobs": [
        Range(Integral, 1, None, closed="left"),
        Range(Integral, None, -1, closed="right"),
        None,
    ],
    "verbose": [Range(Integral, 0, None, closed="left"), Boolean],
}

#: Rules between LibreClassifier parameters, checked once the single parameters are valid.
LIBRE_REQUIREMENTS: tuple[Requires, ...] = (
    Requires(
        "conflict_tolerance",
        off=0,
        needs={"heuristic": "H1", "seeds": "uncovered"},
        why="the tolerant learner exists only for those",
    ),
)

#: LibreSearchCV's own parameters (besides its estimator's).
SEARCH_PARAMETERS: dict[str, list] = {
    "score_tolerance": [Range(Real, 0, None, closed="left")],
    "standard_errors": [Range(Real, 0, None, closed="left")],
    "verbose": [Range(Integral, 0, None, closed="left"), Boolean],
    "refit": [Boolean],
}


def describe(constraints: Sequence) -> str:
    """The rule of a list of constraints in words: "an int >= 1, a float in (0, 1] or None"."""
    words = [str(_NONE if c is None else c) for c in constraints]
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " or " + words[-1]


def broken_rule(name: str, value: Any, table: Mapping[str, list] = LIBRE_PARAMETERS) -> str | None:
    """The rule ``value`` breaks as ``name`` ("a float in [0, 1]"), or None when it satisfies
    it (or ``table`` has no rule for ``name``)."""
    constraints = table.get(name)
    if constraints is None:
        return None
    if any((_NONE if c is None else c).is_satisfied_by(value) for c in constraints):
        return None
    return describe(constraints)


def broken_requirement(
    params: Mapping[str, Any], requirements: Sequence[Requires] = LIBRE_REQUIREMENTS
) -> Requires | None:
    """The first rule between parameters that ``params`` breaks (rules naming a parameter
    absent from ``params`` are skipped), or None."""
    for rule in requirements:
        if rule.applies_to(params) and not rule.is_satisfied_by(params):
            return rule
    return None


def parameter_message(
    name: str, value: Any, rule: str, owner: str | None = None, noun: str = "parameter"
) -> str:
    """The message of a broken rule: "The 'alpha' parameter of LibreClassifier must be a float
    in [0, 1]. Got 1.3 instead." (``owner=None`` leaves out " of LibreClassifier")."""
    of = f" of {owner}" if owner else ""
    return f"The {name!r} {noun}{of} must be {rule}. Got {excerpt(value)} instead."


def validate_params(
    params: Mapping[str, Any],
    owner: str | None = "LibreClassifier",
    *,
    table: Mapping[str, list] = LIBRE_PARAMETERS,
    requirements: Sequence[Requires] = LIBRE_REQUIREMENTS,
    noun: str = "parameter",
) -> None:
    """Check ``params`` against ``table`` (names it lacks pass) and then ``requirements``.

    Parameters
    ----------
    params : mapping
        Parameter names and values, e.g. ``estimator.get_params(deep=False)``.
    owner : str or None, default="LibreClassifier"
        Who takes the parameters, named in the message (None: no owner).
    table, requirements : default=LIBRE_PARAMETERS, LIBRE_REQUIREMENTS
        The rules to check.
    noun : str, default="parameter"
        What a name is to the owner ("param_grid entry" for a search grid).

    Raises
    ------
    ParameterError
        On the first parameter that breaks its rule.
    """
    for name, value in params.items():
        rule = broken_rule(name, value, table)
        if rule is not None:
            raise ParameterError(parameter_message(name, value, rule, owner, noun))
    broken = broken_requirement(params, requirements)
    if broken is not None:
        name = broken.name
        raise ParameterError(parameter_message(name, params[name], str(broken), owner, noun))


__all__ = [
    "AUTO",
    "HEURISTICS",
    "LIBRE_PARAMETERS",
    "LIBRE_REQUIREMENTS",
    "MAX_ESTIMATORS",
    "MAX_SEED",
    "SEARCH_PARAMETERS",
    "SEEDING",
    "SUBSET_SIZES",
    "CheckedInFit",
    "InstanceOf",
    "Options",
    "Range",
    "Requires",
    "broken_requirement",
    "broken_rule",
    "describe",
    "parameter_message",
    "validate_params",
]
