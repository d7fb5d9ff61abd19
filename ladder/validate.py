"""``ladder validate``: a grid file checked, then one tiny request to each endpoint and model."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Annotated

import typer

from ladder.errors import UsageError
from runner.grid.expand import GridError, load_grid, missing_keys
from scoring.report.tables import plural

__all__ = ["validate"]


def validate(
    grid_file: Annotated[Path, typer.Argument(help="A grid TOML file.")],
    offline: Annotated[bool, typer.Option(help="Check the file only; send no request.")] = False,
) -> None:
    """Check a grid file, then send one tiny request to each endpoint and model."""
    try:
        grid = load_grid(grid_file, need_keys=not offline)
    except GridError as e:
        raise UsageError(str(e)) from None
    for missing in missing_keys(grid) if offline else []:  # nothing is sent: a warning
        typer.echo(f"warning: {grid_file}: {missing}", err=True)
    n_cells = len(grid.cells())
    n_episodes = n_cells * len(grid.seeds())
    typer.echo(f"{grid_file}: {plural(n_cells, 'cell')}, {plural(n_episodes, 'episode')}")
    if offline:
        return
    from runner.client.connect import open_endpoints, preflight
    from runner.execution.live import preflight_line

    async def check() -> list[str]:
        async with open_endpoints(grid) as endpoints:
            typer.echo(preflight_line(endpoints))
            return await preflight(grid, endpoints)

    problems = asyncio.run(check())
    for p in problems:
        typer.echo(f"error: {p}", err=True)
    if problems:
        raise typer.Exit(2)
    typer.echo("every endpoint and model answered")
