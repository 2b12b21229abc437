"""The `libre` command: bad input gives one clear line and a non-zero exit, no traceback."""

import json
import re
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from libre_flows.flows.cli import app

runner = CliRunner()


def _run(*args):
    result = runner.invoke(app, [str(a) for a in args])
    return result.exit_code, result.output


def _store_is_clean(store: Path) -> bool:
    """Nothing half-written: no temp files, every Parquet file has its checksum sidecar."""
    if not store.exists():
        return True
    temps = [p for p in store.rglob("*") if ".tmp" in p.name]
    parquet = list(store.rglob("*.parquet"))
    return not temps and all(p.with_name(p.name + ".sha256").is_file() for p in parquet)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda raw: raw.pop("target"), "missing required key 'target'"),
        (lambda raw: raw.update(colour="blue"), "unknown key 'colour'"),
        (lambda raw: raw["model"].update(alpha=2), "model.alpha"),
        (lambda raw: raw["data"].update(path="nowhere.csv"), "does not exist"),
        (lambda raw: raw["data"].update(path="data.dat"), "neither .csv nor .parquet"),
        (lambda raw: raw["data"].update(path="data.xlsx"), "pandas.read_excel(path).to_parquet"),
    ],
    ids=["missing-key", "unknown-key", "bad-value", "no-data-file", "not-csv-or-parquet", "excel"],
)
def test_spec_problems_exit_non_zero_with_one_line(spec_copy, tmp_path, change, message):
    spec = spec_copy()
    raw = yaml.safe_load(spec.read_text())
    change(raw)
    spec.write_text(yaml.safe_dump(raw))
    code, output = _run("train", spec)
    assert code == 1
    assert message in output
    assert "Traceback" not in output
    assert _store_is_clean(tmp_path / "store")


def test_a_missing_spec_file_is_reported(tmp_path):
    code, output = _run("train", tmp_path / "absent.yaml")
    assert code == 1 and "does not exist" in output and "Traceback" not in output


def test_data_problems_exit_non_zero_with_one_line(spec_copy, data_copy, tmp_path):
    data = data_copy()
    spec = spec_copy(data__path=str(data), target__column="survived")
    code, output = _run("train", spec)
    assert code == 1
    assert "target column 'survived' is not in the data" in output
    assert "Traceback" not in output

    data.write_text("")
    code, output = _run("train", spec_copy(data__path=str(data)))
    assert code == 1 and "is empty" in output and "Traceback" not in output
    assert _store_is_clean(tmp_path / "store")


def test_validate_and_report_commands(spec_copy, tmp_path):
    spec = spec_copy()
    code, output = _run("validate", spec)
    assert code == 0, output
    assert "data valid" in output and "note" not in output


def test_refused_data_exit_3_apart_from_failures(spec_copy):
    """A cron job could not tell data that failed their validation (someone must look at
    them; a re-run fails again) from a failure of the command: both exited 1."""
    spec = spec_copy(expectations={"min_rows": 100_000})
    for command in ("validate", "train"):
        code, output = _run(command, spec)
        assert code == 3, (command, output)
        assert "Data validation failed: 1 of" in output
    code, output = _run("train", spec_copy(target={"column": "survived"}))
    assert code == 1, output  # not the data's fault: the spec names no column of them


def test_validate_refuses_split_by_columns_without_a_value(spec_copy, tmp_path):
    """Only training's split said so: validate passed a spec whose id column was empty."""
    import pandas as pd

    frame = pd.read_csv(Path(__file__).resolve().parents[2] / "libre_lib/datasets/haberman.csv")
    frame["patient"] = None
    frame.to_csv(tmp_path / "ids.csv", index=False)
    spec = spec_copy(
        data={"path": str(tmp_path / "ids.csv")},
        features={"exclude": ["patient"]},
        split_by=["patient"],
    )
    code, output = _run("validate", spec)
    assert code == 1 and "split_by columns ['patient'] hold no value" in output, output


