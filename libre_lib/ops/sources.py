"""Reading a pipeline's training data (CSV or Parquet, local path or fsspec URL)."""

from __future__ import annotations

import contextlib
import hashlib
import re
from collections import Counter
from pathlib import Path

import pandas as pd

from ..errors import DataError, SpecError
from ..inputs import decimals_as_floats
from ..render import marker_texts

_CHUNK = 1 << 22
#: read_csv options that decide how a file's lines split into fields: kept when the header row
#: is read again as plain text.
_TOKENIZING_OPTIONS = frozenset(
    {
        "sep", "delimiter", "encoding", "encoding_errors", "compression", "storage_options",
        "engine", "dialect", "quotechar", "quoting", "doublequote", "escapechar", "comment",
        "lineterminator", "skiprows", "skipinitialspace", "skip_blank_lines",
    }
)  # fmt: skip
#: How pandas renames the second and later copies of a header name ("a" -> "a.1").
_MANGLED = re.compile(r".*\.\d+")


#: The package each usual URL protocol needs besides fsspec.
_PROTOCOL_PACKAGES = {
    "s3": "s3fs",
    "gs": "gcsfs",
    "gcs": "gcsfs",
    "az": "adlfs",
    "abfs": "adlfs",
    "http": "aiohttp and requests",
    "https": "aiohttp and requests",
}


def url_fs(location: str):
    """``fsspec.core.url_to_fs(location)``; a protocol whose package is not installed is a
    :class:`DataError` naming the package, not a bare ImportError."""
    import fsspec

    try:
        return fsspec.core.url_to_fs(location)
    except ImportError as exc:
        protocol = location.split("://", 1)[0].lower()
        package = _PROTOCOL_PACKAGES.get(protocol, f"the fsspec implementation of {protocol}://")
        raise DataError(
            f"Data path {location!r} is a {protocol}:// URL, and reading it needs {package}, "
            f"which is not installed ({exc}): pip install it where the pipeline runs."
        ) from None


def _open(location: str):
    if "://" in location and not location.startswith("file://"):
        fs, path = url_fs(location)
        return fs.open(path, "rb")
    path = Path(location.removeprefix("file://"))
    if path.is_dir():
        raise DataError(
            f"Data path {str(path)!r} is a directory: only a streamed run reads a directory of "
            "files. Set data.streamed to true (or leave it at auto) in the spec."
        )
    if not path.is_file():
        if path.exists():
            raise DataError(
                f"Data path {str(path)!r} is not a regular file (a pipe, a socket or a device): "
                "point data.path at a CSV or Parquet file."
            )
        raise DataError(
            f"Data file {str(path)!r} does not exist. Check data.path in the spec (relative "
            "paths are relative to the spec file)."
        )
    return path.open("rb")


#: File names a directory source reads, by ``data.format`` (and ``libre score`` reads).
DATA_SUFFIXES = {
    "parquet": (".parquet", ".pq", ".parq"),
    "csv": (".csv", ".csv.gz", ".csv.bz2", ".tsv", ".tsv.gz"),
}


#: File names whose fields a tab separates.
TAB_SUFFIXES = (".tsv", ".tsv.gz")


def part_options(path: str, options: dict | None) -> dict:
    """A CSV file's read options: a ``.tsv`` part of a directory reads with tabs unless the
    options name a separator (the spec does so for a ``.tsv`` file it names itself)."""
    options = dict(options or {})
    if str(path).lower().endswith(TAB_SUFFIXES) and not {"sep", "delimiter"} & set(options):
        options["sep"] = "\t"
    return options


def skipped_entry(parts) -> bool:
    """A directory entry no source reads: a hidden name or a marker (``_SUCCESS``)."""
    return any(part.startswith((".", "_")) for part in parts)


def is_url(location: str) -> bool:
    """A non-local fsspec URL (``s3://``, ``gs://``, ``memory://`` …)?"""
    return "://" in location and not location.startswith("file://")


