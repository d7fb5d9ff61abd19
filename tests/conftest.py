"""Shared test helpers."""

from __future__ import annotations

from collections.abc import Iterator

from protocol import Episode, ScriptedUser, Turn, Verdict


def perfect_actions(turn: Turn, verdict: Verdict | None) -> list[str]:
    """What a perfect agent executes on a turn: the requested step iff eligible or redo."""
    if turn.step is not None and verdict is not None and verdict.label in ("eligible", "redo"):
        return [turn.step]
    return []


def play_perfect(ep: Episode) -> Iterator[tuple[Turn, Verdict | None, list[str], list[object]]]:
    """Drive an episode with perfect behaviour; yields (turn, verdict, executed, errors)."""
    user = ScriptedUser(ep)
    while (turn := user.next_turn()) is not None:
        verdict = user.begin(turn)
        act = perfect_actions(turn, verdict)
        errors = user.finish(turn, verdict, act)
        yield turn, verdict, act, list(errors)
