"""Validating training data against declared rules, run with Great Expectations (GX).

The rules are plain values (``ValidationRules``, ``ColumnRule``) so a pipeline spec can map
onto them. ``build_expectations`` turns them into a suite of plain dicts; ``validate_frame``
runs that suite on an in-memory DataFrame in one GX validation call and returns a plain,
JSON-friendly ``ValidationReport``; ``raise_for_failures`` turns a failed report into a
``DataValidationError`` whose message lists every failed expectation.

GX is imported lazily (the import takes about 5 s) and runs in an *ephemeral* context: nothing
is written to disk, progress bars are off, analytics are off, and GX logging is kept at
WARNING unless the application configured it.

Three checks are done by our own code, not by GX:

* column presence (``expect_column_to_exist``): trivial, and GX's bookkeeping costs about 25 ms
  per expectation whatever the frame's size, so we do not spend it on a set lookup;
* column dtypes (``ColumnRule.dtype``): GX's type expectations do not recognise pandas 3's
  ``str`` and ``category`` dtypes, so "numeric" / "categorical" is decided with pandas
  (``libre_lib.inputs.is_categorical_dtype``: bool, string, object and category columns are
  categorical);
* a range (``ColumnRule.min`` / ``max``) declared on a column that is not numeric: GX would only
  raise a type error, so we report how many values are not numbers instead.

Target classes are compared as labels, not as raw values: each side is mapped to a string key
(``str(value)``, with integral floats written as integers, so ``1``, ``1.0``, ``"1"`` and
``np.int64(1)`` are the same class, while ``"1 "`` and ``"01"`` are not). A CSV read often
gives ``"1"`` where the spec says ``1``; that is not a data problem, a stray class is.
"""

from __future__ import annotations

import difflib
import json
import logging
import math
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace

import numpy as np
import pandas as pd

from ..errors import DataError, DataValidationError, ParameterError, counted
from ..inputs import is_categorical_dtype, same_number
from ..rules import number_text
from .contract import plain_value

__all__ = [
    "ColumnRule",
    "ExpectationResult",
    "ValidationReport",
    "ValidationRules",
    "build_expectations",
    "raise_for_failures",
    "validate_frame",
]

DTYPES = ("numeric", "categorical")
GX = "great_expectations"
OWN = "libre_lib"
DTYPE_EXPECTATION = "expect_column_dtype_to_be"
MAX_EXAMPLES = 5
_PARTIAL_UNEXPECTED = 20  # GX collects this many unexpected rows; we keep MAX_EXAMPLES distinct
_TARGET_KEY_COLUMN = "__libre_target_label__"
_COLUMN_KWARGS = ("column", "column_A", "column_B")


# --------------------------------------------------------------------------- rules


def _is_number(value) -> bool:
    return isinstance(value, int | float | np.integer | np.floating) and not isinstance(
        value, bool | np.bool_
    )


def _as_tuple(value, what: str) -> tuple:
    if isinstance(value, str | bytes) or not isinstance(value, Iterable):
        raise ParameterError(f"{what} must be a list or tuple; got {value!r}.")
    return tuple(value)


def _check_fraction(value, what: str) -> float:
    if not _is_number(value) or not 0.0 <= float(value) <= 1.0:
        raise ParameterError(f"{what} must be a number between 0 and 1; got {value!r}.")
    return float(value)


@dataclass(frozen=True)
class ColumnRule:
    """Declared constraints on one column; every field is optional.

    ``min`` / ``max`` bound the non-missing values (inclusive); ``values`` is the allowed
    domain of a categorical column; ``max_missing_fraction`` overrides the rules' default
    bound; ``dtype`` is ``"numeric"`` or ``"categorical"``.
    """

    min: float | None = None
    max: float | None = None
    values: tuple | None = None
    max_missing_fraction: float | None = None
    dtype: str | None = None

    def __post_init__(self):
        for name in ("min", "max"):
            bound = getattr(self, name)
            if bound is not None and (not _is_number(bound) or math.isnan(bound)):
                raise ParameterError(f"ColumnRule.{name} must be a number; got {bound!r}.")
        if self.min is not None and self.max is not None and self.min > self.max:
            raise ParameterError(
                f"ColumnRule.min ({self.min!r}) is greater than ColumnRule.max ({self.max!r})."
            )
        if self.values is not None:
            values = _as_tuple(self.values, "ColumnRule.values")
            if not values:
                raise ParameterError("ColumnRule.values is empty: no value would be allowed.")
            object.__setattr__(self, "values", values)
        if self.max_missing_fraction is not None:
            fraction = _check_fraction(self.max_missing_fraction, "ColumnRule.max_missing_fraction")
            object.__setattr__(self, "max_missing_fraction", fraction)
        if self.dtype is not None and self.dtype not in DTYPES:
            raise ParameterError(
                f"ColumnRule.dtype must be one of {list(DTYPES)}; got {self.dtype!r}."
            )


