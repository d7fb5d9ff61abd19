"""Tools that fail (issue #31, the ``tool_failure`` knob of the tool harness; ours), pure.

Each tool call the gate admits fails with probability ``rate`` before it executes; a failure
is one of three kinds, equally likely (:data:`FAILURE_KINDS`): a transient error result, a
timeout, and a partial write the tool rolls back and reports as failed. A failed call writes
nothing to the workspace, is not an execution, does not advance any gate's state, and its
tool and work order may be called again in the turn (a retry after a failure is not a
re-execution: only the retry that succeeds stamps).

The draw is a pure function of the call's identity: the episode spec, the cell's model,
regime and rate (not the arm), the turn, the tool, the work order and how many times that
call has failed before in the turn, so a rerun of a logged episode draws the same failures
and the harness arms of one configuration draw the same outcome for the same call.

Generator version 5 on (issue #37): a call fails at most :data:`MAX_CONSECUTIVE_FAILURES`
times in a row in a turn; the turn's retry budget (``runner.harness.play.MAX_FOLLOW_UPS``, two
follow-ups: three tries) is above it, so an agent that retries each failure once always
gets its call through, and the perfect agent scores 1.0 at every rate.

At-most-once (issue #37, the ``tool_failure_landed`` knob; ours, off by default): a timeout
whose write landed. With ``landed`` above 0, a failure drawn as a ``timeout`` draws once more,
from the same stream, and with probability ``landed`` is a :data:`LANDED` failure: the tool
wrote its stamp, but the call reports the same timeout as one that wrote nothing (its outcome
unknown to the caller). Which calls fail, and their kinds but for the landed ones, are those
of the cell with the knob off (the extra draw comes last and only when the knob is on), so a
landed cell differs from its control only on the timeouts that landed. A landed failure counts
toward :data:`MAX_CONSECUTIVE_FAILURES` like any failure.
"""

from __future__ import annotations

import random
from typing import Literal

from protocol.records import EpisodeSpec

__all__ = [
    "FAILURE_KINDS",
    "LANDED",
    "MAX_CONSECUTIVE_FAILURES",
    "FailureKind",
    "draw_tool_failure",
]

FailureKind = Literal["transient", "timeout", "partial", "landed"]
# the kinds drawn, equally likely; ``landed`` is a timeout's second draw (the knob)
FAILURE_KINDS: tuple[FailureKind, ...] = ("transient", "timeout", "partial")
LANDED: FailureKind = "landed"  # OURS: a timeout whose write landed
# OURS (generator 5): the most failures of one call in a row in a turn; below the retry budget
MAX_CONSECUTIVE_FAILURES = 2


def draw_tool_failure(
    spec: EpisodeSpec,
    model: str,
    regime: str,
    rate: float,
    *,
    turn: int,
    tool: str,
    work_order: str,
    attempt: int,
    landed: float = 0.0,
) -> FailureKind | None:
    """The failure of this call (None: it succeeds); ``landed``: the share of timeouts
    whose write landed (the ``tool_failure_landed`` knob; 0 draws as before it existed)."""
    if rate <= 0 or (spec.generator >= 5 and attempt >= MAX_CONSECUTIVE_FAILURES):
        return None
    rng = random.Random(
        f"toolfail|{spec.seed}|{spec.steps}|{spec.density!r}|{spec.domain}|{spec.brief}|"
        f"{model}|{regime}|{rate!r}|{turn}|{tool}|{work_order}|{attempt}"
    )
    if rng.random() >= rate:
        return None
    kind = rng.choice(FAILURE_KINDS)
    if kind == "timeout" and landed > 0 and rng.random() < landed:
        return LANDED
    return kind
