"""Turning user input (DataFrame or array, any two labels) into checked, typed columns.

Nothing here is specific to LIBRE's algorithm: it is the front door shared by the estimator
and the pipeline, so every input problem gets the same clear message.
"""

from __future__ import annotations

import math
import re
import warnings
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .errors import DataError, LibreWarning, ParameterError, counted, excerpt, user_stacklevel

#: A text column is reported as numbers stored as text when at least this share of its present
#: values parse as numbers ...
MOSTLY_NUMERIC_FRACTION = 0.8
#: ... and the numbers take at least this many distinct values (a few codes such as "0"/"1"
#: are harmless as categories; many numbers as categories make rules list exact values).
MOSTLY_NUMERIC_MIN_DISTINCT = 10
#: A text column whose values are at least this share numbers (of at least
#: MOSTLY_NUMERIC_MIN_DISTINCT distinct ones), short of "mostly", is said to mix them with text
#: when that text takes at most MOSTLY_NUMERIC_EXAMPLES values (marks such as "unk").
MIXED_NUMERIC_FRACTION = 0.25
#: How many of the values that are not numbers such a warning shows.
MOSTLY_NUMERIC_EXAMPLES = 3
#: Pairs of class names (lower case) whose second says "the outcome happened": the default
#: positive class of the estimator and of a first spec.
YES_NO = {
    frozenset(pair): pair[1]
    for pair in [
        ("0", "1"),
        ("0.0", "1.0"),
        ("-1", "1"),
        ("-1.0", "1.0"),
        ("no", "yes"),
        ("n", "y"),
        ("false", "true"),
        ("f", "t"),
        ("negative", "positive"),
        ("neg", "pos"),
    ]
}
#: An object column is read as decimals only if its first this many rows hold a Decimal.
_DECIMAL_PROBE = 100
#: ``pandas.api.types.infer_dtype`` kinds of object columns that hold dates or durations.
_DATE_KINDS = frozenset({"datetime64", "datetime", "date", "timedelta64", "timedelta", "period"})


def as_frame(
    X, feature_names: Sequence[str] | None = None, allow_empty: bool = False
) -> pd.DataFrame:
    """Return ``X`` as a DataFrame with unique string column names, rejecting unusable input
    (and no rows, unless ``allow_empty``: a batch to predict may have none)."""
    if isinstance(X, pd.Series):
        raise DataError(
            f"X is a pandas Series ({X.size} values): pass a DataFrame, X.to_frame().T for one "
            "row (as df.iloc[[i]] keeps it), X.to_frame() for one column."
        )
    if not isinstance(X, pd.DataFrame):
        X = pandas_frame(X)
    if isinstance(X, pd.DataFrame):
        frame = X
    elif hasattr(X, "tocsr") or hasattr(X, "sparse"):
        raise DataError(
            f"Sparse input ({type(X).__name__}) is not supported: LibreClassifier needs dense "
            "columns. Convert with X.toarray() or pass a DataFrame."
        )
    else:
        if isinstance(X, list | tuple) and X and all(isinstance(row, dict) for row in X):
            raise DataError(
                "X is a list of dicts (records): pass pd.DataFrame(X), whose columns are "
                "matched by name."
            )
        if isinstance(X, list | tuple):  # each column keeps its own type (numbers stay numbers)
            array = np.asarray(X, dtype=object)
            if array.ndim == 1 and any(isinstance(row, list | tuple) for row in array):
                lengths = sorted({len(row) for row in array if isinstance(row, list | tuple)})
                raise DataError(
                    f"X's rows have different lengths ({lengths}): every row needs one value "
                    "per feature (None or NaN for a missing one)."
                )
        elif hasattr(X, "__array__"):
            array = np.asarray(X)
        else:
            raise DataError(
                f"X must be a pandas DataFrame or a 2-D array-like; got {type(X).__name__}."
            )
        if array.ndim != 2:
            raise DataError(
                f"X must be 2-D (rows x features); got an array with shape {array.shape}. "
                "Reshape your data: X.reshape(1, -1) for one row, X.reshape(-1, 1) for one "
                "feature."
            )
        names = list(feature_names) if feature_names is not None else None
        if names is None:
            names = [f"x{i}" for i in range(array.shape[1])]
        frame = pd.DataFrame(array, columns=names)
        if array.dtype == object:
            frame = frame.infer_objects()
    if frame.shape[1] == 0:
        raise DataError(
            f"Found array with 0 feature(s) (shape={frame.shape}) while a minimum of 1 is "
            "required: LibreClassifier needs at least one feature column."
        )
    if frame.shape[0] == 0 and not allow_empty:
        raise DataError(
            f"Found array with 0 sample(s) (shape={frame.shape}) while a minimum of 1 is "
            "required: X has no rows."
        )
    names = [str(c) for c in frame.columns]
    duplicated = sorted({n for n in names if names.count(n) > 1})
    if duplicated:
        given = [c for c in frame.columns if str(c) == duplicated[0]]
        alike = (
            f" ({' and '.join(map(repr, given))} are one name as text)"
            if len({type(c) for c in given}) > 1
            else ""
        )
        raise DataError(
            f"X has duplicate column names {duplicated}{alike}: rename them so every rule "
            "names one column."
        )
    if list(frame.columns) != names:
        frame = frame.set_axis(names, axis=1)
    return decimals_as_floats(frame)


def decimals_as_floats(frame: pd.DataFrame, skip: Iterable = ()) -> pd.DataFrame:
    """``frame`` with its decimal columns as float64: Arrow ``decimal128``/``decimal256``
    columns and object columns of ``decimal.Decimal`` or float cells (numbers and missing cells
    allowed beside them), as SQL databases, Parquet files written by warehouses and
    ``df.replace({np.nan: None})`` give them; and object columns of ints (and missing cells) as
    numbers. Without this they would be categories, one per value (a numpy object array of the
    same values is read as numbers). The other columns, and those in ``skip``, are unchanged;
    ``frame`` itself is not modified."""
    skipped = set(skip)
    converted = {}
    for name in frame.columns:
        if name in skipped:
            continue
        series = frame[name]
        if isinstance(series.dtype, pd.ArrowDtype):
            import pyarrow as pa

            if pa.types.is_decimal(series.dtype.pyarrow_dtype):
                converted[name] = series.astype("float64")
        elif pd.api.types.is_object_dtype(series.dtype) and _decimal_cells(series):
            present = series.where(series.notna(), np.nan)  # NaT and None beside the numbers
            converted[name] = pd.to_numeric(present, errors="raise").astype("float64")
        elif pd.api.types.is_object_dtype(series.dtype) and _integer_cells(series):
            try:  # ints (and missing cells) in an object column, as a numpy object array's;
                # nullable ints, so a column declared categorical keeps categories 2, not 2.0
                converted[name] = series.astype("Int64")
            except (TypeError, ValueError, OverflowError):
                continue  # beyond what a number column holds: left as it is
    return frame.assign(**converted) if converted else frame


def _integer_cells(series: pd.Series) -> bool:
    """Whether an object column holds only whole numbers (Python or numpy ints, not bools) and
    missing cells: ``X[c].astype(object)`` of an int column. They were categories, one per
    value, while the same values in an object numpy array, a Parquet file or a pipeline's read
    were numbers."""
    head = series.iloc[:_DECIMAL_PROBE].dropna()
    if head.empty or not all(type(v) is int or isinstance(v, np.integer) for v in head):
        return False
    return pd.api.types.infer_dtype(series, skipna=True) == "integer"


