"""The live view of a run: a rich progress display and one line per streamed result.

The display: episodes done / total, elapsed and ETA (labelled), requests in flight / limit,
retries, 429s and failed calls so far (``runner.call_stats``), tokens/s, and the cells under
way. With ``--no-live``, :func:`progress_lines` prints the same as one line at a fixed
interval, so a run whose every call fails is never silent.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager

import anyio
from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from protocol.config import graph_label
from runner.client import Endpoint
from runner.scheduler import RunState
from scoring.lines import CellLine, ContrastLine, ResultLine

__all__ = [
    "counters",
    "format_result",
    "live_view",
    "preflight_line",
    "progress_columns",
    "progress_lines",
    "status_line",
]


def _ci(ci: tuple[float, float]) -> str:
    return f"[{ci[0]:.2f}, {ci[1]:.2f}]"


def _num(value: float | None, spec: str = ".2f") -> str:
    # Reliability fix: a cell whose every episode ended on an infrastructure error has no
    # rate (None); formatting it crashed the whole run.
    return "n/a" if value is None else format(value, spec)


def format_result(line: ResultLine) -> str:
    """One human line for a streamed cell or contrast result."""
    if isinstance(line, ContrastLine):
        return (
            f"  contrast {line.a} -> {line.b} ({line.scoring}): "
            f"n={line.n} discordant {line.a_only}/{line.b_only} "
            f"p={_num(line.p, '.3g')} holm={_num(line.p_holm, '.3g')}"
        )
    c = line.cell
    knobs = c.knobs.changed()
    extra = " " + " ".join(f"{k}={v}" for k, v in knobs.items()) if knobs else ""
    graph = graph_label(c.steps, c.density)
    head = f"cell {c.model} {c.regime} {graph} {c.domain} {c.brief} {c.arm}{extra}: "
    if not isinstance(line, CellLine):
        return head + "helpers"
    return head + (
        f"strict {_num(line.strict)} {_ci(line.strict_ci)} "
        f"decline-aware {_num(line.decline_aware)} {_ci(line.decline_aware_ci)} "
        f"n={line.n} infra={line.infrastructure_errors}"
    )


def _clock(seconds: float) -> str:
    s = int(max(0.0, seconds))
    return f"{s // 3600}:{s // 60 % 60:02d}:{s % 60:02d}"


def counters(state: RunState) -> str:
    """Requests in flight / limit, retries, 429s and infrastructure errors so far."""
    e = list(state.endpoints.values())
    flight = sum(x.limiter.in_flight for x in e)
    limit = sum(x.limiter.limit for x in e)
    retries = sum(x.stats.retries for x in e)
    throttled = sum(x.stats.throttled_429 for x in e)
    failed = sum(x.stats.infrastructure for x in e)
    return (
        f"requests in flight {flight}/{limit}  retries {retries}  429s {throttled}  "
        f"failed calls {failed}  infra episodes {state.progress.infrastructure}"
    )


def status_line(state: RunState) -> str:
    """The ``--no-live`` progress line: episodes, elapsed, ETA, counters."""
    p = state.progress
    elapsed = time.perf_counter() - p.started
    eta = elapsed / p.done * (p.total - p.done) if p.done else None
    return (
        f"episodes {p.done}/{p.total}  elapsed {_clock(elapsed)}  "
        f"ETA {_clock(eta) if eta is not None else '?'}  {counters(state)}"
    )


def preflight_line(endpoints: dict[str, Endpoint]) -> str:
    from runner.endpoints import PREFLIGHT_ATTEMPTS, PREFLIGHT_TIMEOUT_S

    timeout = min([PREFLIGHT_TIMEOUT_S, *(e.timeout_s for e in endpoints.values())])
    attempts = max([1, *(min(PREFLIGHT_ATTEMPTS, e.attempts) for e in endpoints.values())])
    return (
        f"preflight ({', '.join(sorted(endpoints))}): one tiny request per model, "
        f"timeout {timeout:g} s per attempt, up to {attempts} attempts"
    )


@asynccontextmanager
async def progress_lines(
    state: RunState, console: Console, *, every_s: float
) -> AsyncIterator[None]:
    """Print :func:`status_line` every ``every_s`` seconds while the block runs (0: never)."""
    if every_s <= 0:
        yield
        return

    async def tick() -> None:
        while True:
            await anyio.sleep(every_s)
            console.print(status_line(state), highlight=False)

    async with anyio.create_task_group() as tg:
        tg.start_soon(tick)
        try:
            yield
        finally:
            tg.cancel_scope.cancel()


class _Rate:
    def __init__(self, endpoints: dict[str, Endpoint]) -> None:
        self.endpoints = endpoints
        self.t0 = time.perf_counter()

    def text(self) -> str:
        toks = sum(x.completion_tokens + x.prompt_tokens for x in self.endpoints.values())
        return f"tokens/s {toks / max(1e-9, time.perf_counter() - self.t0):,.0f}"


def progress_columns(what: str, *fields: str) -> tuple[ProgressColumn, ...]:
    """A long job's progress columns: ``what`` done of the total with a bar, labelled
    elapsed time and ETA, then each task field in ``fields``."""
    return (
        TextColumn(f"[bold]{what}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("elapsed"),
        TimeElapsedColumn(),
        TextColumn("ETA"),
        TimeRemainingColumn(),
        *(TextColumn(f"{{task.fields[{f}]}}") for f in fields),
    )


@contextmanager
def live_view(state: RunState, console: Console, *, enabled: bool = True) -> Iterator[None]:
    """Show progress while the body runs; streamed results print above the bar."""

    def on_result(line: ResultLine) -> None:
        console.print(format_result(line), highlight=False)

    state.on_result = on_result
    if not enabled:
        yield
        return
    rate = _Rate(state.endpoints)
    columns = progress_columns("episodes", "stats", "cells")
    with Progress(*columns, console=console, transient=False, refresh_per_second=4) as bar:
        task = bar.add_task("run", total=state.progress.total or None, stats="", cells="")

        def on_episode(_: object) -> None:
            bar.update(
                task,
                completed=state.progress.done,
                total=state.progress.total,
                stats=f"{counters(state)}  {rate.text()}",
                cells=state.progress.open_cells(),
            )

        state.on_episode = on_episode
        yield
        on_episode(None)
