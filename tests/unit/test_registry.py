"""The model registry: versions, concurrent registration, promotion, crash safety, the CLI."""

import json
import os
import re
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

import libre_flows.flows.cli.models as models_cli
import libre_lib.ops.files as files_module
import libre_lib.ops.registry as registry_module
from libre_flows.flows.cli.models import models_app
from libre_lib import LibreClassifier, LibreWarning
from libre_lib.errors import DataError, LibreError, ParameterError
from libre_lib.ops.registry import (
    CANDIDATE,
    CHAMPION,
    REJECTED,
    RETIRED,
    ModelRegistry,
    ModelVersion,
    RegistryError,
    validation_record,
)

ROOT = Path(__file__).resolve().parents[2]
PIPE = "haberman"
PASSED = {"success": True, "n_failed": 0, "n_expectations": 5}
FAILED = {"success": False, "n_failed": 2, "n_expectations": 5}


@pytest.fixture(scope="module")
def models(haberman):
    """Three fitted models with different rules."""
    X, y, info = haberman
    out = []
    for seed, alpha in ((0, 0.7), (1, 0.9), (2, 0.5)):
        model = LibreClassifier(
            n_estimators=5, random_state=seed, alpha=alpha, positive_class=info.positive_class
        )
        out.append(model.fit(X, y))
    return out


@pytest.fixture
def registry(tmp_path):
    return ModelRegistry(tmp_path / "store")


def register(
    registry, model, f1=0.6, validation=PASSED, pipeline=PIPE, accuracy=None, flagged=None, **extra
):
    metrics = {"f1": f1, "precision": 0.5, "recall": 0.7, "n_rules": len(model.rules_)}
    if accuracy is not None:
        metrics["accuracy"] = accuracy
    if flagged is not None:
        metrics["n_flagged"] = flagged
    return registry.register(
        pipeline,
        model.to_json(),
        spec={"name": pipeline, "model": {"alpha": model.alpha}},
        metrics=metrics,
        validation=validation,
        data_fingerprint="d" * 64,
        spec_hash="s" * 64,
        run_id=extra.pop("run_id", "run-1"),
        **extra,
    )


def statuses(registry, pipeline=PIPE):
    return {v.version: v.status for v in registry.versions(pipeline)}


def stored_status(version: ModelVersion) -> str:
    return json.loads((version.path / "version.json").read_text())["status"]


# --- registering ---------------------------------------------------------------------------------


def test_register_writes_a_complete_version_folder(registry, models):
    model = models[0]
    version = register(registry, model, created_at="2025-01-01T00:00:00+00:00")
    assert version.version.startswith("v0001-") and len(version.version) == 14
    assert version.number == 1 and version.status == CANDIDATE and version.reason == ""
    assert version.version[6:] == version.model_sha256[:8]
    folder = registry.root / "models" / PIPE / version.version
    assert version.path == folder
    assert sorted(p.name for p in folder.iterdir()) == ["model.json", "spec.json", "version.json"]
    assert (folder / "model.json").read_text() == model.to_json()
    assert json.loads((folder / "spec.json").read_text()) == {"name": PIPE, "model": {"alpha": 0.7}}
    record = json.loads((folder / "version.json").read_text())
    assert record["version"] == version.version and record["pipeline"] == PIPE
    assert record["created_at"] == "2025-01-01T00:00:00+00:00"
    assert record["metrics"]["f1"] == 0.6 and record["validation"] == PASSED
    assert record["run_id"] == "run-1" and record["status"] == CANDIDATE
    assert registry.get(PIPE, version.version) == version
    assert version.to_dict()["path"] == str(folder)
    json.dumps(version.to_dict())
    assert registry.champion(PIPE) is None
    assert not [p for p in folder.parent.iterdir() if p.name.startswith(".tmp-")]
    assert registry.spec(PIPE, version.version)["model"] == {"alpha": 0.7}


def test_versions_are_ordered_oldest_first(registry, models):
    ids = [register(registry, models[i % 3], run_id=f"r{i}").version for i in range(5)]
    listed = registry.versions(PIPE)
    assert [v.version for v in listed] == ids
    assert [v.number for v in listed] == [1, 2, 3, 4, 5]
    assert ids == sorted(ids)
    assert [v.run_id for v in listed] == [f"r{i}" for i in range(5)]
    assert registry.pipelines() == [PIPE]
    assert registry.versions("other") == []


def test_numbers_past_9999_still_sort_by_number(registry, models):
    first = register(registry, models[0])
    name = "v9999-" + first.version[6:]
    record = json.loads((first.path / "version.json").read_text())
    (first.path / "version.json").write_text(
        json.dumps({**record, "version": name, "number": 9999})
    )
    os.rename(first.path, first.path.with_name(name))
    following = register(registry, models[1])
    assert following.version.startswith("v10000-")
    assert [v.number for v in registry.versions(PIPE)] == [9999, 10000]


def test_unknown_versions_and_bad_input(registry, models):
    with pytest.raises(RegistryError, match="Known versions: none yet"):
        registry.get(PIPE, "v0001-00000000")
    first = register(registry, models[0])
    with pytest.raises(RegistryError, match=f"no model version 'v0009-deadbeef'.*{first.version}"):
        registry.get(PIPE, "v0009-deadbeef")
    with pytest.raises(RegistryError, match="Known versions"):
        registry.get(PIPE, "../../etc")
    with pytest.raises(RegistryError, match="no champion yet"):
        registry.get(PIPE, "champion")
    with pytest.raises(RegistryError, match="no champion yet"):
        registry.load_model(PIPE)
    with pytest.raises(RegistryError, match="not valid"):
        registry.versions("../escape")
    with pytest.raises(RegistryError, match="not valid JSON"):
        registry.register(
            PIPE, "{", spec={}, metrics={}, validation=PASSED, data_fingerprint="d",
            spec_hash="s", run_id="r",
        )  # fmt: skip
    with pytest.raises(RegistryError, match="boolean 'success'"):
        register(registry, models[0], validation={"n_failed": 0})
    with pytest.raises(RegistryError, match="Cannot encode"):
        registry.register(
            PIPE, models[0].to_json(), spec={}, metrics={"f1": object()}, validation=PASSED,
            data_fingerprint="d", spec_hash="s", run_id="r",
        )  # fmt: skip
    assert issubclass(RegistryError, LibreError)
    assert len(registry.versions(PIPE)) == 1
    # a prefix of several versions says so (it said "no model version 'v000'")
    second = register(registry, models[1])
    with pytest.raises(RegistryError, match=rf"'v000' starts 2 model versions .*{second.version}"):
        registry.get(PIPE, "v000")
    assert registry.get(PIPE, "v0002").version == second.version


