"""The training pipeline's stages as plain functions.

Each stage takes plain values (the spec, frames, the method's objects) and returns what the
artifact store keeps of it: a table and a metadata dict. ``<stage>_params(spec)`` names the spec
fields a stage depends on, i.e. what its cache key hashes. The stages are named as in
docs/pipeline.md:

load → validate → split → choose → discretize → encode → learn (one per feature subset) →
union_filter → set_cover → report → register → publish → promote

The Prefect tasks in ``tasks/`` read a stage's inputs from the store, call the stage and write
its result; nothing here knows Prefect.
"""

from __future__ import annotations

import contextlib
import json
import math
import re
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
from sklearn.model_selection import train_test_split

from ..discretization import CATEGORICAL, Discretization, identifier_messages
from ..encoding import DistinctRecords
from ..ensemble import Candidates, learn_subset, union_candidates
from ..errors import DataError, LibreError, SpecError, counted, excerpt
from ..estimator import (
    AUTO_CHOSEN,
    AUTO_FALLBACK,
    AUTO_SIGNIFICANT_ROWS,
    LibreClassifier,
    auto_below_trivial_message,
    auto_refit_order,
)
from ..inputs import (
    Target,
    as_frame,
    binary_target,
    duplicate_columns,
    duplicate_columns_message,
    misread_text_columns,
    narrow_float,
    python_scalar,
    same_number,
    temporal_kind,
)
from ..params import AUTO
from ..rules import tested_columns
from ..search import (
    ESTIMATOR_TUNED,
    WIDE_COLUMNS,
    WIDE_MAX_FEATURES,
    LibreSearchCV,
    below_trivial_message,
    caps_bins,
    default_grid,
    flag_every_row_f1,
    thins_cuts,
    wide_columns,
)
from ..selection import cover_candidates, filter_candidates
from .artifacts import fingerprint_frame, fingerprint_json
from .baselines import TREND_VERSIONS, far_share, version_trend
from .batches import HOLDOUT_SALT, copy_keys, row_keys, source_columns, unit_hash
from .contract import DataContract
from .diff import ChampionChanges
from .display import SAMPLED, RuleDisplay, value_key
from .registry import (
    Holdout,
    ModelRegistry,
    ModelVersion,
    PromotionDecision,
    RegistryError,
    validation_record,
)
from .report import (
    RuleReport,
    build_report,
    render_html,
    render_markdown,
    thinned_by_rows,
    thinned_cuts,
)
from .scoring import SCORE_COLUMNS
from .sources import read_source, separator_hint
from .spec import BIN_OPTIONS, PipelineSpec, yaml_scalar
from .tables import (
    candidates_table,
    choice_table,
    discretization_table,
    records_table,
    selection_table,
)
from .validation import ColumnRule, ValidationReport, ValidationRules, validate_frame

Stored = tuple[pa.Table | pd.DataFrame, dict]
"""What a stage returns for the store: its table and its metadata."""


def _spec_dump(spec: PipelineSpec) -> dict:
    dumped = spec.model_dump(mode="json")
    if not dumped["split_by"]:  # unset, it leaves the hashes of earlier specs as they were
        del dumped["split_by"]
    return dumped


def spec_hash(spec: PipelineSpec) -> str:
    """The fingerprint of the whole spec (provenance of every stage file)."""
    return fingerprint_json(_spec_dump(spec))


#: The spec's sections that change neither the model, nor its data, nor how it is scored:
#: how and when a run executes, where it stores, what the report calls things, how a version
#: is promoted.
NOT_MODEL_SECTIONS = ("description", "runner", "schedule", "report", "store", "promotion")


#: The ``data`` keys that say how the rows are read (whole, or streamed in batches of so
#: many), not which rows: the same model from the same rows read either way is one version.
READING_KEYS = ("streamed", "batch_rows")


def model_spec_hash(spec: PipelineSpec, with_path: bool = False, reading: bool = False) -> str:
    """The fingerprint of the spec's sections that make the model (a model version's spec
    hash): a spec that changes only :data:`NOT_MODEL_SECTIONS` (another runner, a report
    title, the store path spelled otherwise), where its data lie (``data.path``: the rows
    themselves are the version's data fingerprint) or how they are read
    (:data:`READING_KEYS`) and trains the same model on the same data reuses its version
    instead of registering a copy. The hashes earlier releases recorded: ``reading``, with the
    reading keys; ``with_path``, with them and the path (a copy of the same rows under another
    name registered one)."""
    dumped = _spec_dump(spec)
    for section in NOT_MODEL_SECTIONS:
        dumped.pop(section, None)
    left_out = () if with_path else ("path",) if reading else ("path", *READING_KEYS)
    dumped["data"] = {k: v for k, v in dumped["data"].items() if k not in left_out}
    return fingerprint_json(dumped)


def positive_label(spec: PipelineSpec) -> str:
    """Targets are read as text, so the spec's positive class is compared as text."""
    return str(spec.target.positive_class)


def estimator(spec: PipelineSpec) -> LibreClassifier:
    """The (unfitted) LibreClassifier the spec's model section declares."""
    params = spec.estimator_params()
    params["positive_class"] = str(params["positive_class"])
    return LibreClassifier(**params)


def target(spec: PipelineSpec, y: pd.Series) -> Target:
    return binary_target(y, positive_label(spec), n_rows=len(y))


# --- load -------------------------------------------------------------------------------------


def select_columns(frame: pd.DataFrame, spec: PipelineSpec) -> pd.DataFrame:
    """The spec's features (``include`` minus ``exclude``) followed by the target column."""
    target_column = spec.target.column
    if target_column not in frame.columns:
        raise DataError(
            f"The target column {target_column!r} is not in the data. Columns are: "
            f"{list(frame.columns)}." + separator_hint(frame.columns)
        )
    features = spec.features
    unknown = [c for c in (features.include or []) + features.exclude if c not in frame.columns]
    if unknown:
        named = {*(features.include or []), *features.exclude, target_column}
        unnamed = [c for c in frame.columns if c not in named]
        renamed = (  # a delivery whose column was renamed upstream
            f" The data have {excerpt(unnamed, 200)}, which the spec does not name: renamed? "
            "Then rename it back in the data, or update features in the spec (the champion "
            "reads the old name)."
            if features.include is not None and unnamed
            else ""
        )
        raise SpecError(
            f"features.include/exclude name columns not in the data ({spec.data.path}): "
            f"{unknown}. Columns are: {excerpt(list(frame.columns), 600)}."
            + renamed
            + separator_hint(frame.columns)
        )
    keep = features.include if features.include is not None else list(frame.columns)
    keep = [c for c in keep if c not in features.exclude and c != target_column]
    temporal = [(c, temporal_kind(frame[c])) for c in keep]
    temporal = [(c, kind) for c, kind in temporal if kind is not None]
    if temporal:  # all at once, in the spec's terms (the fit named the first, "drop it")
        listed = ", ".join(f"{c!r} ({kind}, dtype {frame[c].dtype})" for c, kind in temporal)
        raise DataError(
            f"Feature columns of {spec.data.path} hold dates, durations, times or intervals: "
            f"{listed}. Rules on them would name exact values that carry over to no new row. "
            f"Leave them out (features.exclude: {[c for c, _ in temporal]!r}), or derive "
            "numbers from them in the data (days since a date, a duration in seconds, the "
            "hour of a time)."
        )
    taken = [c for c in keep if str(c) in SCORE_COLUMNS]
    if taken:
        raise SpecError(
            f"Feature column(s) {taken} have the names of columns that libre score adds to its "
            f"output ({', '.join(SCORE_COLUMNS)}): a model that reads them could not be scored. "
            "Rename them in the data, or leave them out (features.exclude)."
        )
    declared = features.categorical or []
    unknown = [c for c in declared if c not in frame.columns]
    if unknown:
        raise SpecError(
            f"features.categorical names columns not in the data: {unknown}. Columns are: "
            f"{list(frame.columns)}."
        )
    unused = [c for c in declared if c not in keep]
    if unused:
        raise SpecError(
            f"features.categorical names columns that are not features (the target, or left "
            f"out by features.include/exclude): {unused}."
        )
    selected = frame[[*keep, target_column]]
    check_report_labels(selected, spec, declared, data_columns=frame.columns)
    return selected


def check_report_labels(
    frame: pd.DataFrame, spec: PipelineSpec, categorical: list, data_columns=None
) -> None:
    """Labels name the loaded columns (``frame``: the features and the target; checked at
    ``load`` and again at ``report``, since a cached ``load`` does not run) and must not pass
    for other names: a column label is not another column's name, a value label not another
    value of its column, a class label not the other class; value labels need a categorical
    column. ``data_columns``: every
    column of the data, for the error's advice."""
    labels = spec.report.column_labels
    unknown = [c for c in labels if c not in frame.columns]
    if unknown:  # a column left out may keep its label (nothing shows it); a typo may not
        if data_columns is None:  # a cached load: the file's header, read again
            data_columns = source_columns(
                spec.data_location(), spec.data.resolved_format(), spec.data.read_options
            )
        unknown = [c for c in unknown if c not in data_columns]
        if unknown:
            raise SpecError(
                f"report.column_labels names columns not in the data: {unknown}. Columns are: "
                f"{excerpt(list(data_columns), 600)}."
            )
    unknown = [c for c in spec.report.value_labels if c not in frame.columns]
    if unknown:
        raise SpecError(
            f"report.value_labels names columns that are not features of this pipeline: "
            f"{unknown}. Its features are: "
            f"{excerpt([c for c in frame.columns if c != spec.target.column], 600)}."
        )
    for column, label in labels.items():
        if label != column and label in frame.columns and label not in labels:
            raise SpecError(
                f"report.column_labels labels {column!r} as {label!r}, the name of another "
                "column of the data: rules would read as if they tested that column. Choose "
                "another label, or label that column too."
            )
    for column, value_labels in spec.report.value_labels.items():
        series = frame[column]
        numeric = pd.api.types.is_numeric_dtype(series) and not pd.api.types.is_bool_dtype(series)
        if numeric and column not in categorical:
            raise SpecError(
                f"report.value_labels labels values of {column!r}, which holds numbers: the "
                "model cuts it into ranges, so no value is shown on its own. Declare it in "
                "features.categorical to label its values, or remove its value_labels."
            )
        raw = {value_key(v) for v in pd.unique(series.dropna())}
        labelled = {value_key(v) for v in value_labels}
        for value, label in value_labels.items():
            if value_key(label) in raw - labelled:
                raise SpecError(
                    f"report.value_labels labels {value!r} of column {column!r} as {label!r}, "
                    "which is also a value of that column: rules would read as if they named "
                    "it. Choose another label, or label that value too."
                )
    target = spec.target.column
    if spec.report.class_labels and target in frame.columns:
        classes = {value_key(v): v for v in pd.unique(frame[target].dropna())}
        for value, label in spec.report.class_labels.items():
            other = classes.get(value_key(label))
            if other is not None and value_key(other) != value_key(value):
                raise SpecError(
                    f"report.class_labels labels the class {value!r} as {label!r}, which is "
                    f"the other class of {target!r}: the report would name one class with the "
                    "other's value (a rule's THEN, the baselines, the confusion matrix). "
                    "Choose a label that is not a class, e.g. a word for what the class means."
                )


