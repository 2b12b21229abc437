"""Tuning tasks: ``LibreSearchCV`` inside the pipeline. ``tune`` is mapped over the inner folds
and ChiMerge caps (each scores its candidates and writes the scores as Parquet);
``pick`` applies the choice rule. A re-run recomputes nothing; changing only the choice rule
(``score_tolerance``, ``standard_errors``) recomputes only ``pick``. ``refit_check`` is the
search's refit check on the flow's fit, ``auto_refit_check`` the "auto" choice's (without
tuning), ``more_learners_check`` the check of either against its inner score."""

from __future__ import annotations

from prefect import task
from prefect.cache_policies import NO_CACHE

from libre_lib.estimator import BELOW_INNER, falls_short, growing_factors, reaches
from libre_lib.ops import stages
from libre_lib.ops.spec import PipelineSpec

from . import learning
from .common import Stage, log, lookup_stage, map_missing, read_stage, run_stage
from .data import split_rows, training_rows
from .learning import load_model


def tune_run_name() -> str:
    """A mapped tune task's run name says what it scores: ``tune-fold2-bins=all`` (inner fold
    2, candidates on uncapped ChiMerge bins) or ``tune-fold2-bins=3``."""
    from prefect.runtime import task_run

    unit = task_run.parameters["unit"]
    cap = "all" if unit["max_intervals"] is None else unit["max_intervals"]
    return f"tune-fold{unit['fold'] + 1}-bins={cap}"


@task(name="tune", task_run_name=tune_run_name, cache_policy=NO_CACHE)
def tune(spec, store_root: str, data: Stage, split: Stage, unit: dict, force=False) -> Stage:
    """One inner fold's scores of the candidates with one ChiMerge cap."""

    def compute():
        return stages.tune(spec, *split_rows(spec, store_root, data, split), unit)

    params = stages.tune_params(spec, unit, training_rows(store_root, split))
    return run_stage(spec, store_root, "tune", params, [data, split], compute, force)


def tune_all(spec: PipelineSpec, store_root: str, data: Stage, split: Stage, force=False):
    """``tune`` mapped over the units not in the store yet; a progress artifact follows them."""
    units = stages.tuning_units(spec, *split_rows(spec, store_root, data, split))
    n_rows = training_rows(store_root, split)
    found = [
        None
        if force
        else lookup_stage(store_root, "tune", stages.tune_params(spec, u, n_rows), [data, split])
        for u in units
    ]
    fixed = {"spec": spec, "store_root": store_root, "data": data, "split": split, "force": force}
    progress = ("tuning-progress", "tuning tasks finished (inner folds x ChiMerge caps)")
    return map_missing(tune, spec, found, "unit", units, fixed, progress)


@task(name="pick", cache_policy=NO_CACHE)
def pick(spec, store_root: str, data: Stage, split: Stage, scores: list[Stage], force=False):
    """The choice rule on the tune tasks' scores: the tuned parameters."""

    def compute():
        tables = [read_stage(store_root, stage)[0] for stage in scores]
        return stages.pick(spec, *split_rows(spec, store_root, data, split), tables)

    params = stages.pick_params(spec, training_rows(store_root, split))
    return run_stage(spec, store_root, "pick", params, [data, split, *scores], compute, force)


def overridden_notes(spec: PipelineSpec, shipped) -> tuple[str, ...]:
    """The report's notes on the spec's model values the search replaced: ``spec`` before
    tuning, ``shipped`` the point shipped (:func:`shipped_choice`)."""
    return stages.overridden_notes(spec, shipped[1])


def tuned_spec(spec: PipelineSpec, store_root: str, picked: Stage) -> PipelineSpec:
    """The spec with the picked parameters in its model section."""
    return stages.tuned_spec(spec, read_stage(store_root, picked)[1])


def shipped_choice(spec: PipelineSpec, store_root: str, picked: Stage, fallbacks: int):
    """``pick``'s table and metadata as the refit check shipped them (``fallbacks`` points
    passed over)."""
    return stages.shipped_choice(read_stage(store_root, picked), fallbacks)


