"""The budget knob on a fixed episode (issue #48, generator 6; OURS, docs/semantics.md).

Section 6 of the paper leaves budgets out ("budgets, expiry, conflicting obligations ... are
out of scope"). Here a budget is a rule of the task-state machine
(:class:`protocol.state.machine.TaskState`, ``budgets``): a budgeted step may be performed up
to its cap ``N`` times in all, a request while runs remain is ``eligible`` and one beyond is
``spent`` (a trap scored on the ``over_budget`` channel).

:func:`budgeted` places it on the planned episode from the seed alone, never from what an
agent did. Walking the planned schedule under perfect play (:func:`protocol.stress.doses.perfect_play`),
a *candidate* is a step booked on a planned turn ``i`` that no later planned turn requests,
names or cancels, with at least :data:`MAX_BUDGET` fillers after ``i``. One candidate is drawn
per seed (the same for every cap), and the cap-``N`` dose serves ``N`` of those fillers
(the ``N`` with the smallest seeded keys, so a smaller cap's turns are a subset of a larger
one's) as the user's ``budget_repeat`` request for it, each on a fresh work order: under
perfect play the first ``N - 1`` are eligible and the last is spent. The brief gains the
budget clause and the step's line at its end (:func:`protocol.brief.render_budgets`).
Every other turn, the episode's length and its planned asks are the control's
(``tests/protocol/stress/test_budget.py``). An episode with no candidate is returned
unchanged (its cell then runs the control; :func:`budget_placed` says which).
"""

from __future__ import annotations

import random

import msgspec

from protocol import rule_strings
from protocol.brief import render_budgets
from protocol.config import Knobs
from protocol.episode.parts import stream_seed
from protocol.records import Episode
from protocol.state.machine import sort_ids
from protocol.stress.exclusive import exclusive
from protocol.stress.expiry import expiring
from protocol.stress.repeats import fillers_after, place_requests, seeded_subset, settled_runs
from protocol.stress.sessions import sessioned

__all__ = [
    "MAX_BUDGET",
    "MIN_GENERATOR",
    "budget_placed",
    "budgeted",
    "candidates",
    "cell_episode",
]

MAX_BUDGET = 4  # OURS: the largest cap (runs of the budgeted step) the knob takes
MIN_GENERATOR = 6  # the generator version that places budgets


def candidates(episode: Episode) -> dict[str, list[int]]:
    """Step -> the planned fillers after its perfect-play booking, for every step a budget
    can be placed on (see the module docstring)."""
    out: dict[str, list[int]] = {}
    for v, i in settled_runs(episode).items():
        fillers = fillers_after(episode, i)
        if len(fillers) >= MAX_BUDGET:
            out[v] = fillers
    return out


def _placement(episode: Episode, cap: int) -> tuple[str, list[int]] | None:
    found = candidates(episode)
    if not found:
        return None
    rng = random.Random(stream_seed(episode.spec, "budget|step"))
    step = rng.choice(sort_ids(found))
    return step, seeded_subset(episode, "budget", found[step], cap)


def budgeted(episode: Episode, cap: int) -> Episode:
    """``episode`` with a budget of ``cap`` runs placed on it (generator 6 on; unchanged when
    ``cap`` is 0, the generator is older, no step can carry it, or a rule is placed already:
    placing is idempotent, so a caller may pass a cell's episode again)."""
    if cap <= 0 or episode.spec.generator < MIN_GENERATOR or episode.ruled:
        return episode
    placed = _placement(episode, cap)
    if placed is None:
        return episode
    step, slots = placed
    turns = place_requests(
        episode, "budget_repeat", step, slots, "budget-wo", rule_strings.BUDGET_REPEAT
    )
    caps = {step: cap}
    return msgspec.structs.replace(
        episode, turns=turns, brief=episode.brief + render_budgets(caps), budgets=caps
    )


def budget_placed(episode: Episode) -> bool:
    """Whether a budget is placed on ``episode``."""
    return bool(episode.caps)


def cell_episode(episode: Episode, knobs: Knobs) -> Episode:
    """The episode a cell with ``knobs`` runs and is scored on: ``episode`` (a pure function
    of its spec) with the rules its knobs place (issue #48: a budget, an expiry or an
    exclusive pair; a cell sets at most one, :mod:`protocol.knobs`) and its session boundaries
    (the sessions knob). The runner and the scorer both call it, so the two never disagree on a
    placed turn."""
    placed = exclusive(expiring(budgeted(episode, knobs.budget), knobs.expiry), knobs.exclusive)
    return sessioned(placed, knobs.sessions)
