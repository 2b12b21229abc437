"""Shared plumbing of the pipeline tasks: logging, cached stages, reading stage outputs, the
store and run folder of a flow run."""

from __future__ import annotations

import logging
import time
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import lru_cache
from pathlib import Path

import pandas as pd
from prefect.context import get_run_context
from prefect.exceptions import MissingContextError
from prefect.logging import get_run_logger

from libre_lib import __version__
from libre_lib.ops.artifacts import ArtifactRef, ArtifactStore, stage_key
from libre_lib.ops.cleanup import RUNS_DIR
from libre_lib.ops.spec import PipelineSpec
from libre_lib.ops.stages import spec_hash
from libre_lib.progress import Heartbeat

#: Part of every stage's cache key: raise the number whenever a stage computes something else
#: from the same inputs and parameters, so that a store made by an earlier release recomputes
#: that stage instead of reusing it. +2: ``load`` reads Parquet integers beside blanks as
#: "58" (not "58.0") and refuses feature names that scoring writes, which stores of +1 had
#: cached the old way (an upgraded store trained other rules than a fresh one).
STAGE_VERSION = f"{__version__}+2"
#: Seconds between two updates of a mapped stage's progress artifact (the last is always sent).
PROGRESS_EVERY_S = 1.0


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


def source_stage(fingerprint: str) -> Stage:
    """The data file as the root of the chain of stages (its sha256 is its key)."""
    ref = ArtifactRef(stage="source", key=fingerprint, path="", sha256=fingerprint, n_rows=-1)
    return Stage("source", ref, True)


def run_stage(
    spec: PipelineSpec,
    store_root: str,
    stage: str,
    params: dict,
    inputs: list[Stage],
    compute,
    force: bool,
) -> Stage:
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
    log().info("stage %-12s %s  %s", stage, "cache hit" if hit else "computed ", ref.path)
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


def stream_stages(store_root: str, stages: list[Stage]):
    """(Arrow table, metadata) of each stage in turn, read when needed and not cached: for
    merging many parts' artifacts without holding them all."""
    store = ArtifactStore(store_root)
    for stage in stages:
        yield store.read(stage.ref), store.metadata(stage.ref)


def read_frame(store_root: str, stage: Stage) -> pd.DataFrame:
    table, _ = read_stage(store_root, stage)
    return table.to_pandas()


def artifact_key(spec: PipelineSpec, what: str) -> str:
    """Prefect artifact keys: lowercase letters, digits and dashes."""
    return f"libre-{spec.name}-{what}"


def store_root(spec: PipelineSpec, store: str | None = None) -> str:
    """The artifact store's absolute root: ``store`` if given (relative to the working
    directory, as a command-line path), else the spec's (relative to the spec file)."""
    return str(Path(store).resolve()) if store else spec.store_location()


def run_folder(store_root: str, spec: PipelineSpec, run_id: str | None = None) -> Path:
    """``<store>/runs/<pipeline>/<timestamp>-<run tail>``: where a run's files go. The tail is
    the last 12 hex digits of the flow run's id (``run_id``, default: the current flow run's):
    server-made ids are UUIDv7, whose leading digits are a timestamp shared by runs started
    together, so only the random tail tells them apart."""
    if run_id is None:
        try:
            run_id = str(get_run_context().flow_run.id)
        except Exception:  # pragma: no cover - outside a flow run
            run_id = uuid.uuid4().hex
    stamp = datetime.now(UTC).strftime("%Y%m%d-%H%M%S")
    return Path(store_root) / RUNS_DIR / spec.name / f"{stamp}-{run_tail(run_id)}"


def run_tail(run_id: str) -> str:
    """The random tail of a flow run id (its last 12 hex digits)."""
    return str(run_id).replace("-", "")[-12:]


