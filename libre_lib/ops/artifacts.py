"""A content-addressed store of pipeline artifacts, each a plain Parquet file on local disk.

Every stage's output lives at ``<root>/<stage>/<key>.parquet`` where ``key`` is
:func:`stage_key` of the stage's name, parameters, input fingerprints and code version. Next to
it, ``<key>.parquet.sha256`` (JSON: sha256, size, n_rows, created) says what the file must
contain; an artifact is trusted only when the two agree, so a truncated or corrupt file is
recomputed rather than used. Tasks pass small :class:`ArtifactRef` values instead of DataFrames.

Writes are atomic (:mod:`libre_lib.ops.files`): a temp file in the same directory
(``.<name>.tmp-<pid>-<uuid>``) is written, fsynced and ``os.replace``-d onto the final name, so a
crash leaves at most a temp file, which lookups ignore and :meth:`ArtifactStore.cleanup_temp`
removes. The two renames of a commit (Parquet file, then sidecar) run under an exclusive
``flock`` of the stage directory, so concurrent writers of one key, threads or processes, always
leave a matching pair.

Scope: the local file system only (no fsspec/``s3://`` URLs). The lock needs POSIX ``flock``;
without it (Windows) commits are still atomic one file at a time but not as a pair. Network file
systems whose ``flock`` is not shared between hosts give the same weaker guarantee.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import re
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, fields
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from .._version import __version__
from ..errors import ArtifactError, DataError, ParameterError
from .files import (
    STALE_AFTER_S,
    atomic_write_bytes,
    commit_temp,
    is_temp_name,
    remove_stale,
    unlink_quietly,
    write_failed,
    write_temp,
)

try:  # POSIX only; see the module docstring for what is lost without it.
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None

__all__ = [
    "SCHEMA_VERSION",
    "ArtifactRef",
    "ArtifactStore",
    "fingerprint_bytes",
    "fingerprint_file",
    "fingerprint_json",
    "stage_key",
]

logger = logging.getLogger(__name__)

SCHEMA_VERSION = "1"
"""Version of the on-disk layout (file names, sidecar fields, ``libre.*`` metadata)."""

META_PREFIX = "libre."
RESERVED_METADATA = frozenset({"schema_version", "library_version", "stage", "key"})
PROVENANCE_METADATA = frozenset({"params", "inputs", "stage_version"})
KEY_LENGTH = 32
SIDECAR_SUFFIX = ".sha256"

_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,127}")


# --------------------------------------------------------------------------- fingerprints


def fingerprint_bytes(data: bytes | bytearray | memoryview) -> str:
    """Return the sha256 hex digest of ``data``."""
    return hashlib.sha256(data).hexdigest()


def fingerprint_file(path: str | os.PathLike[str]) -> str:
    """Return the sha256 hex digest of a file's bytes, read in chunks (any file size)."""
    with open(path, "rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()


def fingerprint_frame(frame: pd.DataFrame) -> str:
    """Return the sha256 hex digest of a frame's content: its column names, dtypes and values
    in row order (pandas' row hashes), whatever bytes the file it was read from held (line
    endings, quoting, number formatting, CSV or Parquet)."""
    header = canonical_json([[str(name), str(dtype)] for name, dtype in frame.dtypes.items()])
    rows = pd.util.hash_pandas_object(frame, index=False).to_numpy()
    return fingerprint_bytes(header.encode("utf-8") + rows.tobytes())


def _json_default(value: Any) -> Any:
    """Convert numpy scalars and arrays for ``json``; reject everything else by name."""
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    raise TypeError(
        f"Cannot encode {value!r} (type {type(value).__name__}) as canonical JSON: convert it "
        "to a str, int, float, bool, None, list or dict first."
    )


def canonical_json(obj: Any) -> str:
    """Return ``obj`` as canonical JSON: sorted keys, no spaces, UTF-8 text kept as is. Keys
    are JSON's texts before they are sorted (a mapping of ``0`` and ``"01"`` cannot be sorted
    as it is; JSON writes the same texts)."""
    return json.dumps(
        _text_keys(obj),
        sort_keys=True,
        separators=(",", ":"),
        ensure_ascii=False,
        default=_json_default,
    )


def _text_keys(obj: Any) -> Any:
    """``obj`` with every mapping's keys as JSON writes them (``1`` -> ``"1"``, ``True`` ->
    ``"true"``), only where some mapping mixes key types (else ``obj`` itself)."""
    if isinstance(obj, dict):
        keys = {type(k) for k in obj}
        if len(keys) > 1:
            obj = {
                k if isinstance(k, str) else json.dumps(k, default=_json_default): v
                for k, v in obj.items()
            }
        return {k: _text_keys(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [_text_keys(v) for v in obj]
    return obj


def fingerprint_json(obj: Any) -> str:
    """Return the sha256 hex digest of ``obj``'s canonical JSON (dict order does not matter).

    Raises ``TypeError`` naming the first value JSON cannot encode (numpy values are converted).
    """
    return fingerprint_bytes(canonical_json(obj).encode("utf-8"))


def _check_name(kind: str, name: object) -> str:
    """Return ``name`` if it is safe as one path component, else raise ParameterError."""
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        raise ParameterError(
            f"Artifact {kind} {name!r} is not a valid name: use 1-128 letters, digits, '_', "
            "'.' or '-', starting with a letter or digit."
        )
    return name


def stage_key(stage: str, params: Mapping[str, Any], inputs: Sequence[str], version: str) -> str:
    """Return the cache key of a stage run: 32 hex chars of sha256 over its canonical JSON.

    ``inputs`` are fingerprints or keys of the stage's inputs; their order matters.
    """
    _check_name("stage", stage)
    if not isinstance(params, Mapping):
        raise ParameterError(f"params must be a dict; got {type(params).__name__}.")
    if isinstance(inputs, str | bytes) or not isinstance(inputs, Sequence):
        raise ParameterError(
            f"inputs must be a list of fingerprint strings; got {type(inputs).__name__}."
        )
    bad = [item for item in inputs if not isinstance(item, str)]
    if bad:
        raise ParameterError(f"inputs must be fingerprint strings; got {bad[0]!r}.")
    if not isinstance(version, str):
        raise ParameterError(f"version must be a str; got {type(version).__name__}.")
    payload = {"stage": stage, "params": dict(params), "inputs": list(inputs), "version": version}
    return fingerprint_json(payload)[:KEY_LENGTH]


# --------------------------------------------------------------------------- locking


@contextlib.contextmanager
def _directory_lock(directory: Path) -> Iterator[None]:
    """Hold an exclusive ``flock`` on ``directory`` (threads and processes alike)."""
    if fcntl is None:  # pragma: no cover - Windows
        yield
        return
    fd = os.open(directory, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing the descriptor releases the lock


# --------------------------------------------------------------------------- references


@dataclass(frozen=True)
class ArtifactRef:
    """What tasks pass around instead of a DataFrame: where an artifact is and what it holds.

    ``sha256`` is the digest of the Parquet file's bytes; ``path`` is informative (the store
    resolves ``stage``/``key`` under its own root, so refs survive a moved root).
    """

    stage: str
    key: str
    path: str
    sha256: str
    n_rows: int

    def to_dict(self) -> dict[str, Any]:
        """Return the reference as a JSON-friendly dict."""
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ArtifactRef:
        """Rebuild a reference from :meth:`to_dict`'s output."""
        names = [field.name for field in fields(cls)]
        missing = [name for name in names if name not in data]
        if missing:
            raise ArtifactError(
                f"Not an artifact reference: fields {missing} are missing from {dict(data)!r}."
            )
        return cls(
            stage=str(data["stage"]),
            key=str(data["key"]),
            path=str(data["path"]),
            sha256=str(data["sha256"]),
            n_rows=int(data["n_rows"]),
        )


# --------------------------------------------------------------------------- the store


def _as_table(table: pa.Table | pd.DataFrame, stage: str) -> pa.Table:
    """Return ``table`` as an Arrow table (a DataFrame's index is dropped)."""
    if isinstance(table, pa.Table):
        return table
    if isinstance(table, pd.DataFrame):
        try:
            return pa.Table.from_pandas(table, preserve_index=False)
        except (pa.ArrowException, TypeError, ValueError) as exc:
            raise DataError(
                f"Stage {stage!r} produced a DataFrame Parquet cannot store: {exc}. Give each "
                "column a single type (e.g. cast mixed object columns to str)."
            ) from exc
    raise ParameterError(
        f"Stage {stage!r} must produce a pyarrow Table or pandas DataFrame; "
        f"got {type(table).__name__}."
    )


def _encode_metadata(stage: str, key: str, metadata: Mapping[str, Any]) -> dict[bytes, bytes]:
    """Return the ``libre.*`` Parquet key-value entries (every value JSON-encoded)."""
    clash = sorted(RESERVED_METADATA.intersection(metadata))
    if clash:
        raise ParameterError(f"Metadata names {clash} are reserved by the artifact store.")
    entries = {
        "schema_version": SCHEMA_VERSION,
        "library_version": __version__,
        "stage": stage,
        "key": key,
    }
    for name, value in metadata.items():
        if not isinstance(name, str) or not name:
            raise ParameterError(f"Metadata names must be non-empty strings; got {name!r}.")
        entries[name] = value
    return {
        f"{META_PREFIX}{name}".encode(): canonical_json(value).encode("utf-8")
        for name, value in entries.items()
    }


def _decode_metadata(raw: Mapping[bytes, bytes] | None) -> dict[str, Any]:
    """Return the decoded ``libre.*`` entries of Parquet key-value metadata, prefix removed."""
    prefix = META_PREFIX.encode()
    return {
        name[len(prefix) :].decode("utf-8"): json.loads(value)
        for name, value in (raw or {}).items()
        if name.startswith(prefix)
    }


def _sidecar_path(path: Path) -> Path:
    """Return the checksum sidecar of an artifact file."""
    return path.with_name(path.name + SIDECAR_SUFFIX)


def _sidecar_record(path: Path, n_rows: int) -> dict[str, Any]:
    """Return the sidecar record describing the file at ``path``."""
    return {
        "sha256": fingerprint_file(path),
        "size": path.stat().st_size,
        "n_rows": n_rows,
        "created": datetime.now(UTC).isoformat(timespec="milliseconds"),
    }


def _read_sidecar(path: Path) -> tuple[dict[str, Any] | None, str]:
    """Return (sidecar record, "") or (None, what is wrong with it)."""
    sidecar = _sidecar_path(path)
    try:
        record = json.loads(sidecar.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None, f"its checksum sidecar {sidecar.name} is missing"
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        return None, f"its checksum sidecar {sidecar.name} is unreadable ({exc})"
    types = {"sha256": str, "size": int, "n_rows": int}
    if not isinstance(record, dict) or any(
        not isinstance(record.get(name), kind) for name, kind in types.items()
    ):
        return None, f"its checksum sidecar {sidecar.name} is garbled"
    return record, ""


def _check_file(path: Path, sha256: str, size: int | None) -> str:
    """Return "" if ``path`` has this size and digest, else what differs."""
    try:
        actual_size = path.stat().st_size
    except FileNotFoundError:
        return "the file is missing"
    if size is not None and actual_size != size:
        return f"it has {actual_size} bytes but {size} were written (truncated or overwritten)"
    actual = fingerprint_file(path)
    if actual != sha256:
        return f"its sha256 is {actual} but {sha256} was written (corrupt)"
    return ""


class ArtifactStore:
    """Parquet artifacts under ``root`` (a local directory, created on first write)."""

    def __init__(self, root: str | os.PathLike[str]) -> None:
        if isinstance(root, str) and "://" in root:
            raise ParameterError(
                f"ArtifactStore root {root!r} is a URL; only local directories are supported. "
                "Mount the remote storage and pass its local path."
            )
        self.root = Path(root).expanduser().absolute()

    def __repr__(self) -> str:
        return f"ArtifactStore({str(self.root)!r})"

    def path_for(self, stage: str, key: str) -> Path:
        """Return where the artifact of ``stage``/``key`` lives (whether or not it exists)."""
        return self.root / _check_name("stage", stage) / f"{_check_name('key', key)}.parquet"

    # ------------------------------------------------------------------ writing

    def write(
        self,
        stage: str,
        key: str,
        table: pa.Table | pd.DataFrame,
        metadata: Mapping[str, Any] | None = None,
        *,
        replace: bool = True,
    ) -> ArtifactRef:
        """Write ``table`` as the artifact ``stage``/``key`` atomically and return its ref.

        ``metadata`` values are JSON-encoded under ``libre.<name>`` in the Parquet footer, next
        to ``libre.schema_version``, ``libre.library_version``, ``libre.stage`` and ``libre.key``.
        With ``replace=False`` an artifact of the key that another writer committed meanwhile
        (and that matches its sidecar) is kept and its ref returned: a run that read it holds
        a ref whose bytes must not change under it (timings in the metadata make two
        computations of one key differ in their bytes).
        """
        path = self.path_for(stage, key)
        arrow = _as_table(table, stage)
        entries = _encode_metadata(stage, key, metadata or {})
        arrow = arrow.replace_schema_metadata({**(arrow.schema.metadata or {}), **entries})
        sidecar = _sidecar_path(path)
        temp = temp_sidecar = None
        try:
            temp = write_temp(path, lambda handle: pq.write_table(arrow, handle))
            record = _sidecar_record(temp, arrow.num_rows)
            temp_sidecar = write_temp(sidecar, (canonical_json(record) + "\n").encode("utf-8"))
            with _directory_lock(path.parent):  # the pair is replaced as one step
                existing = None if replace else self._verified_ref(stage, key, path)[0]
                if existing is not None:
                    for leftover in (temp, temp_sidecar):
                        unlink_quietly(leftover)
                    return existing
                commit_temp(temp, path, sync=False)
                commit_temp(temp_sidecar, sidecar)  # this directory fsync covers both renames
        except OSError as exc:
            for leftover in (temp, temp_sidecar):
                if leftover is not None:
                    unlink_quietly(leftover)
            raise write_failed(path, exc) from exc
        return ArtifactRef(stage, key, str(path), record["sha256"], arrow.num_rows)

    def write_file(self, relative_path: str | os.PathLike[str], data: bytes | str) -> Path:
        """Atomically write a non-Parquet output (report, model.json) under the root."""
        relative = Path(relative_path)
        target = (self.root / relative).resolve()
        root = self.root.resolve()
        if relative.is_absolute() or target == root or not target.is_relative_to(root):
            raise ParameterError(
                f"write_file needs a path inside the store root {self.root}; got {relative_path!r}."
            )
        payload = data.encode("utf-8") if isinstance(data, str) else bytes(data)
        return atomic_write_bytes(self.root / relative, payload)

    # ------------------------------------------------------------------ finding

    def _verified_ref(self, stage: str, key: str, path: Path) -> tuple[ArtifactRef | None, str]:
        """Return (ref, "") if ``path`` matches its sidecar, else (None, the reason)."""
        record, problem = _read_sidecar(path)
        if record is None:
            return None, problem
        problem = _check_file(path, record["sha256"], record["size"])
        if problem:
            return None, problem
        try:  # the footer names what was written here: a file copied in from another key
            written = _decode_metadata(pq.read_schema(path).metadata)
        except (pa.ArrowException, ArtifactError, ValueError) as exc:
            return None, f"its footer cannot be read ({exc})"
        if (written.get("stage"), written.get("key")) != (stage, key):
            return None, (
                f"it holds the artifact {written.get('stage')!r}/{written.get('key')!r}, "
                "copied or moved here from another name"
            )
        return ArtifactRef(stage, key, str(path), record["sha256"], record["n_rows"]), ""

    def lookup(self, stage: str, key: str) -> ArtifactRef | None:
        """Return the ref of a stored artifact whose file matches its sidecar, else None.

        A file that fails the check (truncated, corrupt, missing or garbled sidecar) is logged
        as a warning and moved aside to ``<name>.corrupt-<timestamp>``; it is never trusted.
        """
        path = self.path_for(stage, key)
        if not path.exists():
            return None
        ref, problem = self._verified_ref(stage, key, path)
        if ref is not None:
            _touch(path)
            return ref
        with _directory_lock(path.parent):  # re-check: a commit may have been in flight
            ref, problem = self._verified_ref(stage, key, path)
            if ref is not None or not path.exists():
                return ref
            moved = self._quarantine(path)
        logger.warning(
            "Ignoring cached artifact %s: %s. %s; the stage will be recomputed.",
            path,
            problem,
            f"Moved it to {moved.name}" if moved else "Could not move it aside",
        )
        return None

    @staticmethod
    def _quarantine(path: Path) -> Path | None:
        """Move a bad artifact and its sidecar aside; return the new name (None on failure)."""
        stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime())
        moved = path.with_name(f"{path.name}.corrupt-{stamp}")
        sidecar = _sidecar_path(path)
        try:
            os.replace(path, moved)
            if sidecar.exists():
                os.replace(sidecar, sidecar.with_name(f"{sidecar.name}.corrupt-{stamp}"))
        except OSError:
            return None
        return moved

    # ------------------------------------------------------------------ reading

    def _checked_path(self, ref: ArtifactRef) -> Path:
        """Return the path of ``ref`` under this root, raising ArtifactError if it is missing."""
        path = self.path_for(ref.stage, ref.key)
        if not path.exists():
            raise ArtifactError(
                f"Artifact {path} (stage {ref.stage!r}, key {ref.key}) is missing here. Either "
                "it was removed after it was written (by hand, or by `libre prune "
                "--min-age-hours` shorter than a run in progress), and a re-run recomputes it; "
                "or this process cannot see the store it was written to (a Dask worker reads "
                "the store at the same path: it must be on a volume every worker shares)."
            )
        return path

    def _corrupt(self, path: Path, problem: str) -> ArtifactError:
        """Return the error raised when a referenced artifact fails verification."""
        return ArtifactError(
            f"Artifact {path} cannot be trusted: {problem}. If another run with --force was "
            "computing the same stage, it rewrote the file meanwhile: re-run without --force "
            f"once it has ended. Otherwise delete it and {_sidecar_path(path).name}, or re-run "
            "with --force to recompute it."
        )

    def read(self, ref: ArtifactRef) -> pa.Table:
        """Return the artifact's table after checking its bytes against ``ref.sha256``."""
        path = self._checked_path(ref)
        data = path.read_bytes()  # hash and parse the same bytes: no race with a rewrite
        if fingerprint_bytes(data) != ref.sha256:
            raise self._corrupt(path, f"its sha256 differs from the reference's {ref.sha256}")
        try:
            table = pq.read_table(pa.py_buffer(data))
        except pa.ArrowException as exc:
            raise self._corrupt(path, f"Parquet cannot read it ({exc})") from exc
        if table.num_rows != ref.n_rows:
            raise self._corrupt(path, f"it has {table.num_rows} rows, not {ref.n_rows}")
        return table

    def read_frame(self, ref: ArtifactRef) -> pd.DataFrame:
        """Return the artifact as a DataFrame (checksum verified, fresh RangeIndex)."""
        return self.read(ref).to_pandas()

    def metadata(self, ref: ArtifactRef) -> dict[str, Any]:
        """Return the decoded ``libre.*`` footer entries, without the prefix.

        Only the footer is read; use :meth:`read` to verify the whole file.
        """
        path = self._checked_path(ref)
        try:
            raw = pq.read_schema(path).metadata
        except pa.ArrowException as exc:
            raise self._corrupt(path, f"Parquet cannot read its footer ({exc})") from exc
        return _decode_metadata(raw)

    # ------------------------------------------------------------------ caching

    def get_or_compute(
        self,
        stage: str,
        params: Mapping[str, Any],
        inputs: Sequence[str],
        compute: Callable[[], tuple[pa.Table | pd.DataFrame, Mapping[str, Any]]],
        *,
        version: str | None = None,
        force: bool = False,
    ) -> tuple[ArtifactRef, bool]:
        """Return (ref, cache hit) for a stage run, calling ``compute()`` only on a miss.

        ``version`` defaults to the library version; ``force=True`` recomputes and overwrites.
        ``params``, ``inputs`` and ``version`` are stored as metadata for provenance. Without
        ``force``, when a concurrent run committed the key while this one computed it, the
        first commit stays and both runs use it.
        """
        version = __version__ if version is None else version
        key = stage_key(stage, params, inputs, version)
        if not force:
            ref = self.lookup(stage, key)
            if ref is not None:
                return ref, True
        result = compute()
        if not (isinstance(result, tuple) and len(result) == 2):
            raise ParameterError(
                f"compute() for stage {stage!r} must return (table, metadata dict); "
                f"got {type(result).__name__}."
            )
        table, metadata = result
        clash = sorted(PROVENANCE_METADATA.intersection(metadata or {}))
        if clash:
            raise ParameterError(f"Metadata names {clash} are set by get_or_compute itself.")
        provenance = {"params": dict(params), "inputs": list(inputs), "stage_version": version}
        ref = self.write(stage, key, table, {**provenance, **(metadata or {})}, replace=force)
        return ref, False

    # ------------------------------------------------------------------ housekeeping

    def cleanup_temp(self, max_age_s: float = STALE_AFTER_S) -> list[Path]:
        """Delete the temp files crashed writes left anywhere under the root; return them.

        Only files last modified over ``max_age_s`` seconds ago whose writer is not a live
        process on this host (:func:`~libre_lib.ops.files.remove_stale`).
        """
        if not self.root.is_dir():
            return []
        temps = (path for path in self.root.rglob(".*.tmp-*") if is_temp_name(path.name))
        return remove_stale(temps, max_age_s, Path.unlink)


def _touch(path: Path) -> None:
    """Mark a cache hit's file as just used: ``libre prune`` keeps files used or written within
    its ``--min-age-hours``, so a run in progress keeps an old stage it reads (a read-only
    store keeps the file's time)."""
    try:
        os.utime(path)
    except OSError:
        pass
