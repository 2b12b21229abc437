"""Stage outputs as Arrow tables (for the Parquet artifact store) and back.

Each table is readable on its own (feature names, bin ranges, rule texts), and carries what is
needed for an exact round trip in a small JSON metadata entry.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pyarrow as pa

from ..discretization import NUMERIC, Discretization
from ..encoding import DistinctRecords
from ..ensemble import Candidates
from ..render import rule_text
from ..rules import rule_from_point
from ..selection import Selection

WEIGHT_POS = "weight__positive"
WEIGHT_NEG = "weight__negative"


def discretization_table(discretization: Discretization) -> tuple[pa.Table, dict]:
    """One row per (feature, bin), and per category of a categorical bin (grouped categories
    share a bin): the interval or category each bin stands for."""
    rows = {"feature": [], "kind": [], "bin": [], "low": [], "high": [], "category": []}
    rows["missing"] = []
    for feature in discretization.features:
        edges = (-math.inf, *feature.cuts, math.inf)
        for b in range(feature.n_bins):
            is_missing = b == feature.missing_bin
            numeric_bin = feature.kind == NUMERIC and not is_missing
            categories = [None]
            if feature.kind != NUMERIC and not is_missing:
                categories = [json.dumps(c, ensure_ascii=False) for c in feature.bin_categories(b)]
            for category in categories:
                rows["feature"].append(feature.name)
                rows["kind"].append(feature.kind)
                rows["bin"].append(b)
                rows["low"].append(edges[b] if numeric_bin else None)
                rows["high"].append(edges[b + 1] if numeric_bin else None)
                rows["category"].append(category)
                rows["missing"].append(is_missing)
    table = pa.table(
        {
            **{k: rows[k] for k in ("feature", "kind", "bin")},
            "low": pa.array(rows["low"], pa.float64()),
            "high": pa.array(rows["high"], pa.float64()),
            "category": pa.array(rows["category"], pa.string()),
            "missing": pa.array(rows["missing"], pa.bool_()),
        }
    )
    return table, {"discretization": discretization.to_dict()}


def discretization_from_metadata(metadata: dict) -> Discretization:
    return Discretization.from_dict(metadata["discretization"])


def records_table(
    records: DistinctRecords, discretization: Discretization
) -> tuple[pa.Table, dict]:
    """Distinct training records: one bin-code column per feature plus class weights. Codes
    are stored in the smallest unsigned type that holds every feature's bins (uint8 for up to
    256 bins, uint16 for 65,536, then uint32)."""
    dtype = code_dtype(discretization)
    columns = {
        f"bin__{name}": pa.array(records.codes[:, j].astype(dtype))
        for j, name in enumerate(discretization.names)
    }
    columns[WEIGHT_POS] = pa.array(records.positive_weight)
    columns[WEIGHT_NEG] = pa.array(records.negative_weight)
    return pa.table(columns), {"features": discretization.names}


def code_dtype(discretization: Discretization) -> np.dtype:
    """The smallest unsigned integer type that holds every bin code (0 … bins - 1)."""
    largest = int(discretization.n_bins.max(initial=1)) - 1
    return np.min_scalar_type(max(largest, 0))


def records_from_table(table: pa.Table, metadata: dict) -> DistinctRecords:
    names = metadata["features"]
    codes = (
        np.column_stack([table.column(f"bin__{n}").to_numpy().astype(np.int32) for n in names])
        if names
        else np.zeros((table.num_rows, 0), dtype=np.int32)
    )
    return DistinctRecords(
        codes=np.ascontiguousarray(codes),
        positive_weight=table.column(WEIGHT_POS).to_numpy().astype(float),
        negative_weight=table.column(WEIGHT_NEG).to_numpy().astype(float),
        inverse=np.zeros(0, dtype=np.int64),
    )


def candidates_table(
    candidates: Candidates, discretization: Discretization, with_text: bool = True, **extra_columns
) -> tuple[pa.Table, dict]:
    """Candidate rules: the lattice element (packed bits), its coverage and, if asked, its
    text (rendering costs ~0.1 ms a rule, so the per-learner tables skip it)."""
    n, n_bits = candidates.points.shape
    packed = np.ascontiguousarray(np.packbits(candidates.points, axis=1))
    width = max(packed.shape[1], 1)
    if packed.shape[1] == 0:
        packed = np.zeros((n, 1), dtype=np.uint8)
    points = pa.FixedSizeBinaryArray.from_buffers(
        pa.binary(width), n, [None, pa.py_buffer(packed.tobytes())]
    )
    columns = {}
    if with_text:
        columns["rule"] = [rule_text(rule_from_point(p, discretization)) for p in candidates.points]
    columns["positives"] = pa.array(candidates.positives, pa.float64())
    columns["negatives"] = pa.array(candidates.negatives, pa.float64())
    columns["point"] = points
    for name, values in extra_columns.items():
        columns[name] = pa.array(values)
    return pa.table(columns), {"n_bits": n_bits}


def candidates_from_table(table: pa.Table, metadata: dict) -> Candidates:
    n_bits = int(metadata["n_bits"])
    column = table.column("point").combine_chunks()
    n = len(column)
    if n:
        width = column.type.byte_width
        data = np.frombuffer(column.buffers()[1], dtype=np.uint8)
        start = column.offset * width
        packed = data[start : start + n * width].reshape(n, width)
        points = np.unpackbits(packed, axis=1, count=n_bits).astype(bool)
    else:
        points = np.zeros((0, n_bits), dtype=bool)
    return Candidates(
        points,
        table.column("positives").to_numpy().astype(float),
        table.column("negatives").to_numpy().astype(float),
    )


def selection_table(
    selection: Selection, candidates: Candidates, discretization: Discretization
) -> tuple[pa.Table, dict]:
    """The chosen rules in order with their training statistics."""
    stats = selection.stats
    table = pa.table(
        {
            "order": pa.array(np.arange(1, len(stats) + 1), pa.int64()),
            "candidate": pa.array(selection.indices, pa.int64()),
            "rule": [
                rule_text(rule_from_point(candidates.points[i], discretization))
                for i in selection.indices
            ],
            "positives": pa.array([s.positives for s in stats], pa.float64()),
            "negatives": pa.array([s.negatives for s in stats], pa.float64()),
            "new_positives": pa.array([s.new_positives for s in stats], pa.float64()),
            "new_negatives": pa.array([s.new_negatives for s in stats], pa.float64()),
            "precision": pa.array([s.precision for s in stats], pa.float64()),
        }
    )
    return table, {}


def choice_table(chosen: dict, scores: dict | None) -> pa.Table:
    """The inner cross-validation behind the "auto" choice: one row per combination of
    ``max_intervals``, ``conflict_tolerance``, ``alpha`` and ``max_rules`` with its mean F1
    over the folds, their standard deviation, the mean rules and whether it was chosen
    (``max_intervals`` / ``max_rules`` null: no cap; ``alpha`` as text, "f1" included).
    Without a cross-validation (nothing "auto", or too few rows) one row: the values used,
    with null scores."""
    measures = ("mean_f1", "std_f1", "mean_rules")
    if scores is None:
        scores = {"params": [chosen], **{k: [None] for k in measures}}
    combos = scores["params"]

    def column(name, kind):
        return pa.array([c[name] for c in combos], kind)

    return pa.table(
        {
            "max_intervals": column("max_intervals", pa.int64()),
            "conflict_tolerance": column("conflict_tolerance", pa.float64()),
            "alpha": pa.array([str(c["alpha"]) for c in combos], pa.string()),
            "max_rules": column("max_rules", pa.int64()),
            **{k: pa.array(scores[k], pa.float64()) for k in measures},
            "chosen": pa.array([_same(c, chosen) for c in combos], pa.bool_()),
        }
    )


def _same(combo: dict, chosen: dict) -> bool:
    return all(
        combo[k] == chosen[k] if k != "conflict_tolerance" else float(combo[k]) == chosen[k]
        for k in combo
    )
