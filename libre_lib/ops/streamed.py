"""The streamed pipeline's stages: training on a table read in batches (docs/pipeline.md,
"Streamed training").

After discretization LIBRE only needs the *distinct* bin-code records with their class counts
(paper, section 3), and ChiMerge only the class counts per value: both are sums, so they are
computed batch by batch, part by part, and merged once. Three passes over the source:

1. ``profile`` (one task per part): the validation's statistics, the class counts of every
   value of the training rows (exact while a column has at most ``EXACT_VALUES`` distinct
   values, else a quantile sketch), the rows per class.
2. ``sample`` (one per part): a uniform sample of about ``data.sample_rows`` rows, for what
   needs rows (tuning, the "auto" choice, the report, the data contract, promotion), and for the
   columns with too many distinct values the class counts on ``FINE_BINS`` fine bins cut at
   the sketch's quantiles (each bin keeps its smallest value).
3. ``encode`` (one per part): the training rows' distinct records, merged.

ChiMerge then runs on the merged counts exactly as on a frame (``discretization_from_counts``):
on exact counts the cut points equal the in-memory ones; on fine bins they are the smallest
value of one of those bins, at most one fine bin (about 1/``FINE_BINS`` of the rows) from the
in-memory pre-bin edge (measured in docs/benchmarks.md). Learners, filtering, set cover and the
report then run as in memory, on the merged records and the sample.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from ..discretization import (
    CATEGORICAL,
    DEFAULT_MAX_PREBINS,
    NUMERIC,
    ColumnCounts,
    Discretization,
    InexactElements,
    _value_counts,
    discretization_from_counts,
    prebin,
)
from ..encoding import distinct_records
from ..errors import DataError
from ..inputs import category_values, numeric_values, resolve_categorical
from .batches import (
    Part,
    copy_keys,
    holdout_flags,
    plan_parts,
    read_batches,
    row_ids,
    row_keys,
    sample_flags,
    source_columns,
)
from .spec import PipelineSpec
from .stages import (
    Stored,
    check_split_by,
    key_column_keys,
    key_text_columns,
    positive_label,
    select_columns,
    split_rule,
    validation_rules,
)
from .tables import records_table
from .validation_stream import (
    batch_statistics,
    merge_statistics,
    user_expectation_results,
)

#: A numeric column keeps exact class counts per value up to this many distinct values.
EXACT_VALUES = 65_536
#: Fine bins of a column with more distinct values (cut at its sketch's quantiles).
FINE_BINS = 16_384
#: Points a quantile sketch keeps (each with the weight of the rows it stands for).
SKETCH_POINTS = 16_384
#: Rounds of pass 2b (resolving fine bins into values) before giving up; one is the rule.
MAX_RESOLVE_ROUNDS = 4
#: A categorical column may have at most this many categories.
MAX_CATEGORIES = 100_000
#: The sample's holdout flags are stored in this column of a ``sample`` part.
HOLDOUT_COLUMN = "__libre_holdout__"


# --- the source's plan ------------------------------------------------------------------------


@dataclass(frozen=True)
class SourcePlan:
    """What every pass needs to read the source the same way: its parts, the selected columns
    (features, then the target) and which features are categorical."""

    file_format: str
    features: tuple[str, ...]
    target: str
    categorical: tuple[bool, ...]
    parts: tuple[Part, ...] = field(default=())
    keys: tuple[str, ...] = ()
    """The ``split_by`` columns that are not selected: read for the holdout keys only."""

    @property
    def columns(self) -> list[str]:
        return [*self.features, self.target]

    @property
    def read_columns(self) -> list[str]:
        """What a batch reads: :attr:`columns` and the :attr:`keys` columns."""
        return [*self.columns, *self.keys]

    @property
    def text_columns(self) -> list[str]:
        return [
            self.target,
            *(f for f, c in zip(self.features, self.categorical, strict=True) if c),
            *self.keys,
        ]

    def params(self) -> dict:
        """What a part's result depends on besides the part (cache keys)."""
        return {
            "format": self.file_format,
            "features": list(self.features),
            "target": self.target,
            "categorical": list(self.categorical),
        }


def in_part(part: Part, function: Callable, *args):
    """``function(*args)``, a pass over ``part``: a data error it raises names the part's file
    (a stray text among a later part's numbers named no file) and the spec's key for
    categorical columns, not the estimator's parameter."""
    try:
        return function(*args)
    except DataError as exc:
        text = str(exc)
        if part.path in text:
            raise
        text = text.replace("in categorical_features", "in features.categorical")
        raise DataError(f"In {part.path}: {text}") from exc


def plan_source(spec: PipelineSpec) -> SourcePlan:
    """The source's parts and columns; categorical features as declared, else by the dtype
    of the first rows (as ``LibreClassifier`` infers them)."""
    location, file_format = spec.data_location(), spec.data.resolved_format()
    names = source_columns(location, file_format, spec.data.read_options)
    check_split_by(spec, names)
    selected = list(select_columns(pd.DataFrame(columns=names), spec).columns)
    features, target = selected[:-1], selected[-1]
    parts = plan_parts(location, file_format, spec.data.batch_rows)
    head = _first_rows(spec, parts, file_format, selected)
    categorical = resolve_categorical(head[features], spec.features.categorical)
    keys = tuple(key_text_columns(spec, selected))
    return SourcePlan(file_format, tuple(features), target, tuple(categorical), tuple(parts), keys)


