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

import logging
import os
import re
import shutil
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from ..errors import counted
from .artifacts import ArtifactStore
from .files import STALE_AFTER_S
from .registry import ModelRegistry

__all__ = ["RUNS_DIR", "RUN_FILE", "Cleanup", "clean_store", "incomplete_runs"]

logger = logging.getLogger(__name__)

RUNS_DIR = "runs"
RUN_FILE = "run.json"
"""The summary a training run writes last in its run folder, before the promotion."""

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
