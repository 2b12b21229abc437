"""Learning tasks: choose, discretize, encode, one task per weak learner, union + filter, set
cover."""

from __future__ import annotations

import hashlib

from prefect import task
from prefect.cache_policies import NO_CACHE

from libre_lib import LibreClassifier
from libre_lib.ensemble import Candidates
from libre_lib.ops import stages
from libre_lib.ops.markdown import visible
from libre_lib.ops.spec import PipelineSpec
from libre_lib.ops.tables import (
    candidates_from_table,
    discretization_from_metadata,
    records_from_table,
)

from .common import Stage, log, lookup_stage, map_missing, read_stage, run_stage
from .data import split_rows, training_rows


@task(name="choose", cache_policy=NO_CACHE)
def choose(spec, store_root: str, data: Stage, split: Stage, force: bool = False) -> Stage:
    """max_rules and conflict_tolerance: the spec's, or chosen by inner cross-validation on the
    training rows where the spec says "auto"."""

    def compute():
        return stages.choose(spec, *split_rows(spec, store_root, data, split))

    params = stages.choose_params(spec, training_rows(store_root, split))
    return run_stage(spec, store_root, "choose", params, [data, split], compute, force)


@task(name="choose_fallback", cache_policy=NO_CACHE)
def choose_fallback(spec, store_root: str, choice: Stage, fallbacks: int, force=False) -> Stage:
    """The "auto" refit check's ``fallbacks``-th combination after ``choose``'s choice (as
    ``LibreClassifier.fit`` falls back when the fit of the choice keeps no rule)."""

    def compute():
        return stages.choose_fallback(read_stage(store_root, choice), fallbacks)

    params = {"fallback": fallbacks}
    return run_stage(spec, store_root, "choose_fallback", params, [choice], compute, force)


def load_choice(store_root: str, stage: Stage) -> stages.Choice:
    return stages.choice_from_metadata(read_stage(store_root, stage)[1])


@task(name="discretize", cache_policy=NO_CACHE)
def discretize(
    spec, store_root: str, data: Stage, split: Stage, choice: Stage, force: bool = False
) -> Stage:
    """ChiMerge cut points / category bins, learned on the training rows."""
    chosen = load_choice(store_root, choice)

    def compute():
        return stages.discretize(spec, *split_rows(spec, store_root, data, split), chosen)

    params = stages.discretize_params(spec, chosen, training_rows(store_root, split))
    return run_stage(spec, store_root, "discretize", params, [data, split], compute, force)


def load_discretization(store_root: str, stage: Stage):
    return discretization_from_metadata(read_stage(store_root, stage)[1])


@task(name="encode", cache_policy=NO_CACHE)
def encode(spec, store_root, data: Stage, split: Stage, bins: Stage, force=False) -> Stage:
    """Distinct training records (bin codes) with their class weights."""

    def compute():
        X, y = split_rows(spec, store_root, data, split)
        return stages.encode(spec, X, y, load_discretization(store_root, bins))

    return run_stage(spec, store_root, "encode", {}, [data, split, bins], compute, force)


def load_records(store_root: str, stage: Stage):
    table, metadata = read_stage(store_root, stage)
    return records_from_table(table, metadata)


def load_candidates(store_root: str, stage: Stage) -> Candidates:
    return candidates_from_table(*read_stage(store_root, stage))


def feature_subsets(
    spec: PipelineSpec, store_root: str, bins: Stage, learner_factor: int = 1
) -> list[list[int]]:
    """The learners' subsets, fixed up front from the seed (independent of scheduling):
    ``learner_factor`` times ``n_estimators`` of them."""
    return stages.feature_subsets(spec, load_discretization(store_root, bins), learner_factor)


#: A learner's run name names at most this many characters of its columns.
RUN_NAME_CHARS = 80


def learn_run_name() -> str:
    """A mapped learner's run name says which columns it learns on: ``learn-glucose-age-bmi``
    (``columns``: the kept features' names, read once by :func:`learn_all`; without them the
    indices, ``learn-f0-f3-f5``). Names longer than :data:`RUN_NAME_CHARS` are cut and end
    with the indices, which tell apart learners whose names begin alike."""
    from prefect.runtime import task_run

    subset, columns = task_run.parameters["subset"], task_run.parameters.get("columns")
    if columns:
        names = "-".join(visible(columns[j]) for j in subset)
    else:
        names = "-".join(f"f{j}" for j in subset)
    if len(names) > RUN_NAME_CHARS:  # cut, then told apart by the columns' positions
        positions = "-".join(f"f{j}" for j in subset)
        if len(positions) > RUN_NAME_CHARS // 2:  # many columns: a short digest of them
            positions = "#" + hashlib.sha256(positions.encode()).hexdigest()[:8]
        names = names[: RUN_NAME_CHARS - len(positions) - 2] + f"… {positions}"
    return f"learn-{names}"


