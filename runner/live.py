"""The live view of a run: a rich progress display and one line per streamed result."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import msgspec
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

from protocol.records import Knobs
from runner.client import Endpoint
from runner.scheduler import RunState

__all__ = ["format_result", "live_view"]


def _ci(ci: Any) -> str:
    return f"[{ci[0]:.2f}, {ci[1]:.2f}]" if ci else ""


def _num(value: Any, spec: str = ".2f") -> str:
    # Reliability fix: a cell whose every episode ended on an infrastructure error has no
    # rate (None); formatting it crashed the whole run.
    return "n/a" if value is None else format(value, spec)


def format_result(line: dict[str, Any]) -> str:
    """One human line for a streamed cell or contrast result."""
    if line.get("type") == "contrast":
        return (
            f"  contrast {line.get('a')} -> {line.get('b')} ({line.get('scoring')}): "
            f"n={line.get('n')} discordant {line.get('a_only')}/{line.get('b_only')} "
            f"p={_num(line.get('p'), '.3g')} holm={_num(line.get('p_holm'), '.3g')}"
        )
    c = line.get("cell", {})
    default = msgspec.structs.asdict(Knobs())
    knobs = {k: v for k, v in c.get("knobs", {}).items() if v != default.get(k)}
    extra = " " + " ".join(f"{k}={v}" for k, v in knobs.items()) if knobs else ""
    return (
        f"cell {c.get('model')} {c.get('regime')} S={c.get('steps')} rho={c.get('density')} "
        f"{c.get('domain')} {c.get('brief')} {c.get('arm')}{extra}: "
        f"strict {_num(line.get('strict'))} {_ci(line.get('strict_ci'))} "
        f"decline-aware {_num(line.get('decline_aware'))} {_ci(line.get('decline_aware_ci'))} "
        f"n={line.get('n')} infra={line.get('infrastructure_errors', 0)}"
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

    def on_result(line: dict[str, Any]) -> None:
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
