"""Progress a person can follow: with ``verbose``, a module's logger also writes its INFO lines
on standard error for the duration of a long call (``fit``), unless logging is set up to show
them already. The library itself never prints."""

from __future__ import annotations

import contextlib
import logging
import sys


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