def load_params(spec: PipelineSpec) -> dict:
    params = {
        "format": spec.data.resolved_format(),
        "read_options": spec.data.read_options,
        "features": spec.features.model_dump(),
        "target": spec.target.column,
    }
    if spec.target.unlabeled != "refuse":  # the default leaves earlier cache keys as they were
        params["unlabeled"] = spec.target.unlabeled
    if spec.split_by:  # checked against the data's columns when loading
        params["split_by"] = list(spec.split_by)
    return params


def load(spec: PipelineSpec, fingerprint: str) -> Stored:
    """The source file's selected columns; the target and categoricals are read as text. With
    ``target.unlabeled: drop`` the rows without a target value are left out, and counted. The
    metadata keep the file's sha256 and the selected content's (``fingerprint_frame``): a
    copy of the same rows in other bytes is the same data to the registry."""
    location = spec.data_location()
    text_columns = [spec.target.column, *(spec.features.categorical or [])]
    frame = read_source(location, spec.data.resolved_format(), spec.data.read_options, text_columns)
    check_split_by(spec, frame.columns)
    frame = select_columns(frame, spec)
    metadata = {"source": location, "source_sha256": fingerprint}
    if spec.target.unlabeled == "drop":
        frame, metadata["n_unlabeled"] = drop_unlabeled(frame, spec.target.column)
    with contextlib.suppress(TypeError, ValueError):  # a value pandas cannot hash: no alias
        metadata["content_sha256"] = fingerprint_frame(frame)
    return frame, metadata


def drop_unlabeled(frame: pd.DataFrame, target: str) -> tuple[pd.DataFrame, int]:
    """``frame`` without its rows whose ``target`` is missing (renumbered from 0), and how many
    were left out."""
    unlabeled = frame[target].isna().to_numpy()
    if not unlabeled.any():
        return frame, 0
    return frame[~unlabeled].reset_index(drop=True), int(unlabeled.sum())


# --- validate ---------------------------------------------------------------------------------


def validation_rules(spec: PipelineSpec) -> ValidationRules:
    """The Great Expectations suite the spec declares, in plain form."""
    expectations = spec.expectations
    classes = spec.target.classes
    return ValidationRules(
        required_columns=(spec.target.column, *(spec.features.include or [])),
        target_column=spec.target.column,
        target_classes=tuple(str(c) for c in classes) if classes is not None else None,
        min_rows=expectations.min_rows,
        max_missing_fraction=expectations.max_missing_fraction,
        columns={
            name: ColumnRule(
                min=rule.min,
                max=rule.max,
                values=tuple(rule.values) if rule.values is not None else None,
                max_missing_fraction=rule.max_missing_fraction,
                dtype=rule.dtype,
            )
            for name, rule in expectations.columns.items()
        },
        expectations=tuple(e.model_dump() for e in expectations.extra),
    )


def validate_params(spec: PipelineSpec) -> dict:
    return {
        "expectations": spec.expectations.model_dump(mode="json"),
        "target": spec.target.model_dump(mode="json"),
        "include": spec.features.include,
    }


def validate(frame: pd.DataFrame, rules: ValidationRules) -> Stored:
    """One row per expectation; the whole report in the metadata."""
    report = validate_frame(frame, rules)
    return report.to_frame(), {"report": report.to_dict()}


def validation_report(metadata: dict) -> ValidationReport:
    """The report a ``validate`` artifact's metadata holds."""
    return ValidationReport.from_dict(metadata["report"])


# --- split ------------------------------------------------------------------------------------


#: How the holdout is drawn: per row, from a hash of its values and ``split_seed``
#: (:func:`~libre_lib.ops.batches.row_keys`), so a row keeps its side across data versions,
#: a repeated row's copies ranked (:func:`~libre_lib.ops.batches.copy_keys`) so that they
#: spread over both sides; with ``split_by``, from its values in those columns only
#: (:data:`SPLIT_BY_KEY`).
SPLIT_BY = "row values, copies ranked"
SPLIT_BY_KEY = "key columns"


def split_rule(spec: PipelineSpec) -> str:
    """:data:`SPLIT_BY`, or :data:`SPLIT_BY_KEY` when the spec names ``split_by`` columns."""
    return SPLIT_BY_KEY if spec.split_by else SPLIT_BY


def split_params(spec: PipelineSpec) -> dict:
    params = {
        "holdout_fraction": spec.holdout_fraction,
        "split_seed": spec.split_seed,
        "positive_class": positive_label(spec),
        "split": split_rule(spec),
    }
    if spec.split_by:  # unset, it leaves earlier cache keys as they were
        params["split_by"] = list(spec.split_by)
    return params


def split_key(spec: PipelineSpec, columns: Sequence[str], narrow: Sequence[str] = ()) -> str:
    """What decides which rows a version held out: the rule, the fraction, the seed and the
    columns whose values key the rows (``split_by``, and which of them are read as text for
    not being among ``columns``; else ``columns``). Two versions with
    equal split keys hold out the same rows of the data they share (see :data:`SPLIT_BY`), so
    neither trained on the other's holdout rows. ``narrow``: the keyed columns read as float32
    or float16, which key their rows by their decimals (earlier releases keyed them widened:
    another split, which the key then tells apart)."""
    keyed = spec.split_by or columns
    key = {
        "split": split_rule(spec),
        "holdout_fraction": spec.holdout_fraction,
        "split_seed": spec.split_seed,
        "columns": sorted(map(str, keyed)),
    }
    if spec.split_by:  # an id read as text keys its rows otherwise than read as a number
        key["as_text"] = sorted(map(str, key_text_columns(spec, columns)))
    decimals = sorted(str(c) for c in narrow if c in set(keyed))
    if decimals:
        key["decimals"] = decimals
    return fingerprint_json(key)


def holdout_mask(keys: np.ndarray, positive: np.ndarray, fraction: float, seed: int) -> np.ndarray:
    """True for the holdout rows: each row with probability ``fraction``, decided by its key
    (:func:`~libre_lib.ops.batches.row_keys`) and ``seed`` alone, so a row keeps its side
    when others are added, removed or reordered. On data so small that a class with at least
    two rows got none (or all) of them in the holdout, the row of that class nearest the
    threshold moves, with every row of its key (an id's rows stay together), so that each side
    holds both classes when it can."""
    n_rows = positive.shape[0]
    if fraction <= 0:
        return np.zeros(n_rows, dtype=bool)
    n_training = n_rows - math.ceil(fraction * n_rows)
    if n_training < 2:
        raise DataError(
            f"holdout_fraction {fraction!r} leaves {max(n_training, 0)} of the {n_rows} rows "
            "for training; lower holdout_fraction (0.2 is usual)."
        )
    draw = unit_hash(keys, seed, HOLDOUT_SALT)
    holdout = draw < fraction
    for members in (np.flatnonzero(positive), np.flatnonzero(~positive)):
        if members.size < 2:
            continue
        chosen = holdout[members]
        if not chosen.any():
            holdout[keys == keys[members[np.argmin(draw[members])]]] = True
        elif chosen.all():
            holdout[keys == keys[members[np.argmax(draw[members])]]] = False
    return holdout


def split(spec: PipelineSpec, frame: pd.DataFrame) -> Stored:
    """The ``holdout`` flag of every row (:func:`holdout_mask` of the rows' keys)."""
    positive = (frame[spec.target.column] == positive_label(spec)).to_numpy()
    if not positive.any():
        raise absent_positive_class(spec, frame[spec.target.column])
    for is_positive, rows in ((True, int(positive.sum())), (False, int((~positive).sum()))):
        if spec.holdout_fraction > 0 and rows < 2:  # one row: the holdout may take it
            which = (
                f"target.positive_class {positive_label(spec)!r}"
                if is_positive
                else "the other classes together"
            )
            raise DataError(
                f"{which} {'has' if is_positive else 'have'} {rows} of the "
                f"{len(frame):,} rows: the training rows and the holdout need one each. Check "
                "the target column (a typo?), or choose another positive class."
            )
    keys = split_keys(spec, frame)
    holdout = holdout_mask(keys, positive, spec.holdout_fraction, spec.split_seed)
    return pa.table({"holdout": holdout}), {}


def split_keys(spec: PipelineSpec, frame: pd.DataFrame) -> np.ndarray:
    """Each loaded row's key (:func:`~libre_lib.ops.batches.row_keys`): of its values in
    ``frame``, or with ``split_by`` of its values in those columns, read again from the source
    (they need not be features: :func:`key_text_columns`) and aligned with the loaded rows."""
    if not spec.split_by:
        return copy_keys(row_keys(frame))
    location, target = spec.data_location(), spec.target.column
    text = [target, *(spec.features.categorical or []), *key_text_columns(spec, frame.columns)]
    source = read_source(location, spec.data.resolved_format(), spec.data.read_options, text)
    check_split_by(spec, source.columns)
    if spec.target.unlabeled == "drop":
        source, _ = drop_unlabeled(source, target)
    if len(source) != len(frame):
        raise DataError(
            f"Data source {location!r} changed while the pipeline read it ({len(source):,} rows "
            f"now, {len(frame):,} when loaded); run it again."
        )
    return key_column_keys(source[list(spec.split_by)], frame, spec)


def key_text_columns(spec: PipelineSpec, selected: Sequence[str]) -> list[str]:
    """The ``split_by`` columns read as text for the keys: those that are not ``selected``
    (features or the target; an id is a name, not a number). A feature keeps the type it is
    read with, so streamed batches and the whole file key its rows alike."""
    return [c for c in spec.split_by if c not in selected]


def check_split_by(spec: PipelineSpec, columns: Sequence[str]) -> None:
    """Refuse ``split_by`` columns the data do not hold, naming them and the columns."""
    unknown = [c for c in spec.split_by if c not in columns]
    if unknown:
        raise SpecError(
            f"split_by names columns not in the data ({spec.data.path}): {unknown}. Columns "
            f"are: {excerpt(list(columns), 600)}." + separator_hint(columns)
        )


