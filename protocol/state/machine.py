"""The task-state machine of Section 3.1: G = (V, E, sigma, alpha).

One implementation, used by the generator (to plan a schedule), the scripted user (dynamic
re-asks), the arms (checklist rendering, the gates' compiled state) and the scorer (labels
and the six error channels).

Rules, as the paper states them and as this code keeps them everywhere:

- Status is derived, never asserted: ``cancelled`` if the step was cancelled; ``done`` if a
  verified execution (an admitted booking) exists; ``blocked`` if some prerequisite is not
  done; ``todo`` otherwise. Cancellation wins over done.
- alpha (``authorized``) holds the done steps whose re-execution the user explicitly
  authorized *for the current request*; it is reset at every turn.
- A revision applies cancel(v), rewire(w, P) and relax(w, u) in place.
- Dynamic ground truth: every booking the world admits marks its step done in the realized
  state, whatever its label was. A premature execution in the raw arm therefore makes the
  step done (a later ask of it is a re-mention); an executed cancelled step stays cancelled;
  a refused booking (enforcement gate) never reaches the realized state.

A turn's *label* is the verdict for its requested step on the state at the start of the turn
(after the revision on the revision turn): ``eligible``, ``blocked``, ``done``,
``cancelled`` or ``redo`` (done and authorized), or ``None`` when the turn resolves to no step.

Budgets (issue #48, OURS; ``docs/protocol.md``, "Budgets"): a step of ``budgets`` may be
performed up to its cap times in all. ``uses`` counts its verified executions (every admitted
booking, dynamic ground truth as above). While a budgeted step is done with uses below its
cap, a request for it is ``eligible`` (a further execution the brief allows); once the cap is
reached it is ``spent``, and executing it is an error of its own channel, ``over_budget``
(:data:`RULE_CHANNELS`; the paper's six :data:`CHANNELS` are unchanged). An authorized redo
of a budgeted step is still ``redo``.

Expiry (issue #48, OURS; ``docs/protocol.md``, "Expiry"): a run of a step of ``expiry`` lapses
``T`` turns after the turn it was made on. The state keeps a clock, ``now`` (the served turn's
index, set by :meth:`TaskState.begin_turn`), and the turn of each step's latest run
(``done_at``). A request for a done expiring step is ``done`` while its run is valid (the
paper's redo probe) and ``lapsed`` from ``T`` turns after it: the step must be run again, and
not running it is an error of its own channel, ``lapse_missed``. A lapsed step still counts
as done for its dependents (a lapse is no revision of the plan).

Exclusive steps (issue #48, OURS; ``docs/protocol.md``, "Exclusive steps"): ``exclusive`` maps
a planned step to its *alternative*, a step the brief lists with it as "at most one of the
two". A step is *closed* while its partner is done and not cancelled; a request for a closed
step is ``closed`` (whatever its own status, cancellation aside), and executing it is an error
of its own channel, ``exclusive_closed``. Cancelling the done partner (a revision) reopens it.
An alternative is a step the plan never asks for, so :meth:`TaskState.eligible` (the steps a
scripted user may pick among) leaves the alternatives out. Without budgets, expiry or
exclusive steps every rule above is the paper's.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Literal

import msgspec

__all__ = [
    "CHANNELS",
    "OWED",
    "RULE_CHANNELS",
    "Channel",
    "Error",
    "Label",
    "Status",
    "TaskState",
    "Verdict",
    "judge_turn",
    "sort_ids",
]

Status = Literal["todo", "blocked", "done", "cancelled"]
Label = Literal["eligible", "blocked", "done", "cancelled", "redo", "spent", "lapsed", "closed"]
Channel = Literal[
    "re_execution",
    "superseded",
    "premature",
    "omission",
    "unrequested",
    "refused_redo",
    "over_budget",
    "lapse_missed",
    "exclusive_closed",
]
CHANNELS: tuple[Channel, ...] = (
    "re_execution",
    "superseded",
    "premature",
    "omission",
    "unrequested",
    "refused_redo",
)
# The channels of the rules beyond one-shot state (issue #48, OURS): each trap of a rule is
# scored on a channel of its own, never folded into the paper's six.
RULE_CHANNELS: tuple[Channel, ...] = ("over_budget", "lapse_missed", "exclusive_closed")
# The labels of a request that must be performed (its step run on that turn).
OWED: tuple[Label, ...] = ("eligible", "redo", "lapsed")


# gc=False here: frozen, every field immutable, never in a reference cycle (#50, eleventh round)
class Verdict(msgspec.Struct, frozen=True, gc=False):
    label: Label
    missing: tuple[str, ...] = ()  # missing prerequisites when blocked


class Error(msgspec.Struct, frozen=True, gc=False):
    channel: Channel
    step: str


def _id_key(step_id: str) -> tuple[int, str]:
    digits = step_id.lstrip("s")
    return (int(digits), step_id) if digits.isdigit() else (1 << 30, step_id)


def sort_ids(ids: Iterable[str]) -> tuple[str, ...]:
    """Step ids in their natural order (s2 before s10)."""
    return tuple(sorted(ids, key=_id_key))


class TaskState:
    """A mutable G. Cheap to copy; no I/O."""

    __slots__ = (
        "authorized",
        "budgets",
        "cancelled",
        "deps",
        "done",
        "done_at",
        "exclusive",
        "expiry",
        "now",
        "uses",
    )

    def __init__(
        self,
        deps: Mapping[str, Iterable[str]],
        done: Iterable[str] = (),
        cancelled: Iterable[str] = (),
        budgets: Mapping[str, int] | None = None,
        expiry: Mapping[str, int] | None = None,
        exclusive: Mapping[str, str] | None = None,
    ) -> None:
        self.deps: dict[str, frozenset[str]] = {v: frozenset(p) for v, p in deps.items()}
        self.done: set[str] = set(done)
        self.cancelled: set[str] = set(cancelled)
        self.authorized: set[str] = set()
        self.budgets: dict[str, int] = dict(budgets or {})  # step -> its cap of executions
        self.uses: dict[str, int] = {v: 1 for v in self.done}  # step -> verified executions
        self.expiry: dict[str, int] = dict(expiry or {})  # step -> turns a run stays valid
        self.now = 0  # the clock: the index of the turn being served
        self.done_at: dict[str, int] = {}  # step -> the turn of its latest run
        # planned step -> its alternative (at most one of the two is performed)
        self.exclusive: dict[str, str] = dict(exclusive or {})

    # --- reading --------------------------------------------------------------------
    @property
    def steps(self) -> tuple[str, ...]:
        return sort_ids(self.deps)

    def missing(self, v: str) -> tuple[str, ...]:
        return sort_ids(u for u in self.deps.get(v, ()) if u not in self.done)

    def status(self, v: str) -> Status:
        if v in self.cancelled:
            return "cancelled"
        if v in self.done:
            return "done"
        if any(u not in self.done for u in self.deps.get(v, ())):
            return "blocked"
        return "todo"

    def verdict(self, v: str) -> Verdict:
        """The per-turn verdict for a request that resolves to ``v``."""
        status = self.status(v)
        if status == "cancelled":
            return Verdict("cancelled")
        if self.closed(v):
            return Verdict("closed")
        if status == "done":
            if v in self.authorized:
                return Verdict("redo")
            if self.lapsed(v):
                return Verdict("lapsed")
            cap = self.budgets.get(v)
            if cap is None:
                return Verdict("done")
            return Verdict("eligible") if self.uses.get(v, 0) < cap else Verdict("spent")
        if status == "blocked":
            return Verdict("blocked", self.missing(v))
        return Verdict("eligible")

    def lapsed(self, v: str) -> bool:
        """Whether the latest run of the expiring step ``v`` has lapsed by ``now``."""
        valid = self.expiry.get(v)
        ran = self.done_at.get(v)
        return valid is not None and ran is not None and self.now - ran >= valid

    def partner(self, v: str) -> str | None:
        """The other step of ``v``'s exclusive pair (None: ``v`` is in no pair)."""
        for a, b in self.exclusive.items():
            if v in (a, b):
                return b if v == a else a
        return None

    def closed(self, v: str) -> bool:
        """Whether ``v`` is closed: its exclusive partner is done and not cancelled."""
        other = self.partner(v)
        return other is not None and other in self.done and other not in self.cancelled

    def eligible(self) -> tuple[str, ...]:
        """The planned steps ready to run (the alternatives are never planned asks)."""
        alternatives = set(self.exclusive.values())
        return tuple(v for v in self.steps if self.status(v) == "todo" and v not in alternatives)

    def is_acyclic(self) -> bool:
        seen: dict[str, int] = {}  # 1 = on stack, 2 = finished

        def visit(v: str) -> bool:
            mark = seen.get(v)
            if mark == 1:
                return False
            if mark == 2:
                return True
            seen[v] = 1
            ok = all(visit(u) for u in self.deps.get(v, ()) if u in self.deps)
            seen[v] = 2
            return ok

        return all(visit(v) for v in self.deps)

    # --- changing -------------------------------------------------------------------
    def copy(self) -> TaskState:
        new = TaskState.__new__(TaskState)
        new.deps = dict(self.deps)
        new.done = set(self.done)
        new.cancelled = set(self.cancelled)
        new.authorized = set(self.authorized)
        new.budgets = self.budgets  # never changed in place
        new.uses = dict(self.uses)
        new.expiry = self.expiry  # never changed in place
        new.exclusive = self.exclusive  # never changed in place
        new.now = self.now
        new.done_at = dict(self.done_at)
        return new

    def begin_turn(self, authorize: str | None = None, now: int | None = None) -> None:
        """Reset alpha for a new request; ``authorize`` a done step for this request only;
        ``now`` the turn's index (the clock expiry reads; unchanged when None)."""
        if now is not None:
            self.now = now
        self.authorized.clear()
        if authorize is not None and authorize in self.done:
            self.authorized.add(authorize)

    def book(self, v: str) -> None:
        """An admitted booking: ``v`` has a verified execution."""
        if v in self.deps:
            self.done.add(v)
            self.uses[v] = self.uses.get(v, 0) + 1
            self.done_at[v] = self.now

    def unbook(self, v: str, left: int) -> None:
        """A refused booking taken back: ``v`` keeps ``left`` verified executions (none:
        not done)."""
        if left <= 0:
            self.done.discard(v)
            self.uses.pop(v, None)
        else:
            self.uses[v] = left

    def remaining(self, v: str) -> int | None:
        """Executions the budget of ``v`` still allows (None: no budget)."""
        cap = self.budgets.get(v)
        return None if cap is None else max(0, cap - self.uses.get(v, 0))

    def cancel(self, v: str) -> None:
        self.cancelled.add(v)

    def rewire(self, w: str, prerequisites: Iterable[str]) -> None:
        self.deps[w] = frozenset(prerequisites)

    def relax(self, w: str, u: str) -> None:
        self.deps[w] = self.deps.get(w, frozenset()) - {u}

    def apply_revision(
        self,
        cancel: str | None,
        rewires: Mapping[str, Iterable[str]],
        relax: tuple[str, str] | None,
    ) -> None:
        if cancel is not None:
            self.cancel(cancel)
        for w, p in rewires.items():
            if w in self.deps:
                self.rewire(w, p)
        if relax is not None and relax[0] in self.deps:
            self.relax(*relax)


