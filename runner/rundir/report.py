"""The run's Markdown report and its files: ``report.md`` (never inside ``logs/``),
``<stem>-analyses.json``, ``<stem>-figures.json`` (the paper figures' points) and, on
request (``figures``: ``ladder report --figures``), the PNG plots beside it, each written
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
from runner.rundir.plots import Png, draw_pngs
from runner.rundir.records import RunDirError, load_records, log_summary, read_run
from runner.rundir.rescore import cores, scored_dir
from scoring.analyses.corruption_replay import CORRUPTION
from scoring.analyses.registry import Analyses, analysis_sections, scored_once
from scoring.analyses.truncation import CUT_ROLES, Cut, cut_replies, cut_warnings
from scoring.report.details import run_details
from scoring.report.markdown import markdown_report
from scoring.report.paper_figures import paper_points
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
    figures: bool = False,
) -> Path:
    """Write the report of *logdir* to *out* (default ``report.md`` of the run directory),
    its analyses and the paper figures' points beside it; the report's path. Every record
    is scored once (:func:`runner.rundir.rescore.scored_dir`: ``ladder score``'s worker
    processes on a large run; with a filter, in this process), ``jobs`` processes at most
    (0: every core; 1: this one); ``keep`` picks the records reported (a filter's).
    ``figures``: the PNG plots too, drawn in two processes
    (:func:`runner.rundir.plots.draw_pngs`) and linked from the report, ``say`` hearing a
    note when matplotlib is missing; without it (the default, #50: a fixed ~0.5-0.7 s of
    matplotlib) nothing imports matplotlib and the report says how to draw them. Problems
    are one :class:`~runner.rundir.records.RunDirError`."""
    jobs = cores() if jobs <= 0 else jobs
    (lines, analyses), log_report, cut = _scored(logdir, keep, jobs, figures)
    path = report_path(logdir, out)
    pngs: dict[str, Png] = {}
    if figures:
        try:
            pngs = draw_pngs(lines, analyses, jobs)
        except ImportError:  # a plain install: the report without figures, and one line why
            say(f"no figures in {path.name}: {NO_PLOTS}")
        why = [] if pngs else [f"No figures: {NO_PLOTS}."]
    else:
        why = [_not_drawn(path.stem)]
    # a paper figure's points (the report's own figures have none): the drawn ones', else
    # computed without drawing (the same points)
    points = (
        {key: (c, d) for key, (c, _, d) in pngs.items() if d is not None}
        if pngs
        else paper_points(lines, analyses.of(CORRUPTION))
    )
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        for name, (_, png, _) in pngs.items():
            write_atomic(path.parent / f"{path.stem}-{name}.png", png)
        text = markdown_report(
            lines,
            notes=[n.strip() for n in log_summary(log_report, width=0).splitlines()] + why + cut,
            figures=[
                (caption, f"{path.stem}-{name}.png") for name, (caption, _, _) in pngs.items()
            ],
            sections=analysis_sections(analyses),
            details=run_details(read_manifest(logdir.parent if logdir.name == LOGS else logdir)),
        )
        # every file through mkstemp + rename: a symlink planted in a shared run directory
        # is replaced, never written through (runner.files)
        # text from models and logs: escapes shown, never obeyed by a terminal or viewer
        write_atomic(path, visible(text).encode("utf-8"))
        write_atomic(path.parent / f"{path.stem}-analyses.json", analyses.json())
        data = {key: {"caption": c, "points": d} for key, (c, d) in points.items()}
        write_atomic(
            path.parent / f"{path.stem}-figures.json",
            msgspec.json.format(msgspec.json.encode(data)),
        )
    except OSError as e:
        raise RunDirError(f"cannot write the report: {e}") from None
    return path


def _not_drawn(stem: str) -> str:
    """The report's note when its figures were not asked for: how to draw them, and that
    figure files beside it are not this run's. No path in it: the report's bytes do not
    depend on where the run sits, and a shared report shows no local path."""
    return (
        "Figures not drawn (they are drawn on request): the same `ladder report` command "
        "with `--figures` (the same run, `--out` and `--arm` / `--model` / `--cell`) draws "
        f"them beside this report and links them here. Any `{stem}-*.png` beside this report "
        f"is from an earlier run, not this one; the paper figures' points are in "
        f"`{stem}-figures.json`."
    )


def _scored(
    logdir: Path, keep: Keep | None, jobs: int, figures: bool = False
) -> tuple[tuple[list[ResultLine], Analyses], LogReport, list[str]]:
    """The result lines and the analyses of *logdir*'s records (those ``keep`` keeps), from
    one scoring pass (``ladder score``'s worker processes on a large run without a filter:
    :func:`runner.rundir.rescore.scored_dir`, matplotlib imported meanwhile with
    ``figures``), and the report's notes on replies cut at their token budget (#49)."""
    if keep is None:
        scored, report = read_run(
            logdir, lambda report: scored_dir(logdir, report, jobs=jobs, figures=figures)
        )
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
