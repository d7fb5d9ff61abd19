"""One episode, start to finish, with no side effects: ``run_episode(ctx) -> EpisodeRecord``.

The scripted user serves each turn on the realized state; the arm shapes it; the agent
replies; the arm admits or refuses the bookings; admitted bookings enter the realized state.
An infrastructure failure ends the episode with that termination reason (never an agent
failure); the scheduler logs it and a resumed run retries it.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import msgspec
from msgspec import UNSET, UnsetType

from protocol.arms.askback import Principal, answered_step
from protocol.arms.render import compose_user_message
from protocol.records import (
    Booking,
    CallRecord,
    EpisodeRecord,
    Escalation,
    Turn,
    TurnRecord,
    scripted_fields,
)
from protocol.state.machine import Verdict
from protocol.stress.spoof import forgery, planned_forgeries
from protocol.user import ScriptedUser
from runner.arms import Admission, ArmSession, EpisodeContext, Shaped, make_arm
from runner.arms.handoff import carry, restart
from runner.client.body import TRANSCRIPT, Message, Transcript
from runner.client.endpoint import CallFailed, Reply
from runner.client.turn_draw import TURN_DRAW

__all__ = ["run_episode", "same_turn_notice"]


@dataclass
class _Played:
    """One turn's outcome after the arm's admission (and a same-turn re-prompt, if any)."""

    reply: Reply
    admitted: list[Booking]
    refused: list[Booking]
    notices: list[str]  # for the next turn
    first_reply: str | None = None
    retry_notices: tuple[str, ...] = ()  # what the same-turn retry showed
    escalations: tuple[Escalation, ...] = ()  # the escalate knob: both replies' refusals


async def same_turn_notice(
    ctx: EpisodeContext,
    arm: ArmSession,
    turn: Turn,
    shaped: Shaped,
    messages: list[dict[str, str]],
    first: Reply,
    adm: Admission,
) -> _Played:
    """The same-turn notice (``notice="same_turn"``, Appendix D.3): the gate re-prompts
    within the turn with its rejection notices; the visible reply is the one written after
    the refusal. The retry's user message repeats the turn as the first request carried it
    (the arm's addition, directive included; a system-role directive stays in the system
    message) after the notices, and its bookings are judged on the state the first reply's
    admitted bookings produced. Bookings of both replies count once each (by code and work
    order); the retried reply's new refusals are noticed on the next turn."""
    addition = shaped.user_addition if shaped.system_extra else shaped.arm_text
    retry_msg = compose_user_message(turn.text, notices=adm.notices, addition=addition)
    messages = [
        *messages,
        {"role": "assistant", "content": first.content},
        {"role": "user", "content": retry_msg},
    ]
    drawn = TURN_DRAW.get()
    if drawn is not None:  # the retry is the turn's second call: its own dice
        TURN_DRAW.set((drawn[0], drawn[1], drawn[2] + 1))
    reply = await ctx.agent(messages)
    bookings = arm.read(reply.content, turn).bookings
    again = arm.admit(turn, shaped, bookings, prior=adm.admitted)
    admitted, refused = list(adm.admitted), list(adm.refused)
    seen = {(b.code, b.work_order) for b in admitted + refused}
    admitted += [b for b in again.admitted if (b.code, b.work_order) not in seen]
    fresh = [(b, n) for b, n in zip(again.refused, again.notices, strict=True)]
    fresh = [(b, n) for b, n in fresh if (b.code, b.work_order) not in seen]
    refused += [b for b, _ in fresh]
    return _Played(
        reply,
        admitted,
        refused,
        [n for _, n in fresh],
        first_reply=first.content,
        retry_notices=tuple(adm.notices),
        escalations=(*adm.escalations, *again.escalations),
    )


async def _play(
    ctx: EpisodeContext, arm: ArmSession, turn: Turn, shaped: Shaped, messages: list[dict[str, str]]
) -> tuple[_Played, list[Reply]]:
    """The agent's reply to ``messages`` and what the arm admits of it."""
    reply = await ctx.agent(messages)
    adm = arm.admit(turn, shaped, arm.read(reply.content, turn).bookings)
    if adm.refused and ctx.cell.knobs.notice == "same_turn":
        played = await same_turn_notice(ctx, arm, turn, shaped, messages, reply, adm)
        return played, [reply, played.reply]
    played = _Played(
        reply,
        list(adm.admitted),
        list(adm.refused),
        notices=adm.notices,
        escalations=tuple(adm.escalations),
    )
    return played, [reply]


