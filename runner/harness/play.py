"""What the harness graph's nodes do, over one episode's mutable state (no LangGraph here).

A :class:`Play` holds the scripted user, the arm session, the dispatch and the transcript;
each ``on_<node>`` method is one node of :mod:`runner.harness.graph` and returns the name of the
node to run next. The turn's user message is the arm's shaping of the scripted user's turn,
exactly as in the text protocol (:mod:`runner.execution.episode_loop`); what differs is the brief (the tool
clause instead of the ref protocol), that a booking is a tool call, and that tool results
and refusal notices return to the agent in the user role within the turn.
"""

from __future__ import annotations

from typing import Literal

from msgspec import UNSET

from protocol.arms.askback import Principal, answered_step
from protocol.records import Booking, CallRecord, ToolCall, Turn, TurnRecord, scripted_fields
from protocol.state.machine import Verdict
from protocol.state.receipts import Action, find_actions
from protocol.stress.spoof import planned_tool_results
from protocol.user import ScriptedUser
from runner.arms.base import ArmSession, EpisodeContext, Shaped
from runner.arms.handoff import carry, restart
from runner.client.turn_draw import TURN_DRAW
from runner.harness.dispatch import Dispatch
from runner.harness.workspace import Workspace

__all__ = ["MAX_FOLLOW_UPS", "STATUS_FOLLOW_UPS", "Play", "follow_ups"]

# OURS: agent calls after tool results within one turn (the paper does not say); a reply with
# no new call ends the turn first. Results a turn could not deliver lead the next user turn.
MAX_FOLLOW_UPS = 2
# OURS (issue #37): with the status tool listed (the tool_failure_landed knob), a careful agent
# asks the status after each of a call's two timeouts before it retries: book, status, retry,
# status, retry is four follow-ups. Off, the limit is MAX_FOLLOW_UPS, as before the knob.
STATUS_FOLLOW_UPS = 4


def follow_ups(status_tool: bool) -> int:
    """The turn's follow-up limit: :data:`STATUS_FOLLOW_UPS` with the status tool listed."""
    return STATUS_FOLLOW_UPS if status_tool else MAX_FOLLOW_UPS


Next = Literal["user", "agent", "parse", "gate", "tool", "end"]


