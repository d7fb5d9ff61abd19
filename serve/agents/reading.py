"""What an agent sees for the current request, read from the request's messages alone."""

from __future__ import annotations

from collections.abc import Sequence

from protocol.state.machine import TaskState
from protocol.state.receipts import parse_ledger
from serve.agents.brief import ParsedBrief, parse_brief
from serve.agents.replay import Exchange, Record
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

__all__ = ["Message", "Reading", "View", "build_view", "last_user"]

Message = tuple[str, str]  # (role, content)


def last_user(messages: Sequence[Message]) -> str:
    """The last user message's content ("" without one), found from the end: a request's
    last message is usually the user's, so no step per message of the transcript (#50)."""
    return next((c for r, c in reversed(messages) if r == "user"), "")


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


class Reading:
    """A transcript read message by message: the system texts, the other turns (consecutive
    same-role messages merged), the exchanges and the user turn still awaiting a reply, and
    the execution records read from the exchanges, by (brief, narration)."""

    __slots__ = ("history", "pending", "records", "systems", "turns")

    def __init__(self) -> None:
        self.systems: list[str] = []
        self.turns: list[Message] = []
        self.history: list[Exchange] = []
        self.pending: UserTurn | None = None
        # (exchanges read, record after them); a record is never changed once stored here
        self.records: dict[tuple[ParsedBrief, bool], tuple[int, Record]] = {}

    def copy(self) -> Reading:
        new = Reading.__new__(Reading)
        new.systems = list(self.systems)
        new.turns = list(self.turns)
        new.history = list(self.history)
        new.pending = self.pending
        new.records = dict(self.records)
        return new

    def add(self, role: str, content: str) -> bool:
        """Read one more message; True when it merged into the last turn, so that every
        turn was read again (the exchanges read before may have changed)."""
        if role in ("system", "developer"):
            self.systems.append(content)
            return False
        role = "assistant" if role == "assistant" else "user"
        if role == "user" and not self.turns and not self.systems:
            content = self._brief_in_user_turn(content)
        if self.turns and self.turns[-1][0] == role:  # merged into the last turn: read again
            self.turns[-1] = (role, f"{self.turns[-1][1]}\n\n{content}")
            self.history, self.pending, self.records = [], None, {}
            for r, c in self.turns:
                self._step(r, c)
            return True
        self.turns.append((role, content))
        self._step(role, content)
        return False

    def _brief_in_user_turn(self, content: str) -> str:
        """A first user turn that opens with the brief (a grid's ``brief_role = "user"``,
        for a template without a system role): the brief, up to its first blank line, is
        read as the system text it stands for, and the rest as the turn. A brief holds no
        blank line; its step lines (with completion codes) tell it from any other text."""
        head, sep, rest = content.partition("\n\n")
        if sep and parse_brief(head).steps:
            self.systems.append(head)
            return rest
        return content

    def _step(self, role: str, content: str) -> None:
        if role == "user":
            self.pending = split_user(content)
        elif self.pending is not None:
            self.history.append((self.pending, content))
            self.pending = None

    def record(self, brief: ParsedBrief, narration: bool) -> Record:
        """The execution record after every exchange read so far (a copy, the caller's)."""
        key = (brief, narration)
        done, record = self.records.get(key) or (0, Record(brief))
        if done < len(self.history):
            record = record.copy()
            record.read(self.history[done:], narration)
            self.records[key] = (len(self.history), record)
        return record.copy()


def build_view(
    messages: Sequence[Message], *, narration: bool = False, kept: Reading | None = None
) -> View:
    """What the agent sees; ``narration``: its own narration of a booking counts as one
    (the perfect agent; :mod:`serve.agents.narration`). ``kept``: the reading of every
    message but the last, when the caller has it (``serve.endpoint.conversation`` carries it from
    the conversation's previous request); read here otherwise."""
    if kept is None:
        kept = Reading()
        for role, content in messages[:-1]:
            kept.add(role, content)
    reading = kept.copy()
    reread = bool(messages) and reading.add(*messages[-1])
    system = "\n".join(reading.systems)
    brief = parse_brief(system)
    history = reading.history
    pending = reading.pending
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
        forwarded=current.forwarded,
    )
    # the state at the start of the current request (Section 3.1, as serve.agents.replay)
    if reread:  # the last message rewrote an exchange the kept reading holds
        record = Record(brief)
        record.read(history, narration)
    else:  # the kept reading's exchanges, then the one the last message may complete
        record = kept.record(brief, narration)
        record.read(history[len(kept.history) :], narration)
    if not history:  # the transcript's first message: what it carries over (issue #48)
        record.carry(current.addition)
    record.refuse(current.notices)
    record.revise(current.text)
    return View(brief, history, user, request, record.state, system)