def key_column_keys(
    keys: pd.DataFrame, frame: pd.DataFrame, spec: PipelineSpec, whole: bool = True
) -> np.ndarray:
    """Row keys of the ``split_by`` columns ``keys``; a row missing in all of them is keyed by
    its values in ``frame`` instead (rows without an id would otherwise share one side).
    Refused when no row has a key and ``keys`` are the whole data (not a streamed batch)."""
    absent = keys.isna().all(axis=1).to_numpy()
    if whole and absent.all():
        raise DataError(
            f"split_by columns {list(spec.split_by)} hold no value: every row would fall on "
            "the same side of the holdout. Name columns that identify the rows."
        )
    result = row_keys(keys)
    if absent.any():
        result[absent] = copy_keys(row_keys(frame[absent]))
    return result


def absent_positive_class(spec: PipelineSpec, column: pd.Series) -> DataError:
    """The error of a positive class the target never holds, naming the values it holds."""
    values = sorted(map(str, pd.unique(column.dropna())))
    shown = ", ".join(repr(v) for v in values[:10]) + (", ..." if len(values) > 10 else "")
    hint = ""
    written = same_number(spec.target.positive_class, values)
    if written:
        hint = (
            f" The column writes that number as {written[0]!r}, and classes are matched as "
            f'written: positive_class: "{written[0]}".'
        )
    elif isinstance(spec.target.positive_class, bool):
        hint = (
            " An unquoted true or false in the spec is a boolean, compared as 'True' or "
            "'False': quote the class as the data writes it, e.g. positive_class: \"true\"."
        )
    return DataError(
        f"target.positive_class {positive_label(spec)!r} is not a value of the target column "
        f"{spec.target.column!r} (its values: {shown}).{hint}"
    )


def duplicate_notes(X_train: pd.DataFrame) -> tuple[str, ...]:
    """A note when training columns repeat others (the estimator's warning, which reaches the
    task's log only), naming the copies to leave out of the spec."""
    pairs = duplicate_columns(X_train)
    copies = [copy for _, copy in pairs]
    remedy = f"features.exclude: {yaml_scalar(copies)} in the spec"
    return tuple(filter(None, [duplicate_columns_message(pairs, remedy)]))


def signal_note(
    spec: PipelineSpec, tuning: Stored | None, model: LibreClassifier, y: pd.Series
) -> str | None:
    """The estimators' warning when no candidate beat flagging every row on the inner folds:
    ``LibreSearchCV``'s for the pipeline's search (``tuning``: the ``pick`` stage's table and
    metadata; an F1 search only), else ``LibreClassifier``'s for the "auto" choice behind
    ``model``. ``y``: the training rows' target."""
    positive = y.astype(str).to_numpy() == positive_label(spec)
    if tuning is None:
        n_positive = int(positive.sum())
        return auto_below_trivial_message(model, n_positive, len(positive) - n_positive)
    if tuning[1].get("scoring", "f1") != "f1":
        return None
    table = pa.table(tuning[0])
    scores = np.asarray(table.column("mean_score").to_numpy(zero_copy_only=False), dtype=float)
    if not np.isfinite(scores).any():
        return None
    chosen = np.asarray(table.column("chosen").to_numpy(zero_copy_only=False), dtype=bool)
    picked = float(scores[chosen][0]) if chosen.any() else None
    return below_trivial_message(
        float(np.nanmax(scores)), flag_every_row_f1(positive), chosen=picked
    )


#: Fewer positive rows than this in an inner fold's held-out part make the search's scores
#: too noisy to rank its settings (a note says so).
FEW_FOLD_POSITIVES = 30


def few_positives_note(spec: PipelineSpec, tuning: Stored | None, y: pd.Series) -> str | None:
    """A note when the pipeline's search held out fewer than :data:`FEW_FOLD_POSITIVES`
    positive rows per inner fold (a rare class, or ``tuning.max_rows`` sampling it away):
    ``tuning`` is the ``pick`` stage's table and metadata, ``y`` the training rows' target."""
    if tuning is None:
        return None
    meta = tuning[1]
    searched, of, folds = meta.get("n_rows"), meta.get("n_training_rows"), meta.get("n_splits")
    if not (searched and of and folds):
        return None
    n_positive = int((y.astype(str).to_numpy() == positive_label(spec)).sum())
    in_search = round(n_positive * searched / of)  # the sample is stratified
    per_fold = in_search / folds
    if per_fold >= FEW_FOLD_POSITIVES:
        return None
    sampled = searched < of
    where = (
        f"a sample of {searched:,} of the {of:,} training rows (tuning.max_rows), holding "
        f"about {in_search:,} of the {n_positive:,} positive rows"
        if sampled
        else f"the {of:,} training rows, holding {n_positive:,} positive rows"
    )
    more = (
        "raise tuning.max_rows (null: every training row) or gather more positive rows"
        if sampled
        else "more positive rows would tell"
    )
    shown = f"{per_fold:.0f}" if per_fold < FEW_FOLD_POSITIVES - 0.5 else "29"
    return (
        f"The search scored its settings on {where}: about {shown} in each inner fold's "
        "held-out part, too few for the fold scores to rank the settings reliably (the choice "
        f"among close ones is then close to chance); {more}."
    )


#: Fewer rows with the outcome than this among the rows a report scores: a note says that one
#: row found or missed moves the figures too much to compare models.
FEW_SCORED_POSITIVES = 10


def few_scored_positives_note(spec: PipelineSpec, y: pd.Series, evaluated_on: str) -> str | None:
    """A note when the rows the report scores (``y``, ``evaluated_on``: "holdout" or
    "training") hold fewer than :data:`FEW_SCORED_POSITIVES` rows with the outcome (none:
    the report's own caution says so)."""
    found = int((y.astype(str).to_numpy() == positive_label(spec)).sum())
    if not 0 < found < FEW_SCORED_POSITIVES:
        return None
    larger = (
        "A holdout (holdout_fraction above 0)"
        if evaluated_on == "training"
        else ("A larger holdout (holdout_fraction)")
    )
    return (
        f"The {len(y):,} {evaluated_on} rows hold only {counted(found, 'row')} with the "
        f"outcome: one of them found or missed moves recall by {1 / found:.2f}, so the "
        f"figures below, and a promotion decided on them, cannot tell models apart. {larger}, "
        "or more data, would."
    )


def split_rows(
    spec: PipelineSpec, frame: pd.DataFrame, holdout_flags: np.ndarray, holdout: bool = False
) -> tuple[pd.DataFrame, pd.Series]:
    """(X, y) of the training rows, or of the holdout rows."""
    part = frame.loc[holdout_flags == holdout].reset_index(drop=True)
    features = [c for c in frame.columns if c != spec.target.column]
    return part[features], part[spec.target.column]


# --- tune, pick (the search inside the pipeline) ----------------------------------------------


def search(
    spec: PipelineSpec,
    y: pd.Series | None = None,
    n_rows: int | None = None,
    X: pd.DataFrame | None = None,
) -> LibreSearchCV:
    """The ``LibreSearchCV`` the spec's ``tuning`` section declares (its ``model`` section
    holds the parameters that are not tuned; the model's seed seeds the folds). A streamed
    run's default grid has capped ChiMerge bins only (``default_grid(capped_bins=True)``), and
    so has one whose final fit has more training rows (``n_rows``) than ``LibreSearchCV``
    leaves uncapped (``caps_bins``), although the search may run on a sample of them
    (``tuning.max_rows``): the final fit's rows decide, as in :func:`choose`; so do they
    whether its uncapped bins keep only significant cut points (``thins_cuts``). ``y``, the
    rows it searches on, gives its number of positives, and ``X``, their features, the number
    of usable columns (on wide data the default grid's learners see more columns)."""
    kwargs = spec.tuning.search_kwargs()
    capped = spec.is_streamed() or (n_rows is not None and caps_bins(n_rows))
    thinned = rows_thin_cuts(spec, n_rows)
    if kwargs["param_grid"] is None and y is not None and (capped or thinned):
        n_positives = int((y == positive_label(spec)).sum())
        n_columns = 0 if X is None else wide_columns(spec.model.max_features, X)
        kwargs["param_grid"] = default_grid(
            n_positives, capped, kwargs["max_rules"] is None, n_columns, thinned
        )
    return LibreSearchCV(
        estimator=estimator(spec),
        positive_class=positive_label(spec),
        random_state=spec.model.random_state,
        **kwargs,
    )


def tuning_rows(
    spec: PipelineSpec, X: pd.DataFrame, y: pd.Series
) -> tuple[pd.DataFrame, pd.Series]:
    """The training rows the search and the "auto" choice run on: all of them up to
    ``tuning.max_rows``, else a stratified sample of that many (the model's seed), in row
    order."""
    cap = spec.tuning.max_rows
    if cap is None or len(X) <= cap:
        return X, y
    positive = (y == positive_label(spec)).to_numpy()
    counts = np.bincount(positive.astype(int), minlength=2)
    stratify = positive if counts.min() >= 2 else None
    kept, _ = train_test_split(
        np.arange(len(X)), train_size=cap, random_state=spec.model.random_state, stratify=stratify
    )
    kept = np.sort(kept)
    return X.iloc[kept].reset_index(drop=True), y.iloc[kept].reset_index(drop=True)


def planned(searcher: LibreSearchCV, X: pd.DataFrame, y: pd.Series):
    """``searcher.plan(X, y)``, without the warning that the model section sets a parameter
    the grid tunes: a run says it in its own note (:func:`overridden_notes`), once."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=re.escape(ESTIMATOR_TUNED))
        return searcher.plan(X, y)


def tuning_units(spec: PipelineSpec, X: pd.DataFrame, y: pd.Series) -> list[dict]:
    """The ``tune`` tasks: one per inner fold and ChiMerge cap (``max_intervals``), each
    scoring the candidates with that cap (their learners shared as in ``LibreSearchCV``)."""
    n_rows = len(X)
    X, y = tuning_rows(spec, X, y)
    plan = planned(search(spec, y, n_rows, X), X, y)
    groups = plan.bin_cap_groups()
    return [
        {"fold": k, "max_intervals": cap, "candidates": indices}
        for k in range(plan.n_splits)
        for cap, indices in groups.items()
    ]


def scored_params(spec: PipelineSpec) -> dict:
    """The model parameters inner folds depend on: all but ``refine`` (the folds score the
    rules as the set cover leaves them), so changing it recomputes no fold."""
    return {k: v for k, v in spec.estimator_params().items() if k != "refine"}


def tune_params(spec: PipelineSpec, unit: dict, n_rows: int | None = None) -> dict:
    """Everything a unit's scores depend on; not the choice rule (changing it only re-picks).
    ``n_rows``: the final fit's training rows (:func:`thinned_rows`)."""
    kwargs = spec.tuning.search_kwargs()
    kwargs.pop("score_tolerance"), kwargs.pop("standard_errors"), kwargs.pop("refine")
    params = {"estimator": scored_params(spec), "search": kwargs, "unit": unit}
    if spec.tuning.max_rows is not None:
        params["max_rows"] = spec.tuning.max_rows
    if kwargs["param_grid"] is None and spec.is_streamed():
        params["capped_bins"] = True
    return {**params, **wide_grid_params(spec, n_rows), **whole_columns(spec)}


