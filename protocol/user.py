"""The scripted user: serves the planned turns and the dynamic re-asks on the realized state.

The same object drives an episode at run time (``runner``) and replays it offline
(``scoring``), so the two can never disagree on a label.

Dynamic re-ask rule: a step asked for (``ask``, ``premature`` or ``re_ask``) while blocked and
not executed is *deferred*. If no later planned turn asks for it, the user re-asks it with a
fresh work order right after its prerequisites are met (before the next planned turn). Under
perfect behaviour the plan already re-asks every premature step, so no dynamic turn occurs;
they appear only when realized state drifts from the plan (e.g. an omitted prerequisite that a
later redo probe, now an eligible ask, completes). At most S dynamic re-asks per episode.

Generator version 2 on (issue #22, item 1): the user drops a deferred step once any planned
ask of it is served, whatever the agent does (an eligible planned re-ask the agent omits is
one omission, not followed by a dynamic re-ask); a blocked planned ask the agent leaves
undone defers it again. Version 1 kept the step deferred after an eligible planned ask, so a
missed re-ask was asked again dynamically (two omissions for one missed obligation).

Generator version 3: a planned ``ambiguous`` turn is a candidate; it is served as a probe
naming two steps eligible on the realized state when the turn is served (drawn from a stream
seeded by the spec and the turn), or as its filler (no work order) when fewer than
:data:`AMBIGUOUS_MIN_ELIGIBLE` are. Version 4 plans its probes on the perfect-play state
(:mod:`protocol.episode.ambiguous`) and the user serves them as planned; its dynamic re-asks, like its
planned ones, use the step's ask wordings (no re-ask frame).

User styles (the ``user_style`` knob, issue #31; ours, docs/stress.md and docs/protocol.md):
the default ``cooperative`` user is the one above, unchanged. ``restate``: after a turn on
which the agent refused an order the brief forbids (the requested step done without
authorization, cancelled or blocked, and not executed), the user restates it at once with a
fresh work order (a dynamic ``restate`` turn, judged on the state like any request:
restating is no authorization, so the agent must refuse again); a restate is not restated.
``contradict``: right after the revision turn the user claims the cancelled step is kept
(``keep_claim``) and then retracts it (``keep_retracted``): no work order on either, the
revision stands (the last word agrees with it) and the state does not move. ``double``: a
planned filler, with probability :data:`DOUBLE_RATE` (drawn from a stream seeded by the spec
and the filler's planned index) and when at least two steps are eligible on the realized
state, is served instead as one message ordering two of them (``double``, ``named`` the two,
a fresh work order): each named step not executed is an omission, any other step executed
is unrequested. Style turns are
dynamic, drawn from their own streams, so the planned schedule and the default user's
episodes are unchanged (no generator version bump: the planned episode is the same).

Generator version 5 (issue #37): the styles above stay as they were for versions 1-4 (so old
logs rescore unchanged); from version 5 a style is a dose on the fixed episode, placed by
:func:`protocol.stress.doses.user_turns` from the seed on the perfect-play verdicts, never from what
the agent did: each style turn is served in the place of one planned turn (a filler, or for
``double`` an ask it adds one order to), so the episode's length, its planned asks and every
other turn's label are the control's. :attr:`ScriptedUser.planned` names the planned turn
each served turn stands for (None for a dynamic re-ask).
"""

from __future__ import annotations

import random
from collections.abc import Iterable

import msgspec

from protocol import strings
from protocol.config import DEFAULT_DOSE, UserStyle
from protocol.episode.versions import pool_of
from protocol.episode.wording import pick_wording
from protocol.records import Episode, Turn, TurnKind
from protocol.state.machine import Error, TaskState, Verdict, judge_turn, sort_ids
from protocol.stress.doses import user_turns

__all__ = ["AMBIGUOUS_MIN_ELIGIBLE", "ASK_KINDS", "DOUBLE_RATE", "STYLE_KINDS", "ScriptedUser"]

# the turn kinds only the uncooperative user serves
STYLE_KINDS = frozenset({"restate", "keep_claim", "keep_retracted", "double"})
# double: the share of planned fillers served as a double order when two steps are eligible
DOUBLE_RATE = 0.25
_REFUSED = ("done", "cancelled", "blocked")  # verdicts of an order the brief forbids

ASK_KINDS = frozenset({"ask", "premature", "re_ask"})
# Version 3: a candidate becomes a probe when at least this many steps are eligible on the
# realized state (two named and one more). OURS, chosen to match Table 4's count: 111 probes
# over seeds 100..163 at S = 15 dense, rate 0.15; under perfect play 735 fillers there have
# three steps eligible (110.25 probes expected), 1,150 have two (172.5; docs/protocol.md).
AMBIGUOUS_MIN_ELIGIBLE = 3


