"""The draw key of the agent call in flight (#46): a context variable the episode runner and
the tool harness set before each agent call; the agent call adds its trial and sends the key
(:mod:`protocol.draws`) in a header, so the scripted agents' dice are paired across cells."""

from __future__ import annotations

from contextvars import ContextVar

__all__ = ["TURN_DRAW"]

# (episode seed, turn, call within the turn) of the agent call in flight
TURN_DRAW: ContextVar[tuple[int, str, int] | None] = ContextVar("ladder_turn_draw", default=None)
