"""The testbed as pure code: domains, generator, task-state machine, scripted user, receipts.

No I/O and no event loop here; everything is a function of its inputs.
"""

from protocol.generate import (
    GENERATOR_VERSION,
    N_TURNS,
    TRAP_BUDGET,
    SpecError,
    check_spec,
    generate,
)
from protocol.records import (
    SCHEMA_VERSION,
    Booking,
    CallRecord,
    CellKey,
    Episode,
    EpisodeRecord,
    EpisodeSpec,
    Knobs,
    Revision,
    Step,
    Turn,
    TurnRecord,
)
from protocol.state import CHANNELS, Error, TaskState, Verdict, judge_turn
from protocol.user import ScriptedUser

__all__ = [
    "CHANNELS",
    "GENERATOR_VERSION",
    "N_TURNS",
    "SCHEMA_VERSION",
    "TRAP_BUDGET",
    "Booking",
    "CallRecord",
    "CellKey",
    "Episode",
    "EpisodeRecord",
    "EpisodeSpec",
    "Error",
    "Knobs",
    "Revision",
    "ScriptedUser",
    "SpecError",
    "Step",
    "TaskState",
    "Turn",
    "TurnRecord",
    "Verdict",
    "check_spec",
    "generate",
    "judge_turn",
]
