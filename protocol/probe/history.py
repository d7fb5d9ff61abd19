"""The exact messages the agent saw at a logged turn, rebuilt from the log (pure).

The runner's arms (``runner/arms``, ``runner/execution/episode_loop.py``) build each turn's request as

* system: the arm's system prompt (:func:`protocol.arms.policy.system_prompt`: the brief; the
  self-ledger's brief with its clause), plus the directive for that call only when
  ``directive_role="system"``;
* the earlier turns as the arm keeps them (:func:`protocol.arms.policy.keep`): each user message
  as sent (``sent_text``), or the plain text where the arm keeps it (replace-mode checklist /
  ledger, the matched-step-line control, the memory arms:
  ``compose_user_message(user_text, notices)``), each followed by the visible reply
  (``reply``; with the same-turn notice, the retried one); the memory arms' record mode keeps
  only the last ``memory_window`` exchanges (:func:`protocol.arms.policy.window`);
* the turn's own user message as sent.

The tool harness (``harness = "langgraph"``, :mod:`runner.harness.play`) sends the same
turns with its own brief (``render_brief(..., harness=True)``), and after each reply that
made calls, the calls' results in the user role (``TOOL_RESULT`` / ``TOOL_REJECTION``, in
call order) before the next reply of the turn; the log holds every reply, call, receipt and
refusal status, so its requests rebuild the same way.

With the sessions knob (issue #48) the conversation restarts before the first turn of each
session: the earlier turns are those of the turn's own session, from its first turn, whose
user message opens with the handoff note carried into it (``carried``; the arms that keep the
plain text keep it with the note, as the runner does, :mod:`runner.arms.handoff`). The
note call that closes a session is not a turn and is never rebuilt.

:func:`rebuild_messages` rebuilds that list; the tests check it byte for byte against what
the runner sent. The prompt rules themselves are :mod:`protocol.arms.policy`'s, which the live
sessions call too.
"""

from __future__ import annotations

from protocol.arms import policy
from protocol.arms.render import render_tool_rejection, render_tool_result
from protocol.records import Episode, EpisodeRecord, TurnRecord
from protocol.state.machine import TaskState
from protocol.stress.sessions import carry
from protocol.user import ScriptedUser

__all__ = [
    "Messages",
    "books_with_actions",
    "is_harness",
    "realized_states",
    "rebuild_messages",
    "session_start",
    "system_prompt",
]

Messages = list[dict[str, str]]


def is_harness(record: EpisodeRecord) -> bool:
    """True for an episode of the tool harness (its bookings are tool calls)."""
    return record.cell.knobs.harness != "text"


def books_with_actions(record: EpisodeRecord) -> bool:
    """True when bookings are ACTION lines (the tools knob, or the tool harness)."""
    return record.cell.knobs.tools or is_harness(record)


def system_prompt(record: EpisodeRecord, episode: Episode) -> str:
    """The arm's system prompt for the episode (without a per-call directive)."""
    return policy.system_prompt(policy.policy(record.cell), episode)


def _results(t: TurnRecord, reply: int) -> str:
    """The user-role message carrying the results of the calls reply ``reply`` of the turn
    made (the tool harness): each executed call's result and each refusal, in call order."""
    parts: list[str] = []
    for c in t.tool_calls:
        if c.reply != reply:
            continue
        if c.outcome == "executed" and c.receipt is not None:
            parts.append(render_tool_result(c.tool, c.work_order, c.receipt))
        elif c.outcome == "refused":
            named = c.named if c.named is not None else c.step  # logs before ``named``
            parts.append(render_tool_rejection(c.tool, c.work_order, c.status or "", named))
    return "\n\n".join(parts)


def _replies(record: EpisodeRecord, t: TurnRecord) -> Messages:
    """What the history keeps of the turn after its user message: the visible reply, and in
    the tool harness each follow-up reply after the results of the reply before it."""
    out: Messages = [{"role": "assistant", "content": t.reply}]
    if is_harness(record):
        for j, follow in enumerate(t.follow_ups, start=1):
            out.append({"role": "user", "content": _results(t, j - 1)})
            out.append({"role": "assistant", "content": follow})
    return out


def rebuild_messages(record: EpisodeRecord, episode: Episode, position: int) -> Messages:
    """The exact messages the agent received for the turn at ``position`` (its first call
    of the turn), rebuilt from the log."""
    t = record.turns[position]
    p = policy.policy(record.cell)
    system = policy.system_prompt(p, episode)
    if t.directive is not None and record.cell.knobs.directive_role == "system":
        system += "\n\n" + t.directive
    history: Messages = []
    for earlier in record.turns[session_start(record, position) : position]:
        kept = policy.keep(p, earlier.user_text, earlier.notices, earlier.sent_text)
        if p.keeps_plain and isinstance(earlier.carried, str):  # as sent, the note opens it
            kept = carry(earlier.carried, kept)
        history.append({"role": "user", "content": kept})
        history.extend(_replies(record, earlier))
    return [
        {"role": "system", "content": system},
        *policy.window(p, history),
        {"role": "user", "content": t.sent_text},
    ]


def session_start(record: EpisodeRecord, position: int) -> int:
    """The position of the first turn of the session the turn at ``position`` is in (the
    sessions knob: the turn that records its session's number; 0 with one session)."""
    return max(
        (i for i, t in enumerate(record.turns[: position + 1]) if isinstance(t.session, int)),
        default=0,
    )


def realized_states(record: EpisodeRecord, episode: Episode) -> list[TaskState]:
    """The realized state at each logged turn as the arm saw it (after the turn's revision
    and authorization), replayed with the scripted user on the logged admitted bookings."""
    user = ScriptedUser(episode)
    states: list[TaskState] = []
    for t in record.turns:
        turn = user.next_turn()
        if turn is None or (turn.kind, turn.step, turn.work_order) != (
            t.kind,
            t.step,
            t.work_order,
        ):
            raise ValueError(
                f"{record.episode_id or record.cell.slug()}: turn {t.index} does not replay "
                "on the scripted user (another generator or paraphrase cache?)"
            )
        verdict = user.begin(turn)
        states.append(user.state.copy())
        user.finish(turn, verdict, [b.step for b in t.admitted if b.step is not None])
    return states
