"""Reading a pipeline's source in parts and batches: the streamed pipeline's input.

A source is a CSV or Parquet file, or a directory of them (read in name order). It is cut into
*parts*, the units one task reads (a CSV file, or up to ``PART_BATCHES`` batches of a Parquet
file's row groups), and each part is read in *batches* of about ``batch_rows`` rows, so memory
is bounded by the batch, not by the table.

Every row has a *row id*: its file's position among the source's files and its position in that
file (``file_index * 2**40 + row``), and a *row key*: a hash of its values (:func:`row_keys`).
The sample is decided by a hash of the row id and the seed, the holdout split by a hash of the
row key and the seed. So neither needs the whole table nor its row count, and neither depends on
how the source is cut into parts or batches; and a row keeps its side of the split when rows are
added, removed or reordered in a later version of the data, in memory as in a streamed run.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import asdict, dataclass

import numpy as np
import pandas as pd

from ..errors import DataError
from ..inputs import narrow_decimals
from .sources import (
    _refuse_duplicate_names,
    integer_fields,
    is_url,
    mark_missing,
    parquet_markers,
    part_options,
    read_types,
    separator_hint,
    source_files,
)

#: Batches per part of a Parquet file (a part is what one task reads).
PART_BATCHES = 4
_FILE_SHIFT = np.uint64(40)


@dataclass(frozen=True)
class Part:
    """One task's share of the source: a file, and for Parquet some of its row groups."""

    index: int
    """Position among the source's parts: merges follow it."""
    path: str
    file_index: int
    first_row: int
    """Row of the file the part starts at (0 for CSV: a CSV part is a whole file)."""
    n_rows: int | None
    """Rows in the part; None for CSV (known once read)."""
    row_groups: tuple[int, ...] = ()

    def to_dict(self) -> dict:
        return {**asdict(self), "row_groups": list(self.row_groups)}

    @classmethod
    def from_dict(cls, data: dict) -> Part:
        return cls(**{**data, "row_groups": tuple(data.get("row_groups", ()))})


def _open_binary(path: str):
    """A binary file handle on a local path or an fsspec URL."""
    if is_url(path):
        import fsspec

        return fsspec.open(path, "rb").open()
    return open(path, "rb")


def plan_parts(location: str, file_format: str, batch_rows: int) -> list[Part]:
    """The source's parts, in order (reads only Parquet footers)."""
    parts: list[Part] = []
    for file_index, path in enumerate(source_files(location, file_format)):
        if file_format != "parquet":
            parts.append(Part(len(parts), path, file_index, 0, None))
            continue
        sizes = _row_group_sizes(path)
        groups: list[int] = []
        first = start = 0
        for group, size in enumerate(sizes):
            if groups and start + size - first > PART_BATCHES * batch_rows:
                parts.append(_part(parts, path, file_index, first, start, groups))
                groups, first = [], start
            groups.append(group)
            start += size
        if groups or not sizes:
            parts.append(_part(parts, path, file_index, first, start, groups))
    return parts


def _part(parts: list, path: str, file_index: int, first: int, end: int, groups: list) -> Part:
    return Part(len(parts), path, file_index, first, end - first, tuple(groups))


def _row_group_sizes(path: str) -> list[int]:
    import pyarrow.parquet as pq

    try:
        with _open_binary(path) as handle:
            metadata = pq.ParquetFile(handle).metadata
    except (OSError, ValueError) as exc:
        raise DataError(f"Could not read {path!r} as Parquet: {exc}.") from None
    return [metadata.row_group(i).num_rows for i in range(metadata.num_row_groups)]


def source_columns(location: str, file_format: str, read_options: dict | None = None) -> list[str]:
    """The column names of the source's first file."""
    first = source_files(location, file_format)[0]
    if file_format == "parquet":
        import pyarrow.parquet as pq

        try:
            with _open_binary(first) as handle:
                names = list(pq.read_schema(handle).names)
        except (OSError, ValueError) as exc:
            raise DataError(f"Could not read {first!r} as Parquet: {exc}.") from None
    else:
        options = {k: v for k, v in part_options(first, read_options).items() if k != "chunksize"}
        try:
            names = [str(c) for c in pd.read_csv(first, nrows=0, **options).columns]
        except (ValueError, OSError, pd.errors.ParserError) as exc:
            raise DataError(f"Could not read the header of {first!r}: {exc}.") from None
    _refuse_duplicate_names(first, names)
    return names


