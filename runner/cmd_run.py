"""``ladder run``, ``ladder validate`` and ``ladder demo``."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Annotated, Any

import anyio
import typer
from rich.console import Console

from protocol.records import EpisodeRecord
from runner.client import CallFailed
from runner.grid import EMBEDDED, Grid, GridError, Task, load_grid, parse_grid
from runner.helpers import Helpers
from runner.logs import LogReport, NewerSchemaError
from runner.manifest import ManifestError, write_or_check_manifest
from runner.scheduler import RunState, expected_seeds, pending_tasks, run_grid
from scoring.stream import StreamingScorer

__all__ = ["demo", "run", "run_async", "validate"]

DEMO_GRID = Path(__file__).parent / "grids" / "demo.toml"


def _fail(message: str) -> typer.Exit:
    typer.echo(f"error: {message}", err=True)
    return typer.Exit(2)


def _event_loop_policy() -> None:
    try:
        import uvloop

        asyncio.set_event_loop_policy(uvloop.EventLoopPolicy())
    except ImportError:  # pragma: no cover - uvloop is a dependency off Windows
        pass


def grid_from_flags(
    model: str,
    arms: str,
    steps: str,
    density: str,
    seeds: str,
    domain: str,
    brief: str,
    base_url: str | None,
    api_key_env: str | None,
    concurrency: int,
    max_in_flight: int,
) -> Grid:
    endpoint: dict[str, Any] = {
        "name": "cli",
        "base_url": base_url or EMBEDDED,
        "max_in_flight": max_in_flight,
    }
    if api_key_env:
        endpoint["api_key_env"] = api_key_env
    data: dict[str, Any] = {
        "run": {
            "seeds": seeds,
            "steps": [int(s) for s in steps.split(",")],
            "density": [float(d) for d in density.split(",")],
            "domains": domain.split(","),
            "briefs": brief.split(","),
            "arms": [a.strip() for a in arms.split(",") if a.strip()],
            "concurrency": concurrency,
        },
        "endpoints": [endpoint],
        "models": [{"name": model, "endpoint": "cli"}],
    }
    return parse_grid(data, source="command line")


async def run_async(
    grid: Grid,
    out: Path,
    *,
    console: Console,
    live: bool = True,
    allow_change: bool = False,
    check: bool = True,
    server_config: Any = None,
) -> dict[str, Any]:
    """Run (or resume) ``grid`` into ``out``; returns a summary."""
    from runner.endpoints import open_endpoints, preflight
    from runner.live import live_view

    # Reliability fix: the manifest is checked and written only after the logs were read and
    # the preflight passed, so a refusal (a newer-schema or unreadable log, an endpoint that
    # does not answer) leaves the directory as it was, and a first run that never started
    # leaves no manifest to block the corrected grid.
    report = LogReport()
    tasks, done = pending_tasks(grid, out, report)
    for bad in report.truncated:
        console.print(f"[yellow]dropped a truncated log line (a kill mid-write): {bad}")
    for bad in report.corrupt:
        console.print(f"[yellow]skipped a corrupt log line: {bad}")
    scorer = _scorer(grid, done)
    async with open_endpoints(grid, server_config=server_config) as endpoints:
        if check:
            problems = await preflight(grid, endpoints)
            if problems:
                raise GridError("\n".join(problems))
        resumed = write_or_check_manifest(out, grid, allow_change=allow_change)
        helpers = Helpers(grid, out, endpoints)
        state = RunState(grid=grid, out=out, endpoints=endpoints, helpers=helpers)
        state.progress.total = len(tasks)
        if resumed:
            console.print(f"resuming {out}: {len(done)} episodes already done, {len(tasks)} to run")
        async with anyio.create_task_group() as tg:
            # Compiles are pipelined with the episodes: the precompile walks the tasks in run
            # order beside them; an episode that reaches its compile first joins the flight,
            # and text-arm episodes never wait.
            tg.start_soon(_precompile, helpers, tasks, console)
            with live_view(state, console, enabled=live):
                await run_grid(state, tasks, scorer)
    st = helpers.stats
    if st.compile_requests or st.matcher_requests:
        console.print(
            f"helpers: compiler {st.compile_calls} calls made, {st.compile_saved} saved by "
            f"the cache; matcher {st.matcher_calls} calls made, {st.matcher_saved} saved "
            f"({st.matcher_retries} correction requests, {st.matcher_malformed} of them still "
            f"malformed after it; {st.corrupt} corrupt cache entries dropped)"
        )
    return {
        "episodes_run": state.progress.done,
        "already_done": len(done),
        "infrastructure": state.progress.infrastructure,
        "out": str(out),
    }


async def _precompile(helpers: Helpers, tasks: list[Task], console: Console) -> None:
    try:
        await helpers.precompile(tasks)
    except* CallFailed as failed:
        # Reliability fix: a compile that fails on an infrastructure error must not end the
        # run; its episodes compile again and log the failure if it lasts.
        n = len(failed.exceptions)
        console.print(f"[yellow]precompile stopped ({n} failed); episodes compile again")


def _scorer(grid: Grid, done: list[EpisodeRecord]) -> StreamingScorer:
    scorer = StreamingScorer(expected_seeds(grid))
    for record in done:
        scorer.add(record)  # already reported by the run that logged them
    return scorer


def _execute(grid: Grid, out: Path, allow_change: bool, live: bool, check: bool = True) -> None:
    console = Console(stderr=False, highlight=False, soft_wrap=True)
    _event_loop_policy()
    try:
        summary = asyncio.run(
            run_async(grid, out, console=console, live=live, allow_change=allow_change, check=check)
        )
    except (GridError, ManifestError, NewerSchemaError) as e:
        raise _fail(str(e)) from None
    except OSError as e:  # reliability fix: an unreadable log or run directory, one line
        raise _fail(f"{e.filename or out}: {e.strerror or e}") from None
    except KeyboardInterrupt:
        console.print("interrupted: rerun the same command to resume; nothing finished is lost")
        raise typer.Exit(130) from None
    console.print(
        f"done: {summary['episodes_run']} episodes run, {summary['already_done']} already done, "
        f"{summary['infrastructure']} ended on infrastructure errors (rerun to retry them); "
        f"logs in {out}/logs, results in {out}/results.jsonl"
    )
    if summary["infrastructure"]:
        raise typer.Exit(3)


def run(
    grid_file: Annotated[
        Path | None, typer.Argument(help="A grid TOML file.", show_default=False)
    ] = None,
    out: Annotated[Path, typer.Option(help="Run directory (logs, results, manifest).")] = Path(
        "runs/latest"
    ),
    model: Annotated[
        str, typer.Option(help="Model for a one-configuration grid.")
    ] = "scripted/perfect",
    arms: Annotated[str, typer.Option(help="Comma-separated arms.")] = "raw,checklist",
    steps: Annotated[
        str, typer.Option("--steps", "-S", help="Graph sizes, comma-separated.")
    ] = "10",
    density: Annotated[str, typer.Option(help="Densities, comma-separated.")] = "0.15",
    seeds: Annotated[str, typer.Option(help="Seed range, e.g. 100-131.")] = "100-131",
    domain: Annotated[str, typer.Option(help="procurement and/or release.")] = "procurement",
    brief: Annotated[str, typer.Option(help="amended and/or original.")] = "amended",
    base_url: Annotated[
        str | None,
        typer.Option(help="OpenAI-compatible base URL (default: the embedded scripted endpoint)."),
    ] = None,
    api_key_env: Annotated[
        str | None, typer.Option(help="Environment variable holding the API key.")
    ] = None,
    concurrency: Annotated[int, typer.Option(help="Episodes in flight.")] = 256,
    max_in_flight: Annotated[int, typer.Option(help="Requests in flight per endpoint.")] = 128,
    allow_grid_change: Annotated[
        bool, typer.Option(help="Resume into a directory holding a different grid.")
    ] = False,
    no_live: Annotated[
        bool, typer.Option("--no-live", help="Plain output, no progress display.")
    ] = False,
) -> None:
    """Run a grid (or resume it: rerun the same command after a crash).

    With GRID_FILE, the grid comes from the file; otherwise from the flags, against the
    embedded scripted endpoint unless --base-url is given.
    """
    try:
        grid = (
            load_grid(grid_file)
            if grid_file
            else grid_from_flags(
                model,
                arms,
                steps,
                density,
                seeds,
                domain,
                brief,
                base_url,
                api_key_env,
                concurrency,
                max_in_flight,
            )
        )
    except (GridError, ValueError) as e:
        raise _fail(str(e)) from None
    _execute(grid, out, allow_grid_change, live=not no_live and sys.stdout.isatty())


def validate(
    grid_file: Annotated[Path, typer.Argument(help="A grid TOML file.")],
    offline: Annotated[bool, typer.Option(help="Check the file only; send no request.")] = False,
) -> None:
    """Check a grid file, then send one tiny request to each endpoint and model."""
    try:
        grid = load_grid(grid_file)
    except GridError as e:
        raise _fail(str(e)) from None
    n_cells = len(grid.cells())
    typer.echo(f"{grid_file}: {n_cells} cells, {n_cells * len(grid.seeds())} episodes")
    if offline:
        return
    from runner.endpoints import open_endpoints, preflight

    async def probe() -> list[str]:
        async with open_endpoints(grid) as endpoints:
            return await preflight(grid, endpoints)

    problems = asyncio.run(probe())
    for p in problems:
        typer.echo(f"error: {p}", err=True)
    if problems:
        raise typer.Exit(2)
    typer.echo("every endpoint and model answered")


def demo(
    out: Annotated[Path, typer.Option(help="Run directory.")] = Path("runs/demo"),
    no_live: Annotated[bool, typer.Option("--no-live", help="Plain output.")] = False,
) -> None:
    """The main job on the embedded scripted endpoint: a small grid of every arm with the
    synthetic agent, the ladder printed live, and a report written to OUT/report.md."""
    grid = load_grid(DEMO_GRID)
    _execute(grid, out, allow_change=True, live=not no_live and sys.stdout.isatty())
    try:
        from runner.cmd_report import write_report
    except ImportError:  # pragma: no cover
        return
    path = write_report(out)
    typer.echo(f"report: {path}")
