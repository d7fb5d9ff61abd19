"""The arms of the ladder, by the names used on the command line and in logs.

Each name of the arm table (:mod:`protocol.arms.table`) is bound to its session class in
:mod:`runner.arms.registry`: the text arms and the gates register where they are defined
(imported below), the memory arms by module path, imported on first use (faiss, numpy,
mem0). A new arm: docs/extending.md.
"""

from __future__ import annotations

from collections.abc import Iterable

import runner.arms.gates
import runner.arms.text  # noqa: F401  (the modules register their arms)
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

registry.register("memory-topk", lazy="runner.arms.memory:TopKArm")
registry.register("mem0", lazy="runner.arms.mem0:Mem0Arm")


def load_arms(names: Iterable[str]) -> None:
    """Import the session classes of ``names`` that are not loaded yet: the memory arms
    import faiss / numpy / mem0 (seconds), so only when one runs, and best before the first
    episode starts (the scheduler calls this) rather than inside it."""
    for name in names:
        registry.get(name)


def make_arm(ctx: EpisodeContext) -> ArmSession:
    """The session of ``ctx``'s arm for one episode."""
    return registry.get(ctx.cell.arm)(ctx)
