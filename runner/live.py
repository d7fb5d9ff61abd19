"""The live view of a run: a rich progress display and one line per streamed result."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager

import msgspec
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

from runner.client import Endpoint
from runner.scheduler import RunState
from scoring.lines import CellLine, ContrastLine, ResultLine

__all__ = ["format_result", "live_view"]


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
    knobs = {
        k: v
        for k, v in msgspec.structs.asdict(c.knobs).items()
        if v not in (None, False, 0, 0.0, "append", "user", "next_turn", "state")
    }
    extra = " " + " ".join(f"{k}={v}" for k, v in knobs.items()) if knobs else ""
    head = (
        f"cell {c.model} {c.regime} S={c.steps} rho={c.density} {c.domain} {c.brief} {c.arm}"
        f"{extra}: "
    )
    if not isinstance(line, CellLine):
        return head + "helpers"
    return head + (
        f"strict {_num(line.strict)} {_ci(line.strict_ci)} "
        f"decline-aware {_num(line.decline_aware)} {_ci(line.decline_aware_ci)} "
        f"n={line.n} infra={line.infrastructure_errors}"
    )


class _Stats:
    def __init__(self, endpoints: dict[str, Endpoint]) -> None:
        self.endpoints = endpoints
        self.t0 = time.perf_counter()

    def text(self) -> str:
        e = list(self.endpoints.values())
        flight = sum(x.limiter.in_flight for x in e)
        limit = sum(x.limiter.limit for x in e)
        toks = sum(x.completion_tokens + x.prompt_tokens for x in e)
        rate = toks / max(1e-9, time.perf_counter() - self.t0)
        return f"in flight {flight}/{limit}  tokens/s {rate:,.0f}"


@contextmanager
def live_view(state: RunState, console: Console, *, enabled: bool = True) -> Iterator[None]:
    """Show progress while the body runs; streamed results print above the bar."""

    def on_result(line: ResultLine) -> None:
        console.print(format_result(line), highlight=False)

    state.on_result = on_result
    if not enabled:
        yield
        return
    stats = _Stats(state.endpoints)
    columns = (
        TextColumn("[bold]episodes"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[stats]}"),
        TimeRemainingColumn(),
        TextColumn("{task.fields[cells]}"),
    )
    with Progress(*columns, console=console, transient=False, refresh_per_second=4) as bar:
        task = bar.add_task("run", total=state.progress.total or None, stats="", cells="")

        def on_episode(_: object) -> None:
            bar.update(
                task, completed=state.progress.done, total=state.progress.total, stats=stats.text()
            )

        state.on_episode = on_episode
        yield
        on_episode(None)
