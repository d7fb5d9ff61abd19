"""The parts a rescoring makes by the million are never tracked by the cyclic collector
(``gc=False``, #50, eleventh round): frozen structs of immutable fields, which no cycle can
hold. A decoded record's turns, the scripted user's turns and the replay's verdicts,
errors, per-turn bookings and per-turn scores, each built here with a field the collector
tracks (a tuple made at run time), which would track a struct without ``gc=False``."""

from __future__ import annotations

import gc

import msgspec

from protocol.episode.structs import Step, Turn
from protocol.records import Booking, TurnRecord
from protocol.state.machine import Error, Verdict
from scoring.replay.bookings import TurnBookings
from scoring.replay.episode_score import TurnScore


class _Tracked(msgspec.Struct, frozen=True):
    """The control: a frozen struct of default options with a tuple field."""

    names: tuple[str, ...]


def _names() -> tuple[str, ...]:
    return tuple(["s1", "s2"])  # made at run time: a tuple the collector tracks


def test_the_control_is_tracked() -> None:
    assert gc.is_tracked(_names())
    assert gc.is_tracked(_Tracked(_names()))


def test_a_decoded_turn_record_is_untracked() -> None:
    record = TurnRecord(
        index=0,
        kind="ask",
        step="s1",
        work_order="#W1000",
        user_text="Please do it.",
        admitted=(Booking(step="s1", code="RC-1000", work_order="#W1000"),),
        named=_names(),
    )
    turn = msgspec.json.decode(msgspec.json.encode(record), type=TurnRecord)
    assert turn == record
    assert not gc.is_tracked(turn)
    assert not gc.is_tracked(turn.as_turn())


def test_the_replays_parts_are_untracked() -> None:
    names = _names()
    parts = [
        Step(id="s1", slug="a", text="A.", code="RC-1000", deps=names),
        Turn(index=0, kind="ambiguous", step=None, work_order="#W1", text="?", named=names),
        Verdict("blocked", names),
        Error("omission", "s1"),
        TurnBookings(
            primary=names,
            decline_aware=names,
            booked=frozenset({("RC-1000", "#W1")}),
            citations=0,
            redisplays=0,
            unknown=0,
            refused=0,
            false_completions=0,
        ),
        TurnScore(index=0, kind="ask", step="s1", label="eligible", executed=names, errors=()),
    ]
    assert [gc.is_tracked(p) for p in parts] == [False] * len(parts)
