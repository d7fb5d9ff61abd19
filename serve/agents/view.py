"""What an agent sees for the current request, read from the request's messages alone."""

from __future__ import annotations

from collections.abc import Sequence

from protocol.receipts import parse_ledger
from protocol.state import TaskState
from serve.agents.brief import ParsedBrief, parse_brief
from serve.agents.replay import Exchange, replay
from serve.agents.resolve import Resolution, resolve
from serve.agents.transcript import (
    ChecklistEntry,
    Directive,
    UserTurn,
    find_directive,
    matched_step,
    parse_checklist,
    split_user,
)

__all__ = ["Message", "View", "build_view", "conversation"]

Message = tuple[str, str]  # (role, content)


class View:
    """The brief, the reconstructed state and the current request with the arm's additions."""

    __slots__ = (
        "brief",
        "checklist",
        "directive",
        "history",
        "ledger_shown",
        "matched",
        "rejected_now",
        "request",
        "state",
        "user",
        "work_order",
    )

    def __init__(
        self,
        brief: ParsedBrief,
        history: list[Exchange],
        user: UserTurn,
        request: Resolution,
        state: TaskState,
        system: str,
    ) -> None:
        self.brief = brief
        self.history = history
        self.user = user
        self.request = request
        self.state = state
        self.work_order = request.work_order
        self.directive: Directive | None = find_directive(user.addition) or find_directive(system)
        self.checklist: dict[str, ChecklistEntry] | None = parse_checklist(user.addition)
        self.matched = matched_step(user.addition)
        last_reply = history[-1][1] if history else ""
        by_code = parse_ledger(user.addition) or parse_ledger(last_reply)
        self.ledger_shown = {
            brief.by_code[c]: st for c, st in by_code.items() if c in brief.by_code
        }
        self.rejected_now = {n.code for n in user.notices if n.work_order == self.work_order}


def conversation(messages: Sequence[Message]) -> tuple[str, list[Message]]:
    """The system text and the other turns, consecutive same-role messages merged."""
    system = "\n".join(c for r, c in messages if r in ("system", "developer"))
    turns: list[Message] = []
    for role, content in messages:
        if role in ("system", "developer"):
            continue
        role = "assistant" if role == "assistant" else "user"
        if turns and turns[-1][0] == role:
            turns[-1] = (role, f"{turns[-1][1]}\n\n{content}")
        else:
            turns.append((role, content))
    return system, turns


def build_view(messages: Sequence[Message], *, narration: bool = False) -> View:
    """What the agent sees; ``narration``: its own narration of a booking counts as one
    (the perfect agent; :mod:`serve.agents.narration`)."""
    system, turns = conversation(messages)
    brief = parse_brief(system)
    history: list[Exchange] = []
    pending: UserTurn | None = None
    for role, content in turns:
        if role == "user":
            pending = split_user(content)
        elif pending is not None:
            history.append((pending, content))
            pending = None
    current = (
        pending
        if pending is not None
        else UserTurn(notices=(), text="", addition="", work_order=None)
    )
    asked = current
    if not current.text:  # a notice-only re-prompt: the request is the last one with text
        asked = next((u for u, _ in reversed(history) if u.text), current)
    request = resolve(asked.text, brief.texts)
    user = UserTurn(
        notices=current.notices,
        text=asked.text,
        addition=current.addition,
        work_order=asked.work_order,
        embedded=current.embedded,
    )
    state = replay(brief, history, current, narration=narration)
    return View(brief, history, user, request, state, system)