def _decimal_cells(series: pd.Series) -> bool:
    """Whether an object column holds Decimal or float cells and otherwise only numbers or
    missing cells (not bools, not text), judged on the whole column when its first present
    cells hold a Decimal or a float (a text column is passed over after a look at those)."""
    from decimal import Decimal

    head = series.iloc[:_DECIMAL_PROBE].dropna().to_numpy(dtype=object)
    fractional = Decimal | float | np.floating
    if not any(isinstance(v, fractional) for v in head):
        return False
    kind = pd.api.types.infer_dtype(series, skipna=True)
    if kind in ("decimal", "floating", "mixed-integer-float"):
        return True
    if kind not in ("mixed", "mixed-integer"):
        return False
    types = set(series.dropna().map(type).unique())
    return all(
        issubclass(t, Decimal | int | float | np.integer | np.floating)
        and not issubclass(t, bool | np.bool_)
        for t in types
    )


def warn_reordered(X, **others) -> None:
    """Warn when a pandas ``y`` or ``sample_weight`` (``others``, by parameter name) holds the
    same index labels as the DataFrame ``X`` in another order: as in scikit-learn they are
    read by position, so each row would get another row's label or weight (a frame shuffled
    or sorted apart from its target)."""
    if not isinstance(X, pd.DataFrame):
        return
    for name, values in others.items():
        index = getattr(values, "index", None)
        if not isinstance(values, pd.Series | pd.DataFrame) or index.equals(X.index):
            continue
        if len(index) == len(X.index) and index.is_unique and X.index.is_unique:
            # every label of one in the other (no sort: an index may mix ints and texts)
            if (X.index.get_indexer(index) >= 0).all():
                warnings.warn(
                    f"{name} holds the same index labels as X in another order, but it is "
                    "read by position (as scikit-learn reads it): each row gets the "
                    f"{name} of the row at its position, not of its label. Align it first "
                    f"({name}.loc[X.index]) if the labels are what match.",
                    LibreWarning,
                    stacklevel=user_stacklevel(),
                )


def pandas_frame(X):
    """A table of another library (pyarrow, polars, any dataframe-interchange object) as a
    pandas DataFrame, keeping its column names and types; anything else unchanged."""
    if isinstance(X, np.ndarray | pd.Series) or not (
        hasattr(X, "__dataframe__") or hasattr(X, "__arrow_c_stream__")
    ):
        return X
    try:
        if hasattr(X, "to_pandas"):  # pyarrow Table / RecordBatch, polars DataFrame
            frame = X.to_pandas()
        else:
            frame = pd.api.interchange.from_dataframe(X)
    except Exception as exc:  # a library's own conversion error: say what to do instead
        raise DataError(
            f"Could not convert X ({type(X).__module__}.{type(X).__name__}) to a pandas "
            f"DataFrame ({type(exc).__name__}: {exc}). Convert it yourself and pass the "
            "DataFrame."
        ) from None
    return frame if isinstance(frame, pd.DataFrame) else X


def is_categorical_dtype(series: pd.Series) -> bool:
    """Object, string, category and bool columns are categorical; numbers are numeric."""
    dtype = series.dtype
    if pd.api.types.is_bool_dtype(dtype):
        return True
    return not pd.api.types.is_numeric_dtype(dtype)


def _warn_cased_alike(name, present: pd.Series) -> None:
    """Warn when a text column writes one category in different ways
    (:func:`spelled_alike_groups`: "red" and "RED ", "7" and "07"): each is a category of its
    own, as the target refuses them."""
    alike = spelled_alike_groups(pd.unique(present))  # distinct values, not rows
    if alike:
        shown = ", ".join(repr(v) for v in alike[0])
        warnings.warn(
            f"Column {name!r} writes one category in ways that differ by spaces, case or "
            f"number format ({shown}; {counted(len(alike), 'such category', 'such categories')}): "
            "each is a category of its own in the rules. If they are one, clean the column "
            f"first (e.g. X[{name!r}].str.strip().str.lower()).",
            LibreWarning,
            stacklevel=user_stacklevel(),
        )


def warn_spelled_alike(frame: pd.DataFrame, categorical_features) -> None:
    """Warn about each categorical column that holds one value under two types (the number
    25 and the text "25", True and "true"): training tells them apart, while a new row's value
    is matched by what it spells (:func:`_spelling`), so the rules' training figures and their
    predictions can differ on the same rows. Only columns of mixed types are looked at, by
    their distinct values."""
    flags = resolve_categorical(frame, categorical_features, warn=False)
    for (name, series), categorical in zip(frame.items(), flags, strict=True):
        if not categorical or not (
            pd.api.types.is_object_dtype(series) or pd.api.types.is_string_dtype(series)
        ):
            continue
        present = series.dropna()
        if not pd.api.types.infer_dtype(present, skipna=True).startswith("mixed"):
            _warn_cased_alike(name, present)
            continue
        groups: dict[str, list] = {}
        for value in pd.unique(present):  # distinct values, not rows
            groups.setdefault(_spelling(value), []).append(value)
        twins = [group for group in groups.values() if len(group) > 1]
        if twins:
            shown = " and ".join(repr(v) for v in twins[0])
            warnings.warn(
                f"Column {name!r} holds one value under two types ({shown}): training tells "
                "them apart, but the rules print them alike and a new row's value is matched "
                "by what it spells, so the rules' training figures can differ from their "
                f"predictions ({counted(len(twins), 'such value')}). Convert the column to one "
                'type (X[col].astype("string") for categories: missing values stay missing).',
                LibreWarning,
                stacklevel=user_stacklevel(),
            )


def resolve_categorical(frame: pd.DataFrame, categorical_features, warn: bool = True) -> list[bool]:
    """Per column: is it categorical? Inferred from the dtype, or forced by the caller.

    Parameters
    ----------
    frame : DataFrame
        The training columns.
    categorical_features : list of names/indices, bool mask or None
        The columns the caller declares categorical (``LibreClassifier``'s parameter).
    warn : bool, default=True
        Warn (:class:`~libre_lib.errors.LibreWarning`) about a text column that is not declared
        categorical but mostly holds numbers: as categories, its numbers would be listed one
        by one in the rules.

    Returns
    -------
    list of bool
        One flag per column of ``frame``.

    Raises
    ------
    DataError
        A column holds dates or durations: rules would name exact timestamps.
    """
    flags = []
    for _, series in frame.items():  # each column fetched once: wide frames have thousands
        _refuse_dates(series)
        _refuse_odd_cells(series)
        flags.append(is_categorical_dtype(series))
    declared = declared_categorical(list(frame.columns), categorical_features)
    if warn:
        messages = [*misread_text_columns(frame, categorical_features).values()]
        messages += filter(None, map(bools_beside_numbers_message, (s for _, s in frame.items())))
        for message in messages:
            warnings.warn(message, LibreWarning, stacklevel=user_stacklevel())
    return [a or b for a, b in zip(flags, declared, strict=True)]


#: :func:`duplicate_columns` hashes this many first rows of each column.
DUPLICATE_PROBE_ROWS = 1_000


def duplicate_columns(frame: pd.DataFrame) -> list[tuple[object, object]]:
    """Pairs (first, copy) of columns of ``frame`` that hold the same values, of the same
    type, in every row (each copy paired with the first column it repeats); columns of one
    value, which are dropped anyway, are left out. Columns are hashed on their first rows,
    and only those alike there are compared whole."""
    seen: dict[int, list] = {}
    whole: dict = {}  # a column's hash over every row, computed once when its head collides

    def hashed(name, rows) -> int | None:
        try:
            values = pd.util.hash_pandas_object(rows[name], index=False).to_numpy()
        except TypeError:  # cells pandas cannot hash: not compared
            return None
        return int(values.sum(dtype=np.uint64))

    def full(name) -> int | None:
        if name not in whole:
            whole[name] = hashed(name, frame)
        return whole[name]

    pairs = []
    head = frame.iloc[:DUPLICATE_PROBE_ROWS]
    for name in frame.columns:
        key = hashed(name, head)
        if key is None:
            continue
        column = frame[name]
        alike = seen.get(key, ())
        first = next(
            (f for f in alike if full(f) == full(name) and frame[f].equals(column)), None
        )
        if first is None:
            seen.setdefault(key, []).append(name)
        elif column.nunique(dropna=False) > 1:
            pairs.append((first, name))
    return pairs


