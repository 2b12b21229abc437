"""Shared plumbing of the pipeline tasks: logging, cached stages, reading stage outputs."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from functools import lru_cache

import pandas as pd
from prefect.exceptions import MissingContextError
from prefect.logging import get_run_logger

from libre_lib import __version__
from libre_lib.ops.artifacts import ArtifactRef, ArtifactStore, fingerprint_json, stage_key
from libre_lib.ops.spec import PipelineSpec

STAGE_VERSION = f"{__version__}+1"


def log() -> logging.Logger | logging.LoggerAdapter:
    """The Prefect run logger inside a run, a plain logger elsewhere (e.g. under ``.fn``)."""
    try:
        return get_run_logger()
    except MissingContextError:
        return logging.getLogger("libre.pipeline")


@dataclass(frozen=True)
class Stage:
    """What a task hands to the next: where its artifact is, and whether it was cached."""

    name: str
    ref: ArtifactRef
    hit: bool

    @property
    def key(self) -> str:
        return self.ref.key


def spec_hash(spec: PipelineSpec) -> str:
    return fingerprint_json(spec.model_dump(mode="json"))


def run_stage(
    spec: PipelineSpec,
    store_root: str,
    stage: str,
    params: dict,
    inputs: list[Stage],
    compute,
    force: bool,
):
    """Look the stage up in the store; compute and write it on a miss. The writing spec's hash
    goes into the file's metadata (provenance), not into the key."""

    def compute_with_provenance():
        table, metadata = compute()
        return table, {**metadata, "spec_hash": spec_hash(spec), "pipeline": spec.name}

    store = ArtifactStore(store_root)
    ref, hit = store.get_or_compute(
        stage,
        params,
        [s.key for s in inputs],
        compute_with_provenance,
        version=STAGE_VERSION,
        force=force,
    )
    log().info("stage %-10s %s  %s", stage, "cache hit" if hit else "computed ", ref.path)
    return Stage(stage, ref, hit)


def lookup_stage(store_root: str, stage: str, params: dict, inputs: list[Stage]) -> Stage | None:
    """The stage's artifact if it is already in the store (and verifies), else None."""
    key = stage_key(stage, params, [s.key for s in inputs], STAGE_VERSION)
    ref = ArtifactStore(store_root).lookup(stage, key)
    return None if ref is None else Stage(stage, ref, True)


@lru_cache(maxsize=32)
def _read(root: str, ref: ArtifactRef):
    store = ArtifactStore(root)
    return store.read(ref), store.metadata(ref)


def read_stage(store_root: str, stage: Stage):
    """(Arrow table, metadata dict) of a stage's artifact; cached per process."""
    return _read(store_root, stage.ref)


def read_frame(store_root: str, stage: Stage) -> pd.DataFrame:
    table, _ = read_stage(store_root, stage)
    return table.to_pandas()


def target_label(spec: PipelineSpec, value) -> str:
    """Targets are read as text, so labels from the spec are compared as text."""
    return str(value)


def feature_columns(frame: pd.DataFrame, spec: PipelineSpec) -> list[str]:
    return [c for c in frame.columns if c != spec.target.column]
