"""The expiry knob on a fixed episode (issue #48, generator 6; OURS, docs/semantics.md).

Section 6 of the paper leaves expiry out. Here a run of an expiring step stays valid for ``T``
turns (:class:`protocol.state.machine.TaskState`, ``expiry``): a request for it while its run
is valid is the paper's redo probe (``done``), and one from ``T`` turns after the run on is
``lapsed``: it must be run again (not running it: the ``lapse_missed`` channel).

:func:`expiring` places it on the planned episode from the seed alone. Under perfect play
(:func:`protocol.stress.doses.perfect_play`) a *candidate* is a step run on a planned turn
``i`` that no later planned turn requests, names or cancels, with a filler in
``i + 1 .. i + T - 1`` and one at ``i + T`` or later. One candidate is drawn per seed and
``T``; one filler of each range (drawn from the seed) is served as the user's
``expiry_repeat`` request for it on a fresh work order, in the budget's words
(:data:`protocol.rule_strings.BUDGET_REPEAT`): under perfect play the first is ``done`` and
the second ``lapsed``. The brief gains the expiry clause and the step's line at its end.
Every other turn, the episode's length and its planned asks are the control's
(``tests/protocol/stress/test_expiry.py``); an episode with no candidate is unchanged.
"""

from __future__ import annotations

import random

import msgspec

from protocol import rule_strings
from protocol.brief import render_expiry
from protocol.episode.parts import stream_seed
from protocol.records import Episode
from protocol.state.machine import sort_ids
from protocol.stress.repeats import fillers_after, place_requests, settled_runs

__all__ = ["MAX_EXPIRY", "MIN_EXPIRY", "expiring", "expiry_candidates"]

MIN_EXPIRY = 2  # OURS: the shortest validity (a request one turn after the run is valid)
MAX_EXPIRY = 30  # OURS: the longest (an episode has 44 turns)


def expiry_candidates(episode: Episode, turns: int) -> dict[str, tuple[list[int], list[int]]]:
    """Step -> (fillers before its run lapses, fillers after), for every step an expiry of
    ``turns`` can be placed on (see the module docstring)."""
    out: dict[str, tuple[list[int], list[int]]] = {}
    for v, i in settled_runs(episode).items():
        fillers = fillers_after(episode, i)
        before = [j for j in fillers if j - i < turns]
        after = [j for j in fillers if j - i >= turns]
        if before and after:
            out[v] = (before, after)
    return out


def expiring(episode: Episode, turns: int) -> Episode:
    """``episode`` with an expiry of ``turns`` placed on it (generator 6 on; unchanged when
    ``turns`` is 0, the generator is older, no step can carry it, or a rule is placed
    already: placing is idempotent)."""
    if turns <= 0 or episode.spec.generator < 6 or episode.ruled:
        return episode
    found = expiry_candidates(episode, turns)
    if not found:
        return episode
    rng = random.Random(stream_seed(episode.spec, f"expiry|{turns}"))
    step = rng.choice(sort_ids(found))
    before, after = found[step]
    slots = [rng.choice(before), rng.choice(after)]
    plan = place_requests(
        episode, "expiry_repeat", step, slots, "expiry-wo", rule_strings.BUDGET_REPEAT
    )
    lapses = {step: turns}
    return msgspec.structs.replace(
        episode, turns=plan, brief=episode.brief + render_expiry(lapses), expiry=lapses
    )