def duplicate_columns_message(pairs, remedy: str) -> str | None:
    """The warning about :func:`duplicate_columns`' ``pairs`` (None without any); ``remedy``:
    how to leave the copies out."""
    if not pairs:
        return None
    first, copy = pairs[0]
    more = f" (and {counted(len(pairs) - 1, 'more such pair')})" if len(pairs) > 1 else ""
    return (
        f"Columns {first!r} and {copy!r} hold the same values in every row{more}: a rule "
        "tests whichever of them its learner drew, so the rules may name either one for the "
        f"same thing. Leave the copies out ({remedy})."
    )


def misread_text_columns(
    frame: pd.DataFrame, categorical_features=None, columns: Iterable | None = None
) -> dict[str, str]:
    """The text columns of ``frame`` (of ``columns``, default all) that mostly hold numbers, or
    dates, and that ``categorical_features`` does not declare categorical: column name -> the
    warning about it (as categories, rules would list its numbers, or name exact days, one by
    one)."""
    declared = declared_categorical(list(frame.columns), categorical_features)
    wanted = None if columns is None else set(columns)
    out = {}
    for (name, series), forced in zip(frame.items(), declared, strict=True):
        if wanted is not None and name not in wanted:
            continue
        if not forced and is_categorical_dtype(series):
            message = (
                numbers_as_text_message(series)
                or dates_as_text_message(series)
                or durations_as_text_message(series)
            )
            if message is not None:
                out[name] = message
    return out


def declared_categorical(
    names: list, categorical_features, owner: str = "LibreClassifier"
) -> list[bool]:
    """Per column: does ``categorical_features`` (``owner``'s parameter) name it?"""
    declared = [False] * len(names)
    if categorical_features is None:
        return declared
    if isinstance(categorical_features, str) or not isinstance(categorical_features, Iterable):
        requested = [categorical_features]
    elif isinstance(categorical_features, tuple) and str(categorical_features) in names:
        requested = [categorical_features]  # one column named by a tuple (a MultiIndex)
    else:  # items as given: a tuple naming a column stays one item
        requested = (
            list(np.asarray(categorical_features).ravel())
            if isinstance(categorical_features, np.ndarray)
            else list(categorical_features)
        )
    if requested and all(isinstance(v, bool | np.bool_) for v in requested):
        if len(requested) != len(names):
            raise ParameterError(
                f"The 'categorical_features' parameter of {owner} is a boolean mask of "
                f"length {len(requested)}, but X has {len(names)} columns."
            )
        return [bool(v) for v in requested]
    for item in requested:
        if isinstance(item, np.generic):
            item = item.item()
        if isinstance(item, int) and not isinstance(item, bool):
            if not 0 <= item < len(names) and str(item) in names:
                declared[names.index(str(item))] = True  # a column named by a number
                continue
            if not 0 <= int(item) < len(names):
                raise ParameterError(
                    f"The 'categorical_features' parameter of {owner} names column index "
                    f"{item}, but X has {len(names)} columns."
                )
            if str(item) in names and names.index(str(item)) != int(item):
                raise ParameterError(
                    f"The 'categorical_features' parameter of {owner} names column "
                    f"index {item}, which holds column {names[int(item)]!r}, but X also has a "
                    f"column named {str(item)!r} (index {names.index(str(item))}): name it as "
                    f"text ({str(item)!r}) or pass a boolean mask."
                )
            declared[int(item)] = True
        elif str(item) in names:
            declared[names.index(str(item))] = True
        else:
            raise ParameterError(
                f"The 'categorical_features' parameter of {owner} names column {item!r}, "
                f"which is not in X. Columns are: {names}."
            )
    return declared


#: What a categorical cell may hold: its value is shown in rules and saved in model JSON.
_CELL_TYPES = (str, int, float, bool, np.generic)


def _refuse_odd_cells(series: pd.Series) -> None:
    """Refuse an object column (or the categories of a category column) holding cells no rule
    can name or model JSON can keep (bytes, tuples, lists, dicts, other objects), naming the
    column, a row and the type."""
    values, where = series, "row"
    arrow = getattr(series.dtype, "pyarrow_dtype", None)
    if arrow is not None:
        import pyarrow as pa

        binary = pa.types.is_binary(arrow) or pa.types.is_large_binary(arrow)
        if binary or pa.types.is_fixed_size_binary(arrow) or pa.types.is_nested(arrow):
            advice = (
                f"decode it first, e.g. X[{series.name!r}].str.decode('utf-8')"
                if binary
                else "split it into columns of text or numbers first, or drop it"
            )
            raise DataError(
                f"Column {series.name!r} holds {'bytes' if binary else 'nested values'} (dtype "
                f"{series.dtype}): a cell must be text, a number or a bool to appear in a rule "
                f"and in the saved model; {advice}."
            )
        return
    if isinstance(series.dtype, pd.CategoricalDtype):
        values, where = pd.Series(series.dtype.categories, dtype=object), "category"
    elif not pd.api.types.is_object_dtype(series.dtype):
        return
    kind = pd.api.types.infer_dtype(values, skipna=True)
    if kind not in ("bytes", "mixed", "decimal", "complex"):
        return
    cells = enumerate(values.to_numpy(dtype=object))  # only suspicious columns get here
    odd = next(
        (
            (row, value)
            for row, value in cells
            if not (value is None or isinstance(value, _CELL_TYPES) or value is pd.NA)
        ),
        None,
    )
    if odd is not None:
        row, value = odd
        advice = (
            f"decode it first, e.g. X[{series.name!r}].str.decode('utf-8')"
            if isinstance(value, bytes)
            else "convert the column to text or numbers first, or drop it"
        )
        at = f"at row {row}" if where == "row" else "as a category"
        raise DataError(
            f"Column {series.name!r} holds a {type(value).__name__} {at} "
            f"({excerpt(value)}): a cell must be text, a number or a bool to appear in a rule "
            f"and in the saved model; {advice}."
        )


def bools_beside_numbers_message(series: pd.Series) -> str | None:
    """The warning about an object column holding True/False beside the numbers 1/0 (frames
    concatenated from sources of both types), or None: Python counts True as 1, so each pair
    is one category, named by whichever comes first, and a rule naming one matches both."""
    if not pd.api.types.is_object_dtype(series.dtype):
        return None
    if pd.api.types.infer_dtype(series, skipna=True) not in ("mixed", "mixed-integer"):
        return None
    cells = series.dropna()
    clash = []
    for flag in (False, True):
        equal = cells[cells.eq(flag).to_numpy(dtype=bool)]  # the bool, and numbers equal to it
        spelled = set(equal.astype(str).unique())  # "True" beside "1" or "1.0"
        if str(flag) in spelled and len(spelled) > 1:
            clash.append(flag)
    if not clash:
        return None
    pairs = " and ".join(f"{b} / {int(b)}" for b in clash)
    return (
        f"Column {series.name!r} holds the bools and numbers {pairs}: Python counts True as 1 "
        "and False as 0, so each pair is one category, named by whichever comes first, and a "
        "rule naming it matches both. Give the column one type first (e.g. "
        f"X[{series.name!r}].astype('string') keeps them apart, and missing values missing)."
    )


