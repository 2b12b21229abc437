"""The suite's slow-first order names files that exist (a renamed file would drop silently
to its collected place, back at the end of the run)."""

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_every_slow_first_file_exists():
    spec = importlib.util.spec_from_file_location("suite_conftest", ROOT / "tests" / "conftest.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    missing = [path for path in module.SLOW_FIRST if not (ROOT / path).is_file()]
    assert not missing, missing
    assert len(set(module.SLOW_FIRST)) == len(module.SLOW_FIRST)
