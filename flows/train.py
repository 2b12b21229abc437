"""The declarative training pipeline as a Prefect flow (wiring only; the tasks are in
``libre_flows.tasks``, the stages they run in ``libre_lib.ops.stages``).

load → validate → split → [tune (mapped, one per inner fold and ChiMerge cap) → pick]
→ choose → discretize → encode → learn (mapped, one per feature subset) → union_filter →
set_cover → report → register → publish → promote, every stage up to the report cached as a
Parquet artifact (see ``libre_lib.ops.artifacts``). With ``tuning.enabled`` (the default)
``tune`` and ``pick`` run the spec's ``LibreSearchCV`` and the stages after them fit the picked
parameters, so the model equals the search's refit on the same rows. ``register`` adds the
model as a candidate version; ``promote``, the last step, moves the champion once the run
folder, its artifacts and ``run.json`` are written, so a failed run leaves the champion where
it was.
Before ``load``, ``clean_store`` removes what crashed runs left in the store once it is stale
(``libre_lib.ops.cleanup``).

``train_flow`` (the deployments' entrypoint) reads the spec and runs ``train_pipeline``, the
stages, as a subflow on the task runner the spec asks for (threads, or Dask), so a deployment
run honours ``runner:`` as :func:`train` does. :func:`train` runs ``train_pipeline`` itself
under the name ``libre-train`` (one flow run instead of two) unless the spec asks for Dask.
From Python::

    from libre_flows.flows.train import train
    summary = train("deployments/specs/pima.yaml")
"""

from __future__ import annotations

import contextlib
import logging
import os
import socket
import time
from pathlib import Path

from prefect import flow
from prefect.task_runners import ThreadPoolTaskRunner

from libre_flows.flows import heartbeats
from libre_flows.flows.embedded_server import guard_embedded_server, run_flow
from libre_flows.tasks import streamed
from libre_flows.tasks.common import (
    Stage,
    data_fingerprint,
    name_flow_run,
    run_folder,
    store_root,
)
from libre_flows.tasks.data import load, record_failed_read, split, validate
from libre_flows.tasks.housekeeping import clean_store
from libre_flows.tasks.learning import (
    choose,
    discretize,
    encode,
    feature_subsets,
    learn_all,
    set_cover,
    union_filter,
)
from libre_flows.tasks.report import (
    outcome,
    promote,
    publish,
    register,
    report,
    republish,
    summarize,
)
from libre_flows.tasks.tuning import (
    auto_refit_check,
    more_learners_check,
    overridden_notes,
    pick,
    refit_check,
    shipped_choice,
    tune_all,
    tuned_spec,
)
from libre_lib.errors import ArtifactError, DataError, LibreError, SpecError
from libre_lib.ops.sources import skipped_entry
from libre_lib.ops.spec import PipelineSpec, load_spec

heartbeats.install()  # the run's end does not wait for its heartbeat thread


def _run_name() -> str:
    """A training run's name from its start: the pipeline's (:func:`_pipeline_name`), so the
    console's log lines and the server's run list say the same; ``name_flow_run`` adds the
    data's fingerprint once ``load`` read it. The runs' log lines used to carry Prefect's
    random name ("illegal-pony") for the whole run, a name the run list no longer showed."""
    from prefect.runtime import flow_run

    given = flow_run.parameters or {}
    try:
        return _pipeline_name(given.get("spec_path", "libre-train"), given.get("expected_sha256"))
    except Exception:  # a name never fails a run
        return "libre-train"


