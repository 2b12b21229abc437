"""Atomic, durable file writes on the local file system.

A new file is written under a hidden temp name in its final directory
(``.<name>.tmp-<pid>-<uuid>``), fsynced and ``os.replace``-d onto the final name, then the
directory is fsynced, so readers see either the old file or the whole new one and a crash leaves
at most a temp file (:func:`is_temp_name` tells them apart; :func:`remove_stale` clears them
once they are older than :data:`STALE_AFTER_S` and their writer is gone). The artifact store,
the model registry and batch scoring all write this way.
"""

from __future__ import annotations

import contextlib
import os
import re
import time
import uuid
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import BinaryIO

from ..errors import ArtifactError

__all__ = [
    "STALE_AFTER_S",
    "atomic_write_bytes",
    "atomic_write_text",
    "commit_temp",
    "fsync_dir",
    "fsync_file",
    "is_temp_name",
    "process_alive",
    "remove_stale",
    "remove_stale_temps",
    "temp_path",
    "unlink_quietly",
    "write_failed",
    "write_new_file",
    "write_temp",
    "writer_pid",
]

STALE_AFTER_S = 6 * 3600.0
#: A store's folder of run folders (``runs/<pipeline>/<run>``).
RUNS_DIR = "runs"
RUN_FILE = "run.json"
"""The summary a training run writes last in its run folder, before the promotion."""
"""Seconds since its last write after which a crash's leftover may be removed.

It bounds how long one write goes without touching its temp, which is far shorter: a temp file
is written in one go and renamed, a registry version folder is filled in milliseconds, a run
folder gets its ``run.json`` seconds after its first file, and a scoring output's temp grows
batch after batch. A temp whose name carries the pid of a live process on this host is kept
whatever its age (:func:`remove_stale`).
"""

_TEMP_NAME = re.compile(r"\..+\.tmp-\d+-[0-9a-f]{32}")
_WRITER = re.compile(r"-(\d+)-[0-9a-f]{32}")  # the pid in a temp file or folder name


def temp_path(final: Path) -> Path:
    """Return a unique hidden temp name next to ``final`` (same directory, same file system)."""
    return final.with_name(f".{final.name}.tmp-{os.getpid()}-{uuid.uuid4().hex}")


def is_temp_name(name: str) -> bool:
    """Whether ``name`` is a file name made by :func:`temp_path`."""
    return _TEMP_NAME.fullmatch(name) is not None


def writer_pid(name: str) -> int | None:
    """The pid of the process that made the temp file or folder ``name``, or None."""
    match = _WRITER.search(name)
    return int(match.group(1)) if match and match.end() == len(name) else None


def process_alive(pid: int) -> bool:
    """Whether ``pid`` is a running process on this host (False where that cannot be asked)."""
    if os.name == "nt":  # os.kill(pid, 0) would send CTRL_C_EVENT there
        return False
    try:
        os.kill(pid, 0)
    except PermissionError:
        return True  # it exists, under another user
    except (OSError, OverflowError):
        return False
    return True


def fsync_file(path: Path) -> None:
    """Flush a written file's data to disk."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def fsync_dir(directory: Path) -> None:
    """Make a rename in ``directory`` durable; a no-op where directories cannot be opened."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:  # pragma: no cover - Windows
        return
    try:
        os.fsync(fd)
    except OSError:  # pragma: no cover - file systems without directory fsync
        pass
    finally:
        os.close(fd)


def unlink_quietly(path: Path) -> None:
    """Remove ``path`` if it exists, ignoring errors (used on failure paths)."""
    with contextlib.suppress(OSError):
        path.unlink(missing_ok=True)


def write_new_file(path: Path, content: bytes | Callable[[BinaryIO], object]) -> None:
    """Create ``path`` (it must not exist yet) with ``content``, fsynced.

    ``content`` is the bytes to write or a function that writes them to the open handle.
    """
    with open(path, "xb") as handle:
        if callable(content):
            content(handle)
        else:
            handle.write(content)
        handle.flush()
        os.fsync(handle.fileno())