def source_files(location: str, file_format: str) -> list[str]:
    """The data files of a source: the file itself, or a directory's files of ``file_format``
    in name order (subdirectories included; names starting with "." or "_", such as hidden
    uploads and Spark's ``_SUCCESS``, skipped as ``libre score`` skips them). Local paths or
    fsspec URLs (a URL directory lists as URLs, readable by every worker that can read the
    source)."""
    suffixes = DATA_SUFFIXES[file_format]
    if is_url(location):
        fs, root = url_fs(location)
        if fs.isfile(root):
            return [location]
        if not fs.isdir(root):
            raise DataError(f"Data URL {location!r} does not exist (data.path in the spec).")
        found = sorted(
            p
            for p in fs.find(root)
            if p.lower().endswith(suffixes)
            and not skipped_entry(p[len(root) :].strip("/").split("/"))
        )
        files = [fs.unstrip_protocol(p) for p in found]
    else:
        path = Path(location.removeprefix("file://"))
        if path.is_file():
            return [str(path)]
        if not path.is_dir():
            raise DataError(
                f"Data path {str(path)!r} does not exist. Check data.path in the spec (relative "
                "paths are relative to the spec file)."
            )
        files = sorted(
            str(p)
            for p in path.rglob("*")
            if p.is_file()
            and p.name.lower().endswith(suffixes)
            and not skipped_entry(p.relative_to(path).parts)
        )
    if not files:
        raise DataError(
            f"Data directory {location!r} holds no {file_format} file (names ending in "
            f"{', '.join(suffixes)}, not starting with '.' or '_')."
        )
    return files


def _folder_files(location: str) -> dict[str, int] | None:
    """Every file of a data folder (local path or fsspec URL) that is not hidden or a marker:
    name relative to the folder -> size in bytes; None when ``location`` is no folder."""
    if is_url(location):
        fs, root = url_fs(location)
        if not fs.isdir(root):
            return None
        found = fs.find(root, detail=True)
        files = {p[len(root) :].strip("/"): int(info.get("size") or 0) for p, info in found.items()}
    else:
        path = Path(location.removeprefix("file://"))
        if not path.is_dir():
            return None
        files = {
            p.relative_to(path).as_posix(): p.stat().st_size for p in path.rglob("*") if p.is_file()
        }
    return {name: size for name, size in files.items() if not skipped_entry(name.split("/"))}


def unread_files(location: str, suffixes: tuple[str, ...], shown: int = 5) -> str | None:
    """The files of a data folder (local or a URL) that a run does not read although they are
    not hidden or markers (names not ending in ``suffixes``: ``part-8.csv.xz``, Hive's
    ``000000_0``), as a note naming up to ``shown`` of them; None when there are none."""
    files = _folder_files(location)
    if not files:
        return None
    unread = sorted(name for name in files if not name.split("/")[-1].lower().endswith(suffixes))
    if not unread:
        return None
    more = f" and {len(unread) - shown:,} more" if len(unread) > shown else ""
    return (
        f"{len(unread):,} file(s) in {location.removeprefix('file://')!r} are not read (names "
        f"not ending in {', '.join(suffixes)}): {', '.join(unread[:shown])}{more}. Convert "
        "them, or move them out of the folder (or name them with a leading '.' or '_') to say "
        "they are not data."
    )


