"""A run's plan: the episodes it still has to run, expanded lazily (#47).

A grid at the episode ceiling (250,000: :data:`runner.grid.checks.MAX_EPISODES`) listed as
tasks held about 46 MiB of ``Task`` objects, and a resume listed them twice more (the
expansion, the tasks left, a dict of every task by key). A :class:`Plan` holds the grid,
the keys of the episodes already done and the cells that run, and nothing per episode to
run: iterating it walks :func:`runner.grid.expand.expand` (in run order, one task at a
time) and skips what is done; its counts (per cell and in all) are arithmetic, cells x seeds
x trials less what is done, so the scheduler knows its totals and its last waves without a
list. What it holds per episode is the done keys of a resume, one ``(slug, seed)`` tuple
per finished episode (the slug string shared by its cell's keys: about 120 bytes each).

:func:`grid_records` is the resume's check that a logged record is one of the grid's
episodes (same cell, same spec, same trial), made per record from the grid's cells and
seeds instead of a dict of every task.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Iterator, Mapping
from pathlib import Path

from protocol.records import CellKey, EpisodeRecord, trial_slug
from runner.grid.expand import Grid, Task, expand
from runner.rundir.logs import LogReport, iter_records

__all__ = ["DoneRecords", "Plan", "grid_records", "own_records"]


class Plan:
    """The tasks of ``grid`` not in ``done`` (log keys, :meth:`Task.key`), of ``cells`` only
    when given: a sized, re-iterable collection in run order that lists nothing.
    ``done_per_cell``: how many of ``done`` each cell holds (they are the grid's own)."""

    def __init__(
        self,
        grid: Grid,
        done: Collection[tuple[str, int]] = frozenset(),
        done_per_cell: Mapping[CellKey, int] | None = None,
        cells: Collection[CellKey] | None = None,
    ) -> None:
        self.grid = grid
        self._done = done
        self._done_per_cell: Mapping[CellKey, int] = done_per_cell or {}
        per_cell = len(grid.seeds()) * grid.run.trials
        counts = {
            c: per_cell - self._done_per_cell.get(c, 0)
            for c in grid.cells()
            if cells is None or c in cells
        }
        self._counts = {c: n for c, n in counts.items() if n > 0}

    def __iter__(self) -> Iterator[Task]:
        done = self._done
        for task in expand(self.grid, self._counts):
            if not done or task.key() not in done:
                yield task

    def __len__(self) -> int:
        return sum(self._counts.values())

    def __bool__(self) -> bool:
        return bool(self._counts)

    def cell_counts(self) -> dict[CellKey, int]:
        """Each cell with an episode to run, and how many, in run order."""
        return dict(self._counts)

    def heads(self) -> list[Task]:
        """One task of each cell with an episode to run (its first seed's, trial 0): what a
        check per cell (the preflight's stops) reads."""
        seed = self.grid.seeds()[0]
        return [Task(cell=c, spec=c.spec(seed, self.grid.run.generator)) for c in self._counts]

    def only(self, cells: Collection[CellKey]) -> Plan:
        """This plan for ``cells`` alone."""
        keep = [c for c in self._counts if c in cells]
        return Plan(self.grid, self._done, self._done_per_cell, cells=frozenset(keep))


def grid_records(
    grid: Grid,
    records: Mapping[tuple[str, int], EpisodeRecord],
    report: LogReport | None = None,
) -> dict[tuple[str, int], EpisodeRecord]:
    """The records of ``records`` that are one of ``grid``'s episodes (same cell, same
    episode spec, same trial: the key names it); the others are counted in
    ``report.foreign`` ("slug seed" each). Nothing is listed per episode of the grid."""
    own = _Own(grid, report)
    return {key: rec for key, rec in records.items() if own(key, rec)}


def own_records(
    grid: Grid,
    records: Iterable[tuple[tuple[str, int], EpisodeRecord]],
    report: LogReport | None = None,
) -> Iterator[EpisodeRecord]:
    """:func:`grid_records` over a stream of (key, record) pairs (:func:`iter_records`),
    one at a time."""
    own = _Own(grid, report)
    return (rec for key, rec in records if own(key, rec))


class _Own:
    """Whether a logged (key, record) is one of ``grid``'s episodes; the others are counted
    in ``report.foreign``."""

    def __init__(self, grid: Grid, report: LogReport | None) -> None:
        self.slugs = {
            trial_slug(c.slug(), t): c for c in grid.cells() for t in range(grid.run.trials)
        }
        self.seeds = frozenset(grid.seeds())
        self.generator = grid.run.generator
        self.report = report

    def __call__(self, key: tuple[str, int], rec: EpisodeRecord) -> bool:
        cell = self.slugs.get(key[0])
        if (
            cell is not None
            and key[1] in self.seeds
            and cell == rec.cell
            and cell.spec(key[1], self.generator) == rec.spec
        ):
            return True
        if self.report is not None:
            self.report.foreign.append(f"{key[0]} seed {key[1]}")
        return False


class DoneRecords:
    """The records of a resume's done episodes (``keys``) in ``run_dir``'s logs, read again
    each time they are walked (one record in memory at a time, #47), in the logs' order."""

    def __init__(self, run_dir: Path, keys: Collection[tuple[str, int]]) -> None:
        self.run_dir = run_dir
        self.keys = keys

    def __len__(self) -> int:
        return len(self.keys)

    def __iter__(self) -> Iterator[EpisodeRecord]:
        if not self.keys:
            return
        for key, rec in iter_records(self.run_dir):
            if key in self.keys:
                yield rec
