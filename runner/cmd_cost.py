"""``ladder cost DIR``: per-arm token cost, calls and latency (Table 7 shape)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import msgspec
import orjson
import typer
from rich.console import Console
from rich.table import Table

from protocol.records import Knobs
from runner.logs import LogReport, NewerSchemaError, read_logs
from scoring.cost import cost_rows

__all__ = ["cost"]


def cost(
    logdir: Annotated[Path, typer.Argument(help="A run directory (or its logs/).")],
    json_: Annotated[bool, typer.Option("--json", help="One JSON line per cell.")] = False,
) -> None:
    """Per-arm prompt, completion and total agent tokens per episode, the total as a multiple
    of the raw transcript, agent and helper calls per episode, latency per turn and episode."""
    if not logdir.is_dir():
        typer.echo(f"error: {logdir} is not a directory", err=True)
        raise typer.Exit(2)
    report = LogReport()
    try:
        records = read_logs(logdir, report)
    except NewerSchemaError as e:
        typer.echo(f"error: {e}", err=True)
        raise typer.Exit(2) from None
    rows = cost_rows(records.values())
    if json_:
        for r in rows:
            out = dict(r, cell=msgspec.to_builtins(r["cell"]))
            typer.echo(orjson.dumps(out).decode())
        return
    table = Table(title=f"cost per episode ({logdir})")
    for col in (
        "model",
        "S",
        "rho",
        "arm",
        "n",
        "prompt",
        "completion",
        "total",
        "x raw",
        "agent calls",
        "helper calls",
        "turn s (mean/med/p95)",
        "episode s (med)",
    ):
        table.add_column(col, justify="right")
    for r in rows:
        c = r["cell"]
        tl, el = r["turn_latency_s"], r["episode_latency_s"]
        table.add_row(
            c.model,
            str(c.steps),
            f"{c.density:g}",
            _arm_label(c.arm, c.knobs),
            str(r["n"]),
            f"{r['prompt_tokens'] / 1000:.1f}k",
            f"{r['completion_tokens'] / 1000:.2f}k",
            f"{r['total_tokens'] / 1000:.1f}k",
            f"{r['x_raw']:.2f}" if r["x_raw"] is not None else "-",
            f"{r['agent_calls']:.1f}",
            f"{r['helper_calls']:.1f}",
            f"{tl['mean']:.3f}/{tl['median']:.3f}/{tl['p95']:.3f}",
            f"{el['median']:.2f}",
        )
    # A pipe or a file gets the whole table, not one squeezed to 80 columns.
    Console(width=None if sys.stdout.isatty() else 220).print(table)
    if report.corrupt or report.truncated:
        typer.echo(
            f"skipped {len(report.corrupt)} corrupt and {len(report.truncated)} truncated lines"
        )


def _arm_label(arm: str, knobs: Knobs) -> str:
    """The arm with its non-default knobs (a variant cell is its own row)."""
    default = msgspec.structs.asdict(Knobs())
    return " ".join(
        [arm, *(f"{k}={v}" for k, v in msgspec.structs.asdict(knobs).items() if v != default[k])]
    )