@dataclass(frozen=True)
class ValidationRules:
    """What the training data must satisfy. See the module docstring for how classes compare.

    ``target_classes``: exactly these classes must appear in the target (every one of them,
    and nothing else); ``None`` means any two or more classes. ``max_missing_fraction`` is the
    default bound on the fraction of missing values in every feature column (every column of
    the frame except the target). ``expectations`` are extra GX expectations given as
    ``{"type": "expect_column_values_to_be_between", "kwargs": {...}}``, where ``type`` is the
    snake_case name of a GX 1.x expectation class.

    The required columns are ``required_columns``, the target, the columns named in
    ``columns`` and the columns the user expectations name. A missing one is reported, and the
    expectations on it are skipped.
    """

    required_columns: tuple[str, ...]
    target_column: str
    target_classes: tuple | None = None
    min_rows: int = 1
    max_missing_fraction: float = 1.0
    columns: Mapping[str, ColumnRule] = field(default_factory=dict)
    expectations: tuple[dict, ...] = ()

    def __post_init__(self):
        required = _as_tuple(self.required_columns, "ValidationRules.required_columns")
        if not all(isinstance(c, str) and c for c in required):
            raise ParameterError(
                f"ValidationRules.required_columns must be column names; got {list(required)!r}."
            )
        object.__setattr__(self, "required_columns", required)
        if not isinstance(self.target_column, str) or not self.target_column:
            raise ParameterError(
                f"ValidationRules.target_column must be a column name; got {self.target_column!r}."
            )
        if self.target_classes is not None:
            classes = _as_tuple(self.target_classes, "ValidationRules.target_classes")
            if len(_unique(label_key(c) for c in classes)) < 2:
                raise ParameterError(
                    "ValidationRules.target_classes must name at least two distinct classes; "
                    f"got {list(classes)!r}."
                )
            object.__setattr__(self, "target_classes", classes)
        if (
            not isinstance(self.min_rows, int | np.integer)
            or isinstance(self.min_rows, bool)
            or self.min_rows < 0
        ):
            raise ParameterError(
                f"ValidationRules.min_rows must be a whole number >= 0; got {self.min_rows!r}."
            )
        object.__setattr__(self, "min_rows", int(self.min_rows))
        object.__setattr__(
            self,
            "max_missing_fraction",
            _check_fraction(self.max_missing_fraction, "ValidationRules.max_missing_fraction"),
        )
        object.__setattr__(self, "columns", self._checked_columns(self.columns))
        object.__setattr__(self, "expectations", self._checked_expectations(self.expectations))

    def _checked_columns(self, columns) -> dict[str, ColumnRule]:
        if not isinstance(columns, Mapping):
            raise ParameterError(
                "ValidationRules.columns must map column names to ColumnRule; "
                f"got {type(columns).__name__}."
            )
        checked = {}
        for name, rule in columns.items():
            if not isinstance(name, str) or not name:
                raise ParameterError(f"ValidationRules.columns has a bad column name {name!r}.")
            if name == self.target_column:
                raise ParameterError(
                    f"ValidationRules.columns declares a rule for the target column {name!r}; "
                    "declare the target's labels with target_classes instead."
                )
            if isinstance(rule, Mapping):
                try:
                    rule = ColumnRule(**rule)
                except TypeError as exc:
                    raise ParameterError(
                        f"ValidationRules.columns[{name!r}]: {exc}. "
                        "Known keys: min, max, values, max_missing_fraction, dtype."
                    ) from None
            if not isinstance(rule, ColumnRule):
                raise ParameterError(
                    f"ValidationRules.columns[{name!r}] must be a ColumnRule or a dict; "
                    f"got {type(rule).__name__}."
                )
            checked[name] = rule
        return checked

    @staticmethod
    def _checked_expectations(expectations) -> tuple[dict, ...]:
        if isinstance(expectations, Mapping):
            raise ParameterError(
                "ValidationRules.expectations must be a list of {'type': ..., 'kwargs': {...}} "
                "dicts; got a single dict."
            )
        checked = []
        for i, item in enumerate(_as_tuple(expectations, "ValidationRules.expectations")):
            where = f"ValidationRules.expectations[{i}]"
            if not isinstance(item, Mapping):
                raise ParameterError(f"{where} must be a dict; got {item!r}.")
            unknown = sorted(set(item) - {"type", "kwargs"})
            if unknown:
                raise ParameterError(
                    f"{where} has unknown key(s) {unknown}; only 'type' and 'kwargs' are allowed."
                )
            type_ = item.get("type")
            if not isinstance(type_, str) or not type_:
                raise ParameterError(
                    f"{where} needs a 'type': the snake_case name of a GX expectation, "
                    "e.g. 'expect_column_values_to_be_between'."
                )
            kwargs = item.get("kwargs", {})
            if not isinstance(kwargs, Mapping):
                raise ParameterError(f"{where}['kwargs'] must be a dict; got {kwargs!r}.")
            checked.append({"type": type_, "kwargs": dict(kwargs)})
        return tuple(checked)


