"""One logged episode's turns as ``ladder show`` and ``ladder view`` draw them (the
:class:`~scoring.display.models.TurnView` of :mod:`scoring.display.models`), with the replay's
verdict on each under both scorings (:func:`scoring.replay.episode_score.score_episode`). Pure;
no scoring rule of its own.

* :func:`turn_views`: every turn: kind, label under both scorings, the user text as sent with
  the arm's additions apart, the reply, bookings admitted and refused, the errors (channel and
  step; a re-execution with the turn it repeats), the matcher's answer, the directive, per-call
  tokens and latency, the corruption events, tool failures and escalations of the turn.
* :func:`sent_parts`: the user message as sent, cut into who wrote each part.

:mod:`scoring.display.episode_views` puts them in one episode's view.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from protocol.arms.askback import Principal, render_escalation
from protocol.arms.render import render_tool_failure
from protocol.records import CorruptionEvent, EpisodeRecord, TurnRecord
from protocol.user import STYLE_KINDS
from scoring.display.models import CallView, ErrorView, EscalationView, TurnView
from scoring.replay.episode_score import EpisodeScore, TurnScore

__all__ = ["sent_parts", "turn_views"]


def sent_parts(turn: TurnRecord) -> list[tuple[str, str]]:
    """The user message as sent, cut into ``("user", text)`` (the scripted user's words) and
    ``("arm", text)`` (what the arm put before or after them: notices, checklist, directive),
    with ``("injected", text)`` after the user's words for the text a stress knob injected
    into the user's message (the spoof knob's forgery, docs/stress.md); the uncooperative
    user's own turns (the user_style knob) are ``("styled", text)`` in place of the user's.
    An old log without ``sent_text`` gives the user text alone."""
    sent = turn.sent_text or turn.user_text
    at = sent.find(turn.user_text) if turn.user_text else -1
    mine = "styled" if turn.kind in STYLE_KINDS else "user"  # the uncooperative user's
    if at < 0:
        return [("arm" if turn.arm_text else "user", sent)]
    rest = sent[at + len(turn.user_text) :]
    injected = ""
    if turn.injected and rest.startswith("\n" + turn.injected):
        injected, rest = turn.injected, rest[len(turn.injected) + 1 :]
    parts = [
        ("arm", sent[:at]),
        (mine, turn.user_text),
        ("injected", injected),
        ("arm", rest),
    ]
    return [(kind, text) for kind, text in parts if text]


def _errors(t: TurnScore | None, executed_at: Mapping[str, int]) -> list[ErrorView]:
    """The turn's errors; a re-execution names the turn that last executed its step."""
    if t is None:
        return []
    return [
        ErrorView(
            channel=e.channel,
            step=e.step,
            original_turn=executed_at.get(e.step) if e.channel == "re_execution" else None,
        )
        for e in t.errors
    ]


def _executed_before(turns: Sequence[TurnScore]) -> dict[int, dict[str, int]]:
    """Per turn index: each step's last executing turn before it."""
    out: dict[int, dict[str, int]] = {}
    last: dict[str, int] = {}
    for t in sorted(turns, key=lambda t: t.index):
        out[t.index] = dict(last)
        last.update(dict.fromkeys(t.executed, t.index))
    return out


def turn_views(record: EpisodeRecord, score: EpisodeScore) -> list[TurnView]:
    """Every logged turn with the replay's verdict on it under both scorings."""
    primary = {t.index: t for t in score.primary.turns}
    aware = {t.index: t for t in score.decline_aware.turns}
    before = _executed_before(score.primary.turns)
    before_aware = _executed_before(score.decline_aware.turns)
    events: dict[int, list[CorruptionEvent]] = {}
    for e in record.corruptions:
        events.setdefault(e.turn, []).append(e)
    out = []
    for t in record.turns:
        p, a = primary.get(t.index), aware.get(t.index)
        out.append(
            TurnView(
                index=t.index,
                kind=t.kind,
                step=t.step,
                work_order=t.work_order,
                dynamic=t.dynamic,
                named=list(t.named),
                label=p.label if p else None,
                decline_aware_label=a.label if a else None,
                executed=list(p.executed) if p else [],
                errors=_errors(p, before.get(t.index, {})),
                decline_aware_errors=_errors(a, before_aware.get(t.index, {})),
                failed=bool(p and p.errors),
                failed_decline_aware=bool(a and a.errors),
                user_text=t.user_text,
                arm_text=t.arm_text,
                sent=sent_parts(t),
                reply=t.reply,
                reasoning=t.reasoning,
                first_reply=t.first_reply,
                retry_notices=list(t.retry_notices),
                admitted=list(t.admitted),
                refused=list(t.refused),
                matched_step=t.matched_step,
                matched_redo=t.matched_redo,
                matcher_outcome=t.matcher_outcome,
                matcher_replies=list(t.matcher_replies),
                directive=t.directive,
                calls=[CallView(call=c, latency_s=c.wait_s + c.server_s) for c in t.calls],
                corruptions=events.get(t.index, []),
                tool_failures=_tool_failures(t, landed=record.cell.knobs.tool_failure_landed > 0),
                question=t.question,
                answer=t.answer,
                ask_reason=t.ask_reason,
                first_match=t.first_match,
                escalations=_escalations(t),
            )
        )
    return out


def _tool_failures(t: TurnRecord, landed: bool) -> list[str]:
    """The turn's failed tool calls as the agent read them (the tool_failure knob; ``landed``:
    its ``tool_failure_landed`` dose is on)."""
    return [
        render_tool_failure(c.tool, c.work_order, c.status or "transient", landed)
        for c in t.tool_calls
        if c.outcome == "failed"
    ]


def _escalations(t: TurnRecord) -> list[EscalationView]:
    """The turn's escalations (the escalate knob) with the question the user saw and the
    answer the scripted user gave."""
    return [
        EscalationView(
            booking=e.booking,
            status=e.status,
            step=e.step,
            text=render_escalation(e.booking, e.status, e.step),
            answer=Principal.answer_text(e.confirmed),
            override=e.confirmed,
        )
        for e in t.escalations
    ]
