"""Atomic, durable file writes on the local file system.

A new file is written under a hidden temp name in its final directory
(``.<name>.tmp-<pid>-<uuid>``), fsynced and ``os.replace``-d onto the final name, then the
directory is fsynced, so readers see either the old file or the whole new one and a crash leaves
at most a temp file (:func:`is_temp_name` tells them apart; :func:`remove_stale` clears them).
The artifact store, the model registry and batch scoring all write this way.
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
    "atomic_write_bytes",
    "atomic_write_text",
    "commit_temp",
    "fsync_dir",
    "fsync_file",
    "is_temp_name",
    "remove_stale",
    "temp_path",
    "unlink_quietly",
    "write_failed",
    "write_new_file",
    "write_temp",
]

_TEMP_NAME = re.compile(r"\..+\.tmp-\d+-[0-9a-f]{32}")


def temp_path(final: Path) -> Path:
    """Return a unique hidden temp name next to ``final`` (same directory, same file system)."""
    return final.with_name(f".{final.name}.tmp-{os.getpid()}-{uuid.uuid4().hex}")


def is_temp_name(name: str) -> bool:
    """Whether ``name`` is a file name made by :func:`temp_path`."""
    return _TEMP_NAME.fullmatch(name) is not None


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

    Returns the paths removed; a path that vanished meanwhile is skipped.
    """
    cutoff = time.time() - max_age_s
    removed = []
    for path in paths:
        with contextlib.suppress(FileNotFoundError):
            if path.stat().st_mtime < cutoff:
                remove(path)
                removed.append(path)
    return removed