def wide_grid_params(spec: PipelineSpec, n_rows: int | None = None) -> dict:
    """The default grid's rule for wide data (the twenty-fifth round), and its rule for the
    rows that thin its uncapped bins' cut points (the thirty-sixth; :func:`thinned_rows`), in
    the keys of the stages whose candidates come from it: a store's earlier scores (made
    before a rule, or with other values) are not read as this grid's."""
    if spec.tuning.grid != "default":
        return {}
    wide = {"wide_grid": {"columns": WIDE_COLUMNS, "max_features": WIDE_MAX_FEATURES}}
    return {**wide, **thinned_rows(spec, n_rows)}


def rows_thin_cuts(spec: PipelineSpec, n_rows: int | None) -> bool:
    """Whether the rows thin the uncapped bins of a final fit on ``n_rows`` training rows to
    significant cut points (more than ``AUTO_SIGNIFICANT_ROWS``, at most
    ``AUTO_UNCAPPED_ROWS``; not streamed; the spec's ``significant_cuts`` not set)."""
    if n_rows is None or spec.is_streamed() or spec.model.significant_cuts:
        return False
    return thins_cuts(n_rows) and not caps_bins(n_rows)


def thinned_rows(spec: PipelineSpec, n_rows: int | None) -> dict:
    """``{"significant_rows": AUTO_SIGNIFICANT_ROWS}`` in the keys of a stage whose uncapped
    bins the rows thin (:func:`rows_thin_cuts`), else nothing: the stages of other runs keep
    their keys."""
    return {"significant_rows": AUTO_SIGNIFICANT_ROWS} if rows_thin_cuts(spec, n_rows) else {}


def whole_columns(spec: PipelineSpec) -> dict:
    """``{"whole_columns": "quartiles"}`` in the keys of the stages whose bins keep only
    significant cut points because the spec asks it (``model.significant_cuts``, or a tuning
    grid that tries it), else nothing. Since the thirty-seventh round a numeric column the
    test leaves without a cut point keeps its quartiles: a store's bins, scores and choices of
    a release before it are not read as this one's (the rows' own rule, :func:`thinned_rows`,
    came with it)."""
    grids = spec.tuning.grid if isinstance(spec.tuning.grid, list) else [spec.tuning.grid]
    tried = spec.tuning.enabled and any(
        isinstance(grid, dict) and any(grid.get("significant_cuts") or ()) for grid in grids
    )
    return {"whole_columns": "quartiles"} if spec.model.significant_cuts or tried else {}


def tune(spec: PipelineSpec, X: pd.DataFrame, y: pd.Series, unit: dict) -> Stored:
    """One fold's scores of the candidates with one ChiMerge cap: a row per candidate
    (its index in the search's candidates, validation score, rules, atoms per rule)."""
    n_rows = len(X)
    X, y = tuning_rows(spec, X, y)
    result = planned(search(spec, y, n_rows, X), X, y).evaluate(unit["fold"], unit["candidates"])
    score, n_rules, n_atoms = np.asarray(result["results"], dtype=float).reshape(-1, 3).T
    table = pa.table(
        {
            "candidate": pa.array(unit["candidates"], pa.int64()),
            "fold": pa.array([unit["fold"]] * len(unit["candidates"]), pa.int64()),
            "score": pa.array(score, pa.float64()),
            "n_rules": pa.array(n_rules, pa.float64()),
            "n_atoms": pa.array(n_atoms, pa.float64()),
        }
    )
    return table, {"seconds": result["seconds"]}


def pick_params(spec: PipelineSpec, n_rows: int | None = None) -> dict:
    params = {"tuning": spec.tuning.model_dump(), "estimator": spec.estimator_params()}
    # its metadata holds the refit check's order: a pick stored before the check (True: the
    # fourteenth round's order), before the order went beyond the tolerance (2: the
    # twenty-second round) or before it asked for rules in most inner folds rather than every
    # one (3: the twenty-fifth round) is picked again
    params["refit_order"] = 3
    if spec.tuning.grid == "default" and spec.is_streamed():
        params["capped_bins"] = True
    return {**params, **wide_grid_params(spec, n_rows)}


def pick(spec: PipelineSpec, X: pd.DataFrame, y: pd.Series, scores: Sequence[pa.Table]) -> Stored:
    """The choice rule on the ``tune`` tasks' scores (as ``LibreSearchCV.fit`` applies it): a
    row per candidate (its tuned parameters as JSON, mean and std score, mean rules and atoms,
    whether it was chosen); the chosen candidate's parameters in the metadata, and the points
    the refit check falls back to (``refit_order``, as ``LibreSearchCV.refit_order``). The check
    itself runs in the flow, after ``set_cover``: ``pick`` fits no model, so changing only the
    choice rule recomputes no learner."""
    n_rows = len(X)
    X, y = tuning_rows(spec, X, y)
    searcher = search(spec, y, n_rows, X)
    plan = planned(searcher, X, y)
    shape = (len(plan.candidates), plan.n_splits)
    figures = {name: np.full(shape, np.nan) for name in ("score", "n_rules", "n_atoms")}
    filled = np.zeros(shape, dtype=bool)  # a score may be NaN (a scorer undefined on a fold)
    for table in scores:
        rows, folds = table.column("candidate").to_numpy(), table.column("fold").to_numpy()
        filled[rows, folds] = True
        for name, values in figures.items():
            values[rows, folds] = table.column(name).to_numpy()
    missing = int((~filled).sum())
    if missing:
        raise ValueError(f"pick: {missing} candidate/fold scores are missing from the tune stage")
    best = searcher.choose(plan, figures["score"], figures["n_rules"], figures["n_atoms"])
    results = searcher.cv_results_
    table = pa.table(
        {
            "params": pa.array([json.dumps(p, sort_keys=True) for p in results["params"]]),
            "mean_score": pa.array(results["mean_test_score"], pa.float64()),
            "std_score": pa.array(results["std_test_score"], pa.float64()),
            "mean_rules": pa.array(results["mean_n_rules"], pa.float64()),
            "mean_atoms": pa.array(results["mean_n_atoms"], pa.float64()),
            "chosen": pa.array(np.arange(shape[0]) == best, pa.bool_()),
        }
    )
    metadata = {
        **_point(plan, results, best),
        "tolerance": searcher.tolerance_,
        "n_candidates": shape[0],
        "n_splits": shape[1],
        "n_rows": len(X),  # the training rows searched (a sample of them: tuning.max_rows)
        "n_training_rows": n_rows,
        "scoring": spec.tuning.scoring,
        "refit_order": [_point(plan, results, int(i)) for i in searcher.refit_order()[1:]],
    }
    return table, metadata


def _point(plan, results: dict, index: int) -> dict:
    """Candidate ``index`` as ``pick`` hands it on: its grid point, mean score and parameters."""
    return {
        "index": index,
        "best_params": dict(results["params"][index]),
        "best_score": float(results["mean_test_score"][index]),
        "tuned": {k: v for k, v in plan.candidates[index].items() if k != "n_jobs"},
    }


def shipped_choice(picked: Stored, fallbacks: int) -> Stored:
    """``pick``'s table and metadata once the refit check has passed over ``fallbacks`` points
    of its ``refit_order`` (the flow's refit check, as ``LibreSearchCV.checked_refit``): the
    point shipped is marked chosen and its parameters are the metadata's."""
    table, metadata = picked
    if not fallbacks:
        return table, {**metadata, "refit_fallbacks": 0}
    point = metadata["refit_order"][fallbacks - 1]
    chosen = pa.array(np.arange(table.num_rows) == point["index"], pa.bool_())
    table = table.set_column(table.schema.get_field_index("chosen"), "chosen", chosen)
    return table, {**metadata, **point, "refit_fallbacks": fallbacks}


def tuned_spec(spec: PipelineSpec, metadata: dict) -> PipelineSpec:
    """The spec whose model section holds the parameters ``pick`` chose (its metadata)."""
    return spec.with_model(metadata["tuned"])


def overridden_notes(spec: PipelineSpec, metadata: dict) -> tuple[str, ...]:
    """A note for each value the spec's ``model`` section sets that the search tunes and
    chose otherwise (``pick``'s metadata): with tuning on, the model uses the search's."""
    point = metadata.get("best_params", {})
    out = []
    for name in sorted(spec.model.model_fields_set & set(point)):
        value, chosen = getattr(spec.model, name), point[name]
        if name == "significant_cuts" and chosen and spec.tuning.grid == "default":
            out.append(  # the default grid's row rule, not a tuned value (thirty-sixth round)
                f"The spec's model section sets significant_cuts: {yaml_scalar(value)}, but on "
                f"more than {AUTO_SIGNIFICANT_ROWS:,} training rows the default grid's uncapped "
                "ChiMerge bins keep only significant cut points (fewer, wider ranges and a fast "
                "fit; docs/pipeline.md). For uncapped bins without it, give tuning.grid a grid "
                "of your own with max_intervals: [null] and significant_cuts: [false]."
            )
        elif value != chosen:
            out.append(
                f"The spec's model section sets {name}: {value!r}, but tuning is on and the "
                f"search tunes {name}: the model uses its choice, {chosen!r}. Set "
                f"tuning.enabled: false to fit the spec's values, or leave {name} out of model:."
            )
    return tuple(out)


# --- choose -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Choice:
    """What ``choose`` hands on: the values of the parameters "auto" may choose (the learners'
    ``conflict_tolerance``, the set cover's ``max_rules``, ChiMerge's ``max_intervals``, the
    cover's ``alpha``), and the inner cross-validation behind them (as the estimator's
    ``auto_scores_``; None when nothing was "auto" or the rows were too few)."""

    conflict_tolerance: float
    max_rules: int | None
    scores: dict | None = None
    max_intervals: int | None = 3
    alpha: float | str = 0.5
    fallbacks: int = 0  # combinations the refit check passed over (``auto_fallbacks_``)

    def as_dict(self) -> dict:
        """The chosen values by parameter name (as ``LibreClassifier.choose_auto`` gives them)."""
        return {name: getattr(self, name) for name in AUTO_CHOSEN}


