"""The declarative pipeline spec: one YAML file describes a training pipeline.

Every section is a typed model that rejects unknown keys, so a typo fails fast with the key
named. Model parameters default to :class:`~libre_lib.LibreClassifier`'s defaults.

.. code-block:: yaml

    name: pima                         # lowercase letters, digits, dashes
    data: {path: ../../libre_lib/datasets/pima.csv}    # relative to this file, or a URL
    target: {column: target, positive_class: "1", classes: ["0", "1"]}
    expectations: {min_rows: 100, max_missing_fraction: 0.2}
    model: {n_estimators: 20, alpha: 0.7, random_state: 0}
"""

from __future__ import annotations

import inspect
import re
import unicodedata
from pathlib import Path
from typing import Any, Literal

import pandas as pd
import yaml
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)
from pydantic_core import PydanticCustomError

from ..errors import SpecError, excerpt, shorten
from ..estimator import LibreClassifier
from ..inputs import spelled_alike
from ..params import MAX_SEED, broken_requirement, broken_rule
from ..search import PAPER_GRID
from .markdown import INVISIBLE
from .sources import DATA_SUFFIXES, is_folder, skipped_entry
from .validation import referenced_columns

Label = str | int | float | bool
_URL = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*://")

#: The largest spec file read (a spec is a few kilobytes; this bounds memory and parse time).
MAX_SPEC_BYTES = 1 << 20
#: The deepest nesting of mappings and lists a spec may have.
MAX_SPEC_DEPTH = 20
#: read_options the pipeline sets itself, or that would make pandas return something else
#: than one DataFrame.
_RESERVED_READ_OPTIONS = {
    "chunksize": "the pipeline reads the whole file into one table",
    "iterator": "the pipeline reads the whole file into one table",
    "dtype": "declare text columns with features.categorical",
    "filepath_or_buffer": "set data.path",
    "path": "set data.path",
}
_CSV_OPTIONS = frozenset(inspect.signature(pd.read_csv).parameters)


#: ``data.streamed: auto`` streams a local file larger than this (bytes).
STREAM_ABOVE_BYTES = 512 * 2**20


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)


class DataSource(_Strict):
    """Where the training data comes from: a CSV or Parquet file, local or an fsspec URL, or a
    local directory of such files (streamed).

    ``streamed``: read the data in batches of ``batch_rows`` rows instead of loading it whole
    (docs/pipeline.md, "Streamed training"); "auto" streams a directory or a local file larger
    than ``STREAM_ABOVE_BYTES``. ``sample_rows``: how many rows (about) a streamed run keeps
    for what needs rows rather than counts: tuning, the report, the data contract.
    """

    path: str
    format: Literal["auto", "csv", "parquet"] = "auto"
    read_options: dict[str, Any] = Field(default_factory=dict)
    streamed: bool | Literal["auto"] = "auto"
    batch_rows: int = Field(default=200_000, ge=100, le=50_000_000)
    sample_rows: int = Field(default=500_000, ge=100, le=50_000_000)

    @field_validator("path")
    @classmethod
    def _path(cls, value: str) -> str:
        if not value.strip():  # "" read the spec's own folder as the data
            raise ValueError("is empty: give the data file (or folder), relative to the spec")
        return _no_nul(value)

    @model_validator(mode="before")
    @classmethod
    def _tabs(cls, data):
        """A ``.tsv`` file is read with tabs between its fields unless ``read_options`` say
        otherwise (it read as one column)."""
        if not isinstance(data, dict) or not isinstance(data.get("path"), str):
            return data
        options = data.get("read_options") or {}
        if (
            data["path"].lower().endswith((".tsv", ".tsv.gz"))
            and data.get("format", "auto") in ("auto", "csv")
            and isinstance(options, dict)
            and not {"sep", "delimiter"} & set(options)
        ):
            return {**data, "read_options": {**options, "sep": "\t"}}
        return data

    @field_validator("read_options")
    @classmethod
    def _read_options(cls, value: dict[str, Any], info: ValidationInfo) -> dict[str, Any]:
        for key in value:
            why = _RESERVED_READ_OPTIONS.get(key)
            if why is not None:
                raise ValueError(f"option {excerpt(key)} is not supported ({why})")
        path, file_format = info.data.get("path"), info.data.get("format")
        if path is not None and file_format is not None:
            if _format_of(path, file_format) == "csv":
                unknown = sorted(k for k in value if k not in _CSV_OPTIONS)
                if unknown:
                    raise ValueError(
                        f"{excerpt(unknown[0])} is not an option of pandas.read_csv (check its "
                        "spelling)"
                    )
        return value

    def resolved_format(self) -> str:
        file_format = _format_of(self.path, self.format)
        if file_format is None:
            other = next(
                (
                    kind
                    for suffix, kind in _OTHER_FORMATS.items()
                    if self.path.lower().endswith(suffix)
                ),
                None,
            )
            if other is not None:
                kind, reader = other
                raise SpecError(
                    f"data.path {excerpt(self.path)} is {kind}: libre reads CSV and Parquet "
                    f"files. Convert it first, e.g. pandas.{reader}.to_parquet("
                    "'data.parquet')."
                )
            raise SpecError(
                f"data.path {excerpt(self.path)} is neither .csv nor .parquet: set data.format "
                "to 'csv' or 'parquet'."
            )
        return file_format

    def is_url(self) -> bool:
        return bool(_URL.match(self.path)) and not self.path.startswith("file://")

    def missing_markers(self) -> tuple[str, ...]:
        """The texts ``read_options.na_values`` reads as missing in every column (none for a
        dict of them per column: :meth:`column_missing_markers`), for the data contract:
        scoring reads its inputs alike."""
        values = self.read_options.get("na_values")
        if values is None or isinstance(values, dict):
            return ()
        return tuple(dict.fromkeys(str(v) for v in _as_list(values)))

    def column_missing_markers(self) -> dict[str, tuple[str, ...]]:
        """The texts a dict ``read_options.na_values`` reads as missing, per column (a 0 that
        stands for a missing glucose reading is a real 0 elsewhere)."""
        values = self.read_options.get("na_values")
        if not isinstance(values, dict):
            return {}
        return {
            str(column): tuple(dict.fromkeys(str(v) for v in _as_list(markers)))
            for column, markers in values.items()
        }