def test_validate_refuses_a_positive_class_the_target_never_holds(spec_copy, tmp_path):
    """Without target.classes only training's split said so: validate passed the spec."""
    spec = spec_copy(target={"column": "target", "positive_class": "Y"})
    code, output = _run("validate", spec)
    assert code == 1, output
    assert "target.positive_class 'Y' is not a value of the target column" in output, output


def test_validate_refuses_a_column_training_refuses(spec_copy, tmp_path):
    """A Parquet timestamp column among the features: `libre validate` said "data valid" and
    `libre train` then failed on it."""
    import pandas as pd

    frame = pd.read_csv(Path(__file__).resolve().parents[2] / "libre_lib/datasets/haberman.csv")
    frame["when"] = pd.date_range("2020-01-01", periods=len(frame), freq="D", tz="UTC")
    frame["wait"] = pd.to_timedelta(frame["age"], unit="D")
    frame.to_parquet(tmp_path / "dated.parquet")
    spec = spec_copy(data={"path": str(tmp_path / "dated.parquet")})
    code, output = _run("validate", spec)
    assert code == 1, output
    flat = " ".join(output.split())
    # both columns at once (the second was named only once the first was fixed), in the
    # spec's terms
    assert "'when' (dates, dtype datetime64" in flat and "'wait' (durations, dtype" in flat
    assert "features.exclude: ['when', 'wait']" in flat, flat
    assert "data valid" not in output


def test_validate_checks_the_report_labels_whatever_the_store_holds(spec_copy):
    """A typo in report.column_labels: `libre validate` said "data valid" once `load` was
    cached (its key holds no labels) and `libre train` then refused the spec."""
    spec = spec_copy()
    code, output = _run("validate", spec)
    assert code == 0, output
    typo = spec_copy(report={"column_labels": {"agee": "age at surgery"}})
    code, output = _run("validate", typo)
    assert code == 1, output
    assert "report.column_labels names columns not in the data: ['agee']" in output
    # a value label for a value the data never hold: said before training, not only in the
    # report of the run (nothing refuses it: a later file may hold the value)
    unheld = spec_copy(
        features={"categorical": ["year_of_operation"]},
        report={"value_labels": {"year_of_operation": {"1958": "x"}}},
    )
    code, output = _run("validate", unheld)
    assert code == 0, output
    said = " ".join(output.split())
    assert "data valid" in said
    assert "note: report.value_labels names values of column 'year_of_operation' that the" in said
    assert "the data never hold: '1958'" in said
    assert "never hold: '1958'" in said


