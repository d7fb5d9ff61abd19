"""A session boundary in the text protocol (the sessions knob, issue #48; docs/semantics.md).

Before a planned turn that opens a session (:attr:`protocol.records.Episode.sessions`,
placed by :mod:`protocol.stress.sessions`), the conversation restarts: the agent's next
request carries the system prompt (the brief, again) and a fresh transcript. What crosses the
boundary is the cell's ``handoff``:

* ``"none"``: nothing; the arm drops what it kept of the conversation (:meth:`ArmSession.restart`);
* ``"note"``: the runner sends :data:`protocol.rule_strings.HANDOFF_REQUEST` as the session's
  last user message (not a scored turn; its reply books nothing), and the reply opens the next
  session's first user message in :data:`protocol.rule_strings.HANDOFF_CARRIED`; the arm
  restarts as with ``"none"``;
* ``"arm"``: the arm keeps what it keeps (a ledger, a memory store); no note.

With ``next_model`` the grid's other model runs every other session (the cell's own agent
writes the note closing its session, the other reads it): a handoff between agents.

The world (the realized state, the scripted user, pending rejection notices, work orders and
codes) never restarts: a boundary is not a turn, and labels stay the control's.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from protocol import rule_strings
from protocol.records import CallRecord
from protocol.stress.sessions import carry
from runner.arms.base import ArmSession, EpisodeContext
from runner.client.turn_draw import TURN_DRAW

__all__ = ["Restart", "carry", "restart"]

_BLANK = re.compile(r"\n\s*\n+")


@dataclass(frozen=True)
class Restart:
    """What a boundary produced: the note carried (None: none) and the note call."""

    note: str | None
    calls: tuple[CallRecord, ...]


async def restart(
    ctx: EpisodeContext,
    arm: ArmSession,
    system: str,
    history: list[dict[str, str]],
    session: int,
) -> Restart:
    """Close session ``session - 1`` (``history`` is its transcript) and open ``session``."""
    knobs = ctx.cell.knobs
    note: str | None = None
    calls: tuple[CallRecord, ...] = ()
    if knobs.handoff == "note":
        messages = [
            {"role": "system", "content": system},
            *arm.context(history),
            {"role": "user", "content": rule_strings.HANDOFF_REQUEST},
        ]
        TURN_DRAW.set((ctx.episode.spec.seed, f"n{session}", 0))  # the note call's own dice
        reply = await ctx.agent(messages)
        note = _bounded(reply.content)
        calls = (reply.call,)
        TURN_DRAW.set(None)
    if knobs.handoff != "arm":
        arm.restart()
    if ctx.next_agent is not None:  # next_model: the other agent runs the next session
        ctx.agent, ctx.next_agent = ctx.next_agent, ctx.agent
    return Restart(note=note, calls=calls)


def _bounded(note: str) -> str:
    """The note as carried: its blank lines closed up (the block is one part of the user
    message) and at most HANDOFF_NOTE_CHARS characters."""
    return _BLANK.sub("\n", note.strip())[: rule_strings.HANDOFF_NOTE_CHARS]
