"""The memoryless always-book policy (Appendix A.1): it books every request that names a step.

It reads nothing but the current user text: the named step (the first of two in an
ambiguous probe; both steps of a double order) is booked with the current work order and
that step's code from the brief, whatever its status. Fillers and the revision name no step with a work order: nothing.
"""

from __future__ import annotations

from serve.agents.answer import Answer
from serve.agents.decide import Decision
from serve.agents.reading import View
from serve.agents.reply import render_reply

__all__ = ["respond"]


def respond(view: View) -> Answer:
    r = view.request
    step = (
        r.step if r.kind == "step" else (r.named[0] if r.kind in ("ambiguous", "double") else None)
    )
    if step is None or view.work_order is None or step not in view.brief.by_id:
        d = Decision(action="noop")
    else:
        extra = tuple(v for v in r.named[1:] if v in view.brief.by_id) if r.kind == "double" else ()
        d = Decision(action="book", step=step, extra=extra)
    return Answer(content=render_reply(view, d, ledger=False), reasoning="Booking as asked.")