def _as_list(values) -> list:
    return [values] if isinstance(values, str | int | float) else list(values)


#: Suffixes of table formats libre does not read: what they are and the pandas call that reads them.
_OTHER_FORMATS = {
    ".xlsx": ("an Excel workbook", "read_excel(path)"),
    ".xls": ("an Excel workbook", "read_excel(path)"),
    ".json": ("a JSON file", "read_json(path)"),
    ".jsonl": ("a JSON-lines file", "read_json(path, lines=True)"),
    ".feather": ("a Feather file", "read_feather(path)"),
    ".arrow": ("an Arrow IPC file", "read_feather(path)"),
    ".orc": ("an ORC file", "read_orc(path)"),
}


def _format_of(path: str, file_format: str) -> str | None:
    """The file format: the one given, else the one the path's suffix names ("csv" or
    "parquet"; None if neither)."""
    if file_format != "auto":
        return file_format
    lowered = path.lower()
    if lowered.endswith((".parquet", ".pq", ".parq")):
        return "parquet"
    if lowered.endswith((".csv", ".csv.gz", ".csv.bz2", ".csv.zip", ".txt", ".tsv", ".tsv.gz")):
        return "csv"
    return None


_MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
_DAYS = ("sun", "mon", "tue", "wed", "thu", "fri", "sat")
#: The five fields of a cron expression: name, range, and the names standing for numbers.
_CRON_FIELDS = (
    ("minute", 0, 59, {}),
    ("hour", 0, 23, {}),
    ("day-of-month", 1, 31, {}),
    ("month", 1, 12, {n: i for i, n in enumerate(_MONTHS, start=1)}),
    ("day-of-week", 0, 7, {n: i for i, n in enumerate(_DAYS)}),
)


def _cron_field_problem(text: str, low: int, high: int, names: dict) -> str | None:
    """What is wrong with one cron field (lists of ``*``, ``a``, ``a-b``, each with an
    optional ``/step``), or None."""

    def number(token: str) -> int | None:
        token = token.lower()
        if token in names:
            return names[token]
        return int(token) if token.isdigit() else None

    for item in text.split(","):
        if item.lower() == "l" and high == 31:  # the last day of the month
            continue
        item = item.partition("#")[0]  # "mon#1": the month's first Monday
        span, _, step = item.partition("/")
        if step and (not step.isdigit() or int(step) == 0):
            return f"has a bad step {step!r}"
        if span == "*":
            continue
        first, _, last = span.partition("-")
        bounds = [number(first)] + ([number(last)] if last else [])
        if any(b is None for b in bounds):
            return f"has {item!r}, which is not a number, a range or '*'"
        if any(not low <= b <= high for b in bounds):
            return f"must stay within {low}-{high}"
        if len(bounds) == 2 and bounds[0] > bounds[1]:
            return f"has the range {span!r}, which runs backwards"
    return None


class TargetSpec(_Strict):
    """The column the rules explain, its positive class and classes; ``unlabeled``: what a row
    without a target value gets: ``refuse`` (the validation fails and names the count) or
    ``drop`` (left out before validation, counted in the run and its report), for data whose
    newest rows await their outcome."""

    column: str
    positive_class: Label
    classes: list[Label] | None = None
    unlabeled: Literal["refuse", "drop"] = "refuse"

    @field_validator("classes")
    @classmethod
    def _classes(cls, value):
        texts = [str(label) for label in value or ()]
        twice = sorted({t for t in texts if texts.count(t) > 1})
        if twice:
            raise ValueError(f"lists {', '.join(map(repr, twice))} twice")
        if value is not None and len(texts) < 2:
            raise ValueError(
                f"lists {len(texts)} class{'' if len(texts) == 1 else 'es'}: a rule set needs "
                "two (the positive one and at least one other)"
            )
        alike = spelled_alike(texts)
        if alike:
            raise ValueError(
                f"{' and '.join(map(repr, alike))} write one value in different ways (spaces, "
                "case or number format): as separate "
                "classes, the rows of one would be counted as the other answer; spell them "
                "alike in the target column"
            )
        return value


class FeatureSpec(_Strict):
    """The model's columns: ``include`` (default: every column but the target), ``exclude``,
    and ``categorical``. A plain list, ``features: [a, b]``, means ``include: [a, b]``."""

    include: list[str] | None = None
    exclude: list[str] = Field(default_factory=list)
    categorical: list[str] | None = None

    @model_validator(mode="before")
    @classmethod
    def _list_is_include(cls, value):
        if isinstance(value, str):
            raise ValueError(
                f"give a list of column names ([{value}]) or a mapping of include, exclude "
                "and categorical, not one text"
            )
        return {"include": value} if isinstance(value, list) else value

    @model_validator(mode="after")
    def _consistent(self) -> FeatureSpec:
        for key in ("include", "exclude", "categorical"):
            names = getattr(self, key) or []
            twice = sorted({n for n in names if names.count(n) > 1})
            if twice:
                raise ValueError(f"{key} names {', '.join(map(repr, twice))} twice")
        if self.include is not None and not self.include:
            raise ValueError("include is empty: name at least one feature column")
        both = sorted(set(self.include or ()) & set(self.exclude))
        if both:
            raise ValueError(
                f"include and exclude both name {', '.join(map(repr, both))}: a column is either "
                "a feature or not"
            )
        return self


