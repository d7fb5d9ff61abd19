"""``ladder probe RUN_DIR --out PROBE_DIR`` and ``ladder probe --report PROBE_DIR``: the
trap-turn probe (Appendix A.4, Table 3; docs/probe.md)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, cast

import anyio
import msgspec
import orjson
import typer
from rich.console import Console
from rich.progress import Progress

from ladder.domain import load_packs_of
from ladder.errors import UsageError, leaf, shown
from ladder.limits import MAX_IN_FLIGHT, MAX_LISTED, MAX_SAMPLES, MAX_TEMPERATURE, MAX_TOP_K
from protocol.probe.turns import TRAP_KINDS, VARIANTS, ProbeRecord, Variant
from protocol.records import TurnKind
from runner.client.endpoint import CallFailed
from runner.execution.live import progress_columns
from runner.grid.expand import Grid, GridError, load_grid
from runner.probe.options import ProbeError, ProbeOptions, ProbeSummary
from runner.probe.probe_dir import read_probe
from runner.probe.reask import run_probe
from runner.rundir.logs import NewerSchemaError
from scoring.analyses.probe import figure_probe, probe_groups, render_probe_groups

__all__ = ["probe"]


def _names(raw: str | None, allowed: tuple[str, ...], what: str) -> tuple[str, ...] | None:
    if raw is None:
        return None
    names = tuple(n.strip() for n in raw.split(",") if n.strip())
    bad = [n for n in names if n not in allowed]
    if bad or not names:
        raise UsageError(
            f"unknown {what} {', '.join(bad) or '(none)'}; choose from {', '.join(allowed)}"
        )
    return names


def _report(probe_dir: Path, json_: bool, png: Path | None) -> None:
    if not probe_dir.is_dir():
        raise UsageError(f"{probe_dir} is not a directory")
    records = read_probe(probe_dir)
    if not records:
        raise UsageError(
            f"{probe_dir}: no probe records (run `ladder probe RUN_DIR --out {probe_dir}`)"
        )
    groups = probe_groups(records)
    if png is not None:
        try:
            fig = figure_probe(groups)
        except ImportError:
            raise UsageError(
                "the PNG needs matplotlib: pip install 'state-ladder[plots]'"
            ) from None
        try:
            fig.savefig(png, dpi=120)
        except OSError as e:
            raise UsageError(f"cannot write {png}: {e.strerror or e}") from None
    if json_:
        data = {"groups": msgspec.to_builtins(groups)}
        typer.echo(orjson.dumps(data, option=orjson.OPT_INDENT_2).decode())
        return
    typer.echo(render_probe_groups(groups))


def probe(
    run_dir: Annotated[
        Path | None, typer.Argument(help="A finished run directory (with manifest.json).")
    ] = None,
    out: Annotated[
        Path | None, typer.Option("--out", help="The probe directory (probe.jsonl).")
    ] = None,
    report: Annotated[
        Path | None, typer.Option("--report", help="Print Table 3's shape for this probe dir.")
    ] = None,
    json_: Annotated[bool, typer.Option("--json", help="With --report: JSON.")] = False,
    png: Annotated[
        Path | None, typer.Option("--png", help="With --report: also write this PNG figure.")
    ] = None,
    arm: Annotated[str, typer.Option("--arm", help="The arm whose trap turns to re-ask.")] = "raw",
    variants: Annotated[
        str | None,
        typer.Option("--variants", help=f"Comma-separated, default all: {', '.join(VARIANTS)}."),
    ] = None,
    kinds: Annotated[
        str | None,
        typer.Option(
            "--kinds",
            help=f"Trap kinds, comma-separated (default redo_probe): {', '.join(TRAP_KINDS)}.",
        ),
    ] = None,
    samples: Annotated[
        int,
        typer.Option(
            "--samples", min=0, help="Sampled re-asks per variant and trap.", max=MAX_SAMPLES
        ),
    ] = 8,
    no_greedy: Annotated[
        bool, typer.Option("--no-greedy", help="Skip the greedy (temperature 0) re-ask.")
    ] = False,
    temperature: Annotated[
        float | None,
        typer.Option(
            "--temperature",
            min=0.0,
            help="Sampling temperature (default: the model card's).",
            max=MAX_TEMPERATURE,
        ),
    ] = None,
    top_p: Annotated[
        float | None,
        typer.Option(
            "--top-p",
            min=0.0,
            max=1.0,
            help="Sampling top_p (default: the model card's; 0: not sent).",
        ),
    ] = None,
    top_k: Annotated[
        int | None,
        typer.Option(
            "--top-k",
            min=0,
            help="Sampling top_k (default: the model card's; 0: not sent).",
            max=MAX_TOP_K,
        ),
    ] = None,
    model: Annotated[str | None, typer.Option("--model", help="Only this model's cells.")] = None,
    limit: Annotated[
        int | None,
        typer.Option(
            "--limit",
            min=1,
            help="At most this many trap turns per model (log order).",
            max=MAX_LISTED,
        ),
    ] = None,
    concurrency: Annotated[
        int, typer.Option("--concurrency", min=1, help="Re-asks in flight.", max=MAX_IN_FLIGHT)
    ] = 32,
    grid_file: Annotated[
        Path | None,
        typer.Option(
            "--grid",
            help="Take the endpoints (URLs and key variables) from this grid file, not from "
            "the run's manifest.",
        ),
    ] = None,
    api_key_env: Annotated[
        str | None,
        typer.Option(
            "--api-key-env",
            help="The environment variable holding the API key (a manifest's is never used).",
        ),
    ] = None,
    no_live: Annotated[
        bool,
        typer.Option("--no-live", help="Plain output: a progress line every tenth of the re-asks."),
    ] = False,
) -> None:
    """Re-ask the trap turns of a run's arm with one thing changed (Appendix A.4): each
    variant once greedy and --samples times sampled at the model card's settings, scored on
    the spot with the receipt parser; resumable. Tool-harness episodes are probed too (the
    "with tools" rows). With --report: the re-execution share per variant (Table 3), one
    table per model, arm and harness. The run's manifest is a file another invocation wrote:
    its endpoints are printed before they are contacted and are sent no key unless --grid or
    --api-key-env names one (docs/security.md)."""
    if report is not None:
        if run_dir is not None or out is not None:
            raise UsageError("--report takes the probe directory alone")
        _report(report, json_, png)
        return
    if run_dir is None or out is None:
        raise UsageError("give RUN_DIR and --out PROBE_DIR (or --report PROBE_DIR)")
    if not run_dir.is_dir():
        raise UsageError(f"{run_dir} is not a directory")
    load_packs_of(run_dir)  # the file domain packs the run's episodes regenerate with
    try:
        named = load_grid(grid_file) if grid_file is not None else None
    except GridError as e:
        raise UsageError(str(e)) from None
    opts = ProbeOptions(
        arm=arm,
        variants=cast(tuple[Variant, ...], _names(variants, VARIANTS, "variant") or VARIANTS),
        kinds=cast(tuple[TurnKind, ...], _names(kinds, TRAP_KINDS, "trap kind") or ("redo_probe",)),
        samples=samples,
        greedy=not no_greedy,
        temperature=temperature,
        top_p=top_p,
        top_k=top_k,
        model=model,
        limit=limit,
        concurrency=concurrency,
    )
    summary = _run(run_dir, out, opts, named, api_key_env, no_live)
    for v, n in summary.by_variant.items():
        typer.echo(f"{v}: {n} re-asks, {summary.reexecuted.get(v, 0)} re-executed")
    typer.echo(
        f"{summary.traps} trap turns; {summary.asked} re-asks made, {summary.skipped} already "
        f"in {out}, {summary.not_applicable} variant(s) not applicable; "
        f"report: ladder probe --report {out}"
    )


class _ProbeConsole:
    """The probe's console: the sampling and plan lines, then a bar (or, plain, a line every
    tenth of the re-asks) tallying re-executions."""

    def __init__(self, console: Console, bar: Progress, live: bool, out: Path) -> None:
        self.console, self.bar, self.live, self.out = console, bar, live, out
        self.task = bar.add_task("probe", total=None, tally="")
        self.made = [0, 0]  # re-asks, re-executions

    def on_plan(self, summary: ProbeSummary, todo: int) -> None:
        for name, sm in summary.sampling.items():
            extra = "".join(
                f", {k} {getattr(sm, k)}"
                for k in ("top_p", "top_k", "min_p")
                if getattr(sm, k) is not None
            )
            self.console.print(
                f"{name}: sampled at temperature {sm.temperature}{extra} ({sm.source})"
            )
        self.console.print(
            f"{summary.traps} trap turns, {summary.planned} re-asks planned, "
            f"{summary.skipped} already in {self.out}"
        )
        self.bar.update(self.task, total=todo)

    def on_record(self, line: ProbeRecord) -> None:
        made = self.made
        made[0] += 1
        made[1] += line.reexecuted
        self.bar.update(self.task, advance=1, tally=f"re-executed {made[1]}/{made[0]}")
        total = self.bar.tasks[0].total or 0
        if not self.live and total and made[0] * 10 // total > (made[0] - 1) * 10 // total:
            self.console.print(f"re-asks {made[0]}/{total:g}, re-executed {made[1]}")

    def print_line(self, line: str) -> None:
        self.console.print(line, markup=False, highlight=False)


def _run(
    run_dir: Path,
    out: Path,
    opts: ProbeOptions,
    named: Grid | None,
    api_key_env: str | None,
    no_live: bool,
) -> ProbeSummary:
    """Run the probe with its console; a failure becomes one line and an exit code."""
    console = Console(stderr=True, soft_wrap=True, highlight=False)
    live = console.is_terminal and not no_live

    async def go() -> ProbeSummary:
        columns = progress_columns("re-asks", "tally")
        with Progress(*columns, console=console, disable=not live) as bar:
            shown = _ProbeConsole(console, bar, live, out)
            return await run_probe(
                run_dir,
                out,
                opts,
                on_record=shown.on_record,
                on_plan=shown.on_plan,
                endpoints_grid=named,
                api_key_env=api_key_env,
                on_endpoint=shown.print_line,
                on_line=shown.print_line,
            )

    try:
        return anyio.run(go)
    except BaseException as raised:  # a task group's exception group: its leaf, one line
        why = leaf(raised)
        if isinstance(why, (ProbeError, NewerSchemaError, GridError, ValueError)):
            raise UsageError(str(why)) from None
        if isinstance(why, CallFailed):
            typer.echo(f"error: {shown(str(why))} (rerun to resume)", err=True)
            raise typer.Exit(1) from None
        if isinstance(why, KeyboardInterrupt):
            typer.echo("interrupted: rerun the same command to resume", err=True)
            raise typer.Exit(130) from None
        raise
