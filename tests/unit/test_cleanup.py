"""Removing what crashed runs left in a store: only once stale, never what a live run may own.

After SIGKILLs during training, promotion and scoring, stage temp files, a ``.tmp-vNNNN-...``
version folder and a run folder without ``run.json`` stayed forever: nothing called the
clean-up. ``clean_store`` (called when a training run starts) removes them.
"""

import os
import time
from pathlib import Path

import pytest

from libre_lib.ops.cleanup import RUN_FILE, Cleanup, clean_store, incomplete_runs
from libre_lib.ops.files import STALE_AFTER_S

DEAD = 2**22 + 1  # above Linux's largest pid_max: never a live process
OLD = STALE_AFTER_S + 600
HEX = "0123456789abcdef" * 2


def _age(path: Path, seconds: float) -> Path:
    past = time.time() - seconds
    os.utime(path, (past, past))
    return path


def _file(path: Path, age: float = 0.0) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"PAR1 half written")
    return _age(path, age)


def _folder(path: Path, files: dict[str, float], age: float) -> Path:
    """A folder holding ``files`` (name: age in seconds), itself last modified ``age`` ago."""
    path.mkdir(parents=True)
    for name, file_age in files.items():
        _file(path / name, file_age)
    return _age(path, age)


@pytest.fixture
def store(tmp_path):
    """A store with every kind of leftover, stale and fresh, next to finished work."""
    root = tmp_path / "store"
    learn, models, runs = root / "learn", root / "models" / "pima", root / "runs" / "pima"
    paths = {
        "artifact": _file(learn / "k1.parquet", OLD),
        "old temp": _file(learn / f".k2.parquet.tmp-{DEAD}-{HEX}", OLD),
        "old sidecar temp": _file(learn / f".k2.parquet.sha256.tmp-{DEAD}-{'f' * 32}", OLD),
        "fresh temp": _file(learn / f".k3.parquet.tmp-{DEAD}-{HEX}"),
        "live writer's temp": _file(learn / f".k4.parquet.tmp-{os.getpid()}-{HEX}", OLD),
        "old pointer temp": _file(models / f".champion.json.tmp-{DEAD}-{HEX}", OLD),
        "version": _folder(models / "v0001-1a2b3c4d", {"model.json": OLD}, OLD),
        "old version temp": _folder(
            models / f".tmp-v0002-1a2b3c4d-{DEAD}-{HEX}", {"model.json": OLD}, OLD
        ),
        "fresh version temp": _folder(
            models / f".tmp-v0003-1a2b3c4d-{DEAD}-{'e' * 32}", {"model.json": 0}, 0
        ),
        "finished run": _folder(
            runs / "20260101-000000-0123456789ab", {"report.md": OLD, RUN_FILE: OLD}, OLD
        ),
        "crashed run": _folder(runs / "20260101-000100-0123456789ac", {"report.md": OLD}, OLD),
        "crashed run of an earlier release": _folder(runs / "20260101-000200-01234567", {}, OLD),
        "run in progress": _folder(runs / "20260101-000300-0123456789ad", {"report.md": 0}, 0),
        # a file just replaced in an old folder: its writer is at work
        "run writing": _folder(runs / "20260101-000400-0123456789ae", {"model.json": 0}, OLD),
        "not a run folder": _folder(runs / "my-notes", {}, OLD),
    }
    return root, paths


def test_clean_store_removes_stale_leftovers_and_keeps_the_rest(store):
    root, paths = store
    removed = [
        "old temp",
        "old sidecar temp",
        "old pointer temp",
        "old version temp",
        "crashed run",
        "crashed run of an earlier release",
    ]
    done = clean_store(root)
    assert isinstance(done, Cleanup)
    assert sorted(done.paths) == sorted(paths[name] for name in removed)
    assert set(done.temp_versions) == {paths["old version temp"]}
    assert set(done.incomplete_runs) == {
        paths["crashed run"],
        paths["crashed run of an earlier release"],
    }
    for name, path in paths.items():
        assert path.exists() == (name not in removed), name
    assert str(done) == ("3 temp files, 1 temp version folder, 2 run folders without run.json")
    assert clean_store(root).paths == ()  # nothing left to do


def test_a_shorter_bound_removes_the_fresh_leftovers_too(store):
    root, paths = store
    clean_store(root, max_age_s=-1)
    for name in ("fresh temp", "fresh version temp", "run in progress", "run writing"):
        assert not paths[name].exists(), name
    for name in ("artifact", "version", "finished run", "live writer's temp", "not a run folder"):
        assert paths[name].exists(), name


def test_incomplete_runs_are_the_run_folders_without_run_json(store):
    root, paths = store
    assert set(incomplete_runs(root)) == {
        paths[name]
        for name in (
            "crashed run",
            "crashed run of an earlier release",
            "run in progress",
            "run writing",
        )
    }


def test_a_missing_or_empty_store_is_fine(tmp_path):
    assert clean_store(tmp_path / "absent") == Cleanup()
    assert clean_store(tmp_path) == Cleanup()
    assert list(incomplete_runs(tmp_path)) == []


