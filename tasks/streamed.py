"""Streamed pipeline tasks: the source read in parts and batches (``libre_lib.ops.streamed``).

Three passes, each a task mapped over the source's parts (on the Dask workers with
``runner: dask``), each part's result a Parquet artifact, merged once:

profile (per part) → validate → sample (per part) → sample + split → … → discretize (from the
merged counts) → encode (per part) → encode (merged)

The merged ``sample`` and ``split`` stand where ``load`` and ``split`` stand in memory, so the
stages that need rows (tuning, the "auto" choice, set cover's model, the report) run on them
unchanged; the merged ``encode`` holds the distinct records of *every* training row.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from prefect import task
from prefect.cache_policies import NO_CACHE

from libre_lib.errors import DataError, counted
from libre_lib.ops import stages, streamed
from libre_lib.ops.artifacts import SIDECAR_SUFFIX
from libre_lib.ops.batches import Part
from libre_lib.ops.files import unlink_quietly
from libre_lib.ops.sources import (
    DATA_SUFFIXES,
    fingerprint_source,
    identical_files,
    unread_files,
)
from libre_lib.ops.spec import PipelineSpec
from libre_lib.ops.streamed import SourcePlan
from libre_lib.ops.tables import discretization_table, records_table
from libre_lib.ops.validation_stream import name_parts, validate_statistics

from .common import (
    Stage,
    log,
    lookup_stage,
    map_missing,
    read_stage,
    run_stage,
    source_stage,
    stream_stages,
)
from .data import finish_validation
from .learning import load_choice, load_discretization
from .policies import LOAD_TIMEOUT_S, read_policy


@task(name="plan_source", cache_policy=NO_CACHE, **read_policy(LOAD_TIMEOUT_S))
def plan_source(spec: PipelineSpec) -> tuple[SourcePlan, Stage]:
    """The source's parts, its selected columns and which are categorical; and the source as
    the root of the stages' keys (its sha256)."""
    source = source_stage(fingerprint_source(spec.data_location(), spec.data.resolved_format()))
    plan = streamed.plan_source(spec)
    known = [p.n_rows for p in plan.parts if p.n_rows is not None]
    rows = f"{sum(known):,} rows" if len(known) == len(plan.parts) else "rows counted when read"
    log().info(
        "streamed source: %d part(s), %s, %d feature(s); batches of %d rows",
        len(plan.parts),
        rows,
        len(plan.features),
        spec.data.batch_rows,
    )
    return plan, source


def source_notes(spec: PipelineSpec) -> tuple[str, ...]:
    """The run's notes on a folder source, streamed or read whole: files it does not read, and
    data files that repeat another byte for byte (logged too; ``libre train`` and ``libre
    validate`` print them, and the report lists them). None for a single file."""
    suffixes = DATA_SUFFIXES[spec.data.resolved_format()]
    found = (
        unread_files(spec.data_location(), suffixes),
        identical_files(spec.data_location(), suffixes),
    )
    notes = tuple(note for note in found if note is not None)
    for note in notes:
        log().warning("%s", note)
    return notes


@task(name="check_source", cache_policy=NO_CACHE, **read_policy(LOAD_TIMEOUT_S))
def check_source(spec: PipelineSpec, source: Stage, stages_run: list[Stage]) -> None:
    """Refuse a streamed run whose parts changed while it read them (an export landing
    mid-run): its results mix two versions of the data under the key of the first. The stages
    this run computed are removed from the store (later stages' keys follow from the source's
    fingerprint, not from the rows, so a run on the first bytes would reuse them), and nothing
    is registered. A run whose stages were all cache hits read no part: nothing to check."""
    computed = [s for s in stages_run if not s.hit and s.ref.path]
    if spec.data.is_url() or not computed:
        return
    after = fingerprint_source(spec.data_location(), spec.data.resolved_format())
    if after == source.ref.sha256:
        return
    for stage in computed:
        path = Path(stage.ref.path)
        for stale in (path, path.with_name(path.name + SIDECAR_SUFFIX)):
            unlink_quietly(stale)
    raise DataError(
        f"Data source {spec.data_location()!r} changed while the pipeline read its parts (sha256 "
        f"{source.ref.sha256[:12]}… when the run started, {after[:12]}… at its end); the "
        f"{counted(len(computed), 'stage')} it computed were removed and no model was "
        "registered. Run again once the parts are written."
    )


