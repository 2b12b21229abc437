"""The server marks a libre flow run Crashed when its process falls silent.

A command killed with SIGKILL, or whose machine stopped, cannot report the end of its flow run,
which would stay Running forever. Flow runs send a heartbeat event
(``prefect.flow-run.heartbeat``) every ``PREFECT_FLOWS_HEARTBEAT_FREQUENCY`` seconds (libre's
processes default to 60, see ``libre_flows.flows``); :func:`ensure` keeps one automation on the
server (:data:`NAME`) that, after a heartbeat of a libre flow's run, expects another heartbeat
or an end state (Completed, Failed, Cancelled, Crashed) within :func:`silence_limit` and
otherwise sets the run Crashed with :func:`message`. A run that ended is never changed (Prefect
refuses to leave an end state), nor a run killed before its first heartbeat (none arrived).

``libre server start`` and ``libre serve`` call :func:`ensure`; a paused automation stays paused
(``prefect automation pause`` turns the detection off). The automation ends the flow run only:
the next command on the local server marks its task runs left Running Crashed
(:func:`settle_task_runs`).
"""

from __future__ import annotations

import json
from datetime import timedelta

__all__ = [
    "FLOWS",
    "HEARTBEAT",
    "NAME",
    "automation",
    "ensure",
    "heartbeat_frequency",
    "message",
    "settle_task_runs",
    "silence_limit",
]

NAME = "libre: mark silent flow runs crashed"
"""The automation's name, by which :func:`ensure` finds it."""
HEARTBEAT = "prefect.flow-run.heartbeat"
ENDS = ("Completed", "Failed", "Cancelled", "Crashed")
FLOWS = "libre-*"
"""The flows whose runs are watched (by name): other flows on a shared server are left alone."""
MINIMUM_HEARTBEAT_S = 30  # Prefect's lower bound (flow_engine.MINIMUM_HEARTBEAT_INTERVAL)


def heartbeat_frequency() -> int | None:
    """Seconds between the heartbeats of this process's flow runs (None: heartbeats off)."""
    from prefect.settings import get_current_settings

    value = get_current_settings().flows.heartbeat_frequency
    return None if value is None else max(int(value), MINIMUM_HEARTBEAT_S)


def silence_limit(frequency: float) -> timedelta:
    """How long a run may be silent after a heartbeat: 2.5 heartbeats, at least one and 30 s.

    Parameters
    ----------
    frequency : float
        Seconds between heartbeats.

    Returns
    -------
    timedelta
    """
    return timedelta(seconds=max(2.5 * frequency, frequency + 30))


def message(within: timedelta) -> str:
    """The message of the Crashed state the automation sets."""
    return (
        f"No heartbeat for {within.total_seconds():.0f} s: the process running this flow was "
        "killed or its machine stopped (libre)"
    )


def automation(within: timedelta):
    """The automation :func:`ensure` keeps on the server.

    Parameters
    ----------
    within : timedelta
        The silence after a heartbeat that marks a run Crashed (at least 10 s).

    Returns
    -------
    prefect.events.schemas.automations.AutomationCore
    """
    from prefect.client.schemas.objects import StateType
    from prefect.events.actions import ChangeFlowRunState
    from prefect.events.schemas.automations import AutomationCore, EventTrigger, Posture

    return AutomationCore(
        name=NAME,
        description=(
            "Marks a run of a libre flow Crashed when neither a heartbeat nor an end state "
            f"follows its last heartbeat within {within.total_seconds():.0f} s. Created by "
            "libre server start / libre serve; pause it to turn the detection off."
        ),
        trigger=EventTrigger(
            posture=Posture.Proactive,
            after={HEARTBEAT},
            expect={HEARTBEAT, *(f"prefect.flow-run.{end}" for end in ENDS)},
            match={"prefect.resource.id": "prefect.flow-run.*"},
            match_related={"prefect.resource.role": "flow", "prefect.resource.name": FLOWS},
            for_each={"prefect.resource.id"},
            threshold=1,
            within=within,
        ),
        actions=[ChangeFlowRunState(state=StateType.CRASHED, message=message(within))],
    )


def _settings(found) -> str:
    """What :func:`ensure` compares: the trigger and the actions, ids left out."""

    def plain(value):
        if isinstance(value, set | frozenset):
            return sorted(value)
        if isinstance(value, timedelta):
            return value.total_seconds()
        return str(value)

    trigger = found.trigger.model_dump(exclude={"id"})
    actions = [action.model_dump() for action in found.actions]
    return json.dumps([found.description, trigger, actions], sort_keys=True, default=plain)


