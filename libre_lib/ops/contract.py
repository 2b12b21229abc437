"""The data contract of a fitted model: what scoring data must look like, and how it may drift.

A :class:`DataContract` is built from a fitted :class:`~libre_lib.LibreClassifier` and the frame
it was trained on (``DataContract.from_model(model, X)``). Per input column it records the kind
(numeric / categorical, as the model treats it), the dtype family, the categories seen in
training, the numeric training range and the training missing rate, and whether some rule tests
the column. It round-trips through JSON (``to_dict`` / ``from_dict``) and exports a Great
Expectations suite as plain JSON (``to_expectation_suite``) to be saved with the model.

``contract.check(frame)`` sorts what it finds into two groups:

* **errors** (``ContractViolation``): a column is missing; a numeric column holds values that
  are not numbers (or booleans, dates, infinite values); a categorical column holds a different
  family of values than in training (numbers where training had text, ...). The model could not
  score such data, or would score it as garbage, so scoring stops.
* **warnings** (drift, with counts and examples): categories not seen in training, numbers
  outside the training range, missing values in a column that had none in training, and a
  missing rate above the training rate plus ``missing_rate_tolerance``. Such records are still
  scored, with the model's documented semantics: an unseen category, or a missing value in a
  feature without a missing bin, satisfies only the rules that do not test that feature; a
  number beyond the training range falls in the open first / last interval.

Dtypes are checked by our own code (``libre_lib.inputs.is_categorical_dtype`` and friends), not
with Great Expectations' type expectations, which do not match pandas 3's ``str`` and
``category`` dtypes. Every check is vectorized; nothing loops over rows. Reports merge
(``a.merge(b)``), so a stream of batches adds up to one report.
"""

from __future__ import annotations

import json
import math
import os
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace

import numpy as np
import pandas as pd

from ..discretization import CATEGORICAL, NUMERIC
from ..errors import LibreError, ParameterError, counted
from ..inputs import (
    category_values,
    narrow_decimals,
    narrow_float,
    numeric_values,
    resolve_categorical,
    same_number,
)
from .files import atomic_write_text

__all__ = [
    "ColumnContract",
    "ColumnObservation",
    "ContractIssue",
    "ContractReport",
    "ContractViolation",
    "DataContract",
    "plain_value",
]

CONTRACT_FORMAT = "libre-flows/data-contract"
CONTRACT_FORMAT_VERSION = 1
DEFAULT_MISSING_RATE_TOLERANCE = 0.1
MAX_EXAMPLES = 5

KINDS = (NUMERIC, CATEGORICAL)
FAMILIES = ("number", "string", "bool", "mixed")
ERROR, WARNING = "error", "warning"

# problems (ContractIssue.problem)
MISSING_COLUMN = "missing_column"
WRONG_TYPE = "wrong_type"
INFINITE = "infinite_values"
UNSEEN_CATEGORY = "unseen_category"
OUT_OF_RANGE = "out_of_range"
MISSING_RATE = "missing_rate"
NEW_MISSING = "missing_not_in_training"
EMPTY_COLUMN = "empty_column"
UNSEEN_COLUMN = "no_category_seen"
#: A column the rules test that is missing in every one of at least this many rows (and in
#: less than half of the training rows) is an error, not drift: most likely an upstream
#: failure, and every row would be scored by the column's missing bin.
EMPTY_MIN_ROWS = 20


class ContractViolation(LibreError):
    """Scoring data breaks the model's data contract (missing columns, wrong types).

    The message names every column and problem, one per line; ``report`` holds the
    ``ContractReport`` (``None`` when the problem was found while reading a file).
    """

    report = None


# --------------------------------------------------------------------------- small helpers


def plain_value(value):
    """A JSON-friendly Python scalar: numpy scalars become Python ones, NaN and NA become None,
    other objects their ``str``."""
    if isinstance(value, np.generic):
        value = value.item()
    if value is None or isinstance(value, bool | int | str):
        return value
    if isinstance(value, float):
        return None if math.isnan(value) else value
    if value is pd.NA or value is pd.NaT:
        return None
    return str(value)


def _examples(values: Iterable, limit: int = MAX_EXAMPLES) -> tuple:
    out: list = []
    for value in values:
        value = plain_value(value)
        if value not in out:
            out.append(value)
            if len(out) == limit:
                break
    return tuple(out)


def _fmt(value) -> str:
    """A value for a message: whole floats as integers, short ones as written (1.0000001),
    long ones to 6 significant digits (the training range read [-2.7066, 2.69122], not
    [-2.7065975442971535, 2.6912150260939796])."""
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        return str(int(value))
    if isinstance(value, float | np.floating):
        text = repr(float(value))
        return text if len(text) <= MAX_SHORT_NUMBER else f"{float(value):.6g}"
    return repr(value) if isinstance(value, str) else str(value)


def _fmt_apart(value, other) -> tuple[str, str]:
    """:func:`_fmt` of two different numbers, with the digits that tell them apart (a float32
    training minimum and a float64 value below it both read -7.0421)."""
    first, second = _fmt(value), _fmt(other)
    if first != second or value == other or not all(isinstance(v, float) for v in (value, other)):
        return first, second
    for digits in range(7, 18):
        first, second = f"{value:.{digits}g}", f"{other:.{digits}g}"
        if first != second:
            break
    return first, second


#: A number of at most this many characters is written in full in a message.
MAX_SHORT_NUMBER = 12


def _percent(count: int, total: int) -> str:
    return f"{100.0 * count / total:.3g}%" if total else "n/a"


