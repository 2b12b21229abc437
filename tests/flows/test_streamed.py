"""The streamed pipeline (``data.streamed: true``): three passes mapped over the source's parts,
each part's result a Parquet artifact, and a model equal to the estimator's on the same
training rows; on a local Dask cluster the same rules as on threads."""

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from libre_flows.flows.train import train
from libre_lib import LibreClassifier
from libre_lib.errors import DataError, DataValidationError
from libre_lib.estimator import AUTO_FALLBACK
from libre_lib.ops.artifacts import ArtifactStore
from libre_lib.ops.spec import load_spec
from libre_lib.params import AUTO

DATASETS = Path(__file__).resolve().parents[2] / "libre_lib" / "datasets"


def _stages(summary, name):
    return [s for s in summary["stages"] if s["stage"] == name]


@pytest.fixture(scope="module")
def pima_folder(tmp_path_factory):
    """pima as a directory of three CSV files."""
    folder = tmp_path_factory.mktemp("pima-parts")
    frame = pd.read_csv(DATASETS / "pima.csv")
    for k, (start, stop) in enumerate([(0, 300), (300, 500), (500, len(frame))]):
        frame.iloc[start:stop].to_csv(folder / f"part-{k}.csv", index=False)
    return folder


def _streamed_spec(spec_copy, folder, **changes):
    data = {"path": str(folder), "format": "csv", "streamed": True, "batch_rows": 128}
    return spec_copy("pima", data=data, **changes)


@pytest.fixture(scope="module")
def streamed_run(tmp_path_factory, write_spec, pima_folder):
    folder = tmp_path_factory.mktemp("streamed")
    data = {"path": str(pima_folder), "format": "csv", "streamed": True, "batch_rows": 128}
    spec = write_spec(folder, "pima", data=data)
    return spec, train(spec), train(spec)


def test_every_pass_is_mapped_over_the_parts_and_cached_as_parquet(streamed_run):
    _, summary, second = streamed_run
    for name in ("profile", "sample_part", "fine_counts", "encode_part"):
        assert len(_stages(summary, name)) == 3, name  # one per file
    for stage in summary["stages"]:
        assert isinstance(pd.read_parquet(stage["path"]), pd.DataFrame)
    assert summary["cache_hits"] == 0
    assert second["cache_hits"] == second["n_stages"]


def _capped(spec) -> dict:
    """The estimator's parameters as a streamed run fits them: "auto" ChiMerge bins capped
    (docs/pipeline.md: a streamed run's choice tries capped bins only)."""
    params = spec.estimator_params()
    if params.get("max_intervals", AUTO) == AUTO:
        params["max_intervals"] = AUTO_FALLBACK["max_intervals"]
    return params


def test_the_streamed_model_equals_the_estimator_on_the_same_training_rows(streamed_run):
    spec_path, summary, _ = streamed_run
    spec = load_spec(spec_path)
    model = LibreClassifier.from_json(Path(summary["model"]).read_text())
    rows = pd.read_parquet(_stages(summary, "sample")[0]["path"])
    holdout = pd.read_parquet(_stages(summary, "split")[0]["path"])["holdout"].to_numpy()
    assert len(rows) == 768  # sample_rows exceeds the rows: the sample is every row
    train_rows = rows.loc[~holdout].reset_index(drop=True)
    X, y = train_rows.drop(columns="target"), train_rows["target"]
    direct = LibreClassifier(**_capped(spec)).fit(X, y)
    assert direct.rules_ == model.rules_
    np.testing.assert_array_equal(direct.predict(X), model.predict(X))


def test_the_report_says_the_run_streamed(streamed_run):
    _, summary, _ = streamed_run
    text = (Path(summary["run_dir"]) / "report.md").read_text()
    assert "(streamed)" in text


def test_a_sample_smaller_than_the_data_is_what_the_report_scores(spec_copy, pima_folder):
    spec = _streamed_spec(spec_copy, pima_folder)
    raw = spec.read_text().replace("batch_rows: 128", "batch_rows: 128\n  sample_rows: 300")
    spec.write_text(raw)
    summary = train(spec)
    rows = pd.read_parquet(_stages(summary, "sample")[0]["path"])
    assert 200 <= len(rows) <= 400
    text = (Path(summary["run_dir"]) / "report.md").read_text()
    assert "768 rows streamed" in text and "a uniform sample of" in text
    # its cut points were rounded on the sample: the note says the rows sorted exactly are it
    flat = " ".join(text.split())
    assert "(a sample of the training and holdout rows)" in flat
    assert "a value of the rows left out of the sample, or a new one, between" in flat