def _part_run_name(prefix: str):
    def name() -> str:
        from prefect.runtime import task_run

        part = task_run.parameters["part"]
        return f"{prefix}-part{part.index + 1}"

    return name


def _profile_params(spec: PipelineSpec, plan: SourcePlan, part: Part) -> dict:
    # "ranges": profiles stored before they kept the training ranges are not reused
    params = {**streamed.part_params(spec, plan, part), "rules": stages.validate_params(spec)}
    return {**params, "ranges": True}


@task(
    name="profile",
    task_run_name=_part_run_name("profile"),
    cache_policy=NO_CACHE,
    **read_policy(),
)
def profile(spec, store_root: str, source: Stage, plan: SourcePlan, part: Part, force=False):
    """Pass 1 on one part: validation statistics and class counts per value."""
    params = _profile_params(spec, plan, part)
    compute = lambda: streamed.in_part(part, streamed.profile, spec, plan, part)  # noqa: E731
    return run_stage(spec, store_root, "profile", params, [source], compute, force)


def _found(force: bool, lookups) -> list:
    return [None] * len(lookups) if force else [lookup() for lookup in lookups]


def profile_all(spec, store_root: str, source: Stage, plan: SourcePlan, force=False):
    """``profile`` mapped over the parts not in the store yet."""
    lookups = [
        lambda p=p: lookup_stage(store_root, "profile", _profile_params(spec, plan, p), [source])
        for p in plan.parts
    ]
    fixed = {"spec": spec, "store_root": store_root, "source": source, "plan": plan}
    fixed["force"] = force
    progress = ("profile-progress", "parts profiled (pass 1 of 3)")
    return map_missing(
        profile, spec, _found(force, lookups), "part", list(plan.parts), fixed, progress
    )


def merged_profile(store_root: str, plan: SourcePlan, profiles: list[Stage]) -> streamed.Profile:
    """The parts' profiles merged (once per process and set of profiles)."""
    return _merged_profile(store_root, plan, tuple(profiles))


@lru_cache(maxsize=2)
def _merged_profile(store_root: str, plan: SourcePlan, profiles: tuple[Stage, ...]):
    return streamed.merge_profiles(plan, stream_stages(store_root, list(profiles)))


@task(name="validate", cache_policy=NO_CACHE)
def validate(
    spec, store_root: str, plan: SourcePlan, profiles: list[Stage], force=False, record_run=True
) -> Stage:
    """The spec's expectations on the merged statistics of every row; a failure fails the run
    (see :func:`~libre_flows.tasks.data.finish_validation` for ``record_run``)."""
    rules = stages.validation_rules(spec)

    def compute():
        merged = merged_profile(store_root, plan, profiles)
        report = validate_statistics(merged.statistics, rules, merged.user_results)
        report = name_parts(report, merged.part_statistics, rules.target_column)
        return report.to_frame(), {"report": report.to_dict()}

    params = {**stages.validate_params(spec), "streamed": True}
    stage = run_stage(spec, store_root, "validate", params, profiles, compute, force)
    return finish_validation(spec, store_root, stage, record_run)


def _sample_params(spec, plan, part, rate) -> dict:
    # "numbers": samples stored before numbers written as text were read as numbers are not
    # reused (a part storing them so could not be merged with the others)
    return {**streamed.part_params(spec, plan, part), "rate": rate, "numbers": True}