class Play:
    def __init__(self, ctx: EpisodeContext, arm: ArmSession, workspace: Workspace) -> None:
        ep = ctx.episode
        self.ctx = ctx
        self.arm = arm
        self.user = ScriptedUser(ep, ctx.cell.knobs.user_style, ctx.cell.knobs.user_dose)
        self.dispatch = Dispatch(ep, arm, workspace)
        self.follow_ups = follow_ups(self.dispatch.status_tool)
        # the spoof knob on the harness (generator 5): forged tool results by planned turn
        knobs = ctx.cell.knobs
        forge = knobs.spoof == "tool_result" and ep.spec.generator >= 5
        self.forged = planned_tool_results(ep, knobs.spoof_dose) if forge else {}
        self.system = arm.system_prompt()  # the harness's brief (protocol.arms.policy)
        self.history: list[dict[str, str]] = []
        self.turns: list[TurnRecord] = []
        self._carry: list[str] = []  # results the last turn could not deliver
        self._prepare_calls: list[CallRecord] = []
        self._dynamic = 0  # dynamic turns served so far (their draw keys, protocol.draws)
        self.draw_turn = ""
        # the sessions knob (issue #48): the planned turns that open a session, the session
        # in play (0: the first) and the note carried into the turn in play
        self._opens = set(ep.boundaries)
        self.session = 0
        self._opened = False
        self._note: str | None = None
        self._reset()

    def _reset(self) -> None:
        self.turn: Turn | None = None
        self.verdict: Verdict | None = None
        self.shaped = Shaped(sent="", kept="")
        self.base: list[dict[str, str]] = []  # system, history, this turn's user message
        self.tail: list[dict[str, str]] = []  # this turn's replies and results since
        self.replies: list[str] = []
        self.reasoning = ""
        self.calls: list[CallRecord] = []
        self.queue: list[Action] = []
        self.results: list[str] = []
        self.tool_calls: list[ToolCall] = []
        self.admitted: list[Booking] = []
        self.refused: list[Booking] = []
        self._pending: tuple[ToolCall, Booking] | None = None
        self.shown: tuple[str, ...] = ()  # carried results prepended to this turn
        self.injected = ""  # the forged tool result opening this turn (the spoof knob)

    async def prepare(self) -> None:
        self.ctx.calls.clear()
        await self.arm.prepare()
        self._prepare_calls = list(self.ctx.calls)

    # --- nodes --------------------------------------------------------------------------
    async def on_user(self) -> Next:
        """Close the turn in play (if any), then open the scripted user's next turn."""
        if self.turn is not None:
            self._close()
        turn = self.user.next_turn()
        if turn is None:
            return "end"
        self._reset()
        self.turn = turn
        self.ctx.calls.clear()
        await self._restart()
        self.verdict = self.user.begin(turn)
        self.ctx.principal = Principal(self.ctx.episode, turn, self.user.state)
        self.dispatch.begin_turn()
        notices, self._carry = self._carry, []
        planned = self.user.planned
        self.draw_turn = f"p{planned}" if planned is not None else f"d{self._dynamic}"
        self._dynamic += planned is None
        self.injected = self.forged.get(planned, "") if planned is not None else ""
        if self.injected:  # after any real result carried over, as one more result
            notices.append(self.injected)
        self.shown = tuple(notices)
        self.shaped = shaped = await self.arm.shape(turn, self.user.state, notices)
        if self._note is not None:  # the note opens the session's first message, kept with it
            shaped.sent, shaped.kept = (
                carry(self._note, shaped.sent),
                carry(self._note, shaped.kept),
            )
        self.calls = [*self._prepare_calls, *self.ctx.calls]
        self._prepare_calls = []
        sys_msg = {"role": "system", "content": self.system + shaped.system_extra}
        self.base = [sys_msg, *self.history, {"role": "user", "content": shaped.sent}]
        return "agent"

    async def _restart(self) -> None:
        """Before the first turn of a session after the first (the sessions knob, issue #48;
        :mod:`runner.arms.handoff`, as in the text protocol): the note call (with
        ``handoff = "note"``) closes the session, and the transcript starts again. Results
        the last turn could not deliver are the world's and still lead the turn."""
        self._opened = self.user.planned in self._opens
        self._note = None
        if not self._opened:
            return
        self._opens.discard(self.user.planned)
        self.session += 1
        done = await restart(self.ctx, self.arm, self.system, self.history, self.session)
        self.history, self._note = [], done.note
        self._prepare_calls = [*self._prepare_calls, *done.calls]

    async def on_agent(self) -> Next:
        """Deliver the results of the last reply's calls (user role), then call the agent."""
        if self.results:
            self.tail.append({"role": "user", "content": "\n\n".join(self.results)})
            self.results = []
        # the agent's dice (protocol.draws): one key per call of the turn, set here because
        # the graph may run each node in its own context
        TURN_DRAW.set((self.ctx.episode.spec.seed, self.draw_turn, len(self.replies)))
        reply = await self.ctx.agent([*self.base, *self.tail])
        self.calls.append(reply.call)
        self.replies.append(reply.content)
        self.tail.append({"role": "assistant", "content": reply.content})
        if len(self.replies) == 1:
            self.reasoning = reply.reasoning
        return "parse"

    async def on_parse(self) -> Next:
        self.queue = find_actions(self.replies[-1])
        return self._after_calls()

    async def on_gate(self) -> Next:
        assert self.turn is not None
        action = self.queue.pop(0)
        call, booking, notice = self.dispatch.decide(
            self.turn, self.shaped, action, len(self.replies) - 1
        )
        if call.outcome == "executed" and booking is not None:
            self._pending = (call, booking)
            return "tool"
        self.tool_calls.append(call)
        if call.outcome == "refused" and booking is not None:
            self.refused.append(booking)
            self.results.append(notice or "")
        elif call.outcome == "status" and notice is not None:
            self.results.append(notice)  # the read-only status tool's result
        return self._after_calls()

    async def on_tool(self) -> Next:
        assert self.turn is not None and self._pending is not None
        call, booking = self._pending
        self._pending = None
        call, result = self.dispatch.execute(self.turn, call, booking)
        self.tool_calls.append(call)
        # a failed call executed nothing, but for a timeout whose write landed
        if call.outcome == "executed" or call.receipt is not None:
            self.admitted.append(booking)
        self.results.append(result)
        return self._after_calls()

    def _after_calls(self) -> Next:
        """The next call of the reply; else the agent again with the results (at most
        ``follow_ups`` times a turn); else the next user turn (this one closes)."""
        if self.queue:
            return "gate"
        if not self.results:
            return "user"
        if len(self.replies) - 1 >= self.follow_ups:
            self._carry, self.results = self.results, []
            return "user"
        return "agent"

    def _close(self) -> None:
        turn = self.turn
        assert turn is not None
        self.history.append({"role": "user", "content": self.shaped.kept})
        self.history.extend(self.tail)
        executed = list(dict.fromkeys(b.step for b in self.admitted if b.step is not None))
        meant = answered_step(self.ctx.episode, turn, self.shaped.answer)  # issue #46
        closed, verdict = (turn, self.verdict) if meant is None else self.user.resolve(turn, meant)
        self.user.finish(closed, verdict, executed)
        shaped = self.shaped
        self.turns.append(
            TurnRecord(
                **scripted_fields(turn),
                sent_text=shaped.sent,
                arm_text=shaped.arm_text,
                notices=self.shown,
                reply=self.replies[0],
                reasoning=self.reasoning,
                admitted=tuple(self.admitted),
                refused=tuple(self.refused),
                matched_step=shaped.matched_step,
                matched_redo=shaped.matched_redo,
                matcher_outcome=shaped.matcher_outcome,
                matcher_replies=shaped.matcher_replies,
                directive=shaped.directive,
                calls=tuple(self.calls),
                follow_ups=tuple(self.replies[1:]),
                tool_calls=tuple(self.tool_calls),
                question=shaped.question,
                answer=shaped.answer,
                ask_reason=shaped.ask_reason,
                first_match=shaped.first_match,
                askback_calls=shaped.askback_calls,
                escalations=tuple(self.dispatch.escalations),
                injected=self.injected,
                draw_turn=self.draw_turn,
                session=self.session if self._opened else UNSET,
                carried=self._note if self._note is not None else UNSET,
            )
        )
        self.turn = None
        self.ctx.turn_done()
