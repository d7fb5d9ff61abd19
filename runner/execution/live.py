"""The live view of a run: a rich progress display and one line per streamed result.

The display, on any terminal from 80 columns: a first line with the progress bar, episodes
done / total, elapsed and ETA (labelled; these always fit), then the counters (requests in
flight / limit, requests made, turns closed / planned, retries, 429s, failed calls counted as
the breaker counts them (``runner.client.call_stats``), infrastructure episodes, tokens/s
generated and prefilled apart), wrapped at the terminal's width, then the cells under way on
one line, cut at the terminal's edge. It is redrawn every second (:func:`refreshing`) from
the endpoints' per-call counters and the turns closed, not only when an episode ends (on a
slow model episodes end minutes apart), and its ETA is the rate of turns closed so far
applied to the turns left. With ``--no-live``,
:func:`progress_lines` prints the same fields as one line at a fixed interval, so a run whose
every call fails is never silent.
"""

from __future__ import annotations

import textwrap
import time
from collections.abc import AsyncIterator, Callable, Iterable, Iterator
from contextlib import asynccontextmanager, contextmanager

import anyio
from rich.console import Console, RenderableType
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.text import Text

from protocol.config import graph_label, model_label
from protocol.records import CellKey
from protocol.visible import visible
from runner.client.endpoint import Endpoint
from runner.execution.connect import PREFLIGHT_ATTEMPTS, PREFLIGHT_TIMEOUT_S
from runner.execution.scheduler import RunState
from scoring.analyses.truncation import cut_line
from scoring.replay.askback import burden_text
from scoring.report.tables import Labels
from scoring.results.cells import config_of, ladder_sort_key
from scoring.results.lines import CellLine, ContrastLine, ResultLine

__all__ = [
    "WIDTH",
    "counters",
    "eta",
    "fit",
    "format_result",
    "live_view",
    "preflight_line",
    "progress_columns",
    "progress_lines",
    "refreshing",
    "status_line",
    "tokens_per_s",
]


WIDTH = 80  # the columns every line a run prints outside the live view fits in (#40)


def _ci(ci: tuple[float, float]) -> str:
    return f"[{ci[0]:.2f}, {ci[1]:.2f}]"


def _num(value: float | None, spec: str = ".2f") -> str:
    # A cell whose every episode ended on an infrastructure error has no rate (None).
    return "n/a" if value is None else format(value, spec)


def _short(line: ResultLine, labels: Labels) -> str:
    """A streamed line within 80 columns: the configuration by its number (#40)."""
    if isinstance(line, ContrastLine):
        scoring = "strict" if line.scoring == "strict" else "da"
        return (
            f"  {labels(line.config)} {line.a} -> {line.b} ({scoring}): n={line.n} "
            f"b only {line.b_only}, a only {line.a_only} p={_num(line.p, '.2g')} "
            f"holm={_num(line.p_holm, '.2g')}"
        )
    head = f"{labels(line.cell)} {line.cell.arm}: "
    if not isinstance(line, CellLine):
        return head + "helpers"
    text = head + (
        f"strict {_num(line.strict)} {_ci(line.strict_ci)} "
        f"da {_num(line.decline_aware)} {_ci(line.decline_aware_ci)} n={line.n}"
        + (f" infra={line.infrastructure_errors}" if line.infrastructure_errors else "")
        + (f" overflow={line.context_overflows}" if line.context_overflows else "")
    )
    if line.trials > 1:  # repeated trials (#40): pass^K under both scorings, own line
        k = line.trials
        hats = [line.pass_k.get(s, ())[k - 1 :] for s in ("strict", "decline_aware")]
        shown = "/".join(_num(h[0]) if h else "n/a" for h in hats)
        text += f"\n    pass^{k} strict/da {shown} (trials {k})"
    cut = cut_line(line.cut)  # replies cut at their budget, when any (#49)
    return text + (f"\n{fit('    ' + cut)}" if cut else "")


class _InLadderOrder:
    """Streamed lines held per configuration until each of its cells has a line, then
    printed in ladder order (cells by rung, then the contrasts); later lines of a printed
    configuration, and whatever is held when the run ends, print as they come (#40)."""

    def __init__(self, cells: list[CellKey], emit: Callable[[ResultLine], None]) -> None:
        self.expected: dict[CellKey, set[CellKey]] = {}
        for c in cells:
            self.expected.setdefault(config_of(c), set()).add(c)
        self.held: dict[CellKey, list[ResultLine]] = {}
        self.done: set[CellKey] = set()
        self.emit = emit

    def add(self, line: ResultLine) -> None:
        config = line.config if isinstance(line, ContrastLine) else config_of(line.cell)
        if config in self.done or config not in self.expected:
            self.emit(line)
            return
        held = self.held.setdefault(config, [])
        held.append(line)
        have = {x.cell for x in held if isinstance(x, CellLine)}
        if self.expected[config] <= have:
            self.flush(config)

    def flush(self, config: CellKey) -> None:
        held = self.held.pop(config, [])
        self.done.add(config)
        cells = {x.cell: x for x in held if isinstance(x, CellLine)}  # the last of each
        rest = [x for x in held if not isinstance(x, CellLine)]
        for key in sorted(cells, key=ladder_sort_key):
            self.emit(cells[key])
        for x in rest:
            self.emit(x)

    def close(self) -> None:
        for config in list(self.held):
            self.flush(config)


