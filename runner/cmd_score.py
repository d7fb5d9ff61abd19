"""``ladder score LOGDIR [--json]``: rescore every episode log under a directory offline.

Reads the logs (corrupt and truncated lines are counted and reported, never fatal), scores
every record with :mod:`scoring` (no model), and prints the ladder tables under both
scorings, the Table 9-style channel table and a summary of the log lines. ``--json`` prints
one JSON line per cell and per contrast instead (the summary then goes to stderr). A log of
a newer schema, or a directory that cannot be read, ends with one line on stderr and exit
code 2.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import msgspec
import typer

from runner.logs import LogReport, NewerSchemaError
from runner.rescore import rescore_dir
from scoring.families import DEFAULT_FAMILY, FAMILIES
from scoring.tables import channel_table, helper_table, ladder_table

__all__ = ["load_results", "log_summary", "score"]

_MAX_LISTED = 5


def _fail(message: str) -> typer.Exit:
    typer.echo(f"error: {message}", err=True)
    return typer.Exit(2)


def load_results(
    logdir: Path, jobs: int = 0, family: str = DEFAULT_FAMILY
) -> tuple[list[dict[str, Any]], LogReport]:
    """The cell and contrast lines of every log under *logdir*, and what reading found;
    ``jobs`` processes on a large run (0: every core, 1: this one; :mod:`runner.rescore`),
    Holm within each ``family`` (:mod:`scoring.families`).

    Raises ``typer.Exit(2)`` (after one line on stderr) when the logs cannot be scored.
    """
    if not logdir.is_dir():
        raise _fail(f"cannot read {logdir}: not a directory")
    if family not in FAMILIES:
        raise _fail(f"unknown --family {family!r}; choose one of {', '.join(FAMILIES)}")
    report = LogReport()
    try:
        lines, records = rescore_dir(logdir, report, jobs=jobs, family=family)
    except NewerSchemaError as e:
        raise _fail(str(e)) from None
    except OSError as e:
        raise _fail(f"cannot read {logdir}: {e.strerror or e}") from None
    if report.files == 0:
        raise _fail(f"no episode logs (*.jsonl) under {logdir}")
    if not records:
        bad = len(report.corrupt) + len(report.truncated)
        raise _fail(f"no readable episode record under {logdir} ({bad} corrupt or truncated lines)")
    return lines, report


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
    jobs: Annotated[
        int, typer.Option("--jobs", "-j", min=0, help="Processes for a large run; 0: every core.")
    ] = 0,
    family: Annotated[
        str,
        typer.Option(
            help="Holm family grouping: model (the paper's: one model, both regimes), "
            "regime (model and regime) or table (every contrast of a kind together)."
        ),
    ] = DEFAULT_FAMILY,
) -> None:
    """Rescore every episode log under LOGDIR offline (no model): ladder tables under the
    primary and decline-aware scorings with Wilson CIs and Holm-adjusted exact McNemar
    p-values, and the per-channel error table."""
    lines, report = load_results(logdir, jobs, family)
    if json_:
        for line in lines:
            typer.echo(msgspec.json.encode(line).decode())
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
