"""The live status line of the `libre` commands follows the pipeline's stage log lines."""

import logging

from libre_flows.flows.cli.common import StageProgress


class _Status:
    def __init__(self):
        self.lines = []

    def update(self, line):
        self.lines.append(line)


def _record(message):
    return logging.LogRecord("prefect.task_runs", logging.INFO, __file__, 1, message, (), None)


def test_the_status_line_counts_tuning_tasks_and_learners_and_names_other_stages():
    status = _Status()
    progress = StageProgress(status)
    for message in [
        "stage tune         computed   /s/tune/a.parquet",
        "stage tune         cache hit  /s/tune/b.parquet",
        "stage pick         computed   /s/pick/c.parquet",
        "stage split        cache hit  /s/split/e.parquet",
        "stage learn        cache hit  3 of 50 tasks",  # said as the mapped stage starts
        "stage learn        computed   /s/learn/d.parquet",
        "not a stage line",
    ]:
        progress.emit(_record(message))
    assert status.lines == [
        "tuning tasks finished: 1",
        "tuning tasks finished: 2",
        "pick: computed",  # not the file's path, which wrapped the line
        "split: cache hit",
        "weak learners finished: 3 of 50",
        "weak learners finished: 4 of 50",
    ]


def test_the_status_line_counts_a_streamed_runs_parts_of_every_pass():
    status = _Status()
    progress = StageProgress(status)
    for message in [
        "streamed source: 3 part(s), 600,000 rows, 12 feature(s); batches of 200000 rows",
        "stage profile      computed   /s/profile/a.parquet",
        "stage profile      cache hit  /s/profile/b.parquet",
        "stage sample_part  computed   /s/sample_part/c.parquet",
        "stage encode_part  computed   /s/encode_part/d.parquet",
    ]:
        progress.emit(_record(message))
    assert status.lines[1:] == [
        "pass 1, parts profiled: 1 of 3",
        "pass 1, parts profiled: 2 of 3",
        "pass 2, parts sampled: 1 of 3",
        "pass 3, parts encoded: 1 of 3",
    ]
    assert status.lines[0].startswith("streamed source: 3 part(s)")


def test_pass_two_is_counted_under_its_task_name_and_its_second_stage_is_no_stage_change():
    """A first streamed run said "sample: cache hit" (the mapped task is named "sample", its
    stage "sample_part"; nothing was cached), then a "fine_counts: computed" line per part
    between the counts."""
    status = _Status()
    progress = StageProgress(status)
    for message in [
        "streamed source: 2 part(s), 600 rows, 8 feature(s); batches of 128 rows",
        "stage sample       cache hit  0 of 2 tasks, 2 to compute",
        "stage sample_part  computed   /s/sample_part/a.parquet",
        "stage fine_counts  computed   /s/fine_counts/a.parquet",
        "stage sample       finished 1 of 2 tasks",
        "stage sample_part  computed   /s/sample_part/b.parquet",
        "stage fine_counts  computed   /s/fine_counts/b.parquet",
    ]:
        progress.emit(_record(message))
    assert status.lines[1:] == [
        "pass 2, parts sampled: 0 of 2",
        "pass 2, parts sampled: 1 of 2",
        "pass 2, parts sampled: 1 of 2",
        "pass 2, parts sampled: 2 of 2",
    ]


def test_prefects_shutdown_chatter_stays_off_the_console_unless_debugging():
    """Every command ended with "INFO | prefect - Stopping temporary server on ..." (and at
    times "EventsWorker - Still processing items"): Prefect's, said at exit, after the
    console's quiet filter was gone."""
    import logging

    from libre_flows.flows.cli.common import SHUTDOWN_FILTER, pipeline_console

    def record(name, level, message):
        return logging.LogRecord(name, level, __file__, 1, message, None, None)

    chatter = [
        record("prefect", logging.INFO, "Stopping temporary server on http://127.0.0.1:8267"),
        record("EventsWorker", logging.WARNING, "Still processing items: 4 items remaining..."),
    ]
    kept = [
        record("prefect", logging.WARNING, "Stopping the flow run failed"),
        record("EventsWorker", logging.WARNING, "Service queue is full (10 items)"),
    ]
    assert not any(SHUTDOWN_FILTER.filter(r) for r in chatter)
    assert all(SHUTDOWN_FILTER.filter(r) for r in kept)

    with pipeline_console(debug=True, message="x"):
        pass  # Prefect's logging is set up (it replaces the handlers it finds)
    handler = logging.StreamHandler()
    logging.getLogger("prefect").addHandler(handler)
    try:
        with pipeline_console(debug=True, message="x"):
            pass
        assert SHUTDOWN_FILTER not in handler.filters
        for _ in range(2):
            with pipeline_console(debug=False, message="x"):
                pass
        assert handler.filters.count(SHUTDOWN_FILTER) == 1  # left for the exit, once
    finally:
        logging.getLogger("prefect").removeHandler(handler)


