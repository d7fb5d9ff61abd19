"""A run of a grid into a run directory, the library path of ``ladder run``
(``run_async``): the local checks, the endpoints' preflight, the scheduler with its live
view, the helpers' summary and the final result lines. ``ladder.run`` adds the command's
lock, signals and exit codes around it."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TypedDict

import anyio
from rich.console import Console

from protocol.domains.packs import PackError
from protocol.records import EpisodeRecord
from protocol.visible import visible
from runner.client.endpoint import CallFailed, Endpoint
from runner.execution.observer import Observers, RunObserver
from runner.execution.plan import Plan, own_records
from runner.execution.scheduler import RunState, pending_tasks, run_grid, streaming_scorer
from runner.gates.cache import HelperStats
from runner.gates.helper_models import Helpers
from runner.grid.expand import Grid, GridError
from runner.rundir.logs import LogReport, iter_records
from runner.rundir.manifest import write_or_check_manifest
from runner.rundir.packs import keep_packs
from runner.rundir.results import RESULTS, finalize_results, holds_final
from scoring.gc_pause import paused_gc
from scoring.plural import plural
from scoring.replay.episode_score import Replays
from scoring.replay.ground_truth import EpisodeCache
from scoring.results.lines import ResultLine
from scoring.results.stream import StreamingScorer
from serve.config import ServerConfig

__all__ = ["RunSummary", "helper_summary", "run_async"]


class RunSummary(TypedDict):
    """What :func:`run_async` returns."""

    episodes_run: int
    already_done: int
    infrastructure: int
    model_failures: int  # context overflows: counted as failures, never retried (#40)
    out: str
    results_changed: bool  # False: nothing ran and results.jsonl already held its lines


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
    observers: Sequence[RunObserver] = (),
) -> RunSummary:
    """Run (or resume) ``grid`` into ``out``; returns a summary.

    ``observers`` (:class:`~runner.execution.observer.RunObserver`) hear every notice the
    run prints, every streamed result line and every finished episode's record.

    ``breaker_after``: stop (raise BreakerTripped) after that many consecutive failed calls
    on one endpoint; 0 (the default here; ``ladder run`` passes its flag) never stops.
    """
    from runner.execution.connect import open_endpoints
    from runner.execution.live import preflight_line

    # The local checks come first (the directory's grid, then its logs), so a directory of
    # another grid is refused before any endpoint is contacted; the manifest is written only
    # after the logs were read and the preflight passed, so a refusal (a newer-schema or
    # unreadable log, an endpoint that does not answer) leaves the directory as it was, and
    # a first run that never started leaves no manifest to block the corrected grid.
    hooks = Observers(observers)
    notice = _notifier(console, hooks)
    write_or_check_manifest(out, grid, allow_change=allow_change, write=False)
    report = LogReport()
    tasks, done = pending_tasks(grid, out, report)
    _log_notices(report, notice)
    scorer = _scorer(grid, done)
    already_done = len(done)
    del done  # scored: a resume holds no record of its own through the run (#47)
    _keep_packs(grid, out, write=False)  # a changed pack is refused before any endpoint (#40)
    async with open_endpoints(grid, server_config=server_config) as endpoints:
        for ep in endpoints.values():
            ep.stats.breaker_after = breaker_after
        stopped: dict[str, str] = {}
        if check and tasks:  # nothing left to run needs no server (#40)
            notice(preflight_line(endpoints))
            stopped, tasks = await _preflight(grid, endpoints, tasks, notice)
        _keep_packs(grid, out)  # a copy of every file pack the run uses
        manifest = write_or_check_manifest(
            out, grid, allow_change=allow_change, overrides=overrides, scripted=server_config
        )
        if manifest.added:
            notice(f"the grid adds {'; '.join(manifest.added)} to {out}; manifest updated")
        if manifest.changed:
            notice(f"grid changed (--allow-grid-change): {'; '.join(manifest.changed)}")
        helpers = Helpers(grid, out, endpoints)
        state = RunState(grid=grid, out=out, endpoints=endpoints, helpers=helpers, observers=hooks)
        state.progress.total = len(tasks)
        if manifest.resumed:
            notice(
                f"resuming {out}: {plural(already_done, 'episode')} already done, {len(tasks)} to run"
            )
        shown = _Shown(console, live, progress_every_s)
        await _schedule(state, helpers, tasks, scorer, stopped, shown)
        del scorer  # its scores: the final lines score every record again (#47)
    st = helpers.stats
    if st.compile_requests or st.matcher_requests:
        console.print(helper_summary(st, width=80), highlight=False)
        hooks.notice(helper_summary(st))
    final = _finalize(out, grid, console, ran=bool(tasks))
    if final:
        notice(f"final results: {plural(final, 'line')} appended to {out / RESULTS}")
    elif final is None:
        notice(f"nothing ran: {out / RESULTS} already holds these final results (unchanged)")
    return {
        "episodes_run": state.progress.done,
        "already_done": already_done,
        "infrastructure": state.progress.infrastructure,
        "model_failures": state.progress.model_failures,
        "out": str(out),
        "results_changed": final is not None,
    }


def _notifier(console: Console, hooks: Observers) -> Callable[..., None]:
    """The run's notice: printed within 80 columns (#40), in ``style`` if any, and told to
    the observers whole."""
    from runner.execution.live import fit

    def notice(text: str, style: str = "") -> None:
        shown = fit(text)  # within 80 columns (#40)
        console.print(f"[{style}]{shown}" if style else shown)
        hooks.notice(text)

    return notice


def _log_notices(report: LogReport, notice: Callable[..., None]) -> None:
    """The notices of reading the logs: truncated lines dropped, another grid's records
    ignored, corrupt lines skipped (every one counted, the first ones shown)."""
    for bad in report.truncated:
        notice(f"dropped a truncated log line (a kill mid-write): {bad}", "yellow")
    if report.foreign:
        notice(
            f"{plural(len(report.foreign), 'log record')} of another grid "
            "ignored (neither done nor scored)",
            "yellow",
        )
    for bad in report.corrupt:
        notice(f"skipped a corrupt log line: {bad}", "yellow")
    if len(report.corrupt) > len(report.corrupt.kept):  # every one counted, the first shown
        more = len(report.corrupt) - len(report.corrupt.kept)
        notice(f"skipped {more} more corrupt log lines", "yellow")


def _keep_packs(grid: Grid, out: Path, write: bool = True) -> None:
    """:func:`~runner.rundir.packs.keep_packs`, a changed pack refused as a grid error."""
    try:
        keep_packs(grid.run.domains, out, write=write)
    except PackError as e:
        raise GridError("\n".join(e.problems)) from None


@dataclass(frozen=True)
class _Shown:
    """How the run shows its progress: the console, the live view or (without it) a
    progress line every ``every_s`` seconds."""

    console: Console
    live: bool
    every_s: float


async def _schedule(
    state: RunState,
    helpers: Helpers,
    tasks: Plan,
    scorer: StreamingScorer,
    stopped: dict[str, str],
    shown: _Shown,
) -> None:
    """The scheduler beside the precompile, under the live view and the progress lines."""
    from runner.execution.live import live_view, progress_lines, refreshing

    async with anyio.create_task_group() as tg:
        # Compiles are pipelined with the episodes: the precompile walks the tasks in run
        # order beside them; an episode that reaches its compile first joins the flight,
        # and text-arm episodes never wait.
        tg.start_soon(_precompile, helpers, tasks, shown.console)
        with live_view(state, shown.console, enabled=shown.live):
            async with (
                progress_lines(state, shown.console, every_s=0 if shown.live else shown.every_s),
                refreshing(state, every_s=1.0),
            ):
                await run_grid(state, tasks, scorer, stopped_before=stopped)


async def _preflight(
    grid: Grid, endpoints: dict[str, Endpoint], tasks: Plan, notice: Callable[..., None]
) -> tuple[dict[str, str], Plan]:
    """The preflight (one tiny request per model, and per helper endpoint) and the
    served-model check (#49): ``(stopped, tasks left)``. What failed stops alone (#47): the
    cells that send to it (a model's all, a compile model's or a helper endpoint's the gates
    that need it: :mod:`runner.execution.preflight_stops`) are skipped (a resume runs them),
    the others run, then :class:`ModelsStopped` names each (exit 3). When nothing is left
    to run: one :class:`GridError` with every line (exit 2), before the directory is
    written."""
    from runner.execution.connect import preflight_helpers, preflight_models, problem_lines
    from runner.execution.preflight_stops import preflight_stops
    from runner.execution.served_models import served_model_problems

    failed = await preflight_models(grid, endpoints)
    helpers_failed = await preflight_helpers(grid, endpoints)
    unserved, warnings = await served_model_problems(grid, endpoints, frozenset(failed))
    for warning in warnings:
        notice(warning, "yellow")
    failed |= unserved
    stopped, heads = preflight_stops(grid, tasks.heads(), failed, helpers_failed)  # per cell
    left = tasks.only({t.cell for t in heads})
    if not left:  # each line within 80 columns with its error: prefix (#49)
        lines = [*failed.values(), *(f"helper endpoint of {w}" for w in helpers_failed.values())]
        raise GridError("\n".join(x for line in lines for x in problem_lines(line)))
    for what, why in stopped.items():
        why = why.removeprefix("preflight: ")
        notice(f"model {what!r} stopped at the preflight ({why}); its cells are skipped, the "
               "other cells run", "yellow")  # fmt: skip
    return stopped, left


def helper_summary(st: HelperStats, width: int = 0) -> str:
    """The helpers' end-of-run line: for each helper what was needed and what was made, each
    count with its unit (a compile is two calls; a matcher answer one call, two when its
    reply was malformed and the correction request followed). With ``width``: one line per
    helper, each wrapped to ``width`` columns (#40); 0: one line."""
    from runner.execution.live import fit

    made = st.compile_calls // 2
    parts = (
        f"helpers: compiler {plural(st.compile_requests, 'compile')} looked up, {made} made "
        f"({plural(st.compile_calls, 'call')}), {st.compile_saved} served by the cache;",
        f"matcher {plural(st.matcher_requests, 'answer')} needed, "
        f"{st.matcher_requests - st.matcher_saved} made ({plural(st.matcher_calls, 'call')}: "
        f"{st.matcher_retries} correction requests, {st.matcher_malformed} answers still "
        f"malformed after it), {st.matcher_saved} served by the cache;",
        f"{st.corrupt} corrupt cache entries dropped",
    )
    if not width:
        return " ".join(parts)
    head, rest = parts[0].split(" ", 1)
    return "\n".join(
        [head, *(fit("  " + p, width).replace("\n", "\n  ") for p in (rest, *parts[1:]))]
    )


def _finalize(out: Path, grid: Grid, console: Console, ran: bool = True) -> int | None:
    """Append the run's final result lines (``ladder score --json`` over ``out``'s records
    of this grid), earlier lines marked superseded; the number of final lines (0 when
    nothing was logged; None when nothing ``ran`` and the file already ends with exactly
    these lines: nothing is appended, #49). Records of another grid are excluded and
    reported; a cell and role whose replies were cut at their token budget past the
    threshold gets a warning line (#49)."""
    from runner.execution.live import fit

    with paused_gc():
        report = LogReport()
        lines = _final_lines(out, grid, report)
        if report.foreign:
            console.print(
                "[yellow]"
                + fit(
                    f"excluded {plural(len(report.foreign), 'record')} of another grid "
                    f"from the results (first: {visible(report.foreign[0], newlines=False)})"
                )
            )
        if not lines:
            return 0
    if not ran and holds_final(out, lines):
        return None
    finalize_results(out, lines)
    from scoring.report.cut_table import cut_warning_lines

    for warning in cut_warning_lines(lines):  # replies cut at their token budget (#49)
        console.print("[yellow]" + fit(warning))
    return len(lines)


def _final_lines(out: Path, grid: Grid, report: LogReport) -> list[ResultLine]:
    """:func:`~scoring.results.offline.rescore` over the records of ``grid`` in ``out``'s
    logs (the others counted in ``report.foreign``), the logs streamed (#47): one record in
    memory at a time, besides the completed records of the cells that can have a helpers
    line (an arm that compiles or runs the matcher, or one the table does not know)."""
    from protocol.arms.table import arm_spec
    from scoring.results.offline import rescore

    def helpers(record: EpisodeRecord) -> bool:
        spec = arm_spec(record.cell.arm)
        helped = spec is None or spec.compiles or spec.matcher
        return helped and record.termination == "completed"

    if not (out / "logs").is_dir():
        return []
    own = own_records(grid, iter_records(out, report), report)
    bounded = EpisodeCache(maxsize=1024), Replays(maxsize=1024)  # #47: no record kept
    return rescore(own, bounded[0], helpers=helpers, replays=bounded[1])


async def _precompile(helpers: Helpers, tasks: Plan, console: Console) -> None:
    from protocol.arms.table import arm_spec

    compiling = {c for c in tasks.cell_counts() if (s := arm_spec(c.arm)) and s.compiles}
    if not compiling:  # nothing to compile: the plan is not walked (#47)
        return
    try:
        await helpers.precompile(tasks.only(compiling))
    except* CallFailed as failed:
        from runner.execution.live import fit

        # an infrastructure error does not end the run: its episodes compile again
        n = len(failed.exceptions)
        console.print(f"[yellow]{fit(f'precompile stopped ({n} failed); episodes compile again')}")


def _scorer(grid: Grid, done: Iterable[EpisodeRecord]) -> StreamingScorer:
    scorer = streaming_scorer(grid)
    for record in done:
        scorer.add(record)  # already reported by the run that logged them
    return scorer
