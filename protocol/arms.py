"""The arm table: every arm's name, its rung on the ladder, and what it needs.

One place for these facts (Sections 3.2, 3.3, 4.2; Appendices D.1, D.3, E.2): the grid checks
arm names against it, the compile helper reads which arms compile, the scoring reads the
ladder's rungs and the side contrasts, :mod:`protocol.policy` reads each arm's prompt policy,
and :mod:`runner.arms.registry` binds each name to its session class. Names are the ones used
on the command line and in logs. A new arm is one row here plus its session's file
(docs/extending.md).
"""

from __future__ import annotations

from typing import Literal

import msgspec

__all__ = [
    "ARM_NAMES",
    "ARM_TABLE",
    "HARNESS_ARMS",
    "LADDER",
    "MEMORY_ARMS",
    "SIDE_CONTRASTS",
    "ArmSpec",
    "PromptKind",
    "arm_rank",
    "arm_spec",
]


# The prompt policies of protocol.policy: the system prompt, what the history keeps, the window.
PromptKind = Literal["text", "ledger", "gate", "memory"]


class ArmSpec(msgspec.Struct, frozen=True, kw_only=True):
    """One arm of the table."""

    name: str
    rung: int | None = None  # position on the paper's ladder; None for arms off the ladder
    reference: str | None = None  # the arm an off-ladder arm is contrasted with
    compiles: bool = False  # needs the compiled graph and revision (the compiler helper)
    matcher: bool = False  # consults the matcher on every non-bypassed turn
    memory: bool = False  # a retrieval memory baseline (Appendix F; the ``memory`` extra)
    harness: bool = False  # runs on the real-tool harness too (Table 19; runner.harness)
    prompt: PromptKind = "text"  # its prompt policy (protocol.policy)
    needs: str | None = None  # the optional extra (pyproject.toml) its session imports
    imports: tuple[str, ...] = ()  # the extra's libraries it imports (checked before a run)


# In display order: tables and reports list arms this way.
ARM_TABLE: tuple[ArmSpec, ...] = (
    ArmSpec(name="raw", rung=0, harness=True),
    ArmSpec(name="checklist", rung=1, harness=True),
    # Table 16: the self-ledger vs the checklist
    ArmSpec(name="ledger", reference="checklist", prompt="ledger"),
    ArmSpec(name="directive", rung=2, compiles=True, matcher=True, harness=True, prompt="gate"),
    # binding="state" or "request": request-bound enforcement is the harness's fifth arm
    ArmSpec(name="enforce", rung=3, compiles=True, matcher=True, harness=True, prompt="gate"),
    # Appendix D.3: the validator-gated hybrid vs the enforcement gate
    ArmSpec(name="hybrid", reference="enforce", compiles=True, matcher=True, prompt="gate"),
    # Appendix F: the memory baselines, off the ladder (Table 18 sets them beside it)
    ArmSpec(
        name="memory-topk", memory=True, prompt="memory", needs="memory", imports=("faiss", "numpy")
    ),
    ArmSpec(
        name="mem0",
        memory=True,
        prompt="memory",
        needs="memory",
        imports=("faiss", "numpy", "mem0"),
    ),
)

ARM_NAMES: tuple[str, ...] = tuple(a.name for a in ARM_TABLE)
MEMORY_ARMS: tuple[str, ...] = tuple(a.name for a in ARM_TABLE if a.memory)
# The arms of the real-tool harness (Section 5.4, Table 19).
HARNESS_ARMS: tuple[str, ...] = tuple(a.name for a in ARM_TABLE if a.harness)
# The paper's rungs in order: adjacent contrasts run along these (Section 4.2, Appendix D.1).
LADDER: tuple[str, ...] = tuple(
    a.name for a in sorted((a for a in ARM_TABLE if a.rung is not None), key=lambda a: a.rung or 0)
)
# (reference arm, arm): each off-ladder arm against the arm it is contrasted with.
SIDE_CONTRASTS: tuple[tuple[str, str], ...] = tuple(
    (a.reference, a.name) for a in ARM_TABLE if a.reference is not None
)


def arm_spec(name: str) -> ArmSpec | None:
    """The table's entry for ``name``, or None for an arm the table does not hold (read from
    the table on each call, so a test's toy row is seen everywhere)."""
    return next((a for a in ARM_TABLE if a.name == name), None)


def arm_rank(name: str) -> tuple[int, str]:
    """A sort key: arms of the table in display order, any other arm after them by name."""
    names = [a.name for a in ARM_TABLE]
    return (names.index(name), "") if name in names else (len(names), name)
