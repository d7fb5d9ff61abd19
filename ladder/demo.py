"""``ladder demo``: the demo grid on the embedded scripted endpoint, then its report."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from ladder.errors import UsageError
from ladder.flags import FlagError, embedded_server
from ladder.run import endpoint_lines, execute
from runner.client.call_stats import DEFAULT_BREAKER_AFTER
from runner.grid.expand import load_grid
from serve.options import ScriptedFlags, scripted_options

__all__ = ["DEMO_GRID", "demo"]

DEMO_GRID = Path(__file__).parent.parent / "runner" / "grids" / "demo.toml"


@scripted_options
def demo(
    out: Annotated[Path, typer.Option(help="Run directory.")] = Path("runs/demo"),
    no_live: Annotated[bool, typer.Option("--no-live", help="Plain output.")] = False,
    *,
    scripted: ScriptedFlags,
) -> None:
    """The main job on the embedded scripted endpoint: a small grid of every arm with the
    synthetic agent, the ladder printed live, and a report written to OUT/report.md."""
    grid = load_grid(DEMO_GRID)
    try:
        server = embedded_server(grid, scripted)
    except FlagError as e:
        raise UsageError(str(e)) from None
    for line in endpoint_lines(grid):  # like `run`: where the requests go (#49)
        typer.echo(line)
    # like `run`: a directory of another grid is refused, never mixed into one report
    changed = execute(
        grid,
        out,
        allow_change=False,
        live=not no_live and sys.stdout.isatty(),
        server_config=server,
        breaker_after=DEFAULT_BREAKER_AFTER,
    )
    try:
        from runner.rundir.report import write_report
    except ImportError:  # pragma: no cover
        return
    path = out / "report.md"
    if not changed and path.is_file():  # a finished demo rerun: nothing to rewrite (#49)
        typer.echo(f"report: {path} (unchanged)")
        return
    # the main job shows its figures (a missing plots extra is one line)
    path = write_report(out, say=typer.echo, figures=True)
    typer.echo(f"report: {path}")