def test_validate_names_numbers_that_training_would_read_as_text(spec_copy, tmp_path):
    """A ';' file with decimal commas and a spec without decimal: "," validated silently, and
    only training said that the column was read as text categories."""
    import pandas as pd

    frame = pd.read_csv(Path(__file__).resolve().parents[2] / "libre_lib/datasets/haberman.csv")
    frame["ratio"] = [f"{v / 7:.2f}".replace(".", ",") for v in frame["age"]]
    frame.to_csv(tmp_path / "eu.csv", sep=";", index=False)
    spec = spec_copy(data={"path": str(tmp_path / "eu.csv"), "read_options": {"sep": ";"}})
    code, output = _run("validate", spec)
    assert code == 0, output
    said = "note: Column 'ratio' holds numbers written with a decimal comma (e.g. '7,43')"
    assert "data valid" in output and said in output

    code, output = _run("train", spec)
    assert code == 0, output
    run_dir = next((tmp_path / "store" / "runs" / "haberman").iterdir())
    code, output = _run("report", run_dir)
    assert code == 0 and "Rule set" in output
    assert "…" not in output  # piped: the Markdown itself, nothing cut at 80 columns
    code, output = _run("report", tmp_path / "not-a-run")
    assert code == 1 and "does not exist" in output
    (tmp_path / "some-folder").mkdir()  # read as a run that "did not finish"
    code, output = _run("report", tmp_path / "some-folder")
    assert code == 1 and "is not a run folder (no run.json, report.md or failure.md" in " ".join(
        output.split()
    )
    assert "did not finish" not in output
    # a pipeline name: its latest finished run under --store
    code, output = _run("train", spec, "--force")
    assert code == 0, output
    runs = sorted((tmp_path / "store" / "runs" / "haberman").iterdir())
    assert len(runs) == 2
    code, by_name = _run("report", "haberman", "--store", tmp_path / "store")
    latest = max(runs, key=lambda p: (p.name[:15], (p / "run.json").stat().st_mtime_ns))
    assert code == 0 and "Rule set" in by_name and latest.name in by_name.replace("\n", "")
    code, output = _run("report", "pima", "--store", tmp_path / "store")
    assert code == 1 and "No finished run of 'pima'" in output
    assert "Pipelines under" in output and "haberman" in output
    # a file of the run folder reads as the folder (it was "does not exist")
    code, output = _run("report", latest / "model.json")
    assert code == 0 and latest.name in output.replace("\n", "") and "Rule set" in output
    # a store copied elsewhere: the report of the copy (run.json records the old path)
    import shutil

    shutil.copytree(tmp_path / "store", tmp_path / "copied")
    code, output = _run("report", "haberman", "--store", tmp_path / "copied")
    html = tmp_path.resolve() / "copied" / "runs" / "haberman" / latest.name / "report.html"
    assert code == 0 and f"HTML report: {html}" in output
    # a typo, as init turns a file's underscores into dashes
    code, output = _run("report", "Haber_man", "--store", tmp_path / "store")
    assert code == 1 and "Did you mean 'haberman'?" in " ".join(output.split())
    data = Path(__file__).resolve().parents[2] / "libre_lib" / "datasets" / "haberman.csv"
    out = tmp_path / "scored.parquet"
    code, output = _run("score", "haber_man", data, out, "--store", tmp_path / "store")
    said = " ".join(output.split())
    assert code == 1 and "'haber_man' is neither a model file nor a pipeline name" in said
    assert "Did you mean 'haberman'?" in said and not out.exists()
    # a valid name the store lacks ("haberma"): the same hint (it said "has no registered
    # model versions yet" without naming the pipelines there)
    code, output = _run("score", "haberma", data, out, "--store", tmp_path / "store")
    said = " ".join(output.split())
    assert code == 1 and "no pipeline 'haberma' has model versions" in said, said
    assert "Did you mean 'haberman'?" in said and not out.exists()
    # a run folder stands for its model.json (it said "does not exist")
    code, output = _run("score", latest, tmp_path / "eu.csv", out)
    assert code == 0 and out.exists(), output
    out.unlink()
    for replaced in (False, True):  # the second scoring replaces the first's output
        code, output = _run(
            "score", "haberman", tmp_path / "eu.csv", out, "--store", tmp_path / "store"
        )
        said = " ".join(output.split())
        assert code == 0 and out.exists(), said
        assert ("(replaced the file that was there)" in said) == replaced, said


def test_an_unknown_runner_is_refused_before_prefect_starts(spec_copy):
    code, output = _run("train", spec_copy(runner={"kind": "ray"}))
    assert code == 1 and "runner.kind" in output and "Traceback" not in output


