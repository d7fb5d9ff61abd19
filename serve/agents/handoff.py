"""The scripted agents' handoff note (the sessions knob, issue #48; docs/semantics.md): what
they write when the runner asks for a note (:data:`protocol.rule_strings.HANDOFF_REQUEST`) and
how they read one back from a session's first message
(:data:`protocol.rule_strings.HANDOFF_CARRIED`), with the ledger an arm kept over a restart.

A complete note (the perfect agent's) lists the plan change it has read (the revision message,
verbatim: it is one line), then each performed step with its completion code and every work
order it was booked on, then each cancelled step, one line each in the words below (the
agent's own, not a protocol string). Read back, the plan change is applied as the revision,
the performed steps are booked under the same keys (so a later rejection notice undoes one as
it would have), the cancelled ones cancelled.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from protocol import rule_strings
from protocol.state.receipts import parse_ledger
from serve.agents.brief import ParsedBrief
from serve.agents.patterns import STEP_ID, WORK_ORDER, template_regex

__all__ = [
    "NOTE_CANCELLED",
    "NOTE_DONE",
    "NOTE_EMPTY",
    "NOTE_PLAN",
    "Carried",
    "is_note_request",
    "read_carried",
]

NOTE_PLAN = "- plan change: {text}"
NOTE_DONE = "- performed {id}: code {code}, work order {wo}"
NOTE_CANCELLED = "- cancelled {id}"
NOTE_EMPTY = "Nothing performed or changed yet."

_OPENING = rule_strings.HANDOFF_CARRIED.split("{")[0].split("\n")[0]  # "[HANDOFF NOTE] ..."
_REQUEST = rule_strings.HANDOFF_REQUEST.split("]")[0] + "]"  # "[SESSION END]"
_PLAN = template_regex(NOTE_PLAN, anchored=True, text=r".+")
# a step's code, or on the tool harness its booking key "tool:<name>" (serve.agents.replay)
_CODE = r"RC-\d{4}|tool:[A-Za-z0-9_\-]+"
_DONE = template_regex(NOTE_DONE, anchored=True, id=STEP_ID, code=_CODE, wo=WORK_ORDER)
_CANCELLED = template_regex(NOTE_CANCELLED, anchored=True, id=STEP_ID)
_LEDGER_KEY = "ledger"  # the work order of a ledger-carried booking key (none is named)


@dataclass
class Carried:
    """What a session's first message carries: the revision, bookings, cancelled steps."""

    revision: str | None = None
    done: list[tuple[str, tuple[str, str]]] = field(default_factory=list)
    cancelled: list[str] = field(default_factory=list)


def is_note_request(text: str) -> bool:
    """Whether a user message is the runner's request for a handoff note."""
    return text.startswith(_REQUEST)


def _step_of(code: str, brief: ParsedBrief) -> str | None:
    """The step a note's code names: its completion code, or its tool on the harness."""
    if code.startswith("tool:"):
        return brief.by_tool.get(code.removeprefix("tool:"))
    return brief.by_code.get(code)


def read_carried(addition: str, brief: ParsedBrief) -> Carried:
    """The note block and the kept ledger of a first user message's addition (nothing of
    either: an empty :class:`Carried`)."""
    out = Carried()
    at = addition.find(_OPENING)
    if at >= 0:
        block = addition[at:].split("\n\n", 1)[0]
        for line in block.splitlines()[1:]:
            if (m := _PLAN.match(line)) is not None:
                out.revision = m["text"]
            elif (m := _DONE.match(line)) is not None and _step_of(m["code"], brief) == m["id"]:
                out.done.append((m["id"], (m["code"], m["wo"])))
            elif (m := _CANCELLED.match(line)) is not None and m["id"] in brief.by_id:
                out.cancelled.append(m["id"])
        addition = addition[:at] + addition[at + len(block) :]
    for code, status in parse_ledger(addition).items():
        step = brief.by_code.get(code)
        if step is not None and status == "DONE":
            out.done.append((step, (code, _LEDGER_KEY)))
        elif step is not None and status == "CANCELLED":
            out.cancelled.append(step)
    return out
