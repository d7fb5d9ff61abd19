"""Helpers that do not evict the agent (issue #41): a model's ``helper_endpoint`` sends the
compiler's and the matcher's requests to another endpoint, and ``agent_slot`` /
``helper_slot`` put llama.cpp's ``id_slot`` on each role's requests; the bench's slot model
(bench/bench_helper_slot.py) counts the prompt tokens a slot re-evaluates."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from bench.bench_helper_slot import SlotModel
from protocol import EpisodeSpec, generate
from protocol.records import CellKey, Role
from runner.client.endpoint import Reply
from runner.gates.helper_models import Helpers
from runner.grid.expand import GridError, parse_grid
from tests.gates_fakes import FakeChat, truth

EP = generate(EpisodeSpec(seed=100, steps=10, density=0.3))
CELL = CellKey(model="m", steps=10, density=0.3, arm="directive")


def _data(**model: object) -> dict[str, Any]:
    return {
        "run": {"seeds": "100", "steps": [10], "density": [0.3], "arms": ["directive"],
                "generator": 1},
        "endpoints": [
            {"name": "agent", "base_url": "http://127.0.0.1:8080/v1"},
            {"name": "helpers", "base_url": "http://127.0.0.1:8081/v1"},
        ],
        "models": [{"name": "m", "endpoint": "agent", **model}],
    }  # fmt: skip


class Extras(FakeChat):
    """A FakeChat that also notes each request's extra body fields."""

    def __init__(self) -> None:
        super().__init__(truth({EP.brief: EP}))
        self.extras: list[tuple[str, dict[str, object]]] = []

    async def chat(
        self,
        model: str,
        messages: Sequence[Mapping[str, str]],
        *,
        max_tokens: int,
        role: Role = "agent",
        thinking: bool = False,
        extra: Mapping[str, object] | None = None,
        temperature: float = 0.0,
    ) -> Reply:
        self.extras.append((role, dict(extra or {})))
        return await super().chat(model, messages, max_tokens=max_tokens, role=role)


async def test_helper_endpoint_takes_the_helpers_requests(tmp_path: Path) -> None:
    grid = parse_grid(_data(helper_endpoint="helpers"))
    agent, helpers = Extras(), Extras()
    h = Helpers(grid, tmp_path, {"agent": agent, "helpers": helpers})
    await h.compile(CELL, EP)
    turn = next(t for t in EP.turns if t.kind == "ask")
    await h.match(CELL, EP, turn)
    assert agent.calls == [] and helpers.count("compiler") == 2 and helpers.count("matcher") == 1
    model = grid.models[0]
    assert model.endpoint_for("agent") == "agent" and model.endpoint_for("matcher") == "helpers"


async def test_slots_put_id_slot_on_each_roles_requests(tmp_path: Path) -> None:
    grid = parse_grid(_data(agent_slot=0, helper_slot=1))
    chat = Extras()
    h = Helpers(grid, tmp_path, {"agent": chat})
    await h.compile(CELL, EP)
    await h.match(CELL, EP, next(t for t in EP.turns if t.kind == "ask"))
    assert chat.extras and all(x.get("id_slot") == 1 for _, x in chat.extras)
    model = grid.models[0]
    assert model.chat_kwargs(grid.decoding, "agent")["extra"]["id_slot"] == 0
    plain = parse_grid(_data()).models[0]
    assert "id_slot" not in plain.chat_kwargs(grid.decoding, "matcher")["extra"]


@pytest.mark.parametrize(
    ("model", "needle"),
    [
        ({"helper_endpoint": "nope"}, "helper_endpoint 'nope' is not an endpoint"),
        ({"helper_slot": -1}, "helper_slot must be at least 0"),
    ],
)
def test_bad_placements_are_refused(model: dict[str, object], needle: str) -> None:
    with pytest.raises(GridError, match=needle):
        parse_grid(_data(**model))


def test_the_slot_model_reuses_the_longest_common_prefix() -> None:
    slots = SlotModel()
    assert slots.serve(0, [1, 2, 3], [9]) == 3  # cold
    assert slots.serve(0, [1, 2, 3, 9, 4], [8]) == 1  # the transcript grew by one token
    assert slots.serve(0, [7, 7], [6]) == 2  # a helper's prompt replaces it
    assert slots.serve(0, [1, 2, 3, 9, 4, 8, 5], []) == 7  # the agent evaluates it all again
    assert slots.serve(1, [7, 7], [6]) == 2 and slots.serve(1, [7, 7, 6, 5], []) == 1
