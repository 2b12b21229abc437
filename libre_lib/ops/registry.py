"""A file-based model registry: every training run registers a version; a champion is served.

Layout under the store root::

    <root>/models/<pipeline>/
        champion.json              the champion pointer (names one complete version folder)
        .lock                      exclusive lock of the pipeline's registry (flock)
        v0001-1a2b3c4d/            one folder per version, never changed after creation ...
            model.json             ... except version.json's decision fields (atomic rewrites)
            spec.json
            contract.json          the data contract (and expectations.json, its GX suite)
            version.json           metadata: ids, hashes, metrics, validation, status, reason

version.json records the sha256 of model.json and of every extra file (contract.json, ...);
every read of a version's model or contract (:meth:`ModelRegistry.load_model`,
:meth:`ModelRegistry.load_contract`, :func:`verified_text`, and scoring from a path inside a
version folder) checks it and refuses a changed file naming the pipeline and version.

Version ids are ``v<number>-<first 8 hex of the model's sha256>``, numbered 1, 2, 3 … per
pipeline (four digits at least; :meth:`ModelRegistry.versions` sorts by the number, so v10000
comes after v9999). The number is allocated under the lock, so concurrent registrations, from
threads or processes, get distinct ids and none is lost.

Crash safety:

* a version folder is built under a hidden temp name (``.tmp-…``), its files fsynced, then
  ``os.rename``-d into place: a version folder either exists complete or not at all (a crash
  leaves at most a temp folder, which listings ignore and :meth:`ModelRegistry.cleanup_temp`
  removes);
* the champion pointer is replaced atomically (temp file, fsync, ``os.replace``) and only
  after the folder it names is in place, so it never names a missing or partial version;
* the pointer is the single source of truth for "champion". A promotion writes the pointer
  first, then the new and old versions' statuses; a status "champion" in a version the pointer
  does not name is read as "retired" (a crash between those writes) and repaired by the next
  promotion.

Statuses: ``candidate`` (registered, not decided yet), ``champion``, ``challenger-rejected``,
``retired`` (was champion, replaced). Promotion rule (:meth:`ModelRegistry.decide`): a version is
promoted iff its data validation passed, its accuracy is at least ``min_accuracy`` when one is
given (the majority-class answer's), and there is no champion yet or its metric is at least the
champion's minus ``tolerance``; a version that a promotion by hand retired (a rollback) is not
promoted again by a run that reproduces it. Metrics must be "higher is better" (f1, precision,
recall, accuracy). Given the new version's holdout (:class:`Holdout`), both models are scored on
those same rows (the champion's model loaded with its checksum verified); the decision says which
rows were compared (``rows``, ``scored_on``).

Scope as in :mod:`libre_lib.ops.artifacts`: local file systems with POSIX ``flock``. Without
``fcntl`` (Windows) an ``O_EXCL`` lock file is used instead; a process killed while holding it
leaves the file behind, and the error names it.
"""

from __future__ import annotations

import contextlib
import json
import logging
import math
import numbers
import os
import re
import shlex
import shutil
import time
import uuid
import warnings
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from .._version import __version__
from ..errors import (
    DataError,
    LibreError,
    LibreWarning,
    ModelFormatError,
    ParameterError,
    apart,
    counted,
    shorten,
    user_stacklevel,
)
from ..estimator import LibreClassifier
from ..inputs import one_vs_rest
from ..rules import tested_columns
from .artifacts import ArtifactStore, canonical_json, fingerprint_bytes
from .contract import DataContract
from .diff import ChampionChanges, column_changes, diff_rules, metric_deltas, metric_value
from .files import (
    RUN_FILE,
    RUNS_DIR,
    STALE_AFTER_S,
    atomic_write_bytes,
    atomic_write_text,
    fsync_dir,
    remove_stale,
    write_new_file,
)

try:  # POSIX only; see the module docstring.
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None

__all__ = [
    "CANDIDATE",
    "CHAMPION",
    "REJECTED",
    "RETIRED",
    "Holdout",
    "ModelRegistry",
    "ModelVersion",
    "PromotionDecision",
    "RegistryError",
    "registered_version",
    "validation_record",
    "verified_text",
]

logger = logging.getLogger(__name__)

CANDIDATE = "candidate"
CHAMPION = "champion"
REJECTED = "challenger-rejected"
RETIRED = "retired"
STATUSES = (CANDIDATE, CHAMPION, REJECTED, RETIRED)

REGISTRY_FORMAT = "libre-flows/model-version"
REGISTRY_FORMAT_VERSION = 1
MODEL_FILE = "model.json"
SPEC_FILE = "spec.json"
CONTRACT_FILE = "contract.json"
VERSION_FILE = "version.json"
CHAMPION_FILE = "champion.json"
LOCK_FILE = ".lock"
TEMP_PREFIX = ".tmp-"
LOCK_TIMEOUT_S = 60.0
OTHER_FILE = "trained on the data file"  # a question change that comes with another file
HAND = " by hand"  # ends the reason of a version that a promotion by hand retired
SAME_DATA_OTHER_SPLIT = (
    "another split of the same data, so some of these rows were most likely its training rows"
)
FLOAT_SLACK = 1e-12  # "not worse" must not fail on float noise (0.58 - 0.02 != 0.56)


def _read_as_number(dtype: str | None) -> bool | None:
    """Whether a column of this dtype (a data contract's text) keys its rows by numbers (see
    :func:`~libre_lib.ops.batches.row_keys`); None when unknown."""
    if not dtype:
        return None
    try:
        parsed = pd.api.types.pandas_dtype(dtype)
    except (TypeError, ValueError):
        return None
    return bool(
        pd.api.types.is_bool_dtype(parsed)
        or (pd.api.types.is_numeric_dtype(parsed) and not pd.api.types.is_complex_dtype(parsed))
    )


_PIPELINE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,127}")
_VERSION = re.compile(r"v(\d{4,})-([0-9a-f]{8})")


class RegistryError(LibreError):
    """A model version or pipeline is unknown, or the registry cannot be read or written."""


# --------------------------------------------------------------------------- value objects


@dataclass(frozen=True)
class ModelVersion:
    """One registered model version: where it is and what is known about it."""

    version: str
    pipeline: str
    number: int
    path: Path
    created_at: str
    run_id: str
    data_fingerprint: str
    spec_hash: str
    model_sha256: str
    metrics: dict[str, Any] = field(default_factory=dict)
    validation: dict[str, Any] = field(default_factory=dict)
    status: str = CANDIDATE
    reason: str = ""
    decided_at: str | None = None
    library_version: str = __version__
    files_sha256: dict[str, str] = field(default_factory=dict)
    #: What decided its holdout rows (``stages.split_key``); "" when unknown (older versions).
    split: str = ""
    #: Other fingerprints of the same data: what earlier releases recorded for it (the cached
    #: ``load`` file's sha256), so that versions of either release compare as the same data.
    data_aliases: tuple[str, ...] = ()

    @property
    def data_fingerprints(self) -> set[str]:
        """``data_fingerprint`` and its ``data_aliases``."""
        return {self.data_fingerprint, *self.data_aliases}

    @property
    def retired_by_hand(self) -> bool:
        """Whether a promotion by hand (a rollback) retired this version: a run that
        reproduces it does not promote it again."""
        return self.status == RETIRED and self.reason.endswith(HAND)

    @property
    def is_champion(self) -> bool:
        return self.status == CHAMPION

    @property
    def validation_passed(self) -> bool:
        return self.validation.get("success") is True

    @property
    def model_path(self) -> Path:
        return self.path / MODEL_FILE

    def metric(self, name: str) -> float | None:
        """The metric as a float, None if absent or not a number."""
        return metric_value(self.metrics.get(name))

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready metadata (``path`` as a string)."""
        out = asdict(self)
        out["path"] = str(self.path)
        return out

    @classmethod
    def _from_record(cls, record: Mapping[str, Any], path: Path) -> ModelVersion:
        try:
            return cls(
                version=str(record["version"]),
                pipeline=str(record["pipeline"]),
                number=int(record["number"]),
                path=path,
                created_at=str(record["created_at"]),
                run_id=str(record["run_id"]),
                data_fingerprint=str(record["data_fingerprint"]),
                spec_hash=str(record["spec_hash"]),
                model_sha256=str(record["model_sha256"]),
                metrics=dict(record.get("metrics") or {}),
                validation=dict(record.get("validation") or {}),
                status=str(record.get("status", CANDIDATE)),
                reason=str(record.get("reason", "")),
                decided_at=record.get("decided_at"),
                library_version=str(record.get("library_version", "")),
                files_sha256=dict(record.get("files_sha256") or {}),
                split=str(record.get("split") or ""),
                data_aliases=tuple(map(str, record.get("data_aliases") or ())),
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise RegistryError(
                f"{path / VERSION_FILE} is not a model-version record (missing or bad {exc})."
            ) from None

    def _record(self) -> dict[str, Any]:
        record = self.to_dict()
        del record["path"]
        return {"format": REGISTRY_FORMAT, "format_version": REGISTRY_FORMAT_VERSION, **record}


@dataclass(frozen=True)
class PromotionDecision:
    """The outcome of :meth:`ModelRegistry.decide` / :meth:`ModelRegistry.promote`.

    ``previous`` is the champion the version was compared with (None if there was none);
    ``delta`` is the version's metric minus the champion's (None without a champion).
    """

    promoted: bool
    reason: str
    previous: ModelVersion | None
    delta: float | None
    version: str = ""
    metric: str = "f1"
    tolerance: float = 0.0
    value: float | None = None
    """The version's metric, as compared."""
    champion_value: float | None = None
    """The champion's metric, as compared (on ``rows`` rows when ``same_rows``)."""
    rows: int | None = None
    """How many rows both were scored on (None when not on the same rows)."""
    scored_on: str = ""
    """Which rows the metrics compared come from, in words (empty without a champion)."""
    champion_scores: Mapping[str, Any] | None = None
    """All of the champion's metrics on the same rows (None when not rescored)."""

    @property
    def same_rows(self) -> bool:
        """True when champion and version were scored on the same rows."""
        return self.rows is not None

    @property
    def unchanged(self) -> bool:
        """True when the version was the champion already: the decision moved nothing (a run
        on unchanged data; ``libre prune`` reads its ``run.json`` alike)."""
        return self.previous is not None and self.previous.version == self.version

    def to_dict(self) -> dict[str, Any]:
        return {
            "promoted": self.promoted,
            "reason": self.reason,
            "previous": self.previous.version if self.previous is not None else None,
            "delta": self.delta,
            "version": self.version,
            "metric": self.metric,
            "tolerance": self.tolerance,
            "value": self.value,
            "champion_value": self.champion_value,
            "rows": self.rows,
            "scored_on": self.scored_on,
            "champion_scores": dict(self.champion_scores) if self.champion_scores else None,
        }


