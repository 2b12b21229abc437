"""Reading a pipeline's training data (CSV or Parquet, local path or fsspec URL)."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pandas as pd

from ..errors import DataError

_CHUNK = 1 << 22


def _open(location: str):
    if "://" in location and not location.startswith("file://"):
        import fsspec

        return fsspec.open(location, "rb").open()
    path = Path(location.removeprefix("file://"))
    if not path.is_file():
        raise DataError(
            f"Data file {str(path)!r} does not exist. Check data.path in the spec (relative "
            "paths are relative to the spec file)."
        )
    return path.open("rb")


def fingerprint_source(location: str) -> str:
    """sha256 of the data file's bytes, streamed (the root of every cache key)."""
    digest = hashlib.sha256()
    with _open(location) as handle:
        while chunk := handle.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def read_source(
    location: str,
    file_format: str,
    read_options: dict | None = None,
    string_columns: list[str] | tuple[str, ...] = (),
) -> pd.DataFrame:
    """The data as a DataFrame; ``string_columns`` (categoricals, the target) are read as text
    with missing values as None. Empty fields are missing values."""
    options = dict(read_options or {})
    local = "://" not in location or location.startswith("file://")
    if local:
        _open(location).close()  # clear error for a missing file
    try:
        if file_format == "parquet":
            frame = pd.read_parquet(location, **options)
        else:
            options.setdefault("na_values", [""])
            dtypes = {c: "string" for c in string_columns}
            frame = pd.read_csv(location, dtype=dtypes or None, **options)
    except pd.errors.EmptyDataError:
        raise DataError(f"Data file {location!r} is empty.") from None
    except (ValueError, TypeError, OSError, pd.errors.ParserError) as exc:
        raise DataError(
            f"Could not read {location!r} as {file_format.upper()}: {exc}. Check the file and "
            "data.format / data.read_options in the spec."
        ) from None
    if frame.shape[0] == 0:
        raise DataError(f"Data file {location!r} has a header but no rows.")
    for column in string_columns:
        if column in frame.columns:
            series = frame[column]
            frame[column] = series.astype("string").astype(object).where(series.notna(), None)
    return frame
