"""What each logged turn of an episode booked, and how many turns the log's admitted list
disagrees with (split from :mod:`scoring.replay.episode_score`, #50: the per-turn loop of
the rescoring hot path)."""

from __future__ import annotations

from collections.abc import Sequence

from protocol.records import Episode, EpisodeRecord, TurnRecord
from protocol.state.receipts import ref_matches_joined, text_starts
from scoring.replay.bookings import (
    NOTHING,
    CodeTables,
    TurnBookings,
    every_turn,
    plain_refs,
    read_turn,
)
from scoring.replay.citations import cannot_decline_each
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
    nothing refused) read in bulk (#50): the refs of all the replies found in one pass over
    their newline join, so a turn whose reply holds none costs nothing here; in ASCII text
    each reply's lowered form is its slice of the join's (no second ``lower`` per booked
    turn), and the decline pre-check of those replies is one scan
    (:func:`scoring.replay.citations.cannot_decline_each`, #50, eighth round)."""
    out = [NOTHING] * len(turns)
    replies = [t.reply for t in turns]
    joined = "\n".join(replies)
    lowered = joined.lower()
    if len(lowered) != len(joined):  # a character lowered to several: offsets moved
        return [read_turn(t, tables, False) for t in turns]
    starts = text_starts(replies)
    found = ref_matches_joined(joined, lowered, starts)
    # the turns with something refused or a first reply (the common episode has none): by
    # the general rules, below
    other = [i for i, t in enumerate(turns) if t.refused or t.first_reply is not None]
    plain = [i for i in found if i not in other] if other else list(found)
    if joined.isascii():  # ``lower`` maps each ASCII character on its own: a reply's slice
        lows = [lowered[starts[i] : starts[i] + len(replies[i])] for i in plain]
        # the decline pre-check of these replies at once (#50, eighth round)
        quiet = cannot_decline_each([replies[i] for i in plain], lows)
        for i, low, q in zip(plain, lows, quiet, strict=True):
            out[i] = plain_refs(replies[i], found[i], tables, turns[i].work_order, low, q)
    else:
        for i in plain:
            out[i] = plain_refs(replies[i], found[i], tables, turns[i].work_order)
    for i in other:  # something refused, or a first reply: by the general rules
        out[i] = every_turn(turns[i], tables, False)
    return out


def admitted_diffs(read: Sequence[TurnBookings], turns: Sequence[TurnRecord]) -> int:
    """Turns whose re-parsed primary bookings differ from the bookings the log says the
    world admitted (a turn with neither cannot differ). One pass, no set built for the
    common turns (#50, seventh round): none admitted differs where something was booked;
    one admitted is the same set as ``booked`` where ``booked`` holds that one pair only."""
    diffs = 0
    for r, t in zip(read, turns, strict=True):
        admitted = t.admitted
        if not admitted:
            diffs += bool(r.booked)
        elif len(admitted) == 1:
            booked, a = r.booked, admitted[0]
            diffs += len(booked) != 1 or (a.code, a.work_order) not in booked
        else:
            diffs += r.booked != frozenset((b.code, b.work_order) for b in admitted)
    return diffs