class ColumnExpectation(_Strict):
    min: float | None = Field(default=None, allow_inf_nan=False)
    max: float | None = Field(default=None, allow_inf_nan=False)
    values: list[Label] | None = None
    max_missing_fraction: float | None = Field(default=None, ge=0, le=1)
    dtype: Literal["numeric", "categorical"] | None = None

    @model_validator(mode="after")
    def _ordered(self) -> ColumnExpectation:
        if self.min is not None and self.max is not None and self.min > self.max:
            raise ValueError(
                f"min ({self.min:g}) is greater than max ({self.max:g}): no value would pass"
            )
        return self


class UserExpectation(_Strict):
    """A Great Expectations expectation by its snake_case name, e.g.
    ``{type: expect_column_values_to_be_between, kwargs: {column: age, min_value: 0}}``."""

    type: str
    kwargs: dict[str, Any] = Field(default_factory=dict)


class ExpectationsSpec(_Strict):
    min_rows: int = Field(default=1, ge=1)
    max_missing_fraction: float = Field(default=1.0, ge=0, le=1)
    columns: dict[str, ColumnExpectation] = Field(default_factory=dict)
    extra: list[UserExpectation] = Field(default_factory=list)


_DEFAULTS = {
    name: p.default
    for name, p in inspect.signature(LibreClassifier.__init__).parameters.items()
    if name != "self"
}
#: Model options added after stores existed: they enter the stages' cache keys (and the
#: estimator's parameters) only when set to something other than their default, so the keys
#: of stores made before them stay valid.
KEYED_WHEN_SET = ("significant_cuts", "merge_order", "contiguous")
#: Those of them that change the bins (``contiguous`` acts on the learners).
BIN_OPTIONS = ("significant_cuts", "merge_order")


class ModelSpec(_Strict):
    """LibreClassifier parameters (the class's defaults when absent), checked against
    :data:`libre_lib.params.LIBRE_PARAMETERS` before any conversion, so the spec accepts exactly
    what the estimator accepts. ``random_state`` is an int here (a pipeline is reproducible);
    "auto" (``max_rules``, ``conflict_tolerance``, ``alpha``, ``max_intervals``) is chosen by the
    pipeline's ``choose`` stage."""

    n_estimators: int = _DEFAULTS["n_estimators"]
    max_features: int | float | None = _DEFAULTS["max_features"]
    subset_sizes: str = _DEFAULTS["subset_sizes"]
    heuristic: str = _DEFAULTS["heuristic"]
    alpha: float | Literal["auto", "f1"] = _DEFAULTS["alpha"]
    chi2_threshold: float = _DEFAULTS["chi2_threshold"]
    max_intervals: int | Literal["auto"] | None = _DEFAULTS["max_intervals"]
    top_k: int | None = _DEFAULTS["top_k"]
    max_rules: int | Literal["auto"] | None = _DEFAULTS["max_rules"]
    min_local_support: float = _DEFAULTS["min_local_support"]
    seeds: str = _DEFAULTS["seeds"]
    conflict_tolerance: float | Literal["auto"] = _DEFAULTS["conflict_tolerance"]
    abstain: bool = _DEFAULTS["abstain"]
    refine: str | None = _DEFAULTS["refine"]
    significant_cuts: bool = _DEFAULTS["significant_cuts"]
    merge_order: str = _DEFAULTS["merge_order"]
    contiguous: bool = _DEFAULTS["contiguous"]
    random_state: int = 0

    @field_validator("*", mode="before")
    @classmethod
    def _parameter_rule(cls, value: Any, info: ValidationInfo) -> Any:
        if info.field_name == "random_state":  # a spec holds a number, never a RandomState
            if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < 2**32:
                raise PydanticCustomError(
                    "libre_parameter", "must be a whole number from 0 to 4294967295"
                )
            return value
        rule = broken_rule(info.field_name, value)
        if rule is not None:
            raise PydanticCustomError(
                "libre_parameter", "must be {rule}", {"rule": _spec_words(rule, value)}
            )
        return value

    @model_validator(mode="after")
    def _requirements(self) -> ModelSpec:
        broken = broken_requirement(self.model_dump())
        if broken is not None:
            error = PydanticCustomError("libre_parameter", "must be {rule}", {"rule": str(broken)})
            raise ValidationError.from_exception_data(
                type(self).__name__,
                [{"type": error, "loc": (broken.name,), "input": getattr(self, broken.name)}],
            )
        return self


#: The most rules a tuning section may cap the set cover at.
_MOST_RULES = 10_000