def _capped_choice(spec: PipelineSpec) -> bool:
    """A streamed run chooses among capped ChiMerge bins only (``max_intervals="auto"`` means
    the cap), for the reason :func:`search` gives."""
    return spec.is_streamed() and spec.model.max_intervals == AUTO


def choose_params(spec: PipelineSpec, n_rows: int | None = None) -> dict:
    """Every model parameter: the choice cross-validates the whole method (random_state
    included) on the training rows (at most ``tuning.max_rows`` of them; ``n_rows``, all of
    them: :func:`thinned_rows`)."""
    # the refit check's counts: how many inner folds kept a rule (the twenty-fifth round)
    params = {"estimator": scored_params(spec), "ruled_folds": True}
    if spec.tuning.max_rows is not None:  # absent without a cap, as before caps existed
        params["max_rows"] = spec.tuning.max_rows
    if _capped_choice(spec):
        params["capped_bins"] = True
    elif spec.model.max_intervals == AUTO:  # uncapped bins thinned by the rows (36th round)
        params.update(thinned_rows(spec, n_rows))
    return params | whole_columns(spec)


def choose(spec: PipelineSpec, X: pd.DataFrame, y: pd.Series) -> Stored:
    """The "auto" parameters' values: the spec's, or those inner cross-validation on the
    training rows chooses (as ``LibreClassifier.fit`` does). One row per combination tried;
    the choice in the metadata."""
    n_rows = len(X)  # the fit's rows decide whether uncapped bins are tried, not the sample's
    X, y = tuning_rows(spec, X, y)
    model = estimator(spec)
    if _capped_choice(spec):
        model.set_params(max_intervals=AUTO_FALLBACK["max_intervals"])
    chosen, scores = model.choose_auto(X, target(spec, y), n_rows=n_rows)
    return choice_table(chosen, scores), {"choice": {**chosen, "auto_scores": scores}}


def refit_fallbacks(metadata: dict) -> int:
    """How many fallbacks the "auto" refit check may try after a ``choose`` artifact's choice
    (``LibreClassifier.fit``'s :func:`~libre_lib.estimator.auto_refit_order`)."""
    return max(len(auto_refit_order(metadata["choice"]["auto_scores"])) - 1, 0)


def choose_fallback(chosen: Stored, fallbacks: int) -> Stored:
    """A ``choose`` artifact with its choice replaced by the ``fallbacks``-th combination after
    it in the refit check's order (as ``LibreClassifier.fit`` falls back when the fit of the
    choice keeps no rule although the choice kept rules in most inner folds)."""
    metadata = chosen[1]["choice"]
    scores = metadata["auto_scores"]
    combo = scores["params"][int(auto_refit_order(scores)[fallbacks])]
    combo = {**combo, "conflict_tolerance": float(combo["conflict_tolerance"])}
    choice = {**combo, "auto_scores": scores, "auto_fallbacks": fallbacks}
    return choice_table(combo, scores), {"choice": choice}


def choice_from_metadata(metadata: dict) -> Choice:
    """The choice a ``choose`` artifact's metadata holds."""
    choice = dict(metadata["choice"])
    scores = choice.pop("auto_scores")
    fallbacks = int(choice.pop("auto_fallbacks", 0))
    fallback = {"max_intervals": 3, "alpha": 0.5}  # artifacts of releases choosing two values
    values = {name: choice.get(name, fallback.get(name)) for name in AUTO_CHOSEN}
    values["conflict_tolerance"] = float(values["conflict_tolerance"])
    return Choice(scores=scores, fallbacks=fallbacks, **values)


# --- discretize, encode -----------------------------------------------------------------------


def discretize_params(spec: PipelineSpec, choice: Choice, n_rows: int | None = None) -> dict:
    """What the bins depend on; ``n_rows``: the training rows (:func:`thinned_rows`)."""
    model = spec.model
    params = {
        "chi2_threshold": model.chi2_threshold,
        "max_intervals": choice.max_intervals,
        "categorical": spec.features.categorical,
        "positive_class": positive_label(spec),
    }
    if model.max_intervals == AUTO and choice.max_intervals is None:
        # the rows thin these bins' cut points from AUTO_SIGNIFICANT_ROWS on (thirty-sixth
        # round): bins stored before the rule are not read as the rule's
        params.update(thinned_rows(spec, n_rows))
    # the keys of stores made before the options; contiguous leaves the bins as they are
    return params | spec.options_set(BIN_OPTIONS) | whole_columns(spec)


def discretize(
    spec: PipelineSpec, X: pd.DataFrame, y: pd.Series, choice: Choice | None = None
) -> Stored:
    """ChiMerge cut points / category bins of the training rows (with the chosen
    ``max_intervals``; without a choice, the spec's): one row per bin."""
    model = estimator(spec)
    max_intervals = "auto" if choice is None else choice.max_intervals
    return discretization_table(model.discretize(X, target(spec, y), max_intervals))


def encode(
    spec: PipelineSpec, X: pd.DataFrame, y: pd.Series, discretization: Discretization
) -> Stored:
    """The distinct training records (bin codes) with their class weights."""
    records = LibreClassifier.encode(X, target(spec, y), discretization)
    return records_table(records, discretization)


# --- learn, union_filter, set_cover -----------------------------------------------------------


def feature_subsets(
    spec: PipelineSpec, discretization: Discretization, learner_factor: int = 1
) -> list[list[int]]:
    """The learners' feature subsets, fixed up front from the seed (independent of which
    learner finishes first): ``learner_factor`` times ``n_estimators`` of them."""
    subsets = estimator(spec).draw_subsets(discretization, learner_factor)
    return [list(s) for s in subsets]


def learn_params(spec: PipelineSpec, subset: list[int], conflict_tolerance: float) -> dict:
    """``conflict_tolerance`` is the chosen one (:class:`Choice`)."""
    params = {"heuristic": spec.model.heuristic, "seeds": spec.model.seeds, "subset": subset}
    if conflict_tolerance:  # absent at 0, so earlier cached learners stay valid
        params["conflict_tolerance"] = conflict_tolerance
    if spec.model.contiguous:  # likewise absent when off
        params["contiguous"] = True
    return params


def learn(
    spec: PipelineSpec,
    records: DistinctRecords,
    discretization: Discretization,
    subset: list[int],
    conflict_tolerance: float,
) -> Stored:
    """One weak learner (FindBoundary) on one feature subset, with the chosen
    ``conflict_tolerance``: its candidate rules (with ``model.contiguous``, one range per
    numeric condition)."""
    model = spec.model
    candidates = learn_subset(
        records,
        discretization.n_bins,
        subset,
        model.heuristic,
        model.seeds,
        conflict_tolerance,
        ordered=discretization.ordered_bins() if model.contiguous else None,
    )
    return candidates_table(candidates, discretization, with_text=False)


def union_filter_params(spec: PipelineSpec) -> dict:
    return {"top_k": spec.model.top_k, "min_local_support": spec.model.min_local_support}


def union_filter(
    spec: PipelineSpec,
    parts: Sequence[Candidates],
    records: DistinctRecords,
    discretization: Discretization,
) -> Stored:
    """Union of the learners' points, local-support filter and top-K (section 3.3), with each
    kept point's rank, local supports and exclusiveness."""
    union = union_candidates(parts, int(discretization.n_bins.sum()))
    ranked = filter_candidates(union, records, spec.model.top_k, spec.model.min_local_support)
    kept = union.take(ranked)
    n_pos, n_neg = records.positive_weight.sum(), records.negative_weight.sum()
    lsup_pos, lsup_neg = kept.positives / n_pos, kept.negatives / n_neg
    table, metadata = candidates_table(
        kept,
        discretization,
        rank=np.arange(1, len(kept) + 1),
        local_support_positive=lsup_pos,
        local_support_negative=lsup_neg,
        exclusiveness=lsup_pos / np.maximum(lsup_pos + lsup_neg, 1e-300),
    )
    return table, {**metadata, "n_union": len(union)}


def set_cover_params(
    spec: PipelineSpec, subsets: list[list[int]], choice: Choice, learner_factor: int = 1
) -> dict:
    params = {
        "alpha": choice.alpha,
        "max_rules": choice.max_rules,
        "estimator": spec.estimator_params(),
        "subsets": subsets,
    }
    if learner_factor != 1:  # absent at 1, so earlier cached models stay valid
        params["learner_factor"] = learner_factor
    return params


def set_cover(
    spec: PipelineSpec,
    candidates: Candidates,
    records: DistinctRecords,
    discretization: Discretization,
    X: pd.DataFrame,
    y: pd.Series,
    subsets: list[list[int]],
    choice: Choice,
    n_candidates: int | None = None,
    learner_factor: int = 1,
) -> Stored:
    """Greedy weighted set cover capped at the chosen ``max_rules``: the rules in order (and
    ``model_rule``, each as the model ships it: after the majority guard and the boundary
    refinement the model's ``refine`` asks for, on the training rows ``X, y``), and the fitted
    model (JSON, with the choice) in the metadata. ``n_candidates`` is the size of the union
    before filtering; ``learner_factor`` the learners drawn, as a multiple of
    ``n_estimators`` (the model's ``learner_factor_``). A streamed run holds only a sample of
    its rows: it is not refined, and ``refinement_skipped`` says so."""
    selection = cover_candidates(
        candidates, records, discretization.n_bins, choice.alpha, choice.max_rules
    )
    model = estimator(spec).set_chosen(choice.as_dict())
    model.auto_scores_ = choice.scores
    model.significant_cuts_ = model.thinned(model.max_intervals_, len(X))
    model.assemble(
        X.columns,
        records_target(target(spec, y), records),
        discretization,
        subsets,
        candidates,
        selection,
        target_name=spec.target.column,
    )
    model.n_candidates_ = len(candidates) if n_candidates is None else int(n_candidates)
    model.auto_fallbacks_ = choice.fallbacks
    model.learner_factor_ = learner_factor
    skipped = refine_skipped(spec)
    if skipped is not None:
        model.set_params(refine=None)
    elif model.refine is not None:
        model.refine_boundaries(as_frame(X), target(spec, y))
    table, _ = selection_table(selection, candidates, discretization)
    shipped = [str(rule) for rule in model.rules_]  # the guard drops trailing rules only
    shipped += [None] * (table.num_rows - len(shipped))
    table = table.append_column("model_rule", pa.array(shipped, pa.string()))
    return table, {"model": model.to_dict(), "refinement_skipped": skipped}