def identical_files(location: str, suffixes: tuple[str, ...], shown: int = 3) -> str | None:
    """A note naming the data files of a folder (those ending in ``suffixes``) whose bytes are
    identical (a part delivered twice: its rows would count twice, and copies can sit on both
    sides of the holdout split); None when there are none. Only files of equal size are read."""
    files = _folder_files(location)
    if not files:
        return None
    by_size: dict[int, list[str]] = {}
    for name, size in sorted(files.items()):
        if name.split("/")[-1].lower().endswith(suffixes) and size > 0:
            by_size.setdefault(size, []).append(name)
    root = location.rstrip("/")
    groups: dict[str, list[str]] = {}
    for names in by_size.values():
        if len(names) > 1:
            for name in names:
                if not _holds_rows(f"{root}/{name}"):  # a header alone: no row counts twice
                    continue
                digest = _file_digest(f"{root}/{name}")
                groups.setdefault(digest, []).append(name)
    copies = [names for names in groups.values() if len(names) > 1]
    if not copies:
        return None
    listed = "; ".join(" = ".join(names) for names in copies[:shown])
    more = f"; and {len(copies) - shown:,} more group(s)" if len(copies) > shown else ""
    extra = sum(len(names) - 1 for names in copies)
    return (
        f"{extra:,} data file(s) in {location.removeprefix('file://')!r} repeat another file "
        f"byte for byte: {listed}{more}. Their rows are read once per copy, so they count "
        "twice in the rules and the metrics; if a part was delivered twice, remove the copy."
    )


def _holds_rows(location: str) -> bool:
    """Does a data file hold a row (not a header alone, nor a Parquet file of none)?"""
    with _open(location) as handle:
        if location.lower().endswith(DATA_SUFFIXES["parquet"]):
            import pyarrow.parquet as pq

            return pq.ParquetFile(handle).metadata.num_rows > 0
        if location.lower().endswith((".gz", ".bz2")):
            return True  # read whole to hash it anyway; the rare copy of a header is named
        head = handle.read(1 << 16)
    return len([line for line in head.splitlines() if line.strip()]) > 1


def fingerprint_source(location: str, file_format: str | None = None) -> str:
    """sha256 of the data file's bytes, streamed (the root of every cache key); for a
    directory, of the names (relative) and bytes of the files a run reads
    (:func:`source_files`; every file when ``file_format`` is None), in name order."""
    if is_url(location):
        fs, root = url_fs(location)
        if not fs.isdir(root):
            return _file_digest(location)
        found = sorted(fs.find(root))
        if file_format is not None:
            read = set(source_files(location, file_format))
            found = [p for p in found if fs.unstrip_protocol(p) in read]
        files = [(p[len(root) :].lstrip("/"), fs.unstrip_protocol(p)) for p in found]
        return _directory_digest(files)
    local = Path(location.removeprefix("file://"))
    if not local.is_dir():
        return _file_digest(location)
    if file_format is None:
        paths = sorted(p for p in local.rglob("*") if p.is_file())
    else:
        paths = [Path(p) for p in source_files(str(local), file_format)]
    return _directory_digest([(str(p.relative_to(local)), str(p)) for p in paths])


def _directory_digest(files: list[tuple[str, str]]) -> str:
    """sha256 over (relative name, file sha256) of every file, in name order."""
    digest = hashlib.sha256(b"directory")
    for name, location in files:
        digest.update(name.encode() + b"\0")
        digest.update(_file_digest(location).encode())
    return digest.hexdigest()


def _file_digest(location: str) -> str:
    digest = hashlib.sha256()
    with _open(location) as handle:
        while chunk := handle.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def parquet_markers(read_options: dict | None):
    """The values a Parquet source reads as missing (``read_options.na_values``: a list for
    every column, or a dict of them per column; None when not given). The other options of
    ``pandas.read_csv`` have no meaning for Parquet and are refused."""
    options = dict(read_options or {})
    markers = options.pop("na_values", None)
    if options:
        raise SpecError(
            f"data.read_options {sorted(options)} are options of CSV files: a Parquet source "
            "reads only na_values (the values read as missing). Remove the others."
        )
    return markers