def test_init_writes_a_spec_that_trains(tmp_path, monkeypatch):
    """A new user's CSV: `libre init` writes the spec (its store beside it), `libre train`
    runs it with tuning on, and a second init does not overwrite it."""
    import pandas as pd

    source = Path(__file__).resolve().parents[2] / "libre_lib" / "datasets" / "haberman.csv"
    frame = pd.read_csv(source)
    frame.insert(0, "patient", [f"p{i}" for i in range(len(frame))])
    (tmp_path / "data").mkdir()
    frame.to_csv(tmp_path / "data" / "Haberman Survival.csv", index=False)
    monkeypatch.chdir(tmp_path)
    code, output = _run("init", "data/Haberman Survival.csv", "--target", "target")
    assert code == 0, output
    assert "wrote haberman-survival.yaml" in output and "left out: patient" in output
    raw = yaml.safe_load((tmp_path / "haberman-survival.yaml").read_text())
    assert raw["target"] == {"column": "target", "positive_class": "2", "classes": ["1", "2"]}
    assert raw["data"]["path"] == "data/Haberman Survival.csv"
    assert raw["features"]["include"] == ["age", "year_of_operation", "positive_axillary_nodes"]
    code, output = _run("train", "haberman-survival.yaml")
    assert code == 0, output
    assert (tmp_path / ".libre-store" / "runs" / "haberman-survival").is_dir()
    before = (tmp_path / "haberman-survival.yaml").read_text()
    code, output = _run("init", "data/Haberman Survival.csv", "--target", "target")
    assert code == 1 and "haberman-survival.yaml exists: --force overwrites it" in output
    # the trained pipeline's own data again: its name is not taken from it
    assert "already holds a pipeline" not in output
    assert (tmp_path / "haberman-survival.yaml").read_text() == before
    # --force into the data file itself wrote the spec over the data
    data = (tmp_path / "data" / "Haberman Survival.csv").read_bytes()
    for output_path in ("data/Haberman Survival.csv", "data/../data/Haberman Survival.csv"):
        code, output = _run(
            "init", "data/Haberman Survival.csv", "--target", "target", "-o", output_path,
            "--force",
        )  # fmt: skip
        assert code == 1 and "is the data file itself" in " ".join(output.split()), output
    assert (tmp_path / "data" / "Haberman Survival.csv").read_bytes() == data


def test_a_data_file_replaced_while_it_is_read_is_not_cached(
    spec_copy, data_copy, tmp_path, monkeypatch
):
    """The store keeps the loaded rows under the file's sha256 taken before reading: a file
    replaced in between (an export landing mid-run) was cached as the old file's content, and
    every later run of the old file reused the other's rows."""
    from libre_flows.tasks import data as data_tasks

    data = data_copy()
    spec = spec_copy(data__path=str(data))
    original = data.read_bytes()
    real_load = data_tasks.stages.load

    def load_then_replace(spec, fingerprint):
        loaded = real_load(spec, fingerprint)
        data.write_bytes(original.replace(b",1\n", b",2\n"))  # the classes flipped
        return loaded

    monkeypatch.setattr(data_tasks.stages, "load", load_then_replace)
    code, output = _run("train", spec)
    assert code == 1 and "changed while the pipeline read it" in output, output
    assert not list((tmp_path / "store").rglob("load/*.parquet"))
    assert _store_is_clean(tmp_path / "store")


def test_models_views_say_which_rows_scored_a_version_and_what_its_report_cautioned(spec_copy):
    """A version trained without a holdout listed its in-sample F1 as a holdout figure, and
    `models show` left out the cautions its report opened with."""
    from libre_flows.flows.train import train

    in_sample = train(spec_copy(holdout_fraction=0))
    held_out = train(spec_copy(holdout_fraction=0.5))
    store = Path(held_out["run_dir"]).parents[2]
    code, listed = _run("models", "list", "haberman", "--store", store)
    assert code == 0, listed
    first, second = in_sample["model_version"], held_out["model_version"]
    line = {v: next(row for row in listed.splitlines() if v in row) for v in (first, second)}
    assert line[first].rstrip().endswith("*") or " * " in line[first]
    assert "*" not in line[second]
    assert "*: on its training rows" in " ".join(listed.split())
    code, shown = _run("models", "show", "haberman", first, "--store", store)
    assert code == 0 and "metrics on the training rows" in shown, shown
    code, shown = _run("models", "show", "haberman", second, "--store", store)
    assert code == 0 and "holdout metrics" in shown, shown
    cautions = json.loads((Path(held_out["run_dir"]) / "run.json").read_text())["cautions"]
    assert cautions  # haberman's rules do no better than answering the majority
    flat = " ".join(shown.split())
    assert "cautions of its report" in flat
    assert all(" ".join(c.split())[:60] in flat for c in cautions)


