"""Atomic file writes: temp file, fsync, rename; nothing partial is ever visible."""

import os
import time

import pytest

from libre_lib.errors import ArtifactError
from libre_lib.ops.files import (
    atomic_write_bytes,
    atomic_write_text,
    is_temp_name,
    remove_stale,
    temp_path,
)


def test_atomic_write_helpers(tmp_path):
    target = tmp_path / "deep" / "er" / "model.json"
    assert atomic_write_text(target, '{"a": "é"}') == target
    assert target.read_text(encoding="utf-8") == '{"a": "é"}'
    atomic_write_bytes(str(target), b"v2")
    assert target.read_bytes() == b"v2"
    assert os.listdir(target.parent) == ["model.json"]


def test_temp_names_are_hidden_unique_and_recognised(tmp_path):
    final = tmp_path / "scored.parquet"
    first, second = temp_path(final), temp_path(final)
    assert first != second and first.parent == final.parent
    assert first.name.startswith(".scored.parquet.tmp-")
    assert is_temp_name(first.name) and not is_temp_name(final.name)


def test_a_failed_write_raises_an_artifact_error_and_leaves_nothing(tmp_path):
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("")
    with pytest.raises(ArtifactError, match="no partial file was left"):
        atomic_write_text(blocker / "model.json", "{}")
    assert os.listdir(tmp_path) == ["not-a-folder"]


def test_remove_stale_removes_only_old_paths(tmp_path):
    old, new = tmp_path / "old", tmp_path / "new"
    for path in (old, new):
        path.write_text("x")
    past = time.time() - 7200
    os.utime(old, (past, past))
    gone = tmp_path / "gone"  # vanished before it was looked at: skipped
    assert remove_stale([old, new, gone], 3600, os.remove) == [old]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["new"]
