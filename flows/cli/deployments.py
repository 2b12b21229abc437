"""``libre deployments``: the ``prefect.yaml`` that declares the specs' deployments.

libre deployments write deployments/specs/*.yaml -o deployments/prefect.yaml

Mounted by ``libre_flows.flows.cli`` as ``app.add_typer(deployments_app, name="deployments")``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from libre_flows.flows.cli.common import Debug, console, fail, user_errors

deployments_app = typer.Typer(
    add_completion=False,
    rich_markup_mode="markdown",
    no_args_is_help=True,
    help="Write the prefect.yaml that declares the specs' deployments for a work pool.",
)


@deployments_app.command("write")
def write(
    specs: Annotated[list[Path], typer.Argument(help="Pipeline specs (YAML).")],
    output: Annotated[
        Path, typer.Option("--output", "-o", help="The prefect.yaml to write.")
    ] = Path("prefect.yaml"),
    project: Annotated[
        Path,
        typer.Option(
            "--project",
            help="The project folder LIBRE_FLOWS_HOME will name; spec paths are relative to it.",
        ),
    ] = Path("."),
    force: Annotated[
        bool, typer.Option("--force", help="Replace a prefect.yaml this command did not write.")
    ] = False,
    debug: Debug = False,
) -> None:
    """Write SPECS' deployments as a prefect.yaml for `prefect deploy`.

    The nightly, on-demand and on-new-data deployments, the ones `libre serve` builds. A file
    this command wrote is replaced (without --force, only when it keeps the deployments of
    every spec the file held); another one (your project's own prefect.yaml) only with
    --force."""
    try:
        from libre_flows.flows.prefect_yaml import refuse_dropping, refuse_foreign, render
        from libre_lib.ops.files import atomic_write_text

        text = render(specs, project, output=str(output))
        if not force:
            refuse_foreign(output)
            refuse_dropping(output, text, specs, project)
        atomic_write_text(output, text)
    except user_errors() as exc:
        fail(exc, debug)
        return
    console.print(
        f"wrote [green]{output}[/]: {text.count('  - name: ')} deployments", soft_wrap=True
    )
