"""`libre report PIPELINE` picks the latest run: two runs in one second were ordered by the
random tail of their folder names."""

import os

from libre_flows.flows.cli import latest_run


def test_the_latest_of_two_runs_in_one_second_is_the_one_written_last(tmp_path):
    runs = tmp_path / "runs" / "pima"
    first, second = runs / "20261127-110000-ffffffffffff", runs / "20261127-110000-000000000000"
    for i, folder in enumerate((first, second)):
        folder.mkdir(parents=True)
        (folder / "run.json").write_text("{}")
        os.utime(folder / "run.json", ns=(10**18 + i, 10**18 + i))
    (runs / "20261127-105959-aaaaaaaaaaaa").mkdir()  # no run.json: not finished
    assert latest_run(tmp_path, "pima") == second
