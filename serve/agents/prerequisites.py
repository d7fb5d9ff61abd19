"""The policy that executes the prerequisites itself (Section 5.4, Appendix G).

The Qwen3.6-35B failure mode the tool harness shows: asked for a blocked step, the agent
executes its missing prerequisites itself and then the step, in one reply. Otherwise it is
the perfect agent. It reads the state from its own transcript (or the displayed checklist)
and ignores a BLOCKED directive. The prerequisites are booked in dependency order (each
missing prerequisite's own missing prerequisites first); a cancelled one cannot be executed,
and then the agent only says the step is blocked.
"""

from __future__ import annotations

from protocol.state.machine import TaskState
from serve.agents.answer import Answer
from serve.agents.decide import Decision, decide, guard, own_decision
from serve.agents.reading import View
from serve.agents.reply import reasoning, render_reply

__all__ = ["chain", "respond"]


def chain(state: TaskState, step: str) -> tuple[str, ...] | None:
    """The not-done prerequisites of ``step``, deepest first; None if one is cancelled."""
    order: list[str] = []

    def visit(v: str) -> bool:
        for u in sorted(state.deps.get(v, ())):
            if u in state.done or u in order:
                continue
            if u in state.cancelled or not visit(u):
                return False
            order.append(u)
        return True

    return tuple(order) if visit(step) else None


def respond(view: View) -> Answer:
    own = own_decision(view)
    d = own if own.action == "blocked" else decide(view)
    if d.action == "blocked" and d.step is not None and view.work_order is not None:
        first = chain(view.state, d.step)
        if first:
            # the prerequisites first, then the step: one reply, in that order
            d = guard(view, Decision(action="book", step=first[0], extra=(*first[1:], d.step)))
    return Answer(content=render_reply(view, d), reasoning=reasoning(view, d))
