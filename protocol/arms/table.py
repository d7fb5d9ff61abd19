"""The arm table: every arm's name, its rung on the ladder, and what it needs.

One place for these facts (Sections 3.2, 3.3, 4.2; Appendices D.1, D.3, E.2): the grid checks
arm names against it, the compile helper reads which arms compile, the scoring reads the
ladder's rungs and every contrast (:mod:`scoring.results.families` forms the Holm families from
them), :mod:`protocol.arms.policy` reads each arm's prompt policy, and :mod:`runner.arms.registry`
imports each row's session (its class or lazy ``"module:Class"`` path). Names are the ones used
on the command line and in logs. An arm is one unit: its row here names its traits
(``compiles``, ``matcher``, ``enforcing``, ``validated``, ``memory``, ``harness``, ``prompt``)
and its session; every analysis and knob rule reads the traits, never an arm's name. A new arm
in the repo is its session's module plus its row (docs/extending.md).

Contrasts, each with the paper table whose Holm family it joins:

- ladder: adjacent rungs (``rung``) of one configuration, both present; a configuration is a
  ladder only when its knobs are the defaults or :func:`protocol.knobs.platform_knobs` (the tool harness and
  the tools knob run every rung on another surface);
- side: an off-ladder arm against the arms in its ``contrasts``;
- variant: a cell whose knobs move a knob with a variant family
  (:func:`protocol.knobs.variants`), against its paper arm (the same
  arm with that knob at its default, or the variant's ``reference`` arm).
"""

from __future__ import annotations

import msgspec

from protocol.registry import Registry

__all__ = [
    "ARMS",
    "ArmSpec",
    "Contrast",
    "PromptKind",
    "Variant",
    "arm_names",
    "arm_rank",
    "arm_spec",
    "arm_table",
    "enforced",
    "enforcing_arms",
    "gate_arms",
    "harness_arms",
    "ladder",
    "memory_arms",
    "side_contrasts",
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
    # knobs reset with it (a stress knob's dose, issue #37): the control of a dosed cell
    with_knobs: tuple[str, ...] = ()


def _check_arm_name(name: str) -> None:
    if not name or not all(c.isalnum() or c in "-_" for c in name):
        raise ValueError(f"arm name {name!r}: letters, digits, '-' and '_' only")


# The prompt policy of protocol.arms.policy (the system prompt, what the history keeps, the
# window), by its name in protocol.arms.policy.POLICIES: "text", "ledger", "gate", "memory".
PromptKind = str


class ArmSpec(msgspec.Struct, frozen=True, kw_only=True):
    """One arm of the table."""

    name: str
    rung: int | None = None  # position on the paper's ladder; None for arms off the ladder
    contrasts: tuple[Contrast, ...] = ()  # side contrasts of an off-ladder arm
    compiles: bool = False  # needs the compiled graph and revision (the compiler helper)
    matcher: bool = False  # consults the matcher on every non-bypassed turn
    # its gate can refuse bookings (state- or request-bound enforcement, Section 3.3); the
    # analyses of refusals, corruption and omissions read this, never the arm's name
    enforcing: bool = False
    # enforces only where the validator passes its compile (Appendix D.3, the hybrid): each
    # episode's record says whether it did (``CompileRecord.enforcing``)
    validated: bool = False
    memory: bool = False  # a retrieval memory baseline (Appendix F; the ``memory`` extra)
    harness: bool = False  # runs on the real-tool harness too (Table 19; runner.harness)
    prompt: PromptKind = "text"  # its prompt policy (protocol.arms.policy)
    needs: str | None = None  # the optional extra (pyproject.toml) its session imports
    imports: tuple[str, ...] = ()  # the extra's libraries it imports (checked before a run)
    # its session: the class (a subclass of runner.arms.ArmSession) or its lazy
    # "module:Class" path, imported on first use and checked by `ladder validate`
    session: str | type | None = None


# In display order: tables and reports list arms this way.
_BUILT_IN: tuple[ArmSpec, ...] = (
    ArmSpec(name="raw", rung=0, harness=True, session="runner.arms.text:RawArm"),
    ArmSpec(name="checklist", rung=1, harness=True, session="runner.arms.text:ChecklistArm"),
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
        session="runner.arms.ledger:SelfLedger",
    ),
    ArmSpec(
        name="directive",
        rung=2,
        compiles=True,
        matcher=True,
        harness=True,
        prompt="gate",
        session="runner.arms.gates:DirectiveGate",
    ),
    # binding="state" or "request": request-bound enforcement is the harness's fifth arm
    ArmSpec(
        name="enforce",
        rung=3,
        compiles=True,
        matcher=True,
        enforcing=True,
        harness=True,
        prompt="gate",
        session="runner.arms.gates:DirectiveGate",
    ),
    # Appendix D.3: the validator-gated hybrid vs the enforcement gate
    ArmSpec(
        name="hybrid",
        contrasts=(Contrast(reference="enforce", table="Appendix D.3"),),
        compiles=True,
        matcher=True,
        enforcing=True,
        validated=True,
        prompt="gate",
        session="runner.arms.gates:DirectiveGate",
    ),
    # Appendix F: the memory baselines, off the ladder (Table 18 sets them beside it)
    ArmSpec(
        name="memory-topk",
        memory=True,
        prompt="memory",
        needs="memory",
        imports=("faiss", "numpy"),
        session="runner.arms.memory:TopKArm",
    ),
    ArmSpec(
        name="mem0",
        memory=True,
        prompt="memory",
        needs="memory",
        imports=("faiss", "numpy", "mem0"),
        session="runner.arms.mem0:Mem0Arm",
    ),
)

