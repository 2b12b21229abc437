"""Progress a person can follow: with ``verbose``, a module's logger also writes its INFO lines
on standard error for the duration of a long call (``fit``), unless logging is set up to show
them already. The library itself never prints."""

from __future__ import annotations

import contextlib
import logging
import sys
import threading
import time
from collections.abc import Callable

#: Seconds without a progress line after which a long step says it is still working.
HEARTBEAT_SECONDS = 30.0


@contextlib.contextmanager
def progress_on_stderr(logger: logging.Logger, verbose: int):
    """During the block, ``logger``'s INFO lines also go to standard error when ``verbose`` is
    at least 1 (a handler added for the block only; the logger's level is restored after)."""
    if not verbose or (logger.isEnabledFor(logging.INFO) and logging.getLogger().handlers):
        yield  # quiet, or logging already shows these lines
        return
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(message)s"))
    level = logger.level
    logger.addHandler(handler)
    logger.setLevel(min(level or logging.INFO, logging.INFO))
    try:
        yield
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)


class Heartbeat:
    """While a long step runs, log ``message(quiet seconds)`` whenever ``every`` seconds pass
    without a progress line (:meth:`said` marks one; the quiet seconds count from the last, or
    from the start), so that a step whose lines come only when a part of it ends (an inner
    fold) is not silent meanwhile. It logs from a daemon thread and only when ``logger``
    shows INFO lines; it changes nothing else."""

    def __init__(self, logger: logging.Logger, message: Callable[[float], str], every=None):
        self.logger, self.message = logger, message
        self.every = HEARTBEAT_SECONDS if every is None else float(every)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._last = self._quiet_since = time.perf_counter()

    def said(self) -> None:
        """A progress line was just given: the next heartbeat waits ``every`` from now."""
        self._last = self._quiet_since = time.perf_counter()

    def _beat(self) -> None:
        while not self._stop.wait(max(0.0, self._last + self.every - time.perf_counter())):
            now = time.perf_counter()
            if now - self._last >= self.every:
                self.logger.info(self.message(now - self._quiet_since))
                self._last = now

    def __enter__(self) -> Heartbeat:
        self._last = self._quiet_since = time.perf_counter()
        if self.logger.isEnabledFor(logging.INFO):
            self._thread = threading.Thread(target=self._beat, name="libre-heartbeat", daemon=True)
            self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
