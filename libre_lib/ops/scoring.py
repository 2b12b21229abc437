"""Batch scoring with explanations, checked against the model's data contract.

``score_frame(model, frame, contract)`` scores an in-memory DataFrame; ``score_files(model,
inputs, output)`` streams CSV / Parquet files (a file, a list, or a directory) in record batches
and writes them batch by batch to one Parquet file, committed atomically. Both add four
columns:

* ``prediction``: the positive label where some rule fires, else the negative label
  (``model.predict``);
* ``score``: the training precision of the most precise rule that fires, 0 when none fires
  (``model.decision_function``);
* ``fired_rules``: the indices (0-based, as in ``model.rules_`` and ``model.explain``) of the
  rules that fire; a tuple per row in ``score_frame``, a ``list<int32>`` column in Parquet. The
  rule report numbers rules from 1: rule index ``i`` is "Rule ``i + 1``" there;
* ``explanation``: the texts of those rules joined by " OR " (a rule of several conditions in
  parentheses when several fire), empty when none fires.

Errors of the contract (missing columns, wrong types) stop scoring with ``ContractViolation``.
Drifted records are still scored, with the model's semantics: an unseen category, or a missing
value in a feature without a missing bin, satisfies only the rules that do not test that
feature; a number beyond the training range falls in the open first / last interval. The drift
is counted in the returned ``ContractReport`` (one report over all batches).

Memory is bounded by the batch size, not the input's size: each file is read on demand, one
batch at a time (Parquet pages as they are decoded, CSV one block at a time), and nothing read
is kept once its batch is written. Explanations are built at most ``EXPLANATION_BYTES`` at a
time: a batch whose rows fire many long rules is written as several row groups. CSV columns
the model reads as numbers are parsed as float64 and text categories as strings (so ``"007"``
stays ``"007"``); a value that is not a number raises ``ContractViolation`` naming the file,
column and line. Empty CSV fields and the usual NA spellings (``NA``, ``NaN``, ``null``, ...)
are missing values.
"""

from __future__ import annotations

import contextlib
import csv
import io
import json
import math
import os
import re
import time
import warnings
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
import pandas as pd

from ..discretization import NUMERIC
from ..errors import DataError, LibreWarning, ParameterError, counted, excerpt, user_stacklevel
from ..inputs import as_frame, decimal_floats
from ..render import marker_texts
from ..rules import fired_patterns, fired_text, set_item_text
from .contract import (
    OUT_OF_RANGE,
    ColumnObservation,
    ContractIssue,
    ContractReport,
    ContractViolation,
    DataContract,
    can_change_predictions,
    input_family,
)
from .files import commit_temp, fsync_file, temp_path, unlink_quietly, write_failed
from .markdown import md_block, md_code, md_inline
from .registry import registered_version, verified_text
from .sources import (
    DATA_SUFFIXES,
    csv_dialect,
    integer_fields,
    read_types,
    skipped_entry,
    text_encoding,
    unread_files,
)

__all__ = [
    "SCORE_COLUMNS",
    "InputCheck",
    "InputFile",
    "ScoringSummary",
    "check_inputs",
    "find_contract",
    "list_inputs",
    "load_model",
    "render_scoring_report",
    "score_files",
    "score_frame",
    "unmarked",
]

SCORE_COLUMNS = ("prediction", "score", "fired_rules", "explanation")
DEFAULT_BATCH_ROWS = 100_000
#: At most about this many bytes of explanations are built at once: a batch whose rows fire
#: many long rules is written in several row groups (see ``_text_slices``).
EXPLANATION_BYTES = 64 << 20
DEFAULT_SAMPLE_ROWS = 10_000
CSV_SUFFIXES = DATA_SUFFIXES["csv"]  # what a streamed training run reads, no more
PARQUET_SUFFIXES = DATA_SUFFIXES["parquet"]
_CSV_BLOCK_BYTES = 4 << 20  # the first block is the sample CSV column types are guessed from
_CSV_STREAM_BLOCK_BYTES = 1 << 20  # its reader reads a few dozen blocks ahead
_CSV_MOST_BLOCK_BYTES = 1 << 30  # Arrow's block size is an int32
_PARQUET_BUFFER_BYTES = 1 << 20


# --------------------------------------------------------------------------- the model


def load_model(path: str | os.PathLike):
    """A ``LibreClassifier`` from its ``model.json``."""
    from ..estimator import LibreClassifier

    path = Path(path)
    if not path.is_file():
        raise DataError(f"Model file {str(path)!r} does not exist.")
    return LibreClassifier.from_json(_read_text(path))


def find_contract(model_path: str | os.PathLike) -> DataContract | None:
    """The contract saved with a model file: ``<stem>.contract.json`` or ``contract.json`` in
    the model's folder; ``None`` when there is none."""
    path = Path(model_path)
    for candidate in (
        path.with_name(f"{path.stem}.contract.json"),
        path.with_name("contract.json"),
    ):
        if candidate.is_file():
            return DataContract.from_json(_read_text(candidate))
    version = registered_version(path)
    if version is not None and "contract.json" in version.files_sha256:
        verified_text(version, "contract.json")  # registered but gone: the registry's error
    return None


def _read_text(path: Path) -> str:
    """A model or contract file's text; inside a model registry's version folder, checked
    against the sha256 recorded at registration."""
    version = registered_version(path)
    if version is not None:
        return verified_text(version, path.name)
    return path.read_text(encoding="utf-8")


def _as_model(model):
    if isinstance(model, str | os.PathLike):
        return load_model(model)
    from sklearn.utils.validation import check_is_fitted

    check_is_fitted(model, "rules_")
    return model


def _model_and_contract(model, contract) -> tuple:
    """The fitted model (``model``, or the ``model.json`` it names) and its contract
    (:func:`_as_contract`; when None, the one saved beside that file, as ``libre score`` finds
    it: :func:`find_contract`)."""
    fitted = _as_model(model)
    if contract is None and isinstance(model, str | os.PathLike):
        contract = find_contract(model)
    return fitted, _as_contract(fitted, contract)


def _as_contract(model, contract) -> DataContract:
    if contract is None:
        return DataContract.from_model(model)
    if isinstance(contract, dict):
        contract = DataContract.from_dict(contract)
    elif isinstance(contract, str | os.PathLike):
        contract = DataContract.from_json(_read_text(Path(contract)))
    elif not isinstance(contract, DataContract):
        raise ParameterError(
            "contract must be a DataContract, its dict, a path or None; got "
            f"{type(contract).__name__}."
        )
    _check_covers(contract, model)
    return contract.with_values_tested(model.rules_)


def _check_covers(contract: DataContract, model) -> None:
    """The contract names every column the model reads (a contract of another model, or an
    edited one, otherwise fails mid-scoring with a bare KeyError)."""
    missing = [c for c in model.columns_ if c not in contract.names]
    if missing:
        raise ParameterError(
            f"The data contract does not cover the model's column {excerpt(missing[0])} "
            f"({counted(len(missing), 'column')} missing): it belongs to another model or was "
            "edited; use the contract saved with the model."
        )


# --------------------------------------------------------------------------- scoring a frame


@dataclass(frozen=True)
class _Scores:
    """The model's outputs on some rows; rows with the same fired rules share one pattern."""

    fired: np.ndarray  # bool (rows x rules)
    prediction: np.ndarray
    score: np.ndarray
    inverse: np.ndarray  # row -> pattern
    patterns: list[tuple[int, ...]]
    texts: list[str]


def _rule_texts(model) -> list[str]:
    return [str(rule) for rule in model.rules_]


def _fired(model, frame: pd.DataFrame) -> np.ndarray:
    """``model.fired_rules(frame)``, faster on large batches: a categorical condition is
    evaluated (by the rule's own ``Condition.evaluate``) once per distinct value of its column,
    then spread to the rows, instead of once per row. Conditions are elementwise, so the result
    is the same; numeric conditions run on the rows as in the model."""
    n_rows = len(frame)
    fired = np.zeros((n_rows, len(model.rules_)), dtype=bool)
    distinct: dict[str, tuple[np.ndarray, pd.Series]] = {}
    for j, rule in enumerate(model.rules_):
        hit = np.ones(n_rows, dtype=bool)
        for condition in rule:
            column = frame[condition.feature]
            if condition.kind == NUMERIC:
                hit &= condition.evaluate(column)
                continue
            if condition.feature not in distinct:
                codes, uniques = pd.factorize(column, use_na_sentinel=True)
                values = np.empty(len(uniques) + 1, dtype=object)
                values[:-1] = np.asarray(uniques, dtype=object)
                values[-1] = None  # code -1 (missing) picks this last entry
                distinct[condition.feature] = (codes, pd.Series(values, dtype=object))
            codes, values = distinct[condition.feature]
            hit &= condition.evaluate(values)[codes]
        fired[:, j] = hit
    return fired