#: Columns of more distinct values than this are not checked for unheld value labels.
LABELLED_VALUES_CHECKED = 10_000


def unheld_label_notes(
    spec: PipelineSpec, X_train: pd.DataFrame, rows: str = "its training rows"
) -> tuple[str, ...]:
    """A note per column whose ``report.value_labels`` name values the training rows (or the
    ``rows`` named) never hold: a misspelled value ("Basic" for "basic") is never shown,
    without a word."""
    notes = []
    for column, labels in spec.report.value_labels.items():
        if column not in X_train.columns:
            continue
        held = pd.unique(X_train[column].dropna())
        if len(held) > LABELLED_VALUES_CHECKED:
            continue
        keys = {value_key(python_scalar(v)) for v in held}
        unheld = [k for k in labels if value_key(k) not in keys]
        if unheld:
            shown = ", ".join(repr(k) for k in unheld[:5]) + (", ..." if len(unheld) > 5 else "")
            notes.append(
                f"report.value_labels names values of column {column!r} that {rows} "
                f"never hold: {shown}. Values are matched as the data write them: check the "
                "spelling (the labels of values the data hold are shown)."
            )
    return tuple(notes)


#: At most this many columns are named by :func:`drift_notes`.
DRIFT_NOTES = 5
#: Values outside the champion's training range in at least this share of a tested column's
#: rows are named in the run's notes (a few new extremes come with every growing table).
OUT_OF_RANGE_SHARE = 0.01


#: A share of rows (flagged by a rule, or of the positive class) this many times the
#: champion's training rows' share, or that share this many times it, and this many standard
#: errors from it, is a change the run's notes name (:func:`~.baselines.far_share`).
SHIFT_RATIO, SHIFT_Z = 1.5, 4.0


def _shifted(now: float, n_now: int, then: float, n_then: int) -> bool:
    return far_share(now, n_now, then, n_then, SHIFT_RATIO, SHIFT_Z)


def share_changes(
    champion_model: LibreClassifier,
    n_trained: int,
    champion_metrics: dict,
    X_train: pd.DataFrame,
    y_train: pd.Series | None,
    positive: str,
) -> list[str]:
    """How the new training rows differ from the champion's where it matters to its answers:
    the share its rules flag (the set's and each rule's, against its training figures) and the
    share of the positive class (against its holdout's). A column's values
    moved inside their range (x 1.3 + 3: 67 % zeros to none) and a halved positive class passed
    without a word."""
    found = []
    rules, stats = champion_model.rules_.rules, champion_model.rules_.stats
    if len(X_train) and n_trained and stats and len(stats) == len(rules):
        try:  # in its columns: a column the data gained since is left out
            fired = champion_model.fired_rules(X_train.reindex(columns=champion_model.columns_))
        except LibreError:  # the rows break its contract: the promotion decision says so
            fired = None
        if fired is not None:
            n = len(fired)
            now = float(fired.any(axis=1).mean())
            then = sum(s.new_positives + s.new_negatives for s in stats) / n_trained
            if _shifted(now, n, then, n_trained):  # its figures: on its training rows
                display = RuleDisplay.from_model(champion_model)  # cut points rounded
                moved = []
                for i, (rule, stat) in enumerate(zip(rules, stats, strict=True)):
                    a, b = float(fired[:, i].mean()), (stat.positives + stat.negatives) / n_trained
                    if _shifted(a, n, b, n_trained):
                        text = display.rule_text(rule)
                        moved.append(f"rule {i + 1}, {text}: {100 * a:.1f}% against {100 * b:.1f}%")
                found.append(
                    f"its rules flag {100 * now:.1f}% of them, against {100 * then:.1f}% of its "
                    "own" + (f" ({', '.join(moved[:3])})" if moved else "")
                )
    n_positive, n_rows = champion_metrics.get("n_positive"), champion_metrics.get("n_rows")
    if y_train is not None and len(y_train) and isinstance(n_positive, int) and n_rows:
        now = float((y_train.astype(str) == positive).mean())
        then = n_positive / n_rows
        if _shifted(now, len(y_train), then, n_rows):
            found.append(
                f"the positive class is {100 * now:.1f}% of them, against {100 * then:.1f}% of "
                f"its holdout rows ({n_positive:,} of {n_rows:,})"
            )
    return found


def drift_notes(
    registry: ModelRegistry,
    spec: PipelineSpec,
    X_train: pd.DataFrame,
    model: LibreClassifier,
    y_train: pd.Series | None = None,
) -> tuple[str, ...]:
    """What changed in the columns a rule tests (the champion's or this model's) since the
    champion's training rows, from the champion's data contract: a column that turned to text,
    a missing share far above the champion's, categories it never saw, values outside its
    range in many rows; and what changed in the rows it flags and in the class balance
    (:func:`share_changes`). Validation checks the spec's expectations only; a spec ``libre
    init`` wrote has none, and a column 90 % missing trained and was promoted without a word.
    Empty without a champion or its contract."""
    from .contract import (
        MISSING_COLUMN,
        MISSING_RATE,
        NEW_MISSING,
        OUT_OF_RANGE,
        UNSEEN_CATEGORY,
        WRONG_TYPE,
    )

    try:
        champion = registry.champion(spec.name)
        contract = registry.load_contract(spec.name, champion.version) if champion else None
    except (LibreError, OSError, ValueError):
        return ()
    if contract is None or not len(X_train):
        return ()
    try:  # the contract's notes stand without it
        champion_model = registry.load_model(spec.name, champion.version)
    except (LibreError, OSError, ValueError):
        champion_model = None
    tested = tested_columns(model.rules_) | {c.name for c in contract.columns if c.in_rules}
    checked = contract.check(X_train, raise_errors=False, empty_columns=False)
    found = []
    untested: dict[str, str] = {}  # column -> what changed in it, for one short note
    for issue in (*checked.errors, *checked.warnings):
        if issue.problem == MISSING_COLUMN:
            continue  # a column gone from the data: the changes since the champion name it
        observation = checked.observations.get(issue.column)
        if issue.column not in tested:
            short = _untested_change(issue, observation)
            if short is not None:
                untested.setdefault(issue.column, short)
            continue
        if issue.problem == WRONG_TYPE:
            found.append(issue.message)
        elif issue.problem in (MISSING_RATE, NEW_MISSING) and observation is not None:
            found.append(missing_change(issue.column, observation))
        elif issue.problem == UNSEEN_CATEGORY and observation is not None:
            found.append(
                f"column {issue.column!r}: {observation.n_unseen:,} of {observation.n_rows:,} "
                f"values are categories the champion never saw, e.g. "
                f"{list(observation.unseen_examples)!r}"
            )
        elif issue.problem == OUT_OF_RANGE and _many_out_of_range(issue, observation):
            found.append(
                f"column {issue.column!r}: {issue.count:,} of {observation.n_rows:,} values "
                f"outside the champion's training range [{observation.training_min:g}, "
                f"{observation.training_max:g}] (observed {observation.observed_min:g} to "
                f"{observation.observed_max:g})"
            )
    shares = (
        []
        if champion_model is None
        else share_changes(
            champion_model,
            contract.n_training_rows or 0,
            champion.metrics,
            X_train,
            y_train,
            positive_label(spec),
        )
    )
    notes = marker_notes(spec, contract, champion.version)
    if untested:  # a later version's rules may test them; the report said nothing of them
        listed = [f"{c!r} ({why})" for c, why in untested.items()]
        more = len(listed) - DRIFT_NOTES
        notes = (
            f"Columns no rule tests changed too since the champion {champion.version}'s "
            "training rows (the next versions' rules may test them): "
            + ", ".join(listed[:DRIFT_NOTES])
            + (f", and {more} more" if more > 0 else "")
            + ".",
            *notes,
        )
    if shares:
        notes = (
            f"These training rows differ from the champion {champion.version}'s: "
            + "; ".join(shares)
            + ". The comparison with it is made on rows unlike its own: check the data "
            "before trusting it.",
            *notes,
        )
    if not found:
        return notes
    more = len(found) - DRIFT_NOTES
    return (
        f"Since the champion {champion.version}'s training rows, in columns the rules test: "
        + "; ".join(found[:DRIFT_NOTES])
        + (f"; and {more} more" if more > 0 else "")
        + ". Check the data before trusting either model's comparison.",
        *notes,
    )


def _many_out_of_range(issue, observation) -> bool:
    """Whether an out-of-range issue holds at least :data:`OUT_OF_RANGE_SHARE` of the rows."""
    return observation is not None and (issue.count or 0) >= OUT_OF_RANGE_SHARE * (
        observation.n_rows
    )


def _untested_change(issue, observation) -> str | None:
    """A few words on what changed in a column no rule tests (:func:`drift_notes`), or None
    when it is no change worth a note."""
    from .contract import MISSING_RATE, NEW_MISSING, OUT_OF_RANGE, UNSEEN_CATEGORY, WRONG_TYPE

    if issue.problem == WRONG_TYPE:
        return "read as another type"
    if observation is None or not observation.n_rows:
        return None
    share = f"{100 * (issue.count or 0) / observation.n_rows:.0f}%"
    if issue.problem in (MISSING_RATE, NEW_MISSING):
        return f"{100 * observation.n_missing / observation.n_rows:.0f}% missing"
    if issue.problem == UNSEEN_CATEGORY:
        unseen = 100 * observation.n_unseen / observation.n_rows
        return f"{unseen:.0f}% of values are new categories"
    if issue.problem == OUT_OF_RANGE and _many_out_of_range(issue, observation):
        return f"{share} of values outside its range"
    return None


def marker_notes(spec: PipelineSpec, contract, version: str) -> tuple[str, ...]:
    """A note when the spec reads missing values with other markers than the champion's
    contract, in a column the champion's rules test: the comparison scores the champion on the
    rows as this spec reads them, which is not how `libre score` reads them for it."""
    ours, everywhere = spec.data.column_missing_markers(), set(spec.data.missing_markers())
    theirs, their_everywhere = contract.column_markers, set(contract.missing_markers)
    changed = []
    for column in (c.name for c in contract.columns if c.in_rules):
        now = set(ours.get(column, ())) | everywhere
        before = set(theirs.get(column, ())) | their_everywhere
        if now != before:
            said = ", ".join(map(repr, sorted(now))) or "none"
            was = ", ".join(map(repr, sorted(before))) or "none"
            changed.append(f"{column!r} (markers {said}; the champion's: {was})")
    if not changed:
        return ()
    return (
        f"This spec reads missing values with other markers than the champion {version}'s "
        f"data contract in columns its rules test: {', '.join(changed)}. The comparison scores "
        "the champion on the rows as this spec reads them, not as `libre score` reads them for "
        "it, so its figures here can differ from its figures in production.",
    )


