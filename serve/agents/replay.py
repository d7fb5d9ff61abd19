"""Reconstructing the task state from a transcript, as the agent can see it.

The agent's own earlier replies are its execution record: a ref line (or, in the tools
variant, an ``ACTION`` line) carrying the work order of the user message it answered is a
booking. A rejection notice (``[BOOKING REJECTED] ...``) in a later user turn undoes the
refused booking. The revision message, when the transcript reaches it, cancels, rewires and
relaxes. Statuses then follow Section 3.1 (``protocol.state.machine.TaskState``). With
``narration=True`` (the perfect agent) the reply's narration of a booking counts too
(:mod:`serve.agents.narration`), under the same booking key as its line.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from functools import lru_cache

from protocol.state.machine import TaskState
from protocol.state.receipts import find_actions, read_bookings
from serve.agents.brief import ParsedBrief
from serve.agents.handoff import read_carried
from serve.agents.narration import narrated_steps
from serve.agents.resolve import is_revision
from serve.agents.revision import parse_revision
from serve.agents.transcript import Rejection, UserTurn

__all__ = ["Exchange", "Record", "booked", "narrated", "replay"]

Exchange = tuple[UserTurn, str]  # a user turn and the agent's reply to it
BookingKey = tuple[str, str]  # (code or "tool:<name>", work order)


@lru_cache(maxsize=65536)
def booked(
    reply: str, work_order: str | None, brief: ParsedBrief
) -> tuple[tuple[str, BookingKey], ...]:
    """(step, booking key) for each booking ``reply`` makes under ``work_order``."""
    if work_order is None:
        return ()
    found = [
        (b.step, (b.code, work_order))
        for b in read_bookings(reply, brief.by_code, work_order).bookings
        if b.step is not None
    ]
    if brief.tools:
        found += [
            (brief.by_tool[a.tool], (f"tool:{a.tool}", work_order))
            for a in find_actions(reply)
            if a.work_order == work_order and a.tool in brief.by_tool
        ]
    return tuple(dict.fromkeys(found))


def narrated(
    reply: str, work_order: str | None, brief: ParsedBrief
) -> tuple[tuple[str, BookingKey], ...]:
    """(step, booking key) for each booking ``reply`` narrates under ``work_order``: the key
    its booking line would carry (the tool's in the tools variant, else the code's)."""
    if work_order is None:
        return ()
    out: list[tuple[str, BookingKey]] = []
    for step in narrated_steps(reply, work_order):
        s = brief.by_id.get(step)
        if s is None:
            continue
        label = f"tool:{s.tool}" if brief.tools and s.tool else s.code
        out.append((step, (label, work_order)))
    return tuple(out)


class Record:
    """The execution record read from a transcript's exchanges: the task state and the
    booking keys that hold each executed step."""

    def __init__(self, brief: ParsedBrief) -> None:
        self.brief = brief
        self.state = TaskState(
            brief.deps, budgets=brief.budgets, expiry=brief.expiry, exclusive=brief.exclusive
        )
        self.held: dict[str, set[BookingKey]] = {}
        self.turns = 0  # exchanges read: the clock (the index of the next user turn)
        self.revision: str | None = None  # the revision message read (a handoff note's, #48)

    def admit(self, bookings: Iterable[tuple[str, BookingKey]]) -> None:
        """Each booking key once: a budgeted step's runs are its distinct keys (#48)."""
        for step, key in bookings:
            keys = self.held.setdefault(step, set())
            if key not in keys:
                keys.add(key)
                self.state.book(step)

    def refuse(self, notices: Iterable[Rejection]) -> None:
        for n in notices:
            tool = n.code.removeprefix("tool:") if n.code.startswith("tool:") else None
            by_tool = self.brief.by_tool.get(tool) if tool is not None else None
            step = self.brief.by_code.get(n.code) or by_tool or n.step
            if step is None:
                continue
            keys = self.held.get(step, set())
            keys.discard((n.code, n.work_order))
            keys -= {k for k in keys if k[0].startswith("tool:") and k[1] == n.work_order}
            self.state.unbook(step, len(keys))

    def revise(self, text: str) -> None:
        if not is_revision(text):
            return
        rev = parse_revision(text, self.brief.texts)
        self.state.apply_revision(rev.cancel, rev.rewires, rev.relax)
        self.revision = text

    def carry(self, addition: str) -> None:
        """What the first user message of a transcript carries from an earlier session
        (issue #48; :mod:`serve.agents.handoff`): a handoff note's plan change, performed
        and cancelled steps, and a ledger the arm kept (its DONE and CANCELLED lines)."""
        carried = read_carried(addition, self.brief)
        if carried.revision is not None:
            self.revise(carried.revision)
        self.admit(carried.done)
        for step in carried.cancelled:
            self.state.cancel(step)

    def copy(self) -> Record:
        new = Record.__new__(Record)
        new.brief = self.brief
        new.state = self.state.copy()
        new.held = {step: set(keys) for step, keys in self.held.items()}
        new.turns = self.turns
        new.revision = self.revision
        return new

    def read(self, exchanges: Iterable[Exchange], narration: bool) -> None:
        brief = self.brief
        for user, reply in exchanges:
            if not self.turns:  # a restarted session's first message (issue #48)
                self.carry(user.addition)
            self.state.now = self.turns  # the turn this exchange answered (expiry, #48)
            self.turns += 1
            self.refuse(user.notices)
            self.revise(user.text)
            self.admit(booked(reply, user.work_order, brief))
            if narration:
                self.admit(narrated(reply, user.work_order, brief))
        self.state.now = self.turns  # the current request's turn


def replay(
    brief: ParsedBrief,
    history: Sequence[Exchange],
    current: UserTurn,
    *,
    narration: bool = False,
) -> TaskState:
    """The state at the start of ``current``'s request (its notices and revision applied),
    read from the whole transcript (``serve.agents.reading`` reads it incrementally)."""
    record = Record(brief)
    record.read(history, narration)
    if not history:  # the transcript's first message: what it carries over (issue #48)
        record.carry(current.addition)
    record.refuse(current.notices)
    record.revise(current.text)
    return record.state
