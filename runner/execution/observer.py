"""What a caller of a run sees as it goes: the :class:`RunObserver` hooks.

inspect_ai's hooks (``on_sample_end`` ...) in the shape of this runner: a library caller of
:func:`runner.execution.grid_run.run_async` passes observers, and each hears every notice the
run prints (one line of text), every streamed result line and every finished episode's
record, on the event loop, in order. The live view and the progress lines are the
command's own display beside them. A hook that raises stops the run (it runs inside it):
keep hooks short, and hand slow work to a queue of your own.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from protocol.records import EpisodeRecord
from scoring.results.lines import ResultLine

__all__ = ["Observers", "RunObserver"]


class RunObserver(Protocol):
    """The hooks of a run; subclass it and override what you need (the rest do nothing)."""

    def on_notice(self, text: str) -> None:
        """A line the run prints: a resumed run, a dropped log line, the preflight."""
        return None  # a no-op unless overridden

    def on_result(self, line: ResultLine) -> None:
        """A streamed (provisional) cell, contrast or helper line, as a cell completes."""
        return None  # a no-op unless overridden

    def on_episode_end(self, record: EpisodeRecord) -> None:
        """An episode's record, once it is in the log."""
        return None  # a no-op unless overridden


class Observers:
    """Every observer of one run, called in the order given."""

    def __init__(self, observers: Sequence[RunObserver] = ()) -> None:
        self._all = tuple(observers)

    def notice(self, text: str) -> None:
        for o in self._all:
            o.on_notice(text)

    def result(self, line: ResultLine) -> None:
        for o in self._all:
            o.on_result(line)

    def episode_end(self, record: EpisodeRecord) -> None:
        for o in self._all:
            o.on_episode_end(record)