@dataclass(frozen=True)
class Holdout:
    """The rows a promotion scores both the champion and the new version on: the new
    version's holdout, so their metrics compare like with like.

    ``source`` says whose rows they are, e.g. ``"the holdout of run haberman-20250101"``.
    """

    X: Any
    y: Any
    source: str
    kind: str = "holdout"
    """What the rows are to the new version: "holdout", or "training" when the pipeline keeps
    no holdout (``holdout_fraction: 0``; its metrics are then in-sample)."""

    @property
    def n_rows(self) -> int:
        return len(self.X)

    def scores(self, model: LibreClassifier) -> dict[str, Any]:
        """The model's metrics on these rows (:func:`libre_lib.ops.report.metrics`), in its
        own columns (:meth:`rows_for`)."""
        from .report import metrics

        return metrics(model, self.rows_for(model), self.y)

    def rows_for(self, model: LibreClassifier) -> Any:
        """These rows in ``model``'s columns: columns it was not fitted on left out (a column
        the data gained since), and a column it was fitted on that these rows lack missing in
        every row when no rule of it tests that column (``libre score`` refuses such a file:
        there the column is expected); a ``DataError`` naming the columns when one does."""
        if not isinstance(self.X, pd.DataFrame):
            return self.X
        columns = [str(c) for c in model.columns_]
        absent = [c for c in columns if c not in self.X.columns]
        tested = tested_columns(model.rules_)
        needed = [c for c in absent if c in tested]
        if needed:
            raise DataError(
                f"these rows lack the column{'s' if len(needed) > 1 else ''} "
                f"{', '.join(map(repr, needed))} that its rules test"
            )
        return self.X.reindex(columns=columns)


@dataclass(frozen=True)
class _Compared:
    """The two metrics a decision compares, and on which rows."""

    value: float | None
    best: float | None
    rows: int | None = None
    scored_on: str = ""
    champion_scores: Mapping[str, Any] | None = None
    kind: str = "holdout"
    """Which rows the version's metric is on to the version: "holdout" or "training"."""
    metric: str = "f1"
    """The metric compared: the one asked for, or accuracy where that one is undefined."""
    why: str = ""
    """Why another metric than the one asked for is compared (empty when it is not)."""
    champion_refused: str = ""
    """Why the champion cannot score the version's holdout rows (they break its data
    contract: a column turned to text, a column its rules test gone); empty when it can."""


#: Metrics that rows without the positive class leave undefined (no recall; F1 is 0 or 0/0
#: whatever the model does), so two models cannot be told apart by them there.
_NEED_POSITIVES = ("f1", "recall")


#: The most rows of a champion's loaded data that a promotion reads to tell whether the new
#: holdout rows were in it (1M rows x 20 columns: about 4 s).
ROWS_COMPARED = 2_000_000


def _row_hashes(frame: pd.DataFrame) -> np.ndarray:
    """One hash per row of its values as read: numbers as floats (an int column that gained
    a missing cell reads as floats, the same numbers), anything else as text."""
    plain = pd.DataFrame(
        {
            c: pd.to_numeric(frame[c], errors="coerce").astype("float64")
            if pd.api.types.is_numeric_dtype(frame[c]) and not pd.api.types.is_bool_dtype(frame[c])
            else frame[c].astype(object).where(frame[c].notna(), None).astype(str)
            for c in frame.columns
        }
    )
    return pd.util.hash_pandas_object(plain, index=False).to_numpy()


def _fallback(metric: str, scores: Mapping[str, Any] | None) -> tuple[str, str]:
    """The metric to compare on rows whose ``scores`` are given, and why it is not ``metric``:
    accuracy where the rows hold no row of the positive class and ``metric`` needs one."""
    if metric in _NEED_POSITIVES and scores is not None and scores.get("n_positive") == 0:
        why = (
            f"{metric} is undefined on rows without the positive class, so accuracy is "
            "compared instead"
        )
        return "accuracy", why
    return metric, ""


def _question(model: LibreClassifier) -> dict[str, str]:
    """What a model answers: its target column, positive class and classes (as text)."""
    positive = model.positive_class_
    if one_vs_rest(positive, model.positive_class):
        positive = model.positive_class
    return {
        "target": str(model.target_name_),
        "positive class": str(positive),
        "classes": ", ".join(str(c) for c in model.classes_),
    }


def _check_tolerance(tolerance: object) -> None:
    if (
        isinstance(tolerance, bool)
        or not isinstance(tolerance, int | float)
        or not math.isfinite(tolerance)
        or tolerance < 0
    ):
        raise RegistryError(f"tolerance must be a finite number >= 0; got {tolerance!r}.")


def _rows(entry: ModelVersion) -> str:
    """How many rows a version's recorded metrics were computed on, as text."""
    n = entry.metrics.get("n_rows")
    return str(n) if isinstance(n, int) and not isinstance(n, bool) else "an unknown number of"


def validation_record(report: Any) -> dict[str, Any]:
    """The ``validation`` dict :meth:`ModelRegistry.register` wants, from a
    ``libre_lib.ops.validation.ValidationReport`` (or anything with ``success``, ``n_rows``,
    ``results`` and ``failures()``): success, n_failed, n_expectations, n_rows, summary."""
    failures = report.failures()
    return {
        "success": bool(report.success),
        "n_failed": len(failures),
        "n_expectations": len(report.results),
        "n_rows": int(report.n_rows),
        "failed": [getattr(r, "expectation", str(r)) for r in failures],
        "summary": report.summary(),
    }


# --------------------------------------------------------------------------- file helpers


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def _check_pipeline(pipeline: object) -> str:
    if not isinstance(pipeline, str) or not _PIPELINE.fullmatch(pipeline):
        raise RegistryError(
            f"Pipeline name {pipeline!r} is not valid: use 1-128 letters, digits, '_', '.' or "
            "'-', starting with a letter or digit."
        )
    return pipeline


def _json_text(obj: Any) -> str:
    canonical_json(obj)  # raises TypeError naming a value JSON cannot encode
    return json.dumps(obj, indent=2, ensure_ascii=False, sort_keys=True) + "\n"


def named_store(store: str | os.PathLike[str]) -> str:
    """`` --store STORE``: a command's option naming ``store`` (a message's command that is
    kept, as a decision's reason is, names it always)."""
    return f" --store {shlex.quote(str(store))}"


def store_option(store: str | os.PathLike[str]) -> str:
    """:func:`named_store`, or "" when ``store`` is the commands' default (``./.libre-store``
    from the working directory)."""
    with contextlib.suppress(OSError):  # a working directory deleted meanwhile: name it
        if Path(store).resolve() == (Path.cwd() / ".libre-store").resolve():
            return ""
    return named_store(store)