def test_report_of_a_run_says_what_changed_for_its_version_since(spec_copy):
    """After a rollback the latest run's report still said its version "became the champion",
    with no word that it was retired since."""
    from libre_flows.flows.train import train

    first = train(spec_copy())
    second = train(spec_copy(holdout_fraction=0))  # without a holdout: not promoted itself
    assert first["promoted"] and not second["promoted"]
    store = Path(first["run_dir"]).parents[2]
    run_json = Path(second["run_dir"]) / "run.json"  # as a run killed before promote leaves it
    finished = run_json.read_text()
    pending = {**json.loads(finished), "promotion_state": "pending"}
    run_json.write_text(json.dumps(pending))  # a decision not to promote: nothing to say
    code, output = _run("report", second["run_dir"])
    assert code == 0 and "has not applied" not in " ".join(output.split())
    pending["decision"] = {**pending["decision"], "promoted": True}
    run_json.write_text(json.dumps(pending))
    code, output = _run("report", second["run_dir"])
    flat = " ".join(output.split())
    assert code == 0 and "this run has not applied its decision to promote" in flat
    assert f"the champion is {first['model_version']}" in flat, flat
    run_json.write_text(finished)
    code, output = _run("models", "promote", "haberman", second["model_version"], "--store", store)
    assert code == 0, output
    code, output = _run("report", first["run_dir"])
    flat = " ".join(output.split())
    assert code == 0 and f"since this run, {first['model_version']} is retired" in flat, flat
    assert f"the champion is now {second['model_version']}" in flat
    code, output = _run("report", "haberman", "--store", store)  # the latest run: the second
    flat = " ".join(output.split())
    assert f"since this run, {second['model_version']} has become the champion" in flat
    # `models show` kept only the latest reason ("replaced by ..."): why a retired version had
    # been promoted, and that a champion was not promoted by its run, were lost
    code, output = _run("models", "show", "haberman", first["model_version"], "--store", store)
    flat = " ".join(output.split())
    assert code == 0 and f"reason replaced by {second['model_version']}" in flat, flat
    assert "in its run promoted: first version with passing validation" in flat, flat
    code, output = _run("models", "show", "haberman", second["model_version"], "--store", store)
    flat = " ".join(output.split())
    assert code == 0 and "in its run not promoted: in-sample (training) f1" in flat, flat
    assert "made champion" not in flat  # its current reason is that promotion by hand
    for version, why in ((first, "a rollback"), (second, "forward again")):
        code, output = _run(
            "models", "promote", "haberman", version["model_version"], "--reason", why,
            "--store", store,
        )  # fmt: skip
        assert code == 0, output
    code, output = _run("models", "show", "haberman", first["model_version"], "--store", store)
    flat = " ".join(output.split())
    assert re.search(r"made champion \S+ \S+: promoted by hand: a rollback", flat), flat


def test_a_run_that_fails_reading_its_data_leaves_a_failed_run(spec_copy, data_copy):
    """A target column gone from the file: the run failed at load and left no trace, so
    `libre report` printed the previous run's report and exited 0."""
    import pandas as pd

    data = data_copy("haberman.csv")
    spec = spec_copy(data={"path": str(data)})
    code, output = _run("train", spec)
    assert code == 0, output
    store = spec.parent / "store"
    champion = max((store / "runs" / "haberman").iterdir())
    # a later version that is not the champion (no holdout: not promoted automatically)
    code, output = _run("train", spec_copy(data={"path": str(data)}, holdout_fraction=0))
    assert code == 0, output
    pd.read_csv(data).drop(columns="target").to_csv(data, index=False)
    code, output = _run("train", spec)
    assert code == 1 and "target column 'target' is not in the data" in output
    code, output = _run("report", "haberman", "--store", store)
    flat = " ".join(output.split())
    assert code == 1, output
    assert "Reading the data failed" in flat and "the run failed reading its data" in flat
    assert "The latest trained model's report" in flat
    # it was not the champion's: that one is named too
    assert f"The champion's report: {champion}" in "".join(output.split("\n")), output