def test_the_data_contract_of_a_sampled_run_holds_every_training_row(
    spec_copy, pima_folder, tmp_path, write_spec
):
    """The contract's ranges, missing rates and row count come from the profile of every
    training row, not from the sample: scoring the training data raised drift warnings for
    values the sample had missed (glucose 0-60, insulin above 540, ...)."""
    spec = _streamed_spec(spec_copy, pima_folder)
    raw = spec.read_text().replace("batch_rows: 128", "batch_rows: 128\n  sample_rows: 200")
    spec.write_text(raw)
    streamed_contract = json.loads((Path(train(spec)["run_dir"]) / "contract.json").read_text())
    whole = tmp_path / "whole"
    whole.mkdir()
    pd.concat(pd.read_csv(p) for p in sorted(pima_folder.glob("*.csv"))).to_csv(
        whole / "pima.csv", index=False
    )
    in_memory = write_spec(whole, "pima", data={"path": str(whole / "pima.csv")})
    memory_contract = json.loads((Path(train(in_memory)["run_dir"]) / "contract.json").read_text())
    assert streamed_contract["n_training_rows"] == memory_contract["n_training_rows"]
    columns = {c["name"]: c for c in memory_contract["columns"]}
    for column in streamed_contract["columns"]:
        expected = columns[column["name"]]
        for key in ("min", "max", "missing_rate"):
            assert column[key] == pytest.approx(expected[key]), (column["name"], key)


def test_a_part_storing_numbers_as_text_trains_as_if_they_were_numbers(spec_copy, tmp_path):
    """One Parquet part stores numeric columns as strings: the passes read them as numbers,
    and so does the sample (whose parts could not be merged: "Parquet cannot store"). (The
    spec's ranges are on other columns: a range on text fails validation, as in memory.)"""
    frame = pd.read_csv(DATASETS / "pima.csv")
    rules = []
    for name, as_text in (("numbers", False), ("texts", True)):
        folder = tmp_path / name
        folder.mkdir()
        frame.iloc[:400].to_parquet(folder / "part-0.parquet")
        later = frame.iloc[400:]
        texts = {"serum_insulin": str, "diabetes_pedigree_function": str}
        later = later.astype(texts) if as_text else later
        later.to_parquet(folder / "part-1.parquet")
        data = {"path": str(folder), "format": "parquet", "streamed": True, "batch_rows": 128}
        store = str(tmp_path / f"store-{name}")  # no holdout: a row's side hashes its text
        spec = spec_copy("pima", data=data, store=store, holdout_fraction=0.0)
        summary = train(spec)
        rules.append(LibreClassifier.from_json(Path(summary["model"]).read_text()).rules_)
        sample = pd.read_parquet(_stages(summary, "sample")[0]["path"])
        assert pd.api.types.is_float_dtype(sample["diabetes_pedigree_function"])
    assert rules[0] == rules[1]


def test_parts_rewritten_during_the_run_register_nothing_and_leave_nothing_cached(
    spec_copy, tmp_path, monkeypatch
):
    """A part rewritten while the passes read it: the run registered a model of both data
    versions, and a later run on the first bytes reused its stages."""
    import libre_flows.tasks.streamed as streamed_tasks
    from libre_lib.ops.registry import ModelRegistry

    folder = tmp_path / "parts"
    folder.mkdir()
    frame = pd.read_csv(DATASETS / "pima.csv")
    frame.iloc[:400].to_csv(folder / "part-0.csv", index=False)
    frame.iloc[400:].to_csv(folder / "part-1.csv", index=False)
    spec = _streamed_spec(spec_copy, folder)
    real = streamed_tasks.fingerprint_source
    calls = []

    def rewritten_after_the_first_look(*args, **kwargs):
        calls.append(args)
        return real(*args, **kwargs) if len(calls) == 1 else "f" * 64

    monkeypatch.setattr(streamed_tasks, "fingerprint_source", rewritten_after_the_first_look)
    with pytest.raises(DataError, match=r"changed while the pipeline read its parts .* no model"):
        train(spec)
    assert ModelRegistry(tmp_path / "store").versions("pima") == []
    assert not list((tmp_path / "store").rglob("*.parquet"))  # every computed stage removed
    monkeypatch.setattr(streamed_tasks, "fingerprint_source", real)
    summary = train(spec)
    assert summary["cache_hits"] == 0 and summary["model_version"].startswith("v0001-")