def data_fingerprint(store_root: str, data: Stage) -> str:
    """The sha256 of the data source (``fingerprint_source``) that ``data`` (the ``load``
    stage, or a streamed run's ``source``) was read from: the same whatever spec or run wrote
    the stage's file (whose own bytes hold the writing spec's hash)."""
    if data.name == "source":
        return data.key
    return ArtifactStore(store_root).metadata(data.ref).get("source_sha256", data.key)


def data_aliases(store_root: str, data: Stage) -> tuple[str, ...]:
    """Other fingerprints of the data ``data`` was read from, which the registry matches too:
    the ``load`` file's sha256 (what earlier releases recorded) and its content's
    (``fingerprint_frame``: the same rows in other bytes, e.g. rewritten with CRLF line
    endings, are the same data; a streamed run's ``source`` has no content hash)."""
    if data.name == "source":
        return (data.ref.sha256,)
    content = ArtifactStore(store_root).metadata(data.ref).get("content_sha256")
    return tuple(filter(None, (data.ref.sha256, content)))


def name_flow_run(spec: PipelineSpec, store_root: str, data: Stage) -> str | None:
    """Name this flow run (and the ``libre-train`` run around it) ``<pipeline>-<data
    fingerprint>``: the first 12 hex digits of the source's sha256, known once ``load`` ran.
    Returns the name, or None outside a flow run."""
    return rename_flow_runs(f"{spec.name}-{data_fingerprint(store_root, data)[:12]}")


def rename_flow_runs(name: str) -> str | None:
    """Name this flow run, and the one around it (if any), ``name``; returns it, or None
    outside a flow run."""
    from prefect.client.orchestration import get_client
    from prefect.runtime import flow_run

    if flow_run.id is None:
        return None
    with get_client(sync_client=True) as client:
        for run_id in filter(None, (flow_run.id, flow_run.parent_flow_run_id)):
            client.update_flow_run(uuid.UUID(str(run_id)), name=name)
    return name


def map_missing(
    task, spec: PipelineSpec, found: list, mapped: str, items: list, fixed: dict, progress: tuple
) -> list[Stage]:
    """Submit ``task`` mapped over the ``items`` whose stage is not ``found`` in the store yet
    (``mapped`` names the task's parameter taking an item, ``fixed`` the others), with a
    progress artifact (``progress``: its key suffix and description) following them; returns
    every item's stage, in order."""
    from prefect import unmapped
    from prefect.artifacts import create_progress_artifact, update_progress_artifact

    todo = [i for i, stage in enumerate(found) if stage is None]
    done = len(items) - len(todo)
    # always said: the live status line counts the tasks "of" this total
    log().info(
        "stage %-12s cache hit  %d of %d tasks, %d to compute",
        task.name, done, len(items), len(todo),
    )  # fmt: skip
    key, description = progress
    artifact = create_progress_artifact(
        100.0 * done / max(len(items), 1), key=artifact_key(spec, key), description=description
    )
    arguments = {name: unmapped(value) for name, value in fixed.items()}
    futures = task.map(**arguments, **{mapped: [items[i] for i in todo]})
    found = list(found)
    updated = time.monotonic()
    hint = " (on Dask, a scheduler without workers runs none)" if spec.runner.kind == "dask" else ""
    waiting = Heartbeat(  # results are read in order: the next one is the one awaited
        log(),
        lambda seconds: (
            f"waiting: {done} of {len(items)} {task.name} tasks finished, the next one not "
            f"in the last {seconds:.0f} s{hint}"
        ),
    )
    with waiting:
        for i, future in zip(todo, futures, strict=True):
            found[i] = future.result()
            done += 1
            waiting.said()
            # one request per PROGRESS_EVERY_S, and the last: 50 small learners made 50 requests
            if done == len(items) or time.monotonic() - updated >= PROGRESS_EVERY_S:
                update_progress_artifact(artifact, 100.0 * done / max(len(items), 1))
                # the flow's count too: tasks on Dask workers log in their own processes
                log().info("stage %-12s finished %d of %d tasks", task.name, done, len(items))
                updated = time.monotonic()
    return found
