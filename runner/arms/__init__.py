"""The arms of the ladder, by the names used on the command line and in logs."""

from __future__ import annotations

from runner.arms.base import Admission, ArmSession, EpisodeContext, Shaped
from runner.arms.gates import DirectiveGate, EnforcementGate, HybridGate, SelfLedger
from runner.arms.text import ChecklistArm, RawArm
from runner.memory import MEMORY_ARMS

__all__ = ["ARMS", "Admission", "ArmSession", "EpisodeContext", "Shaped", "make_arm", "register"]

ARMS: dict[str, type[ArmSession]] = {
    "raw": RawArm,
    "checklist": ChecklistArm,
    "ledger": SelfLedger,
    "directive": DirectiveGate,
    "enforce": EnforcementGate,
    "hybrid": HybridGate,
}


def register(name: str, cls: type[ArmSession]) -> None:
    ARMS[name] = cls


def make_arm(ctx: EpisodeContext) -> ArmSession:
    if ctx.cell.arm in MEMORY_ARMS and ctx.cell.arm not in ARMS:
        # The memory arms import faiss / numpy / mem0: only when one runs.
        from runner.arms.memory import MEMORY_ARM_CLASSES

        ARMS.update(MEMORY_ARM_CLASSES)
    try:
        cls = ARMS[ctx.cell.arm]
    except KeyError:
        raise ValueError(
            f"arm {ctx.cell.arm!r} is not implemented; available: {', '.join(ARMS)}"
        ) from None
    return cls(ctx)
