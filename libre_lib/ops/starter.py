"""A first spec for a data file (``libre init``): the target's classes and which of them the
rules describe, the features and which of them are categorical, and the columns left out
because they identify rows; written as commented YAML that ``load_spec`` reads."""

from __future__ import annotations

import json
import re
import shlex
import textwrap
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from ..discretization import distinct_numbers, id_like_message, row_ids_message
from ..errors import DataError, LibreError, SpecError, excerpt
from ..inputs import (
    USUAL_MARKERS,
    date_text_example,
    duplicate_columns,
    duration_text_example,
    numbers_as_text_message,
    python_scalar,
    same_label,
    same_number,
    spelled_alike,
    spelled_alike_groups,
    temporal_kind,
    yes_of_pair,
)
from .scoring import SCORE_COLUMNS
from .sources import (
    csv_dialect,
    fingerprint_source,
    part_options,
    read_source,
    read_types,
    separator_hint,
    source_files,
    text_encoding,
)
from .spec import DataSource, PipelineSpec, directory_format, spec_from_text, yaml_scalar

#: Rows read to write the spec (the first ones; of a directory, its first file's).
SAMPLE_ROWS = 100_000
#: More distinct target values than this: a number, not classes.
MAX_CLASSES = 20
#: At most this many distinct non-numbers in a column of numbers are read as missing-value
#: markers (``?``, ``NA``, ``-``), each at most :data:`MAX_MARKER_LENGTH` characters long.
MAX_MARKERS = 3
MAX_MARKER_LENGTH = 8
#: A column of numbers whose values are whole numbers of at least 3 and at most this many
#: distinct values may hold codes (a chest-pain type 1-4, a region 3/6/7): ``libre init``
#: names it, since only the user knows whether the order means something.
MAX_CODES = 10