def _score(model, frame: pd.DataFrame, texts: list[str]) -> _Scores:
    fired = _fired(model, frame)
    n_rows, n_rules = fired.shape
    precision = np.array([s.precision for s in model.rules_.stats], dtype=float)
    score = np.where(fired, precision, 0.0).max(axis=1) if n_rules else np.zeros(n_rows)
    prediction = model._labels(fired.any(axis=1))
    inverse, patterns = fired_patterns(fired)
    pattern_texts = [fired_text([texts[i] for i in p]) for p in patterns]
    return _Scores(fired, prediction, score, np.asarray(inverse).ravel(), patterns, pattern_texts)


def _check_no_clash(columns: Iterable, target: str | None = None, file: str | None = None) -> None:
    """Refuse input columns named as scoring's own (``file``: the input file, for the
    message): a labelled batch of a target so named, or an earlier scoring output."""
    clash = [c for c in SCORE_COLUMNS if c in {str(n) for n in columns}]
    if not clash:
        return
    where = "The input" if file is None else f"Input {file}"
    if target is not None and clash == [str(target)]:  # a labelled batch of a target so named
        raise DataError(
            f"{where} has column {str(target)!r}, the model's target (the labels), and scoring "
            f"writes its answers under that name: drop the column from the input, or rename "
            f"it (e.g. to '{target}_label')."
        )
    if file is not None:
        raise DataError(
            f"{where} already has column(s) {clash}, which scoring adds: is it an earlier "
            "scoring output? Move it out of the inputs, or rename or drop those columns."
        )
    raise DataError(
        f"The input already has column(s) {clash}, which scoring adds: rename or drop them."
    )


def score_frame(
    model, frame: pd.DataFrame, contract: DataContract | None = None
) -> tuple[pd.DataFrame, ContractReport]:
    """Score the rows of a DataFrame against the model's data contract.

    The contract's markers of a missing value (pima's 0 of a glucose reading) are read as
    missing, as the training read them; the returned copy keeps the values as given.

    Parameters
    ----------
    model : LibreClassifier or path-like
        A fitted model, or the path of its ``model.json``.
    frame : DataFrame
        The rows to score: the model's columns, any others are copied.
    contract : DataContract, optional
        By default the one saved with a model file (:func:`find_contract`, as ``libre score``),
        else ``DataContract.from_model(model)`` (no training ranges or missing-value markers:
        pass the contract saved with the model to get every drift warning).

    Returns
    -------
    scored : DataFrame
        A copy of ``frame`` with ``prediction``, ``score``, ``fired_rules`` and
        ``explanation``.
    report : ContractReport
        What the contract check found (drift in ``report.warnings``).

    Raises
    ------
    ContractViolation
        When the rows break the contract (a missing column, a wrong type, ...).
    ParameterError
        When ``frame`` is not a DataFrame.
    DataError
        When ``frame`` already has a column scoring writes.
    """
    model, contract = _model_and_contract(model, contract)
    if not isinstance(frame, pd.DataFrame):
        raise ParameterError(f"score_frame needs a pandas DataFrame; got {type(frame).__name__}.")
    _check_no_clash(frame.columns, model.rules_.target)
    read = unmarked(categories_as_text(as_frame(frame, allow_empty=True), contract), contract)
    report = contract.check(read, target=model.rules_.target)
    drifted = [w for w in report.warnings if can_change_predictions(report, w)]
    if drifted:  # as predict warns of unseen values: the report holds the details
        warnings.warn(
            f"score_frame: {counted(len(drifted), 'drift warning')} in columns the rules "
            f"test, e.g. {drifted[0].message} (the returned report lists every warning; rows "
            "were scored).",
            LibreWarning,
            stacklevel=user_stacklevel(),
        )
    n_rows = len(frame)
    if n_rows == 0:
        empty = {
            "prediction": pd.Series([], dtype=object),
            "score": pd.Series([], dtype=float),
            "fired_rules": pd.Series([], dtype=object),
            "explanation": pd.Series([], dtype=object),
        }
        return frame.assign(**{k: v.set_axis(frame.index) for k, v in empty.items()}), report
    scores = _score(model, read, _rule_texts(model))
    patterns = np.empty(len(scores.patterns), dtype=object)
    patterns[:] = scores.patterns
    texts = np.asarray(scores.texts, dtype=object)
    scored = frame.assign(
        prediction=scores.prediction,
        score=scores.score,
        fired_rules=patterns[scores.inverse],
        explanation=texts[scores.inverse],
    )
    return scored, report


def categories_as_text(frame: pd.DataFrame, contract: DataContract) -> pd.DataFrame:
    """``frame`` with the columns the model reads as text categories but ``frame`` holds as
    booleans, numbers or pandas categories converted to text as the pipeline's training read
    converts them (``True`` → ``"True"``, ``3`` → ``"3"``; :func:`~.sources.read_types`), as
    `libre score` converts a Parquet file's: the three ways to score read one frame alike."""
    convert = [
        c.name
        for c in contract.columns
        if c.family == "string"
        and c.name in frame.columns
        and input_family(frame[c.name]) in ("bool", "number")
    ]
    if not convert:
        return frame
    integers = {n for n in convert if pd.api.types.is_integer_dtype(frame[n].dtype)}
    return read_types(frame.copy(), convert, integers)


def unmarked(frame: pd.DataFrame, contract: DataContract) -> pd.DataFrame:
    """``frame`` with the contract's missing-value markers of the columns the model reads as
    missing (the training files' own, ``missing_markers``, and each column's,
    ``column_markers``): a number matches in any spelling (``0``, ``0.0``, ``-0.0``), as
    pandas' ``na_values`` match when the training read its file, a text as written; a text
    column of numbers left then (a ``?`` beside numbers) is read as numbers where the contract
    reads numbers. ``frame`` itself when no marker applies."""
    out = None
    numeric = {c.name for c in contract.columns if c.kind == NUMERIC}
    for name in blank_is_missing(contract):  # "" is missing, as a CSV reader reads it
        series = frame.get(name)
        if series is None or not (
            pd.api.types.is_string_dtype(series) or pd.api.types.is_object_dtype(series)
        ):
            continue
        blank = series.eq("").fillna(False).to_numpy(dtype=bool)
        if blank.any():
            out = frame.copy() if out is None else out
            out[name] = series.mask(blank)
    frame = frame if out is None else out
    for name in contract.names:
        markers = (*contract.missing_markers, *contract.column_markers.get(name, ()))
        if not markers or name not in frame.columns:
            continue
        series = frame[name]
        if pd.api.types.is_numeric_dtype(series) and not pd.api.types.is_bool_dtype(series):
            values = series.to_numpy(dtype=float, na_value=np.nan)
            mask = np.zeros(len(series), dtype=bool)
            for number in _numbers(markers):
                mask |= values == number
        else:
            present = series.notna().to_numpy()
            text = series.astype(str).where(present)
            mask = present & text.isin(marker_texts(markers)).to_numpy()
            if name in numeric:
                numbers = _numbers(markers)
                parsed = pd.to_numeric(text.where(present & ~mask), errors="coerce").to_numpy()
                for number in numbers:
                    mask |= parsed == number
        if not mask.any():
            continue
        out = frame.copy() if out is None else out
        column = series.mask(mask)
        if name in numeric and not pd.api.types.is_numeric_dtype(column):
            with contextlib.suppress(TypeError, ValueError):  # else the contract names it
                column = pd.to_numeric(column)
        out[name] = column
    return frame if out is None else out


def blank_is_missing(contract: DataContract) -> list[str]:
    """The categorical columns whose training categories hold no empty text: there an empty
    text is a missing value (CSV readers, the training's included, read an empty field so),
    in a Parquet file or a frame alike."""
    return [
        c.name
        for c in contract.columns
        if c.kind != NUMERIC and (c.domain is None or "" not in c.domain)
    ]


