"""The grid scheduler: hundreds of episode coroutines on one event loop.

Tasks come from :func:`runner.grid.expand.expand` in run order (configuration by configuration,
seed by seed, arms of one seed adjacent) and are pulled by a fixed pool of worker coroutines
(``run.concurrency`` episodes in flight), so cells finish one after another and results
stream. Requests in flight are bounded per endpoint by its limiter, which serves the oldest
episode's request first (:mod:`runner.client.limiter`), so episodes finish steadily. Each
finished episode is appended to its cell's log at once; the streaming scorer turns it into
result lines.

Resume: (cell, seed, trial) episodes already logged as completed, or as the model's failure (a context
overflow, :data:`protocol.records.MODEL_FAILURES`: it cannot succeed on a rerun), are skipped;
episodes logged with an infrastructure termination are run again (the reader keeps the last
record).
"""

from __future__ import annotations

import itertools
import secrets
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import anyio

from protocol.config import graph_label
from protocol.episode.generate import generate
from protocol.episode.versions import Paraphrases
from protocol.records import (
    MODEL_FAILURES,
    CellKey,
    Episode,
    EpisodeRecord,
    EpisodeSpec,
    trial_slug,
)
from protocol.stress.budget import cell_episode
from runner.arms import AgentCall, EpisodeContext, load_arms
from runner.client.affinity import EPISODE, affinity_key
from runner.client.call_stats import BreakerTripped
from runner.client.endpoint import Endpoint
from runner.client.limiter import EPISODE_AGE, EPISODE_LEFT, TurnsLeft
from runner.client.turn_draw import EPISODE_RUN
from runner.execution.agent import agent_calls
from runner.execution.brief_check import BriefLost
from runner.execution.episode_loop import run_episode
from runner.execution.observer import Observers
from runner.execution.order import TaskOrder
from runner.execution.plan import DoneRecords, Plan, own_records
from runner.files import JsonlAppender
from runner.gates.helper_models import Helpers
from runner.grid.expand import Grid, Task
from runner.rundir.logs import LogReport, LogWriter, iter_records
from runner.rundir.results import RESULTS, encode_line
from scoring.replay.cuts import record_cuts
from scoring.replay.ground_truth import EpisodeCache
from scoring.results.lines import ResultLine
from scoring.results.stream import StreamingScorer
from serve.collector import young_collector

__all__ = [
    "FINISHED",
    "ModelsStopped",
    "Plan",
    "Progress",
    "RunState",
    "pending_tasks",
    "run_grid",
    "streaming_scorer",
]

FINISHED = ("completed", *MODEL_FAILURES)  # what a resume never reruns


@dataclass
class Progress:
    """Live counters the display reads."""

    total: int = 0
    done: int = 0
    skipped: int = 0
    infrastructure: int = 0
    model_failures: int = 0  # episodes ended on a context overflow (counted, never retried)
    started: float = field(default_factory=time.perf_counter)
    per_cell: dict[str, int] = field(default_factory=dict)  # episodes done this run
    cell_total: dict[str, int] = field(default_factory=dict)  # episodes to run this run
    cell_label: dict[str, str] = field(default_factory=dict)
    running: dict[str, int] = field(default_factory=dict)  # episodes in flight per cell
    cut: dict[str, int] = field(default_factory=dict)  # replies cut at their budget (#49)
    # Turns: closed this run, and the run's planned total (each task's planned schedule once
    # its episode is generated, the first one's length until then, plus the re-asks served)
    turns_done: int = 0
    turns_total: int = 0

    def open_cells(self, limit: int = 3) -> str:
        """Cells under way (an episode running, or some done and not all): 'label k/n' for
        the first few, with the episodes running and the replies cut at their budget (#49)."""
        shown = [
            f"{self.cell_label[c]} {self.per_cell.get(c, 0)}/{n}"
            + (f" +{self.running[c]} running" if self.running.get(c) else "")
            + (f" cut {self.cut[c]}" if self.cut.get(c) else "")
            for c, n in self.cell_total.items()
            if self.running.get(c) or 0 < self.per_cell.get(c, 0) < n
        ]
        more = f" +{len(shown) - limit}" if len(shown) > limit else ""
        return "  ".join(shown[:limit]) + more

    def eta_s(self) -> float | None:
        """Seconds left at the rate turns closed so far (None before the first turn)."""
        if not self.turns_done:
            return None
        elapsed = time.perf_counter() - self.started
        return elapsed / self.turns_done * max(0, self.turns_total - self.turns_done)