def test_concurrent_registration_with_threads(registry, models):
    payloads = [m.to_json() for m in models]
    results, failures = [], []
    barrier = threading.Barrier(8)

    def work(worker):
        barrier.wait()
        try:
            for i in range(3):
                results.append(
                    registry.register(
                        PIPE,
                        payloads[(worker + i) % 3],
                        spec={},
                        metrics={"f1": 0.5},
                        validation=PASSED,
                        data_fingerprint="d",
                        spec_hash="s",
                        run_id=f"{worker}-{i}",
                    )
                )
        except Exception as exc:  # pragma: no cover - reported below
            failures.append(exc)

    threads = [threading.Thread(target=work, args=(w,)) for w in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not failures
    ids = [v.version for v in results]
    assert len(set(ids)) == 24
    listed = registry.versions(PIPE)
    assert sorted(v.number for v in listed) == list(range(1, 25))
    assert {v.run_id for v in listed} == {f"{w}-{i}" for w in range(8) for i in range(3)}


WORKER = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    import libre_flows.flows.cli.models, libre_lib.ops.diff
    from libre_lib.ops.registry import ModelRegistry

    root, model_path, go, name = sys.argv[1:5]
    model_json = Path(model_path).read_text()
    registry = ModelRegistry(root)
    while not Path(go).exists():
        time.sleep(0.005)
    for i in range(10):
        registry.register(
            "haberman", model_json, spec={}, metrics={"f1": 0.5},
            validation={"success": True}, data_fingerprint="d", spec_hash="s",
            run_id=f"{name}-{i}",
        )
    print(",".join(m for m in sys.modules if m.split(".")[0] == "prefect"))
    """
)


def test_concurrent_registration_with_two_processes(registry, models, tmp_path):
    model_file = tmp_path / "model.json"
    model_file.write_text(models[0].to_json())
    go = tmp_path / "go"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", WORKER, str(registry.root), str(model_file), str(go), name],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for name in ("a", "b")
    ]
    go.touch()
    for proc in procs:
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
        assert out.strip() == ""  # the registry, diff and CLI modules never import prefect
    listed = registry.versions(PIPE)
    assert [v.number for v in listed] == list(range(1, 21))
    assert len({v.version for v in listed}) == 20
    assert {v.run_id for v in listed} == {f"{n}-{i}" for n in "ab" for i in range(10)}


# --- promotion -----------------------------------------------------------------------------------


def test_first_version_becomes_champion(registry, models):
    version = register(registry, models[0], f1=0.4)
    decision = registry.promote(PIPE, version.version)
    assert decision.promoted and decision.previous is None and decision.delta is None
    assert "no champion yet" in decision.reason
    champion = registry.champion(PIPE)
    assert champion.version == version.version and champion.status == CHAMPION
    assert champion.reason == decision.reason and champion.decided_at
    assert stored_status(champion) == CHAMPION
    pointer = json.loads((registry.root / "models" / PIPE / "champion.json").read_text())
    assert pointer["version"] == version.version and pointer["previous"] is None
    assert pointer["model_sha256"] == version.model_sha256
    assert registry.get(PIPE, "champion") == champion
    assert [h["version"] for h in registry.history(PIPE)] == [version.version]


def test_worse_than_tolerance_is_rejected_with_reason(registry, models):
    champion = register(registry, models[0], f1=0.58)
    registry.promote(PIPE, champion.version)
    challenger = register(registry, models[1], f1=0.512)
    decision = registry.promote(PIPE, challenger.version, tolerance=0.02)
    assert not decision.promoted
    assert decision.previous.version == champion.version
    assert decision.delta == pytest.approx(-0.068)
    assert decision.reason.startswith(
        f"holdout f1 0.512 is below the champion {champion.version}'s 0.580 minus tolerance 0.02"
    )
    assert registry.champion(PIPE).version == champion.version
    rejected = registry.get(PIPE, challenger.version)
    assert rejected.status == REJECTED and rejected.reason == decision.reason
    assert statuses(registry) == {champion.version: CHAMPION, challenger.version: REJECTED}
    assert decision.to_dict()["previous"] == champion.version


@pytest.mark.parametrize("f1", [0.57, 0.56, 0.58, 0.7])
def test_within_tolerance_or_better_is_promoted(registry, models, f1):
    old = register(registry, models[0], f1=0.58)
    registry.promote(PIPE, old.version)
    new = register(registry, models[1], f1=f1)
    decision = registry.promote(PIPE, new.version, tolerance=0.02)
    assert decision.promoted, decision.reason
    assert decision.delta == pytest.approx(f1 - 0.58)
    assert registry.champion(PIPE).version == new.version
    assert statuses(registry) == {old.version: RETIRED, new.version: CHAMPION}
    retired = registry.get(PIPE, old.version)
    assert stored_status(retired) == RETIRED and retired.reason == f"replaced by {new.version}"
    pointer = json.loads((registry.root / "models" / PIPE / "champion.json").read_text())
    assert pointer["previous"] == old.version
    assert [h["version"] for h in registry.history(PIPE)] == [old.version, new.version]


def test_a_model_of_another_positive_class_is_not_compared_by_score(registry, models, haberman):
    """Changing target.positive_class: the old F1 measured the other class."""
    X, y, info = haberman
    other = "1" if info.positive_class == "2" else "2"
    flipped = LibreClassifier(n_estimators=5, random_state=0, positive_class=other).fit(X, y)
    champion = register(registry, models[0], f1=0.45)
    registry.promote(PIPE, champion.version)
    same_question = register(registry, models[1], f1=0.30)
    assert not registry.decide(PIPE, same_question.version).promoted
    new_question = register(registry, flipped, f1=0.87)
    decision = registry.promote(PIPE, new_question.version, tolerance=0.0)
    assert decision.promoted and decision.delta is None
    assert decision.reason.startswith(f"the question changed since the champion {champion.version}")
    assert f"positive class '{info.positive_class}' -> '{other}'" in decision.reason
    assert "is not below" not in decision.reason
    assert registry.champion(PIPE).version == new_question.version


def test_another_question_on_another_file_does_not_take_over_the_champion(
    registry, models, haberman
):
    """Two specs of one name in one store (pima's and a haberman spec named pima): each run
    read the other's champion as "the question changed" and took it over."""
    X, y, info = haberman
    other = "1" if info.positive_class == "2" else "2"
    flipped = LibreClassifier(n_estimators=5, random_state=0, positive_class=other).fit(X, y)

    def registered(model, path):
        return registry.register(
            PIPE, model.to_json(), spec={"name": PIPE, "data": {"path": path}},
            metrics={"f1": 0.5}, validation=PASSED, data_fingerprint=path * 32,
            spec_hash=path * 32, run_id=path,
        )  # fmt: skip

    champion = registered(models[0], "aa")
    registry.promote(PIPE, champion.version)
    decision = registry.promote(PIPE, registered(flipped, "bb").version)
    assert not decision.promoted
    said = " ".join(decision.reason.split())
    assert "trained on the data file 'aa'" in said and "Give each spec its own `name:`" in said
    assert f"`libre models promote {PIPE} " in said
    assert registry.champion(PIPE).version == champion.version


def test_zero_tolerance_rejects_any_drop(registry, models):
    registry.promote(PIPE, register(registry, models[0], f1=0.58).version)
    decision = registry.promote(PIPE, register(registry, models[1], f1=0.579).version)
    assert not decision.promoted and "minus tolerance" not in decision.reason


def test_failed_validation_is_never_promoted(registry, models):
    first = register(registry, models[0], f1=0.99, validation=FAILED)
    decision = registry.promote(PIPE, first.version)
    assert not decision.promoted and "data validation failed (2 expectations" in decision.reason
    assert registry.champion(PIPE) is None
    assert registry.get(PIPE, first.version).status == REJECTED
    champion = register(registry, models[1], f1=0.3)
    assert registry.promote(PIPE, champion.version).promoted
    better_but_invalid = register(registry, models[2], f1=0.99, validation=FAILED)
    decision = registry.promote(PIPE, better_but_invalid.version, tolerance=1.0)
    assert not decision.promoted
    assert registry.champion(PIPE).version == champion.version


def test_a_version_less_accurate_than_the_majority_answer_is_not_promoted(registry, models):
    """promotion.beat_majority: the pipeline passes the majority answer's holdout accuracy."""
    first = register(registry, models[0], f1=0.46, accuracy=0.774)
    decision = registry.promote(PIPE, first.version, min_accuracy=0.806)
    assert not decision.promoted and registry.champion(PIPE) is None
    assert decision.reason == (
        "holdout accuracy 0.774 is below the majority-class answer's 0.806 on the same rows "
        "(promotion.beat_majority)"
    )
    assert registry.get(PIPE, first.version).status == REJECTED
    assert registry.promote(PIPE, first.version, min_accuracy=None).promoted  # the gate off
    better = register(registry, models[2], f1=0.5, accuracy=0.806)  # as accurate: enough
    assert registry.promote(PIPE, better.version, min_accuracy=0.806).promoted
    unknown = register(registry, models[1], f1=0.9)  # no accuracy recorded: not promoted
    decision = registry.decide(PIPE, unknown.version, min_accuracy=0.5)
    assert not decision.promoted and "accuracy is missing: not compared" in decision.reason
    assert registry.decide(PIPE, unknown.version).promoted


def test_a_version_without_rules_is_not_promoted_when_it_must_beat_the_majority(registry):
    """A model without rules gives the majority answer itself: it was promoted as "at least as
    accurate", and `libre score` then flagged no row without a word."""
    X = pd.DataFrame({"x": [1.0, 2.0, 1.0, 2.0]})
    with pytest.warns(LibreWarning, match="No rule was learned"):
        empty = LibreClassifier(random_state=0, chi2_threshold=0.0).fit(X, [0, 0, 1, 1])
    version = register(registry, empty, f1=0.0, accuracy=0.8)
    decision = registry.decide(PIPE, version.version, min_accuracy=0.8)
    assert not decision.promoted and "it has no rules" in decision.reason
    assert registry.decide(PIPE, version.version).promoted  # the gate off: a first champion


def test_a_version_that_flags_no_holdout_row_is_not_promoted_when_it_must_beat_the_majority(
    registry, models
):
    """Rules learned from 14 positive rows flagged none of 98 holdout rows: the version gave
    the majority answer there, and beat_majority promoted it as "at least as accurate"."""
    silent = register(registry, models[0], f1=0.0, accuracy=0.99, flagged=0)
    decision = registry.decide(PIPE, silent.version, min_accuracy=0.99)
    assert not decision.promoted
    assert decision.reason.startswith("it flags none of the holdout rows: there it answers")
    assert registry.decide(PIPE, silent.version).promoted  # the gate off: a first champion
    flagging = register(registry, models[2], f1=0.3, accuracy=0.99, flagged=3)
    assert registry.decide(PIPE, flagging.version, min_accuracy=0.99).promoted


def test_decide_writes_nothing_and_checks_input(registry, models):
    old = register(registry, models[0], f1=0.5)
    registry.promote(PIPE, old.version)
    new = register(registry, models[1], f1=0.6)
    before = {p: p.read_bytes() for p in registry.root.rglob("*.json")}
    decision = registry.decide(PIPE, new.version)
    assert decision.promoted and decision.delta == pytest.approx(0.1)
    assert {p: p.read_bytes() for p in registry.root.rglob("*.json")} == before
    for bad in (-0.1, float("nan"), float("inf"), True, "0.1"):
        with pytest.raises(RegistryError, match="tolerance"):
            registry.decide(PIPE, new.version, tolerance=bad)
    decision = registry.decide(PIPE, new.version, metric="auc")
    assert not decision.promoted and "auc is missing" in decision.reason
    same = registry.promote(PIPE, old.version)
    assert same.promoted and "already the champion" in same.reason
    assert same.unchanged and not registry.decide(PIPE, new.version).unchanged
    assert registry.champion(PIPE).version == old.version


def test_a_rejected_version_can_be_promoted_later(registry, models):
    """E.g. after the lead raises the tolerance or rolls back."""
    old = register(registry, models[0], f1=0.6)
    registry.promote(PIPE, old.version)
    new = register(registry, models[1], f1=0.55)
    assert not registry.promote(PIPE, new.version).promoted
    assert registry.promote(PIPE, new.version, tolerance=0.1).promoted
    assert statuses(registry) == {old.version: RETIRED, new.version: CHAMPION}
    assert registry.promote(PIPE, old.version).promoted  # roll back: 0.6 >= 0.55
    assert statuses(registry) == {old.version: CHAMPION, new.version: RETIRED}


# --- crash safety --------------------------------------------------------------------------------


class Crash(RuntimeError):
    pass


def crash_on_call(monkeypatch, target, name, n, when=lambda *a, **k: True):
    """Make ``target.name`` raise Crash on its n-th matching call (1-based)."""
    original = getattr(target, name)
    calls = []

    def wrapper(*args, **kwargs):
        if when(*args, **kwargs):
            calls.append(args)
            if len(calls) == n:
                raise Crash(f"simulated crash in {name} call {n}")
        return original(*args, **kwargs)

    monkeypatch.setattr(target, name, wrapper)
    return calls


def assert_consistent(registry, allowed_champions):
    """The invariant: the pointer names a complete folder of an allowed version, whose model
    loads; at most one version reads as champion."""
    champion = registry.champion(PIPE)
    name = champion.version if champion else None
    assert name in allowed_champions
    listed = registry.versions(PIPE)
    assert [v.version for v in listed if v.status == CHAMPION] == ([name] if name else [])
    if champion is not None:
        folder = champion.path
        assert sorted(p.name for p in folder.iterdir()) == [
            "model.json",
            "spec.json",
            "version.json",
        ]
        registry.load_model(PIPE)
    for version in listed:
        registry.load_model(PIPE, version.version)  # every listed version is complete


@pytest.mark.parametrize(
    "target, name, n",
    [
        ("registry", "write_new_file", 1),
        ("registry", "write_new_file", 2),
        ("registry", "write_new_file", 3),
        ("registry", "fsync_dir", 1),
        ("os", "rename", 1),
    ],
)
def test_crash_while_registering_leaves_no_partial_version(
    registry, models, monkeypatch, target, name, n
):
    old = register(registry, models[0])
    registry.promote(PIPE, old.version)
    module = registry_module if target == "registry" else registry_module.os
    crash_on_call(monkeypatch, module, name, n)
    with pytest.raises(Crash):
        register(registry, models[1])
    monkeypatch.undo()
    assert [v.version for v in registry.versions(PIPE)] == [old.version]
    assert_consistent(registry, {old.version})
    folder = registry.root / "models" / PIPE
    assert not [p for p in folder.iterdir() if p.name.startswith(".tmp-")]
    again = register(registry, models[1])
    assert again.number == 2


def test_hard_crash_leaves_only_an_ignored_temp_folder(registry, models, monkeypatch):
    old = register(registry, models[0])
    registry.promote(PIPE, old.version)
    # A killed process cannot clean up: no rmtree, and it dies at the rename.
    monkeypatch.setattr(registry_module.shutil, "rmtree", lambda *a, **k: None)
    crash_on_call(monkeypatch, registry_module.os, "rename", 1)
    with pytest.raises(Crash):
        register(registry, models[1])
    monkeypatch.undo()
    folder = registry.root / "models" / PIPE
    temps = [p for p in folder.iterdir() if p.name.startswith(".tmp-")]
    assert len(temps) == 1
    assert [v.version for v in registry.versions(PIPE)] == [old.version]
    assert_consistent(registry, {old.version})
    assert register(registry, models[2]).number == 2
    assert registry.cleanup_temp(PIPE, max_age_s=3600) == []  # too recent
    assert registry.cleanup_temp(PIPE, max_age_s=-1) == []  # its writer (this process) lives
    monkeypatch.setattr(files_module, "process_alive", lambda pid: False)
    assert registry.cleanup_temp(PIPE, max_age_s=-1) == temps
    assert not temps[0].exists()


def _is_registry_json(path, *args, **kwargs):
    return str(path).endswith((".json",))


@pytest.mark.parametrize("n", [1, 2, 3])
def test_crash_at_each_step_of_promotion(registry, models, monkeypatch, n):
    """promote writes the pointer (1), the new version's status (2), the old one's (3)."""
    old = register(registry, models[0], f1=0.5)
    registry.promote(PIPE, old.version)
    new = register(registry, models[1], f1=0.6)
    calls = crash_on_call(monkeypatch, registry_module, "atomic_write_text", n)
    with pytest.raises(Crash):
        registry.promote(PIPE, new.version)
    monkeypatch.undo()
    assert [Path(c[0]).name for c in calls][:n] == [
        "champion.json",
        "version.json",
        "version.json",
    ][:n]
    expected = old.version if n == 1 else new.version
    assert registry.champion(PIPE).version == expected
    assert_consistent(registry, {expected})
    if n == 2:  # the new version reads as champion though its file still says candidate
        assert stored_status(registry.get(PIPE, new.version)) == CANDIDATE
        assert registry.get(PIPE, new.version).reason.startswith("holdout f1 0.600 is not below")
    if n > 1:  # the old champion reads as retired even though its file still says champion
        assert stored_status(registry.get(PIPE, old.version)) == CHAMPION
        retired = registry.get(PIPE, old.version)
        assert retired.status == RETIRED and retired.reason == f"replaced by {new.version}"
    # Promoting again finishes the job and repairs the stored statuses.
    assert registry.promote(PIPE, new.version).promoted
    assert statuses(registry) == {old.version: RETIRED, new.version: CHAMPION}
    assert stored_status(registry.get(PIPE, old.version)) == RETIRED
    assert stored_status(registry.get(PIPE, new.version)) == CHAMPION


def test_repair_on_the_next_promotion_of_another_version(registry, models, monkeypatch):
    old = register(registry, models[0], f1=0.5)
    registry.promote(PIPE, old.version)
    new = register(registry, models[1], f1=0.6)
    crash_on_call(monkeypatch, registry_module, "atomic_write_text", 2)
    with pytest.raises(Crash):
        registry.promote(PIPE, new.version)
    monkeypatch.undo()
    third = register(registry, models[2], f1=0.1)
    assert not registry.promote(PIPE, third.version).promoted
    assert stored_status(registry.get(PIPE, old.version)) == RETIRED
    assert stored_status(registry.get(PIPE, new.version)) == CHAMPION


@pytest.mark.parametrize("step", ["write", "fsync", "replace"])
def test_crash_inside_the_pointer_write_keeps_the_old_pointer(registry, models, monkeypatch, step):
    old = register(registry, models[0], f1=0.5)
    registry.promote(PIPE, old.version)
    pointer = registry.root / "models" / PIPE / "champion.json"
    before = pointer.read_bytes()
    new = register(registry, models[1], f1=0.6)
    if step == "replace":
        crash_on_call(monkeypatch, files_module.os, "replace", 1)
    elif step == "fsync":
        crash_on_call(monkeypatch, files_module.os, "fsync", 1)
    else:

        def broken_write(final, writer):
            raise Crash("disk gone")

        monkeypatch.setattr(files_module, "write_temp", broken_write)
    with pytest.raises(Crash):
        registry.promote(PIPE, new.version)
    monkeypatch.undo()
    assert pointer.read_bytes() == before
    assert_consistent(registry, {old.version})
    assert registry.get(PIPE, new.version).status == CANDIDATE
    assert not [p for p in pointer.parent.iterdir() if ".tmp-" in p.name]


def test_os_errors_become_registry_errors(registry, models, monkeypatch):
    def full(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(registry_module, "write_new_file", full)
    with pytest.raises(RegistryError, match=r"No space left on device.*no partial version"):
        register(registry, models[0])
    monkeypatch.undo()
    version = register(registry, models[0])
    monkeypatch.setattr(files_module, "write_temp", full)
    with pytest.raises(RegistryError, match="Could not record the decision") as raised:
        registry.promote(PIPE, version.version)
    assert not str(raised.value).endswith("..")  # the cause's own full stop, not two
    monkeypatch.undo()
    assert registry.champion(PIPE) is None


def test_pointer_never_names_a_missing_or_partial_folder(registry, models, tmp_path):
    old = register(registry, models[0])
    registry.promote(PIPE, old.version)
    new = register(registry, models[1])
    # An incomplete folder (e.g. someone deleted model.json) is refused as a champion.
    (new.path / "model.json").unlink()
    with pytest.raises(RegistryError, match="incomplete"):
        registry.promote(PIPE, new.version)
    assert registry.champion(PIPE).version == old.version
    # A champion folder removed by hand gives a clear error, not a half-loaded model.
    os.rename(old.path, tmp_path / "moved")
    with pytest.raises(RegistryError, match="not a complete version folder"):
        registry.champion(PIPE)


def test_tampered_model_is_refused(registry, models):
    version = register(registry, models[0])
    registry.promote(PIPE, version.version)
    version.model_path.write_text(models[1].to_json())
    with pytest.raises(RegistryError, match="does not match the sha256"):
        registry.load_model(PIPE)


# --- loading and comparing -----------------------------------------------------------------------


def test_load_model_round_trip_predicts_like_the_original(registry, models, haberman):
    X, _, _ = haberman
    first = register(registry, models[0], f1=0.5)
    second = register(registry, models[1], f1=0.4)
    registry.promote(PIPE, first.version)
    registry.promote(PIPE, second.version)
    champion = registry.load_model(PIPE)
    np.testing.assert_array_equal(champion.predict(X), models[0].predict(X))
    assert str(champion.rules_) == str(models[0].rules_)
    other = registry.load_model(PIPE, second.version)
    np.testing.assert_array_equal(other.predict(X), models[1].predict(X))
    np.testing.assert_array_equal(other.decision_function(X), models[1].decision_function(X))
    assert registry.model_json(PIPE, second.version) == models[1].to_json()


def test_changes_against_the_champion(registry, models):
    old = register(registry, models[0], f1=0.5)
    registry.promote(PIPE, old.version)
    previous = registry.champion(PIPE)
    new = register(registry, models[1], f1=0.55)
    decision = registry.promote(PIPE, new.version)
    changes = registry.changes(PIPE, previous, new, decision)
    assert changes.old_version == old.version and changes.new_version == new.version
    assert changes.deltas["f1"]["delta"] == pytest.approx(0.05)
    assert changes.decision.startswith(f"{new.version} became the champion: holdout f1 0.550")
    n_old, n_new = len(models[0].rules_), len(models[1].rules_)
    counts = changes.diff.counts()
    assert counts["removed"] + counts["changed"] + counts["unchanged"] == n_old
    assert counts["added"] + counts["changed"] + counts["unchanged"] == n_new
    assert registry.changes(PIPE, None, new) is None
    # a re-run that reused the champion compares nothing with itself
    assert registry.changes(PIPE, new.version, new.version, decision) is None
    held = registry.promote(PIPE, new.version)
    assert ".." not in registry.changes(PIPE, old.version, new.version, held).decision


def test_validation_record():
    class Result:
        def __init__(self, expectation, success):
            self.expectation, self.success = expectation, success

    class Report:
        success = False
        n_rows = 306
        results = (Result("expect_a", True), Result("expect_b", False))

        def failures(self):
            return [r for r in self.results if not r.success]

        def summary(self):
            return "Data validation failed: 1 of 2"

    assert validation_record(Report()) == {
        "success": False,
        "n_failed": 1,
        "n_expectations": 2,
        "n_rows": 306,
        "failed": ["expect_b"],
        "summary": "Data validation failed: 1 of 2",
    }


# --- the CLI -------------------------------------------------------------------------------------

runner = CliRunner()


@pytest.fixture
def populated(registry, models):
    a = register(registry, models[0], f1=0.58, created_at="2025-01-01T00:00:00+00:00")
    registry.promote(PIPE, a.version)
    b = register(registry, models[1], f1=0.5, created_at="2025-01-02T00:00:00+00:00")
    registry.promote(PIPE, b.version, tolerance=0.02)
    c = register(registry, models[2], f1=0.6, created_at="2025-01-03T00:00:00+00:00")
    registry.promote(PIPE, c.version)
    return registry, (a, b, c)


def test_cli_list(populated, monkeypatch):
    registry, (a, b, c) = populated
    monkeypatch.setattr(models_cli.console, "width", 250)  # whatever the runner's terminal
    result = runner.invoke(models_app, ["list", PIPE, "--store", str(registry.root)])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    first_id = re.compile(r"v\d{4}-[0-9a-f]{8}")
    row = {
        v.version: next(
            line for line in lines if (m := first_id.search(line)) and m[0] == v.version
        )
        for v in (a, b, c)
    }
    assert "retired" in row[a.version] and "★" not in row[a.version]
    assert "challenger-rejected" in row[b.version] and "0.500" in row[b.version]
    assert "is below the champion" in row[b.version]
    assert "★" in row[c.version] and "champion" in row[c.version] and "0.600" in row[c.version]
    assert "2025-01-03 00:00" in row[c.version]  # to the minute, one line
    assert lines.index(row[a.version]) < lines.index(row[b.version]) < lines.index(row[c.version])


def test_cli_list_keeps_version_ids_whole_in_a_narrow_terminal(populated, monkeypatch):
    from rich.console import Console

    registry, versions = populated
    monkeypatch.setattr(models_cli, "console", Console(width=60))  # a terminal's
    result = runner.invoke(models_app, ["list", PIPE, "--store", str(registry.root)])
    assert result.exit_code == 0, result.output
    assert max(map(len, result.output.splitlines())) <= 60
    for v in versions:
        assert v.version in result.output


def test_cli_list_and_show_keep_lines_whole_off_a_terminal(populated, models):
    """Piped to a file or `| cat` (CI), `models list` dropped its reason column and `models
    show` broke a rule in the middle of a condition: the console was 80 columns wide."""
    registry, versions = populated
    result = runner.invoke(models_app, ["list", PIPE, "--store", str(registry.root)])
    for v in versions:
        assert registry.get(PIPE, v.version).reason in result.output
    result = runner.invoke(models_app, ["show", PIPE, "--store", str(registry.root)])
    for line in str(models[2].rules_).splitlines():
        assert line in result.output.splitlines()


def test_cli_show(populated, models):
    registry, (_, b, c) = populated
    result = runner.invoke(models_app, ["show", PIPE, "--store", str(registry.root)])
    assert result.exit_code == 0, result.output
    assert f"{PIPE} {c.version} ★ champion" in result.output
    assert str(models[2].rules_) in result.output
    assert c.model_sha256 in result.output and "passed (5 expectations)" in result.output
    result = runner.invoke(models_app, ["show", PIPE, b.version, "--store", str(registry.root)])
    assert result.exit_code == 0, result.output
    assert "challenger-rejected" in result.output and "★" not in result.output
    assert str(models[1].rules_) in result.output


@pytest.mark.parametrize(
    "args, message",
    [
        (["show", PIPE, "v0042-00000000"], "has no model version 'v0042-00000000'"),
        (["list", "nothing"], "No model versions of 'nothing'"),
        (["show", "nothing"], "has no registered model versions yet under "),
        (["show", "bad/name"], "is not valid"),
    ],
)
def test_cli_errors_are_one_line(populated, args, message):
    registry, _ = populated
    result = runner.invoke(models_app, [*args, "--store", str(registry.root)])
    assert result.exit_code == 1
    assert result.stdout == ""
    assert message in result.stderr
    assert result.stderr.strip().startswith("error:")
    assert len(result.stderr.strip().splitlines()) == 1
    assert "Traceback" not in result.stderr


def test_cli_default_store(populated, monkeypatch):
    registry, (_, _, c) = populated
    monkeypatch.chdir(registry.root.parent)
    os.rename(registry.root, registry.root.parent / ".libre-store")
    result = runner.invoke(models_app, ["show", PIPE, "champion"])
    assert result.exit_code == 0, result.output
    assert c.version in result.output


def test_cli_mounts_as_a_sub_app(populated):
    import typer

    registry, (_, _, c) = populated
    app = typer.Typer()

    @app.command()
    def other() -> None:  # a second command, as in flows.cli
        pass

    app.add_typer(models_app, name="models")
    result = runner.invoke(app, ["models", "show", PIPE, "--store", str(registry.root)])
    assert result.exit_code == 0, result.output
    assert c.version in result.output
    assert "list" in runner.invoke(app, ["models", "--help"]).output


# --- checksums: a changed model or contract is never used ----------------------------------------


def contract_text(model, X) -> str:
    from libre_lib.ops.contract import DataContract

    return DataContract.from_model(model, X).to_json()


@pytest.fixture
def with_contract(registry, models, haberman):
    """A champion registered with its contract, as training registers it."""
    X, _, _ = haberman
    version = register(
        registry, models[0], extra_files={"contract.json": contract_text(models[0], X)}
    )
    registry.promote(PIPE, version.version)
    return registry, registry.get(PIPE, version.version), X


def test_the_contract_checksum_is_recorded_at_registration(with_contract):
    from libre_lib.ops.artifacts import fingerprint_bytes

    registry, version, _ = with_contract
    record = json.loads((version.path / "version.json").read_text())
    contract = (version.path / "contract.json").read_bytes()
    assert record["files_sha256"] == {"contract.json": fingerprint_bytes(contract)}
    assert registry.load_contract(PIPE).names == list(registry.load_model(PIPE).columns_)


def tamper(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new, 1))


def test_a_tampered_champion_model_is_refused_on_every_load(with_contract, tmp_path):
    """`libre score PIPELINE@VERSION` read the version's model.json without checking the
    sha256 the registry recorded, so an edited champion was used for scoring."""
    from libre_lib.ops import scoring

    registry, version, _ = with_contract
    tamper(version.model_path, '"precision"', '"precision" ')
    message = rf"model.json of {PIPE}/{version.version} does not match the sha256 recorded"
    with pytest.raises(RegistryError, match=message) as exc:
        registry.load_model(PIPE)
    assert "\n" not in str(exc.value)
    with pytest.raises(RegistryError, match=message):
        scoring.load_model(version.model_path)  # the path `libre score PIPELINE` resolves to
    copy = tmp_path / "elsewhere" / "model.json"  # an unregistered copy is not checked
    copy.parent.mkdir()
    copy.write_text(version.model_path.read_text())
    scoring.load_model(copy)


def test_a_tampered_contract_is_refused_not_a_key_error(with_contract):
    """A contract edited after registration was used unchecked (an edit that dropped a column
    the rules test ended in a bare `KeyError` mid-scoring)."""
    from libre_lib.ops import scoring

    registry, version, X = with_contract
    tamper(version.path / "contract.json", '"name": "age"', '"name": "aged"')
    message = rf"contract.json of {PIPE}/{version.version} does not match the sha256 recorded"
    with pytest.raises(RegistryError, match=message):
        registry.load_contract(PIPE, version.version)
    with pytest.raises(RegistryError, match=message):
        scoring.find_contract(version.model_path)
    with pytest.raises(RegistryError, match=message):
        scoring.score_frame(registry.load_model(PIPE), X, version.path / "contract.json")


def test_a_registered_contract_that_was_deleted_is_refused_not_skipped(with_contract):
    """Deleting contract.json turned the data contract off: scoring said "no drift" for data
    the contract flags."""
    from libre_lib.ops import scoring

    registry, version, _ = with_contract
    (version.path / "contract.json").unlink()
    with pytest.raises(
        RegistryError, match=r"contract.json of .* (was registered but is missing|Cannot read)"
    ):
        registry.load_contract(PIPE, version.version)
    with pytest.raises(RegistryError, match=r"contract.json"):
        scoring.find_contract(version.model_path)


def test_a_contract_that_misses_a_model_column_is_one_clear_error(models, haberman, tmp_path):
    from libre_lib.ops import scoring
    from libre_lib.ops.contract import DataContract

    X, _, _ = haberman
    contract = DataContract.from_model(models[0], X).to_dict()
    contract["columns"] = [c for c in contract["columns"] if c["name"] != "age"]
    with pytest.raises(LibreError, match=r"does not cover the model's column 'age'"):
        scoring.score_frame(models[0], X, contract)


def test_a_version_registered_before_contract_checksums_says_so(with_contract):
    from libre_lib.errors import LibreWarning

    registry, version, _ = with_contract
    record = json.loads((version.path / "version.json").read_text())
    del record["files_sha256"]  # as an older release wrote it
    (version.path / "version.json").write_text(json.dumps(record))
    with pytest.warns(LibreWarning, match=rf"contract.json of {PIPE}/{version.version} has no"):
        contract = registry.load_contract(PIPE)
    assert contract is not None
    registry.load_model(PIPE)  # the model's sha256 was always recorded


def test_a_champion_whose_record_was_rewritten_disagrees_with_the_pointer(with_contract):
    registry, version, _ = with_contract
    tamper(version.path / "version.json", version.model_sha256, "0" * 64)
    with pytest.raises(RegistryError, match=r"records another model sha256 than the champion"):
        registry.load_model(PIPE)


def test_cli_score_refuses_a_tampered_registered_model_in_one_line(with_contract, tmp_path):
    from libre_flows.flows.cli.score import app as score_app

    registry, version, X = with_contract
    inputs = tmp_path / "in.csv"
    X.to_csv(inputs, index=False)
    tamper(version.model_path, '"precision"', '"precision" ')
    for ref in (PIPE, f"{PIPE}@{version.version}"):
        result = runner.invoke(
            score_app,
            [ref, str(inputs), str(tmp_path / "out.parquet"), "--store", str(registry.root)],
        )
        assert result.exit_code == 1
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1 and f"{PIPE}/{version.version}" in lines[0], result.stderr
        assert not (tmp_path / "out.parquet").exists()


def test_an_unchanged_model_reuses_its_version(registry, models):
    """The same model, data fingerprint and spec hash as the latest version register nothing;
    any difference registers a new version."""
    model = models[0].to_json()
    kwargs = dict(
        spec={"name": PIPE},
        metrics={"f1": 0.5},
        validation=PASSED,
        data_fingerprint="d" * 64,
        spec_hash="s" * 64,
        run_id="run-1",
    )
    first, new = registry.register_unless_unchanged(PIPE, model, **kwargs)
    assert new
    again, new = registry.register_unless_unchanged(PIPE, model, **{**kwargs, "run_id": "run-2"})
    assert not new and again.version == first.version and again.run_id == "run-1"
    changed = {**kwargs, "spec_hash": "t" * 64}
    other, new = registry.register_unless_unchanged(PIPE, model, **changed)
    assert new and other.number == 2
    assert registry.register(PIPE, model, **changed).number == 3  # register always adds one
    assert [v.number for v in registry.versions(PIPE)] == [1, 2, 3]
    # an earlier version reproduced (a retraining back on the first data and spec after a
    # candidate on other ones): that version, not a copy; the latest of equal ones
    back, new = registry.register_unless_unchanged(PIPE, model, **{**kwargs, "run_id": "run-4"})
    assert not new and back.version == first.version
    assert registry.register_unless_unchanged(PIPE, model, **changed)[0].number == 3
    assert [v.number for v in registry.versions(PIPE)] == [1, 2, 3]


def test_a_damaged_champion_is_replaced_by_hand(registry, models):
    """A garbled champion pointer blocked every training and scoring run, and the error's
    advice ("promote another version") had no command. `libre models promote` is that
    command: it lists and promotes with the pointer damaged, and refuses a damaged version."""
    runner = CliRunner()
    old = register(registry, models[0], f1=0.6)
    registry.promote(PIPE, old.version)
    new = register(registry, models[1], f1=0.7)
    registry.promote(PIPE, new.version)
    pointer = registry.pipeline_dir(PIPE) / "champion.json"
    pointer.write_text(pointer.read_text()[:40])  # a half-restored backup
    hint = rf"libre models promote {PIPE} <version> --store {re.escape(str(registry.root))}"
    with pytest.raises(RegistryError, match=hint):
        registry.champion(PIPE)
    store = ["--store", str(registry.root)]
    listed = runner.invoke(models_app, ["list", PIPE, *store], env={"COLUMNS": "250"})
    assert listed.exit_code == 0 and old.version in listed.output and new.version in listed.output
    result = runner.invoke(
        models_app, ["promote", PIPE, old.version, "--reason", "rollback", *store]
    )
    assert result.exit_code == 0 and f"{old.version} is now the champion" in result.output
    champion = registry.champion(PIPE)
    assert champion.version == old.version and champion.reason == "promoted by hand: rollback"
    assert registry.get(PIPE, new.version).status == "retired"
    # a version whose model was changed after registration is refused, the champion stays
    tamper(registry.get(PIPE, new.version).model_path, '"alpha"', '"alpha" ')
    result = runner.invoke(models_app, ["promote", PIPE, new.version, *store])
    assert result.exit_code == 1 and "does not match the sha256" in result.output
    assert registry.champion(PIPE).version == old.version
    failed = register(registry, models[2], validation=FAILED)
    with pytest.raises(RegistryError, match="failed data validation"):
        registry.set_champion(PIPE, failed.version)


def test_without_a_readable_pointer_the_listing_names_the_recorded_champion(
    registry, models, caplog
):
    """With the pointer damaged, deleted or naming a deleted folder, the recorded champion was
    listed as "retired, replaced by None" (or by the missing folder), and the error of a
    deleted pointer said that no version was ever promoted."""
    import shutil

    old = register(registry, models[0], f1=0.6)
    registry.promote(PIPE, old.version)
    new = register(registry, models[1], f1=0.7)
    registry.promote(PIPE, new.version)
    pointer = registry.pipeline_dir(PIPE) / "champion.json"
    kept = pointer.read_text()
    # the store named: the command's default store is ./.libre-store, not this one
    promote = f"libre models promote {PIPE} {new.version} --store {registry.root}"
    pointer.write_text(kept[:20])  # damaged
    listed = {v.version: v for v in registry.versions(PIPE)}
    assert listed[new.version].status == "champion" and promote in listed[new.version].reason
    assert listed[old.version].status == "retired"
    pointer.unlink()  # deleted
    assert registry.get(PIPE, new.version).status == "champion"
    with pytest.raises(RegistryError, match=rf"no champion pointer .*{promote}"):
        registry.get(PIPE, "champion")
    pointer.write_text(kept)
    shutil.rmtree(registry.pipeline_dir(PIPE) / new.version)  # the champion's folder deleted
    with caplog.at_level("WARNING"):
        listed = registry.versions(PIPE)
    assert "not a complete version folder" in caplog.text
    assert [v.status for v in listed] == ["retired"]  # the old one, retired by the promotion
    record = old.path / "version.json"  # a pointer restored from a backup, say: the listing
    record.write_text(record.read_text().replace('"retired"', '"champion"'))  # and get() agree
    (listed,) = registry.versions(PIPE)
    shown = registry.get(PIPE, old.version)
    assert listed.status == shown.status == "champion" and listed.reason == shown.reason
    assert f"libre models promote {PIPE} {old.version}" in shown.reason


def test_a_pipeline_whose_versions_are_all_damaged_is_listed_as_such(registry, models):
    version = register(registry, models[0])
    (version.path / "version.json").unlink()
    result = runner.invoke(models_app, ["list", PIPE, "--store", str(registry.root)])
    assert result.exit_code == 1
    assert f"No readable model version of '{PIPE}'" in result.stderr
    assert "Pipelines with models" not in result.stderr


def test_the_trend_marks_versions_scored_on_their_training_rows(registry, models):
    """A version trained with holdout_fraction 0 has in-sample metrics; the report's trend read
    them as holdout scores beside the other versions'."""
    from libre_lib.ops.baselines import version_trend
    from libre_lib.ops.report_sections import trend_blocks
    from libre_lib.ops.stages import _in_sample

    for i, fraction in enumerate((0.2, 0, 0.3)):
        registry.register(
            PIPE,
            models[i].to_json(),
            spec={"name": PIPE, "holdout_fraction": fraction},
            metrics={"f1": 0.6, "accuracy": 0.7, "n_rules": 2},
            validation=PASSED,
            data_fingerprint="d" * 64,
            spec_hash=str(i) * 64,
            run_id=f"r{i}",
        )
    versions = registry.versions(PIPE)
    second = versions[1].version
    (versions[2].path / "spec.json").write_text("{not json")  # unreadable: read as a holdout
    assert _in_sample(registry, versions) == [second]
    trend = version_trend(versions, in_sample=_in_sample(registry, versions))
    assert trend["scored_on"].tolist() == ["holdout", "training", "holdout"]
    blocks = trend_blocks(trend)
    text = next(c for kind, c in blocks if kind == "p")
    rows = next(c[1] for kind, c in blocks if kind == "table")
    assert "optimistic" in text
    assert [r[2].endswith("scored on training rows") for r in rows] == [False, True, False]
    caption = next(c[1] for kind, c in blocks if kind == "figure")
    assert f"on its training rows for {second.split('-')[0]}: no holdout" in caption
    held_out = trend.assign(scored_on="holdout")
    assert "optimistic" not in next(c for kind, c in trend_blocks(held_out) if kind == "p")
    # the registry's statuses in the words of this run's line ("candidate, not promoted")
    worded = trend.assign(status=["retired", "challenger-rejected", "champion"])
    rows = next(c[1] for kind, c in trend_blocks(worded, False) if kind == "table")
    assert [r[2].split(",")[0] for r in rows] == [
        "retired (was champion)",
        "not promoted",
        "champion",
    ]


def test_a_run_that_reproduces_a_version_rolled_back_by_hand_does_not_promote_it(registry, models):
    """A rollback (`libre models promote` of an older version) was undone by the next run on
    the same data and spec: it reproduced the retired version, whose F1 is not below the
    champion's, and promoted it again."""
    kwargs = dict(
        spec={"name": PIPE},
        validation=PASSED,
        data_fingerprint="d" * 64,
        spec_hash="s" * 64,
        run_id="run-1",
    )
    old, _ = registry.register_unless_unchanged(
        PIPE, models[0].to_json(), metrics={"f1": 0.6}, **kwargs
    )
    registry.promote(PIPE, old.version)
    bad, _ = registry.register_unless_unchanged(
        PIPE, models[1].to_json(), metrics={"f1": 0.7}, **kwargs
    )
    assert registry.promote(PIPE, bad.version).promoted
    registry.set_champion(PIPE, old.version, reason="rollback")
    for run in ("run-2", "run-3"):  # the nightly run, twice
        again, new = registry.register_unless_unchanged(
            PIPE, models[1].to_json(), metrics={"f1": 0.7}, **{**kwargs, "run_id": run}
        )
        assert not new and again.version == bad.version
        decision = registry.promote(PIPE, again.version)
        assert not decision.promoted
        assert f"replaced by {old.version} by hand (a rollback)" in decision.reason
        assert f"libre models promote {PIPE} {bad.version}" in decision.reason
        assert registry.champion(PIPE).version == old.version
        assert registry.get(PIPE, bad.version).status == "retired"
    # a spec change that leaves the model as it was (its description) registers a new version
    # of the same model: it did undo the rollback
    twin, new = registry.register_unless_unchanged(
        PIPE, models[1].to_json(), metrics={"f1": 0.7}, **{**kwargs, "spec_hash": "t" * 64}
    )
    assert new and twin.model_sha256 == bad.model_sha256
    decision = registry.promote(PIPE, twin.version)
    assert not decision.promoted and registry.champion(PIPE).version == old.version
    assert f"the same model, trained on the same data, as {bad.version}" in decision.reason
    assert f"libre models promote {PIPE} {twin.version}" in decision.reason
    # a new model is compared as before, and the rolled-back version can be promoted by hand
    newer, new = registry.register_unless_unchanged(
        PIPE, models[2].to_json(), metrics={"f1": 0.65}, **kwargs
    )
    assert new and registry.promote(PIPE, newer.version).promoted
    assert registry.set_champion(PIPE, bad.version).version == bad.version


def test_cli_list_keeps_one_line_per_version_in_80_columns(populated, monkeypatch):
    """In 80 columns the timestamps split across lines and one version's reason ran to about
    15 lines."""
    registry, versions = populated
    monkeypatch.setattr(models_cli.console, "width", 80)
    result = runner.invoke(models_app, ["list", PIPE, "--store", str(registry.root)])
    assert result.exit_code == 0, result.output
    rows = [line for line in result.output.splitlines() if re.search(r"v\d{4}-[0-9a-f]{8}", line)]
    assert len(rows) == len(versions) and all(v.version in "".join(rows) for v in versions)
    assert "libre models show" in result.output  # where the reasons are


def test_a_version_is_found_by_its_number_alone(populated):
    """`libre models promote pima v0002` was refused: the id had to be typed in full."""
    registry, (a, *_) = populated
    number = a.version.split("-")[0]
    assert registry.get(PIPE, number).version == a.version
    with pytest.raises(RegistryError, match="has no model version 'v0099'"):
        registry.get(PIPE, "v0099")
    result = runner.invoke(models_app, ["show", PIPE, number, "--store", str(registry.root)])
    assert result.exit_code == 0 and a.version in result.output


def spec_file(folder: Path, store: str) -> Path:
    """A spec of pipeline PIPE whose store is ``store`` (relative to the spec's folder)."""
    folder.mkdir(parents=True, exist_ok=True)
    spec = folder / "h.yaml"
    spec.write_text(
        f"name: {PIPE}\ndata: {{path: h.csv}}\nstore: {store}\n"
        "target: {column: target, positive_class: '2', classes: ['1', '2']}\n"
    )
    return spec


def test_cli_takes_a_spec_file_for_its_pipeline_in_its_store(populated, tmp_path, monkeypatch):
    """`libre models list specs/h.yaml` looked for a pipeline named 'specs/h.yaml' in
    ./.libre-store: the user had to repeat the spec's name and its store by hand."""
    registry, (a, _, c) = populated
    spec = spec_file(tmp_path / "specs", "../store")  # the fixture's registry root
    monkeypatch.chdir(tmp_path / "specs")  # no .libre-store here
    monkeypatch.setattr(models_cli.console, "width", 250)
    listed = runner.invoke(models_app, ["list", str(spec)])
    assert listed.exit_code == 0, listed.output
    assert a.version in listed.output and c.version in listed.output
    shown = runner.invoke(models_app, ["show", "h.yaml", a.version])
    assert shown.exit_code == 0, shown.output
    assert f"{PIPE} {a.version}" in shown.output
    elsewhere = tmp_path / "empty"
    elsewhere.mkdir()
    result = runner.invoke(models_app, ["list", str(spec), "--store", str(elsewhere)])
    assert result.exit_code == 1 and f"No model versions of {PIPE!r}" in result.stderr
    promoted = runner.invoke(models_app, ["promote", str(spec), a.version])
    assert promoted.exit_code == 0, promoted.output
    assert registry.champion(PIPE).version == a.version
    broken = spec_file(tmp_path / "broken", "../store")
    broken.write_text(broken.read_text().replace("name: ", "nme: "))
    result = runner.invoke(models_app, ["list", str(broken)])
    assert result.exit_code == 1 and "name" in result.stderr and "Traceback" not in result.output


def test_score_resolves_a_spec_file_to_its_champion(populated, tmp_path):
    from libre_flows.flows.cli.score import resolve_model

    _, (a, _, c) = populated
    spec = spec_file(tmp_path / "specs", "../store")
    assert resolve_model(spec, None) == c.model_path
    assert resolve_model(Path(f"{spec}@{a.version}"), None) == a.model_path
    with pytest.raises(LibreError, match="has no registered model versions"):
        resolve_model(spec, tmp_path / "elsewhere")


def test_a_damaged_champion_pointer_is_told_once_per_command(populated, caplog):
    """`libre models promote` with a damaged champion.json printed the same warning about
    seven times (every read of the versions told it again)."""
    registry, (a, _, _) = populated
    (registry.pipeline_dir(PIPE) / "champion.json").write_text("garbage")
    with caplog.at_level("WARNING", logger="libre_lib.ops.registry"):
        registry.set_champion(PIPE, a.version, "rollback")
    told = [r for r in caplog.records if "Each version's own record" in r.getMessage()]
    assert len(told) == 1, caplog.text
    assert registry.champion(PIPE).version == a.version


def test_a_reused_version_with_a_damaged_model_file_is_restored(registry, models, caplog):
    """A run that reproduced a version whose model.json had been damaged reused it without a
    look: it reported that version as the champion, and `libre score` then refused it."""
    a = register(registry, models[0])
    registry.promote(PIPE, a.version)
    good = a.model_path.read_bytes()
    a.model_path.write_bytes(good.replace(b"0.5", b"0.6", 1))
    with pytest.raises(RegistryError, match="does not match the sha256"):
        registry.load_model(PIPE, a.version)
    with caplog.at_level("WARNING", logger="libre_lib.ops.registry"):
        again, new = registry.register_unless_unchanged(
            PIPE, models[0].to_json(), spec={"name": PIPE, "model": {"alpha": models[0].alpha}},
            metrics={"f1": 0.6}, validation=PASSED, data_fingerprint="d" * 64,
            spec_hash="s" * 64, run_id="run-2",
        )  # fmt: skip
    assert (again.version, new) == (a.version, False)
    assert a.model_path.read_bytes() == good
    assert "restored from this run's identical copy" in caplog.text
    assert registry.load_model(PIPE, a.version).rules_ == models[0].rules_


def test_a_decision_states_the_change_as_its_rounded_figures_differ(registry, models):
    """0.639 against 0.552 read "(change +0.086)" (the unrounded difference) while the changes
    table beside it showed +0.087; the decision's delta stays exact."""
    old = register(registry, models[0], f1=0.55238)
    registry.promote(PIPE, old.version)
    new = register(registry, models[2], f1=0.63866)
    decision = registry.decide(PIPE, new.version)
    assert "0.639 is not below the champion" in decision.reason
    assert "0.552 (change +0.087)" in decision.reason
    assert decision.delta == pytest.approx(0.63866 - 0.55238)


def test_a_version_recorded_under_an_earlier_spec_hash_is_still_reused(registry, models):
    """Versions of an earlier release recorded the hash of the whole spec: a run that hashes
    only the model's sections passes that hash as an alias, so it reuses them."""
    kwargs = dict(spec={"name": PIPE}, validation=PASSED, data_fingerprint="d" * 64, run_id="r")
    old, _ = registry.register_unless_unchanged(
        PIPE, models[0].to_json(), metrics={"f1": 0.6}, spec_hash="whole" * 4, **kwargs
    )
    again, new = registry.register_unless_unchanged(
        PIPE,
        models[0].to_json(),
        metrics={"f1": 0.6},
        spec_hash="model" * 4,
        spec_aliases=("whole" * 4,),
        **kwargs,
    )
    assert not new and again.version == old.version
    other, new = registry.register_unless_unchanged(
        PIPE, models[0].to_json(), metrics={"f1": 0.6}, spec_hash="else" * 4, **kwargs
    )
    assert new and other.version != old.version


def test_a_version_whose_run_stopped_before_promotion_reads_undecided(
    registry, models, tmp_path, monkeypatch
):
    """`libre models list` showed such a version as a candidate with an empty reason."""
    from typer.testing import CliRunner

    from libre_flows.flows.cli import app
    from libre_flows.flows.cli import models as models_cli

    monkeypatch.setattr(models_cli.console, "width", 200)  # room for the reason column

    first = register(registry, models[0])
    registry.promote(PIPE, first.version)
    stopped = register(registry, models[1], run_id="run-2")  # registered, never decided
    assert stopped.status == "candidate" and not stopped.reason
    root = str(tmp_path / "store")
    runner = CliRunner()
    listed = runner.invoke(app, ["models", "list", PIPE, "--store", root])
    row = next(line for line in listed.output.splitlines() if stopped.version in line)
    assert "undecided: its run has applied no promotion decision" in row
    shown = runner.invoke(app, ["models", "show", PIPE, stopped.version, "--store", root])
    assert "undecided: its run has applied no" in " ".join(shown.output.split())
    shown = runner.invoke(app, ["models", "show", PIPE, first.version, "--store", root])
    assert "undecided" not in shown.output


def test_a_reason_quotes_an_error_s_first_sentence_not_a_cut_paragraph():
    """The reason read "... The model learned it as numbers… (257 characters)))"."""
    from libre_lib.ops.registry import _first_sentence

    error = DataError(
        "Column 'score' should be numeric but holds values that are not numbers (Unable to "
        "parse string '5.4 pts' at position 0). The model learned it as numbers, so write "
        "them as numbers in the data, or retrain with the column declared categorical."
    )
    assert _first_sentence(error) == (
        "Column 'score' should be numeric but holds values that are not numbers (Unable to "
        "parse string '5.4 pts' at position 0)"
    )
    assert _first_sentence(DataError("x" * 400)).endswith("(400 characters)")
    dotted = DataError("Column 'No. Of visits' holds text (e.g. 5. Five). Write numbers.")
    assert _first_sentence(dotted) == "Column 'No. Of visits' holds text (e.g. 5. Five)"


def test_the_registry_checks_its_root_contract_and_promotion_arguments(
    registry, models, tmp_path, monkeypatch
):
    """A relative root broke when the process changed directory ("no champion"), a URL made
    a local folder 's3:', an unreadable contract.json was promoted, min_accuracy='x' raised a
    format error, and a holdout tuple "'tuple' object has no attribute 'kind'"."""
    monkeypatch.chdir(tmp_path)
    relative = ModelRegistry("store")
    assert relative.root == tmp_path / "store"
    first = register(relative, models[0])
    relative.promote(PIPE, first.version)
    (tmp_path / "elsewhere").mkdir()
    monkeypatch.chdir(tmp_path / "elsewhere")
    assert relative.champion(PIPE).version == first.version
    with pytest.raises(ParameterError, match="is a URL"):
        ModelRegistry("s3://bucket/x")
    with pytest.raises(ParameterError, match="takes the store's folder"):
        ModelRegistry(None)
    with pytest.raises(RegistryError, match=r"contract\.json: The data contract is not valid"):
        register(registry, models[1], extra_files={"contract.json": "not json"})
    with pytest.raises(RegistryError, match="must be text"):
        register(registry, models[1], extra_files={"notes.txt": b"bytes"})
    with pytest.raises(ParameterError, match=r"min_accuracy must be a number in \[0, 1\]; got 'x'"):
        relative.decide(PIPE, first.version, min_accuracy="x")
    with pytest.raises(ParameterError, match="holdout must be a Holdout"):
        relative.decide(PIPE, first.version, holdout=(None, None))
    assert relative.decide(PIPE, first.version, min_accuracy=np.float32(0.5)) is not None


def test_models_show_and_sql_take_pipeline_at_version_as_score_does(registry, models, tmp_path):
    """`libre models show visits@v0001` said the pipeline name was not valid, while `libre
    score visits@v0001` took it."""
    from typer.testing import CliRunner

    from libre_flows.flows.cli import app

    first = register(registry, models[0])
    registry.promote(PIPE, first.version)
    second = register(registry, models[1], run_id="run-2")
    root = str(tmp_path / "store")
    runner = CliRunner()
    pinned = runner.invoke(app, ["models", "show", f"{PIPE}@{second.version}", "--store", root])
    assert pinned.exit_code == 0, pinned.output
    assert f"{PIPE} {second.version}" in pinned.output and "★" not in pinned.output
    sql = runner.invoke(app, ["models", "sql", f"{PIPE}@{first.version}", "--store", root])
    assert sql.exit_code == 0 and sql.output.startswith(f"-- {PIPE} {first.version}: TRUE where")
    twice = [f"{PIPE}@{first.version}", second.version, "--store", root]
    refused = runner.invoke(app, ["models", "show", *twice])
    assert refused.exit_code == 1 and "give the version once" in refused.output
    spec = tmp_path / "u@corp" / "haberman.yaml"  # an @ in a spec's path names no version
    missing = runner.invoke(app, ["models", "show", str(spec), "--store", root])
    assert "names version" not in missing.output and "Pipeline name" not in missing.output


def test_a_registry_it_cannot_write_says_so_with_its_folder(registry, models, monkeypatch):
    """`libre models promote` on a read-only store printed "[Errno 30] Read-only file system:
    '.../models/pima/.lock'" and nothing about what to do."""
    import errno

    register(registry, models[0])
    second = register(registry, models[1], f1=0.1)
    before = registry.champion(PIPE)

    def read_only(path, *args, **kwargs):
        raise OSError(errno.EROFS, "Read-only file system", str(path))

    monkeypatch.setattr(registry_module.os, "open", read_only)
    with pytest.raises(RegistryError, match=r"registry of 'haberman' cannot be written") as caught:
        registry.set_champion(PIPE, second.version)
    assert "Read-only file system" in str(caught.value) and "writable" in str(caught.value)
    with monkeypatch.context() as without_flock:  # the lock of systems without flock
        without_flock.setattr(registry_module, "fcntl", None)
        with pytest.raises(RegistryError, match=r"registry of 'haberman' cannot be written"):
            registry.set_champion(PIPE, second.version)
    args = ["promote", PIPE, second.version, "--store", str(registry.root)]
    result = CliRunner().invoke(models_app, args, env={"COLUMNS": "250"})
    assert result.exit_code == 1
    assert "cannot be written" in result.output and "Errno" not in result.output
    monkeypatch.undo()
    assert registry.champion(PIPE) == before  # nothing changed
    assert CliRunner().invoke(models_app, args).exit_code == 0
    assert registry.champion(PIPE).version == second.version
