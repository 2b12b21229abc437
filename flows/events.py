"""Delivering an event to the Prefect server, and finding the automations it would trigger.

Prefect's ``emit_event`` only queues the event for a background worker and returns; a short
command (``libre notify``) may exit before the worker has sent it, and a send that fails is
only logged. :func:`deliver` sends the event itself over the server's events socket, waits for
the server to acknowledge it (a ping answered after the event) and then until the event can be
read back from the server, and raises :class:`DeliveryError` when any of that fails.
"""

from __future__ import annotations

import asyncio
import logging
import time

from prefect.events import Event

__all__ = [
    "ACK_TIMEOUT_S",
    "SERVED_WITHIN_S",
    "STORED_TIMEOUT_S",
    "DeliveryError",
    "deliver",
    "idle_deployments",
    "orphaned",
    "seconds_since",
    "triggered",
]

ACK_TIMEOUT_S = 30.0
"""How long :func:`deliver` waits for the server to connect and acknowledge the event."""
STORED_TIMEOUT_S = 30.0
"""How long :func:`deliver` then waits for the event to be readable from the server (the
server stores events in batches, every few seconds)."""
RECONNECTION_ATTEMPTS = 3
_POLL_S = 0.25
_PAGE = 200  # automations read per request (the server's default limit)

SERVED_WITHIN_S = 60.0
"""A served deployment's runner asks the server for its runs every 10 s by default; one that
asked more recently than this is served by a live process."""


class DeliveryError(ConnectionError):
    """An event did not reach the Prefect server, or the server did not store it."""


def _api_url() -> str:
    from prefect.settings import get_current_settings

    return get_current_settings().api.url or "Prefect's embedded server"


async def _send(event: Event) -> None:
    from prefect.events.clients import get_events_client

    # checkpoint_every=1: every emit pings the server after the event and awaits the pong, so
    # the event has been received when emit returns; leaving the context closes the socket
    client = get_events_client(reconnection_attempts=RECONNECTION_ATTEMPTS, checkpoint_every=1)
    # the client logs a warning of its own before raising; the DeliveryError says it once
    quiet = logging.getLogger("prefect.events.clients")
    level = quiet.level
    quiet.setLevel(logging.ERROR)
    try:
        async with client:
            await client.emit(event)
    finally:
        quiet.setLevel(level)


async def _stored(event: Event, timeout: float) -> bool:
    from prefect.client.orchestration import get_client
    from prefect.events.filters import EventFilter, EventIDFilter

    wanted = EventFilter(id=EventIDFilter(id=[event.id]))
    deadline = time.monotonic() + timeout
    async with get_client() as client:
        while True:
            page = await client.read_events(wanted, limit=1)
            if page.events:
                return True
            if time.monotonic() >= deadline:
                return False
            await asyncio.sleep(_POLL_S)


async def _deliver(event: Event, ack_timeout: float, stored_timeout: float) -> None:
    where = _api_url()
    try:
        async with asyncio.timeout(ack_timeout):
            await _send(event)
    except Exception as exc:  # every failure to send means the same thing to the caller
        reason = str(exc) or type(exc).__name__
        if isinstance(exc, TimeoutError):
            reason = f"no acknowledgement within {ack_timeout:g} s"
        raise DeliveryError(
            f"event {event.event} was not delivered to {where} ({reason}): check PREFECT_API_URL "
            "and that the server is running, then notify again"
        ) from exc
    try:
        stored = await _stored(event, stored_timeout)
    except Exception as exc:
        raise DeliveryError(
            f"event {event.event} was sent to {where}, but reading it back failed ({exc}): "
            "check the server, then notify again"
        ) from exc
    if not stored:
        raise DeliveryError(
            f"event {event.event} ({event.id}) was sent to {where}, but the server had not "
            f"stored it after {stored_timeout:g} s: check the server's logs (event persister), "
            "then notify again"
        )


def deliver(
    event: Event, ack_timeout: float = ACK_TIMEOUT_S, stored_timeout: float = STORED_TIMEOUT_S
) -> Event:
    """Send ``event`` to the Prefect server and wait until the server has stored it.

    Parameters
    ----------
    event : prefect.events.Event
        The event to send.
    ack_timeout : float
        Seconds to wait for the server to connect and acknowledge the event.
    stored_timeout : float
        Seconds to wait, after the acknowledgement, for the event to be readable from the server.

    Returns
    -------
    prefect.events.Event
        ``event``, now readable from the server.

    Raises
    ------
    DeliveryError
        The server could not be reached, did not acknowledge the event, or did not store it in
        time. The message names the event and the server.
    """
    asyncio.run(_deliver(event, ack_timeout, stored_timeout))
    return event


def _fires_on(trigger, event: Event) -> bool:
    from prefect.events.schemas.automations import CompositeTrigger, EventTrigger, Posture
    from prefect.events.schemas.events import matches

    if isinstance(trigger, CompositeTrigger):
        return any(_fires_on(inner, event) for inner in trigger.triggers)
    if not isinstance(trigger, EventTrigger) or trigger.posture != Posture.Reactive:
        return False
    if trigger.expect and not any(matches(name, event.event) for name in trigger.expect):
        return False
    return trigger.match.includes([event.resource])


