"""``ladder run`` and the run it executes (``run_async``, the library path; ``execute``, the
command's: lock, signals, one line and an exit code per failure)."""

from __future__ import annotations

import asyncio
import errno
import signal
import sys
from contextlib import suppress
from pathlib import Path
from typing import Annotated, TypedDict

import anyio
import typer
from rich.console import Console

from cli.errors import UsageError
from cli.flags import (
    FlagError,
    RunFlags,
    apply_flags,
    domain_list,
    embedded_server,
    grid_from_flags,
)
from protocol.packs import PackError
from protocol.records import EpisodeRecord
from runner.call_stats import DEFAULT_BREAKER_AFTER, BreakerTripped
from runner.client import CallFailed
from runner.grid import Grid, GridError, Task, load_grid
from runner.grid_schema import DEFAULT_MAX_IN_FLIGHT, EMBEDDED
from runner.helpers import Helpers
from runner.lock import RunLocked, run_lock
from runner.logs import LogReport, NewerSchemaError, read_logs
from runner.manifest import ManifestError, write_or_check_manifest
from runner.packs import keep_packs
from runner.results import RESULTS, finalize_results
from runner.scheduler import RunState, expected_seeds, pending_tasks, run_grid
from scoring.stream import StreamingScorer
from scoring.tables import plural
from serve.config import ServerConfig
from serve.options import ScriptedFlags, scripted_options

__all__ = ["RunSummary", "execute", "run", "run_async"]


class RunSummary(TypedDict):
    """What :func:`run_async` returns."""

    episodes_run: int
    already_done: int
    infrastructure: int
    out: str


def _event_loop_policy() -> None:
    try:
        import uvloop

        asyncio.set_event_loop_policy(uvloop.EventLoopPolicy())
    except ImportError:  # pragma: no cover - uvloop is a dependency off Windows
        pass


async def run_async(
    grid: Grid,
    out: Path,
    *,
    console: Console,
    live: bool = True,
    allow_change: bool = False,
    check: bool = True,
    server_config: ServerConfig | None = None,
    overrides: dict[str, object] | None = None,
    breaker_after: int = 0,
    progress_every_s: float = 10.0,
) -> RunSummary:
    """Run (or resume) ``grid`` into ``out``; returns a summary.

    ``breaker_after``: stop (raise BreakerTripped) after that many consecutive failed calls
    on one endpoint; 0 (the default here; ``ladder run`` passes its flag) never stops.
    """
    from runner.endpoints import open_endpoints, preflight
    from runner.live import live_view, preflight_line, progress_lines

    # The local checks come first (the directory's grid, then its logs), so a directory of
    # another grid is refused before any endpoint is contacted; the manifest is written only
    # after the logs were read and the preflight passed, so a refusal (a newer-schema or
    # unreadable log, an endpoint that does not answer) leaves the directory as it was, and
    # a first run that never started leaves no manifest to block the corrected grid.
    write_or_check_manifest(out, grid, allow_change=allow_change, write=False)
    report = LogReport()
    tasks, done = pending_tasks(grid, out, report)
    for bad in report.truncated:
        console.print(f"[yellow]dropped a truncated log line (a kill mid-write): {bad}")
    for bad in report.corrupt:
        console.print(f"[yellow]skipped a corrupt log line: {bad}")
    scorer = _scorer(grid, done)
    async with open_endpoints(grid, server_config=server_config) as endpoints:
        for ep in endpoints.values():
            ep.stats.breaker_after = breaker_after
        if check:
            console.print(preflight_line(endpoints))
            problems = await preflight(grid, endpoints)
            if problems:
                raise GridError("\n".join(problems))
        try:
            keep_packs(grid.run.domains, out)  # a copy of every file pack the run uses
        except PackError as e:
            raise GridError("\n".join(e.problems)) from None
        manifest = write_or_check_manifest(
            out, grid, allow_change=allow_change, overrides=overrides, scripted=server_config
        )
        if manifest.added:
            console.print(f"the grid adds {'; '.join(manifest.added)} to {out}; manifest updated")
        if manifest.changed:
            console.print(f"grid changed (--allow-grid-change): {'; '.join(manifest.changed)}")
        helpers = Helpers(grid, out, endpoints)
        state = RunState(grid=grid, out=out, endpoints=endpoints, helpers=helpers)
        state.progress.total = len(tasks)
        if manifest.resumed:
            console.print(
                f"resuming {out}: {plural(len(done), 'episode')} already done, {len(tasks)} to run"
            )
        async with anyio.create_task_group() as tg:
            # Compiles are pipelined with the episodes: the precompile walks the tasks in run
            # order beside them; an episode that reaches its compile first joins the flight,
            # and text-arm episodes never wait.
            tg.start_soon(_precompile, helpers, tasks, console)
            with live_view(state, console, enabled=live):
                async with progress_lines(state, console, every_s=0 if live else progress_every_s):
                    await run_grid(state, tasks, scorer)
    st = helpers.stats
    if st.compile_requests or st.matcher_requests:
        console.print(
            f"helpers: compiler {st.compile_calls} calls made, {st.compile_saved} saved by "
            f"the cache; matcher {st.matcher_calls} calls made, {st.matcher_saved} saved "
            f"({st.matcher_retries} correction requests, {st.matcher_malformed} of them still "
            f"malformed after it; {st.corrupt} corrupt cache entries dropped)"
        )
    final = _finalize(out)
    if final:
        console.print(f"final results: {plural(final, 'line')} appended to {out / RESULTS}")
    return {
        "episodes_run": state.progress.done,
        "already_done": len(done),
        "infrastructure": state.progress.infrastructure,
        "out": str(out),
    }


