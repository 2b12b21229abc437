"""The deployment steps ``prefect.yaml`` runs: ``check_project`` when ``prefect deploy`` builds
the deployments, ``enter_project`` when a worker pulls a run.

Both take ``directory: "{{ $LIBRE_FLOWS_HOME }}"``. Prefect leaves an unset variable's
placeholder in the stored pull step and replaces it with an empty string when a step runs, so
without these checks ``prefect deploy`` succeeded and every run then failed to change into the
folder ''. Now the deploy fails, and a run of a deployment made before fails first, with a line
naming LIBRE_FLOWS_HOME.
"""

from __future__ import annotations

import os
from pathlib import Path

from libre_lib.errors import LibreError

HOME_VARIABLE = "LIBRE_FLOWS_HOME"


class ProjectFolderError(LibreError):
    """``LIBRE_FLOWS_HOME`` is unset or names no folder."""


def project_folder(directory: str | None) -> Path:
    """The project folder ``directory`` (the value of ``LIBRE_FLOWS_HOME``) names.

    Parameters
    ----------
    directory : str or None
        The step's ``directory`` input, after Prefect filled in the variable.

    Returns
    -------
    Path
        The folder, absolute.

    Raises
    ------
    ProjectFolderError
        If the variable was unset (empty or still a placeholder) or names no folder here.
    """
    value = (directory or "").strip()
    if not value or "{{" in value:
        raise ProjectFolderError(
            f"{HOME_VARIABLE} is not set: set it to the project folder holding the specs "
            f"(e.g. {HOME_VARIABLE}=$PWD prefect deploy ... in that folder), then deploy again."
        )
    path = Path(value).expanduser()
    if not path.is_dir():
        raise ProjectFolderError(
            f"{HOME_VARIABLE} is {value!r}, which is not a folder on this machine: set it to "
            "the project folder holding the specs (as the worker sees it) and deploy again."
        )
    return path.resolve()


def check_project(directory: str | None) -> dict:
    """Build step: fail ``prefect deploy`` unless ``LIBRE_FLOWS_HOME`` names a folder.

    Parameters
    ----------
    directory : str or None
        ``"{{ $LIBRE_FLOWS_HOME }}"`` as Prefect filled it in.

    Returns
    -------
    dict
        ``{"directory": <the folder>}``, the step's output.
    """
    return {"directory": str(project_folder(directory))}


def enter_project(directory: str | None) -> dict:
    """Pull step: make the project folder the run's working directory (spec paths are
    relative to it); fails first with one clear line if it is unset or missing.

    Parameters
    ----------
    directory : str or None
        The folder stored at deploy time, or the placeholder filled in from the worker's
        environment.

    Returns
    -------
    dict
        ``{"directory": <the folder>}``, the step's output.
    """
    try:
        folder = project_folder(directory)
        os.chdir(folder)
    except (ProjectFolderError, OSError) as exc:  # an unset, missing or closed folder
        _fail_the_run(f"{type(exc).__name__}: {exc}")
        raise
    return {"directory": str(folder)}


def _fail_the_run(message: str) -> None:
    """End the flow run this pull step prepares Failed with ``message``, and log it there: the
    step's error otherwise reached only the worker's output, and the run read "Crashed:
    Process exited with status code: 1" (the worker's later Crashed is then refused). Quiet
    when there is no such run or the server does not answer: the error is raised anyway."""
    import contextlib
    import logging
    import uuid
    from datetime import UTC, datetime

    run_id = os.environ.get("PREFECT__FLOW_RUN_ID")
    if not run_id:
        return
    with contextlib.suppress(Exception):
        from prefect.client.orchestration import get_client
        from prefect.client.schemas.actions import LogCreate
        from prefect.states import Failed

        flow_run_id = uuid.UUID(run_id)
        with get_client(sync_client=True) as client:
            log = LogCreate(
                name="libre_flows.steps",
                level=logging.ERROR,
                message=message,
                timestamp=datetime.now(UTC),
                flow_run_id=flow_run_id,
            )
            client.create_logs([log])
            client.set_flow_run_state(flow_run_id, Failed(message=message), force=True)