def _first_rows(spec, parts, file_format, columns, n_rows: int = 10_000) -> pd.DataFrame:
    text = [spec.target.column, *(spec.features.categorical or [])]
    for part in parts:
        for _, frame in read_batches(part, file_format, columns, text, n_rows, _options(spec)):
            return frame.head(n_rows)
    raise DataError(f"Data source {spec.data_location()!r} has a header but no rows.")


def _options(spec: PipelineSpec) -> dict:
    return dict(spec.data.read_options)


def batches(spec: PipelineSpec, plan: SourcePlan, part: Part, unlabeled: list | None = None):
    """(row ids, holdout flags, batch) of every batch of a part. With ``target.unlabeled:
    drop`` a batch's rows without a target value are left out (the other rows keep their row
    ids and values, so their sample and split); ``unlabeled``, if given, gets each batch's
    count of them."""
    drop = spec.target.unlabeled == "drop"
    for first_row, frame in read_batches(
        part,
        plan.file_format,
        plan.read_columns,
        plan.text_columns,
        spec.data.batch_rows,
        _options(spec),
    ):
        ids = row_ids(part.file_index, first_row, len(frame))
        if drop:
            labeled = frame[plan.target].notna().to_numpy()
            if unlabeled is not None:
                unlabeled.append(int((~labeled).sum()))
            if not labeled.all():
                frame, ids = frame[labeled].reset_index(drop=True), ids[labeled]
        if spec.split_by:
            # a batch may lack ids (the newest rows) or rows: it is keyed as far as it can be
            keys = key_column_keys(
                frame[list(spec.split_by)], frame[plan.columns], spec, whole=False
            )
            frame = frame[plan.columns]
        else:  # a repeated row's copies ranked within the batch
            keys = copy_keys(row_keys(frame))
        yield ids, holdout_flags(keys, spec.holdout_fraction, spec.split_seed), frame


def part_params(spec: PipelineSpec, plan: SourcePlan, part: Part) -> dict:
    """What a part's passes depend on: how it is read and split."""
    params = {
        **plan.params(),
        "part": part.to_dict(),
        "batch_rows": spec.data.batch_rows,
        "read_options": spec.data.read_options,
        "holdout_fraction": spec.holdout_fraction,
        "split_seed": spec.split_seed,
        "split": split_rule(spec),
        "positive_class": positive_label(spec),
    }
    if spec.split_by:  # unset, it leaves earlier cache keys as they were
        params["split_by"] = list(spec.split_by)
    if spec.target.unlabeled != "refuse":  # the default leaves earlier cache keys as they were
        params["unlabeled"] = spec.target.unlabeled
    return params


# --- pass 1: profile --------------------------------------------------------------------------


class _NumericCounts:
    """A numeric column's class counts per value while they are few, then a quantile sketch."""

    def __init__(self):
        self.values: np.ndarray | None = np.empty(0)
        self.counts = np.zeros((0, 2))
        self.sketch: tuple[np.ndarray, np.ndarray] | None = None

    def add(self, values: np.ndarray, positive: np.ndarray) -> None:
        if values.size == 0:
            return
        distinct, counts = _value_counts(values, positive)
        if self.values is not None:
            self.values, self.counts = _merge_counts(self.values, self.counts, distinct, counts)
            if self.values.size <= EXACT_VALUES:
                return
            distinct, counts = self.values, self.counts
            self.values, self.counts = None, np.zeros((0, 2))
        points = _sketch(distinct, counts.sum(axis=1))
        self.sketch = points if self.sketch is None else _merge_sketches([self.sketch, points])


def _merge_counts(a_values, a_counts, b_values, b_counts):
    values, inverse = np.unique(np.concatenate([a_values, b_values]), return_inverse=True)
    counts = np.zeros((values.size, 2))
    np.add.at(counts, inverse, np.concatenate([a_counts, b_counts]))
    return values, counts


