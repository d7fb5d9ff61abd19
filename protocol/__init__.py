"""The testbed as pure code: domains, generator, task-state machine, scripted user, receipts.

No I/O and no event loop here; everything is a function of its inputs.
"""

from protocol.episode.generate import generate
from protocol.episode.versions import N_TURNS, TRAP_BUDGET, SpecError
from protocol.records import (
    Booking,
    CallRecord,
    CellKey,
    Episode,
    EpisodeRecord,
    EpisodeSpec,
    Knobs,
    Turn,
    TurnRecord,
)
from protocol.state.machine import CHANNELS, TaskState, Verdict, judge_turn
from protocol.user import ScriptedUser

__all__ = [
    "CHANNELS",
    "N_TURNS",
    "TRAP_BUDGET",
    "Booking",
    "CallRecord",
    "CellKey",
    "Episode",
    "EpisodeRecord",
    "EpisodeSpec",
    "Knobs",
    "ScriptedUser",
    "SpecError",
    "TaskState",
    "Turn",
    "TurnRecord",
    "Verdict",
    "generate",
    "judge_turn",
]