def _value_family(values: Iterable) -> str:
    """The family of training category values: number, string, bool or mixed."""
    families = set()
    for value in values:
        if isinstance(value, bool | np.bool_):
            families.add("bool")
        elif isinstance(value, int | float | np.integer | np.floating):
            families.add("number")
        elif isinstance(value, str):
            families.add("string")
        else:
            families.add("mixed")
    return families.pop() if len(families) == 1 else "mixed"


_INFERRED_FAMILY = {
    "string": "string",
    "integer": "number",
    "floating": "number",
    "mixed-integer-float": "number",
    "decimal": "number",
    "integer-na": "number",
    "boolean": "bool",
    "empty": None,
}


def input_family(series: pd.Series) -> str | None:
    """The family of a column's values (``None``: no values to judge, e.g. all missing)."""
    dtype = series.dtype
    if isinstance(dtype, pd.CategoricalDtype):
        series = pd.Series(dtype.categories)
        dtype = series.dtype
        if not len(series):
            return None
    if pd.api.types.is_bool_dtype(dtype):
        return "bool"
    if pd.api.types.is_datetime64_any_dtype(dtype) or pd.api.types.is_timedelta64_dtype(dtype):
        return "datetime"
    if pd.api.types.is_numeric_dtype(dtype):
        return "number"
    if isinstance(dtype, pd.StringDtype):
        return "string"
    inferred = pd.api.types.infer_dtype(series, skipna=True)
    return _INFERRED_FAMILY.get(inferred, "datetime" if "date" in inferred else "mixed")


def _domain_index(domain: tuple) -> pd.Index:
    return pd.Index(list(domain), dtype=object)


def _check_markers(name: str, markers) -> None:
    """Refuse one text where texts are wanted: ``"NaN"`` was read as the markers N, a, N."""
    if isinstance(markers, str | bytes):
        raise ParameterError(
            f"{name} takes a list of texts; got the text {markers!r} (write [{markers!r}])."
        )


def _check_fraction(value, what: str) -> float:
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float | np.integer | np.floating)
        or not 0.0 <= float(value) <= 1.0
    ):
        raise ParameterError(f"{what} must be a number between 0 and 1; got {value!r}.")
    return float(value)


# --------------------------------------------------------------------------- the contract


@dataclass(frozen=True)
class ColumnContract:
    """What one input column must hold.

    ``family`` is ``"number"`` for numeric columns; for categorical ones it is the family of
    the training categories (``"string"``, ``"number"``, ``"bool"`` or ``"mixed"``, which
    accepts anything). ``domain`` (categorical) and ``min`` / ``max`` (numeric) are ``None``
    when unknown, and so is ``missing_rate``; unknown references raise no drift warning.
    ``dtype`` is the training pandas dtype, for information only.
    """

    name: str
    kind: str
    family: str
    dtype: str | None = None
    domain: tuple | None = None
    min: float | None = None
    max: float | None = None
    missing_rate: float | None = None
    has_missing_bin: bool = False
    in_rules: bool = False
    values_in_rules: bool | None = None
    """Whether a rule tests the column's values, not only whether it is missing (``x is
    missing``): values out of range or unseen cannot change a prediction otherwise. None: as
    ``in_rules`` (contracts written before it was recorded)."""

    @property
    def values_tested(self) -> bool:
        return self.in_rules if self.values_in_rules is None else self.values_in_rules

    def __post_init__(self):
        if self.kind not in KINDS:
            raise ParameterError(f"column {self.name!r}: kind must be one of {KINDS}.")
        if self.family not in FAMILIES:
            raise ParameterError(f"column {self.name!r}: family must be one of {FAMILIES}.")
        if self.domain is not None:
            object.__setattr__(self, "domain", tuple(self.domain))

    def to_dict(self) -> dict:
        return {
            "name": self.name,
            "kind": self.kind,
            "family": self.family,
            "dtype": self.dtype,
            "domain": None if self.domain is None else [plain_value(v) for v in self.domain],
            "min": self.min,
            "max": self.max,
            "missing_rate": self.missing_rate,
            "has_missing_bin": self.has_missing_bin,
            "in_rules": self.in_rules,
            # written only where it differs from in_rules (so other contracts read as before)
            **(
                {"values_in_rules": self.values_tested}
                if self.values_tested != self.in_rules
                else {}
            ),
        }

    @classmethod
    def from_dict(cls, data: Mapping) -> ColumnContract:
        domain = data.get("domain")
        return cls(
            name=str(data["name"]),
            kind=data["kind"],
            family=data["family"],
            dtype=data.get("dtype"),
            domain=None if domain is None else tuple(domain),
            min=None if data.get("min") is None else float(data["min"]),
            max=None if data.get("max") is None else float(data["max"]),
            missing_rate=None if data.get("missing_rate") is None else float(data["missing_rate"]),
            has_missing_bin=bool(data.get("has_missing_bin", False)),
            in_rules=bool(data.get("in_rules", False)),
            values_in_rules=(
                None if data.get("values_in_rules") is None else bool(data["values_in_rules"])
            ),
        )


