"""Fixtures shared by the unit, property and flow tests: bundled datasets and a fitted model.

Module-scoped, so each test file gets its own copies and no test can change another file's data.
"""

import os

import numpy as np
import pandas as pd
import pytest

from libre_lib import LibreClassifier
from libre_lib.datasets import load_dataset
from libre_lib.ops.contract import DataContract


@pytest.fixture(scope="module")
def haberman():
    """(X, y, info) of the bundled haberman dataset."""
    return load_dataset("haberman")


@pytest.fixture(scope="module")
def credit_data():
    """(X, y, info) of the bundled credit_approval dataset (numbers, text and missing values)."""
    return load_dataset("credit_approval")


@pytest.fixture(scope="module")
def credit_model(credit_data):
    """A LibreClassifier fitted on the whole credit_approval dataset (random_state=0), with the
    paper's selection (no inner choice of max_rules), so that its rules test many columns."""
    X, y, info = credit_data
    return LibreClassifier(
        positive_class=info.positive_class, random_state=0, max_rules=None, conflict_tolerance=0.0
    ).fit(X, y)


@pytest.fixture(scope="module")
def credit(credit_data, credit_model):
    """(X, model, the model's data contract) on credit_approval."""
    X = credit_data[0]
    return X, credit_model, DataContract.from_model(credit_model, X)


@pytest.fixture(scope="session", autouse=True)
def no_local_server(tmp_path_factory):
    """Commands under test never reuse, or start, a `libre server` left running on this
    machine: they use the flow tests' harness or Prefect's temporary server. Their processes
    inherit it."""
    saved = {name: os.environ.get(name) for name in ("LIBRE_SERVER", "LIBRE_HOME")}
    os.environ["LIBRE_SERVER"] = "embedded"
    os.environ["LIBRE_HOME"] = str(tmp_path_factory.mktemp("libre-home"))
    yield
    for name, value in saved.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value


@pytest.fixture(scope="session")
def pair_data():
    """(X, y): 1,500 rows whose class joins two of twelve columns (x0 ≥ 60 and x1 < 40, 3 %
    of the labels flipped): a learner finds the concept only if its subset holds both."""
    rng = np.random.default_rng(0)
    values = rng.uniform(0, 100, (1500, 12)).round(0)
    X = pd.DataFrame(values, columns=[f"x{i}" for i in range(12)])
    y = np.where(((X.x0 >= 60) & (X.x1 < 40)) ^ (rng.random(len(X)) < 0.03), "yes", "no")
    return X, y


#: The test files that take longest (``--durations=0`` summed per file, ~100-170 s each on 2
#: cores), started first: ``make test`` keeps this order (``--no-loadscope-reorder``), so no
#: worker is left with one of them at the end while the others idle.
SLOW_FIRST = (
    "tests/flows/test_install.py",
    "tests/benchmarks/test_quick_modes.py",
    "tests/flows/test_train.py",
    "tests/flows/test_tuning.py",
    "tests/flows/test_warm.py",
    "tests/unit/test_estimator.py",
    "tests/flows/test_postgres.py",
    "tests/flows/test_streamed.py",
    "tests/flows/test_deployments.py",
    "tests/flows/test_embedded_exit.py",
    "tests/unit/test_discretization.py",
    "tests/flows/test_crash.py",
    "tests/flows/test_dask.py",
    "tests/unit/test_streamed.py",
)


def pytest_collection_modifyitems(items):
    """The files of :data:`SLOW_FIRST` first, in its order; every other test as collected."""
    rank = {path: i for i, path in enumerate(SLOW_FIRST)}
    items.sort(key=lambda item: rank.get(item.nodeid.split("::")[0], len(rank)))
