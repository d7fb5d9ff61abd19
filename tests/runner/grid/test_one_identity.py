"""One grid identity (issue #45): what no episode depends on is listed once
(``runner.grid.change.episodes_part``); comparing two grids and a run's digest both start from
it, so a change of place or speed moves neither, and a change of episodes moves both."""

from __future__ import annotations

from typing import Any

import msgspec

from runner.grid.change import identity
from runner.grid.expand import parse_grid
from runner.rundir.manifest import grid_digest


def _grid(**run: Any) -> dict[str, Any]:
    url = run.pop("url", "http://a:8000/v1")
    slot = run.pop("slot", None)
    model: dict[str, Any] = {"name": "m", "endpoint": "e"}
    if slot is not None:
        model["agent_slot"] = slot
    return {
        "run": {"seeds": "100-103", **run},
        "endpoints": [{"name": "e", "base_url": url, "max_in_flight": 8}],
        "models": [model],
    }


def _both(data: dict[str, Any]) -> tuple[str, object]:
    grid = parse_grid(data, need_keys=False)
    return grid_digest(grid), identity(msgspec.to_builtins(grid))


def test_place_and_speed_move_neither() -> None:
    base = _both(_grid())
    assert _both(_grid(concurrency=7)) == base
    assert _both(_grid(url="http://b:9000/v1")) == base
    assert _both(_grid(slot=1)) == base


def test_a_change_of_episodes_moves_both() -> None:
    digest, ident = _both(_grid())
    other_digest, other_ident = _both(_grid(seeds="100-104"))
    assert other_digest != digest and other_ident != ident