def test_models_sql_reads_the_spec_s_missing_value_markers_as_libre_score_does(spec_copy):
    """A pipeline model's SQL compared pima's raw 0s (the spec's na_values) with the cut
    points: on the raw file it flagged other rows than `libre score` (93 of 768)."""
    import sqlite3

    import numpy as np
    import pandas as pd

    from libre_flows.flows.train import train
    from libre_lib import LibreClassifier
    from libre_lib.ops.spec import load_spec

    path = spec_copy("pima")
    summary = train(path)
    spec = load_spec(path)
    code, printed = _run("models", "sql", path)
    assert code == 0, printed
    assert "-- read as NULL, as the spec's na_values: 'plasma_glucose': '0';" in printed
    assert "-- pima v0001-" in printed and "TRUE where 'target' = '1'" in printed
    from libre_flows.flows.cli.models import _sql_comment

    # a class from the data with a line break cannot end the comment and run as SQL
    assert _sql_comment("TRUE where 'y' = 'yes\nDROP TABLE t; --'").count("\n") == 0
    sql = "\n".join(line for line in printed.splitlines() if not line.startswith("--"))
    raw = pd.read_csv(spec.data_location())
    with sqlite3.connect(":memory:") as con:
        raw.to_sql("t", con, index=False)
        flagged = np.array([bool(r[0]) for r in con.execute(f"SELECT {sql} FROM t")])
    model = LibreClassifier.from_json(Path(summary["model"]).read_text())
    read = pd.read_csv(spec.data_location(), **spec.data.read_options)  # as the pipeline reads
    expected = model.predict(read.drop(columns="target")) == model.positive_class_
    np.testing.assert_array_equal(flagged, expected)
    unmarked = np.array(model.predict(raw.drop(columns="target")) == model.positive_class_)
    assert (unmarked != expected).any()  # the markers matter on these rows


def test_models_sql_reads_a_csv_s_na_texts_as_libre_score_does(spec_copy, tmp_path):
    """A text column whose "NA" cells (North America) the CSV reader took as missing: the
    rules learned "region is missing", and the SQL, run on the file as a warehouse loads it
    ("NA" a text), flagged other rows than `libre score` (102 of 500)."""
    import sqlite3

    import numpy as np
    import pandas as pd

    from libre_flows.flows.train import train
    from libre_lib import LibreClassifier

    frame = pd.read_csv(Path(__file__).resolve().parents[2] / "libre_lib/datasets/haberman.csv")
    rng = np.random.default_rng(0)
    frame["region"] = np.where(
        (frame["target"] == 2) & (rng.random(len(frame)) < 0.8),
        "NA",
        rng.choice(["EU", "US"], len(frame)),
    )
    frame.to_csv(tmp_path / "regions.csv", index=False)
    path = spec_copy(
        data={"path": str(tmp_path / "regions.csv")},
        features={"categorical": ["region"]},
        tuning={"enabled": False},
    )
    summary = train(path)
    model = LibreClassifier.from_json(Path(summary["model"]).read_text())
    assert "region" in {c.feature for rule in model.rules_ for c in rule}
    code, printed = _run("models", "sql", path)
    assert code == 0, printed
    assert "-- read as NULL in the text columns 'region', as the CSV reader" in printed
    sql = "\n".join(line for line in printed.splitlines() if not line.startswith("--"))
    warehouse = pd.read_csv(tmp_path / "regions.csv", keep_default_na=False)  # "NA" a text
    with sqlite3.connect(":memory:") as con:
        warehouse.to_sql("t", con, index=False)
        flagged = np.array([bool(r[0]) for r in con.execute(f"SELECT {sql} FROM t")])
    read = pd.read_csv(tmp_path / "regions.csv", dtype={"region": str})  # as libre score reads
    expected = model.predict(read.drop(columns="target")) == model.positive_class_
    np.testing.assert_array_equal(flagged, expected)