@flow(name="libre-train", flow_run_name=_run_name)
def train_flow(
    spec_path: str,
    force: bool = False,
    store: str | None = None,
    expected_sha256: str | None = None,
):
    """Train the rule set a spec file declares, on the spec's task runner; returns a summary
    (run folder, metrics, hits). A deployment's run that meets bad data or a bad spec (data
    validation failed, a column missing) ends Failed with the one-line reason, without the
    traceback an unexpected error earns in ``libre serve``'s output. ``expected_sha256``: the
    data's sha256 as the "dataset updated" event that started the run announced it (the
    event-triggered deployment passes it); a run that reads other bytes says so."""
    if served():  # an expected failure (bad data, a bad spec) is logged without a traceback
        for name in EXPECTED_FAILURE_LOGGERS:
            if EXPECTED_FAILURE not in logging.getLogger(name).filters:
                logging.getLogger(name).addFilter(EXPECTED_FAILURE)
    try:
        spec = preflight(spec_path, store)
        if spec.runner.kind == "dask":
            _share_api_with_workers()
        pipeline = train_pipeline.with_options(task_runner=task_runner(spec))
        return pipeline(spec_path, force=force, store=store, expected_sha256=expected_sha256)
    except LibreError as exc:
        if not served():
            raise
        from prefect import get_run_logger
        from prefect.states import Failed

        message = " ".join(str(exc).split()) or type(exc).__name__
        get_run_logger().error("%s: %s", type(exc).__name__, message)
        return Failed(message=f"{type(exc).__name__}: {message}")


def _pipeline_name(spec_path, expected_sha256: str | None = None) -> str:
    """A run's name before its data is read: the pipeline's (the spec file's stem when the
    spec does not load), with the data's fingerprint an event announced. A run that failed
    before reading its data kept Prefect's random name, which did not say whose it was."""
    try:
        name = load_spec(spec_path).name
    except (LibreError, OSError, ValueError):
        name = Path(str(spec_path)).stem
    return f"{name}-{expected_sha256[:12]}" if expected_sha256 else name


class ExpectedFailureFilter(logging.Filter):
    """Drop the traceback from Prefect's log records of a task or flow run that failed with a
    :class:`~libre_lib.errors.LibreError` (data validation failed, a column gone): the record
    keeps its one-line reason. In ``libre serve``'s output and the worker's, each such run
    printed about 100 lines of traceback for an outcome production expects."""

    def filter(self, record: logging.LogRecord) -> bool:
        from prefect.exceptions import FailedRun

        exc = record.exc_info[1] if record.exc_info else None
        if isinstance(exc, LibreError):
            record.exc_info, record.exc_text = None, None
        elif isinstance(exc, FailedRun):  # a served run's engine re-raising the Failed state
            # the flow returned: its reason, not a traceback of the engine (38 lines)
            record.msg, record.args = f"{record.getMessage()}: {exc}", None
            record.exc_info, record.exc_text = None, None
        return True


EXPECTED_FAILURE = ExpectedFailureFilter()
EXPECTED_FAILURE_LOGGERS = ("prefect.task_runs", "prefect.flow_runs", "prefect.flow_engine")


def served() -> bool:
    """Whether this flow run belongs to a deployment (``libre serve``, a worker)."""
    from prefect.runtime import deployment

    return deployment.id is not None