def _finalize(out: Path) -> int:
    """Append the run's final result lines (``ladder score --json`` over ``out``), earlier
    lines marked superseded; the number of final lines (0 when nothing was logged)."""
    from scoring.offline import paused_gc, rescore

    with paused_gc():
        records = read_logs(out) if (out / "logs").is_dir() else {}
        if not records:
            return 0
        lines = rescore(records.values())
    finalize_results(out, lines)
    return len(lines)


async def _precompile(helpers: Helpers, tasks: list[Task], console: Console) -> None:
    try:
        await helpers.precompile(tasks)
    except* CallFailed as failed:
        # an infrastructure error does not end the run: its episodes compile again
        n = len(failed.exceptions)
        console.print(f"[yellow]precompile stopped ({n} failed); episodes compile again")


def _scorer(grid: Grid, done: list[EpisodeRecord]) -> StreamingScorer:
    scorer = StreamingScorer(expected_seeds(grid))
    for record in done:
        scorer.add(record)  # already reported by the run that logged them
    return scorer


def _leaf(e: BaseException) -> BaseException:
    """The exception that matters inside task groups' exception groups."""
    while isinstance(e, BaseExceptionGroup):
        leaves = [_leaf(x) for x in e.exceptions]
        e = next((x for x in leaves if not isinstance(x, asyncio.CancelledError)), leaves[0])
    return e


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
) -> None:
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
        _refuse(_leaf(raised), out, console, bool(terminated))
        raise
    console.print(
        f"done: {plural(summary['episodes_run'], 'episode')} run, {summary['already_done']} "
        "already done, "
        f"{summary['infrastructure']} ended on infrastructure errors (rerun to retry them); "
        f"logs in {out}/logs, results in {out}/results.jsonl"
    )
    if summary["infrastructure"]:
        raise typer.Exit(3)


def _refuse(e: BaseException, out: Path, console: Console, terminated: bool) -> None:
    """Turn a run's failure into one line and its exit code (returns for unknown errors)."""
    if isinstance(e, (GridError, ManifestError, NewerSchemaError, RunLocked)):
        raise UsageError(str(e)) from None
    if isinstance(e, BreakerTripped):
        typer.echo(f"error: {e}", err=True)
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
        console.print(f"{what}: rerun the same command to resume; nothing finished is lost")
        raise typer.Exit(130) from None