def label_key(value) -> str | None:
    """The string a target label is compared by (``None`` for a missing label)."""
    if value is None:
        return None
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float):
        if math.isnan(value):
            return None
        if value.is_integer():
            return str(int(value))
    if value is pd.NA or value is pd.NaT:
        return None
    return str(value)


def _unique(items: Iterable) -> list:
    return list(dict.fromkeys(items))


# --------------------------------------------------------------------------- the suite


#: ``mostly`` of the check every feature without a missing-value bound of its own gets: that
#: not every value is missing (any present value passes it). A declared feature that arrives
#: empty is an upstream failure; the fit would drop it without a word.
NOT_EMPTY = 1e-12


def _item(type_: str, source: str, checked_by: str = GX, **kwargs) -> dict:
    return {"type": type_, "kwargs": kwargs, "checked_by": checked_by, "source": source}


def build_expectations(rules: ValidationRules, columns: Sequence[str] | None = None) -> list[dict]:
    """The suite the rules describe, as plain dicts, in the order results are reported.

    Each dict has ``type`` and ``kwargs`` (as a GX expectation would take them), ``checked_by``
    (``"great_expectations"``, or ``"libre_lib"`` for our own column and dtype checks) and
    ``source`` (``"rules"`` or ``"user"``). ``columns`` (the frame's columns) decides which feature
    columns get the default missing-value bound; without it, the columns the rules name.
    The target-class expectations hold the classes' string keys (see ``label_key``).
    """
    target = rules.target_column
    referenced = (c for user in rules.expectations for c in referenced_columns(user["kwargs"]))
    named = _unique((*rules.required_columns, target, *rules.columns, *referenced))
    if columns is None:
        features = [c for c in named if c != target]
    else:
        features = _unique(c for c in (*map(str, columns), *named) if c != target)

    plan = [_item("expect_column_to_exist", "rules", OWN, column=c) for c in named]
    if rules.min_rows > 0:
        plan.append(
            _item("expect_table_row_count_to_be_between", "rules", min_value=rules.min_rows)
        )
    plan.append(_item("expect_column_values_to_not_be_null", "rules", column=target))
    if rules.target_classes is None:
        plan.append(
            _item(
                "expect_column_unique_value_count_to_be_between",
                "rules",
                column=target,
                min_value=2,
            )
        )
    else:
        keys = _unique(label_key(c) for c in rules.target_classes)
        plan.append(
            _item("expect_column_values_to_be_in_set", "rules", column=target, value_set=keys)
        )
        plan.append(
            _item(
                "expect_column_distinct_values_to_contain_set",
                "rules",
                column=target,
                value_set=keys,
            )
        )
    for column in features:
        rule = rules.columns.get(column)
        bound = rules.max_missing_fraction
        if rule is not None and rule.max_missing_fraction is not None:
            bound = rule.max_missing_fraction
        if bound < 1.0:
            mostly = round(1.0 - bound, 12)
            plan.append(
                _item("expect_column_values_to_not_be_null", "rules", column=column, mostly=mostly)
            )
        elif rule is None or rule.max_missing_fraction is None:  # not a bound set to 1 by hand
            plan.append(
                _item(
                    "expect_column_values_to_not_be_null", "rules", column=column, mostly=NOT_EMPTY
                )
            )
    for column, rule in rules.columns.items():
        if rule.dtype is not None:
            plan.append(_item(DTYPE_EXPECTATION, "rules", OWN, column=column, dtype=rule.dtype))
        if rule.min is not None or rule.max is not None:
            plan.append(
                _item(
                    "expect_column_values_to_be_between",
                    "rules",
                    column=column,
                    min_value=rule.min,
                    max_value=rule.max,
                )
            )
        if rule.values is not None:
            plan.append(
                _item(
                    "expect_column_values_to_be_in_set",
                    "rules",
                    column=column,
                    value_set=list(rule.values),
                )
            )
    for user in rules.expectations:
        plan.append({**user, "kwargs": dict(user["kwargs"]), "checked_by": GX, "source": "user"})
    return plan