def _numbers(markers) -> list[float]:
    """The markers that are numbers, as floats."""
    out = []
    for marker in markers:
        try:
            out.append(float(marker))
        except ValueError:
            continue
    return [n for n in out if not math.isnan(n)]


# --------------------------------------------------------------------------- the inputs


@dataclass(frozen=True)
class InputFile:
    path: Path
    format: str  # "csv" or "parquet"

    @property
    def name(self) -> str:
        return str(self.path)


def _file_format(path: Path) -> str | None:
    name = path.name.lower()
    if name.endswith(CSV_SUFFIXES):
        return "csv"
    if name.endswith(PARQUET_SUFFIXES):
        return "parquet"
    return None


@contextlib.contextmanager
def _writing(output: Path):
    """An OS error while writing the scores (a full disk, a folder without write permission)
    as one line naming ``output``, not the hidden temp file or a bare errno."""
    try:
        yield
    except OSError as exc:
        raise write_failed(output, exc) from exc


def list_inputs(
    inputs: str | os.PathLike | Sequence[str | os.PathLike],
    exclude: Iterable = (),
    warn_twice: bool = False,
) -> list[InputFile]:
    """The CSV / Parquet files to score: a file, a list of files, or a directory (searched
    recursively, sorted by path; names starting with '.' or '_' are skipped, like Spark's
    ``_SUCCESS``). Paths in ``exclude`` (e.g. the output file) are left out. A file named twice
    (or linked) is listed once, under its first name; ``warn_twice`` says so (the scoring
    itself, not its checks beforehand)."""
    items = [inputs] if isinstance(inputs, str | os.PathLike) else list(inputs)
    if not items:
        raise DataError("No input file given.")
    skip = {Path(p).resolve() for p in exclude}
    files: list[InputFile] = []
    for item in items:
        path = Path(item)
        if path.is_dir():
            found = [
                p
                for p in sorted(path.rglob("*"))
                if p.is_file() and _file_format(p) and not skipped_entry(p.relative_to(path).parts)
            ]
            found = [p for p in found if p.resolve() not in skip]
            inside = [p for p in skip if p.is_relative_to(path.resolve())]
            if inside and not skipped_entry(inside[0].relative_to(path.resolve()).parts):
                warnings.warn(
                    f"The output {str(inside[0])!r} is inside the input folder {str(path)!r}: "
                    "the next scoring of that folder will read it as an input (and refuse its "
                    "score columns). Write it elsewhere, or name it with a leading '_'.",
                    LibreWarning,
                    stacklevel=user_stacklevel(),
                )
            unread = unread_files(str(path), CSV_SUFFIXES + PARQUET_SUFFIXES)
            if unread is not None:
                warnings.warn(unread, LibreWarning, stacklevel=user_stacklevel())
            if not found:
                raise DataError(
                    f"Directory {str(path)!r} holds no CSV or Parquet file (looked for "
                    f"{', '.join(CSV_SUFFIXES + PARQUET_SUFFIXES)})."
                )
            files += [InputFile(p, _file_format(p)) for p in found]
        elif path.is_file():
            kind = _file_format(path)
            if kind is None:
                raise DataError(
                    f"Input {str(path)!r} is neither CSV nor Parquet (by its extension: "
                    f"{', '.join(CSV_SUFFIXES + PARQUET_SUFFIXES)})."
                )
            if path.resolve() in skip and len(items) == 1:
                raise DataError(
                    f"The output is the input file {str(path)!r}: write the scores to another "
                    "path (the input is read while the output is written)."
                )
            if path.resolve() not in skip:
                files.append(InputFile(path, kind))
        elif path.exists():
            raise DataError(
                f"Input {str(path)!r} is not a regular file (a pipe, a socket or a device): "
                "give CSV or Parquet files, or a folder of them."
            )
        else:
            raise DataError(f"Input {str(path)!r} does not exist.")
    seen: dict[Path, InputFile] = {}
    for file in files:  # the first name of a file given twice (or linked) is the one read
        seen.setdefault(file.path.resolve(), file)
    unique = list(seen.values())
    if warn_twice and len(unique) < len(files):
        twice = len(files) - len(unique)
        warnings.warn(
            f"{counted(twice, 'input file')} {'is' if twice == 1 else 'are'} the same file as "
            "another input (given twice, inside a folder given too, or a link to it): each "
            "file is scored once.",
            LibreWarning,
            stacklevel=user_stacklevel(),
        )
    if not unique:
        raise DataError("No input file left to score (the output file is not an input).")
    return unique


def _fixed_types(contract: DataContract) -> dict:
    """The Arrow type every file must give a column: float64 for the columns the model reads as
    numbers, string for text categories; other columns keep the type their files give."""
    import pyarrow as pa

    types = {}
    for column in contract.columns:
        if column.kind == NUMERIC:
            types[column.name] = pa.float64()
        elif column.family == "string":
            types[column.name] = pa.string()
    return types


class _Dialect(NamedTuple):
    """How a CSV file is written: separator (as Arrow's ParseOptions), decimal and thousands
    marks, encoding."""

    parse: Any
    decimal: str
    thousands: str | None
    encoding: str


def longest_line(path, chunk_bytes: int = 16 << 20) -> int:
    """The length in bytes of the file's longest line (of its text, for a compressed file),
    read in chunks: about a second per gigabyte."""
    import pyarrow as pa

    longest, run = 0, 0
    with pa.input_stream(str(path), compression="detect") as handle:  # a .csv.gz's text
        while chunk := handle.read(chunk_bytes):
            breaks = np.flatnonzero(np.frombuffer(chunk, dtype=np.uint8) == 10)
            if not breaks.size:
                run += len(chunk)
                continue
            gaps = np.diff(breaks)
            longest = max(longest, run + int(breaks[0]) + 1, int(gaps.max()) if gaps.size else 0)
            run = len(chunk) - int(breaks[-1]) - 1
    return max(longest, run)