def mark_missing(frame: pd.DataFrame, na_values, keep_text=()) -> pd.DataFrame:
    """``frame`` with the values ``na_values`` names read as missing, as ``pandas.read_csv``
    reads a CSV with them: a number matches a numeric column's value (``0`` its 0.0), a text
    a text column's value in any spelling ``libre score`` matches (``0`` and ``0.0``); a text
    column left with numbers alone then reads as numbers, as a CSV's does, unless
    ``keep_text`` names it (the target, declared categoricals). ``frame`` itself when none
    applies."""
    if na_values is None:
        return frame
    if isinstance(na_values, dict):
        per_column = {str(k): v for k, v in na_values.items()}
    else:
        per_column = {str(c): na_values for c in frame.columns}
    out = frame
    for name in frame.columns:
        markers = per_column.get(str(name))
        if markers is None:
            continue
        markers = [markers] if isinstance(markers, str | int | float) else list(markers)
        series = frame[name]
        if pd.api.types.is_integer_dtype(series):  # exact: 2**53 + 1 is no float's
            whole = [int(n) for n in _marker_numbers(markers) if float(n).is_integer()]
            mask = series.isin(whole)
        elif pd.api.types.is_numeric_dtype(series) and not pd.api.types.is_bool_dtype(series):
            mask = series.isin([float(n) for n in _marker_numbers(markers)])
        else:  # as read_csv and libre score match texts: "0" and "0.0" for 0
            mask = series.notna() & series.astype(str).isin(marker_texts(markers))
        mask = mask.fillna(False).to_numpy(dtype=bool)
        if mask.any():
            out = frame.copy() if out is frame else out
            column = series.mask(mask)
            if name not in keep_text and not pd.api.types.is_numeric_dtype(column):
                with contextlib.suppress(TypeError, ValueError):  # a text: stays one
                    column = pd.to_numeric(column.astype(object))
            out[name] = column
    return out


def _marker_numbers(markers) -> list:
    """The markers that are numbers (or texts that read as one), as ints when whole."""
    out = []
    for marker in markers:
        if isinstance(marker, bool):
            continue
        if isinstance(marker, int):
            out.append(marker)
            continue
        try:  # digits read exactly, beyond 2**53 too
            out.append(int(str(marker).strip()))
            continue
        except ValueError:
            pass
        try:
            number = float(marker)
        except (TypeError, ValueError):
            continue
        if number == number:  # not NaN
            out.append(int(number) if number.is_integer() and abs(number) < 2**53 else number)
    return out


def is_folder(location: str) -> bool:
    """Is the data source a folder of files (a local directory or a URL one)?"""
    if is_url(location):
        fs, root = url_fs(location)
        return bool(fs.isdir(root))
    return Path(location.removeprefix("file://")).is_dir()


def read_source(
    location: str,
    file_format: str,
    read_options: dict | None = None,
    string_columns: list[str] | tuple[str, ...] = (),
) -> pd.DataFrame:
    """The data as a DataFrame; ``string_columns`` (categoricals, the target) are read as text
    with missing values as None. Empty fields are missing values, and so are the texts pandas
    reads as missing by default (``NA``, ``null``, ``N/A``, ...; ``libre init`` names such texts
    in a text column). A header that names two columns alike is refused
    (:class:`~libre_lib.errors.DataError`), not renamed. A folder's files of ``file_format``
    (:func:`source_files`) are read one after the other, in name order, and must hold the
    same columns (in any order); a file of a header alone adds no row."""
    if is_folder(location):
        return _read_folder(location, file_format, read_options, string_columns)
    return _read_file(location, file_format, read_options, string_columns)


