"""Atomic file writes: temp file, fsync, rename; nothing partial is ever visible."""

import os
import time

import pytest

from libre_lib.errors import ArtifactError
from libre_lib.ops.files import (
    STALE_AFTER_S,
    atomic_write_bytes,
    atomic_write_text,
    is_temp_name,
    process_alive,
    remove_stale,
    remove_stale_temps,
    temp_path,
    writer_pid,
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
    # the file in the way is named, not free disk space
    with pytest.raises(ArtifactError, match=rf"{blocker} is a file, not a folder") as caught:
        atomic_write_text(blocker / "runs" / "model.json", "{}")
    assert "disk space" not in str(caught.value)


def test_remove_stale_removes_only_old_paths(tmp_path):
    old, new = tmp_path / "old", tmp_path / "new"
    for path in (old, new):
        path.write_text("x")
    past = time.time() - 7200
    os.utime(old, (past, past))
    gone = tmp_path / "gone"  # vanished before it was looked at: skipped
    assert remove_stale([old, new, gone], 3600, os.remove) == [old]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["new"]


DEAD = 2**22 + 1  # above Linux's largest pid_max: never a live process


def _temp_of(final, pid, tail="a"):
    return final.with_name(f".{final.name}.tmp-{pid}-{tail * 32}")


def _age(path, seconds):
    past = time.time() - seconds
    os.utime(path, (past, past))


def test_temp_names_carry_their_writer_pid(tmp_path):
    assert writer_pid(temp_path(tmp_path / "model.json").name) == os.getpid()
    assert writer_pid(f".tmp-v0002-1a2b3c4d-{DEAD}-{'f' * 32}") == DEAD
    assert writer_pid("model.json") is None
    assert writer_pid(f".x.tmp-12-{'f' * 32}.bak") is None
    assert process_alive(os.getpid()) and not process_alive(DEAD)


def test_remove_stale_keeps_what_a_live_process_may_still_write(tmp_path):
    final = tmp_path / "out.parquet"
    mine, orphan = _temp_of(final, os.getpid()), _temp_of(final, DEAD)
    for path in (mine, orphan):
        path.write_text("x")
        _age(path, 7200)
    assert remove_stale([mine, orphan], 3600, os.remove) == [orphan]
    assert mine.exists() and not orphan.exists()


def test_remove_stale_temps_clears_only_old_temps_of_that_file(tmp_path):
    """A SIGKILLed scoring run left a 5.5 MB ``.scored.parquet.tmp-...`` that nothing removed."""
    final = tmp_path / "scored.parquet"
    old, fresh = _temp_of(final, DEAD, "a"), _temp_of(final, DEAD, "b")
    other = _temp_of(tmp_path / "other.parquet", DEAD)
    for path in (old, fresh, other, final):
        path.write_text("x")
    for path in (old, other, final):
        _age(path, STALE_AFTER_S + 60)
    assert remove_stale_temps(final) == [old]
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        [fresh.name, other.name, final.name]
    )
    assert remove_stale_temps(tmp_path / "absent" / "scored.parquet") == []
