"""A scripted agent's reply to the runner's request for a handoff note (the sessions knob,
issue #48; the note's words: :mod:`serve.agents.handoff`).

The perfect agent (and the prerequisites policy) writes a complete note from its execution
record: the plan change, each performed step with its code and work orders, each cancelled
step. The synthetic agent writes the same note and leaves out each of its lines with
probability ``note_drop`` (a die per line, drawn from the runner's draw key), so the next
session forgets what the dropped lines held. The always-book policy reads nothing and notes
nothing (:data:`serve.agents.handoff.NOTE_EMPTY`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from protocol.draws import uniform
from serve.agents.answer import Answer
from serve.agents.brief import parse_brief
from serve.agents.handoff import NOTE_CANCELLED, NOTE_DONE, NOTE_EMPTY, NOTE_PLAN
from serve.agents.reading import Message, Reading
from serve.agents.synthetic import DEFAULTS

__all__ = ["note_answer", "note_lines"]


def note_lines(messages: Sequence[Message]) -> list[str]:
    """The complete note for the transcript ``messages`` (the request excluded)."""
    reading = Reading()
    for role, content in messages:
        reading.add(role, content)
    brief = parse_brief("\n".join(reading.systems))
    record = reading.record(brief, True)
    if reading.pending is not None and not reading.history:  # a first message not answered
        record.carry(reading.pending.addition)
    lines = [] if record.revision is None else [NOTE_PLAN.format(text=record.revision)]
    for s in brief.steps:
        if s.id in record.state.done:
            for code, wo in sorted(record.held.get(s.id, ())):
                lines.append(NOTE_DONE.format(id=s.id, code=code, wo=wo))
    lines += [NOTE_CANCELLED.format(id=s.id) for s in brief.steps if s.id in record.state.cancelled]
    return lines


def note_answer(
    policy: str,
    params: Mapping[str, float],
    messages: Sequence[Message],
    *,
    digest: str,
    draw: str | None,
) -> Answer:
    """``policy``'s note for ``messages`` (its last message the runner's request)."""
    synthetic = policy == "synthetic"
    lines = [] if policy == "always-book" else note_lines(messages[:-1])
    if synthetic:
        p = {**DEFAULTS, **params}
        key = f"synthetic|{draw or digest}|{p['seed']!r}"
        lines = [x for x in lines if uniform(key, f"note|{x}") >= p["note_drop"]]
    note = "\n".join(lines) if lines else NOTE_EMPTY
    return Answer(content=note, reasoning="Writing the handoff note.", synthetic=synthetic)