def temporal_kind(series: pd.Series) -> str | None:
    """What the column holds when no rule should test it: "dates", "durations", "times" (of
    day) or "intervals" (a category column: its categories); else None."""
    dtype = series.dtype
    if isinstance(dtype, pd.CategoricalDtype):
        return temporal_kind(pd.Series(dtype.categories))
    if isinstance(dtype, pd.IntervalDtype):
        return "intervals"
    if isinstance(dtype, pd.ArrowDtype):
        import pyarrow as pa

        arrow = dtype.pyarrow_dtype
        if pa.types.is_timestamp(arrow) or pa.types.is_date(arrow):
            return "dates"
        if pa.types.is_duration(arrow):
            return "durations"
        return "times" if pa.types.is_time(arrow) else None
    if pd.api.types.is_object_dtype(dtype):
        kind = pd.api.types.infer_dtype(series, skipna=True)
        if kind == "interval":
            return "intervals"
        if kind == "time":
            return "times"
        if kind not in _DATE_KINDS:
            return None
        return "durations" if "timedelta" in kind else "dates"
    if pd.api.types.is_datetime64_any_dtype(dtype) or isinstance(dtype, pd.PeriodDtype):
        return "dates"
    if pd.api.types.is_timedelta64_dtype(dtype):
        return "durations"
    return None


def _refuse_dates(series: pd.Series) -> None:
    """Refuse a column of dates, durations, times of day or intervals: its rules would name
    exact timestamps (which carry over to no new row), or values the saved model cannot keep."""
    what = temporal_kind(series)
    if what is None:
        return
    name, dtype = series.name, series.dtype
    advice = {
        "dates": (
            "Drop it, or derive features from it (e.g. month, day of week, days since a "
            "reference date) and use those instead."
        ),
        "durations": f"Convert it to a number (e.g. X[{name!r}].dt.total_seconds()), or drop it.",
        "times": "Convert it to a number (e.g. hours since midnight), or drop it.",
        "intervals": (
            f"Pass the numbers themselves (ChiMerge finds the intervals), or convert the "
            f"intervals to text first: X[{name!r}].astype('string')."
        ),
    }[what]
    shown = {"dates": "timestamps", "durations": "durations", "times": "times of day"}
    if what == "intervals":
        reason = "a saved model cannot keep interval objects as categories"
    else:
        reason = f"rules on it would name exact {shown[what]}, which do not carry over to new rows"
    raise DataError(f"Column {name!r} holds {what} (dtype {dtype}): {reason}. {advice}")


#: A date (or a timestamp) written as text: 2021-03-04, 2021/3/4, 04/03/2021, 4.3.21, with an
#: optional time after it.
DATE_TEXT = re.compile(
    r"^(\d{4}[-/.]\d{1,2}[-/.]\d{1,2}|\d{1,2}[-/.]\d{1,2}[-/.]\d{2,4})([ T].*)?$"
)
#: The share of a text column's values (of its first 1,000) that must read as dates.
DATE_SHARE = 0.9


#: A length of time as pandas writes it (``0 days 00:14:31``; ``10 days`` when every value is
#: whole days) or Python (``1 day, 2:03:04``).
DURATION_TEXT = re.compile(r"^-?\d+ days?(,? [+-]?\d{1,2}:\d{2}:\d{2}(\.\d+)?)?$")


def date_text_example(series: pd.Series, pattern: re.Pattern = DATE_TEXT) -> str | None:
    """The first value of a column whose values are dates written as text (at least
    :data:`DATE_SHARE` of its first 1,000 non-blank ones; durations with
    ``pattern=DURATION_TEXT``), or None."""
    if pd.api.types.is_numeric_dtype(series.dtype) or isinstance(series.dtype, pd.CategoricalDtype):
        return None
    values = series.dropna().head(2_000).astype(str).str.strip()
    values = values[values != ""].head(1_000)
    if values.empty or values.str.match(pattern).mean() < DATE_SHARE:
        return None
    return values.iloc[0]


#: A column of whole days alone (``30 days``) is durations from this many distinct values on:
#: fewer are as likely a category (a plan of 30, 90 or 365 days).
WHOLE_DAYS_DISTINCT = 10


def duration_text_example(series: pd.Series) -> str | None:
    """The first value of a text column of durations (:data:`DURATION_TEXT`), or None; whole
    days alone count from :data:`WHOLE_DAYS_DISTINCT` distinct values on."""
    example = date_text_example(series, DURATION_TEXT)
    if example is None or ":" in example:
        return example
    values = series.dropna().astype(str).str.strip()
    if values.str.contains(":", regex=False).any() or values.nunique() >= WHOLE_DAYS_DISTINCT:
        return example
    return None


def durations_as_text_message(series: pd.Series) -> str | None:
    """The warning about a text column of durations (as categories, rules would name exact
    lengths of time, one by one), or None."""
    example = duration_text_example(series)
    if example is None:
        return None
    name = series.name
    return (
        f"Column {name!r} holds durations as text (e.g. {example!r}): as categories, rules on "
        "it would name exact lengths of time, one by one. Convert it to a number first (e.g. "
        f"pd.to_timedelta(X[{name!r}]).dt.total_seconds() / 60 for minutes); rules then cut it "
        "into ranges."
    )


def dates_as_text_message(series: pd.Series) -> str | None:
    """The warning about a text column of dates (as categories, rules would name exact days,
    which carry over to no new row), or None."""
    example = date_text_example(series)
    if example is None:
        return None
    name = series.name
    return (
        f"Column {name!r} holds dates as text (e.g. {example!r}): as categories, rules on it "
        "would name exact days, which do not carry over to new rows. Drop it, or derive "
        f"features from it (e.g. pd.to_datetime(X[{name!r}]).dt.month, the day of the week, "
        "the days since a reference date) and use those instead."
    )


def numbers_as_text_message(series: pd.Series) -> str | None:
    """The warning about a text column whose values are mostly numbers (a numeric column with
    some stray text, or numbers read as strings: as categories, rules list its values one by
    one), or None."""
    dtype = series.dtype
    if isinstance(dtype, pd.CategoricalDtype):
        return None  # the caller chose categories explicitly
    if not (pd.api.types.is_object_dtype(dtype) or pd.api.types.is_string_dtype(dtype)):
        return None
    try:
        counts = series.value_counts(dropna=True)
        if counts.size < MOSTLY_NUMERIC_MIN_DISTINCT:
            return None
        parsed = pd.to_numeric(pd.Series(counts.index, dtype=object), errors="coerce")
    except (TypeError, ValueError):  # unhashable or exotic values: not numbers as text
        return None
    numeric = parsed.notna().to_numpy()
    n_present = int(counts.sum())
    stray = counts[~numeric]
    n_stray = int(stray.sum())
    name = series.name
    if (
        int(numeric.sum()) < MOSTLY_NUMERIC_MIN_DISTINCT
        or n_present - n_stray < MOSTLY_NUMERIC_FRACTION * n_present
    ):
        written = _written_numbers_message(name, counts, n_present)
        if written is not None or int(numeric.sum()) < MOSTLY_NUMERIC_MIN_DISTINCT:
            return written
        if (
            n_present - n_stray < MIXED_NUMERIC_FRACTION * n_present
            or stray.size > MOSTLY_NUMERIC_EXAMPLES
        ):  # texts of their own (many distinct ones): categories, not missing-value marks
            return None
        examples = ", ".join(excerpt(v, 20) for v in stray.index[:MOSTLY_NUMERIC_EXAMPLES])
        return (
            f"Column {name!r} mixes numbers ({int(numeric.sum()):,} distinct, "
            f"{(n_present - n_stray) / n_present:.0%} of its values) with text (e.g. "
            f"{examples}), so it is treated as categorical and rules list its values one by "
            "one. If the text marks missing values, replace it by missing ones "
            f"(pd.to_numeric(X[{name!r}], errors='coerce'), or data.read_options.na_values in "
            "a pipeline spec); if its values are categories, declare it in "
            "categorical_features (features.categorical in a pipeline spec)."
        )
    if n_stray:
        examples = ", ".join(excerpt(v, 20) for v in stray.index[:MOSTLY_NUMERIC_EXAMPLES])
        found = (
            f"is mostly numbers, but {n_stray:,} of its {n_present:,} values "
            f"({n_stray / n_present:.1%}) are not (e.g. {examples})"
        )
        fix = (
            f"replace those values by missing ones (pd.to_numeric(X[{name!r}], "
            "errors='coerce'), or data.read_options.na_values in a pipeline spec)"
        )
    elif any(isinstance(v, str) for v in counts.index):
        found = f"holds numbers stored as text (dtype {series.dtype})"
        fix = f"convert it (pd.to_numeric(X[{name!r}]))"
    else:  # numbers (and maybe booleans) in an object column
        found = f"holds numbers in a column of dtype {series.dtype}, not a numeric one"
        fix = f"convert it (pd.to_numeric(X[{name!r}]))"
    return (
        f"Column {name!r} {found}, so it is treated as categorical and rules list its values "
        f"one by one. If it is numeric, {fix}; if its values are categories, declare it in "
        "categorical_features (features.categorical in a pipeline spec)."
    )


