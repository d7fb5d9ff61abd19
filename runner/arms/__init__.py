"""The arms of the ladder, by the names used on the command line and in logs.

The registry below maps each name of the arm table (:mod:`protocol.arms`) to its session
class; it is checked against the table at import, so a name cannot be in one and not the other.
"""

from __future__ import annotations

from collections.abc import Iterable

from protocol.arms import ARM_NAMES, MEMORY_ARMS
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
    "load_arms",
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

# The memory arms (runner.arms.memory) import faiss / numpy / mem0, so they register on
# first use (make_arm); the check counts them by the table's names.
_REGISTERED = (*ARMS, *MEMORY_ARMS)
if _REGISTERED != ARM_NAMES:  # pragma: no cover - an import-time consistency check
    raise RuntimeError(
        f"runner.arms registers {_REGISTERED}, the arm table (protocol.arms) lists {ARM_NAMES}"
    )


def load_arms(names: Iterable[str]) -> None:
    """Import the session classes of ``names`` that are not loaded yet: the memory arms
    import faiss / numpy / mem0 (seconds), so only when one runs, and best before the first
    episode starts (the scheduler calls this) rather than inside it."""
    if any(n in MEMORY_ARMS and n not in ARMS for n in names):
        from runner.arms.memory import MEMORY_ARM_CLASSES

        if tuple(MEMORY_ARM_CLASSES) != MEMORY_ARMS:  # pragma: no cover - consistency check
            raise RuntimeError(f"runner.arms.memory registers {tuple(MEMORY_ARM_CLASSES)}")
        if "mem0" in names:
            import runner.memory.mem0_store  # noqa: F401  (mem0 itself: the slow import)
        ARMS.update(MEMORY_ARM_CLASSES)


def make_arm(ctx: EpisodeContext) -> ArmSession:
    load_arms([ctx.cell.arm])
    try:
        cls = ARMS[ctx.cell.arm]
    except KeyError:
        raise ValueError(
            f"arm {ctx.cell.arm!r} is not implemented; available: {', '.join(ARMS)}"
        ) from None
    return cls(ctx)
