"""Shared test helpers."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

from protocol import Episode, ScriptedUser, Turn, Verdict

# No timing asserts in tests (timings belong in bench/): Hypothesis' per-example deadline and
# its data-generation speed check are timing asserts, and on a loaded 2-core machine they
# failed draws that were correct (test_report_by_file.py's, at load 9). Every test keeps its
# own examples and assertions; a test's own ``@settings`` still overrides the rest.
settings.register_profile("ladder", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("ladder")


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


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark by place and by what a module uses: tests/integration/ runs whole grids across
    layers; the browser test drives chromium; a module that imports subprocess starts
    processes (``-m 'not integration and not browser and not process'``: the in-process rest)."""
    for item in items:
        module = getattr(item, "module", None)
        if module is not None and "subprocess" in vars(module):
            item.add_marker(pytest.mark.process)
        parts = Path(str(item.path)).parts
        if "integration" in parts:
            item.add_marker(pytest.mark.integration)
        if item.path.name == "test_browser.py":
            item.add_marker(pytest.mark.browser)