# --------------------------------------------------------------------------- the report


def _reported_value(value):
    """A JSON-friendly Python scalar (:func:`plain_value`), timestamps in ISO 8601; a pair of
    values (a column-pair expectation's) as a tuple of such scalars."""
    if isinstance(value, tuple | list):
        return tuple(_reported_value(v) for v in value)
    return value.isoformat() if isinstance(value, pd.Timestamp) else plain_value(value)


@dataclass(frozen=True)
class ExpectationResult:
    """One expectation's outcome, in plain values."""

    expectation: str
    column: str | None
    success: bool
    unexpected_count: int | None
    unexpected_examples: tuple
    details: str

    def to_dict(self) -> dict:
        return {**asdict(self), "unexpected_examples": list(self.unexpected_examples)}

    @classmethod
    def from_dict(cls, data: Mapping) -> ExpectationResult:
        try:
            count = data["unexpected_count"]
            return cls(
                expectation=str(data["expectation"]),
                column=None if data["column"] is None else str(data["column"]),
                success=bool(data["success"]),
                unexpected_count=None if count is None else int(count),
                unexpected_examples=tuple(data["unexpected_examples"]),
                details=str(data["details"]),
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise ParameterError(
                f"Not a serialized ExpectationResult ({exc!r}): {data!r}"
            ) from None

    def describe(self) -> str:
        """One line: expectation, column, unexpected count, examples and details."""
        where = f"column {self.column!r}" if self.column is not None else "the table"
        parts = [f"{self.expectation} on {where}"]
        if self.expectation == "expect_column_distinct_values_to_contain_set":
            # its count and examples are the declared values that never appear: the details
            # name them; an "unexpected count" of a value the data lacks would read backwards
            return f"{parts[0]}: {self.details}"
        if self.unexpected_count is not None:
            parts.append(f"unexpected count {self.unexpected_count}")
        if self.unexpected_examples:
            parts.append(f"examples {list(self.unexpected_examples)!r}")
        return ": ".join([parts[0], ", ".join([*parts[1:], self.details])])


@dataclass(frozen=True)
class ValidationReport:
    """The outcome of ``validate_frame``: plain values, JSON and Parquet friendly."""

    success: bool
    n_rows: int
    results: tuple[ExpectationResult, ...]

    def failures(self) -> list[ExpectationResult]:
        return [r for r in self.results if not r.success]

    def summary(self) -> str:
        failed = self.failures()
        if not failed:
            return (
                f"Data validation passed: {counted(len(self.results), 'expectation')} met "
                f"on {counted(self.n_rows, 'row')}."
            )
        lines = [
            f"Data validation failed: {len(failed)} of {counted(len(self.results), 'expectation')} "
            f"not met on {counted(self.n_rows, 'row')}:"
        ]
        lines += [f"  - {r.describe()}" for r in failed]
        return "\n".join(lines)

    def to_frame(self) -> pd.DataFrame:
        """One row per expectation; examples as JSON strings; counts as nullable Int64."""
        rows = [r.to_dict() for r in self.results]
        for row in rows:
            row["unexpected_examples"] = json.dumps(row["unexpected_examples"])
        columns = list(ExpectationResult.__dataclass_fields__)
        frame = pd.DataFrame(rows, columns=columns)
        return frame.astype(
            {
                "expectation": "str",
                "column": "object",
                "success": "bool",
                "unexpected_count": "Int64",
                "unexpected_examples": "str",
                "details": "str",
            }
        )

    def to_dict(self) -> dict:
        return {
            "success": self.success,
            "n_rows": self.n_rows,
            "results": [r.to_dict() for r in self.results],
        }

    @classmethod
    def from_dict(cls, data: Mapping) -> ValidationReport:
        try:
            return cls(
                success=bool(data["success"]),
                n_rows=int(data["n_rows"]),
                results=tuple(ExpectationResult.from_dict(r) for r in data["results"]),
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise ParameterError(f"Not a serialized ValidationReport ({exc!r}).") from None


def raise_for_failures(report: ValidationReport) -> None:
    """Raise ``DataValidationError`` listing every failed expectation when the report failed."""
    if report.success:
        return
    error = DataValidationError(report.summary())
    error.report = report
    raise error


# --------------------------------------------------------------------------- running


def _import_gx():
    """Import GX quietly: analytics off, its logger at WARNING unless configured."""
    os.environ.setdefault("GX_ANALYTICS_ENABLED", "false")
    gx_logger = logging.getLogger("great_expectations")
    if gx_logger.level == logging.NOTSET:
        gx_logger.setLevel(logging.WARNING)
    import great_expectations as gx
    from great_expectations.data_context.types.base import ProgressBarsConfig
    from great_expectations.exceptions import ExpectationNotFoundError
    from great_expectations.expectations.registry import (
        get_expectation_impl,
        list_registered_expectation_implementations,
    )

    return (
        gx,
        ProgressBarsConfig,
        get_expectation_impl,
        ExpectationNotFoundError,
        list_registered_expectation_implementations,
    )


def referenced_columns(kwargs: Mapping) -> list[str]:
    """The columns an expectation's keyword arguments name."""
    names = [kwargs[k] for k in _COLUMN_KWARGS if isinstance(kwargs.get(k), str)]
    column_list = kwargs.get("column_list")
    if isinstance(column_list, list | tuple):
        names += [c for c in column_list if isinstance(c, str)]
    return names


def _result_column(kwargs: Mapping) -> str | None:
    if isinstance(kwargs.get("column"), str):
        return kwargs["column"]
    names = referenced_columns(kwargs)
    return ", ".join(names) if names else None


def _non_numbers(series: pd.Series) -> pd.Series:
    """The non-missing values of ``series`` that are not numbers."""
    values = series[series.notna()]
    parsed = pd.to_numeric(values.astype(object), errors="coerce")
    return values[parsed.isna()]


def _examples(values: Iterable) -> tuple:
    return tuple(_unique(_reported_value(v) for v in values))[:MAX_EXAMPLES]


def _own_column_check(item: dict, present, skipped: Mapping[str, int]) -> ExpectationResult:
    column = item["kwargs"]["column"]
    if column in present:
        return ExpectationResult(item["type"], column, True, None, (), "column present")
    details = "column is missing from the frame" + _skipped_note(column, skipped)
    return ExpectationResult(item["type"], column, False, None, (), details)


def _own_dtype_check(item: dict, series: pd.Series) -> ExpectationResult:
    categorical = is_categorical_dtype(series)
    bad = ()
    if categorical and item["kwargs"]["dtype"] == "numeric":
        bad = _non_numbers(series)
    return _dtype_result(item, str(series.dtype), categorical, len(bad), _examples(bad))


def _dtype_result(
    item: dict, dtype: str, categorical: bool, n_bad: int, examples: tuple
) -> ExpectationResult:
    """The dtype check's outcome from the column's dtype, its verdict and its non-numbers."""
    column, wanted = item["kwargs"]["column"], item["kwargs"]["dtype"]
    if wanted == "numeric":
        if not categorical:
            return ExpectationResult(item["type"], column, True, 0, (), f"dtype {dtype} is numeric")
        return ExpectationResult(
            item["type"],
            column,
            False,
            n_bad,
            examples,
            f"expected a numeric column, found dtype {dtype} "
            f"({counted(n_bad, 'non-missing value')} {'is' if n_bad == 1 else 'are'} not numbers)",
        )
    if categorical:
        return ExpectationResult(item["type"], column, True, 0, (), f"dtype {dtype} is categorical")
    return ExpectationResult(
        item["type"],
        column,
        False,
        None,
        (),
        f"expected a categorical column, found numeric dtype {dtype}",
    )


def _range_on_non_numeric(item: dict, series: pd.Series) -> ExpectationResult:
    bad = _non_numbers(series)
    return _non_numeric_range_result(item, str(series.dtype), int(bad.size), _examples(bad))


def _non_numeric_range_result(
    item: dict, dtype: str, n_bad: int, examples: tuple
) -> ExpectationResult:
    """A range declared on a non-numeric column: how many values are not numbers."""
    kwargs = item["kwargs"]
    return ExpectationResult(
        item["type"],
        kwargs["column"],
        False,
        n_bad,
        examples,
        f"column has dtype {dtype}, not numeric, so the range "
        f"[{kwargs.get('min_value')}, {kwargs.get('max_value')}] cannot be checked "
        + (
            f"({counted(n_bad, 'non-missing value')} {'is' if n_bad == 1 else 'are'} not numbers)"
            if n_bad
            else "(every value reads as a number, but the data store them as text: store the "
            "column as numbers)"
        ),
    )


def _skipped_note(column: str, skipped: Mapping[str, int]) -> str:
    n = skipped.get(column, 0)
    return f"; {counted(n, 'expectation')} on it {'was' if n == 1 else 'were'} skipped" if n else ""


def _exception_messages(info) -> list[str]:
    if not isinstance(info, Mapping):
        return []
    if "raised_exception" in info:
        infos = [info]
    else:
        infos = [v for v in info.values() if isinstance(v, Mapping)]
    return _unique(str(i.get("exception_message")) for i in infos if i.get("raised_exception"))


def _percent(count: int, total: int | None) -> str:
    return f" ({100.0 * count / total:.3g}%)" if total else ""


def _bound_text(value):
    """A range's end as the spec wrote it: 250, not the 250.0 it was read as; None stays."""
    if isinstance(value, float) and not isinstance(value, bool):
        return number_text(value)
    return value


def _gx_details(item: dict, success: bool, info: Mapping, errors: list[str]) -> str:
    type_, kwargs = item["type"], item["kwargs"]
    if errors:
        return "could not be evaluated: " + "; ".join(errors)
    count = info.get("unexpected_count")
    total = info.get("element_count")
    if type_ == "expect_table_row_count_to_be_between":
        bounds = f"at least {kwargs.get('min_value')}"
        if kwargs.get("max_value") is not None:
            bounds += f" and at most {kwargs['max_value']}"
        observed = info.get("observed_value")
        rows = counted(observed, "row") if isinstance(observed, int) else f"{observed} rows"
        return f"{rows}; expected {bounds}"
    if type_ == "expect_column_values_to_not_be_null" and count is not None:
        mostly = kwargs.get("mostly", 1.0)
        if mostly <= NOT_EMPTY:
            if success:
                missing = counted(count, "missing value")
                shown = f"{missing} of {total:,}{_percent(count, total)}"
                return f"{shown}; allowed unless every value is missing"
            return (
                f"all {total} values are missing: no rule can use the column; check where it "
                "comes from, or leave it out of features"
            )
        if mostly >= 1.0:
            return f"{counted(count, 'missing value')} of {total:,}; none allowed"
        return (
            f"{counted(count, 'missing value')} of {total:,}{_percent(count, total)}; "
            f"at most {100.0 * (1.0 - mostly):.3g}% allowed"
        )
    if type_ == "expect_column_distinct_values_to_contain_set":
        missing = info.get("partial_missing_list") or []
        if not missing and success:
            return "every declared value appears"
        return f"declared value(s) never appear: {sorted(map(str, missing))}"
    missing = info.get("missing_count")
    if missing and total is not None:  # these expectations check the values present only
        total = total - missing
    unchecked = f"; {missing} missing not checked" if missing else ""
    if type_ == "expect_column_values_to_be_in_set" and count is not None:
        allowed = list(kwargs.get("value_set", []))
        shown = allowed[:10] + (["..."] if len(allowed) > 10 else [])
        of = f"{count:,} of {counted(total, 'value')}{_percent(count, total)}"
        return f"{of} not in {shown}{unchecked}{_written_otherwise(allowed, info)}"
    if type_ == "expect_column_values_to_be_between" and count is not None:
        low, high = (_bound_text(kwargs.get(k)) for k in ("min_value", "max_value"))
        bounds = (
            f"[{low}, {high}]"
            if low is not None and high is not None
            else f"≥ {low}"
            if low is not None
            else f"≤ {high}"
        )
        where = "outside " + bounds if low is not None and high is not None else "not " + bounds
        return f"{count:,} of {counted(total, 'value')}{_percent(count, total)} {where}{unchecked}"
    if type_ == "expect_column_unique_value_count_to_be_between" and item["source"] == "rules":
        return f"{info.get('observed_value')} distinct class(es); expected at least 2"
    shown = {k: v for k, v in kwargs.items() if k not in _COLUMN_KWARGS}
    parts = [f"kwargs {shown}"] if shown else []
    if count is not None:
        parts.append(f"{count:,} of {counted(total, 'value')}{_percent(count, total)} unexpected")
    if "observed_value" in info:
        parts.append(f"observed {_plain_observed(info['observed_value'])}")
    return "; ".join(parts) or ("met" if success else "not met")


def _plain_observed(value):
    if isinstance(value, list | tuple):
        return [_plain_observed(v) for v in value]
    if isinstance(value, Mapping):
        return {str(k): _plain_observed(v) for k, v in value.items()}
    return _reported_value(value)


def _gx_result(item: dict, result) -> ExpectationResult:
    info = result.result or {}
    errors = _exception_messages(result.exception_info)
    success = bool(result.success) and not errors
    column = _result_column(item["kwargs"])
    count = info.get("unexpected_count")
    if item["type"] == "expect_column_distinct_values_to_contain_set":
        count = info.get("missing_count", count)
        examples = _examples(sorted(map(str, info.get("partial_missing_list") or [])))
    elif item["type"] == "expect_column_values_to_not_be_null":
        examples = ()
    else:
        pairs = info.get("partial_unexpected_counts")
        if pairs:
            examples = _examples(p.get("value") for p in pairs)
        else:
            examples = _examples(info.get("partial_unexpected_list") or [])
    details = _gx_details(item, success, info, errors)
    return ExpectationResult(
        expectation=item["type"],
        column=column,
        success=success,
        unexpected_count=None if count is None else int(count),
        unexpected_examples=examples,
        details=details,
    )


def _checked_frame(frame) -> pd.DataFrame:
    if not isinstance(frame, pd.DataFrame):
        raise DataError(f"validate_frame needs a pandas DataFrame; got {type(frame).__name__}.")
    names = [str(c) for c in frame.columns]
    duplicated = sorted({n for n in names if names.count(n) > 1})
    if duplicated:
        raise DataError(f"The frame has duplicate column names {duplicated}.")
    if list(frame.columns) != names:
        frame = frame.set_axis(names, axis=1)
    return frame


def _written_otherwise(allowed: list, info: Mapping) -> str:
    """A note when the values found are the allowed numbers written otherwise ('1.0' for 1):
    values are compared as written."""
    found = list(info.get("partial_unexpected_list") or [])
    pairs = [(a, w[0]) for a in allowed if (w := same_number(a, found))]
    if not pairs:
        return ""
    shown = ", ".join(f"{a} as {w!r}" for a, w in pairs[:3])
    return f" (the column writes {shown}: list the values as the data writes them)"


def _target_keys(series: pd.Series) -> pd.Series:
    codes, uniques = pd.factorize(series, use_na_sentinel=True)
    keys = np.array([label_key(u) for u in uniques] + [None], dtype=object)
    return pd.Series(keys[codes], index=series.index, dtype=object)


def _expectation_classes(plan, get_impl, not_found, registered) -> dict[str, type]:
    classes = {}
    for type_ in _unique(item["type"] for item in plan if item["checked_by"] == GX):
        try:
            classes[type_] = get_impl(type_)
        except not_found:
            close = difflib.get_close_matches(type_, registered(), n=3, cutoff=0.6)
            hint = f" Did you mean {close}?" if close else ""
            raise ParameterError(
                f"Unknown expectation type {type_!r}: it is not a Great Expectations 1.x "
                "expectation (give the snake_case name of a class in "
                "great_expectations.expectations, e.g. 'expect_column_values_to_be_between')."
                f"{hint}"
            ) from None
    return classes


def _runnable(plan: list[dict], present) -> tuple[list[int], dict[str, int]]:
    """The plan's indices that can run on these columns, and per missing column how many
    expectations on it are skipped."""
    skipped: dict[str, int] = {}
    runnable = []
    for index, item in enumerate(plan):
        missing = [c for c in referenced_columns(item["kwargs"]) if c not in present]
        if item["type"] == "expect_column_to_exist" or not missing:
            runnable.append(index)
        for column in missing if item["type"] != "expect_column_to_exist" else ():
            skipped[column] = skipped.get(column, 0) + 1
    return runnable, skipped


def _gx_expectation(item: dict, index: int, kwargs: Mapping, classes: Mapping[str, type]):
    """The GX expectation for plan item ``index``, its index kept in ``meta``."""
    meta = {**(kwargs.get("meta") or {}), "libre_index": index}
    try:
        return classes[item["type"]](**{**kwargs, "meta": meta})
    except Exception as exc:  # pydantic.v1 ValidationError, TypeError: bad user kwargs
        where = "expectations.extra: " if item.get("source") == "user" else ""
        raise ParameterError(
            f"{where}expectation {item['type']!r} rejected its kwargs {kwargs!r}: "
            f"{_kwargs_problems(exc)}"
        ) from None


def _kwargs_problems(exc: Exception) -> str:
    """A validation error of an expectation's kwargs in one line: each field and its problem
    (pydantic's own text spans several lines and names its model classes)."""
    errors = getattr(exc, "errors", None)
    try:
        found = errors() if callable(errors) else None
    except Exception:  # not pydantic's: its text
        found = None
    if not found:
        return " ".join(str(exc).split())
    return "; ".join(
        f"{'.'.join(map(str, e.get('loc', ()))) or 'kwargs'}: {e.get('msg', '')}" for e in found
    )


def _run_gx_suite(gx, progress_bars_config, frame: pd.DataFrame, expectations: list) -> list:
    """Validate ``frame`` against ``expectations`` in one ephemeral GX run; the raw results."""
    context = gx.get_context(mode="ephemeral")
    context.variables.progress_bars = progress_bars_config(globally=False)
    batch = (
        context.data_sources.add_pandas(name="libre")
        .add_dataframe_asset(name="training_data")
        .add_batch_definition_whole_dataframe("whole")
        .get_batch(batch_parameters={"dataframe": frame})
    )
    suite = gx.ExpectationSuite(name="libre_training_data", expectations=expectations)
    result_format = {"result_format": "SUMMARY", "partial_unexpected_count": _PARTIAL_UNEXPECTED}
    return list(batch.validate(suite, result_format=result_format).results)


def validate_frame(frame: pd.DataFrame, rules: ValidationRules) -> ValidationReport:
    """Run the rules' expectations on ``frame`` in one Great Expectations validation call.

    Expectations on a missing column are skipped; the missing column is reported instead.
    Great Expectations is imported on the first call (about 1.6 s), with its usage
    statistics turned off (``GX_ANALYTICS_ENABLED=false`` in this process's environment).

    Parameters
    ----------
    frame : DataFrame
        The rows to validate (a pipeline's loaded data).
    rules : ValidationRules
        The expectations; from a spec, ``libre_lib.ops.stages.validation_rules(spec)``.

    Returns
    -------
    ValidationReport
        Every expectation's result; ``success`` is false when one failed. Bad data never
        raises.

    Raises
    ------
    ParameterError
        When the *rules* are bad (an unknown expectation type, bad arguments), or ``rules``
        is not a ``ValidationRules`` (a spec: pass ``validation_rules(spec)``).
    DataError
        When ``frame`` is not a DataFrame.
    """
    if not isinstance(rules, ValidationRules):
        hint = " (a spec: pass libre_lib.ops.stages.validation_rules(spec))"
        raise ParameterError(
            f"validate_frame takes ValidationRules; got {type(rules).__name__}"
            + (hint if type(rules).__name__ == "PipelineSpec" else "")
            + "."
        )
    frame = _checked_frame(frame)
    plan = build_expectations(rules, columns=list(frame.columns))
    gx, ProgressBarsConfig, get_impl, not_found, registered = _import_gx()
    classes = _expectation_classes(plan, get_impl, not_found, registered)

    present = set(frame.columns)
    target = rules.target_column
    key_column = _TARGET_KEY_COLUMN
    while key_column in present:
        key_column += "_"

    runnable, skipped = _runnable(plan, present)
    outcomes: dict[int, ExpectationResult] = {}
    expectations = []
    for index in runnable:
        item = plan[index]
        kwargs = item["kwargs"]
        column = kwargs.get("column")
        if item["checked_by"] == OWN:
            if item["type"] == "expect_column_to_exist":
                outcomes[index] = _own_column_check(item, present, skipped)
            else:
                outcomes[index] = _own_dtype_check(item, frame[column])
            continue
        if item["type"] == "expect_column_values_to_be_between" and item["source"] == "rules":
            series = frame[column]
            if is_categorical_dtype(series):
                outcomes[index] = _range_on_non_numeric(item, series)
                continue
        if (
            item["source"] == "rules"
            and column == target
            and item["type"] != "expect_column_values_to_not_be_null"
        ):
            kwargs = {**kwargs, "column": key_column}
        expectations.append(_gx_expectation(item, index, kwargs, classes))

    if expectations:
        batch_frame = frame
        if target in present:
            batch_frame = frame.assign(**{key_column: _target_keys(frame[target])})
        for result in _run_gx_suite(gx, ProgressBarsConfig, batch_frame, expectations):
            index = result.expectation_config.meta["libre_index"]
            outcomes[index] = _gx_result(plan[index], result)
        for index in runnable:  # never drop an expectation silently
            if index not in outcomes:
                item = plan[index]
                outcomes[index] = ExpectationResult(
                    item["type"],
                    _result_column(item["kwargs"]),
                    False,
                    None,
                    (),
                    "Great Expectations returned no result for this expectation",
                )

    results = tuple(_with_hint(outcomes[i], plan[i], target) for i in sorted(outcomes))
    return ValidationReport(
        success=all(r.success for r in results), n_rows=len(frame), results=results
    )


UNLABELLED_HINT = (
    "a row without a target value cannot be learned from: drop those rows from the data, fill "
    "in their target, or set target.unlabeled: drop in the spec to leave them out of each run"
)


def _with_hint(result: ExpectationResult, item: dict, target: str) -> ExpectationResult:
    """A failed check that has one obvious fix says it (missing target values)."""
    unlabelled = (
        not result.success
        and item["source"] == "rules"
        and item["type"] == "expect_column_values_to_not_be_null"
        and item["kwargs"].get("column") == target
        and result.unexpected_count
    )
    if not unlabelled:
        return result
    return replace(result, details=f"{result.details}; {UNLABELLED_HINT}")