@dataclass
class Starter:
    """What ``libre init`` found in the data: the pipeline's name, the target's classes and
    the positive one (with its share of the rows read), the features, the categorical ones and
    the columns left out (name: why), and the texts that stand for missing values in columns of
    numbers (marker: its columns)."""

    name: str
    target: str
    classes: list[str]
    positive_class: str
    positive_share: float
    why_positive: str
    features: list[str]
    categorical: list[str]
    left_out: dict[str, str] = field(default_factory=dict)
    identifiers: list[str] = field(default_factory=list)
    """Left-out columns that look like row ids (suggested as ``split_by``)."""
    missing_markers: dict[str, list[str]] = field(default_factory=dict)
    codes: dict[str, list] = field(default_factory=dict)
    """Numeric features that may hold codes (:data:`MAX_CODES`): column -> its values."""
    dialect: dict[str, str] = field(default_factory=dict)
    """The CSV's separator, decimal mark and thousands mark when they are not the comma, the
    point and none (:func:`~libre_lib.ops.sources.csv_dialect`)."""
    rows_read: int = 0
    more_rows: bool = False
    n_unlabeled: int = 0
    """Rows read without a target value."""
    unlabeled_texts: dict[str, int] = field(default_factory=dict)
    """Among them, the texts their target cells held that pandas reads as missing (``NA``,
    ``null``, ...): text -> rows (:func:`target_missing_texts`)."""
    feature_texts: dict[str, dict[str, int]] = field(default_factory=dict)
    """The texts pandas reads as missing in the cells of categorical features: column -> text
    -> rows (:func:`missing_texts`)."""
    written_otherwise: dict[str, str] = field(default_factory=dict)
    """Categorical features whose values are numbers written for people, or one value written
    in several ways: column -> what to do (:func:`_written_otherwise`)."""

    repeated_rows: int = 0
    """Rows read that repeat an earlier row whole (every column, the target too)."""

    def feature_hints(self) -> list[str]:
        """What to check in the data: texts read as missing in categorical features
        (:func:`feature_texts_hint`), numbers written as text, spellings of one value, rows
        repeated whole."""
        repeated = []
        if self.repeated_rows:
            repeated.append(
                f"{self.repeated_rows:,} of the rows read repeat another row whole "
                "(an export run twice?): the holdout split keeps each copy on a side of its "
                "own, so copies can score as holdout rows the model learned from. Drop them in "
                "the data unless they are real repeats."
            )
        return [
            *(feature_texts_hint(c, texts) for c, texts in self.feature_texts.items()),
            *(f"column {c!r}: {hint}." for c, hint in self.written_otherwise.items()),
            *repeated,
        ]

    def unlabeled_hint(self) -> str:
        """Where target cells read as missing hold a text such as ``NA``: that it may be a
        class, and what to do (empty when none does)."""
        if not self.unlabeled_texts:
            return ""
        return "target " + missing_texts_hint(self.unlabeled_texts)

    def yaml(self, data_path: str, source: str, store: str = ".libre-store") -> str:
        """The spec as commented YAML; ``data_path`` and ``store`` as the spec will hold them
        (relative to the spec file), ``source`` the path to name in the header."""
        read = (
            f"the first {self.rows_read:,} rows" if self.more_rows else f"{self.rows_read:,} rows"
        )
        lines = [
            f"# A first spec for {_comment(source)}, written from {read}. Edit it freely;",
            "# every section is described in docs/pipeline.md.",
            f"name: {_scalar(self.name)}",
            "data:",
            f"  path: {_scalar(data_path)}  # relative to this file, as store is",
            *self._read_options(),
            f"store: {_scalar(store)}  # where libre score and libre models look by default",
            "target:",
            f"  column: {_scalar(self.target)}",
            f"  # the class the rules describe ({self.positive_share:.1%} of the rows read): "
            f"{_comment(self.why_positive)}",
            f"  positive_class: {_scalar(self.positive_class)}",
            f"  classes: {_scalar(self.classes)}",
            *self._unlabeled(),
            "features:",
            "  include:  # drop a line to leave a column out",
            *(f"    - {_scalar(column)}" for column in self.features),
            *(
                f"  # left out: {_comment(column)} ({_comment(why)})"
                for column, why in self.left_out.items()
            ),
            "  # text columns; list numeric codes here too when their order means nothing",
            "  # (a region code, a product id)",
            *self._code_lines(),
            "  categorical:" + ("" if self.categorical else " []"),
            *(f"    - {_scalar(column)}" for column in self.categorical),
            *(
                f"  # {_comment(line)}"
                for hint in self.feature_hints()
                for line in textwrap.wrap(hint, 86)
            ),
            "model:",
            "  random_state: 0",
            "  # significant_cuts: true  # numeric cut points only where the data differ",
            "  #   significantly: plainer rules, off by default; on by itself for uncapped",
            "  #   bins on 10,001-50,000 training rows (docs/algorithm.md)",
            "  # contiguous: true  # every numeric condition one range (x < 6, not",
            "  #   [min, 1) ∪ [2, 6)): plainer rules, off by default (docs/algorithm.md)",
            "# tuning is on by default: LibreSearchCV chooses the parameters inside the flow;",
            "# tuning: {enabled: false} fits LibreClassifier's defaults instead (faster).",
            *self._split_by_lines(),
            "# a new version replaces the champion when its holdout F1 is not lower;",
            "# promotion: {beat_majority: true} also asks it to beat the majority answer.",
        ]
        return "\n".join(lines) + "\n"

    def _split_by_lines(self) -> list[str]:
        """A commented ``split_by`` naming the first column that looks like an id."""
        if not self.identifiers:
            return []
        return [
            "# if an id names the same row in every version of the data, key the holdout by it:",
            "# a row keeps its side when its other values change (docs/pipeline.md)",
            f"# split_by: [{_scalar(self.identifiers[0])}]",
        ]

    def _code_lines(self) -> list[str]:
        """Comment lines naming the numeric features that may hold codes."""
        if not self.codes:
            return []
        return [
            "  # these columns of numbers hold a few whole numbers only: codes? list them below",
            "  # if so (as numbers, rules cut them into ranges such as x ∈ [3, 7))",
            *(f"  #   {_scalar(column)}: {_values(v)}" for column, v in self.codes.items()),
        ]

    def _unlabeled(self) -> list[str]:
        """The ``target.unlabeled`` lines: none when every row read has a target value."""
        if not self.n_unlabeled:
            return []
        hint = self.unlabeled_hint()
        return [
            *(f"  # {_comment(line)}" for line in textwrap.wrap(hint, 86)),
            f"  # {self.n_unlabeled:,} of the rows read have no target value; the validation",
            "  # refuses such rows unless this leaves them out of each run (and counts them):",
            "  unlabeled: drop",
        ]

    def _read_options(self) -> list[str]:
        if not self.missing_markers and not self.dialect:
            return []
        lines, options = [], []
        if "sep" in self.dialect:
            lines.append(f"  # the file separates its fields with {self.dialect['sep']!r}")
            options.append(f"sep: {json.dumps(self.dialect['sep'])}")
        if "decimal" in self.dialect:
            lines.append("  # and writes numbers with a decimal comma (3,25)")
            options.append(f"decimal: {json.dumps(self.dialect['decimal'])}")
        if "thousands" in self.dialect:
            example = "4.299,90" if "decimal" in self.dialect else "12.475 is twelve thousand"
            lines.append(f"  # with points between thousands ({example})")
            options.append(f"thousands: {json.dumps(self.dialect['thousands'])}")
        if "encoding" in self.dialect:
            lines.append(f"  # the file's text is {self.dialect['encoding']}, not UTF-8")
            options.append(f"encoding: {json.dumps(self.dialect['encoding'])}")
        if self.missing_markers:
            lines.append("  # in columns of numbers these texts stand for missing values (read as")
            lines.append("  # missing in every column):")
            for marker, columns in self.missing_markers.items():
                lines.append(f"  # {marker!r} in {_comment(', '.join(columns))}")
            options.append(f"na_values: {_scalar(list(self.missing_markers))}")
        return [*lines, f"  read_options: {{{', '.join(options)}}}"]