def _is_cap(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 1 <= value <= _MOST_RULES


#: LibreClassifier parameters a pipeline's tuning grid may not set (the spec fixes them).
_UNTUNABLE = (
    "positive_class",
    "categorical_features",
    "refine",
    "random_state",
    "n_jobs",
    "verbose",  # progress, not a model: the flow run's log reports it
)


class TuningSpec(_Strict):
    """``LibreSearchCV`` inside the pipeline: the ``tune`` stage (one task per inner fold and
    ChiMerge cap) and the ``pick`` stage (the choice rule), before the final fit."""

    enabled: bool = True
    grid: Any = "default"  # "default", "paper", a dict of lists or a list of them
    folds: int = Field(default=5, ge=2, le=20)
    scoring: Literal["f1", "accuracy", "balanced_accuracy", "precision", "recall", "roc_auc"] = "f1"
    score_tolerance: float = Field(default=0.0, ge=0, le=1)
    standard_errors: float = Field(default=1.0, ge=0, le=10)
    max_rules: Any = None  # int | list[int | None] | None, checked below
    """One cap on the rules of every candidate (``max_rules: 3``, the paper's "LIBRE 3"), or
    the early stops to tune in place of the default ones (``max_rules: [1, 2, 3, 5, 8, 13]``:
    13 rules back for large data); ``LibreSearchCV``'s ``max_rules``."""
    refine: Literal["f1", "accuracy"] | None = None
    """The tuned model's boundary refinement (``LibreSearchCV``'s ``refine``): when set, it
    overrides the ``model`` section's ``refine``."""
    max_rows: int | None = Field(default=20_000, ge=100, le=10**12)
    """The search (and the "auto" choice) runs on at most this many training rows, a stratified
    sample drawn with the model's seed; the final fit uses every training row. None: all."""

    @field_validator("grid")
    @classmethod
    def _grid(cls, value):
        if isinstance(value, str):
            if value not in ("default", "paper"):
                raise ValueError(f"must be 'default', 'paper' or lists of values; got {value!r}")
            return value
        points = [value] if isinstance(value, dict) else value
        if not isinstance(points, list) or not all(isinstance(p, dict) for p in points):
            raise ValueError("must be 'default', 'paper', a mapping of lists or a list of them")
        if not points:
            raise ValueError("must list at least one grid (or be 'default' or 'paper')")
        tunable = sorted(set(_DEFAULTS) - set(_UNTUNABLE))
        for point in points:
            for name, values in point.items():
                if name not in tunable:
                    raise ValueError(f"{name!r} cannot be tuned; tunable: {tunable}")
                if not isinstance(values, list) or not values:
                    raise ValueError(f"{name}: must be a non-empty list of values to try")
                for v in values:
                    if v == "auto":
                        raise ValueError(f"{name}: list values to try, not 'auto'")
                    if broken_rule(name, v) is not None:
                        rule = _spec_words(broken_rule(name, v), v)
                        raise ValueError(f"{name}: {v!r} must be {rule}")
        return value

    @field_validator("max_rules")
    @classmethod
    def _max_rules(cls, value):
        if value is None:
            return value
        if not isinstance(value, list):
            if not _is_cap(value):
                raise ValueError(
                    f"must be an int in [1, {_MOST_RULES:,}] (one cap) or a list of them (the "
                    "early stops to tune, e.g. [1, 2, 3, 5, 8, 13]; null in it: no early stop)"
                )
            return value
        if not value:
            raise ValueError("list the early stops to tune (e.g. [1, 2, 3, 5, 8, 13]) or omit it")
        for stop in value:
            if stop is not None and not _is_cap(stop):
                raise ValueError(
                    f"each early stop must be an int in [1, {_MOST_RULES:,}] or null (no early "
                    f"stop); {stop!r} is not"
                )
        if len(set(value)) < len(value):
            raise ValueError("lists an early stop twice")
        return value

    def search_kwargs(self) -> dict[str, Any]:
        """Keyword arguments for ``LibreSearchCV`` (besides the estimator and the seed)."""
        grid = self.grid
        if isinstance(grid, str):
            grid = {"default": None, "paper": PAPER_GRID}[grid]
        return {
            "param_grid": grid,
            "cv": self.folds,
            "scoring": self.scoring,
            "score_tolerance": self.score_tolerance,
            "standard_errors": self.standard_errors,
            "max_rules": self.max_rules,
            "refine": self.refine,
        }


class RunnerSpec(_Strict):
    kind: Literal["thread", "dask"] = "thread"
    max_workers: int | None = Field(default=None, ge=1, le=4096)
    address: str | None = None
    n_workers: int = Field(default=2, ge=1)

    @model_validator(mode="after")
    def _dask_options(self) -> RunnerSpec:
        """``address`` and ``n_workers`` are Dask's: with the thread runner they were ignored
        without a word (a cluster named and never used)."""
        given = [
            name
            for name in ("address", "n_workers")
            if getattr(self, name) != type(self).model_fields[name].default
        ]  # by value: a dumped spec (every field written) validates again
        if self.kind == "dask" and self.address is not None and "n_workers" in given:
            raise ValueError(
                "n_workers sizes the local cluster a run starts, but address names an existing "
                "scheduler, whose workers run the tasks: remove one of them"
            )
        if self.kind == "dask" and self.address is not None and self.max_workers is not None:
            raise ValueError(
                "max_workers sets the threads of each worker of the local cluster a run "
                "starts, but address names an existing scheduler, whose workers keep their own "
                "(dask worker --nthreads): remove one of them"
            )
        if self.kind != "dask" and given:
            one = len(given) == 1
            raise ValueError(
                f"{' and '.join(given)} {'is an option' if one else 'are options'} of the Dask "
                f"runner, but kind is {self.kind!r}: set kind: dask to use "
                f"{'it' if one else 'them'}, or remove {'it' if one else 'them'}"
            )
        return self


class ScheduleSpec(_Strict):
    """When the production deployment retrains (cron, with an explicit timezone)."""

    cron: str = "0 3 * * *"
    timezone: str = "UTC"
    active: bool = True

    @field_validator("cron")
    @classmethod
    def _cron(cls, value: str) -> str:
        fields = value.split()
        if len(fields) != 5:
            raise ValueError("must be a 5-field cron expression, e.g. '0 3 * * *'")
        for field_text, (name, low, high, names) in zip(fields, _CRON_FIELDS, strict=True):
            problem = _cron_field_problem(field_text, low, high, names)
            if problem:
                raise ValueError(f"the {name} field {field_text!r} {problem}")
        return value

    @field_validator("timezone")
    @classmethod
    def _timezone(cls, value: str) -> str:
        from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

        try:
            ZoneInfo(value)
        except (ZoneInfoNotFoundError, ValueError):
            raise ValueError("must be an IANA timezone such as 'UTC' or 'Europe/Paris'") from None
        return value


class PromotionSpec(_Strict):
    """When a newly trained version replaces the champion: its holdout ``metric`` must be at
    least the champion's minus ``tolerance`` (and its data validation must have passed). With
    ``beat_majority``, its holdout accuracy must also be at least the majority-class answer's
    on the same rows, the first version's too."""

    metric: Literal["f1", "precision", "recall", "accuracy"] = "f1"
    tolerance: float = Field(default=0.0, ge=0, le=1)
    beat_majority: bool = False


def _label_key(value: Label) -> tuple[str, object]:
    """Values that read as the same number (``1``, ``1.0``, ``"1"``) share a key."""
    if isinstance(value, bool):
        return ("bool", value)
    try:
        return ("number", float(str(value).strip()))
    except ValueError:
        return ("text", str(value))


def _one_line(text: str, what: str) -> None:
    """Refuse a line break or other control character in text shown inside a rule: it would
    split the rule in the report (a label "x\nOR y" reads as a second rule); so are the other
    characters a report would write out (:data:`~libre_lib.ops.markdown.INVISIBLE`): U+2028
    split a rule in the HTML report into a fake "OR" line, U+202E reversed the text after."""
    if any(unicodedata.category(ch) == "Cc" for ch in str(text)):
        raise ValueError(f"{what} holds a line break or control character: write it on one line")
    hidden = sorted({f"U+{ord(ch):04X}" for ch in INVISIBLE.findall(str(text))})
    if hidden:
        raise ValueError(
            f"{what} holds {', '.join(hidden)}, an invisible character that breaks or reorders "
            "the text around it in the report: remove it"
        )


def _no_nul(path: str) -> str:
    """A path of the spec (data.path, store): refused when it holds a NUL character, which
    the operating system would meet with a bare ValueError."""
    if "\x00" in path:
        raise ValueError("holds a NUL character, which no file or folder name can")
    return path


def _check_labels(labels: dict[Label, str]) -> dict[Label, str]:
    """Labels are non-empty text; no two keys are the same value, no two labels the same."""
    seen: dict[tuple[str, object], Label] = {}
    names: dict[str, Label] = {}
    for value, label in labels.items():
        if not str(label).strip():
            raise ValueError(f"the label of {excerpt(value)} is empty")
        _one_line(label, f"the label of {excerpt(value)}")
        key = _label_key(value)
        if key in seen:
            raise ValueError(
                f"{excerpt(seen[key])} and {excerpt(value)} are the same value: label it once"
            )
        seen[key] = value
        if label in names:
            raise ValueError(
                f"{excerpt(names[label])} and {excerpt(value)} have the same label "
                f"{excerpt(label)}: labels must tell values apart"
            )
        names[label] = value
    return labels


class ReportSpec(_Strict):
    """How the report names things: ``column_labels`` (column -> label), ``value_labels``
    (column -> {value: label}, e.g. ``sex: {1: female, 0: male}``), ``class_labels`` (class ->
    label, e.g. ``{"1": diabetic, "0": not diabetic}``) and ``target_label``."""

    title: str | None = None
    column_labels: dict[str, str] = Field(default_factory=dict)
    target_label: str | None = None
    value_labels: dict[str, dict[Label, str]] = Field(default_factory=dict)
    class_labels: dict[Label, str] = Field(default_factory=dict)

    @field_validator("title", "target_label")
    @classmethod
    def _one_line_text(cls, value: str | None) -> str | None:
        if value is not None:
            _one_line(value, "the text")
        return value

    @field_validator("value_labels")
    @classmethod
    def _value_labels(cls, value: dict[str, dict[Label, str]]) -> dict[str, dict[Label, str]]:
        for column, labels in value.items():
            try:
                _check_labels(labels)
            except ValueError as exc:
                raise ValueError(f"column {excerpt(column)}: {exc}") from None
        return value

    @field_validator("class_labels")
    @classmethod
    def _class_labels(cls, value: dict[Label, str]) -> dict[Label, str]:
        return _check_labels(value)

    @field_validator("column_labels")
    @classmethod
    def _column_labels(cls, value: dict[str, str]) -> dict[str, str]:
        _check_labels(value)
        for column, label in value.items():
            if label in value and label != column:
                raise ValueError(
                    f"{excerpt(column)} is labelled {excerpt(label)}, the name of another "
                    "labelled column: labels must tell columns apart"
                )
        return value


class PipelineSpec(_Strict):
    """A whole training pipeline."""

    name: str
    description: str = ""
    data: DataSource
    target: TargetSpec
    features: FeatureSpec = Field(default_factory=FeatureSpec)
    expectations: ExpectationsSpec = Field(default_factory=ExpectationsSpec)
    model: ModelSpec = Field(default_factory=ModelSpec)
    tuning: TuningSpec = Field(default_factory=TuningSpec)
    holdout_fraction: float = Field(default=0.2, ge=0, lt=1)
    split_seed: int = Field(default=0, ge=0, le=MAX_SEED)
    split_by: list[str] = Field(default_factory=list)
    """Columns whose values key each row's holdout side (an id: a customer keeps its side when
    its other values change, and all its rows share it); empty: the target and features."""
    store: str = ".libre-store"  # relative to the spec file, as data.path is
    runner: RunnerSpec = Field(default_factory=RunnerSpec)
    schedule: ScheduleSpec = Field(default_factory=ScheduleSpec)
    promotion: PromotionSpec = Field(default_factory=PromotionSpec)
    report: ReportSpec = Field(default_factory=ReportSpec)
    base_dir: str = Field(default=".", exclude=True)

    @field_validator("store")
    @classmethod
    def _store(cls, value: str) -> str:
        if not value.strip():  # "" made the spec's own folder the store
            raise ValueError("is empty: name the store's folder (default .libre-store)")
        return _no_nul(value)

    @field_validator("name")
    @classmethod
    def _name(cls, value: str) -> str:
        if not re.fullmatch(r"[a-z0-9][a-z0-9-]{0,60}", value):
            raise ValueError(
                "must be lowercase letters, digits and dashes (it names Prefect artifacts)"
            )
        return value

    @model_validator(mode="after")
    def _report_labels(self) -> PipelineSpec:
        """The target is not a feature; class labels name classes of the target; value labels
        name feature columns."""
        report, target = self.report, self.target
        if target.column in self.split_by:
            _spec_error(
                ("split_by",),
                f"lists the target column {target.column!r}: every row of a class would share "
                "one side of the holdout; name the columns that identify a row (an id)",
                self.split_by,
            )
        if len(set(self.split_by)) != len(self.split_by):
            _spec_error(("split_by",), "names a column twice", self.split_by)
        if self.features.include is not None and target.column in self.features.include:
            _spec_error(
                ("features", "include"),
                f"lists the target column {target.column!r}: the rules cannot use the outcome "
                "they predict; remove it from features.include",
                target.column,
            )
        classes = target.classes if target.classes is not None else [target.positive_class]
        known = {_label_key(c) for c in classes}
        if _label_key(target.positive_class) not in known:
            _spec_error(
                ("target", "positive_class"),
                "must be one of target.classes: "
                + ", ".join(repr(str(c)) for c in target.classes or ()),
                target.positive_class,
            )
        for value in report.class_labels:
            if target.classes is not None and _label_key(value) not in known:
                _spec_error(
                    ("report", "class_labels", str(value)),
                    "must be a class of the target, one of "
                    + ", ".join(repr(str(c)) for c in target.classes),
                    value,
                )
        expected = [(("expectations", "columns", c), c) for c in self.expectations.columns]
        for i, user in enumerate(self.expectations.extra):
            expected += [
                (("expectations", "extra", str(i)), c) for c in referenced_columns(user.kwargs)
            ]
        for where, column in expected:
            if column != target.column and (
                column in self.features.exclude
                or (self.features.include is not None and column not in self.features.include)
            ):
                _spec_error(
                    where,
                    f"checks {column!r}, which is not a feature or the target: the pipeline "
                    "loads, and validates, only those (see features.include / exclude)",
                    column,
                )
        for column in report.value_labels:
            if column == target.column:
                _spec_error(
                    ("report", "value_labels", column),
                    "is the target column: label its classes with report.class_labels",
                    column,
                )
            if column in self.features.exclude or (
                self.features.include is not None and column not in self.features.include
            ):
                _spec_error(
                    ("report", "value_labels", column),
                    "is not a feature of the model (see features.include / exclude)",
                    column,
                )
        return self

    def data_location(self) -> str:
        """The data path, made absolute relative to the spec file when it is a local path."""
        if self.data.is_url():
            return self.data.path
        path = Path(self.data.path.removeprefix("file://")).expanduser()
        if not path.is_absolute():
            path = Path(self.base_dir) / path
        return str(path.resolve())

    def store_location(self) -> str:
        """The artifact store's absolute path: a relative ``store`` is relative to the spec file,
        like ``data.path``, so a run finds the same store from any working directory."""
        path = Path(self.store).expanduser()
        if not path.is_absolute():
            path = Path(self.base_dir) / path
        return str(path.resolve())

    def is_streamed(self) -> bool:
        """Does the pipeline stream the data (``data.streamed``; "auto": a directory, local or a
        URL, or a local file larger than ``STREAM_ABOVE_BYTES``)?"""
        if self.data.streamed != "auto":
            return bool(self.data.streamed)
        if self.data.is_url():
            return is_folder(self.data_location())
        path = Path(self.data_location())
        return path.is_dir() or (path.is_file() and path.stat().st_size > STREAM_ABOVE_BYTES)

    def options_set(self, names: tuple[str, ...] = KEYED_WHEN_SET) -> dict[str, Any]:
        """The model options ``names`` (of :data:`KEYED_WHEN_SET`) that differ from their
        defaults."""
        return {
            name: getattr(self.model, name)
            for name in names
            if getattr(self.model, name) != _DEFAULTS[name]
        }

    def estimator_params(self) -> dict[str, Any]:
        """Keyword arguments for LibreClassifier (the :data:`KEYED_WHEN_SET` options only when
        not the default: the stages' cache keys hold these, and stores made before the options
        keep theirs)."""
        params = {
            k: v for k, v in self.model.model_dump().items() if k not in KEYED_WHEN_SET
        } | self.options_set()
        params["positive_class"] = self.target.positive_class
        params["categorical_features"] = self.features.categorical
        return params

    def with_model(self, params: dict[str, Any]) -> PipelineSpec:
        """This spec with ``params`` (LibreClassifier parameters, e.g. the tuned ones) in its
        ``model`` section; parameters the section does not hold are ignored."""
        update = {k: v for k, v in params.items() if k in ModelSpec.model_fields}
        return self.model_copy(update={"model": ModelSpec(**{**self.model.model_dump(), **update})})


def _spec_error(loc: tuple, rule: str, value) -> None:
    """Raise a validation error at ``loc`` (one ``SpecError`` line once parsed)."""
    error = PydanticCustomError("libre_spec", "{rule}", {"rule": rule})
    raise ValidationError.from_exception_data(
        "PipelineSpec", [{"type": error, "loc": loc, "input": value}]
    )


#: File names of data, not specs: a command given one says how to write its spec.
DATA_NAMES = (".csv", ".csv.gz", ".tsv", ".tsv.gz", ".parquet", ".pq", ".xlsx")


def load_spec(path: str | Path) -> PipelineSpec:
    """Read and check a YAML pipeline spec (docs/pipeline.md).

    The file must be UTF-8 and at most :data:`MAX_SPEC_BYTES` long; YAML anchors and aliases,
    merge keys and duplicate keys are refused, and nesting is at most :data:`MAX_SPEC_DEPTH`
    deep, so no spec can expand into more than its own size.

    Parameters
    ----------
    path : path-like
        The spec file; its relative paths (``data.path``, ``store``) are relative to its
        folder.

    Returns
    -------
    PipelineSpec
        The checked spec.

    Raises
    ------
    SpecError
        Every problem of the file, one per line (a missing file, bad YAML, an unknown key
        with the key it most likely means, a value out of range).
    """
    path = Path(path)
    where = excerpt(str(path))
    if path.is_dir():
        raise SpecError(f"Spec file {where} is a directory: give the path of a spec (.yaml) file.")
    if not path.is_file():
        raise SpecError(f"Spec file {where} does not exist.")
    if path.name.lower().endswith(DATA_NAMES):
        raise SpecError(
            f"{where} is a data file, not a spec: write a spec for it with `libre init "
            f"{path}` (docs/pipeline.md), then pass the spec."
        )
    size = path.stat().st_size
    if size > MAX_SPEC_BYTES:
        raise SpecError(
            f"Spec file {where} is {size:,} bytes; a spec may be at most {MAX_SPEC_BYTES:,} "
            "bytes (keep data out of the spec)."
        )
    with path.open("rb") as handle:
        payload = handle.read(MAX_SPEC_BYTES + 1)
    try:
        text = payload.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise SpecError(
            f"Spec file {where} is not UTF-8 text (byte {payload[exc.start]:#04x} at offset "
            f"{exc.start}); save it as UTF-8."
        ) from None
    return spec_from_text(text, path)


def spec_from_text(text: str, path: str | Path) -> PipelineSpec:
    """``text`` read as the spec file ``path`` (paths in it relative to its folder), as
    :func:`load_spec` reads the file."""
    path = Path(path)
    where = excerpt(str(path))
    try:
        raw = yaml.load(text, Loader=_SpecLoader)
    except yaml.MarkedYAMLError as exc:
        raise SpecError(f"Spec file {where} is not a valid spec: {_yaml_problem(exc)}") from None
    except yaml.YAMLError as exc:
        problem = shorten(" ".join(str(exc).split()))
        raise SpecError(f"Spec file {where} is not valid YAML: {problem}") from None
    if not isinstance(raw, dict):
        raise SpecError(f"Spec file {where} must hold a mapping of keys, got {type(raw).__name__}.")
    return parse_spec(raw, base_dir=path.resolve().parent, source=str(path))


class _SpecLoader(yaml.SafeLoader):
    """YAML's safe loader without anchors, aliases and merge keys (an alias "bomb" expands a
    small file into billions of nodes), refusing duplicate keys and deep nesting."""

    _depth = 0

    def compose_node(self, parent, index):
        event = self.peek_event()
        if isinstance(event, yaml.AliasEvent):
            raise _refusal("aliases (*name) are not allowed in a spec; write the value out", event)
        if getattr(event, "anchor", None) is not None:
            raise _refusal("anchors (&name) are not allowed in a spec; write the value out", event)
        if isinstance(event, yaml.CollectionStartEvent) and self._depth >= MAX_SPEC_DEPTH:
            raise _refusal(f"the spec nests deeper than {MAX_SPEC_DEPTH} levels", event)
        self._depth += 1
        try:
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1

    def construct_mapping(self, node, deep=False):
        seen = set()
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                raise _refusal("merge keys (<<) are not allowed in a spec", key_node)
            key = self.construct_object(key_node, deep=True)
            try:
                duplicate = key in seen
            except TypeError:  # unhashable: the base class says so
                continue
            if duplicate:
                raise _refusal(f"duplicate key {excerpt(key)}", key_node)
            seen.add(key)
        return super().construct_mapping(node, deep)


# Booleans as YAML 1.2 reads them: only true and false. YAML 1.1 (PyYAML's default) also reads
# yes, no, on and off as booleans, so `positive_class: Yes` was True and matched no "Yes" row.
_BOOL = "tag:yaml.org,2002:bool"
_YAML11_BOOLEANS = ("yes", "no", "on", "off")
_SpecLoader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag != _BOOL]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
_SpecLoader.add_implicit_resolver(
    _BOOL, re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"), list("tTfF")
)
# Numbers in exponent form without a point (1e-3) as YAML 1.2 reads them: YAML 1.1 read them as
# text, and `min_local_support: 1e-3` was refused as "must be a float (got '1e-3')".
_EXPONENT = re.compile(r"^[-+]?[0-9]+[eE][-+]?[0-9]+$")
_SpecLoader.add_implicit_resolver("tag:yaml.org,2002:float", _EXPONENT, list("-+0123456789"))