def markers_read_as_missing(spec: PipelineSpec) -> str:
    """The values the spec's ``read_options.na_values`` reads as missing, for the report's data
    line: a rule's "is missing" then matches them, so the rules are applied to the file as
    written only with them (pima writes a missing glucose as 0). Empty without markers."""
    labels = spec.report.column_labels or {}
    by_markers: dict[tuple[str, ...], list[str]] = {}
    for column, markers in spec.data.column_missing_markers().items():
        shown = labels.get(column)
        by_markers.setdefault(markers, []).append(f"{shown} ({column})" if shown else column)
    parts = [
        f"{' or '.join(map(repr, markers))} in {', '.join(columns)}"
        for markers, columns in by_markers.items()
    ]
    if spec.data.missing_markers():
        parts.append(f"{' or '.join(map(repr, spec.data.missing_markers()))} in every column")
    return f"; read as missing: {'; '.join(parts)}" if parts else ""


def missing_change(column: str, observation) -> str:
    """A column's missing rows now against the champion's training share, in counts and a
    share that a small change does not round to 0 % (3 of 602 rows read "0% against 0%")."""
    before = observation.training_missing_rate or 0.0
    return (
        f"column {column!r}: {observation.n_missing:,} of {observation.n_rows:,} rows missing "
        f"({_small_share(observation.missing_rate)}), against {_small_share(before)} in the "
        "champion's training rows"
    )


def _small_share(rate: float) -> str:
    if not rate:
        return "none"
    return "under 0.1%" if rate < 0.001 else f"{rate:.1%}"


def refine_skipped(spec: PipelineSpec) -> str | None:
    """Why a streamed run leaves the spec's ``refine`` unapplied (None otherwise): the
    report's notes and the command's output say it, as the set cover's log does."""
    if spec.model.refine is None or not spec.is_streamed():
        return None
    return (
        f"The spec's model section sets refine: {spec.model.refine}, which was not applied: a "
        "streamed run does not hold all its training rows, so the rules keep ChiMerge's cut "
        "points. Set data.streamed: false to refine (the rows must then fit in memory)."
    )


#: A note when more than this share of the holdout rows repeat a training row exactly.
COPIED_HOLDOUT = 0.05


def copied_holdout_note(frame: pd.DataFrame, holdout_flags: np.ndarray) -> tuple[str, ...]:
    """A note when many holdout rows repeat a training row exactly (values and label, keyed as
    the split keys them: :func:`~libre_lib.ops.batches.row_keys`): the split keeps each copy
    of a repeated row on a side of its own (docs/pipeline.md), so data with many duplicates
    score partly on rows the model learned from, and the holdout figures read better than
    new rows would."""
    flags = np.asarray(holdout_flags, dtype=bool)
    n_holdout = int(flags.sum())
    if not n_holdout or flags.all():
        return ()
    keys = row_keys(frame)
    copied = int(np.isin(keys[flags], keys[~flags]).sum())
    if copied <= COPIED_HOLDOUT * n_holdout:
        return ()
    return (
        f"{copied:,} of the {n_holdout:,} holdout rows ({copied / n_holdout:.0%}) repeat a "
        "training row exactly (every value and the label): the data hold repeated rows, and "
        "the holdout figures partly score rows the model learned from, so they read better "
        "than new rows would. Remove duplicates upstream if they are not real repeats.",
    )


def dropped_notes(X_train: pd.DataFrame, dropped) -> tuple[str, ...]:
    """A note per declared feature the fit dropped (entirely missing, or a single value in the
    training rows): the fit warned in the task's log only, and an upstream column that broke
    would otherwise train on silently."""
    notes = []
    for name in dropped:
        column = X_train[name] if name in X_train else pd.Series(dtype=float)
        present = column.dropna()
        if present.empty:
            reason = "all its values are missing"
        elif present.nunique() > 1:  # integers beyond 2**53: one value as a float
            notes.append(
                f"Column {name!r} is dropped: its {present.nunique():,} distinct integers lie "
                "beyond 2**53, where ChiMerge's float cut points round them all to one value, "
                "so no rule can use it. If they are identifiers, leave the column out of "
                "features; if they are codes, declare it categorical."
            )
            continue
        else:
            reason = f"it holds a single value ({python_scalar(present.iloc[0])!r})"
        notes.append(
            f"Column {name!r} is dropped: in the training rows {reason}, so no rule can use it. "
            "If the column should carry data, check where it comes from; else leave it out of "
            "features."
        )
    return tuple(notes)


def records_target(rows: Target, records: DistinctRecords) -> Target:
    """The target of every training row as the records count it (their class totals), with
    ``rows``' labels: a streamed run's ``y`` is only its sample."""
    totals = np.array([records.positive_weight.sum(), records.negative_weight.sum()])
    return Target(np.array([True, False]), rows.classes, rows.positive_class, totals)


def model_from_metadata(metadata: dict) -> LibreClassifier:
    """The fitted model a ``set_cover`` artifact's metadata holds."""
    return LibreClassifier.from_dict(metadata["model"])


# --- report, register, publish ----------------------------------------------------------------


def narrow_columns(trained: TrainingReport) -> list[str]:
    """The columns the training rows read as float32 or float16 (from the data contract)."""

    def narrow(dtype) -> bool:
        try:
            return narrow_float(pd.api.types.pandas_dtype(dtype)) is not None
        except (TypeError, ValueError):  # no dtype recorded, or one pandas cannot name
            return False

    columns = json.loads(trained.contract).get("columns", [])
    return [c["name"] for c in columns if narrow(c.get("dtype"))]


@dataclass(frozen=True, eq=False)
class TrainingReport:
    """What ``report`` hands on: the model, its rule report on the holdout rows, the data
    validation it passed, and its data contract (JSON, and as an expectation suite)."""

    model: LibreClassifier
    rules: RuleReport
    validation: ValidationReport
    contract: str
    expectation_suite: str
    scored_rows: tuple[pd.DataFrame, pd.Series, str] | None = None
    """The rows the metrics are on (X, y, "holdout" or "training"): promotion rescores the
    champion on them."""

    @property
    def metrics(self) -> dict:
        return dict(self.rules.metrics)

    def contract_files(self) -> dict[str, str]:
        """The contract files a model version and a run folder keep next to ``model.json``."""
        return {"contract.json": self.contract, "expectations.json": self.expectation_suite}


def report_params(spec: PipelineSpec) -> dict:
    return {"spec": spec.report.model_dump()}


def cuts_thinned_by_rows(
    spec: PipelineSpec, model: LibreClassifier, tuned: bool, asked: bool | None = None
) -> bool:
    """Whether the model's cut points were thinned because its training rows were many: by
    "auto"'s rule, or by the default grid's (``tuned``; the shipped point's significant_cuts
    is then the grid's). ``asked``: the significant_cuts of the spec as written (default:
    ``spec``'s; a tuned spec holds the shipped point's)."""
    if thinned_by_rows(model):
        return True
    asked = spec.model.significant_cuts if asked is None else asked
    grid_rule = tuned and spec.tuning.grid == "default" and not asked
    return grid_rule and thinned_cuts(model)


def report(
    spec: PipelineSpec,
    model: LibreClassifier,
    frame: pd.DataFrame,
    holdout_flags: np.ndarray,
    validation: ValidationReport,
    tuning: Stored | None = None,
    streamed: dict | None = None,
    n_unlabeled: int = 0,
    notes: Sequence[str] = (),
    covered: int | None = None,
    asked_cuts: bool | None = None,
) -> TrainingReport:
    """Metrics and per-rule statistics on the holdout rows (on the training rows when there is
    no holdout, with a note saying so) and the data contract of the training rows; ``tuning``
    is the ``pick`` stage's (table, metadata) when the pipeline tuned. ``streamed``: the row
    counts of a streamed run (``frame`` is then its sample). ``n_unlabeled``: the rows left out
    for want of a target value (``target.unlabeled: drop``; a streamed run counts its own).
    ``notes``: the flow's own, first in the report's notes. ``covered``: the rules the set
    cover chose before the majority guard (a model without rules says which removed them).
    ``asked_cuts``: the significant_cuts of the spec as written, when ``spec`` is the tuned
    one (:func:`cuts_thinned_by_rows`)."""
    # checked here too: ``load`` may be a cache hit (its key holds no labels), and a streamed
    # run's columns are first known without their values
    check_report_labels(frame, spec, spec.features.categorical or [])
    X, y = split_rows(spec, frame, holdout_flags, holdout=True)
    note = ()
    if len(X) == 0:
        X, y = split_rows(spec, frame, holdout_flags)
        note = ("holdout_fraction is 0: every score in this report is on the training rows.",)
    n_train = int((~holdout_flags).sum())
    rows = f"{counted(n_train, 'training row')}, {counted(len(X), 'holdout row')}"
    if note:
        rows = (
            f"{counted(n_train, 'training row')}, no holdout (the figures below are on the "
            "training rows)"
        )
    if streamed is not None:
        n_train = int(streamed["n_train"])
        rows = (
            f"{streamed['n_rows']:,} rows streamed ({n_train:,} training, "
            f"{streamed['n_holdout']:,} holdout); the figures below are on a uniform sample of "
            f"{len(X):,} holdout rows"
        )
        if len(frame) >= streamed["n_rows"]:
            rows = (
                f"{counted(n_train, 'training row')}, {counted(len(X), 'holdout row')} (streamed)"
            )
        n_unlabeled = int(streamed.get("n_unlabeled", 0))
    if n_unlabeled:
        rows += (
            f"; {n_unlabeled:,} row{'s' if n_unlabeled != 1 else ''} without a target value "
            "left out (target.unlabeled: drop)"
        )
    X_train, y_train = split_rows(spec, frame, holdout_flags)
    features = getattr(model.discretization_, "features", ())
    # the fit's warnings about columns reach the task's log only: the report repeats them
    as_text = misread_text_columns(X_train[list(model.columns_)], model.categorical_features)
    identifiers = identifier_messages(
        X_train[[f.name for f in features]],
        [f.kind == CATEGORICAL for f in features],
        skip=as_text.__contains__,
    )
    dropped = dropped_notes(X_train, getattr(model.discretization_, "dropped", ()))
    if streamed is None:  # a streamed run holds a sample: "in every row" is not known
        dropped += duplicate_notes(X_train[list(model.columns_)])
    dropped += unheld_label_notes(spec, X_train)
    if not note and streamed is None:  # a holdout of its own, every row in memory
        dropped += copied_holdout_note(frame, holdout_flags)
    skipped = tuple(filter(None, [refine_skipped(spec) if streamed is not None else None]))
    scored = "training" if note else "holdout"
    # no setting beat flagging every row: a caution under the header, not a note at the end
    signal = tuple(filter(None, [signal_note(spec, tuning, model, y_train)]))
    found = [few_positives_note(spec, tuning, y_train), few_scored_positives_note(spec, y, scored)]
    skipped += tuple(filter(None, found))
    rule_report = build_report(
        model,
        X,
        y,
        title=spec.report.title or f"Rule report: {spec.name}",
        column_labels=spec.report.column_labels,
        target_label=spec.report.target_label,
        value_labels=spec.report.value_labels,
        class_labels=spec.report.class_labels,
        validation_summary=validation.summary(),
        validation_success=validation.success,
        expectations=validation.results,
        data_description=(
            f"{Path(spec.data.path).name}: {rows}; positive class "
            + _class_shown(positive_label(spec), spec.report.class_labels)
            + markers_read_as_missing(spec)
        ),
        description=spec.description,
        generated_at=datetime.now(UTC).isoformat(timespec="seconds"),
        notes=(*notes, *skipped, *dropped, *as_text.values(), *identifiers, *note),
        X_train=X_train,
        y_train=y_train,
        tuning=None if tuning is None else pa.table(tuning[0]).to_pandas(),
        tuning_summary=None if tuning is None else tuning[1],
        evaluated_on="training" if note else "holdout",
        cautions=signal,
        covered=covered,
        cuts_by_rows=cuts_thinned_by_rows(spec, model, tuning is not None, asked_cuts),
    )
    if streamed is not None:  # its training F1 would be the sample's: the flow's check, on
        rule_report = replace(rule_report, fit_cautions=signal)  # every row, acted
        if len(frame) < streamed["n_rows"]:  # cut points were rounded on the sample's values
            shown = f"{SAMPLED} {rule_report.display_rows}"
            rule_report = replace(rule_report, display_rows=shown)
    contract = DataContract.from_model(
        model,
        X_train,
        missing_markers=spec.data.missing_markers(),
        column_markers=spec.data.column_missing_markers(),
        thousands=spec.data.read_options.get("thousands"),
    )
    training = (streamed or {}).get("training")
    if training is not None:  # ``X_train`` was a sample: its ranges are narrower than the rows'
        contract = contract.with_training_statistics(
            training["n_train"],
            training["missing"],
            training["ranges"],
            unknown_domains=[c for c in model.columns_ if c not in {f.name for f in features}],
        )
    suite = json.dumps(contract.to_expectation_suite(f"libre-{spec.name}-contract"), indent=2)
    kind = "training" if note else "holdout"
    return TrainingReport(model, rule_report, validation, contract.to_json(), suite, (X, y, kind))