class _Reader:
    """Reads input files as Arrow record batches, with the contract's CSV column types.

    Batches are pulled from the file when scoring asks for them, so memory holds a batch and
    the reader's buffers whatever the file's size: Parquet through ``ParquetFile.iter_batches``
    without pre-buffering (a pre-buffering reader keeps the column chunks of every row group it
    has read until it is closed) and with a buffered stream (pages are read as they are
    decoded, not a whole column chunk at once); CSV through ``pyarrow.csv.open_csv``, whose
    input reads a bounded number of blocks ahead. (A ``pyarrow.dataset`` scan reads ahead of a
    slower consumer, for CSV up to the whole file.)
    """

    def __init__(self, contract: DataContract):
        import pyarrow as pa
        import pyarrow.csv as pacsv

        self.fixed = _fixed_types(contract)
        self.text = [name for name, type_ in self.fixed.items() if type_ == pa.string()]
        self.blank_missing = blank_is_missing(contract)
        self.numeric = {c.name for c in contract.columns if c.kind == NUMERIC}
        self.read = {c.name for c in contract.columns}
        # each model column's markers: the training files' own (every column) and the column's,
        # matched as numbers in any spelling by _unmark, in CSV and Parquet files alike
        self.column_markers = {
            c.name: marker_texts(
                [*contract.missing_markers, *contract.column_markers.get(c.name, ())]
            )
            for c in contract.columns
            if contract.missing_markers or c.name in contract.column_markers
        }
        self.thousands = contract.thousands
        # the usual texts of a missing value, and those the training files used
        self.null_values = list(
            dict.fromkeys([*pacsv.ConvertOptions().null_values, *contract.missing_markers])
        )
        self.schemas: dict = {}
        self.dialects: dict[Path, _Dialect] = {}
        self.longest: dict[Path, int] = {}

    def dialect(self, file: InputFile) -> _Dialect:
        """The CSV file's separator, decimal and thousands marks as
        :func:`~libre_lib.ops.sources.csv_dialect` finds them (a file written with ";" and
        decimal commas, as spreadsheets in many locales write CSV, reads as it was trained),
        and its encoding (:func:`~libre_lib.ops.sources.text_encoding`)."""
        import pyarrow.csv as pacsv

        if file.path not in self.dialects:
            with self.errors(file):
                encoding = text_encoding(str(file.path))
                found = csv_dialect(str(file.path), encoding=encoding)
            thousands = found.get("thousands")
            if thousands is None and "sep" in found and "decimal" not in found:
                thousands = self.thousands  # as training read files of this kind
            self.dialects[file.path] = _Dialect(
                pacsv.ParseOptions(delimiter=found.get("sep", ",")),
                found.get("decimal", "."),
                thousands,
                encoding or "utf8",
            )
        return self.dialects[file.path]

    def read_options(self, file: InputFile, block_size: int, use_threads: bool = True):
        """pyarrow's ReadOptions for the CSV file, in its encoding, with blocks that hold its
        longest line (a row is never split between blocks: one cell of 2 MB failed with
        "straddling object straddles two block boundaries", a file training read)."""
        import pyarrow.csv as pacsv

        encoding = self.dialect(file).encoding
        if file.path not in self.longest:
            with self.errors(file):
                self.longest[file.path] = longest_line(file.path)
        fitting = 1 << (2 * self.longest[file.path]).bit_length()
        block_size = max(block_size, min(fitting, _CSV_MOST_BLOCK_BYTES))
        return pacsv.ReadOptions(block_size=block_size, use_threads=use_threads, encoding=encoding)

    def dataset(self, file: InputFile):
        import pyarrow.csv as pacsv
        import pyarrow.dataset as ds

        fmt = "parquet"
        if file.format == "csv":
            parse, decimal, *_ = self.dialect(file)
            # Discovery infers every type, so a bad value cannot hide a missing column.
            fmt = ds.CsvFileFormat(
                parse_options=parse,
                read_options=self.read_options(file, _CSV_BLOCK_BYTES),
                convert_options=pacsv.ConvertOptions(
                    strings_can_be_null=True, null_values=self.null_values, decimal_point=decimal
                ),
            )
        with self.errors(file):
            return ds.dataset(str(file.path), format=fmt)

    def schema(self, file: InputFile):
        """The file's column types: Parquet's own; a CSV's as guessed from its first block,
        except that a column the model does not read stays text, as written, where the guess
        would change what it holds: dates and times, and whole numbers written with leading
        zeros (an id such as ``00042``)."""
        import pyarrow as pa

        if file.path not in self.schemas:
            schema = self.dataset(file).schema
            if file.format == "csv":
                loose = [f for f in schema if f.name not in self.read]
                text = {f.name for f in loose if pa.types.is_temporal(f.type)}
                whole = [f.name for f in loose if pa.types.is_integer(f.type)]
                text |= self._leading_zeros(file, whole) if whole else set()
                schema = pa.schema(
                    [pa.field(f.name, pa.string()) if f.name in text else f for f in schema]
                )
            self.schemas[file.path] = schema
        return self.schemas[file.path]

    def _leading_zeros(self, file: InputFile, columns: list[str]) -> set[str]:
        """Those of the CSV's ``columns`` whose first block writes a number with a leading zero
        (``007``)."""
        import pyarrow as pa
        import pyarrow.compute as pc
        import pyarrow.csv as pacsv

        parse = self.dialect(file).parse
        convert = pacsv.ConvertOptions(
            column_types=dict.fromkeys(columns, pa.string()), include_columns=columns
        )
        read = self.read_options(file, _CSV_BLOCK_BYTES, use_threads=False)
        with (
            self.errors(file),
            pacsv.open_csv(
                str(file.path), read_options=read, parse_options=parse, convert_options=convert
            ) as source,
        ):
            try:
                block = source.read_next_batch()
            except StopIteration:
                return set()
        return {
            name
            for name in columns
            if pc.any(pc.match_substring_regex(block.column(name), r"^[+-]?0[0-9]")).as_py()
        }

    def n_rows(self, file: InputFile) -> int | None:
        if file.format != "parquet":
            return None
        with self.errors(file):
            return self.dataset(file).count_rows()

    @contextlib.contextmanager
    def stream(self, file: InputFile, batch_rows: int):
        """(schema, an iterator of record batches of at most ``batch_rows`` rows), read on
        demand; the file is closed on leaving the context."""
        import pyarrow as pa
        import pyarrow.csv as pacsv
        import pyarrow.parquet as pq

        with self.errors(file):
            if file.format == "parquet":
                source = pq.ParquetFile(
                    str(file.path), pre_buffer=False, buffer_size=_PARQUET_BUFFER_BYTES
                )
                batches = source.iter_batches(batch_size=batch_rows)
                schema = source.schema_arrow
            else:
                # The types discovery guessed from the first block, then the contract's; a
                # column with markers of its own as text, which _unmark reads
                types = {f.name: f.type for f in self.schema(file)} | self.fixed
                types |= dict.fromkeys(self._marked(file), pa.string())
                parse, decimal, *_ = self.dialect(file)
                convert = pacsv.ConvertOptions(
                    column_types=types,
                    strings_can_be_null=True,
                    null_values=self.null_values,
                    decimal_point=decimal,
                )
                source = pacsv.open_csv(
                    str(file.path),
                    # streaming: smaller blocks (the reader's read-ahead is counted in blocks)
                    # and one thread (the reader then counts rows, so an error names its line)
                    read_options=self.read_options(file, _CSV_STREAM_BLOCK_BYTES, False),
                    parse_options=parse,
                    convert_options=convert,
                )
                batches, schema = source, source.schema
        try:
            yield schema, batches
        finally:
            source.close()

    def batches(self, file: InputFile, batch_rows: int) -> Iterator:
        """Tables of exactly ``batch_rows`` rows (the last one of the file may be shorter),
        with the file's own column types."""
        import pyarrow as pa

        pending, n_pending = [], 0
        with self.stream(file, batch_rows) as (schema, batches), self.errors(file):
            for batch in batches:
                if not batch.num_rows:
                    continue
                pending.append(batch)
                n_pending += batch.num_rows
                while n_pending >= batch_rows:
                    table = pa.Table.from_batches(pending, schema=schema)
                    yield self._as_read(table.slice(0, batch_rows), file)
                    rest = table.slice(batch_rows)
                    pending, n_pending = rest.to_batches(), rest.num_rows
            if n_pending:
                yield self._as_read(pa.Table.from_batches(pending, schema=schema), file)

    def _as_read(self, table, file: InputFile):
        """``table`` as the training read its data: markers of a missing value as missing
        (:meth:`_unmark`), and the columns the model reads as text categories as text."""
        return self._as_text(self._unmark(table, file), file)

    def _as_text(self, table, file: InputFile):
        """A Parquet file's columns that the model reads as text categories but the file
        stores otherwise (booleans, numbers, pandas categories) converted to text as the
        pipeline's training read converts them (:func:`~libre_lib.ops.sources.read_types`:
        ``True`` → ``"True"``, ``3`` → ``"3"``), so a file of the training data's own types
        scores. (A CSV's are read as text already.)"""
        import pyarrow as pa

        if file.format != "parquet":
            return table
        import pyarrow.compute as pc

        for name in self.text:
            index = table.schema.get_field_index(name)
            if index < 0 or pa.types.is_string(table.schema.field(index).type):
                continue
            column_table = table.select([name])
            frame = read_types(
                column_table.to_pandas(), [name], integer_fields(column_table.schema)
            )
            column = pa.array(frame[name], type=pa.string(), from_pandas=True)
            # without pandas' record of the file's dtypes, which would turn the text back
            table = table.set_column(index, name, column).replace_schema_metadata(None)
        for name in self.blank_missing:  # "" is missing, as the CSV reader reads an empty field
            index = table.schema.get_field_index(name)
            if index >= 0 and pa.types.is_string(table.schema.field(index).type):
                column = table.column(index)
                blank = pc.fill_null(pc.equal(column, ""), False)
                table = table.set_column(
                    index, name, pc.if_else(blank, pa.scalar(None, pa.string()), column)
                )
        return table

    def _marked(self, file: InputFile) -> list[str]:
        """The file's columns read as text and converted by :meth:`_unmark`: those with
        missing-value markers of their own, and in a CSV with points between thousands
        (4.299,90, which Arrow's reader cannot take) the columns the model reads as numbers."""
        import pyarrow as pa

        grouped = file.format == "csv" and self.dialect(file).thousands is not None
        return [
            n
            for n in self.schema(file).names
            if n in self.column_markers
            or (grouped and n in self.fixed and pa.types.is_floating(self.fixed[n]))
        ]

    def _unmark(self, table, file: InputFile):
        """``table`` with each column's own missing-value markers as missing (compared as
        text, as the training read them), in the column's type (a CSV's marked columns are
        read as text)."""
        import pyarrow as pa
        import pyarrow.compute as pc

        for name in self._marked(file):
            index = table.schema.get_field_index(name)
            column = table.column(index)
            text = column if pa.types.is_string(column.type) else pc.cast(column, pa.string())
            markers = self.column_markers.get(name, [])
            marked = pc.is_in(text, value_set=pa.array(markers, pa.string()))
            column = pc.if_else(marked, pa.scalar(None, column.type), column)
            wanted = self.fixed.get(name, self.schema(file).field(name).type)
            if pa.types.is_floating(wanted) and column.type in (pa.float32(), pa.float16()):
                wanted = column.type  # compared in its own type, as predict compares it
            numbers = (
                file.format == "csv"
                and pa.types.is_string(column.type)
                and pa.types.is_floating(wanted)
            )
            if numbers:  # " 93 ": pandas reads a padded number, the markers as written
                column = pc.utf8_trim_whitespace(column)
            thousands = self.dialect(file).thousands if numbers else None
            if thousands is not None:  # 4.299,90: the points go
                column = pc.replace_substring(column, thousands, "")
            if numbers and self.dialect(file).decimal == ",":
                # numbers written with decimal commas, as the reader would take them
                column = pc.replace_substring(column, ",", ".")
            if column.type != wanted:
                try:
                    column = cast_column(column, wanted)
                except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as exc:
                    raise self._unread(file, name, column, wanted, exc) from None
            if pa.types.is_integer(column.type) or pa.types.is_floating(column.type):
                for number in _numbers(markers):  # -0.0, 0.00 or 0e0 for 0, as pandas reads
                    equal = pc.fill_null(pc.equal(pc.cast(column, pa.float64()), number), False)
                    column = pc.if_else(equal, pa.scalar(None, column.type), column)
            table = table.set_column(index, name, column)
        return table

    def _unread(self, file: InputFile, name: str, column, wanted, exc: BaseException):
        """The error for a marked column whose values do not read as ``wanted``: the first
        such value, and the fix when it is a number written for people ("33,6", "1,120")."""
        import pyarrow as pa

        if not pa.types.is_string(column.type) or not (
            pa.types.is_floating(wanted) or pa.types.is_integer(wanted)
        ):
            return DataError(f"Could not read column {name!r} of {file.name} as {wanted}: {exc}.")
        values = column.to_pandas()
        parsed = pd.to_numeric(values, errors="coerce")
        bad = values[values.notna() & parsed.isna()]
        value = str(bad.iloc[0]) if len(bad) else ""
        said = f"column {name!r}: expected numbers, found {value!r}" + _written_hint(value)
        return _wrong_type(file, name, value, said)

    @contextlib.contextmanager
    def errors(self, file: InputFile):
        """Turn Arrow's read errors into ours, naming the file (and column, for CSV)."""
        import pyarrow as pa

        try:
            yield
        except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError, OSError) as exc:
            raise self._error(file, exc) from None

    def _error(self, file: InputFile, exc: BaseException) -> Exception:
        message = str(exc).strip()
        hit = re.search(
            r"In CSV column #(\d+): Row #(\d+): CSV conversion error to (\w+): invalid value "
            r"'(.*)'",
            message,
        )
        if hit and file.format == "csv":
            index, line, target, value = int(hit[1]), int(hit[2]), hit[3], hit[4]
            known = self.dialects.get(file.path)  # not dialect(): it may be what failed
            header = _csv_header(file.path, known.parse.delimiter if known else ",")
            column = header[index] if index < len(header) else f"#{index}"
            if column in self.numeric:
                said = f"column {column!r}: expected numbers, found {value!r} (line {line})"
                if known is not None and known.decimal == "," and _point_decimal(value):
                    said += (
                        ": this file writes decimals with a comma (33,6) elsewhere, where this "
                        "value has a point; write every number of a file alike"
                    )
                else:
                    said += _written_hint(value)
                return _wrong_type(file, column, value, said)
            return DataError(
                f"Could not read {file.name}: column {column!r} changes type at line {line} "
                f"(value {value!r} is not {target}; the type was guessed from the first rows). "
                "Write that column with one type, or convert the file to Parquet."
            )
        if file.format == "csv" and "Empty CSV file" in message:
            return DataError(f"{file.name} is empty: a CSV file to score needs a header row.")
        repeated = re.search(r"CSV file contained multiple columns named (.+?)(?:$|\n)", message)
        if file.format == "csv" and repeated:
            return DataError(
                f"{file.name}'s header names column {repeated[1]!r} twice: rename one so that "
                "each name means one column."
            )
        if file.format == "parquet" and "duplicate field names" in message:
            twice = _repeated_parquet_names(file.path)
            if twice:
                return DataError(
                    f"{file.name} names column {twice[0]!r} twice: write it with one name per "
                    "column, so that each name means one column."
                )
        fields = re.search(r"Row #(\d+): Expected (\d+) columns, got (\d+)", message)
        if file.format == "csv" and fields:
            line, expected, got = fields.groups()
            return DataError(
                f"Could not read {file.name} as CSV: row {line} has "
                f"{counted(int(got), 'value')} where the header names {expected} columns "
                "(a row cut short or run on, or a separator inside a value that is not "
                "quoted; the header is row 1). Fix or remove that row."
            )
        kind = "CSV" if file.format == "csv" else "Parquet"
        return DataError(
            f"Could not read {file.name} as {kind}: {_arrow_reason(message)}. Check that it "
            f"is a {kind} file "
            + ("with a header row and one value per column in every row." if kind == "CSV"
               else "(pyarrow.parquet.read_table reads it).")
        )