def format_result(line: ResultLine, labels: Labels | None = None) -> str:
    """One human line for a streamed cell or contrast result (with ``labels``: within 80
    columns, the configuration by its number)."""
    if labels is not None:
        return _short(line, labels)
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
    head = f"cell {model_label(c)} {c.regime} {graph} {c.domain} {c.brief} {c.arm}{extra}: "
    if not isinstance(line, CellLine):
        return head + "helpers"
    return head + (
        f"strict {_num(line.strict)} {_ci(line.strict_ci)} "
        f"decline-aware {_num(line.decline_aware)} {_ci(line.decline_aware_ci)} "
        f"n={line.n} infra={line.infrastructure_errors}"
        + (f" overflow={line.context_overflows}" if line.context_overflows else "")
        + (f" no-reply={line.no_reply}" if line.no_reply else "")
        + (f" | {burden_text(line.askback, line.n)}" if line.askback is not None else "")
    )


def _clock(seconds: float) -> str:
    s = int(max(0.0, seconds))
    return f"{s // 3600}:{s // 60 % 60:02d}:{s % 60:02d}"


def tokens_per_s(state: RunState) -> str:
    """Tokens per second so far, generated and prompt apart (a prompt's tokens are mostly
    re-read from the server's prefix cache, never generated): prefilled (prompt less cached)
    where the server reports cached tokens, else the prompt tokens marked as such."""
    e = list(state.endpoints.values())
    elapsed = max(1e-9, time.perf_counter() - state.progress.started)
    generated = sum(x.completion_tokens for x in e) / elapsed
    prompt = sum(x.prompt_tokens for x in e)
    if any(x.cache_reports for x in e):
        prefilled = (prompt - sum(x.cached_tokens for x in e)) / elapsed
        return f"tokens/s generated {generated:,.0f} prefilled {prefilled:,.0f}"
    return (
        f"tokens/s generated {generated:,.0f} prompt {prompt / elapsed:,.0f} (cache not reported)"
    )


def counters(state: RunState) -> str:
    """Requests made and in flight / limit, turns done / planned, retries, 429s, failed
    calls (attempts that failed, not 429s: what the breaker counts), infrastructure
    episodes and tokens/s so far: read from the endpoints' per-call counters, so they move
    with every call, not only when an episode ends."""
    e = list(state.endpoints.values())
    p = state.progress
    flight = sum(x.limiter.in_flight for x in e)
    limit = sum(x.limiter.limit for x in e)
    retries = sum(x.stats.retries for x in e)
    throttled = sum(x.stats.throttled_429 for x in e)
    failed = sum(x.stats.failed_attempts for x in e)
    requests = sum(x.requests for x in e)
    return (
        f"requests in flight {flight}/{limit}  requests {requests:,}  "
        f"turns {p.turns_done:,}/{p.turns_total:,}  retries {retries}  429s {throttled}  "
        f"failed calls {failed}  infra episodes {p.infrastructure}  {tokens_per_s(state)}"
    )


def eta(state: RunState) -> str:
    """The time left at the rate turns closed so far (episodes end minutes apart on a slow
    model; turns close every few seconds), ``-:--:--`` before the first turn."""
    left = state.progress.eta_s()
    return _clock(left) if left is not None else "-:--:--"


def status_line(state: RunState, width: int = WIDTH) -> str:
    """The ``--no-live`` progress lines: the live view's fields (episodes, elapsed, ETA,
    counters, tokens/s, cells under way), packed into lines of at most ``width`` columns
    (a field never split; the cells under way on their own line, cut at the edge)."""
    p = state.progress
    elapsed = time.perf_counter() - p.started
    cells = p.open_cells()
    fields = f"episodes {p.done}/{p.total}  elapsed {_clock(elapsed)}  ETA {eta(state)}"
    lines = pack(f"{fields}  {counters(state)}", width)
    if cells:
        lines += pack(f"cells {cells}".replace("  ", "; "), width)[:1]
    return "\n".join(lines)


def fit(text: str, width: int = WIDTH) -> str:
    """``text`` wrapped at spaces into lines of at most ``width`` columns, the lines after
    the first indented two spaces (a word wider than the line, a long path, stays whole):
    how every notice of a run prints (#40)."""
    return "\n".join(
        textwrap.wrap(
            text, width, subsequent_indent="  ", break_long_words=False, break_on_hyphens=False
        )
        or [""]
    )


@asynccontextmanager
async def _every(every_s: float, action: Callable[[], None]) -> AsyncIterator[None]:
    """Call ``action`` every ``every_s`` seconds while the block runs."""

    async def tick() -> None:
        while True:
            await anyio.sleep(every_s)
            action()

    async with anyio.create_task_group() as tg:
        tg.start_soon(tick)
        try:
            yield
        finally:
            tg.cancel_scope.cancel()


