"""Removing what crashed runs left in a store, once no live run can still own it.

A process killed mid-run cannot clean up after itself. It may leave:

* temp files of atomic writes (``.<name>.tmp-<pid>-<uuid>``) anywhere under the store: stage
  artifacts and their sidecars, run-folder files, the champion pointer;
* temp version folders in the registry (``models/<pipeline>/.tmp-v…``);
* run folders without ``run.json`` (``runs/<pipeline>/<stamp>-<run tail>``): the run died
  between writing its first file and its summary.

Readers ignore all of these; :func:`clean_store` removes them once they were last modified over
:data:`~libre_lib.ops.files.STALE_AFTER_S` ago and (for temps, whose names carry their writer's
pid) their writer is not a live process on this host. ``libre train`` calls it when a training
run starts; a scoring run removes its output's stale temps the same way
(:func:`~libre_lib.ops.files.remove_stale_temps`).
"""

from __future__ import annotations

import json
import logging
import os
import re
import shutil
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from ..errors import ArtifactError, counted
from .artifacts import SIDECAR_SUFFIX, ArtifactStore, _decode_metadata
from .files import RUN_FILE, RUNS_DIR, STALE_AFTER_S
from .registry import ModelRegistry

__all__ = [
    "RUNS_DIR",
    "RUN_FILE",
    "Cleanup",
    "Pruned",
    "clean_store",
    "finished_runs",
    "incomplete_runs",
    "prune_store",
]

logger = logging.getLogger(__name__)


# <stamp>-<run tail> (tasks/common.run_folder); earlier releases used 8 hex digits of the id.
_RUN_NAME = re.compile(r"\d{8}-\d{6}-[0-9a-f]{8,32}")
_PIPELINE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,127}")


@dataclass(frozen=True)
class Cleanup:
    """What :func:`clean_store` removed."""

    temp_files: tuple[Path, ...] = ()
    temp_versions: tuple[Path, ...] = ()
    incomplete_runs: tuple[Path, ...] = ()

    @property
    def paths(self) -> tuple[Path, ...]:
        return self.temp_files + self.temp_versions + self.incomplete_runs

    def __str__(self) -> str:
        return (
            f"{counted(len(self.temp_files), 'temp file')}, "
            f"{counted(len(self.temp_versions), 'temp version folder')}, "
            f"{counted(len(self.incomplete_runs), 'run folder')} without {RUN_FILE}"
        )


def _last_write(folder: Path) -> float:
    """The latest modification time of ``folder`` and its entries."""
    latest = folder.stat().st_mtime
    for entry in folder.iterdir():
        try:
            latest = max(latest, entry.stat().st_mtime)
        except FileNotFoundError:
            continue
    return latest


def incomplete_runs(root: str | os.PathLike[str]) -> Iterator[Path]:
    """Run folders under ``root`` without ``run.json`` (in progress, or left by a crash)."""
    runs = Path(root) / RUNS_DIR
    if not runs.is_dir():
        return
    for pipeline in sorted(runs.iterdir()):
        if not (_PIPELINE.fullmatch(pipeline.name) and pipeline.is_dir()):
            continue
        for run in sorted(pipeline.iterdir()):
            if _RUN_NAME.fullmatch(run.name) and run.is_dir() and not (run / RUN_FILE).exists():
                yield run


def clean_store(root: str | os.PathLike[str], max_age_s: float = STALE_AFTER_S) -> Cleanup:
    """Remove what crashed runs left under the store ``root`` (see the module docstring).

    Parameters
    ----------
    root : path-like
        The store root (artifacts, ``models/``, ``runs/``).
    max_age_s : float
        Keep anything written to more recently than this many seconds ago: a live run, here or
        on another host of a shared file system, may still be writing it.

    Returns
    -------
    Cleanup
        The paths removed, by kind.
    """
    root = Path(root)
    if not root.is_dir():
        return Cleanup()
    temp_files = ArtifactStore(root).cleanup_temp(max_age_s)
    registry = ModelRegistry(root)
    temp_versions = [
        path
        for pipeline in registry.pipelines()
        for path in registry.cleanup_temp(pipeline, max_age_s)
    ]
    cutoff = time.time() - max_age_s
    runs = []
    for run in incomplete_runs(root):
        try:
            if _last_write(run) >= cutoff:
                continue
        except FileNotFoundError:  # removed meanwhile (by a concurrent clean-up)
            continue
        shutil.rmtree(run, ignore_errors=True)
        runs.append(run)
    done = Cleanup(tuple(temp_files), tuple(temp_versions), tuple(runs))
    if done.paths:
        logger.info(
            "removed what crashed runs left in %s (untouched for over %.0f h): %s",
            root,
            max_age_s / 3600,
            done,
        )
    return done