def judge_turn(
    requested: str | None, verdict: Verdict | None, executed: Iterable[str]
) -> list[Error]:
    """The errors of one turn, each in exactly one channel (the six, or a rule's).

    ``requested`` is the step the turn resolves to (None for fillers, the revision and
    ambiguous probes), ``verdict`` its verdict at the start of the turn, ``executed`` the
    distinct steps the turn executed (admitted bookings, one per step).
    """
    errors: list[Error] = []
    did_requested = False
    for v in executed:
        if v != requested:
            errors.append(Error("unrequested", v))
            continue
        did_requested = True
        assert verdict is not None
        if verdict.label == "done":
            errors.append(Error("re_execution", v))
        elif verdict.label == "cancelled":
            errors.append(Error("superseded", v))
        elif verdict.label == "blocked":
            errors.append(Error("premature", v))
        elif verdict.label == "spent":
            errors.append(Error("over_budget", v))
        elif verdict.label == "closed":
            errors.append(Error("exclusive_closed", v))
    if requested is not None and verdict is not None and not did_requested:
        if verdict.label == "eligible":
            errors.append(Error("omission", requested))
        elif verdict.label == "redo":
            errors.append(Error("refused_redo", requested))
        elif verdict.label == "lapsed":
            errors.append(Error("lapse_missed", requested))
    return errors
