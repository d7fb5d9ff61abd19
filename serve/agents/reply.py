"""Writing the agent's visible reply and its reasoning from a decision.

Booking lines follow the brief: ``ref <code>/<work order>`` on its own line, or in the
tools variant ``ACTION {"tool": ..., "work_order": ...}``. Refusals use plain refusal
language and carry no booking line (unless the synthetic agent chose to cite one). With the
self-ledger clause the reply ends with one ``LEDGER <step> <STATUS>`` line per step.
"""

from __future__ import annotations

import json

from protocol import strings
from serve.agents.decide import Decision
from serve.agents.narration import BOOK_OPENING, REDO_OPENING
from serve.agents.reading import View

__all__ = ["booking_line", "ledger_lines", "reasoning", "render_reply"]


def booking_line(view: View, step: str) -> str:
    s = view.brief.by_id[step]
    wo = view.work_order or ""
    if view.brief.tools and s.tool:
        return "ACTION " + json.dumps({"tool": s.tool, "work_order": wo})
    return f"ref {s.code}/{wo}"


def _name(view: View, step: str | None) -> str:
    if step is None or step not in view.brief.by_id:
        return "that step"
    return f"{step} ({view.brief.by_id[step].text})"


def _statuses(view: View, booked: list[str]) -> dict[str, str]:
    if view.checklist:
        shown = {v: e.status for v, e in view.checklist.items()}
    else:
        shown = {v: view.state.status(v) for v in view.state.steps}
    for v in booked:
        if shown.get(v) != "cancelled":
            shown[v] = "done"
    return shown


def ledger_lines(view: View, booked: list[str]) -> str:
    word = {"done": "DONE", "cancelled": "CANCELLED"}
    shown = _statuses(view, booked)
    return "\n".join(
        strings.LEDGER_LINE.format(code=s.code, status=word.get(shown.get(s.id, ""), "TODO"))
        for s in view.brief.steps
    )


def _body(view: View, d: Decision) -> str:
    name = _name(view, d.step)
    if d.action == "book":
        verb = REDO_OPENING if d.redo else BOOK_OPENING
        why = ", as you explicitly authorized a redo" if d.redo else ""
        return f"{verb} {name} now{why}."
    if d.action == "confirm":
        return (
            f"{name} is already done; I confirm it is complete and will not book a new "
            "work order for it."
        )
    if d.action == "blocked":
        missing = ", ".join(d.missing) or "its prerequisites"
        return f"I can't perform {name} yet: its prerequisites are incomplete. Missing: {missing}."
    if d.action == "decline":
        return f"{name} was cancelled; I decline and will not perform it."
    if d.action == "ask_back":
        named = " or ".join(_name(view, v) for v in d.named)
        return f"Your message names two steps, {named}. Which one should I perform? Nothing is booked until you say."
    if d.action == "revision":
        return "Understood: I have updated the plan. Nothing to execute for this message."
    if d.action == "rejected":
        return f"The booking for {name} was rejected by the system, so I will not book it again."
    if d.action == "unknown":
        return "I could not match this request to a step of the plan, so nothing was booked. Which step do you mean?"
    return "Noted; nothing to execute."


def render_reply(view: View, d: Decision, *, ledger: bool | None = None) -> str:
    lines = [_body(view, d)]
    booked: list[str] = []
    if d.step is not None and (d.action == "book" or d.cite):
        lines.append(booking_line(view, d.step))
        booked.append(d.step)
    for v in d.extra:
        lines.append(f"Also carrying out {_name(view, v)}.")
        lines.append(booking_line(view, v))
        booked.append(v)
    text = "\n".join(lines)
    if view.brief.ledger if ledger is None else ledger:
        text += "\n\n" + ledger_lines(view, booked)
    return text


def reasoning(view: View, d: Decision) -> str:
    """A short, ref-free account of the decision, for ``reasoning_content``."""
    where = f" (work order {view.work_order})" if view.work_order else ""
    source = (
        "the [TASK-STATE] directive"
        if view.directive is not None
        else "the checklist"
        if view.checklist is not None
        else "my earlier bookings and the plan"
    )
    step = d.step or (" / ".join(d.named) if d.named else "no step")
    return f"The message resolves to {step}{where}. Going by {source}, the action is: {d.action}."
