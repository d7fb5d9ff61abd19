"""``ladder report LOGDIR [--out FILE]``: a Markdown report with PNG plots next to it.

Writes FILE (default ``LOGDIR/report.md``; for a run's ``logs/`` folder, the run directory's) with the ladder tables under both scorings, the
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
from typing import Annotated, Any

import msgspec
import orjson
import typer

from ladder.errors import UsageError
from ladder.filters import ArmOption, CellFilter, CellOption, ModelOption, cell_filter
from ladder.score import load_records, log_summary
from runner.rundir.logs import LogReport
from scoring.analyses.corruption_replay import CORRUPTION
from scoring.analyses.registry import Analyses, analysis_sections, scored_once
from scoring.report.details import run_details
from scoring.report.markdown import figure_channels, figure_success, markdown_report
from scoring.report.paper_figures import paper_figures
from scoring.results.lines import ResultLine

__all__ = ["NO_PLOTS", "read_manifest", "report", "run_home", "write_report"]

NO_PLOTS = "the figures need matplotlib: pip install 'state-ladder[plots]'"


def read_manifest(run_dir: Path) -> dict[str, Any]:
    """The run's ``manifest.json`` builtins; {} when there is none or it cannot be read."""
    try:
        data = orjson.loads((run_dir / "manifest.json").read_bytes())
    except (OSError, orjson.JSONDecodeError):
        return {}
    return data if isinstance(data, dict) else {}


def run_home(logdir: Path) -> Path:
    """Where a report of *logdir* goes by default: the run directory, also when *logdir* is
    its ``logs/`` folder (a report and its PNGs never land among the logs, #40)."""
    if logdir.name == "logs" and (logdir.parent / "manifest.json").is_file():
        return logdir.parent
    return logdir


def write_report(logdir: Path, out: Path | None = None, keep: CellFilter | None = None) -> Path:
    """Write the report of *logdir* to *out* (default ``logdir/report.md``) and its plots next
    to it; the report's path. Every record is scored once, in this process
    (:func:`scoring.analyses.registry.scored_once`). Problems end as a
    :class:`~ladder.errors.UsageError`."""
    (lines, analyses), log_report = _scored(logdir, keep or CellFilter())
    out = out if out is not None else run_home(logdir) / "report.md"
    try:
        figures, paper = _figures(lines, analyses, out.stem)
    except ImportError:  # a plain install: the report without figures, and one line why
        figures, paper = {}, {}
        typer.echo(f"no figures in {out.name}: {NO_PLOTS}")
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        for name, (_, fig) in figures.items():
            fig.savefig(out.parent / name, dpi=120)
        text = markdown_report(
            lines,
            notes=[n.strip() for n in log_summary(log_report, width=0).splitlines()]
            + ([] if figures else [f"No figures: {NO_PLOTS}."]),
            figures=[(caption, name) for name, (caption, _) in figures.items()],
            sections=analysis_sections(analyses),
            details=run_details(read_manifest(run_home(logdir))),
        )
        out.write_text(text, encoding="utf-8")
        (out.parent / f"{out.stem}-analyses.json").write_bytes(analyses.json())
        if figures:
            data = {key: {"caption": c, "points": d} for key, (c, _, d) in paper.items()}
            (out.parent / f"{out.stem}-figures.json").write_bytes(
                msgspec.json.format(msgspec.json.encode(data))
            )
    except OSError as e:
        raise UsageError(f"cannot write the report: {e}") from None
    return out


def _figures(
    lines: list[ResultLine], analyses: Analyses, stem: str
) -> tuple[dict[str, tuple[str, Any]], dict[str, tuple[str, Any, Any]]]:
    """The report's PNGs by file name (caption, figure) and the paper figures by key
    (caption, figure, points); raises ImportError without matplotlib."""
    figures = {
        f"{stem}-success.png": ("Strict success per arm (primary scoring)",
                                figure_success(lines, "strict")),
        f"{stem}-success-decline-aware.png": ("Strict success per arm (decline-aware)",
                                              figure_success(lines, "decline_aware")),
        f"{stem}-channels.png": (
            "Errors per episode by channel, every cell (ours; the paper's Figure 5(a) is "
            "figure5a)",
            figure_channels(lines),
        ),
    }  # fmt: skip
    paper = paper_figures(lines, analyses.of(CORRUPTION))
    for key, (caption, fig, _) in paper.items():
        figures[f"{stem}-{key}.png"] = (caption, fig)
    return figures, paper


def _scored(logdir: Path, keep: CellFilter) -> tuple[tuple[list[ResultLine], Analyses], LogReport]:
    """The result lines and the analyses of *logdir*'s records (those ``keep`` keeps), from
    one scoring pass."""
    records, report = load_records(logdir)
    if keep.active:
        records = keep.records(records)
        if not records:
            raise UsageError(f"no episode under {logdir} matches --arm / --model / --cell")
    return scored_once(records), report


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
    path = write_report(logdir, out, cell_filter(arm, model, cell))
    plots = (path.parent / f"{path.stem}-figures.json").is_file()
    typer.echo(
        f"wrote {path} with its plots, {path.stem}-analyses.json and {path.stem}-figures.json"
        if plots
        else f"wrote {path} and {path.stem}-analyses.json"
    )