class SpecDumper(yaml.SafeDumper):
    """Writes YAML the spec loader reads back as written: texts such as ``1e3``, a number to
    the loader, are quoted."""


SpecDumper.add_implicit_resolver("tag:yaml.org,2002:float", _EXPONENT, list("-+0123456789"))


def yaml_scalar(value) -> str:
    """``value`` (or a list) as one line of YAML that the spec loader reads back as written:
    text quoted where YAML would read it otherwise (``1e3``, ``yes``, ``a: b``)."""
    listed = value if isinstance(value, list) else [value]
    text = yaml.dump(
        listed, Dumper=SpecDumper, default_flow_style=True, allow_unicode=True, width=10**6
    )
    return text.strip() if isinstance(value, list) else text.strip()[1:-1]


def _refusal(problem: str, where) -> yaml.MarkedYAMLError:
    return yaml.MarkedYAMLError(problem=problem, problem_mark=where.start_mark)


def _yaml_problem(exc: yaml.MarkedYAMLError) -> str:
    """The YAML error in one line: what is wrong and where (no echo of the file)."""
    problem = shorten(" ".join(str(exc.problem or exc.context or "").split()))
    mark = exc.problem_mark or exc.context_mark
    if mark is None:
        return problem
    return f"{problem} at line {mark.line + 1}, column {mark.column + 1}"


