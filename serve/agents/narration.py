"""The perfect agent's reading of its own words: the narration of a booking.

The scripted agents keep their execution record in their own booking lines (a ``ref`` line,
or in the tools variant an ``ACTION`` line; :mod:`serve.agents.replay`). The perfect agent
also reads what it said it did (OURS; docs/probe.md): the sentence it writes before a
booking line (``Carrying out s3 (...) now.`` / ``Re-executing s3 (...) now, ...``) and the
probe's prose rewrite of a booking line (``strings.PROBE_PROSE_BOOKING`` /
``PROBE_PROSE_TOOL_BOOKING``). Every reply the perfect agent writes carries the booking line
with the narration, so in a run this adds no booking; it matters only where the trap-turn
probe rewrote or erased the line (Appendix A.4), which the perfect agent must survive with
zero re-executions.
"""

from __future__ import annotations

import re

from protocol import strings
from serve.agents.patterns import STEP_ID, WORK_ORDER, template_regex

__all__ = ["BOOK_OPENING", "REDO_OPENING", "narrated_steps"]

BOOK_OPENING = "Carrying out"  # OURS: the perfect agent's narration of a booking
REDO_OPENING = "Re-executing"  # OURS: ... of an authorized redo

_NARRATION = re.compile(rf"^(?:{BOOK_OPENING}|{REDO_OPENING}) (?P<id>{STEP_ID}) \(", re.MULTILINE)
_PROSE = (
    template_regex(strings.PROBE_PROSE_BOOKING, id=STEP_ID, wo=WORK_ORDER),
    template_regex(strings.PROBE_PROSE_TOOL_BOOKING, id=STEP_ID, wo=WORK_ORDER),
)


def narrated_steps(reply: str, work_order: str | None) -> tuple[str, ...]:
    """The steps ``reply`` says it carried out under ``work_order`` (none without one)."""
    if work_order is None:
        return ()
    found = [m["id"] for m in _NARRATION.finditer(reply)]
    for pattern in _PROSE:
        found += [m["id"] for m in pattern.finditer(reply) if m["wo"] == work_order]
    return tuple(dict.fromkeys(found))