def ensure(within: timedelta | float | None = None, api_url: str | None = None) -> str:
    """Create or update the automation on the server, once (found by :data:`NAME`).

    Parameters
    ----------
    within : timedelta or float, optional
        The silence (seconds) that marks a run Crashed; default: :func:`silence_limit` of
        :func:`heartbeat_frequency`.
    api_url : str, optional
        The server's API; default: the one Prefect's client talks to.

    Returns
    -------
    str
        ``created``, ``updated``, ``unchanged``, ``paused`` (it exists and is paused: its
        settings are updated, it stays paused) or ``off`` (heartbeats are off here: nothing
        done).
    """
    if within is None:
        frequency = heartbeat_frequency()
        if frequency is None:
            return "off"
        within = silence_limit(frequency)
    elif not isinstance(within, timedelta):
        within = timedelta(seconds=within)
    wanted = automation(within)
    if api_url is None:
        return _ensure(wanted)
    from prefect.settings import PREFECT_API_URL, temporary_settings

    with temporary_settings({PREFECT_API_URL: api_url}):
        return _ensure(wanted)


def _ensure(wanted) -> str:
    from prefect.client.orchestration import get_client

    with get_client(sync_client=True) as client:
        found = client.read_automations_by_name(NAME)
        if not found:
            client.create_automation(wanted)
            return "created"
        first, *extra = found
        for duplicate in extra:  # two starts at once: keep one
            client.delete_automation(duplicate.id)
        status = "unchanged" if first.enabled else "paused"
        if _settings(first) != _settings(wanted):
            # every field given, so that the update (which sends the fields set) sends all
            fields = wanted.model_dump(exclude={"owner_resource"})
            full = type(wanted).model_validate({**fields, "enabled": first.enabled})
            client.update_automation(first.id, full)
            status = "updated" if first.enabled else status
        return status


def settle_task_runs(api_url: str | None = None, limit: int = 50) -> int:
    """Mark Crashed the task runs left Running or Pending in the latest ``limit`` libre flow runs
    the server marked Crashed: the automation ends a killed command's flow run, not its task
    runs, which stayed Running for good. Returns how many were marked.

    Parameters
    ----------
    api_url : str, optional
        The server's API; default: the one Prefect's client talks to.
    limit : int, default 50
        How many of the latest crashed flow runs to look at.

    Returns
    -------
    int
    """
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import (
        FlowFilter,
        FlowFilterId,
        FlowFilterName,
        FlowRunFilter,
        FlowRunFilterState,
        FlowRunFilterStateType,
        TaskRunFilter,
        TaskRunFilterFlowRunId,
        TaskRunFilterState,
        TaskRunFilterStateType,
    )
    from prefect.client.schemas.objects import StateType
    from prefect.client.schemas.sorting import FlowRunSort
    from prefect.settings import PREFECT_API_URL, temporary_settings
    from prefect.states import Crashed

    settings = {PREFECT_API_URL: api_url} if api_url else {}
    with temporary_settings(settings), get_client(sync_client=True) as client:
        crashed = client.read_flow_runs(
            flow_filter=FlowFilter(name=FlowFilterName(like_=FLOWS.rstrip("*"))),
            flow_run_filter=FlowRunFilter(
                state=FlowRunFilterState(type=FlowRunFilterStateType(any_=[StateType.CRASHED]))
            ),
            sort=FlowRunSort.START_TIME_DESC,
            limit=limit,
        )
        if crashed:  # "like" matches inside names ("calibre-sync"): the automation's own rule
            flows = client.read_flows(
                flow_filter=FlowFilter(id=FlowFilterId(any_=[r.flow_id for r in crashed]))
            )
            ours = {f.id for f in flows if f.name.startswith(FLOWS.rstrip("*"))}
            crashed = [run for run in crashed if run.flow_id in ours]
        if not crashed:
            return 0
        left = client.read_task_runs(
            task_run_filter=TaskRunFilter(
                flow_run_id=TaskRunFilterFlowRunId(any_=[run.id for run in crashed]),
                state=TaskRunFilterState(
                    type=TaskRunFilterStateType(any_=[StateType.RUNNING, StateType.PENDING])
                ),
            ),
        )
        for task_run in left:
            client.set_task_run_state(
                task_run.id,
                Crashed(message="Its flow run crashed (its process was killed): marked by libre"),
                force=True,
            )
    return len(left)
