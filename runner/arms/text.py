"""The text arms: raw transcript and text checklist (Sections 3.3, Appendix E.2)."""

from __future__ import annotations

from collections.abc import Sequence

from protocol.records import Turn
from protocol.render import compose_user_message, render_checklist
from protocol.state import TaskState
from runner.arms.base import ArmSession, Shaped

__all__ = ["ChecklistArm", "RawArm"]


class RawArm(ArmSession):
    name = "raw"


class ChecklistArm(ArmSession):
    """The generator's exact realized state, rendered with the paper's checklist string.

    Append mode (default) keeps every copy in the history; replace mode shows the checklist
    only in the current turn (earlier user messages keep their plain text)."""

    name = "checklist"

    def addition(self, turn: Turn, state: TaskState) -> str:
        return render_checklist(state)

    async def shape(self, turn: Turn, state: TaskState, notices: Sequence[str]) -> Shaped:
        shaped = await super().shape(turn, state, notices)
        if self.knobs.checklist_mode == "replace":
            shaped.kept = compose_user_message(turn.text, notices=list(notices))
        return shaped
