"""``ladder run``: the grid from a file or the flags, and ``execute``, the command's run:
the lock, signals, one line and an exit code per failure around :func:`runner.execution.grid_run.run_async`
(the library path)."""

from __future__ import annotations

import asyncio
import errno
import signal
import sys
from contextlib import suppress
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from ladder.errors import UsageError, leaf, shown
from ladder.flags import (
    FlagError,
    RunFlags,
    apply_flags,
    embedded_server,
    grid_from_flags,
    run_options,
)
from ladder.limits import MAX_LISTED
from runner.client.call_stats import DEFAULT_BREAKER_AFTER, BreakerTripped
from runner.execution.brief_check import BriefLost
from runner.execution.grid_run import RunSummary, run_async
from runner.execution.live import fit
from runner.execution.scheduler import ModelsStopped
from runner.grid.expand import Grid, GridError, load_grid, trial_warnings
from runner.grid.schema import EMBEDDED
from runner.rundir.lock import RunLocked, run_lock
from runner.rundir.logs import NewerSchemaError
from runner.rundir.manifest import ManifestError
from scoring.plural import plural
from scoring.report.markdown import synthetic_warning
from serve.config import ServerConfig
from serve.options import ScriptedFlags, scripted_options

__all__ = ["endpoint_lines", "execute", "run"]


def _event_loop_policy() -> None:
    try:
        import uvloop

        asyncio.set_event_loop_policy(uvloop.EventLoopPolicy())
    except ImportError:  # pragma: no cover - uvloop is a dependency off Windows
        pass


def execute(
    grid: Grid,
    out: Path,
    allow_change: bool,
    live: bool,
    check: bool = True,
    *,
    overrides: dict[str, object] | None = None,
    server_config: ServerConfig | None = None,
    breaker_after: int = 0,
) -> bool:
    """Run ``grid`` into ``out`` with the live view; whether its results changed (False: a
    finished run, nothing ran and results.jsonl already held its final lines)."""
    if out.exists() and not out.is_dir():
        raise UsageError(f"--out {out} is not a directory")
    console = Console(stderr=False, highlight=False, soft_wrap=True)
    _event_loop_policy()
    created = not out.exists()
    terminated: list[int] = []

    async def main() -> RunSummary:
        loop, task = asyncio.get_running_loop(), asyncio.current_task()

        def on_sigterm() -> None:  # like Ctrl-C: stop, keep what is logged, exit 130
            terminated.append(1)
            if task is not None:
                task.cancel()

        with suppress(NotImplementedError, RuntimeError, ValueError):  # not the main thread
            loop.add_signal_handler(signal.SIGTERM, on_sigterm)
        try:
            with run_lock(out):
                return await run_async(
                    grid,
                    out,
                    console=console,
                    live=live,
                    allow_change=allow_change,
                    check=check,
                    overrides=overrides,
                    server_config=server_config,
                    breaker_after=breaker_after,
                )
        finally:
            with suppress(NotImplementedError, RuntimeError, ValueError):
                loop.remove_signal_handler(signal.SIGTERM)

    try:
        summary = asyncio.run(main())
    except BaseException as raised:
        if created and out.is_dir() and not any(out.iterdir()):
            out.rmdir()  # a run refused before it wrote anything leaves no directory behind
        _refuse(leaf(raised), out, console, bool(terminated))
        raise
    console.print(
        fit(
            f"done: {plural(summary['episodes_run'], 'episode')} run, "
            f"{summary['already_done']} already done, "
            f"{summary['infrastructure']} ended on infrastructure errors (rerun to retry "
            "them); "
            + (
                f"{summary['model_failures']} outgrew the model's context (counted as failures); "
                if summary["model_failures"]
                else ""
            )
            + f"logs in {out}/logs, results in {out}/results.jsonl"
        )
    )
    if summary["infrastructure"]:
        raise typer.Exit(3)
    return summary["results_changed"]


