"""Progress a person can follow: the heartbeat of a long step with no line of its own."""

import logging
import time

import pytest
from sklearn.base import clone

from libre_lib import LibreClassifier, LibreSearchCV, progress
from libre_lib import estimator as estimator_module
from libre_lib import search as search_module
from libre_lib.progress import Heartbeat

SMALL_GRID = {"n_estimators": [5], "alpha": [0.5, 0.9]}


def _lines(caplog, name):
    return [r.getMessage() for r in caplog.records if r.name == name]


def test_heartbeat_speaks_only_after_a_quiet_interval(caplog):
    log = logging.getLogger("libre_lib.test_heartbeat")
    caplog.set_level(logging.INFO, logger=log.name)
    with Heartbeat(log, lambda s: f"still {s:.2f}", every=0.05):
        time.sleep(0.3)
    quiet = _lines(caplog, log.name)
    assert 2 <= len(quiet) <= 6 and all(m.startswith("still ") for m in quiet)
    caplog.clear()
    with Heartbeat(log, lambda s: "still", every=0.2) as beat:
        for _ in range(10):  # a progress line every 0.03 s: no heartbeat is needed
            time.sleep(0.03)
            beat.said()
    assert _lines(caplog, log.name) == []
    # the quiet time counts from the last progress line, not from the start
    beats = []

    def quiet(seconds):
        beats.append((seconds, time.perf_counter()))
        return "still"

    with Heartbeat(log, quiet, every=0.1) as beat:
        time.sleep(0.3)
        beat.said()
        said_at = time.perf_counter()
        time.sleep(0.5)
    after = [(s, at) for s, at in beats if at > said_at]
    assert after and all(s <= at - said_at + 0.01 for s, at in after)


def test_heartbeat_starts_no_thread_when_info_is_not_shown(caplog):
    log = logging.getLogger("libre_lib.test_heartbeat_quiet")
    caplog.set_level(logging.WARNING, logger=log.name)
    with Heartbeat(log, lambda s: "still", every=0.01) as beat:
        time.sleep(0.05)
    assert beat._thread is None
    assert _lines(caplog, log.name) == []


def _slowed(monkeypatch, owner, name: str, seconds: float) -> None:
    """``owner.name`` takes ``seconds`` more, and a heartbeat comes every 0.05 s."""
    monkeypatch.setattr(progress, "HEARTBEAT_SECONDS", 0.05)
    method = getattr(owner, name)

    def slow(self, *args, **kwargs):
        time.sleep(seconds)
        return method(self, *args, **kwargs)

    monkeypatch.setattr(owner, name, slow)


@pytest.fixture
def slow_folds(monkeypatch):
    """Inner folds that take 0.25 s more."""
    _slowed(monkeypatch, search_module.SearchPlan, "evaluate", 0.25)


def test_search_says_it_is_still_working_between_folds(haberman, slow_folds, capsys):
    X, y, info = haberman
    quiet = LibreSearchCV(SMALL_GRID, positive_class=info.positive_class, cv=2, random_state=0)
    quiet.fit(X, y)
    assert capsys.readouterr().err == ""  # not verbose: no heartbeat either
    loud = clone(quiet).set_params(verbose=1).fit(X, y)
    lines = capsys.readouterr().err.splitlines()
    still = [line for line in lines if "still working" in line]
    assert still and still[0].startswith("LibreSearchCV: still working: 0/2 tasks done, none")
    assert any(line.startswith("LibreSearchCV: still working: 1/2 tasks done") for line in still)
    assert lines[0].startswith("LibreSearchCV: 2 candidates x 2 folds")  # the order holds
    assert lines[-1].startswith("LibreSearchCV: refitted on ")
    assert loud.rules_.to_frame().equals(quiet.rules_.to_frame())  # it changes no fit


def test_auto_choice_says_it_is_still_working(haberman, monkeypatch, capsys):
    X, y, info = haberman
    _slowed(monkeypatch, estimator_module.LibreClassifier, "_validate_fold", 0.12)
    LibreClassifier(positive_class=info.positive_class, random_state=0, verbose=1).fit(X, y)
    lines = capsys.readouterr().err.splitlines()
    assert any(line.startswith("auto: still working: 0/") for line in lines)
