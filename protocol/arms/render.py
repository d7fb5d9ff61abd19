"""What the arms show the agent, rendered from the protocol strings and a task state."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from protocol import rule_strings, strings
from protocol.records import Booking, Step
from protocol.state.machine import TaskState, Verdict

__all__ = [
    "compose_user_message",
    "render_checklist",
    "render_directive",
    "render_ledger",
    "render_matcher_prompt",
    "render_recall",
    "render_rejection",
    "render_revision_prompt",
    "render_status",
    "render_step_list",
    "render_tool_failure",
    "render_tool_rejection",
    "render_tool_result",
]


def render_checklist(state: TaskState) -> str:
    """The text checklist (Appendix B.1) of ``state``."""
    lines = [strings.CHECKLIST_HEADER]
    for v in state.steps:
        status = state.status(v)
        if status == "cancelled":
            lines.append(strings.CHECKLIST_CANCELLED.format(id=v))
        elif state.closed(v):  # issue #48: its exclusive partner is done
            other = state.partner(v)
            lines.append(rule_strings.EXCLUSIVE_CHECKLIST_CLOSED.format(id=v, other=other))
        elif status == "done":
            line = strings.CHECKLIST_DONE.format(id=v)
            if state.lapsed(v):  # issue #48: an expiring step whose run has lapsed
                line += rule_strings.EXPIRY_LAPSED_SUFFIX
            if (cap := state.budgets.get(v)) is not None:  # issue #48: its runs used
                used = state.uses.get(v, 0)
                line += rule_strings.BUDGET_CHECKLIST_SUFFIX.format(used=used, cap=cap)
            lines.append(line)
        elif status == "blocked":
            lines.append(
                strings.CHECKLIST_TODO_WAITING.format(id=v, deps=", ".join(state.missing(v)))
            )
        else:
            lines.append(strings.CHECKLIST_TODO_READY.format(id=v))
    return "\n".join(lines)


def render_directive(step: str, verdict: Verdict) -> str:
    """The directive line for the matched step's verdict."""
    if verdict.label == "cancelled":
        return strings.DIRECTIVE_CANCELLED.format(id=step)
    if verdict.label == "done":
        return strings.DIRECTIVE_DONE.format(id=step)
    if verdict.label == "redo":
        return strings.DIRECTIVE_REDO.format(id=step)
    if verdict.label == "blocked":
        return strings.DIRECTIVE_BLOCKED.format(id=step, missing=", ".join(verdict.missing))
    if verdict.label == "spent":  # issue #48: a budgeted step with none of its runs left
        return rule_strings.DIRECTIVE_SPENT.format(id=step)
    if verdict.label == "lapsed":  # issue #48: an expiring step whose run has lapsed
        return rule_strings.DIRECTIVE_LAPSED.format(id=step)
    if verdict.label == "closed":  # issue #48: its exclusive partner is done
        return rule_strings.DIRECTIVE_CLOSED.format(id=step)
    return strings.DIRECTIVE_ELIGIBLE.format(id=step)


_STATUS_WORD = {
    "cancelled": "CANCELLED",
    "done": "already DONE",
    "blocked": "BLOCKED",
    "spent": rule_strings.BUDGET_SPENT_STATUS,
    "closed": rule_strings.EXCLUSIVE_CLOSED_STATUS,
}


def render_rejection(booking: Booking, status: str, step: str | None = None) -> str:
    """The enforcement gate's rejection notice for a refused booking."""
    return strings.REJECTION.format(
        code=booking.code,
        work_order=booking.work_order,
        id=step or booking.step or "?",
        status=_STATUS_WORD.get(status, status.upper()),
    )


def render_tool_result(tool: str, work_order: str, receipt: str) -> str:
    """What an executed tool call returns to the agent (the tool harness)."""
    return strings.TOOL_RESULT.format(tool=tool, work_order=work_order, receipt=receipt)


def render_tool_failure(tool: str, work_order: str, kind: str, unknown: bool = False) -> str:
    """What a failed tool call returns to the agent (the tool_failure knob; OURS). A timeout
    under the tool_failure_landed knob (``unknown``), landed or not, says its outcome is
    unknown."""
    if kind == "landed" or (unknown and kind == "timeout"):
        return strings.TOOL_TIMEOUT_UNKNOWN.format(tool=tool, work_order=work_order)
    reason = strings.TOOL_FAILURE_REASONS[kind]
    return strings.TOOL_FAILED.format(tool=tool, work_order=work_order, reason=reason)


def render_status(work_order: str, tools: Sequence[str]) -> str:
    """What the harness's read-only status tool returns (the tool_failure_landed knob; OURS):
    the tools whose write the workspace holds for ``work_order``, in order, or none."""
    if not tools:
        return strings.STATUS_NONE.format(work_order=work_order)
    return strings.STATUS_HOLDS.format(work_order=work_order, tools=", ".join(tools))


def render_tool_rejection(tool: str, work_order: str, status: str, step: str | None) -> str:
    """What a refused tool call returns to the agent (the tool harness)."""
    return strings.TOOL_REJECTION.format(
        tool=tool,
        work_order=work_order,
        id=step or "?",
        status=_STATUS_WORD.get(status, status.upper()),
    )


def render_ledger(ledger: Mapping[str, str], steps: Sequence[Step] = ()) -> str:
    """The self-ledger arm's rendering of the agent's own ledger (code -> ``DONE`` /
    ``CANCELLED`` / ``TODO``, as :func:`protocol.state.receipts.parse_ledger` reads it), one
    ``LEDGER`` line per code: the plan's codes in step-id order first, any other code the
    agent wrote after them in code order; empty when the agent has kept no ledger yet."""
    known = [s.code for s in sorted(steps, key=lambda s: int(s.id[1:])) if s.code in ledger]
    other = sorted(c for c in ledger if c not in set(known))
    return "\n".join(strings.LEDGER_LINE.format(code=c, status=ledger[c]) for c in [*known, *other])


def render_step_list(steps: Mapping[str, str] | list[Step]) -> str:
    items = steps.items() if isinstance(steps, Mapping) else [(s.id, s.text) for s in steps]
    return "\n".join(strings.MATCHER_STEP_LINE.format(id=i, text=t) for i, t in items)


def render_matcher_prompt(steps: list[Step], message: str) -> str:
    return strings.MATCHER_PROMPT.format(steps=render_step_list(steps), message=message)


def render_revision_prompt(steps: list[Step], message: str) -> str:
    return strings.COMPILER_REVISION_PROMPT.format(steps=render_step_list(steps), message=message)


def compose_user_message(text: str, *, notices: list[str] | None = None, addition: str = "") -> str:
    """A user turn as an arm sends it: rejection notices first (the enforcement gate prepends
    them to the next user turn), then the scripted user's text, then the arm's addition
    (checklist, directive line, ledger) after a blank line. Every arm builds its messages
    with this function; the scripted agents read them back by the same layout."""
    parts = [*(notices or []), text]
    if addition:
        parts.append(addition)
    return "\n\n".join(parts)


def render_recall(items: list[str]) -> str:
    """The memory arms' recall block (OURS): the opening line and one item per recalled
    exchange or memory, each flattened onto one line; empty when nothing is recalled."""
    if not items:
        return ""
    lines = [strings.MEMORY_RECALL_ITEM.format(text=" ".join(t.split())) for t in items]
    return "\n".join([strings.MEMORY_RECALL_OPENING, *lines])
