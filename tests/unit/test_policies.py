"""Retries and timeouts: only the tasks that read external data retry, and only on I/O errors
that may pass; the reads that could hang have a timeout."""

import errno
import importlib
import pkgutil

import pytest
from prefect import Task

import libre_flows.tasks as task_package
from libre_flows.tasks import policies
from libre_lib.errors import ArtifactError, DataError, SpecError

STREAMED_READERS = {"plan_source", "profile", "sample", "resolve", "encode_part", "check_source"}
READERS = {"load", "check_inputs", "score_inputs", *STREAMED_READERS}
TIMEOUTS = {
    "load": policies.LOAD_TIMEOUT_S,
    "check_inputs": policies.CHECK_INPUTS_TIMEOUT_S,
    "plan_source": policies.LOAD_TIMEOUT_S,
    "check_source": policies.LOAD_TIMEOUT_S,  # hashes the source again, as plan_source does
}


def _all_tasks() -> dict[str, Task]:
    found = {}
    for info in pkgutil.iter_modules(task_package.__path__):
        module = importlib.import_module(f"{task_package.__name__}.{info.name}")
        found.update({t.name: t for t in vars(module).values() if isinstance(t, Task)})
    return found


def test_only_the_tasks_that_read_external_data_retry():
    tasks = _all_tasks()
    assert READERS <= tasks.keys() and {"validate", "split", "learn", "register"} <= tasks.keys()
    assert {name for name, t in tasks.items() if t.retries} == READERS
    for name in READERS:
        assert tasks[name].retries == policies.READ_RETRIES == 3
        assert tasks[name].retry_delay_seconds == [2, 4, 8]  # exponential back-off
        assert tasks[name].retry_jitter_factor == policies.READ_RETRY_JITTER
        assert tasks[name].retry_condition_fn is policies.retry_on_io_error


def test_a_timeout_is_set_where_a_read_could_hang():
    tasks = _all_tasks()
    assert {name: t.timeout_seconds for name, t in tasks.items() if t.timeout_seconds} == TIMEOUTS


@pytest.mark.parametrize(
    "exc",
    [
        ConnectionResetError("connection reset by peer"),
        TimeoutError("read timed out"),
        OSError(errno.EIO, "Input/output error"),
        OSError(errno.ESTALE, "Stale file handle"),
    ],
    ids=repr,
)
def test_transient_io_errors_are_retried(exc):
    assert policies.transient_io_error(exc)


@pytest.mark.parametrize(
    "exc",
    [
        FileNotFoundError("s3://bucket/data.csv"),
        PermissionError("denied"),
        IsADirectoryError("a folder"),
        DataError("target column 'survived' is not in the data"),
        SpecError("missing required key 'target'"),
        ArtifactError("checksum mismatch"),  # an OSError too, but a corrupt file stays corrupt
        ValueError("bad value"),
        KeyError("column"),
        None,
    ],
    ids=repr,
)
def test_deterministic_failures_are_not_retried(exc):
    assert not policies.transient_io_error(exc)


def test_the_retry_condition_reads_the_failed_states_exception():
    from prefect.states import Failed

    assert policies.retry_on_io_error(None, None, Failed(data=ConnectionResetError("reset")))
    assert not policies.retry_on_io_error(None, None, Failed(data=DataError("bad data")))