def dialect(location: str, file_format: str) -> dict[str, str]:
    """The read options a CSV (a directory's first file) needs for its separator, decimal and
    thousands marks (:func:`~libre_lib.ops.sources.csv_dialect`) and its encoding when it is
    not UTF-8 (:func:`~libre_lib.ops.sources.text_encoding`); {} for Parquet and plain CSV."""
    if file_format != "csv":
        return {}
    first = source_files(location, file_format)[0]
    encoding = text_encoding(first)
    options = csv_dialect(first, encoding=encoding)
    return {**options, "encoding": encoding} if encoding else options


def sample(
    location: str, file_format: str, target: str | None, read_options: dict | None = None
) -> tuple[pd.DataFrame, bool]:
    """Up to :data:`SAMPLE_ROWS` rows of the data (a directory's first file), the target read
    as text as the pipeline reads it, and whether the data hold more rows. ``read_options``:
    the CSV's :func:`dialect`."""
    files = source_files(location, file_format)
    if file_format == "csv":
        options = dict(read_options or {})
        header = read_source(files[0], "csv", {**options, "nrows": 1})
        text = [target] if target in header.columns else []
        frame = read_source(files[0], "csv", {**options, "nrows": SAMPLE_ROWS + 1}, text)
    else:
        import pyarrow.parquet as pq

        batches = pq.ParquetFile(files[0]).iter_batches(batch_size=SAMPLE_ROWS + 1)
        batch = next(batches, None)
        if batch is None or batch.num_rows == 0:
            raise DataError(f"Data file {files[0]!r} has no rows.")
        frame = batch.to_pandas()
        frame = read_types(frame, [target] if target in frame.columns else [])
    more = len(files) > 1 or len(frame) > SAMPLE_ROWS
    return frame.iloc[:SAMPLE_ROWS], more


def missing_texts(
    location: str, file_format: str, columns: list[str], read_options: dict | None = None
) -> dict[str, dict[str, int]]:
    """Per column of ``columns``, the texts of its cells (in the rows :func:`sample` reads)
    that a CSV reader takes for missing values though they are not empty (``NA``, ``null``,
    ``N/A``, ...): column -> text -> rows (columns without any left out). A class or category
    named ``NA`` (North America, "not applicable") would otherwise be read as missing. Empty
    for Parquet, whose missing values are typed."""
    if file_format != "csv" or not columns:
        return {}
    files = source_files(location, file_format)
    options = {**part_options(files[0], read_options), "nrows": SAMPLE_ROWS}
    options.setdefault("na_values", [""])
    kept = {k: v for k, v in options.items() if k not in ("na_values", "keep_default_na")}
    declared = options["na_values"] if isinstance(options["na_values"], list) else []
    try:
        read = pd.read_csv(files[0], usecols=columns, dtype=str, **options)
        raw = pd.read_csv(
            files[0], usecols=columns, dtype=str, keep_default_na=False, na_values=[], **kept
        )
    except (ValueError, TypeError, OSError, pd.errors.ParserError):
        return {}  # the sample's own read says what is wrong
    found = {}
    for column in columns:
        cells = raw[column]
        texts = cells[read[column].isna().to_numpy() & (cells.str.strip() != "").to_numpy()]
        texts = texts[~texts.isin([str(m) for m in declared])]
        if len(texts):
            found[column] = {str(k): int(v) for k, v in texts.value_counts().items()}
    return found


def target_missing_texts(
    location: str, file_format: str, target: str | None, read_options: dict | None = None
) -> dict[str, int]:
    """:func:`missing_texts` of the target column: text -> rows (a class ``NA`` would be
    dropped as rows without a target value)."""
    if target is None:
        return {}
    return missing_texts(location, file_format, [target], read_options).get(target, {})


def feature_texts_hint(column: str, texts: dict[str, int]) -> str:
    """What :func:`missing_texts` found in a text feature, and what to do if it is a category."""
    shown = ", ".join(f"{text!r} in {count:,} rows" for text, count in texts.items())
    return (
        f"column {column!r}: cells read as missing hold text: {shown} (pandas reads such texts "
        "as missing values, so a rule's 'is missing' matches them). If that is a category, "
        "rename it in the data (for example 'NA' to 'N.A.') and run libre init again: "
        "`libre score` reads its inputs the same way."
    )