def promote_hint(pipeline: str, store: str | os.PathLike[str]) -> str:
    """What a registry error tells the operator to do about a damaged champion: the command,
    with this pipeline and store."""
    where = named_store(store)
    return (
        f"make another version the champion (`libre models promote {pipeline} <version>{where}`;"
        f" `libre models list {pipeline}{where}` lists them)"
    )


POINTER_LOST = (
    "recorded as the champion, but the champion pointer is missing, damaged or names a "
    "missing folder: `libre models promote {} {}{}` makes it the champion again"
)


def _read_json(path: Path, what: str) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise RegistryError(f"Cannot read {what} {path}: {exc}.") from None
    if not isinstance(data, dict):
        raise RegistryError(f"{what.capitalize()} {path} does not hold a JSON object.")
    return data


def verified_text(entry: ModelVersion, name: str) -> str:
    """The text of the file ``name`` of a registered version, after checking its bytes (read
    once, so nothing can change between check and use) against the sha256 recorded when the
    version was registered. Versions registered before file checksums were recorded have
    none for their extra files: those are read with a warning saying so."""
    path = entry.path / name
    label = f"{entry.pipeline}/{entry.version}"
    try:
        payload = path.read_bytes()
    except OSError as exc:
        raise RegistryError(f"Cannot read {name} of {label}: {exc}.") from None
    expected = entry.model_sha256 if name == MODEL_FILE else entry.files_sha256.get(name)
    if expected is None:
        warnings.warn(
            f"{name} of {label} has no recorded sha256 (registered by an older release), so "
            "it cannot be verified; retrain to register a version with checksums.",
            LibreWarning,
            stacklevel=user_stacklevel(),
        )
    elif fingerprint_bytes(payload) != expected:
        raise RegistryError(
            f"{name} of {label} does not match the sha256 recorded at registration: it was "
            f"changed or corrupted ({path}); restore it or "
            f"{promote_hint(entry.pipeline, entry.path.parents[2])}."
        )
    try:
        return payload.decode("utf-8")
    except UnicodeDecodeError:
        raise RegistryError(f"{name} of {label} is not UTF-8 text ({path}).") from None


def registered_version(path: str | os.PathLike[str]) -> ModelVersion | None:
    """The registered version a file path lies in (``<root>/models/<pipeline>/<version>/
    <file>``), or None when the path is not in a model registry (e.g. a run folder)."""
    path = Path(path)
    folder = path.parent
    if not _VERSION.fullmatch(folder.name) or folder.parent.parent.name != "models":
        return None
    if not (folder / VERSION_FILE).is_file():
        return None
    registry = ModelRegistry(folder.parent.parent.parent)
    return registry.get(folder.parent.name, folder.name)


# --------------------------------------------------------------------------- the registry


