"""Seed expansion streams (#47): a run's plan is the grid's expansion, walked one task at a
time, never listed. A plan at the episode ceiling holds nothing per episode (its memory is
O(1) in seeds), counts its episodes per cell without listing them, skips what a resume
found done, and the scheduler pulls its tasks as workers free up: the first episode ends
while almost all of a 10,000-episode plan is still unexpanded. The streaming scorer keeps
the episodes of the specs in flight only, and a run's final lines stream its logs (one
record at a time) and equal a rescore of every record read at once. What the scorer keeps
per record, read back or scored in the run, is a compact score sharing its cell key and its
scorings with the others: a few hundred bytes."""

from __future__ import annotations

import itertools
import tracemalloc
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import msgspec

from protocol.records import EpisodeRecord
from runner.execution.connect import open_endpoints
from runner.execution.grid_run import _final_lines
from runner.execution.order import TaskOrder
from runner.execution.plan import Plan, grid_records
from runner.execution.scheduler import RunState, pending_tasks, run_grid, streaming_scorer
from runner.gates.helper_models import Helpers
from runner.grid.expand import MAX_EPISODES, Task, expand, parse_grid
from runner.rundir.logs import LogReport, iter_records, read_logs
from scoring.replay.episode_score import score_episode
from scoring.replay.ground_truth import EpisodeCache
from scoring.results.cells import cell_line
from scoring.results.compact import Shared
from scoring.results.lines import HelperLine
from scoring.results.offline import rescore, score_records


def _grid(seeds: str, arms: tuple[str, ...] = ("raw", "checklist"), concurrency: int = 4) -> Any:
    return parse_grid(
        {
            "run": {
                "seeds": seeds,
                "graphs": [{"steps": 5, "density": 0.15}],
                "arms": list(arms),
                "concurrency": concurrency,
            },
            "endpoints": [{"name": "embedded", "base_url": "embedded"}],
            "models": [{"name": "scripted/perfect", "endpoint": "embedded"}],
        }
    )