@dataclass
class _Conversation:
    """What the episode carries from turn to turn: the system prompt, the history the arm
    sends, the notices for the next turn, the helper calls not yet recorded (the arm's
    preparation, a session restart's), the dynamic turns served so far (their draw keys,
    protocol.draws), the sessions knob's boundaries still to open (#48) and the last system
    message sent. The messages it keeps are :class:`runner.client.body.Message` objects, never
    edited once made (#50)."""

    system: str
    pending_calls: list[CallRecord]
    opens: set[int]
    history: list[dict[str, str]] = field(default_factory=list)
    notices: list[str] = field(default_factory=list)
    dynamic: int = 0
    session: int = 0
    sys_message: Message | None = None

    def system_message(self, extra: str) -> Message:
        """The system message with the arm's addition of this turn: the same :class:`Message`
        while its text is the same (the transcript keeps its encoding, #50)."""
        content = self.system + extra
        if self.sys_message is None or self.sys_message["content"] != content:
            self.sys_message = Message(role="system", content=content)
        return self.sys_message


async def run_episode(ctx: EpisodeContext) -> EpisodeRecord:
    if ctx.cell.knobs.harness == "langgraph":
        from runner.harness import run_harness_episode  # LangGraph only when a cell needs it

        return await run_harness_episode(ctx)
    ep = ctx.episode
    knobs = ctx.cell.knobs
    user = ScriptedUser(ep, knobs.user_style, knobs.user_dose)
    # generator 5: the forgeries are a dose on the planned turns (protocol.stress.spoof)
    planned = (
        planned_forgeries(ep, knobs.spoof, knobs.spoof_dose) if ep.spec.generator >= 5 else None
    )
    arm = make_arm(ctx)
    turns: list[TurnRecord] = []
    started = time.time()
    t0 = time.perf_counter()
    failure: CallFailed | None = None
    opens = set(ep.boundaries)  # planned turns that open a session (the sessions knob, #48)
    # the agent's request bodies, each built on the last (#50): kept for this episode run
    kept = TRANSCRIPT.set(Transcript())
    try:
        ctx.calls.clear()
        TURN_DRAW.set(None)
        await arm.prepare()
        prepare_calls = list(ctx.calls)
        conv = _Conversation(arm.system_prompt(), prepare_calls, opens)
        while (turn := user.next_turn()) is not None:
            turns.append(await _serve_turn(ctx, arm, user, planned, conv, turn))
            ctx.turn_done()
    except CallFailed as e:
        failure = e
    finally:
        TRANSCRIPT.reset(kept)
    return arm.episode_record(turns, started, t0, failure)


async def _serve_turn(
    ctx: EpisodeContext,
    arm: ArmSession,
    user: ScriptedUser,
    planned: dict[int, str] | None,
    conv: _Conversation,
    turn: Turn,
) -> TurnRecord:
    """One turn: a session restart at a boundary, the scripted turn (with its forgery, if
    any) shaped by the arm, the agent's reply and the arm's admission; the turn's record."""
    ep = ctx.episode
    ctx.calls.clear()
    TURN_DRAW.set(None)  # an arm's own calls while it shapes the turn carry no key
    opened, note = False, None
    if user.planned in conv.opens:  # a boundary: the conversation restarts before this turn
        opened, note = True, await _open_session(ctx, arm, conv, user.planned)
    verdict = user.begin(turn)
    if planned is None:  # versions 1-4: on the realized state
        injected = forgery(ep, turn, verdict, ctx.cell.knobs.spoof)
    else:
        injected = planned.get(user.planned, "") if user.planned is not None else ""
    asked = _with_injected(turn, injected)
    ctx.principal = Principal(ep, turn, user.state)
    shown, shaped = conv.notices, await arm.shape(asked, user.state, conv.notices)
    if note is not None:  # the note opens the session's first message, kept with it
        shaped.sent, shaped.kept = carry(note, shaped.sent), carry(note, shaped.kept)
    sys_msg = conv.system_message(shaped.system_extra)
    messages = [sys_msg, *arm.context(conv.history), {"role": "user", "content": shaped.sent}]
    key = f"p{user.planned}" if user.planned is not None else f"d{conv.dynamic}"
    conv.dynamic += user.planned is None
    TURN_DRAW.set((ep.spec.seed, key, 0))
    played, replies = await _play(ctx, arm, asked, shaped, messages)
    calls = [*conv.pending_calls, *ctx.calls, *(r.call for r in replies)]
    conv.pending_calls = []
    conv.notices = played.notices
    reply = played.reply
    # never edited once made: the transcript keeps their encodings (runner.client.body, #50)
    conv.history.append(Message(role="user", content=shaped.kept))
    conv.history.append(Message(role="assistant", content=reply.content))
    executed = [b.step for b in played.admitted if b.step is not None]
    user.finish(*_answered(user, turn, verdict, shaped.answer), executed)
    arm.observe(turn, played.admitted, reply.content)
    return _turn_record(
        turn,
        shaped,
        played,
        _Served(tuple(shown), tuple(calls), injected, key),
        session=conv.session if opened else UNSET,
        carried=note if note is not None else UNSET,
    )


