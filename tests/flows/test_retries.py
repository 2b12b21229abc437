"""A read that fails for a moment is retried; bad data fails at once, and the failed run's
message is the library's one-line error, not a traceback."""

import pytest
from prefect import flow

from libre_flows.flows.validate import validate_flow
from libre_flows.tasks import data
from libre_lib.errors import DataError
from libre_lib.ops.spec import load_spec


@pytest.fixture
def flaky_source(monkeypatch):
    """``fingerprint_source`` raising the given errors, one per call, before it reads."""
    calls = []

    def install(*errors):
        real = data.fingerprint_source

        def fingerprint(location, file_format=None):
            calls.append(location)
            if len(calls) <= len(errors):
                raise errors[len(calls) - 1]
            return real(location, file_format)

        monkeypatch.setattr(data, "fingerprint_source", fingerprint)
        return calls

    return install


def _load_once(spec_path, store):
    quick = data.load.with_options(retry_delay_seconds=0, retry_jitter_factor=None)

    @flow(name="load-once")
    def load_flow():
        return quick(load_spec(spec_path), str(store))

    return load_flow(return_state=True)


def test_a_dropped_connection_is_retried(spec_copy, tmp_path, flaky_source):
    calls = flaky_source(ConnectionResetError("connection reset by peer"), TimeoutError("slow"))
    state = _load_once(spec_copy(), tmp_path / "store")
    assert state.is_completed(), state.message
    assert len(calls) == 4  # two failed tries; the third hashes before and after reading


def test_bad_data_fails_at_once_with_one_line(spec_copy, tmp_path, flaky_source):
    calls = flaky_source(DataError("target column 'survived' is not in the data"))
    state = _load_once(spec_copy(), tmp_path / "store")
    assert state.is_failed() and len(calls) == 1


def test_a_failed_runs_message_is_the_library_error(spec_copy):
    state = validate_flow(str(spec_copy(target__column="survived")), return_state=True)
    assert state.is_failed()
    assert state.message.startswith("Flow run encountered an exception: DataError: ")
    assert "target column 'survived' is not in the data" in state.message
    assert "\n" not in state.message and "Traceback" not in state.message
