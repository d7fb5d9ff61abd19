"""Record types: the episode a spec generates and everything a log line holds.

All are msgspec Structs, ``frozen=True, kw_only=True``. Schema evolution adds defaulted
fields only; :data:`SCHEMA_VERSION` rises when a reader must know about a change.
"""

from __future__ import annotations

from typing import Literal

import msgspec

__all__ = [
    "SCHEMA_VERSION",
    "AccuracyRecord",
    "Booking",
    "CallRecord",
    "CellKey",
    "CompileRecord",
    "CompiledRevisionRecord",
    "CompiledStepRecord",
    "CorruptionEvent",
    "Domain",
    "Episode",
    "EpisodeRecord",
    "EpisodeSpec",
    "HelperLogLine",
    "Knobs",
    "MatcherOutcome",
    "Revision",
    "Role",
    "Step",
    "Termination",
    "ToolCall",
    "Turn",
    "TurnKind",
    "TurnRecord",
    "ValidatorRecord",
]

SCHEMA_VERSION = 2
# 2: EpisodeRecord.compile is a typed CompileRecord (graph as a list of steps; version-1 logs
#    stored it keyed by step id, and runner.logs reads them into the new shape).

Domain = Literal["procurement", "release"]
Brief = Literal["amended", "original"]
TurnKind = Literal[
    "ask",
    "premature",
    "redo_probe",
    "superseded_cue",
    "legit_redo",
    "revision",
    "filler",
    "ambiguous",
    "re_ask",
]
MatcherOutcome = Literal["answered", "null", "corrected", "malformed"]
Role = Literal["agent", "matcher", "compiler"]  # who a call is made for
Termination = Literal[
    "completed",  # every turn ran; the episode is scored
    "endpoint_error",  # a call failed after all its attempts (5xx, 429, connection)
    "timeout",  # a call timed out on every attempt
    "client_error",  # a non-retryable 4xx (e.g. unknown model) ended the episode
    "context_overflow",  # the prompt outgrew the model even at the floor budget
    "cancelled",  # the run was interrupted while the episode was in flight
]


class _Frozen(msgspec.Struct, frozen=True, kw_only=True):
    pass


class EpisodeSpec(_Frozen, frozen=True, kw_only=True):
    """Everything an episode is a pure function of."""

    seed: int
    steps: int
    density: float
    domain: Domain = "procurement"
    brief: Brief = "amended"
    paraphrase_tier: int = 0
    ambiguous_rate: float = 0.0


class Step(_Frozen, frozen=True, kw_only=True):
    id: str  # s1..sS
    slug: str  # the template's slug, unique within and across domains
    text: str  # the description the brief shows
    code: str  # RC-dddd
    deps: tuple[str, ...]  # prerequisite ids (the 'requires:' list), sorted by id number


class Revision(_Frozen, frozen=True, kw_only=True):
    cancel: str
    rewires: dict[str, tuple[str, ...]]  # step -> its FULL remaining prerequisite list
    relax: tuple[str, str] | None  # (step, dropped prerequisite)
    text: str  # the user message that announces it


class Turn(_Frozen, frozen=True, kw_only=True):
    """One scripted user turn."""

    index: int
    kind: TurnKind
    step: str | None  # the step the turn resolves to (None: filler, revision, ambiguous)
    work_order: str | None  # '#Wdddd' on every request; None on fillers and the revision
    text: str  # the user message as the scripted user writes it
    named: tuple[str, ...] = ()  # ambiguous probes: the two steps named
    dynamic: bool = False  # inserted at run time by the scripted user (a re-ask)


class Episode(_Frozen, frozen=True, kw_only=True):
    spec: EpisodeSpec
    steps: tuple[Step, ...]
    revision: Revision
    turns: tuple[Turn, ...]  # the planned 44-turn schedule
    brief: str  # the system prompt every arm receives

    def step(self, step_id: str) -> Step:
        for s in self.steps:
            if s.id == step_id:
                return s
        raise KeyError(step_id)