def missing_texts_hint(texts: dict[str, int]) -> str:
    """What :func:`target_missing_texts` found, and what to do if those texts are classes."""
    shown = ", ".join(f"{text!r} in {count:,} rows" for text, count in texts.items())
    return (
        f"cells read as missing hold text: {shown} (pandas reads such texts as missing "
        "values). If that is a class, rename it in the data (for example 'NA' to 'N.A.') and "
        "run libre init again."
    )


def starter(
    frame: pd.DataFrame,
    target: str | None,
    positive_class: str | None = None,
    name: str = "pipeline",
    more_rows: bool = False,
    file_format: str = "csv",
    read_options: dict | None = None,
    unlabeled_texts: dict[str, int] | None = None,
) -> Starter:
    """The spec's content for ``frame``, the rows read (``more_rows``: the data hold more; see
    :class:`Starter`; missing-value markers only for CSV, whose reader takes them;
    ``read_options``: the CSV's :func:`dialect`, written into the spec). A
    :class:`DataError` names the columns when ``target`` is not one (the two-valued ones when it
    is None), or the classes when it holds fewer than two or ``positive_class`` is not one of
    them."""
    columns = [str(c) for c in frame.columns]
    if target is None:
        two = [c for c in columns if frame[c].dropna().astype(str).nunique() == 2]
        if len(two) == 1:
            raise DataError(
                "Which column do the rules explain? Give it with --target; the only column "
                f"of two values in the rows read is {two[0]!r} (--target {shlex.quote(two[0])}), "
                "and a column of more classes works with --positive naming the class the "
                "rules describe."
            )
        raise DataError(
            "Which column do the rules explain? Give it with --target"
            + (
                "; the columns of two values in the rows read: "
                + ", ".join(repr(c) for c in two[:10])
                + (", ..." if len(two) > 10 else "")
                if two
                else "; no column holds two values in the rows read (a column of more "
                "classes works with --positive naming the class the rules describe)"
            )
            + "."
        )
    if target not in columns:
        raise DataError(
            f"--target {target!r} is not a column of the data; its columns: "
            + ", ".join(repr(c) for c in columns[:30])
            + (", ..." if len(columns) > 30 else "")
            + separator_hint(columns)
        )
    labels = frame[target].dropna().astype(str)
    counts = labels.value_counts()
    spaced = _spelled_alike(counts)
    if spaced:
        raise DataError(
            f"Target column {target!r} holds values that write one value in different ways "
            "(spaces, case or number format): "
            f"{spaced}. They would be separate classes, and the rows of all but one counted as "
            "the other answer. Spell them alike in the column (pandas: .str.strip().str.lower() "
            "on it), then run init again."
        )
    if len(counts) < 2:
        found = f"only {counts.index[0]!r}" if len(counts) else "no value"
        hint = f" Its {missing_texts_hint(unlabeled_texts)}" if unlabeled_texts else ""
        raise DataError(
            f"Target column {target!r} holds {found}: the rules need two classes.{hint}"
        )
    if len(counts) > MAX_CLASSES and positive_class is None:
        raise DataError(
            f"Target column {target!r} holds {len(counts):,} distinct values: LIBRE learns "
            "rules for one class against the rest. Give that class with --positive, or derive a "
            "yes/no column from this one (e.g. a threshold on a number) and use it as the target."
        )
    classes = sorted(counts.index, key=_class_key)
    if positive_class is not None:
        if str(positive_class) not in counts.index:
            shown = ", ".join(repr(c) for c in classes[:MAX_CLASSES])
            written = same_label(positive_class, classes) or same_number(positive_class, classes)
            hint = f" Did you mean --positive {written[0]!r}?" if written else ""
            raise DataError(
                f"--positive {positive_class!r} is not a value of the target column {target!r} "
                f"(its values: {shown}{', ...' if len(classes) > MAX_CLASSES else ''}).{hint}"
            )
        positive, why = str(positive_class), "given with --positive"
    else:
        positive, why = _positive(counts)
    share = float(counts[positive] / counts.sum())
    if len(classes) > 2:
        why += "; the other classes are the negative answer"
    others = [c for c in columns if c != target]
    markers = missing_markers(frame, others) if file_format == "csv" else {}
    if markers:  # the columns they sat in are columns of numbers
        frame = frame.copy()
        for column in {c for marked in markers.values() for c in marked}:
            values = frame[column].mask(frame[column].astype(str).isin(list(markers)))
            frame[column] = pd.to_numeric(values, errors="coerce")
    # a few rows repeated whole (an export run twice) hide an id, which repeats with them
    try:
        distinct_rows = frame.drop_duplicates()
    except TypeError:  # cells of lists or dicts (a nested Parquet column, left out below)
        distinct_rows = frame
    reasons = {
        column: _reserved(column)
        or _empty(frame[column])
        or _nested(frame[column])
        or _constant(frame[column])
        or _dates(frame[column])
        or _durations(frame[column])
        or _identifier(distinct_rows[column])
        for column in others
    }
    kept = [c for c in others if reasons[c] is None]
    for first, copy in duplicate_columns(frame[kept]) if kept else ():
        reasons[copy] = f"the same values as {first!r} in every row read: a copy of it"
    is_positive = frame[target].astype(str).where(frame[target].notna()) == positive
    for column in [c for c in others if reasons[c] is None]:
        reasons[column] = _target_copy(frame[column], is_positive, frame[target].notna())
    left_out = {column: reason for column, reason in reasons.items() if reason is not None}
    identifiers = [c for c in left_out if left_out[c].endswith("an id?")]
    features = [c for c in others if c not in left_out]
    markers = {m: [c for c in marked if c in features] for m, marked in markers.items()}
    markers = {m: marked for m, marked in markers.items() if marked}
    if not features:
        raise DataError(
            f"The data hold no feature column besides the target {target!r}"
            + (f" (left out: {', '.join(left_out)})" if left_out else "")
            + "."
        )
    categorical = [c for c in features if not _is_numeric(frame[c])]
    codes = {c: v for c in features if c not in categorical and (v := _codes(frame[c]))}
    written = {c: hint for c in categorical if (hint := _written_otherwise(frame[c]))}
    return Starter(
        name=name,
        target=target,
        classes=classes,
        positive_class=positive,
        positive_share=share,
        why_positive=why,
        features=features,
        categorical=categorical,
        left_out=left_out,
        identifiers=identifiers,
        missing_markers=markers,
        codes=codes,
        dialect=dict(read_options or {}),
        rows_read=len(frame),
        more_rows=more_rows,
        n_unlabeled=int(frame[target].isna().sum()),
        unlabeled_texts=dict(unlabeled_texts or {}),
        written_otherwise=written,
        repeated_rows=len(frame) - len(distinct_rows),
    )


