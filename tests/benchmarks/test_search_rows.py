"""benchmarks/search_rows.py: the default search on many rows (its own file, so that the
benchmark tests run on more than one worker)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "benchmarks"


def test_the_many_rows_search_benchmark_reports_a_fit_and_a_run_out_of_time():
    """One JSON line per run: the fit's figures, or "not finished" once the child (and its
    workers) are killed at the timeout."""
    script = str(BENCH / "search_rows.py")
    done = subprocess.run(
        [sys.executable, script, "--rows", "400"], capture_output=True, text=True, timeout=300
    )
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["training_rows"] == 300 and result["grid"] == "default"
    assert result["grid_points"] > 0 and result["rules"] >= 0 and 0 <= result["test_f1"] <= 1
    late = subprocess.run(
        [sys.executable, script, "--rows", "400", "--timeout", "1"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert json.loads(late.stdout.strip().splitlines()[-1])["status"] == "not finished"
