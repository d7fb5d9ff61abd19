"""``ladder report LOGDIR [--out FILE] [--figures]``: a Markdown report, its PNG plots
next to it on request.

Writes FILE (default ``report.md`` of the run directory, never inside ``logs/``) with the
ladder tables under both scorings, the contrasts, the channel table and the log summary; a
section per log analysis (:data:`scoring.analyses.registry.ANALYSES`, each also under its
name in ``<stem>-analyses.json``); and the points of each of the paper's figures whose cells
are present (:data:`scoring.report.paper_figures.FIGURES`) in ``<stem>-figures.json``.
With ``--figures`` (#50: not by default, a fixed ~0.5-0.7 s of matplotlib) it also draws,
in the same folder, ``<stem>-success.png`` (strict success per arm with Wilson intervals,
Figure 1 shape), ``<stem>-success-decline-aware.png`` and ``<stem>-channels.png`` (ours:
errors per episode by channel for every cell, variants included) and each paper figure
(``<stem>-<name>.png``), linked from FILE. Every record is scored once, for all of it.
"""

from __future__ import annotations

from importlib.util import find_spec
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
    figures: Annotated[
        bool,
        typer.Option(
            "--figures",
            help="Also draw the figures as PNGs beside the report and link them from it: "
            "ours (success per arm under both scorings, errors by channel) and each of the "
            "paper's figures whose cells are present. Costs a fixed ~0.5-0.7 s (matplotlib "
            "imported and the figures drawn, whatever the run's size); needs the plots "
            "extra (pip install 'state-ladder[plots]'). Without it the report says how to "
            "draw them, and any PNG beside it is an earlier run's.",
        ),
    ] = False,
) -> None:
    """Write a Markdown report of LOGDIR's results (PNG plots with --figures)."""
    keep = cell_filter(arm, model, cell)
    path = write_report(
        logdir, out, keep.chosen if keep.active else None, say=typer.echo, figures=figures
    )
    files = f"{path.stem}-analyses.json and {path.stem}-figures.json"
    if not figures:
        typer.echo(f"wrote {path}, {files} (no plots: --figures draws them)")
    elif find_spec("matplotlib") is None:  # said why above
        typer.echo(f"wrote {path}, {files}")
    else:
        typer.echo(f"wrote {path} with its plots, {files}")