def parse_spec(raw: dict, base_dir: str | Path = ".", source: str = "spec") -> PipelineSpec:
    try:
        spec = PipelineSpec.model_validate({**raw, "base_dir": str(base_dir)})
    except ValidationError as exc:
        described = dict.fromkeys(_describe(e) for e in _unions_merged(exc.errors()))
        raise SpecError(f"{source}: " + "; ".join(described)) from None
    if spec.data.format == "auto" and _format_of(spec.data.path, "auto") is None:
        found = directory_format(spec.data_location()) if not spec.data.is_url() else None
        if found is not None:
            spec = spec.model_copy(update={"data": spec.data.model_copy(update={"format": found})})
    spec.data.resolved_format()
    return spec


def directory_format(location: str) -> str | None:
    """The format of a local directory's data files ("csv" or "parquet"), when they are all of
    one; None if ``location`` is not a directory. A directory holding both, or neither, is a
    :class:`SpecError` saying which files it found."""
    path = Path(location)
    try:
        if not path.is_dir():
            return None
    except OSError:  # a name the file system cannot hold: the format error says it
        return None
    formats = {
        name: sorted(
            str(f.relative_to(path))
            for f in path.rglob("*")
            if f.is_file()
            and f.name.lower().endswith(suffixes)
            and not skipped_entry(f.relative_to(path).parts)
        )
        for name, suffixes in DATA_SUFFIXES.items()
    }
    present = [name for name, files in formats.items() if files]
    if len(present) == 1:
        return present[0]
    if not present:
        raise SpecError(
            f"data.path {excerpt(location)} is a directory without .csv or .parquet files: point "
            "data.path at the data files' directory, or set data.format."
        )
    raise SpecError(
        f"data.path {excerpt(location)} holds CSV files ({excerpt(formats['csv'][0])}, ...) and "
        f"Parquet files ({excerpt(formats['parquet'][0])}, ...): set data.format to the one to "
        "read."
    )


