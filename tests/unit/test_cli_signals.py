"""Ctrl-C after a command's work is recorded: a console command ignores it (Prefect's shutdown
turned exit 0 into a traceback); code that runs the CLI in its own process keeps its handler."""

import os
import signal
import subprocess
import sys
import time

import pytest

from libre_flows.flows.cli import common


def test_only_a_console_command_ignores_ctrl_c_once_its_work_is_committed(monkeypatch):
    before = signal.getsignal(signal.SIGINT)
    before_term = signal.getsignal(signal.SIGTERM)
    try:
        monkeypatch.setattr(common, "_console_command", False)
        common.work_committed()
        assert signal.getsignal(signal.SIGINT) is before  # e.g. a test runner invoking the CLI
        common.as_console_command()
        assert signal.getsignal(signal.SIGTERM) is common._on_terminate
        common.work_committed()
        assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN
        # SIGTERM is let pass by a handler, not ignored: an ignored signal stays ignored in the
        # processes the command starts (a `libre serve` it spawns could not be stopped)
        assert callable(signal.getsignal(signal.SIGTERM))
        assert signal.getsignal(signal.SIGTERM) is not common._on_terminate
    finally:
        signal.signal(signal.SIGINT, before)
        signal.signal(signal.SIGTERM, before_term)


def test_ctrl_c_during_train_or_score_says_what_it_leaves_and_exits_130(monkeypatch, tmp_path):
    """Ctrl-C during a run ended the command with exit 130 and nothing said, even when the
    run had already promoted its model."""
    from typer.testing import CliRunner

    from libre_flows.flows import score as score_flow
    from libre_flows.flows import train as train_flow
    from libre_flows.flows.cli import app

    def stop(*args, **kwargs):
        raise KeyboardInterrupt

    spec = tmp_path / "pima.yaml"
    spec.write_text(
        "name: pima\ndata: {path: data.csv}\ntarget: {column: target, positive_class: '1'}\n"
    )
    monkeypatch.setattr(train_flow, "preflight", lambda *args: None)
    monkeypatch.setattr(train_flow, "train", stop)
    result = CliRunner().invoke(app, ["train", str(spec)], env={"COLUMNS": "250"})
    assert result.exit_code == 130
    assert "interrupted:" in result.output and "libre models list pima" in result.output
    assert "Traceback" not in result.output
    # the spec's store, not the commands' default one in the working directory
    assert f"libre models list pima --store {tmp_path / '.libre-store'}" in result.output
    assert f"libre report pima --store {tmp_path / '.libre-store'}" in result.output

    monkeypatch.setattr(score_flow, "preflight", lambda *args: None)
    monkeypatch.setattr(score_flow, "score", stop)
    model = tmp_path / "model.json"
    model.write_text("{}")
    out = tmp_path / "scored.parquet"
    result = CliRunner().invoke(
        app, ["score", str(model), str(tmp_path), str(out)], env={"COLUMNS": "250"}
    )
    assert result.exit_code == 130
    assert (
        "interrupted:" in result.output and "either as it was or the complete new" in result.output
    )


def test_ctrl_c_after_the_run_applied_its_promotion_says_what_it_did(monkeypatch, tmp_path):
    """A Ctrl-C that came after the promotion was applied said "if the run reached promotion,
    its model is the champion", while its run.json knew."""
    import json
    import os

    from typer.testing import CliRunner

    from libre_flows.flows import train as train_flow
    from libre_flows.flows.cli import app

    spec = tmp_path / "pima.yaml"
    spec.write_text(
        "name: pima\ndata: {path: data.csv}\ntarget: {column: target, positive_class: '1'}\n"
    )
    runs = tmp_path / ".libre-store" / "runs" / "pima"
    (runs / "20200101-000000-aaaaaaaaaaaa").mkdir(parents=True)  # an earlier run's folder
    old = runs / "20200101-000000-aaaaaaaaaaaa" / "run.json"
    old.write_text(json.dumps({"promotion_state": "applied", "model_version": "v0001-old"}))
    os.utime(old.parent, (1e9, 1e9))

    def finish_then_stop(*args, **kwargs):
        run = runs / "20261130-090000-bbbbbbbbbbbb"
        run.mkdir()
        (run / "run.json").write_text(
            json.dumps(
                {
                    "promotion_state": "applied",
                    "model_version": "v0002-12345678",
                    "promotion": "promoted: holdout f1 0.612 is not below the champion's",
                }
            )
        )
        raise KeyboardInterrupt

    monkeypatch.setattr(train_flow, "preflight", lambda *args: None)
    monkeypatch.setattr(train_flow, "train", finish_then_stop)
    result = CliRunner().invoke(app, ["train", str(spec)], env={"COLUMNS": "250"})
    assert result.exit_code == 130
    assert "the run had finished: model v0002-12345678: promoted: holdout f1" in result.output
    assert "v0001-old" not in result.output