def test_library_warnings_are_not_printed_raw_during_a_run_unless_debugging():
    """A streamed run printed a LibreWarning raw, with Prefect's source line under it; the
    warnings about the data are the run's notes, printed once at the end."""
    import warnings

    from libre_flows.flows.cli.common import pipeline_console
    from libre_lib.errors import LibreWarning

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with pipeline_console(debug=False, message="x"):
            warnings.warn("about the data", LibreWarning, stacklevel=1)
            warnings.warn("something else", UserWarning, stacklevel=1)
        with pipeline_console(debug=True, message="x"):
            warnings.warn("shown when debugging", LibreWarning, stacklevel=1)
        warnings.warn("after the run", LibreWarning, stacklevel=1)
    assert [str(w.message) for w in caught] == [
        "something else",
        "shown when debugging",
        "after the run",
    ]


def test_the_status_line_hears_the_total_that_the_flow_says(monkeypatch):
    """A mapped stage's total ("cache hit 0 of 50 tasks") is said by the flow, its tasks'
    lines by the tasks: the status line listens to both loggers."""
    from libre_flows.flows.cli import common

    lines = []

    class Status:
        def update(self, line):
            lines.append(line)

    class Console:
        is_terminal = True

        @staticmethod
        def status(message):
            import contextlib

            return contextlib.nullcontext(Status())

    monkeypatch.setattr(common, "console", Console())
    with common.pipeline_console(debug=False, message="training"):
        logging.getLogger("prefect.flow_runs").info("stage learn        cache hit  0 of 50 tasks")
        logging.getLogger("prefect.task_runs").info("stage learn        computed   /s/l.parquet")
    logging.getLogger("prefect.flow_runs").info("stage learn        computed   /s/m.parquet")
    assert lines == ["weak learners finished: 0 of 50", "weak learners finished: 1 of 50"]


def test_off_a_terminal_progress_is_printed_as_throttled_lines(capsys):
    """Piped to a log file (cron, CI), the live status line showed nothing until the run ended:
    each stage change prints a line with the elapsed time, a mapped stage's count at most every
    few seconds and when it is complete."""
    from libre_flows.flows.cli.common import PlainStatus

    now = [100.0]
    status = PlainStatus("training", every=10.0, clock=lambda: now[0])
    progress = StageProgress(status)
    steps = [
        (1.0, "stage load         computed   /s/load/a.parquet"),
        (0.5, "stage learn        cache hit  0 of 50 tasks"),
        *[(1.0, "stage learn        computed   /s/learn/x.parquet")] * 49,  # 1 s apart
        (1.0, "stage learn        computed   /s/learn/y.parquet"),  # the 50th
        (0.1, "stage learn        finished 50 of 50 tasks"),  # the flow's count: said once
        (0.2, "stage set_cover    computed   /s/set_cover/z.parquet"),
    ]
    for seconds, message in steps:
        now[0] += seconds
        progress.emit(_record(message))
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "training ..."
    assert lines[1] == "[    1.0 s] load: computed"
    counts = [line for line in lines if "weak learners finished" in line]
    assert counts[0].endswith("weak learners finished: 0 of 50")
    assert counts[-1].endswith("weak learners finished: 50 of 50")
    assert not counts[-2].endswith("50 of 50")
    assert 5 <= len(counts) <= 8  # every 10 s of the 50, not one per task
    assert lines[-1].endswith("set_cover: computed")


def test_a_console_command_prints_the_library_s_warnings_as_its_own(monkeypatch, capsys):
    """`libre score` printed a skipped file's warning as Python does: a path inside the
    library, "LibreWarning:", then a line of the library's source."""
    import warnings

    from libre_flows.flows.cli import common
    from libre_lib.errors import LibreWarning

    monkeypatch.setattr(common, "_console_command", False)
    monkeypatch.setattr(warnings, "showwarning", warnings.showwarning)
    common.as_console_command()
    with warnings.catch_warnings():
        warnings.simplefilter("always")
        warnings.warn("1 file in incoming/ is not read: notes.txt", LibreWarning, stacklevel=1)
        warnings.warn("something else", UserWarning, stacklevel=1)
    err = capsys.readouterr().err
    assert err.startswith("warning: 1 file in incoming/ is not read: notes.txt\n"), err
    assert "warning: something else" not in err  # other warnings go on as Python shows them


def test_debug_says_why_no_warm_runner_served_the_command(monkeypatch, tmp_path, capsys):
    """The docs promise one line under --debug; with no runner there was none."""
    from libre_flows.flows import warm

    monkeypatch.setenv("LIBRE_HOME", str(tmp_path))
    monkeypatch.delenv("LIBRE_SERVER", raising=False)
    assert warm.run(["libre", "report", "pima"]) is None
    assert capsys.readouterr().err == ""  # silently without --debug
    assert warm.run(["libre", "report", "pima", "--debug"]) is None
    assert capsys.readouterr().err.startswith("note: not using the warm runner: none runs")


