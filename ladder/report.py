"""``ladder report LOGDIR [--out FILE]``: a Markdown report with PNG plots next to it.

Writes FILE (default ``report.md`` of the run directory, never inside ``logs/``) with the ladder tables under both scorings, the
contrasts, the channel table and the log summary, plus ``<stem>-success.png`` (strict success
per arm with Wilson intervals, Figure 1 shape), ``<stem>-success-decline-aware.png`` and
``<stem>-channels.png`` (ours: errors per episode by channel for every cell, variants
included) in the same folder; a section per log analysis (:data:`scoring.analyses.registry.ANALYSES`,
each also under its name in ``<stem>-analyses.json``); and each of the paper's figures whose
cells are present (:data:`scoring.report.paper_figures.FIGURES`, ``<stem>-<name>.png``) with its
points in ``<stem>-figures.json``. Every record is scored once, for all of it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ladder.filters import ArmOption, CellOption, ModelOption, cell_filter
from runner.rundir.report import write_report

__all__ = ["report"]


def report(
    logdir: Annotated[Path, typer.Argument(help="A run directory (or its logs/ folder).")],
    out: Annotated[
        Path | None, typer.Option("--out", help="Report file (default LOGDIR/report.md).")
    ] = None,
    arm: ArmOption = None,
    model: ModelOption = None,
    cell: CellOption = None,
) -> None:
    """Write a Markdown report of LOGDIR's results with PNG plots next to it."""
    keep = cell_filter(arm, model, cell)
    path = write_report(logdir, out, keep.chosen if keep.active else None, say=typer.echo)
    plots = (path.parent / f"{path.stem}-figures.json").is_file()
    typer.echo(
        f"wrote {path} with its plots, {path.stem}-analyses.json and {path.stem}-figures.json"
        if plots
        else f"wrote {path} and {path.stem}-analyses.json"
    )