def _written_numbers_message(name, counts: pd.Series, n_present: int) -> str | None:
    """The warning about a text column of numbers written for people, or None: with a
    thousands separator ("23,000.25", "23 000"), a decimal comma ("33,6", as European
    spreadsheets export them) or a percent sign ("12%"), when most of its values are numbers
    once that form is read. Only values with a comma, a space or a percent sign are looked at
    closely (a column of names or ids costs one pass)."""
    text = pd.Series(counts.index, dtype=object)
    maybe = text.map(_written_marks).to_numpy(dtype=bool)
    if not maybe.any():
        return None
    words = text[maybe].str.strip()
    comma = words.str.contains(",", regex=False)
    convert = f"pd.to_numeric(X[{name!r}]"
    decimal_point = ".str.replace(',', '.')"
    forms = (  # (values in this form, the form read as a number, what it is, the fix)
        (
            lambda: _all_thousands(words, comma),
            lambda w: w.str.replace(",", "", regex=False),
            "with a thousands separator",
            "Read the file with thousands=',' (pd.read_csv(..., thousands=','), or "
            "data.read_options: {thousands: ','} in a pipeline spec), or convert the column "
            f"({convert}.str.replace(',', '')))",
        ),
        (
            lambda: comma,
            lambda w: w.str.replace(",", ".", regex=False),
            "with a decimal comma",
            "Read the file with decimal=',' (pd.read_csv(..., decimal=','), or "
            "data.read_options: {decimal: ','} in a pipeline spec), or convert the column "
            f"({convert}{decimal_point}))",
        ),
        (
            lambda: words.str.fullmatch(r"[+-]?\d{1,3}([ \u00a0\u202f]\d{3})+([.,]\d+)?"),
            lambda w: w.str.replace(r"\s", "", regex=True).str.replace(",", ".", regex=False),
            "with spaces between thousands",
            f"Convert the column ({convert}.str.replace(r'\\s', '', regex=True){{point}}))",
        ),
        (
            lambda: words.str.fullmatch(r"[+-]?(\d+([.,]\d*)?|[.,]\d+)\s?%"),
            lambda w: w.str.rstrip("%").str.strip().str.replace(",", ".", regex=False),
            "as percentages",
            f"Convert the column ({convert}.str.rstrip('%'){{point}}) / 100)",
        ),
    )
    positions = np.flatnonzero(maybe)
    for marks, read, form, fix in forms:
        marked = marks().to_numpy(dtype=bool)
        if not marked.any():
            continue
        as_read = text.copy()
        as_read.iloc[positions[marked]] = read(words[marked]).to_numpy(dtype=object)
        try:
            numeric = pd.to_numeric(as_read, errors="coerce").notna().to_numpy()
        except (TypeError, ValueError):  # exotic values beside the texts: not numbers as text
            continue
        n_numeric = int(counts.to_numpy()[numeric].sum())
        if (
            int(numeric.sum()) >= MOSTLY_NUMERIC_MIN_DISTINCT
            and n_numeric >= MOSTLY_NUMERIC_FRACTION * n_present
        ):
            shown = positions[marked][numeric[positions[marked]]]
            example = excerpt(text.iloc[shown[0]], 20)
            fix = fix.replace("{point}", decimal_point if comma[marked].any() else "")
            return (
                f"Column {name!r} holds numbers written {form} (e.g. {example}), so it is "
                f"treated as categorical and rules list its values one by one. {fix}; if its "
                "values are categories, declare it in categorical_features."
            )
    return None


def _written_marks(value) -> bool:
    """Whether ``value`` is a text holding a comma, a space or a percent sign (a number
    written for people may: a cheap test, before the exact ones)."""
    return isinstance(value, str) and (
        "," in value or "%" in value or " " in value or "\u00a0" in value or "\u202f" in value
    )


def _all_thousands(words: pd.Series, comma: pd.Series) -> pd.Series:
    """The values written with commas between thousands ("23,000.25"), when every value
    with a comma is so written ("1,250" beside "3,5" is a decimal comma), else none."""
    grouped = words.str.fullmatch(r"[+-]?\d{1,3}(,\d{3})+(\.\d+)?")
    return grouped if bool((grouped == comma).all()) else comma & False


def _plain_numbers(dtype) -> bool:
    """Whether a column of this dtype converts to float64 as it is (integers, floats, their
    nullable and Arrow forms): ``pd.to_numeric`` would return it unchanged."""
    return (
        pd.api.types.is_integer_dtype(dtype) or pd.api.types.is_float_dtype(dtype)
    ) and not isinstance(dtype, pd.CategoricalDtype)


def narrow_float(dtype) -> np.dtype | None:
    """float32 or float16 for a column of that type (numpy's or pandas' nullable one), else
    None: its values are compared with the cut points in that type."""
    dtype = getattr(dtype, "numpy_dtype", dtype)
    if isinstance(dtype, np.dtype) and dtype.kind == "f" and dtype.itemsize < 8:
        return dtype
    return None


#: Significant digits that tell every float32 (float16) value apart.
_NARROW_DIGITS = {4: 9, 2: 5}


def decimal_floats(values: np.ndarray) -> np.ndarray:
    """float32 or float16 ``values`` as the float64 of their shortest decimal (26.4, not the
    26.399999618530273 a float32 26.4 widens to), every missing one as NaN. Order is kept,
    and the narrow type reads each back as it was. Each distinct value is written once
    (:func:`_distinct_decimals`)."""
    codes, uniques = pd.factorize(values, use_na_sentinel=True)
    return np.append(_distinct_decimals(np.asarray(uniques, dtype=values.dtype)), np.nan)[codes]


