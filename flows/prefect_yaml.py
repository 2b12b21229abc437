"""``prefect.yaml`` written from pipeline specs: the deployments ``prefect deploy`` registers
for a work pool are the ones :func:`~.deploy.build_deployments` builds for ``libre serve``.

``libre deployments write deployments/specs/*.yaml -o deployments/prefect.yaml`` writes the
repository's file; a test checks that the committed file is what this module writes, so it
cannot drift from the specs.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import yaml

from libre_lib.errors import SpecError
from libre_lib.ops.spec import load_spec

from .deploy import build_deployments, one_spec_per_pipeline
from .steps import HOME_VARIABLE, check_project, enter_project

WORK_POOL = "libre-process"

HEADER = """\
# Production deployments of the libre-flows training pipeline. Written by
#   libre deployments write {specs} -o {output}
# from the pipeline specs: edit the specs and write it again, not this file.
#
#   prefect work-pool create {pool} --type process
#   {home}=$PWD prefect --no-prompt deploy --prefect-file {output} --all
#   prefect worker start --pool {pool}
#
# The entrypoint is a module path: workers import the flow from the installed libre-flows
# package, so neither a checkout nor any particular working directory is needed to load it.
# Spec paths are relative to {home}, the project directory the pull step makes the
# working directory; the build step fails `prefect deploy` when {home} is not set
# (flows/steps.py). For every pipeline spec there is a nightly run (the spec's `schedule`), an
# on-demand deployment, and one triggered by the "libre.dataset.updated" event that
# `libre notify SPEC` emits. `libre serve` builds the same deployments (flows/deploy.py) and
# refuses to replace these ones once deployed.
"""


def declarations(spec_paths: Iterable[str | Path], project: str | Path = ".") -> list[dict]:
    """The ``deployments:`` entries of ``prefect.yaml`` for these specs, sorted by pipeline.

    Parameters
    ----------
    spec_paths : iterable of str or Path
        Pipeline specs; two specs may not name the same pipeline.
    project : str or Path, default "."
        The project directory ``LIBRE_FLOWS_HOME`` names; spec paths are written relative to it.

    Returns
    -------
    list of dict
        One entry per deployment: name, entrypoint, tags, parameters, schedules, triggers and
        work pool, as ``prefect deploy`` reads them.
    """
    spec_paths = list(spec_paths)
    one_spec_per_pipeline(spec_paths)
    by_pipeline = {
        load_spec(path).name: build_deployments(path, relative_to=project) for path in spec_paths
    }
    return [_entry(d) for name in sorted(by_pipeline) for d in by_pipeline[name]]


def _entry(deployment) -> dict:
    entry = {
        "name": deployment.name,
        "entrypoint": deployment.entrypoint,
        "tags": list(deployment.tags),
        "parameters": dict(deployment.parameters),
    }
    if deployment.schedules:
        entry["schedules"] = [
            {"cron": s.schedule.cron, "timezone": s.schedule.timezone, "active": s.active}
            for s in deployment.schedules
        ]
    if deployment.triggers:
        entry["triggers"] = [
            {
                "type": "event",
                "enabled": t.enabled,
                "expect": sorted(t.expect),
                "match": t.match.model_dump(),
                "parameters": dict(t.parameters),
            }
            for t in deployment.triggers
        ]
    entry["work_pool"] = {"name": WORK_POOL, "job_variables": {}}
    return entry


#: The first line of every file :func:`render` writes.
FIRST_LINE = HEADER.splitlines()[0]


def refuse_foreign(output: str | Path) -> None:
    """:class:`~libre_lib.errors.SpecError` if ``output`` is a file that :func:`render` did
    not write (a project's own ``prefect.yaml``, whose deployments writing would delete)."""
    path = Path(output)
    if path.is_dir():
        raise SpecError(f"{str(path)!r} is a folder: name the prefect.yaml file to write (-o).")
    if not path.exists():
        return
    try:
        first = path.read_text(encoding="utf-8").split("\n", 1)[0]
    except (OSError, UnicodeDecodeError):
        first = ""
    if first != FIRST_LINE:
        raise SpecError(
            f"{str(path)!r} exists and was not written by libre deployments write (a project's "
            "own prefect.yaml?): writing would replace its deployments. Write to another file "
            "(-o deployments/prefect.yaml), or pass --force to replace it."
        )


def refuse_dropping(
    output: str | Path, text: str, specs: Iterable[str | Path] = (), project: str | Path = "."
) -> None:
    """:class:`~libre_lib.errors.SpecError` if writing ``text`` over ``output`` (a file
    :func:`render` wrote) would drop deployments of specs not given this time (``specs``,
    relative to the working folder; the file's spec paths are relative to ``project``):
    writing one new pipeline's spec deleted every other pipeline's deployments from the
    file. A spec given whose pipeline was renamed drops its old deployments: said so."""
    path = Path(output)
    if not path.is_file():
        return
    try:
        old = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except (OSError, UnicodeDecodeError, yaml.YAMLError):
        return  # not one of ours to read: refuse_foreign decides
    new = {d["name"] for d in (yaml.safe_load(text) or {}).get("deployments") or []}
    dropped = [
        d for d in old.get("deployments") or [] if isinstance(d, dict) and d.get("name") not in new
    ]
    if not dropped:
        return
    paths = [(d.get("parameters") or {}).get("spec_path") for d in dropped]
    given = {Path(p).resolve() for p in specs}
    names = ", ".join(str(d.get("name")) for d in dropped)
    if paths and all(p and (Path(project) / p).resolve() in given for p in paths):
        raise SpecError(
            f"{str(path)!r} holds deployments of the specs given under other pipeline names "
            f"({names}): the specs' name changed. Writing drops those; pass --force to write "
            "it (and delete the old deployments from the server: prefect deployment delete)."
        )
    specs = list(dict.fromkeys(str(p) if p else "an unknown spec" for p in paths))
    raise SpecError(
        f"{str(path)!r} holds deployments of other specs, which writing it would drop: {names} "
        f"(from {', '.join(specs)}). Pass those specs too (e.g. `libre deployments write "
        "specs/*.yaml`), or --force to drop them."
    )


def render(spec_paths: Iterable[str | Path], project: str | Path = ".", output: str = "") -> str:
    """The text of ``prefect.yaml`` for these specs (see :func:`declarations`).

    Parameters
    ----------
    spec_paths : iterable of str or Path
        Pipeline specs.
    project : str or Path, default "."
        The project directory ``LIBRE_FLOWS_HOME`` names.
    output : str, default ""
        Where the file goes, as the header's commands should name it (``prefect.yaml`` if empty).

    Returns
    -------
    str
        The file's text: header, pull step and one block per deployment.
    """
    spec_paths = list(spec_paths)
    entries = declarations(spec_paths, project)
    specs = sorted({str(Path(e["parameters"]["spec_path"]).parent) for e in entries})
    header = HEADER.format(
        specs=" ".join(f"{folder}/*.yaml" for folder in specs),
        output=output or "prefect.yaml",
        pool=WORK_POOL,
        home=HOME_VARIABLE,
    )
    home = f'      directory: "{{{{ ${HOME_VARIABLE} }}}}"'
    lines = [header, "name: libre-flows", ""]
    lines += ["build:", f"  - {check_project.__module__}.{check_project.__name__}:", home, ""]
    lines += ["pull:", f"  - {enter_project.__module__}.{enter_project.__name__}:", home, ""]
    lines += ["deployments:"]
    for entry in entries:
        lines += _block(entry, "  - ", "    ")
        lines.append("")
    return "\n".join(lines).rstrip("\n") + "\n"


def _block(mapping: dict, first: str, indent: str) -> list[str]:
    """``mapping`` in block style, a list of mappings as a nested block list, every other value
    in flow style (``{spec_path: ..., force: false}``)."""
    lines = []
    for key, value in mapping.items():
        prefix = first if not lines else indent
        if isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
            lines.append(f"{prefix}{key}:")
            for item in value:
                if len(item) > 3:
                    lines += _block(item, indent + "  - ", indent + "    ")
                else:
                    lines.append(f"{indent}  - {_flow(item)}")
        else:
            lines.append(f"{prefix}{key}: {_flow(value)}")
    return lines


def _flow(value) -> str:
    text = yaml.safe_dump(value, default_flow_style=True, sort_keys=False, width=10_000)
    return text.removesuffix("\n...\n").strip()
