"""The arm interface: what an arm may change about a turn, and nothing else.

An arm session lives for one episode. The episode runner asks it for the system prompt,
lets it prepare (the gates compile here), shapes each user turn (checklist, directive,
notices), lets it admit or refuse the bookings of a reply, and tells it what was admitted.
What the arm sends besides its shaping (the system prompt, what the history keeps, the window)
is the arm's prompt policy (:mod:`protocol.arms.policy`), which the probe's history rebuild reads
too. The scheduler never sees an arm; an arm's row names its session
(:mod:`runner.arms.registry`).
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field

from protocol.arms import policy
from protocol.arms.askback import Principal
from protocol.arms.render import compose_user_message
from protocol.config import is_synthetic
from protocol.records import (
    Booking,
    CallRecord,
    CellKey,
    CompileRecord,
    CorruptionEvent,
    Episode,
    EpisodeRecord,
    Escalation,
    Turn,
    TurnRecord,
    with_totals,
)
from protocol.state.bookings import read_execution
from protocol.state.machine import TaskState
from protocol.state.receipts import Receipts
from runner.client.endpoint import CallFailed, Reply
from runner.gates.cache import MatcherOutcome
from runner.gates.helper_models import Helpers

__all__ = ["Admission", "AgentCall", "ArmSession", "EpisodeContext", "Shaped"]

AgentCall = Callable[[list[dict[str, str]]], Awaitable[Reply]]


@dataclass
class EpisodeContext:
    """What an arm may use: the episode, its cell, the agent, and the shared helpers."""

    episode: Episode
    cell: CellKey
    agent: AgentCall
    helpers: Helpers | None = None  # the compiler and the matcher, for the gate arms
    calls: list[CallRecord] = field(default_factory=list)  # helper calls of the current turn
    # the scripted user as the gate's questions and escalations reach it on the current turn
    # (the ask and escalate knobs; set by the episode runner each turn)
    principal: Principal | None = None
    on_turn: Callable[[], None] | None = None  # told each time a turn closes (the live view)
    trial: int = 0  # which trial of its (cell, seed) the episode is (--trials, #40)
    # the sessions knob's next_model (issue #48): the agent of every other session (None: the
    # cell's agent runs every session); the episode runner swaps the two at each boundary
    next_agent: AgentCall | None = None

    def turn_done(self) -> None:
        if self.on_turn is not None:
            self.on_turn()


@dataclass
class Shaped:
    """A user turn as the arm sends it."""

    sent: str  # the user message content sent on this turn
    kept: str  # what stays in the history for later turns
    arm_text: str = ""  # what the arm added
    system_extra: str = ""  # added to the system prompt for this call only
    # what the arm added to the user message (``arm_text`` less what went to the system prompt;
    # a same-turn retry repeats it)
    user_addition: str = ""
    matched_step: str | None = None
    matched_redo: bool | None = None
    matcher_outcome: MatcherOutcome | None = None  # None: no matcher call on this turn
    matcher_replies: tuple[str, ...] = ()  # raw replies of a corrected or malformed answer
    directive: str | None = None
    # the ask knob: the gate's question, the user's answer, why it asked, the first reading
    question: str | None = None
    answer: str | None = None
    ask_reason: str | None = None
    first_match: str | None = None
    askback_calls: int = 0  # matcher call records the ask knob added (last in the turn's)


@dataclass
class Admission:
    admitted: list[Booking]
    refused: list[Booking] = field(default_factory=list)
    notices: list[str] = field(default_factory=list)  # rejection notices for the agent
    escalations: list[Escalation] = field(default_factory=list)  # the escalate knob


class ArmSession:
    """The raw transcript: the brief as system prompt and the growing conversation."""

    def __init__(self, ctx: EpisodeContext) -> None:
        self.ctx = ctx
        self.episode = ctx.episode
        self.knobs = ctx.cell.knobs
        self.policy = policy.policy(ctx.cell)  # system prompt, what the history keeps, window
        self.compile_info: CompileRecord | None = None  # the gates' compile, for the log
        self.corruptions: list[CorruptionEvent] = []  # the corrupted-state ablation's events

    def episode_record(
        self,
        turns: Sequence[TurnRecord],
        started: float,
        t0: float,
        failure: CallFailed | None,
    ) -> EpisodeRecord:
        """The episode's log record (the text protocol's and the tool harness's): its turns,
        the infrastructure failure that ended it (None: completed), the compile and the
        corruptions, with the flat keys and totals every record carries (#14). ``started``:
        wall-clock start; ``t0``: its ``time.perf_counter()``."""
        cell = self.ctx.cell
        return with_totals(
            EpisodeRecord(
                cell=cell,
                spec=self.episode.spec,
                turns=tuple(turns),
                termination="completed" if failure is None else failure.termination,
                error=None if failure is None else str(failure),
                attempts=0 if failure is None else failure.attempts,
                started=started,
                wall_s=round(time.perf_counter() - t0, 6),
                compile=self.compile_info,
                corruptions=tuple(self.corruptions),
                synthetic=is_synthetic(cell),
                trial=self.ctx.trial,
            )
        )

    def system_prompt(self) -> str:
        """The arm's system prompt (:func:`protocol.arms.policy.system_prompt`)."""
        return policy.system_prompt(self.policy, self.episode)

    def context(self, history: list[dict[str, str]]) -> list[dict[str, str]]:
        """The earlier turns sent with this turn (the memory arms' record mode cuts them)."""
        return policy.window(self.policy, history)

    def kept(self, turn: Turn, notices: Sequence[str], sent: str) -> str:
        """What the history keeps of the user message sent as ``sent``."""
        return policy.keep(self.policy, turn.text, notices, sent)

    async def prepare(self) -> None:
        """Per-episode set-up before the first turn (the gates compile here)."""

    def addition(self, turn: Turn, state: TaskState) -> str:
        """Text appended to the user message (the checklist's slot)."""
        return ""

    async def shape(self, turn: Turn, state: TaskState, notices: Sequence[str]) -> Shaped:
        add = self.addition(turn, state)
        sent = compose_user_message(turn.text, notices=list(notices), addition=add)
        return Shaped(sent=sent, kept=self.kept(turn, notices, sent), arm_text=add)

    def read(self, reply: str, turn: Turn) -> Receipts:
        return read_execution(reply, self.episode, turn.work_order, tools=self.knobs.tools)

    def admit(
        self,
        turn: Turn,
        shaped: Shaped,
        bookings: Sequence[Booking],
        prior: Sequence[Booking] = (),
    ) -> Admission:
        """The world admits every booking of a known step (no gate). ``prior``: bookings
        already admitted on this turn (a same-turn retry's first reply), which a gate judges
        ``bookings`` after."""
        return Admission(admitted=[b for b in bookings if b.step is not None])

    def refusal(self, booking: Booking, shaped: Shaped) -> tuple[str | None, str | None]:
        """The gate decision for one booking on the arm's state now: (why it is refused or
        None when admitted, the step it names). No gate: every known step is admitted."""
        if booking.step is None:
            return "not in the plan", None
        return None, booking.step

    def observe(self, turn: Turn, admitted: Sequence[Booking], reply: str) -> None:
        """After the turn: what the world admitted (the gates advance on receipts)."""

    def restart(self) -> None:
        """A new session begins with nothing the arm kept from the conversation (the sessions
        knob with ``handoff`` other than "arm", issue #48; docs/semantics.md): what the arm
        read out of the agent's replies or stored of the exchanges is dropped. What it holds
        of the world (the realized state a checklist renders, a gate's compiled state, which
        advances on receipts the world admitted) is not the conversation's and stays. The raw
        transcript keeps nothing: no-op."""