def _distinct_decimals(values: np.ndarray) -> np.ndarray:
    """:func:`decimal_floats` of ``values``, each written.

    Vectorized: for k = 1, 2, ... significant digits, the two k-digit decimals around each
    value still pending (n / 10**p or n * 10**p, a correctly rounded operation on exact
    numbers: the double nearest the decimal) are read back in the narrow type, and the closer
    of those that give the value back is kept (of two as close, the one ending in an even
    digit, as ``repr`` writes it); values beyond 10**±14 to 10**22, where some 10**p is no
    exact double, are written as text."""
    narrow = values.dtype
    out = values.astype(np.float64)  # zeros, infinities and NaN as they are
    with np.errstate(divide="ignore", invalid="ignore"):
        exponent = np.floor(np.log10(np.abs(out)))
    fast = np.isfinite(out) & (out != 0) & (exponent >= -14) & (exponent <= 22)
    pending = np.flatnonzero(fast)
    wide, target, power = out[pending], values[pending], exponent[pending]
    for digits in range(1, _NARROW_DIGITS[narrow.itemsize] + 1):
        if not pending.size:
            break
        places = digits - 1 - power  # decimal places of a k-digit decimal
        up = places >= 0
        scale = 10.0 ** np.abs(places)
        scaled = np.where(up, wide * scale, wide / scale)
        best = np.full(wide.shape, np.nan)
        for step in (np.floor(scaled), np.floor(scaled) + 1.0):
            candidate = np.where(up, step / scale, step * scale)
            gap, best_gap = np.abs(candidate - wide), np.abs(best - wide)
            closer = np.isnan(best) | (gap < best_gap) | ((gap == best_gap) & (step % 2 == 0))
            with np.errstate(over="ignore"):  # beyond float16's range: inf, not the value
                take = (candidate.astype(narrow) == target) & closer
            best[take] = candidate[take]
        found = ~np.isnan(best)
        out[pending[found]] = best[found]
        pending, wide, target, power = (a[~found] for a in (pending, wide, target, power))
    rest = np.flatnonzero(np.isfinite(out) & (out != 0) & ~fast)
    rest = np.concatenate([rest, pending]) if pending.size else rest
    if rest.size:  # the text of the shortest decimal
        out[rest] = values[rest].astype(str).astype(np.float64)
    return out


def narrow_decimals(series) -> np.ndarray | None:
    """A float32 or float16 column (numpy's, pandas' nullable or Arrow's) as its values'
    :func:`decimal_floats`, or None for a column of another type."""
    narrow = narrow_float(series.dtype)
    if narrow is None:
        return None
    return decimal_floats(series.to_numpy(dtype=narrow, na_value=np.nan))


def numeric_values(series: pd.Series, learned: bool = False, decimals: bool = True) -> np.ndarray:
    """A numeric column as float64 with NaN for missing (a float32 or float16 value as its
    shortest decimal: :func:`decimal_floats`, unless ``decimals`` is false: then widened, for
    a caller that compares in the narrow type); infinite values are refused.
    ``learned``: the column of a fitted model (its error cannot advise declaring it
    categorical, which only a new fit can do)."""
    if pd.api.types.is_complex_dtype(series.dtype):
        raise DataError(
            f"Complex data not supported: column {series.name!r} holds complex numbers. Split "
            "it into real and imaginary parts, or drop it."
        )
    if not _plain_numbers(series.dtype) and not series.notna().any():
        return np.full(len(series), np.nan)  # all missing: NaT, None, pd.NA alike
    if not _plain_numbers(series.dtype) and (
        pd.api.types.is_bool_dtype(series.dtype)
        or pd.api.types.infer_dtype(series, skipna=True) == "boolean"
    ):  # True would read as 1 without a word, and a rule's cut point on it would not fire
        raise DataError(
            f"Column {series.name!r} holds booleans (dtype {series.dtype}), not numbers"
            + (
                ": the model learned it as numbers. Pass it as the training rows were (e.g. "
                f"X[{series.name!r}].astype(int) if True stood for 1)."
                if learned
                else "."
            )
        )
    if not _plain_numbers(series.dtype):
        what = temporal_kind(series)
        if what is not None:  # to_numeric would read them as nanoseconds, without a word
            raise DataError(
                f"Column {series.name!r} holds {what} (dtype {series.dtype}), not numbers"
                + (
                    ": the model learned it as numbers. Convert it as the training rows were "
                    f"(e.g. X[{series.name!r}].dt.days for durations)."
                    if learned
                    else ". Convert it to numbers first."
                )
            )
        if pd.api.types.is_object_dtype(series.dtype):
            series = series.where(series.notna(), np.nan)  # NaT, None, pd.NA: missing
    try:
        if not _plain_numbers(series.dtype):
            series = pd.to_numeric(series, errors="raise")
        values = series.to_numpy(dtype=np.float64, na_value=np.nan)
    except (TypeError, ValueError) as exc:
        raise DataError(
            f"Column {series.name!r} should be numeric but holds values that are not numbers "
            f"({exc}). "
            + (
                "The model learned it as numbers: fix the values (empty or NaN for a missing "
                "value), or fit again with it in categorical_features."
                if learned
                else "Declare it in categorical_features or fix the values."
            )
        ) from None
    narrow = narrow_decimals(series) if decimals else None
    if narrow is not None:  # widened, 26.4 in 32 bits read 26.399999618530273
        values = narrow
    if np.isinf(values).any():
        count = int(np.isinf(values).sum())
        raise DataError(
            f"Column {series.name!r} holds {counted(count, 'infinite value')}. Replace them with "
            "a finite number, or with NaN to treat them as missing."
        )
    return values


def refuse_infinite(frame: pd.DataFrame) -> None:
    """Refuse infinite values in any float column of the training rows, counted over all of
    them (the learners' folds would otherwise name a fold's count), with the first row."""
    for name, series in frame.items():
        if not pd.api.types.is_float_dtype(series.dtype):
            continue
        infinite = np.isinf(series.to_numpy(dtype=np.float64, na_value=np.nan))
        if infinite.any():
            raise DataError(
                f"Column {name!r} holds {counted(int(infinite.sum()), 'infinite value')} (first "
                f"at row {frame.index[infinite.argmax()]!r}). Replace them with a finite number, "
                "or with NaN to treat them as missing."
            )