#: The layers Arrow wraps a read error in, before its reason.
_ARROW_LAYERS = re.compile(
    r"Error creating dataset\. Could not read schema from '.*?'\. Is this a '\w+' file\?: "
    r"|Could not open \w+ input source '.*?': |Invalid: "
)


def _arrow_reason(message: str) -> str:
    """An Arrow read error's reason without its layers ("Error creating dataset. Could not
    read schema from ...: Could not open CSV input source ...: Invalid: ..."), its first line."""
    lines = _ARROW_LAYERS.sub("", message).strip().splitlines()
    return (lines[0] if lines else message).rstrip(".")


def _repeated_parquet_names(path) -> list[str]:
    """The column names a Parquet file's schema holds more than once (none if unreadable)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        names = pq.read_schema(path).names
    except (OSError, pa.ArrowException):
        return []
    return [n for n in dict.fromkeys(names) if names.count(n) > 1]


def _written_hint(value: str) -> str:
    """What a number written for people needs, as the end of an error ("" otherwise)."""
    if re.fullmatch(r"\s*[+-]?\d{1,3}(,\d{3})+(\.\d+)?\s*", value):
        return (
            ": a number with a thousands separator; the file's other numbers decide how it "
            "reads, so write every number of a file alike, or without separators"
        )
    if re.fullmatch(r"\s*[+-]?\d*,\d+\s*", value):
        return (
            ": a number with a decimal comma, in a file read with decimal points (write its "
            "numbers with points, or every one with a comma and ';' between fields)"
        )
    return ""


def _wrong_type(file: InputFile, column: str, value: str, said: str) -> ContractViolation:
    """The contract violation of one value that does not read as the column's numbers."""
    issue = ContractIssue(column, "wrong_type", "error", None, (value,), said)
    error = ContractViolation(
        f"Input data breaks the model's data contract in {file.name} (1 problem):\n"
        f"  - {issue.message}"
    )
    error.report = ContractReport(0, (issue,))
    return error


def _point_decimal(value: str) -> bool:
    """Whether ``value`` is a number written with a decimal point ("0.627")."""
    return re.fullmatch(r"\s*[+-]?\d*\.\d+\s*", value) is not None