@scripted_options
def run(
    grid_file: Annotated[
        Path | None, typer.Argument(help="A grid TOML file.", show_default=False)
    ] = None,
    out: Annotated[Path, typer.Option(help="Run directory (logs, results, manifest).")] = Path(
        "runs/latest"
    ),
    model: Annotated[
        str | None,
        typer.Option(
            help="Model (default scripted/perfect); with GRID_FILE, the grid's models to run "
            "(comma-separated).",
            show_default=False,
        ),
    ] = None,
    arms: Annotated[
        str | None, typer.Option(help="Comma-separated arms (default raw,checklist).")
    ] = None,
    steps: Annotated[
        str | None, typer.Option("--steps", "-S", help="Graph sizes, comma-separated (default 10).")
    ] = None,
    density: Annotated[
        str | None, typer.Option(help="Densities, comma-separated (default 0.15).")
    ] = None,
    seeds: Annotated[
        str | None, typer.Option(help="Seed range, e.g. 100-131 (the default).")
    ] = None,
    limit: Annotated[
        int | None, typer.Option(help="Run only the first N seeds.", show_default=False)
    ] = None,
    domain: Annotated[
        str | None,
        typer.Option(help="procurement (default), release and/or pack files, comma-separated."),
    ] = None,
    domain_file: Annotated[
        list[Path] | None,
        typer.Option(
            help="A domain pack file to run (repeatable; docs/domains.md): with --domain, "
            "added to its domains; else the run's only domains."
        ),
    ] = None,
    brief: Annotated[str | None, typer.Option(help="amended (default) and/or original.")] = None,
    base_url: Annotated[
        str | None,
        typer.Option(
            help="OpenAI-compatible base URL (default: $OPENAI_BASE_URL, else the embedded "
            "scripted endpoint); with GRID_FILE, replaces its models' endpoints' URLs."
        ),
    ] = None,
    api_key_env: Annotated[
        str | None,
        typer.Option(help="Environment variable holding the API key (default OPENAI_API_KEY)."),
    ] = None,
    concurrency: Annotated[
        int | None, typer.Option(help="Episodes in flight (default 256).", show_default=False)
    ] = None,
    max_in_flight: Annotated[
        int | None,
        typer.Option(
            help=f"Requests in flight per endpoint (default {DEFAULT_MAX_IN_FLIGHT}).",
            show_default=False,
        ),
    ] = None,
    served: Annotated[
        str | None, typer.Option(help="The served model name, if not the model's.")
    ] = None,
    regime: Annotated[str | None, typer.Option(help="no-think (default) or thinking.")] = None,
    select: Annotated[
        str | None,
        typer.Option(
            help="How the regime is selected: checkpoint (default), request "
            "(the request body's chat_template_kwargs) or vendor."
        ),
    ] = None,
    extra: Annotated[
        list[str] | None,
        typer.Option(help="KEY=JSON merged into every request body (repeatable)."),
    ] = None,
    breaker_after: Annotated[
        int,
        typer.Option(
            "--breaker-after",
            help="Stop (exit 3) after this many consecutive failed calls on one endpoint; "
            "0 never stops.",
        ),
    ] = DEFAULT_BREAKER_AFTER,
    allow_grid_change: Annotated[
        bool, typer.Option(help="Resume into a directory holding a different grid.")
    ] = False,
    no_live: Annotated[
        bool, typer.Option("--no-live", help="Plain output: a progress line every 10 s.")
    ] = False,
    *,
    scripted: ScriptedFlags,
) -> None:
    """Run a grid (or resume it: rerun the same command after a crash).

    With GRID_FILE, the grid comes from the file and every flag given overrides it;
    otherwise from the flags, against the embedded scripted endpoint unless --base-url (or
    OPENAI_BASE_URL) is given. Exit 0 done, 2 refused, 3 infrastructure errors or the
    breaker, 130 interrupted (rerun to resume).
    """
    flags = RunFlags(
        model=model,
        arms=arms,
        steps=steps,
        density=density,
        seeds=seeds,
        limit=limit,
        domain=domain_list(domain, domain_file or []),
        brief=brief,
        base_url=base_url,
        api_key_env=api_key_env,
        concurrency=concurrency,
        max_in_flight=max_in_flight,
        served=served,
        regime=regime,
        select=select,
        extra=extra or [],
    )
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
    for line in notes + _endpoint_lines(grid):
        console.print(line)
    execute(
        grid,
        out,
        allow_grid_change,
        live=not no_live and sys.stdout.isatty(),
        overrides=overrides,
        server_config=server,
        breaker_after=breaker_after,
    )


def _endpoint_lines(grid: Grid) -> list[str]:
    out = []
    for name in sorted({m.endpoint for m in grid.models}):
        urls = grid.endpoint(name).urls()
        where = "the embedded scripted endpoint" if urls == [EMBEDDED] else ", ".join(urls)
        out.append(f"endpoint {name}: {where}")
    return out