def _read_folder(location, file_format, read_options, string_columns) -> pd.DataFrame:
    files = source_files(location, file_format)
    frames = [
        _read_file(part, file_format, read_options, string_columns, empty=True) for part in files
    ]
    first = list(frames[0].columns)
    for part, frame in zip(files, frames, strict=True):
        if set(frame.columns) != set(first):
            missing = [c for c in first if c not in set(frame.columns)]
            extra = [c for c in frame.columns if c not in set(first)]
            said = "; ".join(
                f"{what} {', '.join(map(repr, names))}"
                for what, names in (("without", missing), ("with", extra))
                if names
            )
            raise DataError(
                f"Data file {part!r} has other columns than {files[0]!r}, the folder's first "
                f"file ({said}). Give every file of the folder the same columns."
                + separator_hint(frame.columns)
            )
    # a header alone reads as text columns: it would turn every number of the others to text
    filled = [f[first] for f in frames if f.shape[0]] or [frames[0]]
    mixed = [c for c in first if len({_kind(f[c]) for f in filled}) > 1]
    if mixed:  # numbers in one file, text in another: text in all, as one file would read
        if file_format == "csv":
            text = [*string_columns, *mixed]
            filled = [
                f[first]
                for f in (_read_file(p, file_format, read_options, text, empty=True) for p in files)
                if f.shape[0]
            ]
        else:
            filled = [f.assign(**{c: f[c].astype("string") for c in mixed}) for f in filled]
    frame = pd.concat(filled, ignore_index=True)
    if frame.shape[0] == 0:
        raise DataError(f"Data folder {location!r}: its {len(files)} file(s) hold no rows.")
    return frame


def _kind(series: pd.Series) -> str:
    """A column's kind as files of one folder must agree on it: numbers or text."""
    if pd.api.types.is_bool_dtype(series):
        return "bool"
    return "number" if pd.api.types.is_numeric_dtype(series) else "text"


def _read_file(
    location: str,
    file_format: str,
    read_options: dict | None = None,
    string_columns: list[str] | tuple[str, ...] = (),
    empty: bool = False,
) -> pd.DataFrame:
    """:func:`read_source` of one file; ``empty``: a header without rows is no error."""
    options = dict(read_options or {})
    markers = parquet_markers(options) if file_format == "parquet" else None
    local = "://" not in location or location.startswith("file://")
    if local:
        _open(location).close()  # clear error for a missing file
    try:
        integers: set[str] = set()
        if file_format == "parquet":
            frame = mark_missing(pd.read_parquet(location), markers, string_columns)
            if string_columns:
                integers = integer_fields(_parquet_schema(location, local))
        else:
            options = part_options(location, options)
            options.setdefault("na_values", [""])
            dtypes = {c: "string" for c in string_columns}
            frame = pd.read_csv(location, dtype=dtypes or None, **options)
    except pd.errors.EmptyDataError:
        raise DataError(f"Data file {location!r} is empty.") from None
    except (ValueError, TypeError, OSError, pd.errors.ParserError) as exc:
        raise DataError(
            f"Could not read {location!r} as {file_format.upper()}: {str(exc).strip()}. Check "
            "the file and data.format / data.read_options in the spec."
        ) from None
    if frame.shape[0] == 0 and not empty:
        raise DataError(f"Data file {location!r} has a header but no rows.")
    names = [str(c) for c in frame.columns]
    if file_format != "parquet" and any(_MANGLED.fullmatch(n) for n in names):
        index_col = options.get("index_col")
        index_columns = 0 if index_col is None or index_col is False else frame.index.nlevels
        names = _csv_header(location, options, len(names) + index_columns) or names
    _refuse_duplicate_names(location, names)
    return read_types(frame, string_columns, integers)


#: Field separators a CSV may use besides the comma, as spreadsheets in many locales write them.
OTHER_SEPARATORS = (";", "\t", "|")
#: A number written with a decimal comma (``3,25``, ``-0,5``).
_DECIMAL_COMMA = r"\s*[+-]?\d+,\d+\s*"
#: A number with points between its thousands, as the same locales write them: 4.299,90.
_GROUPED = r"\s*[+-]?\d{1,3}(?:\.\d{3})+(?:,\d+)?\s*"
#: A whole number with points between thousands (``12.475``, ``1.250.000``).
_GROUPED_WHOLE = r"[+-]?[1-9]\d{0,2}(?:\.\d{3})+"  # 0.250 is no thousand