def test_the_flow_s_count_moves_the_line_when_the_tasks_log_elsewhere():
    """On Dask the tasks log in the workers' processes: the line stayed at "0 of 4" until the
    next stage; the flow's own count moves it, and never back below the tasks' lines."""
    status = _Status()
    progress = StageProgress(status)
    for message in [
        "stage learn        cache hit  0 of 4 tasks",
        "stage learn        finished 2 of 4 tasks",  # the flow's count, from Dask
        "stage learn        computed   /s/learn/a.parquet",  # a task's own line (threads): 3
        "stage learn        finished 2 of 4 tasks",  # behind the tasks' lines: kept at 3
        "stage learn        finished 4 of 4 tasks",
    ]:
        progress.emit(_record(message))
    assert status.lines == [
        "weak learners finished: 0 of 4",
        "weak learners finished: 2 of 4",
        "weak learners finished: 3 of 4",
        "weak learners finished: 3 of 4",
        "weak learners finished: 4 of 4",
    ]


def test_processes_a_quiet_command_starts_print_warnings_only(monkeypatch):
    """A Dask cluster's workers printed every task's INFO line into `libre train`'s output."""
    import os

    from libre_flows.flows.cli import common

    monkeypatch.delenv(common.WORKER_CONSOLE_LEVEL, raising=False)
    with common._quiet_workers(True):
        assert os.environ[common.WORKER_CONSOLE_LEVEL] == "WARNING"
    assert common.WORKER_CONSOLE_LEVEL not in os.environ
    with common._quiet_workers(False):  # --debug: everything
        assert common.WORKER_CONSOLE_LEVEL not in os.environ
    monkeypatch.setenv(common.WORKER_CONSOLE_LEVEL, "DEBUG")  # the user's own choice stays
    with common._quiet_workers(True):
        assert os.environ[common.WORKER_CONSOLE_LEVEL] == "DEBUG"


def test_a_stage_line_that_says_its_result_shows_all_of_it():
    """`libre score` printed "check_inputs: 1" where the log said "1 file, 68 sample rows"."""
    status = _Status()
    progress = StageProgress(status)
    for message in [
        "stage check_inputs 1 file, 68 sample rows, no drift warning (0.12 s)",
        "stage score_inputs 49 of 49 rows",
        "stage load         computed   /s/load/a.parquet",
    ]:
        progress.emit(_record(message))
    assert status.lines == [
        "check_inputs: 1 file, 68 sample rows, no drift warning",  # the line has its time
        "score_inputs: 49 of 49 rows",
        "load: computed",
    ]


def test_a_command_s_runs_log_an_expected_failure_without_its_traceback(capsys):
    """A failed `libre validate` against a server put about 65 traceback lines in the run's log
    in the UI under the one-line reason the command printed."""
    import sys

    from libre_flows.flows.cli.common import pipeline_console
    from libre_lib.errors import DataValidationError

    with pipeline_console(False, "validating"):
        try:
            raise DataValidationError("Data validation failed: 2 of 12 expectations not met")
        except DataValidationError:
            record = logging.LogRecord(
                "prefect.task_runs", logging.ERROR, __file__, 1, "failed", (), sys.exc_info()
            )
        logging.getLogger("prefect.task_runs").filter(record)
    assert record.exc_info is None  # the reason stays in the message; the traceback goes


def test_a_dumb_terminal_gets_the_plain_lines_not_a_live_line_it_cannot_draw(monkeypatch):
    """TERM=dumb on a terminal showed no progress at all (rich draws no live line there)."""
    from rich.console import Console

    from libre_flows.flows.cli import common

    dumb = Console(force_terminal=True, _environ={"TERM": "dumb"})
    assert dumb.is_terminal and dumb.is_dumb_terminal
    monkeypatch.setattr(common, "console", dumb)
    with common._status("training") as status:
        assert isinstance(status, common.PlainStatus)


def test_a_waiting_line_shows_without_counting_a_task():
    """All Dask workers gone: the line stood at "tuning tasks finished: 0 of 10" for minutes
    without a word; the flow's waiting line now shows, and counts nothing."""
    status = _Status()
    progress = StageProgress(status)
    for message in [
        "stage tune         cache hit  0 of 10 tasks, 10 to compute",
        "waiting: 0 of 10 tune tasks finished, the next one not in the last 30 s (on Dask, a "
        "scheduler without workers runs none)",
        "stage tune         computed   /s/tune/a.parquet",
    ]:
        progress.emit(_record(message))
    assert status.lines == [
        "tuning tasks finished: 0 of 10",
        "waiting: 0 of 10 tune tasks finished, the next one not in the last 30 s (on Dask, a "
        "scheduler without workers runs none)",
        "tuning tasks finished: 1 of 10",
    ]