#: A column of at most this many values, each in at least :data:`COPY_MIN_ROWS` rows, whose
#: every value goes with one class is left out as a copy of the target.
COPY_MAX_VALUES, COPY_MIN_ROWS = 10, 5


def _target_copy(series: pd.Series, is_positive: pd.Series, labeled: pd.Series) -> str | None:
    """Why a column is left out as a copy of the target: each of its few values goes with one
    class in every row read (a flag derived from the outcome). Kept, it trained a version of
    holdout F1 1.000 that became the champion, with a caution only in its report."""
    present = series.notna() & labeled
    if present.sum() < 2 * COPY_MIN_ROWS or series[present].nunique() > COPY_MAX_VALUES:
        return None  # (before any text: a wide file's thousands of columns of numbers)
    values = series[present].astype(str)
    counts = values.value_counts()
    if not 2 <= len(counts) <= COPY_MAX_VALUES or counts.min() < COPY_MIN_ROWS:
        return None
    classes = is_positive[present].groupby(values).nunique()
    if (classes > 1).any() or is_positive[present].nunique() < 2:
        return None
    return (
        "each of its values goes with one class in every row read: a copy of the target, or "
        "computed from it? If it is a real cause known before the outcome, add it to include"
    )


def _written_otherwise(series: pd.Series) -> str | None:
    """Why a text feature's categories may not be what its values mean, or None: numbers
    written for people (``€2,519``: each a category of its own, ``0`` and ``€0`` apart), or
    one value written in ways that differ only in case or spaces (``Yes``, ``yes ``, ``YES``:
    the rules put some on one side and the others on the other)."""
    formatted = _formatted_numbers(series)
    if formatted is not None:
        return formatted.replace(
            ": to use them,", ", each a category of its own: to read them as numbers,", 1
        )
    groups = spelled_alike_groups(pd.unique(series.dropna().astype(str)))
    if not groups:
        return None
    shown = "; ".join(", ".join(map(repr, group[:4])) for group in groups[:3])
    more = f" (and {len(groups) - 3} more such groups)" if len(groups) > 3 else ""
    return (
        f"one value written in ways that differ only in case or spaces: {shown}{more}; each "
        "is a category of its own in the rules. Clean them in the data (pandas: "
        ".str.strip().str.lower() on the column)"
    )