def separator_of(columns) -> str | None:
    """The separator a CSV read with commas really uses, judged from the columns it gave: one
    column whose name holds ``;``, a tab or ``|`` (the whole header line), else None."""
    names = [str(c) for c in columns]
    if len(names) != 1:
        return None
    counts = {sep: names[0].count(sep) for sep in OTHER_SEPARATORS}
    sep = max(counts, key=counts.get)
    return sep if counts[sep] else None


def separator_hint(columns) -> str:
    """A sentence for an error about missing columns when the file seems to use another
    separator than the comma (:func:`separator_of`), else ""."""
    sep = separator_of(columns)
    if sep is None:
        return ""
    return (
        f" The file reads as one column: its fields seem separated by {sep!r}, not commas. Set "
        f"data.read_options: {{sep: {sep!r}}} in the spec (libre init detects it)."
    )


#: Suffixes of compressed files, whose bytes say nothing of their text's encoding.
_COMPRESSED = (".gz", ".bz2", ".zip", ".xz", ".zst", ".tar")


def text_encoding(location: str, probe_bytes: int = 1 << 22) -> str | None:
    """The encoding of a CSV file that is not UTF-8 (the reader's default): the first of
    cp1252 (Windows' Western text) and latin-1 that reads its first ``probe_bytes``; None for
    UTF-8, compressed files and files that cannot be read here."""
    if location.lower().endswith(_COMPRESSED):
        return None
    try:
        with open(location, "rb") as handle:
            raw = handle.read(probe_bytes)
    except OSError:
        return None
    try:
        raw.decode("utf-8")
        return None
    except UnicodeDecodeError as exc:
        if len(raw) == probe_bytes and exc.start >= len(raw) - 3:
            return None  # a character cut by the probe's end
    for encoding in ("cp1252", "latin-1"):
        try:
            raw.decode(encoding)
            return encoding
        except UnicodeDecodeError:
            continue
    return None


def csv_dialect(location: str, sample_rows: int = 200, encoding: str | None = None) -> dict:
    """``read_options`` for a CSV file written with another separator than the comma
    (:data:`OTHER_SEPARATORS`) and, with it, numbers with a decimal comma (a text column
    whose present values are at least 80 % such numbers, points between thousands allowed:
    then ``thousands: "."`` too); {} for a plain CSV."""
    try:  # an empty file, or a header without rows, is left to the reader's own errors
        sep = separator_of(pd.read_csv(location, nrows=0, encoding=encoding).columns)
    except (pd.errors.EmptyDataError, pd.errors.ParserError, UnicodeDecodeError):
        return {}
    if sep is None:
        return {}
    options = {"sep": sep}
    frame = pd.read_csv(location, sep=sep, nrows=sample_rows, encoding=encoding)
    for column in frame.columns:
        present = frame[column].dropna()
        if pd.api.types.is_numeric_dtype(present.dtype) or present.empty:
            continue
        text = present.astype(str)
        grouped = text.str.fullmatch(_GROUPED)
        if (text.str.fullmatch(_DECIMAL_COMMA) | grouped).mean() >= 0.8:
            options["decimal"] = ","
            if grouped.any():
                options["thousands"] = "."
    if "decimal" not in options and _points_between_thousands(
        location, options, sample_rows, encoding
    ):
        options["thousands"] = "."
    return options


