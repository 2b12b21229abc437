"""End-to-end runs of the training flow on a small bundled dataset (haberman, 10 learners)."""

import hashlib
import json
import logging
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from prefect.artifacts import Artifact

from libre_flows.flows.train import train, train_flow
from libre_lib import LibreClassifier
from libre_lib.errors import DataValidationError


def _stages(summary, name=None):
    return [s for s in summary["stages"] if name is None or s["stage"] == name]


@pytest.fixture(scope="module")
def first_run(tmp_path_factory, write_spec):
    """One trained pipeline shared by the tests that only read its outputs."""
    spec = write_spec(tmp_path_factory.mktemp("pipeline"))
    return spec, train(spec), train(spec)


def test_every_stage_writes_a_parquet_file_that_loads(first_run):
    _, summary, _ = first_run
    names = [s["stage"] for s in summary["stages"]]
    n_learners = len(_stages(summary, "learn"))
    assert names == [
        "load", "validate", "split", "choose", "discretize", "encode",
        *["learn"] * n_learners, "union_filter", "set_cover", "report",
    ]  # fmt: skip
    assert n_learners >= 2 and summary["n_stages"] == len(names)
    for stage in summary["stages"]:
        frame = pd.read_parquet(stage["path"])
        assert isinstance(frame, pd.DataFrame)
        assert Path(stage["path"]).with_name(Path(stage["path"]).name + ".sha256").is_file()
    assert summary["cache_hits"] == 0
    run_dir = Path(summary["run_dir"])
    for name in ("report.md", "report.html", "model.json", "run.json"):
        assert (run_dir / name).is_file(), name


def test_the_reports_cautions_are_in_run_json_as_in_the_report(spec_copy):
    """A model the majority guard may not trim (abstain off, alpha 0.9: rules down to 10 %
    precision) flags too many haberman rows: the report, run.json and the run's summary all
    carry the caution."""
    summary = train(str(spec_copy(model__alpha=0.9, model__abstain=False, model__max_rules=None)))
    run_dir = Path(summary["run_dir"])
    written = json.loads((run_dir / "run.json").read_text())["cautions"]
    assert written == summary["cautions"]
    assert any("less accurate than always answering" in c for c in written), written
    markdown = (run_dir / "report.md").read_text()
    assert markdown.count("> **Caution:** ") == len(written)
    assert "> **Caution:** On the " in markdown
    page = (run_dir / "report.html").read_text()
    assert page.count('<p class="caution">') == len(written)


def test_each_stage_has_one_name_for_its_function_task_and_store_folder(first_run):
    from prefect import Task

    from libre_flows.tasks import data, learning, report

    tasks = [t for m in (data, learning, report) for t in vars(m).values() if isinstance(t, Task)]
    names = {t.name for t in tasks}
    assert all(t.name == t.fn.__name__ for t in tasks)
    assert {"report", "register", "publish"} <= names
    _, summary, _ = first_run
    for stage in summary["stages"]:
        assert stage["stage"] in names
        assert Path(stage["path"]).parent.name == stage["stage"]


def test_second_run_is_all_cache_hits_with_an_identical_model(first_run):
    _, first, second = first_run
    assert second["cache_hits"] == second["n_stages"]
    assert all(s["cache_hit"] for s in second["stages"])
    model_1 = json.loads(Path(first["model"]).read_text())
    model_2 = json.loads(Path(second["model"]).read_text())
    assert model_1["rules"] == model_2["rules"]


def test_the_pipeline_model_equals_the_estimator_fitted_on_the_same_rows(first_run):
    spec_path, summary, _ = first_run
    from libre_lib.ops.spec import load_spec

    spec = load_spec(spec_path)
    model = LibreClassifier.from_json(Path(summary["model"]).read_text())
    data = pd.read_parquet(_stages(summary, "load")[0]["path"])
    holdout = pd.read_parquet(_stages(summary, "split")[0]["path"])["holdout"].to_numpy()
    train_rows = data.loc[~holdout].reset_index(drop=True)
    X, y = train_rows.drop(columns="target"), train_rows["target"]
    params = spec.estimator_params()
    assert (params["max_rules"], params["conflict_tolerance"]) == ("auto", "auto")
    direct = LibreClassifier(**params).fit(X, y)
    assert direct.rules_ == model.rules_
    assert (direct.max_rules_, direct.conflict_tolerance_) == (
        model.max_rules_,
        model.conflict_tolerance_,
    )
    np.testing.assert_array_equal(direct.predict(X), model.predict(X))
    choices = pd.read_parquet(_stages(summary, "choose")[0]["path"])
    assert len(choices) == len(direct.auto_scores_["params"])
    np.testing.assert_allclose(choices["mean_f1"], direct.auto_scores_["mean_f1"])
    picked = choices.loc[choices["chosen"]]
    assert picked["conflict_tolerance"].tolist() == [direct.conflict_tolerance_]


