"""The arms of the ladder, by the names used on the command line and in logs."""

from __future__ import annotations

from runner.arms.base import Admission, ArmSession, EpisodeContext, Shaped
from runner.arms.gates import DirectiveGate, EnforcementGate, HybridGate, SelfLedger
from runner.arms.text import ChecklistArm, RawArm

__all__ = [
    "ARMS",
    "HARNESS_ARMS",
    "Admission",
    "ArmSession",
    "EpisodeContext",
    "Shaped",
    "make_arm",
    "register",
]

ARMS: dict[str, type[ArmSession]] = {
    "raw": RawArm,
    "checklist": ChecklistArm,
    "ledger": SelfLedger,
    "directive": DirectiveGate,
    "enforce": EnforcementGate,
    "hybrid": HybridGate,
}


# The arms the tool harness runs (Table 19; enforce with binding "state" or "request").
HARNESS_ARMS: tuple[str, ...] = ("raw", "checklist", "directive", "enforce")


def register(name: str, cls: type[ArmSession]) -> None:
    ARMS[name] = cls


def make_arm(ctx: EpisodeContext) -> ArmSession:
    try:
        cls = ARMS[ctx.cell.arm]
    except KeyError:
        raise ValueError(
            f"arm {ctx.cell.arm!r} is not implemented; available: {', '.join(ARMS)}"
        ) from None
    return cls(ctx)
