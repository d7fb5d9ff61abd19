"""``ladder probe RUN_DIR --out PROBE_DIR`` and ``ladder probe --report PROBE_DIR``: the
trap-turn probe (Appendix A.4, Table 3; docs/probe.md)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, cast

import anyio
import msgspec
import orjson
import typer

from protocol.probe import TRAP_KINDS, VARIANTS, Variant
from protocol.records import TurnKind
from runner.client import CallFailed
from runner.logs import NewerSchemaError
from runner.probe_run import ProbeError, ProbeOptions, read_probe, run_probe
from scoring.probe import figure_probe, probe_table, render_probe_table

__all__ = ["probe"]


def _fail(message: str) -> typer.Exit:
    typer.echo(f"error: {message}", err=True)
    return typer.Exit(2)


def _names(raw: str | None, allowed: tuple[str, ...], what: str) -> tuple[str, ...] | None:
    if raw is None:
        return None
    names = tuple(n.strip() for n in raw.split(",") if n.strip())
    bad = [n for n in names if n not in allowed]
    if bad or not names:
        raise _fail(
            f"unknown {what} {', '.join(bad) or '(none)'}; choose from {', '.join(allowed)}"
        )
    return names


def _report(probe_dir: Path, json_: bool, png: Path | None) -> None:
    if not probe_dir.is_dir():
        raise _fail(f"{probe_dir} is not a directory")
    records = read_probe(probe_dir)
    if not records:
        raise _fail(f"{probe_dir}: no probe records (run `ladder probe RUN_DIR --out {probe_dir}`)")
    table = probe_table(
        [
            (
                f"{r.episode_id}#{r.turn}",
                r.variant,
                r.decoding,
                r.reexecuted,
                r.said_done_then_booked,
                r.recorded_rebooked,
            )
            for r in records
        ],
        variants=[v for v in VARIANTS if any(r.variant == v for r in records)],
        synthetic=any(r.synthetic for r in records),
    )
    if png is not None:
        try:
            fig = figure_probe(table)
        except ImportError:
            raise _fail("the PNG needs matplotlib: pip install 'state-ladder[plots]'") from None
        try:
            fig.savefig(png, dpi=120)
        except OSError as e:
            raise _fail(f"cannot write {png}: {e.strerror or e}") from None
    if json_:
        typer.echo(orjson.dumps(msgspec.to_builtins(table), option=orjson.OPT_INDENT_2).decode())
        return
    typer.echo(render_probe_table(table))


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
        int, typer.Option("--samples", min=0, help="Sampled re-asks per variant and trap.")
    ] = 8,
    no_greedy: Annotated[
        bool, typer.Option("--no-greedy", help="Skip the greedy (temperature 0) re-ask.")
    ] = False,
    temperature: Annotated[
        float, typer.Option("--temperature", min=0.0, help="Sampling temperature.")
    ] = 0.7,
    top_p: Annotated[
        float, typer.Option("--top-p", min=0.0, max=1.0, help="Sampling top_p (0: not sent).")
    ] = 0.8,
    model: Annotated[str | None, typer.Option("--model", help="Only this model's cells.")] = None,
    limit: Annotated[
        int | None, typer.Option("--limit", min=1, help="At most this many trap turns.")
    ] = None,
    concurrency: Annotated[
        int, typer.Option("--concurrency", min=1, help="Re-asks in flight.")
    ] = 32,
) -> None:
    """Re-ask the trap turns of a run's arm with one thing changed (Appendix A.4): each
    variant once greedy and --samples times sampled, scored on the spot with the receipt
    parser; resumable. With --report: the re-execution share per variant (Table 3)."""
    if report is not None:
        if run_dir is not None or out is not None:
            raise _fail("--report takes the probe directory alone")
        _report(report, json_, png)
        return
    if run_dir is None or out is None:
        raise _fail("give RUN_DIR and --out PROBE_DIR (or --report PROBE_DIR)")
    if not run_dir.is_dir():
        raise _fail(f"{run_dir} is not a directory")
    chosen = _names(variants, VARIANTS, "variant")
    trap_kinds = _names(kinds, TRAP_KINDS, "trap kind")
    opts = ProbeOptions(
        arm=arm,
        variants=cast(tuple[Variant, ...], chosen or VARIANTS),
        kinds=cast(tuple[TurnKind, ...], trap_kinds or ("redo_probe",)),
        samples=samples,
        greedy=not no_greedy,
        temperature=temperature,
        top_p=top_p or None,
        model=model,
        limit=limit,
        concurrency=concurrency,
    )
    try:
        summary = anyio.run(run_probe, run_dir, out, opts)
    except (ProbeError, NewerSchemaError, ValueError) as e:
        raise _fail(str(e)) from None
    except CallFailed as e:
        typer.echo(f"error: {e} (rerun to resume)", err=True)
        raise typer.Exit(1) from None
    for v, n in summary.by_variant.items():
        typer.echo(f"{v}: {n} re-asks, {summary.reexecuted.get(v, 0)} re-executed")
    typer.echo(
        f"{summary.traps} trap turns; {summary.asked} re-asks made, {summary.skipped} already "
        f"in {out}, {summary.not_applicable} variant(s) not applicable; "
        f"report: ladder probe --report {out}"
    )
