"""``ladder score LOGDIR [--json]``: rescore every episode log under a directory offline.

Reads the logs (corrupt and truncated lines are counted and reported, never fatal), scores
every record with :mod:`scoring` (no model), and prints the ladder tables under both
scorings, the Table 9-style channel table, the replies cut at their token budget per cell
and role (with a warning line past 5% of a role's replies, #49) and a summary of the log
lines. ``--json`` prints one JSON line per cell and per contrast instead (each cell's
``cut``; the warnings and the summary then go to stderr);
``--episodes`` one row (``--json``: one flat ``type: episode`` line) per episode. A log of
a newer schema, or a directory that cannot be read, ends with one line on stderr and exit
code 2.
"""

from __future__ import annotations

import textwrap
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated, TypeVar

import msgspec
import orjson
import typer

from ladder.errors import UsageError
from ladder.filters import ArmOption, CellFilter, CellOption, ModelOption, cell_filter
from ladder.limits import MAX_JOBS
from protocol.records import CellKey, EpisodeRecord
from protocol.visible import visible
from runner.rundir.logs import LogReport
from runner.rundir.records import load_records, log_summary, read_run
from runner.rundir.rescore import rescore_dir
from scoring.report.cut_table import cut_table, cut_warning_lines
from scoring.report.episode_table import episode_table
from scoring.report.gate_tables import gate_activity_table, helper_table
from scoring.report.markdown import synthetic_banner
from scoring.report.tables import Labels, channel_table, ladder_table
from scoring.results.episode_rows import EpisodeRow, episode_rows
from scoring.results.families import DEFAULT_FAMILY, FAMILIES, describe_families
from scoring.results.flat import flat_row
from scoring.results.lines import CellLine, ResultLine, line_json
from scoring.results.offline import rescore, score_records

__all__ = [
    "episode_results",
    "load_results",
    "run_records",
    "score",
]

T = TypeVar("T")


def load_results(
    logdir: Path, jobs: int = 0, family: str = DEFAULT_FAMILY, domain_files: Sequence[Path] = ()
) -> tuple[list[ResultLine], LogReport]:
    """The cell, contrast and helpers lines of every log under *logdir*, and what reading
    found; ``jobs`` processes on a large run (0: every core, 1: this one;
    :mod:`runner.rundir.rescore`), Holm within each ``family`` (:mod:`scoring.results.families`)."""
    if family not in FAMILIES:
        raise UsageError(f"unknown --family {family!r}; choose one of {', '.join(FAMILIES)}")
    return read_run(
        logdir,
        lambda report: rescore_dir(logdir, report, jobs=jobs, family=family),
        domain_files,
    )


def episode_results(
    logdir: Path, domain_files: Sequence[Path] = ()
) -> tuple[list[EpisodeRow], LogReport]:
    """One :class:`EpisodeRow` per record under *logdir* (scored with per-turn detail)."""
    records, report = load_records(logdir, domain_files)
    scores = score_records(records, detail=True)
    return episode_rows(zip(records, scores, strict=True)), report


def _print_episodes(logdir: Path, json_: bool, domain_files: Sequence[Path]) -> None:
    rows, report = episode_results(logdir, domain_files)
    if json_:
        for row in rows:
            typer.echo(orjson.dumps(flat_row("episode", row.cell, row)).decode())
        typer.echo(visible(log_summary(report)), err=True)
        return
    typer.echo(visible(episode_table(rows)))
    typer.echo("")
    typer.echo(visible(log_summary(report)))


def run_records(
    logdirs: Sequence[Path], keep: CellFilter, domain_files: Sequence[Path] = ()
) -> tuple[list[EpisodeRecord], LogReport]:
    """The records of one run or several (#40), those ``keep`` keeps; with several runs each
    record's model is prefixed with its run (``runs/a: qwen3-235b``), so the same cell of two
    runs is two rows of one table, never merged."""
    records: list[EpisodeRecord] = []
    cells: list[CellKey] = []
    total = LogReport()
    for d in logdirs:
        mine, report = load_records(d, domain_files)
        cells += (r.cell for r in mine)
        mine = keep.records(mine, str(d) if len(logdirs) > 1 else "")
        if len(logdirs) > 1:
            mine = [
                msgspec.structs.replace(
                    r, cell=msgspec.structs.replace(r.cell, model=f"{d}: {r.cell.model}")
                )
                for r in mine
            ]
        records += mine
        total.files += report.files
        total.records += report.records
        total.duplicates += report.duplicates
        total.corrupt += report.corrupt
        total.truncated += report.truncated
    if keep.active:
        keep.check(cells, records, ", ".join(map(str, logdirs)) if len(logdirs) > 1 else "")
    if not records:
        raise UsageError("no episode record in " + ", ".join(map(str, logdirs)))
    return records, total


