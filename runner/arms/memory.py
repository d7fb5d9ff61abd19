"""The memory baselines (Section 3.3, Appendix F): top-k exchange memory and Mem0.

Each finished exchange (the user message as sent without the recall block, and the reply)
is stored; each turn recalls the ``memory_k`` items most similar to the scripted user's
message and appends them to the user turn as the recall block (user role, like the
checklist; shown on the current turn only). ``memory_mode``:

* ``record``: the transcript is replaced by the brief, the recall block and the last
  ``memory_window`` exchanges (the paper's last two), so the prompt does not grow;
* ``augment``: the full transcript plus the recall block.

The modes and the window are the memory arms' prompt policy (:mod:`protocol.arms.policy`).
``memory-topk`` stores the exchanges themselves in a faiss index (:mod:`runner.memory.topk`);
``mem0`` (:mod:`runner.arms.mem0`) gives them to the real mem0 library, whose extraction call is made by the cell's
model on the cell's endpoint and logged as a ``memory`` helper call. Embedding calls are
``embedding`` helper calls. Both stores are per episode: no shared state, no lock.
"""

from __future__ import annotations

from collections.abc import Sequence

from protocol import strings
from protocol.arms.render import compose_user_message, render_recall
from protocol.records import Booking, CallRecord, Turn
from protocol.state.machine import TaskState
from runner.arms.base import ArmSession, EpisodeContext, Shaped
from runner.memory.embedder import Embedder, EndpointEmbedder
from runner.memory.services import MemoryServices
from runner.memory.topk import ExchangeIndex

__all__ = ["MemoryArm", "TopKArm", "memory_services", "recall_embedder"]


def memory_services(ctx: EpisodeContext) -> MemoryServices:
    if ctx.helpers is None:
        raise ValueError(f"arm {ctx.cell.arm!r} needs the run's helpers (its endpoints)")
    return ctx.helpers.memory


def recall_embedder(ctx: EpisodeContext) -> Embedder:
    endpoint, model = memory_services(ctx).embeddings(ctx.cell)
    return EndpointEmbedder(endpoint, model)


class MemoryArm(ArmSession):
    """What both memory arms share: the modes, the window, the recall block."""

    def __init__(self, ctx: EpisodeContext) -> None:
        super().__init__(ctx)
        self.embedder = recall_embedder(ctx)
        self._user = ""  # this turn's user message without the recall block
        self._pending: tuple[str, str] | None = None  # the last exchange, not yet stored

    async def recall(self, query: str, calls: list[CallRecord]) -> list[str]:
        raise NotImplementedError

    async def shape(self, turn: Turn, state: TaskState, notices: Sequence[str]) -> Shaped:
        calls: list[CallRecord] = []
        recalled = await self.recall(turn.text, calls)
        self.ctx.calls.extend(calls)
        block = render_recall(recalled)
        sent = compose_user_message(turn.text, notices=list(notices), addition=block)
        self._user = self.kept(turn, notices, sent)  # the policy keeps the plain message
        return Shaped(sent=sent, kept=self._user, arm_text=block)

    def observe(self, turn: Turn, admitted: Sequence[Booking], reply: str) -> None:
        self._pending = (self._user, reply)

    def restart(self) -> None:
        """The last exchange is not stored (issue #48; the stores drop theirs below)."""
        self._pending = None


class TopKArm(MemoryArm):
    """Cosine top-k over the episode's stored exchanges (faiss)."""

    def __init__(self, ctx: EpisodeContext) -> None:
        super().__init__(ctx)
        self.index: ExchangeIndex | None = None

    def restart(self) -> None:
        """A restart without the arm's handoff empties the stored exchanges (issue #48)."""
        super().restart()
        self.index = None

    async def recall(self, query: str, calls: list[CallRecord]) -> list[str]:
        stored = (
            [strings.MEMORY_EXCHANGE.format(user=self._pending[0], reply=self._pending[1])]
            if self._pending
            else []
        )
        self._pending = None
        rows = await self.embedder.embed([*stored, query], calls)  # one request per turn
        if self.index is None:
            self.index = ExchangeIndex(rows.shape[1])
        if stored:
            self.index.add(rows[:1], stored)
        return [text for _, text in self.index.search(rows[-1], self.knobs.memory_k)]
