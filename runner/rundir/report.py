"""The run's Markdown report and its files: ``report.md`` (never inside ``logs/``), the
PNG plots beside it, ``<stem>-analyses.json`` and ``<stem>-figures.json``, each written
atomically (a link planted in a shared run directory is replaced, never written through).
``ladder report`` is its command; a library caller calls :func:`write_report`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import msgspec

from protocol.config import config_label
from protocol.records import CellKey, EpisodeRecord
from protocol.visible import visible
from runner.files import write_atomic
from runner.rundir.logs import LOGS, LogReport
from runner.rundir.manifest import read_manifest
from runner.rundir.plots import draw_pngs
from runner.rundir.records import RunDirError, load_records, log_summary, read_run
from runner.rundir.rescore import cores, scored_dir
from scoring.analyses.registry import Analyses, analysis_sections, scored_once
from scoring.analyses.truncation import CUT_ROLES, Cut, cut_replies, cut_warnings
from scoring.report.details import run_details
from scoring.report.markdown import markdown_report
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
    jobs: int = 0,
) -> Path:
    """Write the report of *logdir* to *out* (default ``report.md`` of the run directory)
    and its plots next to it; the report's path. Every record is scored once
    (:func:`runner.rundir.rescore.scored_dir`: ``ladder score``'s worker processes on a
    large run; with a filter, in this process) and the plots drawn in two processes
    (:func:`runner.rundir.plots.draw_pngs`), ``jobs`` processes at most (0: every core;
    1: this one); ``keep`` picks the records reported (a filter's), ``say`` hears a note
    (no figures without matplotlib). Problems are one
    :class:`~runner.rundir.records.RunDirError`."""
    jobs = cores() if jobs <= 0 else jobs
    (lines, analyses), log_report, cut = _scored(logdir, keep, jobs)
    out = report_path(logdir, out)
    try:
        pngs = draw_pngs(lines, analyses, jobs)
    except ImportError:  # a plain install: the report without figures, and one line why
        pngs = {}
        say(f"no figures in {out.name}: {NO_PLOTS}")
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        for name, (_, png, _) in pngs.items():
            write_atomic(out.parent / f"{out.stem}-{name}.png", png)
        text = markdown_report(
            lines,
            notes=[n.strip() for n in log_summary(log_report, width=0).splitlines()]
            + ([] if pngs else [f"No figures: {NO_PLOTS}."])
            + cut,
            figures=[(caption, f"{out.stem}-{name}.png") for name, (caption, _, _) in pngs.items()],
            sections=analysis_sections(analyses),
            details=run_details(read_manifest(logdir.parent if logdir.name == LOGS else logdir)),
        )
        # every file through mkstemp + rename: a symlink planted in a shared run directory
        # is replaced, never written through (runner.files)
        # text from models and logs: escapes shown, never obeyed by a terminal or viewer
        write_atomic(out, visible(text).encode("utf-8"))
        write_atomic(out.parent / f"{out.stem}-analyses.json", analyses.json())
        if pngs:
            data = {
                key: {"caption": c, "points": d}
                for key, (c, _, d) in pngs.items()
                if d is not None  # a paper figure's points (the report's own have none)
            }
            write_atomic(
                out.parent / f"{out.stem}-figures.json",
                msgspec.json.format(msgspec.json.encode(data)),
            )
    except OSError as e:
        raise RunDirError(f"cannot write the report: {e}") from None
    return out


def _scored(
    logdir: Path, keep: Keep | None, jobs: int
) -> tuple[tuple[list[ResultLine], Analyses], LogReport, list[str]]:
    """The result lines and the analyses of *logdir*'s records (those ``keep`` keeps), from
    one scoring pass (``ladder score``'s worker processes on a large run without a filter:
    :func:`runner.rundir.rescore.scored_dir`), and the report's notes on replies cut at
    their token budget (#49)."""
    if keep is None:
        scored, report = read_run(logdir, lambda report: scored_dir(logdir, report, jobs=jobs))
        return (scored.lines, scored.analyses), report, cut_notes(scored.cuts)
    records, report = load_records(logdir)
    records = keep(records)
    if not records:
        raise RunDirError(f"no episode under {logdir} matches --arm / --model / --cell")
    return scored_once(records), report, cut_notes(cut_replies(records))


def cut_notes(cuts: Mapping[CellKey, Cut]) -> list[str]:
    """Replies that ended at their token budget (``finish_reason: length``,
    :func:`scoring.analyses.truncation.cut_replies`): how many of each role's, then a
    warning per cell and role past the threshold, in ladder order; nothing when none."""
    cuts = dict(sorted(cuts.items(), key=lambda kv: ladder_sort_key(kv[0])))
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