def _points_between_thousands(
    location: str, options: dict, sample_rows: int, encoding: str | None = None
) -> bool:
    """Whether a file with another separator writes whole numbers with points between
    thousands and no decimal comma anywhere (``12.475`` beside ``800``: read with the point as
    a decimal mark, the column's order would be scrambled). Only when every point in every
    column of digits sits between groups of three and some column has both such numbers and
    numbers below 1,000 without a point (a decimal column written by software writes
    ``800.0``, not ``800``)."""
    raw = pd.read_csv(location, nrows=sample_rows, dtype=str, encoding=encoding, **options)
    both = False
    for column in raw.columns:
        text = raw[column].dropna().str.strip()
        if text.empty or not text.str.fullmatch(r"[+-]?[\d.]+").all():
            continue  # not a column of numbers
        pointed = text.str.contains(".", regex=False)
        if not pointed.any():
            continue
        if not text[pointed].str.fullmatch(_GROUPED_WHOLE).all():
            return False  # a decimal point somewhere: the point is not between thousands
        if not text[~pointed].str.fullmatch(r"[+-]?\d{1,3}").all():
            return False  # 4 digits without a point: no grouping in this column
        both = both or bool((~pointed).any())
    return both


def read_types(frame: pd.DataFrame, string_columns, integers=()) -> pd.DataFrame:
    """``frame`` as the pipeline reads it: its ``string_columns`` as text (Python str, None for
    missing), its other decimal columns (Parquet ``decimal128``, ``Decimal`` cells) as float64
    numbers (:func:`~libre_lib.inputs.decimals_as_floats`). ``integers``: the columns a Parquet
    file stores as integers (:func:`integer_fields`); with a missing value pandas reads them as
    floats, and their text must be "62", as a CSV writes it, not "62.0"."""
    frame = decimals_as_floats(frame, skip=string_columns)
    for column in string_columns:
        if column in frame.columns:
            series = frame[column]
            if column in integers and pd.api.types.is_float_dtype(series.dtype):
                series = series.astype("Int64")
            frame[column] = series.astype("string").astype(object).where(series.notna(), None)
    return frame


def _parquet_schema(location: str, local: bool):
    """The Arrow schema of a Parquet file, local or at an fsspec URL (its footer only)."""
    import pyarrow.parquet as pq

    if local:
        return pq.read_schema(location.removeprefix("file://"))
    import fsspec

    with fsspec.open(location, "rb") as handle:
        return pq.read_schema(handle)


def integer_fields(schema) -> set[str]:
    """The names of an Arrow schema's integer columns (see :func:`read_types`)."""
    import pyarrow as pa

    return {field.name for field in schema if pa.types.is_integer(field.type)}


def _csv_header(location: str, options: dict, width: int) -> list[str] | None:
    """The CSV file's header row of ``width`` fields as written (pandas renames a repeated name
    "a" to "a.1"); None when the header does not come from one row of the file, or when that
    row cannot be read on its own."""
    header = options.get("header", "infer")
    if "names" in options or header is None or isinstance(header, list | tuple):
        return None
    row = 0 if header == "infer" else int(header)
    kept = {k: v for k, v in options.items() if k in _TOKENIZING_OPTIONS}
    try:
        raw = pd.read_csv(
            location, header=None, names=range(width), nrows=row + 1, dtype=str,
            na_filter=False, **kept,
        )  # fmt: skip
    except (ValueError, TypeError, OSError, pd.errors.ParserError):
        return None  # the data were read: keep pandas' names rather than fail here
    return [str(v) for v in raw.iloc[row].tolist()] if raw.shape[0] > row else None


def _refuse_duplicate_names(location: str, names: list[str]) -> None:
    """Refuse a header that names two columns alike: rules, expectations and the data contract
    name columns, so each name must mean one column."""
    counts = Counter(n for n in names if n != "")
    duplicated = [n for n, count in counts.items() if count > 1]
    if not duplicated:
        return
    listed = ", ".join(
        f"{n!r} (columns {', '.join(str(i + 1) for i, m in enumerate(names) if m == n)})"
        for n in duplicated
    )
    first = duplicated[0]
    raise DataError(
        f"Data file {location!r} repeats column names in its header: {listed}. Rename them in "
        "the file so each column has its own name (pandas would silently rename the later "
        f"ones, e.g. {first!r} to {first + '.1'!r})."
    )
