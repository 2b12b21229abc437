"""Learning tasks: discretize, encode, one task per weak learner, union + filter, set cover."""

from __future__ import annotations

import numpy as np
import pandas as pd
from prefect import task
from prefect.cache_policies import NO_CACHE

from libre_lib import LibreClassifier
from libre_lib.ensemble import learn_subset, union_candidates
from libre_lib.inputs import Target, binary_target
from libre_lib.ops.spec import PipelineSpec
from libre_lib.ops.tables import (
    candidates_from_table,
    candidates_table,
    discretization_from_metadata,
    discretization_table,
    records_from_table,
    records_table,
    selection_table,
)
from libre_lib.selection import cover_candidates, filter_candidates

from .common import Stage, feature_columns, read_frame, read_stage, run_stage, target_label


def training_part(spec: PipelineSpec, store_root: str, data: Stage, split: Stage, holdout=False):
    """(X, y) of the training (or holdout) rows."""
    frame = read_frame(store_root, data)
    mask = read_frame(store_root, split)["holdout"].to_numpy() == holdout
    part = frame.loc[mask].reset_index(drop=True)
    return part[feature_columns(frame, spec)], part[spec.target.column]


def _target(spec: PipelineSpec, y: pd.Series) -> Target:
    return binary_target(y, target_label(spec, spec.target.positive_class), n_rows=len(y))


def _estimator(spec: PipelineSpec) -> LibreClassifier:
    params = spec.estimator_params()
    params["positive_class"] = target_label(spec, params["positive_class"])
    return LibreClassifier(**params)


@task(name="discretize", cache_policy=NO_CACHE)
def discretize(spec, store_root: str, data: Stage, split: Stage, force: bool = False) -> Stage:
    """ChiMerge cut points / category bins, learned on the training rows."""
    m = spec.model
    params = {
        "chi2_threshold": m.chi2_threshold,
        "max_intervals": m.max_intervals,
        "categorical": spec.features.categorical,
        "positive_class": target_label(spec, spec.target.positive_class),
    }

    def compute():
        X, y = training_part(spec, store_root, data, split)
        return discretization_table(_estimator(spec).discretize(X, _target(spec, y)))

    return run_stage(spec, store_root, "discretize", params, [data, split], compute, force)


def load_discretization(store_root: str, stage: Stage):
    return discretization_from_metadata(read_stage(store_root, stage)[1])


@task(name="encode", cache_policy=NO_CACHE)
def encode(spec, store_root, data: Stage, split: Stage, bins: Stage, force=False) -> Stage:
    """Distinct training records (bin codes) with their class weights."""

    def compute():
        X, y = training_part(spec, store_root, data, split)
        discretization = load_discretization(store_root, bins)
        records = LibreClassifier.encode(X, _target(spec, y), discretization)
        return records_table(records, discretization)

    return run_stage(spec, store_root, "encode", {}, [data, split, bins], compute, force)


def load_records(store_root: str, stage: Stage):
    table, metadata = read_stage(store_root, stage)
    return records_from_table(table, metadata)


def feature_subsets(spec: PipelineSpec, store_root: str, bins: Stage) -> list[list[int]]:
    """The learners' subsets, fixed up front from the seed (independent of scheduling)."""
    subsets = _estimator(spec).draw_subsets(load_discretization(store_root, bins))
    return [list(s) for s in subsets]


def learner_params(spec: PipelineSpec, subset: list[int]) -> dict:
    params = {"heuristic": spec.model.heuristic, "seeds": spec.model.seeds, "subset": subset}
    if spec.model.conflict_tolerance:  # absent at 0, so earlier cached learners stay valid
        params["conflict_tolerance"] = spec.model.conflict_tolerance
    return params


@task(name="learn", cache_policy=NO_CACHE)
def learn(spec, store_root, records: Stage, bins: Stage, subset: list[int], force=False) -> Stage:
    """One weak learner (FindBoundary) on one feature subset."""
    params = learner_params(spec, subset)

    def compute():
        discretization = load_discretization(store_root, bins)
        candidates = learn_subset(
            load_records(store_root, records),
            discretization.n_bins,
            subset,
            spec.model.heuristic,
            spec.model.seeds,
            spec.model.conflict_tolerance,
        )
        return candidates_table(candidates, discretization, with_text=False)

    return run_stage(spec, store_root, "learner", params, [records, bins], compute, force)


@task(name="union-filter", cache_policy=NO_CACHE)
def union_filter(spec, store_root, learners: list[Stage], records: Stage, bins: Stage, force=False):
    """Union of the learners' points, local-support filter and top-K (section 3.3)."""
    params = {"top_k": spec.model.top_k, "min_local_support": spec.model.min_local_support}

    def compute():
        discretization = load_discretization(store_root, bins)
        parts = [candidates_from_table(*read_stage(store_root, s)) for s in learners]
        union = union_candidates(parts, int(discretization.n_bins.sum()))
        recs = load_records(store_root, records)
        ranked = filter_candidates(union, recs, spec.model.top_k, spec.model.min_local_support)
        kept = union.take(ranked)
        n_pos, n_neg = recs.positive_weight.sum(), recs.negative_weight.sum()
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

    return run_stage(spec, store_root, "candidates", params, [*learners, records], compute, force)


@task(name="set-cover", cache_policy=NO_CACHE)
def select(
    spec,
    store_root,
    candidates: Stage,
    records: Stage,
    bins: Stage,
    data: Stage,
    split: Stage,
    subsets: list[list[int]],
    force=False,
) -> Stage:
    """Greedy weighted set cover; stores the selected rules and the fitted model (JSON)."""
    params = {
        "alpha": spec.model.alpha,
        "max_rules": spec.model.max_rules,
        "estimator": spec.estimator_params(),
        "subsets": subsets,
    }

    def compute():
        discretization = load_discretization(store_root, bins)
        table, metadata = read_stage(store_root, candidates)
        kept = candidates_from_table(table, metadata)
        recs = load_records(store_root, records)
        selection = cover_candidates(
            kept, recs, discretization.n_bins, spec.model.alpha, spec.model.max_rules
        )
        X, y = training_part(spec, store_root, data, split)
        model = _estimator(spec).assemble(
            X.columns,
            _target(spec, y),
            discretization,
            subsets,
            kept,
            selection,
            target_name=spec.target.column,
        )
        model.n_candidates_ = int(metadata.get("n_union", len(kept)))
        out, _ = selection_table(selection, kept, discretization)
        return out, {"model": model.to_dict()}

    return run_stage(
        spec,
        store_root,
        "selection",
        params,
        [candidates, records, bins, data, split],
        compute,
        force,
    )


def load_model(store_root: str, stage: Stage) -> LibreClassifier:
    return LibreClassifier.from_dict(read_stage(store_root, stage)[1]["model"])
