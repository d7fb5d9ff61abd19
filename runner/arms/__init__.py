"""The arms of the ladder, by the names used on the command line and in logs.

The registry below maps each name of the arm table (:mod:`protocol.arms`) to its session
class; it is checked against the table at import, so a name cannot be in one and not the other.
"""

from __future__ import annotations

from protocol.arms import ARM_NAMES
from runner.arms.base import Admission, AgentCall, ArmSession, EpisodeContext, Shaped
from runner.arms.gates import DirectiveGate, EnforcementGate, HybridGate, SelfLedger
from runner.arms.text import ChecklistArm, RawArm

__all__ = [
    "ARMS",
    "Admission",
    "AgentCall",
    "ArmSession",
    "EpisodeContext",
    "Shaped",
    "make_arm",
]

ARMS: dict[str, type[ArmSession]] = {
    "raw": RawArm,
    "checklist": ChecklistArm,
    "ledger": SelfLedger,
    "directive": DirectiveGate,
    "enforce": EnforcementGate,
    "hybrid": HybridGate,
}

if tuple(ARMS) != ARM_NAMES:  # pragma: no cover - an import-time consistency check
    raise RuntimeError(
        f"runner.arms registers {tuple(ARMS)}, the arm table (protocol.arms) lists {ARM_NAMES}"
    )


def make_arm(ctx: EpisodeContext) -> ArmSession:
    try:
        cls = ARMS[ctx.cell.arm]
    except KeyError:
        raise ValueError(
            f"arm {ctx.cell.arm!r} is not implemented; available: {', '.join(ARMS)}"
        ) from None
    return cls(ctx)
