"""The helpers for one run: the gates' compiler and matcher sharing one set of counters,
and what the memory arms need of the run (:mod:`runner.memory.services`).

``Helpers(grid, out_dir, endpoints)`` is built once per run (``runner.execution.grid_run``) and shared
by every episode through ``EpisodeContext.helpers``. The compiler lives in
:mod:`runner.gates.compiler`, the matcher in :mod:`runner.gates.matcher`, their disk caches and single
flight in :mod:`runner.gates.cache`. Each call returns the call records to log with its answer;
the helpers never touch an episode's context.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path

from protocol.records import CallRecord, CellKey, Episode, Turn
from runner.gates.cache import HelperStats, MatchAnswer
from runner.gates.compiler import Compiled, Compiler
from runner.gates.matcher import Matcher
from runner.grid.expand import Grid, Task
from runner.memory.services import MemoryEndpoint, MemoryServices

__all__ = ["Compiled", "HelperStats", "Helpers", "MatchAnswer"]


class Helpers:
    """Compiler and matcher of one run."""

    def __init__(
        self, grid: Grid, out_dir: Path | str, endpoints: Mapping[str, MemoryEndpoint]
    ) -> None:
        out = Path(out_dir)
        self.stats = HelperStats()
        self.compiler = Compiler(grid, out, endpoints, self.stats)
        self.matcher = Matcher(grid, out, endpoints, self.stats)
        self.memory = MemoryServices(grid, endpoints)  # the memory arms' (Appendix F)

    async def compile(self, cell: CellKey, episode: Episode) -> tuple[Compiled, list[CallRecord]]:
        return await self.compiler.compile(cell, episode)

    async def match(
        self, cell: CellKey, episode: Episode, turn: Turn, *, reverse: bool = False
    ) -> tuple[MatchAnswer, list[CallRecord]]:
        return await self.matcher.match(cell, episode, turn, reverse=reverse)

    async def precompile(self, tasks: Iterable[Task], *, concurrency: int = 16) -> int:
        return await self.compiler.precompile(tasks, concurrency=concurrency)
