"""The perfect policy of Section 3.1, as a decision over a :class:`View`.

A directive in the current turn (or the system prompt) is authoritative and obeyed. Without
one, the request is resolved to a step and judged on the displayed checklist when the turn
shows one, otherwise on the state the agent reconstructs from its transcript.
"""

from __future__ import annotations

from typing import Literal

import msgspec

from protocol.state.machine import OWED, Verdict
from serve.agents.reading import View
from serve.agents.transcript import Directive

__all__ = ["Action", "Decision", "decide", "from_verdict", "guard", "own_decision", "verdict_of"]

Action = Literal[
    "book", "confirm", "blocked", "decline", "ask_back", "noop", "revision", "unknown", "rejected"
]


class Decision(msgspec.Struct, frozen=True, kw_only=True):
    action: Action
    step: str | None = None
    missing: tuple[str, ...] = ()
    redo: bool = False
    named: tuple[str, ...] = ()
    cite: bool = False  # a refusal that cites a ref line anyway (synthetic agent only)
    extra: tuple[str, ...] = ()  # further steps booked unrequested (synthetic agent only)


def verdict_of(view: View, step: str, redo: bool) -> Verdict:
    """The step's verdict on the displayed checklist, or on the reconstructed state."""
    entry = (view.checklist or {}).get(step)
    if entry is not None:
        if entry.status == "cancelled":
            return Verdict("cancelled")
        if entry.status == "closed":  # its exclusive partner is done (issue #48)
            return Verdict("closed")
        if entry.status == "lapsed":  # an expiring step whose run has lapsed (issue #48)
            return Verdict("redo") if redo else Verdict("lapsed")
        if entry.status == "done":
            if redo:
                return Verdict("redo")
            if entry.runs_left is not None:  # a budgeted step (issue #48)
                return Verdict("eligible") if entry.runs_left > 0 else Verdict("spent")
            return Verdict("done")
        if entry.status == "blocked":
            return Verdict("blocked", entry.missing)
        return Verdict("eligible")
    state = view.state.copy()
    state.begin_turn(step if redo else None)
    return state.verdict(step)


def from_verdict(step: str, verdict: Verdict) -> Decision:
    label = verdict.label
    if label in OWED:  # eligible, an authorized redo, a lapsed run (issue #48)
        return Decision(action="book", step=step, redo=label == "redo")
    if label == "done":
        return Decision(action="confirm", step=step)
    if label == "blocked":
        return Decision(action="blocked", step=step, missing=verdict.missing)
    return Decision(action="decline", step=step)


def _from_directive(d: Directive) -> Decision:
    return from_verdict(d.step, Verdict(d.label, d.missing))


def own_decision(view: View) -> Decision:
    """The decision from the agent's own reading, ignoring any directive."""
    r = view.request
    if r.kind in ("revision", "none"):
        return Decision(action="revision" if r.kind == "revision" else "noop")
    if r.kind == "ambiguous":
        return Decision(action="ask_back", named=r.named)
    if r.kind == "double":  # two orders in one message: each judged on its own
        ok = [v for v in r.named if verdict_of(view, v, False).label == "eligible"]
        if ok:
            return Decision(action="book", step=ok[0], extra=tuple(ok[1:]))
        return from_verdict(r.named[0], verdict_of(view, r.named[0], False))
    step = r.step or view.matched
    if step is None or step not in view.brief.by_id:
        return Decision(action="unknown")
    return from_verdict(step, verdict_of(view, step, r.redo))


def guard(view: View, d: Decision) -> Decision:
    """No booking without a work order or against a notice that refused it this turn."""
    if d.action != "book" or d.step is None:
        return d
    if view.work_order is None:
        return Decision(action="unknown", step=d.step)
    if view.brief.by_id[d.step].code in view.rejected_now:
        return Decision(action="rejected", step=d.step)
    return d


def decide(view: View) -> Decision:
    d = _from_directive(view.directive) if view.directive is not None else own_decision(view)
    if d.step is not None and d.step not in view.brief.by_id:
        return Decision(action="unknown")
    return guard(view, d)