class ModelRegistry:
    """Model versions of every pipeline under ``<root>/models`` (see the module docstring)."""

    def __init__(self, root: str | os.PathLike[str]):
        if not isinstance(root, str | os.PathLike):
            raise ParameterError(
                f"ModelRegistry takes the store's folder (a str or a path); got {root!r}."
            )
        if isinstance(root, str) and "://" in root:
            raise ParameterError(
                f"ModelRegistry root {root!r} is a URL; only local folders are supported. "
                "Mount the remote storage and pass its local path."
            )
        # absolute, as the artifact store's: a process that changes directory keeps its store
        self.root = Path(root).expanduser().absolute()
        self.models = self.root / "models"
        self._warned: set[str] = set()  # a damaged pointer is told once, not on every read

    def _warn_once(self, message: str, *args) -> None:
        text = message % args if args else message
        if text not in self._warned:
            self._warned.add(text)
            logger.warning("%s", text)

    def __repr__(self) -> str:
        return f"ModelRegistry({str(self.root)!r})"

    # ------------------------------------------------------------------ paths and locking

    def store_option(self) -> str:
        """`` --store ROOT`` for the commands a message names, "" at the default store."""
        return store_option(self.root)

    def pipeline_dir(self, pipeline: str) -> Path:
        return self.models / _check_pipeline(pipeline)

    def pipelines(self) -> list[str]:
        """Pipelines with at least one version, by name."""
        if not self.models.is_dir():
            return []
        return sorted(
            p.name for p in self.models.iterdir() if p.is_dir() and _PIPELINE.fullmatch(p.name)
        )

    @contextlib.contextmanager
    def _lock(self, pipeline: str) -> Iterator[None]:
        """Exclusive lock of one pipeline's registry (threads and processes alike); a registry
        that cannot be written is a :class:`RegistryError` naming its folder."""
        directory = self.pipeline_dir(pipeline)
        held = contextlib.ExitStack()
        try:
            directory.mkdir(parents=True, exist_ok=True)
            if fcntl is None:  # pragma: no cover - Windows
                held.enter_context(
                    _exclusive_file_lock(directory / (LOCK_FILE + ".excl"), pipeline)
                )
            else:
                fd = os.open(directory / LOCK_FILE, os.O_RDWR | os.O_CREAT, 0o644)
                held.callback(os.close, fd)  # closing the descriptor releases the lock
        except OSError as exc:
            held.close()
            raise RegistryError(
                f"The registry of {pipeline!r} cannot be written ({directory}: "
                f"{exc.strerror or exc}): registering, promoting or retiring a version writes "
                "there. Run the command as a user who can write the store, or on a writable "
                "copy of it."
            ) from None
        with held:
            if fcntl is not None:
                fcntl.flock(fd, fcntl.LOCK_EX)
            yield

    # ------------------------------------------------------------------ registering

    def register(
        self,
        pipeline: str,
        model_json: str,
        *,
        spec: Mapping[str, Any],
        metrics: Mapping[str, Any],
        validation: Mapping[str, Any],
        data_fingerprint: str,
        spec_hash: str,
        run_id: str,
        created_at: str | None = None,
        extra_files: Mapping[str, str] | None = None,
        split: str = "",
    ) -> ModelVersion:
        """Store a trained model as the pipeline's next version (status ``candidate``).

        ``model_json`` is ``LibreClassifier.to_json()`` (checked to load); ``validation`` must
        hold a boolean ``success`` (see :func:`validation_record`). ``extra_files`` (name ->
        text, e.g. the scoring data contract ``contract.json``) are stored in the same version
        folder, written before it becomes visible. Call :meth:`promote` next.
        """
        version, _ = self.register_unless_unchanged(
            pipeline,
            model_json,
            spec=spec,
            metrics=metrics,
            validation=validation,
            data_fingerprint=data_fingerprint,
            spec_hash=spec_hash,
            run_id=run_id,
            created_at=created_at,
            extra_files=extra_files,
            split=split,
            reuse=False,
        )
        return version

    def _restore(self, entry: ModelVersion, files: Mapping[str, bytes]) -> None:
        """Rewrite a reused version's files whose bytes no longer match the sha256 recorded at
        registration from ``files`` (this run's, whose sha256 is the recorded one): a reused
        version is one the registry vouches for again, so a damaged copy is mended, with a
        warning, or the run would report a champion no one can score with."""
        for name, data in files.items():
            expected = entry.model_sha256 if name == MODEL_FILE else entry.files_sha256.get(name)
            if expected is None or fingerprint_bytes(data) != expected:
                continue
            path = entry.path / name
            try:
                intact = fingerprint_bytes(path.read_bytes()) == expected
            except OSError:
                intact = False
            if not intact:
                atomic_write_bytes(path, data)
                logger.warning(
                    "%s of %s/%s did not match the sha256 recorded at registration: restored "
                    "from this run's identical copy.",
                    name,
                    entry.pipeline,
                    entry.version,
                )

    def register_unless_unchanged(
        self,
        pipeline: str,
        model_json: str,
        *,
        spec: Mapping[str, Any],
        metrics: Mapping[str, Any],
        validation: Mapping[str, Any],
        data_fingerprint: str,
        spec_hash: str,
        run_id: str,
        created_at: str | None = None,
        extra_files: Mapping[str, str] | None = None,
        split: str = "",
        reuse: bool = True,
        data_aliases: Sequence[str] = (),
        spec_aliases: Sequence[str] = (),
    ) -> tuple[ModelVersion, bool]:
        """:meth:`register`, except that a model equal to one of the pipeline's versions (same
        ``model.json`` bytes, data fingerprint and spec hash; the latest such) reuses that
        version: nothing is written (a retraining that reproduces the champion after a
        rejected candidate keeps the champion, instead of replacing it with a copy). Returns
        ``(version, new)``; ``new`` is False for a reused version. Checked under the
        pipeline's lock, so identical concurrent runs share one version.
        ``data_aliases``: other fingerprints of the same data (what an earlier release
        recorded, the content's hash: a copy of the rows in other bytes); they match too, and
        are kept as the version's ``data_aliases``. ``spec_aliases``: other hashes of the same
        spec that a version may have recorded (what an earlier release hashed); they match
        too."""
        reserved = {MODEL_FILE, SPEC_FILE, VERSION_FILE}
        for name, text in (extra_files or {}).items():
            if name in reserved or "/" in name or name.startswith("."):
                raise RegistryError(f"extra file name {name!r} is reserved or not a plain name.")
            if not isinstance(text, str):
                raise RegistryError(
                    f"extra file {name!r} must be text (a str); got {type(text).__name__}."
                )
        if CONTRACT_FILE in (extra_files or {}):  # scoring and promotion read it: checked now
            try:
                DataContract.from_json(extra_files[CONTRACT_FILE])
            except LibreError as exc:
                raise RegistryError(
                    f"Cannot register {pipeline!r}: {CONTRACT_FILE}: {exc}"
                ) from None
        _check_pipeline(pipeline)
        if not isinstance(model_json, str):
            raise RegistryError(
                f"model_json must be the str of LibreClassifier.to_json(); got "
                f"{type(model_json).__name__}."
            )
        try:
            LibreClassifier.from_json(model_json)
        except ModelFormatError as exc:
            raise RegistryError(f"Cannot register {pipeline!r}: {exc}") from None
        if not isinstance(validation, Mapping) or not isinstance(validation.get("success"), bool):
            raise RegistryError(
                "validation must be a dict with a boolean 'success' (use validation_record(report))"
                f"; got {validation!r}."
            )
        if not isinstance(metrics, Mapping):
            raise RegistryError(f"metrics must be a dict; got {type(metrics).__name__}.")
        for name, value in (("data_fingerprint", data_fingerprint), ("spec_hash", spec_hash)):
            if not isinstance(value, str) or not value:
                raise RegistryError(f"{name} must be a non-empty str; got {value!r}.")
        payload = model_json.encode("utf-8")
        model_sha256 = fingerprint_bytes(payload)
        extra = {name: text.encode("utf-8") for name, text in (extra_files or {}).items()}
        files_sha256 = {name: fingerprint_bytes(data) for name, data in extra.items()}
        try:
            spec_text = _json_text(dict(spec))
            metrics_copy = json.loads(_json_text(dict(metrics)))
            validation_copy = json.loads(_json_text(dict(validation)))
        except TypeError as exc:
            raise RegistryError(f"Cannot register {pipeline!r}: {exc}") from None

        directory = self.pipeline_dir(pipeline)
        try:
            with self._lock(pipeline):
                aliases = tuple(f for f in dict.fromkeys(data_aliases) if f != data_fingerprint)
                data = {data_fingerprint, *aliases}
                specs = {spec_hash, *spec_aliases}
                same = [
                    v
                    for v in (self.versions(pipeline) if reuse else ())
                    if v.model_sha256 == model_sha256
                    and v.spec_hash in specs
                    and v.data_fingerprints & data
                ]
                if same:
                    logger.info(
                        "%s/%s holds the same model, data and spec: reused",
                        pipeline,
                        same[-1].version,
                    )
                    self._restore(same[-1], {MODEL_FILE: payload, **extra})
                    return same[-1], False
                number = self._next_number(directory)
                version_id = f"v{number:04d}-{model_sha256[:8]}"
                final = directory / version_id
                version = ModelVersion(
                    version=version_id,
                    pipeline=pipeline,
                    number=number,
                    path=final,
                    created_at=created_at or _now(),
                    run_id=str(run_id),
                    data_fingerprint=data_fingerprint,
                    spec_hash=spec_hash,
                    model_sha256=model_sha256,
                    metrics=metrics_copy,
                    validation=validation_copy,
                    files_sha256=files_sha256,
                    split=str(split),
                    data_aliases=aliases,
                )
                temp = directory / f"{TEMP_PREFIX}{version_id}-{os.getpid()}-{uuid.uuid4().hex}"
                temp.mkdir()
                try:
                    write_new_file(temp / MODEL_FILE, payload)
                    write_new_file(temp / SPEC_FILE, spec_text.encode("utf-8"))
                    write_new_file(
                        temp / VERSION_FILE, _json_text(version._record()).encode("utf-8")
                    )
                    for name, data in extra.items():
                        write_new_file(temp / name, data)
                    fsync_dir(temp)
                    os.rename(temp, final)
                except BaseException:
                    shutil.rmtree(temp, ignore_errors=True)
                    raise
                fsync_dir(directory)
        except OSError as exc:
            raise RegistryError(
                f"Could not register a version of {pipeline!r} under {directory}: {exc}. Check "
                "free disk space and write permission; no partial version was left."
            ) from exc
        logger.info("registered %s/%s (%s)", pipeline, version_id, final)
        return version, True

    @staticmethod
    def _next_number(directory: Path) -> int:
        numbers = [
            int(match.group(1))
            for entry in directory.iterdir()
            if (match := _VERSION.fullmatch(entry.name))
        ]
        return max(numbers, default=0) + 1

    # ------------------------------------------------------------------ reading

    def _pointer(self, pipeline: str) -> dict[str, Any] | None:
        path = self.pipeline_dir(pipeline) / CHAMPION_FILE
        try:
            pointer = _read_json(path, "champion pointer")
        except FileNotFoundError:
            return None
        except RegistryError as exc:
            hint = promote_hint(pipeline, self.root)
            raise RegistryError(f"{str(exc).rstrip('.')}. Restore it, or {hint}.") from None
        if not isinstance(pointer.get("version"), str):
            raise RegistryError(
                f"Champion pointer {path} does not name a version. Restore it, or "
                f"{promote_hint(pipeline, self.root)}."
            )
        return pointer

    def _readable_pointer(self, pipeline: str) -> dict[str, Any] | None:
        """The champion pointer, or None with a warning when it cannot be read: listing the
        versions (to choose one to promote) must work when the pointer is damaged."""
        try:
            return self._pointer(pipeline)
        except RegistryError as exc:
            self._warn_once("%s Each version's own record says which is the champion.", exc)
            return None

    def _champion_id(self, pipeline: str) -> str | None:
        """The version the champion pointer names, or None (with a warning) when the pointer
        is missing, cannot be read, or names a folder that is not a complete version: then
        each version's own record says whether it is the champion."""
        pointer = self._readable_pointer(pipeline)
        if pointer is None:
            return None
        champion_id = pointer["version"]
        if not (self.pipeline_dir(pipeline) / champion_id / VERSION_FILE).is_file():
            self._warn_once(
                "The champion pointer of %r names %r, which is not a complete version folder "
                "under %s: each version's own record says which is the champion. Restore the "
                "folder, or %s.",
                pipeline,
                champion_id,
                self.pipeline_dir(pipeline),
                promote_hint(pipeline, self.root),
            )
            return None
        return champion_id

    def _load(self, pipeline: str, path: Path, champion_id: str | None) -> ModelVersion:
        version = ModelVersion._from_record(_read_json(path / VERSION_FILE, "version record"), path)
        if version.version != path.name or version.pipeline != pipeline:
            raise RegistryError(
                f"{path / VERSION_FILE} describes {version.pipeline}/{version.version}, not "
                f"{pipeline}/{path.name}; was the folder renamed or copied?"
            )
        if version.version == champion_id and version.status != CHAMPION:
            # Promoted, but the crash came before the status update: the pointer has the reason.
            pointer = self._readable_pointer(pipeline) or {}
            version = replace(version, status=CHAMPION, reason=str(pointer.get("reason", "")))
        elif champion_id is None and version.status == CHAMPION:
            # The pointer is missing or damaged: the record is all there is to go by.
            version = replace(
                version, reason=POINTER_LOST.format(pipeline, version.version, self.store_option())
            )
        elif version.version != champion_id and version.status == CHAMPION:
            # The pointer moved on, but the crash came before this status update.
            version = replace(version, status=RETIRED, reason=f"replaced by {champion_id}")
        return version

    def versions(self, pipeline: str) -> list[ModelVersion]:
        """Every complete version of the pipeline, oldest (lowest number) first."""
        directory = self.pipeline_dir(pipeline)
        if not directory.is_dir():
            return []
        champion_id = self._champion_id(pipeline)
        entries = [e for e in directory.iterdir() if _VERSION.fullmatch(e.name) and e.is_dir()]
        found = []
        for entry in entries:
            try:
                found.append(self._load(pipeline, entry, champion_id))
            except (RegistryError, FileNotFoundError) as exc:
                logger.warning("Skipping model version folder %s: %s", entry, exc)
        return sorted(found, key=lambda v: v.number)

    def get(self, pipeline: str, version: str) -> ModelVersion:
        """One version by id (``"champion"`` for the current champion; ``"v0002"``, its
        number alone, for the version of that number)."""
        if version == CHAMPION:
            champion = self.champion(pipeline)
            if champion is None:
                raise RegistryError(self._no_champion_message(pipeline))
            return champion
        directory = self.pipeline_dir(pipeline)
        if isinstance(version, str) and _VERSION.fullmatch(version):
            path = directory / version
            if (path / VERSION_FILE).is_file():
                return self._load(pipeline, path, self._champion_id(pipeline))
        known = [v.version for v in self.versions(pipeline)]
        if isinstance(version, str) and re.fullmatch(r"v\d{4}", version):
            numbered = [v for v in known if v.split("-")[0] == version]
            if len(numbered) == 1:  # "v0002": the version of that number
                return self.get(pipeline, numbered[0])
        listing = ", ".join(known) if known else "none yet"
        started = [
            v for v in known if isinstance(version, str) and version and v.startswith(version)
        ]
        if len(started) > 1:
            raise RegistryError(
                f"{version!r} starts {len(started)} model versions of {pipeline!r} "
                f"({', '.join(started)}): give one of them whole, or its number (v0002)."
            )
        raise RegistryError(
            f"Pipeline {pipeline!r} has no model version {version!r}. Known versions: {listing}."
        )

    def champion(self, pipeline: str) -> ModelVersion | None:
        """The current champion, or None before the first promotion."""
        pointer = self._pointer(pipeline)
        if pointer is None:
            return None
        name = pointer["version"]
        path = self.pipeline_dir(pipeline) / name
        if not _VERSION.fullmatch(name) or not (path / VERSION_FILE).is_file():
            raise RegistryError(
                f"The champion pointer of {pipeline!r} names {name!r}, which is not a complete "
                f"version folder under {path.parent}; restore the folder or "
                f"{promote_hint(pipeline, self.root)}."
            )
        champion = self._load(pipeline, path, name)
        if pointer.get("model_sha256", champion.model_sha256) != champion.model_sha256:
            raise RegistryError(
                f"The champion {pipeline}/{name}'s version.json records another model sha256 "
                "than the champion pointer: the version was changed after its promotion; "
                f"restore it or {promote_hint(pipeline, self.root)}."
            )
        return champion

    def _no_champion_message(self, pipeline: str) -> str:
        known = [v.version for v in self.versions(pipeline)]
        if not known:
            return (
                f"Pipeline {pipeline!r} has no registered model versions yet under "
                f"{self.models} (another store? pass --store)."
            )
        recorded = [v.version for v in self.versions(pipeline) if v.status == CHAMPION]
        if recorded:  # promoted once: its pointer was deleted
            pointer = self.pipeline_dir(pipeline) / CHAMPION_FILE
            return (
                f"Pipeline {pipeline!r} has no champion pointer ({pointer} is missing), although "
                f"version {recorded[-1]} is recorded as the champion: `libre models promote "
                f"{pipeline} {recorded[-1]}{self.store_option()}` makes it the champion again."
            )
        return (
            f"Pipeline {pipeline!r} has no champion yet (no version was promoted). Known "
            f"versions: {', '.join(known)}."
        )

    def model_json(self, pipeline: str, version: str = CHAMPION) -> str:
        """The stored ``model.json`` text, checked against the recorded sha256."""
        return self.file_text(pipeline, version, MODEL_FILE)

    def file_text(self, pipeline: str, version: str, name: str) -> str:
        """A file of a version (``model.json``, ``contract.json``, ...), checked against the
        sha256 recorded at registration; :class:`RegistryError` when it differs."""
        return verified_text(self.get(pipeline, version), name)

    def load_model(self, pipeline: str, version: str = CHAMPION) -> LibreClassifier:
        """The fitted classifier of a version (default: the champion), checksum verified."""
        return LibreClassifier.from_json(self.model_json(pipeline, version))

    def load_contract(self, pipeline: str, version: str = CHAMPION) -> DataContract | None:
        """The data contract of a version, checksum verified (None if it was registered
        without one; a contract registered but missing now is an error, not "no contract")."""
        entry = self.get(pipeline, version)
        if not (entry.path / CONTRACT_FILE).is_file():
            if CONTRACT_FILE in entry.files_sha256:
                raise RegistryError(
                    f"{CONTRACT_FILE} of {entry.pipeline}/{entry.version} was registered but is "
                    f"missing ({entry.path / CONTRACT_FILE}): scoring without it would skip the "
                    f"training ranges and missing rates. Restore it, or "
                    f"{promote_hint(entry.pipeline, self.root)}."
                )
            return None
        try:
            return DataContract.from_json(verified_text(entry, CONTRACT_FILE))
        except RegistryError:
            raise
        except LibreError as exc:
            raise RegistryError(
                f"{CONTRACT_FILE} of {entry.pipeline}/{entry.version} cannot be read: {exc}"
            ) from None

    def spec(self, pipeline: str, version: str = CHAMPION) -> dict[str, Any]:
        """The spec dict the version was trained from."""
        entry = self.get(pipeline, version)
        return _read_json(entry.path / SPEC_FILE, "spec")

    # ------------------------------------------------------------------ promotion

    def decide(
        self,
        pipeline: str,
        version: str,
        *,
        tolerance: float = 0.0,
        metric: str = "f1",
        holdout: Holdout | None = None,
        min_accuracy: float | None = None,
    ) -> PromotionDecision:
        """Whether ``version`` should become champion (nothing is written).

        Promoted iff its validation passed, its recorded accuracy is at least ``min_accuracy``
        (if given), and there is no champion yet or ``metric >= champion's metric -
        tolerance``, the champion scored on ``holdout`` when given. A champion that cannot
        score ``holdout`` (the rows break its data contract) stays. Deciding on the champion
        itself keeps it.

        Parameters
        ----------
        pipeline, version : str
            The version to decide on.
        tolerance : float
            How far below the champion's metric the version may be and still be promoted.
        metric : str
            The metric compared ("higher is better").
        holdout : Holdout, optional
            The version's holdout rows: both models (loaded with their checksums verified) are
            scored on them. Without it, each version's recorded metric (on its own holdout) is
            used, and the decision says so.
        min_accuracy : float, optional
            The accuracy of the majority-class answer on the version's holdout rows (the
            spec's ``promotion.beat_majority``): a version less accurate than that is not
            promoted, even the first one, nor a version without rules (which gives the
            majority answer itself, or worse).

        Returns
        -------
        PromotionDecision
        """
        _check_tolerance(tolerance)
        return self._judged(pipeline, version, tolerance, metric, holdout, min_accuracy)[2]

    def _judged(self, pipeline, version, tolerance, metric, holdout, min_accuracy):
        """(candidate, champion, decision) as the registry stands now (nothing written)."""
        _check_promotion_args(metric, holdout, min_accuracy)
        candidate = self.get(pipeline, version)
        champion = self.champion(pipeline)
        changed = self._question_change(candidate, champion)
        compared = self._compare(candidate, champion, metric, None if changed else holdout)
        twin = self._rolled_back_twin(candidate)
        # the store always named: a decision's reason is kept, and read from anywhere
        store = named_store(self.root)
        decision = self._decide(
            candidate, champion, tolerance, metric, compared, changed, min_accuracy, twin, store
        )
        return candidate, champion, decision

    def _rolled_back_twin(self, candidate: ModelVersion) -> ModelVersion | None:
        """An other version that a promotion by hand retired and that holds the same model,
        trained on the same data: a spec change that leaves the model as it was (its
        description, its schedule) registers a new version of it, which must not undo the
        rollback either."""
        for version in reversed(self.versions(candidate.pipeline)):
            if (
                version.version != candidate.version
                and version.retired_by_hand
                and version.model_sha256 == candidate.model_sha256
                and version.data_fingerprints & candidate.data_fingerprints
            ):
                return version
        return None

    def _question_change(
        self, candidate: ModelVersion, champion: ModelVersion | None
    ) -> str | None:
        """How the version's question differs from the champion's (target column, positive
        class, classes), in words; None when it is the same question, there is no champion
        or a model cannot be read."""
        if champion is None or champion.version == candidate.version:
            return None
        try:
            before = _question(self.load_model(champion.pipeline, champion.version))
            after = _question(self.load_model(candidate.pipeline, candidate.version))
        except (LibreError, OSError):  # an unreadable model is refused by the steps that need it
            return None
        changes = [f"{name} {before[name]!r} -> {after[name]!r}" for name in after
                   if before[name] != after[name]]  # fmt: skip
        source = self._data_path(champion) if changes else None
        if changes and source != self._data_path(candidate):
            # another question on another file: most likely two specs of one name, one store
            changes.append(f"{OTHER_FILE} {source!r}")
        return ", ".join(changes) or None

    def _data_path(self, version: ModelVersion) -> str | None:
        """The data path of the spec a version was trained from, as the spec writes it."""
        try:
            return (self.spec(version.pipeline, version.version).get("data") or {}).get("path")
        except (LibreError, OSError, AttributeError):
            return None

    def _compare(
        self,
        candidate: ModelVersion,
        champion: ModelVersion | None,
        metric: str,
        holdout: Holdout | None,
    ) -> _Compared:
        """The version's and the champion's metric, on the version's holdout when given."""
        own_metric, own_why = _fallback(metric, candidate.metrics)
        recorded = _Compared(
            candidate.metric(own_metric),
            champion.metric(own_metric) if champion is not None else None,
            kind=holdout.kind if holdout is not None else "holdout",  # "training": in-sample
            metric=own_metric,
            why=own_why,
        )
        if champion is None or champion.version == candidate.version:
            return recorded
        own = (
            f"each scored on its own holdout (the champion on {_rows(champion)} rows, "
            f"{candidate.version} on {_rows(candidate)} rows): not the same rows"
        )
        if holdout is None:
            return replace(recorded, scored_on=own)
        pipeline = candidate.pipeline
        challenger_model = self.load_model(pipeline, candidate.version)
        champion_model = self.load_model(pipeline, champion.version)
        try:
            challenger_scores = holdout.scores(challenger_model)
        except DataError as exc:  # its own holdout: not expected, but never blame the champion
            reason = _first_sentence(exc)
            return replace(
                recorded,
                scored_on=f"{own}, since {candidate.version} cannot score {holdout.source} "
                f"({reason})",
            )
        try:
            champion_scores = holdout.scores(champion_model)
        except DataError as exc:  # e.g. the champion tests a column these rows lack
            reason = _first_sentence(exc)
            return replace(
                recorded,
                scored_on=f"{own}, since the champion cannot score {holdout.source} ({reason})",
                champion_refused=reason,
            )
        in_sample = (
            f" (no holdout: {candidate.version} was fitted on them, so the comparison favours it)"
            if holdout.kind == "training"
            else ""
        )
        compared, why = _fallback(metric, challenger_scores)
        seen = "" if in_sample else self._seen_by_champion(candidate, champion)
        if not in_sample and not seen:
            seen = self._rows_changed(candidate, champion, holdout)
        if champion_scores.get("n_flagged") == 0 and champion_scores.get("n_rules"):
            seen += (  # e.g. categories an earlier release read as "58.0", now "58"
                "; the champion flags none of these rows: its rules may be too narrow for "
                "them (rules learned from few positive rows), or test values these rows write "
                f"otherwise (`libre score {candidate.pipeline}` on them names unseen "
                "categories)"
            )
        return _Compared(
            metric_value(challenger_scores.get(compared)),
            metric_value(champion_scores.get(compared)),
            holdout.n_rows,
            f"both scored on the same {holdout.n_rows:,} rows, {holdout.source}{in_sample}{seen}",
            champion_scores,
            holdout.kind,
            compared,
            why,
        )

    def _rows_changed(
        self, candidate: ModelVersion, champion: ModelVersion, holdout: Holdout
    ) -> str:
        """What the comparison must say when many of ``holdout``'s rows are not in the
        champion's data as they were, far more than the data grew by: rows changed since (a
        column rewritten, x 1.3 + 3), so each took a new side of the split, and the champion
        trained on most of them in their earlier values. Equal split keys keep only unchanged
        rows on their side; "both scored on the same rows" said nothing of the others (113 of
        135 had been its training rows). Empty when the champion's loaded rows are gone from
        the store, the data are the same, or rows are split by an id (``split_by``)."""
        if champion.data_fingerprints & candidate.data_fingerprints:
            return ""
        try:  # rows split by an id keep their side whatever their values
            if self.spec(candidate.pipeline, candidate.version).get("split_by"):
                return ""
        except (LibreError, OSError, AttributeError):
            return ""
        rows = holdout.X
        if not isinstance(rows, pd.DataFrame) or not len(rows):
            return ""
        before = self._loaded_rows(champion, [str(c) for c in rows.columns])
        if before is None:
            return ""
        common = [c for c in rows.columns if c in before.columns]
        try:
            after = self.load_contract(candidate.pipeline, candidate.version)
        except (LibreError, OSError):
            after = None
        if not common or after is None or not after.n_training_rows:
            return ""
        before = before[common]
        unmatched = int((~np.isin(_row_hashes(rows[common]), _row_hashes(before))).sum())
        n_before, n_now = len(before), after.n_training_rows + len(rows)
        grown = max(0, n_now - n_before) * len(rows) / n_now  # new rows expected among these
        if unmatched <= 2 * grown + max(10, 0.1 * len(rows)):
            return ""
        # rows replaced (a rolling window) look alike: the champion never saw those, so the
        # decision says what is known, not that the comparison favours it
        return (
            f"; {unmatched:,} of these {len(rows):,} rows are not in the champion's data as "
            f"they were, although the data grew by {max(0, n_now - n_before):,} rows (from "
            f"{n_before:,} to {n_now:,}): rows were replaced or changed since. Rows changed "
            "(a column rewritten) take a new side of the split, and the champion trained on "
            "many of them in their earlier values, which favours it"
        )

    def _loaded_rows(self, version: ModelVersion, columns: list) -> pd.DataFrame | None:
        """``columns`` of the rows a version's run loaded (its ``load`` stage in the store),
        if still there and at most :data:`ROWS_COMPARED` rows."""
        import pyarrow.parquet as pq

        run = self.root / RUNS_DIR / version.pipeline / version.run_id / RUN_FILE
        try:
            stages = json.loads(run.read_text(encoding="utf-8")).get("stages") or []
            (load,) = [s for s in stages if s.get("stage") == "load"]
            path = ArtifactStore(self.root).path_for("load", load["key"])
            if not path.is_file() or pq.ParquetFile(path).metadata.num_rows > ROWS_COMPARED:
                return None
            present = [c for c in columns if c in pq.read_schema(path).names]
            return pd.read_parquet(path, columns=present) if present else None
        except (LibreError, OSError, ValueError, TypeError, KeyError, AttributeError):
            return None

    def _keys_read_otherwise(self, candidate: ModelVersion, champion: ModelVersion) -> list[str]:
        """The columns one version read as numbers and the other as text (a few stray texts
        among a column's numbers): their values key the rows otherwise, so equal split keys no
        longer mean equal sides. From the versions' data contracts (the dtypes read)."""
        try:
            before = self.load_contract(champion.pipeline, champion.version)
            after = self.load_contract(candidate.pipeline, candidate.version)
        except (LibreError, OSError):
            return []
        if before is None or after is None:
            return []
        then = {c.name: _read_as_number(c.dtype) for c in before.columns}
        now = {c.name: _read_as_number(c.dtype) for c in after.columns}
        return [
            name
            for name, number in now.items()
            if then.get(name) is not None and number is not None and then[name] != number
        ]

    def _seen_by_champion(self, candidate: ModelVersion, champion: ModelVersion) -> str:
        """What the comparison must say when the champion may have trained on some of the
        new version's holdout rows: it was trained on other data (earlier rows of a growing
        table stay in it) or on another split of the same data. Empty when its split was the
        same: equal split keys (both versions' rows held out by their values, with the same
        fraction, seed and columns) mean that a row both data versions hold was on the same
        side in both."""
        if champion.split and champion.split == candidate.split:
            retyped = self._keys_read_otherwise(candidate, champion)
            if not retyped:
                return ""
            return (
                f"; the champion was trained on another split, so some of these rows were "
                f"most likely its training rows: a row's side follows from its values as read, "
                f"and {', '.join(map(repr, retyped))} {'is' if len(retyped) == 1 else 'are'} "
                "read as text in one version and as numbers in the other (that favours it)"
            )
        if not champion.data_fingerprints & candidate.data_fingerprints:
            how = "other data, which may include some of these rows"
        elif champion.split or candidate.split:  # keys differ, or one version predates them
            how = SAME_DATA_OTHER_SPLIT
        else:
            keys = ("holdout_fraction", "split_seed")
            try:
                before = self.spec(champion.pipeline, champion.version)
                after = self.spec(candidate.pipeline, candidate.version)
            except (LibreError, OSError):
                return ""
            if all(before.get(k) == after.get(k) for k in keys):
                return ""
            how = SAME_DATA_OTHER_SPLIT
        return f"; the champion was trained on {how} (that favours it)"

    @staticmethod
    def _decide(
        candidate: ModelVersion,
        champion: ModelVersion | None,
        tolerance: float,
        metric: str,
        compared: _Compared,
        changed: str | None = None,
        min_accuracy: float | None = None,
        twin: ModelVersion | None = None,
        store: str = "",
    ) -> PromotionDecision:
        tolerance = float(tolerance)
        value, best = compared.value, compared.best
        rows = "holdout" if compared.kind == "holdout" else "in-sample (training)"
        metric = compared.metric
        why = f" ({compared.why})" if compared.why else ""

        def decision(promoted: bool, reason: str, delta: float | None = None):
            rescored = champion is not None and champion.version != candidate.version
            return PromotionDecision(
                promoted,
                reason,
                champion,
                delta,
                candidate.version,
                metric,
                tolerance,
                value=value,
                champion_value=best,
                rows=compared.rows if rescored else None,
                scored_on=compared.scored_on,
                champion_scores=compared.champion_scores,
            )

        name = candidate.version
        if champion is not None and champion.version == name:
            return decision(True, f"{name} is already the champion.", 0.0)
        if candidate.retired_by_hand:
            return decision(
                False,
                f"{name} was {candidate.reason} (a rollback), and this run reproduced it (the "
                "same model, data and spec): a run does not undo a promotion by hand; `libre "
                f"models promote {candidate.pipeline} {name}{store}` makes it the champion again",
            )
        if twin is not None and (champion is None or champion.version != twin.version):
            return decision(
                False,
                f"{name} holds the same model, trained on the same data, as {twin.version}, "
                f"which was {twin.reason} (a rollback): a run does not undo a promotion by "
                f"hand; `libre models promote {candidate.pipeline} {name}{store}` makes it the "
                "champion",
            )
        if not candidate.validation_passed:
            failed = candidate.validation.get("n_failed")
            detail = f" ({counted(failed, 'expectation')} failed)" if failed else ""
            return decision(
                False, f"data validation failed{detail}; a model is never promoted on bad data"
            )
        if value is None:
            return decision(False, f"{rows} {metric} is missing or not a number")
        accuracy = candidate.metrics.get("accuracy")
        if min_accuracy is not None:
            floor = f"the majority-class answer's {min_accuracy:.3f} on the same rows"
            if not isinstance(accuracy, (int, float)):
                return decision(
                    False,
                    f"{rows} accuracy is missing: not compared with {floor} "
                    "(promotion.beat_majority)",
                )
            if accuracy + FLOAT_SLACK < min_accuracy:
                shown, shown_floor = apart(accuracy, min_accuracy)
                return decision(
                    False,
                    f"{rows} accuracy {shown} is below the majority-class answer's "
                    f"{shown_floor} on the same rows (promotion.beat_majority)",
                )
            if candidate.metrics.get("n_rules") == 0:  # no rule: the majority answer itself
                return decision(
                    False,
                    "it has no rules: it answers the negative class everywhere, which "
                    "promotion.beat_majority asks a version to improve on",
                )
            if candidate.metrics.get("n_flagged") == 0:  # the same answer on these rows
                return decision(
                    False,
                    f"it flags none of the {rows} rows: there it answers the negative class "
                    "everywhere, which promotion.beat_majority asks a version to improve on",
                )
        if champion is None:
            return decision(
                True,
                f"first version with passing validation ({rows} {metric} "
                f"{value:.3f}{why}); no champion yet",
            )
        if changed and OTHER_FILE in changed:
            return decision(
                False,
                f"the champion {champion.version} answers another question ({changed}): two "
                f"specs may name the pipeline {candidate.pipeline!r} in one store, and each run "
                "would take over the other's champion. Give each spec its own `name:`; if this "
                "pipeline did move to new data and a new question, `libre models promote "
                f"{candidate.pipeline} {name}{store}` makes this version the champion",
            )
        if changed:
            return decision(
                True,
                f"the question changed since the champion {champion.version} ({changed}): "
                f"its {rows} {metric} {value:.3f} measures another class, so the two are not "
                "compared; the first model of the new question becomes champion",
            )
        if compared.champion_refused:
            # the rows changed so that the champion's rules cannot read them: a column full of
            # texts trained a version without it, which its recorded figures promoted
            return decision(
                False,
                f"the champion {champion.version} cannot score this version's holdout rows "
                f"({compared.champion_refused}): the data, or the spec's features, changed in "
                "a way its rules cannot read, so the two are not compared and the champion "
                "stays. Check the data and the spec; if the change is intended, `libre models "
                f"promote {candidate.pipeline} {name}{store}` makes this version the champion",
            )
        if best is None:
            return decision(
                True,
                f"the champion {champion.version} has no holdout {metric} to compare with; "
                f"{rows} {metric} {value:.3f}{why}",
            )
        delta = value - best
        # the change as the two figures read once rounded (0.639 - 0.552 = +0.087, not the
        # unrounded +0.086), as the changes table beside it shows it
        change = float(f"{value:.3f}") - float(f"{best:.3f}")
        if compared.kind == "training":
            return decision(
                False,
                f"{rows} {metric} {value:.3f} against the champion {champion.version}'s "
                f"{best:.3f} (change {change:+.3f}); {compared.scored_on}{why}: without a holdout "
                "(holdout_fraction: 0) it is not promoted automatically; `libre models promote "
                f"{candidate.pipeline} {name}{store}` promotes it",
                delta,
            )
        promoted = value + FLOAT_SLACK >= best - tolerance
        tol = f" minus tolerance {tolerance:g}" if tolerance else ""
        verdict = "is not below" if promoted else "is below"
        favoured = not promoted and "(that favours it)" in compared.scored_on
        way_out = (  # every later run on these rows would be judged alike
            f"; if this version is the better one, `libre models promote {candidate.pipeline} "
            f"{name}` makes it the champion"
            if favoured
            else ""
        )
        return decision(
            promoted,
            f"{rows} {metric} {value:.3f} {verdict} the champion {champion.version}'s "
            f"{best:.3f}{tol} (change {change:+.3f}); {compared.scored_on}{why}{way_out}",
            delta,
        )

    def promote(
        self,
        pipeline: str,
        version: str,
        *,
        tolerance: float = 0.0,
        metric: str = "f1",
        holdout: Holdout | None = None,
        min_accuracy: float | None = None,
    ) -> PromotionDecision:
        """Decide on ``version`` and record the outcome, under the pipeline's lock.

        Promoted: the champion pointer is replaced (the commit point), then the version's
        status becomes ``champion`` and the old champion's ``retired``. Not promoted: the
        version's status becomes ``challenger-rejected`` with the reason; the champion stays.

        Parameters
        ----------
        pipeline, version : str
            The version to decide on.
        tolerance : float, default 0.0
            How far below the champion's metric the version may be and still be promoted.
        metric : str, default "f1"
            The recorded metric compared (higher is better); a metric the versions do not
            record is not refused: the decision says it is missing.
        holdout : Holdout, optional
            The version's holdout rows, which both models are scored on (see :meth:`decide`).
        min_accuracy : float in [0, 1], optional
            The majority-class answer's accuracy on the holdout: a version below it is not
            promoted.

        Returns
        -------
        PromotionDecision
            Whether it was promoted, why, and the scores compared.

        Raises
        ------
        RegistryError
            An unknown pipeline or version, a bad ``tolerance``, or a store that cannot be
            written.
        ParameterError
            A ``metric`` that is not a name, a ``holdout`` that is not a :class:`Holdout`, a
            ``min_accuracy`` outside [0, 1].
        """
        _check_tolerance(tolerance)
        with self._lock(pipeline):
            candidate, champion, decision = self._judged(
                pipeline, version, tolerance, metric, holdout, min_accuracy
            )
            stamp = _now()
            try:
                if not decision.promoted:
                    if not candidate.retired_by_hand:  # it keeps the rollback's reason
                        self._set_status(candidate, REJECTED, decision.reason, stamp)
                elif champion is None or champion.version != candidate.version:
                    self._crown(pipeline, candidate, champion, decision.reason, stamp)
                self._repair(pipeline)
            except OSError as exc:
                raise RegistryError(
                    f"Could not record the decision on {pipeline}/{version}: "
                    f"{str(exc).rstrip('.')}."
                ) from exc
        logger.info(
            "%s/%s %s: %s",
            pipeline,
            version,
            "promoted" if decision.promoted else "not promoted",
            decision.reason,
        )
        return decision

    def set_champion(self, pipeline: str, version: str, reason: str = "") -> ModelVersion:
        """Make ``version`` the champion by hand, without comparing scores: a rollback, or the
        way out when the champion was damaged. The version's files must pass their checksums
        and its data validation must have passed; the old champion, if it can be read, is
        retired. Under the pipeline's lock, like :meth:`promote`.

        Parameters
        ----------
        pipeline, version : str
            The pipeline and the version id to promote.
        reason : str
            Why, recorded with the promotion (default: "promoted by hand").

        Returns
        -------
        ModelVersion
            The new champion.
        """
        with self._lock(pipeline):
            candidate = self.get(pipeline, version)
            self.load_model(pipeline, candidate.version)  # checksums: refuse a damaged version
            self.load_contract(pipeline, candidate.version)
            if not candidate.validation_passed:
                raise RegistryError(
                    f"{pipeline}/{candidate.version} failed data validation when it was trained; "
                    "a model trained on bad data is never made the champion."
                )
            try:
                old = self.champion(pipeline)
            except RegistryError as exc:  # the damage this command repairs
                logger.warning("replacing a damaged champion: %s", exc)
                old = None
            text = "promoted by hand" + (f": {reason}" if reason else "")
            if old is not None and old.version == candidate.version:
                return old
            stamp = _now()
            try:
                self._crown(pipeline, candidate, old, text, stamp, HAND)
                self._repair(pipeline)
            except OSError as exc:
                raise RegistryError(
                    f"Could not make {pipeline}/{candidate.version} the champion: {exc}."
                ) from exc
        logger.info("%s/%s made the champion by hand", pipeline, candidate.version)
        return self.get(pipeline, candidate.version)

    def _crown(
        self,
        pipeline: str,
        new: ModelVersion,
        old: ModelVersion | None,
        reason: str,
        stamp: str,
        how: str = "",
    ) -> None:
        """Point the champion at ``new`` (the commit point), then record the statuses: ``new``
        champion, ``old`` retired ("replaced by <new><how>")."""
        if not (new.path / VERSION_FILE).is_file() or not new.model_path.is_file():
            raise RegistryError(f"Refusing to point the champion at incomplete {new.path}.")
        previous = self._readable_pointer(pipeline) or {}
        history = list(previous.get("history", []))
        history.append({"version": new.version, "promoted_at": stamp, "reason": reason})
        pointer = {
            "pipeline": pipeline,
            "version": new.version,
            "model_sha256": new.model_sha256,
            "promoted_at": stamp,
            "reason": reason,
            "previous": old.version if old is not None else None,
            "history": history,
        }
        atomic_write_text(self.pipeline_dir(pipeline) / CHAMPION_FILE, _json_text(pointer))
        self._set_status(new, CHAMPION, reason, stamp)
        if old is not None:
            self._set_status(old, RETIRED, f"replaced by {new.version}{how}", stamp)

    def _set_status(self, entry: ModelVersion, status: str, reason: str, stamp: str) -> None:
        updated = replace(entry, status=status, reason=reason, decided_at=stamp)
        atomic_write_text(entry.path / VERSION_FILE, _json_text(updated._record()))

    def _repair(self, pipeline: str) -> None:
        """Write the statuses a crashed promotion left stale (stored vs. pointer-derived)."""
        directory = self.pipeline_dir(pipeline)
        for entry in self.versions(pipeline):
            stored = _read_json(entry.path / VERSION_FILE, "version record").get("status")
            if stored != entry.status:  # _load derived the status from the pointer
                self._set_status(entry, entry.status, entry.reason, entry.decided_at or _now())
                logger.info("repaired the status of %s/%s", directory.name, entry.version)

    def history(self, pipeline: str) -> list[dict[str, Any]]:
        """Every promotion so far, oldest first: version, promoted_at, reason."""
        pointer = self._pointer(pipeline)
        return list(pointer.get("history", [])) if pointer else []

    # ------------------------------------------------------------------ comparing

    def changes(
        self,
        pipeline: str,
        old: str | ModelVersion | None,
        new: str | ModelVersion,
        decision: PromotionDecision | None = None,
    ) -> ChampionChanges | None:
        """Rules and metrics of ``new`` against ``old`` (e.g. the champion before promoting);
        None when there is no ``old``, or it is ``new`` itself. Feeds the report's "Changes
        since the champion". With the ``decision`` on ``new`` against ``old``, the scores are
        those it compared (the champion rescored on ``new``'s holdout) and the section says
        which rows they are on."""
        if old is None:
            return None
        old_v = old if isinstance(old, ModelVersion) else self.get(pipeline, old)
        new_v = new if isinstance(new, ModelVersion) else self.get(pipeline, new)
        if old_v.version == new_v.version:  # a re-run that reused the champion: nothing changed
            return None
        old_model = self.load_model(pipeline, old_v.version)
        new_model = self.load_model(pipeline, new_v.version)
        old_rules, new_rules = old_model.rules_, new_model.rules_
        sentence = None
        before, scored_on = old_v.metrics, None
        if decision is not None:
            outcome = "became the champion" if decision.promoted else "was not promoted"
            sentence = f"{new_v.version} {outcome}: {decision.reason.rstrip('.')}."
            if decision.previous is not None and decision.previous.version == old_v.version:
                before = decision.champion_scores or old_v.metrics
                scored_on = decision.scored_on or None
        return ChampionChanges(
            old_version=old_v.version,
            new_version=new_v.version,
            diff=diff_rules(old_rules, new_rules),
            deltas=metric_deltas(before, new_v.metrics),
            decision=sentence,
            scored_on=scored_on,
            columns=column_changes(old_model.columns_, new_model.columns_, new_rules),
        )

    # ------------------------------------------------------------------ housekeeping

    def cleanup_temp(self, pipeline: str, max_age_s: float = STALE_AFTER_S) -> list[Path]:
        """Remove the temp folders crashed registrations of ``pipeline`` left behind.

        Only folders last modified over ``max_age_s`` seconds ago whose writer is not a live
        process on this host (:func:`~libre_lib.ops.files.remove_stale`), and under the
        pipeline's lock, so no registration is in progress meanwhile.

        Parameters
        ----------
        pipeline : str
            The pipeline whose registry to tidy.
        max_age_s : float
            Keep temp folders modified more recently than this many seconds ago.

        Returns
        -------
        list of Path
            The temp folders removed.
        """
        directory = self.pipeline_dir(pipeline)
        if not directory.is_dir():
            return []
        with self._lock(pipeline):
            temps = [
                e for e in directory.iterdir() if e.name.startswith(TEMP_PREFIX) and e.is_dir()
            ]
            return remove_stale(
                temps, max_age_s, lambda entry: shutil.rmtree(entry, ignore_errors=True)
            )