@flow(name="libre-train-pipeline", flow_run_name=_run_name)
def train_pipeline(
    spec_path: str, force: bool = False, store: str | None = None, expected_sha256=None
) -> dict:
    """The pipeline's stages in order (the task runner is set by ``train_flow``)."""
    started = time.perf_counter()
    spec = load_spec(spec_path)
    root = store_root(spec, store)
    clean_store(root)  # what crashed runs left, once no live run can own it
    streaming = spec.is_streamed()
    if streaming:
        with failed_read_recorded(spec, root):
            plan, source = streamed.plan_source(spec)
            name_flow_run(spec, root, source)
            profiles = streamed.profile_all(spec, root, source, plan, force)
        validation = streamed.validate(spec, root, plan, profiles, force)
        parts = streamed.sample_all(spec, root, source, plan, profiles, force)
        merged = streamed.merged_profile(root, plan, profiles)
        data, holdout = streamed.merge_sample(spec, root, plan, merged, parts, force)
        resolved = streamed.resolve_all(spec, root, source, plan, profiles, parts, force)
        passes = [*profiles, *(stage for pair in parts for stage in pair), *resolved]
    else:
        with failed_read_recorded(spec, root):
            data = load(spec, root, force)
        name_flow_run(spec, root, data)
        source = data
        validation = validate(spec, root, data, force)
        holdout = split(spec, root, data, force)
    source_notes = streamed.source_notes(spec)  # a folder's files left out or read twice
    tuning, fallbacks, passed_over = [], 0, []
    if spec.tuning.enabled:
        tuning = tune_all(spec, root, data, holdout, force)
        tuning.append(pick(spec, root, data, holdout, tuning, force))

    def fit(spec: PipelineSpec, choice: Stage | None = None, learner_factor: int = 1) -> dict:
        """choose → set_cover for ``spec``'s model (from ``choice``, if given; with
        ``learner_factor`` times ``n_estimators`` learners): its stages by name (``rules`` is
        the ``set_cover`` stage) and the streamed passes it made."""
        if choice is None:
            choice = choose(spec, root, data, holdout, force)
        if streaming:
            bins = streamed.discretize(spec, root, plan, profiles, parts, resolved, choice, force)
            records, encoded = streamed.encode(spec, root, source, plan, bins, force)
        else:
            bins = discretize(spec, root, data, holdout, choice, force)
            records, encoded = encode(spec, root, data, holdout, bins, force), []
        subsets = feature_subsets(spec, root, bins, learner_factor)
        learners = learn_all(spec, root, records, bins, choice, subsets, force)
        candidates = union_filter(spec, root, learners, records, bins, force)
        rules = set_cover(
            spec, root, candidates, records, bins, data, holdout, choice, subsets, force,
            learner_factor,
        )  # fmt: skip
        fitted = dict(passes=encoded, choice=choice, bins=bins, records=records)
        return dict(fitted, learners=learners, candidates=candidates, rules=rules)

    untuned = spec
    if tuning:  # the search's refit check: a fallback when the picked point keeps no rule
        fitted = fit(tuned_spec(spec, root, tuning[-1]))
        spec, fitted, fallbacks, passed_over = refit_check(spec, root, tuning[-1], fitted, fit)
    else:  # the "auto" choice's refit check, as LibreClassifier.fit's
        fitted, passed_over = auto_refit_check(spec, root, fit(spec), fit)
    # then, as the estimators do, a fit far below its inner score is fitted with more learners
    shipped = shipped_choice(spec, root, tuning[-1], fallbacks) if tuning else None
    notes = overridden_notes(untuned, shipped) if shipped is not None else ()
    notes = (*announced_notes(expected_sha256, data_fingerprint(root, source)), *notes)
    notes = (*source_notes, *notes)
    fitted, more = more_learners_check(spec, root, fitted, fit, shipped)
    passed_over += more
    if not streaming:
        passes = []
    passes += fitted["passes"]
    rules = fitted["rules"]
    outputs = [*passes, data, validation, holdout, *tuning, *passed_over]
    outputs += [fitted[name] for name in ("choice", "bins", "records")]
    outputs += [*fitted["learners"], fitted["candidates"], rules]
    if streaming:  # parts rewritten while the passes read them: nothing is registered
        streamed.check_source(spec, source, outputs)
    run_dir = run_folder(root, spec)
    picked = tuning[-1] if tuning else None
    trained, table = report(
        spec, root, rules, data, holdout, validation, force, picked, fallbacks, fitted["choice"],
        notes, untuned.model.significant_cuts,
    )  # fmt: skip
    outputs.append(table)  # listed as every stage is: prune keeps what runs list
    registration = register(spec, root, trained, source, str(run_dir))  # the data read
    publish(spec, trained, registration, str(run_dir))
    summary = summarize(spec, run_dir, trained, registration, outputs, started)
    promoted = promote(spec, root, registration, str(run_dir))  # last: a failed run keeps
    # the champion, and its run.json says the promotion is pending
    if promoted.decision != registration.decision:  # another run promoted meanwhile
        republish(spec, trained, promoted, run_dir)
    return {**summary, **outcome(promoted)}