async def _open_session(
    ctx: EpisodeContext, arm: ArmSession, conv: _Conversation, boundary: int
) -> str | None:
    """Restart the conversation at a session boundary (the sessions knob, #48): the next
    session opens with an empty history; the handoff's note (None: no note) is returned and
    its calls wait for this turn's record."""
    conv.opens.discard(boundary)
    conv.session += 1
    done = await restart(ctx, arm, conv.system, conv.history, conv.session)
    conv.history = []
    conv.pending_calls = [*conv.pending_calls, *done.calls]
    return done.note


@dataclass(frozen=True)
class _Served:
    """What the episode runner adds to a turn's record beside the arm's shaping and the
    agent's reply: the notices shown, the calls made, the injected text and the draw key."""

    shown: tuple[str, ...]
    calls: tuple[CallRecord, ...]
    injected: str
    key: str


def _turn_record(
    turn: Turn,
    shaped: Shaped,
    played: _Played,
    served: _Served,
    *,
    session: int | UnsetType,
    carried: str | UnsetType,
) -> TurnRecord:
    """The record of one turn, as the log keeps it."""
    return TurnRecord(
        **scripted_fields(turn),
        sent_text=shaped.sent,
        arm_text=shaped.arm_text,
        notices=served.shown,
        reply=played.reply.content,
        reasoning=played.reply.reasoning,
        admitted=tuple(played.admitted),
        refused=tuple(_dedupe(played.refused)),
        matched_step=shaped.matched_step,
        matched_redo=shaped.matched_redo,
        matcher_outcome=shaped.matcher_outcome,
        matcher_replies=shaped.matcher_replies,
        directive=shaped.directive,
        calls=served.calls,
        first_reply=played.first_reply,
        retry_notices=played.retry_notices,
        injected=served.injected,
        question=shaped.question,
        answer=shaped.answer,
        ask_reason=shaped.ask_reason,
        first_match=shaped.first_match,
        askback_calls=shaped.askback_calls,
        escalations=played.escalations,
        draw_turn=served.key,
        session=session,
        carried=carried,
    )


def _answered(
    user: ScriptedUser, turn: Turn, verdict: Verdict | None, answer: str | None
) -> tuple[Turn, Verdict | None]:
    """The turn as the user closes it: an ambiguous probe the user's answer resolved asks for
    the step meant (issue #46, protocol.arms.askback.answered_step); any other as served."""
    step = answered_step(user.episode, turn, answer)
    return (turn, verdict) if step is None else user.resolve(turn, step)


def _with_injected(turn: Turn, injected: str) -> Turn:
    """The turn as the user's message carries it: the injected text on a new line after the
    scripted user's (the spoof knob; the turn's record keeps the scripted text)."""
    return msgspec.structs.replace(turn, text=f"{turn.text}\n{injected}") if injected else turn


def _dedupe(bookings: list[Booking]) -> list[Booking]:
    return list({(b.code, b.work_order): b for b in bookings}.values())