def missing_markers(frame: pd.DataFrame, columns: list[str]) -> dict[str, list[str]]:
    """The texts that stand for missing values in text columns that otherwise hold numbers
    (``?`` in a column of ages): at most :data:`MAX_MARKERS` short ones per column, and none
    that is also a value of a column that is text for other reasons (reading it as missing
    there would lose a category) unless it is one of :data:`USUAL_MARKERS` (read as missing
    even there: the UCI files write "?" in every column). Marker -> the
    columns of numbers it sits in."""
    found: dict[str, list[str]] = {}
    text_values = set()
    for column in columns:
        series = frame[column]
        if _is_numeric(series):
            continue
        present = series.dropna()
        strays = present[pd.to_numeric(present, errors="coerce").isna()].astype(str).unique()
        if (
            numbers_as_text_message(series) is None
            or len(strays) > MAX_MARKERS
            or any(len(s.strip()) > MAX_MARKER_LENGTH or not s.strip() for s in strays)
        ):  # a text column: its values are categories, not markers
            text_values.update(present.astype(str).unique())
            continue
        for stray in sorted(strays):
            found.setdefault(stray, []).append(column)
    return {
        marker: cols
        for marker, cols in found.items()
        if marker not in text_values or marker.strip().lower() in USUAL_MARKERS
    }


def check(text: str, spec_path: str | Path) -> PipelineSpec:
    """``text`` read as ``libre train`` reads the spec file ``spec_path`` (a
    :class:`~libre_lib.errors.SpecError` if it would not be)."""
    return spec_from_text(text, spec_path)


def name_taken(
    store: str | Path,
    pipeline: str,
    data_path: str,
    location: str | None = None,
    file_format: str | None = None,
) -> str | None:
    """Why ``pipeline`` should not name a spec of ``data_path`` (as the spec writes it; the
    file or folder at ``location``, of ``file_format``): the store already registers a
    pipeline of that name trained on other data, whose champion a run of the new spec would
    replace; None when it does not.
    The data are compared by their fingerprint (a path as each spec writes it is relative to
    that spec's folder: two files called data.csv read alike); without ``location``, or for a
    version of an earlier release (no ``data_aliases``), by path too."""
    from .registry import ModelRegistry  # the registry only when a store exists

    if not (Path(store) / "models" / pipeline).is_dir():
        return None
    registry = ModelRegistry(store)
    try:  # a registry it cannot read is for train and models to report, not init
        versions = registry.versions(pipeline)
        spec = registry.spec(pipeline, versions[-1].version) if versions else {}
        earlier = (spec.get("data") or {}).get("path")
    except (LibreError, OSError, ValueError, AttributeError):
        return None
    if not versions:
        return None
    # versions of releases before data aliases recorded the load file's hash, not the data
    # file's: for those the path as the spec wrote it is all there is to compare
    by_path = location is None or not versions[-1].data_aliases
    if by_path and earlier == data_path:
        return None
    if location is not None:
        seen = fingerprint_source(location, file_format)
        if seen in set().union(*(v.data_fingerprints for v in versions)):
            return None
    return (
        f"The store {store} already holds a pipeline named {pipeline!r} ({len(versions)} "
        f"version(s), the newest trained on {earlier}): a spec of {data_path} under that name "
        "would replace its champion. Pass --name to name this pipeline (--name "
        f"{pipeline} continues that one with this data)."
    )


def _spelled_alike(counts: pd.Series) -> str | None:
    """The first group of values (with their row counts) that write one value in different
    ways (spaces, case, number format), as text ("' Yes' (99 rows), 'Yes ' (1 row)"), or
    None."""
    group = spelled_alike(counts.index)
    if group is None:
        return None
    return ", ".join(
        f"{value!r} ({counts[value]:,} row{'s' if counts[value] != 1 else ''})" for value in group
    )


def pipeline_name(path: str | Path) -> str:
    """A valid pipeline name from a file name: accents dropped, lower case, runs of other
    characters as one dash (``Customer Visits.csv`` → ``customer-visits``, ``données.csv`` →
    ``donnees``)."""
    stem = Path(str(path).rstrip("/")).name.split(".")[0]
    stem = unicodedata.normalize("NFKD", stem).encode("ascii", "ignore").decode().lower()
    name = re.sub(r"[^a-z0-9]+", "-", stem).strip("-")[:61].strip("-")
    return name or "pipeline"


def data_format(path: str) -> str:
    """The data's format as a spec with ``data.path`` = ``path`` reads it (a directory's from
    its files), with the spec's own words left out of its errors: there is no spec yet."""
    try:
        return directory_format(path) or DataSource(path=path).resolved_format()
    except SpecError as exc:
        if Path(path).is_dir() and "without .csv or .parquet files" in str(exc):
            raise DataError(
                f"{path} is a directory without .csv or .parquet files: give a data file, or "
                "the directory that holds them."
            ) from None
        raise


