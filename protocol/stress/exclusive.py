"""The exclusive knob on a fixed episode (issue #48, generator 6; OURS, docs/semantics.md).

Section 6 of the paper leaves conflicting obligations out. Here an exclusive pair is a rule of
the task-state machine (:class:`protocol.state.machine.TaskState`, ``exclusive``): of a
planned step and its *alternative* at most one may be performed; once one is done the other
is ``closed``, and executing it is a trap scored on the ``exclusive_closed`` channel (a
revision cancelling the done one reopens it).

:func:`exclusive` places it on the planned episode from the seed alone. The alternative is a
step of ours added to the plan (:data:`protocol.rule_strings.EXCLUSIVE_ALTERNATIVE`: the
planned step's text done another way, its prerequisites, a fresh completion code, the next
id), so the control never asks for it and every control turn keeps its label: a planned
partner the control asks for would turn its later asks closed. The planned step is drawn per
seed (the same for every dose) among the steps run under perfect play that the rest of the
plan leaves alone with at least :data:`MAX_EXCLUSIVE` fillers after their run
(:func:`protocol.stress.repeats.settled_runs`); the dose-``K`` episode serves ``K`` of those
fillers (the ``K`` with the smallest seeded keys, so a smaller dose's turns are a subset of a
larger one's) as the user's ``exclusive_ask`` request for the alternative, each on a fresh
work order: under perfect play every one is ``closed``. The brief gains the alternative's line
after the plan's and the exclusive clause with the pair at its end
(:func:`protocol.brief.render_exclusive`). Every other turn, the episode's length and its
planned asks are the control's (``tests/integration/test_exclusive_rule.py``); an episode
with no candidate is unchanged.
"""

from __future__ import annotations

import random

import msgspec

from protocol import rule_strings, strings
from protocol.brief import render_exclusive
from protocol.episode.parts import stream_seed
from protocol.records import Episode, Step
from protocol.state.machine import sort_ids
from protocol.stress.repeats import fillers_after, place_requests, seeded_subset, settled_runs

__all__ = ["MAX_EXCLUSIVE", "alternative_of", "exclusive", "exclusive_candidates"]

MAX_EXCLUSIVE = 4  # OURS: the most requests of a closed alternative one episode places


def exclusive_candidates(episode: Episode) -> dict[str, list[int]]:
    """Planned step -> the fillers after its perfect-play run, for every step an exclusive
    pair can be placed on (see the module docstring)."""
    out: dict[str, list[int]] = {}
    for v, i in settled_runs(episode).items():
        fillers = fillers_after(episode, i)
        if len(fillers) >= MAX_EXCLUSIVE:
            out[v] = fillers
    return out


def alternative_of(episode: Episode, planned: str) -> Step:
    """The alternative step of ``planned``: the next id, the planned step's text done another
    way and its prerequisites, a completion code drawn from the seed that no step has."""
    step = episode.step(planned)
    used = {s.code for s in episode.steps}
    rng = random.Random(stream_seed(episode.spec, "exclusive|code"))
    code = f"RC-{rng.randrange(1000, 10000)}"
    while code in used:
        code = f"RC-{rng.randrange(1000, 10000)}"
    return Step(
        id=f"s{len(episode.steps) + 1}",
        slug=f"{step.slug}-alternative",
        text=rule_strings.EXCLUSIVE_ALTERNATIVE.format(text=step.text),
        code=code,
        deps=step.deps,
    )


def _with_line(brief: str, last: str, alt: Step) -> str:
    """``brief`` with the alternative's plan line after the line of step ``last``."""
    fmt = strings.BRIEF_STEP_LINE_REQUIRES if alt.deps else strings.BRIEF_STEP_LINE
    line = fmt.format(id=alt.id, text=alt.text, code=alt.code, deps=", ".join(alt.deps))
    lines = brief.split("\n")
    at = max(i for i, text in enumerate(lines) if text.startswith(f"- {last}: "))
    return "\n".join([*lines[: at + 1], line, *lines[at + 1 :]])


def exclusive(episode: Episode, dose: int) -> Episode:
    """``episode`` with an exclusive pair and ``dose`` requests of its closed alternative
    placed on it (generator 6 on; unchanged when ``dose`` is 0, the generator is older, no
    step can carry it, or a rule is placed already: placing is idempotent)."""
    if dose <= 0 or episode.spec.generator < 6 or episode.ruled:
        return episode
    found = exclusive_candidates(episode)
    if not found:
        return episode
    rng = random.Random(stream_seed(episode.spec, "exclusive|step"))
    planned = rng.choice(sort_ids(found))
    slots = seeded_subset(episode, "exclusive", found[planned], min(dose, MAX_EXCLUSIVE))
    alt = alternative_of(episode, planned)
    pairs = {planned: alt.id}
    brief = _with_line(episode.brief, episode.steps[-1].id, alt) + render_exclusive(pairs)
    added = msgspec.structs.replace(episode, steps=(*episode.steps, alt))
    turns = place_requests(
        added, "exclusive_ask", alt.id, slots, "exclusive-wo", rule_strings.EXCLUSIVE_ASK
    )
    return msgspec.structs.replace(added, turns=turns, brief=brief, exclusive=pairs)
