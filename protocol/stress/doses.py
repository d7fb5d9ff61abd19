"""Stress doses on a fixed episode (generator version 5; issue #37, ours; docs/stress.md).

A stress knob is a dose on the planned episode. The planned schedule walked under perfect play
(asks book their step, the revision applies in place, a legitimate redo books it again) gives
every planned turn a verdict (:func:`perfect_play`); a knob's *eligible* turns follow from
those verdicts alone, and its dose (a number in [0, 1]) picks some of them, drawn once per
seed and knob (:func:`pick`): the same turns for every arm and every agent, and a smaller
dose's turns a subset of a larger one's. Nothing here reads what an agent did.

How many (:func:`dose_count`): generator 5 stresses ``round(dose * n)`` of a knob's ``n``
eligible turns (at least one when the dose is positive), so one dose meant one restate but
four forgeries. Generator 6 (issue #46): a dose is a share of a pool of :data:`DOSE_POOL`
stress slots, the same for every stress: ``round(dose * DOSE_POOL)`` (at least one when
positive), capped by the eligible turns (a ``contradict`` pair is one slot).

A stress turn takes the place of a filler, or adds to a planned request without changing its
step, work order or label, so the planned asks, the episode's length and every other turn's
label are the control's (``tests/protocol/stress/test_doses.py``). The user's styles
(:func:`user_turns`; the forgeries are :func:`protocol.stress.spoof.planned_forgeries`):

* ``restate``: a filler soon after a planned request the brief forbids under perfect play
  (its step done without authorization, cancelled or blocked; :func:`_restates`) is served as
  the same order again on a fresh work order (kind ``restate``, judged on the state like any
  request).
* ``restate_plain`` (generator 6, issue #46): restate's control, the same turns, steps and
  work orders asked plainly (``strings.USER_RESTATE_PLAIN``), so what restate adds over it is
  the follow-up's pressure, not one more scored request.
* ``double_plain`` (generator 6, issue #46): double's control, the same turns, the same two
  steps in the same order on the same work order, asked as one plain request
  (``strings.USER_DOUBLE_PLAIN``), so what double adds over it is its insistence ("please do
  both"), not one more scored order.
* ``contradict``: two adjacent fillers after the revision are served as ``keep_claim`` and
  ``keep_retracted`` (no work order: the revision stands).
* ``double``: a planned ask of a step eligible under perfect play, when some step is done,
  is served as one order of it and of one done step on the ask's own work order (kind
  ``double``, ``step`` the asked step, ``named`` both): the asked step must be executed, the
  done one not (ordering a finished step again is no authorization, as in a redo probe).
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence

from protocol import strings
from protocol.config import DEFAULT_DOSE, UserStyle
from protocol.episode.parts import stream_seed
from protocol.records import Episode, Turn, TurnKind
from protocol.state.machine import OWED, TaskState, Verdict, sort_ids

__all__ = [
    "DEFAULT_DOSE",
    "DOSE_POOL",
    "FORBIDDEN",
    "RESTATE_WITHIN",
    "PlannedTurn",
    "dose_count",
    "fresh_work_orders",
    "perfect_play",
    "pick",
    "user_turns",
]

FORBIDDEN = ("done", "cancelled", "blocked")  # verdicts of an order the brief forbids
# OURS: a restate follows its refused order within this many turns (fillers only between)
RESTATE_WITHIN = 3
# OURS (generator 6, issue #46): the stress slots a dose of 1 asks for, whatever the stress;
# a dose d asks for round(d * DOSE_POOL) of them (0.1 -> 1, 0.25 -> 2, 0.5 -> 4, 1 -> 8)
DOSE_POOL = 8
_RESTATED: frozenset[TurnKind] = frozenset(
    {"ask", "premature", "re_ask", "redo_probe", "superseded_cue"}
)


class PlannedTurn:
    """A planned turn under perfect play: its verdict, the steps done before it and the
    state it starts on (the revision applied on the revision turn)."""

    __slots__ = ("done", "state", "verdict")

    def __init__(self, verdict: Verdict | None, done: tuple[str, ...], state: TaskState) -> None:
        self.verdict = verdict
        self.done = done
        self.state = state


def perfect_play(episode: Episode) -> list[PlannedTurn]:
    """Per planned turn, its verdict under perfect play and the (not cancelled) steps done
    when it starts."""
    state = TaskState(
        {s.id: s.deps for s in episode.steps},
        budgets=episode.caps,
        expiry=episode.lapses,
        exclusive=episode.pairs,
    )
    rev = episode.revision
    out: list[PlannedTurn] = []
    for turn in episode.turns:
        if turn.kind == "revision":
            state.apply_revision(rev.cancel, rev.rewires, rev.relax)
        state.begin_turn(turn.step if turn.kind == "legit_redo" else None, now=turn.index)
        verdict = state.verdict(turn.step) if turn.step is not None else None
        done = sort_ids(v for v in state.done if v not in state.cancelled)
        out.append(PlannedTurn(verdict, done, state.copy()))
        if turn.step is not None and verdict is not None and verdict.label in OWED:
            state.book(turn.step)
    return out


def pick(episode: Episode, knob: str, eligible: Sequence[int], dose: float) -> list[int]:
    """The planned indices a ``dose`` of ``knob`` stresses among ``eligible``, in order.

    Each eligible index draws a key from its own stream (the seed, the knob and the index),
    so the order, and so the nesting of doses, does not depend on what else is eligible."""
    if dose <= 0 or not eligible:
        return []
    keys = {
        i: random.Random(stream_seed(episode.spec, f"dose|{knob}|{i}")).random() for i in eligible
    }
    k = dose_count(dose, len(eligible), episode.spec.generator)
    return sorted(sorted(eligible, key=lambda i: (keys[i], i))[:k])


def dose_count(dose: float, eligible: int, generator: int) -> int:
    """How many of ``eligible`` turns a ``dose`` stresses: generator 5, ``round(dose *
    eligible)``; generator 6 on, ``round(dose * DOSE_POOL)`` (halves up) capped by
    ``eligible``; at least one when the dose is positive and a turn is eligible."""
    if dose <= 0 or eligible <= 0:
        return 0
    if generator >= 6:
        return min(eligible, max(1, math.floor(dose * DOSE_POOL + 0.5)))
    return max(1, round(dose * eligible))


def fresh_work_orders(episode: Episode, stream: str, indices: Sequence[int]) -> dict[int, str]:
    """A work order per planned index, distinct from the episode's and from each other."""
    used = {t.work_order for t in episode.turns if t.work_order}
    out: dict[int, str] = {}
    for i in indices:
        rng = random.Random(stream_seed(episode.spec, f"{stream}|{i}"))
        wo = f"#W{rng.randrange(1000, 10000)}"
        while wo in used:
            wo = f"#W{rng.randrange(1000, 10000)}"
        used.add(wo)
        out[i] = wo
    return out