#: A class in fewer rows than this is not chosen as the positive one when others are not.
STRAY_CLASS_ROWS = 5


def _positive(counts: pd.Series) -> tuple[str, str]:
    """The class the rules describe when none is given: the yes of a yes/no pair (0/1,
    no/yes, false/true, ...), else the rarer class."""
    yes = yes_of_pair(list(counts.index))
    if yes is not None:
        return yes, "it reads as yes"
    stray = counts[counts < STRAY_CLASS_ROWS]
    kept = counts.drop(stray.index) if len(counts) - len(stray) >= 2 else counts
    rarest = kept[kept == kept.min()].index
    why = "the rarer class"
    if len(kept) < len(counts):  # a class of one row (a typo?) chosen, the holdout took it
        shown = ", ".join(f"{c!r} ({n:,} row{'s' if n > 1 else ''})" for c, n in stray.items())
        why += f" of those in {STRAY_CLASS_ROWS} rows or more; {shown}: a typo?"
    return sorted(rarest, key=_class_key)[-1], why


def _empty(series: pd.Series) -> str | None:
    """Why a column cannot be a feature because it holds nothing, or None."""
    if series.notna().any():
        return None
    return "no value in the rows read: every one is missing"


def _nested(series: pd.Series) -> str | None:
    """Why a column of lists, arrays or mappings (a Parquet list or struct column) is left out,
    or None: no rule can test such a cell."""
    if not pd.api.types.is_object_dtype(series.dtype):
        return None
    cell = next(
        (v for v in series.dropna().head(1_000) if isinstance(v, list | tuple | dict | np.ndarray)),
        None,
    )
    if cell is None:
        return None
    return (
        f"nested values ({type(cell).__name__} cells): split it into columns of text or numbers "
        "to use it"
    )


def _constant(series: pd.Series) -> str | None:
    """Why a column cannot be a feature because every row holds the same value (a value
    beside blanks stays: whether a value is there can be a signal), or None."""
    if series.isna().any() or series.nunique() != 1:
        return None
    return f"the same value in every row read: {python_scalar(series.iloc[0])!r}"


def _reserved(column) -> str | None:
    """Why a column cannot be a feature by its name: libre score writes a column of that name."""
    if str(column) not in SCORE_COLUMNS:
        return None
    return "libre score writes a column of this name: rename it in the data to use it"


def _identifier(series: pd.Series) -> str | None:
    """Why a column looks like a row identifier, or None."""
    n_present = int(series.notna().sum())
    if _is_numeric(series):
        if pd.api.types.is_integer_dtype(series.dtype):  # ids beyond 2**53 stay apart
            distinct = distinct_numbers(series)
        else:
            values = pd.to_numeric(series, errors="coerce").to_numpy(dtype=float)
            distinct = pd.unique(values[~np.isnan(values)])
        if row_ids_message(series.name, distinct, n_present) is None:
            return None
        return f"a different whole number in each of its {n_present:,} rows: an id?"
    # judged as training will judge it, on its share of the rows too: on fewer rows a column
    # of nearly unique values reads as more unique (8,981 of 10,000 passed here, and training
    # then called 7,276 of 7,946 an id)
    share = series.sample(frac=1.0 - HOLDOUT_FRACTION, random_state=0)
    if (
        id_like_message(series.name, int(series.nunique()), n_present) is None
        and id_like_message(series.name, int(share.nunique()), int(share.notna().sum())) is None
    ):
        return None
    formatted = _formatted_numbers(series)
    if formatted is not None:
        return formatted
    present = series.dropna()
    if present.astype(str).str.strip().str.count(r"\s+").median() >= 2:  # three words or more
        return (
            f"free text ({int(series.nunique()):,} distinct values in {n_present:,} rows, e.g. "
            f"{excerpt(present.iloc[0], 40)}): as categories each text is one of its own; "
            "derive features from it (its length, the words it holds) to use it"
        )
    parsed = pd.to_numeric(present.astype(str), errors="coerce")
    if parsed.notna().all() and (parsed % 1 != 0).any():  # decimals: no id (digits may be)
        return (
            f"numbers stored as text, e.g. {str(present.iloc[0])!r} ({int(series.nunique()):,} "
            f"distinct values in {n_present:,} rows): as text each value is a category of its "
            "own; write the column as numbers in the data to use it"
        )
    return f"{int(series.nunique()):,} distinct values in {n_present:,} rows: an id?"


#: The spec's default holdout share: training judges columns on the rest of the rows.
HOLDOUT_FRACTION = PipelineSpec.model_fields["holdout_fraction"].default

