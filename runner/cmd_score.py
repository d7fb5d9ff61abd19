"""``ladder score LOGDIR [--json]``: rescore every episode log under a directory offline.

Reads the logs (corrupt and truncated lines are counted and reported, never fatal), scores
every record with :mod:`scoring` (no model), and prints the ladder tables under both
scorings, the Table 9-style channel table and a summary of the log lines. ``--json`` prints
one JSON line per cell and per contrast instead (the summary then goes to stderr);
``--episodes`` one row (``--json``: one flat ``type: episode`` line) per episode. A log of
a newer schema, or a directory that cannot be read, ends with one line on stderr and exit
code 2.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import orjson
import typer

from protocol.records import EpisodeRecord
from runner.logs import LogReport, NewerSchemaError, read_logs
from scoring.episode_rows import EpisodeRow, episode_rows
from scoring.episode_table import episode_table
from scoring.flat import flat_row
from scoring.lines import ResultLine, line_json
from scoring.offline import paused_gc, rescore, score_records
from scoring.tables import channel_table, helper_table, ladder_table

__all__ = ["episode_results", "load_records", "load_results", "log_summary", "score"]

_MAX_LISTED = 5


def _fail(message: str) -> typer.Exit:
    typer.echo(f"error: {message}", err=True)
    return typer.Exit(2)


def load_records(logdir: Path) -> tuple[list[EpisodeRecord], LogReport]:
    """Every record under *logdir* (the last of each (cell, seed)), and what reading found.

    Raises ``typer.Exit(2)`` (after one line on stderr) when the logs cannot be scored.
    """
    if not logdir.is_dir():
        raise _fail(f"cannot read {logdir}: not a directory")
    report = LogReport()
    try:
        with paused_gc():
            records = read_logs(logdir, report)
    except NewerSchemaError as e:
        raise _fail(str(e)) from None
    except OSError as e:
        raise _fail(f"cannot read {logdir}: {e.strerror or e}") from None
    if report.files == 0:
        raise _fail(f"no episode logs (*.jsonl) under {logdir}")
    if not records:
        bad = len(report.corrupt) + len(report.truncated)
        raise _fail(f"no readable episode record under {logdir} ({bad} corrupt or truncated lines)")
    return list(records.values()), report


def load_results(logdir: Path) -> tuple[list[ResultLine], LogReport]:
    """The cell, contrast and helpers lines of every log under *logdir*, and what reading
    found (raises ``typer.Exit(2)`` as :func:`load_records` does)."""
    records, report = load_records(logdir)
    return rescore(records), report


def episode_results(logdir: Path) -> tuple[list[EpisodeRow], LogReport]:
    """One :class:`EpisodeRow` per record under *logdir* (scored with per-turn detail)."""
    records, report = load_records(logdir)
    scores = score_records(records, detail=True)
    return episode_rows(zip(records, scores, strict=True)), report


def _print_episodes(logdir: Path, json_: bool) -> None:
    rows, report = episode_results(logdir)
    if json_:
        for row in rows:
            typer.echo(orjson.dumps(flat_row("episode", row.cell, row)).decode())
        typer.echo(log_summary(report), err=True)
        return
    typer.echo(episode_table(rows))
    typer.echo("")
    typer.echo(log_summary(report))


def log_summary(report: LogReport) -> str:
    """What reading the logs found: records, files, bad lines (the first few listed)."""
    out = [
        f"log lines: {report.records} records in {report.files} files; "
        f"{len(report.corrupt)} corrupt, {len(report.truncated)} truncated (dropped); "
        f"{report.duplicates} superseded by a later record of the same (cell, seed)"
    ]
    for kind, where in (("corrupt", report.corrupt), ("truncated", report.truncated)):
        out += [f"  {kind}: {w}" for w in where[:_MAX_LISTED]]
        if len(where) > _MAX_LISTED:
            out.append(f"  ... {len(where) - _MAX_LISTED} more {kind} lines")
    return "\n".join(out)


def score(
    logdir: Annotated[Path, typer.Argument(help="A run directory (or its logs/ folder).")],
    json_: Annotated[
        bool, typer.Option("--json", help="One JSON line per cell and per contrast.")
    ] = False,
    episodes: Annotated[
        bool,
        typer.Option(
            "--episodes",
            help="One row per episode instead (with --json: flat lines of type episode).",
        ),
    ] = False,
) -> None:
    """Rescore every episode log under LOGDIR offline (no model): ladder tables under the
    primary and decline-aware scorings with Wilson CIs and Holm-adjusted exact McNemar
    p-values, and the per-channel error table; with --episodes, one row per episode
    (success under both scorings, the first failing turn and its channel, errors per
    channel, tokens, calls, wall time, termination)."""
    if episodes:
        _print_episodes(logdir, json_)
        return
    lines, report = load_results(logdir)
    if json_:
        for line in lines:
            typer.echo(orjson.dumps(line_json(line)).decode())
        typer.echo(log_summary(report), err=True)
        return
    typer.echo(ladder_table(lines, "strict"))
    typer.echo("")
    typer.echo(ladder_table(lines, "decline_aware"))
    typer.echo("")
    typer.echo(channel_table(lines))
    typer.echo("")
    helpers = helper_table(lines)
    if helpers:
        typer.echo(helpers)
        typer.echo("")
    typer.echo(log_summary(report))