def test_a_failed_expectation_on_any_batch_fails_the_streamed_run(spec_copy, pima_folder):
    spec = _streamed_spec(spec_copy, pima_folder, expectations={"min_rows": 1000})
    with pytest.raises(DataValidationError, match="768"):
        train(spec)


def test_a_positive_class_absent_from_streamed_data_is_named_before_tuning(spec_copy, pima_folder):
    """The streamed path failed only in the search ("The 'positive_class' parameter of
    LibreClassifier is ..."); it now says what the in-memory split says, once the parts are
    sampled."""
    spec = _streamed_spec(
        spec_copy, pima_folder, target={"column": "target", "positive_class": "yes"}
    )
    with pytest.raises(DataError, match=r"target.positive_class 'yes' is not a value of the "
                       r"target column 'target' \(its values: '0', '1'\)"):  # fmt: skip
        train(spec)


def test_a_local_dask_cluster_streams_to_the_thread_runners_rules(
    spec_copy, pima_folder, streamed_run, tmp_path
):
    pytest.importorskip("prefect_dask")
    _, threads, _ = streamed_run
    spec = _streamed_spec(
        spec_copy,
        pima_folder,
        runner={"kind": "dask", "n_workers": 2},
        store=str(tmp_path / "dask-store"),
    )
    dask = train(spec)
    assert dask["cache_hits"] == 0
    rules = [json.loads(Path(s["model"]).read_text())["rules"] for s in (threads, dask)]
    assert rules[0] == rules[1]


def test_columns_counted_on_fine_bins_give_the_estimators_rules(
    spec_copy, pima_folder, monkeypatch
):
    """With few exact values and fine bins allowed, every numeric column is counted on fine
    bins and the bins its pre-binning needs are resolved (``resolve`` tasks): the model is
    unchanged."""
    from libre_lib.ops import streamed

    for name, value in (("EXACT_VALUES", 20), ("FINE_BINS", 32), ("SKETCH_POINTS", 32)):
        monkeypatch.setattr(streamed, name, value)
    summary = train(_streamed_spec(spec_copy, pima_folder))
    assert len(_stages(summary, "resolve")) >= 3
    rows = pd.read_parquet(_stages(summary, "sample")[0]["path"])
    holdout = pd.read_parquet(_stages(summary, "split")[0]["path"])["holdout"].to_numpy()
    train_rows = rows.loc[~holdout].reset_index(drop=True)
    X, y = train_rows.drop(columns="target"), train_rows["target"]
    spec = load_spec(_streamed_spec(spec_copy, pima_folder))
    direct = LibreClassifier(**_capped(spec)).fit(X, y)
    model = LibreClassifier.from_json(Path(summary["model"]).read_text())
    assert direct.rules_ == model.rules_
    assert direct.discretization_ == model.discretization_


def test_validating_a_streamed_spec_profiles_it_part_by_part(spec_copy, pima_folder):
    from libre_flows.flows.validate import validate

    spec = _streamed_spec(spec_copy, pima_folder)
    report = validate(spec)
    assert report["success"] and report["n_rows"] == 768
    failing = _streamed_spec(spec_copy, pima_folder, expectations={"min_rows": 1000})
    with pytest.raises(DataValidationError, match="768"):
        validate(failing)
    summary = train(spec)  # the profiles are reused
    assert all(s["cache_hit"] for s in _stages(summary, "profile"))
    # a failure names the parts that hold the values it did not expect, the most first
    old = {f.name: int((pd.read_csv(f)["age"] > 60).sum()) for f in pima_folder.glob("*.csv")}
    named = ", ".join(f"{n} ({c})" for n, c in sorted(old.items(), key=lambda i: -i[1]) if c)
    aged = _streamed_spec(spec_copy, pima_folder, expectations={"columns": {"age": {"max": 60}}})
    with pytest.raises(DataValidationError) as caught:
        validate(aged)
    found = sum(c > 0 for c in old.values())
    assert f"; in {found} parts of 3: {named}" in str(caught.value), str(caught.value)