def _csv_header(path: Path, delimiter: str = ",") -> list[str]:
    import pyarrow as pa

    try:
        with pa.input_stream(str(path), compression="detect") as stream:
            head = stream.read(1 << 20).decode("utf-8", errors="replace")
    except (OSError, pa.ArrowException):
        return []
    rows = csv.reader(io.StringIO(head), delimiter=delimiter)
    return next(rows, [])


def _input_schema(
    reader: _Reader, files: list[InputFile], contract: DataContract, target: str | None = None
):
    """The output schema of the input columns: every file must have the contract's columns.
    Numeric model columns become float64 (integers stay integers when every file is Parquet
    and stores them so) and text categories strings (after the contract has checked each
    batch's values); other columns take the files' common type (:meth:`_Reader.schema`: a
    CSV's dates and zero-padded numbers as text), or text where the files' types disagree."""
    import pyarrow as pa

    schemas, problems = [], []
    for file in files:
        schema = reader.schema(file)
        _check_no_clash(schema.names, target, file.name)
        for issue in contract.missing_columns(schema.names, where=file.name, target=target):
            problems.append(issue.message)
        schemas.append(schema)
    if problems:
        raise ContractViolation(
            f"Input data breaks the model's data contract ({counted(len(problems), 'problem')}):\n"
            + "\n".join(f"  - {p}" for p in problems)
        )
    fixed = _fixed_types(contract) | _integer_types(files, schemas, contract)
    names = list(dict.fromkeys(name for schema in schemas for name in schema.names))
    fields = []
    for name in names:
        if name in fixed:
            fields.append(pa.field(name, fixed[name]))
            continue
        own = [pa.schema([s.field(name)]) for s in schemas if name in s.names]
        try:
            fields.append(pa.unify_schemas(own, promote_options="permissive").field(name))
        except (pa.ArrowInvalid, pa.ArrowTypeError) as exc:
            if name in reader.read:  # a column the model reads: its type must agree
                raise DataError(
                    f"The input files disagree on the type of column {name!r} ({exc}): write "
                    "every file with the same type per column."
                ) from None
            fields.append(pa.field(name, pa.string()))  # not read: every file's values as text
    schema = pa.schema(fields)
    _check_no_clash(schema.names, target)
    return schema


def _integer_types(files: list[InputFile], schemas: list, contract: DataContract) -> dict:
    """The numeric model columns that every input file (all Parquet) stores as integers keep an
    integer type in the output: their common one (int32 and int64 give int64), unless a file
    has uint64, which no signed type holds. CSV columns stay float64: a later block may hold an
    empty field."""
    import pyarrow as pa

    if any(file.format != "parquet" for file in files):
        return {}
    types = {}
    for column in contract.columns:
        if column.kind != NUMERIC:
            continue
        fields = [schema.field(column.name) for schema in schemas]
        if not all(pa.types.is_integer(f.type) for f in fields):
            continue
        if any(f.type == pa.uint64() for f in fields) and len({f.type for f in fields}) > 1:
            continue
        common = pa.unify_schemas([pa.schema([f]) for f in fields], promote_options="permissive")
        types[column.name] = common.field(column.name).type
    return types


def cast_column(column, wanted):
    """An Arrow ``column`` cast to the type ``wanted``; a float32 or float16 column to float64
    through the shortest decimal of each value (:func:`~libre_lib.inputs.decimal_floats`), as
    ``predict`` reads it: a float32 Parquet column's 27.9 stays 27.9, not the
    27.899999618530273 a cast gives, which fell below the cut point 27.9."""
    import pyarrow as pa

    narrow = {pa.float32(): np.float32, pa.float16(): np.float16}.get(column.type)
    if narrow is None or not pa.types.is_float64(wanted):
        return column.cast(wanted)
    values = column.to_pandas().to_numpy(dtype=narrow, na_value=np.nan)
    nulls = np.asarray(column.is_null(), dtype=bool)  # a NaN stays NaN, a null null
    return pa.array(decimal_floats(values), pa.float64(), mask=nulls)


def _conform(table, schema, file: InputFile):
    """``table`` with ``schema``'s columns, order and types (absent columns as nulls)."""
    import pyarrow as pa

    arrays = []
    for field_ in schema:
        if field_.name not in table.column_names:
            arrays.append(pa.nulls(table.num_rows, field_.type))
            continue
        column = table.column(field_.name)
        if column.type != field_.type:
            try:
                column = cast_column(column, field_.type)
            except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError) as exc:
                raise DataError(
                    f"Could not convert column {field_.name!r} of {file.name} from "
                    f"{column.type} to {field_.type}: {exc}"
                ) from None
        arrays.append(column)
    return pa.Table.from_arrays(arrays, schema=schema)


# --------------------------------------------------------------------------- scoring files


@dataclass(frozen=True)
class InputCheck:
    """The outcome of ``check_inputs``: the files, and the contract report of their samples."""

    files: tuple[str, ...]
    columns: tuple[str, ...]
    total_rows: int | None
    sample: ContractReport

    def to_dict(self) -> dict:
        return {
            "files": list(self.files),
            "columns": list(self.columns),
            "total_rows": self.total_rows,
            "sample": self.sample.to_dict(),
        }


def check_inputs(
    model,
    inputs,
    contract: DataContract | None = None,
    *,
    sample_rows: int = DEFAULT_SAMPLE_ROWS,
    exclude: Iterable = (),
) -> InputCheck:
    """Check every input file's columns and the first ``sample_rows`` rows of each against the
    contract before scoring anything; raises ``ContractViolation`` naming file, column and
    problem. Cheap: Parquet footers, the first CSV block, one small batch per file."""
    model, contract = _model_and_contract(model, contract)
    _check_rows(sample_rows, "sample_rows")
    files = list_inputs(inputs, exclude)
    reader = _Reader(contract)
    schema = _input_schema(reader, files, contract, model.rules_.target)
    report = ContractReport(0, missing_rate_tolerance=contract.missing_rate_tolerance)
    for file in files:
        for table in reader.batches(file, sample_rows):
            frame = table.select(contract.names).to_pandas()
            part = contract.check(frame, raise_errors=False, empty_columns=False)
            part.raise_for_errors(f"{file.name} (first {len(frame)} rows)")
            report = report.merge(part)
            break
    counts = [reader.n_rows(f) for f in files]
    total = None if any(c is None for c in counts) else int(sum(counts))
    return InputCheck(tuple(f.name for f in files), tuple(schema.names), total, report)


@dataclass(frozen=True)
class ScoringSummary:
    """What ``score_files`` did: rows, speed, drift (``report``), predictions per rule."""

    output: str
    files: tuple[str, ...]
    rows: int
    batches: int
    seconds: float
    n_positive: int
    positive_class: object
    rule_counts: tuple[int, ...]
    rule_texts: tuple[str, ...]
    report: ContractReport
    described_class: object = None  # the class the rules name, when not the prediction's
    model_sha256: str | None = None  # the output's metadata says it too (:func:`provenance`)

    @property
    def rows_per_second(self) -> float:
        return self.rows / self.seconds if self.seconds > 0 else math.inf

    @property
    def warnings(self) -> tuple[ContractIssue, ...]:
        return self.report.warnings

    def _tested(self, issue) -> bool:
        """Whether a drift warning can change predictions (:func:`can_change_predictions`)."""
        return can_change_predictions(self.report, issue)

    def to_dict(self) -> dict:
        positive = self.positive_class
        if isinstance(positive, np.generic):
            positive = positive.item()
        return {
            "output": self.output,
            "files": list(self.files),
            "rows": self.rows,
            "batches": self.batches,
            "seconds": round(self.seconds, 3),
            "rows_per_second": round(self.rows_per_second, 1) if self.rows else 0.0,
            "n_positive": self.n_positive,
            "positive_rate": self.n_positive / self.rows if self.rows else 0.0,
            "positive_class": positive,
            "described_class": None if self.described_class is None else str(self.described_class),
            "rules": [
                {"index": i, "rule": t, "rows": n}
                for i, (t, n) in enumerate(zip(self.rule_texts, self.rule_counts, strict=True))
            ],
            "warnings": [{**w.to_dict(), "tested": self._tested(w)} for w in self.warnings],
            "report": self.report.to_dict(),
            "model_sha256": self.model_sha256,
        }


def _check_rows(value, what: str) -> None:
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < 1:
        raise ParameterError(f"{what} must be a whole number >= 1; got {value!r}.")