@dataclass
class RunState:
    grid: Grid
    out: Path
    endpoints: dict[str, Endpoint]
    helpers: Helpers | None = None
    progress: Progress = field(default_factory=Progress)
    on_result: Callable[[ResultLine], None] | None = None
    on_episode: Callable[[EpisodeRecord], None] | None = None
    on_refresh: Callable[[], None] | None = None  # the live view's redraw, every second
    observers: Observers = field(default_factory=Observers)  # a library caller's hooks


def pending_tasks(
    grid: Grid, out: Path, report: LogReport | None = None
) -> tuple[Plan, DoneRecords]:
    """The tasks still to run (a :class:`Plan`: expanded lazily, never listed, #47) and the
    completed records already in ``out`` (read again when walked: the logs are streamed,
    one record at a time). A record whose cell and spec are not one of this grid's tasks
    (another grid's line, appended to a log) is excluded and counted in ``report.foreign``."""
    keys: set[tuple[str, int]] = set()
    per_cell: Counter[CellKey] = Counter()
    if (out / "logs").is_dir():
        for rec in own_records(grid, iter_records(out, report), report):
            if rec.termination in FINISHED:
                keys.add((sys.intern(trial_slug(rec.cell.slug(), rec.trial)), rec.spec.seed))
                per_cell[rec.cell] += 1
    done = frozenset(keys)  # one slug string per cell
    return Plan(grid, done, per_cell), DoneRecords(out, done)


class ModelsStopped(Exception):
    """Models whose cells stopped (the preflight failed, the brief lost, an endpoint's
    breaker) while the other
    models' cells ran to the end (#47); the message is one line naming each and why."""

    def __init__(self, stopped: dict[str, str]) -> None:
        self.stopped = stopped
        why = "; ".join(f"model {m!r} stopped: {e}" for m, e in stopped.items())
        super().__init__(f"{why} (the other models' cells ran to the end; rerun to resume)")


async def run_grid(
    state: RunState,
    tasks: Plan | Sequence[Task],
    scorer: StreamingScorer | None = None,
    stopped_before: dict[str, str] | None = None,
) -> None:
    """Run ``tasks`` (a :class:`Plan`, pulled one task at a time, or a list); log each
    episode as it finishes; stream results. A model whose brief
    check or endpoint breaker fails stops alone: its remaining cells are skipped (unlogged:
    a resume runs them), the others run to the end, then :class:`ModelsStopped` (#47).
    ``stopped_before``: models stopped before the run (their preflight failed), named in it."""
    grid = state.grid
    counts = tasks.cell_counts() if isinstance(tasks, Plan) else Counter(t.cell for t in tasks)
    load_arms({c.arm for c in counts})  # the memory arms' libraries, before any episode
    agents = {0: agent_calls(grid, state.endpoints)}  # by trial: trial k sends seed k
    paraphrases = grid.paraphrases()  # tier 2's held-out cache (None otherwise)
    first = next(iter(tasks), None)
    planned = len(generate(first.spec, paraphrases).turns) if first is not None else 0
    _plan_progress(state.progress, counts, planned)
    total = state.progress.total  # runner.execution.order: LPT tail
    order = TaskOrder(tasks, window=2 * grid.run.concurrency, total=total)
    results_path = state.out / RESULTS

    # never through a symlink planted at results.jsonl (O_NOFOLLOW: runner.files)
    with (
        young_collector(),  # serve.collector: the collector's young passes, fewer (#50)
        LogWriter(state.out) as writer,
        JsonlAppender(results_path) as results,
    ):
        workers = _Workers(
            state,
            scorer,
            order,
            writer,
            results,
            paraphrases,
            planned,
            agents,
            stopped=dict(stopped_before or {}),
        )
        try:
            async with anyio.create_task_group() as tg:
                for _ in range(min(grid.run.concurrency, total)):
                    tg.start_soon(workers.work)
        finally:
            workers.tail(on=False)
        if workers.stopped:
            raise ModelsStopped(workers.stopped)