def test_a_streamed_run_is_not_refined_and_says_so(spec_copy, pima_folder):
    """Refinement needs the training rows; a streamed run holds a sample of them."""
    spec = _streamed_spec(spec_copy, pima_folder, model__refine="f1")
    summary = train(spec)
    path = Path(_stages(summary, "set_cover")[0]["path"])
    store = ArtifactStore(path.parents[1])
    metadata = store.metadata(store.lookup("set_cover", path.stem))
    said = "sets refine: f1, which was not applied: a streamed run"
    assert said in metadata["refinement_skipped"]
    model = LibreClassifier.from_json(Path(summary["model"]).read_text())
    assert model.refine is None
    # the command's output and the report say it (the set cover's log alone did)
    assert any(said in note for note in summary["notes"]), summary["notes"]
    assert said in " ".join((Path(summary["run_dir"]) / "report.md").read_text().split())


def test_rows_without_a_target_value_are_left_out_and_counted(spec_copy, tmp_path):
    """target.unlabeled: drop, streamed and in memory: the same rows are left out, the report
    says how many, and without it the validation refuses them."""
    frame = pd.read_csv(DATASETS / "pima.csv", dtype={"target": "string"})
    frame.loc[[5, 300, 301, 700], "target"] = pd.NA
    folder = tmp_path / "parts"
    folder.mkdir()
    for k, (start, stop) in enumerate([(0, 300), (300, len(frame))]):
        frame.iloc[start:stop].to_csv(folder / f"part-{k}.csv", index=False)
    with pytest.raises(DataValidationError, match=r"target\.unlabeled: drop"):
        train(_streamed_spec(spec_copy, folder))
    drop = {"column": "target", "positive_class": "1", "unlabeled": "drop"}
    summary = train(_streamed_spec(spec_copy, folder, target=drop))
    text = (Path(summary["run_dir"]) / "report.md").read_text()
    assert "holdout rows (streamed); 4 rows without a target value left out" in text
    assert "4 rows without a target value left out (target.unlabeled: drop)" in text
    rows = pd.read_parquet(_stages(summary, "sample")[0]["path"])
    assert len(rows) == 764 and rows["target"].notna().all()

    frame.to_csv(tmp_path / "pima.csv", index=False)
    in_memory = spec_copy("pima", data={"path": str(tmp_path / "pima.csv")}, target=drop)
    summary = train(in_memory)
    text = (Path(summary["run_dir"]) / "report.md").read_text()
    assert "4 rows without a target value left out (target.unlabeled: drop)" in text


def test_rows_keyed_by_an_id_hold_out_the_same_rows_streamed_and_in_memory(spec_copy, tmp_path):
    """``split_by`` names an id that is not a feature: the streamed batches read it for the keys
    and drop it, and hold out the rows the in-memory split holds out (unlabeled rows left out
    in both)."""
    frame = pd.read_csv(DATASETS / "pima.csv", dtype={"target": "string"})
    frame.insert(0, "visit", [f"v{i:05d}" for i in range(len(frame))])
    frame.loc[[5, 300], "target"] = pd.NA
    folder = tmp_path / "parts"
    folder.mkdir()
    for k, (start, stop) in enumerate([(0, 300), (300, len(frame))]):
        frame.iloc[start:stop].to_csv(folder / f"part-{k}.csv", index=False)
    frame.to_csv(tmp_path / "pima.csv", index=False)
    keyed = {
        "split_by": ["visit"],
        "features": {"exclude": ["visit"]},
        "target": {"column": "target", "positive_class": "1", "unlabeled": "drop"},
    }
    streamed = train(_streamed_spec(spec_copy, folder, **keyed))
    in_memory = train(spec_copy("pima", data={"path": str(tmp_path / "pima.csv")}, **keyed))
    flags = [
        pd.read_parquet(_stages(summary, "split")[0]["path"])["holdout"].to_numpy()
        for summary in (streamed, in_memory)
    ]
    np.testing.assert_array_equal(*flags)
    rows = pd.read_parquet(_stages(streamed, "sample")[0]["path"])
    assert "visit" not in rows.columns and len(rows) == len(frame) - 2


def test_a_streamed_version_records_the_sha256_of_its_source(streamed_run, pima_folder):
    """A streamed version recorded the key of its merged sample as its data fingerprint: a
    change of the sample's parameters made the same data look new to the registry."""
    from libre_lib.ops.registry import ModelRegistry
    from libre_lib.ops.sources import fingerprint_source

    _, summary, _ = streamed_run
    store = Path(summary["run_dir"]).parents[2]
    version = ModelRegistry(store).get("pima", summary["model_version"])
    assert version.data_fingerprint == fingerprint_source(str(pima_folder), "csv")


