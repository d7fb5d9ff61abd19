"""The sessions knob on a fixed episode (issue #48, generator 6; OURS, docs/semantics.md).

Section 6 of the paper leaves multi-session state out ("multi-agent or multi-session state
are out of scope"). Here the planned turns of an episode split into ``K`` sessions at
boundaries placed from the seed alone, never from what an agent did: a boundary is a planned
turn index ``b`` (``1 <= b < n``) before which the conversation restarts (the runner,
:mod:`runner.execution.episode_loop`). A boundary is not a turn: every turn, the episode's length,
its brief, its planned asks and so every label are the control's; only :attr:`Episode.sessions`
records where the restarts fall, so the runner, the scorer and the logs read the same places.

Placement: each candidate index ``j`` in ``1 .. n - 1`` draws a key from its own stream of the
seed (``sessions|j``) and the ``K - 1`` smallest keys are the boundaries, so a smaller ``K``'s
boundaries are a subset of a larger one's (the dose nests, as the budget's turns do).
"""

from __future__ import annotations

import random

import msgspec

from protocol import rule_strings
from protocol.episode.parts import stream_seed
from protocol.records import Episode

__all__ = [
    "MAX_SESSIONS",
    "MIN_GENERATOR",
    "MIN_SESSIONS",
    "boundaries",
    "carry",
    "session_of",
    "sessioned",
]

MIN_SESSIONS = 2  # OURS: one session is the control (sessions = 0)
MAX_SESSIONS = 8  # OURS: the most sessions the knob takes (an episode has about 44 turns)
MIN_GENERATOR = 6  # the generator version that places sessions


def boundaries(episode: Episode, sessions: int) -> tuple[int, ...]:
    """The planned indices that open sessions 2 .. ``sessions`` (sorted; empty for one
    session or fewer, or an episode too short to split)."""
    n = len(episode.turns)
    cuts = min(sessions - 1, n - 1)
    if cuts <= 0:
        return ()
    keys = {
        j: random.Random(stream_seed(episode.spec, f"sessions|{j}")).random() for j in range(1, n)
    }
    return tuple(sorted(sorted(keys, key=lambda j: (keys[j], j))[:cuts]))


def sessioned(episode: Episode, sessions: int) -> Episode:
    """``episode`` with its session boundaries recorded (generator 6 on; unchanged when
    ``sessions`` is below 2, the generator is older, or boundaries are recorded already:
    placing is idempotent). Nothing else of the episode changes."""
    placed = not isinstance(episode.sessions, msgspec.UnsetType)
    if sessions < MIN_SESSIONS or episode.spec.generator < MIN_GENERATOR or placed:
        return episode
    cuts = boundaries(episode, sessions)
    return msgspec.structs.replace(episode, sessions=cuts) if cuts else episode


def session_of(episode: Episode, planned: int) -> int:
    """The session (0-based) a planned turn belongs to."""
    return sum(b <= planned for b in episode.boundaries)


def carry(note: str | None, sent: str) -> str:
    """A session's first user message with the handoff note carried into it (unchanged
    without one): :data:`protocol.rule_strings.HANDOFF_CARRIED`, a blank line, the message.
    The runner sends it (:mod:`runner.arms.handoff`) and the probe rebuilds it
    (:mod:`protocol.probe.history`)."""
    return (
        f"{rule_strings.HANDOFF_CARRIED.format(note=note)}\n\n{sent}" if note is not None else sent
    )