def read_batches(
    part: Part,
    file_format: str,
    columns: list[str],
    string_columns: list[str],
    batch_rows: int,
    read_options: dict | None = None,
) -> Iterator[tuple[int, pd.DataFrame]]:
    """The part's rows in batches: (row of the file the batch starts at, the batch's
    ``columns``), with ``string_columns`` as text (None for missing) as ``read_source`` gives
    them."""
    if file_format == "parquet":
        markers = parquet_markers(read_options)
        batches = (
            mark_missing(b, markers, string_columns)
            for b in _parquet_batches(part, columns, batch_rows)
        )
    else:
        batches = _csv_batches(part, columns, string_columns, batch_rows, read_options or {})
    row = part.first_row
    for frame in batches:
        missing = [c for c in columns if c not in frame.columns]
        if missing:
            raise _no_columns(part.path, missing)
        if not len(frame):  # a header alone: its columns read as text, and no row to add
            continue
        integers = frame.attrs.get("integers", ())
        yield row, read_types(frame[columns], string_columns, integers)
        row += len(frame)


def _parquet_batches(part: Part, columns: list[str], batch_rows: int) -> Iterator[pd.DataFrame]:
    import pyarrow.parquet as pq

    with _open_binary(part.path) as source:
        handle = pq.ParquetFile(source)
        names = set(handle.schema_arrow.names)
        missing = [c for c in columns if c not in names]
        if missing:
            raise _no_columns(part.path, missing)
        if not part.row_groups:
            return
        integers = integer_fields(handle.schema_arrow)
        for batch in handle.iter_batches(
            batch_size=batch_rows, row_groups=list(part.row_groups), columns=columns
        ):
            frame = batch.to_pandas()
            frame.attrs["integers"] = sorted(integers)  # for read_types (a list: attrs are
            # written with the frame's Parquet, which keeps only what JSON can hold)
            yield frame


def _no_columns(path: str, missing: list[str], header=()) -> DataError:
    """The error of a part without columns the spec reads (``header``: the part's columns, for
    a hint when they read as one: another separator)."""
    return DataError(
        f"Data file {path!r} has no column(s) {missing}, which the spec reads (from the other "
        "parts, or features.include): give every part the same columns, or leave those out of "
        "the features." + separator_hint(header)
    )


def _csv_batches(
    part: Part, columns: list[str], string_columns: list[str], batch_rows: int, options: dict
) -> Iterator[pd.DataFrame]:
    options = part_options(part.path, options)
    options.setdefault("na_values", [""])
    dtypes = {c: "string" for c in string_columns}
    try:
        header = pd.read_csv(part.path, nrows=0, **options).columns
        missing = [c for c in columns if c not in header]
        if missing:  # a part without a column the spec reads: not a format problem
            raise _no_columns(part.path, missing, header)
        reader = pd.read_csv(
            part.path, dtype=dtypes or None, usecols=columns, chunksize=batch_rows, **options
        )
        with reader:
            yield from reader
    except DataError:
        raise
    except (ValueError, TypeError, OSError, pd.errors.ParserError) as exc:
        raise DataError(
            f"Could not read {part.path!r} as CSV: {str(exc).strip()}. Check the file and "
            "data.format / data.read_options in the spec."
        ) from None


# --- row ids and their hashes -----------------------------------------------------------------


def row_ids(file_index: int, first_row: int, n_rows: int) -> np.ndarray:
    """The ids of ``n_rows`` consecutive rows of a file (see module docstring)."""
    base = np.uint64(file_index) << _FILE_SHIFT
    return base + np.arange(first_row, first_row + n_rows, dtype=np.uint64)