def _text_slices(scores: _Scores, budget: int) -> list[tuple[int, int]]:
    """Row ranges of a batch whose explanations take at most about ``budget`` bytes each.

    An explanation joins the texts of every rule that fires; with a hundred long rules it
    reaches kilobytes per row, and one Arrow string column per batch would need gigabytes
    (beyond 2 GiB Arrow refuses it). Ordinary batches are one range.
    """
    n_rows = len(scores.inverse)
    sizes = np.array([len(t.encode("utf-8")) for t in scores.texts], dtype=np.int64)
    per_row = sizes[scores.inverse]
    if n_rows == 0 or int(per_row.sum()) <= budget:
        return [(0, n_rows)]
    chunk = np.cumsum(per_row) // max(budget, 1)
    starts = np.concatenate(([0], np.flatnonzero(np.diff(chunk)) + 1))
    stops = np.concatenate((starts[1:], [n_rows]))
    return [(int(a), int(b)) for a, b in zip(starts, stops, strict=True)]


def _score_columns(scores: _Scores, schema, start: int, stop: int):
    """The four score columns of rows ``start:stop`` as Arrow arrays of the output schema's
    types."""
    import pyarrow as pa

    fired = scores.fired[start:stop]
    counts = fired.sum(axis=1)
    offsets = np.zeros(len(counts) + 1, dtype=np.int32)
    np.cumsum(counts, out=offsets[1:])
    rule_index = np.nonzero(fired)[1].astype(np.int32)
    texts = pa.array(scores.texts, type=pa.string())
    return [
        pa.array(scores.prediction[start:stop], type=schema.field("prediction").type),
        pa.array(scores.score[start:stop], type=pa.float64()),
        pa.ListArray.from_arrays(pa.array(offsets), pa.array(rule_index)),
        texts.take(pa.array(scores.inverse[start:stop].astype(np.int32))),
    ]


def _label_type(model):
    import pyarrow as pa

    return pa.array(list(model.classes_)).type


def check_output(output_path: str | os.PathLike) -> Path:
    """The scoring output as a path, refused when it is a folder or named like another format
    (scoring writes Parquet). A symbolic link stands for the file it points to, which is
    replaced (atomically, beside it): renamed onto the link, the output replaced the link by
    a file and the file it named, which others read, kept the old scores."""
    output = Path(output_path)
    if output.is_symlink():
        output = Path(os.path.realpath(output))
    if output.is_dir():
        raise DataError(f"Output {str(output)!r} is a directory; give a .parquet file path.")
    if not output.name.lower().endswith(PARQUET_SUFFIXES):
        raise DataError(
            f"Output {str(output)!r} would be a Parquet file under another name: scoring writes "
            f"Parquet, so name it {output.stem}.parquet (names ending in "
            f"{', '.join(PARQUET_SUFFIXES)})."
        )
    blocking = next((p for p in output.parents if p.exists() and not p.is_dir()), None)
    if blocking is not None:
        raise DataError(
            f"Output {str(output)!r} cannot be written: {str(blocking)!r} is a file, not a "
            "folder. Choose another output path."
        )
    return output


#: Where the contract of a model without a contract.json comes from, and what it lacks.
MODEL_ALONE = "derived from the model alone"
MODEL_ALONE_MISSES = (
    "categories and missing bins are checked; training ranges, missing rates and the training "
    "data's own missing-value markers (a spec's na_values) are not known, so the inputs are "
    "read without those markers"
)

#: The level of the test by which ``fail_on_drift`` refuses values outside the training range
#: (:func:`beyond_chance`).
RANGE_DRIFT_LEVEL = 0.001


def beyond_chance(observation: ColumnObservation, n_training_rows: int | None) -> bool:
    """Whether a column's values outside the training range are more than rows drawn as the
    training rows were would give by chance (the holdout rows of the training data reach
    beyond its extremes too: one value in 768 beyond pima's range is no drift). Under that
    null, the share of values beyond both extremes of n training values is Beta(2, n - 1)
    distributed (the two outer spacings of n uniform order statistics), so the count among m
    new values is beta-binomial: a one-sided test at :data:`RANGE_DRIFT_LEVEL` (ties only make
    it more cautious). Without the number of training rows (a contract derived from the model
    alone), any such value counts."""
    if not n_training_rows:
        return True
    from scipy.stats import betabinom

    present = n_training_rows * (1.0 - float(observation.training_missing_rate or 0.0))
    n_out = observation.n_below + observation.n_above
    n_values = observation.n_rows - observation.n_missing
    if present < 2 or n_values < 1:
        return True
    return bool(betabinom.sf(n_out - 1, n_values, 2.0, present - 1.0) < RANGE_DRIFT_LEVEL)


def _raise_for_drift(
    report: ContractReport, where: str, n_training_rows: int | None = None
) -> None:
    """``fail_on_drift``: refuse drift in a column the rules test (unseen categories, values
    out of range beyond chance: :func:`beyond_chance`, missing values beyond training's),
    naming each; in a column they test only for a missing value, only its missing values."""
    drift = [
        issue
        for observation in report.observations.values()
        for issue in observation.warnings(report.missing_rate_tolerance)
        if can_change_predictions(report, issue)
        and (issue.problem != OUT_OF_RANGE or beyond_chance(observation, n_training_rows))
    ]
    if drift:
        lines = [f"Drift in columns the rules test, in {where} (fail_on_drift; nothing written):"]
        lines += [f"  - {issue.message}" for issue in drift]
        error = ContractViolation("\n".join(lines))
        error.report = report
        raise error


#: The key-value metadata of a scoring output that says which model scored it.
PROVENANCE_KEYS = ("libre.model_sha256", "libre.version", "libre.scored_at")


def provenance(model, model_sha256: str | None = None) -> dict[str, str]:
    """The scoring output's metadata (:data:`PROVENANCE_KEYS`): the sha256 of the model file
    (``model_sha256``: a registered version's, whose id ends with its first 8 hex digits),
    else of the model's JSON as this release writes it (a model registered by an earlier
    release writes another ``library_version``), the library version and the time of
    scoring (UTC)."""
    from datetime import UTC, datetime

    from .._version import __version__
    from .artifacts import fingerprint_bytes

    values = (
        model_sha256 or fingerprint_bytes(model.to_json().encode("utf-8")),
        __version__,
        datetime.now(UTC).isoformat(timespec="seconds"),
    )
    return dict(zip(PROVENANCE_KEYS, values, strict=True))


