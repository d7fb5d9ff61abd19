"""The corruption RNG of the corrupted-state ablation (Section 5, Appendix D.4), pure.

One seeding and one per-turn draw, called by the gate arms (:mod:`runner.arms.gates`) as they
run and by the Table 12 replay (:mod:`scoring.analyses.corruption_replay`) as it re-draws the stream
against a logged episode, so the two cannot drift apart.

* Seeding: from the episode spec (seed, S, density, domain), the cell's model and regime and
  epsilon, NOT the arm, so the directive and enforcement cells of one configuration draw the
  same stream (paired).
* Draw (``draw_corruptions``), once per turn, before the turn's decision and after the
  compiled revision on the revision turn: every step of the compiled state, in step order, is
  corrupted with probability epsilon: one of its edges dropped or its done bit flipped, half
  and half (a step without edges has its done bit flipped). A step-turn is every step at every
  turn, fillers included (``CORRUPT_ON_FILLERS``; our reading, docs/protocol.md).

The draw depends on the compiled state it corrupts (the steps, their edges and the done set
at that turn), so a replay must rebuild that state turn by turn as the gate did.
"""

from __future__ import annotations

import random

from protocol.records import CorruptionEvent, EpisodeSpec, TurnKind
from protocol.state.machine import TaskState, sort_ids

__all__ = ["CORRUPT_ON_FILLERS", "corruption_rng", "draw_corruptions"]

CORRUPT_ON_FILLERS = True


def corruption_rng(spec: EpisodeSpec, model: str, regime: str, epsilon: float) -> random.Random:
    """The episode's corruption stream (paired across the gate arms of one configuration)."""
    return random.Random(
        f"corrupt|{spec.seed}|{spec.steps}|{spec.density!r}|{spec.domain}|"
        f"{model}|{regime}|{epsilon!r}"
    )


def draw_corruptions(
    gate: TaskState, rng: random.Random, epsilon: float, turn: int, kind: TurnKind
) -> list[CorruptionEvent]:
    """Corrupt ``gate`` in place for turn ``turn`` (of kind ``kind``); the events drawn."""
    if epsilon <= 0 or (kind == "filler" and not CORRUPT_ON_FILLERS):
        return []
    events: list[CorruptionEvent] = []
    for v in gate.steps:
        if rng.random() >= epsilon:
            continue
        deps = sort_ids(gate.deps[v])
        if deps and rng.random() < 0.5:
            u = rng.choice(deps)
            gate.deps[v] = gate.deps[v] - {u}
            events.append(CorruptionEvent(turn=turn, step=v, kind="drop_edge", edge=u))
        elif v in gate.done:
            gate.done.discard(v)
            events.append(CorruptionEvent(turn=turn, step=v, kind="lost_done"))
        else:
            gate.done.add(v)
            events.append(CorruptionEvent(turn=turn, step=v, kind="spurious_done"))
    return events