def test_a_plan_at_the_ceiling_holds_nothing_per_episode() -> None:
    grid = _grid(f"0-{MAX_EPISODES // 2 - 1}")  # 2 arms: 250,000 episodes
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        plan = Plan(grid)
        first = next(iter(plan))
        held = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert len(plan) == MAX_EPISODES and bool(plan)
    assert list(plan.cell_counts().values()) == [MAX_EPISODES // 2] * 2
    assert first == next(expand(grid))
    assert held < 1 << 20, held  # listed, the tasks held about 46 MiB


def test_a_plan_skips_what_is_done_and_counts_without_listing() -> None:
    grid = _grid("0-9")
    every = list(expand(grid))
    done = every[::3]
    per_cell: dict[Any, int] = {}
    for t in done:
        per_cell[t.cell] = per_cell.get(t.cell, 0) + 1
    plan = Plan(grid, frozenset(t.key() for t in done), per_cell)
    assert list(plan) == [t for t in every if t not in done]
    assert len(plan) == len(every) - len(done)
    raw = [c for c in plan.cell_counts() if c.arm == "raw"]
    only = plan.only(raw)
    assert list(only) == [t for t in every if t not in done and t.cell.arm == "raw"]
    assert len(only) == len(list(only))
    assert [t.cell for t in plan.heads()] == list(plan.cell_counts())


def test_the_order_pulls_one_task_at_a_time_until_its_tail() -> None:
    pulled: list[Task] = []
    every = list(expand(_grid("0-49")))  # 100 tasks

    def source() -> Iterator[Task]:
        for t in every:
            pulled.append(t)
            yield t

    order = TaskOrder(source(), window=10, total=len(every))
    assert not pulled and len(order) == 100
    assert [order.pop() for _ in range(5)] == every[:5]
    assert len(pulled) == 5 and len(order) == 95
    for _ in range(85):
        order.pop()
    assert len(pulled) == 90
    order.pop()  # the last window: listed for the longest-first tail
    assert len(pulled) == 100 and len(order) == 9


async def test_the_first_episode_ends_before_the_plan_is_expanded(tmp_path: Path) -> None:
    grid = _grid("0-4999", concurrency=2)  # 10,000 episodes
    pulled = 0

    class Counted(Plan):
        def __iter__(self) -> Iterator[Task]:
            nonlocal pulled
            for task in super().__iter__():
                pulled += 1
                yield task

    plan = Counted(grid)
    ended: list[int] = []
    async with open_endpoints(grid) as endpoints:
        state = RunState(grid=grid, out=tmp_path, endpoints=endpoints)
        with anyio.CancelScope() as scope:

            def first_end(record: EpisodeRecord) -> None:
                ended.append(pulled)
                scope.cancel()

            state.on_episode = first_end
            await run_grid(state, plan)
    assert state.progress.total == len(plan) == 10_000
    assert ended and ended[0] <= 8  # the first task (its turns planned) and the workers' few


async def test_a_resumed_run_runs_only_what_is_left(tmp_path: Path) -> None:
    grid = _grid("0-3")
    async with open_endpoints(grid) as endpoints:
        state = RunState(grid=grid, out=tmp_path, endpoints=endpoints)
        with anyio.CancelScope() as scope:
            state.on_episode = lambda record: scope.cancel() if state.progress.done >= 3 else None
            await run_grid(state, Plan(grid))
        done = state.progress.done
        plan, records = pending_tasks(grid, tmp_path)
        assert len(records) == done and len(plan) == 8 - done == len(list(plan))
        state = RunState(grid=grid, out=tmp_path, endpoints=endpoints)
        await run_grid(state, plan, streaming_scorer(grid))
    assert state.progress.done == 8 - done
    logged = read_logs(tmp_path)
    assert len(logged) == 8
    assert grid_records(grid, logged, LogReport()) == logged


def test_the_streaming_scorer_keeps_the_specs_in_flight_only() -> None:
    grid = _grid("0-2999", arms=("raw",))
    scorer = streaming_scorer(grid)
    assert scorer.cache.maxsize == 1024  # 4 x concurrency, at least 1,024
    cache = EpisodeCache(maxsize=2)
    specs = [t.spec for t in expand(_grid("0-2", arms=("raw",)))]
    first = cache.get(specs[0])
    cache.get(specs[1])
    assert cache.get(specs[0]) is first  # a hit is the most recently used
    cache.get(specs[2])  # drops specs[1], the least recently used
    assert len(cache) == 2 and cache.get(specs[0]) is first
    again = cache.get(specs[1])
    assert again == EpisodeCache().get(specs[1])  # regenerated, the same episode


async def test_the_final_lines_stream_the_logs_and_equal_a_rescore_of_every_record(
    tmp_path: Path,
) -> None:
    grid = _grid("0-3", arms=("raw", "enforce"))
    async with open_endpoints(grid) as endpoints:
        state = RunState(
            grid=grid, out=tmp_path, endpoints=endpoints, helpers=Helpers(grid, tmp_path, endpoints)
        )
        await run_grid(state, Plan(grid))
    logs = sorted((tmp_path / "logs").glob("*.jsonl"))
    first = logs[0].read_bytes().splitlines(keepends=True)[0]
    with logs[0].open("ab") as f:  # a rerun's later record of a key, and a corrupt line
        f.write(first + b"{not json\n")
    other = _grid("0-3", arms=("checklist",))
    foreign = next(iter(read_logs(tmp_path).values()))
    moved = msgspec.structs.replace(foreign, cell=next(iter(other.cells())))
    with (tmp_path / "logs" / "other.jsonl").open("ab") as f:
        f.write(msgspec.json.encode(moved) + b"\n")
    old_report, new_report = LogReport(), LogReport()
    records = read_logs(tmp_path, old_report)
    assert list(iter_records(tmp_path, LogReport())) == list(records.items())
    expected = rescore(grid_records(grid, records, old_report).values())
    got = _final_lines(tmp_path, grid, new_report)
    assert got == expected
    assert any(isinstance(line, HelperLine) for line in got)  # the gate's compile and matcher
    assert new_report == old_report and new_report.duplicates == 1
    assert len(new_report.foreign) == 1 and len(new_report.corrupt) == 1


def _read_back(records: list[EpisodeRecord], n: int) -> Iterator[EpisodeRecord]:
    """``n`` records as a resume reads them: each decoded from its own log line (its own
    cell key, knobs and strings), trial k of its seed (so each is its own unit, and its
    replay is its seed's: no mismatch)."""
    lines = [msgspec.json.encode(r) for r in records]
    for k in range(n):
        record = msgspec.json.decode(lines[k % len(lines)], type=EpisodeRecord)
        yield msgspec.structs.replace(record, trial=k // len(lines))


async def test_a_score_kept_per_read_back_record_is_small_and_shared(tmp_path: Path) -> None:
    grid = _grid("0-3", arms=("raw",))
    async with open_endpoints(grid) as endpoints:
        await run_grid(RunState(grid=grid, out=tmp_path, endpoints=endpoints), Plan(grid))
    logged = list(read_logs(tmp_path).values())
    scorer = streaming_scorer(grid)
    tracemalloc.start()
    try:
        records = _read_back(logged, 400)
        for record in itertools.islice(records, 100):  # the caches and the shared parts fill
            scorer.add(record)
        before = tracemalloc.get_traced_memory()[0]
        for record in records:
            scorer.add(record)
        del record
        grown = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    (kept,) = scorer.scores.values()
    assert len(kept) == 400
    assert grown < 300 * 600, grown  # ~250 B each; unshared, a read-back score held ~1.8 KB
    first = next(iter(kept.values()))
    assert all(s.cell is first.cell and s.primary is first.primary for s in kept.values())
    # shared, the scores read what unshared ones do: the same lines
    plain = [score_episode(r, EpisodeCache().get(r.spec), detail=False) for r in logged]
    cell = next(iter(grid.cells()))
    assert cell_line(cell, plain) == cell_line(cell, [s for s in kept.values() if s.trial == 0])
    rescored = score_records(_read_back(logged, 40))
    assert all(s.cell is rescored[0].cell for s in rescored)  # the final rescore's too
    assert all(s.decline_aware is rescored[0].decline_aware for s in rescored)
    detailed = score_episode(logged[0], EpisodeCache().get(logged[0].spec))
    assert detailed.primary.turns and Shared()(detailed) is detailed  # a caller's to keep
