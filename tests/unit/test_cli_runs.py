"""The CLI around runs: `libre report PIPELINE` picks the latest run (two runs in one second
were ordered by the random tail of their folder names); `libre train` prints the run's notes;
a spec file stands for its pipeline, in its own store."""

import os

import pytest
from typer.testing import CliRunner

from libre_flows.flows.cli import app, latest_run

runner = CliRunner()


def test_the_latest_of_two_runs_in_one_second_is_the_one_written_last(tmp_path):
    runs = tmp_path / "runs" / "pima"
    first, second = runs / "20261127-110000-ffffffffffff", runs / "20261127-110000-000000000000"
    for i, folder in enumerate((first, second)):
        folder.mkdir(parents=True)
        (folder / "run.json").write_text("{}")
        os.utime(folder / "run.json", ns=(10**18 + i, 10**18 + i))
    (runs / "20261127-105959-aaaaaaaaaaaa").mkdir()  # no run.json: not finished
    assert latest_run(tmp_path, "pima") == second


def test_train_prints_the_reports_notes():
    """The run's warnings about its data (numbers stored as text, an id column) reached only
    the report's last section; `libre train` now prints them before the report's path."""
    from libre_flows.flows.cli import _print_summary
    from libre_flows.flows.cli.common import console

    summary = {
        "stages": [{"stage": "load", "cache_hit": False}],
        "metrics": {"f1": 0.5, "precision": 0.5, "recall": 0.5, "n_rules": 2},
        "promoted": True,
        "model_version": "v0001-abc",
        "promotion": "first version",
        "report": "/runs/r/report.html",
        "model": "/runs/r/model.json",
        "cache_hits": 0,
        "n_stages": 1,
        "notes": ["Column 'amount' is mostly numbers [sic]", "Column 'id' looks like an id"],
    }
    with console.capture() as captured:
        _print_summary(summary, 1.0)
    out = captured.get()
    assert "note: Column 'amount' is mostly numbers [sic]" in out  # markup-like text kept
    assert out.index("note: Column 'id'") < out.index("report: ")
    with console.capture() as captured:
        _print_summary({**summary, "notes": []}, 1.0)
    assert "note:" not in captured.get()
    caution = "On the holdout rows the model is less accurate than always answering [no]"
    with console.capture() as captured:
        _print_summary({**summary, "cautions": [caution]}, 1.0)
    out = " ".join(captured.get().split())  # as the terminal's width wraps it
    assert f"caution: {caution}" in out and out.index("caution: ") < out.index("report: ")
    # holdout rows without the outcome: recall and F1 are not 0, they cannot be measured
    none = {"f1": 0.0, "precision": 0.0, "recall": 0.0, "n_rules": 1}
    with console.capture() as captured:
        _print_summary({**summary, "metrics": {**none, "n_positive": 0, "n_flagged": 0}}, 1.0)
    assert "holdout F1 n/a  precision n/a  recall n/a  rules 1" in captured.get()
    with console.capture() as captured:
        _print_summary({**summary, "metrics": {**none, "n_positive": 0, "n_flagged": 3}}, 1.0)
    assert "holdout F1 0.000  precision 0.000  recall n/a" in captured.get()


def test_every_command_lists_as_one_line_and_its_help_loses_no_text():
    """`libre --help` listed commands with the docstring's line breaks kept mid-sentence, and
    rich markup kept them inside each command's help too; in markdown mode a help text's
    ``<name>`` would vanish as an HTML tag."""
    import inspect

    import typer.main
    from typer.testing import CliRunner

    from libre_flows.flows.cli import app

    group = typer.main.get_command(app)
    commands = []
    pending = [((), group)]
    while pending:
        path, command = pending.pop()
        for name, sub in getattr(command, "commands", {}).items():
            pending.append(((*path, name), sub))
        if path and not hasattr(command, "commands"):
            commands.append((path, command))
    assert len(commands) >= 12
    runner = CliRunner()
    for path, command in commands:
        first = inspect.cleandoc(command.help or "").split("\n\n")[0]
        assert first and "\n" not in first, (path, first)
        texts = [command.help or ""] + [getattr(p, "help", None) or "" for p in command.params]
        assert not any("<" in text for text in texts), path
        result = runner.invoke(app, [*path, "--help"], terminal_width=200)
        assert result.exit_code == 0, result.output
        shown = " ".join(result.output.split())
        assert " ".join(first.replace("`", "").split()) in shown, (path, shown)