def test_report_artifacts_are_published(first_run):
    _, summary, _ = first_run
    report = Artifact.get("libre-haberman-report")
    assert report is not None and report.type == "markdown"
    model = LibreClassifier.from_json(Path(summary["model"]).read_text())
    first_rule = str(model.rules_[0])
    markdown = Path(summary["run_dir"], "report.md").read_text()
    assert "positive lymph nodes" in markdown  # the spec's plain-language column label
    assert first_rule.split(" ∈ ")[0].replace("positive_axillary_nodes", "") in report.data
    assert Artifact.get("libre-haberman-rules").type == "table"
    assert Artifact.get("libre-haberman-progress").data == 100
    # which model the latest artifact shows, and whether it serves (a rejected challenger's
    # rules were the "latest rules" of the pipeline without a word)
    # (other tests of this module publish under the same keys: any haberman version)
    which = r"haberman v\d{4}-[0-9a-f]{8} \(run \d{8}-\d{6}-\w+; (to become the champion|the "
    which += r"champion|not promoted: v\d{4}-[0-9a-f]{8} stays the champion)\)"
    assert re.fullmatch(
        f"Per-rule holdout statistics of {which}", Artifact.get("libre-haberman-rules").description
    )
    assert re.fullmatch(f"LIBRE rule report of {which}", report.description)


def _variant(spec_path, name, section, **changes):
    """The spec with ``changes`` in one section, next to it (same store)."""
    import yaml

    raw = yaml.safe_load(spec_path.read_text())
    raw.setdefault(section, {}).update(changes)
    changed = spec_path.with_name(f"haberman-{name}.yaml")
    changed.write_text(yaml.safe_dump(raw))
    return changed


def _chosen_bins(summary):
    choices = pd.read_parquet(_stages(summary, "choose")[0]["path"])
    bins = choices.loc[choices["chosen"], "max_intervals"].iloc[0]
    return None if pd.isna(bins) else int(bins)  # None: uncapped


def _chosen_tolerance(summary):
    choices = pd.read_parquet(_stages(summary, "choose")[0]["path"])
    return float(choices.loc[choices["chosen"], "conflict_tolerance"].iloc[0])


@pytest.mark.parametrize("alpha", [0.7, 0.5])
def test_changing_alpha_reruns_choose_and_set_cover_and_the_learners_for_a_new_tolerance(
    first_run, alpha
):
    """alpha enters the inner cross-validation, so the choice is recomputed; the learners are
    keyed by the tolerance chosen, not by alpha: they stay cached while it is unchanged and
    are recomputed when it changes."""
    spec_path, first, _ = first_run
    summary = train(_variant(spec_path, f"alpha-{alpha}", "model", alpha=alpha))
    recomputed = {s["stage"] for s in summary["stages"] if not s["cache_hit"]}
    recomputed.discard("choose_fallback")  # the refit check's order, when a fit keeps no rule
    if _chosen_bins(summary) != _chosen_bins(first):  # new bins: new records and learners
        assert recomputed == {
            "choose",
            "discretize",
            "encode",
            "learn",
            "union_filter",
            "set_cover",
            "report",
        }
    elif _chosen_tolerance(summary) == _chosen_tolerance(first):
        assert recomputed == {"choose", "set_cover", "report"}
    else:
        assert recomputed == {"choose", "learn", "union_filter", "set_cover", "report"}


