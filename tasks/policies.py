"""Retries and timeouts of the tasks that read external data.

Reading a data source (a local file, a network file system, an fsspec URL) can fail for a
moment: a dropped connection, a timeout, a server error. The tasks that read one (``load``,
and scoring's ``check_inputs`` and ``score_inputs``) retry such I/O errors with exponential
back-off (:data:`READ_RETRY_DELAYS_S`, jittered) and nothing else: a bad spec, bad data or a
missing file fails the same way every time, so those fail at once (:func:`retry_on_io_error`).
Reads that could hang have a timeout (:data:`LOAD_TIMEOUT_S`, :data:`CHECK_INPUTS_TIMEOUT_S`);
``score_inputs`` has none, since its run time grows with the input. Every other task is a
deterministic computation on the store and runs once.
"""

from __future__ import annotations

from prefect.tasks import exponential_backoff

from libre_lib.errors import LibreError

__all__ = [
    "CHECK_INPUTS_TIMEOUT_S",
    "LOAD_TIMEOUT_S",
    "READ_RETRIES",
    "READ_RETRY_DELAYS_S",
    "read_policy",
    "retry_on_io_error",
    "transient_io_error",
]

READ_RETRIES = 3
READ_RETRY_DELAYS_S = exponential_backoff(backoff_factor=2)(READ_RETRIES)  # 2, 4, 8 s
READ_RETRY_JITTER = 0.5
LOAD_TIMEOUT_S = 3600.0
"""The longest a ``load`` may take (reading and fingerprinting the source)."""
CHECK_INPUTS_TIMEOUT_S = 1800.0
"""The longest scoring's input check may take (every file's schema and a sample of each)."""

_DETERMINISTIC_OS_ERRORS = (FileNotFoundError, IsADirectoryError, NotADirectoryError)


def transient_io_error(exc: BaseException | None) -> bool:
    """Whether ``exc`` is an I/O failure that may pass on a second try.

    Parameters
    ----------
    exc : BaseException or None
        What a task raised.

    Returns
    -------
    bool
        True for an ``OSError`` (connection errors and timeouts included) other than a missing
        path, a path of the wrong kind or a denied permission; False for a ``LibreError``
        (bad spec, data or artifact: it fails the same way again) and any other exception.
    """
    if not isinstance(exc, OSError) or isinstance(exc, LibreError):
        return False
    return not isinstance(exc, (*_DETERMINISTIC_OS_ERRORS, PermissionError))


def retry_on_io_error(task, task_run, state) -> bool:
    """Prefect's ``retry_condition_fn``: retry a failed run only on a transient I/O error."""
    exc = state.data
    if not isinstance(exc, BaseException):
        try:
            exc = state.result(raise_on_failure=False)
        except Exception:  # the result cannot be read: do not guess
            return False
    return transient_io_error(exc)


def read_policy(timeout_seconds: float | None = None) -> dict:
    """The task options of a task that reads external data: retries of transient I/O errors
    with back-off, and ``timeout_seconds`` if given."""
    options = {
        "retries": READ_RETRIES,
        "retry_delay_seconds": READ_RETRY_DELAYS_S,
        "retry_jitter_factor": READ_RETRY_JITTER,
        "retry_condition_fn": retry_on_io_error,
    }
    if timeout_seconds is not None:
        options["timeout_seconds"] = timeout_seconds
    return options
