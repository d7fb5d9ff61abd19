"""The Mem0 baseline (Appendix F): the real mem0 library, bound lazily by its row (importing
mem0 takes seconds), on the memory arms' shared shaping (:mod:`runner.arms.memory`)."""

from __future__ import annotations

from protocol.records import CallRecord
from runner.arms.base import EpisodeContext
from runner.arms.memory import MemoryArm, memory_services
from runner.memory.mem0_store import Mem0Store

__all__ = ["Mem0Arm"]


class Mem0Arm(MemoryArm):
    """The real mem0 library: memories extracted from each exchange, searched per turn."""

    def __init__(self, ctx: EpisodeContext) -> None:
        super().__init__(ctx)
        self.store = Mem0Store(memory_services(ctx).chat(ctx.cell), self.embedder)

    def restart(self) -> None:
        """A restart without the arm's handoff starts an empty store (issue #48)."""
        super().restart()
        self.store = Mem0Store(memory_services(self.ctx).chat(self.ctx.cell), self.embedder)

    async def recall(self, query: str, calls: list[CallRecord]) -> list[str]:
        if self._pending is not None:
            user, reply = self._pending
            self._pending = None
            await self.store.add(user, reply, query, calls)
        return await self.store.search(query, self.knobs.memory_k, calls)
