"""Whose agent call is whose under a handoff between agents (the sessions knob's
``next_model``, issue #48; docs/semantics.md). Pure.

With ``next_model`` the grid's other model runs every other session (the second, the
fourth, ...; :mod:`runner.arms.handoff`), and its calls are logged in the cell's record
like the cell model's own. The record says which: the first turn of each session after the
first records the session's number (``TurnRecord.session``: 1 for the second session), and with
``handoff = "note"`` that turn's first call is the note closing the session before it, made by
that session's agent. An agent call is the other model's when it belongs to an odd-numbered
(0-based) session; helper calls (matcher, compiler, memory) are the helpers' in every session.
"""

from __future__ import annotations

from collections.abc import Iterator

from protocol.records import CallRecord, EpisodeRecord

__all__ = ["agent_calls"]


def agent_calls(record: EpisodeRecord) -> Iterator[tuple[CallRecord, bool]]:
    """Every agent call of *record* in order, with True where the cell's ``next_model`` made
    it (always False without one)."""
    handed = bool(record.cell.knobs.next_model)
    note = record.cell.knobs.handoff == "note"
    session = 0
    for turn in record.turns:
        opened = isinstance(turn.session, int)
        if isinstance(turn.session, int):
            session = turn.session
        first = True
        for call in turn.calls:
            if call.role != "agent":
                continue
            closing = opened and note and first  # the note of the session before
            first = False
            of = session - 1 if closing else session
            yield call, handed and of % 2 == 1