def score(
    logdirs: Annotated[
        list[Path],
        typer.Argument(
            help="A run directory (or its logs/ folder); several: one table of them all.",
            metavar="LOGDIR...",
        ),
    ],
    json_: Annotated[
        bool, typer.Option("--json", help="One JSON line per cell and per contrast.")
    ] = False,
    jobs: Annotated[
        int,
        typer.Option(
            "--jobs", "-j", min=0, help="Processes for a large run; 0: every core.", max=MAX_JOBS
        ),
    ] = 0,
    family: Annotated[
        str,
        typer.Option(
            help="Holm family grouping: paper (each table's family as the paper forms it), "
            "model (each table within a model, both regimes), regime (model and regime) or "
            "table (every contrast of a table together); docs/scoring.md."
        ),
    ] = DEFAULT_FAMILY,
    episodes: Annotated[
        bool,
        typer.Option(
            "--episodes",
            help="One row per episode instead (with --json: flat lines of type episode).",
        ),
    ] = False,
    domain_file: Annotated[
        list[Path] | None,
        typer.Option(
            help="The domain pack a run used (repeatable), in place of the run directory's "
            "copy under domains/; refused when it is not the pack the run recorded."
        ),
    ] = None,
    wide: Annotated[
        bool,
        typer.Option(
            "--wide",
            help="Name each configuration in full in every row (default: by number, "
            "with a legend; 80 columns).",
        ),
    ] = False,
    arm: ArmOption = None,
    model: ModelOption = None,
    cell: CellOption = None,
) -> None:
    """Rescore every episode log under LOGDIR offline (no model): ladder tables under the
    primary and decline-aware scorings with Wilson CIs and Holm-adjusted exact McNemar
    p-values, and the per-channel error table; with --episodes, one row per episode
    (success under both scorings, the first failing turn and its channel, errors per
    channel, tokens, calls, wall time, termination)."""
    files = domain_file or []
    keep = cell_filter(arm, model, cell)
    if episodes:
        if len(logdirs) > 1 or keep.active:
            raise UsageError("--episodes reads one run directory, without filters")
        _print_episodes(logdirs[0], json_, files)
        return
    if len(logdirs) == 1 and not keep.active:
        lines, report = load_results(logdirs[0], jobs, family, files)
    else:
        if family not in FAMILIES:
            raise UsageError(f"unknown --family {family!r}; choose one of {', '.join(FAMILIES)}")
        records, report = run_records(logdirs, keep, files)
        lines = rescore(records, family=family)
    if json_:
        for line in lines:
            typer.echo(orjson.dumps(line_json(line)).decode())
        for text in cut_warning_lines(lines):
            typer.echo(visible(text), err=True)
        typer.echo(visible(log_summary(report)), err=True)
        return
    labels = Labels.of(lines, wide=wide)
    banner = synthetic_banner(x.cell for x in lines if isinstance(x, CellLine))
    for text in banner:
        typer.echo(visible(text))
    if legend := labels.legend():
        typer.echo(visible(legend))
        typer.echo("")
    typer.echo(visible(ladder_table(lines, "strict", labels)))
    typer.echo("")
    typer.echo(visible(ladder_table(lines, "decline_aware", labels)))
    typer.echo("")
    typer.echo(visible(channel_table(lines, labels)))
    typer.echo("")
    for text in describe_families(lines, label=labels).splitlines():
        # 80 columns: a long family name wraps under itself
        indent = " " * (len(text) - len(text.lstrip()) + 4)
        typer.echo("\n".join(textwrap.wrap(text, 80, subsequent_indent=indent)))
    typer.echo("")
    helpers = helper_table(lines, labels)
    if helpers:
        typer.echo(visible(helpers))
        typer.echo("")
    gates = gate_activity_table(lines, labels)
    if gates:
        typer.echo(visible(gates))
        typer.echo("")
    cuts = cut_table(lines, labels)
    if cuts:
        typer.echo(visible(cuts))
        typer.echo("")
    typer.echo(visible(log_summary(report)))