# --------------------------------------------------------------------------- retention

#: ``prune_store`` keeps this many of a pipeline's newest finished runs by default.
KEEP_RUNS = 20
#: ... and any stage file written less than this long ago (a run in progress may be using
#: a file no finished run lists yet).
PRUNE_MIN_AGE_S = 24 * 3600.0


@dataclass(frozen=True)
class Pruned:
    """What :func:`prune_store` removed (or, in a dry run, would remove)."""

    runs: tuple[Path, ...] = ()
    stage_files: tuple[Path, ...] = ()
    quarantined: tuple[Path, ...] = ()
    n_bytes: int = 0

    def __str__(self) -> str:
        return (
            f"{counted(len(self.runs), 'run folder')}, "
            f"{counted(len(self.stage_files), 'stage file')}, "
            f"{counted(len(self.quarantined), 'quarantined file')} "
            f"({self.n_bytes / 2**20:,.1f} MiB)"
        )


def _size(path: Path) -> int:
    if path.is_dir():
        return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())
    return path.stat().st_size


def finished_runs(root: str | os.PathLike[str], pipeline: str) -> list[Path]:
    """A pipeline's run folders with ``run.json``, oldest first (by the second in their name,
    then by when ``run.json`` was written)."""
    runs = Path(root) / RUNS_DIR / pipeline
    found = [p for p in runs.glob("*") if _RUN_NAME.fullmatch(p.name) and (p / RUN_FILE).is_file()]
    return sorted(found, key=lambda p: (p.name[:15], (p / RUN_FILE).stat().st_mtime_ns))


