"""Record types: everything a log line holds, and (re-exported) the episode a spec generates.

All are msgspec Structs, ``frozen=True, kw_only=True``. Schema evolution adds defaulted
fields only; :data:`SCHEMA_VERSION` rises when a reader must know about a change. The
episode's own types live in :mod:`protocol.episode.structs` and a compile's in
:mod:`protocol.state.compile_records`; this module re-exports both, so ``protocol.records``
stays the one place a reader imports a record type from.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal, TypedDict

import msgspec
from msgspec import UNSET, UnsetType

from protocol.config import CellKey, Domain, EpisodeSpec, Knobs, Schedule
from protocol.episode.structs import Episode, Revision, Step, Turn, TurnKind
from protocol.state.compile_records import (
    AccuracyRecord,
    CompiledRevisionRecord,
    CompiledStepRecord,
    CompileRecord,
    CorruptionEvent,
    ValidatorRecord,
)

__all__ = [
    "MODEL_FAILURES",
    "NO_REPLY",
    "REPLY_KEEP",
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
    "Escalation",
    "HelperLogLine",
    "Knobs",
    "MatcherOutcome",
    "PlayedTurn",
    "Revision",
    "Role",
    "Schedule",
    "Step",
    "Termination",
    "ToolCall",
    "Turn",
    "TurnKind",
    "TurnRecord",
    "ValidatorRecord",
    "cached_sum",
    "episode_id",
    "kept_reply",
    "log_key",
    "scripted_fields",
    "trial_slug",
    "with_totals",
]

SCHEMA_VERSION = 2
# 2: EpisodeRecord.compile is a typed CompileRecord (graph as a list of steps; version-1 logs
#    stored it keyed by step id, and runner.rundir.logs reads them into the new shape).

MatcherOutcome = Literal["answered", "null", "corrected", "malformed"]
# who a call is made for; memory and embedding: the memory arms' helper calls (Appendix F);
# rewriter: `ladder paraphrase`'s held-out rewriter (Appendix A.5), never an episode's call
Role = Literal["agent", "matcher", "compiler", "memory", "embedding", "rewriter"]
Termination = Literal[
    "completed",  # every turn ran; the episode is scored
    "endpoint_error",  # a call failed after all its attempts (5xx, 429, connection)
    "timeout",  # a call timed out on every attempt
    "client_error",  # a non-retryable 4xx (e.g. unknown model) ended the episode
    "context_overflow",  # the prompt outgrew the model even at the floor budget
    "cancelled",  # the run was interrupted while the episode was in flight
    # non-replies (OURS, docs/security.md): neither an agent's omission nor an
    # infrastructure error; counted in the cell line's no_reply column, run again on resume
    "content_filter",  # the server's content filter stopped a reply
    "empty_reply",  # a reply with no content on every attempt
]
# Terminations that are the model's failure on its arm, not the infrastructure's (#40): the
# episode counts in n as a failure under both scorings and a resume never reruns it. A prompt
# that outgrew the model's context cannot succeed on a rerun, and leaving it out of n would
# drop exactly the longest episodes of the arms that grow the prompt most.
MODEL_FAILURES: tuple[Termination, ...] = ("context_overflow",)
NO_REPLY: frozenset[str] = frozenset({"content_filter", "empty_reply"})


class _Frozen(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """A log's parts: frozen, their fields strings, numbers and tuples of these parts, so
    none can be in a reference cycle; the cyclic collector never tracks them (``gc=False``:
    a turn's record decodes and frees without the collector's bookkeeping, and is 16 bytes
    smaller; #50, eleventh round). A subclass keeps to such fields."""


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
    # prompt tokens served from the server's prefix cache
    # (usage.prompt_tokens_details.cached_tokens); None: the server did not report them
    # (logs before #41 wrote 0 for that too)
    cached_tokens: int | None = 0
    # A helper request made once for several episodes (a compile): tokens kept, counted once
    # in the run's helper log; with cached=True this episode did not make the request.
    shared: bool = False


REPLY_KEEP = 2_000  # OURS: characters of a raw helper reply a record keeps (#41)


def kept_reply(text: str, limit: int = REPLY_KEEP) -> str:
    """A raw helper reply as a record keeps it: whole up to ``limit`` characters, else its
    first ``limit`` and a marker saying how much was cut (a reply is untrusted and may be
    of any size; enough is kept to read why it was malformed)."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}... [cut: {len(text) - limit:,} more characters]"


class HelperLogLine(msgspec.Struct, frozen=True, kw_only=True, tag="helper"):
    """One line of ``OUT/helpers.jsonl``: the requests of one compile or one matcher answer,
    made once however many episodes share it (runs before the matcher lines: compiles only)."""

    kind: Literal["compile", "matcher"]
    key: str  # the cache key's digest
    calls: tuple[CallRecord, ...]
    # the raw replies of ``calls``, in order, each bounded (kept_reply); () before #41
    replies: tuple[str, ...] = ()


class ToolCall(_Frozen, frozen=True, kw_only=True):
    """One ACTION of the tool harness, in the order the harness dispatched it."""

    tool: str
    work_order: str
    step: str | None  # the step whose tool it names (None: no such tool)
    reply: int = 0  # which reply of the turn made it (0: the turn's first agent call)
    # failed: the tool failed (the tool_failure knob, protocol.stress.tool_failure): nothing executed,
    # but for a ``landed`` failure (a timeout whose write landed), which carries its receipt;
    # status: a call of the read-only status tool (the tool_failure_landed knob)
    outcome: Literal["executed", "refused", "repeat", "stale", "failed", "status"] = "executed"
    receipt: str | None = None  # the workspace stamp an executed (or landed) call wrote
    status: str | None = None  # why the gate refused it, or the failure kind of a failed call
    # the step the refusal notice named (the compiled graph's step for the code; logs before
    # this field: None, read as ``step``)
    named: str | None = None


class Escalation(_Frozen, frozen=True, kw_only=True):
    """A refused booking the gate put to the user (the ``escalate`` knob; protocol.arms.askback):
    ``confirmed`` is an override, the booking admitted once (it is in the turn's ``admitted``);
    otherwise it stays refused (in ``refused``)."""

    booking: Booking
    status: str  # why the gate refused it (cancelled, done, blocked, not requested, ...)
    step: str | None  # the compiled step the gate named
    confirmed: bool


class PlayedTurn(TypedDict):
    """The scripted user's part of a turn's record (:func:`scripted_fields`), typed field by field:
    ``TurnRecord(**scripted_fields(turn), reply=..., ...)`` is checked like any constructor call."""

    index: int
    kind: TurnKind
    step: str | None
    work_order: str | None
    user_text: str
    named: tuple[str, ...]
    dynamic: bool


def scripted_fields(turn: Turn) -> PlayedTurn:
    """The fields a played ``turn`` gives its record; the run adds the rest."""
    return PlayedTurn(
        index=turn.index,
        kind=turn.kind,
        step=turn.step,
        work_order=turn.work_order,
        user_text=turn.text,
        named=turn.named,
        dynamic=turn.dynamic,
    )


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
    # the matcher's raw replies where they did not parse at first (outcome corrected or
    # malformed), each bounded (kept_reply): why a malformed answer was malformed
    matcher_replies: tuple[str, ...] = ()
    directive: str | None = None
    calls: tuple[CallRecord, ...] = ()
    named: tuple[str, ...] = ()
    dynamic: bool = False
    first_reply: str | None = None  # same-turn notice: the reply the gate refused
    # Same-turn notice: the rejection notices the retry showed (prepended to the retry's
    # user message, which repeats the turn's text and the arm's addition, directive
    # included); empty when no retry happened (and in logs older than this field).
    retry_notices: tuple[str, ...] = ()
    # tool harness: the agent's replies after tool results (``reply`` holds the first), and
    # every ACTION dispatched with its outcome and stamp
    follow_ups: tuple[str, ...] = ()
    tool_calls: tuple[ToolCall, ...] = ()
    # Text the stress knobs injected into the user's message (the spoof knob's forgery, in
    # ``sent_text`` after the user's text; protocol.stress.spoof); "" when none.
    injected: str = ""
    # Ask back (the ``ask`` knob; protocol.arms.askback): the gate's clarifying question, the
    # user's answer, why the gate asked, and the matcher's first reading (``matched_step`` is
    # the reading after the answer); None when the gate did not ask.
    question: str | None = None
    answer: str | None = None
    ask_reason: str | None = None
    first_match: str | None = None
    # the matcher calls the ask knob added on this turn (the second reading and the reading of
    # the answer): the last ``askback_calls`` matcher records of ``calls``
    askback_calls: int = 0
    # Escalations (the ``escalate`` knob): each refused booking put to the user, in order.
    escalations: tuple[Escalation, ...] = ()
    # The turn part of the agent calls' draw key (protocol.draws; issue #46): "p<planned
    # index>" or "d<n>"; "" in logs written before it (their agents drew from the prompt)
    draw_turn: str = ""
    # The sessions knob (issue #48): on the first turn of each session after the first, the
    # session's number (1, 2, ...) and, with handoff = "note", the note carried into it (the
    # previous session's note call is the first of ``calls``); unset (not encoded) otherwise.
    session: int | UnsetType = UNSET
    carried: str | UnsetType = UNSET

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
    compile: CompileRecord | None = None  # compiled graph, accuracy, validator flags
    corruptions: tuple[CorruptionEvent, ...] = ()
    synthetic: bool = False  # produced by the scripted synthetic agent
    # Flat keys for querying a log directly (DuckDB, pandas); set by :func:`with_totals` when
    # the record is made. Empty / zero in logs written before they existed: readers that need
    # them recompute them from the cell and the turns (scoring.analyses.cost, scoring.results.episode_rows).
    slug: str = ""  # the cell's slug (the log file's name)
    episode_id: str = ""  # "<slug>/<seed>": one id per (cell, seed)
    arm: str = ""  # the cell's arm, repeated at the top level
    prompt_tokens: int = 0  # the agent's calls only (as in Table 7)
    completion_tokens: int = 0
    agent_tokens: int = 0  # prompt + completion
    # agent prompt tokens the server served from its prefix cache; None: no agent call's
    # server reported them
    cached_tokens: int | None = 0
    agent_calls: int = 0  # agent requests (a same-turn notice's retry included)
    helper_calls: int = 0  # matcher and compiler requests made (cache hits not counted)
    helper_cached: int = 0  # matcher and compiler calls served from the helper cache
    helper_tokens: int = 0  # prompt + completion of the helper requests made
    # Repeated trials (--trials K, #40): which run of this (cell, seed) the record is, 0..K-1;
    # 0 in every log written without repeated trials (and before the field).
    trial: int = 0

    @property
    def seed(self) -> int:
        return self.spec.seed


def trial_slug(slug: str, trial: int) -> str:
    """The log key's name for trial ``trial`` of the cell ``slug``: the slug itself for trial
    0 (so a run without --trials keys, resumes and rescores as before), ``<slug>#t<k>``
    for trial k."""
    return slug if trial == 0 else f"{slug}#t{trial}"


def log_key(record: EpisodeRecord) -> tuple[str, int]:
    """What a log reader keys a record by (the last record of a key wins): (cell slug, seed),
    the slug naming the trial after the first (:func:`trial_slug`)."""
    return (trial_slug(record.cell.slug(), record.trial), record.spec.seed)


def episode_id(cell: CellKey, seed: int, trial: int = 0) -> str:
    """The id of one episode of a cell: ``<slug>/<seed>``, and ``/t<k>`` for trial k > 0."""
    return f"{cell.slug()}/{seed}" + (f"/t{trial}" if trial else "")


def cached_sum(calls: Iterable[CallRecord]) -> int | None:
    """The cached prompt tokens of ``calls`` that reported them; None when none did (or there
    are no calls): "not reported", never a 0 the server did not send."""
    reported = [c.cached_tokens for c in calls if c.cached_tokens is not None]
    return sum(reported) if reported else None


def with_totals(record: EpisodeRecord) -> EpisodeRecord:
    """*record* with its flat keys (slug, episode id, arm) and token and call totals set."""
    agent = [c for t in record.turns for c in t.calls if c.role == "agent" and not c.cached]
    helper = [c for t in record.turns for c in t.calls if c.role != "agent"]
    made = [c for c in helper if not c.cached]
    prompt = sum(c.prompt_tokens for c in agent)
    completion = sum(c.completion_tokens for c in agent)
    return msgspec.structs.replace(
        record,
        slug=record.cell.slug(),
        episode_id=episode_id(record.cell, record.spec.seed, record.trial),
        arm=record.cell.arm,
        prompt_tokens=prompt,
        completion_tokens=completion,
        agent_tokens=prompt + completion,
        cached_tokens=cached_sum(agent),
        agent_calls=len(agent),
        helper_calls=len(made),
        helper_cached=len(helper) - len(made),
        helper_tokens=sum(c.prompt_tokens + c.completion_tokens for c in made),
    )