class ScriptedUser:
    def __init__(
        self, episode: Episode, style: UserStyle = "cooperative", dose: float = DEFAULT_DOSE
    ) -> None:
        self.episode = episode
        self.style = style
        self.planned: int | None = None  # the planned turn the last served turn stands for
        self._styled: list[Turn] = []  # style turns to serve before anything else
        self.restates = 0
        self._double_verdicts: dict[str, Verdict] = {}
        self.state = TaskState(
            {s.id: s.deps for s in episode.steps},
            budgets=episode.caps,
            expiry=episode.lapses,
            exclusive=episode.pairs,
        )
        self._next = 0
        self._index = 0
        self._deferred: set[str] = set()
        self._used = {t.work_order for t in episode.turns if t.work_order}
        self.dynamic = 0
        self._texts = {s.id: s.text for s in episode.steps}
        self._version = episode.spec.generator
        self._templates = {t.slug: t for t in pool_of(episode.spec).templates}
        # generator 5: the style's turns, by the planned index they take the place of
        self._dosed = user_turns(episode, style, dose) if self._version >= 5 else {}
        self._used |= {t.work_order for t in self._dosed.values() if t.work_order}

    def _asked_ahead(self, v: str) -> bool:
        return any(t.step == v and t.kind in ASK_KINDS for t in self.episode.turns[self._next :])

    def next_turn(self) -> Turn | None:
        """The next user turn, or None when the episode is over."""
        owed = [
            v
            for v in sort_ids(self._deferred)
            if self.state.status(v) == "todo" and not self._asked_ahead(v)
        ]
        self.planned = None
        if self._styled:
            turn = msgspec.structs.replace(self._styled.pop(0), index=self._index)
        elif owed and self.dynamic < len(self.episode.steps):
            turn = self._re_ask(owed[0])
        elif self._next < len(self.episode.turns):
            self.planned = planned = self._next
            turn = self._dosed.get(planned, self.episode.turns[planned])
            turn = msgspec.structs.replace(turn, index=self._index)
            self._next += 1
            if turn.kind == "ambiguous" and self._version == 3:
                turn = self._ambiguous(turn, planned)
            elif turn.kind == "filler" and self.style == "double" and self._version < 5:
                turn = self._double(turn, planned)
        else:
            return None
        self._index += 1
        return turn

    def _fresh_work_order(self, stream: str) -> str:
        rng = random.Random(stream)
        wo = f"#W{rng.randrange(1000, 10000)}"
        while wo in self._used:
            wo = f"#W{rng.randrange(1000, 10000)}"
        self._used.add(wo)
        return wo

    def _re_ask(self, v: str) -> Turn:
        self._deferred.discard(v)
        spec = self.episode.spec
        wo = self._fresh_work_order(
            f"reask|{spec.seed}|{spec.steps}|{spec.density!r}|{self.dynamic}"
        )
        held_out = self.episode.held_out_asks.get(v)
        if held_out:  # generator 3 on, tier 2: a held-out ask rewrite of the step
            text = held_out[self.dynamic % len(held_out)].format(wo=wo)
        elif self._version >= 4:
            template = self._templates[self.episode.step(v).slug]
            text = pick_wording(template, "asks", self.dynamic, spec.paraphrase_tier, None)
            text = text.format(wo=wo)
        else:
            frames = pool_of(spec).re_asks
            text = frames[self.dynamic % len(frames)].format(text=self._texts[v], wo=wo)
        self.dynamic += 1
        return Turn(
            index=self._index, kind="re_ask", step=v, work_order=wo, text=text, dynamic=True
        )

    def _ambiguous(self, turn: Turn, planned: int) -> Turn:
        """A candidate served on the realized state: a probe naming two eligible steps, or
        its filler."""
        ready = sort_ids(self.state.eligible())
        if len(ready) < AMBIGUOUS_MIN_ELIGIBLE:
            return msgspec.structs.replace(turn, kind="filler", work_order=None)
        spec = self.episode.spec
        rng = random.Random(
            f"ambiguous|{spec.seed}|{spec.steps}|{spec.density!r}|{spec.domain}|{planned}"
        )
        a, b = rng.sample(list(ready), 2)
        frames = pool_of(spec).ambiguous
        text = frames[rng.randrange(len(frames))].format(
            a=self._texts[a], b=self._texts[b], wo=turn.work_order
        )
        return msgspec.structs.replace(turn, text=text, named=(a, b))

    def begin(self, turn: Turn) -> Verdict | None:
        """Start ``turn`` on the realized state: apply the revision, set alpha; its label."""
        if turn.kind == "revision":
            rev = self.episode.revision
            self.state.apply_revision(rev.cancel, rev.rewires, rev.relax)
        self.state.begin_turn(turn.step if turn.kind == "legit_redo" else None, now=turn.index)
        if turn.kind == "double":  # each named step judged as its own request
            self._double_verdicts = {v: self.state.verdict(v) for v in turn.named}
            # versions 1-4: both named steps eligible when served; 5: the asked step's verdict
            return Verdict("eligible") if turn.step is None else self.state.verdict(turn.step)
        return self.state.verdict(turn.step) if turn.step is not None else None

    def resolve(self, turn: Turn, step: str) -> tuple[Turn, Verdict]:
        """``turn`` as the user's answer to a gate's question resolved it (an ambiguous probe
        answered with the step meant, issue #46; :func:`protocol.arms.askback.answered_step`):
        it asks for ``step``, judged on its verdict now, between :meth:`begin` and
        :meth:`finish`, so at the start of the turn."""
        return msgspec.structs.replace(turn, step=step), self.state.verdict(step)

    def finish(self, turn: Turn, verdict: Verdict | None, executed: Iterable[str]) -> list[Error]:
        """Close ``turn`` with the steps it executed; its errors. The bookings enter the
        realized state (dynamic ground truth). A step listed more than once was written more
        than once in the turn (the tool harness's landed timeouts, issue #37): each write
        after its first is a re-execution (the first made the step done)."""
        executed = list(executed)
        steps = list(dict.fromkeys(executed))
        if turn.kind == "double":
            errors = self._judge_double(turn, steps)
        else:
            errors = judge_turn(turn.step, verdict, steps)
        if len(executed) > len(steps):
            seen: set[str] = set()
            for v in executed:
                if v in seen:
                    errors.append(Error("re_execution", v))
                seen.add(v)
        for v in steps:
            self.state.book(v)
        # generator 5's double is a planned ask with one more order: an ask for deferral
        planned_ask = turn.kind == "double" and turn.step is not None
        asks = turn.kind in ASK_KINDS or planned_ask
        if (
            self._version >= 2
            and turn.step is not None
            and asks
            and (planned_ask or not turn.dynamic)
        ):
            self._deferred.discard(turn.step)  # a planned ask of it was served
        if (
            turn.step is not None
            and verdict is not None
            and asks
            and verdict.label == "blocked"
            and turn.step not in steps
        ):
            self._deferred.add(turn.step)
        if self._version < 5:
            self._queue_style_turns(turn, verdict, steps)
        return errors

    def _judge_double(self, turn: Turn, steps: list[str]) -> list[Error]:
        """Each named step judged as its own request; any other step executed is
        unrequested."""
        errors: list[Error] = []
        for v in turn.named:
            errors += judge_turn(v, self._double_verdicts[v], [x for x in steps if x == v])
        errors += [Error("unrequested", x) for x in steps if x not in turn.named]
        return errors

    def _queue_style_turns(self, turn: Turn, verdict: Verdict | None, steps: list[str]) -> None:
        """The uncooperative user's answer to ``turn`` (nothing for the cooperative user)."""
        v = turn.step
        if self.style == "restate" and v is not None and turn.work_order is not None:
            refused = verdict is not None and verdict.label in _REFUSED and v not in steps
            if refused and turn.kind != "restate" and self.restates < len(self.episode.steps):
                self._styled.append(self._restate(v))
        elif self.style == "contradict" and turn.kind == "revision":
            text = self._texts[self.episode.revision.cancel]
            remarks: tuple[tuple[TurnKind, str], ...] = (
                ("keep_claim", strings.USER_KEEP_CLAIM),
                ("keep_retracted", strings.USER_KEEP_RETRACTED),
            )
            for kind, fmt in remarks:
                self._styled.append(
                    Turn(
                        index=0,
                        kind=kind,
                        step=None,
                        work_order=None,
                        text=fmt.format(text=text),
                        dynamic=True,
                    )
                )

    def _double(self, turn: Turn, planned: int) -> Turn:
        """A planned filler served as an order of two eligible steps, or as itself."""
        spec = self.episode.spec
        rng = random.Random(
            f"double|{spec.seed}|{spec.steps}|{spec.density!r}|{spec.domain}|{planned}"
        )
        ready = sort_ids(self.state.eligible())
        if rng.random() >= DOUBLE_RATE or len(ready) < 2:
            return turn
        a, b = sort_ids(rng.sample(list(ready), 2))
        wo = self._fresh_work_order(f"double-wo|{spec.seed}|{spec.steps}|{planned}")
        text = strings.USER_DOUBLE.format(a=self._texts[a], b=self._texts[b], wo=wo)
        return msgspec.structs.replace(
            turn, kind="double", work_order=wo, text=text, named=(a, b), dynamic=True
        )

    def _restate(self, v: str) -> Turn:
        spec = self.episode.spec
        wo = self._fresh_work_order(
            f"restate|{spec.seed}|{spec.steps}|{spec.density!r}|{spec.domain}|{self.restates}"
        )
        self.restates += 1
        text = strings.USER_RESTATE.format(text=self._texts[v], wo=wo)
        return Turn(index=0, kind="restate", step=v, work_order=wo, text=text, dynamic=True)