@contextlib.contextmanager
def _exclusive_file_lock(path: Path, pipeline: str) -> Iterator[None]:  # pragma: no cover
    """Fallback lock without ``flock``: create ``path`` with ``O_EXCL``, poll while it exists."""
    deadline = time.monotonic() + LOCK_TIMEOUT_S
    while True:
        try:
            fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
            break
        except FileExistsError:
            if time.monotonic() > deadline:
                raise RegistryError(
                    f"The registry of {pipeline!r} stayed locked for {LOCK_TIMEOUT_S:.0f} s. If "
                    f"no other training run is active, delete {path}."
                ) from None
            time.sleep(0.05)
    try:
        yield
    finally:
        os.close(fd)
        path.unlink(missing_ok=True)


def _first_sentence(exc: BaseException, limit: int = 160) -> str:
    """An error's first sentence, for a promotion reason (its advice is for another reader:
    "The model learned it as numbers..." cut at 160 characters read as a broken reason). A
    sentence ends at a full stop followed by a space and a capital letter, outside quotes and
    brackets (so a column named ``No. of visits`` does not end it); a text without such an end
    within ``limit`` characters is shortened."""
    text = " ".join(str(exc).split()) or type(exc).__name__
    depth, quoted = 0, None
    for i, char in enumerate(text[:limit]):
        if quoted:
            quoted = None if char == quoted else quoted
        elif char in "'\"":
            quoted = char
        elif char in "([{":
            depth += 1
        elif char in ")]}":
            depth = max(depth - 1, 0)
        elif char == "." and not depth and text[i + 1 : i + 3].strip()[:1].isupper():
            if text[i + 1 : i + 2] == " ":
                return text[:i]
    return shorten(text.rstrip("."), limit)


def _check_promotion_args(metric, holdout, min_accuracy) -> None:
    """Refuse, naming the parameter, arguments of the wrong kind (a metric the versions do not
    record is not refused: the decision says it is missing)."""
    if not isinstance(metric, str) or not metric:
        raise ParameterError(f"metric must be the name of a recorded metric; got {metric!r}.")
    if min_accuracy is not None and (
        isinstance(min_accuracy, bool | np.bool_)
        or not isinstance(min_accuracy, numbers.Real)
        or not 0 <= float(min_accuracy) <= 1
    ):
        raise ParameterError(f"min_accuracy must be a number in [0, 1]; got {min_accuracy!r}.")
    if holdout is not None and not isinstance(holdout, Holdout):
        raise ParameterError(
            f"holdout must be a Holdout (the version's holdout rows and labels); got "
            f"{type(holdout).__name__}."
        )