def _plan_progress(progress: Progress, counts: Mapping[CellKey, int], planned: int) -> None:
    """The run's totals before the first episode: its tasks, its turns (``planned`` each
    until its episode is generated), each cell's episodes (``counts``) and label."""
    progress.total = sum(counts.values())
    progress.turns_total = planned * progress.total
    for cell, n in counts.items():
        slug = cell.slug()
        progress.cell_total[slug] = progress.cell_total.get(slug, 0) + n
        progress.cell_label[slug] = f"{cell.arm} {graph_label(cell.steps, cell.density)}"


def _lineage(episode: Episode) -> str | None:
    """A fresh random lineage token for an episode run that restarts (the sessions knob,
    issue #48; :data:`protocol.draws.LINEAGE_HEADER`), None for one of a single session: the
    token joins an episode's sessions, and one session has none to join (a memory arm's
    windowed requests, which look like fresh sessions, stay as they were)."""
    return secrets.token_hex(16) if episode.boundaries else None


@dataclass
class _Workers:
    """What :func:`run_grid`'s worker coroutines share: the tasks in run order, the logs and
    the results they append to, the episodes generated (by spec), the agents (by trial) and
    the models stopped (model -> why its cells stopped)."""

    state: RunState
    scorer: StreamingScorer | None
    order: TaskOrder
    writer: LogWriter
    results: JsonlAppender
    paraphrases: Paraphrases | None
    planned: int  # the planned turns counted for a task before its episode is generated
    agents: dict[int, dict[str, AgentCall]]
    stopped: dict[str, str]
    episodes: dict[EpisodeSpec, Episode] = field(default_factory=dict)
    started: Iterator[int] = field(default_factory=itertools.count)  # runner.client.limiter
    in_tail: bool = False  # every task started: the limiters' tail rule is on

    async def work(self) -> None:
        """One worker: pull the next task until none is left; a stopped model's are skipped
        (never started, never logged: a resume runs them). The last task pulled turns the
        limiters' tail rule on (:mod:`runner.client.limiter`)."""
        while (task := self.order.pop()) is not None:
            if not self.in_tail and not len(self.order):
                self.tail(on=True)
            if task.cell.model not in self.stopped:
                await self._run(task)

    def tail(self, on: bool) -> None:
        """The limiters' tail rule on (the run's planned turns left) or off (the run's end)."""
        self.in_tail = on
        for endpoint in self.state.endpoints.values():
            endpoint.limiter.tail = self._turns_left if on else None

    def _turns_left(self) -> int:
        progress = self.state.progress
        return max(1, progress.turns_total - progress.turns_done)

    async def _run(self, task: Task) -> None:
        progress = self.state.progress
        t0 = anyio.current_time()
        ep = self.episodes.get(task.spec)
        if ep is None:
            ep = self.episodes[task.spec] = generate(task.spec, self.paraphrases)
        progress.turns_total += len(ep.turns) - self.planned
        slug = task.cell.slug()
        progress.running[slug] = progress.running.get(slug, 0) + 1
        left = TurnsLeft(len(ep.turns))
        ctx = self._context(task, ep, left)
        key = EPISODE.set(affinity_key(task.cell, task.spec))  # runner.client.affinity
        age = EPISODE_AGE.set(next(self.started))  # the limiter serves the oldest first
        tail = EPISODE_LEFT.set(left)  # and, in the run's tail, an episode with no slack
        run = EPISODE_RUN.set(_lineage(ctx.episode))  # this episode run's lineage (#48)
        try:
            record = await run_episode(ctx)
        except (BriefLost, BreakerTripped) as e:  # this model's failure, its alone
            self.stopped.setdefault(task.cell.model, str(e))
            return
        finally:
            EPISODE_RUN.reset(run)
            EPISODE_LEFT.reset(tail)
            EPISODE_AGE.reset(age)
            EPISODE.reset(key)
            progress.running[slug] -= 1
        if task.cell.model in self.stopped:
            return  # ran past its model's stop (the brief lost): never logged
        self.order.observe(task, anyio.current_time() - t0)
        self._log(record, ep, slug)

    def _context(self, task: Task, ep: Episode, left: TurnsLeft) -> EpisodeContext:
        if task.trial not in self.agents:
            self.agents[task.trial] = agent_calls(self.state.grid, self.state.endpoints, task.trial)
        agents = self.agents[task.trial]
        progress = self.state.progress

        def turn_closed() -> None:  # the live view's count; the episode's turns left
            progress.turns_done += 1
            left.n -= 1

        return EpisodeContext(
            episode=cell_episode(ep, task.cell.knobs),  # the rules it places (#48)
            cell=task.cell,
            agent=agents[task.cell.model],
            next_agent=agents.get(task.cell.knobs.next_model),  # #48
            helpers=self.state.helpers,
            on_turn=turn_closed,
            trial=task.trial,
        )

    def _log(self, record: EpisodeRecord, ep: Episode, slug: str) -> None:
        """A finished episode: logged, counted, told to the observers and scored."""
        state, progress = self.state, self.state.progress
        self.writer.write(record)
        progress.done += 1
        # re-asks served beyond the plan; an episode cut short leaves its rest undone
        progress.turns_total += len(record.turns) - len(ep.turns)
        progress.per_cell[slug] = progress.per_cell.get(slug, 0) + 1
        if cut := sum(n for n, _ in record_cuts(record).values()):
            progress.cut[slug] = progress.cut.get(slug, 0) + cut
        if record.termination in MODEL_FAILURES:
            progress.model_failures += 1
        elif record.termination != "completed":
            progress.infrastructure += 1
        if state.on_episode is not None:
            state.on_episode(record)
        state.observers.episode_end(record)
        if self.scorer is not None:
            self._emit(self.scorer.add(record, self._scored_on(record, ep)))
        if len(self.episodes) > 4 * state.grid.run.concurrency:
            self.episodes.clear()  # bounded memory; regenerating is cheap

    def _scored_on(self, record: EpisodeRecord, ep: Episode) -> Episode | None:
        """``ep`` (generated for the record's task) for the scorer where its cache would
        generate the same episode (#50: one generation per spec, not two): the record's
        spec is ``ep``'s and its wording needs no paraphrases (tier 2 reads the run's, which
        the scorer's cache does not hold); else None (the scorer generates its own)."""
        spec = record.spec
        if spec.paraphrase_tier == 2 or spec != ep.spec:
            return None
        return ep

    def _emit(self, lines: list[ResultLine]) -> None:
        for line in lines:  # provisional: the run's end appends the final lines
            self.results.write(encode_line(line))
            if self.state.on_result is not None:
                self.state.on_result(line)
            self.state.observers.result(line)


def expected_seeds(grid: Grid) -> dict[CellKey, list[int]]:
    seeds = grid.seeds()
    return {c: seeds for c in grid.cells()}


def streaming_scorer(grid: Grid) -> StreamingScorer:
    """The streaming scorer of ``grid``'s run: every cell, seed and trial expected. Its
    episodes are kept for the specs in flight alone (4 x ``run.concurrency``, at least
    1,024), so a long run's memory does not grow with its episodes (#47)."""
    cache = EpisodeCache(maxsize=max(1024, 4 * grid.run.concurrency))
    return StreamingScorer(expected_seeds(grid), cache, trials=grid.run.trials)