def write_temp(final: Path, content: bytes | Callable[[BinaryIO], object]) -> Path:
    """Create ``final``'s directory and write ``content`` to a fresh temp file next to it.

    Returns the temp file, fsynced; it is removed again if writing fails.
    """
    final.parent.mkdir(parents=True, exist_ok=True)
    temp = temp_path(final)
    try:
        write_new_file(temp, content)
    except BaseException:
        unlink_quietly(temp)
        raise
    return temp


def commit_temp(temp: Path, final: Path, sync: bool = True) -> None:
    """Rename ``temp`` onto ``final`` (durably if ``sync``); remove ``temp`` if that fails."""
    try:
        os.replace(temp, final)
    except BaseException:
        unlink_quietly(temp)
        raise
    if sync:
        fsync_dir(final.parent)


def write_failed(path: Path, exc: BaseException) -> ArtifactError:
    """Return the error raised when writing ``path`` failed."""
    blocked = next((p for p in Path(path).parents if p.exists() and not p.is_dir()), None)
    if isinstance(exc, NotADirectoryError) and blocked is not None:
        return ArtifactError(
            f"Could not write {path}: {blocked} is a file, not a folder (a store or output "
            "path that names a file?); no partial file was left."
        )
    return ArtifactError(
        f"Could not write {path}: {exc}. Check free disk space and write permission on "
        f"{path.parent}; no partial file was left at that path."
    )


def atomic_write_bytes(path: str | os.PathLike[str], data: bytes) -> Path:
    """Write ``data`` to ``path`` atomically (temp file, fsync, ``os.replace``); return the path.

    Parent directories are created. Readers see either the old file or the whole new one.
    """
    final = Path(path)
    try:
        commit_temp(write_temp(final, data), final)
    except OSError as exc:
        raise write_failed(final, exc) from exc
    return final


def atomic_write_text(path: str | os.PathLike[str], text: str, encoding: str = "utf-8") -> Path:
    """Write ``text`` to ``path`` atomically (see :func:`atomic_write_bytes`); return the path."""
    return atomic_write_bytes(path, text.encode(encoding))


def remove_stale(
    paths: Iterable[Path], max_age_s: float, remove: Callable[[Path], object]
) -> list[Path]:
    """Call ``remove`` on each of ``paths`` last modified over ``max_age_s`` seconds ago.

    A path whose name carries the pid of a live process on this host (:func:`writer_pid`; the
    temp names made here do) is kept: its writer may still be at work. The age alone guards
    writers on other hosts of a shared file system.

    Returns the paths removed; a path that vanished meanwhile is skipped.
    """
    cutoff = time.time() - max_age_s
    removed = []
    for path in paths:
        with contextlib.suppress(FileNotFoundError):
            if path.stat().st_mtime >= cutoff:
                continue
            pid = writer_pid(path.name)
            if pid is not None and process_alive(pid):
                continue
            remove(path)
            removed.append(path)
    return removed


def remove_stale_temps(
    final: str | os.PathLike[str], max_age_s: float = STALE_AFTER_S
) -> list[Path]:
    """Remove the temps a crashed write of ``final`` left next to it (see :func:`remove_stale`).

    Parameters
    ----------
    final : path-like
        The file whose leftovers to remove, e.g. a scoring run's output Parquet file.
    max_age_s : float
        Keep temps modified more recently than this many seconds ago.

    Returns
    -------
    list of Path
        The temp files removed.
    """
    final = Path(final)
    if not final.parent.is_dir():
        return []
    prefix = f".{final.name}.tmp-"
    temps = (
        path
        for path in final.parent.iterdir()
        if path.name.startswith(prefix) and is_temp_name(path.name)
    )
    return remove_stale(temps, max_age_s, Path.unlink)