def _refuse(e: BaseException, out: Path, console: Console, terminated: bool) -> None:
    """Turn a run's failure into one line and its exit code (returns for unknown errors)."""
    if isinstance(e, (GridError, ManifestError, NewerSchemaError, RunLocked)):
        raise UsageError(str(e)) from None
    if isinstance(e, BreakerTripped | BriefLost | ModelsStopped):
        from runner.execution.connect import problem_lines

        for line in problem_lines(shown(str(e))):  # within 80 columns with its prefix (#49)
            typer.echo(f"error: {line}", err=True)
        raise typer.Exit(3) from None
    if isinstance(e, OSError) and e.errno == errno.ENOSPC:
        raise UsageError(
            f"disk full writing {e.filename or out}: stopped; every episode logged is intact, "
            "free some space and rerun the same command to resume"
        ) from None
    if isinstance(e, OSError):  # an unreadable log or run directory: one line
        raise UsageError(f"{e.filename or out}: {e.strerror or e}") from None
    if isinstance(e, KeyboardInterrupt) or (isinstance(e, asyncio.CancelledError) and terminated):
        what = "terminated (SIGTERM)" if terminated else "interrupted"
        console.print(fit(f"{what}: rerun the same command to resume; nothing finished is lost"))
        raise typer.Exit(130) from None


@scripted_options
@run_options(after="out")
def run(
    grid_file: Annotated[
        Path | None, typer.Argument(help="A grid TOML file.", show_default=False)
    ] = None,
    out: Annotated[Path, typer.Option(help="Run directory (logs, results, manifest).")] = Path(
        "runs/latest"
    ),
    breaker_after: Annotated[
        int,
        typer.Option(
            "--breaker-after",
            help="Stop (exit 3) after this many consecutive failed calls on one endpoint; "
            "0 never stops.",
            max=MAX_LISTED,
        ),
    ] = DEFAULT_BREAKER_AFTER,
    allow_grid_change: Annotated[
        bool,
        typer.Option(
            "--allow-grid-change", help="Resume into a directory holding a different grid."
        ),
    ] = False,
    no_live: Annotated[
        bool, typer.Option("--no-live", help="Plain output: a progress line every 10 s.")
    ] = False,
    *,
    flags: RunFlags,
    scripted: ScriptedFlags,
) -> None:
    """Run a grid (or resume it: rerun the same command after a crash).

    With GRID_FILE, the grid comes from the file and every flag given overrides it;
    otherwise from the flags, against the embedded scripted endpoint unless --base-url (or
    OPENAI_BASE_URL) is given. Exit 0 done, 2 refused, 3 infrastructure errors or a
    model stopped (its preflight, its breaker, its brief lost: the others ran to the end), 130
    interrupted (rerun to resume).
    """
    console = Console(stderr=False, highlight=False, soft_wrap=True)
    try:
        if grid_file:
            grid, overrides = apply_flags(load_grid(grid_file), flags, source=str(grid_file))
            notes = []
            if overrides:
                shown = ", ".join(f"{k} {v}" for k, v in overrides.items())
                notes.append(f"overriding {grid_file}: {shown}")
        else:
            grid, notes = grid_from_flags(flags)
            overrides = flags.given()
        server = embedded_server(grid, scripted)
    except (GridError, FlagError) as e:
        raise UsageError(str(e)) from None
    if breaker_after < 0:
        raise UsageError(f"--breaker-after must be at least 0 (got {breaker_after})")
    # SYNTHETIC and SCRIPTED each a paragraph, without the report's Markdown (#49)
    banner = [x.removeprefix("> ").replace("`", "") for x in synthetic_warning(grid.cells())]
    warnings = [x for x in banner if x] + trial_warnings(grid)
    for line in notes + endpoint_lines(grid) + warnings:
        console.print(fit(line))  # within 80 columns (#40)
    execute(
        grid,
        out,
        allow_grid_change,
        live=not no_live and sys.stdout.isatty(),
        overrides=overrides,
        server_config=server,
        breaker_after=breaker_after,
    )


def endpoint_lines(grid: Grid) -> list[str]:
    """``endpoint NAME: URL`` per endpoint a model of ``grid`` uses (run and demo print them)."""
    out = []
    for name in sorted({m.endpoint for m in grid.models}):
        urls = grid.endpoint(name).urls()
        where = "the embedded scripted endpoint" if urls == [EMBEDDED] else ", ".join(urls)
        out.append(f"endpoint {name}: {where}")
    return out