def test_prune_removes_a_linked_run_folder_s_link_never_its_target(tmp_path):
    """A run folder that was a symbolic link was reported removed and stayed (its removal
    ignored every error); the link goes, what it points to stays."""
    from libre_lib.ops.cleanup import prune_store

    runs = tmp_path / "store" / "runs" / "p"
    runs.mkdir(parents=True)
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "run.json").write_text("{}")
    (runs / "20200101-000000-aaaaaaaaaaaa").symlink_to(victim)
    for name in ("20210101-000000-bbbbbbbbbbbb", "20220101-000000-cccccccccccc"):
        (runs / name).mkdir()
        (runs / name / "run.json").write_text("{}")
    done = prune_store(tmp_path / "store", "p", keep_runs=1, min_age_s=0)
    assert sorted(r.name[:4] for r in done.runs) == ["2020", "2021"]
    assert [p.name[:4] for p in runs.iterdir()] == ["2022"]
    assert (victim / "run.json").is_file()


def _pruned_with_champion(tmp_path, monkeypatch, summaries: dict) -> tuple[list, list]:
    """Runs of pipeline ``p`` with these ``run.json`` summaries, v0003-x the champion that the
    first one registered, pruned to 1 run: (years of the removed runs, of the remaining)."""
    import json
    from types import SimpleNamespace

    from libre_lib.ops import cleanup

    runs = tmp_path / "store" / "runs" / "p"
    (tmp_path / "store" / "models").mkdir(parents=True)
    for name, summary in summaries.items():
        (runs / name).mkdir(parents=True)
        (runs / name / RUN_FILE).write_text(json.dumps(summary))
    champion = SimpleNamespace(version="v0003-x", run_id="20200101-000000-aaaaaaaaaaaa")
    monkeypatch.setattr(cleanup.ModelRegistry, "champion", lambda self, pipeline: champion)
    done = cleanup.prune_store(tmp_path / "store", "p", keep_runs=1, min_age_s=0)
    return [r.name[:4] for r in done.runs], sorted(p.name[:4] for p in runs.iterdir())


def test_prune_keeps_the_run_that_promoted_the_champion_not_only_the_one_that_registered_it(
    tmp_path, monkeypatch
):
    """A run killed before its promotion registered v0003; a later run reused v0003 and
    promoted it. `prune --keep-runs 1` kept the killed run (the version's run id) and removed
    the one that promoted it, which `libre models show` went on citing."""
    summaries = {
        "20200101-000000-aaaaaaaaaaaa": {"model_version": "v0003-x", "promoted": False},
        "20210101-000000-bbbbbbbbbbbb": {"model_version": "v0003-x", "promoted": True},
        "20220101-000000-cccccccccccc": {"model_version": "v0004-y", "promoted": False},
        "20230101-000000-dddddddddddd": {"model_version": "v0004-y", "promoted": False},
    }
    removed, left = _pruned_with_champion(tmp_path, monkeypatch, summaries)
    assert removed == ["2022"] and left == ["2020", "2021", "2023"]


def test_prune_removes_reruns_that_found_the_champion_already_promoted(tmp_path, monkeypatch):
    """A nightly run on unchanged data records promoted: true ("v0003 is already the
    champion"): prune kept every such run, one folder per night forever."""
    moved = {"model_version": "v0003-x", "promoted": True, "decision": {"previous": "v0002-w"}}
    again = {"model_version": "v0003-x", "promoted": True, "decision": {"previous": "v0003-x"}}
    summaries = {
        "20200101-000000-aaaaaaaaaaaa": {"model_version": "v0003-x", "promoted": False},
        "20210101-000000-bbbbbbbbbbbb": moved,
        **{f"202{i}0101-000000-cccccccccccc": again for i in range(2, 6)},
    }
    removed, left = _pruned_with_champion(tmp_path, monkeypatch, summaries)
    assert removed == ["2022", "2023", "2024"] and left == ["2020", "2021", "2025"]


def test_prune_of_a_store_it_cannot_write_removes_nothing_and_says_why(tmp_path, monkeypatch):
    """On a read-only store, prune printed "[Errno 30] Read-only file system: 'report.html'"
    (no run, no store named) and could leave run folders half removed."""
    import shutil

    from libre_lib.errors import ArtifactError
    from libre_lib.ops import cleanup

    runs = tmp_path / "store" / "runs" / "p"
    for name in ("20210101-000000-bbbbbbbbbbbb", "20220101-000000-cccccccccccc"):
        (runs / name).mkdir(parents=True)
        (runs / name / "run.json").write_text("{}")
        (runs / name / "report.html").write_text("<html></html>")
    writable = os.access
    monkeypatch.setattr(
        cleanup.os, "access", lambda path, mode: Path(path) != runs and writable(path, mode)
    )
    with pytest.raises(ArtifactError, match=r"Cannot prune 'p': .*runs/p cannot be written"):
        cleanup.prune_store(tmp_path / "store", "p", keep_runs=1, min_age_s=0)
    assert len(list(runs.iterdir())) == 2 and (runs / "20210101-000000-bbbbbbbbbbbb").is_dir()
    monkeypatch.setattr(cleanup.os, "access", writable)

    def refused(path, *args, **kwargs):
        raise PermissionError(13, "Permission denied", "report.html")

    monkeypatch.setattr(shutil, "rmtree", refused)
    with pytest.raises(ArtifactError, match=r"run folder .*20210101-000000-bbbbbbbbbbbb"):
        cleanup.prune_store(tmp_path / "store", "p", keep_runs=1, min_age_s=0)