def score_files(
    model,
    inputs,
    output_path: str | os.PathLike,
    *,
    batch_rows: int = DEFAULT_BATCH_ROWS,
    contract: DataContract | None = None,
    progress: Callable[[int, int | None], None] | None = None,
    fail_on_drift: bool = False,
    model_sha256: str | None = None,
) -> ScoringSummary:
    """Score CSV / Parquet files in batches into one Parquet file, written atomically.

    A hidden temp file in the output's folder is written and renamed on success, and removed
    on any failure, so ``output_path`` is either the old file or the complete new one.

    Parameters
    ----------
    model : LibreClassifier or path-like
        A fitted model, or the path of its ``model.json``.
    inputs : path-like or sequence of path-like
        A file, a list of files, or a directory (searched recursively; see
        :func:`list_inputs`).
    output_path : path-like
        The Parquet file to write: every input column plus ``prediction``, ``score``,
        ``fired_rules`` and ``explanation``.
    batch_rows : int, default DEFAULT_BATCH_ROWS
        Rows read, scored and written at a time (memory stays flat whatever the input size).
    contract : DataContract, optional
        By default the one saved with a model file (:func:`find_contract`, as ``libre score``).
    progress : callable, optional
        Called as ``progress(rows_done, total_rows or None)`` after each batch.
    fail_on_drift : bool, default False
        Refuse drift in a column the rules test instead of warning of it.
    model_sha256 : str, optional
        The sha256 of the model file the model was read from, for the output's metadata
        (:func:`provenance`); by default that of ``model`` when it is a path, else of the
        model's JSON as this release writes it.

    Returns
    -------
    ScoringSummary
        Rows, time, predictions per rule and the contract report (``to_dict()`` for JSON,
        :func:`render_scoring_report` for Markdown).

    Raises
    ------
    ContractViolation
        When a batch breaks the contract, or drifts with ``fail_on_drift`` (nothing written).
    DataError
        When an input cannot be read, or the output path is not a new or replaceable
        Parquet file.
    ParameterError
        When ``batch_rows`` or ``fail_on_drift`` is not valid.
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    started = time.perf_counter()
    if model_sha256 is None and isinstance(model, str | os.PathLike):
        from .artifacts import fingerprint_file

        model_sha256 = fingerprint_file(model)
    model, contract = _model_and_contract(model, contract)
    _check_rows(batch_rows, "batch_rows")
    if not isinstance(fail_on_drift, bool | np.bool_):
        raise ParameterError(f"fail_on_drift must be True or False; got {fail_on_drift!r}.")
    output = check_output(output_path)
    files = list_inputs(inputs, exclude=[output], warn_twice=True)
    reader = _Reader(contract)
    schema = _input_schema(reader, files, contract, model.rules_.target)
    counts = [reader.n_rows(f) for f in files]
    total = None if any(c is None for c in counts) else int(sum(counts))
    out_schema = schema
    for name, type_ in zip(
        SCORE_COLUMNS,
        (_label_type(model), pa.float64(), pa.list_(pa.int32()), pa.string()),
        strict=True,
    ):
        out_schema = out_schema.append(pa.field(name, type_))
    stamp = provenance(model, model_sha256)
    out_schema = out_schema.with_metadata({**(out_schema.metadata or {}), **stamp})

    texts = _rule_texts(model)
    rule_counts = np.zeros(len(texts), dtype=np.int64)
    report = ContractReport(0, missing_rate_tolerance=contract.missing_rate_tolerance)
    rows = batches = n_positive = 0
    with _writing(output):
        output.parent.mkdir(parents=True, exist_ok=True)
    temp = temp_path(output)
    writer = None
    try:
        with _writing(output):
            writer = pq.ParquetWriter(str(temp), out_schema)
        for file in files:
            done, whole = 0, None  # rows of this file, and what they held
            for table in reader.batches(file, batch_rows):
                frame = table.select(contract.names).to_pandas()
                part = contract.check(frame, raise_errors=False, empty_columns=False)
                where = f"{file.name} (its rows {done + 1} to {done + len(frame)})"
                part.raise_for_errors(where)
                if fail_on_drift:
                    _raise_for_drift(part, where, contract.n_training_rows)
                done += len(frame)
                scores = _score(model, frame, texts)
                table = _conform(table, schema, file)
                for start, stop in _text_slices(scores, EXPLANATION_BYTES):
                    rows_out = table.slice(start, stop - start)
                    columns = _score_columns(scores, out_schema, start, stop)
                    for name, column in zip(SCORE_COLUMNS, columns, strict=True):
                        rows_out = rows_out.append_column(name, column)
                    with _writing(output):
                        writer.write_table(rows_out)
                report = report.merge(part)
                whole = part if whole is None else whole.merge(part)
                rule_counts += scores.fired.sum(axis=0)
                n_positive += int(scores.fired.any(axis=1).sum())
                rows += table.num_rows
                batches += 1
                if progress is not None:
                    progress(rows, total)
            if whole is not None:  # a column the rules test, empty in the whole file
                ContractReport(whole.n_rows, tuple(contract.empty_columns(whole))).raise_for_errors(
                    file.name
                )
        with _writing(output):
            writer.close()
            writer = None
            fsync_file(temp)
            commit_temp(temp, output)
    except BaseException:
        if writer is not None:
            with contextlib.suppress(Exception):
                writer.close()
        unlink_quietly(temp)
        raise
    return ScoringSummary(
        output=str(output),
        files=tuple(f.name for f in files),
        rows=rows,
        batches=batches,
        seconds=time.perf_counter() - started,
        n_positive=n_positive,
        positive_class=model.classes_[model._positive_index()],
        rule_counts=tuple(int(c) for c in rule_counts),
        rule_texts=tuple(texts),
        report=report,
        described_class=_described_class(model),
        model_sha256=stamp[PROVENANCE_KEYS[0]],
    )


def _described_class(model):
    """The class the rules name when the predictions do not (one class against the rest: the
    predictions are True / False), else None."""
    positive = model.classes_[model._positive_index()]
    named = model.rules_.positive_class
    return None if str(named) == str(positive) else named


def predicted_text(summary: Mapping) -> str:
    """``predicted <class>`` for a scoring summary (``to_dict``): the prediction's label, and
    the class the rules name when it differs (``predicted True (setosa)``)."""
    described = summary.get("described_class")
    return f"predicted {set_item_text(summary['positive_class'])}" + (
        f" ({set_item_text(described)})" if described is not None else ""
    )


# --------------------------------------------------------------------------- the report


def _cell(value) -> str:
    """Text from the data or the model as a table cell: every character Markdown could act on
    escaped (a column named ``[x](javascript:...)`` is no link in the Prefect UI)."""
    return md_inline(value)


#: What a scoring of inputs without rows says instead of its predictions and drift.
NO_ROWS = "The inputs hold no rows (a header alone, or empty files)"


def no_rules_text(summary: Mapping) -> str | None:
    """What a scoring with a model that has no rules says (it flags no row, whatever the
    rows: its run's report says why), else None (also for a summary without its rules)."""
    if summary.get("rules", True):
        return None
    return (
        "The model has no rules: it flags no row, whatever the inputs hold (its run's report "
        "says why no rule was kept)"
    )


def render_scoring_report(summary, title: str = "Scoring report", model: str = "") -> str:
    """A Markdown scoring report from what :func:`score_files` returns (a
    :class:`ScoringSummary`, or its ``to_dict()``): throughput, predictions, rules fired and
    drift warnings."""
    if isinstance(summary, ScoringSummary):
        summary = summary.to_dict()
    rows = summary["rows"]
    lines = [f"# {md_inline(title)}", ""]
    if model:
        lines.append(f"- **model:** {md_code(model)}")
    files = summary["files"]
    shown = ", ".join(md_code(f) for f in files[:5]) + (
        f" and {len(files) - 5} more" if len(files) > 5 else ""
    )
    lines += [
        f"- **inputs:** {counted(len(files), 'file')}: {shown}",
        f"- **output:** {md_code(summary['output'])}",
        f"- **rows scored:** {rows:,} in {counted(summary['batches'], 'batch', 'batches')}, "
        f"{summary['seconds']:.2f} s ({summary['rows_per_second']:,.0f} rows/s)",
        f"- **{md_inline(predicted_text(summary))}:** {summary['n_positive']:,} "
        f"({100.0 * summary['positive_rate']:.2f}%)",
        *([f"- **warning:** {no_rules_text(summary)}."] if no_rules_text(summary) else []),
        "",
        "## Data contract",
        "",
    ]
    warnings = summary["warnings"]
    if rows == 0:
        lines.append(
            f"{NO_ROWS}: the output holds the columns and no row, and no drift was checked."
        )
    elif not warnings:
        lines.append(
            "No drift: every value was seen in training, within the training ranges, "
            "with missing rates as in training."
        )
    else:
        lines += [
            f"{counted(len(warnings), 'drift warning')}. Drifted rows were scored: an unseen "
            "category, or a missing value in a feature without a missing bin, satisfies only "
            "the rules that do not test that feature; a number beyond the training range falls "
            "in the open first / last interval.",
            "",
            "| column | problem | rows | share | examples |",
            "|---|---|---:|---:|---|",
        ]
        for w in warnings:
            count = w["count"] or 0
            share = f"{100.0 * count / rows:.3g}%" if rows else ""
            examples = ", ".join(_cell(json.dumps(e)) for e in w["examples"])
            lines.append(
                f"| {_cell(w['column'])} | {w['problem']} | {count:,} | {share} | {examples} |"
            )
        lines += ["", "Details:", ""]
        lines += [f"- {md_block(w['message'])}" for w in warnings]
    lines += ["", "## Rules fired", "", "| index | rule | rows | share |", "|---:|---|---:|---:|"]
    for rule in summary["rules"]:
        share = f"{100.0 * rule['rows'] / rows:.2f}%" if rows else ""
        lines.append(f"| {rule['index']} | {_cell(rule['rule'])} | {rule['rows']:,} | {share} |")
    lines.append("")
    return "\n".join(lines)
