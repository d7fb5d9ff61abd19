"""Session restarts on the turns ``ladder show`` and ``ladder view`` draw (the sessions knob,
issue #48; docs/semantics.md, "Sessions").

:func:`in_sessions` gives each :class:`~scoring.display.models.TurnView` of a sessioned
episode the session it belongs to (1 for the first), a mark on the first turn of every session
after the first (``--- session 2 (handoff: none) ---``, whether or not a note was carried) and
the note carried into it; the note's block in the message as sent becomes a part of its own,
``("carried", text)``, so a reader tells the agent's own note from what the arm added. An
episode with one session is returned unchanged.
"""

from __future__ import annotations

from collections.abc import Sequence

import msgspec

from protocol.records import EpisodeRecord, TurnRecord
from protocol.rule_strings import HANDOFF_CARRIED
from scoring.display.models import TurnView

__all__ = ["in_sessions", "session_mark"]


def session_mark(session: int, handoff: str, next_model: str) -> str:
    """The line before the first turn of *session* (numbered from 1); with ``next_model`` the
    even sessions are the other model's (runner/arms/handoff.py)."""
    agent = f"; agent {next_model}" if next_model and session % 2 == 0 else ""
    return f"--- session {session} (handoff: {handoff}{agent}) ---"


def _split_carried(sent: list[tuple[str, str]], note: str) -> list[tuple[str, str]]:
    """The message's parts with the carried note's block apart (it opens the message)."""
    block = HANDOFF_CARRIED.format(note=note)
    if not sent or not sent[0][1].startswith(block):
        return sent
    rest = sent[0][1][len(block) :].lstrip("\n")
    head = [("carried", block)] + ([(sent[0][0], rest)] if rest else [])
    return head + sent[1:]


def in_sessions(turns: Sequence[TurnView], record: EpisodeRecord) -> list[TurnView]:
    """*turns* (one per logged turn, in order, as :func:`turn_views` gives them) with their
    sessions marked; unchanged for an episode with one session."""
    knobs = record.cell.knobs
    if not knobs.sessions:
        return list(turns)
    out: list[TurnView] = []
    session = 1
    for view, logged in zip(turns, record.turns, strict=True):
        out.append(_marked(view, logged, session, knobs.handoff, knobs.next_model))
        session = out[-1].session
    return out


def _marked(
    view: TurnView, logged: TurnRecord, session: int, handoff: str, next_model: str
) -> TurnView:
    if not isinstance(logged.session, int):
        return msgspec.structs.replace(view, session=session)
    number = logged.session + 1  # the record counts the sessions after the first from 1
    note = logged.carried if isinstance(logged.carried, str) else None
    return msgspec.structs.replace(
        view,
        session=number,
        session_mark=session_mark(number, handoff, next_model),
        carried=note,
        sent=_split_carried(view.sent, note) if note is not None else view.sent,
    )