@dataclass(frozen=True)
class DataContract:
    """The input contract of a fitted model; see the module docstring."""

    columns: tuple[ColumnContract, ...]
    missing_rate_tolerance: float = DEFAULT_MISSING_RATE_TOLERANCE
    n_training_rows: int | None = None
    missing_markers: tuple[str, ...] = ()
    """Texts that stood for a missing value in the training files besides the usual ones
    (a pipeline's ``data.read_options.na_values``): scoring reads CSV inputs alike."""
    column_markers: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    """Values that stood for a missing value in one column only (a dict
    ``data.read_options.na_values``): scoring reads them as missing in that column, from CSV
    and Parquet inputs alike."""
    thousands: str | None = None
    """The mark between thousands of the training files (``data.read_options.thousands``):
    scoring reads a CSV input written with another separator and no decimal comma alike, as
    its own first rows may not show the mark (12.475 beside 800)."""

    def __post_init__(self):
        _check_markers("missing_markers", self.missing_markers)
        for column, markers in dict(self.column_markers).items():
            _check_markers(f"column_markers[{column!r}]", markers)
        object.__setattr__(self, "columns", tuple(self.columns))
        object.__setattr__(self, "missing_markers", tuple(str(m) for m in self.missing_markers))
        object.__setattr__(
            self,
            "column_markers",
            {str(c): tuple(str(m) for m in ms) for c, ms in dict(self.column_markers).items()},
        )
        names = [c.name for c in self.columns]
        if len(set(names)) != len(names):
            raise ParameterError(f"A data contract names a column twice: {names}.")
        object.__setattr__(
            self,
            "missing_rate_tolerance",
            _check_fraction(self.missing_rate_tolerance, "missing_rate_tolerance"),
        )

    @property
    def names(self) -> list[str]:
        return [c.name for c in self.columns]

    def missing_values(self) -> dict[str, list[str]]:
        """Per column, the values scoring reads as missing besides empty cells (the column's
        markers, then those of every column): what ``LibreClassifier.to_sql`` reads as NULL
        so that the SQL answers as ``libre score`` does."""
        out = {}
        for name in self.names:
            markers = [*self.column_markers.get(name, ()), *self.missing_markers]
            if markers:
                out[name] = list(dict.fromkeys(markers))
        return out

    def __getitem__(self, name: str) -> ColumnContract:
        for column in self.columns:
            if column.name == name:
                return column
        raise KeyError(name)

    # -- building ------------------------------------------------------------------------------

    @classmethod
    def from_model(
        cls,
        model,
        X: pd.DataFrame | None = None,
        *,
        missing_rate_tolerance: float = DEFAULT_MISSING_RATE_TOLERANCE,
        missing_markers: Sequence[str] = (),
        column_markers: Mapping[str, Sequence[str]] | None = None,
        thousands: str | None = None,
    ) -> DataContract:
        """The contract of ``model``, with training ranges and missing rates from ``X`` (its
        training frame). Without ``X`` only the model's own knowledge is used: categories and
        missing bins, no numeric ranges, and missing rates known only where the model has no
        missing bin (0); columns the model dropped then accept any values.
        ``missing_markers``: texts the training files used for missing values besides the
        usual ones (scoring reads CSV inputs with them); ``column_markers``: those of one
        column only; ``thousands``: the training files' mark between thousands."""
        from sklearn.utils.validation import check_is_fitted

        check_is_fitted(model, "rules_")
        _check_markers("missing_markers", missing_markers)  # before it is read as a sequence
        for column, markers in dict(column_markers or {}).items():
            _check_markers(f"column_markers[{column!r}]", markers)
        bins = {f.name: f for f in model.discretization_.features}
        tested = {c.feature for rule in model.rules_ for c in rule}
        frame = None
        if X is not None:
            if not isinstance(X, pd.DataFrame):
                raise ParameterError(
                    f"X must be the model's training DataFrame; got {type(X).__name__}."
                )
            frame = X.set_axis([str(c) for c in X.columns], axis=1)
            absent = [c for c in model.columns_ if c not in frame.columns]
            if absent:
                raise ParameterError(
                    f"X lacks the model's column(s) {absent}: pass the frame the model was "
                    "trained on."
                )
            frame = frame[list(model.columns_)]
        forced = None
        if frame is not None:  # no warnings: fitting the model on this frame gave them
            forced = dict(
                zip(
                    frame.columns,
                    resolve_categorical(
                        frame, getattr(model, "categorical_features", None), warn=False
                    ),
                    strict=True,
                )
            )
        columns = []
        for name in model.columns_:
            feature = bins.get(name)
            series = None if frame is None else frame[name]
            if feature is not None:
                kind = feature.kind
            elif forced is not None:
                kind = CATEGORICAL if forced[name] else NUMERIC
            else:
                columns.append(ColumnContract(name, CATEGORICAL, "mixed"))  # dropped, unknown
                continue
            columns.append(_column_contract(name, kind, feature, series, name in tested))
        n_rows = None if frame is None else len(frame)
        return cls(
            tuple(columns),
            missing_rate_tolerance,
            n_rows,
            tuple(missing_markers),
            {c: tuple(m) for c, m in (column_markers or {}).items() if c in model.columns_},
            thousands,
        ).with_values_tested(model.rules_)

    def with_values_tested(self, rules) -> DataContract:
        """The contract with :attr:`ColumnContract.values_in_rules` False where ``rules`` test
        a column only for a missing value and the contract did not record it (built from the
        model, or written before it was recorded)."""
        valued = {c.feature for rule in rules for c in rule if _tests_values(c)}
        missing_only = {
            c.name
            for c in self.columns
            if c.in_rules and c.values_in_rules is None and c.name not in valued
        }
        if not missing_only:
            return self
        columns = tuple(
            replace(c, values_in_rules=False) if c.name in missing_only else c for c in self.columns
        )
        return replace(self, columns=columns)

    def with_training_statistics(
        self,
        n_rows: int,
        missing: Mapping[str, int],
        ranges: Mapping[str, Sequence[float]],
        unknown_domains: Sequence[str] = (),
    ) -> DataContract:
        """The contract with the training statistics of every row, where it was built from a
        sample of them (a streamed run): the row count, each column's missing rate
        (``missing``: missing rows per column) and each numeric column's range (``ranges``:
        [min, max]); the categories of the columns in ``unknown_domains`` (those the model
        dropped, whose categories only the sample gave) become unknown, so they raise no drift
        warning."""
        columns = []
        for column in self.columns:
            changes: dict = {}
            if column.name in missing and n_rows:
                changes["missing_rate"] = float(missing[column.name]) / n_rows
            if column.kind == NUMERIC and column.name in ranges:
                changes["min"], changes["max"] = (float(v) for v in ranges[column.name])
            if column.kind == CATEGORICAL and column.name in unknown_domains:
                changes["domain"] = None
            columns.append(replace(column, **changes))
        return replace(self, columns=tuple(columns), n_training_rows=int(n_rows))

    # -- persistence ---------------------------------------------------------------------------

    def to_dict(self) -> dict:
        return {
            "format": CONTRACT_FORMAT,
            "format_version": CONTRACT_FORMAT_VERSION,
            "missing_rate_tolerance": self.missing_rate_tolerance,
            "n_training_rows": self.n_training_rows,
            "missing_markers": list(self.missing_markers),
            "column_missing_markers": {c: list(m) for c, m in self.column_markers.items()},
            **({"thousands": self.thousands} if self.thousands else {}),  # absent: as before
            "columns": [c.to_dict() for c in self.columns],
        }

    @classmethod
    def from_dict(cls, data: Mapping) -> DataContract:
        if not isinstance(data, Mapping) or data.get("format") != CONTRACT_FORMAT:
            raise ParameterError("Not a libre-flows data contract: 'format' is missing or wrong.")
        if data.get("format_version") != CONTRACT_FORMAT_VERSION:
            raise ParameterError(
                f"Data contract format version {data.get('format_version')!r} is not supported "
                f"(this release reads version {CONTRACT_FORMAT_VERSION})."
            )
        try:
            n_rows = data.get("n_training_rows")
            return cls(
                columns=tuple(ColumnContract.from_dict(c) for c in data["columns"]),
                missing_rate_tolerance=data.get(
                    "missing_rate_tolerance", DEFAULT_MISSING_RATE_TOLERANCE
                ),
                n_training_rows=None if n_rows is None else int(n_rows),
                missing_markers=tuple(data.get("missing_markers", ())),
                column_markers=dict(data.get("column_missing_markers", {})),
                thousands=data.get("thousands"),
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise ParameterError(f"Malformed data contract: missing or bad field {exc}.") from None

    def to_json(self, indent: int | None = 2) -> str:
        return json.dumps(self.to_dict(), indent=indent, ensure_ascii=False)

    @classmethod
    def from_json(cls, text: str) -> DataContract:
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ParameterError(f"The data contract is not valid JSON: {exc}.") from None
        return cls.from_dict(data)

    def save(self, path: str | os.PathLike) -> None:
        """Write the contract as JSON, atomically."""
        atomic_write_text(path, self.to_json())

    @classmethod
    def load(cls, path: str | os.PathLike) -> DataContract:
        with open(path, encoding="utf-8") as handle:
            return cls.from_json(handle.read())

    def with_tolerance(self, missing_rate_tolerance: float) -> DataContract:
        return replace(self, missing_rate_tolerance=missing_rate_tolerance)

    # -- Great Expectations --------------------------------------------------------------------

    def to_expectation_suite(self, name: str = "libre-data-contract") -> dict:
        """The contract as a Great Expectations 1.x suite in plain JSON (``name``,
        ``expectations``: ``type`` / ``kwargs`` / ``meta`` / ``severity``, ``meta``).

        Column presence is ``critical``; drift (value sets, ranges, missing rates) is
        ``warning``. Dtypes are in each ``expect_column_to_exist``'s ``meta`` rather than in
        GX type expectations, which do not match pandas 3's ``str`` / ``category`` dtypes;
        ``check`` enforces them. Load with ``great_expectations.ExpectationSuite(**suite)``.
        """
        expectations = []

        def add(type_, severity, column, meta=None, **kwargs):
            expectations.append(
                {
                    "type": type_,
                    "kwargs": {"column": column, **kwargs},
                    "meta": {"libre_contract": True, **(meta or {})},
                    "severity": severity,
                }
            )

        for c in self.columns:
            add(
                "expect_column_to_exist",
                "critical",
                c.name,
                {"kind": c.kind, "family": c.family, "training_dtype": c.dtype},
            )
        for c in self.columns:
            if c.kind == NUMERIC and (c.min is not None or c.max is not None):
                add(
                    "expect_column_values_to_be_between",
                    "warning",
                    c.name,
                    {"drift": OUT_OF_RANGE, "in_rules": c.in_rules},
                    min_value=c.min,
                    max_value=c.max,
                )
            if c.kind == CATEGORICAL and c.domain is not None:
                add(
                    "expect_column_values_to_be_in_set",
                    "warning",
                    c.name,
                    {"drift": UNSEEN_CATEGORY, "in_rules": c.in_rules},
                    value_set=[plain_value(v) for v in c.domain],
                )
            if c.missing_rate is not None:
                bound = c.missing_rate + self.missing_rate_tolerance
                if bound < 1.0:
                    add(
                        "expect_column_values_to_not_be_null",
                        "warning",
                        c.name,
                        {"drift": MISSING_RATE, "training_missing_rate": c.missing_rate},
                        mostly=round(1.0 - bound, 9),
                    )
        return {
            "name": name,
            "expectations": expectations,
            "meta": {
                "libre_contract": {
                    "format": CONTRACT_FORMAT,
                    "format_version": CONTRACT_FORMAT_VERSION,
                    "missing_rate_tolerance": self.missing_rate_tolerance,
                }
            },
        }

    # -- checking ------------------------------------------------------------------------------

    def missing_columns(
        self, columns: Iterable, where: str = "the input", target: str | None = None
    ) -> list[ContractIssue]:
        """Errors for the contract's columns that are not in ``columns`` (names); ``where``
        names the data in the messages. A column whose name the input writes with other case
        or spaces is named; otherwise, when the input has as many unknown columns as it
        lacks (at most 3), they are offered as renamed (never the model's ``target``: a
        labelled batch has it)."""
        present = [str(c) for c in columns]
        loose = {_loose_name(name): name for name in present}
        lost = [c for c in self.columns if c.name not in present]
        alike = {c.name: loose.get(_loose_name(c.name)) for c in lost}
        unmatched = [c for c in lost if alike[c.name] is None]
        extra = [
            n for n in present if n not in self.names and n not in alike.values() and n != target
        ]
        renamed = extra if unmatched and len(extra) == len(unmatched) <= 3 else []
        return [_missing_issue(c.name, c.in_rules, where, alike[c.name], renamed) for c in lost]

    def empty_columns(self, report: ContractReport) -> list[ContractIssue]:
        """The errors of the columns the rules test that are empty in every row ``report``
        observed (the rows of a whole file, its batches merged)."""
        return [
            issue
            for column in self.columns
            if (observation := report.observations.get(column.name)) is not None
            for issue in _empty_tested(column, observation)
        ]

    def check(
        self,
        frame: pd.DataFrame,
        *,
        raise_errors: bool = True,
        empty_columns: bool = True,
        target: str | None = None,
    ) -> ContractReport:
        """Check ``frame`` (extra columns are ignored). Raises ``ContractViolation`` listing
        every error unless ``raise_errors`` is false; drift is in the report's ``warnings``.
        ``empty_columns``: a column the rules test that is empty in every row is an error
        (off for the batches of a file, which :meth:`empty_columns` checks whole: a batch's
        size must not decide it). ``target``: the model's target column, never offered as a
        missing column renamed."""
        if not isinstance(frame, pd.DataFrame):
            raise ParameterError(f"check needs a pandas DataFrame; got {type(frame).__name__}.")
        if list(frame.columns) != [str(c) for c in frame.columns]:
            frame = frame.set_axis([str(c) for c in frame.columns], axis=1)
        n_rows = len(frame)
        errors = self.missing_columns(frame.columns, target=target)
        observations = {}
        for column in self.columns:
            if column.name not in frame.columns:
                continue
            series = frame[column.name]
            if isinstance(series, pd.DataFrame):
                errors.append(
                    ContractIssue(
                        column.name,
                        WRONG_TYPE,
                        ERROR,
                        None,
                        (),
                        f"column {column.name!r}: appears more than once",
                    )
                )
                continue
            if column.kind == NUMERIC:
                observation, issues = _observe_numeric(column, series)
            else:
                observation, issues = _observe_categorical(column, series)
            errors += issues
            if observation is not None:
                observations[column.name] = observation
                errors += _empty_tested(column, observation) if empty_columns else []
        report = ContractReport(n_rows, tuple(errors), observations, self.missing_rate_tolerance)
        if raise_errors:
            report.raise_for_errors()
        return report


def _empty_tested(column: ColumnContract, observation: ColumnObservation) -> list:
    """An error when a column the rules test is missing in every row (:data:`EMPTY_MIN_ROWS`
    or more) though the training rows mostly held it (known from the contract saved with the
    model; a contract built from the model alone does not know it), or when none of its
    values (as many) is a category seen in training."""
    n_rows, trained = observation.n_rows, column.missing_rate
    present = n_rows - observation.n_missing
    if column.values_tested and present >= EMPTY_MIN_ROWS and observation.n_unseen == present:
        shown = ", ".join(repr(v) for v in observation.unseen_examples[:5])
        pairs = [
            (w[0], v)
            for v in observation.unseen_examples
            if (w := same_number(v, column.domain or ()))
        ]
        how = (
            f"the column writes {pairs[0][0]!r} as {pairs[0][1]!r} (a number written another way), "
            if pairs
            else "most likely re-coded upstream (codes for names, booleans for t/f), "
        )
        return [
            ContractIssue(
                column.name,
                UNSEEN_COLUMN,
                ERROR,
                present,
                tuple(observation.unseen_examples),
                f"column {column.name!r}: none of its {present:,} values is a category seen in "
                f"training (e.g. {shown}), and rules test it: {how}and no rule on it could "
                "match. Write the column as in training, or retrain the model on data like "
                "these rows.",
            )
        ]
    if not column.in_rules or n_rows < EMPTY_MIN_ROWS or observation.n_missing < n_rows:
        return []
    if trained is None or trained >= 0.5:  # unknown (a contract without training rows)
        return []
    return [
        ContractIssue(
            column.name,
            EMPTY_COLUMN,
            ERROR,
            n_rows,
            (),
            f"column {column.name!r}: missing in every one of the {n_rows:,} rows "
            f"({100.0 * trained:.3g}% in training), and rules test it: most likely an upstream "
            "failure, and every row would be scored as if the value were unknown. Fill the "
            "column, or retrain the model on data like these rows.",
        )
    ]


def _column_contract(name, kind, feature, series, in_rules) -> ColumnContract:
    has_bin = bool(feature is not None and feature.has_missing)
    dtype = None if series is None else str(series.dtype)
    if kind == NUMERIC:
        low = high = None
        rate = None if has_bin else (0.0 if feature is not None else None)
        if series is not None:
            values = numeric_values(series)
            present = values[~np.isnan(values)]
            if present.size:
                low, high = float(present.min()), float(present.max())
            rate = float(np.isnan(values).mean()) if values.size else 0.0
        return ColumnContract(
            name, NUMERIC, "number", dtype, None, low, high, rate, has_bin, in_rules
        )
    if feature is not None:
        domain = tuple(feature.categories)
    elif series is not None:
        values, missing = category_values(series)
        domain = tuple(_sorted(pd.unique(values[~missing])))
    else:
        domain = None
    rate = None if has_bin else (0.0 if feature is not None else None)
    if series is not None:
        rate = float(series.isna().mean()) if len(series) else 0.0
    family = _value_family(domain) if domain else "mixed"
    domain = None if domain is None else tuple(plain_value(v) for v in domain)
    return ColumnContract(
        name, CATEGORICAL, family, dtype, domain, None, None, rate, has_bin, in_rules
    )


def can_change_predictions(report: ContractReport, issue: ContractIssue) -> bool:
    """Whether a drift warning of ``report`` can change a prediction: it is in a column the
    rules test, and an unseen or out-of-range value only where they test its values (not
    only whether it is missing)."""
    observation = report.observations.get(issue.column)
    if observation is None:
        return True
    if issue.problem in (OUT_OF_RANGE, UNSEEN_CATEGORY):
        return observation.drift_matters
    return bool(observation.in_rules)


def _tests_values(condition) -> bool:
    """Whether a condition reads the column's values (an interval short of the whole line, or
    categories), not only whether it is missing."""
    if condition.kind == NUMERIC:
        whole = any(i.low == -np.inf and i.high == np.inf for i in condition.intervals)
        return bool(condition.intervals) and not whole
    return bool(condition.categories)


def _sorted(values) -> list:
    values = [plain_value(v) for v in values]
    try:
        return sorted(values)
    except TypeError:
        return sorted(values, key=lambda v: (type(v).__name__, str(v)))


def _loose_name(name: str) -> str:
    """A column name as a person reads it: spaces, case and Unicode form aside."""
    return unicodedata.normalize("NFKC", " ".join(name.split())).casefold()


def _missing_issue(
    name: str, in_rules: bool, where: str, alike: str | None = None, renamed: list | None = None
) -> ContractIssue:
    """``alike``: a column of ``where`` whose name differs only in case or spaces;
    ``renamed``: its unknown columns, as many as it lacks (renamed?)."""
    if alike is not None and unicodedata.normalize("NFC", alike) == unicodedata.normalize(
        "NFC", name
    ):  # the two print alike
        unused = (
            f" (it has {alike!r}, the same name in other Unicode code points (composed and "
            "decomposed accents, NFC against NFD): names must match exactly; rename that column "
            "with the training data's form, e.g. unicodedata.normalize('NFC', name))"
        )
    elif alike is not None:
        unused = f" (it has {alike!r}: names must match exactly; rename that column)"
    elif not in_rules:
        unused = (
            " (no rule tests it: the model still takes every column it was trained on; "
            "add it as an empty column to score these rows)"
        )
    else:
        unused = ""
    if renamed and alike is None:
        shown = ", ".join(map(repr, renamed))
        unused += f"; {where} has {shown}, which the model does not read: renamed?"
    return ContractIssue(
        name, MISSING_COLUMN, ERROR, None, (), f"column {name!r}: missing from {where}{unused}"
    )


def _type_issue(name: str, detail: str, count=None, examples=()) -> ContractIssue:
    return ContractIssue(
        name, WRONG_TYPE, ERROR, count, tuple(examples), f"column {name!r}: {detail}"
    )


def _observe_numeric(column: ColumnContract, series: pd.Series):
    name, dtype = column.name, series.dtype
    if pd.api.types.is_bool_dtype(dtype):
        return None, [_type_issue(name, f"expected numbers, found booleans (dtype {dtype})")]
    if pd.api.types.is_complex_dtype(dtype):
        return None, [_type_issue(name, f"expected real numbers, found dtype {dtype}")]
    if pd.api.types.is_datetime64_any_dtype(dtype) or pd.api.types.is_timedelta64_dtype(dtype):
        return None, [_type_issue(name, f"expected numbers, found dates/times (dtype {dtype})")]
    if narrow_float(dtype) is not None:  # as training read them: 2.42, not 2.4200000763
        values = narrow_decimals(series)
    elif pd.api.types.is_numeric_dtype(dtype) and not isinstance(dtype, pd.CategoricalDtype):
        values = series.to_numpy(dtype=np.float64, na_value=np.nan)
    else:
        plain = series.astype(object) if isinstance(dtype, pd.CategoricalDtype) else series
        family = input_family(series)
        if family in ("bool", "datetime"):
            return None, [_type_issue(name, f"expected numbers, found {family} values")]
        try:
            parsed = pd.to_numeric(plain, errors="coerce")
        except (TypeError, ValueError):
            parsed = pd.to_numeric(plain.astype(str).where(plain.notna()), errors="coerce")
        bad = (parsed.isna() & series.notna()).to_numpy()
        if bad.any():
            count = int(bad.sum())
            examples = _examples(pd.unique(series.to_numpy(dtype=object)[bad]))
            return None, [
                _type_issue(
                    name,
                    f"expected numbers, found dtype {dtype} with {counted(count, 'value')} that "
                    f"are not numbers, e.g. {list(examples)!r}",
                    count,
                    examples,
                )
            ]
        values = parsed.to_numpy(dtype=np.float64, na_value=np.nan)
    infinite = np.isinf(values)
    if infinite.any() and column.in_rules:  # no rule tests the others: out of range, as drift
        count = int(infinite.sum())
        return None, [
            ContractIssue(
                name,
                INFINITE,
                ERROR,
                count,
                _examples(values[infinite]),
                f"column {name!r}: {counted(count, 'infinite value')}, which the rules that "
                "test it cannot place: replace them with finite numbers, or with NaN where "
                "they stand for a missing value",
            )
        ]
    missing = np.isnan(values)
    observation = ColumnObservation.reference(column, len(values), int(missing.sum()))
    present = values[~missing]
    if present.size:
        low, high = float(present.min()), float(present.max())
        below = int((present < column.min).sum()) if column.min is not None else 0
        above = int((present > column.max).sum()) if column.max is not None else 0
        observation = replace(
            observation, observed_min=low, observed_max=high, n_below=below, n_above=above
        )
    return observation, []


_FAMILY_WORDS = {"number": "numbers", "string": "text", "bool": "booleans", "datetime": "dates"}


def _observe_categorical(column: ColumnContract, series: pd.Series):
    name = column.name
    family = input_family(series)
    if (
        family is not None
        and column.family != "mixed"
        and family != "mixed"
        and family != column.family
    ):
        detail = (
            f"expected {_FAMILY_WORDS[column.family]} (categories like "
            f"{list(column.domain or ())[:3]!r}), found {_FAMILY_WORDS.get(family, family)} "
            f"(dtype {series.dtype})"
        )
        if column.family == "string" and family == "number":
            detail += "; read the column as text"
        return None, [_type_issue(name, detail)]
    # One hash pass over the rows; the domain lookup then runs on the distinct values only.
    codes, uniques = pd.factorize(series, use_na_sentinel=True)
    observation = ColumnObservation.reference(column, len(series), int((codes < 0).sum()))
    if column.domain is not None and len(uniques):
        distinct = pd.Index(np.asarray(uniques, dtype=object), dtype=object)
        unseen = _domain_index(column.domain).get_indexer(distinct) < 0
        if unseen.any():
            counts = np.bincount(codes[codes >= 0], minlength=len(distinct))
            observation = replace(
                observation,
                n_unseen=int(counts[unseen].sum()),
                unseen_examples=_examples(distinct[unseen]),
            )
    return observation, []


# --------------------------------------------------------------------------- the report


@dataclass(frozen=True)
class ContractIssue:
    """One problem: ``severity`` is ``"error"`` or ``"warning"``; ``message`` names the column."""

    column: str | None
    problem: str
    severity: str
    count: int | None
    examples: tuple
    message: str

    def to_dict(self) -> dict:
        return {**asdict(self), "examples": list(self.examples)}

    @classmethod
    def from_dict(cls, data: Mapping) -> ContractIssue:
        return cls(
            column=data.get("column"),
            problem=str(data["problem"]),
            severity=str(data["severity"]),
            count=None if data.get("count") is None else int(data["count"]),
            examples=tuple(data.get("examples", ())),
            message=str(data["message"]),
        )


@dataclass(frozen=True)
class ColumnObservation:
    """What one column looked like in the checked rows, with the training reference values
    the drift warnings compare against (so a report stands on its own)."""

    column: str
    kind: str
    in_rules: bool
    has_missing_bin: bool
    training_min: float | None
    training_max: float | None
    training_missing_rate: float | None
    n_rows: int = 0
    n_missing: int = 0
    n_unseen: int = 0
    unseen_examples: tuple = ()
    n_below: int = 0
    n_above: int = 0
    observed_min: float | None = None
    observed_max: float | None = None
    values_in_rules: bool = True
    """Whether a rule tests the values, not only whether they are missing
    (:attr:`ColumnContract.values_in_rules`)."""

    @classmethod
    def reference(cls, column: ColumnContract, n_rows: int, n_missing: int) -> ColumnObservation:
        return cls(
            column.name,
            column.kind,
            column.in_rules,
            column.has_missing_bin,
            column.min,
            column.max,
            column.missing_rate,
            n_rows,
            n_missing,
            values_in_rules=column.values_tested,
        )

    @property
    def drift_matters(self) -> bool:
        """Can its values' drift (unseen categories, values out of range) change a prediction?"""
        return self.in_rules and self.values_in_rules

    def merge(self, other: ColumnObservation) -> ColumnObservation:
        def bound(pick, a, b):
            return b if a is None else a if b is None else pick(a, b)

        return replace(
            self,
            n_rows=self.n_rows + other.n_rows,
            n_missing=self.n_missing + other.n_missing,
            n_unseen=self.n_unseen + other.n_unseen,
            unseen_examples=_examples((*self.unseen_examples, *other.unseen_examples)),
            n_below=self.n_below + other.n_below,
            n_above=self.n_above + other.n_above,
            observed_min=bound(min, self.observed_min, other.observed_min),
            observed_max=bound(max, self.observed_max, other.observed_max),
        )

    @property
    def missing_rate(self) -> float:
        return self.n_missing / self.n_rows if self.n_rows else 0.0

    def warnings(self, tolerance: float) -> list[ContractIssue]:
        name = self.column
        missing_only = (
            f"rules test {name!r} only for a missing value, so predictions are unaffected"
        )
        effect = (
            f"rules that test {name!r} do not fire on them"
            if self.drift_matters
            else missing_only
            if self.in_rules
            else f"no rule tests {name!r}, so predictions are unaffected"
        )
        out = []
        if self.n_unseen:
            out.append(
                ContractIssue(
                    name,
                    UNSEEN_CATEGORY,
                    WARNING,
                    self.n_unseen,
                    self.unseen_examples,
                    f"column {name!r}: {counted(self.n_unseen, 'value')} "
                    f"({_percent(self.n_unseen, self.n_rows)}) "
                    f"{'is a category' if self.n_unseen == 1 else 'are categories'} not seen in "
                    f"training, e.g. {list(self.unseen_examples)!r}; {effect}",
                )
            )
        n_out = self.n_below + self.n_above
        if n_out:
            low, observed_low = _fmt_apart(self.training_min, self.observed_min)
            high, observed_high = _fmt_apart(self.training_max, self.observed_max)
            examples = tuple(
                v
                for v, n in ((self.observed_min, self.n_below), (self.observed_max, self.n_above))
                if n
            )
            out.append(
                ContractIssue(
                    name,
                    OUT_OF_RANGE,
                    WARNING,
                    n_out,
                    examples,
                    f"column {name!r}: {counted(n_out, 'value')} "
                    f"({_percent(n_out, self.n_rows)}) outside "
                    f"the training range [{low}, {high}] ({self.n_below:,} below, "
                    f"{self.n_above:,} above; observed {observed_low} to {observed_high}); "
                    + (
                        f"rules that test {name!r} read them as its lowest / highest interval"
                        if self.drift_matters
                        else missing_only
                        if self.in_rules
                        else f"no rule tests {name!r}, so predictions are unaffected"
                    ),
                )
            )
        rate, train = self.missing_rate, self.training_missing_rate
        if train is not None and self.n_missing and rate > train + tolerance:
            out.append(
                ContractIssue(
                    name,
                    MISSING_RATE,
                    WARNING,
                    self.n_missing,
                    (),
                    f"column {name!r}: {_percent(self.n_missing, self.n_rows)} missing "
                    f"({self.n_missing} of {self.n_rows}) against {100.0 * train:.3g}% in "
                    f"training (tolerance +{100.0 * tolerance:.3g} points)"
                    + (
                        f"; {effect}"
                        if not self.has_missing_bin or not self.in_rules
                        else f"; rules that test {name!r} read them as its missing bin"
                    ),
                )
            )
        elif self.n_missing and not self.has_missing_bin and train == 0.0:
            out.append(
                ContractIssue(
                    name,
                    NEW_MISSING,
                    WARNING,
                    self.n_missing,
                    (),
                    f"column {name!r}: {counted(self.n_missing, 'missing value')} "
                    f"({_percent(self.n_missing, self.n_rows)}) but none in training; {effect}",
                )
            )
        return out

    def to_dict(self) -> dict:
        out = {k: getattr(self, k) for k in self.__dataclass_fields__}
        out["unseen_examples"] = list(self.unseen_examples)
        return out

    @classmethod
    def from_dict(cls, data: Mapping) -> ColumnObservation:
        fields_ = {k: data[k] for k in cls.__dataclass_fields__ if k in data}
        fields_["unseen_examples"] = tuple(fields_.get("unseen_examples", ()))
        return cls(**fields_)


@dataclass(frozen=True)
class ContractReport:
    """The outcome of ``DataContract.check`` on some rows; reports of batches ``merge``."""

    n_rows: int
    errors: tuple[ContractIssue, ...] = ()
    observations: Mapping[str, ColumnObservation] = field(default_factory=dict)
    missing_rate_tolerance: float = DEFAULT_MISSING_RATE_TOLERANCE

    @property
    def ok(self) -> bool:
        """No errors (warnings allowed)."""
        return not self.errors

    @property
    def warnings(self) -> tuple[ContractIssue, ...]:
        return tuple(
            issue
            for observation in self.observations.values()
            for issue in observation.warnings(self.missing_rate_tolerance)
        )

    def merge(self, other: ContractReport) -> ContractReport:
        observations = dict(self.observations)
        for name, observation in other.observations.items():
            mine = observations.get(name)
            observations[name] = observation if mine is None else mine.merge(observation)
        return ContractReport(
            self.n_rows + other.n_rows,
            self.errors + other.errors,
            observations,
            self.missing_rate_tolerance,
        )

    def summary(self) -> str:
        """Errors (if any) then warnings, one per line."""
        lines = []
        if self.errors:
            lines.append(
                "Input data breaks the model's data contract "
                f"({counted(len(self.errors), 'problem')} in {counted(self.n_rows, 'row')}):"
            )
            lines += [f"  - {e.message}" for e in self.errors]
        warnings = self.warnings
        if warnings:
            drift = f"{counted(self.n_rows, 'row')} ({counted(len(warnings), 'warning')})"
            lines.append(f"Drift in {drift}:")
            lines += [f"  - {w.message}" for w in warnings]
        if not lines:
            met = counted(self.n_rows, "row")
            lines.append(f"Input data meets the model's data contract ({met}).")
        return "\n".join(lines)

    def raise_for_errors(self, where: str | None = None) -> None:
        """Raise ``ContractViolation`` naming every column and problem when there are errors."""
        if not self.errors:
            return
        head = "Input data breaks the model's data contract"
        if where:
            head += f" in {where}"
        lines = [f"{head} ({counted(len(self.errors), 'problem')}):"]
        lines += [f"  - {e.message}" for e in self.errors]
        error = ContractViolation("\n".join(lines))
        error.report = self
        raise error

    def to_dict(self) -> dict:
        return {
            "n_rows": self.n_rows,
            "ok": self.ok,
            "missing_rate_tolerance": self.missing_rate_tolerance,
            "errors": [e.to_dict() for e in self.errors],
            "warnings": [w.to_dict() for w in self.warnings],
            "observations": {k: v.to_dict() for k, v in self.observations.items()},
        }

    @classmethod
    def from_dict(cls, data: Mapping) -> ContractReport:
        return cls(
            n_rows=int(data["n_rows"]),
            errors=tuple(ContractIssue.from_dict(e) for e in data.get("errors", ())),
            observations={
                k: ColumnObservation.from_dict(v) for k, v in data.get("observations", {}).items()
            },
            missing_rate_tolerance=float(
                data.get("missing_rate_tolerance", DEFAULT_MISSING_RATE_TOLERANCE)
            ),
        )