@contextlib.contextmanager
def failed_read_recorded(spec: PipelineSpec, root: str):
    """A data error while reading the data leaves a failed run's folder (as a failed
    validation does), then propagates."""
    try:
        yield
    except LibreError as exc:
        record_failed_read(spec, root, exc)
        raise


def announced_notes(expected: str | None, read: str) -> tuple[str, ...]:
    """A note when the data the run read are not those the event that started it announced
    (the file changed again before the run read it): the run trains on what it read, and the
    later change's own event starts another run. Logged as a warning too."""
    if not expected or not isinstance(expected, str) or expected.startswith("{{"):
        return ()  # not started by an event (an untemplated value: an event without sha256)
    if expected == read:
        return ()
    note = (
        f"The data file changed after the event that started this run announced it (sha256 "
        f"{expected[:12]}… announced, {read[:12]}… read): this run trained on the data as it "
        "read them, not on the announced ones."
    )
    from prefect import get_run_logger

    get_run_logger().warning(note)
    return (note,)


TRAINING_WRITES = "training writes its stages, model versions and runs there"


def preflight(
    spec_path: str | os.PathLike, store: str | None = None, writes: str = TRAINING_WRITES
) -> PipelineSpec:
    """Check the spec and that a local data file exists before Prefect starts (fast errors);
    ``writes``: what the command writes in the store, for the error of a store it cannot
    write."""
    spec = load_spec(spec_path)
    location = spec.data_location()
    root = Path(store_root(spec, store))
    if not spec.data.is_url() and not (Path(location).is_file() or Path(location).is_dir()):
        if Path(location).exists():
            raise DataError(
                f"Data path {location!r} is not a regular file (a pipe, a socket or a device; "
                f"data.path in {str(spec_path)!r}): point it at a CSV or Parquet file."
            )
        raise DataError(
            f"Data file {location!r} does not exist (data.path in {str(spec_path)!r}; relative "
            "paths are relative to the spec file)."
        )
    if not spec.data.is_url() and Path(location).is_dir():
        inside, folder = root.resolve(), Path(location).resolve()
        if inside.is_relative_to(folder) and not skipped_entry(inside.relative_to(folder).parts):
            raise SpecError(
                f"store {str(inside)!r} is inside the data folder {location!r} (data.path in "
                f"{str(spec_path)!r}): a streamed run would read the store's own files as "
                "data. Put the store elsewhere, or in a folder whose name starts with '.' or "
                "'_' (the reader skips those)."
            )
    _check_scheduler(spec)
    existing = next((p for p in (root, *root.parents) if p.exists()), None)
    if existing is not None and existing.is_dir() and not os.access(existing, os.W_OK | os.X_OK):
        raise ArtifactError(
            f"The store {str(root)!r} cannot be written ({existing} is read-only or not yours): "
            f"{writes}. Give a writable store (--store, or store: in the spec)."
        )
    return spec


