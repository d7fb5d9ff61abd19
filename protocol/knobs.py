"""Every knob of a cell, declared once: a :class:`KnobSpec` per field of
:class:`protocol.config.Knobs` (pure).

The field itself (its type and default) is the ``Knobs`` Struct's, so logs, slugs and grid
files read it as before; its :class:`KnobSpec` says the rest: what it varies, the arms it
applies to, which values are valid, the Holm family its variant contrasts join (and
against what), whether it puts the whole ladder on another surface, and the report section
it feeds. The grid check (:func:`knob_problems`), the Holm families (:func:`variants`,
:func:`platform_knobs`) and the docs read them from :data:`KNOBS`, and a test holds the
registry to the Struct's fields. A new knob: one field, one module with its ``KnobSpec``,
one registration below (docs/extending.md, "A new knob").
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from protocol.arms.table import ArmSpec, Variant, arm_spec, arm_table, harness_arms
from protocol.config import DEFAULT_DOSE, PLAIN_CONTROLS, Knobs
from protocol.registry import Registry
from protocol.stress.budget import MAX_BUDGET
from protocol.stress.exclusive import MAX_EXCLUSIVE
from protocol.stress.expiry import MAX_EXPIRY, MIN_EXPIRY
from protocol.stress.sessions import MAX_SESSIONS, MIN_SESSIONS

__all__ = [
    "KNOBS",
    "MAX_MEMORY",
    "KnobSpec",
    "generator_problems",
    "knob_problems",
    "knob_spec",
    "platform_knobs",
    "rate_check",
    "variants",
]

Check = Callable[[Knobs, str], list[str]]  # (a cell's knobs, its arm) -> problems, one line each
# (a cell's knobs) -> (the generator version its value needs, what needs it), None: any version
Since = Callable[[Knobs], tuple[int, str] | None]


def _no_problem(knobs: Knobs, arm: str) -> list[str]:
    return []


@dataclass(frozen=True)
class KnobSpec:
    """One knob of a cell (its field, type and default are :class:`Knobs`')."""

    field: str
    label: str  # what it varies, one line (docs, ``ladder validate``)
    check: Check = _no_problem  # its value's problems on an arm (the grid check)
    # the arms it applies to (None: every arm), and how a message names them
    applies: Callable[[ArmSpec], bool] | None = None
    scope: str = ""
    # its variant contrast: the Holm family it joins (None: no contrast of its own), the
    # paper arm it is contrasted with (None: the same arm), and whether the reference is
    # the same cell with only this knob reset (the stress knobs) or the plain arm
    family: str | None = None
    reference: str | None = None
    alone: bool = False
    platform: bool = False  # it puts the whole ladder on another surface (still a ladder)
    resets: tuple[str, ...] = ()  # knobs its contrast's reference resets with it (its dose)
    section: str | None = None  # the report section (an analysis's name) it feeds
    since: Since | None = None  # a value a later generator added (the grid check's)
    # a number's ceiling (#47): every int or float knob has one (a test holds it); a value
    # past it (or NaN) is one line, its own check's when that names the knob
    ceiling: float | None = None


def rate_check(field: str, what: str) -> Check:
    """A rate knob's check: ``what must be in [0, 1] (got x)``."""

    def check(knobs: Knobs, arm: str) -> list[str]:
        value = getattr(knobs, field)
        return [] if 0.0 <= value <= 1.0 else [f"{what} must be in [0, 1] (got {value})"]

    return check


def _is_memory(a: ArmSpec) -> bool:
    return a.memory


# The rules beyond one-shot state (issue #48), in declaration order: a cell sets at most one.
_RULES = ("budget", "expiry", "exclusive")


def _rule(field: str, low: int, high: int, unit: str) -> Check:
    """A rule beyond one-shot state (issue #48): 0 or ``low`` to ``high``, with the cooperative
    user (the user's styles take the fillers it is placed on), one rule per cell; the budget
    and exclusive steps on either protocol, the expiry on the text protocol only."""

    def check(knobs: Knobs, arm: str) -> list[str]:
        value = getattr(knobs, field)
        if value == 0:
            return []
        if not low <= value <= high:
            return [f"{field} must be 0 (off) or {low} to {high} {unit} (got {value})"]
        if knobs.harness != "text" and field == "expiry":  # the clock counts messages
            return [
                "expiry runs on the text protocol: on the tool harness a tool result is an "
                "exchange of its own, so an agent's clock runs ahead of the user's messages"
            ]
        if knobs.user_style != "cooperative":
            return [f"{field} and user_style both take fillers: set one"]
        set_rules = [r for r in _RULES if getattr(knobs, r)]
        if len(set_rules) > 1 and field == set_rules[-1]:  # reported once, by the last
            return [f"{' and '.join(set_rules)} are one rule each: set one"]
        return []

    return check


def _sessions(knobs: Knobs, arm: str) -> list[str]:
    """Several sessions (issue #48): 0 or 2 to MAX_SESSIONS, on the text protocol or the tool
    harness (which restarts the same way: runner.arms.handoff), alone among the rules (a handoff note would have to carry a budget's runs and a run's age)."""
    value = knobs.sessions
    if value == 0:
        return []
    if not MIN_SESSIONS <= value <= MAX_SESSIONS:
        return [f"sessions must be 0 (off) or {MIN_SESSIONS} to {MAX_SESSIONS} (got {value})"]
    if knobs.budget or knobs.expiry or knobs.exclusive:
        return ["sessions and budget, expiry or exclusive are one rule each: set one"]
    return []


def _handoff(knobs: Knobs, arm: str) -> list[str]:
    if knobs.handoff != "none" and not knobs.sessions:
        return ["handoff needs sessions on the same variant"]
    if knobs.next_model and not knobs.sessions:
        return ["next_model needs sessions on the same variant"]
    return []


# OURS (#47): items recalled and exchanges kept by a memory arm (the paper's 5 and 2); a
# hostile grid's count is bounded before a recall block is built from it
MAX_MEMORY = 1_000


def _memory_k(knobs: Knobs, arm: str) -> list[str]:
    k = knobs.memory_k
    return [] if k >= 1 else [f"memory_k must be at least 1 (got {k})"]


def _memory_window(knobs: Knobs, arm: str) -> list[str]:
    w = knobs.memory_window
    return [] if w >= 0 else [f"memory_window must be at least 0 (got {w})"]


def _harness(knobs: Knobs, arm: str) -> list[str]:
    if knobs.harness != "langgraph" or arm in harness_arms():
        return []
    return [f"the tool harness runs the arms {', '.join(harness_arms())}; not {arm!r}"]


def _spoof(knobs: Knobs, arm: str) -> list[str]:
    # the tool harness forges a tool result (issue #37), on its own result channel
    if knobs.spoof not in ("none", "tool_result") and knobs.harness == "langgraph":
        return [
            f'spoof = "{knobs.spoof}" runs on the text protocol; the tool harness takes '
            'spoof = "tool_result" only'
        ]
    return []


def _tool_failure(knobs: Knobs, arm: str) -> list[str]:
    problems = rate_check("tool_failure", "tool_failure rate")(knobs, arm)
    if knobs.tool_failure and knobs.harness != "langgraph":
        problems.append('tool_failure needs the tool harness (harness = "langgraph")')
    return problems


def _landed(knobs: Knobs, arm: str) -> list[str]:
    """The at-most-once knob (issue #37): a share in [0, 1] of the timeouts of a failure rate."""
    value = knobs.tool_failure_landed
    if value == 0.0:
        return []
    if not 0.0 <= value <= 1.0:
        return [f"tool_failure_landed must be in [0, 1] (got {value})"]
    if not knobs.tool_failure:
        return ["tool_failure_landed needs a tool_failure rate on the same variant"]
    return []


def _dose(field: str, knob: str, off: str) -> Check:
    """A stress dose (issue #37): in [0, 1], set only with its knob on the same variant."""

    def check(knobs: Knobs, arm: str) -> list[str]:
        value = getattr(knobs, field)
        if value == DEFAULT_DOSE:
            return []
        if not 0.0 <= value <= 1.0:
            return [f"{field} must be in [0, 1] (got {value})"]
        if getattr(knobs, knob) == off:
            return [f"{field} needs a {knob} stress on the same variant"]
        return []

    return check


_MEMORY_ARMS = "the memory arms"
_ASKBACK = "Ask back and escalation"
_GATE_ARMS = "the gate arms"
_REFUSING = "the gates that refuse"


def _is_gate(a: ArmSpec) -> bool:
    """The gates that consult the matcher (directive, enforce, hybrid)."""
    return a.matcher


def _refuses(a: ArmSpec) -> bool:
    """The gates whose bookings can be refused (state- or request-bound enforcement)."""
    return a.enforcing


def _since_5(field: str, default: object) -> Since:
    """Generator 5 (issue #37) added this knob: set away from its default, it needs it."""

    def since(knobs: Knobs) -> tuple[int, str] | None:
        return (5, field) if getattr(knobs, field) != default else None

    return since


def _since_6(field: str) -> Since:
    """Generator 6 (issue #48) places this rule: set at all, it needs it."""

    def since(knobs: Knobs) -> tuple[int, str] | None:
        return (6, field) if getattr(knobs, field) else None

    return since


def _spoof_since(knobs: Knobs) -> tuple[int, str] | None:
    """The forgeries generator 5 added (issue #37): the redo authorization, and a forged tool
    result on the tool harness."""
    if knobs.spoof == "redo" or (knobs.spoof != "none" and knobs.harness == "langgraph"):
        return 5, f'spoof = "{knobs.spoof}" on this surface'
    return None


def _user_style_since(knobs: Knobs) -> tuple[int, str] | None:
    """The plain controls of restate and double (issue #46) are generator 6's."""
    if knobs.user_style in PLAIN_CONTROLS:
        return 6, f'user_style = "{knobs.user_style}"'
    return None


def _show(knobs: Knobs, arm: str) -> list[str]:
    if knobs.show and knobs.matched_step_line:
        return ["show and matched_step_line both name the step: set one"]
    return []


# Table 16: "each variant against its paper arm (the self-ledger against the replace-mode
# checklist), Holm-corrected within model over all variant contrasts". The matched-step
# line runs on the directive arm (it needs the matcher) but is a checklist control (E.2:
# it "adds to the replace-mode checklist" a line "with no status instruction"): its paper
# arm is the checklist (docs/scoring.md, "Holm families").
KNOBS: Registry[KnobSpec] = Registry(
    "knob", lambda o: isinstance(o, KnobSpec), group="state_ladder.knobs"
)
# Every knob's declaration, one row each (the table the docs and the report read).
_SPECS: tuple[KnobSpec, ...] = (
    KnobSpec(field="checklist_mode", label="the checklist appended or replacing the message",
             family="Table 16"),
    KnobSpec(field="directive_role", label="the directive as a user or a system message",
             family="Table 16"),
    KnobSpec(field="matched_step_line", label="the matched-step line without status (E.2)",
             family="Table 16", reference="checklist"),
    KnobSpec(field="notice", label="the rejection notice on the next turn or the same turn",
             family="Appendix D.3"),
    KnobSpec(field="binding", label="enforcement bound to the task state or the request",
             family="Table 19"),
    KnobSpec(field="corruption", label="the rate of corrupted task state (Table 12)",
             check=rate_check("corruption", "corruption rate"), family="Table 12", ceiling=1.0),
    KnobSpec(field="tools", label="ACTION lines beside the ref protocol", platform=True),
    KnobSpec(field="memory_mode", label="the recall block as the record or added to it",
             family="Table 18", applies=_is_memory, scope=_MEMORY_ARMS),
    KnobSpec(field="memory_k", label="items recalled (the paper's top-5)", check=_memory_k,
             family="Table 18", applies=_is_memory, scope=_MEMORY_ARMS, ceiling=MAX_MEMORY),
    KnobSpec(field="memory_window", label="exchanges kept in record mode",
             check=_memory_window, family="Table 18", applies=_is_memory, scope=_MEMORY_ARMS,
             ceiling=MAX_MEMORY),
    KnobSpec(field="harness", label="the text protocol or the real-tool harness (Appendix G)",
             check=_harness, platform=True),
    # The stress knobs (issue #31, ours; docs/stress.md): each variant against its plain arm,
    # Holm-corrected within model over the stress family's contrasts.
    KnobSpec(field="spoof", label="forged state text in the user's message (ours)",
             check=_spoof, family="Stress: forged state", alone=True, section="spoof",
             resets=("spoof_dose",), since=_spoof_since),
    KnobSpec(field="tool_failure", label="each try of a tool call fails at this rate, at most "
             "twice in a row, then succeeds (ours)",
             check=_tool_failure, family="Stress: tool failure", alone=True,
             section="tool_failure", resets=("tool_failure_landed",), ceiling=1.0),
    KnobSpec(field="user_style", label="the scripted user's manner (ours)",
             family="Stress: uncooperative user", alone=True, section="user_style",
             resets=("user_dose",), since=_user_style_since),
    # Ask back and escalation (issue #38, ours; protocol.arms.askback, docs/askback.md): each
    # knob's cell against the same cell with that knob alone off (a cell with two of them:
    # against the cell with the later one only), Holm within model over the family.
    KnobSpec(field="show", label="the gate names the step it resolved (ours)",
             check=_show, applies=_is_gate, scope=_GATE_ARMS, family=_ASKBACK, alone=True,
             section="askback"),
    KnobSpec(field="ask", label="the gate asks the user back on a reading it distrusts (ours)",
             applies=_is_gate, scope=_GATE_ARMS, family=_ASKBACK, alone=True,
             section="askback"),
    KnobSpec(field="escalate", label="the gate's refusals go to the user, who may override (ours)",
             applies=_refuses, scope=_REFUSING, family=_ASKBACK, alone=True, section="askback"),
    # The stress knobs' doses (issue #37, generator 5; protocol.stress.doses): no contrast of their own, the
    # dose is part of the stressed cell (docs/stress.md, "Dose-response").
    KnobSpec(field="spoof_dose", label="the dose of forged turns: a share of 8 stress slots, "
             "capped by the eligible turns (generator 6; ours)",
             check=_dose("spoof_dose", "spoof", "none"), section="dose_response",
             since=_since_5("spoof_dose", DEFAULT_DOSE), ceiling=1.0),
    KnobSpec(field="user_dose", label="the dose of the user's style: a share of 8 stress "
             "slots, capped by the eligible turns (generator 6; ours)",
             check=_dose("user_dose", "user_style", "cooperative"),
             section="dose_response", since=_since_5("user_dose", DEFAULT_DOSE), ceiling=1.0),
    # At-most-once under tool failure (issue #37; protocol.stress.tool_failure, docs/stress.md): part
    # of the tool_failure stress (its contrast's reference resets it with the rate).
    KnobSpec(field="tool_failure_landed", label="the share of timed-out tool calls whose "
             "write landed; lists the read-only status tool (ours)", check=_landed,
             section="tool_failure", since=_since_5("tool_failure_landed", 0.0), ceiling=1.0),
    # Beyond one-shot state (issue #48, ours; protocol.stress.budget, docs/semantics.md): the
    # cap is the dose; each cell against the same cell with the budget off, Holm within model.
    KnobSpec(field="budget", label="runs of one seed-picked step the brief allows; one "
             "request more is a trap (ours)", check=_rule("budget", 1, MAX_BUDGET, "runs"),
             family="Semantics: budget", alone=True, section="budget", since=_since_6("budget"),
             ceiling=MAX_BUDGET),
    KnobSpec(field="expiry", label="turns a run of one seed-picked step stays valid; a "
             "request after it lapses must be run again (ours)",
             check=_rule("expiry", MIN_EXPIRY, MAX_EXPIRY, "turns"), family="Semantics: expiry",
             alone=True, section="expiry", since=_since_6("expiry"), ceiling=MAX_EXPIRY),
    # Several sessions (issue #48, ours; protocol.stress.sessions): K is the dose and the
    # handoff part of the cell; each cell against the same cell with one session.
    KnobSpec(field="sessions", label="sessions the episode's turns split into at seed-placed "
             "boundaries; the conversation restarts at each (ours)", check=_sessions,
             family="Semantics: sessions", alone=True, section="sessions",
             resets=("handoff", "next_model"), since=_since_6("sessions"),
             ceiling=MAX_SESSIONS),
    KnobSpec(field="handoff", label="what crosses a session boundary: nothing, the agent's "
             "note, or what the arm keeps (ours)", check=_handoff, section="sessions"),
    KnobSpec(field="next_model", label="a model of the grid that runs every other session: a "
             "handoff between agents (ours)", section="sessions"),
    KnobSpec(field="exclusive", label="requests for the closed alternative of one "
             "seed-picked step, each a trap (ours)",
             check=_rule("exclusive", 1, MAX_EXCLUSIVE, "requests"),
             family="Semantics: exclusive", alone=True, section="exclusive",
             since=_since_6("exclusive"), ceiling=MAX_EXCLUSIVE),
)  # fmt: skip
for _knob in _SPECS:
    KNOBS.add(_knob.field, _knob)


def knob_spec(field: str) -> KnobSpec:
    return KNOBS.get(field)


def variants() -> tuple[Variant, ...]:
    """Every knob with a variant contrast, in declaration order."""
    return tuple(
        Variant(
            knob=k.field,
            table=k.family,
            reference=k.reference,
            alone=k.alone,
            with_knobs=k.resets,
        )
        for k in KNOBS.entries()
        if k.family is not None
    )


def platform_knobs() -> tuple[str, ...]:
    """Knobs that put the whole ladder on another surface: a configuration with them is a
    ladder."""
    return tuple(k.field for k in KNOBS.entries() if k.platform)


def generator_problems(knobs: Knobs, generator: int) -> list[str]:
    """A knob value a later generator than ``generator`` added (``KnobSpec.since``), one line
    each (the grid check's)."""
    problems = []
    for k in KNOBS.entries():
        need = k.since(knobs) if k.since is not None else None
        if need is not None and need[0] > generator:
            problems.append(
                f"{need[1]} needs generator {need[0]} or later (the grid uses {generator})"
            )
    return problems


def knob_problems(knobs: Knobs, arm: str) -> list[str]:
    """Every problem of a cell's knobs on ``arm``, one line each: a knob set on an arm it
    does not apply to (one line per scope), then each knob's own check."""
    spec = arm_spec(arm)
    changed = knobs.changed()
    misplaced: dict[str, list[str]] = {}
    by_scope: dict[str, KnobSpec] = {}
    for k in KNOBS.entries():
        applies = k.applies
        if k.field in changed and applies is not None and spec is not None and not applies(spec):
            misplaced.setdefault(k.scope, []).append(k.field)
            by_scope[k.scope] = k
    problems = []
    for scope, fields in misplaced.items():
        applies = by_scope[scope].applies
        names = [a.name for a in arm_table() if applies is not None and applies(a)]
        problems.append(
            f"{', '.join(fields)} applies to {scope} only ({', '.join(names)}), not {arm!r}"
        )
    for k in KNOBS.entries():
        own = k.check(knobs, arm)
        past = _past_ceiling(knobs, k)
        named = any(k.field in p for p in own)  # its own check's range says it: one line
        problems += own if past is None or named else [past, *own]
    return problems


def _past_ceiling(knobs: Knobs, k: KnobSpec) -> str | None:
    """``FIELD must be at most C (got v)`` for a number past its knob's ceiling, or NaN."""
    value = getattr(knobs, k.field)
    if k.ceiling is None or isinstance(value, bool) or not isinstance(value, int | float):
        return None
    if value > k.ceiling or value != value:
        return f"{k.field} must be at most {k.ceiling:g} (got {value})"
    return None