_KEY_START = np.uint64(0x243F6A8885A308D3)
_KEY_MULTIPLIER = np.uint64(0x100000001B3)
_MISSING_HASH = pd.util.hash_array(np.array(["\x00missing"], dtype=object))[0]


def row_keys(frame: pd.DataFrame) -> np.ndarray:
    """A 64-bit key per row from its values in every column (taken in name order), the same
    whatever types a reader gave them: numbers, integers and booleans alike, as float64 (-0.0
    as 0.0, every missing value alike; a float32 or float16 value as the float64 of its
    shortest decimal, so 33.6 stored in 32 bits keys as 33.6); anything else as text. Equal
    rows get equal keys."""
    keys = np.full(len(frame), _KEY_START, dtype=np.uint64)
    for name in sorted(frame.columns, key=str):
        column = frame[name]
        narrow = narrow_decimals(column)
        if narrow is not None:  # widened, 33.6 read 33.59999847...
            hashed = unit_bits((narrow + 0.0).view(np.uint64))
        elif pd.api.types.is_bool_dtype(column) or (
            pd.api.types.is_numeric_dtype(column) and not pd.api.types.is_complex_dtype(column)
        ):
            values = column.to_numpy(dtype=np.float64, na_value=np.nan) + 0.0
            values[np.isnan(values)] = np.nan
            hashed = unit_bits(values.view(np.uint64))
        else:  # each distinct text hashed once; code -1 (missing) picks the last entry
            codes, uniques = pd.factorize(column.astype("string"), use_na_sentinel=True)
            texts = np.asarray(uniques.astype(str), dtype=object)
            hashed = np.append(pd.util.hash_array(texts, categorize=False), _MISSING_HASH)[codes]
        with np.errstate(over="ignore"):
            keys = unit_bits((keys * _KEY_MULTIPLIER) ^ hashed)
    return keys


_COPY_SALT = np.uint64(0x6A09E667F3BCC909)


def copy_keys(keys: np.ndarray) -> np.ndarray:
    """``keys`` with each repeated key made distinct by its copy's rank: the first row of a
    key keeps it, the k-th later one gets a key of (key, k). So rows that repeat the same
    values (few distinct rows: a handful of categories) spread over both sides of the
    holdout instead of falling all on one side, while a row's first copy keeps its side."""
    ranks = pd.Series(keys).groupby(keys, sort=False).cumcount().to_numpy(dtype=np.uint64)
    later = ranks > 0
    if not later.any():
        return keys
    ranked = keys.copy()
    with np.errstate(over="ignore"):
        ranked[later] = unit_bits(keys[later] ^ unit_bits(ranks[later] * _COPY_SALT))
    return ranked


def unit_bits(values: np.ndarray) -> np.ndarray:
    """SplitMix64's finalizer: every bit of a uint64 mixed into every other."""
    with np.errstate(over="ignore"):
        z = (values ^ (values >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return z ^ (z >> np.uint64(31))


def unit_hash(ids: np.ndarray, seed: int, salt: int = 0) -> np.ndarray:
    """A uniform number in [0, 1) per row id, fixed by ``seed`` and ``salt`` (SplitMix64's
    finalizer on the id mixed with them)."""
    mix = np.uint64((seed * 0x9E3779B97F4A7C15 + salt * 0xBF58476D1CE4E5B9) % 2**64)
    z = unit_bits(ids ^ mix)
    return (z >> np.uint64(11)).astype(np.float64) / float(2**53)


HOLDOUT_SALT, SAMPLE_SALT = 1, 2


def holdout_flags(keys: np.ndarray, fraction: float, seed: int) -> np.ndarray:
    """True for the holdout rows: each row independently with probability ``fraction``, decided
    by its key (:func:`row_keys`) and ``seed``."""
    return unit_hash(keys, seed, HOLDOUT_SALT) < fraction


def sample_flags(ids: np.ndarray, rate: float, seed: int) -> np.ndarray:
    """True for the sampled rows: each row independently with probability ``rate``."""
    if rate >= 1.0:
        return np.ones(ids.shape[0], dtype=bool)
    return unit_hash(ids, seed, SAMPLE_SALT) < rate