def _check_scheduler(spec: PipelineSpec, timeout_s: float = 5.0) -> None:
    """A Dask scheduler given by a ``tcp://host:port`` (or ``host:port``) ``runner.address``
    answers: else the run would wait 30 s and fail with a bare "Timed out trying to
    connect"."""
    address = spec.runner.address if spec.runner.kind == "dask" else None
    if not address or ("://" in address and not address.startswith("tcp://")):
        return  # tls://, ucx://, ...: left to Dask
    host, _, port = address.removeprefix("tcp://").rpartition(":")
    if not host or not port.isdigit() or (":" in host and not host.startswith("[")):
        raise SpecError(
            f"runner.address {address!r} is not a scheduler address: write it as "
            "tcp://HOST:PORT (e.g. tcp://10.0.0.5:8786; an IPv6 host in brackets, "
            "tcp://[::1]:8786)."
        )
    try:
        with socket.create_connection((host.strip("[]"), int(port)), timeout=timeout_s):
            pass
    except (OSError, ValueError) as exc:
        raise SpecError(
            f"runner.address {address!r}: no Dask scheduler answers there ({exc}). Start the "
            "scheduler, correct the address, or leave it out for a local cluster."
        ) from None
    import importlib.util

    if importlib.util.find_spec("distributed") is None:
        return  # not installed: task_runner says what to install
    kind = _dask_identity(address, timeout_s)
    if kind is not None and kind.endswith("Scheduler"):
        return
    what = (
        f"a Dask {kind.lower()}, not the scheduler"
        if kind
        else f"no Dask scheduler answered there within {timeout_s:.0f} s (an HTTP server or a "
        "dashboard listens, or a scheduler too busy to answer)"
    )
    raise SpecError(
        f"runner.address {address!r}: something listens there, but {what}; the run would "
        "wait for it without end. Give the scheduler's address (its port is 8786 unless set; "
        "8787 is its dashboard)."
    )


def _dask_identity(address: str, timeout_s: float) -> str | None:
    """The ``type`` a Dask server at ``address`` gives for itself ("Scheduler", "Worker"), or
    None when no Dask answer comes within ``timeout_s`` (an HTTP server, a dashboard)."""
    import asyncio

    from distributed.core import rpc

    async def ask() -> dict:
        remote = rpc(address, timeout=timeout_s)
        try:
            return await remote.identity()
        finally:
            await remote.close_rpc()

    from concurrent.futures import ThreadPoolExecutor

    try:  # in a thread of its own: asyncio.run refuses to nest in a caller's running loop
        with ThreadPoolExecutor(1) as pool:
            answer = pool.submit(asyncio.run, asyncio.wait_for(ask(), timeout_s)).result()
        return answer.get("type")
    except Exception:  # a timeout, a closed connection, an answer that is not Dask's
        return None


def task_runner(spec: PipelineSpec):
    """The task runner the spec asks for: threads by default (numpy learners scale on them),
    or Dask through prefect-dask (a local cluster, or an existing scheduler by address)."""
    runner = spec.runner
    if runner.kind == "thread":
        return ThreadPoolTaskRunner(max_workers=runner.max_workers or os.cpu_count() or 2)
    try:
        from prefect_dask import DaskTaskRunner
    except ImportError:
        raise SpecError(
            "runner.kind 'dask' needs prefect-dask: pip install 'libre-flows[dask]'."
        ) from None
    if runner.address:
        return DaskTaskRunner(address=runner.address)
    return DaskTaskRunner(
        cluster_kwargs={
            "n_workers": runner.n_workers,
            "threads_per_worker": runner.max_workers or 1,
            "processes": True,
            "dashboard_address": None,
        }
    )


def _share_api_with_workers() -> None:
    """Dask workers are other processes: without PREFECT_API_URL each would start its own
    temporary Prefect server. Point them at this run's server before the cluster starts."""
    if os.environ.get("PREFECT_API_URL"):
        return
    from prefect.client.orchestration import get_client

    with get_client(sync_client=True) as client:
        os.environ["PREFECT_API_URL"] = str(client.api_url).rstrip("/")


def train(spec_path: str | os.PathLike, force: bool = False, store: str | None = None) -> dict:
    """Run the training flow for a spec file (Prefect's default embedded setup if no server,
    guarded to die with this process); the spec is checked before Prefect starts."""
    spec = preflight(spec_path, store)
    guard_embedded_server()
    if spec.runner.kind == "dask":  # the workers need the server's address: train_flow shares it
        return run_flow(train_flow, str(spec_path), force=force, store=store)
    # one flow run, not a flow and its subflow: each costs server round trips and a heartbeat
    # thread to join (about a second together on a small spec)
    pipeline = train_pipeline.with_options(name=train_flow.name, task_runner=task_runner(spec))
    return run_flow(pipeline, str(spec_path), force=force, store=store)