def _sketch(values: np.ndarray, weights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """At most ``SKETCH_POINTS`` points standing for sorted ``values`` with ``weights``: the
    weighted quantiles at the middle of equal-weight slices, each with its slice's weight."""
    if values.size <= SKETCH_POINTS:
        return values.astype(np.float64), weights.astype(np.float64)
    cumulative = np.cumsum(weights)
    total = cumulative[-1]
    ranks = (np.arange(SKETCH_POINTS) + 0.5) * (total / SKETCH_POINTS)
    points = values[np.minimum(np.searchsorted(cumulative, ranks), values.size - 1)]
    return points.astype(np.float64), np.full(SKETCH_POINTS, total / SKETCH_POINTS)


def _merge_sketches(sketches) -> tuple[np.ndarray, np.ndarray]:
    values = np.concatenate([s[0] for s in sketches])
    weights = np.concatenate([s[1] for s in sketches])
    order = np.argsort(values, kind="stable")
    values, weights = values[order], weights[order]
    if values.size <= 4 * SKETCH_POINTS:
        return values, weights
    return _sketch(values, weights)


class _CategoryCounts:
    """A categorical column's class counts per category."""

    def __init__(self, name: str):
        self.name = name
        self.counts = pd.DataFrame({"neg": [], "pos": []}, index=pd.Index([], dtype=object))

    def add(self, values: np.ndarray, positive: np.ndarray) -> None:
        if values.size == 0:
            return
        batch = pd.DataFrame(
            {"neg": (~positive).astype(float), "pos": positive.astype(float)},
            index=pd.Index(values, dtype=object),
        )
        merged = pd.concat([self.counts, batch.groupby(level=0, sort=False).sum()])
        self.counts = merged.groupby(level=0, sort=False).sum()
        if len(self.counts) > MAX_CATEGORIES:
            raise DataError(
                f"Categorical column {self.name!r} has more than {MAX_CATEGORIES:,} distinct "
                "values: it cannot make readable rules. Exclude it (features.exclude) or "
                "declare it numeric."
            )


def profile(spec: PipelineSpec, plan: SourcePlan, part: Part) -> Stored:
    """Pass 1 on one part: the validation's statistics and the training rows' class counts.

    The table has a row per (column, value) of the exact counts (``kind`` "value" or
    "category") and per sketch point (``kind`` "sketch", its weight in ``neg``); the
    metadata the statistics and, per column, its missing and present counts.
    """
    rules = validation_rules(spec)
    label = positive_label(spec)
    stats, user = [], []
    numeric = {
        f: _NumericCounts() for f, c in zip(plan.features, plan.categorical, strict=True) if not c
    }
    categories = {
        f: _CategoryCounts(f) for f, c in zip(plan.features, plan.categorical, strict=True) if c
    }
    missing = dict.fromkeys(plan.features, 0)
    ranges: dict[str, list[float]] = {}
    n_rows = n_train = 0
    classes = np.zeros(2)
    unlabeled: list[int] = []
    for _, holdout, frame in batches(spec, plan, part, unlabeled):
        stats.append(batch_statistics(frame, rules))
        if rules.expectations:
            user.append(user_expectation_results(frame, rules))
        n_rows += len(frame)
        train = ~holdout
        n_train += int(train.sum())
        positive = (frame[plan.target] == label).to_numpy()[train]
        classes += np.bincount(positive.astype(np.int64), minlength=2)
        for name in plan.features:
            series = frame[name][train] if not train.all() else frame[name]
            if name in numeric:
                values = numeric_values(series)
                present = ~np.isnan(values)
                numeric[name].add(values[present], positive[present])
                if present.any():
                    low, high = values[present].min(), values[present].max()
                    known = ranges.get(name, [low, high])
                    ranges[name] = [float(min(known[0], low)), float(max(known[1], high))]
            else:
                values, absent = category_values(series)
                present = ~absent
                categories[name].add(values[present], positive[present])
            missing[name] += int((~present).sum())
    table = _profile_table(numeric, categories)
    metadata = {
        "n_rows": n_rows,
        "n_unlabeled": sum(unlabeled),
        "n_train": n_train,
        "train_classes": classes.tolist(),
        "missing": missing,
        "ranges": ranges,
        "exact": {name: counts.values is not None for name, counts in numeric.items()},
        "statistics": merge_statistics(stats) if stats else None,
        "user_results": user,
    }
    return table, metadata


def _profile_table(numeric: dict, categories: dict) -> pa.Table:
    pieces = []
    for name, acc in numeric.items():
        if acc.values is not None:
            pieces.append(_rows(name, "value", acc.values, None, acc.counts))
        else:
            values, weights = acc.sketch
            pieces.append(
                _rows(name, "sketch", values, None, np.column_stack([weights, 0 * weights]))
            )
    for name, acc in categories.items():
        counts = acc.counts
        pieces.append(
            _rows(name, "category", None, counts.index.to_numpy(dtype=object), counts.to_numpy())
        )
    frame = pd.concat(pieces, ignore_index=True) if pieces else _rows("", "value", None, None, None)
    return pa.Table.from_pandas(frame, schema=_PROFILE_SCHEMA, preserve_index=False)


_PROFILE_SCHEMA = pa.schema(
    [
        ("column", pa.string()),
        ("kind", pa.string()),
        ("value", pa.float64()),
        ("category", pa.string()),
        ("neg", pa.float64()),
        ("pos", pa.float64()),
    ]
)


def _rows(name, kind, values, categories, counts) -> pd.DataFrame:
    n = 0 if counts is None else counts.shape[0]
    counts = np.zeros((0, 2)) if counts is None else counts
    return pd.DataFrame(
        {
            "column": [name] * n,
            "kind": [kind] * n,
            "value": np.full(n, np.nan) if values is None else values,
            "category": [None] * n if categories is None else [str(c) for c in categories],
            "neg": counts[:, 0],
            "pos": counts[:, 1],
        }
    )


# --- after pass 1: the merged profile ---------------------------------------------------------


@dataclass(frozen=True)
class Profile:
    """The parts' profiles merged: row counts, statistics, and each feature's exact counts or
    the fine-bin edges its counts will be taken on (pass 2)."""

    n_rows: int
    n_train: int
    train_classes: tuple[float, float]
    statistics: dict | None
    user_results: list
    exact: dict[str, ColumnCounts]
    edges: dict[str, np.ndarray]
    missing: dict[str, int]
    n_unlabeled: int = 0
    """Rows left out for want of a target value (``target.unlabeled: drop``)."""
    ranges: dict[str, list[float]] = field(default_factory=dict)
    """Each numeric feature's smallest and largest value on the training rows (absent where
    it has none): the data contract's training range, which a sample could only narrow."""
    part_statistics: tuple = ()
    """(name, validation statistics) of each part, in order: a failed expectation names the
    parts that hold its unexpected values (:func:`~.validation_stream.name_parts`)."""

    def training_statistics(self) -> dict:
        """What the data contract needs of every training row (JSON): their number, each
        feature's missing rows and each numeric feature's range."""
        return {"n_train": self.n_train, "missing": self.missing, "ranges": self.ranges}


def merge_profiles(plan: SourcePlan, parts: Iterable[tuple[pa.Table, dict]]) -> Profile:
    """Merge the parts' profiles in part order, one part at a time (memory: one part's table
    and the merged counts)."""
    metadata = []
    numeric = {
        f: _MergedNumeric() for f, c in zip(plan.features, plan.categorical, strict=True) if not c
    }
    categories: dict[str, pd.DataFrame] = {}
    for table, meta in parts:
        metadata.append(
            {k: v for k, v in meta.items() if k != "statistics"}
            | {"statistics": meta["statistics"]}
        )
        for name, is_categorical in zip(plan.features, plan.categorical, strict=True):
            rows = table.filter(pc.equal(table.column("column"), name))
            counts = np.column_stack([rows.column("neg").to_numpy(), rows.column("pos").to_numpy()])
            if is_categorical:
                keys = rows.column("category").to_numpy(zero_copy_only=False)
                batch = pd.DataFrame(
                    counts, columns=["neg", "pos"], index=pd.Index(keys, dtype=object)
                )
                merged = pd.concat([categories[name], batch]) if name in categories else batch
                categories[name] = merged.groupby(level=0, sort=False).sum()
            else:
                numeric[name].add(rows.column("value").to_numpy(), counts, meta["exact"][name])
    missing = {f: sum(m["missing"][f] for m in metadata) for f in plan.features}
    ranges: dict[str, list[float]] = {}
    for meta in metadata:
        for name, (low, high) in meta["ranges"].items():
            known = ranges.get(name, [low, high])
            ranges[name] = [min(known[0], low), max(known[1], high)]
    exact, edges = {}, {}
    for name, is_categorical in zip(plan.features, plan.categorical, strict=True):
        if is_categorical:
            merged = categories.get(name, pd.DataFrame({"neg": [], "pos": []}))
            exact[name] = _column(name, CATEGORICAL, merged.index.to_numpy(dtype=object),
                                  merged.to_numpy(), missing[name])  # fmt: skip
        elif numeric[name].values is not None:
            acc = numeric[name]
            exact[name] = _column(name, NUMERIC, acc.values, acc.counts, missing[name])
        else:
            edges[name] = fine_edges(numeric[name].sketch)
    statistics = merge_statistics([m["statistics"] for m in metadata if m["statistics"]])
    return Profile(
        n_rows=sum(m["n_rows"] for m in metadata),
        n_train=sum(m["n_train"] for m in metadata),
        train_classes=tuple(np.sum([m["train_classes"] for m in metadata], axis=0).tolist()),
        statistics=statistics,
        user_results=[r for m in metadata for r in m["user_results"]],
        exact=exact,
        edges=edges,
        missing=missing,
        n_unlabeled=sum(m.get("n_unlabeled", 0) for m in metadata),
        ranges=ranges,
        part_statistics=tuple(
            (part_name(plan, part), m["statistics"])
            for part, m in zip(plan.parts, metadata, strict=True)
            if m["statistics"]
        ),
    )


def part_name(plan: SourcePlan, part: Part) -> str:
    """A part as a person finds it: its file's name, and where a file has several parts the
    row it starts at."""
    name = Path(part.path).name
    shared = sum(p.path == part.path for p in plan.parts) > 1
    return f"{name} from row {part.first_row + 1:,}" if shared else name


class _MergedNumeric:
    """A numeric column's parts merged: exact counts while every part had them and they stay
    at most ``EXACT_VALUES``, else a quantile sketch."""

    def __init__(self):
        self.values: np.ndarray | None = np.empty(0)
        self.counts = np.zeros((0, 2))
        self.sketch = (np.empty(0), np.empty(0))

    def add(self, points: np.ndarray, counts: np.ndarray, exact: bool) -> None:
        if self.values is not None and exact:
            self.values, self.counts = _merge_counts(self.values, self.counts, points, counts)
            if self.values.size <= EXACT_VALUES:
                return
            points, counts = self.values, self.counts
        elif self.values is not None:  # this part has a sketch: so will the merge
            self.sketch = (self.values, self.counts.sum(axis=1))
        self.values, self.counts = None, np.zeros((0, 2))
        self.sketch = _merge_sketches([self.sketch, (points, counts.sum(axis=1))])


def _column(name, kind, values, counts, n_missing) -> ColumnCounts:
    counts = np.asarray(counts, dtype=np.float64).reshape(-1, 2)
    return ColumnCounts(name, kind, values, counts, int(counts.sum()), int(n_missing))


def fine_edges(sketch: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
    """The fine bins' inner edges: the sketch's quantiles at ``k / FINE_BINS``; a value heavier
    than a fine bin gets a bin of its own (an edge at it and one just above it). An array, so
    a task parameter holding it is shared, not copied element by element."""
    values, weights = sketch
    if values.size == 0:
        return np.empty(0)
    cumulative = np.cumsum(weights)
    ranks = np.arange(1, FINE_BINS) * (cumulative[-1] / FINE_BINS)
    quantiles = values[np.minimum(np.searchsorted(cumulative, ranks), values.size - 1)]
    distinct, repeats = np.unique(quantiles, return_counts=True)
    heavy = distinct[repeats > 1]
    above = np.nextafter(heavy, np.inf)
    return np.unique(np.concatenate([distinct, above]))


# --- pass 2: sample and fine counts -----------------------------------------------------------


def sample_rate(spec: PipelineSpec, n_rows: int) -> float:
    """The share of rows the sample keeps (all of them up to ``data.sample_rows``)."""
    return min(1.0, spec.data.sample_rows / max(n_rows, 1))


def sample(
    spec: PipelineSpec, plan: SourcePlan, part: Part, rate: float, edges: dict[str, np.ndarray]
) -> tuple[Stored, Stored]:
    """Pass 2 on one part: its sampled rows (with their holdout flags), and the training rows'
    class counts on the fine bins of the columns in ``edges`` (a row per column and non-empty
    bin: the bin's smallest value and its class counts)."""
    label = positive_label(spec)
    pieces = []
    fine = {name: _FineCounts(np.asarray(e, dtype=np.float64)) for name, e in edges.items()}
    for ids, holdout, frame in batches(spec, plan, part):
        keep = sample_flags(ids, rate, spec.split_seed)
        if keep.any():
            rows = _numbers_as_numbers(frame.loc[keep], plan)
            pieces.append(rows.assign(**{HOLDOUT_COLUMN: holdout[keep]}))
        if fine:
            train = ~holdout
            positive = (frame[plan.target] == label).to_numpy()[train]
            for name, counts in fine.items():
                values = numeric_values(frame[name][train])
                present = ~np.isnan(values)
                counts.add(values[present], positive[present])
    rows = pd.concat(pieces, ignore_index=True) if pieces else _empty(plan)
    return (rows, {"n_rows": len(rows)}), (_fine_table(fine), {})


def _numbers_as_numbers(frame: pd.DataFrame, plan: SourcePlan) -> pd.DataFrame:
    """``frame`` with its numeric features written as text (a part whose Parquet file stores
    them as strings) read as numbers, as the passes read them: the parts' samples then merge
    into one column type."""
    texts = {
        name: numeric_values(frame[name])
        for name, categorical in zip(plan.features, plan.categorical, strict=True)
        if not categorical
        and not (
            pd.api.types.is_numeric_dtype(frame[name].dtype)
            and not pd.api.types.is_bool_dtype(frame[name].dtype)
        )
    }
    return frame.assign(**texts) if texts else frame


def _fine_table(fine: dict) -> pa.Table:
    pieces = []
    for name, counts in fine.items():
        bins = np.flatnonzero(counts.counts.sum(axis=1) > 0)
        pieces.append(
            pd.DataFrame(
                {
                    "column": name,
                    "bin": bins.astype(np.int64),
                    "value": counts.smallest[bins],
                    "neg": counts.counts[bins, 0],
                    "pos": counts.counts[bins, 1],
                }
            )
        )
    frame = (
        pd.concat(pieces, ignore_index=True)
        if pieces
        else pd.DataFrame({"column": [], "bin": [], "value": [], "neg": [], "pos": []})
    )
    return pa.Table.from_pandas(
        frame.astype({"column": object, "bin": np.int64}), preserve_index=False
    )


def _empty(plan: SourcePlan) -> pd.DataFrame:
    return pd.DataFrame({c: pd.Series(dtype=object) for c in [*plan.columns, HOLDOUT_COLUMN]})


class _FineCounts:
    """Class counts and the smallest value of each fine bin of one column."""

    def __init__(self, edges: np.ndarray):
        self.edges = edges
        self.counts = np.zeros((edges.size + 1, 2))
        self.smallest = np.full(edges.size + 1, np.inf)

    def add(self, values: np.ndarray, positive: np.ndarray) -> None:
        if values.size == 0:
            return
        bins = np.searchsorted(self.edges, values, side="right")
        n = self.counts.shape[0]
        self.counts[:, 1] += np.bincount(bins, weights=positive.astype(float), minlength=n)
        self.counts[:, 0] += np.bincount(bins, weights=(~positive).astype(float), minlength=n)
        np.minimum.at(self.smallest, bins, values)


def merge_samples(plan: SourcePlan, parts: list[pd.DataFrame]) -> tuple[Stored, Stored]:
    """The parts' samples in part order: the ``load``-like table of the sampled rows, and the
    ``split``-like table of their holdout flags."""
    frame = pd.concat(parts, ignore_index=True) if parts else _empty(plan)
    flags = frame.pop(HOLDOUT_COLUMN).to_numpy(dtype=bool)
    return (frame[plan.columns], {"n_rows": len(frame)}), (pa.table({"holdout": flags}), {})


class NeedBins(Exception):
    """Exact pre-binning needs the values of more fine bins (``bins``: per column)."""

    def __init__(self, bins: dict[str, list[int]]):
        super().__init__(f"fine bins to resolve in {sorted(bins)}")
        self.bins = bins


@dataclass(frozen=True)
class FineColumn:
    """A column's training counts on its fine bins (pass 2), with the exact values of the bins
    resolved so far (pass 2b): ``elements`` lists, in value order, each resolved value and each
    unresolved bin (its smallest value, its counts)."""

    name: str
    edges: np.ndarray
    bins: np.ndarray
    lefts: np.ndarray
    counts: np.ndarray
    n_missing: int
    resolved: pd.DataFrame | None = None
    """Rows (bin, value, neg, pos) of the resolved bins' distinct values."""

    def singleton(self) -> np.ndarray:
        """Per non-empty bin: does it hold a single value (``[v, nextafter(v))``)?"""
        lo = np.concatenate(([-np.inf], self.edges))[self.bins]
        hi = np.concatenate((self.edges, [np.inf]))[self.bins]
        return np.nextafter(lo, np.inf) == hi

    def elements(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(values, counts, exact, bin) of the elements in value order."""
        exact = self.singleton()
        if self.resolved is None or len(self.resolved) == 0:
            return self.lefts, self.counts, exact, self.bins
        done = np.isin(self.bins, self.resolved["bin"].to_numpy())
        keep = ~done
        values = np.concatenate([self.lefts[keep], self.resolved["value"].to_numpy()])
        counts = np.concatenate([self.counts[keep], self.resolved[["neg", "pos"]].to_numpy()])
        bins = np.concatenate([self.bins[keep], self.resolved["bin"].to_numpy()])
        flags = np.concatenate([exact[keep], np.ones(len(self.resolved), dtype=bool)])
        order = np.lexsort((values, bins))
        return values[order], counts[order], flags[order], bins[order]

    def first_guess(self, max_prebins: int) -> list[int]:
        """The bins the pre-binning's quantiles (for every number of them it may try) and its
        heavy values fall in: resolving them usually suffices. It tries ``max_prebins``
        quantiles, and fewer only when heavy values add pre-bins: at most one fewer per heavy
        value (``_prebin_starts``)."""
        sizes = self.counts.sum(axis=1)
        total = sizes.sum()
        cumulative = np.cumsum(sizes)
        heavy = sizes >= total / max_prebins
        wanted = [self.bins[heavy]]
        for q in range(max(2, max_prebins - int(heavy.sum())), max_prebins + 1):
            targets = np.linspace(0.0, total, q + 1)[1:-1]
            wanted.append(self.bins[np.searchsorted(cumulative, targets, side="left")])
        bins = np.unique(np.concatenate(wanted))
        return bins[~np.isin(bins, self.bins[self.singleton()])].tolist()

    def column_counts(self, max_prebins: int) -> ColumnCounts:
        """The exact pre-bins as class counts (see ``discretization.prebin``), or NeedBins."""
        values, counts, exact, bins = self.elements()
        n_present = int(self.counts.sum())
        if values.size <= max_prebins:  # maybe no more distinct values than pre-bins: know them
            if not exact.all():
                raise NeedBins({self.name: np.unique(bins[~exact]).tolist()})
            return ColumnCounts(self.name, NUMERIC, values, counts, n_present, self.n_missing)
        try:
            values, counts = prebin(values, counts, max_prebins, exact)
        except InexactElements as need:
            raise NeedBins({self.name: np.unique(bins[need.indices]).tolist()}) from None
        return ColumnCounts(self.name, NUMERIC, values, counts, n_present, self.n_missing)


def fine_columns(
    profile: Profile, fine_tables: Iterable[pa.Table], resolved_tables: Iterable[pa.Table] = ()
) -> dict[str, FineColumn]:
    """The fine-binned columns, their parts' counts merged one part at a time (dense arrays of
    a column's fine bins), with the values resolved so far."""
    edges = {name: np.asarray(e, dtype=np.float64) for name, e in profile.edges.items()}
    counts = {name: np.zeros((e.size + 1, 2)) for name, e in edges.items()}
    smallest = {name: np.full(e.size + 1, np.inf) for name, e in edges.items()}
    for table in fine_tables:
        for name in edges:
            rows = table.filter(pc.equal(table.column("column"), name))
            bins = rows.column("bin").to_numpy()
            counts[name][bins, 0] += rows.column("neg").to_numpy()
            counts[name][bins, 1] += rows.column("pos").to_numpy()
            smallest[name][bins] = np.minimum(smallest[name][bins], rows.column("value").to_numpy())
    resolved = _resolved_values(resolved_tables, edges)
    columns = {}
    for name in edges:
        bins = np.flatnonzero(counts[name].sum(axis=1) > 0)
        values = resolved.get(name)
        columns[name] = FineColumn(
            name, edges[name], bins.astype(np.int64), smallest[name][bins], counts[name][bins],
            profile.missing[name], values,
        )  # fmt: skip
    return columns


def _resolved_values(tables: Iterable[pa.Table], edges: dict) -> dict[str, pd.DataFrame]:
    """Per column, the resolved distinct values with their bin and summed class counts (from
    the parts' ``resolve`` tables, one at a time; numbers only, no per-row text)."""
    pieces: dict[str, list] = {name: [] for name in edges}
    for table in tables:
        for name in edges:
            rows = table.filter(pc.equal(table.column("column"), name))
            if rows.num_rows:
                columns = ("value", "neg", "pos")
                pieces[name].append([rows.column(c).to_numpy() for c in columns])
    merged = {}
    for name, parts in pieces.items():
        if not parts:
            continue
        values = np.concatenate([p[0] for p in parts])
        counts = np.column_stack([np.concatenate([p[k] for p in parts]) for k in (1, 2)])
        distinct, inverse = np.unique(values, return_inverse=True)
        summed = np.zeros((distinct.size, 2))
        np.add.at(summed, inverse.ravel(), counts)
        merged[name] = pd.DataFrame(
            {
                "bin": np.searchsorted(edges[name], distinct, side="right").astype(np.int64),
                "value": distinct,
                "neg": summed[:, 0],
                "pos": summed[:, 1],
            }
        )
    return merged


def bins_to_resolve(fine: dict[str, FineColumn]) -> dict[str, list[int]]:
    """Per fine-binned column, the bins whose values pass 2b collects first."""
    return {name: column.first_guess(DEFAULT_MAX_PREBINS) for name, column in fine.items()}


def column_counts(
    plan: SourcePlan,
    profile: Profile,
    fine_tables: list[pa.Table] = (),
    resolved_tables: list[pa.Table] = (),
) -> list[ColumnCounts]:
    """Every feature's class counts: exact from the profile, or the exact pre-bins of a
    fine-binned column (:class:`NeedBins` when more bins must be resolved)."""
    fine = fine_columns(profile, fine_tables, resolved_tables)
    columns, needed = [], {}
    for name in plan.features:
        if name in profile.exact:
            columns.append(profile.exact[name])
            continue
        try:
            columns.append(fine[name].column_counts(DEFAULT_MAX_PREBINS))
        except NeedBins as need:
            needed.update(need.bins)
    if needed:
        raise NeedBins(needed)
    return columns


def resolved_counts(
    plan: SourcePlan,
    profile: Profile,
    fine: Callable[[], Iterable[pa.Table]],
    resolve_round: Callable[[dict[str, list[int]]], Iterable[pa.Table]],
) -> list[ColumnCounts]:
    """Every feature's class counts, resolving fine bins in rounds until the pre-bins are exact
    (one round is the rule). ``fine()`` gives the parts' fine-count tables anew;
    ``resolve_round(bins)`` runs pass 2b for ``bins`` and gives every resolved table so far."""
    wanted = bins_to_resolve(fine_columns(profile, fine()))
    resolved: Iterable[pa.Table] = ()
    for _ in range(MAX_RESOLVE_ROUNDS):
        if any(wanted.values()):
            resolved = resolve_round(wanted)
        try:
            return column_counts(plan, profile, fine(), resolved)
        except NeedBins as need:
            wanted = need.bins
    raise RuntimeError(f"pre-binning still needs fine bins after {MAX_RESOLVE_ROUNDS} rounds")


def resolve(
    spec: PipelineSpec, plan: SourcePlan, part: Part, edges: dict, bins: dict[str, list[int]]
) -> Stored:
    """Pass 2b on one part: the distinct values and class counts of the training rows that fall
    in the given fine bins (a row per column, bin and value)."""
    label = positive_label(spec)
    wanted = {name: np.asarray(b, dtype=np.int64) for name, b in bins.items() if b}
    found: dict[str, pd.DataFrame] = {}
    for _, holdout, frame in batches(spec, plan, part):
        train = ~holdout
        positive = (frame[plan.target] == label).to_numpy()[train]
        for name, chosen in wanted.items():
            values = numeric_values(frame[name][train])
            in_bin = np.searchsorted(np.asarray(edges[name]), values, side="right")
            keep = ~np.isnan(values) & np.isin(in_bin, chosen)
            if not keep.any():
                continue
            distinct, counts = _value_counts(values[keep], positive[keep])
            batch = pd.DataFrame({"value": distinct, "neg": counts[:, 0], "pos": counts[:, 1]})
            if name in found:
                batch = pd.concat([found[name], batch]).groupby("value", as_index=False).sum()
            found[name] = batch
    pieces = []
    for name, frame in found.items():
        in_bin = np.searchsorted(np.asarray(edges[name]), frame["value"].to_numpy(), side="right")
        pieces.append(frame.assign(column=name, bin=in_bin.astype(np.int64)))
    table = (
        pd.concat(pieces, ignore_index=True)
        if pieces
        else pd.DataFrame({"value": [], "neg": [], "pos": [], "column": [], "bin": []})
    )
    table = table.astype({"column": object, "bin": np.int64})
    return pa.Table.from_pandas(
        table[["column", "bin", "value", "neg", "pos"]], preserve_index=False
    ), {}


def discretize(spec: PipelineSpec, columns: list[ColumnCounts], max_intervals) -> Discretization:
    """ChiMerge / category bins from the merged counts (as ``LibreClassifier.discretize``)."""
    discretization = discretization_from_counts(
        columns,
        float(spec.model.chi2_threshold),
        max_intervals,
        significant_cuts=spec.model.significant_cuts,
        merge_order=spec.model.merge_order,
    )
    if not discretization.features:
        raise DataError("No usable feature: every column is constant or entirely missing.")
    return discretization


# --- pass 3: encode ---------------------------------------------------------------------------


def encode_part(spec: PipelineSpec, plan: SourcePlan, part: Part, discretization) -> Stored:
    """Pass 3 on one part: its training rows' distinct records (first-occurrence order)."""
    label = positive_label(spec)
    n_bins = discretization.n_bins
    pieces = []
    for _, holdout, frame in batches(spec, plan, part):
        train = frame.loc[~holdout]
        codes = discretization.transform(train)
        positive = (train[plan.target] == label).to_numpy()
        pieces.append(
            distinct_records(codes, n_bins, positive.astype(float), (~positive).astype(float))
        )
        if sum(p.n_rows for p in pieces) > 4 * max(pieces[0].n_rows, 1) and len(pieces) > 2:
            pieces = [merge_records(pieces, n_bins)]
    records = merge_records(pieces, n_bins) if pieces else _no_records(discretization)
    return records_table(records, discretization)


def merge_records(pieces, n_bins: np.ndarray):
    """Distinct records of consecutive pieces of rows, merged (first occurrence kept)."""
    codes = np.concatenate([p.codes for p in pieces])
    positive = np.concatenate([p.positive_weight for p in pieces])
    negative = np.concatenate([p.negative_weight for p in pieces])
    records = distinct_records(codes, n_bins, positive, negative)
    return records


def _no_records(discretization):
    width = len(discretization.features)
    return distinct_records(
        np.zeros((0, width), dtype=np.int32), discretization.n_bins, np.empty(0), np.empty(0)
    )


def records_from_tables(tables: Iterable[pa.Table], discretization):
    """The parts' records tables merged into the ``encode`` stage's records, a few parts at a
    time (first occurrence kept), so memory holds the merged records and a few parts'."""
    from .tables import records_from_table

    metadata = {"features": discretization.names}
    merged, pending, rows = None, [], 0
    for table in tables:
        pending.append(records_from_table(table, metadata))
        rows += pending[-1].n_rows
        if merged is None or rows > max(merged.n_rows, 100_000):
            merged = merge_records(
                ([merged] if merged is not None else []) + pending, discretization.n_bins
            )
            pending, rows = [], 0
    if pending:
        merged = merge_records(
            ([merged] if merged is not None else []) + pending, discretization.n_bins
        )
    return merged if merged is not None else _no_records(discretization)


# --- the passes in one process ----------------------------------------------------------------


@dataclass(frozen=True)
class StreamedData:
    """What the three passes give, run in one process (:func:`stream`)."""

    plan: SourcePlan
    profile: Profile
    sample: pd.DataFrame
    sample_holdout: np.ndarray
    discretization: Discretization
    records: object
    columns: list[ColumnCounts]


def stream(spec: PipelineSpec, max_intervals: int | None = 3) -> StreamedData:
    """The three passes over a spec's source in this process, part after part (the pipeline
    maps them over tasks instead); ``max_intervals``: ChiMerge's cap."""
    plan = plan_source(spec)
    merged = merge_profiles(plan, [profile(spec, plan, part) for part in plan.parts])
    rate = sample_rate(spec, merged.n_rows)
    passes = [sample(spec, plan, part, rate, merged.edges) for part in plan.parts]
    (rows, _), (flags, _) = merge_samples(plan, [p[0][0] for p in passes])
    fine = [p[1][0] for p in passes]
    resolved: list[pa.Table] = []

    def resolve_round(wanted: dict) -> list[pa.Table]:
        resolved.extend(resolve(spec, plan, part, merged.edges, wanted)[0] for part in plan.parts)
        return resolved

    columns = resolved_counts(plan, merged, lambda: fine, resolve_round)
    discretization = discretize(spec, columns, max_intervals)
    tables = [encode_part(spec, plan, part, discretization)[0] for part in plan.parts]
    records = records_from_tables(tables, discretization)
    holdout = flags.column("holdout").to_numpy(zero_copy_only=False)
    return StreamedData(plan, merged, rows, holdout, discretization, records, columns)
