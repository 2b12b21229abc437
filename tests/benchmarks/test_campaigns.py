"""The quick concurrency campaign of benchmarks/campaigns.py runs and finds nothing lost.

Processes register, promote and load model versions of one pipeline at once, and write and
read the same artifacts at once; the campaign's own checks must all pass (a lost, duplicated or
unverifiable version, or a failed load, fails them).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_concurrent_campaign_quick(tmp_path):
    out = tmp_path / "concurrent.json"
    done = subprocess.run(
        [sys.executable, "benchmarks/campaigns.py", "concurrent", "--quick", "--json", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    result = json.loads(out.read_text())["concurrent"]
    counts, checks = result["counts"], result["checks"]
    assert checks and all(checks.values()), checks
    n = counts["registrations"]
    assert n > 1 and counts["versions"] == counts["distinct_ids"] == counts["run_ids_found"] == n
    assert counts["champion_loads"] > 0 and counts["champion_load_failures"] == 0
    assert counts["artifact_reads"] > 0 and counts["artifact_read_failures"] == 0
    assert "FAIL" not in done.stdout
    assert "PASS  no version lost or duplicated" in done.stdout