def test_a_ctrl_c_lost_inside_the_run_is_still_said_with_exit_130(monkeypatch, tmp_path):
    """Ctrl-C 15 s into `libre train pima` was raised inside an asyncio transport's __del__,
    printed as "Exception ignored" and lost: the run went on, promoted, and exited 0."""
    import os

    from typer.testing import CliRunner

    from libre_flows.flows import cli
    from libre_flows.flows import train as train_flow
    from libre_flows.flows.cli import app

    spec = tmp_path / "pima.yaml"
    spec.write_text(
        "name: pima\ndata: {path: data.csv}\ntarget: {column: target, positive_class: '1'}\n"
    )

    def swallowed(*args, **kwargs):
        try:  # as a finalizer does: the interrupt raised inside it goes nowhere
            os.kill(os.getpid(), signal.SIGINT)
            for _ in range(1000):
                pass
        except KeyboardInterrupt:
            pass
        return {"promoted": True}

    monkeypatch.setattr(train_flow, "preflight", lambda *args: None)
    monkeypatch.setattr(train_flow, "train", swallowed)
    monkeypatch.setattr(cli, "_print_summary", lambda summary, seconds: print("the summary"))
    before = signal.getsignal(signal.SIGINT)
    result = CliRunner().invoke(app, ["train", str(spec)], env={"COLUMNS": "250"})
    assert signal.getsignal(signal.SIGINT) is before
    assert result.exit_code == 130, result.output
    assert "the summary" in result.output
    assert "interrupted: a Ctrl-C during the run was lost (raised where Python could not" in (
        " ".join(result.output.split())
    )


def test_an_unexpected_error_of_several_lines_gets_the_debug_hint_at_its_end(capsys):
    """Dask's "Error during deserialization of the task graph. This frequently" / "occurs if
    ..." read with "(run with --debug for the traceback)" cut into its sentence."""
    import typer

    from libre_flows.flows.cli.common import fail

    with pytest.raises(typer.Exit):
        fail(RuntimeError("Error during deserialization. This frequently\noccurs if ..."), False)
    lines = capsys.readouterr().err.splitlines()
    assert lines[0] == "error: RuntimeError: Error during deserialization. This frequently"
    assert lines[1] == "  occurs if ... (run with --debug for the traceback)"


NAPPING = """
import time
from libre_flows.flows.cli import app
from libre_flows.flows.cli.common import as_console_command, run_console

@app.command("nap")
def nap():
    print("napping", flush=True)
    time.sleep(60)

as_console_command()
run_console(lambda: app(prog_name="libre", args=["nap"]))
"""


def test_sigterm_ends_a_command_that_does_not_catch_it_with_one_line_and_143():
    """typer turned the interrupt of a command without its own handler (validate, models,
    report, ...) into exit 130 without a word."""
    process = subprocess.Popen(
        [sys.executable, "-c", NAPPING],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=os.environ.copy(),
    )
    try:
        assert process.stdout.readline().strip() == "napping"
        time.sleep(0.2)
        process.send_signal(signal.SIGTERM)
        _, err = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 128 + signal.SIGTERM, err
    assert "stopped by SIGTERM: the command stopped before its end." in " ".join(err.split())
    assert "Traceback" not in err