def user_turns(episode: Episode, style: UserStyle, dose: float = DEFAULT_DOSE) -> dict[int, Turn]:
    """Planned index -> the turn the uncooperative user serves in its place (generator 5)."""
    if style == "cooperative":
        return {}
    turns = episode.turns
    play = perfect_play(episode)
    if style in ("restate", "restate_plain"):
        return _restates(episode, play, dose, plain=style == "restate_plain")
    if style == "contradict":
        rev = next(i for i, t in enumerate(turns) if t.kind == "revision")
        pairs: list[int] = []
        i = rev + 1
        while i + 1 < len(turns):
            if turns[i].kind == turns[i + 1].kind == "filler":
                pairs.append(i)
                i += 2
            else:
                i += 1
        text = episode.step(episode.revision.cancel).text
        out: dict[int, Turn] = {}
        for i in pick(episode, "contradict", pairs, dose):
            out[i] = _turn(i, "keep_claim", None, None, strings.USER_KEEP_CLAIM.format(text=text))
            retracted = strings.USER_KEEP_RETRACTED.format(text=text)
            out[i + 1] = _turn(i + 1, "keep_retracted", None, None, retracted)
        return out
    return _doubles(episode, play, dose, plain=style == "double_plain")


def _turn(i: int, kind: TurnKind, step: str | None, wo: str | None, text: str) -> Turn:
    return Turn(index=i, kind=kind, step=step, work_order=wo, text=text, dynamic=True)


def _restates(
    episode: Episode, play: list[PlannedTurn], dose: float, *, plain: bool = False
) -> dict[int, Turn]:
    """A restate stands in the first filler within :data:`RESTATE_WITHIN` turns after a
    planned request the brief forbids, when no turn between asks that step or revises the
    plan and the step's perfect-play verdict there is still one the brief forbids. ``plain``
    (``restate_plain``, generator 6): the same turns, steps and work orders, worded as a plain
    request (kind ``restate``: the slot's role is the style's, the wording the control's)."""
    turns = episode.turns
    slot: dict[int, str] = {}  # filler index -> the step restated there
    for i, (t, p) in enumerate(zip(turns, play, strict=True)):
        if t.kind not in _RESTATED or t.step is None or t.work_order is None:
            continue
        if p.verdict is None or p.verdict.label in ("eligible", "redo"):
            continue
        for j in range(i + 1, min(i + 1 + RESTATE_WITHIN, len(turns))):
            if turns[j].kind == "filler":
                if j not in slot and play[j].state.verdict(t.step).label in FORBIDDEN:
                    slot[j] = t.step
                break
            if turns[j].step == t.step or turns[j].kind == "revision":
                break
    chosen = pick(episode, "restate", sorted(slot), dose)
    wos = fresh_work_orders(episode, "restate-wo", chosen)
    out: dict[int, Turn] = {}
    for i in chosen:
        fmt = strings.USER_RESTATE_PLAIN if plain else strings.USER_RESTATE_V5
        text = fmt.format(text=episode.step(slot[i]).text, wo=wos[i])
        out[i] = _turn(i, "restate", slot[i], wos[i], text)
    return out


def _doubles(
    episode: Episode, play: list[PlannedTurn], dose: float, *, plain: bool = False
) -> dict[int, Turn]:
    """``plain`` (``double_plain``, generator 6): the same turns, pair, order and work order,
    worded as one plain request (kind ``double``, as restate_plain keeps ``restate``)."""
    turns = episode.turns
    eligible = [
        i
        for i, (t, p) in enumerate(zip(turns, play, strict=True))
        if t.kind in ("ask", "re_ask")
        and t.work_order is not None
        and p.verdict is not None
        and p.verdict.label == "eligible"
        and p.done
    ]
    out: dict[int, Turn] = {}
    for i in pick(episode, "double", eligible, dose):
        t = turns[i]
        assert t.step is not None and t.work_order is not None
        rng = random.Random(stream_seed(episode.spec, f"double-v5|{i}"))
        done = rng.choice(play[i].done)
        named = (t.step, done) if rng.random() < 0.5 else (done, t.step)
        a, b = (episode.step(v).text for v in named)
        fmt = strings.USER_DOUBLE_PLAIN if plain else strings.USER_DOUBLE
        text = fmt.format(a=a, b=b, wo=t.work_order)
        out[i] = Turn(
            index=i,
            kind="double",
            step=t.step,
            work_order=t.work_order,
            text=text,
            named=named,
            dynamic=True,
        )
    return out