#: What a missing required key is for, with an example (spec errors name it).
REQUIRED_HINTS = {
    "name": "the pipeline's name, e.g. name: churn",
    "data": "where the training rows are, e.g. data: {path: churn.csv}",
    "data.path": "a CSV or Parquet file or a folder of them, e.g. path: churn.csv",
    "target": "the column to predict and its positive value, e.g. target: {column: churned, "
    'positive_class: "yes"}',
    "target.column": "the column the rules predict, e.g. column: churned",
    "target.positive_class": "the value of the target column the rules flag, e.g. "
    'positive_class: "yes" or positive_class: 1',
}


def _close_key(loc: tuple) -> str | None:
    """The key of the spec's section at ``loc`` nearest an unknown key's spelling, or None."""
    import difflib
    import typing

    model: type[BaseModel] | None = PipelineSpec
    for part in loc[:-1]:
        field = model.model_fields.get(str(part)) if model else None
        if field is None:
            return None
        kinds = [field.annotation, *typing.get_args(field.annotation)]
        model = next((k for k in kinds if isinstance(k, type) and issubclass(k, BaseModel)), None)
    if model is None:
        return None
    names = [n for n, f in model.model_fields.items() if not f.exclude]
    found = difflib.get_close_matches(str(loc[-1]), names, n=1, cutoff=0.6)
    return found[0] if found else None


