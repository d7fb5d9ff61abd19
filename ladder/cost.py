"""``ladder cost DIR``: per-arm token cost, calls and latency (Table 7 shape)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import msgspec
import orjson
import typer

from ladder.errors import UsageError
from ladder.filters import ArmOption, CellOption, ModelOption, cell_filter
from runner.rundir.errors import check_logdir
from runner.rundir.logs import LogReport, NewerSchemaError, read_logs
from scoring.analyses.cost import cost_rows, helper_spend
from scoring.report.cost_table import cost_table, spend_table
from scoring.report.tables import Labels
from scoring.results.flat import flat_row

__all__ = ["cost"]


def cost(
    logdir: Annotated[Path, typer.Argument(help="A run directory (or its logs/).")],
    json_: Annotated[
        bool,
        typer.Option("--json", help="One flat JSON line per cell (type: cost)."),
    ] = False,
    spend_only: Annotated[
        bool,
        typer.Option(
            "--spend",
            help="Only the grid's helper spend (with --json: one line per helper, type "
            "helper_spend).",
        ),
    ] = False,
    wide: Annotated[
        bool,
        typer.Option(
            "--wide",
            help="One wide table per configuration, named in full (default: by number, "
            "with a legend; 80 columns).",
        ),
    ] = False,
    arm: ArmOption = None,
    model: ModelOption = None,
    cell: CellOption = None,
) -> None:
    """Per configuration and arm (Table 7 shape): prompt, completion and total agent tokens
    per episode, the total as a multiple of the raw arm, prefix-cached prompt tokens, agent
    calls and re-ask turns, the helper calls and tokens each arm needs (what it would cost
    run alone: matcher and compiler, made / served from the cache), rejected bookings per 128
    episodes; then episode wall time, agent-call server time and slot wait, and completion
    tokens per second. Last, the grid's actual helper spend with sharing (the run's
    helpers.jsonl, each request once) against what the arms needed in all."""
    check_logdir(logdir)  # the line of every reader of a run (ladder.early)
    report = LogReport()
    try:
        records = read_logs(logdir, report)
    except NewerSchemaError as e:
        raise UsageError(str(e)) from None
    except OSError as e:
        raise UsageError(f"cannot read {logdir}: {e.strerror or e}") from None
    keep = cell_filter(arm, model, cell)
    rows = cost_rows(keep.records(records.values()))
    if not rows:
        raise UsageError(f"no completed episode under {logdir}")
    # here: runner.gates.base imports the client (aiohttp), which a refusal above need not load
    from runner.gates.base import read_helper_log

    run_dir = logdir.parent if logdir.name == "logs" else logdir
    ledger, bad = read_helper_log(run_dir / "helpers.jsonl")
    spend = helper_spend(records.values(), ledger)
    if json_ and spend_only:
        for h in spend:
            data = {
                "type": "helper_spend",
                **msgspec.to_builtins(h),
                "saved_tokens": h.saved_tokens,
            }
            typer.echo(orjson.dumps(data).decode())
        return
    if json_:
        for r in rows:
            typer.echo(orjson.dumps(flat_row("cost", r.cell, r)).decode())
        return
    if not spend_only:
        labels = Labels((r.cell for r in rows), wide=wide)
        typer.echo(cost_table(rows, labels) + ("\n" if spend else ""))
    if spend:
        typer.echo(spend_table(spend, wide=wide))
    skipped = [
        f"{n} {what}"
        for n, what in (
            (len(report.corrupt), "corrupt"),
            (len(report.truncated), "truncated"),
            (bad, "unreadable helper-log"),
        )
        if n
    ]
    if skipped:
        typer.echo(f"skipped {' and '.join(skipped)} {'line' if _one(report, bad) else 'lines'}")


def _one(report: LogReport, bad: int) -> bool:
    return len(report.corrupt) + len(report.truncated) + bad == 1
