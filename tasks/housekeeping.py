"""Housekeeping task: remove what crashed runs left in the store before a run starts."""

from __future__ import annotations

from prefect import task
from prefect.cache_policies import NO_CACHE

from libre_lib.ops import cleanup

from .common import log


@task(name="clean_store", cache_policy=NO_CACHE)
def clean_store(store_root: str) -> list[str]:
    """Remove temp files, temp version folders and run folders without ``run.json`` untouched
    for longer than ``libre_lib.ops.files.STALE_AFTER_S`` (``libre_lib.ops.cleanup``); returns
    the paths removed."""
    done = cleanup.clean_store(store_root)
    if done.paths:
        log().info("removed what crashed runs left in the store: %s", done)
    return [str(path) for path in done.paths]