@task(
    name="sample",
    task_run_name=_part_run_name("sample"),
    cache_policy=NO_CACHE,
    **read_policy(),
)
def sample(
    spec, store_root, source: Stage, plan, part: Part, rate: float, profiles, edges, force=False
):
    """Pass 2 on one part: its sampled rows, and the class counts on the fine bins (whose edges
    come from the ``profiles``)."""
    memo: dict = {}

    def both():
        if not memo:
            memo["result"] = streamed.in_part(part, streamed.sample, spec, plan, part, rate, edges)
        return memo["result"]

    params = streamed.part_params(spec, plan, part)
    rows_params = _sample_params(spec, plan, part, rate)
    rows = run_stage(
        spec, store_root, "sample_part", rows_params, [source], lambda: both()[0], force
    )
    fine = run_stage(
        spec, store_root, "fine_counts", params, [source, *profiles], lambda: both()[1], force
    )
    return rows, fine


def sample_all(spec, store_root, source: Stage, plan: SourcePlan, profiles, force=False):
    """``sample`` mapped over the parts not in the store yet: (rows, fine counts) per part."""
    merged = merged_profile(store_root, plan, profiles)
    rate = streamed.sample_rate(spec, merged.n_rows)

    def lookup(part):
        params = streamed.part_params(spec, plan, part)
        rows = lookup_stage(
            store_root, "sample_part", _sample_params(spec, plan, part, rate), [source]
        )
        fine = lookup_stage(store_root, "fine_counts", params, [source, *profiles])
        return (rows, fine) if rows is not None and fine is not None else None

    lookups = [lambda p=p: lookup(p) for p in plan.parts]
    fixed = {"spec": spec, "store_root": store_root, "source": source, "plan": plan}
    fixed.update(rate=rate, profiles=profiles, edges=merged.edges, force=force)
    progress = ("sample-progress", "parts sampled and counted (pass 2)")
    return map_missing(
        sample, spec, _found(force, lookups), "part", list(plan.parts), fixed, progress
    )


@task(
    name="resolve",
    task_run_name=_part_run_name("resolve"),
    cache_policy=NO_CACHE,
    **read_policy(),
)
def resolve(spec, store_root, source: Stage, plan, part: Part, inputs, edges, bins, force=False):
    """Pass 2b on one part: the values in the fine bins the pre-binning's quantiles fall in."""
    params = {**streamed.part_params(spec, plan, part), "bins": bins}
    compute = lambda: streamed.in_part(part, streamed.resolve, spec, plan, part, edges, bins)  # noqa: E731
    return run_stage(spec, store_root, "resolve", params, [source, *inputs], compute, force)


def resolve_all(spec, store_root, source: Stage, plan: SourcePlan, profiles, parts, force=False):
    """Resolve the fine bins exact pre-binning needs, in rounds (one is the rule) mapped over
    the parts; returns the ``resolve`` stages (none when every column was counted exactly)."""
    merged = merged_profile(store_root, plan, profiles)
    fine_stages = [f for _, f in parts]

    def fine():
        return (table for table, _ in stream_stages(store_root, fine_stages))

    inputs = [*profiles, *fine_stages]
    resolved: list[Stage] = []

    def resolve_round(wanted: dict):
        params = [{**streamed.part_params(spec, plan, p), "bins": wanted} for p in plan.parts]
        lookups = [
            lambda q=q: lookup_stage(store_root, "resolve", q, [source, *inputs]) for q in params
        ]
        fixed = {"spec": spec, "store_root": store_root, "source": source, "plan": plan}
        fixed.update(inputs=inputs, edges=merged.edges, bins=wanted, force=force)
        progress = ("resolve-progress", "parts resolved (pass 2b: exact pre-bins)")
        found = _found(force, lookups)
        resolved.extend(
            map_missing(resolve, spec, found, "part", list(plan.parts), fixed, progress)
        )
        return (table for table, _ in stream_stages(store_root, resolved))

    streamed.resolved_counts(plan, merged, fine, resolve_round)
    return resolved