def test_a_spec_file_stands_for_its_pipeline_in_its_own_store(tmp_path, monkeypatch):
    """`libre report specs/pima.yaml` was refused ("pass the spec's name"), and the name alone
    looked in ./.libre-store, not in the store the spec trains into."""
    spec = tmp_path / "specs" / "pima.yaml"
    spec.parent.mkdir()
    spec.write_text(
        "name: pima\ndata: {path: pima.csv}\nstore: ../kept\n"
        "target: {column: y, positive_class: '1', classes: ['0', '1']}\n"
    )
    run = tmp_path / "kept" / "runs" / "pima" / "20261130-080000-000000000000"
    run.mkdir(parents=True)
    (run / "report.md").write_text("# The pima rules\n")
    (run / "run.json").write_text('{"report": "report.html"}')
    monkeypatch.chdir(tmp_path / "specs")  # no store here
    result = runner.invoke(app, ["report", "pima.yaml"], terminal_width=300)
    assert result.exit_code == 0, result.output
    assert "The pima rules" in result.output
    result = runner.invoke(app, ["report", "pima"], terminal_width=300)  # the name alone
    assert result.exit_code == 1 and "No finished run of 'pima'" in result.output
    result = runner.invoke(app, ["score", "pima.yaml", "in.csv", "out.parquet"])
    assert result.exit_code == 1 and "has no registered model versions" in result.output
    (tmp_path / "specs" / "bad.yaml").write_text("name: pima\n")  # not a valid spec
    for args in (["report", "bad.yaml"], ["score", "bad.yaml", "in.csv", "out.parquet"]):
        result = runner.invoke(app, args, terminal_width=300)
        assert result.exit_code == 1, result.output
        assert "bad.yaml" in result.output and "Traceback" not in result.output


def test_values_in_square_brackets_reach_the_terminal_as_written():
    """Rich read "[b]" and "^[a]$" as markup tags: an unseen category [b] printed as '' and a
    validation regex ^[a]$ as ^$."""
    import pytest
    import typer

    from libre_flows.flows.cli.common import console, errors, fail
    from libre_flows.flows.cli.score import _print_summary
    from libre_lib.errors import DataError, DataValidationError

    failure = DataValidationError(
        "Data validation failed: 1 of 3 expectations not met:\n"
        "  - expect_column_values_to_match_regex on column 'a1': kwargs {'regex': '^[a]$'}"
    )
    with errors.capture() as captured, pytest.raises(typer.Exit):
        fail(failure, debug=False)
    assert "{'regex': '^[a]$'}" in captured.get()
    with errors.capture() as captured, pytest.raises(typer.Exit):
        fail(DataError("column [t] of file [x].csv"), debug=False)
    assert "error: column [t] of file [x].csv" in captured.get()

    summary = {
        "rows": 10, "batches": 1, "rows_per_second": 100.0, "n_positive": 2,
        "positive_rate": 0.2, "positive_class": "[yes]", "described_class": None,
        "output": "out/[2026].parquet", "artifact": "scoring-[x]",
        "warnings": [{"message": "column 'a9': 2 values are categories not seen in training, "
                      "e.g. ['[b]', '[t]']"}],
    }  # fmt: skip
    with console.capture() as captured:
        _print_summary(summary, 1.0)
    out = " ".join(captured.get().split())  # as the terminal's width wraps it
    assert "e.g. ['[b]', '[t]']" in out and "out/[2026].parquet" in out and "[yes]" in out


def test_report_of_a_run_that_did_not_finish_or_whose_run_json_is_damaged(tmp_path):
    """A truncated run.json made `libre report` end in a JSONDecodeError traceback, and a run
    folder without run.json (a run killed while publishing) printed as if it had finished."""
    run = tmp_path / "runs" / "pima" / "20261130-080000-000000000000"
    run.mkdir(parents=True)
    (run / "report.md").write_text("# The pima rules\n")
    result = runner.invoke(app, ["report", str(run)], terminal_width=300)
    assert result.exit_code == 0 and "The pima rules" in result.output
    assert "has no run.json: the run did not finish" in " ".join(result.output.split())
    (run / "run.json").write_text('{"report": "rep')  # cut short
    result = runner.invoke(app, ["report", "pima", "--store", str(tmp_path)], terminal_width=300)
    assert result.exit_code == 0, result.output
    assert "The pima rules" in result.output and "Traceback" not in result.output
    assert "run.json cannot be read" in " ".join(result.output.split())


def test_a_store_that_is_a_file_is_named_as_such(tmp_path):
    """`libre score haberman ... --store notadir` advised restoring a champion pointer under
    notadir/models/...: the store given was a file."""
    from libre_flows.flows.cli.models import models_app

    store = tmp_path / "notadir"
    store.write_text("x")
    for invoke, args in [
        (app, ["score", "haberman", "in.csv", "out.parquet", "--store", str(store)]),
        (app, ["report", "haberman", "--store", str(store)]),
        (models_app, ["list", "haberman", "--store", str(store)]),
    ]:
        result = runner.invoke(invoke, args, terminal_width=300)
        assert result.exit_code == 1, (args, result.output)
        assert f"The store {store} is a file, not a folder." in " ".join(result.output.split())


def test_a_prefect_home_that_cannot_be_written_is_refused_at_once(tmp_path):
    """A read-only PREFECT_HOME: libre train and libre score waited some two minutes, then
    said "Timed out while attempting to connect to ephemeral Prefect API server"."""
    from libre_flows.flows.cli.common import check_prefect_home

    blocker = tmp_path / "a-file"
    blocker.write_text("")
    with pytest.raises(PermissionError, match=r"PREFECT_HOME '.*a-file/home' cannot be written"):
        check_prefect_home(blocker / "home")
    check_prefect_home(tmp_path / "new" / "home")  # created when missing
    assert (tmp_path / "new" / "home").is_dir() and not list((tmp_path / "new" / "home").iterdir())