def report_table(trained: TrainingReport) -> Stored:
    """The per-rule holdout statistics, with the metrics in the metadata."""
    return trained.rules.rules, {"metrics": trained.metrics}


@dataclass(frozen=True)
class Registration:
    """What ``register`` hands on: the model version (a new candidate, or the latest version
    reused when the model, data and spec are unchanged: ``new_version`` False), the promotion
    decision (what ``promote`` will record, decided against the champion at registration), and
    what changed since that champion (None for the first version), and the holdout scores of
    the pipeline's versions so far (``trend``)."""

    version: ModelVersion
    decision: PromotionDecision
    changes: ChampionChanges | None
    new_version: bool = True
    trend: pd.DataFrame | None = None
    holdout: Holdout | None = None
    """The rows the decision scores champion and version on (this run's holdout)."""
    min_accuracy: float | None = None
    """The majority-class answer's accuracy on those rows, when the spec's
    ``promotion.beat_majority`` asks the version to beat it."""


def register(
    registry: ModelRegistry,
    spec: PipelineSpec,
    trained: TrainingReport,
    data_fingerprint: str,
    run_id: str,
    data_aliases: Sequence[str] = (),
) -> Registration:
    """Register the model as the pipeline's next version, a candidate: the champion does not
    move (``promote``, the run's last step, does that), and decide whether it will be promoted
    (section "Model versions" of docs/operations.md). A model equal to a registered version's,
    trained on the same data with the same spec (a rerun, or a retraining that reproduces an
    earlier version), reuses that version instead of registering a copy."""
    previous = registry.champion(spec.name)
    version, new = registry.register_unless_unchanged(
        spec.name,
        trained.model.to_json(),
        spec=spec.model_dump(mode="json"),
        metrics=trained.metrics,
        validation=validation_record(trained.validation),
        data_fingerprint=data_fingerprint,
        spec_hash=model_spec_hash(spec),
        # what earlier releases recorded
        spec_aliases=(
            spec_hash(spec),
            model_spec_hash(spec, with_path=True),
            model_spec_hash(spec, reading=True),
        ),
        run_id=run_id,
        extra_files=trained.contract_files(),
        split=split_key(
            spec, [spec.target.column, *trained.model.columns_], narrow_columns(trained)
        ),
        data_aliases=data_aliases,
    )
    holdout = None
    if trained.scored_rows is not None:
        X, y, kind = trained.scored_rows
        source = f"the {kind} rows of run {run_id}" if run_id else f"this run's {kind} rows"
        holdout = Holdout(X, y, source, kind)
    min_accuracy = majority_accuracy(trained) if spec.promotion.beat_majority else None
    decision = registry.decide(
        spec.name,
        version.version,
        tolerance=spec.promotion.tolerance,
        metric=spec.promotion.metric,
        holdout=holdout,
        min_accuracy=min_accuracy,
    )
    changes = _changes(registry, spec, previous, version, decision)
    trend = _trend(registry, spec, version, decision)
    return Registration(version, decision, changes, new, trend, holdout, min_accuracy)


def _class_shown(label, class_labels) -> str:
    """The positive class as the report names it: its label (``'diabetic' (1)``) when the
    spec gives one, else the value quoted."""
    named = {value_key(k): v for k, v in (class_labels or {}).items()}.get(value_key(label))
    return f"{label!r}" if named is None else f"{named!r} ({label})"


def majority_accuracy(trained: TrainingReport) -> float:
    """The accuracy of the majority-class answer on the rows the model's metrics are on (the
    report's baseline)."""
    table = trained.rules.baselines
    if table is None or not (table["answer"] == "majority").any():
        raise ValueError("the training report has no majority-class baseline")
    return float(table.loc[table["answer"] == "majority", "accuracy"].iloc[0])


def _trend(
    registry: ModelRegistry,
    spec: PipelineSpec,
    version: ModelVersion,
    decision: PromotionDecision,
) -> pd.DataFrame:
    """The versions' holdout scores, with the run's decision applied as the report states it
    ("became the champion"): this run's version is the champion, the one it replaces an
    earlier champion; or this run's version is not promoted. It was "candidate, to be
    promoted" beside the old champion, so the table and figure named the old one in
    production. A decision taken again at ``promote`` writes the report again."""
    champions = [h.get("version") for h in registry.history(spec.name)]
    versions = registry.versions(spec.name)
    trend = version_trend(
        versions, champions, current=version.version, in_sample=_in_sample(registry, versions)
    )
    mine = trend["this_run"] & (trend["status"] == "candidate")
    if decision.promoted and mine.any():
        replaced = ~trend["this_run"] & (trend["status"] == "champion")
        trend.loc[replaced, "status"] = "champion (earlier)"
        trend.loc[mine, "status"] = "champion"
    else:
        trend.loc[mine, "status"] = "candidate, not promoted"
    return trend


def _in_sample(registry: ModelRegistry, versions: list[ModelVersion]) -> list[str]:
    """The versions trained without a holdout (their metrics are on their training rows)."""
    found = []
    for v in versions[-TREND_VERSIONS:]:
        try:
            fraction = registry.spec(v.pipeline, v.version).get("holdout_fraction")
        except (OSError, RegistryError):
            continue  # an unreadable spec: the version reads as scored on a holdout
        if fraction == 0:
            found.append(v.version)
    return found


def promote(
    registry: ModelRegistry, spec: PipelineSpec, registration: Registration
) -> Registration:
    """Record the promotion decision on the registered version: the champion pointer moves if
    it is promoted. The run's last step, after every file it depends on is written, so a failed
    run never moves the champion. The decision is taken again under the registry's lock: it
    differs from the registered one only if another run promoted a version meanwhile."""
    version = registration.version
    decision = registry.promote(
        spec.name,
        version.version,
        tolerance=spec.promotion.tolerance,
        metric=spec.promotion.metric,
        holdout=registration.holdout,
        min_accuracy=registration.min_accuracy,
    )
    if decision == registration.decision:
        return registration
    changes = _changes(registry, spec, decision.previous, version, decision)
    trend = _trend(registry, spec, version, decision)
    return replace(registration, decision=decision, changes=changes, trend=trend)


def _changes(
    registry: ModelRegistry,
    spec: PipelineSpec,
    previous: ModelVersion | None,
    version: ModelVersion,
    decision: PromotionDecision,
) -> ChampionChanges | None:
    changes = registry.changes(spec.name, previous, version, decision)
    if changes is not None and spec.report.column_labels:
        changes = replace(changes, column_labels=dict(spec.report.column_labels))
    return changes


def run_report(trained: TrainingReport, registration: Registration, run_id: str = "") -> RuleReport:
    """The rule report with the registration: model version, changes since the champion and
    the versions' holdout scores; ``run_id`` names the run (its folder)."""
    return replace(
        trained.rules,
        changes=registration.changes,
        model_version=registration.version.version,
        run_id=run_id,
        trend=registration.trend,
    )


def report_files(
    trained: TrainingReport, registration: Registration, run_id: str = ""
) -> dict[str, str]:
    """The run folder's report files by name (with the changes since the champion)."""
    rules = run_report(trained, registration, run_id)
    return {"report.md": render_markdown(rules), "report.html": render_html(rules)}


def run_files(
    trained: TrainingReport, registration: Registration, run_id: str = ""
) -> dict[str, str]:
    """The run folder's files by name: the report (:func:`report_files`), the model and its
    contract."""
    return {
        **report_files(trained, registration, run_id),
        "model.json": trained.model.to_json(),
        **trained.contract_files(),
    }