@asynccontextmanager
async def refreshing(state: RunState, *, every_s: float = 1.0) -> AsyncIterator[None]:
    """Call the live view's redraw (``state.on_refresh``) every ``every_s`` seconds while
    the block runs, so its counters, cells and ETA follow the calls, not the episodes."""

    def redraw() -> None:
        if state.on_refresh is not None:
            state.on_refresh()

    async with _every(every_s, redraw):
        yield


def preflight_line(endpoints: dict[str, Endpoint]) -> str:
    timeout = min([PREFLIGHT_TIMEOUT_S, *(e.timeout_s for e in endpoints.values())])
    attempts = max([1, *(min(PREFLIGHT_ATTEMPTS, e.attempts) for e in endpoints.values())])
    return (
        f"preflight ({', '.join(sorted(endpoints))}): one tiny request per model, "
        f"timeout {timeout:g} s, up to {attempts} attempts"
    )


@asynccontextmanager
async def progress_lines(
    state: RunState, console: Console, *, every_s: float
) -> AsyncIterator[None]:
    """Print :func:`status_line` every ``every_s`` seconds while the block runs (0: never)."""
    if every_s <= 0:
        yield
        return
    async with _every(every_s, lambda: console.print(status_line(state), highlight=False)):
        yield


def progress_columns(
    what: str, *fields: str, bar_width: int | None = 40
) -> tuple[ProgressColumn, ...]:
    """A long job's progress columns: ``what`` done of the total with a bar, labelled
    elapsed time and ETA, then each task field in ``fields``."""
    return (
        TextColumn(f"[bold]{what}"),
        BarColumn(bar_width=bar_width),
        MofNCompleteColumn(),
        TextColumn("elapsed"),
        TimeElapsedColumn(),
        TextColumn("ETA"),
        TimeRemainingColumn(),
        *(TextColumn(f"{{task.fields[{f}]}}") for f in fields),
    )


def pack(fields: str, width: int) -> list[str]:
    """``fields`` (separated by two spaces) in lines of at most ``width`` characters, a
    field never split unless it alone is wider."""
    lines: list[str] = []
    for field_ in fields.split("  "):
        if lines and len(lines[-1]) + 2 + len(field_) <= width:
            lines[-1] += "  " + field_
        else:
            lines.append(field_)
    return [x if len(x) <= width else x[: width - 1] + "…" for x in lines]


class _RunProgress(Progress):
    """The bar's line (what, bar, done / total, elapsed, ETA: about 60 columns), then each
    task's ``stats`` wrapped at the terminal's width and its ``cells`` on one line cut at
    the terminal's edge (what a narrow terminal loses first)."""

    def get_renderables(self) -> Iterable[RenderableType]:
        yield self.make_tasks_table(self.tasks)
        live = getattr(self, "live", None)  # absent while Progress.__init__ runs
        width = max(20, (live.console.width if live is not None else 80) - 1)
        for task in self.tasks:
            stats, cells = task.fields.get("stats"), task.fields.get("cells")
            lines = pack(str(stats), width) if stats else []
            if cells:
                lines += pack(f"cells {cells}".replace("  ", "; "), width)[:1]
            if lines:
                yield Text("\n".join(lines), no_wrap=True, overflow="crop")


@contextmanager
def live_view(state: RunState, console: Console, *, enabled: bool = True) -> Iterator[None]:
    """Show progress while the body runs; streamed results print above the bar."""

    cells = state.grid.cells()
    labels = Labels(cells)

    def show(text: str) -> None:
        # names from a grid or a log: shown, never obeyed (no markup, escapes made visible)
        console.print(visible(text, newlines=False), highlight=False, markup=False)

    if legend := labels.legend():  # the numbers the streamed lines use (#40)
        for row in legend.splitlines():
            show(row)

    def show_result(line: ResultLine) -> None:
        for row in format_result(line, labels).split("\n"):  # a trials line: two rows
            show(row)

    ordered = _InLadderOrder(cells, show_result)
    state.on_result = ordered.add
    if not enabled:
        try:
            yield
        finally:
            ordered.close()
        return
    columns = (
        TextColumn("[bold]episodes"),
        BarColumn(bar_width=20),
        MofNCompleteColumn(),
        TextColumn("elapsed"),
        TimeElapsedColumn(),
        TextColumn("ETA {task.fields[eta]}"),  # from turns done (rich's would use episodes)
    )
    with _RunProgress(*columns, console=console, transient=False, refresh_per_second=4) as bar:
        task = bar.add_task(
            "run", total=state.progress.total or None, stats="", cells="", eta="-:--:--"
        )

        def update() -> None:
            bar.update(
                task,
                completed=state.progress.done,
                total=state.progress.total,
                stats=counters(state),
                cells=state.progress.open_cells(),
                eta=eta(state),
            )

        state.on_episode = lambda _: update()
        state.on_refresh = update
        try:
            yield
        finally:
            ordered.close()
        update()
