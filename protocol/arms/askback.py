"""Ask back and escalation (issue #38; ours, docs/askback.md), pure.

Section 5.5 recommends what the paper never ran: "a gate should show the step it resolved,
and ask back when no step resolves"; Section 6 adds that "refusals have no escalation path".
The gate arms' knobs ``show``, ``ask`` and ``escalate`` (:class:`protocol.config.Knobs`, off
by default) build it; this module holds the rules, the arms (:mod:`runner.arms.gates`) and the
scorer read them, and the scripted user answers through :class:`Principal`.

When the gate asks (:func:`ask_reason`; ours): the matcher's reply stayed malformed after its
correction call (``malformed``), it resolved no step (``unresolved``), it named a step the
compiled graph does not hold (``unplaced``), or, under ``ask = "second_reading"``, a second
matcher reading of the same message with the step list in reverse order names another step
(``disagree``: two candidates). One question per turn at most.

The scripted user answers from the ground truth it holds (ours; docs/protocol.md):

* a clarifying question: the turn's intended step in the brief's words with the turn's work
  order (:data:`strings.USER_CLARIFY_STEP`; :data:`strings.USER_CLARIFY_REDO` on a legitimate
  redo, the only turn whose request authorizes one), both named steps on a double order, and
  :data:`strings.USER_CLARIFY_NONE` on a turn that asks for no step (a filler or a remark).
  The answer restates the request: the turn's requested step, label and work order are
  unchanged, so a question never moves ground truth.
* an ambiguous probe (issue #46): the step the user meant of the two it named, of those
  still eligible at the start of the turn (:func:`protocol.episode.ambiguous.meant_step`),
  worded as any intended step (:data:`strings.USER_CLARIFY_STEP`, the probe's work order);
  "None of those" when neither is eligible any more. The only answer that says more than the
  message did: from it on, the turn asks for that step (:func:`answered_step`, read from the
  answer's words; its label is the step's verdict at the start of the turn), which the
  episode runner and the scorer both read from the logged answer. A probe nobody asked about
  still asks for no step; logs written before this rule hold "None of those" there and
  rescore unchanged.
* an escalation: a confirmation exactly when the refused booking is correct under the brief's
  rules (:func:`confirms`): it books a step this turn requested, under this turn's work order,
  not already executed on this turn, and the step's verdict at the start of the turn is
  ``eligible`` or ``redo`` (the user knows what it ordered and whether it ordered a redo);
  a refusal otherwise, and the booking stays refused.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Literal

import msgspec

from protocol import strings
from protocol.config import AskMode
from protocol.episode.ambiguous import meant_step
from protocol.records import Booking, Episode, Turn
from protocol.state.machine import TaskState, Verdict

__all__ = [
    "ASK_REASONS",
    "AskReason",
    "Clarification",
    "ClarifyLabel",
    "Principal",
    "answered_step",
    "ask_reason",
    "clarification",
    "confirms",
    "question",
    "render_escalation",
    "render_exchange",
    "render_show",
    "requested_steps",
]

AskReason = Literal["malformed", "unresolved", "unplaced", "disagree"]
ASK_REASONS: tuple[AskReason, ...] = ("malformed", "unresolved", "unplaced", "disagree")
# the user's answer: the intended step, a redo of it, both steps of a double order, the step
# meant by an ambiguous probe (#46), or none
ClarifyLabel = Literal["step", "redo", "both", "meant", "none"]
_CONFIRMABLE = ("eligible", "redo")


class Clarification(msgspec.Struct, frozen=True, kw_only=True):
    """The scripted user's answer to a clarifying question."""

    text: str
    label: ClarifyLabel


def ask_reason(
    mode: AskMode,
    step: str | None,
    malformed: bool,
    known: Iterable[str],
    second: str | None = None,
) -> AskReason | None:
    """Why the gate asks the user back on this turn, or None (see the module docstring).
    ``second``: the second reading's step (``ask = "second_reading"``, when it was made)."""
    if mode == "off":
        return None
    if malformed:
        return "malformed"
    if step is None:
        return "unresolved"
    if step not in set(known):
        return "unplaced"
    if mode == "second_reading" and second != step:
        return "disagree"
    return None


def question(reason: AskReason, candidates: Mapping[str, str]) -> str:
    """The gate's clarifying question; ``candidates``: the two readings' steps -> their brief
    texts (used when the readings disagree and both name a step)."""
    if reason == "disagree" and len(candidates) == 2:
        a, b = candidates.values()
        return strings.ASK_EITHER.format(a=a, b=b)
    return strings.ASK_WHICH


def render_exchange(question_text: str, answer: str) -> str:
    """The question and the user's answer as the agent sees them after the user's text."""
    return strings.ASK_EXCHANGE.format(question=question_text, answer=answer)