@task(name="learn", task_run_name=learn_run_name, cache_policy=NO_CACHE)
def learn(
    spec,
    store_root,
    records: Stage,
    bins: Stage,
    choice: Stage,
    subset: list[int],
    force=False,
    columns: list[str] | None = None,
) -> Stage:
    """One weak learner (FindBoundary) on one feature subset, with the chosen tolerance
    (``columns``, the kept features' names, only name the task run)."""
    tolerance = load_choice(store_root, choice).conflict_tolerance

    def compute():
        discretization = load_discretization(store_root, bins)
        distinct = load_records(store_root, records)
        return stages.learn(spec, distinct, discretization, subset, tolerance)

    params = stages.learn_params(spec, subset, tolerance)
    return run_stage(spec, store_root, "learn", params, [records, bins], compute, force)


def cached_learners(spec, store_root, records: Stage, bins: Stage, choice: Stage, subsets, force):
    """Per subset, its learner's artifact if the store has it already (never under ``force``),
    else None."""
    if force:
        return [None] * len(subsets)
    tolerance = load_choice(store_root, choice).conflict_tolerance
    params = [stages.learn_params(spec, s, tolerance) for s in subsets]
    return [lookup_stage(store_root, "learn", p, [records, bins]) for p in params]


def learn_all(
    spec, store_root, records: Stage, bins: Stage, choice: Stage, subsets, force=False
) -> list[Stage]:
    """``learn`` mapped over the subsets whose learner is not in the store yet (cached learners
    are not resubmitted); a progress artifact follows them."""
    learners = cached_learners(spec, store_root, records, bins, choice, subsets, force)
    fixed = {"spec": spec, "store_root": store_root, "records": records, "bins": bins}
    fixed.update(choice=choice, force=force)
    if any(learner is None for learner in learners):  # names for the run names, read once
        fixed["columns"] = [f.name for f in load_discretization(store_root, bins).features]
    progress = ("progress", "weak learners finished")
    return map_missing(learn, spec, learners, "subset", subsets, fixed, progress)


@task(name="union_filter", cache_policy=NO_CACHE)
def union_filter(spec, store_root, learners: list[Stage], records: Stage, bins: Stage, force=False):
    """Union of the learners' points, local-support filter and top-K (section 3.3)."""

    def compute():
        parts = [load_candidates(store_root, s) for s in learners]
        discretization = load_discretization(store_root, bins)
        return stages.union_filter(spec, parts, load_records(store_root, records), discretization)

    params = stages.union_filter_params(spec)
    inputs = [*learners, records]
    return run_stage(spec, store_root, "union_filter", params, inputs, compute, force)


@task(name="set_cover", cache_policy=NO_CACHE)
def set_cover(
    spec,
    store_root,
    candidates: Stage,
    records: Stage,
    bins: Stage,
    data: Stage,
    split: Stage,
    choice: Stage,
    subsets: list[list[int]],
    force=False,
    learner_factor: int = 1,
) -> Stage:
    """Greedy weighted set cover with the chosen max_rules; stores the selected rules and the
    fitted model (JSON, with the choice; ``learner_factor``: its learners as a multiple of
    ``n_estimators``)."""
    chosen = load_choice(store_root, choice)

    def compute():
        kept = load_candidates(store_root, candidates)
        n_union = int(read_stage(store_root, candidates)[1].get("n_union", len(kept)))
        table, metadata = stages.set_cover(
            spec,
            kept,
            load_records(store_root, records),
            load_discretization(store_root, bins),
            *split_rows(spec, store_root, data, split),
            subsets,
            chosen,
            n_candidates=n_union,
            learner_factor=learner_factor,
        )
        if metadata["refinement_skipped"]:
            log().warning(metadata["refinement_skipped"])
        return table, metadata

    params = stages.set_cover_params(spec, subsets, chosen, learner_factor)
    inputs = [candidates, records, bins, data, split, choice]
    return run_stage(spec, store_root, "set_cover", params, inputs, compute, force)


def load_model(store_root: str, stage: Stage) -> LibreClassifier:
    return stages.model_from_metadata(read_stage(store_root, stage)[1])