def merge_sample(
    spec, store_root: str, plan: SourcePlan, profile: streamed.Profile, parts, force=False
):
    """The sampled rows of every part (the ``sample`` stage, as ``load`` in memory) and their
    holdout flags (``split``)."""
    inputs = [rows for rows, _ in parts]
    memo: dict = {}

    def merged():
        if not memo:
            frames = [read_stage(store_root, s)[0].to_pandas() for s in inputs]
            memo["result"] = streamed.merge_samples(plan, frames)
        return memo["result"]

    if profile.n_train and not profile.train_classes[1]:  # as the in-memory split says it
        table = merged()[0][0]
        raise stages.absent_positive_class(spec, table[plan.target])
    totals = {"n_rows": profile.n_rows, "n_train": profile.n_train}
    totals["n_holdout"] = profile.n_rows - profile.n_train
    if profile.n_unlabeled:  # target.unlabeled: drop; absent otherwise (earlier cache keys)
        totals["n_unlabeled"] = profile.n_unlabeled
    totals["training"] = profile.training_statistics()  # the data contract's, on every row

    def rows():
        table, metadata = merged()[0]
        return table, {**metadata, "streamed": totals}

    data = run_stage(spec, store_root, "sample", {"totals": totals}, inputs, rows, force)
    split = run_stage(spec, store_root, "split", {}, [data], lambda: merged()[1], force)
    log().info(
        "sample: %d of %d rows (%d training rows in all, %d holdout)",
        read_stage(store_root, data)[1].get("n_rows", -1),
        profile.n_rows,
        profile.n_train,
        profile.n_rows - profile.n_train,
    )
    return data, split


@task(name="discretize", cache_policy=NO_CACHE)
def discretize(
    spec, store_root, plan: SourcePlan, profiles, parts, resolved, choice: Stage, force=False
):
    """ChiMerge cut points / category bins from the merged class counts of every training row."""
    chosen = load_choice(store_root, choice)
    fine = [f for _, f in parts]

    def compute():
        merged = merged_profile(store_root, plan, profiles)
        tables = (table for table, _ in stream_stages(store_root, fine))
        values = (table for table, _ in stream_stages(store_root, resolved))
        columns = streamed.column_counts(plan, merged, tables, values)
        return discretization_table(streamed.discretize(spec, columns, chosen.max_intervals))

    params = {**stages.discretize_params(spec, chosen), "streamed": True}
    inputs = [*profiles, *fine, *resolved]
    return run_stage(spec, store_root, "discretize", params, inputs, compute, force)


@task(
    name="encode_part",
    task_run_name=_part_run_name("encode"),
    cache_policy=NO_CACHE,
    **read_policy(),
)
def encode_part(spec, store_root, source: Stage, plan, bins: Stage, part: Part, force=False):
    """Pass 3 on one part: its training rows' distinct records."""

    def compute():
        discretization = load_discretization(store_root, bins)
        return streamed.in_part(part, streamed.encode_part, spec, plan, part, discretization)

    params = streamed.part_params(spec, plan, part)
    return run_stage(spec, store_root, "encode_part", params, [source, bins], compute, force)


def encode(spec, store_root, source: Stage, plan: SourcePlan, bins: Stage, force=False):
    """``encode`` mapped over the parts, then merged into the distinct records of every
    training row (the ``encode`` stage, as in memory): (that stage, the parts' stages)."""
    lookups = [
        lambda p=p: lookup_stage(
            store_root, "encode_part", streamed.part_params(spec, plan, p), [source, bins]
        )
        for p in plan.parts
    ]
    fixed = {"spec": spec, "store_root": store_root, "source": source, "plan": plan}
    fixed.update(bins=bins, force=force)
    progress = ("encode-progress", "parts encoded (pass 3 of 3)")
    found = _found(force, lookups)
    parts = map_missing(encode_part, spec, found, "part", list(plan.parts), fixed, progress)

    def compute():
        discretization = load_discretization(store_root, bins)
        tables = (table for table, _ in stream_stages(store_root, parts))
        return records_table(streamed.records_from_tables(tables, discretization), discretization)

    merged = run_stage(spec, store_root, "encode", {"streamed": True}, parts, compute, force)
    return merged, parts
