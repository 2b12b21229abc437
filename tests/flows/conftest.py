"""One Prefect test server for the whole flow-test session (starting one takes ~15 s)."""

import functools
import os
import shutil
from pathlib import Path

import pytest

os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
os.environ.setdefault("DO_NOT_TRACK", "1")
os.environ.setdefault("GX_ANALYTICS_ENABLED", "false")

SPECS = Path(__file__).resolve().parents[2] / "deployments" / "specs"


@pytest.fixture(scope="session", autouse=True)
def prefect_backend():
    from prefect.settings import PREFECT_FLOWS_HEARTBEAT_FREQUENCY, temporary_settings
    from prefect.testing.utilities import prefect_test_harness

    with prefect_test_harness(server_startup_timeout=120):
        with temporary_settings({PREFECT_FLOWS_HEARTBEAT_FREQUENCY: None}):
            yield


def _write_spec(folder: Path, name: str = "haberman", **changes) -> Path:
    import yaml

    raw = yaml.safe_load((SPECS / f"{name}.yaml").read_text())
    raw["data"]["path"] = str((SPECS / raw["data"]["path"]).resolve())
    raw["store"] = str(folder / "store")
    if not any(k.startswith("tuning") for k in changes):  # quick runs; tuning has its own tests
        raw.setdefault("tuning", {"enabled": False})
        if name == "haberman":  # ten learners, as the tests were written for
            raw["model"].setdefault("n_estimators", 10)
    for dotted, value in changes.items():
        node = raw
        *parents, leaf = dotted.split("__")
        for part in parents:
            node = node.setdefault(part, {})
        node[leaf] = value
    path = folder / f"{name}-{len(list(folder.glob('*.yaml')))}.yaml"
    path.write_text(yaml.safe_dump(raw))
    return path


@pytest.fixture(scope="session")
def write_spec():
    """``write_spec(folder, name="haberman", **changes)`` writes a variant of a bundled spec into
    ``folder`` (data path made absolute, store in ``folder / "store"``, tuning off unless a
    ``tuning__...`` change is given; ``a__b=value`` sets ``raw["a"]["b"]``) and returns its
    path."""
    return _write_spec


@pytest.fixture
def spec_copy(tmp_path, write_spec):
    """Write a variant of a bundled spec into tmp_path (see ``write_spec``)."""
    return functools.partial(write_spec, tmp_path)


@pytest.fixture
def data_copy(tmp_path):
    def make(name: str = "haberman.csv") -> Path:
        source = SPECS.parents[1] / "libre_lib" / "datasets" / name
        target = tmp_path / name
        shutil.copy(source, target)
        return target

    return make
