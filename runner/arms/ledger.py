"""The self-ledger (Section 5.2): the brief carries the ledger clause; the agent's own
``LEDGER <code> <STATUS>`` lines, merged over its replies (last entry per code wins), are
rendered back every turn in the checklist's slot (nothing until it has written one); no
matcher, no directives, no compile."""

from __future__ import annotations

from collections.abc import Sequence

from protocol.arms.render import render_ledger
from protocol.records import Booking, Turn
from protocol.state.machine import TaskState
from protocol.state.receipts import parse_ledger
from runner.arms.base import ArmSession, EpisodeContext

__all__ = ["SelfLedger"]


class SelfLedger(ArmSession):
    """The self-ledger: its brief carries the ledger clause (the prompt policy,
    :mod:`protocol.arms.policy`)."""

    def __init__(self, ctx: EpisodeContext) -> None:
        super().__init__(ctx)
        self.ledger: dict[str, str] = {}

    def addition(self, turn: Turn, state: TaskState) -> str:
        return render_ledger(self.ledger, self.episode.steps)

    def observe(self, turn: Turn, admitted: Sequence[Booking], reply: str) -> None:
        self.ledger.update(parse_ledger(reply))

    def restart(self) -> None:
        """The ledger is the agent's own lines, read from its replies: a restart without the
        arm's handoff drops it (issue #48)."""
        self.ledger.clear()