#: Estimator parameters that a spec sets elsewhere, and where (``model.<name>`` is refused).
ELSEWHERE = {
    "model.positive_class": "a pipeline's positive class is target.positive_class",
    "model.categorical_features": "a pipeline declares its text columns in features.categorical",
    "model.n_jobs": "a pipeline's parallelism is runner.max_workers (its learners run as "
    "mapped tasks)",
    "model.verbose": "a pipeline reports its progress in its flow run's log and in the "
    "status line of libre train",
}


_LABEL_TYPES = ("str", "int", "float", "bool")


def _unions_merged(errors: list[dict]) -> list[dict]:
    """A label of none of its types gave one error per type (``positive_class.str``,
    ``.int``, ``.float``, ``.bool``): one error for the label instead."""
    out = []
    for error in errors:
        loc = tuple(error["loc"])
        if loc and loc[-1] in _LABEL_TYPES:
            error = {
                **error,
                "loc": loc[:-1],
                "type": "label_type",
                "msg": "must be one text or number (write a date in quotes: '2021-01-01')",
            }
        out.append(error)
    return out


def _spec_words(rule: str, value) -> str:
    """A parameter's rule as a spec writes it: null for Python's None (YAML reads None as
    the text 'None')."""
    rule = re.sub(r"\bNone\b", "null", rule)
    if isinstance(value, str) and value.strip() in ("None", "none"):
        rule += " (write null: YAML reads None as text)"
    return rule


def _describe(error: dict) -> str:
    """One error of the spec's check, with at most a short excerpt of the bad key or value."""
    where = ".".join(str(p) for p in error["loc"]) or "(top level)"
    if error["type"] == "extra_forbidden":
        moved = ELSEWHERE.get(where)
        if moved:
            return f"unknown key {shorten(repr(where))}: {moved} (docs/pipeline.md)"
        close = _close_key(error["loc"])
        hint = f"did you mean {close!r}? See" if close else "check its spelling; see"
        return f"unknown key {shorten(repr(where))} ({hint} docs/pipeline.md)"
    if error["type"] == "missing":
        hint = REQUIRED_HINTS.get(where)
        return f"missing required key {excerpt(where)}" + (f" ({hint})" if hint else "")
    message = error["msg"].removeprefix("Value error, ")  # a rule, not the value
    if error["type"] == "model_type":  # "a valid dictionary or instance of TuningSpec"
        message = "must be a mapping of keys (key: value lines under it)"
        if where == "data" and isinstance(error.get("input"), str):
            message += f"; write data: {{path: {error['input']}}}"
    if error["type"] == "bool_type" and str(error.get("input")).lower() in _YAML11_BOOLEANS:
        message += "; write true or false (a spec reads yes, no, on and off as text)"
    return f"{shorten(where)}: {message} (got {excerpt(error.get('input'))})"
