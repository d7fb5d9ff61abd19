"""The order episodes start in: run order, then longest first for the run's last waves.

Tasks start in :func:`runner.grid.expand.expand`'s order (configuration by configuration, so
cells finish one after another and results stream). At the end of a run that order makes a
tail: once fewer episodes remain than the servers have slots, slots idle until the last
episode ends, and when that last one is of a long arm (a checklist resending the longest
prompts, a gate arm with a matcher call every turn) started late, the idle stretch is one
long episode. So the last ``window`` tasks (two waves of ``run.concurrency`` episodes)
start longest first (LPT): by the mean duration of the episodes of their cell finished so
far in this run (on the event loop's clock), cells not yet seen first, ties in run order.
"""

from __future__ import annotations

from collections.abc import Sequence

from runner.grid.expand import Task

__all__ = ["TaskOrder"]


class TaskOrder:
    def __init__(self, tasks: Sequence[Task], window: int) -> None:
        self._tasks = list(tasks)
        self._next = 0
        self._window = max(0, window)
        self._tail: list[Task] | None = None
        self._seconds: dict[str, tuple[float, int]] = {}  # cell slug -> (total s, episodes)

    def __len__(self) -> int:
        return len(self._tasks) - self._next + (len(self._tail) if self._tail else 0)

    def observe(self, task: Task, seconds: float) -> None:
        """An episode of ``task``'s cell took ``seconds``."""
        slug = task.cell.slug()
        total, n = self._seconds.get(slug, (0.0, 0))
        self._seconds[slug] = (total + seconds, n + 1)

    def _estimate(self, task: Task) -> float:
        total, n = self._seconds.get(task.cell.slug(), (0.0, 0))
        return total / n if n else float("inf")

    def pop(self) -> Task | None:
        """The next task to start (None when all have started)."""
        if self._tail is None and len(self._tasks) - self._next <= self._window:
            self._tail = self._tasks[self._next :]
            self._next = len(self._tasks)
        if self._tail is None:
            task = self._tasks[self._next]
            self._next += 1
            return task
        tail = self._tail
        if not tail:
            return None
        best = max(range(len(tail)), key=lambda i: (self._estimate(tail[i]), -i))
        return tail.pop(best)