def test_a_mistyped_spec_file_or_a_data_file_is_named_as_such(tmp_path):
    """Each command said something else of a spec file that is not there ("Pipeline name
    'specs/nonexist.yaml' is not valid", "No runs of ...") and of a CSV given to train ("must
    hold a mapping of keys, got str")."""
    missing = tmp_path / "specs" / "nonexist.yaml"
    for command in (["models", "list"], ["models", "sql"], ["prune"], ["report"]):
        code, output = _run(*command, missing)
        assert code == 1 and "Spec file" in output and "does not exist" in output, output
    for command in (["list"], ["show"], ["sql"], ["promote", "v0001-1a2b3c4d"]):
        code, output = _run("models", *command[:1], missing, *command[1:], "--debug")
        assert code == 1 and "No such option" not in output, output  # --debug, as elsewhere
    data = tmp_path / "visits.csv"
    data.write_text("a,b\n1,2\n")
    for command in (["train"], ["models", "list"], ["models", "sql"], ["prune"], ["report"]):
        code, output = _run(*command, data)
        assert code == 1 and "is a data file, not a spec" in " ".join(output.split()), output
        assert "libre init" in output
    code, output = _run("score", data, data, tmp_path / "out.parquet")  # the model first
    assert code == 1 and "libre score takes the model first" in " ".join(output.split()), output


def test_a_failed_read_s_page_prints_the_error_as_text_not_markdown(tmp_path):
    """A column renamed to "[click me](https://evil.example) **bold**": failure.md held the
    error as Markdown, and `libre report` showed a link and bold text made from the name."""
    from libre_flows.tasks.data import record_failed_read
    from libre_lib.ops.spec import load_spec

    spec = load_spec(Path(__file__).resolve().parents[2] / "deployments/specs/haberman.yaml")
    error = ValueError("missing column '[click me](https://evil.example) **bold**'")
    record_failed_read(spec, str(tmp_path), error)
    (page,) = tmp_path.glob("runs/haberman/*/failure.md")
    text = page.read_text()
    assert r"'\[click me\](https://evil.example) \*\*bold\*\*'" in text


def test_train_json_gives_scripts_one_object_on_stdout(spec_copy):
    """A CI job had to scrape prose for the model version and whether the champion moved
    (``promoted`` is also true for a run that found its version the champion already)."""
    spec = spec_copy()
    first = runner.invoke(app, ["train", str(spec), "--json"])
    assert first.exit_code == 0, first.output
    summary = json.loads(first.stdout)  # the object alone: the human lines are on stderr
    assert "report: " in first.stderr and "report: " not in first.stdout
    run = json.loads(Path(summary["run_dir"], "run.json").read_text())
    assert summary["model_version"] == run["model_version"] and summary["report"] == run["report"]
    assert summary["promoted"] and summary["champion_changed"] and summary["new_version"]
    assert summary == run  # run.json itself, promotion_state "applied" included
    again = json.loads(runner.invoke(app, ["train", str(spec), "--json"]).stdout)
    assert again["promoted"] and not again["champion_changed"] and not again["new_version"]
    assert again["model_version"] == summary["model_version"]
    # libre score --json: the scoring summary alone on stdout, with the model that scored
    data = Path(__file__).resolve().parents[2] / "libre_lib" / "datasets" / "haberman.csv"
    out = Path(summary["run_dir"]).parent / "scored.parquet"
    store = Path(summary["run_dir"]).parents[2]
    scored = runner.invoke(app, ["score", "haberman", str(data), str(out), "--store", str(store),
                                 "--json"])  # fmt: skip
    assert scored.exit_code == 0, scored.output
    said = json.loads(scored.stdout)
    assert "output: " in scored.stderr and "output: " not in scored.stdout
    assert said["rows"] == 306 and said["output"] == str(out) and said["replaced"] is False
    version = summary["model_version"]
    assert said["model_sha256"][:8] == version.split("-")[1] and version in said["model"]