def category_values(series: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    """A categorical column as (object array of Python scalars, missing mask)."""
    missing = series.isna().to_numpy()
    values = series.to_numpy(dtype=object)
    return values, missing


def category_codes(values: np.ndarray, categories: Sequence) -> np.ndarray:
    """The index of every value among ``categories`` (-1 for none), as int64.

    Equal values match. A value of another kind than every category (the text "101" where the
    categories are numbers, "True" where they are bools, the number 7 where they are text) then
    matches the category it spells, when exactly one does: a column read as text at predict
    time means what it meant in training. Missing values match nothing. The work is per
    distinct value, then one take over the rows.
    """
    inverse, distinct = pd.factorize(np.asarray(values, dtype=object))
    found = pd.Index(list(categories), dtype=object).get_indexer(distinct).astype(np.int64)
    unmatched = np.flatnonzero(found < 0)
    if unmatched.size and len(categories):
        families = {_family(c) for c in categories}
        if not of_kind(distinct[unmatched], categories):
            spelled: dict[str, list[int]] = {}
            for i, category in enumerate(categories):
                spelled.setdefault(_spelling(category), []).append(i)
            for j in unmatched:
                value = distinct[j]
                if _family(value) not in families:
                    hit = spelled.get(_spelling(value), ())
                    if len(hit) == 1:
                        found[j] = hit[0]
    return np.append(found, -1)[inverse]  # inverse is -1 for missing values: the last slot


def of_kind(values: np.ndarray, categories: Sequence) -> bool:
    """Whether every present value is of the kind of some category (text, number, bool): then
    only equal values match, and no spelling is looked at."""
    if isinstance(getattr(values, "dtype", None), pd.CategoricalDtype):
        values = values.dtype.categories  # what a category column can hold
    kind = _KIND_FAMILY.get(pd.api.types.infer_dtype(values, skipna=True), "?")
    return kind is None or kind in {_family(c) for c in categories}


#: ``pandas.api.types.infer_dtype`` kinds whose values are all of one family (None: no value).
_KIND_FAMILY = {
    "string": "text",
    "integer": "number",
    "floating": "number",
    "mixed-integer-float": "number",
    "decimal": "number",
    "boolean": "bool",
    "empty": None,
}


def _family(value) -> str:
    if isinstance(value, bool | np.bool_):
        return "bool"
    if isinstance(value, int | float | np.number):
        return "number"
    return "text" if isinstance(value, str) else type(value).__name__


def _spelling(value) -> str:
    """How a category reads as text, the same for 101, 101.0 and " 101 ", for True and "true"."""
    if isinstance(value, bool | np.bool_):
        return str(bool(value)).lower()
    if isinstance(value, int | np.integer):
        return str(int(value))
    if isinstance(value, str):
        text = value.strip()
        if text.lower() in ("true", "false"):
            return text.lower()
        try:
            value = float(text)
        except ValueError:
            return text
    if isinstance(value, float | np.floating) and math.isfinite(value):
        return str(int(value)) if float(value).is_integer() else repr(float(value))
    return str(value)


def python_scalar(value):
    """``value`` as a Python scalar when it is a numpy one (``5``, not ``np.int64(5)``)."""
    if isinstance(value, np.generic):
        return value.item()
    return value


def label_array(labels) -> np.ndarray:
    """Labels as a plain numpy array (int, float, bool or str dtype when they allow it), so
    predictions look like ``y`` to scikit-learn's metrics."""
    labels = [python_scalar(v) for v in labels]
    array = np.array(labels)
    return array if array.dtype != object else np.array(labels, dtype=object)


@dataclass(frozen=True)
class Target:
    """A binary target: ``positive`` is the class mask, ``classes`` the labels [neg, pos];
    ``weight`` the rows' sample weights (None: every row weighs 1)."""

    positive: np.ndarray
    classes: np.ndarray
    positive_class: object
    weight: np.ndarray | None = None

    def class_weights(self) -> tuple[np.ndarray, np.ndarray]:
        """Every row's weight as a positive and as a negative (0 for the other class)."""
        if self.weight is None:
            return self.positive.astype(float), (~self.positive).astype(float)
        return np.where(self.positive, self.weight, 0.0), np.where(self.positive, 0.0, self.weight)

    def totals(self) -> tuple[float, float]:
        """The total weight of the positives and of the negatives."""
        if self.weight is None:
            n_positive = float(self.positive.sum())
            return n_positive, float(self.positive.size) - n_positive
        positive, negative = self.class_weights()
        return float(positive.sum()), float(negative.sum())

    def take(self, rows: np.ndarray) -> Target:
        """The target of ``rows`` (indices or a mask), weights included."""
        weight = None if self.weight is None else self.weight[rows]
        return Target(self.positive[rows], self.classes, self.positive_class, weight)


def check_sample_weight(sample_weight, n_rows: int, owner: str = "LibreClassifier") -> np.ndarray:
    """``sample_weight`` as float64, one finite non-negative weight per row, not all zero;
    a :class:`ParameterError` naming the parameter otherwise."""
    where = f"The 'sample_weight' parameter of {owner}.fit"
    try:
        weight = np.asarray(sample_weight, dtype=np.float64)
    except (TypeError, ValueError):
        raise ParameterError(
            f"{where} must be numbers, one per row. Got {excerpt(sample_weight)} instead."
        ) from None
    if weight.ndim != 1 or weight.shape[0] != n_rows:
        raise ParameterError(
            f"{where} must hold one weight per row of X ({n_rows}). Got shape {weight.shape} "
            "instead."
        )
    bad = ~np.isfinite(weight) | (weight < 0)
    if bad.any():
        first = int(np.flatnonzero(bad)[0])
        raise ParameterError(
            f"{where} must be finite and >= 0. Got {float(weight[first])!r} at row {first} "
            f"({counted(int(bad.sum()), 'such weight')}) instead."
        )
    if not (weight > 0).any():
        raise ParameterError(f"{where} must have a weight > 0: all {n_rows} weights are zero.")
    return weight


#: A whole number written as text: "1", "01", "+1", "1.0", "1.00" (ASCII digits only).
_WHOLE_NUMBER = re.compile(r"\+?(-?[0-9]+)(?:\.0+)?", re.ASCII)


def spelled_alike_groups(values) -> list[list]:
    """The groups of text ``values`` that write one value in different ways: by surrounding
    spaces or case (``" Yes"``, ``"Yes "`` and ``"yes"``) or as the same whole number
    (``"1"``, ``"1.0"`` and ``"01"``), each in their order. (Distinct values, not rows.)"""
    groups: dict[object, list] = {}
    for value in values:
        if isinstance(value, str):
            key: object = value.strip().casefold()
            whole = _WHOLE_NUMBER.fullmatch(str(key))
            if whole:  # "1", "01", "1.0", "+1": one whole number ("250.1" and "250.10",
                key = ("number", int(whole[1]))  # codes of decimals, are not)
            groups.setdefault(key, []).append(value)
    return [group for group in groups.values() if len(group) > 1]


def spelled_alike(values) -> list | None:
    """The first of :func:`spelled_alike_groups`, or None."""
    return next(iter(spelled_alike_groups(values)), None)


def binary_target(
    y,
    positive_class=None,
    n_rows: int | None = None,
    owner: str = "LibreClassifier",
    fitter: str | None = None,
) -> Target:
    """Check ``y`` and map it to a positive mask. Labels keep their original values; an unknown
    ``positive_class`` is named as ``owner``'s parameter, and errors about y name ``fitter``
    (default: ``owner``), the estimator being fitted."""
    fitter = fitter or owner
    if y is None:
        raise DataError(
            f"{fitter} requires y to be passed, but the target y is None: pass one label per row."
        )
    if isinstance(y, pd.DataFrame):
        if y.shape[1] != 1:
            raise DataError(f"y must be one column of labels; got a DataFrame with {y.shape[1]}.")
        y = y.iloc[:, 0]
    values = np.asarray(y, dtype=object) if not isinstance(y, np.ndarray) else y
    if values.ndim == 2 and values.shape[1] == 1:
        from sklearn.exceptions import DataConversionWarning

        warnings.warn(
            "A column-vector y was passed when a 1d array was expected. Please change the "
            "shape of y to (n_samples,), for example using ravel().",
            DataConversionWarning,
            stacklevel=user_stacklevel(),
        )
        values = values.ravel()
    if values.ndim != 1:
        raise DataError(f"y must be 1-D (one label per row); got shape {values.shape}.")
    if n_rows is not None and values.shape[0] != n_rows:
        raise DataError(
            f"X has {n_rows} rows but y has {values.shape[0]} labels: they must have the same "
            "length."
        )
    missing = pd.isna(pd.Series(values, dtype=object)).to_numpy()
    if missing.any():
        raise DataError(
            f"y has {counted(int(missing.sum()), 'missing label')} "
            f"(first at row {int(np.argmax(missing))}). "
            f"Drop those rows or give them a label; {fitter} does not guess labels."
        )
    if values.dtype.kind == "S" or (
        values.dtype == object and pd.api.types.infer_dtype(values, skipna=True) == "bytes"
    ):
        raise DataError(
            f"y holds bytes labels (e.g. {excerpt(values[0])}): decode them to text first, "
            "e.g. y.astype(str) or np.char.decode(y, 'utf-8')."
        )
    labels = pd.Series(values)
    if labels.dtype == object:
        labels = labels.map(python_scalar)
    counts = labels.value_counts(sort=False)
    classes = list(counts.index)
    texts = [c for c in classes if isinstance(c, str)]
    if texts and len(texts) < len(classes):
        others = [c for c in classes if not isinstance(c, str)]
        raise DataError(
            f"y mixes text and non-text labels (e.g. {texts[0]!r} and {others[0]!r}): labels "
            "must be of one type. Convert them first, e.g. y.astype(str)."
        )
    try:
        classes = sorted(classes)
    except TypeError:
        classes = sorted(classes, key=str)
    alike = spelled_alike(classes)
    if alike:
        raise DataError(
            f"y holds labels that write one value in different ways (spaces, case or number "
            f"format): {', '.join(map(repr, alike))}. As separate classes, the rows of all but "
            "one would count as the other answer: spell them alike first (e.g. "
            "y.str.strip().str.lower(), or pd.to_numeric(y) for numbers)."
        )
    if len(classes) < 2:
        raise DataError(f"y has one class ({classes!r}): a rule set needs examples of two classes.")
    if positive_class is not None:
        if positive_class not in classes:
            hint = _positive_class_hint(positive_class, classes)
            raise ParameterError(
                f"The 'positive_class' parameter of {owner} is "
                f"{positive_class!r}, which is "
                f"not a label in y. Labels are: {classes!r}.{hint}"
            )
        match = classes[classes.index(positive_class)]
        if isinstance(match, bool | np.bool_) and not isinstance(positive_class, bool | np.bool_):
            # 1 == True: the classes came out as 0 and 1, and predictions as numbers
            raise ParameterError(
                f"The 'positive_class' parameter of {owner} is {positive_class!r}, but y holds "
                f"booleans: pass positive_class={bool(match)!r}."
            )
        if not isinstance(match, bool | np.bool_):  # 1.0 for int labels: y's own 1
            positive_class = match
        positive = (labels == positive_class).to_numpy()
        if len(classes) == 2:
            negative = classes[0] if classes[1] == positive_class else classes[1]
            return Target(positive, label_array([negative, positive_class]), positive_class)
        return Target(positive, label_array([False, True]), True)
    if len(classes) > 2 and _continuous(classes):
        raise DataError(
            f"Unknown label type: continuous. y holds {len(classes)} distinct non-integer "
            f"numbers; {fitter} needs class labels (bin or threshold y first)."
        )
    if len(classes) > 2:
        raise DataError(
            f"Only binary classification is supported: y has {len(classes)} classes "
            f"{classes[:10]!r}; {fitter} learns rules for one "
            "positive class. Pass positive_class=<label> to learn that class against the rest."
        )
    chosen = _default_positive(classes, counts)
    negative = classes[0] if classes[1] == chosen else classes[1]
    if _coded_numbers(classes):
        warnings.warn(
            f"y's labels are {classes[0]!r} and {classes[1]!r}: numbers that do not say which "
            f"class is positive (as 0/1 would), so the rules describe {chosen!r} (the rarer "
            f"class; {counts[chosen]:,} of {counts[chosen] + counts[negative]:,} rows). Pass "
            f"positive_class={negative!r} to describe the other one, or "
            f"positive_class={chosen!r} to keep this choice without this warning.",
            LibreWarning,
            stacklevel=user_stacklevel(),
        )
    positive = (labels == chosen).to_numpy()
    return Target(positive, label_array([negative, chosen]), chosen)


def one_vs_rest(resolved, requested) -> bool:
    """Whether a target whose positive class resolved to ``resolved`` is one class of several
    against the rest, ``requested`` being the ``positive_class`` asked for: its classes are
    then False and True, whatever the labels. By identity, so that ``1`` is not ``True``."""
    return resolved is True and requested is not None and requested is not True


def one_vs_rest_labels(y, positive_class) -> np.ndarray:
    """``y`` in a one-vs-rest model's classes (False, True): the labels of every class compared
    as ``y == positive_class``; labels that already are True and False are kept as they are."""
    values = np.asarray(y, dtype=object).ravel()
    if values.size and pd.api.types.infer_dtype(values, skipna=False) == "boolean":
        return values.astype(bool)
    return values == positive_class


def _continuous(classes) -> bool:
    values = [c for c in classes if isinstance(c, float)]
    return len(values) == len(classes) and any(not float(v).is_integer() for v in values)


def yes_of_pair(names) -> str | None:
    """The name that says "the outcome happened" of two class names such as no/yes, n/y,
    false/true, 0/1 or negative/positive (case and surrounding spaces ignored), or None."""
    if len(names) != 2 or not all(isinstance(n, str) for n in names):
        return None
    lowered = {n.strip().lower(): n for n in names}
    yes = YES_NO.get(frozenset(lowered))
    return None if yes is None else lowered[yes]


def _coded_numbers(classes) -> bool:
    """Are two labels numbers, or numbers written as text, other than 0/1 or -1/1 (1/2,
    "1"/"2", 3/7)? Such codes do not say which class is the positive one."""
    try:
        values = {float(c) for c in classes if not isinstance(c, bool | np.bool_)}
    except (TypeError, ValueError):
        return False
    return len(values) == 2 == len(classes) and values not in ({0.0, 1.0}, {-1.0, 1.0})


def _positive_class_hint(positive_class, classes) -> str:
    """What to pass instead of a ``positive_class`` that is not among y's ``classes``."""
    if isinstance(positive_class, list | tuple | set | np.ndarray | pd.Series):
        return " positive_class names one label, not a list of them."
    spelled = same_label(positive_class, classes) or same_number(positive_class, classes)
    if spelled:
        return f" Did you mean positive_class={spelled[0]!r}?"
    booleans = all(isinstance(c, bool | np.bool_) for c in classes)
    if booleans:
        return " y holds booleans: pass positive_class=True (or False)."
    if classes == [0, 1] and not isinstance(positive_class, int | float | np.number):
        return (
            " If a scikit-learn tool encoded y as 0/1 (cross_val_predict with "
            "method='predict_proba', StackingClassifier), pass y == "
            f"{positive_class!r} as y and leave positive_class at its default."
        )
    return ""


#: Texts that often write a missing value (compared stripped and in lower case).
USUAL_MARKERS = frozenset({"?", "-", ".", "--", "n/a", "na", "null", "nan", "#n/a"})


def is_usual_marker(value) -> bool:
    """Is ``value`` a text that often writes a missing value ("?", "n/a", "", ...)?"""
    return isinstance(value, str) and (not value.strip() or value.strip().lower() in USUAL_MARKERS)


def same_label(label, classes) -> list:
    """The ``classes`` that write ``label`` with other case or spaces ("true" and "True")."""
    key = str(label).strip().casefold()
    return [c for c in classes if str(c).strip().casefold() == key]


def same_number(label, classes) -> list:
    """The ``classes`` that are ``label``'s number written otherwise (1 and "1.0"), if any."""
    value = _number(label)
    if value is None:
        return []
    return [c for c in classes if _number(c) == value and str(c) != str(label)]


def _number(label) -> float | None:
    """A label's value as a number (numbers and numbers written as text alike), else None."""
    if isinstance(label, bool | np.bool_):
        return None
    try:
        return float(label)
    except (TypeError, ValueError):
        return None


def _default_positive(classes, counts):
    """True; else the 1 of a 0/1 or -1/1 pair, as numbers or as text alike; else the yes of a
    yes/no pair of names; else the rarer class (codes such as 1/2 say nothing)."""
    if any(c is True for c in classes):
        return True
    values = [_number(c) for c in classes]
    if {*values} in ({0.0, 1.0}, {-1.0, 1.0}):
        return classes[values.index(1.0)]
    yes = yes_of_pair(classes)
    if yes is not None:
        return yes
    minority = min(classes, key=lambda c: (counts[c], classes.index(c) * -1))
    return minority
