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
        "stage learn        computed   /s/learn/d.parquet",
        "not a stage line",
    ]:
        progress.emit(_record(message))
    assert status.lines == [
        "tuning tasks finished: 1",
        "tuning tasks finished: 2",
        "pick: computed /s/pick/c.parquet",
        "weak learners finished: 1",
    ]