#: A number written for people: a currency sign, commas between thousands, a percent sign.
_FORMATTED_NUMBER = r"\s*[-+]?\s*[$€£¥]?\s*[-+]?\d{1,3}(?:,\d{3})*(?:\.\d+)?\s*%?\s*"


def _formatted_numbers(series: pd.Series) -> str | None:
    """Why a text column of numbers written for people ($3,114.38, 31,573.10, 29.0 %) is left
    out, naming what stands in the way, or None when its values are not such numbers."""
    text = series.dropna().astype(str)
    if text.empty or text.str.fullmatch(_FORMATTED_NUMBER).mean() < 0.8:
        return None
    marked = text[text.str.contains(r"[$€£¥%,]")]
    if marked.empty:
        return None
    signs = [s for s in "$€£¥%" if marked.str.contains(s, regex=False).any()]
    example = marked.iloc[0]
    plain = re.sub(r"[$€£¥%,\s]", "", example)
    if not signs and marked.str.fullmatch(r"-?\d{1,3}(,\d{3})+(\.\d+)?").all():
        return (  # thousands separators alone: the reader takes them
            f"numbers written with thousands separators, e.g. {example!r}: to use them, read "
            "them as numbers with data.read_options: {thousands: ','} in the spec, or write "
            f"them as plain numbers in the data ({plain})"
        )
    without = ", ".join(map(repr, signs)) + (" and " if signs else "") + "commas"
    return (
        f"numbers written as text, e.g. {example!r}: to use them, write them as plain "
        f"numbers in the data (without {without}: {plain})"
    )


def _dates(series: pd.Series) -> str | None:
    """Why a column is left out as dates (rules on it would name exact days, which carry over
    to no new row, as the estimator refuses date columns), or None."""
    example = date_text_example(series)
    if example is None:
        return None
    kind = "dates" if pd.api.types.is_datetime64_any_dtype(series.dtype) else "dates as text"
    return (
        f"{kind}, e.g. {example!r}: rules would name exact days; derive features from it "
        "(month, day of week, days since an event) to use it"
    )


def _durations(series: pd.Series) -> str | None:
    """Why a column of durations (a Parquet ``duration``, pandas ``timedelta64``) is left out,
    or None: as text its values would be categories, one per length of time."""
    if temporal_kind(series) == "durations":  # as the estimator tells them
        present = series.dropna()
        kind, example = "durations", f", e.g. {str(present.iloc[0])!r}" if len(present) else ""
    elif (written := duration_text_example(series)) is not None:
        kind, example = "durations as text", f", e.g. {written!r}"
    else:
        return None
    how = "pd.to_timedelta(col)" if kind == "durations as text" else "col"
    return (
        f"{kind}{example}: convert it to a number (minutes or seconds, e.g. "
        f"{how}.dt.total_seconds() / 60) to use it; rules then cut it into ranges"
    )


def _codes(series: pd.Series) -> list | None:
    """The sorted distinct values of a column of numbers that may be codes: whole numbers,
    from 3 to :data:`MAX_CODES` of them, in at least ``2 * MAX_CODES`` rows (in a few rows
    any column holds few values); None otherwise."""
    numbers = pd.to_numeric(series, errors="coerce").dropna()
    values = numbers.unique()
    if not 3 <= len(values) <= MAX_CODES or len(numbers) < 2 * MAX_CODES:
        return None
    if not np.all(np.mod(values, 1) == 0):
        return None
    return sorted(int(v) for v in values)


def _values(values: list) -> str:
    """``1, 2, 3, 4`` (at most six shown)."""
    shown = ", ".join(str(v) for v in values[:6])
    return shown + (f", ... ({len(values)} values)" if len(values) > 6 else "")


def _is_numeric(series: pd.Series) -> bool:
    return pd.api.types.is_numeric_dtype(series) and not pd.api.types.is_bool_dtype(series)


def _class_key(label: str):
    """Classes in numeric order when they are numbers, else in text order."""
    try:
        return (0, float(label), label)
    except ValueError:
        return (1, 0.0, label)


def _comment(text) -> str:
    """Text from the data (a file or column name, a class) inside a YAML comment: its line
    breaks and other control characters escaped, so it cannot end the comment and write keys
    (a file named "x\\nholdout_fraction: 0.9" did)."""
    text = str(text)
    if any(unicodedata.category(ch) in ("Cc", "Cf") for ch in text):
        return json.dumps(text, ensure_ascii=True)
    return text


def _scalar(value) -> str:
    """``value`` as one line of YAML (:func:`~libre_lib.ops.spec.yaml_scalar`)."""
    return yaml_scalar(value)