def triggered(event: Event) -> list:
    """The server's enabled automations that ``event`` would trigger (deployment triggers are
    automations too), in the server's order; empty when nothing on the server reacts to it.

    Parameters
    ----------
    event : prefect.events.Event
        The event, with its name and primary resource.

    Returns
    -------
    list of prefect.events.schemas.automations.Automation
    """
    from prefect.client.orchestration import get_client

    found: list = []
    offset = 0
    with get_client(sync_client=True) as client:
        while True:
            page = client.read_automations(limit=_PAGE, offset=offset)
            found += [a for a in page if a.enabled and _fires_on(a.trigger, event)]
            if len(page) < _PAGE:
                return found
            offset += _PAGE


def idle_deployments(automations: list) -> list[str]:
    """The deployments that ``automations`` (:func:`triggered`) would start a run of, where
    nothing would run it: paused ones without a work pool (a ``libre serve`` that stopped
    pauses its deployments; a worker still runs a paused pool deployment's triggered runs),
    served ones (no work pool) that no process has asked for runs in :data:`SERVED_WITHIN_S`,
    and those of a work pool that is paused or has no worker online. Each as
    ``"<name> (<why>)"``."""
    from prefect.client.orchestration import get_client
    from prefect.exceptions import ObjectNotFound

    ids = [
        action.deployment_id
        for automation in automations
        for action in automation.actions
        if getattr(action, "type", None) == "run-deployment"
        and getattr(action, "deployment_id", None) is not None
    ]
    idle: list[str] = []
    with get_client(sync_client=True) as client:
        for deployment_id in dict.fromkeys(ids):
            try:
                deployment = client.read_deployment(deployment_id)
            except ObjectNotFound:
                continue
            polled = seconds_since(deployment.last_polled)
            if deployment.paused and not deployment.work_pool_name:  # a pool's worker runs it
                idle.append(f"{deployment.name} (paused)")
            elif not deployment.work_pool_name and (polled is None or polled >= SERVED_WITHIN_S):
                when = "never" if polled is None else f"{polled / 60:.0f} min ago"
                idle.append(f"{deployment.name} (no process served it; last asked for runs {when})")
            elif deployment.work_pool_name:
                why = _pool_idle(client, deployment.work_pool_name)
                if why is not None:
                    idle.append(f"{deployment.name} ({why})")
    return idle


#: The training flow's name (``libre_flows.flows.train.train_flow``), which its deployments
#: carry; not imported from there, which would load the whole pipeline for `libre notify`.
TRAIN_FLOW = "libre-train"


def deployment_names(pipeline: str) -> tuple[str, str, str]:
    """A pipeline's deployments: nightly, on demand, on new data
    (``libre_flows.flows.deploy.build_deployments``)."""
    return f"{pipeline}-nightly", f"{pipeline}-on-demand", f"{pipeline}-on-new-data"


def paused_on_pools(pipeline: str) -> list[str]:
    """The names of ``pipeline``'s deployments that are paused on a work pool: a worker runs
    the runs their triggers start, but their schedules create none (a ``libre serve`` that
    stopped paused them after ``prefect deploy`` had moved them to the pool)."""
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import FlowFilter, FlowFilterName

    flows = FlowFilter(name=FlowFilterName(any_=[TRAIN_FLOW]))
    with get_client(sync_client=True) as client:
        found = client.read_deployments(flow_filter=flows)
    names = set(deployment_names(pipeline))  # not "pima-indians-nightly" for "pima"
    return sorted(d.name for d in found if d.paused and d.work_pool_name and d.name in names)


def _pool_idle(client, name: str) -> str | None:
    """Why work pool ``name`` runs nothing now (paused, or no worker online: the server marks
    it not ready once its workers' heartbeats stop), or None."""
    from prefect.client.schemas.objects import WorkPoolStatus
    from prefect.exceptions import ObjectNotFound

    try:
        pool = client.read_work_pool(name)
    except ObjectNotFound:
        return f"its work pool {name!r} does not exist"
    if pool.is_paused or pool.status == WorkPoolStatus.PAUSED:
        return f"its work pool {name!r} is paused"
    if pool.status == WorkPoolStatus.NOT_READY:
        return f"no worker of its work pool {name!r} is online"
    return None


def orphaned(automations: list) -> list:
    """Those of ``automations`` whose every action starts a deployment that no longer exists
    (deleted, e.g. to move from ``libre serve`` to a work pool, which leaves the trigger
    behind): the server accepts the event and the action fails, so no run starts from them.
    (A trigger made again for the new deployment has the same name: tell them by id.)"""
    from prefect.client.orchestration import get_client
    from prefect.exceptions import ObjectNotFound

    found: dict = {}
    dead = []
    with get_client(sync_client=True) as client:
        for automation in automations:
            targets = [
                action.deployment_id
                for action in automation.actions
                if getattr(action, "type", None) == "run-deployment"
                and getattr(action, "deployment_id", None) is not None
            ]
            for deployment_id in targets:
                if deployment_id not in found:
                    try:
                        client.read_deployment(deployment_id)
                        found[deployment_id] = True
                    except ObjectNotFound:
                        found[deployment_id] = False
            if (
                targets
                and len(targets) == len(automation.actions)
                and not any(found[t] for t in targets)
            ):
                dead.append(automation)
    return dead


def seconds_since(moment) -> float | None:
    """Seconds from ``moment`` (an aware datetime, or None) to now."""
    from datetime import UTC, datetime

    if moment is None:
        return None
    return max(0.0, (datetime.now(UTC) - moment).total_seconds())
