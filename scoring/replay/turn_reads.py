"""What each logged turn of an episode booked, and how many turns the log's admitted list
disagrees with (split from :mod:`scoring.replay.episode_score`, #50: the per-turn loop of
the rescoring hot path)."""

from __future__ import annotations

from collections.abc import Sequence

from protocol.records import Booking, Episode, EpisodeRecord, TurnRecord
from protocol.state.receipts import ref_matches_each
from scoring.replay.bookings import (
    NOTHING,
    CodeTables,
    TurnBookings,
    every_turn,
    plain_refs,
    read_turn,
)
from scoring.replay.harness import ToolTable, read_harness_turn

__all__ = ["admitted_diffs", "read_turns"]


def read_turns(record: EpisodeRecord, episode: Episode) -> list[TurnBookings]:
    """What each logged turn booked: from its reply's text, or its tool calls on the harness."""
    if record.cell.knobs.harness == "langgraph":
        tool_table = ToolTable(episode)
        return [read_harness_turn(t, tool_table) for t in record.turns]
    tables, tools = CodeTables(episode), record.cell.knobs.tools
    if tools:
        return [read_turn(t, tables, tools) for t in record.turns]
    return _ref_turns(record.turns, tables)


def _ref_turns(turns: Sequence[TurnRecord], tables: CodeTables) -> list[TurnBookings]:
    """:func:`read_turn` of every turn of a ref-protocol episode, the common turn (one reply,
    nothing refused) read in bulk (#50): the refs of all the replies found in one pass,
    so a turn whose reply holds none costs nothing here."""
    out = [NOTHING] * len(turns)
    for i, refs in ref_matches_each([t.reply for t in turns]).items():
        t = turns[i]
        if not t.refused and t.first_reply is None:
            out[i] = plain_refs(t.reply, refs, tables, t.work_order)
    # the other turns (something refused, or a first reply) by the general rules
    for i in [i for i, t in enumerate(turns) if t.refused or t.first_reply is not None]:
        out[i] = every_turn(turns[i], tables, False)
    return out


def admitted_diffs(read: Sequence[TurnBookings], turns: Sequence[TurnRecord]) -> int:
    """Turns whose re-parsed primary bookings differ from the bookings the log says the
    world admitted (a turn with neither cannot differ)."""
    either = [
        (r.booked, t.admitted) for r, t in zip(read, turns, strict=True) if r.booked or t.admitted
    ]
    return sum(booked != _admitted(admitted) for booked, admitted in either)


def _admitted(admitted: Sequence[Booking]) -> frozenset[tuple[str, str]]:
    if len(admitted) == 1:  # the common turn (#50)
        return frozenset(((admitted[0].code, admitted[0].work_order),))
    return frozenset((b.code, b.work_order) for b in admitted)
