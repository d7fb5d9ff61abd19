"""The arm table: every arm's name, its rung on the ladder, and what it needs.

One place for these facts (Sections 3.2, 3.3, 4.2; Appendices D.1, D.3, E.2): the grid checks
arm names against it, the compile helper reads which arms compile, the scoring reads the
ladder's rungs and every contrast (:mod:`scoring.results.families` forms the Holm families from
them), :mod:`protocol.policy` reads each arm's prompt policy, and :mod:`runner.arms.registry`
binds each name to its session class. Names are the ones used on the command line and in
logs. A new arm is one row here plus its session's file (docs/extending.md).

Contrasts, each with the paper table whose Holm family it joins:

- ladder: adjacent rungs (``rung``) of one configuration, both present; a configuration is a
  ladder only when its knobs are the defaults or :data:`PLATFORM_KNOBS` (the tool harness and
  the tools knob run every rung on another surface);
- side: an off-ladder arm against the arms in its ``contrasts``;
- variant: a cell whose knobs move a :data:`VARIANTS` knob, against its paper arm (the same
  arm with that knob at its default, or the variant's ``reference`` arm).
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
    "PLATFORM_KNOBS",
    "SIDE_CONTRASTS",
    "VARIANTS",
    "ArmSpec",
    "Contrast",
    "PromptKind",
    "Variant",
    "arm_rank",
    "arm_spec",
]


class Contrast(msgspec.Struct, frozen=True, kw_only=True):
    """A side contrast: the arm against ``reference`` (its knobs ``reference_knobs``, the
    rest of the configuration shared), Holm-corrected in ``table``'s family."""

    reference: str
    table: str
    reference_knobs: tuple[tuple[str, str], ...] = ()


class Variant(msgspec.Struct, frozen=True, kw_only=True):
    """A variant knob: a cell that sets it is contrasted with its paper arm (the same arm
    with the knob at its default, or ``reference``), Holm-corrected in ``table``'s family."""

    knob: str
    table: str
    reference: str | None = None
    # contrasted with the same cell with only this knob at its default (every other knob
    # kept): the stress knobs, whose cells are other variants stressed (issue #31)
    alone: bool = False


# The prompt policies of protocol.policy: the system prompt, what the history keeps, the window.
PromptKind = Literal["text", "ledger", "gate", "memory"]


class ArmSpec(msgspec.Struct, frozen=True, kw_only=True):
    """One arm of the table."""

    name: str
    rung: int | None = None  # position on the paper's ladder; None for arms off the ladder
    contrasts: tuple[Contrast, ...] = ()  # side contrasts of an off-ladder arm
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
    # Section 5.2: the self-ledger against the checklist and below the directive gate (Holm
    # p = 0.023, 0.14); Table 16: against the replace-mode checklist (its variant family).
    ArmSpec(
        name="ledger",
        contrasts=(
            Contrast(reference="checklist", table="Section 5.2"),
            Contrast(reference="directive", table="Section 5.2"),
            Contrast(
                reference="checklist",
                reference_knobs=(("checklist_mode", "replace"),),
                table="Table 16",
            ),
        ),
        prompt="ledger",
    ),
    ArmSpec(name="directive", rung=2, compiles=True, matcher=True, harness=True, prompt="gate"),
    # binding="state" or "request": request-bound enforcement is the harness's fifth arm
    ArmSpec(name="enforce", rung=3, compiles=True, matcher=True, harness=True, prompt="gate"),
    # Appendix D.3: the validator-gated hybrid vs the enforcement gate
    ArmSpec(
        name="hybrid",
        contrasts=(Contrast(reference="enforce", table="Appendix D.3"),),
        compiles=True,
        matcher=True,
        prompt="gate",
    ),
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
# (reference arm, arm) of every side contrast within one configuration (reference knobs
# unset), in table order.
SIDE_CONTRASTS: tuple[tuple[str, str], ...] = tuple(
    (c.reference, a.name) for a in ARM_TABLE for c in a.contrasts if not c.reference_knobs
)
# Knobs that put the whole ladder on another surface: a configuration with them is a ladder.
PLATFORM_KNOBS: tuple[str, ...] = ("harness", "tools")
# Knob variants and the family each joins. Table 16: "each variant against its paper arm
# (the self-ledger against the replace-mode checklist), Holm-corrected within model over all
# variant contrasts". The matched-step line runs on the directive arm (it needs the matcher)
# but is a checklist control (E.2: it "adds to the replace-mode checklist" a line "with no
# status instruction"): its paper arm is the checklist (docs/scoring.md, "Holm families").
VARIANTS: tuple[Variant, ...] = (
    Variant(knob="checklist_mode", table="Table 16"),
    Variant(knob="matched_step_line", table="Table 16", reference="checklist"),
    Variant(knob="directive_role", table="Table 16"),
    Variant(knob="notice", table="Appendix D.3"),
    Variant(knob="corruption", table="Table 12"),
    Variant(knob="binding", table="Table 19"),
    Variant(knob="memory_mode", table="Table 18"),
    Variant(knob="memory_k", table="Table 18"),
    Variant(knob="memory_window", table="Table 18"),
    # The stress knobs (issue #31, ours; docs/stress.md): each variant against its plain arm,
    # Holm-corrected within model over the stress family's contrasts.
    Variant(knob="spoof", table="Stress: forged state", alone=True),
    Variant(knob="tool_failure", table="Stress: tool failure", alone=True),
    Variant(knob="user_style", table="Stress: uncooperative user", alone=True),
    # Ask back and escalation (issue #38, ours; docs/askback.md): each knob's cell against the
    # same cell with that knob alone off (a cell with two of them: against the cell with the
    # later one only), Holm-corrected within model over the family's contrasts.
    Variant(knob="show", table="Ask back and escalation", alone=True),
    Variant(knob="ask", table="Ask back and escalation", alone=True),
    Variant(knob="escalate", table="Ask back and escalation", alone=True),
)


def arm_spec(name: str) -> ArmSpec | None:
    """The table's entry for ``name``, or None for an arm the table does not hold (read from
    the table on each call, so a test's toy row is seen everywhere)."""
    return next((a for a in ARM_TABLE if a.name == name), None)


def arm_rank(name: str) -> tuple[int, str]:
    """A sort key: arms of the table in display order, any other arm after them by name."""
    names = [a.name for a in ARM_TABLE]
    return (names.index(name), "") if name in names else (len(names), name)