def test_models_sql_reads_an_empty_text_as_libre_score_does(spec_copy, tmp_path):
    """A Parquet-trained version whose rule takes "region is missing": `libre score` reads an
    empty text there as missing (no training category is empty), its SQL compared it as a
    category and flagged other rows (11 of 168)."""
    import sqlite3

    import numpy as np
    import pandas as pd

    from libre_flows.flows.train import train
    from libre_lib import LibreClassifier

    frame = pd.read_csv(Path(__file__).resolve().parents[2] / "libre_lib/datasets/haberman.csv")
    rng = np.random.default_rng(0)
    frame["region"] = np.where(
        (frame["target"] == 2) & (rng.random(len(frame)) < 0.8),
        None,
        rng.choice(["EU", "US"], len(frame)),
    )
    frame.to_parquet(tmp_path / "regions.parquet", index=False)
    path = spec_copy(
        data={"path": str(tmp_path / "regions.parquet")},
        features={"categorical": ["region"]},
        tuning={"enabled": False},
    )
    summary = train(path)
    model = LibreClassifier.from_json(Path(summary["model"]).read_text())
    assert any(c.feature == "region" and c.missing for rule in model.rules_ for c in rule)
    code, printed = _run("models", "sql", path)
    assert code == 0, printed
    assert "-- read as NULL: an empty text in the text columns 'region', as `libre score`" in (
        printed
    )
    assert "the CSV reader" not in printed
    sql = "\n".join(line for line in printed.splitlines() if not line.startswith("--"))
    blank = frame.assign(region=frame["region"].fillna(""))  # a warehouse's empty texts
    with sqlite3.connect(":memory:") as con:
        blank.to_sql("t", con, index=False)
        flagged = np.array([bool(r[0]) for r in con.execute(f"SELECT {sql} FROM t")])
    expected = model.predict(frame.drop(columns="target")) == model.positive_class_
    np.testing.assert_array_equal(flagged, expected)
    assert expected.any()


def test_init_on_a_wide_file_names_a_few_columns_per_line(tmp_path, monkeypatch):
    """2,000 columns of small whole numbers: `libre init` printed every name on one line of
    14 kB, and a line per column left out."""
    import numpy as np
    import pandas as pd

    rng = np.random.default_rng(0)
    frame = pd.DataFrame(rng.integers(0, 4, (60, 300)), columns=[f"c{i}" for i in range(300)])
    frame = frame.assign(**{f"k{i}": 1 for i in range(30)}, target=rng.integers(0, 2, 60))
    frame.to_csv(tmp_path / "wide.csv", index=False)
    monkeypatch.chdir(tmp_path)
    code, output = _run("init", "wide.csv", "--target", "target")
    assert code == 0, output
    flat = " ".join(output.split())
    codes = "few whole numbers, codes?: c0, c1, c2, c3, c4, c5, c6, c7, c8, c9, c10, c11 and 288"
    assert codes in flat
    assert len([line for line in output.splitlines() if line.startswith("left out: k")]) == 20
    assert "left out: 10 more columns (the spec's comments give each with its reason)" in flat
    raw = (tmp_path / "wide.yaml").read_text()
    assert raw.count("# left out: k") == 30  # the spec still names every one
