"""Record types: the episode a spec generates and everything a log line holds.

All are msgspec Structs, ``frozen=True, kw_only=True``. Schema evolution adds defaulted
fields only; :data:`SCHEMA_VERSION` rises when a reader must know about a change.
"""

from __future__ import annotations

from typing import Literal

import msgspec

__all__ = [
    "SCHEMA_VERSION",
    "Booking",
    "CallRecord",
    "CellKey",
    "Domain",
    "Episode",
    "EpisodeRecord",
    "EpisodeSpec",
    "Knobs",
    "Revision",
    "Step",
    "ToolCall",
    "Turn",
    "TurnKind",
    "TurnRecord",
]

SCHEMA_VERSION = 1

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
    role: Literal["agent", "matcher", "compiler"]
    prompt_tokens: int = 0
    completion_tokens: int = 0
    wait_s: float = 0.0  # time waiting for a slot under the concurrency cap
    server_s: float = 0.0  # time at the server, all attempts
    attempts: int = 1
    finish_reason: str | None = None
    cached: bool = False  # served from the helper cache (no request made)
    max_tokens: int = 0


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
    arm_text: str = ""  # what the arm added (checklist, directive, notice)
    reply: str = ""  # the visible reply
    reasoning: str = ""  # reasoning_content, kept apart; it can book nothing
    admitted: tuple[Booking, ...] = ()  # bookings the world admitted
    refused: tuple[Booking, ...] = ()  # bookings a gate refused
    matched_step: str | None = None
    matched_redo: bool | None = None
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
    compile: dict[str, object] | None = None  # compiled graph, accuracy, validator flags
    corruptions: tuple[dict[str, object], ...] = ()
    synthetic: bool = False  # produced by the scripted synthetic agent

    @property
    def seed(self) -> int:
        return self.spec.seed
