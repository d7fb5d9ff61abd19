"""The text arms: raw transcript and text checklist (Sections 3.3, Appendix E.2)."""

from __future__ import annotations

from protocol.arms.render import render_checklist
from protocol.records import Turn
from protocol.state.machine import TaskState
from runner.arms.base import ArmSession

__all__ = ["ChecklistArm", "RawArm"]


class RawArm(ArmSession):
    pass


class ChecklistArm(ArmSession):
    """The generator's exact realized state, rendered with the paper's checklist string.

    Append mode (default) keeps every copy in the history; replace mode shows the checklist
    only in the current turn (earlier user messages keep their plain text: the prompt policy,
    :mod:`protocol.arms.policy`)."""

    def addition(self, turn: Turn, state: TaskState) -> str:
        return render_checklist(state)
