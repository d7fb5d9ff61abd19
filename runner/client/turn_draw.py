"""The draw key of the agent call in flight (#46): a context variable the episode runner and
the tool harness set before each agent call; the agent call adds its trial and sends the key
(:mod:`protocol.draws`) in a header, so the scripted agents' dice are paired across cells.
Beside it, the lineage token of the episode run in flight (issue #48; the scheduler sets a
fresh random one per episode run), sent with the key in :data:`protocol.draws.LINEAGE_HEADER`."""

from __future__ import annotations

from contextvars import ContextVar

__all__ = ["EPISODE_RUN", "TURN_DRAW"]

# (episode seed, turn, call within the turn) of the agent call in flight
TURN_DRAW: ContextVar[tuple[int, str, int] | None] = ContextVar("ladder_turn_draw", default=None)
# the lineage token of the episode run in flight (None: outside a scheduled episode run)
EPISODE_RUN: ContextVar[str | None] = ContextVar("ladder_episode_run", default=None)
