"""The arms of the ladder, by the names used on the command line and in logs.

Each row of the arm table (:mod:`protocol.arms.table`) names its session class by a lazy
``"module:Class"`` path (or the class), bound in :mod:`runner.arms.registry` on first use: no
arm's module is imported with this package, so the memory arms' (faiss, numpy, mem0) load only
when one runs. A new arm is its session's module plus its row: docs/extending.md.
"""

from __future__ import annotations

from collections.abc import Iterable

from runner.arms import registry
from runner.arms.base import Admission, AgentCall, ArmSession, EpisodeContext, Shaped

__all__ = [
    "Admission",
    "AgentCall",
    "ArmSession",
    "EpisodeContext",
    "Shaped",
    "load_arms",
    "make_arm",
    "registry",
]


def load_arms(names: Iterable[str]) -> None:
    """Import the session classes of ``names`` that are not loaded yet: the memory arms
    import faiss / numpy / mem0 (seconds), so only when one runs, and best before the first
    episode starts (the scheduler calls this) rather than inside it."""
    for name in names:
        registry.get(name)


def make_arm(ctx: EpisodeContext) -> ArmSession:
    """The session of ``ctx``'s arm for one episode."""
    return registry.get(ctx.cell.arm)(ctx)