def refit_check(spec: PipelineSpec, store_root: str, picked: Stage, fitted: dict, fit) -> tuple:
    """``LibreSearchCV.checked_refit`` on the flow's fit of the picked point: when its rule set
    (``fitted["rules"]``, the ``set_cover`` stage) is empty and ``pick`` listed fallbacks
    (``refit_order``: the point kept a rule in most inner folds), ``fit(spec)`` runs the stages
    from ``choose`` to ``set_cover`` for each fallback in turn until one keeps a rule; if none
    does, the picked point's model stays. ``spec`` is the spec before tuning.

    Returns (the spec of the point shipped, its stages, the points passed over, the stages of
    the fits not shipped)."""
    metadata = read_stage(store_root, picked)[1]
    order, tuned = metadata.get("refit_order", []), stages.tuned_spec(spec, metadata)
    if not order or len(load_model(store_root, fitted["rules"]).rules_):
        return tuned, fitted, 0, []
    passed = []
    for fallbacks, point in enumerate(order, start=1):
        candidate = stages.tuned_spec(spec, point)
        tried = fit(candidate)
        if len(load_model(store_root, tried["rules"]).rules_):
            log().info(
                "the picked point's refit kept no rule, although it kept rules in most inner "
                "folds; point %d of the grid (mean score %.3f; fallback %d) ships instead",
                point["index"],
                point["best_score"],
                fallbacks,
            )
            return candidate, tried, fallbacks, [*_stages(fitted), *passed]
        passed += _stages(tried)
    return tuned, fitted, 0, passed


def auto_refit_check(spec: PipelineSpec, store_root: str, fitted: dict, fit) -> tuple:
    """``LibreClassifier.fit``'s "auto" refit check on the flow's fit of ``choose``'s choice:
    when its rule set (``fitted["rules"]``) is empty and the choice kept rules in most inner
    folds, ``fit(spec, choice)`` runs the stages from ``discretize`` to ``set_cover`` for each
    fallback combination in turn (``choose_fallback``) until one keeps a rule; if none does,
    the choice's model stays. Returns (the stages shipped, the stages of the fits not
    shipped)."""
    if len(load_model(store_root, fitted["rules"]).rules_):
        return fitted, []
    chosen = fitted["choice"]
    passed = []
    for fallbacks in range(1, stages.refit_fallbacks(read_stage(store_root, chosen)[1]) + 1):
        tried = fit(spec, learning.choose_fallback(spec, store_root, chosen, fallbacks))
        if len(load_model(store_root, tried["rules"]).rules_):
            log().info(
                'the "auto" choice\'s fit kept no rule, although it kept rules in most inner '
                "folds; the combination %d after it in the choice's order ships instead",
                fallbacks,
            )
            return tried, [*_stages(fitted), *passed]
        passed += _stages(tried)
    return fitted, passed


def more_learners_check(
    spec: PipelineSpec, store_root: str, fitted: dict, fit, picked: stages.Stored | None
) -> tuple:
    """The estimators' check of a fit against the inner score that chose its settings (the
    thirty-fifth round; ``LibreSearchCV.more_learners_check`` after ``refit_check``,
    ``LibreClassifier.fit``'s after ``auto_refit_check``): when the shipped fit's training F1
    is more than ``BELOW_INNER`` below that score (``picked``: the ``pick`` stage's table and
    metadata as shipped, when the pipeline tuned; else the ``choose`` stage's "auto" choice),
    ``fit(spec, choice, factor)`` runs the stages from ``discretize`` to ``set_cover`` with
    each multiple of ``n_estimators`` in ``LEARNER_FACTORS`` in turn (``growing_factors``),
    until one is within it.
    ``spec`` is the spec of the point shipped. Returns (the stages shipped, the stages of the
    fits not shipped)."""
    model = load_model(store_root, fitted["rules"])
    if picked is not None:
        inner = picked[1]["best_score"] if spec.tuning.scoring == "f1" else None
    else:
        model.auto_scores_ = learning.load_choice(store_root, fitted["choice"]).scores
        inner = model.auto_inner_score()
    n_positive = float(learning.load_records(store_root, fitted["records"]).positive_weight.sum())
    if inner is None or not falls_short(model.rules_, n_positive, inner):
        return fitted, []
    attempts = [fitted]
    for factor in growing_factors(model):
        tried = fit(spec, fitted["choice"], factor)
        attempts.append(tried)
        if reaches(load_model(store_root, tried["rules"]).rules_, n_positive, inner):
            log().info(
                "the fit scored a training F1 far below the inner score %.3f that chose its "
                "settings; refitted with %d x n_estimators learners, which is within %.1f of it",
                inner,
                factor,
                BELOW_INNER,
            )
            return tried, _passed_stages(attempts[:-1], tried)
    return fitted, _passed_stages(attempts[1:], fitted)


def _passed_stages(attempts: list[dict], shipped: dict) -> list[Stage]:
    """The stages of the fits not shipped, each once and none of the shipped fit's (fits with
    more learners share the choice, the bins, the records and their first learners)."""
    seen = {s.key for s in _stages(shipped)}
    passed = []
    for stage in (s for attempt in attempts for s in _stages(attempt)):
        if stage.key not in seen:
            seen.add(stage.key)
            passed.append(stage)
    return passed


def _stages(fitted: dict) -> list[Stage]:
    return [s for value in fitted.values() for s in (value if isinstance(value, list) else [value])]
