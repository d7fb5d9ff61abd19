"""``ladder cost DIR``: per-arm token cost, calls and latency (Table 7 shape)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import orjson
import typer

from runner.logs import LogReport, NewerSchemaError, read_logs
from scoring.cost import cost_rows
from scoring.cost_table import cost_table
from scoring.flat import flat_row

__all__ = ["cost"]


def cost(
    logdir: Annotated[Path, typer.Argument(help="A run directory (or its logs/).")],
    json_: Annotated[
        bool, typer.Option("--json", help="One flat JSON line per cell (type: cost).")
    ] = False,
) -> None:
    """Per configuration and arm (Table 7 shape): prompt, completion and total agent tokens
    per episode, the total as a multiple of the raw arm, prefix-cached prompt tokens, agent
    calls and re-ask turns, the helper calls each arm requires (matcher and compiler; made /
    served from the cache), helper tokens, rejected bookings per 128 episodes; then episode
    wall time, agent-call server time and slot wait, and completion tokens per second."""
    if not logdir.is_dir():
        typer.echo(f"error: {logdir} is not a directory", err=True)
        raise typer.Exit(2)
    report = LogReport()
    try:
        records = read_logs(logdir, report)
    except NewerSchemaError as e:
        typer.echo(f"error: {e}", err=True)
        raise typer.Exit(2) from None
    except OSError as e:
        typer.echo(f"error: cannot read {logdir}: {e.strerror or e}", err=True)
        raise typer.Exit(2) from None
    rows = cost_rows(records.values())
    if json_:
        for r in rows:
            typer.echo(orjson.dumps(flat_row("cost", r.cell, r)).decode())
        return
    typer.echo(cost_table(rows) if rows else f"no completed episode under {logdir}")
    if report.corrupt or report.truncated:
        typer.echo(
            f"skipped {len(report.corrupt)} corrupt and {len(report.truncated)} truncated lines"
        )