ARMS: Registry[ArmSpec] = Registry(
    "arm", lambda o: isinstance(o, ArmSpec), group="state_ladder.arms", check_name=_check_arm_name
)
for _row in _BUILT_IN:
    ARMS.add(_row.name, _row)


def arm_table() -> tuple[ArmSpec, ...]:
    """Every arm's row, in display order (the built-in table, then rows added later)."""
    return ARMS.entries()


def arm_names() -> tuple[str, ...]:
    return ARMS.names()


def memory_arms() -> tuple[str, ...]:
    """The retrieval memory baselines (Appendix F)."""
    return tuple(a.name for a in arm_table() if a.memory)


def harness_arms() -> tuple[str, ...]:
    """The arms of the real-tool harness (Section 5.4, Table 19)."""
    return tuple(a.name for a in arm_table() if a.harness)


def ladder() -> tuple[str, ...]:
    """The paper's rungs in order: adjacent contrasts run along these (Section 4.2, D.1)."""
    on = [a for a in arm_table() if a.rung is not None]
    return tuple(a.name for a in sorted(on, key=lambda a: a.rung or 0))


def side_contrasts() -> tuple[tuple[str, str, str], ...]:
    """(reference arm, arm, table) of every side contrast within one configuration
    (reference knobs unset), in table order."""
    return tuple(
        (c.reference, a.name, c.table)
        for a in arm_table()
        for c in a.contrasts
        if not c.reference_knobs
    )


def gate_arms() -> tuple[str, ...]:
    """The gates: the arms that consult the matcher (directive, enforce, hybrid)."""
    return tuple(a.name for a in arm_table() if a.matcher)


def enforcing_arms() -> tuple[str, ...]:
    """The arms whose gate can refuse bookings (enforce, hybrid)."""
    return tuple(a.name for a in arm_table() if a.enforcing)


def enforced(arm: str, recorded: bool) -> bool:
    """Whether an episode of ``arm`` ran under enforcement: an arm that always enforces, or
    one whose episode record says it did (``recorded``, ``CompileRecord.enforcing``: the
    hybrid where the validator passed its compile)."""
    spec = arm_spec(arm)
    return recorded or (spec is not None and spec.enforcing and not spec.validated)


def arm_spec(name: str) -> ArmSpec | None:
    """The table's entry for ``name``, or None for an arm the table does not hold (read from
    the registry on each call, so a row added later is seen everywhere)."""
    return ARMS.find(name)


def arm_rank(name: str) -> tuple[int, str]:
    """A sort key: arms of the table in display order, any other arm after them by name."""
    names = ARMS.names()
    return (names.index(name), "") if name in names else (len(names), name)