def render_show(step: str | None, texts: Mapping[str, str]) -> str:
    """The gate's reading line (``show``): the resolved step by id and in the brief's words."""
    if step is None or step not in texts:
        return strings.SHOW_NONE
    return strings.SHOW_STEP.format(id=step, text=texts[step])


def render_escalation(booking: Booking, status: str, step: str | None) -> str:
    """The refusal as the gate puts it to the user (``escalate``)."""
    word = {"done": "already DONE"}.get(status, status.upper())
    return strings.ESCALATION.format(
        code=booking.code, work_order=booking.work_order, id=step or "?", status=word
    )


def requested_steps(turn: Turn) -> tuple[str, ...]:
    """The steps ``turn`` orders: its step, both steps of a double order, or none."""
    if turn.kind == "double":
        return turn.named
    return (turn.step,) if turn.step is not None and turn.work_order is not None else ()


def clarification(episode: Episode, turn: Turn, meant: str | None = None) -> Clarification:
    """The scripted user's answer to a clarifying question on ``turn``; ``meant``: on an
    ambiguous probe, the step the user meant (:func:`protocol.episode.ambiguous.meant_step`;
    None: neither named step is wanted any more)."""
    texts = {s.id: s.text for s in episode.steps}
    wo = turn.work_order or ""
    if turn.kind == "double" and len(turn.named) == 2:
        a, b = (texts[v] for v in turn.named)
        return Clarification(text=strings.USER_CLARIFY_BOTH.format(a=a, b=b, wo=wo), label="both")
    if turn.kind == "ambiguous" and meant in turn.named and turn.work_order is not None:
        text = strings.USER_CLARIFY_STEP.format(text=texts[meant], wo=wo)
        return Clarification(text=text, label="meant")
    steps = requested_steps(turn)
    if not steps:
        return Clarification(text=strings.USER_CLARIFY_NONE, label="none")
    text = texts[steps[0]]
    if turn.kind == "legit_redo":
        return Clarification(text=strings.USER_CLARIFY_REDO.format(text=text, wo=wo), label="redo")
    return Clarification(text=strings.USER_CLARIFY_STEP.format(text=text, wo=wo), label="step")


def answered_step(episode: Episode, turn: Turn, answer: str | None) -> str | None:
    """The step an ambiguous probe asks for once the user's answer to the gate's question
    named the step it meant (see the module docstring), read from the answer's words, or
    None: no question, not a probe, or "None of those" (what logs before issue #46 hold
    there: they rescore unchanged)."""
    if turn.kind != "ambiguous" or turn.work_order is None or answer is None:
        return None
    for v in turn.named:
        said = strings.USER_CLARIFY_STEP.format(text=episode.step(v).text, wo=turn.work_order)
        if answer == said:
            return v
    return None


def confirms(
    turn: Turn, verdicts: Mapping[str, Verdict], booking: Booking, executed: Iterable[str] = ()
) -> bool:
    """Whether the user confirms the refused ``booking`` (see the module docstring):
    ``verdicts`` holds each requested step's verdict at the start of the turn, ``executed``
    the steps already executed on this turn."""
    v = booking.step
    if v is None or v not in requested_steps(turn) or booking.work_order != turn.work_order:
        return False
    verdict = verdicts.get(v)
    return verdict is not None and verdict.label in _CONFIRMABLE and v not in set(executed)


class Principal:
    """The scripted user as the gate's questions reach it on one turn: the episode, the turn
    as planned and the realized state at its start (alpha set), which the user holds.

    The gate never reads the state; it only asks. The state is the scripted user's own object,
    not copied: the episode runner builds a principal per turn, before any booking of the
    turn reaches the realized state."""

    def __init__(self, episode: Episode, turn: Turn, state: TaskState) -> None:
        self.episode = episode
        self.turn = turn
        self._meant: str | None = None
        if turn.kind == "ambiguous":  # the step it meant, of those still eligible (#46)
            owed = {v for v in turn.named if state.verdict(v).label == "eligible"}
            self._meant = meant_step(episode.spec, turn.named, owed)
        meant = (self._meant,) if self._meant is not None else ()
        self._verdicts = {v: state.verdict(v) for v in (*requested_steps(turn), *meant)}

    def clarify(self) -> Clarification:
        """The answer to the gate's question; on an ambiguous probe it names the step meant,
        which the turn asks for from then on (an escalation of it is judged so)."""
        answer = clarification(self.episode, self.turn, self._meant)
        if answer.label == "meant":
            self.turn = msgspec.structs.replace(self.turn, step=self._meant)
        return answer

    def escalation(self, booking: Booking, executed: Iterable[str] = ()) -> bool:
        return confirms(self.turn, self._verdicts, booking, executed)

    @staticmethod
    def answer_text(confirmed: bool) -> str:
        return strings.USER_CONFIRM if confirmed else strings.USER_REFUSE
