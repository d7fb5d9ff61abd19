"""Ambiguous probes planned by the generator (version 4; Appendix A.5, Table 4).

A.5: "the generator also inserts probes that name two currently eligible steps without saying
which"; Table 4 counts the same 111 probes for every arm, so the probes are fixed by the
episode, not by what the agent did. Version 4 plans them on the perfect-play state: walking
the planned schedule (asks book their step, the revision applies in place), each filler draws
from its own stream; it becomes a probe when the draw falls under ``spec.ambiguous_rate`` and
at least :data:`PLANNED_MIN_ELIGIBLE` steps are eligible then; the probe names two of them,
drawn from the same stream, in one of the domain's ambiguous-probe frames (OURS).

Version 3 left the choice to the scripted user on the realized state
(:data:`protocol.user.AMBIGUOUS_MIN_ELIGIBLE`), so the count depended on the agent (99 probes
with a perfect agent and 211 with a never-booking one over seeds 100-163, S = 15 dense, rate
0.15; issue #27); version 3 stays selectable for that rule.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence

from protocol.episode.parts import stream_seed
from protocol.records import EpisodeSpec, Revision, TurnKind
from protocol.state.machine import TaskState

__all__ = ["PLANNED_MIN_ELIGIBLE", "Probe", "plan_probes"]

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
