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

from collections.abc import Iterable

from runner.grid.expand import Task

__all__ = ["TaskOrder"]


class TaskOrder:
    """``tasks`` pulled one at a time (a run's lazy plan is never listed, #47) until the last
    ``window`` of them, which are listed for the longest-first tail; ``total``: how many
    ``tasks`` yields (None: ``tasks`` is listed and counted)."""

    def __init__(self, tasks: Iterable[Task], window: int, total: int | None = None) -> None:
        if total is None:
            tasks = list(tasks)
            total = len(tasks)
        self._source = iter(tasks)
        self._left = total  # not yet pulled from the source
        self._window = max(0, window)
        self._tail: list[Task] | None = None
        self._tail_slugs: list[str] = []  # the tail's cell slugs, made once (#50), in step
        self._seconds: dict[str, tuple[float, int]] = {}  # cell slug -> (total s, episodes)

    def __len__(self) -> int:
        return self._left + (len(self._tail) if self._tail else 0)

    def observe(self, task: Task, seconds: float) -> None:
        """An episode of ``task``'s cell took ``seconds``."""
        slug = task.cell.slug()
        total, n = self._seconds.get(slug, (0.0, 0))
        self._seconds[slug] = (total + seconds, n + 1)

    def _estimate(self, slug: str) -> float:
        total, n = self._seconds.get(slug, (0.0, 0))
        return total / n if n else float("inf")

    def pop(self) -> Task | None:
        """The next task to start (None when all have started)."""
        if self._tail is None and self._left <= self._window:
            self._tail = list(self._source)
            self._tail_slugs = [t.cell.slug() for t in self._tail]
            self._left = 0
        if self._tail is None:
            self._left -= 1
            return next(self._source, None)
        tail = self._tail
        if not tail:
            return None
        slugs = self._tail_slugs  # a slug per pop and task would cost O(window) each (#50)
        # the longest estimate, ties in run order: one estimate per cell in the tail (a
        # handful), not one per task (#50), then the first task of the first such cell
        estimates = {slug: self._estimate(slug) for slug in dict.fromkeys(slugs)}
        longest = max(estimates.values())
        best = slugs.index(next(s for s, e in estimates.items() if e == longest))
        slugs.pop(best)
        return tail.pop(best)
