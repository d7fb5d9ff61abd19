"""``ladder cost DIR``: per-arm token cost, calls and latency (Table 7 shape)."""

from __future__ import annotations

import textwrap
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Annotated

import msgspec
import orjson
import typer

from ladder.errors import UsageError
from ladder.filters import ArmOption, CellOption, ModelOption, cell_filter
from protocol.records import CellKey
from runner.rundir.errors import check_logdir
from runner.rundir.logs import LogReport, NewerSchemaError, read_logs
from scoring.analyses.cost import CostRow, HelperSpend, cost_rows, helper_spend
from scoring.analyses.truncation import Cut, cut_replies, cut_warnings, episode_counts
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
    kept = keep.chosen(records.values())
    rows = cost_rows(kept)
    counts, cuts = episode_counts(kept), cut_replies(kept)
    if not rows and not counts:
        raise UsageError(f"no completed episode under {logdir}")
    if not rows:  # every episode overflowed or failed: nothing to average, but say so (#49)
        labels = Labels(counts, wide=wide)
        typer.echo("no completed episode to average a cost over:")
        for line in _left_out(counts, labels) + cut_warnings(
            _ordered(cuts, labels), _namer(labels)
        ):
            typer.echo(fit(line))
        return
    # here: runner.gates.base imports the client (aiohttp), which a refusal above need not load
    from runner.gates.base import read_helper_log

    run_dir = logdir.parent if logdir.name == "logs" else logdir
    ledger, bad = read_helper_log(run_dir / "helpers.jsonl")
    spend = helper_spend(records.values(), ledger)
    if json_:
        _print_json(rows, counts, cuts, spend, spend_only)
        return
    if not spend_only:
        labels = Labels(counts, wide=wide)
        typer.echo(cost_table(rows, labels))
        notes = _left_out(counts, labels) + _cache_note(rows, labels)
        notes += cut_warnings(_ordered(cuts, labels), _namer(labels))
        typer.echo("\n".join(fit(x) for x in ["", *notes]) + ("\n" if spend else ""))
    if spend:
        typer.echo(spend_table(spend, wide=wide))
    _print_skipped(report, bad)


def _print_json(
    rows: Sequence[CostRow],
    counts: Mapping[CellKey, Mapping[str, int]],
    cuts: Mapping[CellKey, Cut],
    spend: Sequence[HelperSpend],
    spend_only: bool,
) -> None:
    """``--json``: one line per helper's spend with ``--spend-only``, else per cell."""
    if spend_only:
        for h in spend:
            data = {
                "type": "helper_spend",
                **msgspec.to_builtins(h),
                "saved_tokens": h.saved_tokens,
            }
            typer.echo(orjson.dumps(data).decode())
        return
    for r in rows:
        extra = {**counts.get(r.cell, {}), **_cut_columns(cuts.get(r.cell, {}))}
        typer.echo(orjson.dumps({**flat_row("cost", r.cell, r), **extra}).decode())


def _print_skipped(report: LogReport, bad: int) -> None:
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


def fit(text: str) -> str:
    """``text`` within 80 columns, its later lines indented further."""
    indent = " " * (len(text) - len(text.lstrip()) + 2)
    return "\n".join(textwrap.wrap(text, 80, subsequent_indent=indent) or [""])


def _namer(labels: Labels) -> Callable[[CellKey], str]:
    return lambda c: f"{labels(c)} {c.arm}"


def _left_out(counts: Mapping[CellKey, Mapping[str, int]], labels: Labels) -> list[str]:
    """How the cost averages (#49): over completed episodes; the cells whose episodes
    overflowed the model's context or failed, with how many."""
    out = ["Per-episode figures are means over completed episodes only."]
    for c, n in sorted(counts.items(), key=lambda x: labels.order(x[0])):
        if n["overflowed"] or n["failed"]:
            out.append(
                f"  {_namer(labels)(c)}: {n['completed']} completed; left out "
                f"{n['overflowed']} context overflows (scored as failures) and "
                f"{n['failed']} failed on infrastructure"
            )
    return out


def _cache_note(rows: Sequence[CostRow], labels: Labels) -> list[str]:
    """Server time per arm is partly the server's prefix cache, which the arms of a model
    share (#49): the cached share of each arm's prompt tokens, where the server reports it."""
    if len({r.cell.arm for r in rows}) < 2:
        return []
    shares = [
        f"{_namer(labels)(r.cell)} "
        + (
            "not reported"
            if r.cached_tokens is None
            else f"{r.cached_tokens / r.prompt_tokens:.0%}"
        )
        for r in rows
        if r.prompt_tokens
    ]
    return [
        "Server time depends on the server's prefix cache, which the arms of a model share: "
        "an arm whose prompts another arm had just evaluated is served faster. Cached share "
        f"of prompt tokens: {', '.join(shares)}."
    ]


def _cut_columns(cut: Mapping[str, tuple[int, int]]) -> dict[str, int]:
    """``cut_agent``, ``replies_agent``, ... for a cost JSON line."""
    out = {}
    for role, (n, made) in cut.items():
        out[f"cut_{role}"] = n
        out[f"replies_{role}"] = made
    return out


def _one(report: LogReport, bad: int) -> bool:
    return len(report.corrupt) + len(report.truncated) + bad == 1


def _ordered(cuts: dict[CellKey, Cut], labels: Labels) -> dict[CellKey, Cut]:
    """The cut counts in the tables' order (configuration number, then the ladder)."""
    return dict(sorted(cuts.items(), key=lambda kv: labels.order(kv[0])))
