"""Ambiguous probes planned by the generator (version 4; Appendix A.5, Table 4).

A.5: "the generator also inserts probes that name two currently eligible steps without saying
which"; Table 4 counts the same 111 probes for every arm, so the probes are fixed by the
episode, not by what the agent did. Version 4 plans them on the perfect-play state: walking
the planned schedule (asks book their step, the revision applies in place), each filler draws
from its own stream; it becomes a probe when the draw falls under ``spec.ambiguous_rate`` and
at least :data:`PLANNED_MIN_ELIGIBLE` steps are eligible then; the probe names two of them,
drawn from the same stream, in one of the domain's ambiguous-probe frames (OURS).

Which step the user meant (issue #46, OURS): a probe names two steps without saying which,
and the user, asked back (the gate's ``ask`` knob, :mod:`protocol.arms.askback`), answers with
the one it meant. :func:`meant_step`: of the two, the one still eligible on the realized
state (a step the agent already did is not what the user still wants; probes are planned on
perfect play, where a probe books nothing, so a pair named twice can have one done); of two,
a fair coin drawn from the seed and the pair on its own stream (so the order the frame names
them in tells nothing); of none, none. For planned and version 3's served probes alike;
nothing in the episode changes, so no generator version moves. The probe itself still asks
for no step: only the user's answer names one.

Version 3 left the choice to the scripted user on the realized state
(:data:`protocol.user.AMBIGUOUS_MIN_ELIGIBLE`), so the count depended on the agent (99 probes
with a perfect agent and 211 with a never-booking one over seeds 100-163, S = 15 dense, rate
0.15; issue #27); version 3 stays selectable for that rule.
"""

from __future__ import annotations

import random
from collections.abc import Collection, Mapping, Sequence

from protocol.episode.parts import stream_seed
from protocol.records import EpisodeSpec, Revision, TurnKind
from protocol.state.machine import TaskState

__all__ = ["PLANNED_MIN_ELIGIBLE", "Probe", "meant_step", "plan_probes"]

# OURS: at least this many steps eligible under perfect play for a filler to carry a probe.
# The paper says only that a probe names two eligible steps; the threshold is chosen with
# Table 4's count (docs/protocol.md, "Ambiguous probes").
PLANNED_MIN_ELIGIBLE = 3

Probe = tuple[str, str, int]  # (first named step, second named step, frame index)


def plan_probes(
    spec: EpisodeSpec,
    schedule: Sequence[tuple[TurnKind, str | None]],
    deps: Mapping[str, frozenset[str]],
    revision: Revision,
    n_frames: int,
) -> list[Probe | None]:
    """Per planned turn, the probe it carries (fillers only) or None."""
    rng = random.Random(stream_seed(spec, f"ambiguous-v4|{spec.ambiguous_rate!r}"))
    state = TaskState(deps)
    out: list[Probe | None] = []
    for kind, step in schedule:
        probe: Probe | None = None
        if kind == "revision":
            state.apply_revision(revision.cancel, revision.rewires, revision.relax)
        elif kind in ("ask", "re_ask") and step is not None and state.status(step) == "todo":
            state.book(step)
        elif kind == "filler" and spec.ambiguous_rate > 0:
            ready = state.eligible()
            if rng.random() < spec.ambiguous_rate and len(ready) >= PLANNED_MIN_ELIGIBLE:
                a, b = rng.sample(list(ready), 2)
                probe = (a, b, rng.randrange(n_frames))
        out.append(probe)
    return out


def meant_step(spec: EpisodeSpec, named: Sequence[str], owed: Collection[str]) -> str | None:
    """The step the user meant by a probe naming ``named`` (two steps; see the module
    docstring), of those still ``owed`` (eligible on the realized state at the start of the
    turn, which the user holds): the one owed, a coin drawn from the seed and the pair when
    both are, None when neither is (the user wants nothing of it any more)."""
    wanted = [v for v in named if v in owed]
    if len(wanted) < 2:
        return wanted[0] if wanted else None
    a, b = wanted
    rng = random.Random(stream_seed(spec, f"ambiguous-meant|{a}|{b}"))
    return a if rng.random() < 0.5 else b
