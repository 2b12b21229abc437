"""The algorithm library never imports an orchestrator (libre_lib/__init__.py's promise),
nor do the pipeline's stages; the tasks never import the flows that wire them."""

import subprocess
import sys

CHECK = """
import sys
import libre_lib
import libre_lib.datasets
from libre_lib import LibreClassifier
from libre_lib.datasets import load_dataset

X, y, info = load_dataset("haberman")
LibreClassifier(n_estimators=2, random_state=0).fit(X, y).predict(X)
print(",".join(sorted(m for m in sys.modules if m.split(".")[0] == "prefect")))
"""


def test_importing_and_using_libre_lib_does_not_import_prefect():
    # A fresh interpreter: the test session itself may have imported prefect already.
    result = subprocess.run(
        [sys.executable, "-c", CHECK], capture_output=True, text=True, timeout=120, check=False
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == ""


LAYERS = """
import sys
import libre_lib.ops.stages
print(",".join(sorted(m for m in sys.modules if m.split(".")[0] in ("prefect", "libre_flows"))))
import libre_flows.tasks.data, libre_flows.tasks.learning, libre_flows.tasks.report
import libre_flows.tasks.score
print(",".join(sorted(m for m in sys.modules if m.startswith("libre_flows.flows"))))
"""


def test_the_stages_never_import_prefect_and_tasks_never_import_flows():
    result = subprocess.run(
        [sys.executable, "-c", LAYERS], capture_output=True, text=True, timeout=120, check=False
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split("\n")[:2] == ["", ""]
