"""The scripted user: serves the planned turns and the dynamic re-asks on the realized state.

The same object drives an episode at run time (``runner``) and replays it offline
(``scoring``), so the two can never disagree on a label.

Dynamic re-ask rule: a step asked for (``ask``, ``premature`` or ``re_ask``) while blocked and
not executed is *deferred*. If no later planned turn asks for it, the user re-asks it with a
fresh work order right after its prerequisites are met (before the next planned turn). Under
perfect behaviour the plan already re-asks every premature step, so no dynamic turn occurs;
they appear only when realized state drifts from the plan (e.g. an omitted prerequisite that a
later redo probe, now an eligible ask, completes). At most S dynamic re-asks per episode.
"""

from __future__ import annotations

import random
from collections.abc import Iterable

import msgspec

from protocol.domains import POOLS
from protocol.records import Episode, Turn
from protocol.state import Error, TaskState, Verdict, judge_turn, sort_ids

__all__ = ["ASK_KINDS", "ScriptedUser"]

ASK_KINDS = frozenset({"ask", "premature", "re_ask"})


class ScriptedUser:
    def __init__(self, episode: Episode) -> None:
        self.episode = episode
        self.state = TaskState({s.id: s.deps for s in episode.steps})
        self._next = 0
        self._index = 0
        self._deferred: set[str] = set()
        self._used = {t.work_order for t in episode.turns if t.work_order}
        self.dynamic = 0
        self._texts = {s.id: s.text for s in episode.steps}

    def _asked_ahead(self, v: str) -> bool:
        return any(t.step == v and t.kind in ASK_KINDS for t in self.episode.turns[self._next :])

    def next_turn(self) -> Turn | None:
        """The next user turn, or None when the episode is over."""
        owed = [
            v
            for v in sort_ids(self._deferred)
            if self.state.status(v) == "todo" and not self._asked_ahead(v)
        ]
        if owed and self.dynamic < len(self.episode.steps):
            turn = self._re_ask(owed[0])
        elif self._next < len(self.episode.turns):
            turn = msgspec.structs.replace(self.episode.turns[self._next], index=self._index)
            self._next += 1
        else:
            return None
        self._index += 1
        return turn

    def _re_ask(self, v: str) -> Turn:
        self._deferred.discard(v)
        spec = self.episode.spec
        rng = random.Random(f"reask|{spec.seed}|{spec.steps}|{spec.density!r}|{self.dynamic}")
        wo = f"#W{rng.randrange(1000, 10000)}"
        while wo in self._used:
            wo = f"#W{rng.randrange(1000, 10000)}"
        self._used.add(wo)
        frames = POOLS[spec.domain].re_asks
        text = frames[self.dynamic % len(frames)].format(text=self._texts[v], wo=wo)
        self.dynamic += 1
        return Turn(
            index=self._index, kind="re_ask", step=v, work_order=wo, text=text, dynamic=True
        )

    def begin(self, turn: Turn) -> Verdict | None:
        """Start ``turn`` on the realized state: apply the revision, set alpha; its label."""
        if turn.kind == "revision":
            rev = self.episode.revision
            self.state.apply_revision(rev.cancel, rev.rewires, rev.relax)
        self.state.begin_turn(turn.step if turn.kind == "legit_redo" else None)
        return self.state.verdict(turn.step) if turn.step is not None else None

    def finish(self, turn: Turn, verdict: Verdict | None, executed: Iterable[str]) -> list[Error]:
        """Close ``turn`` with the steps it executed; its errors. The bookings enter the
        realized state (dynamic ground truth)."""
        steps = list(dict.fromkeys(executed))
        errors = judge_turn(turn.step, verdict, steps)
        for v in steps:
            self.state.book(v)
        if (
            turn.step is not None
            and verdict is not None
            and turn.kind in ASK_KINDS
            and verdict.label == "blocked"
            and turn.step not in steps
        ):
            self._deferred.add(turn.step)
        return errors