class Knobs(_Frozen, frozen=True, kw_only=True):
    """Variant knobs of a cell: part of its key, never new arm names."""

    checklist_mode: Literal["append", "replace"] = "append"
    directive_role: Literal["user", "system"] = "user"
    matched_step_line: bool = False
    notice: Literal["next_turn", "same_turn"] = "next_turn"
    binding: Literal["state", "request"] = "state"
    corruption: float = 0.0
    tools: bool = False
    # "text": the payload protocol (ref lines; ``tools`` adds ACTION lines to it);
    # "langgraph": the real-tool harness of Appendix G (runner.harness, docs/tools.md).
    harness: Literal["text", "langgraph"] = "text"


class CellKey(_Frozen, frozen=True, kw_only=True):
    """A cell: one arm on one configuration."""

    model: str
    regime: Literal["no-think", "thinking"] = "no-think"
    steps: int
    density: float
    domain: Domain = "procurement"
    brief: Brief = "amended"
    arm: str
    knobs: Knobs = Knobs()

    def slug(self) -> str:
        """A file-name-safe identifier, stable across runs."""
        k = self.knobs
        parts = [
            self.model.replace("/", "_").replace("?", "_").replace("&", "_").replace("=", "-"),
            self.regime,
            f"S{self.steps}",
            f"rho{self.density:g}",
            self.domain,
            self.brief,
            self.arm,
        ]
        if k != Knobs():
            parts.append(
                "-".join(
                    f"{f}={getattr(k, f)}"
                    for f in k.__struct_fields__
                    if getattr(k, f) != getattr(Knobs(), f)
                )
            )
        return "__".join(parts)


class Booking(_Frozen, frozen=True, kw_only=True):
    """A ref line carrying the current work order: an execution attempt."""

    step: str | None  # None when the code names no step of the episode
    code: str
    work_order: str


class CallRecord(_Frozen, frozen=True, kw_only=True):
    role: Role
    prompt_tokens: int = 0
    completion_tokens: int = 0
    wait_s: float = 0.0  # time waiting for a slot under the concurrency cap
    server_s: float = 0.0  # time at the server, all attempts
    attempts: int = 1
    finish_reason: str | None = None
    cached: bool = False  # served from the helper cache (no request made)
    max_tokens: int = 0
    # A helper request made once for several episodes (a compile): tokens kept, counted once
    # in the run's helper log; with cached=True this episode did not make the request.
    shared: bool = False


class HelperLogLine(msgspec.Struct, frozen=True, kw_only=True, tag="helper"):
    """One line of ``OUT/helpers.jsonl``: a helper request made once for several episodes."""

    kind: Literal["compile"]
    key: str  # the cache key's digest
    calls: tuple[CallRecord, ...]


class ToolCall(_Frozen, frozen=True, kw_only=True):
    """One ACTION of the tool harness, in the order the harness dispatched it."""

    tool: str
    work_order: str
    step: str | None  # the step whose tool it names (None: no such tool)
    reply: int = 0  # which reply of the turn made it (0: the turn's first agent call)
    outcome: Literal["executed", "refused", "repeat", "stale"] = "executed"
    receipt: str | None = None  # the workspace stamp an executed call wrote
    status: str | None = None  # why the gate refused it


