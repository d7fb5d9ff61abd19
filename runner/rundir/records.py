"""Reading a run directory's records for scoring, with the checks every reader needs.

:func:`load_records` is what ``ladder score``, ``report``, ``compare`` and a library caller
read a run with: the run's domain packs loaded first (the given files, then the run's own
copies), every record (the last of each (cell, seed)), and what reading found. A directory
that cannot be scored is one :class:`RunDirError` line.
"""

from __future__ import annotations

import textwrap
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TypeVar

from protocol.domains.packs import PackError
from protocol.records import EpisodeRecord
from runner.rundir.errors import RunDirError, check_logdir
from runner.rundir.logs import LogReport, NewerSchemaError, read_logs
from runner.rundir.packs import load_run_packs

__all__ = ["RunDirError", "load_records", "log_summary", "read_run"]

T = TypeVar("T")
_MAX_LISTED = 5


def read_run(
    logdir: Path, read: Callable[[LogReport], tuple[T, int]], domain_files: Sequence[Path] = ()
) -> tuple[T, LogReport]:
    """``read(report)`` -> (what it made, records read), after loading the run's packs and
    under the checks every reader needs."""
    check_logdir(logdir)
    try:
        load_run_packs(logdir, domain_files)
    except PackError as e:
        raise RunDirError("\n".join(e.problems)) from None
    report = LogReport()
    try:
        made, n = read(report)
    except NewerSchemaError as e:
        raise RunDirError(str(e)) from None
    except OSError as e:
        raise RunDirError(f"cannot read {logdir}: {e.strerror or e}") from None
    if report.files == 0:
        raise RunDirError(f"no episode logs (*.jsonl) under {logdir}")
    if not n:
        bad = len(report.corrupt) + len(report.truncated)
        raise RunDirError(
            f"no readable episode record under {logdir} ({bad} corrupt or truncated lines)"
        )
    return made, report


def load_records(
    logdir: Path, domain_files: Sequence[Path] = ()
) -> tuple[list[EpisodeRecord], LogReport]:
    """Every record under *logdir* (the last of each (cell, seed)), and what reading found."""

    def read(report: LogReport) -> tuple[list[EpisodeRecord], int]:
        records = list(read_logs(logdir, report).values())
        return records, len(records)

    return read_run(logdir, read, domain_files)


def log_summary(report: LogReport, width: int = 80) -> str:
    """What reading the logs found: records, files, bad lines (the first few listed); the
    first line wrapped to ``width`` (0: one line)."""
    head = (
        f"log lines: {report.records} records in {report.files} files; "
        f"{len(report.corrupt)} corrupt, {len(report.truncated)} truncated (dropped); "
        f"{report.duplicates} superseded by a later record of the same (cell, seed)"
    )
    out = textwrap.wrap(head, width) if width else [head]
    for kind, where in (("corrupt", report.corrupt), ("truncated", report.truncated)):
        out += [f"  {kind}: {w}" for w in where[:_MAX_LISTED]]
        if len(where) > _MAX_LISTED:
            out.append(f"  ... {len(where) - _MAX_LISTED} more {kind} lines")
    return "\n".join(out)
