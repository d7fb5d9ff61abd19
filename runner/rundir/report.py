"""The run's Markdown report and its files: ``report.md`` (never inside ``logs/``), the
PNG plots beside it, ``<stem>-analyses.json`` and ``<stem>-figures.json``, each written
atomically (a link planted in a shared run directory is replaced, never written through).
``ladder report`` is its command; a library caller calls :func:`write_report`.
"""

from __future__ import annotations

import io
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import msgspec

from protocol.config import config_label
from protocol.records import CellKey, EpisodeRecord
from protocol.visible import visible
from runner.files import write_atomic
from runner.rundir.logs import LOGS, LogReport
from runner.rundir.manifest import read_manifest
from runner.rundir.records import RunDirError, load_records, log_summary
from scoring.analyses.corruption_replay import CORRUPTION
from scoring.analyses.registry import Analyses, analysis_sections, scored_once
from scoring.analyses.truncation import CUT_ROLES, cut_replies, cut_warnings
from scoring.report.details import run_details
from scoring.report.markdown import figure_channels, figure_success, markdown_report
from scoring.report.paper_figures import paper_figures
from scoring.results.cells import ladder_sort_key
from scoring.results.lines import ResultLine

__all__ = ["NO_PLOTS", "Keep", "report_path", "write_report"]

Keep = Callable[[Sequence[EpisodeRecord]], list[EpisodeRecord]]  # the records to report

NO_PLOTS = "the figures need matplotlib: pip install 'state-ladder[plots]'"


def report_path(logdir: Path, out: Path | None) -> Path:
    """Where the report goes: ``out``, or ``report.md`` of the run directory (the parent of
    a ``logs/`` directory given); never inside ``logs/`` (its files are read as logs)."""
    if out is None:
        run_dir = logdir.parent if logdir.name == LOGS else logdir
        return run_dir / "report.md"
    if out.resolve().parent.name == LOGS:
        raise RunDirError(f"--out {out}: the report is not written into a logs/ directory")
    return out


def write_report(
    logdir: Path,
    out: Path | None = None,
    keep: Keep | None = None,
    say: Callable[[str], None] = lambda _: None,
) -> Path:
    """Write the report of *logdir* to *out* (default ``report.md`` of the run directory)
    and its plots next to it; the report's path. Every record is scored once, in this
    process (:func:`scoring.analyses.registry.scored_once`); ``keep`` picks the records
    reported (a filter's), ``say`` hears a note (no figures without matplotlib). Problems
    are one :class:`~runner.rundir.records.RunDirError`."""
    (lines, analyses), log_report, cut = _scored(logdir, keep)
    out = report_path(logdir, out)
    try:
        figures, paper = _figures(lines, analyses, out.stem)
    except ImportError:  # a plain install: the report without figures, and one line why
        figures, paper = {}, {}
        say(f"no figures in {out.name}: {NO_PLOTS}")
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        for name, (_, fig) in figures.items():
            png = io.BytesIO()
            fig.savefig(png, dpi=120, format="png")
            write_atomic(out.parent / name, png.getvalue())
        text = markdown_report(
            lines,
            notes=[n.strip() for n in log_summary(log_report, width=0).splitlines()]
            + ([] if figures else [f"No figures: {NO_PLOTS}."])
            + cut,
            figures=[(caption, name) for name, (caption, _) in figures.items()],
            sections=analysis_sections(analyses),
            details=run_details(read_manifest(logdir.parent if logdir.name == LOGS else logdir)),
        )
        # every file through mkstemp + rename: a symlink planted in a shared run directory
        # is replaced, never written through (runner.files)
        # text from models and logs: escapes shown, never obeyed by a terminal or viewer
        write_atomic(out, visible(text).encode("utf-8"))
        write_atomic(out.parent / f"{out.stem}-analyses.json", analyses.json())
        if figures:
            data = {key: {"caption": c, "points": d} for key, (c, _, d) in paper.items()}
            write_atomic(
                out.parent / f"{out.stem}-figures.json",
                msgspec.json.format(msgspec.json.encode(data)),
            )
    except OSError as e:
        raise RunDirError(f"cannot write the report: {e}") from None
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


def _scored(
    logdir: Path, keep: Keep | None
) -> tuple[tuple[list[ResultLine], Analyses], LogReport, list[str]]:
    """The result lines and the analyses of *logdir*'s records (those ``keep`` keeps), from
    one scoring pass, and the report's notes on replies cut at their token budget (#49)."""
    records, report = load_records(logdir)
    if keep is not None:
        records = keep(records)
        if not records:
            raise RunDirError(f"no episode under {logdir} matches --arm / --model / --cell")
    return scored_once(records), report, cut_notes(records)


def cut_notes(records: list[EpisodeRecord]) -> list[str]:
    """Replies that ended at their token budget (``finish_reason: length``): how many of
    each role's, then a warning per cell and role past the threshold; nothing when none."""
    cuts = dict(sorted(cut_replies(records).items(), key=lambda kv: ladder_sort_key(kv[0])))
    totals = {role: [0, 0] for role in CUT_ROLES}
    for roles in cuts.values():
        for role, (n, made) in roles.items():
            totals[role][0] += n
            totals[role][1] += made
    if not any(n for n, _ in totals.values()):
        return []
    shown = ", ".join(f"{role} {n}/{made}" for role, (n, made) in totals.items() if made)
    head = f"Replies cut at their token budget (finish_reason length): {shown}."
    warned = [w.removeprefix("warning: ") for w in cut_warnings(cuts, _named)]
    return [head, *(f"Warning: {w}" for w in warned)]  # a model's name keeps its case


def _named(cell: CellKey) -> str:
    return f"{config_label(cell)} {cell.arm}"