class TurnRecord(_Frozen, frozen=True, kw_only=True):
    index: int
    kind: TurnKind
    step: str | None
    work_order: str | None
    user_text: str  # the scripted user's message
    sent_text: str = ""  # the user message as sent (arm additions included)
    # What the arm appended after the user's text (checklist, directive, ledger); the
    # rejection notices prepended before it are in ``notices`` (logs before that field: none).
    arm_text: str = ""
    notices: tuple[str, ...] = ()  # the enforcement gate's rejection notices on this turn
    reply: str = ""  # the visible reply
    reasoning: str = ""  # reasoning_content, kept apart; it can book nothing
    admitted: tuple[Booking, ...] = ()  # bookings the world admitted
    refused: tuple[Booking, ...] = ()  # bookings a gate refused
    matched_step: str | None = None
    matched_redo: bool | None = None
    # answered / null / corrected (after the correction request) / malformed (after it);
    # None where no matcher was consulted (and in logs older than this field)
    matcher_outcome: MatcherOutcome | None = None
    directive: str | None = None
    calls: tuple[CallRecord, ...] = ()
    named: tuple[str, ...] = ()
    dynamic: bool = False
    first_reply: str | None = None  # same-turn notice: the reply the gate refused
    # tool harness: the agent's replies after tool results (``reply`` holds the first), and
    # every ACTION dispatched with its outcome and stamp
    follow_ups: tuple[str, ...] = ()
    tool_calls: tuple[ToolCall, ...] = ()

    @classmethod
    def of(cls, turn: Turn, **fields: object) -> TurnRecord:
        """The record of a played ``turn``; ``fields`` are what the run added."""
        return cls(
            index=turn.index,
            kind=turn.kind,
            step=turn.step,
            work_order=turn.work_order,
            user_text=turn.text,
            named=turn.named,
            dynamic=turn.dynamic,
            **fields,  # type: ignore[arg-type]
        )

    def as_turn(self) -> Turn:
        """The scripted user's turn this record played (for replay)."""
        return Turn(
            index=self.index,
            kind=self.kind,
            step=self.step,
            work_order=self.work_order,
            text=self.user_text,
            named=self.named,
            dynamic=self.dynamic,
        )


class CompiledStepRecord(_Frozen, frozen=True, kw_only=True):
    """One step of a compiled graph as the compiler gave it."""

    id: str
    deps: tuple[str, ...] = ()
    code: str = ""


class CompiledRevisionRecord(_Frozen, frozen=True, kw_only=True):
    cancel: str | None = None
    rewires: dict[str, tuple[str, ...]] = {}
    relax: tuple[str, str] | None = None


class ValidatorRecord(_Frozen, frozen=True, kw_only=True):
    """The ground-truth-free validator's verdict (Appendix D.3)."""

    passed: bool
    flags: tuple[str, ...] = ()
    empty_code: tuple[str, ...] = ()
    cancelled_in_deps: tuple[str, ...] = ()
    cycle: bool = False
    unknown_dep: tuple[str, ...] = ()
    malformed: bool = False


class AccuracyRecord(_Frozen, frozen=True, kw_only=True):
    """The compile against the generator, for the record only (Table 5)."""

    exact: bool
    steps: int
    dep: int
    code: int
    cancel: bool
    rewire: bool
    relax: bool
    extra_steps: int = 0


class CompileRecord(_Frozen, frozen=True, kw_only=True):
    """What a gate episode compiled: the graph and revision, the validator, the accuracy."""

    model: str  # the compile model's label
    graph: tuple[CompiledStepRecord, ...]
    graph_error: str | None = None
    revision: CompiledRevisionRecord = CompiledRevisionRecord()
    revision_error: str | None = None
    validator: ValidatorRecord
    accuracy: AccuracyRecord
    enforcing: bool = False  # the gate refused bookings (hybrid: the validator passed)
    cached: bool = False  # this episode made no compile request

    def step(self, step_id: str) -> CompiledStepRecord | None:
        return next((s for s in self.graph if s.id == step_id), None)


class CorruptionEvent(_Frozen, frozen=True, kw_only=True):
    """One corruption of the compiled state (Appendix D.4), before the turn's decision."""

    turn: int
    step: str
    kind: Literal["drop_edge", "lost_done", "spurious_done"]
    edge: str | None = None  # drop_edge: the prerequisite dropped


class EpisodeRecord(msgspec.Struct, frozen=True, kw_only=True, tag="episode"):
    """One finished episode: one JSON line in its cell's log file."""

    schema_version: int = SCHEMA_VERSION
    cell: CellKey
    spec: EpisodeSpec
    turns: tuple[TurnRecord, ...]
    termination: Termination = "completed"
    error: str | None = None  # the infrastructure failure, never the agent's
    attempts: int = 0  # attempts made by the call that failed
    started: float = 0.0
    wall_s: float = 0.0
    compile: CompileRecord | None = None  # compiled graph, accuracy, validator flags
    corruptions: tuple[CorruptionEvent, ...] = ()
    synthetic: bool = False  # produced by the scripted synthetic agent

    @property
    def seed(self) -> int:
        return self.spec.seed
