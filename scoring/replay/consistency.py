"""Are the logged turns the turns of the regenerated episode?

Two checks, same verdicts on the logs the runner writes:

* :func:`planned_mismatches` (the fast path): the logged turns, in order, must be the planned
  schedule of the episode. It applies when the log has no dynamic re-ask and every turn's
  re-parsed bookings equal the bookings the world admitted: then the runner's scripted user
  saw the realized state the replay sees, at every turn, and served no dynamic turn.
* :class:`ScheduleChecker` (otherwise): during the primary replay, ask the scripted user for
  the turn it would serve next on the replay's realized state (dynamic re-asks included) and
  compare it with the logged one. It costs a ``ScriptedUser.next_turn`` per turn, which is
  why it is not the default.

Known limit of the fast path: a log edited by hand to drop a due dynamic re-ask (while every
admitted list still matches its reply) passes it.
"""

from __future__ import annotations

from collections.abc import Sequence

from protocol.records import Episode, Turn
from protocol.user import ScriptedUser

__all__ = ["MAX_MISMATCHES", "ScheduleChecker", "as_planned", "planned_mismatches"]

MAX_MISMATCHES = 10


def _describe(t: Turn) -> str:
    parts = [t.kind, t.step or "-", t.work_order or "-"]
    if t.named:
        parts.append("named=" + ",".join(t.named))
    if t.dynamic:
        parts.append("dynamic")
    return " ".join(parts)


class _Notes:
    def __init__(self) -> None:
        self.messages: list[str] = []
        self.count = 0

    def note(self, message: str) -> None:
        self.count += 1
        if len(self.messages) < MAX_MISMATCHES:
            self.messages.append(message)

    def compare(self, expected: Turn, logged: Turn, check_text: bool) -> None:
        same = (
            expected.kind == logged.kind
            and expected.step == logged.step
            and expected.work_order == logged.work_order
            and expected.named == logged.named
            and expected.dynamic == logged.dynamic
            and expected.index == logged.index
        )
        if not same:
            self.note(
                f"turn {logged.index}: logged {_describe(logged)}; "
                f"the episode has {_describe(expected)} (turn {expected.index})"
            )
        elif check_text and expected.text != logged.text:
            self.note(f"turn {logged.index}: logged user text differs from the episode's")

    def done(self) -> tuple[str, ...]:
        if self.count > len(self.messages):
            self.messages.append(f"... {self.count - len(self.messages)} more mismatches")
        return tuple(self.messages)


def as_planned(episode: Episode, turns: Sequence[Turn]) -> Sequence[Turn]:
    """*turns*, or the episode's own planned turns when they are equal (the common log,
    #50): the same values, whose hashes and comparisons (a replay's key, the check below)
    then reuse the episode's objects."""
    planned = episode.turns[: len(turns)]
    return planned if len(planned) == len(turns) and tuple(turns) == planned else turns


def planned_mismatches(
    episode: Episode, logged: Sequence[Turn], completed: bool, check_text: bool
) -> tuple[str, ...]:
    """Differences between the logged turns and the planned schedule."""
    notes = _Notes()
    planned = episode.turns
    # the common log: the planned turns themselves (Turn equality, one C call, compares
    # every field the loop compares, and the text), so no turn can differ (#50)
    same = len(logged) <= len(planned) and tuple(logged) == planned[: len(logged)]
    for i, turn in enumerate(() if same else logged):
        if i >= len(planned):
            notes.note(f"turn {turn.index}: logged after the end of the schedule")
            break
        notes.compare(planned[i], turn, check_text)
    if completed and len(logged) < len(planned):
        notes.note(f"episode marked completed after {len(logged)} turns; the schedule has more")
    return notes.done()


class ScheduleChecker:
    """Compares each logged turn with the turn the scripted user would serve next."""

    def __init__(self, check_text: bool) -> None:
        self.check_text = check_text
        self._notes = _Notes()

    def __call__(self, user: ScriptedUser, logged: Turn) -> None:
        expected = user.next_turn()
        if expected is None:
            self._notes.note(f"turn {logged.index}: logged after the end of the schedule")
        else:
            self._notes.compare(expected, logged, self.check_text)

    def finish(self, user: ScriptedUser, completed: bool, logged: int) -> tuple[str, ...]:
        if completed and user.next_turn() is not None:
            self._notes.note(
                f"episode marked completed after {logged} turns; the schedule has more"
            )
        return self._notes.done()