def test_files_a_streamed_run_leaves_out_or_reads_twice_are_named_where_it_reports(
    spec_copy, tmp_path
):
    """A ``.csv.xz`` part was left out, and a part delivered twice was read twice, with a
    warning in the server's log alone (none for a URL): ``libre train`` printed neither, nor
    did the report or ``libre validate``."""
    import html

    import fsspec

    from libre_flows.flows.validate import validate

    frame = pd.read_csv(DATASETS / "pima.csv")
    folder = tmp_path / "drops"
    (folder / "redelivered").mkdir(parents=True)
    frame.iloc[:400].to_csv(folder / "part-0.csv", index=False)
    frame.iloc[400:].to_csv(folder / "part-1.csv", index=False)
    frame.iloc[400:].to_csv(folder / "redelivered" / "part-1.csv", index=False)
    frame.iloc[:100].to_csv(folder / "part-2.csv.xz", index=False)
    (folder / "_SUCCESS").write_text("")  # a marker, not data: not named
    spec = _streamed_spec(spec_copy, folder)
    summary = train(spec)
    unread, twice = summary["notes"][:2]
    assert unread.startswith("1 file(s) in ") and "are not read" in unread
    assert ": part-2.csv.xz. Convert them" in unread
    assert twice.startswith("1 data file(s) in ") and "repeat another file byte for byte" in twice
    assert ": part-1.csv = redelivered/part-1.csv. Their rows are read once per copy" in twice
    report = Path(summary["report"]).read_text()
    assert html.escape(unread) in report and html.escape(twice) in report
    assert validate(spec)["notes"][:2] == [unread, twice]
    whole = spec_copy("pima", data__path=str(folder), data__streamed=False)
    assert train(whole)["notes"][:2] == [unread, twice]  # a folder read whole: the same
    # a URL folder: the same notes
    fs = fsspec.filesystem("memory")
    for path in folder.rglob("*"):
        if path.is_file():
            fs.pipe(f"/drops56/{path.relative_to(folder).as_posix()}", path.read_bytes())
    url = _streamed_spec(spec_copy, "memory://drops56")
    notes = validate(url)["notes"]
    assert any(": part-2.csv.xz. Convert them" in n for n in notes)
    assert any(": part-1.csv = redelivered/part-1.csv." in n for n in notes)


def test_a_folder_read_whole_or_of_parquet_parts_with_markers_gives_the_same_rules(
    spec_copy, tmp_path, pima_folder
):
    """``data.streamed: false`` on a folder was refused ("only a streamed run reads a
    directory"), which the README offered for a small one; and a folder of Parquet parts could
    not read pima's missing-value markers at all (read_options refused, the advice leading to
    that refusal). A part of a header alone adds no row; a part with other columns is named."""
    from libre_lib.errors import SpecError

    frame = pd.read_csv(DATASETS / "pima.csv")
    parquet = tmp_path / "pq"
    parquet.mkdir()
    for k, (start, stop) in enumerate([(0, 300), (300, 500), (500, len(frame))]):
        frame.iloc[start:stop].to_parquet(parquet / f"part-{k}.parquet")
    csv = tmp_path / "csv"
    csv.mkdir()
    for part in pima_folder.glob("*.csv"):
        (csv / part.name).write_bytes(part.read_bytes())
    frame.iloc[:0].to_csv(csv / "part-3.csv", index=False)  # a header alone
    whole = train(spec_copy("pima"))
    rules = LibreClassifier.from_json(Path(whole["model"]).read_text()).rules_
    models = {}
    for folder in (csv, parquet):  # the spec's data section otherwise: its markers kept
        for streamed in (False, True):
            spec = spec_copy("pima", data__path=str(folder), data__streamed=streamed)
            assert load_spec(spec).data.column_missing_markers()["serum_insulin"] == ("0",)
            summary = train(spec)
            model = LibreClassifier.from_json(Path(summary["model"]).read_text())
            models[folder.name, streamed] = model.rules_
    assert models["csv", False] == models["pq", False] == rules
    assert models["csv", True] == models["pq", True]  # streamed: capped bins, other rules
    frame.iloc[:10].drop(columns="age").to_csv(csv / "part-4.csv", index=False)
    with pytest.raises(DataError, match=r"part-4\.csv' has other columns than .*without 'age'"):
        train(spec_copy("pima", data__path=str(csv), data__streamed=False))
    wrong = spec_copy("pima", data__path=str(parquet), data__read_options={"sep": ";"})
    with pytest.raises(SpecError, match=r"\['sep'\] are options of CSV files"):
        train(wrong)