def _summary(run: Path) -> dict:
    """A finished run's ``run.json`` ({} if it cannot be read)."""
    try:
        summary = json.loads((run / RUN_FILE).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return {}
    return summary if isinstance(summary, dict) else {}


def _promoted(run: Path, version: str) -> bool:
    """Whether ``run`` promoted ``version`` (a later run can promote a version an earlier run
    registered: both stay while it is the champion). A run that found it the champion already
    moved nothing (every scheduled run on unchanged data does; ``PromotionDecision.unchanged``):
    it is pruned as any other."""
    summary = _summary(run)
    decision = summary.get("decision")
    previous = decision.get("previous") if isinstance(decision, dict) else None
    return (
        summary.get("model_version") == version
        and summary.get("promoted") is True
        and previous != version
    )


def _stages_listed(run: Path) -> set[tuple[str, str]]:
    """(stage folder, file name) of every stage file a finished run's ``run.json`` lists
    (by name, not by path: the store may have moved since)."""
    listed = _summary(run).get("stages")
    out = set()
    for entry in listed if isinstance(listed, list) else ():
        path = entry.get("path") if isinstance(entry, dict) else None
        if isinstance(path, str) and path:
            out.add((Path(path).parent.name, Path(path).name))
    return out


def _written_by(path: Path) -> str | None:
    """The pipeline a stage file's footer names (None if it names none or cannot be read)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        name = _decode_metadata(pq.read_schema(path).metadata).get("pipeline")
    except (OSError, pa.ArrowException, ValueError):
        return None
    return name if isinstance(name, str) else None


def _check_writable(folders, pipeline: str) -> None:
    """Refuse, before anything is removed, to prune a store whose ``folders`` cannot be
    written (a read-only mount, another user's store): rmtree would stop half-way."""
    for folder in folders:
        if folder.is_dir() and not os.access(folder, os.W_OK | os.X_OK):
            raise ArtifactError(
                f"Cannot prune {pipeline!r}: {folder} cannot be written (read-only, or not "
                "yours), so nothing was removed. Run prune as a user who can write the store."
            )


def prune_store(
    root: str | os.PathLike[str],
    pipeline: str,
    keep_runs: int = KEEP_RUNS,
    min_age_s: float = PRUNE_MIN_AGE_S,
    dry_run: bool = False,
) -> Pruned:
    """Remove a pipeline's older run folders, then its stage files no remaining run lists.

    Kept: the ``keep_runs`` newest finished runs of ``pipeline`` and the runs that trained its
    champion and promoted it; every run of the other pipelines in the store; the model registry
    (``models/``) whole. Then a stage file (and its checksum sidecar) goes when no remaining
    finished run of any pipeline lists it, ``pipeline`` wrote it (its footer says so; a file of
    another pipeline, such as one a ``libre validate`` wrote, is that pipeline's to prune), it
    was written over ``min_age_s`` ago, and its stage is one runs list (so a stage kind no run
    records is left alone); quarantined ``*.corrupt-*`` files go once as old. Everything removed
    is a cache: a later run that needs it computes it again.

    Parameters
    ----------
    root : path-like
        The store root.
    pipeline : str
        The pipeline whose runs are pruned.
    keep_runs : int
        How many of its newest finished runs to keep (at least 1).
    min_age_s : float
        Keep any stage or quarantined file written more recently than this.
    dry_run : bool
        Only say what would be removed.

    Returns
    -------
    Pruned
    """
    from ..errors import ParameterError

    if isinstance(keep_runs, bool) or not isinstance(keep_runs, int) or keep_runs < 1:
        raise ParameterError(
            f"keep_runs (--keep-runs) must be an integer of at least 1; got {keep_runs!r}."
        )
    root = Path(root)
    runs = finished_runs(root, pipeline)
    champion = ModelRegistry(root).champion(pipeline) if (root / "models").is_dir() else None
    kept = set(runs[-keep_runs:])
    if champion is not None:  # the run that registered the champion, and those that promoted it
        kept |= {r for r in runs if r.name == champion.run_id or _promoted(r, champion.version)}
    removed_runs = [r for r in runs if r not in kept]
    remaining = [
        run
        for other in sorted((root / RUNS_DIR).glob("*"))
        if other.is_dir()
        for run in finished_runs(root, other.name)
        if run not in removed_runs
    ]
    listed: set[tuple[str, str]] = set()
    for run in remaining:
        listed |= _stages_listed(run)
    kinds = {kind for kind, _ in listed}
    cutoff = time.time() - min_age_s
    stage_files, quarantined = [], []
    for folder in sorted(p for p in root.iterdir() if p.is_dir() and p.name in kinds):
        for path in folder.iterdir():
            if not path.is_file() or path.stat().st_mtime >= cutoff:
                continue
            if ".corrupt-" in path.name:
                quarantined.append(path)
            elif (
                path.suffix == ".parquet"
                and (folder.name, path.name) not in listed
                and _written_by(path) in (pipeline, None)
            ):
                stage_files.append(path)
    sidecars = [p.with_name(p.name + SIDECAR_SUFFIX) for p in stage_files]
    sidecars = [p for p in sidecars if p.is_file()]
    n_bytes = sum(_size(p) for p in [*removed_runs, *stage_files, *sidecars, *quarantined])
    done = Pruned(tuple(removed_runs), tuple(stage_files), tuple(quarantined), n_bytes)
    if dry_run:
        return done
    folders = {p.parent for p in [*removed_runs, *stage_files, *quarantined]}
    _check_writable([*folders, *(r for r in removed_runs if not r.is_symlink())], pipeline)
    for run in removed_runs:  # a link is removed, never what it points to; an error is said
        try:
            if run.is_symlink():
                run.unlink(missing_ok=True)
            else:
                shutil.rmtree(run)
        except OSError as exc:
            raise ArtifactError(
                f"Could not remove the run folder {run} ({exc.strerror or exc}): prune stopped "
                "there; the older runs before it are removed, it and the later ones are kept "
                "(some of its files may be gone)."
            ) from None
    for path in [*stage_files, *sidecars, *quarantined]:  # the file first: a file without its
        path.unlink(missing_ok=True)  # sidecar is never trusted, a sidecar alone is ignored
    logger.info("pruned %s from %s: %s", pipeline, root, done)
    return done