def test_both_branches_of_the_alpha_test_are_taken(first_run):
    """The choice on haberman's training rows differs between the two alphas above in the
    tolerance only, so the test exercises both the cached and the recomputed learners."""
    spec_path, _, _ = first_run
    chosen = {
        (_chosen_bins(summary), _chosen_tolerance(summary))
        for summary in (
            train(_variant(spec_path, f"alpha-{a}", "model", alpha=a)) for a in (0.7, 0.5)
        )
    }
    assert len(chosen) == 2 and len({bins for bins, _ in chosen}) == 1


def test_changing_what_the_model_does_not_read_keeps_the_choice(first_run):
    """The choice depends on the training rows and the model parameters only: new
    expectations re-run validate and the report that shows them, and nothing else."""
    spec_path, _, _ = first_run
    summary = train(_variant(spec_path, "expectations", "expectations", max_missing_fraction=0.5))
    recomputed = {s["stage"] for s in summary["stages"] if not s["cache_hit"]}
    assert recomputed == {"validate", "report"}


def test_a_corrupted_cache_file_is_recomputed(first_run):
    spec_path, first, _ = first_run
    learner = Path(_stages(first, "learn")[0]["path"])
    data = learner.read_bytes()
    learner.write_bytes(data[: len(data) // 2])
    summary = train(spec_path)
    hits = {s["path"]: s["cache_hit"] for s in summary["stages"]}
    assert hits[str(learner)] is False
    assert pd.read_parquet(learner).shape[0] >= 0
    assert (
        json.loads(Path(summary["model"]).read_text())["rules"]
        == json.loads(Path(first["model"]).read_text())["rules"]
    )


def test_force_recomputes_every_stage(first_run):
    spec_path, _, _ = first_run
    summary = train(spec_path, force=True)
    assert summary["cache_hits"] == 0


def test_a_failed_expectation_fails_the_run_with_a_readable_message(spec_copy):
    spec = spec_copy(expectations__columns={"age": {"min": 50, "max": 60}})
    state = train_flow(str(spec), return_state=True)
    assert state.is_failed()
    with pytest.raises(DataValidationError, match="age"):
        state.result()


def test_a_served_run_that_fails_validation_ends_failed_with_one_line(spec_copy, monkeypatch):
    """In `libre serve`, a run of new data that failed validation (an expected outcome in
    production) printed about 60 lines of Prefect traceback after its one-line reason."""
    from libre_flows.flows import train as train_module

    monkeypatch.setattr(train_module, "served", lambda: True)
    spec = spec_copy(expectations__columns={"age": {"min": 50, "max": 60}})
    records = []

    class Keep(logging.Handler):
        def emit(self, record):
            records.append(record)

    keep = Keep()
    logging.getLogger("prefect").addHandler(keep)
    try:
        state = train_flow(str(spec), return_state=True)
    finally:
        logging.getLogger("prefect").removeHandler(keep)
    assert state.is_failed()
    assert state.message.startswith("DataValidationError: Data validation failed:")
    assert "age" in state.message and "\n" not in state.message
    # the task's and the flow's failure records keep their reason, not ~100 lines of traceback
    failed = [r for r in records if "DataValidationError" in r.getMessage()]
    assert {r.name for r in failed} >= {"prefect.task_runs", "prefect.flow_runs"}
    assert not [r for r in failed if r.exc_info or r.exc_text]


def test_a_run_that_fails_before_reading_its_data_is_named_for_its_pipeline(
    spec_copy, tmp_path, monkeypatch
):
    """A served run whose data file was missing kept Prefect's random name ('wooden-bird'):
    `prefect flow-run ls` did not say which pipeline failed. Its log lines carried the random
    name even once the run was renamed ("Flow run 'illegal-pony' - ..."): the console and the
    run list named the run differently."""
    from prefect.client.orchestration import get_client

    from libre_flows.flows import train as train_module

    monkeypatch.setattr(train_module, "served", lambda: True)
    spec = spec_copy(data={"path": str(tmp_path / "gone.csv")})
    records = []

    class Keep(logging.Handler):
        def emit(self, record):
            records.append(record)

    keep = Keep()
    logging.getLogger("prefect.flow_runs").addHandler(keep)
    try:
        state = train_flow(str(spec), expected_sha256="ab" * 32, return_state=True)
    finally:
        logging.getLogger("prefect.flow_runs").removeHandler(keep)
    assert state.is_failed() and "does not exist" in state.message
    with get_client(sync_client=True) as client:
        run = client.read_flow_run(state.state_details.flow_run_id)
    assert run.name == "haberman-" + "ab" * 6
    named = [getattr(r, "flow_run_name", None) for r in records]
    assert named and set(named) == {run.name}, named
    broken = tmp_path / "broken.yaml"  # a spec that does not load: named for its file
    broken.write_text("name: [\n")
    state = train_flow(str(broken), return_state=True)
    assert state.is_failed() and state.message.startswith("SpecError")
    with get_client(sync_client=True) as client:
        assert client.read_flow_run(state.state_details.flow_run_id).name == "broken"


def test_undeclared_target_classes_fail_validation(spec_copy):
    spec = spec_copy(target__classes=["2", "3"], report__class_labels={})  # the data hold "1" too
    with pytest.raises(DataValidationError, match="target"):
        train(spec)


def test_stage_files_carry_provenance_metadata(first_run):
    import pyarrow.parquet as pq

    _, summary, _ = first_run
    for stage in summary["stages"]:
        meta = pq.read_schema(stage["path"]).metadata
        for key in (b"libre.schema_version", b"libre.library_version", b"libre.spec_hash"):
            assert key in meta, (stage["stage"], key)
        assert json.loads(meta[b"libre.key"]) == stage["key"]


def test_validation_result_is_published_even_when_it_fails(spec_copy, tmp_path):
    from typer.testing import CliRunner

    from libre_flows.flows.cli import app
    from libre_flows.flows.validate import validate_flow

    store = tmp_path / "store"
    assert train(spec_copy())["promoted"]  # a trained model, then a run that fails validation
    spec = spec_copy(expectations__min_rows=10_000)
    with pytest.raises(DataValidationError, match="10000"):
        validate_flow(str(spec))  # `libre validate` only checks: it leaves no run folder
    assert len(list((store / "runs" / "haberman").iterdir())) == 1
    with pytest.raises(DataValidationError, match="10000"):
        train(spec)
    published = Artifact.get("libre-haberman-validation")
    assert published is not None and "FAILED" in published.data
    # the failed run has a folder saying so, and `libre report` shows it, not the older report
    runs = sorted((store / "runs" / "haberman").iterdir())  # two runs in one second: by tail
    (trained,) = [r for r in runs if (r / "report.md").is_file()]
    (stopped,) = [r for r in runs if r != trained]
    failed = json.loads((stopped / "run.json").read_text())
    assert failed["status"] == "failed" and failed["failed_stage"] == "validate"
    assert "FAILED" in (stopped / "validation.md").read_text()
    result = CliRunner().invoke(app, ["report", "haberman", "--store", str(store)])
    assert result.exit_code == 1
    assert "Data validation failed" in result.output and "no model was trained" in result.output
    assert str(trained) in result.output.replace("\n", "")  # where the last model's report is


def test_every_run_registers_a_version_and_a_worse_model_is_not_promoted(spec_copy, tmp_path):
    from libre_lib.ops.registry import ModelRegistry

    good = train(spec_copy())
    assert good["promoted"] and good["model_version"].startswith("v0001")
    worse = train(spec_copy(model={"alpha": 0.0, "random_state": 0, "n_estimators": 10}))
    assert not worse["promoted"]
    assert "below the champion" in worse["promotion"]
    registry = ModelRegistry(tmp_path / "store")
    assert [v.version for v in registry.versions("haberman")] == [
        good["model_version"],
        worse["model_version"],
    ]
    assert registry.champion("haberman").version == good["model_version"]
    report = Path(worse["run_dir"], "report.md").read_text()
    assert "Changes since the champion" in report


def test_the_version_table_names_the_champion_the_run_made(spec_copy):
    """A promoted run's report said "became the champion" while its table of versions (and
    the figure's champion mark) still showed the replaced version as the champion and this
    run's as "candidate, to be promoted"."""
    first = train(spec_copy(model={"alpha": 0.0, "random_state": 0, "n_estimators": 10}))
    second = train(spec_copy())
    assert first["promoted"] and second["promoted"]
    old, new = first["model_version"], second["model_version"]

    def status(report: str, version: str) -> str:
        (row,) = [r for r in report.splitlines() if r.startswith(f"| {version} |")]
        return row.split("|")[3].strip()

    report = Path(second["run_dir"], "report.md").read_text()
    assert "became the champion" in report and "to be promoted" not in report
    assert status(report, new) == "champion (this run)"
    assert status(report, old) == "champion (earlier)"
    html = Path(second["run_dir"], "report.html").read_text()
    assert f"{new} (champion): F1" in html and f"{old} (champion (earlier)): F1" in html
    assert status(Path(first["run_dir"], "report.md").read_text(), old) == "champion (this run)"


def test_a_rerun_on_unchanged_data_reuses_the_latest_version(spec_copy, tmp_path):
    """Every run registered a version, so an all-cache-hit (or forced) rerun on unchanged data
    added a copy of the model it had registered before. Now the same model, data and spec reuse
    the latest version, and the summary says so."""
    from libre_lib.ops.registry import ModelRegistry

    spec = spec_copy()
    first = train(spec)
    again = train(spec)
    forced = train(spec, force=True)
    assert first["new_version"] and again["cache_hits"] == again["n_stages"]
    for rerun in (again, forced):
        assert rerun["new_version"] is False
        assert rerun["model_version"] == first["model_version"] and rerun["promoted"]
        assert json.loads(Path(rerun["run_dir"], "run.json").read_text())["new_version"] is False
    registry = ModelRegistry(tmp_path / "store")
    assert [v.version for v in registry.versions("haberman")] == [first["model_version"]]
    assert registry.champion("haberman").version == first["model_version"]


def test_a_rollback_holds_whichever_spec_or_run_wrote_the_cached_data(spec_copy, tmp_path):
    """The data fingerprint was the sha256 of the cached ``load`` file, whose metadata names
    the spec that wrote it: a forced rerun under an edited spec (or another pipeline's run on
    the same file) gave the same data another fingerprint, registered a copy of a version and
    undid a rollback. It is now the source's sha256."""
    from libre_lib.ops.registry import ModelRegistry
    from libre_lib.ops.spec import load_spec

    first = train(spec_copy(model={"alpha": 0.0, "random_state": 0, "n_estimators": 10}))
    edited = spec_copy()  # another model; the load stage is the first spec's cached file
    second = train(edited)
    registry = ModelRegistry(tmp_path / "store")
    registry.set_champion("haberman", first["model_version"], reason="rollback")
    forced = train(edited, force=True)  # the load file is written again, under this spec
    assert forced["new_version"] is False and forced["model_version"] == second["model_version"]
    assert not forced["promoted"]
    assert registry.champion("haberman").version == first["model_version"]
    assert len(registry.versions("haberman")) == 2
    source = Path(load_spec(edited).data_location())
    fingerprints = {v.data_fingerprint for v in registry.versions("haberman")}
    assert fingerprints == {sha256_of(source)}


def test_versions_registered_with_the_load_files_hash_are_still_reused(spec_copy, tmp_path):
    """Earlier releases recorded the ``load`` file's sha256: a plain rerun after the upgrade
    reuses such a version instead of registering a copy."""
    from libre_lib.ops.registry import VERSION_FILE, ModelRegistry

    spec = spec_copy()
    first = train(spec)
    registry = ModelRegistry(tmp_path / "store")
    version = registry.get("haberman", first["model_version"])
    load_file = next(s for s in first["stages"] if s["stage"] == "load")["path"]
    record = json.loads((version.path / VERSION_FILE).read_text())
    record["data_fingerprint"] = sha256_of(Path(load_file))  # as an earlier release wrote it
    (version.path / VERSION_FILE).write_text(json.dumps(record))
    again = train(spec)
    assert again["new_version"] is False and again["model_version"] == first["model_version"]


def sha256_of(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _fail_after(function):
    """``function`` that does its work, then fails."""

    def failing(*args, **kwargs):
        function(*args, **kwargs)
        raise RuntimeError("injected failure")

    return failing


def test_a_run_that_fails_after_any_step_leaves_the_champion_where_it_was(
    spec_copy, tmp_path, monkeypatch
):
    """Training registered and promoted before the run folder was written, so a run that
    failed afterwards had already moved the champion. Promotion is now the last step."""
    import libre_flows.flows.train as train_module
    import libre_flows.tasks.report as report_tasks
    from libre_lib.ops import stages
    from libre_lib.ops.registry import CANDIDATE, ModelRegistry

    first = train(spec_copy(model={"alpha": 0.0, "random_state": 0, "n_estimators": 10}))
    spec = spec_copy()  # another model, so the failing runs register a version of their own
    registry = ModelRegistry(tmp_path / "store")
    pointer = registry.pipeline_dir("haberman") / "champion.json"
    before = pointer.read_bytes()
    steps = [
        (stages, "register"),  # the version is registered
        (report_tasks, "create_markdown_artifact"),  # the run folder's files are written
        (report_tasks, "create_table_artifact"),  # the artifacts are published
        (train_module, "summarize"),  # run.json is written
    ]
    for module, name in steps:
        with monkeypatch.context() as patch:
            patch.setattr(module, name, _fail_after(getattr(module, name)))
            with pytest.raises(RuntimeError, match="injected failure"):
                train(spec)
        assert pointer.read_bytes() == before, f"a failure after {name} moved the champion"
        newest = registry.versions("haberman")[-1]
        assert newest.status == CANDIDATE and newest.version != first["model_version"]
        assert registry.champion("haberman").version == first["model_version"]
    # run.json written, the run stopped before promote: it claims no promotion
    runs = (tmp_path / "store" / "runs" / "haberman").iterdir()
    written = [json.loads((r / "run.json").read_text()) for r in runs if (r / "run.json").exists()]
    assert sorted(s["promotion_state"] for s in written) == ["applied", "pending"]
    pending = next(s for s in written if s["promotion_state"] == "pending")
    assert pending["promoted"] is False and pending["model_version"] == newest.version
    assert pending["champion_changed"] is False  # a deploy step reads it: nothing moved
    again = train(spec)  # the same model without a failure: promoted (not worse), last
    assert again["promoted"] and pointer.read_bytes() != before
    assert registry.champion("haberman").version == again["model_version"]
    applied = json.loads(Path(again["run_dir"], "run.json").read_text())
    assert applied["promoted"] and applied["promotion_state"] == "applied"
    assert applied["champion_changed"] is True


def test_a_decision_taken_again_at_promote_is_the_one_the_run_folders_report_gives(
    spec_copy, monkeypatch
):
    """Another run promoted a better version between this run's register and promote: the
    decision taken again refused this run's version, but its report.md / report.html, written
    before, said it "became the champion" ("candidate, to be promoted (this run)")."""
    from libre_lib.ops.registry import ModelRegistry

    first = train(spec_copy(model={"alpha": 0.0, "random_state": 0, "n_estimators": 10}))
    real = ModelRegistry.promote

    def raced(self, *args, **kwargs):  # the decision under the lock differs: a bar none passes
        return real(self, *args, **{**kwargs, "min_accuracy": 1.0})

    monkeypatch.setattr(ModelRegistry, "promote", raced)
    summary = train(spec_copy())
    assert not summary["promoted"] and summary["model_version"] != first["model_version"]
    for name in ("report.md", "report.html"):
        text = Path(summary["run_dir"], name).read_text()
        assert "became the champion" not in text and "to be promoted" not in text, name
        assert f"{summary['model_version']} was not promoted" in text, name
    stays = f"not promoted: {first['model_version']} stays the champion)"
    assert Artifact.get("libre-haberman-report").description.endswith(stays)
    assert Artifact.get("libre-haberman-rules").description.endswith(stays)


def test_a_run_whose_run_json_cannot_say_applied_names_the_promotion(spec_copy, monkeypatch):
    """A full disk after the champion moved: the run failed with "Could not write run.json"
    alone, while the registry had promoted its model and run.json said "pending"."""
    import libre_flows.tasks.report as report_tasks
    from libre_lib.errors import ArtifactError

    spec = spec_copy()  # its first version: the champion
    real = report_tasks.atomic_write_text

    def full_at_applied(path, text, *args, **kwargs):
        if '"promotion_state": "applied"' in text:
            raise ArtifactError(f"Could not write {path}: [Errno 28] No space left on device.")
        return real(path, text, *args, **kwargs)

    monkeypatch.setattr(report_tasks, "atomic_write_text", full_at_applied)
    with pytest.raises(ArtifactError, match=r"Model v0001-\w+ is the champion \(.*could not be "):
        train(spec)


def test_runs_started_together_get_distinct_folders(spec_copy, tmp_path, monkeypatch):
    """Run folders were named by the first 8 hex digits of the flow run id; server-made ids
    are UUIDv7, whose leading digits are a millisecond timestamp, so two runs started in the
    same millisecond shared one folder. The random tail names them now."""
    from types import SimpleNamespace

    import libre_flows.tasks.common as common
    from libre_lib.ops.spec import load_spec

    spec = load_spec(spec_copy())
    ids = ["0193a1b2-c3d4-7e5f-8a6b-1c2d3e4f5a6b", "0193a1b2-c3d4-7e5f-9b7c-8d9e0f1a2b3c"]
    folders = []
    for run_id in ids:
        context = SimpleNamespace(flow_run=SimpleNamespace(id=run_id))
        monkeypatch.setattr(common, "get_run_context", lambda context=context: context)
        folders.append(common.run_folder(str(tmp_path), spec))
    assert [f.name[-12:] for f in folders] == ["1c2d3e4f5a6b", "8d9e0f1a2b3c"]
    assert folders[0].name != folders[1].name
    assert common.run_folder(str(tmp_path), spec, ids[0]).name[-12:] == "1c2d3e4f5a6b"


def test_labels_are_checked_when_the_data_stage_is_a_cache_hit(spec_copy):
    """The label checks ran in `load`, whose cache key holds no labels: on a warm store a spec
    labelling 'age' as another column trained, and its report named the wrong column."""
    from libre_lib.errors import SpecError

    assert train(spec_copy())["promoted"]
    bad = spec_copy(report__column_labels={"age": "positive_axillary_nodes"})
    with pytest.raises(SpecError, match="the name of another column of the data"):
        train(bad)


def test_a_run_says_when_its_data_are_not_those_its_event_announced(spec_copy):
    """Two quick copies and two events: both runs trained on the second file, and nothing said
    that the first event's data were never trained on."""
    from libre_flows.flows.train import train_flow
    from libre_lib.ops.sources import fingerprint_source
    from libre_lib.ops.spec import load_spec

    spec = spec_copy()
    loaded = load_spec(spec)
    actual = fingerprint_source(loaded.data_location(), loaded.data.resolved_format())
    stale = train_flow(str(spec), expected_sha256="0" * 64)
    assert any("changed after the event that started this run" in n for n in stale["notes"])
    assert "0" * 12 + "… announced, " + actual[:12] + "… read" in " ".join(stale["notes"])
    for expected in (actual, None, "{{ event.payload.sha256 }}"):  # the same; no event
        summary = train_flow(str(spec), expected_sha256=expected)
        assert not any("event that started" in n for n in summary["notes"])


def test_a_spec_that_changes_only_how_a_run_executes_reuses_the_version(spec_copy):
    """Another runner, a report title or the store path spelled otherwise registered a copy of
    a byte-identical model, and the champion moved to the copy."""
    first = train(spec_copy())
    store = Path(first["run_dir"]).parents[2]
    again = train(
        spec_copy(
            runner={"kind": "thread", "max_workers": 1},
            report__title="Another title",
            description="edited",
            store=str(store / ".." / store.name),
        )
    )
    assert again["model_version"] == first["model_version"] and not again["new_version"]
    changed = train(spec_copy(model__alpha=0.9))  # a model section change: its own version
    assert changed["new_version"]


def test_a_model_without_rules_says_the_guard_removed_what_the_cover_chose(spec_copy):
    """The report guessed: "it can leave none (or no rule passed the set cover)", although the
    run's set_cover stage had chosen rules that the majority guard then removed."""
    model = {"random_state": 0, "n_estimators": 10, "alpha": 0.9, "max_rules": 3,
             "conflict_tolerance": 0, "max_intervals": None}  # fmt: skip
    summary = train(spec_copy(model=model))
    assert summary["metrics"]["n_rules"] == 0
    (said,) = [c for c in summary["cautions"] if c.startswith("The model has no rules")]
    assert "The set cover chose 3 rules, and the majority guard" in said
    assert "removed all 3" in said and "set abstain: false" in said
    assert "or no rule passed the set cover" not in said


def test_a_column_that_repeats_another_is_a_note_of_the_run(spec_copy, tmp_path):
    """The rules named a copied column without a word in the report (the estimator's warning
    reaches the task's log only)."""
    import pandas as pd

    frame = pd.read_csv(Path(__file__).resolve().parents[2] / "libre_lib/datasets/haberman.csv")
    frame.insert(1, "age_again", frame["age"])
    frame.to_csv(tmp_path / "copied.csv", index=False)
    summary = train(spec_copy(data={"path": str(tmp_path / "copied.csv")}))
    (said,) = [n for n in summary["notes"] if "hold the same values in every row" in n]
    assert said.startswith("Columns 'age' and 'age_again'")
    assert "features.exclude: [age_again] in the spec" in said
    assert "age_again" in Path(summary["report"]).read_text()


def test_the_same_rows_read_whole_or_streamed_are_one_version(spec_copy, tmp_path):
    """data.streamed and data.batch_rows say how the rows are read: the same model from the
    same rows read either way registered a second version (v0001-ceb71b65, v0002-ceb71b65). A
    version an earlier release recorded with those keys in its spec hash is still reused."""
    from libre_lib.ops.registry import VERSION_FILE, ModelRegistry
    from libre_lib.ops.spec import load_spec
    from libre_lib.ops.stages import model_spec_hash

    model = {"random_state": 0, "n_estimators": 10, "max_intervals": 3, "conflict_tolerance": 0}
    first = train(spec_copy(model=model))
    streamed = train(spec_copy(model=model, data__streamed=True, data__batch_rows=100))
    assert streamed["model_version"] == first["model_version"] and not streamed["new_version"]
    registry = ModelRegistry(tmp_path / "store")
    version = registry.get("haberman", first["model_version"])
    record = json.loads((version.path / VERSION_FILE).read_text())
    spec = spec_copy(model=model, data__batch_rows=5000)
    record["spec_hash"] = model_spec_hash(load_spec(spec), reading=True)  # an earlier release's
    (version.path / VERSION_FILE).write_text(json.dumps(record))
    again = train(spec)
    assert again["model_version"] == first["model_version"] and not again["new_version"]


def test_an_artifact_says_when_its_model_was_not_promoted():
    from types import SimpleNamespace

    from libre_flows.tasks.report import artifact_subject

    champion = SimpleNamespace(version="v0001-aaaaaaaa")
    rejected = SimpleNamespace(
        version=SimpleNamespace(version="v0002-bbbbbbbb"),
        decision=SimpleNamespace(promoted=False, previous=champion, unchanged=False),
    )
    spec = SimpleNamespace(name="haberman")
    assert artifact_subject(spec, rejected, "20261130-1") == (
        "haberman v0002-bbbbbbbb (run 20261130-1; not promoted: v0001-aaaaaaaa stays the champion)"
    )


def test_a_learner_s_task_run_is_named_by_its_columns(monkeypatch):
    """The Prefect UI showed learn-f1-f3-f6-f7: indices nothing there maps to columns."""
    from prefect.runtime import task_run

    from libre_flows.tasks import learning

    columns = ["glucose", "age", "bmi", "x\x1b[31m"]
    monkeypatch.setattr(task_run, "parameters", {"subset": [0, 2, 3], "columns": columns})
    assert learning.learn_run_name() == "learn-glucose-bmi-x\\x1b[31m"
    monkeypatch.setattr(task_run, "parameters", {"subset": [0, 2, 3]})  # names not given
    assert learning.learn_run_name() == "learn-f0-f2-f3"
    # long names cut at the same place read alike: the positions tell the learners apart
    words = ("glucose", "pressure", "age", "bmi")
    long = [f"{word}_measurement_of_the_patient" for word in words]
    named = []
    for subset in ([0, 1, 2], [0, 1, 3]):
        monkeypatch.setattr(task_run, "parameters", {"subset": subset, "columns": long})
        named.append(learning.learn_run_name())
    assert named[0] != named[1] and named[0].endswith("… f0-f1-f2")
    wide = [f"column_number_{k}" for k in range(40)]  # 30 columns: their positions digested
    for subset in (list(range(30)), list(range(1, 31))):
        monkeypatch.setattr(task_run, "parameters", {"subset": subset, "columns": wide})
        named.append(learning.learn_run_name())
    assert len(set(named)) == len(named) and "… #" in named[-1]
    assert all(len(name) <= len("learn-") + learning.RUN_NAME_CHARS for name in named)
